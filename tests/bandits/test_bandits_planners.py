"""Planners of the private bandit learners: their ledgers against an independent recomputation of epsilon."""
import math

import numpy as np
import pytest
from scipy.special import comb

import jaxdp.bandits as BD
from jaxdp.privacy.accounting import certify
from jaxdp.registry import get_planner


def delta_k_fold(eps, eps0, k):
    """delta(eps) of the k-fold composition of eps0-DP mechanisms, computed here from the privacy profile of
    k-fold randomized response (which dominates every eps0-DP mechanism: Kairouz-Oh-Viswanath 2015, Thm 3.3):
    sum_l C(k, l) [e^{(k-l) eps0} - e^{eps} e^{l eps0}]_+ / (1 + e^{eps0})^k."""
    tot = 0.0
    for l in range(k + 1):
        a = (k - l) * eps0
        b = eps + l * eps0
        if a > b:
            tot += comb(k, l, exact=True) * math.exp(a - k * math.log1p(math.exp(eps0))) * -math.expm1(b - a)
    return tot


def test_planners_are_registered_and_certified():
    for name in ("dp-ucb-tree", "dp-se", "dp-exp3", "ldp-ucb"):
        plan = get_planner(name).fn(eps=0.5, delta=0.0, T=5000, d=6)
        assert plan.certified and plan.eps_certified <= 0.5 * (1 + 1e-9) and plan.delta_certified == 0.0
        assert plan.ledger is not None and plan.ledger.composition == "parallel"


@pytest.mark.parametrize("T", [1, 1000, 4096, 10_000, 2 ** 20])
def test_dp_ucb_tree_ledger_matches_h_over_b(T):
    """Paper mode: a reward enters floor(log2 T) + 1 nodes of one arm's tree, each Lap(b), sensitivity 1:
    eps = H / b (recomputed from T and b); the accountant certifies exactly that."""
    eps = 0.8
    plan = BD.plan_dp_ucb_tree(eps=eps, T=T, d=5)
    H = math.floor(math.log2(T)) + 1
    assert plan.params["H"] == H
    assert math.isclose(H / plan.params["b"], eps, rel_tol=1e-12)
    assert math.isclose(plan.eps_certified, eps, rel_tol=1e-9)
    assert math.isclose(certify(plan.ledger, 0.0).eps, H / plan.params["b"], rel_tol=1e-9)


def test_dp_ucb_tree_certified_mode_is_valid_composition():
    """Certified mode with delta > 0: the H node releases of eps0 = 1/b compose (recomputed with the k-fold
    profile above) to within the request, and the per-node noise is smaller than the pure plan's."""
    eps, delta, T = 1.0, 1e-6, 2 ** 16
    plan = BD.plan_dp_ucb_tree(eps=eps, delta=delta, T=T, d=9, mode="certified")
    pure = BD.plan_dp_ucb_tree(eps=eps, T=T, d=9)
    H, b = plan.params["H"], plan.params["b"]
    assert plan.certified and b <= pure.params["b"]
    assert delta_k_fold(plan.eps_certified, 1.0 / b, H) <= delta * (1 + 1e-6)
    assert delta_k_fold(eps, 1.0 / b, H) <= delta * (1 + 1e-6)
    # the recomputation is not vacuous: slightly less noise per node breaks the request
    assert delta_k_fold(eps, 1.05 / b, H) > delta


@pytest.mark.parametrize("eps", [0.1, 0.25, 1.0, 4.0])
def test_laplace_on_disjoint_data_ledgers(eps):
    """DP-SE, DP-EXP3 (blocks of 1 and of ceil(1/eps)) and LDP-UCB: each round's reward enters one Laplace
    release; eps recomputed as sensitivity / scale from the learner's parameters."""
    T, K = 20_000, 7
    se = BD.plan_dp_se(eps=eps, T=T, d=K)
    R1 = BD.dp_se_epoch_length(1, K, se.params["eps"], se.params["beta"])
    assert se.params["beta"] == 1.0 / T
    # the learner adds Lap(1 / (eps R)) to a mean of R rewards (tests/bandits/test_bandits_reference.py checks the law)
    assert math.isclose((1.0 / R1) / (1.0 / (se.params["eps"] * R1)), se.eps_certified, rel_tol=1e-9)
    for tau in (1, "auto"):
        pl = BD.plan_dp_exp3(eps=eps, T=T, d=K, tau=tau)
        t = pl.params["tau"]
        assert t == (1 if tau == 1 else max(1, math.ceil(1.0 / eps)))
        assert math.isclose((1.0 / t) / pl.params["b"], pl.eps_certified, rel_tol=1e-9)
        assert math.isclose(pl.eps_certified, eps, rel_tol=1e-9)
        g, eta, K_ = pl.params["gamma"], pl.params["eta"], K
        assert g <= 0.5 and eta * (1 + pl.params["B"]) * K_ / g <= 1 + 1e-9   # eta |estimate| <= 1
    ld = BD.plan_ldp_ucb(eps=eps, T=T, d=K)
    assert math.isclose(1.0 / ld.params["b"], ld.eps_certified, rel_tol=1e-9)


