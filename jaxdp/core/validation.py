"""Input validation at the boundary, before anything is traced or compiled: the one module of checks.

Every public entry point calls these on its host-side arguments. Errors are
``ValueError`` / ``TypeError`` whose message names the parameter, the value
received and what is allowed. Values that are JAX tracers (inside ``jit`` or
``vmap``) are skipped: validation belongs to the host boundary.
"""
from __future__ import annotations

import inspect
import math
import numbers
from typing import Any, Callable, Iterable

import jax.numpy as jnp
import numpy as np

from .types import fdt

__all__ = [
    "check_positive",
    "check_positive_int",
    "check_nonneg",
    "check_in_range",
    "check_probability",
    "check_epsilon",
    "check_delta",
    "check_losses_in_range",
    "check_choice",
    "check_shape",
    "check_finite_scalar",
    "is_concrete",
    "check_field", "checked_params",
    "check_adversary_params", "params_type_check",
    "check_seed",
    "describe_value",
    "first_nonfinite",
    "SEED_LIMIT",
    # common planner arguments
    "check_d", "check_eps_finite", "check_beta", "check_lstar", "check_mode", "check_delta_for",
    # noise parameters of the mechanisms
    "check_delta_open", "check_sensitivity", "check_scale", "check_finite", "check_noise_kind",
    # float64 host values of the accountant
    "as_f64", "pos", "nonneg", "eps_arg", "delta_arg", "delta_open", "prob_open", "count_arg",
    "eps_delta_lists", "mode_arg", "out", "coerce_number", "is_int", "planner_args", "optional_dim",
]


def is_concrete(x: Any) -> bool:
    """True if ``x`` is a host value (not a JAX tracer).

    Args:
        x: any value; a JAX tracer (inside ``jit``, ``vmap`` or ``scan``) is the only thing that is not
            concrete.

    Returns:
        ``False`` for a ``jax.core.Tracer``, ``True`` for everything else.
    """
    import jax

    return not isinstance(x, jax.core.Tracer)


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


def _named(check: Callable[..., Any], default: str, what: str, returns: str = "``x`` unchanged.",
           **fixed: Any) -> Callable[..., Any]:
    """The named check ``f(x, name=default, **kw) = check(name, x, **fixed, **kw)``, documented by ``what``."""
    def named(x: Any, name: str = default, **kw: Any) -> Any:
        return check(name, x, **{**fixed, **kw})

    named.__doc__ = (f"{what}\n\n    Args:\n        x: the value checked (a number or array; a tracer is returned "
                     f"unchecked).\n        name: the parameter's name, quoted in the error message.\n\n    Returns:\n"
                     f"        {returns}\n\n    Raises:\n        ValueError: ``x`` is not what is allowed.\n")
    return named


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


check_epsilon = _named(check_positive, "eps", "Privacy parameter: ``eps > 0`` (``inf`` allowed, the non-private limit, "
                       "unless ``allow_inf=False`` is passed).", allow_inf=True)


check_delta = _named(check_in_range, "delta", "Privacy parameter: ``delta`` in ``[0, 1)``.",
                     lo=0.0, hi=1.0, lo_closed=True, hi_closed=False)


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
    arr = _values(name, x)
    if arr is None:
        return x
    at = first_nonfinite(arr)
    if at is not None:
        raise ValueError(f"{name} must be finite, got {arr[at].item()!r} at index {at}"
                         + (f" (row {at[0]}, column {at[1]}, counting from 0)" if len(at) == 2 else ""))
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
    import jax

    if not isinstance(x, (np.ndarray, np.generic, jax.Array)):
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


def checked_params(scalars: bool = False, **bounds):
    """Class decorator of a params ``NamedTuple``: building it on the host checks each field named in ``bounds``
    with ``check_field(<class name>, field, **bounds[field])`` (tracers and Python ints are not checked).

    Args:
        scalars: store Python ``int``/``float`` fields as arrays of the floating dtype of :func:`fdt`.
        **bounds: per field, the keyword arguments of :func:`jaxdp.core.validation.check_field`.

    Returns:
        The decorator; it returns a subclass of the ``NamedTuple`` with the same name, docstring and signature.
    """

    def wrap(base):
        def __new__(cls, *args, **kwargs):
            self = base.__new__(cls, *args, **kwargs)
            for name, kw in bounds.items():
                check_field(base.__name__, name, getattr(self, name), **kw)
            if scalars:
                return base.__new__(cls, *(jnp.asarray(v, fdt()) if isinstance(v, (int, float)) else v for v in self))
            return self

        return type(base.__name__, (base,), {"__slots__": (), "__new__": __new__, "__doc__": base.__doc__,
                                             "__module__": base.__module__, "__qualname__": base.__qualname__,
                                             "__signature__": inspect.signature(base)})

    return wrap

