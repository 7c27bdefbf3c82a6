"""The realizable-oco study validates its config and runs a tiny grid end to end; the DP-FTRL benchmark
runs in tiny mode."""
import pathlib

import pytest

from _helpers import load_benchmark
from jaxdp.registry import get_study
from jaxdp.studies.framework import resolve_config, run_study


def _cfg(quick=True, **over):
    e = get_study("realizable-oco")
    return e, resolve_config("realizable-oco", e.extra["defaults"], e.extra["quick"], quick, over)


@pytest.mark.parametrize("key, value, match", [
    ("r7_T", [0, 16], "r7_T"), ("lam_rule", "magic", "lam_rule"), ("r8_d", [3], "d <= 2"),
    ("r8_learners", ["hedge"], "r8_learners"),
])
def test_study_rejects_bad_config(key, value, match):
    e, cfg = _cfg()
    cfg[key] = value
    with pytest.raises(ValueError, match=match):
        e.fn(cfg)


def test_study_tiny(tmp_path):
    e, cfg = _cfg(seeds=3, r7_T=[128, 256, 512], r7_eps_sweep=[2.0, 8.0], r7_d_sweep=[4], r7_T_fixed=256,
                  r8_T=[128, 256], r8_d=[1, 2], r8_m=4, r8_learners=["potential_oco"])
    res = run_study(e.fn(cfg), tmp_path, progress=False)
    assert {"slopes", "summary", "r8_d_ratio", "logphi_error", "r8_bounds"} <= set(res.tables)
    assert len(res.plots) >= 3 and all(pathlib.Path(p).exists() for p in res.plots)
    sl = res.tables["slopes"]
    assert set(sl["sweep"]) >= {"T", "eps"}
    assert (res.df[res.df["part"] == "R8"]["best_loss"] < 1e-3).all()       # realizable (on the net)
    # a run is deterministic given its seed indices (resume: nothing left to do)
    again = run_study(e.fn(cfg), tmp_path, progress=False, plot=False, analyze=False)
    assert again.chunks_run == 0


def test_bench_oco_tiny():
    mod = load_benchmark("bench_oco")
    rows = mod.run(tiny=True)
    assert rows and all(r["jax_seed_rounds_per_s"] > 0 and r["numpy_vec_seed_rounds_per_s"] > 0 for r in rows)
