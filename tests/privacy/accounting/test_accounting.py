"""Closed-form accounting (jaxdp.privacy.accounting): hand-computed values, identities, search utilities, input checks."""
import math

import numpy as np
import pytest
from scipy.special import comb

import jaxdp.privacy.accounting as A

E = math.e


# ------------------------------------------------------------------------------------------ composition
def test_basic_and_parallel_known_values():
    assert A.eps_basic([0.1, 0.2, 0.3], [1e-6, 2e-6, 0.0]) == pytest.approx((0.6, 3e-6), rel=1e-15)
    assert A.eps_basic([0.5] * 10) == pytest.approx((5.0, 0.0))
    assert A.compose_basic is A.eps_basic
    assert A.compose_parallel([0.1, 0.7, 0.3], [1e-6, 0.0, 3e-6]) == (0.7, 3e-6)


def test_advanced_dr_known_values():
    # sqrt(2 k ln(1/δ')) ε + k ε (e^ε − 1), k = 100, ε = 0.1, δ' = 1e-5  (hand: 4.798526 + 1.051709)
    eps, delta = A.eps_advanced_dr(0.1, 1e-7, 100, 1e-5)
    assert eps == pytest.approx(math.sqrt(200 * math.log(1e5)) * 0.1 + 10 * math.expm1(0.1), rel=1e-14)
    assert eps == pytest.approx(5.850235, abs=1e-6)
    assert delta == pytest.approx(100 * 1e-7 + 1e-5)
    # broadcasting over ε
    e = A.eps_advanced_dr(np.array([0.01, 0.1]), 0.0, 100, 1e-5)[0]
    assert e.shape == (2,) and e[1] == pytest.approx(eps)


def test_kov15_corrected_vs_printed_known_values():
    eps_list = [0.1] * 100
    e, d = A.eps_kov15(eps_list, [0.0] * 100, 1e-5)
    s1 = 100 * 0.1 * (math.exp(0.1) - 1) / (math.exp(0.1) + 1)       # Σ ε (e^ε−1)/(e^ε+1) = 0.4995837
    b = s1 + math.sqrt(2 * 1.0 * math.log(1e5))                          # log(1/δ̃) branch
    a = s1 + math.sqrt(2 * 1.0 * math.log(E + 1.0 / 1e-5))
    assert e == pytest.approx(min(10.0, a, b), rel=1e-14)
    assert e == pytest.approx(5.298110, abs=1e-6)
    assert d == pytest.approx(1e-5, rel=1e-12)
    ep, dp = A.eps_kov15_printed(eps_list, None, 1e-5)
    assert ep == pytest.approx(10.0 + math.sqrt(2 * math.log(1e5)), rel=1e-14)   # Σε + sqrt term > basic
    assert ep > A.eps_basic(eps_list)[0] > e
    # δ_tot = 1 − (1 − δ̃) Π(1 − δ_t)
    _, d2 = A.eps_kov15([0.1, 0.2], [1e-3, 2e-3], 1e-2)
    assert d2 == pytest.approx(1 - (1 - 1e-2) * (1 - 1e-3) * (1 - 2e-3), rel=1e-13)
    # large ε: capped by basic composition
    assert A.eps_kov15([3.0, 3.0], None, 1e-6)[0] == 6.0


def test_kov15_homogeneous_matches_heterogeneous_and_zero_eps():
    for eps, k, dt in [(0.05, 37, 1e-6), (1.0, 5, 1e-3), (0.3, 1000, 1e-9)]:
        het = A.eps_kov15([eps] * k, [1e-8] * k, dt)
        hom = A.eps_kov15_homogeneous(eps, 1e-8, k, dt)
        assert hom[0] == pytest.approx(het[0], rel=1e-12) and hom[1] == pytest.approx(het[1], rel=1e-9)
    # ε_t = 0 entries are free (LAZY eq. (5): ε_t = 0 before t0)
    assert A.eps_kov15([0.0, 0.0, 0.2], None, 1e-5)[0] == pytest.approx(A.eps_kov15([0.2], None, 1e-5)[0])
    e = A.eps_kov15_homogeneous(np.array([0.0, 0.1]), 0.0, np.array([[10], [100]]), 1e-5)[0]
    assert e.shape == (2, 2) and np.all(e[:, 0] == 0)