def params_type_check(owner: str, cls: type, how: str) -> Callable[[Any, Any], None]:
    """A ``loss.host_check`` (:func:`check_adversary_params`) that refuses adversary parameters of another type.

    Args:
        owner: the adversary's name, quoted in the error.
        cls: the parameter type it needs.
        how: how to build one, quoted in the error (``"switch_watcher_params(patience)"``).

    Returns:
        ``host_check(params, T)``; it raises ``TypeError`` naming ``cls``, ``how`` and the type received.
    """

    def host_check(params: Any, T: Any) -> None:
        if not isinstance(params, cls):
            raise TypeError(f"{owner}'s adv_params must be {cls.__name__} ({how}), got {type(params).__name__}")

    return host_check


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


# ----------------------------------------------------------------------------- planners: common arguments


check_d = _named(check_positive_int, "d", "Number of experts: an integer ``>= 2``.", "``x`` as an ``int``.",
                 minimum=2)


check_eps_finite = _named(check_positive, "eps", "ε > 0 and finite (planners need a finite privacy level).")


check_beta = _named(check_in_range, "beta", "Failure probability β in (0, 1/2) (REAL Thms 1–2): the probability "
                    "that the high-probability regret bound fails.", lo=0.0, hi=0.5, lo_closed=False, hi_closed=False)


check_lstar = _named(check_nonneg, "Lstar", "Loss level L* >= 0, finite: the loss of the best expert in hindsight "
                     "(the realizable setting's L*; 0 when realizable).")


def check_mode(mode: str, allowed=("paper", "certified", "rate")) -> str:
    """A planner's mode, one of ``allowed``.

    Args:
        mode: the mode requested; by default ``"paper"`` (the formulas as printed), ``"certified"``
            (parameters chosen so that the privacy statement certifies the requested (ε, δ)) or ``"rate"``
            (logarithmic factors and constants dropped), see docs/guide/planning.md#modes.
        allowed: the modes that planner accepts.

    Returns:
        ``mode`` unchanged.

    Raises:
        ValueError: ``mode`` is not in ``allowed``.
    """
    return check_choice("mode", mode, list(allowed))


def check_delta_for(delta: Any, *, approximate: bool) -> float:
    """δ in [0, 1); with ``approximate=True`` (an (ε, δ) statement) δ must be in (0, 1).

    Args:
        delta: the privacy parameter δ.
        approximate: whether the guarantee is approximate (ε, δ)-DP, which needs δ > 0.

    Returns:
        ``float(delta)``.

    Raises:
        ValueError: δ is outside ``[0, 1)``, or is 0 when ``approximate``.
    """
    check_delta(delta)
    if approximate and float(delta) <= 0:
        raise ValueError(f"delta must be in (0, 1) for the approximate-DP setting, got {delta!r}")
    return float(delta)


# ----------------------------------------------------------------------------- mechanisms: noise parameters
# (each returns its input unchanged; traced values are skipped)


def check_delta_open(delta: Any, name: str = "delta") -> Any:
    """δ in (0, 1) (approximate-DP calibrations need δ > 0).

    Args:
        delta, name: the privacy parameter δ (number or array) and its name, quoted in the error message.

    Returns:
        ``delta`` unchanged.

    Raises:
        ValueError: δ is outside the open interval ``(0, 1)``.
    """
    check_delta(delta, name)
    arr = _values(name, delta)
    if arr is not None and np.any(arr <= 0):
        raise ValueError(f"{name} must be in (0, 1) for an (eps, delta) calibration, got {arr.item() if arr.ndim == 0 else arr}")
    return delta


check_sensitivity = _named(check_positive, "sensitivity", "Sensitivity Δ of the query: finite and > 0.")


