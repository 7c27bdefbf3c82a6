"""The ρ-smooth gradient inverse-sensitivity mechanism of GROWTH Theorem 1 and the growth reduction of
GROWTH Proposition 3 (Asi, Levy, Duchi, *Adapting to function difficulty and growth conditions in private
optimization*, NeurIPS 2021, §2–3; docs/algorithms/growth.md#inverse-sensitivity, #growth-reduction).

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

One entry point, :func:`grad_inverse_sensitivity`, with ``sampler`` one of:

**"grid"** (default; PROPOSED, ``d ∈ {1, 2}``): a data-independent regular grid of ``M`` cells per axis
on ``[-R, R]^d`` (cells whose centre lies outside ``X`` are masked), ``g_m = dist(0, ∂f_S(x_m))``
(1-D: the infimum over the cell, exact from one-sided derivatives at the cell edges, so kinks inside
a cell are found; 2-D: norm of the averaged minimum-norm subgradients at the centre), ``G_m`` = minimum
of ``g`` over the cells within ``w = floor(ρ/h)`` cells (sliding window in 1-D, disk of offsets in 2-D),
logits ``-ε n G_m/(4L)``, one categorical draw and a uniform jitter inside the cell. Restricting the
density to a fixed grid keeps ε-DP exactly; its output is no closer to the minimizer than the cell
resolution (ERM excess ``>= h²/3`` for the 1-D ``κ = 2`` regression with ``x*`` on a cell edge).

**"exact"** (``d = 1``): an exact draw of the continuous density (or of the grid's, same law) with
``O(n log(1/resolution))`` work. ``f_S`` is convex, so ``f'_-, f'_+`` are nondecreasing and, for any
``[a, b]``,

    inf_{y ∈ [a, b]} g(y) = max(0, f'_-(a), -f'_+(b))                                    (1)

(:func:`window_inf`). Hence ``G(x) = inf_{|y - x| <= ρ} g(y)`` is (1) on ``[x - ρ, x + ρ] ∩ X`` and
``inf_{[a, b]} G`` is (1) on ``[a - ρ, b + ρ] ∩ X``: for any partition of ``X`` into segments the step
function ``exp(-c ℓ_j)``, ``c = εn/(4L)``, ``ℓ_j = inf_{[a_j, b_j]} G``, majorizes the unnormalized
density. Drawing a segment with probability ``∝ (b_j - a_j) exp(-c ℓ_j)``, a point uniformly inside
it, and accepting with probability ``exp(-c (G(x) - ℓ_j))`` is rejection sampling: the accepted ``x``
has density exactly ``π``. The grid law is the same with segments of whole cells. The partition
(efficiency only): ``G`` is quasi-convex around a minimizer ``m`` of ``f_S`` (bisection on the sign of
``f'_+``, 52 passes, unless ``center`` is given); from each end ``a`` of the flat window
``[m - ρ, m + ρ]`` the points are ``a ± (distance to the domain end)·4^{-j}`` until the density is
flat to 0.1%, the point is within 5% of the window's width of ``a``, or the float (cell) resolution is
reached. The acceptance probability is about ``3/(4 ln 4) ≈ 0.5``; after ``max_rounds`` (default 512)
the draw is NaN and ``info["accepted"]`` is False (probability ``< 0.7^512 < 10^-79``). Privacy is the
mechanism's; the sampler adds no approximation. Cost: ``52 + 4J + 2·rounds`` passes (``J`` ≈ 5–25).

**"mala"** (any ``d``; PROPOSED, approximate and **not certified**): ``jaxdp.samplers.mala`` on the
ball ``X`` (proposals outside ``X`` are rejected) with the score evaluated at the point itself, so the
log-density is continuous: in ``d = 1`` the exact infimum (1) on ``[x - ρ, x + ρ] ∩ X`` (the limit of
the grid law as ``M → ∞``); in ``d >= 2`` the minimum of ``||∇f_S(y)||`` over the stencil
``y ∈ {P_X(x + ρ o) : o ∈ {0, ±e_1, ..., ±e_d}}``, itself a sensitivity-1 score between ``len^0_gr``
and ``len^ρ_gr`` (``∇f_S`` the mean of the per-sample minimum-norm subgradients). Default step
``h = min((2R)²/(32 d), 1/(Λ² d^{1/3}))``, ``Λ = ε n β_s/(4L)`` (``β_s = inst.smooth``; nonsmooth:
the first term), ``n_steps`` steps from the data-independent ``x0`` (default 0). The output is the
state of a finite chain, so the ε-DP guarantee (which assumes exact sampling) is not certified:
outputs record ``sampler = "mala"``. ``eps`` must be finite.
"""
from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from ..core.random import sample_categorical
from ..core.validation import check_epsilon, check_positive, check_positive_int, is_concrete
from ..samplers import ball, mala
from .instances import SCOInstance, _pow_norm_grad, check_sco_data, empirical_value

