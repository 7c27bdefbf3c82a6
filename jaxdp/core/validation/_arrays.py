"""Checks of arrays and pytrees: finite arrays, loss arrays, shapes, the fields of params ``NamedTuple`` s and
an adversary's parameters."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._base import _check_finite, _fmt, _interval, _values, is_concrete


def check_finite_array(name: str, x: Any) -> np.ndarray:
    """A numeric array with no NaN or infinite entry.

    Args:
        name: the parameter's name, quoted in the error message.
        x: a number or array-like of numbers; a tracer is returned unchecked.

    Returns:
        ``numpy.asarray(x)`` (``x`` itself when it is a tracer).

    Raises:
        TypeError: ``x`` is a bool, a bool array or not numeric.
        ValueError: a float entry is NaN or infinite.
    """
    arr = _values(name, x)
    if arr is None:
        return x
    _check_finite(name, arr, x)
    return arr


def check_losses_in_range(name: str, x: Any, lo: float = 0.0, hi: float = 1.0) -> np.ndarray:
    """A finite loss array with every entry in ``[lo, hi]``; errors give the index of the first bad entry.

    Args:
        name: the parameter's name, quoted in the error message.
        x: the losses, any shape (typically ``(T, d)``: one row per round, one column per expert); a tracer is
            returned unchecked.
        lo, hi: the closed range every loss must lie in.

    Returns:
        The losses as a NumPy array (``x`` itself when it is a tracer).

    Raises:
        TypeError: ``x`` is not numeric.
        ValueError: an entry is NaN, infinite or outside ``[lo, hi]``; the message names its index
            (row and column for a 2-D array).
    """
    host = _values(name, x)
    if host is not None:
        at = first_nonfinite(host)
        if at is not None:
            raise ValueError(f"{name} must be finite, got {host[at].item()!r} at index {at}"
                             + (f" (row {at[0]}, column {at[1]}, counting from 0)" if len(at) == 2 else ""))
    arr = check_finite_array(name, x)
    if arr is None or not isinstance(arr, np.ndarray):
        return x
    if arr.size and (arr.min() < lo or arr.max() > hi):
        bad = np.argwhere((arr < lo) | (arr > hi))[0]
        raise ValueError(
            f"{name} must have every entry in [{lo}, {hi}], got {arr[tuple(bad)].item()!r} at index {tuple(int(i) for i in bad)}"
        )
    return arr


def check_shape(name: str, x: Any, shape: tuple) -> Any:
    """``x.shape == shape``; ``None`` entries in ``shape`` match anything.

    Args:
        name: the parameter's name, quoted in the error message.
        x: an array (or anything ``numpy.shape`` accepts).
        shape: the expected shape; ``None`` stands for any length along that axis.

    Returns:
        ``x`` unchanged.

    Raises:
        ValueError: the number of dimensions or a fixed length differs.
    """
    s = np.shape(x)
    if len(s) != len(shape) or any(a is not None and a != b for a, b in zip(shape, s)):
        raise ValueError(f"{name} must have shape {tuple('*' if a is None else a for a in shape)}, got {s}")
    return x


def _host_numeric(x: Any) -> np.ndarray | None:
    """``x`` as a NumPy array if it is a concrete numeric host value worth checking, else ``None``.

    Skipped (returned as ``None``): tracers (inside ``jit``/``vmap``/``scan``), ``None``,
    ``bool``, Python ``int`` s (they may be ``vmap`` axis specs such as ``in_axes=HedgeParams(eta=0)``),
    and the placeholders JAX puts in pytrees (``object()``, ``ShapeDtypeStruct``)."""
    if x is None or isinstance(x, (bool, np.bool_, int)) or not is_concrete(x):
        return None
    if isinstance(x, float):
        return np.asarray(x)
    try:
        import jax

        if not isinstance(x, (np.ndarray, np.generic, jax.Array)):
            return None
    except Exception:  # pragma: no cover
        if not isinstance(x, (np.ndarray, np.generic)):
            return None
    dt = getattr(x, "dtype", None)
    if dt is None or not (np.issubdtype(dt, np.floating) or np.issubdtype(dt, np.integer)):
        return None
    return np.asarray(x)


def check_field(owner: str, name: str, x: Any, *, lo: float | None = None, hi: float | None = None,
                lo_open: bool = False, hi_open: bool = False, allow_inf: bool = False) -> None:
    """Host-side check of one field of a public params ``NamedTuple`` (``owner``): finite (unless
    ``allow_inf``) and in the given range, elementwise.

    Contract under tracing: inside ``jit``/``vmap``/``scan`` the field is a tracer and is not
    checked (values are the caller's responsibility there); Python ``int`` s are not checked
    either, because JAX and users build params pytrees holding axis specs. Every host-side
    construction with floats or arrays is checked, before anything is compiled.

    Args:
        owner: the params class's name, which starts the error message (``"HedgeParams"``).
        name: the field's name.
        x: the field's value: a float or a float/integer array is checked; ``None``, bools, Python ints,
            tracers and pytree placeholders are skipped.
        lo, hi: the bounds of the allowed range; ``None`` leaves that side unbounded.
        lo_open, hi_open: exclude the bound itself.
        allow_inf: accept infinite entries (NaN is always refused).

    Raises:
        ValueError: an entry is NaN, infinite (unless ``allow_inf``) or out of range; the message gives the
            first bad entry.
    """
    arr = _host_numeric(x)
    if arr is None or arr.size == 0:
        return
    rng = _interval(lo if lo is not None else -math.inf, hi if hi is not None else math.inf,
                    not lo_open and lo is not None, not hi_open and hi is not None)
    if np.issubdtype(arr.dtype, np.floating):
        if np.any(np.isnan(arr)):
            raise ValueError(f"{owner}: {name} must be a number in {rng}, got {_fmt(x)} containing NaN")
        if not allow_inf and not np.all(np.isfinite(arr)):
            raise ValueError(f"{owner}: {name} must be finite and in {rng}, got {_fmt(x)} containing inf")
    bad = np.zeros(arr.shape, bool)
    if lo is not None:
        bad |= (arr <= lo) if lo_open else (arr < lo)
    if hi is not None:
        bad |= (arr >= hi) if hi_open else (arr > hi)
    if np.any(bad):
        first = arr[bad].reshape(-1)[0].item()
        where = "" if arr.ndim == 0 else f" (first bad entry {first!r})"
        raise ValueError(f"{owner}: {name} must be in {rng}, got {_fmt(x)}{where}")


def check_adversary_params(adversary: Any, params: Any, T: Any = None) -> None:
    """Run an adversary's host-side checks of its parameters against the horizon ``T``.

    Adversaries that need one (replayed data: columns vs ``d``, ``T`` vs the data length)
    attach ``loss.host_check(params, T)``; ``simulate``/``rollout`` call this on concrete inputs.
    Tracers are skipped (see :func:`check_field` for the contract under tracing).

    Args:
        adversary: the adversary; its ``loss.host_check`` (if any) is called.
        params: the adversary's parameters; nothing is checked when any of them is a tracer.
        T: the horizon (number of rounds), or ``None`` when unknown (a traced ``T`` counts as unknown).

    Raises:
        ValueError: whatever the adversary's ``host_check`` raises for inconsistent parameters.
    """
    hc = getattr(getattr(adversary, "loss", None), "host_check", None)
    if hc is None:
        return
    leaves = params if not isinstance(params, tuple) else list(params)
    if not all(is_concrete(x) for x in (leaves if isinstance(leaves, list) else [leaves])):
        return
    if T is not None and not is_concrete(T):
        T = None
    hc(params, T)


def first_nonfinite(arr: Any) -> tuple[int, ...] | None:
    """The index of the first NaN or infinite entry of a float array, ``None`` if all are finite.

    Args:
        arr: an array-like; integer and other non-float arrays have no non-finite entry.

    Returns:
        The index (a tuple of ints, one per dimension, in C order) of the first NaN or ±inf entry, or ``None``.
    """
    a = np.asarray(arr)
    if not np.issubdtype(a.dtype, np.floating) and not np.issubdtype(a.dtype, np.complexfloating):
        return None
    bad = ~np.isfinite(a)
    if not bad.any():
        return None
    return tuple(int(i) for i in np.argwhere(bad)[0])
