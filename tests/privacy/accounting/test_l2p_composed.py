"""L2P-MW's ``composed`` certificate (docs/algorithms/lazy.md#composed; Private Online Learning via Lazy Algorithms,
Thm 3.2 and Thm 3.10): an independent recomputation, soundness against exact ε on worst pairs, and the order
against the ``paper`` mode's certificate."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from jaxdp.experts.l2p_mw import L2P_MW_MODES, plan_l2p_mw
from jaxdp.privacy.accounting import certify
from jaxdp.privacy.accounting.l2p import l2p_composed_eps, l2p_ledger


def _count_reference(n, q_x, q_y, delta1):
    """The smallest k with P[Bin(n, q_x) + Bin(n, q_y) > k] <= delta1: the full convolution (small n)."""
    pmf = np.convolve(stats.binom.pmf(np.arange(n + 1), n, q_x), stats.binom.pmf(np.arange(n + 1), n, q_y))
    tail = np.concatenate([np.cumsum(pmf[::-1])[::-1][1:], [0.0]])      # tail[k] = P[sum > k]
    return int(np.flatnonzero(tail <= delta1)[0])


def _decision_reference(eta, p, B):
    """The switching decision's ε by brute force: keep probability (1 - p) min(1, e^{L - 2 B eta}) with the batch
    log-ratio L in [-B eta, B eta] and a neighbouring loss moving L by at most 2 eta (MW, losses in [0, 1])."""
    L = np.linspace(-B * eta, B * eta, 2001)
    g = np.linspace(-2 * eta, 2 * eta, 41)
    Lg, gg = np.meshgrid(L, g)
    keep = (1 - p) * np.minimum(1.0, np.exp(Lg - 2 * B * eta))
    keep2 = (1 - p) * np.minimum(1.0, np.exp(np.clip(Lg + gg, -B * eta, B * eta) - 2 * B * eta))
    return float(max(np.max(np.abs(np.log(keep / keep2))), np.max(np.abs(np.log((1 - keep) / (1 - keep2))))))


def _reference(eta, p, B, T, delta, delta1):
    """The composed certificate from its derivation, with dp_accounting's RDP-to-DP conversion."""
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    n = math.ceil(T / B)
    q_x = 1 - (1 - p) * math.exp(-3 * B * eta)
    k = _count_reference(n, q_x, p, delta1)
    dec = _decision_reference(eta, p, B)
    orders = np.concatenate([1.0 + np.logspace(-1.5, 0, 30), np.logspace(math.log10(2.0), 5, 400)])
    rdp = [k * min(2 * eta, a * eta * eta / 2) + min(dec, a * dec * dec / 2) + min(2 * eta, 2 * a * eta * eta)
           for a in orders]
    e_rdp, _ = compute_epsilon(list(orders), rdp, delta - 2 * delta1)
    return min(float(e_rdp), certify(l2p_ledger(eta, p, B, T, 0.0, delta1, "mw"), delta).eps)


@pytest.mark.parametrize("eta, p, B, T, delta1", [
    (0.01954, 0.9, 2, 8, 1e-10), (0.004886, 0.9, 8, 64, 1e-10), (0.00526553769546832, 0.2740352545075306, 2, 4000, 1e-9),
    (0.002, 0.05, 4, 20000, 1e-11), (0.4, 0.5, 1, 4, 1e-7)])
def test_composed_matches_reference(eta, p, B, T, delta1):
    delta = 2 * T * delta1
    got, _ = l2p_composed_eps(eta, p, B, T, delta, delta1)
    ref = _reference(eta, p, B, T, delta, delta1)
    # the reference's orders differ: equal up to the order grids' resolution, never below the conversion's value
    assert got == pytest.approx(ref, rel=2e-3)


def test_renyi_of_a_gibbs_sample_is_bounded_range():
    """The derivation's per-sample step: D_a(nu || nu') <= a eta^2 / 2 for MW measures on neighbouring streams."""
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(2000):
        d = int(rng.integers(2, 6))
        eta = float(rng.uniform(0.01, 2.0))
        cum = rng.uniform(0, 20, d) * rng.integers(0, 2, d)
        l0, l1 = rng.integers(0, 2, d).astype(float), rng.uniform(0, 1, d)
        lp = -eta * (cum + l0)
        lq = -eta * (cum + l1)
        lp -= np.logaddexp.reduce(lp)
        lq -= np.logaddexp.reduce(lq)
        for a in (1.5, 2.0, 4.0, 16.0, 100.0):
            D = np.logaddexp.reduce(a * lp + (1 - a) * lq) / (a - 1)
            worst = max(worst, D / (a * eta * eta / 2))
    assert worst <= 1.0 + 1e-9


@pytest.mark.parametrize("T, B, p, eta, exact", [(8, 2, 0.9, 0.01954, 0.05546), (64, 8, 0.9, 0.004886, 0.02999)])
def test_composed_at_least_exact_on_worst_pairs(T, B, p, eta, exact):
    """docs/results/tightness.md's worst pairs (l_1: 01 vs 10, then 01 for some rounds): the exact ε(δ) recomputed
    from the exact law, and the composed certificate above it (below it would be a privacy bug)."""
    from jaxdp.privacy.audit.exact import l2p_mw_law
    from jaxdp.privacy.audit.tightness import pair_eps

    delta1 = 1e-10
    delta = 2 * T * delta1
    x0 = np.zeros((T, 2))
    x0[1:6 if T == 8 else 5] = (0.0, 1.0)
    x1 = x0.copy()
    x0[0], x1[0] = ((0.0, 1.0), (1.0, 0.0)) if T == 8 else ((1.0, 0.0), (0.0, 1.0))
    e = pair_eps(lambda x: l2p_mw_law(x, eta=eta, p=p, B=B), x0, x1, delta=delta)
    assert e == pytest.approx(exact, rel=2e-3)
    got, which = l2p_composed_eps(eta, p, B, T, delta, delta1)
    assert which == "rdp"
    assert exact <= got < certify(l2p_ledger(eta, p, B, T, 0.0, delta1, "mw"), delta).eps


@pytest.mark.parametrize("T, eps, d", [(4, 0.5, 2), (1000, 1.0, 16), (10 ** 5, 0.5, 16), (10 ** 7, 1.0, 64)])
def test_composed_mode_at_most_paper(T, eps, d):
    assert "composed" in L2P_MW_MODES
    paper = plan_l2p_mw(eps=eps, delta=1e-6, T=T, d=d, mode="paper")
    comp = plan_l2p_mw(eps=eps, delta=1e-6, T=T, d=d, mode="composed")
    assert comp.params == paper.params
    assert comp.eps_certified <= paper.eps_certified
    if T >= 1000:      # many fresh samples: the Rényi bound halves the composition's square-root term
        assert comp.bound.startswith("rdp: the ledger") and comp.eps_certified < 0.6 * paper.eps_certified


def test_composed_mode_rejects_bad_input():
    with pytest.raises(ValueError, match="mode"):
        plan_l2p_mw(eps=1.0, delta=1e-6, T=100, d=4, mode="compose")
    with pytest.raises(ValueError, match="T must be >= the batch size"):
        plan_l2p_mw(eps=1.0, delta=1e-6, T=100, d=4, mode="composed", B=200)
