"""Learned-event auditor (DP-Sniper), trade-off-curve bounds, input-pair search and DP-Sniper's benchmark.

Every statistical assertion holds for a correct implementation except with probability < 1e-6: the
validity checks (ε_lower <= true ε) fail with probability at most the audit's α = 1e-7, the power
checks leave margins of many standard deviations, and the family-wise check compares a count with
a binomial quantile at 1e-7. Seeds are fixed.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jaxdp import registry
from jaxdp.privacy.audit import (
    Histogram, Logistic, audit_learned, audit_tradeoff, best_threshold_event, gdp_delta, gdp_eps, onehot_features,
    pattern_pairs, loss_flip_pairs, tradeoff_bound, trajectory_features,
)
from jaxdp.privacy.audit import catalogue as C
from benchmarks.harness import dpsniper as D
from jaxdp.privacy.audit.learned import _count_event

ALPHA = 1e-7
SMALL = dict(n_train=20_000, n_select=50_000, n_eval=200_000)


def _lap(key, x):
    return x + jax.random.laplace(key, jnp.shape(x))          # scale 1: exactly 1-DP on the pair 0/1


EPS_RR = math.log(3.0)


def _rr(key, x):
    """Binary randomized response with P[truth] = 3/4: exactly ln 3-DP."""
    keep = jax.random.uniform(key) < 0.75
    return jnp.where(keep, x, 1 - x).astype(jnp.int32)


# ----------------------------------------------------------------------------- validity and power
def test_learned_bound_is_valid_and_tight_on_laplace_and_rr():
    rep = audit_learned(_lap, [(0.0, 1.0)], claimed_eps=1.0, key=jax.random.key(0), alpha=ALPHA, **SMALL)
    assert 0.85 <= rep.eps_lower <= 1.0, str(rep)        # valid (<= true ε) and close to it
    assert not rep.violation and rep.alpha_per_bound == ALPHA / 2
    assert rep.evidence["n_train"] == SMALL["n_train"] and rep.n == SMALL["n_eval"]
    rr = audit_learned(_rr, [(jnp.int32(0), jnp.int32(1))], claimed_eps=EPS_RR, key=jax.random.key(3), alpha=ALPHA,
                       classifiers=(Histogram(2), Logistic(onehot_features(2))), n_best=2, **SMALL)
    assert 0.9 * EPS_RR <= rr.eps_lower <= EPS_RR, str(rr)
    assert rr.alpha_per_bound == ALPHA / 4 and rr.n_candidates == 2


def test_learned_events_catch_broken_mechanisms():
    # NoisyHist2: Lap(0.1) noise on a histogram, 10-DP, claimed 0.1
    rep = audit_learned(D.noisy_hist_2, pattern_pairs(5, componentwise=False), claimed_eps=0.1,
                        key=jax.random.key(0), alpha=ALPHA, **SMALL)
    assert rep.violation and 5.0 < rep.eps_lower <= 10.0, str(rep)
    # Laplace with half the scale: 2-DP, claimed 1
    rep = audit_learned(C.laplace_half_scale, [(0.0, 1.0)], claimed_eps=1.0, key=jax.random.key(1), alpha=ALPHA,
                        **SMALL)
    assert rep.violation and 1.6 < rep.eps_lower <= 2.0, str(rep)
    assert "evidence" in str(rep)


def test_randomized_threshold_event_follows_dp_sniper_rule():
    from jaxdp.privacy.audit.learned import ThresholdEvent, _one_direction

    # a discrete score with three atoms: the best event is the whole top atom (ratio 2.5)
    s1 = np.repeat(np.array([0.0, 1.0, 2.0], np.float32), [500, 300, 200])
    s0 = np.repeat(np.array([0.0, 1.0, 2.0], np.float32), [200, 300, 500])
    ev = best_threshold_event(s0, s1, n_eval=10_000, delta=0.0, level=1e-3, c_grid=(0.1,))
    assert ev.sign == 1 and (ev.p_num, ev.p_den) == (0.5, 0.2)
    assert "s > 1" in ev.describe() or "s >= 2" in ev.describe()
    # DP-Sniper's candidate for the target c = 0.1 under x1: inside the top atom, tie kept w.p. q = 1/2
    _, t, q, pa, pb = _one_direction(np.sort(s0), np.sort(s1), 10_000, 0.0, 1e-3, 4, (0.1,))
    sb = np.sort(s1)[::-1]
    assert sb[100] == 2.0
    # a score trained the wrong way round: the same atom, as a lower set
    ev = best_threshold_event(-s0, -s1, n_eval=10_000, delta=0.0, level=1e-3)
    assert ev.num == 0 and ev.sign == -1 and (ev.p_num, ev.p_den) == (0.5, 0.2)
    # only x1 can be the numerator (x1's scores dominate): found in the other direction
    ev = best_threshold_event(np.zeros(1000, np.float32), s0, n_eval=10_000, delta=0.0, level=1e-3)
    assert ev.num == 1 and ev.p_num == 0.8 and ev.p_den == 0.0      # {s > 0}: impossible under x0
    # counting on fresh runs: the strict part plus a q-coin at the tie
    te = ThresholdEvent(sign=1, t=1.0, q=0.25, projected=0.0, p_num=0.0, p_den=0.0)
    u = np.array([0.1, 0.2, 0.3, 0.9, 0.0])
    assert _count_event(te, np.array([2.0, 1.0, 1.0, 1.0, 0.0], np.float32), u) == 2
    assert "w.p. 0.25" in te.describe()
    te = ThresholdEvent(sign=-1, t=-1.0, q=0.0, projected=0.0, p_num=0.0, p_den=0.0)
    assert _count_event(te, np.array([2.0, 1.0, 0.5, 0.0], np.float32), np.zeros(4)) == 2
    # the randomized candidates hit their target c exactly under the denominator input
    rng = np.random.default_rng(0)
    a, b = np.sort(rng.integers(0, 5, 1000).astype(np.float32)), np.sort(rng.integers(0, 4, 1000).astype(np.float32))
    for c in (0.05, 0.13, 0.4):
        _, t, q, pa, pb = _one_direction(a, b, 10_000, 0.0, 0.4, 2, (c,))
        if 0 < q < 1:
            assert pb == pytest.approx(c)


# ----------------------------------------------------------------------------- trade-off curve
def _gauss_eps(delta, mu):
    """Exact ε(δ) of the Gaussian mechanism with sensitivity / σ = μ (Balle & Wang 2018)."""
    return gdp_eps(delta, mu)


def test_gdp_conversion():
    # μ = 1, ε = 1: Φ(−0.5) − e Φ(−1.5)
    assert gdp_delta(1.0, 1.0) == pytest.approx(stats.norm.cdf(-0.5) - math.e * stats.norm.cdf(-1.5), rel=1e-9)
    for mu in (0.2, 1.0, 3.0):
        for d in (1e-6, 1e-3):
            e = gdp_eps(d, mu)
            assert gdp_delta(e, mu) == pytest.approx(d, rel=1e-6)
    assert gdp_eps(0.0, 1.0) == math.inf and gdp_eps(0.1, 0.0) == 0.0


def test_tradeoff_bound_is_valid_on_the_gaussian_mechanism():
    sigma = 2.0
    mu = 1.0 / sigma

    def gauss(key, x):
        return x + sigma * jax.random.normal(key, jnp.shape(x))

    def ident(o):
        return o

    true = _gauss_eps(1e-5, mu)           # the exact claim at δ = 1e-5 (2.02)
    for seed, method in ((0, "bonferroni"), (1, "dkw")):
        rep = audit_tradeoff(gauss, 0.0, 1.0, claimed_eps=true, claimed_delta=1e-5, key=jax.random.key(seed),
                             statistic=ident, n_select=50_000, n_eval=400_000, gdp=True, alpha=ALPHA, method=method)
        tb = rep.tradeoff
        assert tb.mu_lower <= mu, str(rep)
        assert tb.mu_lower >= (0.85 if method == "bonferroni" else 0.7) * mu, str(rep)
        for d in (1e-6, 1e-5, 1e-3, 1e-2):
            assert tb.eps_at(d) <= _gauss_eps(d, mu) and tb.eps_gdp(d) <= _gauss_eps(d, mu)
        # at small δ the μ-GDP fit sees far more than the direct bound
        assert tb.eps_gdp(1e-5) > tb.eps_at(1e-5)
        assert not rep.violation and "mu-GDP lower bound" in str(rep)
    # over-claim by 1.5: claimed ε(1e-5)/1.5 is refuted through the fit
    rep = audit_tradeoff(gauss, 0.0, 1.0, claimed_eps=true / 1.5, claimed_delta=1e-5, key=jax.random.key(2),
                         statistic=ident, n_select=50_000, n_eval=400_000, gdp=True, alpha=ALPHA)
    assert rep.violation


def test_tradeoff_bound_simultaneous_coverage():
    rng = np.random.default_rng(0)
    sa, sb = rng.normal(1.0, 1.0, 5000), rng.normal(0.0, 1.0, 5000)
    t = np.linspace(-2, 3, 20)
    tb = tradeoff_bound(sa, sb, alpha=1e-3, thresholds=t)
    assert np.all(tb.fpr_hi >= stats.norm.sf(tb.thresholds)) and np.all(tb.tpr_lo <= stats.norm.sf(tb.thresholds - 1))
    with pytest.raises(ValueError, match="fixed before"):
        tradeoff_bound(sa, sb, alpha=1e-3)
    assert tradeoff_bound(sa, sb, alpha=1e-3, method="dkw").mu_lower <= 1.0


# ----------------------------------------------------------------------------- pair search: family-wise α
def _null(key, x):
    return jax.random.randint(key, (), 0, 8) + 0 * jnp.asarray(x, jnp.int32)


def test_pair_search_respects_family_wise_alpha():
    """16 candidate pairs of a mechanism that ignores its input (true ε = 0), all evaluated on fresh runs:
    the fraction of seeds with ε_lower > 1e-9 stays below α (binomial bound at 1e-7)."""
    alpha, n_seeds, n_pairs = 0.3, 20, 16
    pairs = {f"{i} vs {i + 1}": (jnp.int32(i), jnp.int32(i + 1)) for i in range(n_pairs)}
    flagged = 0
    for seed in range(n_seeds):
        rep = audit_learned(_null, pairs, claimed_eps=1e-9, key=jax.random.key(seed), alpha=alpha,
                            classifiers=(Histogram(8),), n_train=1000, n_select=1000, n_eval=1000, n_best=n_pairs,
                            delta_float=0.0)
        assert rep.n_events == n_pairs and rep.alpha_per_bound == pytest.approx(alpha / (2 * n_pairs))
        flagged += rep.violation
    assert flagged <= stats.binom.isf(1e-7, n_seeds, alpha), flagged


def test_pattern_and_loss_flip_pairs():
    p = pattern_pairs(5)
    assert len(p) == 8 and all(np.max(np.abs(a - b)) <= 1 for a, b in p.values())
    p1 = pattern_pairs(5, componentwise=False)
    assert len(p1) == 2 and all(np.sum(a != b) == 1 for a, b in p1.values())
    assert len(pattern_pairs(1, componentwise=True)) == 2          # duplicates of d = 1 dropped
    f = loss_flip_pairs(4, 2)
    assert all(np.sum(np.any(a != b, axis=1)) == 1 for a, b in f.values())
    assert "base e1 before l4, l4: e1 vs e2" in f
    with pytest.raises(ValueError, match="rounds"):
        loss_flip_pairs(4, 2, rounds=(4,))
    feats = trajectory_features(2)(jnp.array([0, 0, 1, 1, 1]))
    assert feats.shape == (5 * 2 + 2 + 1,) and float(feats[-1]) == 1.0


def test_learned_audit_of_a_learner_trajectory():
    """Sequence outputs: per-round Hedge with a large step, its whole action sequence, flipped losses."""
    from jaxdp.privacy.audit import audit_learner_learned
    from jaxdp.experts import hedge, hedge_params

    rep = audit_learner_learned(hedge(2), hedge_params(2, 4), T=4, d=2, claimed_eps=0.5, key=jax.random.key(0),
                                neighbours=loss_flip_pairs(4, 2, rounds=(3,)), alpha=ALPHA, n_train=10_000,
                                n_select=20_000, n_eval=50_000)
    assert rep.violation and rep.n_pairs == 6 and rep.n_candidates == 12, str(rep)
    assert {"histogram", "logistic"} >= {rep.evidence["classifier"]}


def test_bad_inputs():
    with pytest.raises(TypeError, match="classifiers"):
        audit_learned(_lap, [(0.0, 1.0)], claimed_eps=1.0, key=jax.random.key(0), classifiers=("logistic",))
    with pytest.raises(ValueError, match="identical"):
        audit_learned(_lap, [(0.0, 0.0)], claimed_eps=1.0, key=jax.random.key(0))
    with pytest.raises(ValueError, match="claimed_eps"):
        audit_learned(_lap, [(0.0, 1.0)], claimed_eps=0.0, key=jax.random.key(0))
    with pytest.raises(ValueError, match="method"):
        audit_tradeoff(_lap, 0.0, 1.0, claimed_eps=1.0, key=jax.random.key(0), method="x")


# ----------------------------------------------------------------------------- DP-Sniper's mechanisms
def test_dpsniper_mechanisms_match_their_definitions():
    # MurmurHash3 x86_32 reference values (the mmh3 package's documented examples) and RAPPOR's filters
    assert D.murmur3_32(b"foo") == -156908512 and D.murmur3_32(b"foo", 42) == -1322301282
    assert int(np.sum(D.bloom_filter(0) != D.bloom_filter(1))) == 6
    # GeoSample: a distribution for every count, exactly ln(1 + 2^-k)-DP between neighbouring counts
    k, d, F = D.geo_sample_cdf()
    p = np.diff(np.concatenate([np.zeros((6, 1), np.int64), F], 1), axis=1) / d
    assert np.allclose(p.sum(1), 1.0) and np.all(p > 0)
    assert max(np.max(np.abs(np.log(p[c] / p[c + 1]))) for c in range(5)) == pytest.approx(math.log(9 / 8))
    n = 100_000
    z = np.asarray(jax.vmap(D.truncated_geometric, in_axes=(0, None))(jax.random.split(jax.random.key(0), n),
                                                                      jnp.array([2], jnp.int32)))
    freq = np.bincount(z, minlength=6) / n
    assert np.all(np.abs(freq - p[2]) <= 6 * np.sqrt(p[2] * (1 - p[2]) / n))
    # sparse vector encodings: one TRUE then ABORTED with c = 1
    out = np.asarray(D.svt_1(jax.random.key(0), jnp.full(10, 1e6, jnp.float32)))
    assert out[0] == 1 and np.all(out[1:] == -1)
    assert set(D.suite_names()) <= set(registry.AUDITS) and len(D.suite_names()) == 20
    assert sum(not v["broken"] for v in D.SUITE.values()) == 8


def test_dpsniper_broken_ones_flagged_at_quick_size():
    for name, floor in (("noisy-hist-2", 5.0), ("svt-5", 1.0)):
        rep = D.SUITE[name]["fn"](quick=True, seed=0)
        assert rep.violation and rep.eps_lower > floor and rep.confidence == pytest.approx(0.9), str(rep)
    md = D.suite_markdown([dict(name="laplace", eps_lower=0.09, violation=False, pair="p", n_pairs=2, n_train=1,
                                n_select=2, n_eval=3, seconds=1.0, true_eps=0.1, broken=False)])
    assert "0.0968" in md and "| laplace |" in md


def test_draw_features_fills_every_run_once_in_key_order():
    """Chunked drawing (filled in place, last chunk truncated) equals the runs of each chunk's keys, in order."""
    from jaxdp.privacy.audit.learned import draw_features

    mech = lambda k, x: x + jax.random.normal(k, (2,))                  # noqa: E731
    fn = lambda o: (o, o[:1] * 2.0)                                     # noqa: E731
    n, m = 1000, 256                                                     # 3 full chunks and a remainder of 232
    got = draw_features(mech, fn, jax.random.key(3), jnp.float32(1.0), n, m)
    ref = np.concatenate([np.asarray(jax.vmap(lambda k: mech(k, 1.0))(jax.random.split(kc, m)))
                          for kc in jax.random.split(jax.random.key(3), 4)])[:n]
    assert got[0].shape == (n, 2) and got[1].shape == (n, 1)
    np.testing.assert_allclose(got[0], ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[1], 2.0 * ref[:, :1], rtol=1e-6, atol=1e-6)
    assert len(np.unique(got[0][:, 0])) == n                             # no row left empty or copied twice


