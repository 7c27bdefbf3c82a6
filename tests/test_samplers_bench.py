"""Smoke test of benchmarks/bench_samplers.py in tiny mode (numbers are not asserted, only produced)."""
import importlib.util
import pathlib

import numpy as np


def test_bench_samplers_tiny():
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "bench_samplers.py"
    spec = importlib.util.spec_from_file_location("bench_samplers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.run(tiny=True)
    impls = {r["impl"] for r in rows if r["bench"] == "mala"}
    assert {"jaxdp", "numpy"} <= impls
    assert [r["B"] for r in rows if r["bench"] == "l2p_rmw"] == [1, 8]
    assert all(np.isfinite(r["rate"]) and r["rate"] > 0 for r in rows)
    assert "MALA steps x chains / s" in mod.to_markdown(rows)
