"""Checks of scalar (and elementwise) parameters: signs, integers, intervals, probabilities, the privacy
parameters ε and δ, fixed choices and seeds."""
from __future__ import annotations

import math
import numbers
from typing import Any, Iterable

import numpy as np

from ._base import _check_finite, _fmt, _interval, _values, describe_value, is_concrete


def check_positive(name: str, x: Any, *, allow_inf: bool = False) -> Any:
    """``x > 0`` (elementwise), finite unless ``allow_inf``.

    Args:
        name: the parameter's name, quoted in the error message.
        x: a number or numeric array; a tracer is returned unchecked.
        allow_inf: accept ``+inf`` entries (e.g. ``eps = inf``, the non-private limit).

    Returns:
        ``x`` unchanged.

    Raises:
        TypeError: ``x`` is a bool or not numeric.
        ValueError: an entry is NaN, infinite (unless ``allow_inf``) or ``<= 0``.
    """
    arr = _values(name, x)
    if arr is None:
        return x
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} must be a positive number, got {_fmt(x)} (NaN)")
    if not allow_inf:
        _check_finite(name, arr, x)
    if np.any(arr <= 0):
        raise ValueError(f"{name} must be > 0, got {_fmt(x)}")
    return x


def check_nonneg(name: str, x: Any) -> Any:
    """``x >= 0`` and finite.

    Args:
        name: the parameter's name, quoted in the error message.
        x: a number or numeric array; a tracer is returned unchecked.

    Returns:
        ``x`` unchanged.

    Raises:
        TypeError: ``x`` is a bool or not numeric.
        ValueError: an entry is NaN, infinite or negative.
    """
    arr = _values(name, x)
    if arr is None:
        return x
    _check_finite(name, arr, x)
    if np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0, got {_fmt(x)}")
    return x


def check_positive_int(name: str, x: Any, *, minimum: int = 1) -> int:
    """A Python/NumPy integer ``>= minimum`` (floats with integer value are rejected: T=1e3 is a float).

    Args:
        name: the parameter's name, quoted in the error message.
        x: a Python or NumPy integer, or an integer array (every entry checked); a tracer is returned unchecked.
        minimum: the smallest value allowed.

    Returns:
        ``int(x)`` for a scalar; an integer array with at least one dimension is returned unchanged.

    Raises:
        TypeError: ``x`` is a bool, a float or not a number.
        ValueError: ``x`` (or an entry) is below ``minimum``.
    """
    if not is_concrete(x):
        return x
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Integral, np.integer)):
        arr = np.asarray(x) if not isinstance(x, (str, bytes)) else None
        if arr is not None and arr.dtype != object and np.issubdtype(arr.dtype, np.integer):
            if np.any(arr < minimum):
                raise ValueError(f"{name} must be integers >= {minimum}, got {_fmt(x)}")
            return int(arr) if arr.ndim == 0 else x  # type: ignore[return-value]  # arrays pass through
        raise TypeError(f"{name} must be an integer >= {minimum}, got {x!r} ({type(x).__name__})")
    if int(x) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {int(x)}")
    return int(x)


def check_in_range(name: str, x: Any, lo: float, hi: float, *, lo_closed: bool = True, hi_closed: bool = True) -> Any:
    """``lo <= x <= hi`` (open ends as requested), finite.

    Args:
        name: the parameter's name, quoted in the error message.
        x: a number or numeric array (every entry checked); a tracer is returned unchecked.
        lo, hi: the ends of the interval.
        lo_closed, hi_closed: whether ``lo`` (resp. ``hi``) itself is allowed.

    Returns:
        ``x`` unchanged.

    Raises:
        TypeError: ``x`` is a bool or not numeric.
        ValueError: an entry is NaN or outside the interval.
    """
    arr = _values(name, x)
    if arr is None:
        return x
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} must be a number in {_interval(lo, hi, lo_closed, hi_closed)}, got NaN")
    ok_lo = arr >= lo if lo_closed else arr > lo
    ok_hi = arr <= hi if hi_closed else arr < hi
    if not (np.all(ok_lo) and np.all(ok_hi)):
        raise ValueError(f"{name} must be in {_interval(lo, hi, lo_closed, hi_closed)}, got {_fmt(x)}")
    return x


