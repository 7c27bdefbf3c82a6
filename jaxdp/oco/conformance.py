"""The OCO conformance cases: the builder of every registered OCO learner's :class:`jaxdp.registry.ConformanceCase`.

An algorithm module names its case by reference (``ConformanceCase("jaxdp.oco.conformance:dp_ftrl_case", d=3)``,
imported on first use), so reading the algorithm does not open the adversaries and problems its test problem
draws from. Each builder ``name_case(d, T)`` returns ``(learner, adversary, problem, params_list, adv_params)``:
linear losses with a bias (``linear_oco_params("biased", L=1, bias=0.3)``) for FTRL, DP-FTRL and L2P-RMW, and
the smooth realizable squared losses for the grid learners of REAL Thm 3 and App. C.
"""
from __future__ import annotations

from ..registry import get_learner
from .adversaries import adv_linear_oco, adv_smooth_realizable, linear_oco_params, smooth_realizable_params
from .dp_ftrl import dp_ftrl, dp_ftrl_params
from .l2p_rmw import l2p_rmw, l2p_rmw_params
from .problems import linear_problem, squared_problem
from .realizable import experts_oco_net_params, plan_experts_oco_net, plan_potential_oco, potential_oco_params

__all__ = ["ftrl_case", "dp_ftrl_case", "l2p_rmw_case", "experts_oco_net_case", "potential_oco_case"]


# --------------------------------------------------------------------------- linear losses


def _linear_case(learner_params: list, d: int, T: int) -> tuple:
    """DP-FTRL on the unit ball (its tree sized for ``T``) against biased linear losses."""
    prob = linear_problem(d, 1.0)
    return (dp_ftrl(prob, T), adv_linear_oco(d), prob, learner_params,
            linear_oco_params("biased", L=1.0, bias=0.3))


def ftrl_case(d: int, T: int) -> tuple:
    """FTRL (DP-FTRL with ``σ = 0``) at ``λ = 4`` and ``2``, clip 1: the same learner object as
    :func:`dp_ftrl_case`, so the two cases share one compilation.

    Args:
        d, T: the case's dimension and horizon.

    Returns:
        ``(learner, adversary, problem, params_list, adv_params)``.
    """
    return _linear_case([dp_ftrl_params(4.0, 0.0, 1.0), dp_ftrl_params(2.0, 0.0, 1.0)], d, T)


def dp_ftrl_case(d: int, T: int) -> tuple:
    """DP-FTRL at ``(λ, σ, clip) = (5, 0.5, 2)`` and ``(20, 2, 1)``.

    Args:
        d, T: the case's dimension and horizon.

    Returns:
        ``(learner, adversary, problem, params_list, adv_params)``.
    """
    return _linear_case([dp_ftrl_params(5.0, 0.5, 2.0), dp_ftrl_params(20.0, 2.0, 1.0)], d, T)


def l2p_rmw_case(d: int, T: int) -> tuple:
    """L2P-RMW on linear losses over the ball of radius 1/2, batch 4, the exact sampler, at
    ``(β, λ, η, p) = (2, 4, 0.1, 0.3)`` and ``(5, 2, 0.2, 0.1)`` (the quick case runs ``d = 1``, whose sampler
    is a truncated normal; tests/oco/test_l2p_rmw.py checks ``d = 3`` and MALA).

    Args:
        d, T: the case's dimension and horizon.

    Returns:
        ``(learner, adversary, problem, params_list, adv_params)``.
    """
    B = 4
    params = [l2p_rmw_params(beta=2.0, lam=4.0, radius=0.5, eta=0.1, p=0.3, B=B),
              l2p_rmw_params(beta=5.0, lam=2.0, radius=0.5, eta=0.2, p=0.1, B=B)]
    return (l2p_rmw(d, B), adv_linear_oco(d), linear_problem(d, 0.5), params,
            linear_oco_params("biased", L=1.0, bias=0.3))


# --------------------------------------------------------------------------- smooth realizable losses


def _grid_case(name: str, plan_fn, params_fn, other: dict, d: int, T: int) -> tuple:
    """The grid learner ``name`` built from its ``rate`` plan at ``ε = 4`` (lipschitz 2, m = 6) on the smooth
    realizable squared losses, at the planned parameters and at those with ``other`` replaced."""
    prob = squared_problem(d, 1.0)
    plan = plan_fn(eps=4.0, T=T, d=d, mode="rate", lipschitz=2.0, m=6)
    learner, p0 = get_learner(name).learner_from_plan(plan, prob)
    without_m = {k: v for k, v in plan.params.items() if k != "m"}
    return (learner, adv_smooth_realizable(d), prob, [p0, params_fn(**dict(without_m, **other))],
            smooth_realizable_params(1.0, 0.0))


def experts_oco_net_case(d: int, T: int) -> tuple:
    """Sparse-vector experts over a grid net of the ball, at its ``rate`` plan for ``ε = 4`` and at that plan
    with ``L = 3``, ``η = 0.5``.

    Args:
        d, T: the case's dimension and horizon.

    Returns:
        ``(learner, adversary, problem, params_list, adv_params)``.
    """
    return _grid_case("experts_oco_net", plan_experts_oco_net, experts_oco_net_params, {"L": 3.0, "eta": 0.5}, d, T)


def potential_oco_case(d: int, T: int) -> tuple:
    """Potential-based experts over a grid quadrature of the ball, at its ``rate`` plan for ``ε = 4`` and at that
    plan with ``η = 0.3``, ``K = 3``.

    Args:
        d, T: the case's dimension and horizon.

    Returns:
        ``(learner, adversary, problem, params_list, adv_params)``.
    """
    return _grid_case("potential_oco", plan_potential_oco, potential_oco_params, {"eta": 0.3, "K": 3}, d, T)
