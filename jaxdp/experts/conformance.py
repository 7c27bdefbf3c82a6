"""The experts conformance case: the instance :class:`jaxdp.registry.ConformanceCase` entries of experts
learners (here and in :mod:`jaxdp.experts`, :mod:`jaxdp.experts`) are checked on."""
from __future__ import annotations

from typing import Any, Sequence

import jax.numpy as jnp

from ..core import Learner
from .adversaries import BernoulliParams, RealizableBernoulliParams, adv_realizable_bernoulli, bernoulli_experts
from .problem import experts_problem

__all__ = ["experts_case"]


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