def test_planners_refuse_bad_requests():
    with pytest.raises(ValueError):
        BD.plan_dp_ucb_tree(eps=0.0, T=100, d=3)
    with pytest.raises(ValueError, match="T"):
        BD.plan_dp_se(eps=1.0, T=None, d=3)
    with pytest.raises(ValueError, match="mode"):
        BD.plan_ldp_ucb(eps=1.0, T=100, d=3, mode="bogus")
    with pytest.raises(ValueError, match="beta"):
        BD.plan_dp_se(eps=1.0, T=100, d=3, beta=2.0)


def test_theory_bounds_are_consistent():
    """The bounds' shapes: UCB1's is Auer et al.'s formula; the index-policy inversion with UCB1's radius gives
    8 ln T / Delta pulls; EXP3-family bounds grow like sqrt(T); DP-SE's is capped at T max(gap)."""
    mu = np.linspace(0.1, 0.9, 9)
    T = 10 ** 4
    gaps = mu.max() - mu
    assert math.isclose(BD.theory.ucb1_bound(mu, T), np.sum(8 * math.log(T) / gaps[gaps > 0])
                        + (1 + math.pi ** 2 / 3) * gaps.sum(), rel_tol=1e-12)
    inv = BD.theory.index_bound(mu, T, lambda n: math.sqrt(2 * math.log(T) / n))
    direct = sum(d * math.ceil(8 * math.log(T) / d ** 2) for d in gaps[gaps > 0]) + (1 + math.pi ** 2 / 3) * gaps.sum()
    assert abs(inv - direct) <= gaps.sum() + 1e-9
    r = BD.theory.exp3_bound(9, 4 * T) / BD.theory.exp3_bound(9, T)
    assert math.isclose(r, 2.0, rel_tol=1e-12)
    assert BD.theory.dp_se_bound(mu, 100, 1.0, 0.01) <= 100 * gaps.max() + 1e-9


def test_bench_bandits_numpy_column_and_report_render():
    """benchmarks/bench_bandits.py at a tiny size (no subprocess): its NumPy UCB1 runs, and its report renders
    from measured and from reference SMPyBandits figures. Timings are never asserted."""
    from _helpers import load_benchmark

    bb = load_benchmark("bench_bandits")
    r = bb.numpy_ucb1(16, 200)
    assert r.shape == (16,) and np.all(r > 0)
    jx = {"first_call_s": 2.0, "compile_s": 1.5, "run_s": 0.5, "seed_rounds_per_s": 1e7, "mean": 330.0, "se": 0.5,
          "n": 4096}
    sm = {"seed_rounds_per_s": 2e4, "mean": 331.0, "se": 1.5, "n": 100, "regrets": [331.0] * 100}
    res = {"jaxdp": {(a, c, "common"): jx for a in ("ucb1", "exp3") for c in (1, 2)},
           "numpy": {1024: {"seed_rounds_per_s": 5e6}}, "smpy_source": "measured",
           "smpy": {(a, c): sm for a in ("ucb1", "exp3") for c in (1, 2)}}
    md = bb.markdown(res, 10_000, 4096, "test")
    assert "500×" in md and "met" in md and "| UCB1 (common) |" in md
    res["smpy_source"] = "reference"
    res["smpy"] = {(a, 1): dict(bb.REFERENCE[a], n=bb.REFERENCE[a]["reps"]) for a in ("ucb1", "exp3")}
    assert "could not be run here" in bb.markdown(res, 10_000, 4096, "test")
