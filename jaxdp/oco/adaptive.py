"""Adaptive adversaries for online convex optimization: they watch the iterates played
(docs/guide/concepts.md#adversary; the experts analogues are in :mod:`jaxdp.experts.adaptive`).

The loss of round ``t`` depends on the iterates of rounds ``< t`` only
(:class:`jaxdp.core.types.AdaptiveAdversary`). "Near-Optimal Algorithms for Private Online Optimization in the
Realizable Regime" (Section 2) restricts itself to oblivious adversaries and notes that its algorithms' privacy
holds against adaptive ones; these adversaries test what happens to their regret.

* :func:`toward_last_iterate` — the linear loss ``g_t = L x_{t-1} / ||x_{t-1}||`` pointing at the
  previous iterate (``L e_0`` while that iterate is 0).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core.types import AdaptiveAdversary, fdt
from ..core.validation import check_positive, check_positive_int, params_type_check

__all__ = ["TowardIterateParams", "toward_iterate_params", "toward_last_iterate", "ADAPTIVE_OCO_LEARNERS",
           "ADAPTIVE_OCO_ADVERSARIES", "adaptive_oco_learner", "adaptive_oco_adversary", "adaptive_learner",
           "adaptive_adversary", "tuned_oblivious_bound"]


class TowardIterateParams(NamedTuple):
    """Parameters of :func:`toward_last_iterate` (:func:`toward_iterate_params`).

    Attributes:
        L: the gradient norm ``||g_t|| = L``.
    """
    L: jax.Array


def toward_iterate_params(L: float = 1.0) -> TowardIterateParams:
    """Validated parameters for :func:`toward_last_iterate`.

    Args:
        L: the gradient norm (> 0).

    Returns:
        :class:`TowardIterateParams`.
    """
    check_positive("L", L)
    return TowardIterateParams(L=jnp.asarray(L, fdt()))


class _Last(NamedTuple):
    x: jax.Array   # (d,) the iterate played in the previous round (0 before round 1)
    L: jax.Array


def toward_last_iterate(d: int) -> AdaptiveAdversary:
    """Linear losses ``g_t = L x_{t-1} / ||x_{t-1}||`` for ``linear_problem(d)``: the OCO analogue of
    :func:`jaxdp.experts.adaptive.punish_last_action`.

    The loss ``<g_t, x_t>`` is largest when the learner stays where it was: a learner whose iterate moves
    little between rounds (a lazy or a heavily regularised one) pays about ``L ||x||`` per round, while the
    best fixed point pays ``-D ||sum_t g_t||``. While the previous iterate is 0 (and in round 0) the
    gradient is the fixed direction ``L e_0``.

    Args:
        d: the dimension.

    Returns:
        The :class:`jaxdp.core.types.AdaptiveAdversary` (params :class:`TowardIterateParams`).
    """
    d = check_positive_int("d", d)
    e0 = jnp.zeros((d,), fdt()).at[0].set(1.0)

    def init(key, params):
        del key   # deterministic given the iterates
        return _Last(x=jnp.zeros((d,), fdt()), L=jnp.asarray(params.L, fdt()))

    def loss(s, t):
        n = jnp.linalg.norm(s.x)
        return s.L * jnp.where(n > 0, s.x / jnp.where(n > 0, n, 1.0), e0)

    def observe(s, t, action, outputs):
        return s._replace(x=jnp.asarray(action, fdt()))

    # adv_params of the wrong type are refused before compiling (jaxdp.core.validation.check_adversary_params)
    loss.host_check = params_type_check(  # type: ignore[attr-defined]
        "toward_last_iterate", TowardIterateParams, "toward_iterate_params(L)")
    return AdaptiveAdversary(init=init, loss=loss, observe=observe)


ADAPTIVE_OCO_LEARNERS = ("dp_ftrl", "l2p_rmw")
ADAPTIVE_OCO_ADVERSARIES = ("linear", "toward_last")


def adaptive_oco_learner(name: str, d: int, T: int, eps: float, delta: float) -> tuple:
    """An OCO learner on the unit ball with linear losses, tuned for horizon ``T``, and its oblivious regret bound
    (the ``adaptive-regret`` study's OCO rows; the experts rows: :func:`jaxdp.experts.adaptive_experts_learner`).

    ``dp_ftrl``: the registry's ``jaxdp compare`` built-in (DP-FTRL, general setting) with the bound
    ``dp_ftrl_regret_bound(t, d, ε, δ, 1, 2, 0, "general")``; ``l2p_rmw``: the certified plan of LAZY's DP-OCO
    (``L = 1``, ``D = 2``) with ``l2p_rmw_regret_bound`` at its parameters. Each bound is an order with constants 1
    and does not depend on ``L*``.

    Args:
        name: one of :data:`ADAPTIVE_OCO_LEARNERS`.
        d: the dimension.
        T: the horizon the learner is tuned for.
        eps, delta: the privacy target.

    Returns:
        ``(learner, params, bound)`` with ``bound(t, L*) -> array`` (one value per entry of ``L*``).

    Raises:
        ValueError: an unknown ``name``, or a missing built-in.
    """
    from ..registry import get_learner
    from .dp_ftrl import dp_ftrl_regret_bound
    from .l2p_rmw import l2p_rmw_from_plan, l2p_rmw_regret_bound, plan_l2p_rmw
    from .problems import linear_problem

    if name not in ADAPTIVE_OCO_LEARNERS:
        raise ValueError(f"name must be one of {', '.join(ADAPTIVE_OCO_LEARNERS)}, got {name!r}")
    if name == "dp_ftrl":
        how = get_learner("dp_ftrl").compare
        if how is None:
            raise ValueError("learner 'dp_ftrl' is no compare built-in")
        L, p, _ = how.make(d, T, T, eps, delta, linear_problem(d, 1.0))
        return L, p, lambda t, Ls: np.full(np.shape(Ls), float(
            dp_ftrl_regret_bound(t, d, eps, delta, 1.0, 2.0, 0.0, setting="general")))
    plan = plan_l2p_rmw(eps=eps, delta=delta, T=T, d=d, mode="certified", L=1.0, D=2.0)
    (L, p), q = l2p_rmw_from_plan(plan, d), plan.params
    return L, p, lambda t, Ls: np.full(np.shape(Ls), float(
        l2p_rmw_regret_bound(t, d, q["beta"], q["lam"], 1.0, 2.0, q["B"], q["eta_div"])))


def adaptive_oco_adversary(name: str, d: int, bias: float = 0.2) -> tuple:
    """An OCO adversary of the ``adaptive-regret`` study by name, with its parameters and problem.

    ``linear``: oblivious biased linear losses (:func:`jaxdp.oco.adv_linear_oco`, ``"biased"``, scale 1, ``bias``);
    ``toward_last``: :func:`toward_last_iterate` (scale 1). Both on the unit ball's linear problem.

    Args:
        name: one of :data:`ADAPTIVE_OCO_ADVERSARIES`.
        d: the dimension.
        bias: the oblivious losses' bias.

    Returns:
        ``(adversary, adv_params, problem)``.

    Raises:
        ValueError: an unknown ``name``.
    """
    from .adversaries import adv_linear_oco, linear_oco_params
    from .problems import linear_problem

    if name not in ADAPTIVE_OCO_ADVERSARIES:
        raise ValueError(f"name must be one of {', '.join(ADAPTIVE_OCO_ADVERSARIES)}, got {name!r}")
    adv = (adv_linear_oco(d), linear_oco_params("biased", 1.0, float(bias))) if name == "linear" else \
        (toward_last_iterate(d), toward_iterate_params(1.0))
    return adv + (linear_problem(d, 1.0),)


def adaptive_learner(name: str, d: int, T: int, eps: float, delta: float) -> tuple:
    """Any learner of the ``adaptive-regret`` study by name, tuned for horizon ``T``, with its oblivious bound:
    :func:`adaptive_oco_learner` for :data:`ADAPTIVE_OCO_LEARNERS`, :func:`jaxdp.experts.adaptive_experts_learner`
    for the experts learners.

    Args:
        name: one of :data:`ADAPTIVE_OCO_LEARNERS` or :data:`jaxdp.experts.ADAPTIVE_EXPERTS_LEARNERS`.
        d: the dimension (the number of experts for an experts learner).
        T: the horizon the learner is tuned for.
        eps, delta: the privacy target.

    Returns:
        ``(learner, params, bound)`` with ``bound(t, L*) -> array`` or ``None`` (no bound in the library).

    Raises:
        ValueError: an unknown ``name``.
    """
    from ..experts.adaptive_setups import adaptive_experts_learner

    make = adaptive_oco_learner if name in ADAPTIVE_OCO_LEARNERS else adaptive_experts_learner
    return make(name, d, T, eps, delta)


def adaptive_adversary(name: str, d: int, T: int, epoch_len: int = 32, patience: int = 2, bias: float = 0.2) -> tuple:
    """Any adversary of the ``adaptive-regret`` study by name, with its parameters and problem:
    :func:`adaptive_oco_adversary` for :data:`ADAPTIVE_OCO_ADVERSARIES`,
    :func:`jaxdp.experts.adaptive_experts_adversary` on the experts problem otherwise.

    Args:
        name: one of :data:`ADAPTIVE_OCO_ADVERSARIES` or :data:`jaxdp.experts.ADAPTIVE_EXPERTS_ADVERSARIES`.
        d: the dimension (the number of experts for an experts adversary).
        T: the horizon (the epochs' layout; unused by the OCO adversaries).
        epoch_len, patience: the experts adversaries' epoch length and switch watcher's patience.
        bias: the oblivious linear OCO losses' bias.

    Returns:
        ``(adversary, adv_params, problem)``.

    Raises:
        ValueError: an unknown ``name`` or a parameter out of range.
    """
    from ..experts import experts_problem
    from ..experts.adaptive_setups import adaptive_experts_adversary

    if name in ADAPTIVE_OCO_ADVERSARIES:
        return adaptive_oco_adversary(name, d, float(bias))
    return adaptive_experts_adversary(name, d, T, int(epoch_len), int(patience)) + (experts_problem(),)


def tuned_oblivious_bound(name: str, d: int, T: int, eps: float, delta: float, best_loss: float) -> float:
    """The learner's oblivious regret bound after ``T`` rounds with its parameters tuned for horizon ``T``.

    The bound of :func:`adaptive_learner` (the papers' oblivious bounds: Hedge's ``√(T ln d/2)``, LAZY Thm 3.2 and
    Thm 3.12, REAL Thms 1, 2 and 6–7, DP-FTRL's general setting) evaluated at its own horizon, so that its values
    over several ``T`` trace the exponent in ``T`` the learner's guarantee has when tuned for each horizon.

    Args:
        name: the learner (:func:`adaptive_learner`).
        d: the dimension.
        T: the horizon, tuned for and evaluated at.
        eps, delta: the privacy target.
        best_loss: the best expert's (or point's) loss ``L*`` after ``T`` rounds.

    Returns:
        The bound, NaN where the library states none or where it does not apply (REAL Thms 6–7 at ``L* > 0``).
    """
    bound = adaptive_learner(name, d, int(T), eps, delta)[2]
    return float(bound(int(T), np.asarray([best_loss]))[0]) if bound is not None else float(np.nan)
