r"""Exponential-weights bandit learners: EXP3, EXP3-IX and private EXP3 (Laplace-noised losses, optionally batched).

* **EXP3** (Auer, Cesa-Bianchi, Freund & Schapire 2002, "The nonstochastic multiarmed bandit
  problem", Fig. 1), in the form of SMPyBandits 0.9.7 ``Policies.Exp3(gamma, unbiased=True)``:
  weights on gains ``r = 1 - ℓ``, played distribution ("trusts")

  ::

      p_t = (1 − γ) w_t / Σ_j w_{t,j} + γ/K,

  and after playing ``x_t`` the importance-weighted gain ``r̂ = r_t / p_t(x_t)``
  updates ``w_{t+1, x_t} = w_{t, x_t} e^{η r̂}`` (``η = γ/K`` in Auer et
  al. and SMPyBandits; a separate parameter here). With ``explore_first`` the first ``K`` rounds
  play a uniformly random permutation of the arms (SMPyBandits' initial exploration; the weights
  are updated during it with the same estimate). Auer et al. Cor. 3.2: with
  ``γ = min(1, sqrt(K ln K/((e-1)T)))``, ``η = γ/K``, the regret is at most
  ``2 sqrt(e−1) sqrt(T K ln K)``. Weights are kept as log-weights, shifted so the largest is 0.

* **EXP3-IX** (Neu 2015, "Explore no more: improved high-probability regret bounds for
  non-stochastic bandits"): ``p_t ∝ e^{-η L_{t-1}}`` with the implicit-exploration
  estimate ``ℓ̂_{t,i} = ℓ_t(i) 1[x_t = i]/(p_{t,i} + γ_{ix})``. Its expected
  regret is at most ``ln K/η + (η/2 + γ_{ix}) K T``: with
  ``η = 2γ_{ix} = sqrt(2 ln K/(KT))``, ``(3/√2) sqrt(KT ln K)``.

* **DP-EXP3** (Tossou & Dimitrakakis 2017, "Achieving privacy in the adversarial multi-armed
  bandit", DP-EXP3-Lap; Agarwal & Singh 2017, "The price of differential privacy for online
  learning"), with the batching of Asi, Raman & Talwar 2025 ("Faster rates for private
  adversarial bandits"). Rounds are grouped in blocks of ``τ`` rounds that play the same
  arm; at the end of a block the learner sees the private block average

  ::

      ℓ̃ = clip(ℓ̄ + Lap(b), [−B, 1 + B]),   b = 1/(ε τ),

  and runs loss-based EXP3 with mixing on ``ℓ̂_i = ℓ̃  1[x = i]/p_i``:
  ``p = (1-γ) q + γ/K``, ``q ∝ e^{-η L}``. ``τ = 1`` is
  DP-EXP3-Lap. Privacy: replacing one round's loss vector moves one block average by at most
  ``1/τ`` (losses in ``[0, 1]``), so each block's release is ε-DP; blocks hold disjoint
  rounds and everything else is post-processing, so the action sequence is ε-DP
  (``jaxdp plan dp-exp3``; parallel composition in the ledger). Regret (derived in
  docs/algorithms/bandits.md#dp-exp3): with ``γ = η K (1 + B)`` (so that
  ``η|ℓ̂| ≤ 1``) and ``n = T/τ`` blocks,

  ::

      E[R_T] ≤ γT + τ ln K/η + ηTK(1 + 2b²)/(1 − γ) + 2Tb e^{−B/b},

  ``O(sqrt(TK ln K)/ε)`` for ``τ = 1`` (ε ≤ 1) and
  ``O(sqrt(TK ln K ln T/ε))`` for ``τ = ⌈1/ε⌉`` (with ``B = b ln T``, :func:`jaxdp.bandits.theory.dp_exp3_tuning`).

Random numbers per round: EXP3 and EXP3-IX one uniform; DP-EXP3 one uniform and one Laplace draw.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..core.random import sample_from_weights
from ..core.types import Learner, fdt
from ._common import arms_factory, checked_params
from .problem import bandit_learner

__all__ = [
    "Exp3State", "Exp3Params", "exp3", "Exp3IXState", "Exp3IXParams", "exp3_ix", "DPExp3State", "DPExp3Params",
    "dp_exp3",
]


def _normalized(logw):
    logw = logw - jnp.max(logw)
    w = jnp.exp(logw)
    return logw, w / jnp.sum(w)


def _uniform_start(key, K: int):
    """``(x, logw, p)`` at ``init``: ``p`` uniform over the ``K`` arms, ``x ~ p`` (one draw of ``key``), zero log-weights."""
    p = jnp.full((K,), 1.0 / K, fdt())
    return sample_from_weights(key, p), jnp.zeros((K,), fdt()), p


# --------------------------------------------------------------------------- EXP3 (Auer et al. 2002)


class Exp3State(NamedTuple):
    """State of :func:`exp3`.

    Attributes:
        x: the arm played this round (int32).
        n: the rounds observed so far (int32).
        logw: the ``(K,)`` log-weights (max 0).
        p: the ``(K,)`` distribution of the next draw.
        perm: the ``(K,)`` int32 initial exploration order.
    """
    x: jax.Array      # int32: the arm played this round
    n: jax.Array      # int32: rounds observed so far
    logw: jax.Array   # (K,) log-weights, max 0
    p: jax.Array      # (K,) the distribution ("trusts") of the next draw
    perm: jax.Array   # (K,) int32: the initial exploration order


@checked_params(gamma=dict(lo=0.0, hi=1.0, lo_open=True), eta=dict(lo=0.0, lo_open=True),
                explore_first=dict(lo=0.0, hi=1.0))
class Exp3Params(NamedTuple):
    """``gamma`` in ``(0, 1]``, ``eta > 0``, ``explore_first`` in ``{0, 1}`` (checked on the host).

    Attributes:
        gamma: the uniform mixing.
        eta: the learning rate on the importance-weighted gains (Auer et al.: ``gamma / K``).
        explore_first: 1: the first ``K`` rounds play a random permutation (SMPyBandits); 0: draw from ``p``.
    """
    gamma: jax.Array          # uniform mixing in (0, 1]
    eta: jax.Array            # learning rate on the importance-weighted gains (Auer et al.: gamma / K)
    explore_first: jax.Array = 1.0  # type: ignore[assignment]  # 1: the first K rounds play a random permutation


@arms_factory
def exp3(K: int) -> Learner:
    """EXP3 over ``K`` arms (module docstring). Params: :class:`Exp3Params` ``(gamma, eta, explore_first)``.

    ``Exp3Params(gamma=g, eta=g / K)`` is SMPyBandits' ``Exp3(K, gamma=g)`` (unbiased estimates).

    Args:
        K: the number of arms (static).

    Returns:
        The :class:`jaxdp.Learner`.
    """
    def init(key, params):
        k_perm, k_draw = jax.random.split(key)
        perm = jax.random.permutation(k_perm, K).astype(jnp.int32)
        p = jnp.full((K,), 1.0 / K, fdt())
        x = jnp.where(params.explore_first > 0, perm[0], sample_from_weights(k_draw, p)).astype(jnp.int32)
        return Exp3State(x=x, n=jnp.zeros((), jnp.int32), logw=jnp.zeros((K,), fdt()), p=p, perm=perm)

    def step(key, s, observed, params):
        gain = (1.0 - observed) / s.p[s.x]
        logw, q = _normalized(s.logw.at[s.x].add(params.eta * gain))
        p = (1.0 - params.gamma) * q + params.gamma / K
        n = s.n + 1
        drawn = sample_from_weights(key, p)
        first = (params.explore_first > 0) & (n < K)
        x = jnp.where(first, s.perm[jnp.minimum(n, K - 1)], drawn).astype(jnp.int32)
        return Exp3State(x=x, n=n, logw=logw, p=p, perm=s.perm), {}

    return bandit_learner(init, step)


# --------------------------------------------------------------------------- EXP3-IX (Neu 2015)


class Exp3IXState(NamedTuple):
    """State of :func:`exp3_ix`.

    Attributes:
        x: the arm played this round (int32).
        logw: the ``(K,)`` ``-eta`` times the cumulative loss estimates, shifted to max 0.
        p: the ``(K,)`` distribution of the next draw.
    """
    x: jax.Array      # int32: the arm played this round
    logw: jax.Array   # (K,) -eta * (cumulative loss estimates), shifted to max 0
    p: jax.Array      # (K,) the distribution of the next draw


@checked_params(eta=dict(lo=0.0, lo_open=True), gamma=dict(lo=0.0))
class Exp3IXParams(NamedTuple):
    """``eta > 0``, ``gamma >= 0`` (checked on the host).

    Attributes:
        eta: the learning rate.
        gamma: the implicit exploration (Neu: ``eta / 2``).
    """
    eta: jax.Array     # learning rate
    gamma: jax.Array   # implicit exploration (Neu: eta / 2)


@arms_factory
def exp3_ix(K: int) -> Learner:
    """EXP3-IX over ``K`` arms (module docstring). Params: :class:`Exp3IXParams` ``(eta, gamma)``.

    ``Exp3IXParams(*jaxdp.bandits.theory.exp3_ix_tuning(K, T))`` is Neu's tuning for the horizon ``T``.

    Args:
        K: the number of arms (static).

    Returns:
        The :class:`jaxdp.Learner`.
    """
    def init(key, params):
        return Exp3IXState(*_uniform_start(key, K))

    def step(key, s, observed, params):
        est = observed / (s.p[s.x] + params.gamma)
        logw, p = _normalized(s.logw.at[s.x].add(-params.eta * est))
        return Exp3IXState(x=sample_from_weights(key, p), logw=logw, p=p), {}

    return bandit_learner(init, step)


# --------------------------------------------------------------------------- DP-EXP3 (Laplace, batched)


class DPExp3State(NamedTuple):
    """State of :func:`dp_exp3`.

    Attributes:
        x: the arm played in the current block (int32).
        logw: the ``(K,)`` ``-eta`` times the cumulative loss estimates, shifted to max 0.
        p: the ``(K,)`` distribution ``x`` was drawn from.
        j: the rounds of the current block observed so far (int32).
        acc: the current block's loss sum (private data: never released).
    """
    x: jax.Array      # int32: the arm played in the current block
    logw: jax.Array   # (K,) -eta * (cumulative loss estimates), shifted to max 0
    p: jax.Array      # (K,) the distribution x was drawn from
    j: jax.Array      # int32: rounds of the current block observed so far
    acc: jax.Array    # the current block's loss sum (private data: never released)


@checked_params(eta=dict(lo=0.0, lo_open=True), gamma=dict(lo=0.0, hi=1.0, hi_open=True), b=dict(lo=0.0), B=dict(lo=0.0), tau=dict(lo=1))
class DPExp3Params(NamedTuple):
    """``eta > 0``, ``gamma`` in ``[0, 1)``, ``b >= 0``, ``B >= 0``, ``tau >= 1`` (``jaxdp plan dp-exp3``).

    Attributes:
        eta: the learning rate.
        gamma: the uniform mixing.
        b: the Laplace scale of the block average (``1/(ε tau)``).
        B: the clip range: noisy averages are clipped to ``[-B, 1 + B]``.
        tau: the block length (int32; 1: DP-EXP3-Lap).
    """
    eta: jax.Array    # learning rate
    gamma: jax.Array  # uniform mixing in [0, 1)
    b: jax.Array      # Laplace scale of the block average (1 / (eps tau))
    B: jax.Array      # clip range: noisy averages are clipped to [-B, 1 + B]
    tau: jax.Array    # int32 block length (1: DP-EXP3-Lap)


@arms_factory
def dp_exp3(K: int) -> Learner:
    """Private EXP3 over ``K`` arms, blocks of ``tau`` rounds (module docstring). Params: :class:`DPExp3Params`.

    The arm changes only at block ends (at most ``T/tau`` switches). Per round: one Laplace draw and
    one uniform (used at block ends).

    Args:
        K: the number of arms (static).

    Returns:
        The :class:`jaxdp.Learner`.
    """
    def init(key, params):
        return DPExp3State(*_uniform_start(key, K), j=jnp.zeros((), jnp.int32), acc=jnp.zeros((), fdt()))

    def step(key, s, observed, params):
        k_noise, k_draw = jax.random.split(key)
        acc = s.acc + observed
        j = s.j + 1
        tau = jnp.asarray(params.tau, jnp.int32)
        end = j >= tau
        noisy = acc / tau.astype(fdt()) + params.b * jax.random.laplace(k_noise, (), fdt())
        noisy = jnp.clip(noisy, -params.B, 1.0 + params.B)
        logw_new, q = _normalized(s.logw.at[s.x].add(-params.eta * noisy / s.p[s.x]))
        p_new = (1.0 - params.gamma) * q + params.gamma / K
        x_new = sample_from_weights(k_draw, p_new)
        return DPExp3State(x=jnp.where(end, x_new, s.x), logw=jnp.where(end, logw_new, s.logw),
                           p=jnp.where(end, p_new, s.p), j=jnp.where(end, 0, j),
                           acc=jnp.where(end, 0.0, acc)), {"switched": end & (x_new != s.x)}

    return bandit_learner(init, step)
