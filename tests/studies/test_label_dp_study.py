"""Study ``label-dp-rates``: registration, one group run end to end (its verdicts through the claims rubric), and
the full quick run (slow)."""
import pathlib

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
    assert {p["experiment"] for p in st.points} == {"L1", "L2", "L3", "L5", "L6", "L7", "L9"}
    pts = [p for p in st.points if p["method"] == "local_laplace_knn" and p["experiment"] == "L2"]
    out = st.run(pts, np.arange(2))
    assert len(out) == len(pts) and all(o["excess"].shape == (2,) and np.all(o["excess"] > 0) for o in out)
    again = st.run(pts, np.arange(2))
    assert np.array_equal(out[0]["excess"], again[0]["excess"])   # deterministic given the seed indices
    # seed batches give the same draws as one batch (one key per seed index)
    from jaxdp.core import seed_keys
    from jaxdp.label_dp import run_planned

    args = ("regression", "local_laplace_knn", seed_keys(0, np.arange(5)), [300, 1000], [1.0, 1.0])
    one = run_planned(*args, N_max=1000, M=100)
    assert np.array_equal(one, run_planned(*args, N_max=1000, M=100, seed_batch=2)) and one.shape == (2, 5)
    with pytest.raises(ValueError, match="seed_batch"):
        run_planned(*args, N_max=1000, M=100, seed_batch=-1)


@pytest.mark.slow
def test_quick_study_end_to_end(tmp_path):
    e, cfg = _cfg()
    res = run_study(e.fn(cfg), tmp_path, progress=False)
    sl = res.tables["slopes"]
    assert np.all(sl.slope[sl.method != "nonprivate_bins_cls"] < 0)
    assert len(res.plots) == 7


def test_experiment_selection():
    e, cfg = _cfg(experiments="L4,L7")
    assert {p["experiment"] for p in e.fn(cfg).points} == {"L1", "L2", "L3", "L7"}
    with pytest.raises(ValueError, match="experiments"):
        e.fn(_cfg(experiments="L1,L10")[1])
    with pytest.raises(ValueError, match="l9_methods"):
        e.fn(_cfg(experiments="L9", l9_methods="nonprivate_knn")[1])


def test_minimax_h0_and_l7_theory():
    from jaxdp.label_dp.rates import bump_slope as l7_theory_slope, minimax_h0

    assert np.isclose(minimax_h0("local", 1000, 0.5, 1.0), (250.0) ** (-1 / 3))
    assert np.isclose(minimax_h0("local", 1000, 2.0, 0.5), 1000.0 ** (-1 / 2))      # eps^2 ∧ 1
    assert np.isclose(minimax_h0("central", 1000, 0.1, 1.0), 100.0 ** (-1 / 2))
    # Label DP: theoretical limits; docs/algorithms/label-dp.md#studies: -β(γ+1)/(2β+d) (local), -β(γ+1)/(β+d) (central); regression: γ = 1
    assert np.isclose(l7_theory_slope("bump_cls", "local", 1.0, 0.5), -1.5 / 3)
    assert np.isclose(l7_theory_slope("bump_cls", "central", 0.5, 1.0), -1.0 / 1.5)
    assert np.isclose(l7_theory_slope("bump_reg", "central", 1.0, 1.0), -1.0)


def test_l7_l9_tiny_end_to_end(tmp_path):
    """L7 (the (β, γ) ≠ (1, 1) pairs, cls + reg; (1, 1) runs in the quick config) and L9 at tiny size:
    slope rows with theory, tuning rows, plots."""
    e, cfg = _cfg(experiments="L7,L9", seeds=3, l7_N=[300, 1000], l7_pairs="1:0.5,0.5:1", l7_M=512,
                  l9_N=[1000], l9_c=[0.5, 1.0, 2.0], l9_methods="central_exp_bins,local_laplace_knn_clipped", M=200)
    res = run_study(e.fn(cfg), tmp_path, progress=False)
    sl = res.tables["slopes"]
    assert set(sl.experiment) == {"L7"}
    cls = sl[sl.task == "bump_cls"]
    assert len(cls) == 4 and set(zip(cls.beta, cls.gamma)) == {(1.0, 0.5), (0.5, 1.0)}
    assert len(sl[sl.task == "bump_reg"]) == 2                      # γ = 1 pairs only
    expect = np.where(cls.method.str.startswith("local"), -cls.beta * (cls.gamma + 1) / (2 * cls.beta + 1),
                      -cls.beta * (cls.gamma + 1) / (cls.beta + 1))
    assert np.allclose(cls.theory, expect)
    assert np.all(np.isfinite(sl.slope)) and np.all(sl.slope < 0)   # minimax-hard excess shrinks with N
    tu = res.tables["tuning"]
    assert len(tu) == 2 and set(tu.knob) == {"c_h", "c_T"}
    assert np.all(tu.ratio >= 1.0) and np.all(tu.ratio_lo <= tu.ratio) and np.all(tu.ratio <= tu.ratio_hi)
    assert np.all(tu.c_oracle.isin([0.5, 1.0, 2.0]))
    # the verdicts go through the claims rubric: two N a decade apart (l7_N) cannot test a rate
    from jaxdp.studies.claims import VERDICTS

    v = res.tables["verdicts"]
    assert set(v.verdict) <= set(VERDICTS) and len(v[v.experiment == "L7"]) == len(sl)
    assert (v.verdict == "not tested").all() and v.reason.str.contains("decades").all()
    names = {pathlib.Path(p).name for p in res.plots}
    assert {"L7_minimax_bump_cls.png", "L7_minimax_bump_reg.png", "L9_tuning.png"} <= names


