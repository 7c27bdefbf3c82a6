"""Tiny-size test of the accelerator benchmark suite (``benchmarks.harness.suite``): structure only, no timing assertions."""
from __future__ import annotations

import math

import pytest

from benchmarks.harness.suite import run_suite, scaling_rows, suite_to_markdown

CASES = {"hedge": "expert-updates/s", "l2p_mw": "expert-updates/s", "sparse_vector": "expert-updates/s",
         "l2p_rmw_mala": "MALA steps/s", "dp_ftrl": "seed-rounds/s", "label_dp": "estimators/s"}


@pytest.fixture(scope="module")
def rows():
    return run_suite(quick=True, scaling=False, max_seeds=1)


def test_every_case_has_a_row_with_its_unit(rows):
    got = {r["case"]: r for r in rows}
    assert set(got) == set(CASES)
    for name, unit in CASES.items():
        assert got[name]["unit"] == unit
        assert got[name]["seeds"] == 1


def test_floors_and_measurements_positive(rows):
    for r in rows:
        assert r["rng_words_per_seed"] > 0 and r["bytes_per_seed"] > 0, r["case"]
        assert r["floor_rng_s"] > 0 and r["floor_bytes_s"] > 0, r["case"]
        assert r["run_s"] > 0 and r["throughput"] > 0 and r["compile_s"] >= 0
        assert math.isfinite(r["gap"]) and r["gap"] > 0
        assert r["bound"] in ("rng", "bytes")
        assert r["rng_ceiling_words_per_s"] > 0 and r["bw_ceiling_bytes_per_s"] > 0
        # the generator's own words (counted in its module) are at least the words it delivers
        assert r["rng_generated_ceiling_words_per_s"] >= r["rng_ceiling_words_per_s"]
        assert r["peak_source"] in ("device peak", "XLA memory_analysis")
        assert r["peak_MiB"] > 0


def test_markdown_and_unknown_case(rows):
    md = suite_to_markdown(rows)
    for name in CASES:
        assert f"| {name} |" in md
    assert "Ceilings" in md
    with pytest.raises(ValueError, match="cases"):
        run_suite(quick=True, cases=["nope"], scaling=False)


@pytest.mark.slow
def test_scaling_rows_subprocess():
    rows = scaling_rows(quick=True, device_counts=(1, 2))
    assert [r.get("host_devices") for r in rows] == [1, 2], rows
    assert all(r["seed_rounds_per_s"] > 0 and r["unit"] == "expert-updates/s" for r in rows)
    assert "Multi-device scaling" in suite_to_markdown(rows)
