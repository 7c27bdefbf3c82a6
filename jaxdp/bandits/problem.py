r"""The multi-armed bandit problem: bandit feedback, pseudo-regret and realized regret (docs/algorithms/bandits.md).

A round of a ``K``-armed bandit: the environment fixes a loss vector
``ℓ_t ∈ [0, 1]^K`` (obliviously: a pure function of its own key and
the round index ``t``), the learner plays an arm ``x_t`` and observes
**only** ``ℓ_t(x_t)``.

An adversary emits a :class:`BanditLoss`: the realized losses ``loss`` and
their expectations ``mean`` ``m_t = E[ℓ_t]`` (for Bernoulli
arms with reward means ``μ``, ``m_t = 1 - μ``; for a deterministic
oblivious sequence, ``m_t = ℓ_t``). Two regrets, one per
:func:`bandit_problem`:

* realized regret ``R_T = Σ_t ℓ_t(x_t) - min_i Σ_t ℓ_t(i)``;
* pseudo-regret ``R̄_T = Σ_t m_t(x_t) - min_i Σ_t m_t(i)``. For a
  stationary stochastic bandit it equals ``Σ_i N_i(T) Δ_i``, and its
  expectation is the pseudo-regret ``max_i E[Σ_t ℓ_t(x_t) - ℓ_t(i)]``
  of Bubeck & Cesa-Bianchi (2012), Sec. 1, for any oblivious adversary (``x_t`` is
  independent of ``ℓ_t`` given the past).

Both problems see the same learner and the same adversary stream, so two
``simulate`` calls with the same keys give both regrets of the same runs
(common random numbers).

**Bandit feedback by construction.** :func:`bandit_learner` turns a bandit
step ``step(key, state, observed_loss, params)``, which receives the played
arm's loss as a scalar and nothing else, into an engine
:class:`~jaxdp.core.Learner`; every learner of :mod:`jaxdp.bandits` is built
this way. :func:`jaxdp.bandits.testing.check_bandit_feedback` checks any
``Learner`` for it (its actions must not change when the unplayed arms'
losses do).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp

from ..core.accumulate import packed_add, packed_total, packed_zeros
from ..core.types import Learner, Problem
from ..core.validation import check_choice

__all__ = ["BanditLoss", "bandit_problem", "bandit_learner", "observe", "REGRETS"]

#: the two regrets of :func:`bandit_problem`
REGRETS = ("pseudo", "realized")


class BanditLoss(NamedTuple):
    """One round of a bandit environment: realized losses and their expectations, both ``(K,)`` in ``[0, 1]``.

    Attributes:
        loss: the ``(K,)`` realized losses ``l_t(i)``.
        mean: the ``(K,)`` expected losses ``m_t(i) = E[l_t(i)]``.
    """

    loss: jax.Array   # (K,) realized losses l_t(i)
    mean: jax.Array   # (K,) expected losses m_t(i) = E[l_t(i)]


def _vector(loss: Any, field: str) -> jax.Array:
    return getattr(loss, field) if isinstance(loss, BanditLoss) else loss


def observe(loss: Any, x: jax.Array) -> jax.Array:
    """The bandit feedback ``l_t(x)``: the played arm's realized loss (a scalar).

    ``loss`` is a :class:`BanditLoss` or a plain ``(K,)`` loss vector (an experts adversary, or a
    loss array in :func:`jaxdp.privacy.audit.audit_learner`).

    Args:
        loss: the round's :class:`BanditLoss` or ``(K,)`` loss vector.
        x: the arm played.

    Returns:
        The scalar loss of arm ``x``.
    """
    return _vector(loss, "loss")[x]


def bandit_learner(init: Callable, step: Callable) -> Learner:
    """An engine ``Learner`` whose step sees only the played arm's loss.

    ``step(key, state, observed_loss, params) -> (state, info)``: ``observed_loss`` is the scalar
    ``l_t(state.x)`` (:func:`observe`); the returned ``state.x`` is the arm for the next round.
    ``init(key, params) -> state`` with the first arm in ``state.x`` (an ``int32`` scalar).

    Args:
        init: ``init(key, params) -> state``.
        step: ``step(key, state, observed_loss, params) -> (state, info)``.

    Returns:
        The :class:`jaxdp.Learner`.
    """

    def full_step(key, state, loss, params):
        return step(key, state, observe(loss, state.x), params)

    return Learner(init=init, step=full_step)


@functools.lru_cache(maxsize=None)
def bandit_problem(regret: str = "pseudo") -> Problem:
    r"""The bandit :class:`~jaxdp.core.Problem` whose engine ``regret`` is the pseudo- or the realized regret.

    ``regret="pseudo"``: ``value(l, x) = l.mean[x]`` and the comparator is
    ``min_i Σ_t m_t(i)``; ``regret="realized"``: ``value(l, x) = l.loss[x]`` and
    ``min_i Σ_t ℓ_t(i)``. The cumulative vectors are compensated (Kahan) sums,
    accurate to a few ulps at ``T = 10^7`` in float32. A plain loss vector (an experts
    adversary) is its own mean. An arm outside ``[0, K)`` incurs a NaN loss (the engine's
    range check reads plain loss vectors only), so ``simulate`` returns a NaN regret and
    :func:`jaxdp.testing.check_learner` fails ``[finite]``.

    Args:
        regret: ``"pseudo"`` or ``"realized"``.

    Returns:
        The :class:`~jaxdp.core.Problem`.

    Raises:
        ValueError: an unknown ``regret``.
    """
    regret = check_choice("regret", regret, REGRETS)
    field = "mean" if regret == "pseudo" else "loss"

    def value(loss, x):
        v = _vector(loss, field)
        K = v.shape[0]
        ok = (x >= 0) & (x < K)
        return jnp.where(ok, v[jnp.clip(x, 0, K - 1)], jnp.nan)

    def stats_init(loss):
        return packed_zeros(_vector(loss, field), jnp.result_type(float))

    def stats_update(stats, loss):
        return packed_add(stats, _vector(loss, field))

    def best(stats):
        return jnp.min(packed_total(stats))

    def best_action(stats):
        return jnp.argmin(packed_total(stats))

    return Problem(value=value, grad=None, stats_init=stats_init, stats_update=stats_update, best=best,
                   best_action=best_action)
