"""Every compiled program lowers for GPU and TPU, with no host callbacks or CPU-only custom calls.

Lowering only (``jax.export.export(fn, platforms=("cuda", "tpu"))``): nothing is compiled.
Covers every benchmark-suite case and one grid point of every registered study
(``benchmarks.harness.export``), and checks that the module reader
(``benchmarks.harness.hlo.analyze_module``) flags callbacks and CPU-only calls and counts
random words and loop-carry bytes exactly on small programs.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import registry
from benchmarks.harness.export import (PLATFORMS, capture_points, export_jitted, finish_study_exports, start_study_exports,
                                suite_exports)
from benchmarks.harness.hlo import analyze_module
from benchmarks.harness.report import export_markdown, roofline_markdown, roofline_rows
from benchmarks.harness.roofline import H100, TPU_V5E, measured_device, predict
from benchmarks.harness.suite import CASE_NAMES


@pytest.fixture(scope="module")
def exports():
    """Suite cases (this process) and studies (a fresh subprocess, started first so both run at once)."""
    proc = start_study_exports()
    suite = suite_exports(quick=True)
    studies = finish_study_exports(proc)
    return {"suite": suite, "studies": studies}


def _explain(r) -> str:
    return f"{r.module} [{r.label}] {r.errors} {(r.stats or {}).get('violations')}"


def test_every_suite_case_lowers_for_cuda_and_tpu(exports):
    recs = exports["suite"]
    assert sorted(r.module for r in recs) == sorted(f"suite:{c}" for c in CASE_NAMES)
    for r in recs:
        assert r.platforms_ok == list(PLATFORMS) and r.ok, _explain(r)
        st = r.stats
        assert st["rng_words"] > 0 and st["unknown_trip_loops"] == 0, _explain(r)
        if r.rounds:  # online runs carry per-seed state through the round loop
            assert st["carry_bytes"] > 0 and st["loops"] >= 1, _explain(r)


def test_every_registered_study_lowers_for_cuda_and_tpu(exports):
    registry.load_all()
    recs = exports["studies"]
    assert {r.module for r in recs} == {f"study:{n}" for n in registry.STUDIES}
    for r in recs:
        assert r.ok, _explain(r)
    for name in registry.STUDIES:
        mine = [r for r in recs if r.module == f"study:{name}"]
        # every study's compiled work is randomized: something draws random numbers
        assert sum(r.stats["rng_words"] for r in mine) > 0, name


def test_roofline_rows_and_tables(exports):
    """The device report's roofline table from the exports and synthetic measurements (no timing)."""
    recs = exports["suite"]
    fake = [{"case": r.module.split(":")[1], "seeds": 64, "seed_rounds_per_s": 1e6, "bw_ceiling_bytes_per_s": 1e10,
             "rng_generated_ceiling_words_per_s": 1e9} for r in recs]
    rows = roofline_rows(fake + [{"case": "scaling"}], recs)
    assert [r["case"] for r in rows] == [r.module.split(":")[1] for r in recs]
    for row, rec in zip(rows, recs):
        st = rec.stats
        here = predict(st["rng_words"], st["carry_bytes"], rec.rounds, measured_device("x", 1e10, 1e9))
        assert row["predicted_here"] == pytest.approx(here["throughput"])
        assert row["measured/predicted"] == pytest.approx(1e6 / here["throughput"])
        if st["carry_bytes"] > 0:  # bandwidth bound: 3.35 TB/s vs 819 GB/s
            assert row["predicted_H100"] == pytest.approx(row["predicted_TPU_v5e"] * 3.35e12 / 8.19e11)
        else:  # no loop state and no published generator rate: nothing to predict from
            assert math.isnan(row["predicted_H100"]) and math.isnan(row["predicted_TPU_v5e"])
        assert row["export"] == "cuda, tpu"
    md = roofline_markdown(rows)
    assert "predicted H100" in md and "predicted TPU v5e" in md and "threefry rate not published" in md
    assert "| hedge |" in export_markdown(recs).replace("suite:", "")


def test_predict_arithmetic():
    p = predict(rng_words=1e3, carry_bytes=1e6, rounds=100, device=measured_device("d", 1e9, 1e5))
    assert p["t_rng_s"] == pytest.approx(1e-2) and p["t_bytes_s"] == pytest.approx(1e-3)
    assert p["bound"] == "rng" and p["throughput"] == pytest.approx(100 / 1e-2)
    q = predict(1e3, 3.35e6, 10, H100)
    assert q["bound"] == "bytes (rng unknown)" and math.isnan(q["t_rng_s"])
    assert q["throughput"] == pytest.approx(10 / 1e-6)
    assert predict(1e3, 8.19e5, None, TPU_V5E)["throughput"] == pytest.approx(1e6)


# --------------------------------------------------------------------------- the checker catches what it must


