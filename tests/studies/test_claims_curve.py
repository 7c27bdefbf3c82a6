"""The claim fields judge_curve reads as data (scale, regime, untested, beyond), its point-by-point bound and
the grid of a study's experiments (specs.grid_points: products one after the other, scalar references), on small
synthetic tables. Pandas only: no JAX compile."""
import math

import numpy as np
import pandas as pd
import pytest

from jaxdp.studies.analysis import loglog_slope
from jaxdp.studies.claims import Claim, fill, judge_curve, sci
from jaxdp.studies.specs import grid_points


def _fit(slope, lo, hi, x=(1e2, 1e5), n=64):
    return pd.Series(dict(slope=slope, slope_lo=lo, slope_hi=hi, n_seeds=n, x_min=x[0], x_max=x[1]))


def _points(T=(1e2, 1e3, 1e4, 1e5)):
    T = np.asarray(T)
    return pd.DataFrame(dict(T=T, regret=3 * np.log(T), L0=np.log(T), name=["a"] * len(T)))


def test_scale_shifts_the_slope_and_beyond_explains():
    p = _points()
    c = Claim("free of T up to L0", scale=["L0", "L0"], beyond="regret ÷ L0 is {last.regret / last.L0:.1f}")
    shift = loglog_slope(p["T"], p["L0"])
    row = judge_curve(c, _fit(shift + 0.2, shift + 0.1, shift + 0.3), p, "T", experiment="e", cell="c")
    assert math.isclose(row["slope"], 0.2) and row["verdict"] == "misses"
    assert row["reason"].endswith(": regret ÷ L0 is 3.0")
    held = judge_curve(c, _fit(shift, shift - 0.01, shift + 0.01), p, "T", experiment="e", cell="c")
    assert held["verdict"] == "holds" and held["link"] == ""


def test_regime_untested_and_no_claim():
    p = _points()
    c = Claim("free of T once T ≥ 1e3", regime=["10³", "1e3 + 0 * T", "{\"; first T \" + pow2(first.T)}"],
              link="#why")
    row = judge_curve(c, _fit(0.0, -0.1, 0.1), p, "T", experiment="e", cell="c")
    assert row["verdict"] == "not tested" and row["link"] == "#why"
    assert row["reason"].startswith("the grid starts at T = ") and "below 10³ = 1.0·10³ there; first T" in row["reason"]
    u = judge_curve(Claim("x", untested="never on this instance"), _fit(0.0, -0.1, 0.1), p, "T", experiment="e",
                    cell="c")
    assert (u["verdict"], u["reason"]) == ("not tested", "never on this instance")
    n = judge_curve(None, _fit(0.0, -0.1, 0.1), p, "T", experiment="e", cell="c", no_claim=("—", "no claim"))
    assert (n["verdict"], n["claim"], n["reason"]) == ("not tested", "—", "no claim")


def test_judge_curve_bound_and_helpers():
    p = pd.DataFrame(dict(regret_mean=[1.0, 2.0], regret_lo=[0.9, 1.9], regret_hi=[1.1, 2.1], n_seeds=[8, 8]))
    c = Claim("≤ bound", kind="bound", value=1.0)
    row = judge_curve(c, None, p, bound=[2.0, 4.0], experiment="e", cell="c")
    assert row["verdict"] == "holds" and math.isclose(row["slope_hi"], 0.55) and row["n_seeds"] == 8
    assert judge_curve(c, None, p, bound=[0.5, 4.0], experiment="e", cell="c")["verdict"] == "misses"
    # the bound defaults to the points' own column; a fit (an exponent's) does not enter a bound's verdict
    assert judge_curve(c, _fit(9.0, 8.0, 10.0), p.assign(bound=[0.5, 4.0]), experiment="e",
                       cell="c")["verdict"] == "misses"
    exact = p.assign(regret_lo=p["regret_mean"], regret_hi=p["regret_mean"])
    assert judge_curve(c, None, exact, bound=[2.0, 4.0], experiment="e", cell="c", exact_where="")["verdict"] == "holds"
    assert judge_curve(c, None, exact, bound=[0.5, 4.0], experiment="e", cell="c", exact_where="")["verdict"] == "misses"
    assert judge_curve(c, None, exact, bound=[2.0, 4.0], experiment="e", cell="c")["verdict"] == "not tested"
    f = p.rename(columns=lambda k: k.replace("regret", "fit_regret"))
    assert judge_curve(c, None, f, bound=[0.5, 4.0], stem="fit_regret", experiment="e", cell="c")["verdict"] == "misses"
    empty = judge_curve(c, None, p.iloc[:0], bound=[], experiment="e", cell="c")
    assert (empty["verdict"], empty["reason"], empty["claimed"]) == ("not tested", "no point in the fitted range", 1.0)
    with pytest.raises(ValueError, match="fit must be given"):
        judge_curve(Claim("rate"), None, p, experiment="e", cell="c")
    assert judge_curve(None, None, p, experiment="e", cell="c")["n_seeds"] == int(p["n_seeds"].min())   # no fit: its points
    assert sci(170000) == "1.7·10⁵" and sci(3.0) == "3.0"
    with pytest.raises(ValueError, match="template"):
        fill("a\\b", _points())


def test_grid_points_products_one_after_the_other():
    cfg = dict(Ts=[1, 2], d=3, modes=["x", "y"])
    grids = {"a": [[["mode", "$modes"], ["T", "$Ts"]]], "b": [[["T", [5]]], [["T", [6]], ["d", "$d"]]]}
    pts = grid_points(grids, cfg, dict(exp="", mode="", d=0, T=0.0))
    # outermost first; a key the product leaves out keeps the template's value; values cast to the template's types
    assert [(p["mode"], p["T"]) for p in pts[:4]] == [("x", 1.0), ("x", 2.0), ("y", 1.0), ("y", 2.0)]
    assert pts[:2] == [dict(exp="a", mode="x", d=0, T=1.0), dict(exp="a", mode="x", d=0, T=2.0)]
    assert all(isinstance(p["T"], float) for p in pts)
    # an experiment's products one after the other; a scalar configuration value is one value
    assert pts[-2:] == [dict(exp="b", mode="", d=0, T=5.0), dict(exp="b", mode="", d=3, T=6.0)]
    assert len(grid_points(grids, cfg, dict(exp="", mode="", d=0, T=0.0), select=["b"])) == 2
