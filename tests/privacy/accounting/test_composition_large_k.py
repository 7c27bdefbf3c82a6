"""Exact optimal composition (Kairouz–Oh–Viswanath Thm 3.3) at large k: the windowed KOV sum.

``_log_delta_rr`` evaluates the sum only where the binomial pmf carries mass and adds a bound on the rest;
it must agree with the dense O(k) sum, be an upper bound on the exact value, match dp_accounting's PLD of
composed randomized response, and make the accountant and the ``advanced_composition`` planner certify
``method="optimal"`` far beyond the old 20000-event limit.
"""
import math

import numpy as np
import pytest

import jaxdp.privacy.accounting as A
from jaxdp.privacy.accounting import composition as CM
from scipy.special import gammaln


def _log_delta_rr_dense(eps: float, k: int, eps_total: float) -> float:
    """Reference O(k) form of ``_log_delta_rr``: every term of the KOV sum."""
    l = np.arange(k + 1, dtype=np.float64)
    log_binom = gammaln(k + 1.0) - gammaln(l + 1.0) - gammaln(k - l + 1.0)
    gap = (k - 2.0 * l) * eps - eps_total           # privacy loss at l disagreements minus ε'
    keep = gap > 0
    if not keep.any():
        return -math.inf
    # C(k,l) e^{(k-l)ε} (1 - e^{-gap}) / (1 + e^ε)^k
    terms = log_binom[keep] + (k - l[keep]) * eps + np.log(-np.expm1(-gap[keep]))
    m = float(terms.max())
    return m + math.log(float(np.exp(terms - m).sum())) - k * float(np.logaddexp(0.0, eps))


def test_windowed_sum_matches_dense_sum():
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(40):
        k = int(rng.integers(1, 20001))
        eps = float(10 ** rng.uniform(-4, 1))
        mu = math.sqrt(k) * eps + k * eps * math.tanh(eps / 2)
        et = float(rng.uniform(0.0, min(k * eps, 2 * mu + 5 * eps)))
        dense, win = _log_delta_rr_dense(eps, k, et), CM._log_delta_rr(eps, k, et)
        if dense == -math.inf:
            assert win == -math.inf
            continue
        worst = max(worst, abs(math.expm1(win - dense)))
    assert worst < 1e-9
    assert CM._log_delta_rr(0.1, 100, 10.0) == -math.inf       # ε' >= kε: nothing above the threshold
    assert CM._log_delta_rr(0.1, 100, 10.0 - 1e-9) > -math.inf


def test_windowed_sum_is_an_upper_bound_on_the_exact_sum():
    """Against the sum in exact rational arithmetic at ε' = (k − 2i)ε, where the KOV terms are closed form."""
    from fractions import Fraction

    eps, k = math.log(3.0), 400           # e^ε = 3: every term rational
    for i in (150, 170, 185):
        et = (k - 2 * i) * eps
        num = sum(math.comb(k, l) * (Fraction(3) ** (k - l) - Fraction(3) ** (k - 2 * i + l)) for l in range(i))
        exact = num / Fraction(4) ** k
        got = A.delta_optimal_homogeneous(eps, k, et)
        assert got >= float(exact) * (1 - 1e-15)
        assert got == pytest.approx(float(exact), rel=1e-10)


def test_eps_optimal_large_k_is_below_kov15():
    k, eps, dt = 10 ** 7, 1e-3, 1e-5
    opt = A.eps_optimal_homogeneous(eps, 0.0, k, dt)
    assert A.delta_optimal_homogeneous(eps, k, opt) <= dt
    assert A.delta_optimal_homogeneous(eps, k, opt * (1 - 1e-8)) > dt
    kov = A.eps_kov15_homogeneous(eps, 0.0, k, dt)[0]
    # CLT: privacy loss ~ N(kε tanh(ε/2), kε²); the exact ε' sits below KOV15 and near the Gaussian value
    assert opt < kov and 17.0 < opt < 18.5, (opt, kov)
    with pytest.raises(ValueError, match="rtol"):
        A.eps_optimal_homogeneous(eps, 0.0, 10, dt, rtol=0.0)


def _rr_pld(eps, k, pessimistic, vdi):
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as P

    one = P.from_randomized_response(2.0 / (1.0 + math.exp(eps)), 2, pessimistic_estimate=pessimistic,
                                     value_discretization_interval=vdi,
                                     neighboring_relation=NeighboringRelation.REPLACE_ONE)
    return one.self_compose(k)


def test_exact_lies_between_optimistic_and_pessimistic_pld():
    pytest.importorskip("dp_accounting")
    k, dt = 50_000, 1e-6
    # off the discretisation grid: optimistic and pessimistic PLDs bracket the exact value
    eps, vdi = 0.004, 0.004 / 20.5
    lo = _rr_pld(eps, k, False, vdi).get_epsilon_for_delta(dt)
    hi = _rr_pld(eps, k, True, vdi).get_epsilon_for_delta(dt)
    exact = A.eps_optimal_homogeneous(eps, 0.0, k, dt)
    assert lo <= exact <= hi
    # on the grid (ε = 16 vdi, dyadic) both discretisations are exact: the PLD equals the KOV value up to its
    # FFT rounding (~1e-12 absolute in δ)
    eps, vdi = 2.0 ** -8, 2.0 ** -12
    pld = _rr_pld(eps, k, True, vdi)
    exact = A.eps_optimal_homogeneous(eps, 0.0, k, dt)
    assert exact == pytest.approx(pld.get_epsilon_for_delta(dt), rel=1e-6)
    for et in (3.0, exact, 5.0):
        assert A.delta_optimal_homogeneous(eps, k, et) == pytest.approx(pld.get_delta_for_epsilon(et), rel=1e-5, abs=5e-12)


def test_accountant_uses_optimal_beyond_the_old_limit():
    e0, d0, k = 2.5 / 300_000, 1e-5 / 2 / 300_000, 300_000
    from jaxdp.privacy.accounting import ledger as LG

    c = A.certify(LG.sequential(LG.approx(e0, d0, count=k)), 1e-5)
    assert c.bound == "optimal"
    assert c.eps == pytest.approx(A.eps_optimal_homogeneous(e0, d0, k, 1e-5), rel=1e-12)
    assert c.eps < A.eps_kov15_homogeneous(e0, d0, k, 1 - (1 - 1e-5) / (1 - d0) ** k)[0] / 1.3   # was kov15
    assert A.OPTIMAL_AUTO_MAX_K >= 10 ** 7


def test_advanced_composition_planner_every_method_certifies():
    from jaxdp.privacy.accounting.planners import plan_advanced_composition as plan

    e, dl, T = 2.5, 1e-5, 300_000
    p = plan(eps=e, delta=dl, T=T, mode="certified", method="optimal")
    assert p.certified and p.eps_certified == pytest.approx(e, rel=1e-8) and p.bound.startswith("optimal")
    assert p.params["eps_step"] == pytest.approx(0.00107919, rel=1e-5)
    for m in ("basic", "dr", "kov"):
        q = plan(eps=e, delta=dl, T=T, mode="certified", method=m)
        assert q.certified and q.eps_certified < e and q.params["eps_step"] < p.params["eps_step"]
    b = plan(eps=e, delta=dl, T=T, mode="certified", method="basic")
    assert b.eps_certified == pytest.approx(0.0122865, rel=1e-5)      # exact; kov15 gave 0.0168671
    with pytest.raises(ValueError, match="method='optimal' needs T <= OPTIMAL_AUTO_MAX_K"):
        plan(eps=e, delta=dl, T=A.OPTIMAL_AUTO_MAX_K + 1, mode="certified", method="optimal")
