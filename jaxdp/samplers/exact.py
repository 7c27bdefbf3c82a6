"""Exact samplers to test the Langevin samplers against, and to use where they exist.

* ``sample_trunc_gauss_ball(key, m, s, R, Mgrid)``: ``N(m, s² I_d)`` restricted
  to ``{||x|| <= R}``, exact up to the resolution of two 1-D grids (docs/algorithms/primitives.md#samplers).
  It is ``μ^rmw`` for linear losses on a centred ball: ``m = -G/(2λ)``,
  ``s² = 1/(2βλ)``.
* ``sample_trunc_gauss_ball_rejection``: the same law by rejection from
  ``N(m, s² I)`` (exact; for tests in the regime where acceptance is not tiny).
* ``sample_grid(key, logdensity_fn, grid)``: categorical over the cells of a
  fixed grid plus uniform jitter in the cell (exact for the discretized
  problem; docs/guide/concepts.md#notation). ``make_grid(lo, hi, n)`` builds the grid.

Docs: docs/algorithms/primitives.md#rmw, #samplers; docs/guide/concepts.md#notation.
"""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core.random import sample_categorical
from ..core.validation import check_positive, check_positive_int, is_concrete
from ..core.domains import Ball, check_domain

__all__ = ["sample_trunc_gauss_ball", "sample_trunc_gauss_ball_rejection", "Grid", "make_grid", "sample_grid",
           "log_chi2_cdf"]