def test_host_callback_is_flagged_and_not_exported():
    f = jax.jit(lambda x: jax.pure_callback(lambda a: a, jax.ShapeDtypeStruct((3,), jnp.float32), x))
    st = analyze_module(f.lower(jnp.ones(3, jnp.float32)).as_text())
    assert any(v.startswith("host callback") for v in st.violations), st.violations
    rec = export_jitted(f, (jnp.ones(3, jnp.float32),), module="bad")
    assert not rec.ok and rec.errors


def test_cpu_only_custom_call_is_flagged():
    g = jax.jit(jnp.linalg.cholesky)
    st = analyze_module(g.lower(jnp.eye(3, dtype=jnp.float32)).as_text())
    assert any(v.startswith("CPU-only custom call: custom_call @lapack_") for v in st.violations), st.violations
    # the same function exported for the accelerators uses their solvers and is clean
    rec = export_jitted(g, (jnp.eye(3, dtype=jnp.float32),))
    assert rec.ok, rec


def test_clean_module_has_no_violations():
    st = analyze_module(jax.jit(lambda x: jnp.sin(x) * 2).lower(jnp.ones(4)).as_text())
    assert st.violations == [] and st.rng_words == 0 and st.loops == 0


# --------------------------------------------------------------------------- exact counts on small programs


def _words(fn, *args) -> float:
    return analyze_module(jax.jit(fn).lower(*args).as_text()).rng_words


def test_random_words_scale_with_trip_count_batch_and_shape():
    key = jax.random.key  # a fresh key for every use (the test session checks key reuse)
    w7 = _words(lambda k: jax.random.bits(k, (7,), jnp.uint32), key(0))
    assert w7 > 0
    assert _words(lambda k: jax.random.bits(k, (14,), jnp.uint32), key(1)) == 2 * w7
    ks = jax.random.split(key(2), 13)
    in_loop = _words(lambda ks: jax.lax.scan(lambda c, kk: (c, jax.random.bits(kk, (7,), jnp.uint32)), 0, ks)[1], ks)
    assert in_loop == 13 * w7
    k5 = jax.random.split(key(3), 5)
    assert _words(jax.vmap(lambda k: jax.random.bits(k, (7,), jnp.uint32)), k5) == 5 * w7
    # a real branch (unbatched predicate) counts its larger side
    both = _words(lambda k, p: jax.lax.cond(p, lambda k: jax.random.bits(k, (7,), jnp.uint32),
                                            lambda k: jnp.zeros((7,), jnp.uint32), k), key(4), True)
    assert both == w7
    # key derivations are counted, and reported apart
    st = analyze_module(jax.jit(lambda k: jax.random.split(k, 4)).lower(key(5)).as_text())
    assert st.rng_words > 0 and st.key_words == st.rng_words


def test_rbg_generator_is_counted():
    k = jax.random.key(0, impl="rbg")
    st = analyze_module(jax.jit(lambda k: jax.random.bits(k, (64,), jnp.uint32)).lower(k).as_text())
    assert st.rng_bit_generator_ops >= 1 and st.rng_words >= 64


def test_carry_bytes_per_iteration():
    def run(n_state, n_const, T=13):
        w = jnp.ones((1, n_const), jnp.float32)

        def f(x):
            return jax.lax.scan(lambda c, _: (c * 1.5 + w[:, :1], None), x, None, length=T)[0]

        return analyze_module(jax.jit(f).lower(jnp.ones((1, n_state), jnp.float32)).as_text())

    base = run(100, 300)
    assert base.loops == 1 and base.unknown_trip_loops == 0
    # a carried array is read and written every iteration; a loop constant is passed by reference
    assert run(200, 300).carry_bytes - base.carry_bytes == 13 * 2 * 4 * 100
    bigger_const = run(100, 600)
    assert bigger_const.carry_bytes == base.carry_bytes
    assert bigger_const.invariant_bytes - base.invariant_bytes == 4 * 300
    assert run(100, 300, T=26).carry_bytes == 2 * base.carry_bytes


def test_traced_trip_count_is_flagged():
    f = jax.jit(lambda n, x: jax.lax.fori_loop(0, n, lambda i, c: c + 1.0, x))
    st = analyze_module(f.lower(jnp.int32(5), jnp.ones((1, 3))).as_text())
    assert st.loops == 1 and st.unknown_trip_loops == 1


def test_study_export_hook_is_used():
    """A study may give its compiled function directly (Study.export_fn)."""
    from jaxdp.studies.framework import Study

    f = jax.jit(jax.vmap(lambda k, T: jax.random.uniform(k, (3,)) * T, in_axes=(0, None)))
    st = Study(name="toy", points=[{"T": 4}], seeds=1, run=lambda pts, seeds: [{}],
               export_fn=lambda p: (f, (jax.random.split(jax.random.key(0), 1), jnp.float32(p["T"]))))
    (rec,) = capture_points(st, st.points)
    assert rec.ok and rec.module == "study:toy" and rec.rounds == 4 and rec.stats["rng_words"] > 0
    assert np.isfinite(rec.per_round("rng_words"))
