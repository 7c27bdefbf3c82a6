"""The shared helpers of the checks: tracer test, numeric host values and the pieces of error messages."""
from __future__ import annotations

from typing import Any

import numpy as np


def is_concrete(x: Any) -> bool:
    """True if ``x`` is a host value (not a JAX tracer).

    Args:
        x: any value; a JAX tracer (inside ``jit``, ``vmap`` or ``scan``) is the only thing that is not
            concrete.

    Returns:
        ``False`` for a ``jax.core.Tracer``, ``True`` for everything else (also when JAX cannot be imported).
    """
    try:
        import jax

        return not isinstance(x, jax.core.Tracer)
    except Exception:  # pragma: no cover
        return True


def _as_array(name: str, x: Any) -> np.ndarray:
    """``np.asarray(x)``; a bool, or a value numpy cannot convert, raises ``TypeError`` quoting ``name``."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be a number, got bool {x!r}")
    try:
        return np.asarray(x)
    except Exception as e:  # pragma: no cover
        raise TypeError(f"{name} must be a number or array of numbers, got {type(x).__name__}") from e


def _values(name: str, x: Any) -> np.ndarray | None:
    if not is_concrete(x):
        return None
    arr = _as_array(name, x)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)):
        hint = "; convert it with .astype(numpy.float32)" if arr.dtype == np.bool_ else ""
        raise TypeError(f"{name} must be a number or array of numbers, got {describe_value(x)}{hint}")
    return arr


def describe_value(x: Any, limit: int = 80) -> str:
    """A short description of ``x`` for an error message: the ``repr`` of a scalar or short value, the
    type, dtype and shape of an array (never the whole array).

    Args:
        x: the offending value.
        limit: the longest ``repr`` kept, in characters; a longer one is cut and ends with ``...``.

    Returns:
        ``"<repr> (<type>)"`` for a scalar or non-array value, ``"<type> of dtype <dtype> and shape <shape>"``
        for an array with at least one dimension.
    """
    if hasattr(x, "shape") and hasattr(x, "dtype") and np.ndim(x) > 0:
        return f"{type(x).__name__} of dtype {x.dtype} and shape {tuple(np.shape(x))}"
    try:
        r = repr(x)
    except Exception:  # pragma: no cover
        r = f"<{type(x).__name__}>"
    if len(r) > limit:
        r = r[: limit - 3] + "..."
    return f"{r} ({type(x).__name__})"


def _fmt(x: Any) -> str:
    arr = np.asarray(x)
    if arr.ndim == 0:
        return repr(arr.item())
    return f"array of shape {arr.shape} (min {np.nanmin(arr) if arr.size else 'n/a'}, max {np.nanmax(arr) if arr.size else 'n/a'})"


def _check_finite(name: str, arr: np.ndarray, x: Any) -> None:
    if np.issubdtype(arr.dtype, np.floating) and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {_fmt(x)} containing NaN or inf")



def _interval(lo: float, hi: float, lc: bool, hc: bool) -> str:
    return f"{'[' if lc else '('}{lo}, {hi}{']' if hc else ')'}"
