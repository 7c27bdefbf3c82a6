"""The bandit learners in the learner registry (``jaxdp.registry.register_learner``, problem class ``bandits``).

Each entry has a quick conformance case (Bernoulli arms with means ``linspace(0.2, 0.8, K)``,
the pseudo-regret problem), built in ``jaxdp.bandits.conformance``; the private ones are configured by their planners (``Plan.to_params``).
Every one is a ``jaxdp compare --problem bandits`` built-in (``compare=``): the non-private ones as
references tuned for the horizon (UCB1 with ``c = 2``, Thompson with the uniform prior, EXP3 by
Auer et al.'s Cor. 3.2, EXP3-IX by Neu 2015), the private ones by their planners in ``certified``
mode at the comparison's ``(eps, delta)``. The bandit-feedback check (``jaxdp.bandits.testing``)
and the NumPy references run in tests/bandits/test_bandits*.py.
"""
from __future__ import annotations

import math

import jax.numpy as jnp

from ..registry import CompareBuiltin, ConformanceCase, get_learner, register_learner
from . import theory as TH
from .elimination import DPSEParams, dp_se
from .exp3 import DPExp3Params, Exp3IXParams, Exp3Params, dp_exp3, exp3, exp3_ix
from .thompson import ThompsonParams, thompson
from .ucb import DPUCBParams, LDPUCBParams, UCB1Params, dp_ucb_tree, ldp_ucb, ucb1

__all__: list = []

f32 = jnp.float32


def _f(*vals):
    return [f32(v) for v in vals]


# --------------------------------------------------------------------------- jaxdp compare built-ins
# make(d, T, T_max, eps, delta, problem) -> (learner, params, eps_certified): one Learner object per
# (K, T_max), so a sweep over T and eps compiles once.


def _reference(factory, params):
    """A non-private built-in: ``factory(d)`` with ``params(d, T)``."""
    def make(d, T, T_max, eps, delta, problem):
        return factory(d), params(d, T), math.inf

    return make


def _dp_ucb_tree_compare(d, T, T_max, eps, delta, problem):
    # the trees are sized for T_max (static) and their node noise certified for it: every T <= T_max
    e = get_learner("dp_ucb_tree")
    plan = e.certified_plan(eps=eps, delta=delta, T=T_max, d=d)
    return dp_ucb_tree(d, T_max), e.params_from_plan(plan), float(plan.eps_certified)


def _planned(name):
    def make(d, T, T_max, eps, delta, problem):
        e = get_learner(name)
        plan = e.certified_plan(eps=eps, delta=delta, T=T, d=d)
        return e.factory(d), e.params_from_plan(plan), float(plan.eps_certified)

    return make


register_learner(
    "ucb1", factory=ucb1, params_type=UCB1Params, problem="bandits", private=False,
    conformance=ConformanceCase("jaxdp.bandits.conformance:ucb1_case"),
    description="UCB1: play argmax S/N + sqrt(c ln n / N) (c = 2); pseudo-regret <= sum 8 ln T/gap + O(K)",
    reference="Auer, Cesa-Bianchi, Fischer 2002, Finite-time analysis of the multiarmed bandit problem, Thm 1",
    compare=CompareBuiltin(_reference(ucb1, lambda d, T: UCB1Params(f32(2.0))),
                           "non-private reference: UCB1 with c = 2"))

register_learner(
    "thompson", factory=thompson, params_type=ThompsonParams, problem="bandits", private=False,
    conformance=ConformanceCase("jaxdp.bandits.conformance:thompson_case"),
    description="Beta-Bernoulli Thompson sampling (exact Marsaglia-Tsang Gamma draws)",
    reference="Agrawal, Goyal 2012, Analysis of Thompson sampling for the multi-armed bandit problem",
    compare=CompareBuiltin(_reference(thompson, lambda d, T: ThompsonParams(*_f(1, 1))),
                           "non-private reference: Beta(1, 1) prior"))

