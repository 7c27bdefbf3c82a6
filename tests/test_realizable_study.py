"""The realizable-experts study builds, validates its config and runs a tiny grid end to end."""
import pathlib

import pytest

from jaxdp.registry import get_study
from jaxdp.studies.framework import resolve_config, run_study


def _cfg(**over):
    e = get_study("realizable-experts")
    return e, resolve_config("realizable-experts", e.extra["defaults"], e.extra["quick"], True, over)


def test_study_rejects_bad_config():
    e, cfg = _cfg()
    cfg["d"] = [1, 4]
    with pytest.raises(ValueError, match="d must be"):
        e.fn(cfg)
    e, cfg = _cfg()
    cfg["Lstar"] = [-1]
    with pytest.raises(ValueError, match="Lstar"):
        e.fn(cfg)


@pytest.mark.slow
def test_study_tiny(tmp_path):
    e, cfg = _cfg(seeds=2, T=[256, 512], T_fixed=512, d=[4], eps=[1.0, 4.0], Lstar=[0, 4], lb_d=[32], lb_T=512,
                  vsT_adversaries=["halving"])
    res = run_study(e.fn(cfg), tmp_path, progress=False)
    assert {"summary", "slopes", "lower_bound"} <= set(res.tables)
    assert len(res.plots) >= 5 and all(pathlib.Path(p).exists() for p in res.plots)
    lb = res.tables["lower_bound"]
    assert (lb["ratio_mean"] >= 1 / 32).all()
