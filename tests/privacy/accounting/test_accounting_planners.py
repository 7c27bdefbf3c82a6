"""Planners of jaxdp.privacy.accounting: every theorem condition re-checked independently over a grid of requests."""
import itertools
import math

import pytest

import jaxdp.privacy.accounting as A
from jaxdp.privacy.accounting import Plan
from jaxdp.registry import PLANNERS, get_planner

EPS = [0.05, 0.5, 1.0, 4.0]
DELTA = [1e-9, 1e-5, 1e-2]
T_ = [1, 7, 1000]
D_ = [1, 50]
GRID = list(itertools.product(EPS, DELTA, T_, D_))


def test_registered():
    for name in ["laplace", "gaussian", "tree_aggregation", "above_threshold", "advanced_composition"]:
        assert name in PLANNERS and PLANNERS[name].description
        assert get_planner(name).fn is getattr(A, f"plan_{name}")


@pytest.mark.parametrize("eps, delta, T, d", GRID)
def test_laplace(eps, delta, T, d):
    for mode in ("paper", "certified", "rate"):
        p = A.plan_laplace(eps=eps, delta=delta, T=T, d=d, mode=mode, sensitivity=2.0)
        assert isinstance(p, Plan) and p.certified and p.mode == mode
        e0 = p.params["eps_per_release"]
        assert p.params["scale"] == pytest.approx(2.0 / e0, rel=1e-14)       # b = Δ1/ε0 (Lemma 2.2)
        if mode == "certified":
            # independent check: T-fold composition of (Δ1/b)-DP certifies (ε, δ)
            assert A.eps_composed_best(2.0 / p.params["scale"], 0.0, T, delta) <= eps * (1 + 1e-9)
            assert e0 >= eps / T
        else:
            assert e0 == pytest.approx(eps / T) and p.delta_certified == 0
    p2 = A.plan_laplace(eps=eps, T=T, d=d, sensitivity=1.0, norm="l2")
    assert p2.params["sensitivity_l1"] == pytest.approx(math.sqrt(d))


@pytest.mark.parametrize("eps, delta, T, d", GRID)
def test_gaussian(eps, delta, T, d):
    for mode in ("paper", "certified", "rate"):
        p = A.plan_gaussian(eps=eps, delta=delta, T=T, d=d, mode=mode, sensitivity=3.0)
        s = p.params["sigma"]
        assert p.params["noise_sq"] == pytest.approx(d * s * s)
        ez = A.eps_from_rho(T * A.gaussian_zcdp(3.0, s), delta)
        edr = T * A.gaussian_eps_dr(3.0, s, delta / T)
        exact = A.gaussian_eps_exact(3.0 * math.sqrt(T), s, delta)      # T Gaussians = one, sensitivity sqrt(T)Δ
        # the ledger's certificate is the exact Gaussian profile: never above zCDP / Dwork-Roth, never below exact
        assert exact * (1 - 1e-9) - 1e-12 <= p.eps_certified <= min(ez, edr) * (1 + 1e-9)
        assert p.eps_certified == pytest.approx(exact, rel=1e-8, abs=1e-10)
        if mode == "paper":
            assert s == pytest.approx(2 * 3.0 * math.sqrt(math.log(2 * T / delta)) * T / eps, rel=1e-12)
        if mode == "certified":
            assert p.certified and all(p.conditions.values())
            # and it is not wasteful: σ is at most the Bun–Steinke calibration (the accountant's is smaller)
            assert s <= 3.0 * math.sqrt(T / (2 * A.rho_from_eps_delta(eps, delta))) * (1 + 1e-12)
    if eps / T < 1:
        p = A.plan_gaussian(eps=eps, delta=delta, T=T, d=d, mode="certified", method="dr")
        assert p.params["sigma"] == pytest.approx(A.gaussian_sigma_dr(1.0, eps / T, delta / T))
        assert p.certified
    else:
        with pytest.raises(ValueError, match="per-release eps = eps/T < 1"):
            A.plan_gaussian(eps=eps, delta=delta, T=T, d=d, mode="certified", method="dr")


@pytest.mark.parametrize("eps, delta, T, d", GRID)
def test_tree_aggregation(eps, delta, T, d):
    for mode in ("paper", "certified", "rate"):
        p = A.plan_tree_aggregation(eps=eps, delta=delta, T=T, d=d, mode=mode, L=0.5)
        s, H = p.params["sigma"], p.params["H"]
        assert H == math.floor(math.log2(T)) + 1
        rho = (2 * 0.5) ** 2 * H / (2 * s * s)                           # replace-one: Δ = 2L sqrt(H)
        exact = A.gaussian_eps_exact(2 * 0.5 * math.sqrt(H), s, delta)
        assert exact * (1 - 1e-9) - 1e-12 <= p.eps_certified <= A.eps_from_rho(rho, delta) * (1 + 1e-9)
        assert p.params["noise_sq_max"] == pytest.approx(H * d * s * s)
        if mode != "rate":
            assert p.certified and s == pytest.approx(0.5 * math.sqrt(2 * H / A.rho_from_eps_delta(eps, delta)))
    pr = A.plan_tree_aggregation(eps=eps, delta=delta, T=T, d=d, L=0.5)
    pa = A.plan_tree_aggregation(eps=eps, delta=delta, T=T, d=d, L=0.5, adjacency="add_remove")
    assert pa.certified and pa.params["sigma"] == pytest.approx(pr.params["sigma"] / 2, rel=1e-12)