def test_blocked_newton_fit_matches_the_one_pass_fit(monkeypatch):
    """A logistic fit too large for one pass (two separate arrays, gradient and Hessian summed over row blocks and a
    remainder) gives the one-pass fit's standardisation and weights up to float summation order."""
    from jaxdp.privacy.audit import learned as LC

    rng = np.random.default_rng(5)
    n, D = 30_001, 6                                           # 2 full blocks of 8192 rows and a remainder per input
    f0 = rng.normal(size=(n, D)).astype(np.float32)
    f1 = (rng.normal(size=(n, D)) + np.linspace(0.0, 0.3, D)).astype(np.float32)
    f0[:, 0] = f0[:, 0] > 1.0                                  # a 0/1 feature, as flag features have
    one = LC.fit_classifier(LC.Logistic(), f0, f1, jax.random.key(0))
    monkeypatch.setattr(LC, "NEWTON_BLOCK_ENTRIES", 1000)
    monkeypatch.setattr(LC, "NEWTON_BLOCK_ROWS", 8192)
    blk = LC.fit_classifier(LC.Logistic(), f0, f1, jax.random.key(0))
    for a, b in zip(one[:3], blk[:3]):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-4, atol=1e-5)
    assert abs(float(blk[3]) - float(one[3])) < 1e-4
    w = np.asarray(blk[2])
    assert np.all(np.diff(w[1:]) < 0) and w[-1] < -0.1          # the shift grows with the coordinate: x1 scores lower
    # both the one-pass and the blocked path name the mismatched widths before compiling
    for entries in (1000, 2**30):
        monkeypatch.setattr(LC, "NEWTON_BLOCK_ENTRIES", entries)
        with pytest.raises(ValueError, match="f0 and f1 must have the same number of features per run, got 6 and 5"):
            LC.fit_classifier(LC.Logistic(), f0, f1[:, :5], jax.random.key(0))


