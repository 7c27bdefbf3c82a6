"""Float64 host values of the accountant: conversions (``as_f64``, ``pos``, ...), counts, lists of (ε_i, δ_i)
and options."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ._base import _as_array
from ._scalars import check_choice, check_in_range, check_positive, check_positive_int


# ----------------------------------------------------------------------------- accounting: float64 host values
# The accountant computes on the host in float64: these convert (``as_f64``, ``pos``, ... return float64 arrays,
# ``out`` a Python float for 0-d results) and reject non-finite values.


def _from_string(name: str, x: Any, cast: Any, what: str) -> Any:
    if isinstance(x, str):
        try:
            return cast(x)
        except ValueError:
            raise TypeError(f"{name} must be {what}, got the string {x!r}") from None
    return x


def coerce_number(name: str, x: Any) -> Any:
    """Accept numeric strings (values coming from a command line) as floats; leave everything else alone.

    Args:
        name: the parameter's name, quoted in the error message.
        x: the value; a string is parsed with ``float``.

    Returns:
        ``float(x)`` for a string, otherwise ``x`` unchanged.

    Raises:
        TypeError: ``x`` is a string that is not a number.
    """
    return _from_string(name, x, float, "a number")


def as_f64(name: str, x: Any) -> np.ndarray:
    """``x`` as a float64 array (0-d for scalars); rejects bools, strings, objects and NaN/inf.

    Numeric strings are parsed first (:func:`coerce_number`).

    Args:
        name: the parameter's name, quoted in the error message.
        x: a number, numeric string or array of integers or floats.

    Returns:
        A float64 ``numpy.ndarray`` of ``x``'s shape.

    Raises:
        TypeError: ``x`` is a bool, a non-numeric string, or not an integer/float array.
        ValueError: an entry is NaN or infinite.
    """
    x = coerce_number(name, x)
    arr = _as_array(name, x)
    if arr.dtype == object or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a number or array of numbers, got {x!r} ({type(x).__name__})")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {x!r}")
    return arr


def pos(name: str, x: Any) -> np.ndarray:
    """Finite, ``> 0``.

    Args:
        name: the parameter's name, quoted in the error message.
        x: a number or array (see :func:`as_f64`).

    Returns:
        ``x`` as a float64 array.

    Raises:
        ValueError: an entry is NaN, infinite or ``<= 0``.
    """
    arr = as_f64(name, x)
    check_positive(name, arr)
    return arr


def nonneg(name: str, x: Any) -> np.ndarray:
    """Finite, ``>= 0``.

    Args:
        name, x: as in :func:`pos`.

    Returns:
        ``x`` as a float64 array.

    Raises:
        ValueError: an entry is NaN, infinite or negative.
    """
    arr = as_f64(name, x)
    if np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0, got {_fmt_f64(arr)}")
    return arr


def _unit_interval(name: str, x: Any, *, lo_closed: bool) -> np.ndarray:
    arr = as_f64(name, x)
    check_in_range(name, arr, 0.0, 1.0, lo_closed=lo_closed, hi_closed=False)
    return arr


def eps_arg(x: Any, name: str = "eps") -> np.ndarray:
    """A privacy parameter ε: finite and ``> 0``.

    Args:
        x: ε (number or array).
        name: the parameter's name, quoted in the error message.

    Returns:
        ε as a float64 array.

    Raises:
        ValueError: an entry is NaN, infinite or ``<= 0``.
    """
    return pos(name, x)


def delta_arg(x: Any, name: str = "delta") -> np.ndarray:
    """δ in ``[0, 1)``.

    Args:
        x, name: δ (number or array) and the parameter's name, quoted in the error message.

    Returns:
        δ as a float64 array.

    Raises:
        ValueError: an entry is NaN, infinite or outside ``[0, 1)``.
    """
    return _unit_interval(name, x, lo_closed=True)


def delta_open(x: Any, name: str = "delta") -> np.ndarray:
    """δ in ``(0, 1)`` (conversions that divide by δ or take log(1/δ)).

    Args:
        x, name: as in :func:`delta_arg`.

    Returns:
        δ as a float64 array.

    Raises:
        ValueError: an entry is NaN, infinite or outside ``(0, 1)``.
    """
    return _unit_interval(name, x, lo_closed=False)


def prob_open(x: Any, name: str) -> np.ndarray:
    """A probability in the open interval ``(0, 1)``.

    Args:
        x: the probability (number or array), e.g. a sampling rate.
        name: the parameter's name, quoted in the error message.

    Returns:
        ``x`` as a float64 array.

    Raises:
        ValueError: an entry is NaN, infinite or outside ``(0, 1)``.
    """
    return _unit_interval(name, x, lo_closed=False)


def count_arg(x: Any, name: str = "k", minimum: int = 1) -> Any:
    """An integer count ``>= minimum`` (a Python/NumPy int or an integer array; floats are rejected).

    Integer strings are parsed first (:func:`coerce_count`).

    Args:
        x: the count (e.g. the number of compositions ``k``).
        name: the parameter's name, quoted in the error message.
        minimum: the smallest count allowed.

    Returns:
        The count as an ``int`` (an integer array is returned unchanged).

    Raises:
        TypeError: ``x`` is a float, a bool or a non-integer string.
        ValueError: ``x`` is below ``minimum``.
    """
    x = coerce_count(name, x)
    return check_positive_int(name, x, minimum=minimum)


def coerce_count(name: str, x: Any) -> Any:
    """Accept integer strings (values coming from a command line) as ints; leave everything else alone.

    Args:
        name, x: as in :func:`coerce_number`; here a string is parsed with ``int``.

    Returns:
        ``int(x)`` for a string, otherwise ``x`` unchanged.

    Raises:
        TypeError: ``x`` is a string that is not an integer.
    """
    return _from_string(name, x, int, "an integer")


def eps_delta_lists(eps_list: Any, delta_list: Any, *, allow_zero_eps: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Per-mechanism ``(ε_i)`` and ``(δ_i)``: 1-D, same non-zero length, ε_i >= 0 (or > 0), δ_i in [0, 1).

    Args:
        eps_list: the ε_i of the composed mechanisms, a non-empty 1-D sequence.
        delta_list: the δ_i: a sequence of the same length, a scalar used for every mechanism, or ``None``
            (all zero).
        allow_zero_eps: accept ε_i = 0; otherwise every ε_i must be ``> 0``.

    Returns:
        ``(eps, delta)``, two float64 arrays of the same shape ``(k,)``.

    Raises:
        ValueError: empty or not 1-D, shapes differ, or an entry is out of range or non-finite.
    """
    e = as_f64("eps_list", eps_list)
    if e.ndim != 1 or e.size == 0:
        raise ValueError(f"eps_list must be a non-empty 1-D sequence of numbers, got shape {e.shape}")
    if delta_list is None:
        d = np.zeros_like(e)
    else:
        d = as_f64("delta_list", delta_list)
        if d.ndim == 0:
            d = np.full_like(e, float(d))
        if d.shape != e.shape:
            raise ValueError(f"delta_list must have the same shape as eps_list {e.shape}, got {d.shape}")
    if allow_zero_eps:
        if np.any(e < 0):
            raise ValueError(f"eps_list must have every entry >= 0, got {_fmt_f64(e)}")
    else:
        check_positive("eps_list", e)
    check_in_range("delta_list", d, 0.0, 1.0, lo_closed=True, hi_closed=False)
    return e, d