def check_scale(x: Any, name: str = "scale") -> Any:
    """Noise scale: finite and >= 0 (0 = exact).

    Args:
        x: the noise scale (Laplace ``b`` or Gaussian σ; number or array).
        name: the parameter's name, quoted in the error message.

    Returns:
        ``x`` unchanged.

    Raises:
        ValueError: an entry is NaN, infinite or negative.
    """
    arr = _values(name, x)
    if arr is None:
        return x
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be a finite number >= 0, got {arr.item() if arr.ndim == 0 else arr}")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0, got {arr.item() if arr.ndim == 0 else arr}")
    return x


def check_finite(x: Any, name: str) -> Any:
    """A finite number or array (no NaN / inf).

    Args:
        x: the value; a tracer is returned unchecked.
        name: the parameter's name, quoted in the error message.

    Returns:
        ``x`` unchanged.

    Raises:
        ValueError: an entry is NaN or infinite.
    """
    arr = _values(name, x)
    if arr is not None:
        _check_finite(name, arr, x)
    return x


check_noise_kind = _named(check_choice, "noise", 'The noise distribution: ``"laplace"`` or ``"gaussian"``.',
                          allowed=["laplace", "gaussian"])


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
    check_nonneg(name, arr)
    return arr


def _unit_interval(name: str, x: Any, *, lo_closed: bool) -> np.ndarray:
    arr = as_f64(name, x)
    check_in_range(name, arr, 0.0, 1.0, lo_closed=lo_closed, hi_closed=False)
    return arr


eps_arg = _named(pos, "eps", "A privacy parameter ε: finite and ``> 0``.", "ε as a float64 array.")


delta_arg = _named(_unit_interval, "delta", "δ in ``[0, 1)``.", "δ as a float64 array.", lo_closed=True)


delta_open = _named(_unit_interval, "delta", "δ in ``(0, 1)`` (conversions that divide by δ or take log(1/δ)).",
                    "δ as a float64 array.", lo_closed=False)


prob_open = _named(_unit_interval, "p", "A probability in the open interval ``(0, 1)`` (e.g. a sampling rate).",
                   "``x`` as a float64 array.", lo_closed=False)


def count_arg(x: Any, name: str = "k", minimum: int = 1) -> Any:
    """An integer count ``>= minimum`` (a Python/NumPy int or an integer array; floats are rejected).

    Integer strings are parsed first (as :func:`coerce_number` parses numbers).

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
    x = _from_string(name, x, int, "an integer")
    return check_positive_int(name, x, minimum=minimum)


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
            raise ValueError(f"eps_list must have every entry >= 0, got {_fmt(e)}")
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


def is_int(x: Any) -> bool:
    """Whether ``x`` is an integer (Python or NumPy), bools excluded.

    Args:
        x: any value.

    Returns:
        ``True`` for an ``int`` or ``numpy.integer`` that is not a bool.
    """
    return isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, (bool, np.bool_))


def planner_args(eps: Any, delta: Any, T: Any, mode: Any, modes: tuple[str, ...], *,
                 delta_positive: bool) -> tuple[float, float, int, str]:
    """The request every privacy-primitive planner checks first.

    Args:
        eps: ε, finite and ``> 0``.
        delta: δ; ``None`` means 0 where ``delta_positive`` is false.
        T: the horizon, a single integer ``>= 1``.
        mode: the planner mode, one of ``modes``.
        modes: the modes the planner offers.
        delta_positive: δ must lie in ``(0, 1)`` (else ``[0, 1)``).

    Returns:
        ``(eps, delta, T, mode)`` as ``float``, ``float``, ``int``, ``str``.

    Raises:
        ValueError, TypeError: an argument outside its range, naming it.
    """
    mode = mode_arg(mode, modes)
    e = float(eps_arg(eps))
    if delta is None:
        if delta_positive:
            raise ValueError("delta is required for this planner: a number in (0, 1)")
        delta = 0.0
    d = float(delta_open(delta) if delta_positive else delta_arg(delta))
    T = count_arg(T, "T")
    if not is_int(T):
        raise TypeError(f"T must be a single integer >= 1, got {T!r}")
    return e, d, int(T), mode


def optional_dim(d: Any) -> int | None:
    """An optional dimension ``d``: ``None``, or a single integer ``>= 1``.

    Args:
        d: the dimension or ``None``.

    Returns:
        ``int(d)``, or ``None``.

    Raises:
        ValueError, TypeError: ``d`` below 1 or not a single integer.
    """
    if d is None:
        return None
    d = count_arg(d, "d")
    if not is_int(d):
        raise TypeError(f"d must be a single integer >= 1, got {d!r}")
    return int(d)
