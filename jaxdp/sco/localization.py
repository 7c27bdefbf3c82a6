"""GROWTH Algorithm 1 (``localization_sco``) and Algorithm 2 (``epoch_growth_sco``); docs/algorithms/growth.md#localization, #epoch-growth.

Source: GROWTH Algorithm 1 (Propositions 1–2) and Algorithm 2 (Theorems 2–3). Their display equations are
RECONSTRUCTED (docs/algorithms/growth.md#localization); the reconstruction is implemented, and its notes are kept
here next to the code.

Algorithm 1 (localization; Feldman–Koren–Talwar phased ERM with equal blocks)::

    k phases (static), block b = floor(n/k) (INTERPRETATION: natural log k = ceil(log n); remainder dropped)
    for i = 1..k:
        η_i = η · 16^{-(i - 1 + offset)}            # paper: offset = 1 (η_i = 2^{-4i} η); rate mode: offset = 0
        X_i = {x ∈ X : ||x - x_{i-1}|| <= 2 L η_i b}
        x̂_i ≈ argmin_{X_i} F_i,  F_i(x) = (1/b) Σ_{s ∈ S_i} F(x; s) + ||x - x_{i-1}||² / (2 η_i b)     # RECONSTRUCTED
        δ = 0:  ζ_i ~ Lap_d(4 L η_i √d / ε)         # printed ε_i; INTERPRETATION ε_i = ε
        δ > 0:  ζ_i ~ N(0, σ_i² I),  σ_i = gauss_mult · 2 L η_i   (paper: gauss_mult = 2 sqrt(log(1/δ))/ε)
        x_i = P_X(x̂_i + ζ_i)                        # PROPOSED projection (post-processing) keeps X_{i+1} non-empty
    return x_k

Why this reconstruction, the privacy argument and the refusal (docs/algorithms/growth.md#localization):
``λ_i = 1/(η_i n_0)`` makes ``F_i`` λ_i-strongly convex, so the exact minimizer has ℓ2-sensitivity
``2Lη_i``; the Gaussian σ is the (CORRECTED) Lemma 2.3 calibration with ``Δ = 2Lη_i`` and the Laplace
scale covers the ℓ1 sensitivity with a factor-2 slack for inexact solves (gap ``<= L²η_i/(2b)`` plus the
float floor of ``accuracy_floor``; the solver is rerun until its certificate meets it, see ``_phases``).
Each block is used in one phase: parallel composition ⇒ ε-DP (resp. (ε, δ)-DP). A run in which some
phase misses its gap after ``max_solver_rounds`` *refuses*: it returns NaN (``info['certified'] =
False``), and the certificate holds with ``δ + (1 + e^ε) γ``, ``γ`` the largest refusal probability over
datasets (measured, not bounded a priori). Runs with ``ε = ∞`` (non-private) never refuse.

Algorithm 2 (epochs; needs only a lower bound ``κ_low <= κ``)::

    n_0 = floor(n / T),  D_0 = diam(X) = 2R
    for i = 0..T-1:
        S_i = (s_{i n_0 + 1}, …, s_{(i+1) n_0})      # INTERPRETATION: printed indices off by one
        D_i = 2^{-i} D_0,  η_i = 2^{-i} η_0
        X_i = {x ∈ X : ||x - x_i|| <= D_i}           # INTERPRETATION: D_i is the radius (X_0 ⊇ X)
        x_{i+1} = Algorithm 1(S_i, X_i, η_i, x_i, ε, δ)
    return x_T

Noise is drawn with ``jaxdp.privacy.mechanisms.laplace_mech`` / ``gaussian_mech``. Both noise
vectors are drawn every phase (fixed key splits) and the one for the run's δ is selected with ``where``.
All shapes (``k``, ``T``, block sizes, solver iterations) are static; ``η, ε, δ`` are traced, so the
estimators vmap over seeds and over parameter grids. Run under ``jax.enable_x64()`` (see ``run_sco``).
"""
from __future__ import annotations

import math
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from ..core.validation import check_delta, check_epsilon, check_nonneg, check_positive, check_positive_int
from ..privacy.mechanisms import gaussian_mech, laplace_mech
from .erm import project_balls, solve_prox_erm
from .instances import SCOInstance, check_sco_data

__all__ = [
    "LocalizationParams", "EpochParams", "localization_sco", "epoch_growth_sco", "localization_phases",
    "growth_epochs", "accuracy_floor",
]


