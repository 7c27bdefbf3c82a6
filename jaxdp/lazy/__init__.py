"""LAZY: private online learning via lazy algorithms (Asi, Koren, Liu, Talwar, NeurIPS 2024).

Source: Lazy private online learning; docs/algorithms/lazy.md.

* :func:`l2p` — the L2P transformation (Algorithm 1) of any :class:`LazyMeasure`
  (Assumption 3.1) into a private ``Learner``.
* :func:`l2p_mw` — L2P applied to multiplicative weights (Thm 3.10), with the
  planner ``plan_l2p_mw`` (registered as ``jaxdp plan l2p_mw``).
* Baselines: :func:`private_lazy_sketch` (the prior low-switching template),
  :func:`tree_ftrl_experts` (binary-tree FTRL), ``shrinking_dartboard``
  (re-exported from ``jaxdp.experts``).
* :func:`figure1_exponents` — the regret exponents of LAZY Figure 1 (and the
  corrected curves of LAZY Figure 1; docs/algorithms/lazy.md#figure-1).
"""
from .l2p import L2PParams, L2PState, LazyMeasure, l2p, l2p_params
from .measures import MWMeasureParams, mw_measure
from .l2p_mw import (
    alternating_prediction, batch_aligned_prediction, l2p_mw, l2p_mw_paper_regret, l2p_mw_params,
    l2p_mw_regret_bound,
)
from .planner import L2P_MW_MODES, l2p_mw_eps0, plan_l2p_mw
from .sketch import SketchParams, SketchState, private_lazy_sketch, sketch_params
from .tree_ftrl import TreeFTRLParams, TreeFTRLState, tree_ftrl_experts, tree_ftrl_params
from .exponents import FIGURE1_PANELS, figure1_exponents
from ..experts.dartboard import shrinking_dartboard
from . import audits  # noqa: F401  (registers the audits)

__all__ = [
    "LazyMeasure", "L2PParams", "L2PState", "l2p", "l2p_params",
    "MWMeasureParams", "mw_measure",
    "l2p_mw", "l2p_mw_params", "l2p_mw_regret_bound", "l2p_mw_paper_regret", "alternating_prediction",
    "batch_aligned_prediction",
    "shrinking_dartboard",
    "plan_l2p_mw", "L2P_MW_MODES", "l2p_mw_eps0",
    "SketchParams", "SketchState", "private_lazy_sketch", "sketch_params",
    "TreeFTRLParams", "TreeFTRLState", "tree_ftrl_experts", "tree_ftrl_params",
    "FIGURE1_PANELS", "figure1_exponents",
]