def test_tuning_table_ratio():
    """The oracle ratio on a hand-made table: c = 2 is best, ratio = mean(c=1)/mean(c=2); a group whose grid lacks
    c = 1 has no row; the default at the oracle's value with zero excess is ratio 1 (0/0)."""
    import pandas as pd

    from jaxdp.studies.analysis import oracle_ratios

    by = ["task", "method", "knob", "N", "eps", "p"]
    rows = [dict(task="regression", method="central_bins_laplace", knob="c_h", N=100, eps=1.0, p=0.0, seed=s, c=c,
                 excess={0.5: 4.0, 1.0: 3.0, 2.0: 1.0}[c] + 0.1 * s) for s in range(5) for c in (0.5, 1.0, 2.0)]
    rows += [dict(rows[0], N=200, c=c, seed=s) for s in range(5) for c in (0.5, 2.0)]          # no c = 1: skipped
    rows += [dict(rows[0], N=300, c=c, seed=s, excess=0.0 if c == 1.0 else 1.0) for s in range(5) for c in (1.0, 2.0)]
    t = oracle_ratios(pd.DataFrame(rows), by, "c", "excess", name="theory")
    assert list(t.N) == [100, 300] and list(t.c_oracle) == [2.0, 1.0] and list(t.c_grid) == ["0.5,1,2", "1,2"]
    assert np.isclose(t.ratio[0], 3.2 / 1.2) and np.isclose(t.excess_theory[0], 3.2) and t.n_seeds[0] == 5
    assert t.ratio_lo[0] <= t.ratio[0] <= t.ratio_hi[0] and (t.ratio[1], t.ratio_lo[1], t.ratio_hi[1]) == (1, 1, 1)


def test_oracle_ratio_slope():
    """The log ratio excess(c=1)/min_c excess(c) halves per decade of N on a hand-made table: slope −log10(2)·ln10/
    ln10 = −log(2)/log(10); seeds with the same values give a zero-width interval."""
    import pandas as pd

    from jaxdp.studies.analysis import oracle_ratio_slope

    rows = [dict(seed=s, N=N, c=c, excess={0.5: 1.0, 1.0: r, 2.0: 3.0}[c])
            for s in range(8) for N, r in ((100, 4.0), (1000, 2.0), (10000, 1.0)) for c in (0.5, 1.0, 2.0)]
    s, lo, hi, n, xs = oracle_ratio_slope(pd.DataFrame(rows), "N", "c", "excess", n_boot=50)
    assert np.isclose(s, -np.log(4.0) / np.log(100.0)) and np.isclose(lo, s) and np.isclose(hi, s)
    assert n == 8 and list(xs) == [100, 1000, 10000]


def test_label_theory_helpers():
    """The library's Table 1 helpers: slope_theory's exponents, the cells of the narrowest bump, the crossovers."""
    from jaxdp.label_dp import central_crossovers, minimax_cells, minimax_h0, slope_theory

    t = slope_theory("heavy", "local_laplace_knn_clipped", p=4.0)
    assert np.isclose(t["theory_priv"], -2 * 3 / (2 * 4 + 3)) and np.isclose(t["theory_stat"], -2 / 3)
    assert (t["beta"], t["gamma"]) == (1.0, 1.0)
    b = slope_theory("bump_cls", "central_exp_bins", beta=1.0, gamma=0.5)
    assert np.isclose(b["theory"], -0.75) and np.isclose(b["theory_priv"], -0.75) and "beta" not in b
    h = min(minimax_h0(s, 1000, e, b) for s, e in (("local", 0.5), ("central", 0.02)) for b in (1.0, 0.5))
    assert minimax_cells(1000, {"local": 0.5, "central": 0.02}, [1.0, 0.5]) == int(np.ceil(1 / h)) + 1
    assert minimax_cells(10, {}, []) == 2
    rows = central_crossovers([0.1, 1.0], [4.0])
    assert [(r["task"], r["p"], r["eps"]) for r in rows] == [
        ("classification", 2.0, 0.1), ("classification", 2.0, 1.0), ("regression", 2.0, 0.1),
        ("regression", 2.0, 1.0), ("heavy", 4.0, 0.1), ("heavy", 4.0, 1.0)]
    assert np.isclose(rows[0]["N_crossover"], 0.1 ** (-rows[0]["b"] / (rows[0]["b"] - rows[0]["a"])))


def test_benchmark_tiny():
    from _helpers import load_benchmark

    mod = load_benchmark("bench_label_dp")
    rows = mod.run(tiny=True)
    assert len(rows) == 4 and all(r["jax_fits_per_s"] > 0 and np.isfinite(r["jax_mean_excess"]) for r in rows)


@pytest.mark.parametrize("name", ["label-dp-rates", "label-dp-rates-heavy"])
def test_grid_reproduces_the_kept_runs_points(name):
    """The grid built from the spec's grids (with L7's pairs, L9's methods and the non-private learners once at
    ε = ∞) is the kept run's, point for point and in order (``point`` indexes the kept ``results.csv``)."""
    import json

    import pandas as pd

    from _helpers import ROOT

    d = ROOT / "results" / name
    e = get_study("label-dp-rates")
    over = {k: v for k, v in json.loads((d / "manifest.json").read_text())["config"].items() if k in e.extra["defaults"]}
    pts = e.fn(resolve_config("label-dp-rates", e.extra["defaults"], e.extra["quick"], False, over)).points
    kept = pd.read_csv(d / "results.csv").drop_duplicates("point").sort_values("point")
    assert len(pts) == len(kept) == json.loads((d / "manifest.json").read_text())["n_points"]
    for p, (_, r) in zip(pts, kept.iterrows()):
        assert all(r[k] == v or (isinstance(v, float) and np.isclose(r[k], v)) for k, v in p.items()), (p, dict(r))