class LocalizationParams(NamedTuple):
    """Traced parameters of Algorithm 1 (scalars).

    Attributes:
        eta: the base step η > 0.
        eps: ε (``inf``: non-private).
        delta: δ (0: Laplace, pure DP; > 0: Gaussian).
        gauss_mult: the Gaussian ``σ_i = gauss_mult · (2 L η_i)`` (0 when ε = inf).
        phase_offset: ``η_i = η 16^{-(i-1+offset)}``: 1 (paper) or 0 (rate).
    """

    eta: jax.Array           # base step η (> 0)
    eps: jax.Array           # ε (inf = non-private)
    delta: jax.Array         # δ; 0 ⇒ Laplace (pure DP), > 0 ⇒ Gaussian
    gauss_mult: jax.Array    # Gaussian σ_i = gauss_mult · (2 L η_i); 0 when ε = inf
    phase_offset: jax.Array  # η_i = η 16^{-(i-1+offset)}: 1 (paper) or 0 (rate)


class EpochParams(NamedTuple):
    """Traced parameters of Algorithm 2 (scalars); noise as in :class:`LocalizationParams`.

    Attributes:
        eta0: the base step of the first epoch.
        eps: ε (``inf``: non-private).
        delta: δ (0: Laplace, pure DP; > 0: Gaussian).
        gauss_mult: the Gaussian multiplier (0 when ε = inf).
        phase_offset: the phase offset of the steps (1: paper, 0: rate).
    """

    eta0: jax.Array
    eps: jax.Array
    delta: jax.Array
    gauss_mult: jax.Array
    phase_offset: jax.Array


def localization_phases(n: int) -> int:
    """``k = ceil(log n)`` (natural log; GROWTH Alg. 1 line 1, INTERPRETATION), at least 1.

    Args:
        n: the sample size.

    Returns:
        ``k``.
    """
    n = check_positive_int("n", n)
    return max(1, math.ceil(math.log(n)))


def growth_epochs(n: int, kappa_low: float, mode: str = "paper") -> int:
    """Number of epochs of Algorithm 2: ``ceil(2 log n/(κ_low - 1))`` (Thms 2–3) or ``ceil(log n/(κ_low - 1))`` (rate).

    Args:
        n: the sample size.
        kappa_low: the lower bound on κ (> 1).
        mode: ``"paper"`` or ``"rate"``.

    Returns:
        The number of epochs.

    Raises:
        ValueError: ``kappa_low <= 1``.
    """
    n = check_positive_int("n", n, minimum=2)
    if not (isinstance(kappa_low, (int, float, np.floating, np.integer)) and math.isfinite(kappa_low)
            and kappa_low > 1):
        raise ValueError(f"kappa_low must be a finite number > 1 (a lower bound on the growth exponent), got {kappa_low!r}")
    c = 1.0 if mode == "rate" else 2.0
    return max(1, math.ceil(c * math.log(n) / (kappa_low - 1.0)))


def _check_noise_params(params, eta_name):
    check_positive(eta_name, params[0])
    check_epsilon(params.eps)
    check_delta(params.delta)
    check_nonneg("gauss_mult", params.gauss_mult)
    check_nonneg("phase_offset", params.phase_offset)


def accuracy_floor(inst: SCOInstance, dtype) -> float:
    """The data-independent accuracy ``8 u R √d`` (``u`` the unit roundoff of ``dtype``) added to every phase's
    required solver accuracy ``Lη_i``.

    Late phases of Algorithm 2 ask for ``Lη_i`` below the float resolution of the iterate, which no solver can
    certify; with the floor a phase asks for ``acc_i = Lη_i + floor`` and its noise covers the ℓ2 sensitivity
    ``2Lη_i + 2 acc_i`` (the ledger's noise multipliers are unchanged; docs/algorithms/growth.md#localization).

    Args:
        inst: the instance (:class:`SCOInstance`).
        dtype: the floating-point type of the iterates.

    Returns:
        The floor.
    """
    return 8.0 * float(jnp.finfo(dtype).eps) * float(inst.R) * math.sqrt(inst.d)


