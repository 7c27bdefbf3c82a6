"""Learning with label differential privacy (LABEL = Label DP: theoretical limits; docs/algorithms/label-dp.md).

* :mod:`.generators` — distributions with known η on ``[0,1]^d`` (smooth, margin, minimax-hard bumps,
  heavy tails) and exact excess risk by quadrature.
* :mod:`.estimators` — local (vector / K-ary randomized response + bins, Laplace + kNN) and central
  (exponential mechanism per bin, Laplace bin means) label-DP learners and their non-private versions.
* :mod:`.experiment` — pure ``fn(key, N, params, h0)`` estimators batched over seeds and grids.
* :mod:`.planners` — bin width / k / clipping level from LABEL Theorems 2, 4, 6, 8, 10, 12.
* :mod:`.rates` — LABEL Table 1 exponents.
"""
from .generators import (
    Generator, excess_risk, gen_bump_classification, gen_bump_regression, gen_heavy_tail_regression,
    gen_margin_classification, gen_smooth_classification, gen_smooth_regression, pareto_abs_moment, sample,
    student_t_abs_moment, quad_grid, task_generator,
)
from .estimators import (
    CLS_METHODS, METHODS, NONPRIVATE_OF, REG_METHODS, BinFit, KnnFit, LabelParams, bin_counts, bin_index, fit,
    fit_predict, knn_predict, make_params, predict,
)
from .experiment import make_estimator, plan_fit_predict, public_features, run_grid
from .rates import central_crossover, label_rate_exponent, label_rates, setting_of
from . import planners  # noqa: F401  (registers the planners)

__all__ = [
    "Generator", "sample", "quad_grid", "excess_risk",
    "gen_smooth_classification", "gen_margin_classification", "gen_bump_classification",
    "gen_smooth_regression", "gen_bump_regression", "gen_heavy_tail_regression",
    "student_t_abs_moment", "pareto_abs_moment", "task_generator", "setting_of", "central_crossover",
    "public_features", "plan_fit_predict",
    "LabelParams", "make_params", "BinFit", "KnnFit", "METHODS", "CLS_METHODS", "REG_METHODS", "NONPRIVATE_OF",
    "bin_index", "bin_counts", "fit", "predict", "knn_predict", "fit_predict",
    "make_estimator", "run_grid", "label_rates", "label_rate_exponent", "planners",
]

from . import audits  # noqa: F401,E402  (registers the audits)
