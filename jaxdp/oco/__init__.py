"""Online convex optimization: domains, problems, adversaries and private learners.

Modules: ``domains``, ``problems``, ``adversaries``, ``dp_ftrl`` (REAL Alg. 3), ``realizable``
(``experts_oco_net``, ``potential_oco``; REAL Thm 3, Alg. 5) and, from LAZY, ``rmw`` (the RMW measure) and
``l2p_rmw`` (its L2P transformation), whose ``__all__`` lists are re-exported here.
"""

from .domains import Ball, Box, Simplex, ball_grid, check_domain, project_simplex
from .problems import (
    ABLoss, BufferStats, ProblemInfo, SquaredStats, absolute_problem, hinge_problem, linear_problem,
    logistic_problem, lstsq_constrained, net_points, problem_info, squared_problem,
)
from .adversaries import (
    LINEAR_MODES, LinearOCOParams, ReplayOCOParams, SmoothRealizableParams, adv_linear_oco, adv_replay_oco,
    adv_nonsmooth, adv_smooth_noisy, adv_smooth_realizable, linear_oco_params, load_oco_data, smooth_realizable_params,
)
from .dp_ftrl import (
    DPFTRLParams, DPFTRLState, dp_ftrl, dp_ftrl_lambda, dp_ftrl_lambda_matched, dp_ftrl_noise_bound,
    dp_ftrl_noise_energy, dp_ftrl_params, dp_ftrl_regret_bound, ftrl_reference, plan_dp_ftrl,
)
from .realizable import (
    OCONetParams, OCONetState, PotentialOCOParams, PotentialOCOState, experts_oco_net, experts_oco_net_params,
    logphi_grid, logphi_mc, logphi_squared_errors, net_regret_bound, oco_net, plan_experts_oco_net,
    plan_potential_oco, potential_oco, potential_oco_params,
)

__all__ = [
    "Ball", "Box", "Simplex", "ball_grid", "check_domain", "project_simplex",
    "ABLoss", "BufferStats", "ProblemInfo", "SquaredStats", "absolute_problem", "hinge_problem", "linear_problem",
    "logistic_problem", "lstsq_constrained", "net_points", "problem_info", "squared_problem",
    "LINEAR_MODES", "LinearOCOParams", "ReplayOCOParams", "SmoothRealizableParams", "adv_linear_oco",
    "adv_replay_oco", "adv_nonsmooth", "adv_smooth_noisy", "adv_smooth_realizable", "linear_oco_params",
    "load_oco_data", "smooth_realizable_params",
    "DPFTRLParams", "DPFTRLState", "dp_ftrl", "dp_ftrl_lambda", "dp_ftrl_lambda_matched", "dp_ftrl_noise_bound",
    "dp_ftrl_noise_energy", "dp_ftrl_params",
    "dp_ftrl_regret_bound", "ftrl_reference", "plan_dp_ftrl",
    "OCONetParams", "OCONetState", "PotentialOCOParams", "PotentialOCOState", "experts_oco_net",
    "experts_oco_net_params", "logphi_grid", "logphi_mc", "logphi_squared_errors", "net_regret_bound", "oco_net",
    "plan_experts_oco_net",
    "plan_potential_oco", "potential_oco", "potential_oco_params",
]


from . import l2p_rmw as _l2p_rmw_mod, rmw as _rmw_mod  # noqa: E402
from .rmw import *  # noqa: E402,F401,F403
from .l2p_rmw import *  # noqa: E402,F401,F403

__all__ += [n for m in (_rmw_mod, _l2p_rmw_mod) for n in m.__all__ if n not in __all__]
