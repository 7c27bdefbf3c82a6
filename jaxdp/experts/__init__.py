"""Experts (prediction from expert advice): the problem, its adversaries and its learners, one module each.

Non-private: :mod:`~jaxdp.experts.hedge`, :mod:`~jaxdp.experts.dartboard` (shrinking dartboard),
:mod:`~jaxdp.experts.ftpl`. Private, from *Lazy private online learning* (Asi, Koren, Liu, Talwar):
:mod:`~jaxdp.experts.l2p` (the L2P transformation, Algorithm 1), :mod:`~jaxdp.experts.l2p_mw` (L2P-MW,
Thm 3.10, with its planner and the Figure 1 exponents), :mod:`~jaxdp.experts.sketch` (the prior low-switching
template), :mod:`~jaxdp.experts.tree_ftrl` (binary-tree FTRL); the paper's experimental setups and its Lemma 3.4 test:
:mod:`~jaxdp.experts.lazy_setups`. Private, from *Realizable private online
optimization* (Asi, Feldman, Koren, Talwar): :mod:`~jaxdp.experts.sparse_vector` (Alg. 1-2, Thms 1-2, 5),
:mod:`~jaxdp.experts.potential` (Alg. 5, Thms 6-7), :mod:`~jaxdp.experts.binary_tree` (Alg. 4). Their
privacy audits are registered by :mod:`~jaxdp.experts.audits`. docs/papers/ maps each theorem to its module.
"""
import math as _math

from .problem import experts_problem
from .hedge import HedgeParams, HedgeState, hedge, hedge_eta, hedge_params, hedge_regret_bound
from .dartboard import DartboardState, shrinking_dartboard
from .ftpl import FTPLState, ftpl, ftpl_eta, ftpl_regret_bound
from .adversaries import (
    AdvState, AlternatingParams, BernoulliParams, HalvingParams, LazyEpochsParams, RealizableBernoulliParams,
    RealizableLBParams, ReplayParams, adv_alternating_batches, adv_lazy_epochs, adv_realizable_bernoulli,
    adv_realizable_halving, adv_realizable_lb, adv_replay, bernoulli_experts, lazy_epochs_layout, load_losses,
    realizable_lb_k,
)
from .l2p import L2PParams, L2PState, LazyMeasure, l2p, l2p_expected_counts, l2p_params
from .l2p_mw import (
    FIGURE1_PANELS, L2P_MW_MODES, MWMeasureParams, alternating_prediction, alternating_warmup,
    batch_aligned_prediction, figure1_exponents, l2p_mw, l2p_mw_eps0, l2p_mw_paper_regret, l2p_mw_params,
    l2p_mw_regret_bound, mw_measure, plan_l2p_mw,
)
from .sketch import SketchParams, SketchState, private_lazy_sketch, sketch_params
from .tree_ftrl import TreeFTRLParams, TreeFTRLState, tree_ftrl_experts, tree_ftrl_params
from .lazy_setups import (
    LAZY_ADVERSARIES, LAZY_LEARNERS, adversary_and_params, exact_sampler_tv, learner_and_params, marginal_check,
    mw_marginal, alternating_terms, paper_B, z7_histograms, z7_losses, z7_played,
)
from .sparse_vector import (
    AdaptiveSVParams, AdaptiveSVState, SVExpertsParams, SVExpertsState, adaptive_sparse_vector_experts,
    adaptive_sparse_vector_params, lower_bound_thm5, plan_adaptive_sparse_vector_experts, plan_sparse_vector_experts,
    sparse_vector_experts, sparse_vector_ledger, sparse_vector_params, sparse_vector_static, thm1_bound, thm2_bound,
)
from .potential import (
    PotentialParams, PotentialState, plan_potential_experts, potential_ledger, potential_params, potential_experts,
    potential_settings, thm6_bound,
)
from .binary_tree import (
    BinaryTreeParams, BinaryTreeState, binary_tree_experts, binary_tree_params, binary_tree_static,
    plan_binary_tree_experts,
)
from ._common import params_from_plan
from .adaptive import (
    SwitchWatcherParams, adaptive_lazy_epochs, punish_last_action, switch_watcher, switch_watcher_params,
)
from .adaptive_setups import (
    ADAPTIVE_EXPERTS_ADVERSARIES, ADAPTIVE_EXPERTS_LEARNERS, adaptive_experts_adversary, adaptive_experts_learner,
)
from . import audits  # noqa: F401  (registers the audits)

