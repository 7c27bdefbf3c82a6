"""Host-side input checks for the accountant (float64 NumPy).

Thin wrappers over ``jaxdp.core.validation`` that also convert to float64 and
reject non-finite values: every message names the parameter, the value and
what is allowed.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..core.validation import check_choice, check_in_range, check_positive, check_positive_int

__all__ = [
    "as_f64", "pos", "nonneg", "eps_arg", "delta_arg", "delta_open", "prob_open", "count_arg",
    "eps_delta_lists", "mode_arg", "out", "coerce_number",
]


def coerce_number(name: str, x: Any) -> Any:
    """Accept numeric strings (values coming from a command line) as floats; leave everything else alone."""
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            raise TypeError(f"{name} must be a number, got the string {x!r}") from None
    return x


def as_f64(name: str, x: Any) -> np.ndarray:
    """``x`` as a float64 array (0-d for scalars); rejects bools, strings, objects and NaN/inf."""
    x = coerce_number(name, x)
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be a number, got bool {x!r}")
    try:
        arr = np.asarray(x)
    except Exception as e:  # pragma: no cover
        raise TypeError(f"{name} must be a number or array of numbers, got {type(x).__name__}") from e
    if arr.dtype == object or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a number or array of numbers, got {x!r} ({type(x).__name__})")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {x!r}")
    return arr


def pos(name: str, x: Any) -> np.ndarray:
    """Finite, ``> 0``."""
    arr = as_f64(name, x)
    check_positive(name, arr)
    return arr


def nonneg(name: str, x: Any) -> np.ndarray:
    """Finite, ``>= 0``."""
    arr = as_f64(name, x)
    if np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0, got {_fmt(arr)}")
    return arr


def eps_arg(x: Any, name: str = "eps") -> np.ndarray:
    """A privacy parameter ε: finite and ``> 0``."""
    return pos(name, x)


def delta_arg(x: Any, name: str = "delta") -> np.ndarray:
    """δ in ``[0, 1)``."""
    arr = as_f64(name, x)
    check_in_range(name, arr, 0.0, 1.0, lo_closed=True, hi_closed=False)
    return arr


def delta_open(x: Any, name: str = "delta") -> np.ndarray:
    """δ in ``(0, 1)`` (conversions that divide by δ or take log(1/δ))."""
    arr = as_f64(name, x)
    check_in_range(name, arr, 0.0, 1.0, lo_closed=False, hi_closed=False)
    return arr


def prob_open(x: Any, name: str) -> np.ndarray:
    arr = as_f64(name, x)
    check_in_range(name, arr, 0.0, 1.0, lo_closed=False, hi_closed=False)
    return arr


def count_arg(x: Any, name: str = "k", minimum: int = 1) -> Any:
    """An integer count ``>= minimum`` (a Python/NumPy int or an integer array; floats are rejected)."""
    x = coerce_count(name, x)
    return check_positive_int(name, x, minimum=minimum)


def coerce_count(name: str, x: Any) -> Any:
    if isinstance(x, str):
        try:
            return int(x)
        except ValueError:
            raise TypeError(f"{name} must be an integer, got the string {x!r}") from None
    return x


def eps_delta_lists(eps_list: Any, delta_list: Any, *, allow_zero_eps: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Per-mechanism ``(ε_i)`` and ``(δ_i)``: 1-D, same non-zero length, ε_i >= 0 (or > 0), δ_i in [0, 1)."""
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
            raise ValueError(f"eps_list must have every entry >= 0, got {_fmt(e)}")
    else:
        check_positive("eps_list", e)
    check_in_range("delta_list", d, 0.0, 1.0, lo_closed=True, hi_closed=False)
    return e, d


def mode_arg(mode: Any, allowed: tuple[str, ...], name: str = "mode") -> str:
    """A string option among ``allowed``."""
    if not isinstance(mode, str):
        raise TypeError(f"{name} must be a string, one of {list(allowed)}, got {mode!r}")
    return check_choice(name, mode, allowed)


def out(x: Any) -> Any:
    """A 0-d result as a Python float, otherwise a float64 array."""
    arr = np.asarray(x, dtype=np.float64)
    return float(arr) if arr.ndim == 0 else arr


def _fmt(arr: np.ndarray) -> str:
    if arr.ndim == 0:
        return repr(float(arr))
    return f"array of shape {arr.shape} (min {arr.min()}, max {arr.max()})"


def is_int(x: Any) -> bool:
    return isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, (bool, np.bool_))