def mode_arg(mode: Any, allowed: tuple[str, ...], name: str = "mode") -> str:
    """A string option among ``allowed``.

    Args:
        mode: the option given.
        allowed: the accepted strings.
        name: the parameter's name, quoted in the error message.

    Returns:
        ``mode`` unchanged.

    Raises:
        TypeError: ``mode`` is not a string.
        ValueError: ``mode`` is not in ``allowed``.
    """
    if not isinstance(mode, str):
        raise TypeError(f"{name} must be a string, one of {list(allowed)}, got {mode!r}")
    return check_choice(name, mode, allowed)


def out(x: Any) -> Any:
    """A 0-d result as a Python float, otherwise a float64 array.

    Args:
        x: an accountant's result (number or array).

    Returns:
        ``float(x)`` when ``x`` is a scalar, else ``x`` as a float64 ``numpy.ndarray``.
    """
    arr = np.asarray(x, dtype=np.float64)
    return float(arr) if arr.ndim == 0 else arr


def _fmt_f64(arr: np.ndarray) -> str:
    if arr.ndim == 0:
        return repr(float(arr))
    return f"array of shape {arr.shape} (min {arr.min()}, max {arr.max()})"


def is_int(x: Any) -> bool:
    """Whether ``x`` is an integer (Python or NumPy), bools excluded.

    Args:
        x: any value.

    Returns:
        ``True`` for an ``int`` or ``numpy.integer`` that is not a bool.
    """
    return isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, (bool, np.bool_))
