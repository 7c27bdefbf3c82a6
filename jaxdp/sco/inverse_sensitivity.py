"""Inverse-sensitivity mechanisms on a grid (GROWTH §2–3, Theorem 1; docs/algorithms/growth.md#inverse-sensitivity) and the
growth reduction of GROWTH Proposition 3 (docs/algorithms/growth.md#growth-reduction).

**Inverse sensitivity** (RECONSTRUCTED, Asi–Duchi definition): for ``h(S) = argmin_X f_S``,
``len_h(S; x) = inf {d_Ham(S, S') : h(S') = x}`` and ``π(x) ∝ exp(-ε len_h(S; x)/2)``; ε-DP because
``len_h`` changes by at most 1 between neighbours. In ``d = 1``, when the sample space allows
subgradients ``±L`` at ``x``, ``len_h(S; x) = ceil(n dist(0, ∂f_S(x)) / (2L))`` (``inverse_sensitivity``).

**Gradient-based ρ-smooth version** (RECONSTRUCTED)::

    len^ρ_gr(S; x) = (n / 2L) inf_{y ∈ X, ||y - x|| <= ρ} ||∇f_S(y)||,     π(x) ∝ exp(-(ε/2) len^ρ_gr(S; x))

(one sample moves ``∇f_S`` by at most ``2L/n``, so ``len^ρ_gr`` has sensitivity <= 1 — an infimum
of sensitivity-1 functions — and the mechanism is ε-DP). Theorem 1: if ``f_S`` has κ-growth,
``κ >= κ_low > 1`` and ``x*`` is interior, w.p. ``1 - β``
``f_S(x̂) - f_S* <= Lρ + (κ/λ)^{1/(κ-1)} (4L (d log(D/ρ) + log(1/β)) / (nε))^{κ/(κ-1)}`` (RECONSTRUCTED).

**Implementation (PROPOSED; d ∈ {1, 2})**: a data-independent regular grid of ``M`` cells per axis
on ``[-R, R]^d`` (cells whose centre lies outside ``X`` are masked), ``g_m = dist(0, ∂f_S(x_m))``
(1-D: the infimum over the cell, exact from one-sided derivatives at the cell edges, so kinks inside
a cell are found; 2-D: norm of the averaged minimum-norm subgradients at the centre), ``G_m`` = minimum of ``g`` over the cells within ``w = floor(ρ/h)`` cells (sliding
window in 1-D, disk of offsets in 2-D), logits ``-ε n G_m/(4L)``, one categorical draw (inverse CDF,
one uniform) and a uniform jitter inside the cell. Restricting the density to a fixed grid keeps
ε-DP exactly. Any ``d`` (approximate sampling, not certified): :func:`jaxdp.sco.grad_inverse_sensitivity_mala`.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core.random import sample_categorical
from ..core.validation import check_epsilon, check_positive, check_positive_int
from .instances import SCOInstance, _pow_norm_grad
from .localization import check_sco_data

__all__ = ["GridInfo", "grad_inverse_sensitivity", "inverse_sensitivity", "grid_points", "growth_reduction_erm",
           "subgrad_dist"]


class GridInfo(NamedTuple):
    """Diagnostics of a grid inverse-sensitivity draw (``sampler = "grid"``: an exact sample of the grid density).

    Attributes:
        logits: the ``(M,)`` or ``(M*M,)`` unnormalized log-density over the cells (``-inf`` outside ``X``).
        cell: the int32 index of the drawn cell.
        centers: the ``(cells, d)`` cell centres.
    """
    logits: jax.Array   # (M,) or (M*M,) unnormalized log-density over the cells (-inf outside X)
    cell: jax.Array     # int32 index of the drawn cell
    centers: jax.Array  # (cells, d) cell centres

    sampler = "grid"  # type: ignore[misc]  # class constant (exact sampling of the grid density); the MALA version records "mala"


def grid_points(d: int, M: int, lo, hi):
    """Cell centres of the regular ``M^d`` grid on ``[lo, hi]^d`` (row-major) and the cell width.

    Args:
        d: the dimension.
        M: the cells per axis.
        lo, hi: the bounds of the grid.

    Returns:
        ``(centres, width)``: the ``(M^d, d)`` cell centres and the cell width.
    """
    h = (hi - lo) / M
    c = lo + (jnp.arange(M) + 0.5) * h
    if d == 1:
        return c[:, None], h
    X, Y = jnp.meshgrid(c, c, indexing="ij")
    return jnp.stack([X.ravel(), Y.ravel()], axis=1), h


def subgrad_dist(inst: SCOInstance, data, xs, reg_grad=None, half_width=None):
    """``dist(0, ∂f_S(x))`` at each row of ``xs``.

    1-D with ``half_width = h/2``: the infimum over the cell ``[x - h/2, x + h/2]``, exact because the
    derivative of a convex function is monotone: ``max(0, f'_-(x - h/2), -f'_+(x + h/2))`` (so a kink
    inside a cell is found). ``d >= 2``: the norm of the averaged minimum-norm subgradients at ``x``.
    ``reg_grad(x) -> (d,)``: optional gradient of a smooth term added to ``f_S``.

    Args:
        inst: the instance (:class:`SCOInstance`).
        data: the ``(n, m)`` dataset (one sample per row).
        xs: the ``(N, d)`` points.
        reg_grad: the gradient of a smooth term added to ``f_S`` (``None``: none).
        half_width: ``h/2`` of the cells (1-D; ``None``: at the points).

    Returns:
        The ``(N,)`` distances.
    """
    if inst.d == 1 and inst.grad_lr is not None:
        hw = 0.0 if half_width is None else half_width

        def derivs(x):
            gl, gr = jax.vmap(lambda s: inst.grad_lr(x, s))(data)
            gl, gr = jnp.mean(gl[:, 0]), jnp.mean(gr[:, 0])
            if reg_grad is not None:
                r = reg_grad(x)[0]
                gl, gr = gl + r, gr + r
            return gl, gr

        def one(x):
            gl_lo, _ = derivs(x - hw)      # ∂f at the left edge is [f'_-, f'_+]; the closed cell includes it
            _, gr_hi = derivs(x + hw)
            return jnp.maximum(jnp.maximum(gl_lo, -gr_hi), 0.0)
    else:
        def one(x):
            g = jnp.mean(jax.vmap(lambda s: inst.grad(x, s))(data), axis=0)
            if reg_grad is not None:
                g = g + reg_grad(x)
            return jnp.sqrt(jnp.sum(g * g))
    return jax.lax.map(one, xs, batch_size=64)


def _disk_offsets(w: int) -> np.ndarray:
    r = np.arange(-w, w + 1)
    X, Y = np.meshgrid(r, r, indexing="ij")
    keep = X ** 2 + Y ** 2 <= w * w
    return np.stack([X[keep], Y[keep]], axis=1).astype(np.int32)


def _smooth_min(g, d: int, M: int, w: int):
    """Minimum of ``g`` over the cells within ``w`` cells (inf outside the grid)."""
    if w <= 0:
        return g
    if d == 1:
        return jax.lax.reduce_window(g, jnp.inf, jax.lax.min, (2 * w + 1,), (1,), [(w, w)])
    G = jnp.pad(g.reshape(M, M), w, constant_values=jnp.inf)
    offs = jnp.asarray(_disk_offsets(w))

    def body(acc, o):
        sl = jax.lax.dynamic_slice(G, (w + o[0], w + o[1]), (M, M))
        return jnp.minimum(acc, sl), None

    out, _ = jax.lax.scan(body, jnp.full((M, M), jnp.inf, g.dtype), offs)
    return out.ravel()


def _grid_sample(key, inst, data, eps, M, w, lo, hi, dom_c, dom_r, L_eff, reg_grad=None, exact_len=False):
    d = inst.d
    xs, h = grid_points(d, M, lo, hi)
    inside = jnp.all(jnp.sum((xs[:, None, :] - dom_c[None]) ** 2, axis=-1) <= dom_r[None] ** 2 * (1 + 1e-12), axis=1)
    g = subgrad_dist(inst, data, xs, reg_grad, half_width=h / 2)
    g = jnp.where(inside, g, jnp.inf)
    n = data.shape[0]
    if exact_len:
        length = jnp.ceil(n * g / (2.0 * L_eff) - 1e-9)       # inverse sensitivity (a Hamming distance)
        logits = -eps * length / 2.0
    else:
        length = n * _smooth_min(g, d, M, w) / (2.0 * L_eff)  # len^ρ_gr
        logits = -eps * length / 2.0
    length = jnp.where(inside, length, jnp.inf)
    # ε = inf (non-private limit): uniform over the cells of minimal length (where the logits would be 0·inf)
    logits = jnp.where(jnp.isfinite(eps), jnp.where(inside, logits, -jnp.inf),
                       jnp.where(length <= jnp.min(length), 0.0, -jnp.inf))
    kc, ku = jax.random.split(key)
    cell = sample_categorical(kc, logits)
    u = jax.random.uniform(ku, (d,), dtype=xs.dtype)
    x = xs[cell] + (u - 0.5) * h
    return x, GridInfo(logits=logits, cell=cell, centers=xs)


def _check_grid(inst, M, eps):
    if inst.d not in (1, 2):
        raise ValueError(f"grid inverse-sensitivity supports d in (1, 2), got d={inst.d} (higher d needs MALA)")
    check_positive_int("M", M, minimum=2)
    check_epsilon(eps)


def grad_inverse_sensitivity(key: jax.Array, inst: SCOInstance, data, eps, *, rho: float, M: int = 1024):
    """ρ-smooth gradient inverse-sensitivity mechanism (GROWTH Theorem 1), grid version (module doc).

    ``rho`` (host float >= 0) sets the smoothing window ``w = floor(ρ/h)`` cells (``h = 2R/M``);
    ``eps`` may be traced (``inf``: the non-private limit, uniform over the cells of minimal length).
    Returns ``(x̂, GridInfo)``.

    Args:
        key: a typed PRNG key.
        inst: the instance (:class:`SCOInstance`).
        data: the ``(n, m)`` dataset (one sample per row).
        eps: ε (may be traced; ``inf``: non-private).
        rho: the smoothing radius ρ >= 0 (host float).
        M: the grid cells per axis.

    Returns:
        ``(x̂, GridInfo)``.

    Raises:
        ValueError: ``d`` not 1 or 2, or an invalid ``rho``.
    """
    _check_grid(inst, M, eps)
    check_sco_data(inst, data, jnp.zeros(inst.d))
    if not (isinstance(rho, (int, float)) and rho >= 0 and math.isfinite(rho)):
        raise ValueError(f"rho must be a finite number >= 0, got {rho!r}")
    h = 2.0 * inst.R / M
    w = int(math.floor(rho / h + 1e-9))
    dt = jnp.result_type(float)
    dom_c, dom_r = jnp.zeros((1, inst.d), dt), jnp.full((1,), inst.R, dt)
    return _grid_sample(key, inst, jnp.asarray(data, dt), jnp.asarray(eps, dt), M, w, -inst.R, inst.R,
                        dom_c, dom_r, inst.L)


def inverse_sensitivity(key: jax.Array, inst: SCOInstance, data, eps, *, M: int = 1024):
    """Exact inverse-sensitivity mechanism in ``d = 1``: length ``ceil(n dist(0, ∂f_S(x))/(2L))``.

    Valid when the sample space allows subgradients ``±L`` at every ``x`` (e.g. ``inst_kappa_1d_twopoint``).

    Args:
        key: a typed PRNG key.
        inst: the instance (:class:`SCOInstance`).
        data: the ``(n, m)`` dataset (one sample per row).
        eps: ε (may be traced).
        M: the grid cells per axis.

    Returns:
        ``(x̂, GridInfo)``.

    Raises:
        ValueError: ``d != 1``.
    """
    _check_grid(inst, M, eps)
    if inst.d != 1:
        raise ValueError(f"inverse_sensitivity (exact length) is implemented for d = 1, got d={inst.d}")
    check_sco_data(inst, data, jnp.zeros(1))
    dt = jnp.result_type(float)
    dom_c, dom_r = jnp.zeros((1, 1), dt), jnp.full((1,), inst.R, dt)
    return _grid_sample(key, inst, jnp.asarray(data, dt), jnp.asarray(eps, dt), M, 0, -inst.R, inst.R,
                        dom_c, dom_r, inst.L, exact_len=True)


def growth_reduction_erm(key: jax.Array, inst: SCOInstance, data, eps, *, kappa: float, lam0: float, k: int,
                         M: int = 256, w: int = 1):
    """GROWTH Proposition 3 construction (docs/algorithms/growth.md#growth-reduction; RECONSTRUCTED — outputs are marked so).

    Solves convex ERM by ``k`` private ERMs with growing ``‖·‖^κ`` regularization towards the previous
    iterate: ``λ_j = 2^j λ_0``, ``G_j(x; s) = F(x; s) + (λ_j/κ)||x - x_{j-1}||^κ`` on
    ``V_j = X ∩ B(x_{j-1}, (L/λ_j)^{1/(κ-1)})`` (``G_j`` is 2L-Lipschitz there and has
    ``(λ_j 2^{2-κ}, κ)``-growth), ``x_j = A(G_j, S; ε/k)`` with ``A`` = the grid gradient
    inverse-sensitivity mechanism (ε/k each; basic composition ⇒ ε-DP). ``x_0 = 0``. Returns
    ``(x_k, xs)`` with all iterates ``(k, d)``.

    Args:
        key: a typed PRNG key.
        inst: the instance (:class:`SCOInstance`).
        data: the ``(n, m)`` dataset (one sample per row).
        eps: the total ε (ε/k per round).
        kappa: the regularization exponent κ >= 2.
        lam0: the first regularization λ_0.
        k: the number of rounds.
        M: the grid cells per axis.
        w: the smoothing window in cells.

    Returns:
        ``(x_k, xs)``: the last iterate and the ``(k, d)`` iterates.

    Raises:
        ValueError: invalid ``kappa`` or ``w``.
    """
    _check_grid(inst, M, eps)
    k = check_positive_int("k", k)
    check_positive("lam0", lam0)
    if not (isinstance(kappa, (int, float)) and math.isfinite(kappa) and kappa >= 2):
        raise ValueError(f"kappa must be a finite number >= 2 for Proposition 3, got {kappa!r}")
    if not (isinstance(w, int) and not isinstance(w, bool) and w >= 0):
        raise ValueError(f"w (smoothing window in cells) must be an int >= 0, got {w!r}")
    check_sco_data(inst, data, jnp.zeros(inst.d))
    dt = jnp.result_type(float)
    data = jnp.asarray(data, dt)
    eps_j = jnp.asarray(eps, dt) / k
    keys = jax.random.key_data(jax.random.split(key, k))
    L = inst.L

    def round_(x_prev, inp):
        j, kj = inp
        kj = jax.random.wrap_key_data(kj, impl=jax.random.key_impl(key))
        lam_j = lam0 * 2.0 ** (j + 1)
        r_j = jnp.minimum((L / lam_j) ** (1.0 / (kappa - 1.0)), 2 * inst.R)
        dom_c = jnp.stack([jnp.zeros((inst.d,), dt), x_prev])
        dom_r = jnp.stack([jnp.asarray(inst.R, dt), r_j])
        reg = lambda x: lam_j * _pow_norm_grad(x - x_prev, kappa)
        x, _ = _grid_sample_box(kj, inst, data, eps_j, M, w, x_prev, r_j, dom_c, dom_r, 2.0 * L, reg)
        return x, x

    x, xs = jax.lax.scan(round_, jnp.zeros((inst.d,), dt), (jnp.arange(k, dtype=dt), keys))
    return x, xs


def _grid_sample_box(key, inst, data, eps, M, w, center, half, dom_c, dom_r, L_eff, reg_grad):
    """Grid mechanism on the box ``center ± half`` (the grid depends only on the previous private output)."""
    d = inst.d
    unit, h = grid_points(d, M, -1.0, 1.0)
    xs = center[None, :] + half * unit
    hh = half * h
    inside = jnp.all(jnp.sum((xs[:, None, :] - dom_c[None]) ** 2, axis=-1) <= dom_r[None] ** 2 * (1 + 1e-12), axis=1)
    g = jnp.where(inside, subgrad_dist(inst, data, xs, reg_grad, half_width=hh / 2), jnp.inf)
    G = _smooth_min(g, d, M, w)
    n = data.shape[0]
    logits = jnp.where(inside, -eps * n * G / (4.0 * L_eff), -jnp.inf)
    logits = jnp.where(jnp.isfinite(eps), logits, jnp.where(inside & (G <= jnp.min(G)), 0.0, -jnp.inf))
    kc, ku = jax.random.split(key)
    cell = sample_categorical(kc, logits)
    u = jax.random.uniform(ku, (d,), dtype=xs.dtype)
    return xs[cell] + (u - 0.5) * hh, cell