def _phases(key, inst: SCOInstance, blocks, x0, dom_c, dom_r, eta, eps, delta, gauss_mult, offset, n_iter,
            max_rounds: int = 1):
    """Algorithm 1 on ``blocks`` (``(k, b, m)``) inside ``∩ B(dom_c, dom_r)``; the solver is rerun (warm, at most
    ``max_rounds`` rounds) until its gap is ``<= λ_i acc_i²/2`` (``info['gap_ok']``; a miss refuses, :func:`_refuse`)."""
    k, b = blocks.shape[0], blocks.shape[1]
    d = inst.d
    L = inst.L
    dt = x0.dtype
    floor = accuracy_floor(inst, dt)
    # the 1-D solver bisects the whole constraint interval every time: a rerun returns the same point, and under
    # vmap one lane's rerun would make every seed wait for it
    if d == 1 and inst.grad_lr is not None:
        max_rounds = 1
    ones = jnp.ones((b,), dt)
    # keys travel through scan as raw key data (jax_debug_key_reuse mis-flags scans over batched typed keys)
    keys = jax.random.key_data(jax.random.split(key, k))

    def phase(x_prev, inp):
        j, block, kj = inp
        kj = jax.random.wrap_key_data(kj, impl=jax.random.key_impl(key))
        eta_i = eta * 16.0 ** (-(j + offset))
        lam_i = 1.0 / (eta_i * b)
        r_i = 2.0 * L * eta_i * b
        cs = jnp.concatenate([dom_c, x_prev[None]], axis=0)
        rs = jnp.concatenate([dom_r, jnp.reshape(r_i, (1,)).astype(dt)])
        acc_i = L * eta_i + floor                     # the accuracy ||x̂ - x*|| the noise below is calibrated for
        gap_req = 0.5 * lam_i * acc_i * acc_i         # = L²η_i/(2b) + O(floor): gap <= req ⇒ ||x̂ - x*|| <= acc_i
        res = solve_prox_erm(inst, block, ones, x_prev, lam_i, cs, rs, x_prev, n_iter=n_iter)

        def more(c):
            r, j = c
            return solve_prox_erm(inst, block, ones, x_prev, lam_i, cs, rs, r.x, n_iter=n_iter), j + 1

        res, rounds = jax.lax.while_loop(lambda c: (c[0].gap > gap_req) & (c[1] < max_rounds), more,
                                         (res, jnp.ones((), jnp.int32)))
        sens2 = 2.0 * L * eta_i + floor               # half of x̂'s ℓ2 sensitivity 2Lη_i + 2 acc_i
        kl, kg = jax.random.split(kj)
        z_lap = laplace_mech(kl, jnp.zeros((d,), dt), 2.0 * math.sqrt(d) * sens2, eps)   # scale (4Lη_i + 2 floor)√d/ε
        z_gau = gaussian_mech(kg, jnp.zeros((d,), dt), gauss_mult * sens2)
        pure = delta <= 0
        zeta = jnp.where(pure, z_lap, z_gau)
        scale = jnp.where(pure, 2.0 * math.sqrt(d) * sens2 / eps, gauss_mult * sens2)
        x_new = project_balls(res.x + zeta, dom_c, dom_r)
        info = dict(xhat=res.x, zeta=zeta, scale=scale, gap=res.gap, gap_required=gap_req,
                    gap_ok=res.gap <= gap_req, solver_rounds=rounds, eta=eta_i)
        return x_new, info

    xs, info = jax.lax.scan(phase, x0, (jnp.arange(k, dtype=dt), blocks, keys))
    return xs, info


def _refuse(x, ok, eps):
    """``x`` where the run is certified (``ok``) or non-private (``ε = ∞``), NaN otherwise (bit-identical when kept)."""
    keep = ok | jnp.isinf(eps)
    return jnp.where(keep, x, jnp.asarray(jnp.nan, x.dtype))


def localization_sco(key: jax.Array, inst: SCOInstance, data, x0, params: LocalizationParams, *, k: int,
                     n_iter: int = 100, domain: Optional[tuple] = None, max_solver_rounds: int = 50):
    """GROWTH Algorithm 1 (localization-based private SCO; Propositions 1–2). See the module docstring.

    Args:
      key: typed PRNG key (2 noise draws per phase).
      inst: the instance (loss, gradient, ``L``, domain ``B(0, R)``).
      data: ``(n, inst.m)`` samples; ``k`` blocks of ``floor(n/k)`` rows (the rest is dropped).
      x0: ``(d,)`` starting point in the domain.
      params: :class:`LocalizationParams` (traced; vmappable).
      k: number of phases (static; ``localization_phases(n)`` is the paper's ``ceil(log n)``).
      n_iter: solver iterations per round (static).
      max_solver_rounds: the solver is rerun (warm start, ``n_iter`` iterations each) until its gap
        certificate is ``<= λ_i (Lη_i + floor)²/2`` or this many rounds ran (static; ``info['gap_ok']``).
        A phase that still misses it makes the run refuse (below).
      domain: optional ``(centers (m, d), radii (m,))``: the feasible set ``∩ B(c_j, r_j)``
        (default ``B(0, R)``).

    Returns:
      ``(x_k, info)``. ``x_k`` is NaN (the run refuses) when some phase's solver missed its certified gap
      (ε finite); ``info['certified']`` (scalar bool) is ``all(info['gap_ok'])``. Per-phase diagnostic arrays
      ``xhat, zeta, scale, gap, gap_required, gap_ok, solver_rounds, eta`` (leading axis k) are *not* private
      (``xhat`` is the noiseless solver output). See the module docstring for what the certificate covers.
    """
    k = check_positive_int("k", k)
    n_iter = check_positive_int("n_iter", n_iter)
    max_solver_rounds = check_positive_int("max_solver_rounds", max_solver_rounds)
    check_sco_data(inst, data, x0, min_rows=k)
    _check_noise_params(params, "eta")
    data = jnp.asarray(data)
    dt = jnp.result_type(float)
    x0 = jnp.asarray(x0, dt)
    if domain is None:
        dom_c, dom_r = jnp.zeros((1, inst.d), dt), jnp.full((1,), inst.R, dt)
    else:
        dom_c, dom_r = jnp.asarray(domain[0], dt), jnp.asarray(domain[1], dt)
    b = data.shape[0] // k
    blocks = data[: k * b].reshape(k, b, inst.m).astype(dt)
    p = jax.tree_util.tree_map(lambda v: jnp.asarray(v, dt), params)
    xs, info = _phases(key, inst, blocks, x0, dom_c, dom_r, p.eta, p.eps, p.delta, p.gauss_mult,
                       p.phase_offset, n_iter, max_solver_rounds)
    ok = jnp.all(info["gap_ok"])
    return _refuse(xs, ok, p.eps), dict(info, certified=ok)