register_learner(
    "exp3", factory=exp3, params_type=Exp3Params, problem="bandits", private=False,
    conformance=ConformanceCase("jaxdp.bandits.conformance:exp3_case"),
    description="EXP3 with uniform mixing gamma and unbiased gain estimates (SMPyBandits' Exp3(gamma))",
    reference="Auer, Cesa-Bianchi, Freund, Schapire 2002, The nonstochastic multiarmed bandit problem, Cor. 3.2",
    compare=CompareBuiltin(_reference(exp3, lambda d, T: Exp3Params(*_f(*TH.exp3_tuning(d, T), 0))),
                           "non-private reference: gamma, eta of Auer et al. Cor. 3.2 for T"))

register_learner(
    "exp3_ix", factory=exp3_ix, params_type=Exp3IXParams, problem="bandits", private=False,
    conformance=ConformanceCase("jaxdp.bandits.conformance:exp3_ix_case"),
    description="EXP3-IX: exponential weights on implicit-exploration loss estimates",
    reference="Neu 2015, Explore no more: improved high-probability regret bounds for non-stochastic bandits",
    compare=CompareBuiltin(_reference(exp3_ix, lambda d, T: Exp3IXParams(*_f(*TH.exp3_ix_tuning(d, T)))),
                           "non-private reference: eta = 2 gamma = sqrt(2 ln K / (K T))"))

register_learner(
    "dp_ucb_tree", factory=dp_ucb_tree, params_type=DPUCBParams, problem="bandits", private=True,
    conformance=ConformanceCase("jaxdp.bandits.conformance:dp_ucb_tree_case"),
    description="DP-UCB: UCB on per-arm binary-tree Laplace sums, index bonus for the tree noise",
    reference="Tossou, Dimitrakakis 2016, Algorithms for differentially private multi-armed bandits",
    planner="dp-ucb-tree", from_plan=lambda plan: DPUCBParams(f32(plan.params["b"])),
    static=lambda plan: {"T_max": int(plan.params["T_max"])},
    compare=CompareBuiltin(_dp_ucb_tree_compare, "planner dp-ucb-tree, mode certified, trees and node noise for T_max"))

register_learner(
    "dp_se", factory=dp_se, params_type=DPSEParams, problem="bandits", private=True,
    # T = 18 and 14 end inside a round robin of the first epoch: the random order (its key) shows in the regret
    conformance=ConformanceCase("jaxdp.bandits.conformance:dp_se_case", T=18),
    description="DP-SE: successive elimination on fresh epoch means released with Lap(1/(eps R_e))",
    reference="Sajed, Sheffet 2019, An optimal private stochastic-MAB algorithm based on an optimal private "
              "stopping rule", planner="dp-se",
    from_plan=lambda plan: DPSEParams(f32(plan.params["eps"]), f32(plan.params["beta"])),
    compare=CompareBuiltin(_planned("dp_se"), "planner dp-se, mode certified (beta = 1/T)"))

register_learner(
    "dp_exp3", factory=dp_exp3, params_type=DPExp3Params, problem="bandits", private=True,
    conformance=ConformanceCase("jaxdp.bandits.conformance:dp_exp3_case"),
    description="DP-EXP3: EXP3 on Laplace-noised, clipped block-average losses (blocks of tau rounds)",
    reference="Tossou, Dimitrakakis 2017, Achieving privacy in the adversarial multi-armed bandit; Asi, Raman, "
              "Talwar 2025, Faster rates for private adversarial bandits", planner="dp-exp3",
    from_plan=lambda plan: DPExp3Params(f32(plan.params["eta"]), f32(plan.params["gamma"]), f32(plan.params["b"]),
                                        f32(plan.params["B"]), jnp.int32(plan.params["tau"])),
    compare=CompareBuiltin(_planned("dp_exp3"), "planner dp-exp3 (tau = 1), mode certified"))

register_learner(
    "ldp_ucb", factory=ldp_ucb, params_type=LDPUCBParams, problem="bandits", private=True,
    conformance=ConformanceCase("jaxdp.bandits.conformance:ldp_ucb_case"),
    description="LDP-UCB: UCB on rewards privatised locally with Lap(1/eps), Laplace-sum confidence radius",
    reference="Ren, Zhou, Lui, Zhang 2020, Multi-armed bandits with local differential privacy",
    planner="ldp-ucb", from_plan=lambda plan: LDPUCBParams(f32(plan.params["b"])),
    compare=CompareBuiltin(_planned("ldp_ucb"), "planner ldp-ucb, mode certified (b = 1/eps)"))