def log_chi2_cdf(z: jax.Array, k: int) -> jax.Array:
    """``log P(χ²_k <= z)`` for a static integer ``k >= 1``, stable for small ``z`` (cheap to compile).

    With ``x = z/2``: for even ``k``, ``P = 1 - e^{-x} Σ_{j<k/2} x^j/j!``; for odd
    ``k``, ``P = erf(√x) - e^{-x} Σ_{j<(k-1)/2} x^{j+1/2}/Γ(j+3/2)`` (terms in
    log space). Where ``P < 10^-3`` (cancellation) the series
    ``P = x^a e^{-x}/Γ(a+1) Σ_n x^n/((a+1)…(a+n))``, ``a = k/2``, is used in log space.
    (``jax.scipy.special.gammainc`` gives the same values but takes seconds to compile.)

    Args:
        z: the argument(s).
        k: the degrees of freedom (static, >= 1).

    Returns:
        ``log P(χ²_k <= z)``.
    """
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k}")
    a = k / 2.0
    x = jnp.maximum(z, 0.0) / 2.0
    xs = jnp.maximum(x, 1e-30)
    lx = jnp.log(xs)
    if k % 2 == 0:
        j = np.arange(k // 2, dtype=np.float64)
        lg = np.asarray([math.lgamma(v + 1.0) for v in j], np.float32)
        S = jnp.sum(jnp.exp(-xs[..., None] + j.astype(np.float32) * lx[..., None] - lg), axis=-1)
        p = 1.0 - S
    else:
        j = np.arange((k - 1) // 2, dtype=np.float64)
        lg = np.asarray([math.lgamma(v + 1.5) for v in j], np.float32)
        S = jnp.sum(jnp.exp(-xs[..., None] + (j.astype(np.float32) + 0.5) * lx[..., None] - lg), axis=-1) \
            if j.size else jnp.zeros_like(xs)
        p = jax.scipy.special.erf(jnp.sqrt(xs)) - S
    n = np.arange(1, 65, dtype=np.float32)
    terms = jnp.cumsum(lx[..., None] - np.log(a + n), axis=-1)
    log_series = a * lx - xs - math.lgamma(a + 1.0) + jnp.log1p(jnp.sum(jnp.exp(terms), axis=-1))
    out = jnp.where(p > 1e-3, jnp.log(jnp.maximum(p, 1e-38)), log_series)
    return jnp.where(z <= 0, -jnp.inf, out)


def _grid_draw(key, logf, lo, hi, n):
    """One draw from the density ∝ exp(logf) on [lo, hi]: categorical over n cells (midpoint rule) + jitter."""
    k_cell, k_jit = jax.random.split(key)
    w = (hi - lo) / n
    mids = lo + (jnp.arange(n, dtype=lo.dtype) + 0.5) * w
    lp = logf(mids)
    lp = jnp.where(jnp.isnan(lp), -jnp.inf, lp)
    i = sample_categorical(k_cell, lp)
    u = jax.random.uniform(k_jit, (), lo.dtype)
    return lo + (i.astype(lo.dtype) + u) * w, mids, lp


def sample_trunc_gauss_ball(key: jax.Array, m: jax.Array, s: Any, R: Any, Mgrid: int = 2048) -> jax.Array:
    """Draw ``x ~ N(m, s² I_d)`` conditioned on ``||x|| <= R`` (docs/algorithms/primitives.md#samplers).

    Algorithm: ``a = ||m||``, ``e = m/a`` (``e_1`` if ``a = 0``), ``x = u e + w``, ``w ⊥ e``.

    1. ``u`` has density ``∝ exp(-(u-a)²/(2s²)) F_{χ²_{d-1}}((R² - u²)/s²)`` on
       ``[-R, R]``. This is strongly log-concave with parameter ``1/s²``
       (marginal of a Gaussian restricted to a convex set), so the mass lies
       within ``10 s`` of the mode: a coarse grid over ``[-R, R]`` locates the
       mode, a fine grid of ``Mgrid`` cells over ``mode ± (10 s + cell)`` is
       sampled (categorical + uniform jitter).
    2. ``r = ||w||`` given ``u`` has density ``∝ r^{d-2} e^{-r²/(2s²)}`` on
       ``[0, sqrt(R² - u²)]`` (the truncated ``χ²_{d-1}``, in the radius
       variable, which has no singularity at 0); mode ``min(s √(d-2), r_max)``;
       grid of ``Mgrid`` cells over ``mode ± 10 s``.
    3. direction of ``w``: ``z ~ N(0, I)`` with its ``e``-component removed, normalized.
    4. ``d = 1``: ``jax.random.truncated_normal``.

    Random draws: 5 sub-keys, fixed.

    Args:
        key: JAX PRNG key.
        m: the mean, shape ``(d,)``.
        s: the standard deviation (> 0, scalar; may be traced).
        R: the radius (> 0, scalar; may be traced).
        Mgrid: grid cells (static).

    Returns:
        A point of shape ``(d,)`` in the ball.
    """
    Mgrid = check_positive_int("Mgrid", Mgrid, minimum=8)
    check_positive("s", s)
    check_positive("R", R)
    if is_concrete(m) and np.ndim(m) != 1:
        raise ValueError(f"m must be a 1-D array (d,), got shape {np.shape(m)}")
    f = jnp.result_type(float)
    m = jnp.asarray(m, f)
    s = jnp.asarray(s, f)
    R = jnp.asarray(R, f)
    d = m.shape[0]
    k_u, k_r, k_z, k_1, _ = jax.random.split(key, 5)
    if d == 1:
        lo = (-R - m[0]) / s
        hi = (R - m[0]) / s
        z = jax.random.truncated_normal(k_1, lo, hi, (), f)
        return jnp.clip(m + s * z, -R, R)

    a = jnp.sqrt(jnp.sum(m * m))
    e1 = jnp.zeros((d,), f).at[0].set(1.0)
    e = jnp.where(a > 0, m / jnp.maximum(a, 1e-30), e1)
    k = d - 1

    def log_g(u):
        return -0.5 * jnp.square((u - a) / s) + log_chi2_cdf((R * R - u * u) / (s * s), k)

    # stage 1: locate the mode on a coarse grid over [-R, R]
    n1 = min(Mgrid, 128)
    w1 = 2.0 * R / n1
    mids1 = -R + (jnp.arange(n1, dtype=f) + 0.5) * w1
    u_star = mids1[jnp.argmax(log_g(mids1))]
    half = 10.0 * s + 2.0 * w1
    lo_u = jnp.maximum(-R, u_star - half)
    hi_u = jnp.minimum(R, u_star + half)
    u, _, _ = _grid_draw(k_u, log_g, lo_u, hi_u, Mgrid)
    u = jnp.clip(u, -R, R)

    r_max = jnp.sqrt(jnp.maximum(R * R - u * u, 0.0))

    def log_h(r):
        return (k - 1) * jnp.log(jnp.maximum(r, 1e-30)) - 0.5 * jnp.square(r / s) if k > 1 else -0.5 * jnp.square(r / s)

    mode_r = jnp.minimum(s * math.sqrt(max(k - 1, 0)), r_max)
    lo_r = jnp.maximum(0.0, mode_r - 10.0 * s)
    hi_r = jnp.minimum(r_max, mode_r + 10.0 * s)
    hi_r = jnp.maximum(hi_r, lo_r + 1e-30)
    r, _, _ = _grid_draw(k_r, log_h, lo_r, hi_r, Mgrid)
    r = jnp.clip(r, 0.0, r_max)

    z = jax.random.normal(k_z, (d,), f)
    z = z - jnp.dot(z, e) * e
    zn = jnp.sqrt(jnp.sum(z * z))
    # z ⊥ e with norm 0 happens with probability 0; guard anyway
    dirn = jnp.where(zn > 0, z / jnp.maximum(zn, 1e-30), jnp.zeros_like(z))
    x = u * e + r * dirn
    return Ball(R).project(x)    # round-off guard: never leave the ball


def sample_trunc_gauss_ball_rejection(key: jax.Array, m: jax.Array, s: Any, R: Any, max_tries: int = 256
                                      ) -> tuple[jax.Array, jax.Array]:
    """Exact draw of ``N(m, s² I)`` restricted to ``{||x|| <= R}`` by rejection (``max_tries`` proposals).

    Returns ``(x, ok)``: ``ok`` is False if all proposals were rejected (then
    ``x`` is the projection of the last one; callers in tests assert ``ok``).

    Args:
        key: JAX PRNG key.
        m: the mean, shape ``(d,)``.
        s: the standard deviation.
        R: the radius.
        max_tries: the number of proposals.

    Returns:
        ``(x, ok)``.
    """
    max_tries = check_positive_int("max_tries", max_tries)
    f = jnp.result_type(float)
    m = jnp.asarray(m, f)
    z = m + s * jax.random.normal(key, (max_tries,) + m.shape, f)
    inside = jnp.sum(z * z, axis=-1) <= R * R
    i = jnp.argmax(inside)
    return Ball(R).project(z[i]), jnp.any(inside)


class Grid(NamedTuple):
    """A fixed rectangular grid: cell centres ``points`` ``(n, d)`` and cell widths ``widths`` ``(d,)``.

    Attributes:
        points: cell centres, shape ``(n, d)``.
        widths: cell widths, shape ``(d,)``.
    """

    points: jax.Array
    widths: jax.Array


def make_grid(lo: Any, hi: Any, n: int) -> Grid:
    """Grid of ``n`` cells per axis over the box ``[lo, hi]`` (``lo``, ``hi`` of shape ``(d,)``; ``n^d`` cells).

    Args:
        lo, hi: the box's corners, shape ``(d,)``.
        n: cells per axis.

    Returns:
        The :class:`Grid`.
    """
    n = check_positive_int("n", n)
    lo = np.atleast_1d(np.asarray(lo, np.float64))
    hi = np.atleast_1d(np.asarray(hi, np.float64))
    if lo.shape != hi.shape or lo.ndim != 1:
        raise ValueError(f"lo and hi must be 1-D arrays of equal shape, got {lo.shape} and {hi.shape}")
    if np.any(hi <= lo):
        raise ValueError(f"make_grid needs lo < hi, got lo={lo}, hi={hi}")
    if n ** lo.shape[0] > 2**24:
        raise ValueError(f"grid too large: n^d = {n}^{lo.shape[0]} cells (max 2^24); use MALA in this dimension")
    w = (hi - lo) / n
    axes = [lo[i] + (np.arange(n) + 0.5) * w[i] for i in range(lo.shape[0])]
    pts = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, lo.shape[0])
    f = jnp.result_type(float)
    return Grid(jnp.asarray(pts, f), jnp.asarray(w, f))


def sample_grid(key: jax.Array, logdensity_fn: Callable, grid: Grid, domain: Any = None, *,
                jitter: bool = True) -> jax.Array:
    """Draw from ``π ∝ exp(logdensity_fn)`` discretized on ``grid`` (docs/algorithms/primitives.md#samplers).

    A cell is drawn with probability ``∝ π(centre)`` (cells whose centre is
    outside ``domain`` get probability 0), then the point is moved uniformly
    within the cell (``jitter``). A jittered point that falls outside the
    domain is replaced by the cell centre, so the result is always inside the
    domain. Exact for the discretized (piecewise-constant) density; the
    discretization error is ``O(cell width)`` and is part of the instance.

    Args:
        key: JAX PRNG key.
        logdensity_fn: the log-density of the target, ``x -> log π(x)`` (up to a constant).
        grid: the :class:`Grid`.
        domain: the domain (``None``: unconstrained; ``jaxdp.core.domains``).
        jitter: move the point uniformly within its cell.

    Returns:
        The drawn point.
    """
    if not isinstance(grid, Grid):
        raise TypeError(f"grid must be a jaxdp.samplers.Grid (make_grid), got {type(grid).__name__}")
    dom = check_domain(domain, unbounded=True)
    k_cell, k_jit = jax.random.split(key)
    pts = grid.points
    lp = jax.vmap(logdensity_fn)(pts)
    if domain is not None:
        inside = jax.vmap(lambda x: dom.chart_contains(dom.to_chart(x)))(pts)
        lp = jnp.where(inside, lp, -jnp.inf)
    lp = jnp.where(jnp.isnan(lp), -jnp.inf, lp)
    i = sample_categorical(k_cell, lp)
    c = pts[i]
    if not jitter:
        return c
    x = c + (jax.random.uniform(k_jit, c.shape, c.dtype) - 0.5) * grid.widths
    if domain is not None:
        x = jnp.where(dom.chart_contains(dom.to_chart(x)), x, c)
    return x
