"""The float δ floor of the plans (docs/guide/privacy-ledger.md#float-floor).

The expected floors below are written from the algorithms' descriptions (REAL Algs. 1, 2, 4, 5 and the
float coupling lemma of ``jaxdp.privacy.accounting.floating``), not from the planners' code: per round one
AboveThreshold query (a fresh query noise and the threshold noise: two Laplace terms of ``2q``), the
exponential-mechanism draws actually used (``K`` per phase), the doubling checks, and for the binary
tree every live node of every counter entering two comparisons per round. The floor must grow with the
number of draws, i.e. with ``T``.
"""
import math

import numpy as np
import pytest

from jaxdp.privacy.accounting import ledger as LG
from jaxdp.privacy.accounting.floating import shared_threshold_terms
from jaxdp.privacy.accounting.plan import NO_FLOAT_FLOOR_RAW
from jaxdp.experts import (plan_adaptive_sparse_vector_experts, plan_binary_tree_experts,
                                       plan_potential_experts, plan_sparse_vector_experts)
from jaxdp.registry import PLANNERS, load_all

load_all()

TS = (37, 5000, 300_000)
D = 16


def _q(dtype):
    return 2.0 ** -23 if dtype == np.float32 else 2.0 ** -52


def _cat(d, q):
    """Inverse-CDF categorical over d outcomes: d - 1 boundaries, each a grid cell plus the cumulative sum's rounding."""
    n_add = d if d <= 32 else 2 * math.ceil(math.sqrt(d))
    return (d - 1) * (q + (n_add + 3) * q / 2)


def _f(eps):
    return 1.0 + math.exp(eps)


def expected(name, P, T, d, dtype):
    """The floor written from the algorithm: (number of coupling terms) x (their size) x (1 + e^eps) per mechanism."""
    q = _q(dtype)
    lap = 2 * q                                   # one Laplace coupling term
    if name == "sparse_vector_experts":           # T queries (one per round), K draws over d experts
        return _f(P["eps_svt"]) * T * 2 * lap + P["K"] * _f(P["eta"]) * _cat(d, q)
    if name == "adaptive_sparse_vector_experts":  # T queries; per phase K draws and K doubling checks
        phases = P["max_doublings"] + 1
        return (_f(P["eps_svt"]) * T * 2 * lap
                + phases * P["K"] * (_f(P["eta"]) * _cat(d, q) + _f(1.0 / P["zeta_scale"]) * lap))
    if name == "potential_experts":               # K instances sharing T rounds; K resamples over d experts
        return _f(2 * P["eps0"] / P["s_phi"]) * T * 2 * lap + P["K"] * _f(2 * P["eta"]) * _cat(d, q)
    if name == "binary_tree_experts":             # m_set counters, <= H live nodes x 2 comparisons per round;
        H = int(math.floor(math.log2(T))) + 1     # P_max m_set Gumbel draws (top-m: m comparisons per coordinate)
        return (P["m_set"] * _f(P["eps_tree"]) * 2 * T * H * lap
                + P["P_max"] * P["m_set"] * _f(P["eta_sel"]) * 2 * d * q)
    raise KeyError(name)


PLANNERS_REAL = {"sparse_vector_experts": plan_sparse_vector_experts,
                 "adaptive_sparse_vector_experts": plan_adaptive_sparse_vector_experts,
                 "potential_experts": plan_potential_experts, "binary_tree_experts": plan_binary_tree_experts}


@pytest.mark.parametrize("name", sorted(PLANNERS_REAL))
def test_realizable_floor_counts_every_draw(name):
    f64 = []
    for T in TS:
        plan = PLANNERS_REAL[name](eps=1.0, T=T, d=D, mode="paper")
        want32 = expected(name, plan.params, T, D, np.float32)
        assert plan.delta_float == pytest.approx(min(1.0, want32), rel=1e-9), (name, T)
        got64 = plan.ledger.delta_float(np.float64, eps=plan.eps_certified)
        assert got64 == pytest.approx(expected(name, plan.params, T, D, np.float64), rel=1e-9), (name, T)
        f64.append(got64)
    # the floor grows with the draws: at least half the growth of T (the per-instance terms do not grow)
    assert f64[0] < f64[1] < f64[2]
    assert f64[2] / f64[1] > 0.5 * TS[2] / TS[1] or name == "adaptive_sparse_vector_experts"
    # the sparse vector alone is T queries: the floor is at least T x 4q (it was 4q before draws were counted)
    assert f64[2] >= TS[2] * 4 * _q(np.float64)


