"""Parameter search that certifies a privacy target, host-side float64.

* ``calibrate``: one parameter, a monotone certified quantity, bisection that
  returns a point *on the safe side* (the returned parameter satisfies the
  constraint exactly, not approximately).
* ``grid_search``: several parameters, any feasibility rule, minimise an
  objective over a rectangular grid (vectorised with broadcasting; used e.g.
  by ``l2p_calibrate``).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Mapping

import numpy as np

from ...core import validation as C

__all__ = ["calibrate", "grid_search", "GridResult"]


def calibrate(fn: Callable[[float], float], target: float, *, lo: float, hi: float, increasing: bool = True,
              log_scale: bool | None = None, rtol: float = 1e-10, maxiter: int = 200, name: str = "parameter",
              what: str = "the certified value") -> float:
    """Best parameter ``x ∈ [lo, hi]`` whose certified value ``fn(x)`` is ``<= target``, for monotone ``fn``.

    * ``increasing=True`` (e.g. ``fn`` = ε certified by a per-step ε, or by ``1/σ``): returns the
      *largest* ``x`` with ``fn(x) <= target``.
    * ``increasing=False`` (e.g. ``fn`` = ε certified by a noise scale σ): returns the *smallest* such ``x``.

    Bisection (geometric when ``log_scale``, the default when ``lo > 0``) until the bracket is within
    ``rtol``; the returned endpoint always satisfies ``fn(x) <= target``. Raises ``ValueError`` naming
    the parameter when no point of ``[lo, hi]`` does (nothing certifies the request), and returns the
    far end of the interval when all of it does.

    Args:
        fn: the monotone certified value as a function of the parameter.
        target: the bound ``fn(x)`` must meet.
        lo, hi: the search interval.
        increasing: ``fn`` increases with ``x`` (return the largest feasible ``x``), else the smallest.
        log_scale: geometric bisection (default: when ``lo > 0``).
        rtol: relative width of the final bracket.
        maxiter: the most bisection steps.
        name: the parameter's name, for errors.
        what: the certified quantity's name, for errors.

    Returns:
        The best ``x`` with ``fn(x) <= target``.

    Raises:
        ValueError: no point of ``[lo, hi]`` satisfies ``fn(x) <= target``.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    target = float(C.as_f64("target", target))
    lo = float(C.as_f64("lo", lo))
    hi = float(C.as_f64("hi", hi))
    if not lo < hi:
        raise ValueError(f"lo must be < hi, got lo={lo}, hi={hi}")
    if log_scale is None:
        log_scale = lo > 0
    if log_scale and lo <= 0:
        raise ValueError(f"lo must be > 0 for a log-scale search, got {lo}")

    def ok(x: float) -> bool:
        v = float(fn(x))
        return (not math.isnan(v)) and v <= target

    good_end, bad_end = (lo, hi) if increasing else (hi, lo)
    if not ok(good_end):
        raise ValueError(
            f"no {name} in [{lo:.6g}, {hi:.6g}] certifies the request: {what} is {float(fn(good_end)):.6g} "
            f"> target {target:.6g} even at {name}={good_end:.6g}")
    if ok(bad_end):
        return bad_end
    g, b = good_end, bad_end
    for _ in range(maxiter):
        m = math.sqrt(g * b) if log_scale else 0.5 * (g + b)
        if m in (g, b):
            break
        if ok(m):
            g = m
        else:
            b = m
        if abs(b - g) <= rtol * max(abs(g), abs(b)):
            break
    return g


@dataclasses.dataclass
class GridResult:
    """Outcome of ``grid_search``: the minimiser, its objective value and how many grid points were feasible.

    Attributes:
        params: the minimiser, name -> value.
        value: its objective value.
        n_feasible: how many grid points were feasible.
        n_total: the number of grid points.
    """
    params: dict[str, float]
    value: float
    n_feasible: int
    n_total: int


def grid_search(objective: Callable[..., Any], feasible: Callable[..., Any], grid: Mapping[str, Any], *,
                chunk: int | None = None, what: str = "the request") -> GridResult:
    """Minimise ``objective(**p)`` over the grid points ``p`` with ``feasible(**p)`` True.

    ``grid`` maps each parameter name to a 1-D array of candidate values. The
    functions are called with *broadcastable open-mesh arrays* (as ``np.ix_``:
    the i-th parameter has shape ``(1, …, n_i, …, 1)``), so they must be written
    with NumPy operations that broadcast; they may return any array broadcastable
    to the full grid shape. ``chunk`` splits the first axis to bound memory.
    Ties are broken by the first grid point in C order. Raises ``ValueError`` when no point is feasible.

    Args:
        objective: ``objective(**p)``, broadcasting over the open mesh.
        feasible: ``feasible(**p)``, a boolean array broadcasting over the open mesh.
        grid: parameter name -> 1-D array of candidate values.
        chunk: split the first axis into chunks of this size (bounds memory).
        what: the request's name, for errors.

    Returns:
        A :class:`GridResult`.

    Raises:
        ValueError: no grid point is feasible.
    """
    if not grid:
        raise ValueError("grid must name at least one parameter")
    names = list(grid)
    axes = []
    for k in names:
        a = C.as_f64(f"grid[{k!r}]", grid[k])
        if a.ndim != 1 or a.size == 0:
            raise ValueError(f"grid[{k!r}] must be a non-empty 1-D array of values, got shape {a.shape}")
        axes.append(a)
    shape = tuple(a.size for a in axes)
    n0 = shape[0]
    step = n0 if chunk is None else max(1, int(chunk))
    best_val, best_idx, n_feas = math.inf, None, 0
    for start in range(0, n0, step):
        sub = [axes[0][start:start + step]] + axes[1:]
        mesh = np.ix_(*sub)
        kw = dict(zip(names, mesh))
        sub_shape = tuple(a.size for a in sub)
        with np.errstate(all="ignore"):
            feas = np.broadcast_to(np.asarray(feasible(**kw), dtype=bool), sub_shape)
            val = np.broadcast_to(np.asarray(objective(**kw), dtype=np.float64), sub_shape)
        val = np.where(feas & ~np.isnan(val), val, np.inf)
        n_feas += int(np.count_nonzero(feas))
        i = int(np.argmin(val))
        if val.flat[i] < best_val:
            best_val = float(val.flat[i])
            idx = np.unravel_index(i, sub_shape)
            best_idx = (idx[0] + start,) + tuple(idx[1:])
    if best_idx is None:
        why = f"{n_feas} feasible, none with a finite objective" if n_feas else "none feasible"
        raise ValueError(f"no grid point certifies {what} ({int(np.prod(shape))} points searched, {why})")
    params = {k: float(axes[j][best_idx[j]]) for j, k in enumerate(names)}
    return GridResult(params=params, value=best_val, n_feasible=n_feas, n_total=int(np.prod(shape)))
