"""The experts conformance cases: the test problem (:func:`experts_case`) and the builder of every registered
experts learner's :class:`jaxdp.registry.ConformanceCase`.

An algorithm module names its case by reference (``ConformanceCase("jaxdp.experts.conformance:l2p_mw_case")``,
imported on first use), so reading the algorithm does not open the adversaries its test problem draws from.
Each builder ``name_case(d, T)`` returns ``(learner, adversary, problem, params_list, adv_params)``: the learner
the registry builds for ``d`` experts and horizon ``T``, two of its parameter settings, and the planted-gap
(or, for the realizable-experts learners, the zero-loss-expert) Bernoulli adversary.
"""
from __future__ import annotations

from typing import Any, Sequence

import jax.numpy as jnp

from ..core import Learner
from ..registry import get_learner
from .adversaries import BernoulliParams, RealizableBernoulliParams, adv_realizable_bernoulli, bernoulli_experts
from .binary_tree import plan_binary_tree_experts
from .dartboard import shrinking_dartboard
from .ftpl import ftpl
from .hedge import HedgeParams, hedge, hedge_params
from .l2p_mw import l2p_mw, l2p_mw_params
from .potential import guarded_potential_experts, potential_experts, potential_params
from .problem import experts_problem
from .sketch import private_lazy_sketch, sketch_params
from .sparse_vector import (
    adaptive_sparse_vector_experts,
    plan_adaptive_sparse_vector_experts,
    sparse_vector_experts,
    sparse_vector_params,
)
from .tree_ftrl import tree_ftrl_experts, tree_ftrl_params

__all__ = [
    "experts_case", "hedge_case", "shrinking_dartboard_case", "ftpl_case", "l2p_mw_case", "tree_ftrl_case",
    "private_lazy_sketch_case", "sparse_vector_case", "adaptive_sparse_vector_case", "binary_tree_case",
    "potential_case", "guarded_potential_case",
]


def experts_case(learner: Learner, d: int, params_list: Sequence[Any], realizable: bool = False) -> tuple:
    """``(learner, adversary, problem, params_list, adv_params)`` of an experts learner over ``d`` experts,
    as a :class:`jaxdp.registry.ConformanceCase` builds it: i.i.d. Bernoulli losses with a planted
    expert (gap 0.1), or, with ``realizable=True``, Bernoulli(1/2) losses with a zero-loss expert.

    Args:
        learner: the experts learner under test.
        d: the number of experts.
        params_list: the learner's parameter sets to check (e.g. one per ε).
        realizable: use the realizable adversary (one expert has zero loss) instead of the planted-gap one.

    Returns:
        The tuple ``(learner, adversary, experts_problem(), list(params_list), adversary params)`` that
        :func:`jaxdp.testing.check_learner` takes.
    """
    ap: Any
    if realizable:
        adv, ap = adv_realizable_bernoulli(d), RealizableBernoulliParams(q=jnp.float32(0.5), q_star=jnp.float32(0.0))
    else:
        adv, ap = bernoulli_experts(d), BernoulliParams(gap=jnp.float32(0.1))
    return learner, adv, experts_problem(), list(params_list), ap


# --------------------------------------------------------------------------- experts (planted gap)


def _eta_01_03() -> list:
    return [HedgeParams(eta=jnp.float32(0.1)), HedgeParams(eta=jnp.float32(0.3))]


def hedge_case(d: int, T: int) -> tuple:
    """Hedge at the standard tuning ``η = sqrt(8 ln d / T)`` and at ``η = 0.5``.

    Args:
        d, T: the case's number of experts and horizon.

    Returns:
        The case (:func:`experts_case`).
    """
    return experts_case(hedge(d), d, [hedge_params(d, T), hedge_params(d, T, eta=0.5)])


def shrinking_dartboard_case(d: int, T: int) -> tuple:
    """The shrinking dartboard at ``η = 0.1`` and ``0.3``.

    Args:
        d, T: the case's number of experts and horizon.

    Returns:
        The case (:func:`experts_case`).
    """
    return experts_case(shrinking_dartboard(d), d, _eta_01_03())


def ftpl_case(d: int, T: int) -> tuple:
    """Follow the perturbed leader (its default exponential noise) at ``η = 0.1`` and ``0.3``.

    Args:
        d, T: the case's number of experts and horizon.

    Returns:
        The case (:func:`experts_case`).
    """
    return experts_case(ftpl(d), d, _eta_01_03())