def test_sparse_vector_floor_dominates_at_large_T():
    """Review figure: at T = 3e5 the sparse-vector queries cost T x 4q x (1 + e^{eps/2}) ~ 0.38 (was 3.0e-3)."""
    p = plan_sparse_vector_experts(eps=1.0, T=300_000, d=D, mode="paper")
    assert p.delta_float > 0.37 and "every draw counted" in p.format()


def test_shared_threshold_terms():
    """Terms of 2q per query for a threshold noise shared by several positives (adaptive queries)."""
    assert shared_threshold_terms(0.0) == 1
    w = 2 * 52 * math.log(2) + 3.3                # float64 support width + tails + rounding (valid for float32)
    for r in (1 / 160, 0.05, 0.5, 2.0):
        assert shared_threshold_terms(r) == 1 + math.ceil(r * w / 4)
    with pytest.raises(ValueError, match="scale_ratio"):
        shared_threshold_terms(-1.0)
    # the shared option of Alg. 1 uses it (K >= 2): T queries of that many terms
    p = plan_sparse_vector_experts(eps=1.0, T=5000, d=D, threshold="shared")
    ev = p.ledger.items[0]
    assert ev.float_draws == 5000 and ev.float_dim >= 2


RAW = ["laplace", "gaussian", "tree_aggregation", "dp_ftrl", "localization_sco", "epoch_growth_sco",
       "label-local-reg", "label-central-reg", "label-local-heavy", "label-central-heavy"]


@pytest.mark.parametrize("name", RAW)
def test_raw_release_plans_have_no_floor(name):
    plan = PLANNERS[name].fn(eps=1.0, delta=1e-6, T=1000, d=2)
    assert plan.delta_float is None and plan.delta_float_note == NO_FLOAT_FLOOR_RAW
    assert NO_FLOAT_FLOOR_RAW in plan.format()
    assert plan.to_dict()["delta_float"] is None and plan.to_dict()["delta_float_note"] == NO_FLOAT_FLOOR_RAW


def test_threshold_release_plans_have_a_floor():
    for name, kw in (("above_threshold", {}), ("label-local-cls", {"K": 4}), ("label-central-cls", {"K": 4}),
                     ("grad_inverse_sensitivity", {})):
        plan = PLANNERS[name].fn(eps=1.0, delta=0.0, T=1000, d=1, **kw)
        assert plan.delta_float is not None and plan.delta_float > 0, name
    # vector randomized response flips K coins, the per-bin exponential mechanism is a Gumbel-max over K
    q = 2.0 ** -23
    rr = PLANNERS["label-local-cls"].fn(eps=1.0, T=1000, d=1, K=4)
    assert rr.delta_float == pytest.approx(_f(1.0) * 4 * 1.5 * q, rel=1e-12)
    ex = PLANNERS["label-central-cls"].fn(eps=1.0, T=1000, d=1, K=4)
    assert ex.delta_float == pytest.approx(_f(1.0) * 2 * 4 * q, rel=1e-12)


def test_l2p_rmw_reports_no_number():
    """L2P-RMW's exact sampler returns a continuous point (grid cell + jitter, a data-dependent direction): a raw
    float release, so no floor may be printed as a number."""
    plan = PLANNERS["l2p_rmw"].fn(eps=1.0, delta=1e-6, T=1000, d=2, mode="paper")
    assert plan.delta_float is None and plan.delta_float_note == NO_FLOAT_FLOOR_RAW


def test_adaptive_phases_compose_in_parallel():
    """REAL Alg. 2: acc restarts at every switch, so the phases' sparse-vector instances run on disjoint rounds."""
    for T in TS:
        p = plan_adaptive_sparse_vector_experts(eps=1.0, T=T, d=D, mode="certified")
        P = p.params["max_doublings"] + 1
        eps0 = 2 * p.params["eps_svt"]
        assert p.eps_certified == pytest.approx((1.5 * P + 0.5) * eps0, rel=1e-9)
        assert 1.27 <= 2 * P * eps0 / p.eps_certified <= 1.32          # the sequential count was this loose
        par = p.ledger.items[0]
        assert isinstance(par, LG.Ledger) and par.composition == "parallel" and len(par.items) == P
        assert all(e.kind == "above_threshold" and e.eps == pytest.approx(eps0 / 2) for e in par.items)
