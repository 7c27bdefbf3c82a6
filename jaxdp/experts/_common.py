"""Small helpers shared by the experts modules: the checked params decorator and the realizable-regime planners' checks."""
from __future__ import annotations

import math

from ..privacy.accounting.plan import Plan
from ..core.validation import (check_d, check_delta_for, check_eps_finite, check_mode, check_positive_int,
                                checked_params)
from ..registry import learner_for_plan

__all__ = ["checked_params", "log2_ceil", "params_from_plan", "planner_checks", "REF"]


def log2_ceil(d: int) -> int:
    """``ceil(log2 d)`` (docs/guide/concepts.md#notation: halvings are counted in base 2).

    Args:
        d: a positive integer (e.g. the number of experts).

    Returns:
        The number of halvings that take ``d`` to 1 (0 for ``d <= 1``).
    """
    return int(math.ceil(math.log2(d) - 1e-12)) if d > 1 else 0


REF = "Realizable private online optimization,"


def planner_checks(eps, delta, T, d, mode, modes=("paper", "certified", "rate")):
    """The checks every realizable-experts planner makes first.

    Args:
        eps: the privacy parameter ε (finite, positive).
        delta: the privacy parameter δ in ``[0, 1)``.
        T: the horizon (an integer >= 2).
        d: the number of experts (an integer >= 2).
        mode: the planner mode, one of ``modes``.
        modes: the modes the planner offers.

    Returns:
        ``(eps, delta, T, d, mode)`` validated and converted.
    """
    d = check_d(d)
    eps = float(check_eps_finite(eps))
    delta = check_delta_for(delta, approximate=False)
    T = check_positive_int("T", T, minimum=2)
    mode = check_mode(mode, modes)
    return eps, delta, T, d, mode


def params_from_plan(plan: Plan):
    """The learner's ``Params`` NamedTuple (validated) for a realizable-experts plan: ``plan.to_params()``
    (the registered learner's :meth:`~jaxdp.registry.LearnerEntry.params_from_plan`).

    Args:
        plan: a plan of the matching planner.

    Returns:
        The learner's ``Params``.
    """
    try:
        entry = learner_for_plan(plan)
    except ValueError:
        entry = None
    if entry is None or entry.problem != "realizable-experts":
        raise ValueError(f"not a realizable-experts plan: {plan.algorithm!r}")
    return entry.params_from_plan(plan)

