r"""Regret bounds and standard tunings of the bandit learners (host NumPy float64; docs/algorithms/bandits.md#theory).

Stochastic bounds take the reward means ``μ`` and the horizon ``T``; gaps are
``Δ_i = max_j μ_j - μ_i``. Adversarial bounds hold for every oblivious loss
sequence in ``[0, 1]^{T × K}``.

* :func:`ucb1_bound`: Auer, Cesa-Bianchi & Fischer 2002, Thm 1.
* :func:`lai_robbins`: the asymptotic lower bound ``Σ_i Δ_i ln T/kl(μ_i, μ^*)``
  (Lai & Robbins 1985), attained by Thompson sampling (Kaufmann, Korda & Munos 2012).
* :func:`index_bound`: for an index policy whose confidence radius is ``c(n, T)`` (the same
  radius bounds the estimation error), a suboptimal arm is pulled at most
  ``N_i = min{n: 2c(n, T) < Δ_i}`` times while every radius holds (Auer et al.'s
  argument), plus the failure term ``(1 + kπ²/3)Δ_i`` for ``k`` radius events per
  estimate. :func:`ldp_ucb_bound` and :func:`dp_ucb_tree_bound` use it with the radii of
  :mod:`jaxdp.bandits.ucb`.
* :func:`dp_se_bound`: :mod:`jaxdp.bandits.elimination` (the good event of probability
  ``1 - βπ²/12``).
* :func:`exp3_bound` (Auer et al. 2002, Cor. 3.2), :func:`exp3_ix_bound` (Neu 2015),
  :func:`dp_exp3_bound` (derived in docs/algorithms/bandits.md#dp-exp3).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

__all__ = [
    "gaps", "ucb1_bound", "lai_robbins", "index_bound", "ldp_ucb_bound", "dp_ucb_tree_bound", "dp_se_bound",
    "exp3_bound", "exp3_ix_bound", "dp_exp3_bound", "exp3_tuning", "exp3_ix_tuning", "dp_exp3_tuning",
    "laplace_sum_radius_np", "bernoulli_kl",
]

_E1 = math.e - 1.0


def gaps(means: Sequence[float] | np.ndarray) -> np.ndarray:
    """The suboptimality gaps ``Δ_i = max(μ) − μ_i``.

    Args:
        means: the ``(K,)`` reward means ``μ``.

    Returns:
        The ``(K,)`` float64 gaps (0 at the best arms).
    """
    mu = np.asarray(means, np.float64)
    return mu.max() - mu


def ucb1_bound(means: Sequence[float] | np.ndarray, T: float) -> float:
    """The UCB1 pseudo-regret bound ``Σ_{Δ_i>0}  8 ln T/Δ_i + (1 + π²/3)Σ_i Δ_i`` (Auer et al. 2002, Thm 1).

    Args:
        means: the ``(K,)`` reward means.
        T: the horizon (rounds).

    Returns:
        The bound on the expected pseudo-regret after ``T`` rounds.
    """
    d = gaps(means)
    pos = d[d > 0]
    return float(np.sum(8.0 * math.log(T) / pos) + (1.0 + math.pi ** 2 / 3.0) * np.sum(d))


def bernoulli_kl(p, q):
    """The Kullback–Leibler divergence ``kl(p, q)`` between Bernoulli laws, in nats.

    Both arguments are clipped to ``[1e-15, 1 - 1e-15]`` so the result is finite.

    Args:
        p, q: the success probabilities (arrays broadcast together).

    Returns:
        ``p ln(p/q) + (1 - p) ln((1 - p)/(1 - q))`` elementwise (float64).
    """
    p = np.clip(np.asarray(p, np.float64), 1e-15, 1 - 1e-15)
    q = np.clip(np.asarray(q, np.float64), 1e-15, 1 - 1e-15)
    return p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))


def lai_robbins(means: Sequence[float] | np.ndarray, T: float) -> float:
    """The Lai–Robbins lower bound ``Σ_{Δ_i>0}  Δ_i ln T / kl(μ_i, μ^*)`` (Lai & Robbins 1985; Bernoulli arms).

    The asymptotic regret of any consistent policy; Thompson sampling attains it (Kaufmann, Korda & Munos 2012).

    Args:
        means: the ``(K,)`` Bernoulli reward means.
        T: the horizon (rounds).

    Returns:
        The bound (leading term in ``ln T``).
    """
    mu = np.asarray(means, np.float64)
    d = gaps(list(mu))
    pos = d > 0
    return float(np.sum(d[pos] * math.log(T) / bernoulli_kl(mu[pos], mu.max())))


def laplace_sum_radius_np(m, L, b):
    """``b max(sqrt(8mL), 2√2 L)``: :func:`jaxdp.bandits._common.laplace_sum_radius` in NumPy (float64).

    Args:
        m: the number of Laplace terms in the sum (array or scalar).
        L: the log of the inverse failure probability.
        b: the Laplace scale.

    Returns:
        The radius ``u`` with ``P(Σ_{j ≤ m} Z_j ≥ u) ≤ e^{-L}`` for i.i.d. ``Z_j ~ Lap(b)``.
    """
    return b * np.maximum(math.sqrt(8.0) * np.sqrt(np.asarray(m, np.float64) * L), 2.0 * math.sqrt(2.0) * L)


def _pulls(radius, delta: float, T: float) -> float:
    """``min{n >= 1: 2 radius(n) < delta}`` (``radius`` decreasing), capped at ``T``."""
    if 2.0 * radius(T) >= delta:
        return float(T)
    lo, hi = 1.0, float(T)          # 2 radius(hi) < delta
    if 2.0 * radius(lo) < delta:
        return 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if 2.0 * radius(mid) < delta:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 0.5:
            break
    return float(math.ceil(hi))


def index_bound(means: Sequence[float] | np.ndarray, T: float, radius, events: int = 1) -> float:
    """Regret bound of an index policy from its confidence radius: ``Σ_{Δ_i>0} Δ_i N_i + (1 + kπ²/3)Σ_iΔ_i``.

    ``N_i = min{n: 2c(n) < Δ_i}`` pulls of a suboptimal arm while every radius holds (Auer et al.'s argument;
    module docstring), plus the failure term for ``k`` radius events per estimate; capped at ``T max_i Δ_i``.

    Args:
        means: the ``(K,)`` reward means.
        T: the horizon (rounds).
        radius: the confidence radius ``n -> c(n, T)``, decreasing in ``n``.
        events: ``k``, the number of radius events per estimate (each of failure probability ``n⁻⁴``).

    Returns:
        The bound on the expected pseudo-regret.
    """
    d = gaps(means)
    tot = sum(di * _pulls(radius, di, T) for di in d if di > 0)
    tot += (1.0 + events * math.pi ** 2 / 3.0) * float(np.sum(d))
    return float(min(tot, T * d.max()))


def ldp_ucb_bound(means: Sequence[float] | np.ndarray, T: float, b: float) -> float:
    """:func:`index_bound` with LDP-UCB's radius ``sqrt(2 ln T/n) + u(n, 4 ln T)/n`` (two events).

    Args:
        means: the ``(K,)`` reward means.
        T: the horizon (rounds).
        b: the Laplace scale of the noise on each reward (``1/ε`` for ε-LDP).

    Returns:
        The bound on the expected pseudo-regret.
    """
    L = 4.0 * math.log(T)
    return index_bound(means, T, lambda n: math.sqrt(2.0 * math.log(T) / n) + float(laplace_sum_radius_np(n, L, b)) / n,
                       events=2)


def dp_ucb_tree_bound(means: Sequence[float] | np.ndarray, T: float, b: float, H: int) -> float:
    """:func:`index_bound` with DP-UCB's radius ``sqrt(2 ln T/n) + u(H, 4 ln T)/n`` (``popcount(n) <= H``; two events).

    Args:
        means: the ``(K,)`` reward means.
        T: the horizon (rounds).
        b: the Laplace scale of each tree node (``H/ε`` for ε-DP).
        H: the number of levels of each arm's tree counter.

    Returns:
        The bound on the expected pseudo-regret.
    """
    L = 4.0 * math.log(T)
    u = float(laplace_sum_radius_np(H, L, b))
    return index_bound(means, T, lambda n: math.sqrt(2.0 * math.log(T) / n) + u / n, events=2)


def dp_se_bound(means: Sequence[float] | np.ndarray, T: float, eps: float, beta: float) -> float:
    """DP-SE's regret bound ``Σ_{Δ_a>0} Δ_a Σ_{e≤ e_a} R_e(K) + β Tmax_aΔ_a``, capped at ``Tmax_aΔ_a``.

    :mod:`jaxdp.bandits.elimination`: arm ``a`` is eliminated after epoch ``e_a``, the first with
    ``2·2^{-e_a} < Δ_a``; ``R_e(K) ≥ R_e(|S|)`` since the active set only shrinks; the good event has
    probability ``1 - βπ²/12``.

    Args:
        means: the ``(K,)`` reward means.
        T: the horizon (rounds).
        eps: the privacy level ε.
        beta: the failure probability β.

    Returns:
        The bound on the expected pseudo-regret.
    """
    from .elimination import dp_se_epoch_length

    d = gaps(means)
    K = len(d)
    tot = 0.0
    for da in d[d > 0]:
        e_a = 1
        while 2.0 * 2.0 ** (-e_a) >= da:
            e_a += 1
        tot += da * float(sum(dp_se_epoch_length(e, K, eps, beta) for e in range(1, e_a + 1)))
    tot += beta * T * d.max()
    return float(min(tot, T * d.max()))


def exp3_tuning(K: int, T: int) -> tuple[float, float]:
    """``(gamma, eta)`` of Auer et al. 2002 Cor. 3.2 with ``g = T``: ``γ = min(1, sqrt(K ln K/((e-1)T)))``, ``η = γ/K``.

    Args:
        K: the number of arms.
        T: the horizon (rounds).

    Returns:
        ``(gamma, eta)`` for :class:`jaxdp.bandits.Exp3Params`.
    """
    g = min(1.0, math.sqrt(K * math.log(K) / (_E1 * T)))
    return g, g / K


def exp3_bound(K: int, T: float) -> float:
    """EXP3's regret bound ``2 sqrt(e−1) sqrt(TK ln K)`` (Auer et al. 2002, Cor. 3.2, gains bounded by ``g = T``).

    Args:
        K: the number of arms.
        T: the horizon (rounds).

    Returns:
        The bound on the expected regret with the tuning of :func:`exp3_tuning`.
    """
    return 2.0 * math.sqrt(_E1) * math.sqrt(T * K * math.log(K))


def exp3_ix_tuning(K: int, T: int) -> tuple[float, float]:
    """``(eta, gamma)`` of Neu 2015: ``η = sqrt(2 ln K/(KT))``, ``γ = η/2``.

    Args:
        K, T: as in :func:`exp3_tuning`.

    Returns:
        ``(eta, gamma)`` for :class:`jaxdp.bandits.Exp3IXParams`.
    """
    eta = math.sqrt(2.0 * math.log(K) / (K * T))
    return eta, eta / 2.0


def exp3_ix_bound(K: int, T: float, eta: float, gamma: float) -> float:
    """EXP3-IX's expected regret bound ``ln K/η + (η/2 + γ) K T`` (Neu 2015).

    Args:
        K: the number of arms.
        T: the horizon (rounds).
        eta: the learning rate ``η``.
        gamma: the implicit-exploration parameter ``γ``.

    Returns:
        The bound on the expected regret.
    """
    return math.log(K) / eta + (eta / 2.0 + gamma) * K * T


def dp_exp3_tuning(K: int, T: int, eps: float, tau: int = 1) -> dict:
    """Parameters of DP-EXP3 (:mod:`jaxdp.bandits.exp3`) for ``eps``-DP in blocks of ``tau`` rounds.

    ``b = 1/(ετ)``, ``B = b ln T``, and the ``η`` minimising
    :func:`dp_exp3_bound` with ``γ = η K(1 + B)``:
    ``η = sqrt(τln K/(TK(2 + B + 2b²)))`` (if that makes ``γ ≥ 1/2``,
    ``γ = 1/2`` and ``η = γ/(K(1+B))``).

    Args:
        K: the number of arms.
        T: the horizon (rounds).
        eps: the privacy level ε of the action sequence.
        tau: the block length ``τ`` in rounds.

    Returns:
        ``{"eta", "gamma", "b", "B", "tau"}``: the learning rate, the mixing, the Laplace scale of each block
        average, its clip margin, and ``τ``.
    """
    b = 1.0 / (eps * tau)
    B = b * math.log(max(T, 2))
    eta = math.sqrt(tau * math.log(K) / (T * K * (2.0 + B + 2.0 * b * b)))
    gamma = eta * K * (1.0 + B)
    if gamma >= 0.5:
        gamma = 0.5
        eta = gamma / (K * (1.0 + B))
    return {"eta": eta, "gamma": gamma, "b": b, "B": B, "tau": int(tau)}


def dp_exp3_bound(K: int, T: float, eta: float, gamma: float, b: float, B: float, tau: int = 1) -> float:
    """DP-EXP3's regret bound ``γ T + τln K/η + η TK(1 + 2b²)/(1-γ) + 2Tbe^{-B/b}``, capped at ``T``.

    Derived in docs/algorithms/bandits.md#dp-exp3 (valid for ``γ = η K (1 + B)``).

    Args:
        K: the number of arms.
        T: the horizon (rounds).
        eta: the learning rate ``η``.
        gamma: the uniform mixing ``γ``.
        b: the Laplace scale of each block-average release.
        B: the clip margin (released averages are clipped to ``[−B, 1 + B]``).
        tau: the block length ``τ`` in rounds.

    Returns:
        The bound on the expected regret.
    """
    bias = 2.0 * T * b * math.exp(-B / b) if b > 0 else 0.0
    val = gamma * T + tau * math.log(K) / eta + eta * T * K * (1.0 + 2.0 * b * b) / (1.0 - gamma) + bias
    return float(min(val, T))
