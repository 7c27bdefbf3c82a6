"""The generic pieces a study's spec is built from (jaxdp.studies.specs): a grid declared as data (products one after
the other, entries setting several keys, where-conditions, configuration references), a page f-string on one row,
and the slopes of a deterministic column beside each fit. Pure Python and pandas: no JAX compile."""
import math

import pandas as pd

from jaxdp.studies.specs import curve_slopes, fstring, grid_points

TEMPLATE = dict(exp="", inst="", kappa=0.0, n=0, rule="none", M=0)


def test_grid_points_products_in_order_with_conditions_and_references():
    cfg = {"kappas": "1.5,2,3", "n": [10, 100], "M": 64, "M_fine": 0, "insts": "a,b"}
    grids = {"A": [[["inst", ["a", "b"]], ["kappa", "$kappas"], ["n", "$n"],
                    ["where", "inst in insts and (kappa <= 2 if inst == 'a' else kappa >= 2)"]]],
             "B": [[["inst,kappa", [["t", 1.5]]], ["rule,M", [["exact", 0], ["grid", "$M"], ["grid", "$M_fine"]]],
                    ["n", [7.0]], ["where", "rule == 'exact' or M > 0"]]]}
    pts = grid_points(grids, cfg, TEMPLATE)
    a = [(p["inst"], p["kappa"], p["n"]) for p in pts if p["exp"] == "A"]
    # outermost first: inst, then kappa, then n; a only at kappa <= 2, b only at kappa >= 2
    assert a == [("a", 1.5, 10), ("a", 1.5, 100), ("a", 2.0, 10), ("a", 2.0, 100),
                 ("b", 2.0, 10), ("b", 2.0, 100), ("b", 3.0, 10), ("b", 3.0, 100)]
    b = [p for p in pts if p["exp"] == "B"]
    # several keys at once; "$M" is the configuration's value; M_fine = 0 is filtered out
    assert [(p["rule"], p["M"]) for p in b] == [("exact", 0), ("grid", 64)]
    assert all(list(p) == list(TEMPLATE) for p in pts)                      # the template's key order
    assert all(isinstance(p["n"], int) and isinstance(p["kappa"], float) for p in pts)   # cast to its types
    assert [p["exp"] for p in grid_points(grids, cfg, TEMPLATE, select=["B"])] == ["B", "B"]
    # a condition sees further names
    only = grid_points({"A": [[["inst", ["a", "b"]], ["where", "inst in keep"]]]}, cfg, TEMPLATE, keep=("b",))
    assert [p["inst"] for p in only] == ["b"]


def test_fstring_formats_one_row():
    row = pd.Series({"inst": "linear", "kappa": 2.0, "M": 2048.0, "delta": 1e-6, "x": 0.5, "x_lo": 0.4, "x_hi": 0.6})
    assert fstring("{inst}, κ = {kappa:g}, grid M = {int(M)}", row) == "linear, κ = 2, grid M = 2048"
    assert fstring("approximate (δ = {format(delta, 'g')})", row) == "approximate (δ = 1e-06)"
    assert fstring("{ci('x')}", row) == "0.500 [0.400, 0.600]"


def test_curve_slopes_over_each_fitted_range():
    pts = pd.DataFrame({"c": ["a"] * 4 + ["b"] * 4, "T": [1, 2, 4, 8] * 2,
                        "bound": [1, 2, 4, 8] + [1, 4, 16, 64], "sigma": [1.0] * 8})
    fits = pd.DataFrame({"c": ["a", "b"], "x_min": [1.0, 2.0], "x_max": [8.0, 4.0]})
    out = curve_slopes(fits, pts, "T", {"bound_slope": "bound", "sigma_slope": "sigma"}, ["c"])
    assert list(out["c"]) == ["a", "b"] and list(fits.columns) == ["c", "x_min", "x_max"]   # a copy
    assert math.isclose(out["bound_slope"][0], 1.0) and math.isclose(out["bound_slope"][1], 2.0)
    assert out["sigma_slope"].abs().max() < 1e-12
