""":func:`jaxdp.studies.plots.plot_figures`, the keys that derive from a run's rows: curves named by an f-string of a row, theory curves expanded over
a column's finite values, slope guides through each curve's first point and curves relative to one abscissa.
Pandas only: what reaches :func:`~jaxdp.studies.plots.plot_curves` is recorded, nothing is drawn."""
import math

import numpy as np
import pandas as pd

from jaxdp.studies import plots


def _rows():
    rng = np.random.default_rng(0)
    return pd.DataFrame([dict(exp="A", method=m, eps=e, N=N, c=c, seed=s, y=N ** -0.5 * c * (1 + 0.01 * rng.random()))
                         for m, e in (("a", 0.5), ("a", 2.0), ("b", math.inf)) for N in (10, 100, 1000)
                         for c in (0.5, 1.0, 2.0) for s in range(4)])


def test_curves_theory_guides_and_relative(tmp_path, monkeypatch):
    got = []
    monkeypatch.setattr(plots, "plot_curves", lambda s, x, y, path, **kw: got.append((s, x, kw)) or path)
    figs = [dict(rows="c == 1.0", x="N", name="f1", title="{title}",
                 theory_for={"eps": {"rate, ε = {eps:g}": "scale * x ** -0.5 / {eps}"}}),
            dict(rows="c == 1.0 and method == 'a'", x="N", name="f2", guides="-0.5 if eps < 1 else -1.0"),
            dict(rows="N == 100", x="c", name="f3", relative_to=1.0)]
    out = plots.plot_figures(_rows(), tmp_path, figs, {"title": "T", "scale": 2.0},
                             {"y": "y", "curve": "{method}{f', ε = {eps:g}' if isfinite(eps) else ''}"
                                                 "{f', N = {N}' if x != 'N' else ''}"})
    assert [p.name for p in out] == ["f1.png", "f2.png", "f3.png"]
    (s1, x1, k1), (s2, _, k2), (s3, _, _) = got
    assert x1 == "N" and k1["hue"] == "curve" and k1["title"] == "T"
    assert sorted(s1.curve.unique()) == ["a, ε = 0.5", "a, ε = 2", "b"]
    assert list(k1["theory"]) == ["rate, ε = 0.5", "rate, ε = 2"]                      # inf is no value
    assert np.allclose(k1["theory"]["rate, ε = 2"](np.array([100.0])), 2.0 * 0.1 / 2)
    assert list(k2["theory"]) == ["slope -0.50 (a, ε = 0.5)", "slope -1.00 (a, ε = 2)"]
    first = s2[(s2.curve == "a, ε = 2") & (s2.N == 10)].y_mean.iloc[0]
    assert np.allclose(k2["theory"]["slope -1.00 (a, ε = 2)"](np.array([10.0, 100.0])), [first, first / 10])
    assert sorted(s3.curve.unique()) == ["a, ε = 0.5, N = 100", "a, ε = 2, N = 100", "b, N = 100"]
    assert np.allclose(s3[s3.c == 1.0].y_mean, 1.0) and np.allclose(s3[s3.c == 2.0].y_mean, 2.0, rtol=0.02)
    assert (s3.y_lo <= s3.y_mean).all() and (s3.y_mean <= s3.y_hi).all()
