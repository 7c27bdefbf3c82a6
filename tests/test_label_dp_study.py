"""Study ``label-dp-rates``: registration, one group run end to end, and the full quick run (slow)."""
import numpy as np
import pytest

from jaxdp.registry import get_study
from jaxdp.studies.framework import resolve_config, run_study


def _cfg(**over):
    e = get_study("label-dp-rates")
    return e, resolve_config("label-dp-rates", e.extra["defaults"], e.extra["quick"], True, over)


def test_study_builds_and_runs_one_group():
    e, cfg = _cfg(M=100)
    st = e.fn(cfg)
    assert {p["experiment"] for p in st.points} == {"L1", "L2", "L3", "L5", "L6"}
    pts = [p for p in st.points if p["method"] == "local_laplace_knn" and p["experiment"] == "L2"]
    out = st.run(pts, np.arange(2))
    assert len(out) == len(pts) and all(o["excess"].shape == (2,) and np.all(o["excess"] > 0) for o in out)
    again = st.run(pts, np.arange(2))
    assert np.array_equal(out[0]["excess"], again[0]["excess"])   # deterministic given the seed indices


@pytest.mark.slow
def test_quick_study_end_to_end(tmp_path):
    e, cfg = _cfg()
    res = run_study(e.fn(cfg), tmp_path, progress=False)
    sl = res.tables["slopes"]
    assert np.all(sl.slope[sl.method != "nonprivate_bins_cls"] < 0)
    assert len(res.plots) == 4


def test_benchmark_tiny():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "bench_label_dp.py"
    spec = importlib.util.spec_from_file_location("bench_label_dp", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.run(tiny=True)
    assert len(rows) == 4 and all(r["jax_fits_per_s"] > 0 and np.isfinite(r["jax_mean_excess"]) for r in rows)
