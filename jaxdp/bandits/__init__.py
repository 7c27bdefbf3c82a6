"""Multi-armed bandits: bandit feedback, stochastic and oblivious environments, non-private and private learners.

See docs/algorithms/bandits.md. Every learner is a pure step function built with
:func:`bandit_learner` (its step receives the played arm's loss only) and runs in
:func:`jaxdp.core.simulate` like any other learner; :func:`bandit_problem` chooses the
pseudo-regret or the realized regret. Importing this package registers the private learners'
planners (``jaxdp plan dp-ucb-tree``, ``dp-se``, ``dp-exp3``, ``ldp-ucb``), every learner in the
learner registry (problem class ``bandits``, the built-ins of ``jaxdp compare --problem bandits``) and
the privacy audits of the private learners (``jaxdp audit dp-exp3``, ...; :mod:`jaxdp.bandits.audits`).
"""
from .problem import REGRETS, BanditLoss, bandit_learner, bandit_problem, observe
from .adversaries import (
    COUPLINGS, BernoulliArmsParams, SwitchingArmsParams, as_bandit, bernoulli_arms, quantized_means, switching_arms,
)
from .ucb import DPUCBParams, DPUCBState, LDPUCBParams, UCB1Params, UCBState, dp_ucb_tree, ldp_ucb, ucb1
from .thompson import ThompsonParams, ThompsonState, thompson
from .exp3 import DPExp3Params, DPExp3State, Exp3IXParams, Exp3IXState, Exp3Params, Exp3State, dp_exp3, exp3, exp3_ix
from .elimination import DPSEParams, DPSEState, dp_se, dp_se_epoch_length
from . import theory  # noqa: F401
from .planners import plan_dp_exp3, plan_dp_se, plan_dp_ucb_tree, plan_ldp_ucb
from . import _registry  # noqa: E402,F401  (registers the learners: jaxdp.registry.LEARNERS)
from . import audits  # noqa: E402,F401  (registers the audits: jaxdp audit dp-exp3, ...)

__all__ = [
    "BanditLoss", "bandit_problem", "bandit_learner", "observe", "REGRETS",
    "BernoulliArmsParams", "bernoulli_arms", "SwitchingArmsParams", "switching_arms", "as_bandit", "COUPLINGS",
    "quantized_means",
    "UCBState", "UCB1Params", "ucb1", "LDPUCBParams", "ldp_ucb", "DPUCBState", "DPUCBParams", "dp_ucb_tree",
    "ThompsonState", "ThompsonParams", "thompson",
    "Exp3State", "Exp3Params", "exp3", "Exp3IXState", "Exp3IXParams", "exp3_ix", "DPExp3State", "DPExp3Params",
    "dp_exp3",
    "DPSEState", "DPSEParams", "dp_se", "dp_se_epoch_length",
    "theory", "plan_dp_ucb_tree", "plan_dp_se", "plan_dp_exp3", "plan_ldp_ucb",
]