def test_optimal_homogeneous_kov_table():
    # KOV15 Thm 3.3 at ε' = (k − 2i)ε: δ_i = Σ_{l<i} C(k,l)(e^{(k−l)ε} − e^{(k−2i+l)ε}) / (1+e^ε)^k
    for eps, k in [(0.5, 2), (0.3, 3), (0.1, 10), (1.0, 7), (0.05, 40)]:
        for i in range(0, k // 2 + 1):
            ref = sum(comb(k, l, exact=True) * (math.exp((k - l) * eps) - math.exp((k - 2 * i + l) * eps))
                      for l in range(i)) / (1 + math.exp(eps)) ** k
            got = A.delta_optimal_homogeneous(eps, k, (k - 2 * i) * eps)
            assert got == pytest.approx(ref, rel=1e-10, abs=1e-300)
    # k = 2, ε' = 0: δ = tanh(ε/2)
    assert A.delta_optimal_homogeneous(0.5, 2, 0.0) == pytest.approx(math.tanh(0.25), rel=1e-12)
    # with per-step δ: 1 − (1−δ)^k (1 − δ_rr)
    drr = A.delta_optimal_homogeneous(0.3, 3, 0.3)
    assert A.delta_optimal_homogeneous(0.3, 3, 0.3, 1e-3) == pytest.approx(1 - (1 - 1e-3) ** 3 * (1 - drr), rel=1e-12)


def test_optimal_is_the_smallest_bound_and_inverse():
    for eps, k, dt in [(0.1, 100, 1e-5), (0.5, 20, 1e-6), (0.01, 1000, 1e-3), (2.0, 3, 1e-2)]:
        opt = A.eps_optimal_homogeneous(eps, 0.0, k, dt)
        assert A.delta_optimal_homogeneous(eps, k, opt) <= dt * (1 + 1e-9)
        assert A.delta_optimal_homogeneous(eps, k, opt * (1 - 1e-6)) > dt
        kov = A.eps_kov15_homogeneous(eps, 0.0, k, dt)[0]
        dr = min(k * eps, A.eps_advanced_dr(eps, 0.0, k, dt)[0])
        assert opt <= kov + 1e-12 and opt <= dr + 1e-12 and opt <= k * eps
        assert A.eps_composed_best(eps, 0.0, k, dt) == pytest.approx(opt, rel=1e-12)
    with pytest.raises(ValueError, match="delta_total"):
        A.eps_optimal_homogeneous(0.1, 1e-3, 10, 1e-4)   # below 1 − (1 − δ)^k


def test_conditional_composition_and_group_privacy():
    e, d = A.compose_conditional([0.1] * 10, [1e-6] * 10, [1e-7] * 10, 1e-5)
    e2, d2 = A.eps_kov15([0.1] * 10, [1e-6] * 10, 1e-5)
    assert e == e2 and d == pytest.approx(d2 + 2e-6, rel=1e-12)
    assert A.group_privacy(0.5, 1e-6, 3) == pytest.approx((1.5, 3 * math.exp(1.0) * 1e-6), rel=1e-14)
    assert A.group_privacy(0.5, 0.0, 4) == (2.0, 0.0)
    assert A.group_privacy(5.0, 0.5, 10)[1] == 1.0     # capped


# ------------------------------------------------------------------------------------------ zCDP
def test_zcdp_known_values_and_roundtrip():
    assert A.pure_to_zcdp(1.0) == 0.5
    assert A.gaussian_zcdp(2.0, 4.0) == 4.0 / 32.0
    assert A.eps_from_rho(0.5, 1e-5) == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e5)), rel=1e-14)
    assert A.zcdp_to_approx(0.5, 1e-5) == (A.eps_from_rho(0.5, 1e-5), 1e-5)
    assert A.eps_from_rho(0.01, 1e-6, "lazy") == pytest.approx(3 * math.sqrt(0.01 * math.log(1e6)))
    for eps in [1e-4, 0.1, 1.0, 10.0, 100.0]:
        for delta in [1e-12, 1e-6, 0.1]:
            rho = A.rho_from_eps_delta(eps, delta)
            L = math.log(1 / delta)
            assert rho == pytest.approx((math.sqrt(eps + L) - math.sqrt(L)) ** 2, rel=1e-8)
            assert A.eps_from_rho(rho, delta) == pytest.approx(eps, rel=1e-12)
            assert A.eps_from_rho(rho, delta, "cks") <= eps * (1 + 1e-12)
    r = A.rho_from_eps_delta(np.array([0.1, 1.0]), 1e-5)
    assert isinstance(r, np.ndarray) and r.shape == (2,)


