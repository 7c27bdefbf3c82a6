"""Privacy mechanisms as pure functions of a key (the mechanisms layer; docs/algorithms/primitives.md).

Every mechanism draws a fixed number of random variables per call, so it can
sit inside ``lax.scan`` and under ``vmap``. Host-side inputs are validated
before anything is compiled; traced inputs are not checked.
"""
from .laplace import gaussian_mech, gaussian_rho_star, gaussian_sigma, laplace_mech, laplace_scale
from .exponential import exp_mech, exp_mech_inverse_cdf, exp_mech_logits, exp_mech_topk
# the one-shot `sparse_vector(...)` stays in its module: exporting it here would shadow the submodule
from .sparse_vector import (
    CSVTState, SVTState, above_threshold, csvt_accuracy_alpha, csvt_budget_split, csvt_halted, csvt_init,
    csvt_noise_scales, csvt_query, plan_sparse_vector, svt_accuracy_alpha, svt_init,
    svt_noise_scales, svt_query, svt_restart,
)
from .tree import (
    TreeState, ctz, suffix_tree_advance, tree_aggregation_sigma, tree_depth, tree_init, tree_laplace_scale,
    tree_levels, tree_noise_variance, tree_prefix_sums, tree_step,
)

__all__ = [
    "laplace_scale", "laplace_mech", "gaussian_sigma", "gaussian_mech", "gaussian_rho_star",
    "exp_mech", "exp_mech_topk", "exp_mech_inverse_cdf", "exp_mech_logits",
    "SVTState", "svt_init", "svt_query", "svt_restart", "svt_noise_scales", "svt_accuracy_alpha", "above_threshold",
    "CSVTState", "csvt_init", "csvt_query", "csvt_halted", "csvt_noise_scales", "csvt_budget_split",
    "csvt_accuracy_alpha", "plan_sparse_vector",
    "TreeState", "tree_depth", "tree_init", "tree_step", "tree_prefix_sums", "tree_laplace_scale",
    "tree_aggregation_sigma", "tree_noise_variance", "ctz", "tree_levels", "suffix_tree_advance",
]

from .randomized_response import rr_binary, rr_kary, rr_vector  # noqa: E402

__all__ += ["rr_binary", "rr_kary", "rr_vector"]
