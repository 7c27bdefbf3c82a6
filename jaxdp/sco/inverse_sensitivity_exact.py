"""Exact 1-D sampling of the ρ-smooth gradient inverse-sensitivity mechanism, continuous or on a grid.

GROWTH (Asi, Levy, Duchi, *Adapting to function difficulty and growth conditions in private
optimization*, NeurIPS 2021), §3 and Theorem 1; docs/algorithms/growth.md#inverse-sensitivity. The
mechanism releases ``x ∈ X = [-R, R]`` with density

    π(x) ∝ exp(-(ε/2) len^ρ_gr(S; x)),   len^ρ_gr(S; x) = (n/2L) G(x),   G(x) = inf_{y ∈ X, |y - x| <= ρ} g(y),

``g(y) = dist(0, ∂f_S(y))``. :func:`jaxdp.sco.grad_inverse_sensitivity` samples a *grid* version of it
(``M`` cells, each with the infimum of ``g`` over the cell and its ``w = ⌊ρ/h⌋`` neighbours), at the cost
of ``O(M n)`` per draw, and its output can be no closer to the minimizer than the cell resolution: with
``h = 2R/M`` and ``x*`` on a cell edge the ERM excess of the 1-D ``κ = 2`` regression
(``f_S(x) - f_S* = |x - x*|²``) cannot fall below ``h²/3``. This module samples either density **exactly** with ``O(n log(1/resolution))`` work.

**Why it is exact.** In 1-D ``f_S`` is convex, so its one-sided derivatives ``f'_-, f'_+`` are
nondecreasing and, for any interval ``[a, b]``,

    inf_{y ∈ [a, b]} g(y) = max(0, f'_-(a), -f'_+(b))                                    (1)

(if ``f'_-(a) > 0`` every subgradient on ``[a, b]`` is ``>= f'_-(a)``, symmetrically for ``f'_+(b) < 0``,
and otherwise ``0 ∈ ∂f_S(y)`` for some ``y ∈ [a, b]``). Hence ``G(x)`` is (1) on ``[x - ρ, x + ρ] ∩ X``
(two data passes), and ``inf_{x ∈ [a, b]} G(x)`` is (1) on ``[a - ρ, b + ρ] ∩ X``. For any partition of
``X`` into segments ``[a_j, b_j]`` the step function ``exp(-c ℓ_j)``, ``c = εn/(4L)``,
``ℓ_j = inf_{[a_j, b_j]} G``, is therefore a majorant of the unnormalized density. Sampling a segment
with probability ``∝ (b_j - a_j) exp(-c ℓ_j)``, a point ``x`` uniformly inside it, and accepting with
probability ``exp(-c (G(x) - ℓ_j))`` is rejection sampling from that majorant: the accepted ``x`` has
density exactly ``π`` (the partition may depend on the data; it does not depend on the proposals).
The grid version is the same with segments made of whole cells and a cell's level
``ℓ_i = inf`` of ``g`` over ``[e_i - w h, e_{i+1} + w h] ∩ X`` (the grid mechanism's smoothed length,
``_smooth_min`` of the cell infima): a cell is proposed uniformly among the segment's cells, accepted
with probability ``exp(-c (ℓ_i - ℓ_j))``, and the output is uniform in the accepted cell — exactly the
distribution of :func:`jaxdp.sco.grad_inverse_sensitivity` with the same ``M`` and ``ρ``.

**The partition (efficiency only).** ``g`` is quasi-convex, so ``G`` is nonincreasing left of any
minimizer ``m`` of ``f_S`` on ``X`` and nondecreasing right of it. ``m`` is found by bisection on the
sign of ``f'_+`` (52 passes) unless the caller passes one (``center``; the estimator passes the
instance's closed-form ERM minimizer). ``G`` equals ``G(m)`` on the window ``[m - ρ, m + ρ]`` when ``m``
is the unique minimizer; from each end ``a`` of that window the partition points are
``a ± (distance to the domain end)·4^{-j}``, ``j = 1, 2, …``, until ``c·(G(point) - G(m)) <= 10⁻³`` (the
density is flat to 0.1% inside), the point is within 5% of the window's width of ``a``, or the points
reach the float (or cell) resolution. With geometric points every segment's
majorant mass is at most a constant times the true mass next to it, so the acceptance probability is
about ``3/(4 ln 4) ≈ 0.5`` or better; the loop runs until every seed of a batch has accepted (at most
``max_rounds``, default 512, after which the draw is NaN and ``info["accepted"]`` is False: with an
acceptance probability of 0.3 that has probability ``0.7^512 < 10^-79``).

Privacy is the mechanism's (ε-DP: ``len^ρ_gr`` has sensitivity 1, the grid version is restricted to a
data-independent grid); the sampler adds no approximation. Cost per draw: ``52 + 4·J + 2·rounds`` passes
over the data (``J`` ≈ 5-25 partition levels), against ``2M`` for the grid sampler.
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp

from ..core.validation import check_epsilon, check_positive_int
from .instances import SCOInstance, empirical_value
from .localization import check_sco_data

__all__ = ["ExactISInfo", "grad_inverse_sensitivity_exact", "window_inf", "exact_grad_inv_estimator"]

_BISECT = 52          # halvings of [-R, R] in the search for a minimizer (float64 resolution)
_Q = 4.0              # geometric ratio of the partition points
_FLAT = 1e-3          # stop refining a side once c·(G(point) - G(m)) <= _FLAT
_NEAR = 0.05          # ... or once the point is within 5% of the flat window's width of the window
_LEVELS = 30          # at most this many partition points per side (4^-30 < 2^-52 · 2^-8)


class ExactISInfo(NamedTuple):
    """Diagnostics of one exact draw of :func:`grad_inverse_sensitivity_exact`.

    Attributes:
        accepted: bool, whether a proposal was accepted within ``max_rounds`` (else the draw is NaN).
        rounds: ``int32``, the number of proposals used.
        levels: ``int32`` of shape ``(2,)``, the partition points used left and right of the minimizer.
        m: the minimizer of ``f_S`` the partition is refined towards (found by bisection, or ``center`` clipped
            to ``X``).
    """
    accepted: jax.Array      # bool: the draw was accepted within max_rounds (else x is NaN)
    rounds: jax.Array        # int32: proposals used
    levels: jax.Array        # int32 (2,): partition points used on the left / right of the minimizer
    m: jax.Array             # the minimizer of f_S found by bisection


def _derivs(inst: SCOInstance, data, x):
    """``(f'_-(x), f'_+(x))`` of ``f_S`` at the scalar ``x`` (one pass over the data)."""
    gl, gr = jax.vmap(lambda s: inst.grad_lr(  # type: ignore[misc]  # instances with one-sided derivatives only
        jnp.reshape(x, (1,)), s))(data)
    return jnp.mean(gl[:, 0]), jnp.mean(gr[:, 0])


def window_inf(inst: SCOInstance, data, a, b):
    """``inf_{y ∈ [a, b] ∩ X} dist(0, ∂f_S(y))`` by (1) of the module docstring (two passes; ``a <= b``).

    Args:
        inst: a 1-D SCO instance with one-sided derivatives (``inst.grad_lr``).
        data: the ``n`` samples defining ``f_S``.
        a, b: the ends of the interval, ``a <= b`` (clipped to ``X = [-R, R]``).

    Returns:
        ``max(0, f'_-(a), -f'_+(b))``, a scalar.
    """
    R = inst.R
    a = jnp.clip(a, -R, R)
    b = jnp.clip(b, -R, R)
    gl_a, _ = _derivs(inst, data, a)
    _, gr_b = _derivs(inst, data, b)
    return jnp.maximum(jnp.maximum(gl_a, -gr_b), 0.0)


def _sample(key, inst: SCOInstance, data, eps, r_win: float, M: int, max_rounds: int, center=None):
    """One exact draw; ``M = 0``: continuous (window ``r_win = ρ``); ``M >= 2``: grid (``r_win = w h``).

    A *point* ``p`` is a coordinate (continuous) or a cell-edge index (grid, at ``X(p) = -R + p h``); it
    carries ``dl(p) = f'_-(X(p) - r_win)`` and ``dr(p) = f'_+(X(p) + r_win)`` (clipped to ``X``). The level
    of the segment between points ``a <= b`` is ``max(0, dl(a), -dr(b))``: by (1), the infimum of ``G`` over
    it (continuous) or of the cells' smoothed lengths (grid, a cell being the segment ``[i, i + 1]``).
    """
    dt = data.dtype
    R = float(inst.R)
    n = data.shape[0]
    c = eps * n / (4.0 * inst.L)                  # π ∝ exp(-c G)
    grid = M > 0
    h = 2.0 * R / M if grid else 1.0
    k_u, k_j = jax.random.split(key)

    def X(p):
        return -R + p.astype(dt) * h if grid else p

    def dlr(p):
        x = X(p)
        dl, _ = _derivs(inst, data, jnp.clip(x - r_win, -R, R))
        _, dr = _derivs(inst, data, jnp.clip(x + r_win, -R, R))
        return dl, dr

    def seg_level(dl_a, dr_b):
        return jnp.maximum(jnp.maximum(dl_a, -dr_b), 0.0)

    # 1. a minimizer m of f_S on X (bisection on the sign of the right derivative)
    def bis(_, lh):
        lo, hi = lh
        mid = 0.5 * (lo + hi)
        _, gr = _derivs(inst, data, mid)
        right = gr < 0                              # the minimizer lies right of mid
        return jnp.where(right, mid, lo), jnp.where(right, hi, mid)

    if center is None:
        _, m = jax.lax.fori_loop(0, _BISECT, bis, (jnp.asarray(-R, dt), jnp.asarray(R, dt)))
    else:                                           # any anchor is exact; a minimizer makes it efficient
        m = jnp.clip(jnp.reshape(jnp.asarray(center, dt), ()), -R, R)
    # anchors: the ends of the window around m, where G is flat (= G(m)) when m is the unique minimizer
    if grid:
        lim = (jnp.clip(jnp.floor((m - r_win + R) / h), 0, M - 1).astype(jnp.int32),
               jnp.clip(jnp.floor((m + r_win + R) / h) + 1, 1, M).astype(jnp.int32))
        end = (jnp.zeros((), jnp.int32), jnp.asarray(M, jnp.int32))
        mc = jnp.clip(jnp.floor((m + R) / h), 0, M - 1).astype(jnp.int32)   # the cell holding m
        dl_m, _ = dlr(mc)
        _, dr_m = dlr(mc + 1)
    else:
        lim = (jnp.maximum(m - r_win, -R), jnp.minimum(m + r_win, R))
        end = (jnp.asarray(-R, dt), jnp.asarray(R, dt))
        dl_m, dr_m = dlr(m)
    g_m = seg_level(dl_m, dr_m)                       # the peak level (normalization and stopping only)

    # 2. geometric partition points on each side, from the domain end towards m
    ptype = jnp.int32 if grid else dt
    pts = jnp.zeros((2, _LEVELS + 1), ptype).at[0, 0].set(end[0]).at[1, 0].set(end[1])
    dls = jnp.zeros((2, _LEVELS + 1), dt)
    drs = jnp.zeros((2, _LEVELS + 1), dt)
    for s in range(2):
        dl_e, dr_e = dlr(end[s])
        dls, drs = dls.at[s, 0].set(dl_e), drs.at[s, 0].set(dr_e)

    def point(s, j):
        q = _Q ** (-j.astype(dt))
        if grid:
            span = (M - lim[1]) if s == 1 else lim[0]                # cells between the end and m's cell
            k = jnp.floor(span.astype(dt) * q).astype(jnp.int32)
            return lim[1] + k if s == 1 else lim[0] - k
        return lim[1] + (R - lim[1]) * q if s == 1 else lim[0] - (lim[0] + R) * q

    def cont(st):
        j, _, _, _, done = st
        return ~jnp.all(done)

    def refine(st):
        j, pts, dls, drs, done = st
        for s in range(2):
            js = j[s]
            p = point(s, js)
            prev = pts[s, js - 1]
            new = (p != prev) if grid else (jnp.abs(p - prev) > 4 * jnp.finfo(dt).eps * (1.0 + jnp.abs(lim[s])))
            dl_p, dr_p = dlr(p)
            flat = c * (seg_level(dl_p, dr_p) - g_m) <= _FLAT
            rec = ~done[s] & new
            pts = jnp.where(rec, pts.at[s, js].set(p), pts)
            dls = jnp.where(rec, dls.at[s, js].set(dl_p), dls)
            drs = jnp.where(rec, drs.at[s, js].set(dr_p), drs)
            # close to the anchor relative to the flat window: the inner segment absorbs the rest cheaply
            near = jnp.abs(X(p) - X(lim[s])) <= _NEAR * (X(lim[1]) - X(lim[0]))
            stop = ~new | flat | near | (p == lim[s]) | (js + 1 > _LEVELS)
            j = j.at[s].set(jnp.where(rec, js + 1, js))
            done = done.at[s].set(done[s] | stop)
        return j, pts, dls, drs, done

    j, pts, dls, drs, _ = jax.lax.while_loop(
        cont, refine, (jnp.ones((2,), jnp.int32), pts, dls, drs, jnp.zeros((2,), bool)))

    # segments: left i in [1, j0): [pts0[i-1], pts0[i]]; right i in [1, j1): [pts1[i], pts1[i-1]];
    # inner: [pts0[j0-1], pts1[j1-1]] (contains m)
    idx = jnp.arange(1, _LEVELS + 1)
    A = jnp.concatenate([pts[0, :-1], pts[1, 1:], pts[0, j[0] - 1][None]])
    B = jnp.concatenate([pts[0, 1:], pts[1, :-1], pts[1, j[1] - 1][None]])
    LV = jnp.concatenate([seg_level(dls[0, :-1], drs[0, 1:]), seg_level(dls[1, 1:], drs[1, :-1]),
                          seg_level(dls[0, j[0] - 1], drs[1, j[1] - 1])[None]])
    ok = jnp.concatenate([idx < j[0], idx < j[1], jnp.ones((1,), bool)])
    W = (B - A).astype(dt) * (h if grid else 1.0)
    ok = ok & (W > 0)
    logmass = jnp.where(ok, jnp.log(jnp.where(ok, W, 1.0)) - c * (LV - g_m), -jnp.inf)

    # 3. rejection from the step majorant exp(-c LV) (one segment by mass, uniform inside, accept)
    u = jax.random.uniform(k_u, (max_rounds, 3), dtype=dt)

    def rbody(st):
        r, _, _ = st
        seg = _inv_cdf(u[r, 0], logmass)
        a, b = A[seg], B[seg]
        if grid:
            ncell = b - a
            x = a + jnp.minimum(jnp.floor(u[r, 1] * ncell.astype(dt)).astype(jnp.int32), ncell - 1)  # a cell
            dl_x, _ = dlr(x)
            _, dr_x = dlr(x + 1)
        else:
            x = a + u[r, 1] * (b - a)
            dl_x, dr_x = dlr(x)
        acc = jnp.log(u[r, 2]) <= -c * (seg_level(dl_x, dr_x) - LV[seg])
        return r + 1, x, acc

    r, x, acc = jax.lax.while_loop(lambda st: (~st[2]) & (st[0] < max_rounds), rbody,
                                   (jnp.zeros((), jnp.int32), jnp.zeros((), ptype), jnp.zeros((), bool)))
    if grid:
        x = X(x) + jax.random.uniform(k_j, (), dtype=dt) * h      # uniform inside the accepted cell
    x = jnp.where(acc, x, jnp.nan)
    return x, ExactISInfo(accepted=acc, rounds=r, levels=j - 1, m=m)


def _inv_cdf(u, logmass):
    """Index ``i`` with probability ``∝ exp(logmass_i)`` from one uniform ``u`` (inverse CDF)."""
    w = jnp.exp(logmass - jnp.max(logmass))
    cs = jnp.cumsum(w)
    i = jnp.sum(cs <= u * cs[-1])
    return jnp.minimum(i, logmass.shape[0] - 1)


def grad_inverse_sensitivity_exact(key: jax.Array, inst: SCOInstance, data, eps, *, rho: float,
                                   M: Optional[int] = None, max_rounds: int = 512, center=None):
    """Exact draw from the ρ-smooth gradient inverse-sensitivity mechanism in ``d = 1`` (module docstring).

    ``M = None``: the continuous density on ``X = [-R, R]`` (GROWTH Theorem 1's mechanism);
    ``M = int``: the distribution of :func:`jaxdp.sco.grad_inverse_sensitivity` with ``M`` cells and the
    window ``w = ⌊ρ/h⌋`` cells (same law, different draws). ``eps`` finite (may be traced). ``center``
    (optional, may be traced): the point the partition is refined towards, e.g. a closed-form minimizer of
    ``f_S``; the law is exact for any ``center`` (it only sets the acceptance rate), and without it a
    minimizer is found by bisection (52 passes over the data). Returns
    ``(x̂ (1,), ExactISInfo)``; ``x̂`` is NaN only if no proposal was accepted in ``max_rounds``.

    Args:
        key: JAX PRNG key.
        inst: a 1-D SCO instance with one-sided derivatives (``inst.d == 1``, ``inst.grad_lr``).
        data: the ``n`` samples (the private data set ``S``).
        eps: the privacy parameter ε (finite; may be traced).
        rho: the smoothing radius ρ (finite, ``>= 0``).
        M: ``None`` for the continuous mechanism, or the number of grid cells (``>= 2``).
        max_rounds: the most proposals before giving up (the draw is then NaN).
        center: the point the partition is refined towards, or ``None`` (bisection).

    Returns:
        ``(x̂, info)``: the draw of shape ``(1,)`` and its :class:`ExactISInfo`.

    Raises:
        ValueError: the instance is not 1-D or lacks one-sided derivatives, or invalid ``eps``, ``rho``, ``M``,
            ``max_rounds`` or data.
    """
    if inst.d != 1 or inst.grad_lr is None:
        raise ValueError(f"the exact sampler is 1-D (needs inst.d == 1 and one-sided derivatives), got d={inst.d}")
    if not isinstance(eps, jax.core.Tracer):
        check_epsilon(eps, allow_inf=False)
    check_sco_data(inst, data, jnp.zeros(1))
    if not (isinstance(rho, (int, float)) and rho >= 0 and math.isfinite(rho)):
        raise ValueError(f"rho must be a finite number >= 0, got {rho!r}")
    max_rounds = check_positive_int("max_rounds", max_rounds)
    dt = jnp.result_type(float)
    if M is None:
        r_win, Mi = float(rho), 0
    else:
        Mi = check_positive_int("M", M, minimum=2)
        h = 2.0 * inst.R / Mi
        r_win = math.floor(rho / h + 1e-9) * h
    x, info = _sample(key, inst, jnp.asarray(data, dt), jnp.asarray(eps, dt), r_win, Mi, max_rounds, center)
    return jnp.reshape(x, (1,)), info


@functools.lru_cache(maxsize=None)
def exact_grad_inv_estimator(inst: SCOInstance, n: int, rho: float, M: int = 0):
    """``fn(key, eps) -> {excess, erm_excess, accepted, rounds}``: GROWTH Theorem 1's mechanism sampled exactly
    (``M = 0``: continuous; ``M >= 2``: the ``M``-cell grid law) on ``n`` fresh samples; for
    :func:`jaxdp.sco.run_sco`. ``erm_excess = f_S(x̂) - f_S(x̂_S)`` with the closed-form ERM minimizer."""
    if inst.empirical_minimizer is None:
        raise ValueError(f"{inst.name} has no closed-form empirical minimizer; use another instance for ERM excess")

    def fn(key, eps):
        kd, ka = jax.random.split(key)
        data = inst.sample(kd, n)
        xs = inst.empirical_minimizer(data)
        x, info = grad_inverse_sensitivity_exact(ka, inst, data, eps, rho=rho, M=M or None, center=xs[0])
        erm = empirical_value(inst, x, data) - empirical_value(inst, xs, data)
        return dict(excess=inst.excess(x), erm_excess=jnp.maximum(erm, 0.0), accepted=info.accepted,
                    rounds=info.rounds)

    return fn
