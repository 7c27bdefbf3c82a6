"""Empirical privacy auditing (docs/guide/auditing.md): the auditor and a catalogue of correct and broken mechanisms.

Importing this package registers the catalogue's audits with ``jaxdp.registry``
(``jaxdp audit --list``).
"""
from .auditor import (
    DEFAULT_ALPHA, DEFAULT_CONFIDENCE, AuditReport, HistogramEvents, SearchEvents, ThresholdEvents, audit,
    audit_mechanism, bonferroni_level, clopper_pearson_lower, clopper_pearson_upper, eps_lower_bound,
)

__all__ = [
    "audit", "audit_mechanism", "AuditReport", "ThresholdEvents", "HistogramEvents", "SearchEvents",
    "DEFAULT_CONFIDENCE", "DEFAULT_ALPHA", "bonferroni_level",
    "clopper_pearson_lower", "clopper_pearson_upper", "eps_lower_bound",
]

from .learners import action_code, audit_learner, learner_mechanism, loss_neighbours  # noqa: E402

__all__ += ["audit_learner", "learner_mechanism", "loss_neighbours", "action_code"]

from . import catalogue  # noqa: E402,F401  (registers the audits)
from .catalogue import CATALOGUE, svt_variant  # noqa: E402

__all__ += ["CATALOGUE", "svt_variant", "catalogue"]