def check_probability(name: str, x: Any, *, open_left: bool = False, open_right: bool = False) -> Any:
    """A probability: ``x`` in ``[0, 1]``, either end optionally open.

    Args:
        name: the parameter's name, quoted in the error message.
        x: a number or numeric array (every entry checked); a tracer is returned unchecked.
        open_left: exclude 0.
        open_right: exclude 1.

    Returns:
        ``x`` unchanged.

    Raises:
        ValueError: an entry is NaN or outside the interval.
    """
    return check_in_range(name, x, 0.0, 1.0, lo_closed=not open_left, hi_closed=not open_right)


def check_epsilon(x: Any, name: str = "eps", *, allow_inf: bool = True) -> Any:
    """Privacy parameter: ``eps > 0`` (``inf`` allowed: the non-private limit).

    Args:
        x: the privacy parameter ε (number or array).
        name: the parameter's name, quoted in the error message.
        allow_inf: accept ``eps = inf``.

    Returns:
        ``x`` unchanged.

    Raises:
        ValueError: ε is NaN, ``<= 0``, or infinite when ``allow_inf`` is false.
    """
    return check_positive(name, x, allow_inf=allow_inf)


def check_delta(x: Any, name: str = "delta") -> Any:
    """Privacy parameter: ``delta`` in ``[0, 1)``.

    Args:
        x: the privacy parameter δ (number or array).
        name: the parameter's name, quoted in the error message.

    Returns:
        ``x`` unchanged.

    Raises:
        ValueError: δ is NaN or outside ``[0, 1)``.
    """
    return check_in_range(name, x, 0.0, 1.0, lo_closed=True, hi_closed=False)


def check_choice(name: str, x: Any, allowed: Iterable[Any]) -> Any:
    """An option that must be one of a fixed set of values.

    Args:
        name: the parameter's name, quoted in the error message.
        x: the value given.
        allowed: the accepted values (compared with ``==``).

    Returns:
        ``x`` unchanged.

    Raises:
        ValueError: ``x`` is not among ``allowed``.
    """
    allowed = list(allowed)
    if x not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {x!r}")
    return x


def check_finite_scalar(name: str, x: Any) -> Any:
    """A single finite number (0-d).

    Args:
        name: the parameter's name, quoted in the error message.
        x: a number or 0-d array; a tracer is returned unchecked.

    Returns:
        ``x`` unchanged.

    Raises:
        TypeError: ``x`` is a bool or not numeric.
        ValueError: ``x`` has a dimension, or is NaN or infinite.
    """
    arr = _values(name, x)
    if arr is None:
        return x
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a scalar, got shape {arr.shape}")
    if not math.isfinite(float(arr)):
        raise ValueError(f"{name} must be finite, got {arr.item()!r}")
    return x


#: Seeds are 32-bit: ``jax.random.key(s)`` keeps ``s mod 2**32``, so ``2**32`` and ``-1`` alias other seeds.
SEED_LIMIT = 2**32


def check_seed(name: str, x: Any) -> int:
    """A seed: an integer in ``[0, 2**32)`` (Python or NumPy integer, or a 0-d integer array).

    ``jax.random.key`` keeps only the low 32 bits, so a larger or negative seed would silently
    give the same runs as another one, and a float (``0.5``) would be truncated to another seed:
    both are refused.

    Args:
        name: the parameter's name, quoted in the error message.
        x: the seed.

    Returns:
        The seed as a Python ``int``.

    Raises:
        TypeError: ``x`` is a bool, a float, or not a 0-d integer.
        ValueError: ``x`` is negative or ``>= 2**32``.
    """
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer in [0, 2**32), got bool {x!r}")
    if not isinstance(x, (numbers.Integral, np.integer)):
        arr = np.asarray(x) if is_concrete(x) and not isinstance(x, (str, bytes)) else None
        if arr is None or arr.ndim != 0 or arr.dtype == object or not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"{name} must be an integer in [0, 2**32), got {describe_value(x)}: a float seed would "
                            f"be truncated to another seed; pass an int")
        x = arr.item()
    v = int(x)
    if not 0 <= v < SEED_LIMIT:
        raise ValueError(f"{name} must be an integer in [0, 2**32) (seeds are 32-bit: {v} would give the same "
                         f"keys as seed {v % SEED_LIMIT}), got {v}")
    return v
