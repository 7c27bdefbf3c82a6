"""Cross-checks of jaxdp.privacy.accounting against dp_accounting's RDP / PLD accountants.

Our closed forms are upper bounds (must be >= the exact PLD ε, up to the PLD
discretisation) or exact (must agree): Gaussian zCDP vs the RDP curve, the
optimal homogeneous composition (KOV15 Thm 3.3) vs the PLD of composed
randomized response, tree aggregation vs ``SingleEpochTreeAggregationDpEvent``.
"""
import math

import numpy as np
import pytest

import jaxdp.privacy.accounting as A

dpa = pytest.importorskip("dp_accounting")

VDI = 1e-4   # PLD value discretisation; pessimistic estimate => PLD ε >= exact ε >= PLD ε − k·VDI


@pytest.mark.parametrize("eps", [0.01, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("k", [1, 10, 100])
def test_pure_dp_composition_vs_pld(eps, k):
    """k-fold ε-DP: exact optimal composition (binary RR) = PLD; DR, KOV15 (corrected), basic are >= it."""
    ev = A.self_composed_event(A.pure_dp_event(eps), k)
    for dt in (1e-3, 1e-6):
        pld = A.pld_epsilon(ev, dt, value_discretization_interval=VDI)
        opt = A.eps_optimal_homogeneous(eps, 0.0, k, dt)
        tol = k * VDI + 1e-9
        assert pld - tol <= opt <= pld + 1e-9 * max(1.0, pld), (pld, opt)   # bisection rtol 1e-10
        kov = A.eps_kov15_homogeneous(eps, 0.0, k, dt)[0]
        assert kov == pytest.approx(A.eps_kov15([eps] * k, None, dt)[0], rel=1e-12)
        assert kov >= pld - tol
        assert A.eps_advanced_dr(eps, 0.0, k, dt)[0] >= pld - tol
        assert k * eps >= pld - tol


def test_uncorrected_kov_without_first_term_is_caught():
    """Shows the PLD check can fail: dropping the Σ ε tanh(ε/2) term of KOV15 undercuts the exact ε."""
    eps, k, dt = 1.0, 30, 1e-2
    pld = A.pld_epsilon(A.self_composed_event(A.pure_dp_event(eps), k), dt)
    sqrt_only = math.sqrt(2 * k * eps ** 2 * math.log(1 / dt))
    assert sqrt_only < pld - 5.0    # 16.6 vs 23.7
    assert A.eps_kov15([eps] * k, None, dt)[0] >= pld - k * VDI


@pytest.mark.parametrize("scale", [1.0, 10.0, 50.0])
def test_laplace_composition_vs_pld(scale):
    """k-fold Laplace(b) with sensitivity 1 is (1/b)-DP each: our bounds are >= the exact PLD ε."""
    k, dt = 50, 1e-5
    ev = A.self_composed_event(A.laplace_event(scale), k)
    pld = A.pld_epsilon(ev, dt)
    assert A.eps_composed_best(1.0 / scale, 0.0, k, dt) >= pld - k * VDI
    # Laplace is not the worst ε-DP mechanism: randomized response needs at least as much
    assert A.pld_epsilon(A.self_composed_event(A.pure_dp_event(1.0 / scale), k), dt) >= pld - k * VDI


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0, 20.0])
def test_gaussian_zcdp_equals_rdp_curve(sigma):
    """Gaussian: ρ = Δ²/(2σ²)-zCDP is exactly the RDP curve α ↦ ρα of dp_accounting (k-fold: kρα)."""
    k = 7
    acc = dpa.rdp.RdpAccountant()
    acc.compose(A.self_composed_event(A.gaussian_event(sigma), k))
    rho = k * A.gaussian_zcdp(1.0, sigma)
    np.testing.assert_allclose(acc._rdp, rho * acc._orders, rtol=1e-12)
    acc2 = dpa.rdp.RdpAccountant()
    acc2.compose(A.zcdp_event(rho))
    np.testing.assert_allclose(acc2._rdp, acc._rdp, rtol=1e-12)
    for delta in (1e-10, 1e-5, 1e-2):
        rdp = acc.get_epsilon(delta)
        cks = A.eps_from_rho(rho, delta, "cks")
        bs = A.eps_from_rho(rho, delta)
        # same conversion; ours optimises α continuously, theirs on a grid
        assert cks <= rdp + 1e-9 and cks == pytest.approx(rdp, rel=2e-2)
        assert bs >= cks - 1e-12
        # the k-fold Gaussian equals one Gaussian of σ/sqrt(k): the exact (analytic) ε is below both
        assert A.gaussian_eps_exact(1.0, sigma / math.sqrt(k), delta) <= cks + 1e-9