__all__ = ['GridInfo', 'grad_inverse_sensitivity', 'inverse_sensitivity', 'grid_points', 'growth_reduction_erm', 'subgrad_dist', 'ExactISInfo', 'grad_inverse_sensitivity_exact', 'window_inf', 'exact_grad_inv_estimator', 'MALAISInfo', 'grad_inverse_sensitivity_mala', 'mala_is_logdensity', 'mala_is_step', 'exact_excess_quadrature']


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
            gl, gr = _derivs(inst, data, x)
            if reg_grad is not None:
                r = reg_grad(x)[0]
                gl, gr = gl + r, gr + r
            return gl, gr

        def one(x):
            return _level(derivs(x - hw)[0], derivs(x + hw)[1])   # the closed cell includes its edges
    else:
        def one(x):
            g = jnp.mean(jax.vmap(lambda s: inst.grad(x, s))(data), axis=0)
            if reg_grad is not None:
                g = g + reg_grad(x)
            return jnp.sqrt(jnp.sum(g * g))
    return jax.lax.map(one, xs, batch_size=64)


def _derivs(inst: SCOInstance, data, x):
    """``(f'_-(x), f'_+(x))`` of ``f_S`` at the scalar ``x`` (one pass over the data)."""
    gl, gr = jax.vmap(lambda s: inst.grad_lr(  # type: ignore[misc]  # instances with one-sided derivatives only
        jnp.reshape(x, (1,)), s))(data)
    return jnp.mean(gl[:, 0]), jnp.mean(gr[:, 0])


def _level(dl_a, dr_b):
    """(1) of the module docstring: ``max(0, f'_-(a), -f'_+(b))``."""
    return jnp.maximum(jnp.maximum(dl_a, -dr_b), 0.0)


def _check_rho(rho) -> float:
    if not (isinstance(rho, (int, float)) and not isinstance(rho, bool) and math.isfinite(rho) and rho >= 0):
        raise ValueError(f"rho must be a finite number >= 0, got {rho!r}")
    return float(rho)


def _inside(xs, dom_c, dom_r):
    """The cells whose centre lies in every ball ``(dom_c[i], dom_r[i])``."""
    return jnp.all(jnp.sum((xs[:, None, :] - dom_c[None]) ** 2, axis=-1) <= dom_r[None] ** 2 * (1 + 1e-12), axis=1)


def _draw_cell(key, xs, h, logits):
    """One categorical draw of a cell and a uniform jitter of width ``h`` inside it: ``(x, cell)``."""
    kc, ku = jax.random.split(key)
    cell = sample_categorical(kc, logits)
    u = jax.random.uniform(ku, (xs.shape[1],), dtype=xs.dtype)
    return xs[cell] + (u - 0.5) * h, cell


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


