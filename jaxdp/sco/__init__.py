"""Private stochastic convex optimization under κ-growth (GROWTH; docs/algorithms/growth.md).

Instances with exact excess loss (GROWTH Thms 4-6; docs/algorithms/growth.md#instances), a certified ERM solver
(GROWTH Alg. 1; docs/algorithms/growth.md#localization), Algorithm 1 ``localization_sco``, Algorithm 2
``epoch_growth_sco``, the inverse-sensitivity mechanisms of Theorem 1 and the Proposition 3 reduction, planners, and
one-shot estimators for ``jaxdp.core.monte_carlo``. Most displays of the paper are RECONSTRUCTED
(docs/algorithms/growth.md#corrections); the notes sit in each module's docstring.
"""
from .instances import (
    SCOInstance, empirical_grad, empirical_value, growth_holds, inst_kappa_1d_twopoint, inst_kappa_atom,
    inst_kappa_linear, inst_kappa_regression, inst_sign_cube, regression_constant, GROWTH_INSTANCES, grid_floor,
    growth_instance,
)
from .erm import ERMResult, project_balls, solve_prox_erm, strong_convexity_gap
from .localization import (
    EpochParams, LocalizationParams, accuracy_floor, check_sco_data, epoch_growth_sco, growth_epochs,
    localization_phases, localization_sco,
)
from .inverse_sensitivity import (
    GridInfo, grad_inverse_sensitivity, grid_points, growth_reduction_erm, inverse_sensitivity, subgrad_dist,
)
from .inverse_sensitivity import MALAISInfo, exact_excess_quadrature, grad_inverse_sensitivity_mala
from .planners import (
    gauss_mult_for, plan_epoch_growth_sco, plan_grad_inverse_sensitivity, plan_growth_reduction_erm, plan_localization_sco,
    reduction_schedule, sco_step, theorem1_rho,
)
from .estimators import epoch_estimator, grad_inv_estimator, localization_estimator, run_sco, run_sco_cpu
from .prox_path import epoch_prox_path_1d, prox_step_1d

__all__ = [
    "SCOInstance", "empirical_grad", "empirical_value", "growth_holds", "inst_kappa_1d_twopoint", "inst_kappa_atom",
    "inst_kappa_linear", "inst_kappa_regression", "inst_sign_cube", "regression_constant",
    "ERMResult", "project_balls", "solve_prox_erm", "strong_convexity_gap",
    "EpochParams", "LocalizationParams", "accuracy_floor", "check_sco_data", "epoch_growth_sco", "growth_epochs",
    "localization_phases", "localization_sco",
    "GridInfo", "grad_inverse_sensitivity", "grid_points", "growth_reduction_erm", "inverse_sensitivity",
    "subgrad_dist", "MALAISInfo", "grad_inverse_sensitivity_mala", "plan_growth_reduction_erm", "reduction_schedule",
    "gauss_mult_for", "plan_epoch_growth_sco", "plan_grad_inverse_sensitivity", "plan_localization_sco", "sco_step",
    "theorem1_rho",
    "epoch_estimator", "grad_inv_estimator", "localization_estimator", "run_sco", "run_sco_cpu",
    "growth_instance", "grid_floor", "GROWTH_INSTANCES", "exact_excess_quadrature",
    "epoch_prox_path_1d", "prox_step_1d",
]
