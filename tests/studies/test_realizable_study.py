"""The realizable-experts study builds, validates its config and runs a tiny grid end to end."""
import dataclasses
import pathlib

import numpy as np
import pytest

from jaxdp.registry import get_study
from jaxdp.studies.framework import resolve_config, run_study, validate_study


def _cfg(**over):
    e = get_study("realizable-experts")
    return e, resolve_config("realizable-experts", e.extra["defaults"], e.extra["quick"], True, over)


def test_study_rejects_bad_config():
    """The declared params (specs/realizable-experts.toml) refuse them before anything runs (run_study validates)."""
    e, cfg = _cfg()
    cfg["d"] = [1, 4]
    with pytest.raises(ValueError, match="d must be"):
        validate_study(e.fn(cfg))
    e, cfg = _cfg()
    cfg["Lstar"] = [-1]
    with pytest.raises(ValueError, match="Lstar"):
        validate_study(e.fn(cfg))


@pytest.mark.slow
def test_study_tiny(tmp_path):
    e, cfg = _cfg(seeds=2, T=[256, 512], T_fixed=512, d=[4], eps=[1.0, 4.0], Lstar=[0, 4], lb_d=[32], lb_T=512,
                  vsT_adversaries=["halving"])
    res = run_study(e.fn(cfg), tmp_path, progress=False)
    assert {"summary", "slopes", "lower_bound"} <= set(res.tables)
    assert len(res.plots) >= 5 and all(pathlib.Path(p).exists() for p in res.plots)
    lb = res.tables["lower_bound"]
    assert (lb["ratio_mean"] >= 1 / 32).all()
    bt = res.tables["binary_tree"]
    assert set(bt["exp"]) == {"vsT", "vsd"} and len(bt) == 3


def test_binary_tree_rows_tiny(tmp_path):
    """binary_tree_experts (REAL Alg. 4, rate mode) runs in the vsT and vsd experiments; the study reports
    whether it ever starts a new phase. Only the binary-tree points are run (one compilation, d = 4)."""
    e, cfg = _cfg(seeds=4, d0=4, T=[256, 512], T_fixed=512, d=[4], lb_T=512, vsT_adversaries=["halving", "bernoulli"])
    study = e.fn(cfg)
    pts = [p for p in study.points if p["learner"] == "binary_tree"]
    assert {(p["exp"], p["adversary"], p["T"]) for p in pts} == {
        ("vsT", "halving", 256), ("vsT", "halving", 512), ("vsT", "bernoulli", 256), ("vsT", "bernoulli", 512),
        ("vsd", "halving", 512)}
    res = run_study(dataclasses.replace(study, points=pts), tmp_path, progress=False, plot=False)
    summ, bt = res.tables["summary"], res.tables["binary_tree"]
    assert (summ["learner"] == "binary_tree").all() and len(summ) == len(pts)
    assert summ["new_phase_frac"].between(0, 1).all()
    assert len(bt) == len(pts)
    assert {"m_set", "P_max", "tau", "phases_mean", "phases_max", "new_phase_frac", "ever_new_phase",
            "switches_mean"} <= set(bt.columns)
    assert (bt["m_set"] == 4).all() and (bt["phases_max"] <= bt["P_max"] - 1).all()
    assert (bt["ever_new_phase"] == (bt["phases_max"] > 0)).all()
    # em_draws = m_set per new phase; regret is finite and the comparator is realizable (zero loss)
    df = res.df
    np.testing.assert_array_equal(df["em_draws"], 4 * df["phases"])
    assert np.isfinite(df["regret"]).all() and (df["best_loss"] == 0).all()