def l2p_mw_case(d: int, T: int) -> tuple:
    """L2P-MW at ``(η, p, B) = (0.05, 0.2, 4)`` and ``(0.1, 0.5, 4)``.

    Args:
        d, T: the case's number of experts and horizon.

    Returns:
        The case (:func:`experts_case`).
    """
    return experts_case(l2p_mw(d), d, [l2p_mw_params(0.05, 0.2, 4), l2p_mw_params(0.1, 0.5, 4)])


def tree_ftrl_case(d: int, T: int) -> tuple:
    """Binary-tree noisy Hedge sized for ``T``, calibrated to ``(ε, δ) = (1, 1e-5)`` and ``(0.5, 1e-5)``.

    Args:
        d, T: the case's number of experts and horizon.

    Returns:
        The case (:func:`experts_case`).
    """
    return experts_case(tree_ftrl_experts(d, T), d, [tree_ftrl_params(d, T, 1.0, 1e-5),
                                                    tree_ftrl_params(d, T, 0.5, 1e-5)])


def private_lazy_sketch_case(d: int, T: int) -> tuple:
    """The prior low-switching template at ``(η, p) = (0.1, 0.1)`` and ``(0.3, 0)`` (``p = 0``: never redraw).

    Args:
        d, T: the case's number of experts and horizon.

    Returns:
        The case (:func:`experts_case`).
    """
    return experts_case(private_lazy_sketch(d), d, [sketch_params(0.1, 0.1), sketch_params(0.3, 0.0)])


# --------------------------------------------------------------------------- realizable experts (a zero-loss expert)


def sparse_vector_case(d: int, T: int) -> tuple:
    """Sparse-vector experts, known L*, at ``(ε_svt, η, K, L) = (0.5, 0.05, 5, 6)`` and ``(1, 0.2, 3, 10)``.

    Args:
        d, T: the case's number of experts and horizon.

    Returns:
        The case (:func:`experts_case`, realizable).
    """
    return experts_case(sparse_vector_experts(d), d, [sparse_vector_params(0.5, 0.05, 5, 6.0),
                                                      sparse_vector_params(1.0, 0.2, 3, 10.0)], realizable=True)


def adaptive_sparse_vector_case(d: int, T: int) -> tuple:
    """Sparse-vector experts with unknown L* at the ``rate`` plans for ``ε = 1`` and ``2``.

    Args:
        d, T: the case's number of experts and horizon.

    Returns:
        The case (:func:`experts_case`, realizable).
    """
    entry = get_learner("adaptive_sparse_vector")
    plans = [plan_adaptive_sparse_vector_experts(eps=e, T=T, d=d, mode="rate") for e in (1.0, 2.0)]
    return experts_case(adaptive_sparse_vector_experts(d), d, [entry.params_from_plan(p) for p in plans],
                        realizable=True)


def binary_tree_case(d: int, T: int) -> tuple:
    """Binary-tree experts built from the ``rate`` plan for ``ε = 1``, at the plans for ``ε = 1`` and ``4``.

    Args:
        d, T: the case's number of experts and horizon.

    Returns:
        The case (:func:`experts_case`, realizable).
    """
    entry = get_learner("binary_tree")
    plans = [plan_binary_tree_experts(eps=e, T=T, d=d, mode="rate") for e in (1.0, 4.0)]
    learner, _ = entry.learner_from_plan(plans[0], d)
    return experts_case(learner, d, [entry.params_from_plan(p) for p in plans], realizable=True)


def _potential_settings() -> list:
    return [potential_params(0.5, 0.1, 4), potential_params(1.0, 0.3, 2, s_phi=1.0)]


def potential_case(d: int, T: int) -> tuple:
    """Potential-based experts at ``(ε0, η, K) = (0.5, 0.1, 4)`` and ``(1, 0.3, 2)`` (the second with ``s_φ = 1``).

    Args:
        d, T: the case's number of experts and horizon.

    Returns:
        The case (:func:`experts_case`, realizable).
    """
    return experts_case(potential_experts(d), d, _potential_settings(), realizable=True)


def guarded_potential_case(d: int, T: int) -> tuple:
    """Potential-based experts with the own-loss guard, at the settings of :func:`potential_case`.

    Args:
        d, T: the case's number of experts and horizon.

    Returns:
        The case (:func:`experts_case`, realizable).
    """
    return experts_case(guarded_potential_experts(d), d, _potential_settings(), realizable=True)
