"""Empirical privacy auditing (docs/guide/auditing.md): the auditors (fixed event families, learned events,
trade-off curves) and catalogues of correct and broken mechanisms.

Importing this package registers the catalogue's audits with ``jaxdp.registry``
(``jaxdp audit --list``).
"""
from .auditor import (
    DEFAULT_ALPHA, DEFAULT_CONFIDENCE, AuditReport, HistogramEvents, SearchEvents, ThresholdEvents, audit,
    audit_mechanism, bonferroni_level, clopper_pearson_lower, clopper_pearson_upper, eps_lower_bound,
)
from .learners import action_code, audit_learner, audit_learner_learned, learner_mechanism, loss_neighbours
from .adaptive import NeighbourStrategy, adaptive_mechanism, audit_learner_adaptive, challenge_strategy, oblivious_strategy  # noqa: E501
from . import catalogue  # (registers the audits)
from .catalogue import CATALOGUE, LEARNED_CATALOGUE, svt_variant
from .learned import (
    MLP, Histogram, Logistic, ThresholdEvent, audit_learned, best_threshold_event, fit_classifier, flag_features,
    flat_features, onehot_features, trajectory_features,
)
from .pairs import loss_flip_pairs, pattern_pairs
from .tradeoff import TradeoffBound, audit_tradeoff, gdp_delta, gdp_eps, tradeoff_bound

__all__ = [
    "audit", "audit_mechanism", "AuditReport", "ThresholdEvents", "HistogramEvents", "SearchEvents",
    "DEFAULT_CONFIDENCE", "DEFAULT_ALPHA", "bonferroni_level",
    "clopper_pearson_lower", "clopper_pearson_upper", "eps_lower_bound",
    "audit_learner", "audit_learner_learned", "learner_mechanism", "loss_neighbours", "action_code",
    "CATALOGUE", "svt_variant", "catalogue",
    "audit_learned", "Logistic", "MLP", "Histogram", "ThresholdEvent", "best_threshold_event", "fit_classifier",
    "flat_features", "onehot_features", "flag_features", "trajectory_features", "pattern_pairs", "loss_flip_pairs",
    "audit_tradeoff", "tradeoff_bound", "TradeoffBound", "gdp_delta", "gdp_eps",
    "LEARNED_CATALOGUE",
    "NeighbourStrategy", "adaptive_mechanism", "audit_learner_adaptive", "challenge_strategy", "oblivious_strategy",
]


def __getattr__(name: str):
    # DP-Sniper's suite moved to benchmarks/harness/dpsniper.py in jaxdp 1.0: its old names go through the alias
    # of jaxdp.privacy.audit.dpsniper (jaxdp/_moved.py: a DeprecationWarning, or ImportError outside a checkout)
    if name in ("dpsniper", "DPSNIPER_SUITE"):
        import importlib

        mod = importlib.import_module(f"{__name__}.dpsniper")
        return mod if name == "dpsniper" else mod.SUITE
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
