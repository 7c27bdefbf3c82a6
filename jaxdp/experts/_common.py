"""Small helpers shared by the realizable-regime experts planners (Realizable private online optimization)."""
from __future__ import annotations

import math

from ..privacy.accounting.plan import Plan
from ..core.validation import check_d, check_delta_for, check_eps_finite, check_mode, check_positive_int
from ..registry import learner_for_plan

__all__ = ["log2_ceil", "params_from_plan", "planner_checks", "REF"]


def log2_ceil(d: int) -> int:
    """``ceil(log2 d)`` (docs/guide/concepts.md#notation: halvings are counted in base 2).

    Args:
        d: a positive integer (e.g. the number of experts).

    Returns:
        The number of halvings that take ``d`` to 1 (0 for ``d <= 1``).
    """
    return int(math.ceil(math.log2(d) - 1e-12)) if d > 1 else 0


def advanced_composition(eps0: float, k: int, delta_prime: float) -> float:
    """Dwork–Roth advanced composition (REAL Lemma 2.2).

    ``k`` ``eps0``-DP mechanisms are ``(sqrt(2k ln(1/δ')) eps0 + k eps0 (e^eps0 - 1), δ')``-DP.

    Args:
        eps0: the ε of each mechanism.
        k: the number of mechanisms composed.
        delta_prime: the slack ``δ' in (0, 1)``.

    Returns:
        The composed ε (at ``δ'``).
    """
    return math.sqrt(2.0 * k * math.log(1.0 / delta_prime)) * eps0 + k * eps0 * math.expm1(eps0)


def solve_increasing(f, target: float, lo: float = 0.0, hi: float = 1.0, iters: int = 200) -> float:
    """Largest ``x`` in ``[lo, hi']`` with ``f(x) <= target``, for increasing ``f`` (bisection).

    ``hi`` is doubled until ``f(hi) > target`` (``hi'``); if that passes ``1e12`` the doubled ``hi`` is returned.

    Args:
        f: the increasing function of one float.
        target: the value ``f`` must not exceed.
        lo: the lower end of the search (``f(lo) <= target`` is assumed).
        hi: the initial upper end.
        iters: the number of bisection steps.

    Returns:
        The left end of the final bracket (``f`` of it is ``<= target``).
    """
    while f(hi) <= target:
        hi *= 2.0
        if hi > 1e12:
            return hi
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if f(mid) <= target:
            lo = mid
        else:
            hi = mid
    return lo


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

