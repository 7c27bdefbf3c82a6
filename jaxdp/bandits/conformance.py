"""The bandit conformance cases: the builder of every registered bandit learner's
:class:`jaxdp.registry.ConformanceCase`.

The registrations (``jaxdp.bandits._registry``) name their case by reference
(``ConformanceCase("jaxdp.bandits.conformance:dp_ucb_tree_case")``, imported on first use). Every case runs
Bernoulli arms with means ``linspace(0.2, 0.8, K)`` on the pseudo-regret problem (:func:`bandits_case`); each
builder ``name_case(d, T)`` returns ``(learner, adversary, problem, params_list, adv_params)`` with the learner
for ``d`` arms and two of its parameter settings.
"""
from __future__ import annotations

from typing import Any, Sequence

import jax.numpy as jnp
import numpy as np

from ..core import Learner
from .adversaries import BernoulliArmsParams, bernoulli_arms
from .elimination import DPSEParams, dp_se
from .exp3 import DPExp3Params, Exp3IXParams, Exp3Params, dp_exp3, exp3, exp3_ix
from .problem import bandit_problem
from .thompson import ThompsonParams, thompson
from .ucb import DPUCBParams, LDPUCBParams, UCB1Params, dp_ucb_tree, ldp_ucb, ucb1

__all__ = ["bandits_case", "ucb1_case", "thompson_case", "exp3_case", "exp3_ix_case", "dp_ucb_tree_case",
           "dp_se_case", "dp_exp3_case", "ldp_ucb_case"]

f32 = jnp.float32


def bandits_case(learner: Learner, d: int, params_list: Sequence[Any]) -> tuple:
    """``(learner, adversary, problem, params_list, adv_params)`` of a bandit learner over ``d`` arms: Bernoulli
    arms with means ``linspace(0.2, 0.8, d)``, the pseudo-regret problem.

    Args:
        learner: the bandit learner under test.
        d: the number of arms.
        params_list: the learner's parameter sets to check.

    Returns:
        The tuple :func:`jaxdp.testing.check_learner` takes.
    """
    ap = BernoulliArmsParams(jnp.asarray(np.linspace(0.2, 0.8, d), f32))
    return learner, bernoulli_arms(d), bandit_problem("pseudo"), list(params_list), ap


def _f(*vals):
    return [f32(v) for v in vals]


def ucb1_case(d: int, T: int) -> tuple:
    """UCB1 at ``c = 2`` and ``1``.

    Args:
        d, T: the case's number of arms and horizon.

    Returns:
        The case (:func:`bandits_case`).
    """
    return bandits_case(ucb1(d), d, [UCB1Params(f32(2.0)), UCB1Params(f32(1.0))])


def thompson_case(d: int, T: int) -> tuple:
    """Thompson sampling with the Beta(1, 1) and Beta(0.5, 2) priors.

    Args:
        d, T: the case's number of arms and horizon.

    Returns:
        The case (:func:`bandits_case`).
    """
    return bandits_case(thompson(d), d, [ThompsonParams(*_f(1, 1)), ThompsonParams(*_f(0.5, 2))])


def exp3_case(d: int, T: int) -> tuple:
    """EXP3 at ``(γ, η, explore_first) = (0.1, 0.03, 1)`` and ``(0.2, 0.05, 0)``.

    Args:
        d, T: the case's number of arms and horizon.

    Returns:
        The case (:func:`bandits_case`).
    """
    return bandits_case(exp3(d), d, [Exp3Params(*_f(0.1, 0.03, 1)), Exp3Params(*_f(0.2, 0.05, 0))])


def exp3_ix_case(d: int, T: int) -> tuple:
    """EXP3-IX at ``(η, γ) = (0.1, 0.05)`` and ``(0.2, 0)``.

    Args:
        d, T: the case's number of arms and horizon.

    Returns:
        The case (:func:`bandits_case`).
    """
    return bandits_case(exp3_ix(d), d, [Exp3IXParams(*_f(0.1, 0.05)), Exp3IXParams(*_f(0.2, 0.0))])


def dp_ucb_tree_case(d: int, T: int) -> tuple:
    """DP-UCB with trees sized for ``T``, at node scale ``b = 7`` and ``0`` (no noise).

    Args:
        d, T: the case's number of arms and horizon.

    Returns:
        The case (:func:`bandits_case`).
    """
    return bandits_case(dp_ucb_tree(d, T), d, [DPUCBParams(f32(7.0)), DPUCBParams(f32(0.0))])


def dp_se_case(d: int, T: int) -> tuple:
    """DP-SE at ``(ε, β) = (50, 0.9)`` and ``(5, 0.9)``.

    Args:
        d, T: the case's number of arms and horizon.

    Returns:
        The case (:func:`bandits_case`).
    """
    return bandits_case(dp_se(d), d, [DPSEParams(*_f(50.0, 0.9)), DPSEParams(*_f(5.0, 0.9))])


def dp_exp3_case(d: int, T: int) -> tuple:
    """DP-EXP3 at ``(η, γ, b, B, τ) = (0.1, 0.2, 1, 3, 1)`` and ``(0.2, 0.3, 0.5, 2, 3)``.

    Args:
        d, T: the case's number of arms and horizon.

    Returns:
        The case (:func:`bandits_case`).
    """
    return bandits_case(dp_exp3(d), d, [DPExp3Params(*_f(0.1, 0.2, 1.0, 3.0), jnp.int32(1)),  # type: ignore[call-arg]
                                        DPExp3Params(*_f(0.2, 0.3, 0.5, 2.0), jnp.int32(3))])  # type: ignore[call-arg]


def ldp_ucb_case(d: int, T: int) -> tuple:
    """LDP-UCB at reward noise scale ``b = 1`` and ``0``.

    Args:
        d, T: the case's number of arms and horizon.

    Returns:
        The case (:func:`bandits_case`).
    """
    return bandits_case(ldp_ucb(d), d, [LDPUCBParams(f32(1.0)), LDPUCBParams(f32(0.0))])
