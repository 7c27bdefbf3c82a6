"""Experts (prediction from expert advice): the problem, non-private learners and adversaries."""
from .problem import experts_problem
from .hedge import HedgeParams, HedgeState, hedge, hedge_eta, hedge_params, hedge_regret_bound
from .dartboard import DartboardState, shrinking_dartboard
from .ftpl import FTPLState, ftpl, ftpl_eta
from .adversaries import (
    AdvState, AlternatingParams, BernoulliParams, HalvingParams, LazyEpochsParams, RealizableBernoulliParams,
    RealizableLBParams, ReplayParams, adv_alternating_batches, adv_lazy_epochs, adv_realizable_bernoulli,
    adv_realizable_halving, adv_realizable_lb, adv_replay, bernoulli_experts, lazy_epochs_layout, load_losses,
    realizable_lb_k,
)

__all__ = [
    "experts_problem", "HedgeParams", "HedgeState", "hedge", "hedge_eta", "hedge_params", "hedge_regret_bound",
    "DartboardState", "shrinking_dartboard", "FTPLState", "ftpl", "ftpl_eta",
    "AdvState", "AlternatingParams", "BernoulliParams", "HalvingParams", "LazyEpochsParams",
    "RealizableBernoulliParams", "RealizableLBParams", "ReplayParams", "adv_alternating_batches",
    "adv_lazy_epochs", "adv_realizable_bernoulli", "adv_realizable_halving", "adv_realizable_lb", "adv_replay",
    "bernoulli_experts", "lazy_epochs_layout", "load_losses", "realizable_lb_k",
]