@pytest.mark.parametrize("eps, T", list(itertools.product(EPS, T_)))
def test_above_threshold(eps, T):
    for mode in ("paper", "certified"):
        p = A.plan_above_threshold(eps=eps, T=T, mode=mode, beta=0.1, sensitivity=2.0)
        assert p.certified and p.delta_certified == 0 and p.eps_certified == eps
        assert p.params["threshold_scale"] == pytest.approx(4.0 / eps)
        assert p.params["query_scale"] == pytest.approx(8.0 / eps)
        assert p.params["alpha"] == pytest.approx(16.0 * (math.log(T) + math.log(20.0)) / eps)
    with pytest.raises(ValueError, match="mode must be one of"):
        A.plan_above_threshold(eps=eps, T=T, mode="rate")


@pytest.mark.parametrize("eps, delta, T", list(itertools.product(EPS, DELTA, T_)))
def test_advanced_composition(eps, delta, T):
    for mode in ("paper", "certified", "rate"):
        p = A.plan_advanced_composition(eps=eps, delta=delta, T=T, mode=mode)
        e0, d0 = p.params["eps_step"], p.params["delta_step"]
        assert T * d0 + p.params["delta_slack"] == pytest.approx(delta)
        assert p.eps_certified <= A.eps_composed_best(e0, d0, T, delta) * (1 + 1e-9)
        assert p.eps_certified >= A.eps_optimal_homogeneous(e0, d0, T, delta) * (1 - 1e-9) if T <= 1000 else True
        if mode == "paper":
            assert e0 == pytest.approx(eps / (2 * math.sqrt(2 * T * math.log(2 / delta))))
            assert p.conditions == {}
            if eps < 1:   # Cor. 3.21 holds: DR Thm 3.20 alone certifies ε
                assert A.eps_advanced_dr(e0, d0, T, delta / 2)[0] <= eps and p.certified
        if mode == "certified":
            assert p.certified and e0 >= eps / T * (1 - 1e-12)
            for m in ("basic", "dr", "kov"):
                pm = A.plan_advanced_composition(eps=eps, delta=delta, T=T, mode=mode, method=m)
                assert pm.certified and pm.params["eps_step"] <= e0 * (1 + 1e-9)
            pb = A.plan_advanced_composition(eps=eps, delta=delta, T=T, mode=mode, method="basic")
            assert pb.params["eps_step"] == pytest.approx(eps / T, rel=1e-8)


def test_advanced_composition_beats_basic_for_many_steps():
    p = A.plan_advanced_composition(eps=1.0, delta=1e-6, T=10000, mode="certified")
    assert p.params["eps_step"] > 10 * 1.0 / 10000


@pytest.mark.parametrize("call, exc, match", [
    (lambda: A.plan_laplace(eps=0.0), ValueError, "eps must be > 0"),
    (lambda: A.plan_laplace(eps=float("inf")), ValueError, "eps must be finite"),
    (lambda: A.plan_laplace(eps=1.0, delta=1.0), ValueError, "delta must be in"),
    (lambda: A.plan_laplace(eps=1.0, sensitivity=-1.0), ValueError, "sensitivity must be > 0"),
    (lambda: A.plan_laplace(eps=1.0, mode="fast"), ValueError, "mode must be one of"),
    (lambda: A.plan_laplace(eps=1.0, T=1e3), TypeError, "T must be an integer"),
    (lambda: A.plan_laplace(eps=1.0, T=0), ValueError, "T must be an integer >= 1"),
    (lambda: A.plan_laplace(eps=1.0, norm="l3"), ValueError, "norm must be one of"),
    (lambda: A.plan_gaussian(eps=1.0, delta=0.0), ValueError, "delta must be in"),
    (lambda: A.plan_gaussian(eps=1.0, delta=None), ValueError, "delta is required"),
    (lambda: A.plan_gaussian(eps=1.0, delta=1e-5, d=0), ValueError, "d must be an integer >= 1"),
    (lambda: A.plan_gaussian(eps=1.0, delta=1e-5, method="x"), ValueError, "method must be one of"),
    (lambda: A.plan_tree_aggregation(eps=1.0, delta=1e-5, T=10, L=float("nan")), ValueError, "L must be finite"),
    (lambda: A.plan_above_threshold(eps=1.0, T=10, beta=1.0), ValueError, "beta must be in"),
    (lambda: A.plan_above_threshold(eps=1.0, T=10, beta="x"), TypeError, "beta must be a number"),
    (lambda: A.plan_advanced_composition(eps=1.0, delta=1e-5, T=[1, 2]), TypeError, "T must be a single integer"),
    (lambda: A.plan_tree_aggregation(eps=1.0, delta=1e-5), TypeError, "missing 1 required keyword-only argument: 'T'"),
])
def test_planner_bad_inputs(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_cli_style_string_extras_and_format():
    p = A.plan_gaussian(eps=1.0, delta=1e-5, sensitivity="2.5")
    assert p.params["sensitivity_l2"] == 2.5
    text = p.format()
    assert "gaussian" in text and "sigma" in text and "OK" in text
