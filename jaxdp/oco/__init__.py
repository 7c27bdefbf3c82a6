"""Online convex optimization: domains, problems, adversaries and private learners.

Team OCO-CORE: ``domains``, ``problems``, ``adversaries``, ``dp_ftrl``,
``experts_oco_net``, ``potential_oco``. Team SAMPLERS' ``rmw`` and ``l2p_rmw``
are re-exported when present.
"""
import importlib
import importlib.util

from .domains import Ball, Box, Simplex, ball_grid, check_domain, project_simplex
from .problems import (
    ABLoss, BufferStats, ProblemInfo, SquaredStats, absolute_problem, hinge_problem, linear_problem,
    logistic_problem, lstsq_constrained, net_points, problem_info, squared_problem,
)
from .adversaries import (
    LINEAR_MODES, LinearOCOParams, ReplayOCOParams, SmoothRealizableParams, adv_linear_oco, adv_replay_oco,
    adv_smooth_noisy, adv_smooth_realizable, linear_oco_params, load_oco_data, smooth_realizable_params,
)
from .dp_ftrl import (
    DPFTRLParams, DPFTRLState, dp_ftrl, dp_ftrl_lambda, dp_ftrl_params, dp_ftrl_regret_bound, ftrl_reference,
    plan_dp_ftrl,
)
from .realizable import (
    OCONetParams, OCONetState, PotentialOCOParams, PotentialOCOState, experts_oco_net, experts_oco_net_params,
    logphi_grid, logphi_mc, oco_net, plan_experts_oco_net, plan_potential_oco, potential_oco, potential_oco_params,
)

__all__ = [
    "Ball", "Box", "Simplex", "ball_grid", "check_domain", "project_simplex",
    "ABLoss", "BufferStats", "ProblemInfo", "SquaredStats", "absolute_problem", "hinge_problem", "linear_problem",
    "logistic_problem", "lstsq_constrained", "net_points", "problem_info", "squared_problem",
    "LINEAR_MODES", "LinearOCOParams", "ReplayOCOParams", "SmoothRealizableParams", "adv_linear_oco",
    "adv_replay_oco", "adv_smooth_noisy", "adv_smooth_realizable", "linear_oco_params", "load_oco_data",
    "smooth_realizable_params",
    "DPFTRLParams", "DPFTRLState", "dp_ftrl", "dp_ftrl_lambda", "dp_ftrl_params", "dp_ftrl_regret_bound",
    "ftrl_reference", "plan_dp_ftrl",
    "OCONetParams", "OCONetState", "PotentialOCOParams", "PotentialOCOState", "experts_oco_net",
    "experts_oco_net_params", "logphi_grid", "logphi_mc", "oco_net", "plan_experts_oco_net", "plan_potential_oco",
    "potential_oco", "potential_oco_params",
]


def _reexport(modname: str) -> None:
    """Re-export another team's module (``jaxdp.oco.<modname>``) if it exists."""
    full = f"{__name__}.{modname}"
    if importlib.util.find_spec(full) is None:
        return
    mod = importlib.import_module(full)
    names = getattr(mod, "__all__", [])
    g = globals()
    for n in names:
        g[n] = getattr(mod, n)
    __all__.extend(n for n in names if n not in __all__)


for _m in ("rmw", "l2p_rmw"):
    _reexport(_m)
del _m