def _grid_sample(key, inst, data, eps, M, w, exact_len=False):
    """The grid mechanism on ``[-R, R]^d`` (``exact_len``: the inverse sensitivity, a Hamming distance)."""
    d = inst.d
    dt = jnp.result_type(float)
    data, eps = jnp.asarray(data, dt), jnp.asarray(eps, dt)
    xs, h = grid_points(d, M, -inst.R, inst.R)
    inside = _inside(xs, jnp.zeros((1, d), dt), jnp.full((1,), inst.R, dt))
    g = jnp.where(inside, subgrad_dist(inst, data, xs, half_width=h / 2), jnp.inf)
    length = data.shape[0] * _smooth_min(g, d, M, w) / (2.0 * inst.L)  # len^ρ_gr
    if exact_len:
        length = jnp.ceil(length - 1e-9)
    logits = -eps * length / 2.0
    length = jnp.where(inside, length, jnp.inf)
    # ε = inf (non-private limit): uniform over the cells of minimal length (where the logits would be 0·inf)
    logits = jnp.where(jnp.isfinite(eps), jnp.where(inside, logits, -jnp.inf),
                       jnp.where(length <= jnp.min(length), 0.0, -jnp.inf))
    x, cell = _draw_cell(key, xs, h, logits)
    return x, GridInfo(logits=logits, cell=cell, centers=xs)


def _check_grid(inst, M, eps):
    if inst.d not in (1, 2):
        raise ValueError(f"grid inverse-sensitivity supports d in (1, 2), got d={inst.d} (higher d needs MALA)")
    check_positive_int("M", M, minimum=2)
    check_epsilon(eps)


