r"""DP-SE: differentially private successive elimination (Sajed & Sheffet 2019, "An optimal private
stochastic-MAB algorithm based on an optimal private stopping rule", ICML, Alg. DP-SE).

Epoch ``e = 1, 2, ...`` with target gap ``Δ_e = 2^{-e}`` and active set ``S``
(initially all ``K`` arms): pull every active arm

::

    R_e = ceil( max( (8/Δ_e²) ln(8|S|e²/β),  (4/(ε Δ_e)) ln(4|S|e²/β) ) )

times (round robin), form each arm's mean ``μ̄_a`` over **this epoch's** pulls only and
release ``μ̃_a = μ̄_a + Lap(1/(ε R_e))``; then eliminate every
arm with ``μ̃_a < max_{a'}μ̃_{a'} - Δ_e``. Once one arm is left it is
played to the end.

*Constants* (re-derived here; same structure as Sajed & Sheffet's DP-SE): Hoeffding gives
``P(|μ̄_a - μ_a| > Δ_e/4) ≤ 2e^{-R_eΔ_e²/8}`` and the Laplace tail
``P(|Lap(1/(ε R_e))| > Δ_e/4) = e^{-ε R_e Δ_e/4}``; with
``R_e`` as above each is at most ``β/(4|S|e²)``, so with probability at least
``1 - βπ²/12`` every released mean is within ``Δ_e/2`` of the truth in every
epoch. On that event the best arm is never eliminated and an arm with gap
``Δ_a > 2Δ_e`` is eliminated at the end of epoch ``e``, so the pseudo-regret is at
most ``Σ_{a:Δ_a>0} Δ_a Σ_{e ≤ e_a}  R_e + β T`` with
``e_a = min{e: 2Δ_e < Δ_a}``: ``O(Σ_a ln(Klog(1/Δ_a)/β)/Δ_a
+ Kln(K/β)/ε)``, with ``β = 1/T`` the optimal
``O(Σ_a ln T/Δ_a + K ln T/ε)`` (:func:`jaxdp.bandits.theory.dp_se_bound`).

*Privacy*: each reward enters exactly one released mean (one arm, one epoch), whose
sensitivity is ``1/R_e`` (rewards in ``[0, 1]``, replace-one), released with
``Lap(1/(ε R_e))``: ε-DP. The released means use disjoint rounds, and the
schedule (which arm is pulled when) is a function of earlier releases only, so the action
sequence is ε-DP (parallel composition; ``jaxdp plan dp-se``).

The round robin follows a random order of the arms drawn at ``init``. One Laplace draw per round:
the played arm's noise, used only when that arm completes its ``R_e`` pulls of the epoch.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core.types import Learner, fdt
from ._common import arms_factory, checked_params, random_priority
from .problem import bandit_learner

__all__ = ["DPSEState", "DPSEParams", "dp_se", "dp_se_epoch_length"]


class DPSEState(NamedTuple):
    """State of :func:`dp_se`.

    Attributes:
        x: the arm played this round (int32).
        active: the ``(K,)`` bool mask of the arms not eliminated.
        e: the current epoch (int32, from 1).
        R: the pulls per active arm in this epoch (float, integral).
        cnt: the ``(K,)`` pulls in this epoch.
        sums: the ``(K,)`` reward sums in this epoch (private data: never released).
        noisy: the ``(K,)`` released noisy means (set when an arm completes its ``R`` pulls).
        prio: the ``(K,)`` random order of the round robin (drawn at init).
    """
    x: jax.Array        # int32: the arm played this round
    active: jax.Array   # (K,) bool: arms not eliminated
    e: jax.Array        # int32: the current epoch (from 1)
    R: jax.Array        # pulls per active arm in this epoch (float, integral)
    cnt: jax.Array      # (K,) pulls in this epoch
    sums: jax.Array     # (K,) reward sums in this epoch (private data: never released)
    noisy: jax.Array    # (K,) released noisy means (set when an arm completes its R pulls)
    prio: jax.Array     # (K,) random order of the round robin (drawn at init)


@checked_params(eps=dict(lo=0.0, lo_open=True, allow_inf=True), beta=dict(lo=0.0, hi=1.0, lo_open=True, hi_open=True))
class DPSEParams(NamedTuple):
    """``eps > 0`` (``inf``: no noise), ``beta`` in ``(0, 1)`` (``jaxdp plan dp-se``: ``beta = 1/T``).

    Attributes:
        eps: the privacy level ε.
        beta: the failure probability of the confidence event.
    """
    eps: jax.Array    # privacy level
    beta: jax.Array   # failure probability of the confidence event (1/T)


def _epoch_length(xp, e, n_active, eps, beta):
    delta = 2.0 ** (-e)
    stat = 8.0 / delta ** 2 * xp.log(8.0 * n_active * e ** 2 / beta)
    priv = 4.0 / (eps * delta) * xp.log(4.0 * n_active * e ** 2 / beta)
    return xp.ceil(xp.maximum(stat, priv))


def dp_se_epoch_length(e, n_active, eps, beta):
    r"""``R_e`` of the module docstring, on the host (NumPy float64; ``e >= 1``).

    Args:
        e: the epoch (>= 1).
        n_active: the number of active arms.
        eps: the privacy level ε.
        beta: the failure probability β.

    Returns:
        ``R_e`` (float64).
    """
    return _epoch_length(np, np.asarray(e, np.float64), np.asarray(n_active, np.float64), np.asarray(eps, np.float64),
                         np.asarray(beta, np.float64))


@arms_factory
def dp_se(K: int) -> Learner:
    """DP-SE over ``K`` arms (module docstring). Params: :class:`DPSEParams` ``(eps, beta)``.

    Info: ``eliminated`` (the number of arms eliminated this round: nonzero only at the end of an epoch).

    Args:
        K: the number of arms (static).

    Returns:
        The :class:`jaxdp.Learner`.
    """
    f = fdt()
    arms = jnp.arange(K)

    def length(e, n_active, params):
        return _epoch_length(jnp, e.astype(f), n_active.astype(f), params.eps, params.beta)

    def schedule(active, cnt, R, prio):
        """Round robin: among the active arms with the fewest pulls this epoch, the one first in ``prio``."""
        todo = active & (cnt < R)
        low = jnp.min(jnp.where(todo, cnt, jnp.inf))
        nxt = jnp.argmax(jnp.where(todo & (cnt == low), prio, -1.0))
        return jnp.where(jnp.any(todo), nxt, jnp.argmax(active)).astype(jnp.int32)

    def init(key, params):
        prio = random_priority(key, K)
        active = jnp.ones((K,), bool)
        e = jnp.ones((), jnp.int32)
        z = jnp.zeros((K,), f)
        R = length(e, jnp.asarray(K), params)
        return DPSEState(x=schedule(active, z, R, prio), active=active, e=e, R=R, cnt=z, sums=z, noisy=z, prio=prio)

    def step(key, s, observed, params):
        oh = arms == s.x
        cnt = s.cnt + oh
        sums = s.sums + jnp.where(oh, 1.0 - observed, 0.0)
        completes = oh & (cnt >= s.R) & (s.cnt < s.R)
        release = sums / s.R + jax.random.laplace(key, (), f) / (params.eps * s.R)
        noisy = jnp.where(completes, release, s.noisy)
        n_active = jnp.sum(s.active)
        epoch_end = jnp.all(~s.active | (cnt >= s.R)) & (n_active > 1)
        delta_e = 2.0 ** (-s.e.astype(f))
        top = jnp.max(jnp.where(s.active, noisy, -jnp.inf))
        survivors = s.active & (noisy >= top - delta_e)
        e_next = s.e + 1
        R_next = length(e_next, jnp.sum(survivors), params)
        active = jnp.where(epoch_end, survivors, s.active)
        e = jnp.where(epoch_end, e_next, s.e)
        R = jnp.where(epoch_end, R_next, s.R)
        cnt = jnp.where(epoch_end, 0.0, cnt)
        sums = jnp.where(epoch_end, 0.0, sums)
        return DPSEState(x=schedule(active, cnt, R, s.prio), active=active, e=e, R=R, cnt=cnt, sums=sums, noisy=noisy,
                         prio=s.prio), \
            {"eliminated": jnp.where(epoch_end, jnp.sum(s.active) - jnp.sum(survivors), 0).astype(jnp.int32)}

    return bandit_learner(init, step)