def test_gaussian_sigma_formulas():
    assert A.gaussian_sigma_dr(1.0, 0.5, 1e-5) == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-14)
    assert A.gaussian_sigma_growth(3.0, 1.0, 1e-5) == pytest.approx(6 * math.sqrt(math.log(2e5)), rel=1e-14)
    assert A.gaussian_sigma_growth_printed(1.0, 1.0, 1e-5) == pytest.approx(2 * math.log(2e5))
    # the corrected paper σ dominates Dwork–Roth for ε <= 1 (docs/algorithms/primitives.md#gaussian)
    for eps in [0.01, 0.5, 0.99]:
        for delta in [1e-10, 1e-5, 1e-2]:
            assert A.gaussian_sigma_growth(1.0, eps, delta) >= A.gaussian_sigma_dr(1.0, eps, delta)
    # zCDP σ certifies (ε, δ) exactly through Bun–Steinke
    s = A.gaussian_sigma_zcdp(2.0, 0.7, 1e-6)
    assert A.eps_from_rho(A.gaussian_zcdp(2.0, s), 1e-6) == pytest.approx(0.7, rel=1e-12)
    assert A.gaussian_eps_dr(1.0, A.gaussian_sigma_dr(1.0, 0.5, 1e-5), 1e-5) == pytest.approx(0.5)
    assert A.gaussian_eps_dr(1.0, 0.1, 1e-5) == math.inf
    with pytest.raises(ValueError, match="eps must be < 1"):
        A.gaussian_sigma_dr(1.0, 1.5, 1e-5)


# ------------------------------------------------------------------------------------------ search utilities
def test_calibrate_safe_side_and_errors():
    # increasing: largest x with x^2 <= 2
    x = A.calibrate(lambda x: x * x, 2.0, lo=1e-3, hi=10.0)
    assert x * x <= 2.0 and x == pytest.approx(math.sqrt(2), rel=1e-9)
    # decreasing: smallest σ with 1/σ <= 0.25
    s = A.calibrate(lambda s: 1 / s, 0.25, lo=0.1, hi=100.0, increasing=False)
    assert 1 / s <= 0.25 and s == pytest.approx(4.0, rel=1e-9)
    assert A.calibrate(lambda x: x, 5.0, lo=0.0, hi=1.0) == 1.0          # whole interval feasible
    with pytest.raises(ValueError, match="no widget in"):
        A.calibrate(lambda x: x + 10, 5.0, lo=0.0, hi=1.0, name="widget")
    with pytest.raises(ValueError, match="lo must be < hi"):
        A.calibrate(lambda x: x, 1.0, lo=2.0, hi=1.0)