def epoch_growth_sco(key: jax.Array, inst: SCOInstance, data, x0, params: EpochParams, *, n_epochs: int, k: int,
                     n_iter: int = 100, max_solver_rounds: int = 50):
    """GROWTH Algorithm 2 (epoch-based algorithm for κ-growth; Theorems 2–3). See the module docstring.

    ``n_epochs`` (T) and ``k`` (phases per epoch) are static: the planner
    (``plan_epoch_growth_sco``) derives them from ``n`` and the lower bound ``κ_low``
    (``T = ceil(2 log n/(κ_low - 1))``, ``k = ceil(log n_0)``). Each epoch uses ``n_0 = floor(n/T)``
    fresh samples split into ``k`` blocks of ``floor(n_0/k)``.

    Returns ``(x_T, info)``; ``info`` arrays have leading axes ``(T, k)`` (``x_end``: ``(T, d)``, each epoch's
    output). As in :func:`localization_sco`, a phase whose solver missed its certified gap makes the run refuse:
    ``x_T`` is NaN, and so is ``x_end`` from that epoch on; ``info['certified']`` is ``all(info['gap_ok'])``.

    Args:
        key: a typed PRNG key.
        inst: the instance (:class:`SCOInstance`).
        data: the ``(n, m)`` dataset (one sample per row).
        x0: the starting point in ``X``.
        params: :class:`EpochParams`.
        n_epochs: the number of epochs ``T`` (static).
        k: the phases per epoch (static).
        n_iter: the solver iterations per round (static).
        max_solver_rounds: the most solver reruns per phase until its gap is certified.

    Returns:
        ``(x_T, info)`` (see above).
    """
    n_epochs = check_positive_int("n_epochs", n_epochs)
    k = check_positive_int("k", k)
    n_iter = check_positive_int("n_iter", n_iter)
    max_solver_rounds = check_positive_int("max_solver_rounds", max_solver_rounds)
    check_sco_data(inst, data, x0, min_rows=n_epochs * k, what=f" (n_epochs={n_epochs} x k={k})")
    _check_noise_params(params, "eta0")
    data = jnp.asarray(data)
    dt = jnp.result_type(float)
    p = jax.tree_util.tree_map(lambda v: jnp.asarray(v, dt), params)
    n0 = data.shape[0] // n_epochs
    b = n0 // k
    blocks = jnp.stack([data[e * n0: e * n0 + k * b].reshape(k, b, inst.m) for e in range(n_epochs)]).astype(dt)
    D0 = 2.0 * inst.R
    keys = jax.random.key_data(jax.random.split(key, n_epochs))

    def epoch(x, inp):
        i, blk, ki = inp
        ki = jax.random.wrap_key_data(ki, impl=jax.random.key_impl(key))
        Di = D0 * 2.0 ** (-i)
        eta_i = p.eta0 * 2.0 ** (-i)
        dom_c = jnp.stack([jnp.zeros((inst.d,), dt), x])
        dom_r = jnp.stack([jnp.asarray(inst.R, dt), Di])
        xs, info = _phases(ki, inst, blk, x, dom_c, dom_r, eta_i, p.eps, p.delta, p.gauss_mult, p.phase_offset,
                           n_iter, max_solver_rounds)
        return xs, dict(info, x_end=xs)

    x, info = jax.lax.scan(epoch, jnp.asarray(x0, dt), (jnp.arange(n_epochs, dtype=dt), blocks, keys))
    ok_epoch = jnp.all(info["gap_ok"], axis=1)
    ok_so_far = jnp.cumprod(ok_epoch.astype(jnp.int32)).astype(bool)     # every phase up to this epoch met its gap
    ok = ok_so_far[-1]
    info = dict(info, x_end=_refuse(info["x_end"], ok_so_far[:, None], p.eps), certified=ok)
    return _refuse(x, ok, p.eps), info
