"""Benchmark tiny mode and the growth-rates study build (grid, analysis on a synthetic table)."""
import importlib.util

import numpy as np
import pandas as pd

from _helpers import ROOT


def test_bench_sco_tiny():
    spec = importlib.util.spec_from_file_location("bench_sco", ROOT / "benchmarks" / "bench_sco.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.run(quick=True, tiny=True)
    assert rows and all(r["est_per_s"] > 0 and r["numpy_est_per_s"] > 0 for r in rows)


def test_growth_study_grid_and_analysis():
    from jaxdp.registry import get_study
    from jaxdp.studies.framework import resolve_config

    e = get_study("growth-rates")
    cfg = resolve_config("growth-rates", e.extra["defaults"], e.extra["quick"], False, {})
    st = e.fn(cfg)
    exps = {p["exp"] for p in st.points}
    assert {"G1", "G2", "G3", "Geps", "G4", "G6", "G7"} <= exps
    # analysis on a synthetic table with a known slope
    rng = np.random.default_rng(0)
    rows = []
    for p in [p for p in st.points if p["exp"] == "G1" and p["inst"] == "regression"]:
        for s in range(4):
            rows.append(dict(p, seed=s, excess=p["n_samples"] ** -1.0 * (1 + 0.01 * rng.uniform()), dist=0.0,
                             gap_ok=1.0))
    tables = st.analyze(pd.DataFrame(rows))
    sl = tables["slopes"]
    assert np.allclose(sl["slope"], -1.0, atol=0.02)
    assert "G5_high_probability" in tables
