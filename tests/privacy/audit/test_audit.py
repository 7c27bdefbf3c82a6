"""Auditor: Clopper–Pearson bounds, the Bonferroni split (family-wise error α), every catalogue
entry gets the right verdict, correct mechanisms are never flagged across keys, the search over
neighbour pairs and events, the (eps, delta) check, the float δ floor, the registry, and input
validation."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jaxdp import registry
from jaxdp.privacy.accounting import floating as F
from jaxdp.privacy.audit import (
    CATALOGUE, HistogramEvents, SearchEvents, ThresholdEvents, audit, audit_mechanism, bonferroni_level,
    clopper_pearson_lower, clopper_pearson_upper, eps_lower_bound,
)
from jaxdp.privacy.audit.learners import audit_learner, learner_mechanism, loss_neighbours
from jaxdp.privacy.audit import catalogue as C
from jaxdp.privacy.mechanisms import laplace_mech


def test_clopper_pearson_bounds():
    n, a = 1000, 1e-3
    assert clopper_pearson_upper(0, n, a) == pytest.approx(1 - a ** (1 / n))
    assert clopper_pearson_lower(n, n, a) == pytest.approx(a ** (1 / n))
    assert clopper_pearson_lower(0, n, a) == 0.0 and clopper_pearson_upper(n, n, a) == 1.0
    # exact coverage: P[Binomial(n, p) gives lower > p] <= a
    p = 0.3
    k = np.arange(n + 1)
    bad = clopper_pearson_lower(k, n, a) > p
    assert stats.binom.pmf(k[bad], n, p).sum() <= a
    bad = clopper_pearson_upper(k, n, a) < p
    assert stats.binom.pmf(k[bad], n, p).sum() <= a
    assert eps_lower_bound(500, 1000, 100, 1000, 0.0, 1e-3) == pytest.approx(
        np.log(clopper_pearson_lower(500, 1000, 1e-3) / clopper_pearson_upper(100, 1000, 1e-3)))
    assert eps_lower_bound(5, 1000, 1, 1000, 0.5, 1e-3) == -np.inf


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_catalogue_verdicts(name):
    entry = CATALOGUE[name]
    rep = entry["fn"](quick=True, seed=0)
    assert rep.violation == entry["broken"], str(rep)
    assert rep.claimed_eps == entry["claimed_eps"]
    text = str(rep)
    assert name in text and ("VIOLATION" in text) == entry["broken"]
    if entry["broken"]:
        assert rep.eps_lower > rep.claimed_eps and "evidence" in text


@pytest.mark.parametrize("name", ["laplace", "svt", "noisy-max"])
def test_correct_mechanisms_never_flagged_across_keys(name):
    for seed in range(1, 5):      # compiled functions are cached: only sampling is repeated
        rep = CATALOGUE[name]["fn"](quick=True, seed=seed)
        assert not rep.violation, str(rep)
        assert 0.0 <= rep.eps_lower <= rep.claimed_eps <= rep.ci[1] + 1e-9 or rep.ci[1] >= rep.eps_lower


def _lap(key, x):
    return laplace_mech(key, x, 1.0, 1.0)


def _lap_half(key, x):
    return laplace_mech(key, x, 1.0, 2.0)


def test_search_events_selects_then_evaluates_on_fresh_sample():
    ev = SearchEvents(statistic=lambda o: o, n_thresholds=32)
    bad = audit(_lap_half, 0.0, 1.0, claimed_eps=1.0, events=ev, n=200_000, key=jax.random.key(1))
    assert bad.violation and bad.n_events == 4 and bad.evidence["search_sample"] == 100_000
    assert bad.evidence["n0"] == 100_000          # bound computed on the second half only
    good = audit(_lap, 0.0, 1.0, claimed_eps=1.0, events=ev, n=200_000, key=jax.random.key(2))
    assert not good.violation and good.eps_lower > 0.5
    # cells: unions of likely cells on a discrete output (the broken sparse vector)
    ev = SearchEvents(cell=lambda o: o, n_cells=C.M_SVT + 2)
    rep = audit(C._svt_nothr, C.Q0, C.Q1, claimed_eps=C.EPS_SVT, events=ev, n=800_000, key=jax.random.key(3))
    assert rep.violation, str(rep)


def _leaky(key, x):
    """Laplace(1), but with probability 0.01 the input is published (shifted far away)."""
    k1, k2 = jax.random.split(key)
    leak = jax.random.uniform(k1) < 0.01
    return jnp.where(leak, 100.0 + 100.0 * x, laplace_mech(k2, x, 1.0, 1.0))


def test_eps_delta_check():
    ev = ThresholdEvents(thresholds=(50.0, 150.0, -0.5, 0.5, 1.5))
    rep = audit(_leaky, 0.0, 1.0, claimed_eps=1.0, claimed_delta=1e-3, events=ev, n=100_000, key=jax.random.key(4))
    assert rep.violation and rep.evidence["delta_lower"] > 1e-3, str(rep)
    rep = audit(_leaky, 0.0, 1.0, claimed_eps=1.0, claimed_delta=0.02, events=ev, n=100_000, key=jax.random.key(5))
    assert not rep.violation, str(rep)


def test_registry_lists_audits():
    registry.load_all()
    for name, entry in CATALOGUE.items():
        reg = registry.get_audit(name)
        assert reg.extra["broken"] == entry["broken"] and reg.extra["claimed_eps"] == entry["claimed_eps"]
    assert {"svt_no_threshold_noise", "svt_small_query_noise", "svt_reports_noisy_value", "svt_no_halt",
            "laplace_half_scale", "noisy_max_wrong_scale"} <= set(registry.AUDITS)      # one spelling: underscores


@pytest.mark.parametrize("kw, match", [
    (dict(claimed_eps=0.0), "claimed_eps"),
    (dict(claimed_eps=-1.0), "claimed_eps"),
    (dict(claimed_eps=float("inf")), "claimed_eps"),
    (dict(claimed_delta=1.0), "claimed_delta"),
    (dict(claimed_delta=-0.1), "claimed_delta"),
    (dict(n=1), "n"),
    (dict(n=10.5), "n"),
    (dict(confidence=1.0), "confidence"),
    (dict(key=jax.random.PRNGKey(0)), "key"),
    (dict(x1=np.zeros(2)), "shape"),
    (dict(x0=np.nan), "x0"),
    (dict(events="thresholds"), "events"),
    (dict(events=HistogramEvents(2, cell=lambda o: jnp.int32(5))), r"\[0, 2\)"),
    (dict(events=SearchEvents()), "statistic"),
    (dict(mechanism=3), "mechanism"),
])
def test_audit_bad_inputs(kw, match):
    args = dict(mechanism=_lap, x0=0.0, x1=1.0, claimed_eps=1.0, n=1000, key=jax.random.key(0))
    args.update(kw)
    mech, x0, x1 = args.pop("mechanism"), args.pop("x0"), args.pop("x1")
    with pytest.raises((ValueError, TypeError), match=match):
        audit(mech, x0, x1, **args)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_catalogue_full_size_several_seeds(name):
    for seed in range(2):
        rep = CATALOGUE[name]["fn"](quick=False, seed=100 + seed)
        assert rep.violation == CATALOGUE[name]["broken"], str(rep)


@pytest.mark.slow
def test_benchmark_tiny():
    from _helpers import load_benchmark

    mod = load_benchmark("bench_audit")
    rows = mod.run(n=2000, seed=0)
    assert len(rows) == 6 and all(r["seconds"] > 0 for r in rows)
    assert "audits/min" in mod.markdown(rows)


# ----------------------------------------------------------------------------- Bonferroni: family-wise error α
def _recompute(rep, tests):
    """ε lower bound of ``tests`` = [(k_a, n_a, k_b, n_b)] with every one-sided bound at ``alpha_per_bound``."""
    d = rep.delta_tested
    return max(max(float(eps_lower_bound(ka, na, kb, nb, d, rep.alpha_per_bound)) for ka, na, kb, nb in tests), 0.0)


def test_bonferroni_each_bound_at_alpha_over_2m():
    """m tests x 2 one-sided bounds share α: each bound at α/(2m), so the family-wise error is α (it was 2α)."""
    alpha = 1e-3
    ev = ThresholdEvents(thresholds=(0.5, 1.5))          # 4 events x 2 directions = 8 tests
    rep = audit(_lap_half, 0.0, 1.0, claimed_eps=1.0, events=ev, n=4000, key=jax.random.key(11),
                confidence=1 - alpha)
    assert rep.n_events == 8 and rep.alpha_per_bound == pytest.approx(alpha / 16) == bonferroni_level(alpha, 8)
    e = rep.evidence
    assert rep.eps_lower == pytest.approx(_recompute(rep, [(e["k0"], e["n0"], e["k1"], e["n1"])]))
    # the reported interval uses the same level: its lower end is the bound
    assert clopper_pearson_lower(e["k0"], e["n0"], alpha / 16) == pytest.approx(e["p0_lo"])
    # the search path: n_best tests evaluated on fresh runs, each bound at α/(2 n_best)
    rep = audit_mechanism(_lap_half, [(0.0, 1.0)], SearchEvents(statistic=lambda o: o), claimed_eps=1.0, n=4000,
                          key=jax.random.key(12), alpha=alpha, n_best=3)
    assert rep.n_events == 3 and rep.alpha_per_bound == pytest.approx(alpha / 6)
    e = rep.evidence
    assert clopper_pearson_upper(e["k1"], e["n1"], alpha / 6) == pytest.approx(e["p1_hi"])


def _rr(key, y):
    from jaxdp.privacy.mechanisms import rr_binary
    return rr_binary(key, y, 1.0)


def test_family_wise_error_exact():
    """Exact false-alarm probability of a 2-cell histogram audit of binary randomized response at its true ε.

    Sums the Binomial pmfs over every outcome that the auditor, at the per-bound level it reports,
    would flag: it must be <= α.
    """
    eps, n, alpha = 1.0, 60, 0.2
    rep = audit(_rr, jnp.int32(1), jnp.int32(0), claimed_eps=eps, events=HistogramEvents(2), n=n,
                key=jax.random.key(13), confidence=1 - alpha, delta_float=0.0)
    level = rep.alpha_per_bound
    assert rep.n_events == 4 and level == pytest.approx(alpha / 8)
    p = np.exp(eps) / (1 + np.exp(eps))
    k0, k1 = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    e = np.maximum.reduce([eps_lower_bound(k0, n, k1, n, 0.0, level), eps_lower_bound(k1, n, k0, n, 0.0, level),
                           eps_lower_bound(n - k0, n, n - k1, n, 0.0, level),
                           eps_lower_bound(n - k1, n, n - k0, n, 0.0, level)])
    w = stats.binom.pmf(k0, n, p) * stats.binom.pmf(k1, n, 1 - p)
    assert float(w[e > eps].sum()) <= alpha


# ----------------------------------------------------------------------------- search over neighbour pairs
def test_search_over_pairs_finds_the_revealing_pair():
    """Laplace(1) claimed 0.5-DP: only the pair (0, 1) of three reveals it; a weak pair alone does not."""
    pairs = {"0 vs 0.1": (0.0, 0.1), "0 vs 0.25": (0.0, 0.25), "0 vs 1": (0.0, 1.0)}
    rep = audit_mechanism(_lap, pairs, SearchEvents(statistic=lambda o: o), claimed_eps=0.5, n=100_000,
                          key=jax.random.key(21))
    assert rep.violation and rep.pair == "0 vs 1" and rep.n_pairs == 3, str(rep)
    assert "best pair" in str(rep)
    weak = audit_mechanism(_lap, [(0.0, 0.25)], SearchEvents(statistic=lambda o: o), claimed_eps=0.5, n=100_000,
                           key=jax.random.key(22))
    assert not weak.violation and weak.eps_lower < 0.25


def test_loss_neighbours_and_learner_audit():
    pairs = loss_neighbours(4, 2)
    assert len(pairs) == 6 and "l1: e1 vs e2" in pairs
    x0, x1 = pairs["l1: e1 vs e2"]
    assert x0.shape == (4, 2) and np.array_equal(np.asarray(x0[0]), [1, 0]) and np.array_equal(np.asarray(x1[0]), [0, 1])
    assert np.all(np.asarray(x0[1:]) == 0) and len(loss_neighbours(4, 2, rounds=(0, 3))) == 12
    with pytest.raises(ValueError, match="rounds"):
        loss_neighbours(4, 2, rounds=(4,))
    from jaxdp.experts import hedge, hedge_params
    lrn, prm = hedge(2), hedge_params(2, 16)
    acts = learner_mechanism(lrn, prm)(jax.random.key(0), x0)
    assert acts.shape == (5,)
    # per-round Hedge with a large step is far from 0.05-DP: flagged
    rep = audit_learner(lrn, hedge_params(2, 4), T=4, d=2, claimed_eps=0.05, n=20_000, key=jax.random.key(23))
    assert rep.violation and rep.n_pairs == 6, str(rep)


@pytest.mark.parametrize("kw, match", [
    (dict(neighbours=[]), "at least one"),
    (dict(neighbours=[(0.0, 0.0)]), "identical"),
    (dict(neighbours=[(0.0, 1.0), (np.zeros(2), np.ones(2))]), "shapes"),
    (dict(neighbours=[(0.0,)]), "tuple"),
    (dict(neighbours=3), "neighbours"),
    (dict(search=1.0), "search"),
    (dict(n_best=0), "n_best"),
    (dict(alpha=0.0), "alpha"),
    (dict(delta_float=-1e-9), "delta_float"),
    (dict(events=[ThresholdEvents(), "x"]), "events"),
])
def test_audit_mechanism_bad_inputs(kw, match):
    args = dict(sample_fn=_lap, neighbours=[(0.0, 1.0)], claimed_eps=1.0, n=1000, key=jax.random.key(0))
    args.update(kw)
    with pytest.raises((ValueError, TypeError), match=match):
        audit_mechanism(args.pop("sample_fn"), args.pop("neighbours"), args.pop("events", None), **args)


# ----------------------------------------------------------------------------- floating point
def test_pure_claim_verified_only_down_to_float_floor():
    rep = audit(_lap, 0.0, 1.0, claimed_eps=1.0, n=20_000, key=jax.random.key(31))
    assert rep.claimed_delta == 0.0 and rep.delta_float == F.FLOAT32_DELTA_FLOOR
    assert rep.delta_tested >= F.FLOAT32_DELTA_FLOOR and "verified down to delta_float" in str(rep)
    assert 0 < rep.resolution < 1e-2
    # the floor enters the test: a 1% leak is invisible once delta_float covers it
    ev = ThresholdEvents(thresholds=(50.0, 150.0, -0.5, 0.5, 1.5))
    rep = audit(_leaky, 0.0, 1.0, claimed_eps=1.0, claimed_delta=1e-3, events=ev, n=100_000, key=jax.random.key(4),
                delta_float=0.02)
    assert not rep.violation and rep.delta_tested == pytest.approx(0.021)


def test_float_floor_values():
    q = 2.0 ** -23
    assert F.FLOAT32_DELTA_FLOOR == q and F.uniform_quantum(np.float64) == 2.0 ** -52
    assert F.delta_float("laplace", eps=1.0, d=2) == pytest.approx(2 * (1 + np.e) * 2 * q)
    assert F.delta_float("bernoulli", eps=0.0) == pytest.approx(2 * 1.5 * q)
    assert F.delta_float("rr_kary", eps=0.0) == pytest.approx(2 * (1.5 * q + 2.0 ** -32))
    assert F.delta_float("categorical", d=1) == 0.0
    assert F.delta_float("laplace", eps=1.0, draws=0) == 0.0 and F.delta_float("laplace", eps=np.inf) == 1.0
    for kind in F.FLOAT_KINDS:
        a, b = F.delta_float(kind, eps=1.0, d=4), F.delta_float(kind, eps=2.0, d=4)
        assert 0 < a < b < 1e-4
        assert F.delta_float(kind, np.float64, eps=1.0, d=4) < (1e-2 if kind == "rr_kary" else 1e-8) * a
        assert F.delta_float(kind, eps=1.0, d=4, draws=10) == pytest.approx(10 * a)
    for bad, match in [(dict(kind="mala"), "kind"), (dict(kind="laplace", d=0), "d"),
                       (dict(kind="laplace", eps=-1.0), "eps"), (dict(kind="laplace", draws=-1), "draws"),
                       (dict(kind="laplace", dtype=np.int32), "dtype")]:
        with pytest.raises((ValueError, TypeError), match=match):
            F.delta_float(**bad)


def test_float32_sampler_quantum_and_laplace_cut():
    """The facts behind the floor: float32 uniforms live on the 2^-23 grid; Laplace |z| <= 24 ln 2."""
    u = np.asarray(jax.random.uniform(jax.random.key(41), (1 << 16,)), np.float64)
    assert np.all((u * 2 ** 23) % 1 == 0)
    lo = np.float32(-1.0) + np.finfo(np.float32).epsneg          # the smallest uniform jax.random.laplace uses
    z = -np.sign(lo) * np.log1p(-np.abs(lo)) * -1                 # its sample: sign(u) log1p(-|u|)
    assert abs(z) == pytest.approx(F.LAPLACE_TAIL_CUT_FLOAT32, rel=1e-6)
    zs = np.asarray(jax.random.laplace(jax.random.key(42), (1 << 16,)))
    assert np.max(np.abs(zs)) <= F.LAPLACE_TAIL_CUT_FLOAT32 + 1e-5
