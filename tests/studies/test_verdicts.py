"""Verdict tables of the docs: the joint seed bootstrap, the verdict rules, the generated blocks, and that the
docs' generated tables of the studies not yet moved to the claims rubric are what their kept results give
(``growth-rates``: test_growth_rates_verdicts.py; ``label-dp-rates``: test_label_dp_rates_verdicts.py). Pandas only:
no JAX compile."""

import numpy as np
import pandas as pd
import pytest

from _helpers import ROOT
from jaxdp.studies import framework
from jaxdp.studies.analysis import (
    fit_slopes, joint_slope_boot, read_generated, verdict_table, write_generated,
)



def _curve(S=256, rho=1.0, seed=0):
    """``y = u_i x^{-1}`` per seed ``i`` with ``u_i`` shared across x in proportion ``rho`` (1: common random numbers)."""
    rng = np.random.default_rng(seed)
    xs = np.array([1e3, 1e4, 1e5])
    shared = rng.exponential(size=S)
    rows = []
    for x in xs:
        own = rng.exponential(size=S)
        u = rho * shared + (1 - rho) * own
        rows += [dict(x=x, seed=i, y=u[i] / x) for i in range(S)]
    return pd.DataFrame(rows)


def test_joint_bootstrap_matches_the_design():
    df = _curve(rho=1.0)
    ind = fit_slopes(df, "x", "y", upper_half=False, n_boot=300)
    joint = fit_slopes(df, "x", "y", upper_half=False, n_boot=300, resample="joint")
    # common random numbers: every resampled curve is an exact power law, so the joint interval is a point
    assert joint.slope_hi[0] - joint.slope_lo[0] < 1e-9 and abs(joint.slope[0] + 1) < 1e-9
    assert ind.slope_hi[0] - ind.slope_lo[0] > 0.05          # the independent bootstrap ignores the pairing
    assert joint["n_seeds"][0] == 256 and joint["resample"][0] == "joint"
    # independent keys per point: both bootstraps estimate the same spread
    df = _curve(rho=0.0, seed=1)
    w_ind = np.diff(fit_slopes(df, "x", "y", upper_half=False, n_boot=400)[["slope_lo", "slope_hi"]].to_numpy()[0])
    w_joint = np.diff(fit_slopes(df, "x", "y", upper_half=False, n_boot=400, resample="joint")[
        ["slope_lo", "slope_hi"]].to_numpy()[0])
    assert 0.7 < w_joint[0] / w_ind[0] < 1.4
    with pytest.raises(ValueError, match="seed"):
        fit_slopes(df.drop(columns="seed"), "x", "y", resample="joint")
    with pytest.raises(ValueError, match="resample"):
        fit_slopes(df, "x", "y", resample="paired")


def test_joint_slope_boot_handles_missing_seeds():
    Y = np.array([[1.0, 0.1], [2.0, np.nan], [3.0, 0.3]])
    s, boots = joint_slope_boot(Y, [1.0, 10.0], n_boot=50)
    assert abs(s - np.log10(0.2 / 2.0)) < 1e-12 and boots.shape == (50,)


def _row(**k):
    base = dict(experiment="G1", cell="regression, κ = 2", claim="c", claimed=-1.0, kind="equals", slope=-1.0,
                slope_lo=-1.02, slope_hi=-0.98, n_seeds=1024, verdict="holds", reason="", link="")
    base.update(k)
    return base


def test_verdict_table_rules():
    t = verdict_table(pd.DataFrame([_row(), _row(cell="b", verdict="misses", reason="floor", link="#why")]))
    assert "| G1 | regression, κ = 2 |" in t and "**misses**: floor ([why](#why))" in t and "0.020" in t
    with pytest.raises(ValueError, match="link"):
        verdict_table(pd.DataFrame([_row(verdict="misses", reason="floor")]))
    with pytest.raises(ValueError, match="reason"):
        verdict_table(pd.DataFrame([_row(verdict="not tested")]))
    with pytest.raises(ValueError, match="not one of"):
        verdict_table(pd.DataFrame([_row(verdict="maybe")]))


def test_generated_blocks(tmp_path):
    p = tmp_path / "page.md"
    p.write_text("# T\n\n<!-- BEGIN GENERATED: x -->\nold\n<!-- END GENERATED: x -->\n\nafter\n")
    assert write_generated(p, "x", "new table") and read_generated(p, "x") == "new table"
    assert not write_generated(p, "x", "new table")
    assert p.read_text().endswith("after\n")
    with pytest.raises(ValueError, match="no generated block"):
        write_generated(p, "y", "z")
    assert framework.verdict_table is verdict_table           # the facade re-exports the new names


# --------------------------------------------------------------------------- the kept results against the docs

def test_mf_ftrl_ratio_block_is_generated_from_kept_run():
    """The docs' ratio table (mechanism / tree, seed-paired intervals) is the one the kept ``ratios.csv`` gives."""
    from jaxdp.studies import mf_ftrl

    ratios = pd.read_csv(ROOT / "results" / "mf-ftrl" / "ratios.csv")
    assert read_generated(mf_ftrl.DOC_PAGE, mf_ftrl.RATIO_BLOCK) == mf_ftrl.page_blocks()[mf_ftrl.RATIO_BLOCK]
    assert ((ratios["ratio_lo"] <= ratios["ratio"]) & (ratios["ratio"] <= ratios["ratio_hi"])).all()


def test_ratio_to_base_pairs_seeds():
    """A mechanism whose every seed has exactly twice the base's value has ratio 2 with a zero-width interval,
    however spread the seeds are (paired resampling); unpaired resampling would give a wide interval."""
    from jaxdp.studies.analysis import ratio_to_base

    rng = np.random.default_rng(0)
    base = rng.exponential(size=50)
    df = pd.DataFrame({"g": 0, "seed": np.tile(np.arange(50), 2), "m": ["a"] * 50 + ["b"] * 50,
                       "y": np.concatenate([base, 2 * base])})
    r = ratio_to_base(df, ["g"], "m", "a", "y")
    assert len(r) == 1 and abs(r["ratio"][0] - 2) < 1e-12
    assert abs(r["ratio_lo"][0] - 2) < 1e-9 and abs(r["ratio_hi"][0] - 2) < 1e-9


def test_wide_tested_cells_say_why():
    from jaxdp.studies.analysis import width_note

    assert width_note(0.04, 256) == ""
    assert width_note(0.1, 256) == "half-width 0.100 > 0.05 at 256 seeds per point (about 1030 would reach 0.05)"
    base = dict(experiment="e", claim="c", claimed=1.0, kind="equals", slope=1.0, n_seeds=256, link="")
    v = pd.DataFrame([dict(base, cell="wide", slope_lo=0.9, slope_hi=1.1, verdict="holds", reason=""),
                      dict(base, cell="narrow", slope_lo=0.98, slope_hi=1.02, verdict="holds", reason=""),
                      dict(base, cell="untested", slope_lo=0.5, slope_hi=1.5, verdict="not tested", reason="r"),
                      dict(base, cell="said", slope_lo=0.9, slope_hi=1.1, verdict="holds", reason="half-width: few T")])
    rows = verdict_table(v).splitlines()[2:]
    assert "holds: half-width 0.100 > 0.05 at 256 seeds" in rows[0]
    assert rows[1].endswith("| holds |") and rows[2].endswith("| not tested: r |")
    assert rows[3].endswith("| holds: half-width: few T |")
