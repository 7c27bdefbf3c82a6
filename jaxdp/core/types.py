"""The three objects of the engine: ``Learner``, ``Adversary`` and ``Problem``.

All three are ``NamedTuple`` s of pure functions, in the style of
``optax.GradientTransformation`` and ``blackjax.SamplingAlgorithm``.  Anything
that varies across a parameter sweep lives in the ``params`` pytree (traced);
anything that fixes an array shape (``d``, ``T_max``, tree depth) is bound in
the closure when the object is constructed.

"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp

Array = jax.Array
PRNGKey = jax.Array
Params = Any
State = Any
Loss = Any
Info = dict


class Learner(NamedTuple):
    """An online learner: ``init(key, params) -> state`` and
    ``step(key, state, loss, params) -> (state, info)``.

    Semantics of ``step``: the loss incurred this round is
    ``problem.value(loss, state.x)`` (the simulator computes it from the
    state, so a learner cannot misreport it); the learner absorbs ``loss``
    into its statistics and chooses, with ``key``, the action for the next
    round, stored in the returned ``state.x``.

    ``info`` is a flat dict of scalars. Every entry is summed over the active
    rounds by the simulator (booleans count). Reserved names:

    * ``"expected_loss"``: E[loss of this round's action | past], e.g.
      ``<p_t, l_t>`` for Hedge; gives a lower-variance regret estimate.
    * ``"switched"``: the action for the next round differs from this one.

    Lazy algorithms that do rare expensive work once per batch set
    ``block_size`` (a static int >= 1) and ``end_block``: the simulator then runs
    a nested scan, the inner one over ``block_size`` rounds calling ``step``,
    and calls ``end_block(key, state, params) -> (state, info)`` once after
    every block (the batched fast path of lazy algorithms). Under ``vmap`` a
    ``lax.cond`` runs both branches, so this is how a fresh sample is paid
    once per batch and not once per round.

    A learner whose privacy game releases more than its actions (noisy counts,
    flags) sets ``release(state, params) -> outputs``: a pytree of arrays read
    from the state after ``step``. That is what the stronger adaptive model sees
    (:class:`AdaptiveAdversary` with ``sees_outputs``, the adaptive privacy game
    of :mod:`jaxdp.privacy.audit.adaptive`); without it the outputs are ``info``.

    Attributes:
        init: ``init(key, params) -> state``; ``state.x`` is the first action.
        step: ``step(key, state, loss, params) -> (state, info)``: absorb this round's loss, choose the next action.
        block_size: static int >= 1 for lazy learners with an ``end_block`` (default 1: no blocks).
        end_block: ``end_block(key, state, params) -> (state, info)``, called once after every block, or ``None``.
        release: ``release(state, params) -> outputs``, the outputs released after a round beyond the action (a
            pytree of arrays), or ``None``: the released outputs are ``info``.
    """

    init: Callable[[PRNGKey, Params], State]
    step: Callable[[PRNGKey, State, Loss, Params], tuple[State, Info]]
    block_size: int = 1
    end_block: Optional[Callable[[PRNGKey, State, Params], tuple[State, Info]]] = None
    release: Optional[Callable[[State, Params], Any]] = None


def released(learner: Learner, state: State, info: Info, params: Params) -> Any:
    """The outputs ``learner`` releases after a round: ``learner.release(state, params)``, else ``info``.

    Args:
        learner: the learner.
        state: its state after ``step``.
        info: what ``step`` returned beside the state.
        params: its hyperparameters.

    Returns:
        The released outputs (a pytree of arrays).
    """
    return info if learner.release is None else learner.release(state, params)


class Adversary(NamedTuple):
    """An oblivious adversary: ``init(key, adv_params) -> adv_state`` and
    ``loss(adv_state, t) -> loss_t`` for the 0-indexed round ``t``.

    ``loss`` never sees the learner, so it is a pure function of the
    adversary's own key (kept in ``adv_state``) and the round index: every
    learner run with the same seed faces the same loss sequence (common random
    numbers).  Losses are generated from ``fold_in(key, t)`` on the fly, never
    stored as ``(T, d)`` arrays per seed.

    Attributes:
        init: ``init(key, adv_params) -> adv_state``; the adversary's key lives in its state.
        loss: ``loss(adv_state, t) -> loss_t`` for the 0-indexed round ``t``.
    """

    init: Callable[[PRNGKey, Any], Any]
    loss: Callable[[Any, Array], Loss]


class AdaptiveAdversary(NamedTuple):
    """An adaptive adversary: it watches the learner's actions. ``init(key, adv_params) -> adv_state``,
    ``loss(adv_state, t) -> loss_t`` (as :class:`Adversary`) and
    ``observe(adv_state, t, action, outputs) -> adv_state``.

    Information model (what the protocol lets it see): the simulator carries ``adv_state`` in its scan
    and calls ``observe`` at the end of round ``t`` with ``action``, the action ``x_t`` played in round
    ``t``. The loss of round ``t`` is therefore a function of the adversary's own key and of the actions
    of rounds ``< t`` only: the action of round ``t`` is the learner's current randomised choice, drawn
    before ``loss_t`` is known and never visible to it (the adaptive adversary of online learning, e.g.
    "Private Online Prediction from Experts: Separations and Faster Rates", Asi, Feldman, Koren, Talwar).
    ``outputs`` is ``{}`` unless ``sees_outputs``: the stronger model, where the adversary also sees the
    learner's released outputs of round ``t`` (``Learner.release``, else its ``info`` dict: e.g. noisy
    counts or ``switched``, computed once the next action is drawn; the privacy game of "Differentially
    Private Online Learning" style adaptive definitions, Jain et al. 2021).

    The key lives in ``adv_state``, so every learner facing the same strategy with the same seed gets
    the same adversary randomness (common random numbers); the losses differ between learners only
    through what the adversary observed. Regret is against the best fixed action on the realised
    sequence. ``expected_regret`` is NaN against an adaptive adversary: the ``expected_loss`` a learner
    reports is the mean over its own distribution given its statistics, not given what the adversary
    saw (a lazy learner's next action is predictable from its last one), so its sum is not an unbiased
    estimate of the realised loss.

    Attributes:
        init: ``init(key, adv_params) -> adv_state``; the adversary's key lives in its state.
        loss: ``loss(adv_state, t) -> loss_t`` for the 0-indexed round ``t``.
        observe: ``observe(adv_state, t, action, outputs) -> adv_state``, after round ``t``.
        sees_outputs: static; pass the learner's released outputs of round ``t`` as ``outputs`` (default ``False``).
    """

    init: Callable[[PRNGKey, Any], Any]
    loss: Callable[[Any, Array], Loss]
    observe: Callable[[Any, Array, Any, Info], Any]
    sees_outputs: bool = False


class Problem(NamedTuple):
    """How losses act on actions, and how the comparator is computed.

    * ``value(loss, x)``: the loss of action ``x``.
    * ``grad(loss, x)``: its (sub)gradient (``None`` for finite action sets).
    * ``stats_init(loss)``: comparator statistics (any pytree), zero, given one loss.
    * ``stats_update(stats, loss)``: absorb one loss. Long-horizon sums should be
      compensated (``jaxdp.core.accumulate``), as the library's problems do, so
      the comparator stays accurate at ``T = 10^7`` in float32.
    * ``best(stats)``: ``min_x sum_t loss_t(x)``, the best fixed action's
      cumulative loss (from sufficient statistics: the cumulative loss vector
      for experts, ``sum g_t`` for linear losses on a ball).
    * ``best_action(stats)``: the minimizer (for reports).

    Attributes:
        value: ``value(loss, x)``: the loss of action ``x``.
        grad: ``grad(loss, x)``: its (sub)gradient (``None`` for finite action sets).
        stats_init: ``stats_init(loss)``: zero comparator statistics (any pytree), given one loss.
        stats_update: ``stats_update(stats, loss)``: absorb one loss (compensated sums for long horizons).
        best: ``best(stats)``: the best fixed action's cumulative loss ``min_x sum_t loss_t(x)``.
        best_action: ``best_action(stats)``: the minimizer (for reports).
    """

    value: Callable[[Loss, Any], Array]
    grad: Optional[Callable[[Loss, Any], Array]]
    stats_init: Callable[[Loss], Any]
    stats_update: Callable[[Any, Loss], Any]
    best: Callable[[Any], Array]
    best_action: Optional[Callable[[Any], Any]] = None


def fdt():
    """The floating dtype of the learners' and adversaries' arrays: ``float64`` under ``jax_enable_x64``, else
    ``float32``.

    Returns:
        ``jnp.result_type(float)``.
    """
    return jnp.result_type(float)


def tree_where(pred, a, b):
    """Select between two pytrees of the same structure, leaf by leaf: ``jnp.where(pred, a_leaf, b_leaf)``.

    Args:
        pred: the boolean condition (a scalar, or broadcastable to every leaf).
        a: the pytree taken where ``pred`` holds.
        b: the pytree taken elsewhere.

    Returns:
        A pytree of the structure of ``a`` and ``b``.
    """
    return jax.tree_util.tree_map(lambda u, v: jnp.where(pred, u, v), a, b)
