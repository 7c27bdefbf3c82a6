"""Theory overlays of the figures: :func:`jaxdp.studies.plots.slope_guides` (a dashed line of the claimed log-log
slope through each curve's first point) and ``theory_column`` of :func:`jaxdp.studies.plots.plot_figures` (a theory
value stored per point), and the studies that draw them: growth-rates (slope guides), mf-ftrl (each mechanism's regret bound) and
bandits (each learner's bound, the private and non-private learners in separate figures).

References are computed here from the definitions: a guide of exponent ``e`` through ``(x0, y0)`` is ``y0 (x/x0)^e``,
so on a power law ``c x^e`` it is the curve itself; the mf-ftrl bound is DP-FTRL's bound (Realizable private online
optimization, Thm 4) at the noise energy ``E||b||^2 = d sigma^2 V`` of each point's ``sigma`` and its mechanism's
largest prefix variance ``V``, recomputed from the mechanism rather than from the planned λ the study inverts.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
pd = pytest.importorskip("pandas")

import matplotlib.figure  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from _helpers import ROOT  # noqa: E402
from jaxdp.studies import analysis  # noqa: E402
from jaxdp.studies import plots  # noqa: E402
from jaxdp.studies.plots import plot_curves, slope_guides  # noqa: E402

RESULTS = ROOT / "results"


def _table(curves: dict, xs=(10.0, 100.0, 1000.0, 10000.0)) -> pd.DataFrame:
    """A summary table: ``curves`` maps a name to ``(c, e)``, the power law ``c x^e``."""
    return pd.DataFrame([{"curve": k, "n": x, "m_mean": c * x ** e} for k, (c, e) in curves.items() for x in xs])


def test_guide_passes_through_the_anchor_with_slope_e_on_log_log_axes():
    data = _table({"a": (3.0, -0.5), "b": (0.02, 1.5), "c": (7.0, -4.0 / 3.0)})
    claims = {"a": -0.5, "b": 1.5, "c": -4.0 / 3.0}
    g = slope_guides(claims, data, "n", "m")
    assert list(g) == ["slope -0.50 (a)", "slope 1.50 (b)", "slope -1.33 (c)"]
    x = np.geomspace(1.0, 1e6, 50)
    for (name, (c, e)), f in zip({"a": (3.0, -0.5), "b": (0.02, 1.5), "c": (7.0, -4.0 / 3.0)}.items(), g.values()):
        assert f(np.array([10.0]))[0] == pytest.approx(c * 10.0 ** e, rel=1e-12), name   # the anchor (x0, y0)
        slopes = np.diff(np.log(f(x))) / np.diff(np.log(x))
        np.testing.assert_allclose(slopes, e, rtol=1e-10, atol=1e-12)                     # a line of slope e
        np.testing.assert_allclose(f(x), c * x ** e, rtol=1e-10)                          # so the power law itself


def test_guide_is_anchored_at_the_first_drawable_point_whatever_the_row_order():
    data = _table({"a": (2.0, -1.0)}, xs=(1000.0, 10.0, 100.0, 1.0)).sample(frac=1.0, random_state=3)
    data.loc[data["n"] == 1.0, "m_mean"] = 0.0          # not drawable on a log axis: the anchor is the next point
    f = next(iter(slope_guides({"a": -0.75}, data, "n", "m").values()))
    assert f(np.array([10.0]))[0] == pytest.approx(0.2, rel=1e-12)
    assert f(np.array([1000.0]))[0] == pytest.approx(0.2 * 100.0 ** -0.75, rel=1e-12)   # claimed e, not the data's


def test_curves_without_a_claim_or_a_drawable_point_get_no_guide_and_limit_counts_guides():
    data = _table({k: (1.0, -1.0) for k in "abcdef"})
    data.loc[data["curve"] == "b", "m_mean"] = np.nan
    claims = {"a": None, "b": -1.0, "c": float("nan"), "d": -1.0, "e": -2.0, "f": -3.0, "zz": -1.0}
    assert list(slope_guides(claims, data, "n", "m", limit=2)) == ["slope -1.00 (d)", "slope -2.00 (e)"]
    assert list(slope_guides(claims, data, "n", "m", limit=None)) == ["slope -1.00 (d)", "slope -2.00 (e)",
                                                                     "slope -3.00 (f)"]
    assert slope_guides(claims, data, "n", "m", limit=0) == {}


@pytest.mark.parametrize("kw, match", [({"y": "q"}, r"missing \['q_mean'\]"), ({"hue": "h"}, r"missing \['h'\]"),
                                       ({"limit": -1}, "limit must be None or a non-negative integer"),
                                       ({"limit": 1.5}, "limit must be None"), ({"limit": True}, "limit must be None")])
def test_slope_guides_rejects_bad_input(kw, match):
    args = {"claims_by_curve": {"a": -1.0}, "data": _table({"a": (1.0, -1.0)}), "x": "n", "y": "m", **kw}
    with pytest.raises(ValueError, match=match):
        slope_guides(**args)


def test_plot_curves_draws_the_guides_dashed_through_each_anchor():
    data = _table({"a": (3.0, -0.5), "b": (0.5, -1.0)})
    fig, ax = plt.subplots()
    try:
        plot_curves(data, "n", "m", "unused.png", hue="curve", ax=ax,
                    theory=slope_guides({"a": -0.5, "b": -1.0}, data, "n", "m"))
        lines = {ln.get_label(): ln for ln in ax.lines}
        for name, c, e in (("a", 3.0, -0.5), ("b", 0.5, -1.0)):
            ln = lines[f"theory: slope {e:.2f} ({name})"]
            assert ln.get_linestyle() == "--"
            xx, yy = np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float)
            assert xx[0] == 10.0 and yy[0] == pytest.approx(c * 10.0 ** e, rel=1e-12)
            np.testing.assert_allclose(yy, c * xx ** e, rtol=1e-10)
    finally:
        plt.close(fig)


def test_theory_column_one_sorted_curve_per_value_in_order(tmp_path, monkeypatch):
    """``theory_column``: per ``hue`` value its finite stored values sorted by ``x``, in ``hue_order`` if given."""
    data = pd.DataFrame({"T": [4.0, 1.0, 2.0, 1.0, 2.0, 8.0], "bound": [40.0, 10.0, 20.0, 1.0, np.nan, 8.0],
                         "mech": ["a", "a", "a", "b", "b", "b"], "seed": 0, "regret": 1.0})
    got = []
    monkeypatch.setattr(plots, "plot_curves", lambda s, x, y, path, **kw: got.append(kw["theory"]) or path)
    fig = {"name": "f", "x": "T", "y": "regret", "hue": "mech", "theory_column": "bound"}
    summary = lambda rows, keys, ys: rows.assign(regret_mean=rows["regret"])   # noqa: E731 (the rows as they are)
    plots.plot_figures(data, tmp_path, [fig], {}, summary=summary)
    plots.plot_figures(data, tmp_path, [fig], {}, summary=summary, hue_order=["b", "x", "a"])
    t, ordered = got
    assert list(t) == ["a", "b"]
    np.testing.assert_array_equal(t["a"][0], [1.0, 2.0, 4.0])
    np.testing.assert_array_equal(t["a"][1], [10.0, 20.0, 40.0])
    np.testing.assert_array_equal(t["b"][0], [1.0, 8.0])     # the non-finite bound is left out
    assert list(ordered) == ["b", "a"]


# --------------------------------------------------------------------------- the studies' figures


@pytest.fixture
def captured(monkeypatch):
    """Figures passed to ``savefig`` (nothing written), cheap bootstrap intervals."""
    figs = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda self, path, *a, **k: figs.append((path, self)))
    boot = analysis.bootstrap_mean_ci
    monkeypatch.setattr(analysis, "bootstrap_mean_ci", lambda v, n_boot=1000, *a, **k: boot(v, 16, *a, **k))
    yield figs
    plt.close("all")


def _kept(name: str):
    d = RESULTS / name
    df = pd.read_csv(d / "results.csv")
    return df[df["seed"] < 4].reset_index(drop=True), json.loads((d / "manifest.json").read_text())["config"]


def test_growth_rates_figures_have_a_guide_of_each_claimed_exponent(captured, tmp_path):
    from jaxdp.studies import growth_rates

    df, cfg = _kept("growth-rates")
    claimed = pd.read_csv(RESULTS / "growth-rates" / "slopes.csv").groupby("exp")["theory"].unique()
    growth_rates.build(dict(cfg)).plot(df, tmp_path)
    assert len(captured) == df["exp"].nunique()
    for path, fig in captured:
        ax = fig.axes[0]
        guides = [ln for ln in ax.lines if ln.get_label().startswith("theory: slope ")]
        curves = [ln for ln in ax.lines if ln.get_label().startswith("curve=")]
        assert len(guides) == len(curves) >= 2, ax.get_title()          # one guide per curve
        for ln in guides:
            xx, yy = np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float)
            slopes = np.diff(np.log(yy)) / np.diff(np.log(xx))
            e = slopes[0]
            np.testing.assert_allclose(slopes, e, rtol=1e-9)              # a straight line on log-log axes ...
            assert abs(e - float(ln.get_label().split()[2])) <= 0.005      # ... of the slope it is labelled with,
            assert np.min(np.abs(claimed[path.stem.removeprefix("growth_")] - e)) < 1e-9   # an exponent claimed
            curve = ln.get_label().split(" (", 1)[1][:-1]
            data = next(d for d in ax.lines if d.get_label().split(" (= ")[0] == f"curve={curve}")
            x0, y0 = np.asarray(data.get_xdata(), float)[0], np.asarray(data.get_ydata(), float)[0]   # on its guide
            assert y0 * (xx[-1] / x0) ** e == pytest.approx(yy[-1], rel=1e-9)


def test_mf_ftrl_figures_draw_each_mechanisms_bound_at_its_noise_energy(captured, tmp_path):
    from jaxdp import registry
    from jaxdp.oco import dp_ftrl_noise_bound
    from jaxdp.privacy.mechanisms.matrix_factorization import get_mechanism

    df, cfg = _kept("mf-ftrl")
    registry.load_all()
    registry.get_study("mf-ftrl").fn(dict(cfg)).plot(df, tmp_path)
    assert [p.name for p, _ in captured] == ["regret_vs_T.png", "regret_vs_eps.png"]
    d, D, checked = int(cfg["d"]), float(cfg["D"]), 0
    for (path, fig), part in zip(captured, ("T", "eps")):
        for ax in fig.axes:
            env = "noisy" if "noisy" in ax.get_title() else "realizable"
            for ln in ax.lines:
                label = ln.get_label()
                if "theory" not in label:
                    continue
                mech = label.rsplit(": ", 1)[1]
                pts = df[(df["part"] == part) & (df["env"] == env) & (df["mechanism"] == mech)].groupby(
                    ["T", "eps"])["sigma"].first().reset_index()
                x = "T" if part == "T" else "eps"
                horizon = int(max(cfg["T"])) if part == "T" else int(cfg["T_fixed"])
                m = get_mechanism(mech, horizon, bands=int(cfg["bands"]))
                eb2 = np.asarray([d * s ** 2 * m.max_row_norm_sq(int(T)) for T, s in zip(pts["T"], pts["sigma"])])
                want = dp_ftrl_noise_bound(pts["T"].to_numpy(float), eb2, D, 2.0 * D, 1.0, env == "realizable")
                np.testing.assert_allclose(ln.get_xdata(), pts[x], rtol=1e-12)
                np.testing.assert_allclose(ln.get_ydata(), want, rtol=1e-6)
                checked += 1
    assert checked == len(cfg["mechanisms"]) * (len(cfg["envs"]) + 1)


def test_plot_figures_theory_by_names_each_bound_and_rows_read_names(captured, tmp_path):
    from jaxdp.studies.plots import plot_figures

    df = pd.DataFrame([{"learner": ln, "T": T, "seed": s, "regret": (1 + "abc".index(ln)) * T ** 0.5 + s}
                       for ln in "abc" for T in (16, 64, 256) for s in range(3)])

    def summary(rows, keys, ys):   # the bound c·√T of each point, named after its learner
        s = analysis.summarize(rows, keys, ys, n_boot=16)
        return s.assign(bound=2.0 * np.sqrt(s["T"].astype(float)) * s["learner"].map({"a": 1.0, "b": 3.0}),
                        bound_name=s["learner"].map({"a": "Thm A", "b": "Thm B"}))

    fig = {"name": "f_{tag}", "rows": "learner in @keep", "panel": "learner", "x": "T", "y": "regret",
           "title": "{learner}", "theory_column": "bound", "theory_by": "bound_name"}
    paths = plot_figures(df, tmp_path, [fig], {"keep": ["a", "b"], "tag": "ab"}, summary=summary)
    assert [p.name for p in paths] == ["f_ab.png"]
    (_, f), = captured
    assert [ax.get_title() for ax in f.axes] == ["a", "b"]          # the rows of @keep only, one panel each
    for ax, c, name in zip(f.axes, (1.0, 3.0), ("Thm A", "Thm B")):
        th, = [ln for ln in ax.lines if "theory" in ln.get_label()]
        assert th.get_label() == f"theory [{ax.get_title()}]: {name}"   # named by theory_by, in its panel only
        np.testing.assert_array_equal(th.get_xdata(), [16.0, 64.0, 256.0])
        np.testing.assert_allclose(th.get_ydata(), 2.0 * c * np.sqrt([16.0, 64.0, 256.0]), rtol=1e-12)


def test_bandits_figures_split_private_from_nonprivate_and_draw_each_bound(captured, tmp_path):
    """The kept figure names, one panel per learner of the file's family, and EXP3's bound 2√(e−1)·√(TK ln K)
    (Auer, Cesa-Bianchi, Freund & Schapire 2002, Cor. 3.2) at every point of its T and K sweeps."""
    import math

    from jaxdp import registry

    df, cfg = _kept("bandits")
    registry.load_all()
    registry.get_study("bandits").fn(dict(cfg)).plot(df, tmp_path)
    kept = sorted(p.name for p in (RESULTS / "bandits").glob("*.png"))
    assert sorted(p.name for p, _ in captured) == kept
    from jaxdp.studies import bandits

    fam = {bandits.LABELS[ln]: "private" if ln in bandits.PRIVATE else "nonprivate" for ln in bandits.LEARNERS}
    exp3_checked = 0
    for path, fig in captured:
        stem = pathlib.Path(path).stem
        for ax in fig.axes:
            t = ax.get_title()   # "<learner> (<instance>)" in the T sweep, "<learner>, T=<T>" in the others
            learner = t.split(", T=")[0] if ", T=" in t else t.rsplit(" (", 1)[0]
            if stem.endswith("private"):
                assert stem.endswith(fam[learner]), (stem, learner)
            theory = [ln for ln in ax.lines if "theory" in ln.get_label()]
            stochastic_on_switch = "switch" in stem and learner not in ("EXP3", "EXP3-IX", "DP-EXP3")
            assert len(theory) == (0 if stochastic_on_switch else 1), (stem, learner)
            if learner == "EXP3":
                x = "K" if "_K_" in stem else "T"
                xs = np.asarray(theory[0].get_xdata(), float)
                T, K = (xs, float(cfg["K"])) if x == "T" else (float(cfg["K_T"]), xs)
                np.testing.assert_allclose(theory[0].get_ydata(),
                                           2 * math.sqrt(math.e - 1) * np.sqrt(T * K * np.log(K)), rtol=1e-9)
                assert theory[0].get_label() == "theory [EXP3]: Auer et al. Cor 3.2"
                exp3_checked += 1
    assert exp3_checked == 3   # T sweep on linspace and switch, K sweep