def test_device_count_is_binomial_with_the_events_probability():
    """The on-device fresh count (DP-Sniper's sizes on an accelerator) is Binomial(n, P[M(x) in S]), ties included."""
    from jaxdp.privacy.audit.learned import Logistic, ThresholdEvent, count_event_on_device

    params = (jnp.zeros(1), jnp.ones(1), jnp.ones(1), jnp.float32(0.0))     # score = the output itself
    spec = Logistic()
    fn = lambda o: (jnp.atleast_1d(jnp.asarray(o, jnp.float32)),)      # noqa: E731
    n = 300_001                                                          # 18 full chunks and a remainder
    laplace = lambda k, x: x + jax.random.laplace(k)                      # noqa: E731
    uniform3 = lambda k, x: jax.random.randint(k, (), 0, 3).astype(jnp.float32) + x   # noqa: E731
    cases = [(laplace, ThresholdEvent(1, 0.5, 0.0, 0.0, 0.0, 0.0), 0.5 * math.exp(-0.5)),
             (laplace, ThresholdEvent(-1, 0.5, 0.0, 0.0, 0.0, 0.0), 0.5 * math.exp(-0.5)),
             (uniform3, ThresholdEvent(1, 1.0, 0.25, 0.0, 0.0, 0.0), 1 / 3 + 0.25 / 3)]
    for i, (mech, ev, p) in enumerate(cases):
        k = count_event_on_device(mech, fn, 0, spec, params, ev, jax.random.key(40 + i), 0.0, n, batch=1 << 14)
        assert stats.binomtest(k, n, p).pvalue > 1e-7, (i, k / n, p)
    # the same key gives the same count; another key another one
    a = count_event_on_device(laplace, fn, 0, spec, params, cases[0][1], jax.random.key(7), 0.0, 50_000, 1 << 14)
    b = count_event_on_device(laplace, fn, 0, spec, params, cases[0][1], jax.random.key(7), 0.0, 50_000, 1 << 14)
    c = count_event_on_device(laplace, fn, 0, spec, params, cases[0][1], jax.random.key(8), 0.0, 50_000, 1 << 14)
    assert a == b and a != c


