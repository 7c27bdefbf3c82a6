"""Smoke test of benchmarks/bench_samplers.py in tiny mode (numbers are not asserted, only produced)."""
import numpy as np

from _helpers import load_benchmark


def test_bench_samplers_tiny():
    mod = load_benchmark("bench_samplers")
    rows = mod.run(tiny=True)
    impls = {r["impl"] for r in rows if r["bench"] == "mala"}
    assert {"jaxdp", "numpy"} <= impls
    assert [r["B"] for r in rows if r["bench"] == "l2p_rmw"] == [1, 8]
    assert all(np.isfinite(r["rate"]) and r["rate"] > 0 for r in rows)
    assert "MALA steps x chains / s" in mod.to_markdown(rows)