__all__ = [
    "experts_problem", "HedgeParams", "HedgeState", "hedge", "hedge_eta", "hedge_params", "hedge_regret_bound",
    "DartboardState", "shrinking_dartboard", "FTPLState", "ftpl", "ftpl_eta", "ftpl_regret_bound",
    "AdvState", "AlternatingParams", "BernoulliParams", "HalvingParams", "LazyEpochsParams",
    "RealizableBernoulliParams", "RealizableLBParams", "ReplayParams", "adv_alternating_batches",
    "adv_lazy_epochs", "adv_realizable_bernoulli", "adv_realizable_halving", "adv_realizable_lb", "adv_replay",
    "bernoulli_experts", "lazy_epochs_layout", "load_losses", "realizable_lb_k",
    "LazyMeasure", "L2PParams", "L2PState", "l2p", "l2p_params", "l2p_expected_counts",
    "MWMeasureParams", "mw_measure",
    "l2p_mw", "l2p_mw_params", "l2p_mw_regret_bound", "l2p_mw_paper_regret", "alternating_prediction",
    "alternating_warmup", "batch_aligned_prediction", "plan_l2p_mw", "L2P_MW_MODES", "l2p_mw_eps0", "FIGURE1_PANELS",
    "figure1_exponents",
    "SketchParams", "SketchState", "private_lazy_sketch", "sketch_params",
    "TreeFTRLParams", "TreeFTRLState", "tree_ftrl_experts", "tree_ftrl_params",
    "LAZY_LEARNERS", "LAZY_ADVERSARIES", "paper_B", "learner_and_params", "adversary_and_params",
    "z7_losses", "mw_marginal", "exact_sampler_tv", "marginal_check", "z7_played", "z7_histograms", "alternating_terms",
    "SVExpertsParams", "SVExpertsState", "sparse_vector_experts", "sparse_vector_params",
    "AdaptiveSVParams", "AdaptiveSVState", "adaptive_sparse_vector_experts", "adaptive_sparse_vector_params",
    "PotentialParams", "PotentialState", "potential_experts", "potential_params",
    "BinaryTreeParams", "BinaryTreeState", "binary_tree_experts", "binary_tree_params",
    "plan_sparse_vector_experts", "plan_adaptive_sparse_vector_experts", "plan_potential_experts",
    "plan_binary_tree_experts", "params_from_plan", "binary_tree_static", "sparse_vector_static",
    "sparse_vector_ledger", "potential_ledger", "potential_settings",
    "thm1_bound", "thm2_bound", "thm6_bound", "lower_bound_thm5",
    "punish_last_action", "SwitchWatcherParams", "switch_watcher_params", "switch_watcher", "adaptive_lazy_epochs",
    "ADAPTIVE_EXPERTS_LEARNERS", "ADAPTIVE_EXPERTS_ADVERSARIES", "adaptive_experts_learner", "adaptive_experts_adversary",
]


# ``hedge`` is registered here, not in its module: ``jaxdp.experts.hedge`` stays a self-contained module
# that a user can copy as it is (``jaxdp compare`` reproduces the built-in from such a copy bit for bit).
from ..registry import CompareBuiltin as _CompareBuiltin  # noqa: E402
from .dartboard import _register_hedge_params_learner  # noqa: E402

_register_hedge_params_learner(
    "hedge", hedge,
    "Hedge / multiplicative weights: x_t ~ p_t ∝ exp(-η L_{t-1}), E[Reg_T] <= ln(d)/η + ηT/8",
    "Arora, Hazan, Kale 2012, The multiplicative weights update method; Lazy private online learning, eq. (2)",
    conformance="jaxdp.experts.conformance:hedge_case",
    compare=_CompareBuiltin(lambda d, T, T_max, eps, delta, problem: (hedge(d), hedge_params(d, T), _math.inf),
                            "non-private reference, eta = sqrt(8 ln d / T)"))