def grad_inverse_sensitivity(key: jax.Array, inst: SCOInstance, data, eps, *, rho: float, M: Optional[int] = None,
                             sampler: str = "grid", **sampler_options):
    """ρ-smooth gradient inverse-sensitivity mechanism (GROWTH Theorem 1), drawn by ``sampler`` (module doc).

    ``"grid"``: ``rho`` (host float >= 0) sets the smoothing window ``w = floor(ρ/h)`` cells (``h = 2R/M``,
    ``M = 1024`` by default); ``eps`` may be traced (``inf``: the non-private limit, uniform over the cells of
    minimal length). ``"exact"``: :func:`grad_inverse_sensitivity_exact` (``M = None``: the continuous
    density). ``"mala"``: :func:`grad_inverse_sensitivity_mala` (no grid). ``sampler_options`` go to the
    sampler (``max_rounds``, ``center``; ``n_steps``, ``step_size``, ``x0``).

    Args:
        key: a typed PRNG key.
        inst: the instance (:class:`SCOInstance`).
        data: the ``(n, m)`` dataset (one sample per row).
        eps: ε (may be traced; ``inf``: non-private, grid only).
        rho: the smoothing radius ρ >= 0 (host float).
        M: the grid cells per axis (``"grid"``, ``"exact"``); ``None``: 1024 for the grid, the continuum for
            ``"exact"``.
        sampler: ``"grid"``, ``"exact"`` or ``"mala"``.
        **sampler_options: the options of the exact or MALA sampler.

    Returns:
        ``(x̂, GridInfo)``, ``(x̂, ExactISInfo)`` or ``(x̂, MALAISInfo)``.

    Raises:
        ValueError: an unknown ``sampler``, options it does not take, ``d`` not 1 or 2 (grid), or an invalid
            ``rho``.
    """
    if sampler == "exact":
        return grad_inverse_sensitivity_exact(key, inst, data, eps, rho=rho, M=M, **sampler_options)
    if sampler == "mala":
        if M is not None:
            raise ValueError(f"M is a grid size; the MALA sampler has no grid, got M={M!r}")
        return grad_inverse_sensitivity_mala(key, inst, data, eps, rho=rho, **sampler_options)
    if sampler != "grid":
        raise ValueError(f"sampler must be 'grid', 'exact' or 'mala', got {sampler!r}")
    if sampler_options:
        raise ValueError(f"the grid sampler takes no options {sorted(sampler_options)}; they belong to "
                         "sampler='exact' or 'mala'")
    M = 1024 if M is None else M
    _check_grid(inst, M, eps)
    check_sco_data(inst, data, jnp.zeros(inst.d))
    w = int(math.floor(_check_rho(rho) / (2.0 * inst.R / M) + 1e-9))
    return _grid_sample(key, inst, data, eps, M, w)


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
    return _grid_sample(key, inst, data, eps, M, 0, exact_len=True)


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
        # the grid mechanism on the box x_prev ± r_j (the grid depends only on the previous private output)
        unit, h = grid_points(inst.d, M, -1.0, 1.0)
        xs = x_prev[None, :] + r_j * unit
        inside = _inside(xs, jnp.stack([jnp.zeros((inst.d,), dt), x_prev]), jnp.stack([jnp.asarray(inst.R, dt), r_j]))
        reg = lambda x: lam_j * _pow_norm_grad(x - x_prev, kappa)
        g = jnp.where(inside, subgrad_dist(inst, data, xs, reg, half_width=r_j * h / 2), jnp.inf)
        G = _smooth_min(g, inst.d, M, w)
        logits = jnp.where(inside, -eps_j * data.shape[0] * G / (4.0 * 2.0 * L), -jnp.inf)
        logits = jnp.where(jnp.isfinite(eps_j), logits, jnp.where(inside & (G <= jnp.min(G)), 0.0, -jnp.inf))
        x, _ = _draw_cell(kj, xs, r_j * h, logits)
        return x, x

    x, xs = jax.lax.scan(round_, jnp.zeros((inst.d,), dt), (jnp.arange(k, dtype=dt), keys))
    return x, xs


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
    return _level(_derivs(inst, data, jnp.clip(a, -R, R))[0], _derivs(inst, data, jnp.clip(b, -R, R))[1])


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
    g_m = _level(dl_m, dr_m)                       # the peak level (normalization and stopping only)

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
            flat = c * (_level(dl_p, dr_p) - g_m) <= _FLAT
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
    LV = jnp.concatenate([_level(dls[0, :-1], drs[0, 1:]), _level(dls[1, 1:], drs[1, :-1]),
                          _level(dls[0, j[0] - 1], drs[1, j[1] - 1])[None]])
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
        acc = jnp.log(u[r, 2]) <= -c * (_level(dl_x, dr_x) - LV[seg])
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
    rho = _check_rho(rho)
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
    :func:`jaxdp.sco.run_sco`. ``erm_excess = f_S(x̂) - f_S(x̂_S)`` with the closed-form ERM minimizer.

    Args:
        inst: the κ-growth instance.
        n: the sample size.
        rho: the inverse-sensitivity radius.
        M: ``0`` for the continuous law, else the grid's cell count (``>= 2``).

    Returns:
        ``fn(key, eps) -> {excess, erm_excess, accepted, rounds}``.
    """
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


class MALAISInfo(NamedTuple):
    """Diagnostics of one MALA inverse-sensitivity draw (``sampler = "mala"``: not an exact sample).

    Attributes:
        acceptance_rate: the mean Metropolis–Hastings acceptance probability over the steps.
        accepted: the fraction of accepted proposals.
        outside: the fraction of proposals outside ``X`` (rejected).
        length: the relaxed length ``len^ρ_gr`` at the returned point.
    """

    acceptance_rate: jax.Array   # mean MH acceptance probability over the steps
    accepted: jax.Array          # fraction of accepted proposals
    outside: jax.Array           # fraction of proposals outside X (rejected)
    length: jax.Array            # len^ρ_gr (relaxed) at the returned point

    sampler = "mala"  # type: ignore[misc]  # class constant, not a pytree leaf


def _safe_norm(v):
    s = jnp.sum(v * v)
    pos = s > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, s, 1.0)), 0.0)


def _project_ball(y, R):
    n = _safe_norm(y)
    return y * jnp.minimum(1.0, R / jnp.maximum(n, 1e-300))


def smoothed_grad_norm(inst: SCOInstance, data, x, rho: float):
    """The relaxed ``inf_{y ∈ X, ||y-x|| <= ρ} ||∇f_S(y)||`` of the module docstring (exact in ``d = 1``).

    Args:
        inst: the SCO instance (``d = 1`` with ``grad_lr``: the exact infimum; otherwise the ``2d + 1``-point
            stencil, or the gradient norm at ``x`` itself when ``rho == 0``).
        data: the ``n`` samples defining ``f_S``.
        x: the point, shape ``(d,)``, inside ``X``.
        rho: the smoothing radius ρ (``>= 0``, a host float: it selects the branch).

    Returns:
        ``G(x)``, a scalar ``>= 0``.
    """
    R = inst.R
    if inst.d == 1 and inst.grad_lr is not None:
        # not window_inf: a proposal outside X keeps its unclipped window
        return _level(_derivs(inst, data, jnp.maximum(x - rho, -R))[0], _derivs(inst, data, jnp.minimum(x + rho, R))[1])

    def gnorm(y):
        return _safe_norm(jnp.mean(jax.vmap(lambda s: inst.grad(y, s))(data), axis=0))

    if rho == 0:
        return gnorm(x)
    eye = jnp.eye(inst.d, dtype=x.dtype)
    offs = jnp.concatenate([jnp.zeros((1, inst.d), x.dtype), eye, -eye], axis=0) * rho
    ys = jax.vmap(lambda o: _project_ball(x + o, R))(offs)
    return jnp.min(jax.vmap(gnorm)(ys))


def mala_is_logdensity(inst: SCOInstance, data, eps, rho: float):
    """``x -> -(ε/2) len^ρ_gr(S; x) = -ε n G(x)/(4L)`` with ``G`` the relaxed smoothed gradient norm.

    Args:
        inst: the SCO instance (``inst.L`` is the Lipschitz constant in ``len^ρ_gr``).
        data: the ``n`` samples defining ``f_S``.
        eps: the privacy parameter ε (may be traced).
        rho: the smoothing radius ρ.

    Returns:
        The unnormalised log-density, a function of ``x`` (shape ``(d,)``) returning a scalar.
    """
    n = data.shape[0]
    coef = eps * n / (4.0 * inst.L)
    return lambda x: -coef * smoothed_grad_norm(inst, data, x, rho)


def mala_is_step(inst: SCOInstance, n: int, eps: Any):
    """Default MALA step ``h = min((2R)²/(32d), 1/(Λ² d^{1/3}))``, ``Λ = ε n β_s/(4L)`` (module docstring).

    For a nonsmooth instance (``inst.smooth`` infinite or ``<= 0``) only the domain term ``(2R)²/(32d)`` is used.

    Args:
        inst: the SCO instance (``R``, ``d``, ``L`` and the smoothness ``β_s = inst.smooth``).
        n: the number of samples.
        eps: the privacy parameter ε (may be traced).

    Returns:
        The step size ``h``, a 0-d array.
    """
    d = inst.d
    h_dom = (2.0 * inst.R) ** 2 / (32.0 * d)
    if not math.isfinite(inst.smooth) or inst.smooth <= 0:
        return jnp.asarray(h_dom)
    lam = eps * n * inst.smooth / (4.0 * inst.L)
    return jnp.minimum(h_dom, 1.0 / (lam ** 2 * d ** (1.0 / 3.0)))


def _check(inst, data, eps, rho, n_steps, step_size, x0):
    if not isinstance(inst, SCOInstance):
        raise TypeError(f"inst must be an SCOInstance, got {type(inst).__name__}")
    check_epsilon(eps, allow_inf=False)
    rho = _check_rho(rho)
    n_steps = check_positive_int("n_steps", n_steps)
    if step_size is not None:
        check_positive("step_size", step_size)
    if x0 is not None and is_concrete(x0):
        xa = np.asarray(x0, dtype=float)
        if xa.shape != (inst.d,):
            raise ValueError(f"x0 must have shape ({inst.d},), got {xa.shape}")
        if not np.all(np.isfinite(xa)) or np.linalg.norm(xa) > inst.R * (1 + 1e-9):
            raise ValueError(f"x0 must be a finite point of the ball of radius R={inst.R}, got {x0!r}")
    check_sco_data(inst, data, jnp.zeros(inst.d))
    return rho, n_steps


def grad_inverse_sensitivity_mala(key: jax.Array, inst: SCOInstance, data, eps, *, rho: float, n_steps: int = 300,
                                  step_size: Optional[Any] = None, x0: Optional[Any] = None
                                  ) -> tuple[jax.Array, MALAISInfo]:
    """ρ-smooth gradient inverse sensitivity (GROWTH Theorem 1) sampled by MALA on ``X = B(0, R)``; any ``d``.

    **Approximate sampling** (module docstring): ``sampler = "mala"``; the ε-DP guarantee of Theorem 1 assumes an
    exact draw and is not certified for this output.

    Args:
        key: typed PRNG key (the chain's only randomness).
        inst, data: the instance and an ``(n, m)`` dataset.
        eps: ``ε > 0``, finite; may be traced (vmappable).
        rho: host float ``>= 0``, the smoothing radius ``ρ`` (see ``plan_grad_inverse_sensitivity``).
        n_steps: static chain length.
        step_size: ``h`` (may be traced; default ``mala_is_step``).
        x0: data-independent start in ``X`` (default 0).

    Returns:
        ``(x̂, MALAISInfo)``.

    Raises:
        TypeError: ``inst`` is not an :class:`SCOInstance`.
        ValueError: invalid ``rho`` or ``x0``.
    """
    rho, n_steps = _check(inst, data, eps, rho, n_steps, step_size, x0)
    dt = jnp.result_type(float)
    data = jnp.asarray(data, dt)
    eps = jnp.asarray(eps, dt)
    logdens = mala_is_logdensity(inst, data, eps, rho)
    h = mala_is_step(inst, data.shape[0], eps) if step_size is None else step_size
    x0 = jnp.zeros((inst.d,), dt) if x0 is None else jnp.asarray(x0, dt)
    grad_raw = jax.grad(logdens)

    def grad_fn(x):  # a non-finite gradient (a kink hit exactly) would freeze the chain; the MH ratio stays exact
        g = grad_raw(x)
        return jnp.where(jnp.isfinite(g), g, 0.0)

    x, info = mala(key, logdens, x0, n_steps, jnp.asarray(h, dt), ball(inst.R), grad_fn=grad_fn)
    length = data.shape[0] * smoothed_grad_norm(inst, data, x, rho) / (2.0 * inst.L)
    return x, MALAISInfo(info.acceptance_rate, info.accepted, info.outside, length)  # type: ignore[call-arg]


def exact_excess_quadrature(kappa: float, n: int, eps: float, rho: float, R: float = 1.0) -> float:
    """``E|x̂ - x*|^κ`` of the continuous gradient inverse-sensitivity mechanism on the 1-D noiseless
    κ-regression, by quadrature: the exact value the exact sampler's mean must match.

    There ``f_S(x) = |x - x*|^κ`` (``x* = R/4``), so the density is ``∝ exp(-(εn/4L) κ(|x - x*| - ρ)_+^{κ-1})`` on
    ``[-R, R]`` with ``L = κ(1.5R)^{κ-1}``.

    Args:
        kappa: the growth exponent κ (> 1).
        n: the sample size.
        eps: the privacy budget.
        rho: the mechanism's window ρ.
        R: the domain's radius.

    Returns:
        The expected excess ``E|x̂ - x*|^κ``.
    """
    from scipy import integrate

    L = kappa * (1.5 * R) ** (kappa - 1.0)
    c = eps * n / (4.0 * L)
    a, b = -1.25 * R, 0.75 * R                      # t = x - x* over [-R, R]
    w = (1.0 / (c * kappa)) ** (1.0 / (kappa - 1.0))
    pts = [t for t in sorted({a, b, 0.0, -rho, rho} | {s * m * w for s in (-1, 1) for m in (1, 10, 50)}) if a <= t <= b]

    def integral(f):
        def dens(t):
            return f(t) * math.exp(-c * kappa * max(abs(t) - rho, 0.0) ** (kappa - 1.0))
        return sum(integrate.quad(dens, u, v, limit=200)[0] for u, v in zip(pts[:-1], pts[1:]))

    return integral(lambda t: abs(t) ** kappa) / integral(lambda t: 1.0)
