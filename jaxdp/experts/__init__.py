"""Experts (prediction from expert advice): the problem, non-private learners and adversaries."""
import math as _math

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


# ``hedge`` is registered here, not in its module: ``jaxdp.experts.hedge`` stays a self-contained module
# that a user can copy as it is (``jaxdp compare`` reproduces the built-in from such a copy bit for bit).
from ..registry import CompareBuiltin as _CompareBuiltin, ConformanceCase as _ConformanceCase  # noqa: E402
from ..registry import register_learner as _register_learner  # noqa: E402


def _hedge_conformance(d, T):
    from .conformance import experts_case

    return experts_case(hedge(d), d, [hedge_params(d, T), hedge_params(d, T, eta=0.5)])


def _hedge_compare(d, T, T_max, eps, delta, problem):
    return hedge(d), hedge_params(d, T), _math.inf


_register_learner(
    "hedge", factory=hedge, params_type=HedgeParams, problem="experts", private=False,
    conformance=_ConformanceCase(_hedge_conformance),
    description="Hedge / multiplicative weights: x_t ~ p_t ∝ exp(-η L_{t-1}), E[Reg_T] <= ln(d)/η + ηT/8",
    reference="Arora, Hazan, Kale 2012, The multiplicative weights update method; Lazy private online "
              "learning, eq. (2)",
    compare=_CompareBuiltin(_hedge_compare, "non-private reference, eta = sqrt(8 ln d / T)"))