@pytest.mark.parametrize("eps", [0.05, 0.5, 0.95, 3.0])
@pytest.mark.parametrize("delta", [1e-8, 1e-5, 1e-2])
def test_gaussian_sigmas_certify_vs_exact(eps, delta):
    """Every σ calibration certifies (ε, δ) per the exact analytic Gaussian; the printed GROWTH σ is not needed."""
    exact = lambda s: A.gaussian_eps_exact(1.0, s, delta)  # noqa: E731
    assert exact(A.gaussian_sigma_zcdp(1.0, eps, delta)) <= eps
    if eps < 1:
        assert exact(A.gaussian_sigma_dr(1.0, eps, delta)) <= eps
        assert exact(A.gaussian_sigma_growth(1.0, eps, delta)) <= eps
    # and the test can fail: σ a bit below the exact calibration does not certify ε
    s_exact = dpa.get_sigma_gaussian(eps, delta)
    assert exact(0.9 * s_exact) > eps
    assert A.gaussian_sigma_zcdp(1.0, eps, delta) >= s_exact


@pytest.mark.parametrize("T", [1, 7, 1000, 1024])
def test_tree_aggregation_plan_vs_dp_accounting(T):
    """docs/algorithms/primitives.md#tree-aggregation σ (replace-one: node sensitivity 2L) certifies ε per dp_accounting's tree-aggregation RDP,
    whose curve equals that of a Gaussian with sensitivity sqrt(H) (same number of levels H)."""
    for eps, delta in [(0.1, 1e-8), (1.0, 1e-5), (4.0, 1e-2)]:
        plan = A.plan_tree_aggregation(eps=eps, delta=delta, T=T, L=1.0, mode="certified")
        sigma, H = plan.params["sigma"], plan.params["H"]
        assert H == math.floor(math.log2(T)) + 1
        tree = A.rdp_epsilon(A.tree_aggregation_event(sigma / 2.0, T), delta)
        gauss = A.rdp_epsilon(A.gaussian_event(sigma / (2.0 * math.sqrt(H))), delta)
        assert tree == pytest.approx(gauss, rel=1e-12)
        assert tree <= eps


def test_event_builders():
    ev = A.composed_event([A.gaussian_event(2.0), A.laplace_event(3.0)])
    assert isinstance(ev, dpa.ComposedDpEvent) and ev.events[0].noise_multiplier == 2.0
    rr = A.pure_dp_event(math.log(3.0))
    assert rr.num_buckets == 2 and rr.noise_parameter == pytest.approx(0.5)   # P(truth) = 3/4
    with pytest.raises(ValueError, match="events must be a non-empty"):
        A.composed_event([])
    with pytest.raises(TypeError, match=r"events\[0\] must be a dp_accounting.DpEvent"):
        A.composed_event([1.0])
    with pytest.raises(ValueError, match="sigma_over_sensitivity must be > 0"):
        A.gaussian_event(0.0)
    with pytest.raises(ValueError, match="cannot mix"):
        A.pld_epsilon(A.composed_event([A.pure_dp_event(1.0), A.laplace_event(1.0)]), 1e-5)
