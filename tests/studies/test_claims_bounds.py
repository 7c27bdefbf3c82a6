"""``claims.points_against_bounds``: every point of a small table against its own bound, counted and named by
hand. Pandas only: no JAX compile."""
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
