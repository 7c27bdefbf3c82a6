"""Auditor (spec §9.5): Clopper–Pearson bounds, every catalogue entry gets the right verdict,
correct mechanisms are never flagged across keys, the search family and the (eps, delta) check,
the registry, and input validation."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jaxdp import registry
from jaxdp.audit import (
    CATALOGUE, HistogramEvents, SearchEvents, ThresholdEvents, audit, clopper_pearson_lower,
    clopper_pearson_upper, eps_lower_bound,
)
from jaxdp.audit import catalogue as C
from jaxdp.mechanisms import laplace_mech


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
    assert bad.violation and bad.n_events == 1 and bad.evidence["search_sample"] == 100_000
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
    assert {"svt-no-threshold-noise", "svt-small-query-noise", "svt-reports-noisy-value", "svt-no-halt",
            "laplace-half-scale", "noisy-max-wrong-scale"} <= set(registry.AUDITS)


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
    for seed in range(3):
        rep = CATALOGUE[name]["fn"](quick=False, seed=100 + seed)
        assert rep.violation == CATALOGUE[name]["broken"], str(rep)


@pytest.mark.slow
def test_benchmark_tiny():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "bench_audit.py"
    spec = importlib.util.spec_from_file_location("bench_audit", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.run(n=2000, seed=0)
    assert len(rows) == 6 and all(r["seconds"] > 0 for r in rows)
    assert "audits/min" in mod.markdown(rows)
