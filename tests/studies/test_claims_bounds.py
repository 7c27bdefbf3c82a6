"""The generic pieces of claims.py a study with per-point bounds uses, on small tables checked by hand:
``points_against_bounds`` (every point against its own bound, counted and named), ``fit_points`` (each fit's
points), ``judge_curve`` (a fitted curve's row by its claim's kind, less the points that test nothing) and
``curve_flags`` (where each flag holds on each fitted curve). Pandas only: no JAX compile."""
import math

import pandas as pd

from jaxdp.studies.claims import points_against_bounds


def _name(r) -> str:
    return f"{r['curve']} at {r['x']}"


def test_counts_and_names_the_points_above_their_bounds():
    pts = pd.DataFrame(dict(curve=["a", "a", "b", "b", "c"], x=[1, 2, 1, 2, 1],
                            regret_mean=[5.0, 12.0, 3.0, 9.5, 7.0], regret_hi=[6.0, 13.0, 4.0, 10.5, 8.0],
                            bound=[10.0, 10.0, math.nan, 0.0, 10.0]))
    out = points_against_bounds(pts, _name, lambda r: r["curve"])
    # b has no bound (NaN, 0): listed once; a at 2 lies above (mean 1.2 of it), c's interval stays below 1
    assert out == dict(n_bound=3, n_points=5, n_none=2, none="b", n_above=1, above=" (a at 2)", top=1.2,
                       top_where="a at 2", n_over=1, over=": a at 2 (mean 1.20 of the bound)")


def test_no_point_above_reads_none():
    pts = pd.DataFrame(dict(curve=["a", "b"], x=[1, 1], regret_mean=[2.0, 9.0], regret_hi=[3.0, 11.0],
                            theory=[4.0, 10.0]))
    out = points_against_bounds(pts, _name, lambda r: r["curve"], bound="theory")
    assert (out["none"], out["above"], out["top_where"], out["top"]) == ("none", "", "b at 1", 0.9)
    assert (out["n_over"], out["over"]) == (1, ": b at 1 (mean 0.90 of the bound)")


def test_fit_points_select_a_fit_s_points_in_its_range():
    from jaxdp.studies.claims import fit_points

    pts = pd.DataFrame(dict(c=["a", "a", "a", "b", "b"], T=[4, 1, 2, 1, 2], y=[3, 1, 2, 5, 6]))
    assert list(fit_points(pts, dict(c="b", x_min=1, x_max=2), ["c"], "T")["y"]) == [5, 6]
    got = fit_points(pts, dict(c="a", x_min=2, x_max=4), ["c"], "T")                     # sorted, then the range
    assert list(got["T"]) == [2, 4] and list(got.index) == [0, 1]                          # indexed from 0


def test_judge_curve_by_kind_leaves_out_the_points_of_skip():
    import functools

    from jaxdp.studies.claims import Claim, judge_curve

    fit = dict(slope=0.5, slope_lo=0.48, slope_hi=0.52, x_min=1.0, x_max=1e3)
    pts = pd.DataFrame(dict(T=[10, 100, 1000], n_seeds=[8, 6, 8], regret_mean=[1.0, 2.0, 50.0],
                            regret_lo=[0.9, 1.9, 49.0], regret_hi=[1.1, 2.1, 51.0], bound=[10.0, 10.0, 50.0],
                            capped=[False, False, True]))
    kw = dict(experiment="vs T", cell="c", label=lambda v: f"T = {v}", none_left="all capped")
    none = judge_curve(None, None, pts, "T", no_claim=("none", "why"), **kw)   # no fit shown: the points' seeds
    assert (none["verdict"], none["claim"], none["reason"], none["n_seeds"]) == ("not tested", "none", "why", 6)
    assert math.isnan(none["slope"]) and none["experiment"] == "vs T"
    rate = judge_curve(Claim("r", kind="rate", value=0.5), pd.Series(dict(fit, n_seeds=6)), pts, "T", **kw)
    assert (rate["verdict"], rate["claimed"], rate["slope"], rate["n_seeds"]) == ("holds", 0.5, 0.5, 6)
    # the capped point (mean 50/50 = 1, above 1.05 at its upper end) is left out: the others hold
    skip = [("capped", functools.partial("capped at {at}, {n} left".format))]
    b = judge_curve(Claim("b", kind="bound", value=1.0), None, pts, "T", skip, **kw)
    assert (b["verdict"], b["slope"], b["n_seeds"]) == ("holds", 0.2, 6)
    assert b["reason"].endswith("capped at T = 1000, 2 left")
    every = judge_curve(Claim("b", kind="bound", value=1.0), None, pts.assign(capped=True), "T", skip, **kw)
    assert (every["verdict"], every["reason"], every["n_seeds"]) == ("not tested", "all capped", 6)
    # a measurement never positive: the note ``below`` ends the reason
    neg = pts.assign(regret_mean=[-1.0, -2.0, 50.0], regret_lo=[-1.5, -2.5, 49.0], regret_hi=[-0.5, -1.0, 51.0])
    assert judge_curve(Claim("b", kind="bound"), None, neg, "T", skip, below="never positive",
                       **kw)["reason"].endswith("2 left; never positive")


def test_curve_flags_list_where_each_flag_holds():
    from jaxdp.studies.claims import curve_flags

    pts = pd.DataFrame(dict(c=["a"] * 4 + ["b"] * 2, T=[8, 1, 2, 4, 1, 2], y=[4.0, 1.0, 2.0, 3.0, 5.0, 6.0],
                            flat=[True, True, False, False, False, False], neg=[False, False, True, True, False, True]))
    fits = pd.DataFrame(dict(c=["a", "b"], x_min=[2, 1], x_max=[8, 2], slope=[0.5, 0.1]))
    out = curve_flags(fits, pts, ["c"], "T", ["flat", "neg"], last=["y"])
    a, b = out.to_dict("records")
    # a: all four points for the lists, its fitted range T = 2 … 8 for the counts; the last point is T = 8
    assert (a["n_fit"], a["flat"], a["n_flat"], a["neg"], a["n_neg"], a["y"]) == (3, [1, 8], 1, [2, 4], 2, 4.0)
    assert (b["n_fit"], b["flat"], b["n_flat"], b["neg"], b["n_neg"], b["y"]) == (2, [], 0, [2], 1, 6.0)
    assert list(out["slope"]) == [0.5, 0.1]
