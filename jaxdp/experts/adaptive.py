"""Adaptive adversaries for prediction with experts: they watch the actions played (docs/guide/concepts.md#adversary).

The oblivious adversaries of :mod:`jaxdp.experts.adversaries` fix the loss sequence in advance. These
are :class:`jaxdp.core.types.AdaptiveAdversary` s: the loss of round ``t`` depends on the actions played
in rounds ``< t`` (never on the action of round ``t``, the learner's current randomised choice). Both
online papers leave this case open: Hedge-style learners that redraw their action each round keep their
regret bound against such an adversary, while a lazy learner keeps its action for long stretches, so an
adversary that sees the action can put loss on it until the next switch ("Our regret bound may be
invalid with an adaptive adversary", footnote 3 of "Private Online Learning via Lazy Algorithms").

* :func:`punish_last_action` — loss 1 on the action played in the previous round, 0 elsewhere.
* :func:`switch_watcher` — loss 1 on the held action once the learner has held it for ``patience``
  consecutive rounds, 0 otherwise: it spares a learner that redraws every round and punishes one that
  sits on its action between switches.
* :func:`adaptive_lazy_epochs` — the lower-bound construction of Theorem 4.2 of "Private Online Learning via
  Lazy Algorithms" (epochs of one ``Ber(1/2)^d`` loss vector), with loss 1 moved onto the expert played in
  the previous round.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..core.random import bernoulli_half
from ..core.types import AdaptiveAdversary, fdt
from ..core.validation import check_positive_int, params_type_check
from .adversaries import LazyEpochsParams, lazy_epochs_layout

__all__ = ["punish_last_action", "SwitchWatcherParams", "switch_watcher_params", "switch_watcher",
           "adaptive_lazy_epochs"]


class _Watch(NamedTuple):
    held: jax.Array       # int32: the action played in the previous round (-1 before round 1)
    run: jax.Array        # int32: for how many consecutive rounds it has been played
    patience: jax.Array   # int32: the run length from which the held action is punished


class SwitchWatcherParams(NamedTuple):
    """Parameters of :func:`switch_watcher` (:func:`switch_watcher_params`).

    Attributes:
        patience: the int32 number of consecutive rounds an action must be held before it is punished.
    """
    patience: jax.Array


def switch_watcher_params(patience: int = 2) -> SwitchWatcherParams:
    """Validated parameters for :func:`switch_watcher`.

    Args:
        patience: the number of consecutive rounds (>= 1) an action must be held before it is punished;
            1 punishes every repeated action, as :func:`punish_last_action` does.

    Returns:
        :class:`SwitchWatcherParams`.
    """
    return SwitchWatcherParams(patience=jnp.int32(check_positive_int("patience", patience)))


def _punished(s: _Watch, d: int) -> jax.Array:
    """Loss 1 on the held action once it has been held ``patience`` rounds, else zeros."""
    return jnp.where(s.run >= s.patience, jax.nn.one_hot(s.held, d, dtype=fdt()), jnp.zeros((d,), fdt()))


def _watcher(d: int) -> AdaptiveAdversary:
    d = check_positive_int("d", d, minimum=2)

    def init(key, params):
        del key   # deterministic given the actions
        return _Watch(held=jnp.int32(-1), run=jnp.int32(0), patience=jnp.asarray(params.patience, jnp.int32))

    def loss(s, t):
        return _punished(s, d)

    def observe(s, t, action, outputs):
        x = jnp.asarray(action, jnp.int32)
        return _Watch(held=x, run=jnp.where(x == s.held, s.run + 1, 1), patience=s.patience)

    # adv_params of the wrong type are refused before compiling (jaxdp.core.validation.check_adversary_params)
    loss.host_check = params_type_check(  # type: ignore[attr-defined]
        "switch_watcher", SwitchWatcherParams, "switch_watcher_params(patience)")
    return AdaptiveAdversary(init=init, loss=loss, observe=observe)


def switch_watcher(d: int) -> AdaptiveAdversary:
    """Loss 1 on the action the learner has held for at least ``patience`` consecutive rounds up to the
    previous one, 0 elsewhere (all zeros otherwise, and in round 0).

    Against a learner that redraws its action from a spread distribution every round, long runs are rare
    (probability about ``d^-(patience-1)`` each round) and it sees almost no loss; against a lazy learner
    (shrinking dartboard, batched L2P) it puts loss on the held action until the learner switches, so the
    learner pays about one per round while the best expert pays about ``T/d``: linear regret. This is the
    adversary behind the footnote of "Private Online Learning via Lazy Algorithms" that its regret bounds
    may fail against adaptive adversaries.

    Args:
        d: the number of experts.

    Returns:
        The :class:`jaxdp.core.types.AdaptiveAdversary` (params :class:`SwitchWatcherParams`).
    """
    return _watcher(d)


def punish_last_action(d: int) -> AdaptiveAdversary:
    """Loss 1 on the action played in the previous round, 0 elsewhere (all zeros in round 0).

    The simplest adaptive adversary: ``l_t = e_{x_{t-1}}``. A learner pays in round ``t`` exactly when
    it repeats its previous action, and the best expert pays the number of times it was played (at most
    ``T/d`` for the least played one). A learner that redraws from a near-uniform distribution keeps its
    regret small; a deterministic one (follow-the-leader) or a lazy one repeats predictably and suffers
    linear regret (the standard argument that adaptive adversaries defeat deterministic learners).
    ``switch_watcher`` with ``patience = 1``; its ``adv_params`` are ignored (pass ``None``).

    Args:
        d: the number of experts.

    Returns:
        The :class:`jaxdp.core.types.AdaptiveAdversary`.
    """
    d = check_positive_int("d", d, minimum=2)

    def init(key, params):
        del key, params   # deterministic given the actions; no parameters
        return _Watch(held=jnp.int32(-1), run=jnp.int32(0), patience=jnp.int32(1))

    return _watcher(d)._replace(init=init, loss=lambda s, t: _punished(s, d))


class _Epochs(NamedTuple):
    key: jax.Array        # the epoch losses' key: the one adv_lazy_epochs draws them from
    held: jax.Array       # int32: the action played in the previous round (-1 before round 1)
    params: LazyEpochsParams


def adaptive_lazy_epochs(d: int) -> AdaptiveAdversary:
    """The lower-bound instance of LAZY Thm 4.2 re-targeted onto the played expert: in epoch ``e`` the loss is
    the epoch's ``l^{(e)} ~ Ber(1/2)^d`` (the oblivious :func:`jaxdp.experts.adv_lazy_epochs`, the same draws
    for the same key) with the coordinate of the previous round's action set to 1:

    ``l_t = max(l^{(e(t))}, e_{x_{t-1}})`` (``l_0 = l^{(0)}``), with ``E = (Tε)^{4/3}`` epochs of
    ``B_ep = T/E`` rounds (:func:`jaxdp.experts.lazy_epochs_layout`; ``epoch_len > 0`` fixes ``B_ep``).

    "Private Online Learning via Lazy Algorithms", Theorem 4.2 (proof in its Appendix C) shows that an
    ``ε²``-CDP algorithm which switches its model only by resampling (Condition 4.1) has regret
    ``Ω(√T + T^{1/3} ε^{-2/3})`` on the oblivious epochs: a learner that keeps its model through an epoch pays
    ``B_ep/2`` there. Its footnote 3 warns that the regret bounds may fail against an adaptive adversary; this
    is the adaptive version of that construction: a learner that keeps its model pays 1 in every round it
    holds it (instead of 1/2 on average), so a lazy learner's regret is about ``T/2``, linear, while a learner
    that redraws from a spread distribution every round repeats with probability about ``1/d`` and each
    expert's extra loss is about what the learner's is. The marginal of every epoch vector is unchanged, so
    the oblivious and adaptive instances differ only through what the adversary saw.

    Args:
        d: the number of experts (>= 2).

    Returns:
        The :class:`jaxdp.core.types.AdaptiveAdversary` (params :class:`jaxdp.experts.LazyEpochsParams`).
    """
    d = check_positive_int("d", d, minimum=2)

    def init(key, params):
        _, k_loss, _ = jax.random.split(key, 3)   # the layout of adv_lazy_epochs: equal keys, equal epochs
        return _Epochs(key=k_loss, held=jnp.int32(-1), params=params)

    def loss(s, t):
        E, B_ep = lazy_epochs_layout(s.params.T, s.params.eps, s.params.epoch_len)
        e = jnp.minimum(t // B_ep, E - 1)
        base = bernoulli_half(jax.random.fold_in(s.key, e), (d,)).astype(fdt())
        return jnp.maximum(base, jax.nn.one_hot(s.held, d, dtype=fdt()))   # one_hot(-1) is all zeros

    def observe(s, t, action, outputs):
        return s._replace(held=jnp.asarray(action, jnp.int32))

    loss.host_check = params_type_check(  # type: ignore[attr-defined]
        "adaptive_lazy_epochs", LazyEpochsParams, "LazyEpochsParams(T, eps, epoch_len)")
    return AdaptiveAdversary(init=init, loss=loss, observe=observe)