def test_grid_search():
    grid = {"a": np.linspace(0, 2, 21), "b": np.linspace(-1, 1, 11)}
    res = A.grid_search(lambda a, b: (a - 1.3) ** 2 + (b - 0.4) ** 2, lambda a, b: a + 0 * b <= 1.05, grid)
    assert res.params == pytest.approx({"a": 1.0, "b": 0.4})
    assert res.value == pytest.approx(0.09)
    assert res.n_total == 231 and 0 < res.n_feasible < 231
    res2 = A.grid_search(lambda a, b: (a - 1.3) ** 2 + (b - 0.4) ** 2, lambda a, b: a <= 1.05, grid, chunk=4)
    assert res2.params == res.params and res2.n_feasible == res.n_feasible
    with pytest.raises(ValueError, match="no grid point certifies"):
        A.grid_search(lambda a, b: a, lambda a, b: a > 10, grid)
    with pytest.raises(ValueError, match=r"grid\['a'\]"):
        A.grid_search(lambda a: a, lambda a: a > 0, {"a": np.zeros((2, 2))})


# ------------------------------------------------------------------------------------------ input validation
@pytest.mark.parametrize("call, match, exc", [
    (lambda: A.eps_advanced_dr(0.0, 0.0, 10, 1e-5), "eps must be > 0", ValueError),
    (lambda: A.eps_advanced_dr(-1.0, 0.0, 10, 1e-5), "eps must be > 0", ValueError),
    (lambda: A.eps_advanced_dr(float("nan"), 0.0, 10, 1e-5), "eps must be finite", ValueError),
    (lambda: A.eps_advanced_dr(float("inf"), 0.0, 10, 1e-5), "eps must be finite", ValueError),
    (lambda: A.eps_advanced_dr(0.1, 1.0, 10, 1e-5), r"delta must be in \[0.0, 1.0\)", ValueError),
    (lambda: A.eps_advanced_dr(0.1, -0.1, 10, 1e-5), "delta must be in", ValueError),
    (lambda: A.eps_advanced_dr(0.1, 0.0, 10, 0.0), "delta_prime must be in", ValueError),
    (lambda: A.eps_advanced_dr(0.1, 0.0, 2.5, 1e-5), "k must be an integer", ValueError),
    (lambda: A.eps_kov15([[0.1, 0.2]], None, 1e-5), "eps_list must be a non-empty 1-D", ValueError),
    (lambda: A.eps_kov15([0.1, 0.2], [0.0], 1e-5), "delta_list must have the same shape", ValueError),
    (lambda: A.eps_kov15([0.1, -0.2], None, 1e-5), "eps_list must have every entry >= 0", ValueError),
    (lambda: A.eps_kov15([0.1], None, 1.0), "delta_tilde must be in", ValueError),
    (lambda: A.eps_basic(["a"], None), "eps_list must be a number", TypeError),
    (lambda: A.eps_basic([], None), "eps_list must be a non-empty", ValueError),
    (lambda: A.group_privacy(0.1, 0.0, 0), "k must be an integer >= 1", ValueError),
    (lambda: A.gaussian_zcdp(0.0, 1.0), "sensitivity must be > 0", ValueError),
    (lambda: A.gaussian_zcdp(1.0, -1.0), "sigma must be > 0", ValueError),
    (lambda: A.gaussian_sigma_zcdp(-1.0, 1.0, 1e-5), "Delta2 must be > 0", ValueError),
    (lambda: A.eps_from_rho(-0.1, 1e-5), "rho must be >= 0", ValueError),
    (lambda: A.eps_from_rho(0.1, 0.0), "delta must be in", ValueError),
    (lambda: A.eps_from_rho(0.1, 1e-5, "exact"), "method must be one of", ValueError),
    (lambda: A.eps_from_rho(2.0, 1e-5, "lazy"), "rho must be <= 1", ValueError),
    (lambda: A.rho_from_eps_delta(True, 1e-5), "eps must be a number, got bool", TypeError),
    (lambda: A.delta_optimal_homogeneous(0.1, 10.0, 0.5), "k must be an integer", TypeError),
])
def test_bad_inputs(call, match, exc):
    with pytest.raises(exc, match=match):
        call()