def test_device_sized_suite_entry_runs():
    """``device=True`` counts the fresh runs on the device (here at a small size) and still bounds correctly."""
    old = D.DEVICE, D.DEVICE_BATCH
    try:
        D.DEVICE, D.DEVICE_BATCH = (20_000, 20_000, 200_000, 50_000), 1 << 15
        rep = D.audit_suite_entry("laplace", device=True)
        assert 0.0 <= rep.eps_lower <= 0.1 and not rep.violation and rep.n == 200_000
        rep = D.audit_suite_entry("noisy-hist-2", device=True)
        assert rep.violation
    finally:
        D.DEVICE, D.DEVICE_BATCH = old


def test_accelerator_table_is_generated_from_its_kept_rows():
    """AUDIT_DPSNIPER.md's accelerator table is the rendering of the kept rows; no kept bound exceeds the exact ε."""
    import importlib.util
    import json

    from _helpers import ROOT

    root = ROOT / "benchmarks"
    spec = importlib.util.spec_from_file_location("bench_audit_dev", root / "bench_audit.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    md = (root / "AUDIT_DPSNIPER.md").read_text()
    assert mod.device_markdown() in md
    for p in mod.DEVICE_RUNS:
        for line in (root / p).read_text().splitlines():
            r = json.loads(line)
            assert r["n_eval"] == D.DEVICE[2] and r["platform"] == "gpu"
            assert r["eps_lower"] <= D.SUITE[r["name"]]["true_eps"] + 1e-9, r
            assert r["violation"] == D.SUITE[r["name"]]["broken"], r


def test_device_count_and_suite_refuse_bad_input():
    from jaxdp.privacy.audit.learned import Logistic, ThresholdEvent, count_event_on_device

    ev = ThresholdEvent(1, 0.5, 0.0, 0.0, 0.0, 0.0)
    params = (jnp.zeros(1), jnp.ones(1), jnp.ones(1), jnp.float32(0.0))
    mech = lambda k, x: x + jax.random.laplace(k)                       # noqa: E731
    fn = lambda o: (jnp.atleast_1d(o),)                                  # noqa: E731
    with pytest.raises(ValueError, match="n"):
        count_event_on_device(mech, fn, 0, Logistic(), params, ev, jax.random.key(0), 0.0, 0)
    with pytest.raises(ValueError, match="batch"):
        count_event_on_device(mech, fn, 0, Logistic(), params, ev, jax.random.key(0), 0.0, 10, batch=-1)
    with pytest.raises(TypeError, match="ThresholdEvent"):
        count_event_on_device(mech, fn, 0, Logistic(), params, (1, 0.5), jax.random.key(0), 0.0, 10)
    with pytest.raises(TypeError, match="spec"):
        count_event_on_device(mech, fn, 0, "logistic", params, ev, jax.random.key(0), 0.0, 10)
    with pytest.raises(ValueError, match="unknown DP-Sniper mechanism"):
        D.audit_suite_entry("laplce")
    with pytest.raises(ValueError, match="unknown DP-Sniper mechanism"):
        D.run_suite(names=["svt-1", "svt-9"], verbose=False)


def test_rerank_keeps_the_family_wise_alpha_and_finds_the_best_pair():
    """Re-ranking refined candidates uses no fresh run: on a mechanism that ignores its input the flag rate stays
    below α (binomial bound at 1e-7); on Laplace(1) with pairs (0, s), the selection sample of 300 runs cannot tell
    s = 0.7 from s = 1 but the refined events (10⁵ runs) pick s = 1, whose bound is then the largest."""
    alpha, n_seeds, n_pairs = 0.3, 20, 16
    pairs = {f"{i} vs {i + 1}": (jnp.int32(i), jnp.int32(i + 1)) for i in range(n_pairs)}
    flagged = 0
    for seed in range(n_seeds):
        rep = audit_learned(_null, pairs, claimed_eps=1e-9, key=jax.random.key(seed), alpha=alpha,
                            classifiers=(Histogram(8),), n_train=1000, n_select=1000, n_eval=1000, n_best=1,
                            n_refine=1000, n_rerank=n_pairs, delta_float=0.0)
        assert rep.n_events == 1 and rep.alpha_per_bound == pytest.approx(alpha / 2)
        assert "best 16 re-ranked" in rep.family
        flagged += rep.violation
    assert flagged <= stats.binom.isf(1e-7, n_seeds, alpha), flagged
    shifts = {f"{s}": (jnp.float32(0.0), jnp.float32(s)) for s in (0.3, 0.5, 0.7, 1.0)}
    for seed in range(3):
        rep = audit_learned(_lap, shifts, claimed_eps=1.0, key=jax.random.key(seed), alpha=ALPHA, n_train=20_000,
                            n_select=300, n_eval=200_000, n_best=1, n_refine=100_000, n_rerank=4)
        assert rep.pair == "1.0" and 0.5 < rep.eps_lower <= 1.0, str(rep)
    with pytest.raises(ValueError, match="n_rerank"):
        audit_learned(_lap, shifts, claimed_eps=1.0, key=jax.random.key(0), n_refine=10, n_rerank=-1)


def test_suite_rows_carry_counts_and_the_delta_zero_bound():
    """A suite row keeps the event's counts and ln(p0_lo / p1_hi), DP-Sniper's δ = 0 bound, which is at least
    the report's own bound (that one subtracts the float δ floor first)."""
    (row,) = D.run_suite(quick=True, names=["laplace"], verbose=False, n_best=1, n_rerank=2,
                         sizes=(5_000, 5_000, 50_000, 20_000))
    assert row["k0"] > 0 and row["k1"] >= 0 and row["n_rerank"] == 2
    assert row["eps_lower_delta0"] == pytest.approx(max(math.log(row["p0_lo"] / row["p1_hi"]), 0.0))
    assert row["eps_lower_delta0"] >= row["eps_lower"] and row["delta_float"] > 0


def test_rerank_and_final_tables_are_generated_from_their_kept_rows():
    """AUDIT_DPSNIPER.md's re-rank and final-configuration tables render their kept rows; each row's bounds respect the exact ε, its δ = 0
    bound is ln(p0_lo / p1_hi) of its own counts' bounds, and the verdict matches the mechanism."""
    import importlib.util
    import json

    from _helpers import ROOT
    from jaxdp.privacy.audit import clopper_pearson_lower, clopper_pearson_upper

    root = ROOT / "benchmarks"
    spec = importlib.util.spec_from_file_location("bench_audit_rerank", root / "bench_audit.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    md = (root / "AUDIT_DPSNIPER.md").read_text()
    assert mod.device_markdown(mod.RERANK_RUNS) in md and mod.device_markdown(mod.FINAL_RUNS) in md
    for p in mod.RERANK_RUNS + mod.FINAL_RUNS:
        for line in (root / p).read_text().splitlines():
            r = json.loads(line)
            true = D.SUITE[r["name"]]["true_eps"]
            assert r["eps_lower"] <= r["eps_lower_delta0"] <= true + 1e-9, r
            assert r["violation"] == D.SUITE[r["name"]]["broken"] and r["n_rerank"] >= 2, r
            level = 0.1 / (2 * r["n_best"])
            lo = float(clopper_pearson_lower(r["k0"], r["n_eval"], level))
            hi = float(clopper_pearson_upper(r["k1"], r["n_eval"], level))
            assert r["eps_lower_delta0"] == pytest.approx(math.log(lo / hi), rel=1e-6), r
