"""REAL: private online learning in the realizable regime (Asi, Feldman, Koren, Talwar, ICML 2023;
Realizable private online optimization; docs/algorithms/realizable.md).

Learners (``jaxdp.core.Learner``) for DP prediction with experts when some expert has (near) zero
loss, their planners (``jaxdp plan NAME``) and privacy audits.
"""
from .sparse_vector import (
    AdaptiveSVParams, AdaptiveSVState, SVExpertsParams, SVExpertsState, adaptive_sparse_vector_experts,
    adaptive_sparse_vector_params, sparse_vector_experts, sparse_vector_params,
)
from .potential import PotentialParams, PotentialState, potential_experts, potential_params
from .binary_tree import BinaryTreeParams, BinaryTreeState, binary_tree_experts, binary_tree_params
from .planners import (
    binary_tree_static, lower_bound_thm5, params_from_plan, plan_adaptive_sparse_vector_experts,
    plan_binary_tree_experts, plan_potential_experts, plan_sparse_vector_experts, thm1_bound, thm2_bound,
    thm6_bound,
)
from . import audits  # noqa: F401  (registers the audits)

__all__ = [
    "SVExpertsParams", "SVExpertsState", "sparse_vector_experts", "sparse_vector_params",
    "AdaptiveSVParams", "AdaptiveSVState", "adaptive_sparse_vector_experts", "adaptive_sparse_vector_params",
    "PotentialParams", "PotentialState", "potential_experts", "potential_params",
    "BinaryTreeParams", "BinaryTreeState", "binary_tree_experts", "binary_tree_params",
    "plan_sparse_vector_experts", "plan_adaptive_sparse_vector_experts", "plan_potential_experts",
    "plan_binary_tree_experts", "params_from_plan", "binary_tree_static",
    "thm1_bound", "thm2_bound", "thm6_bound", "lower_bound_thm5",
]
