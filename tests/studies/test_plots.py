"""Every study's plots are readable: both axes labelled, no two curves of one Axes drawn alike, every
curve (theory included) named in the figure's one legend, no entry for a line that is not drawn, and
log axes with enough labelled ticks to read values.

Each registered study's ``plot`` is run on its kept full-size results (``results/<study>/results.csv``),
cut to two seeds per grid point and with few bootstrap resamples, so the figures have the real
curves and legends; ``savefig`` is intercepted, so nothing is written. The stored notebooks are
checked to have been executed top to bottom at the sizes their parameter cell states.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import pathlib

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
pd = pytest.importorskip("pandas")

import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.figure  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from _helpers import ROOT  # noqa: E402
from jaxdp import registry  # noqa: E402
from jaxdp.studies import analysis, framework  # noqa: E402

RESULTS = ROOT / "results"
NB_DIR = ROOT / "notebooks"


def _style_key(line) -> tuple:
    marker = line.get_marker()
    marker = "None" if marker in (None, "", " ", "none", "None") else str(marker)
    return mcolors.to_rgba(line.get_color()), marker, line.get_linestyle()


def figure_problems(fig) -> list[str]:
    """What is wrong with ``fig``: unlabelled axes, curves drawn alike, curves missing from the legend, more
    than one legend, a legend entry for a line with no finite point."""
    out = []
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    if len(legends) > 1:
        out.append(f"{len(legends)} legends: one per figure, not per panel")
    in_legend = {t.get_text() for lg in legends for t in lg.get_texts()}
    drawn = {ln.get_label() for ax in fig.axes for ln in ax.lines
             if np.isfinite(np.asarray(ln.get_ydata(), dtype=float)).any()}
    out += [f"legend entry {t!r} names no drawn line" for t in sorted(in_legend)
            if t not in drawn and any(t == ln.get_label() for ax in fig.axes for ln in ax.lines)]
    for i, ax in enumerate(fig.axes):
        where = f"axes {i} ({ax.get_title()!r})"
        if not ax.get_xlabel().strip():
            out.append(f"{where}: no x label")
        if not ax.get_ylabel().strip():
            out.append(f"{where}: no y label")
        named = in_legend
        seen = {}
        for line in ax.lines:
            label = line.get_label()
            key = _style_key(line)
            if key in seen:
                out.append(f"{where}: {label!r} has the colour, marker and line style of {seen[key]!r}")
            seen[key] = label
            if (label.startswith("_") or label not in named) and label in drawn:   # an empty line needs no entry
                out.append(f"{where}: curve {label!r} is not in the legend")
    return out


@pytest.fixture
def captured(monkeypatch):
    """Figures passed to ``savefig`` (nothing is written, nothing laid out), and cheap bootstrap intervals."""
    figs = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda self, path, *a, **k: figs.append((path, self)))
    monkeypatch.setattr(matplotlib.figure.Figure, "tight_layout", lambda self, *a, **k: None)   # layout only
    boot = analysis.bootstrap_mean_ci
    monkeypatch.setattr(analysis, "bootstrap_mean_ci", lambda v, n_boot=1000, *a, **k: boot(v, 16, *a, **k))
    slopes = framework.fit_slopes

    def few_slopes(*a, **k):
        k["n_boot"] = 8
        return slopes(*a, **k)

    registry.load_all()
    import sys

    for name, mod in list(sys.modules.items()):
        if name.startswith("jaxdp.studies.") and getattr(mod, "fit_slopes", None) is slopes:
            monkeypatch.setattr(mod, "fit_slopes", few_slopes)
    yield figs
    plt.close("all")


def _kept(study: str) -> list[pathlib.Path]:
    return sorted(d for d in RESULTS.iterdir()
                  if (d / "manifest.json").exists() and json.loads((d / "manifest.json").read_text())["study"] == study)


def _studies() -> list[str]:
    registry.load_all()
    return sorted(registry.STUDIES)


def test_every_study_has_kept_results():
    missing = [s for s in _studies() if not _kept(s)]
    assert not missing, f"studies without a kept results directory to plot from: {missing}"


@pytest.mark.parametrize("study", _studies())
def test_study_plots_are_readable(study, captured, tmp_path):
    for d in _kept(study):
        manifest = json.loads((d / "manifest.json").read_text())
        df = pd.read_csv(d / "results.csv")
        df = df[df["seed"] < df.groupby("point")["seed"].transform("min") + 2].reset_index(drop=True)
        st = registry.get_study(study).fn(dict(manifest["config"]))
        captured.clear()
        paths = st.plot(df, tmp_path) or []
        assert captured, f"{d.name}: plot drew nothing"
        assert len(captured) == len(paths), f"{d.name}: every saved figure is returned"
        problems = [f"{pathlib.Path(p).name}: {msg}" for p, fig in captured for msg in figure_problems(fig)]
        assert not problems, f"{d.name}:\n" + "\n".join(problems)


def test_plot_curves_many_curves_distinct_and_legended(tmp_path, captured):
    """30 empirical curves and 12 theory curves in one Axes: all drawn differently, all named."""
    rows = [{"h": f"c{k:02d}", "x": x, "y_mean": (k + 1) * x, "y_lo": k * x, "y_hi": (k + 2) * x}
            for k in range(30) for x in (1.0, 2.0, 4.0)]
    theory = {f"t{j}": (lambda x, j=j: (j + 1) * np.asarray(x)) for j in range(12)}
    framework.plot_curves(pd.DataFrame(rows), "x", "y", tmp_path / "p.png", hue="h", theory=theory)
    (_, fig), = captured
    assert len(fig.axes[0].lines) == 42
    assert figure_problems(fig) == []


def test_plot_panels_same_style_per_hue_in_every_panel(tmp_path, captured):
    rows = [{"panel": p, "h": h, "x": x, "y_mean": x * (1 + "uvw".index(h))} for p in ("a", "b") for h in ("u", "v", "w")
            for x in (1.0, 2.0) if not (p == "b" and h == "u")]
    framework.plot_panels(pd.DataFrame(rows), "panel", "x", "y", tmp_path / "p.png", hue="h")
    (_, fig), = captured
    styles = [{ln.get_label(): _style_key(ln) for ln in ax.lines} for ax in fig.axes]
    assert styles[0]["h=v"] == styles[1]["h=v"] and styles[0]["h=w"] == styles[1]["h=w"]
    assert figure_problems(fig) == []


def test_plot_figures_draws_each_declared_figure(tmp_path, captured):
    """A figure declared as data: one per ``each`` value (its rows only, its name and title filled), a panel per
    ``panel`` value with that panel's theory, and none where fewer than ``min_x`` abscissae; the theory curves are
    the declared expressions in ``x`` and the names."""
    from jaxdp.studies.plots import plot_figures

    df = pd.DataFrame([{"exp": e, "adv": a, "h": h, "x": x, "y": c * x, "seed": s}
                       for e, c in (("A", 1.0), ("B", 2.0)) for a in ("p", "q") for h in ("u", "v")
                       for x in (1.0, 2.0, 4.0) for s in (0, 1)])
    figures = [{"name": "A_{adv}", "rows": "exp == 'A'", "each": "adv", "hue": "h", "x": "x", "y": "y",
                "title": "A {adv} c={c}", "theory": {"c x": "c * x"}},
               {"name": "B", "rows": "exp == 'B'", "panel": "adv", "x": "x", "y": "y", "title": "B {adv}",
                "theory": {"p": {"2x": "2 * x"}, "q": {"3x": "3 * x"}}},
               {"name": "none", "rows": "x > 3", "min_x": 2, "x": "x", "y": "y"}]
    paths = plot_figures(df, tmp_path, figures, {"c": 1.0})
    assert [p.name for p in paths] == ["A_p.png", "A_q.png", "B.png"] and len(captured) == 3
    fig = captured[0][1]
    (ax,) = fig.axes
    assert ax.get_title() == "A p c=1.0"
    th = [ln for ln in ax.lines if ln.get_label() == "theory: c x"]
    assert len(th) == 1 and np.allclose(th[0].get_ydata(), th[0].get_xdata())
    assert [ax.get_title() for ax in captured[2][1].axes] == ["B p", "B q"]
    for ax, c in zip(captured[2][1].axes, (2.0, 3.0)):
        (t,) = [ln for ln in ax.lines if "theory" in ln.get_label()]
        assert np.allclose(t.get_ydata(), c * np.asarray(t.get_xdata()))
        assert np.allclose(ax.lines[0].get_ydata(), 2.0 * np.asarray(ax.lines[0].get_xdata()))
    assert all(figure_problems(f) == [] for _, f in captured)


def test_plot_bars_beside_curves_draws_every_bar_and_mark(tmp_path, captured):
    """The bar panel has one bar per group and category at the given heights, the marks over each group's bars
    as one legend entry, and the curve panel the curves; one legend for the figure."""
    from jaxdp.studies.plots import plot_bars_beside_curves

    bars = {"g1": np.array([0.2, 0.3, 0.5]), "g2": np.array([0.6, 0.1, 0.3])}
    marks = [np.array([0.25, 0.25, 0.5]), np.array([0.5, 0.2, 0.3])]
    rows = pd.DataFrame([{"h": h, "x": x, "y_mean": x * (1 + "uv".index(h))} for h in "uv" for x in (1.0, 2.0)])
    plot_bars_beside_curves(bars, marks, rows, "x", "y", tmp_path / "b.png", mark_label="exact", hue="h",
                            bar_xlabel="k", bar_ylabel="p", logx=False, logy=False)
    (_, fig), = captured
    a0, a1 = fig.axes
    assert sorted(round(p.get_height(), 6) for p in a0.patches) == sorted(np.concatenate(list(bars.values())))
    (m,) = a0.lines
    assert m.get_label() == "exact" and np.allclose(m.get_ydata(), np.concatenate(marks))
    # each mark sits over its own group's bar: same x as the bar's centre
    centres = sorted(p.get_x() + p.get_width() / 2 for p in a0.patches)
    assert np.allclose(sorted(m.get_xdata()), centres)
    assert {ln.get_label() for ln in a1.lines} == {"h=u", "h=v"}
    assert figure_problems(fig) == []


def _labelled_ticks(axis) -> list:
    """The tick labels with text that lie within the axis' view."""
    lo, hi = sorted(axis.get_view_interval())
    return [t.get_text() for t, v in zip(axis.get_ticklabels(), axis.get_ticklocs()) if t.get_text() and lo <= v <= hi]


def test_small_plots_have_one_legend_and_labelled_log_ticks(tmp_path, captured):
    """A panel figure has one legend (the figure's, outside the panels), not one per panel; a log axis spanning
    under a decade still labels several ticks; a curve drawn over an identical one says so; a line with no
    finite point gets no legend entry."""
    rows = [{"panel": p, "h": h, "x": x, "y_mean": (2.0 if h == "w" else 1.0) * x * (1 + 0.1 * (p == "b"))}
            for p in ("a", "b") for h in ("u", "v", "w") for x in (20.0, 30.0, 45.0, 60.0)]
    nan = {"empty": (np.array([20.0, 60.0]), np.array([np.nan, np.nan]))}
    framework.plot_panels(pd.DataFrame(rows), "panel", "x", "y", tmp_path / "p.png", hue="h",
                          theory=lambda v, sub: nan)
    framework.plot_curves(pd.DataFrame(rows[:12]), "x", "y", tmp_path / "q.png", hue="h")
    for path, fig in captured:
        fig.canvas.draw()
        assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in fig.axes), path
        texts = [t.get_text() for t in fig.legends[0].get_texts()]
        assert "h=v (= h=u: same values)" in texts and not any("empty" in t for t in texts), texts
        assert fig.legends[0].get_window_extent().y1 <= min(ax.get_window_extent().y0 for ax in fig.axes)
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):   # 20 … 120 spans under a decade: 1-2-5 or every integer labelled
                assert len(_labelled_ticks(axis)) >= 3, (path, _labelled_ticks(axis))
        assert figure_problems(fig) == []


def test_the_checker_finds_faults(captured):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], "o-", color="C0", label="a")
    ax.plot([0, 1], [1, 2], "o-", color="C0", label="b")
    ax.plot([0, 1], [2, 3], "k--")
    ax.plot([0, 1], [np.nan, np.nan], "r:", label="nothing")
    ax.legend()
    fig.legend()
    found = figure_problems(fig)
    assert any("2 legends" in m for m in found)
    assert any("'nothing' names no drawn line" in m for m in found)
    assert any("no x label" in m for m in found) and any("no y label" in m for m in found)
    assert any("'b' has the colour" in m for m in found)
    assert any("not in the legend" in m for m in found)


def test_style_helpers_reject_bad_index():
    assert len({tuple(framework.curve_style(i)[k] for k in ("color", "marker", "linestyle")) for i in range(90)}) == 90
    for bad in (-1, 1.5, True, "0"):
        with pytest.raises(ValueError, match="i must be a non-negative integer"):
            framework.curve_style(bad)
    with pytest.raises(ValueError, match="offset must be a non-negative integer"):
        framework.theory_style(0, -2)


def test_plot_curves_hue_order_must_cover_every_value(tmp_path):
    df = pd.DataFrame({"h": ["a", "b"], "x": [1.0, 2.0], "y_mean": [1.0, 2.0]})
    with pytest.raises(ValueError, match="hue_order must list every value of 'h'; missing \\['b'\\]"):
        framework.plot_curves(df, "x", "y", tmp_path / "p.png", hue="h", hue_order=["a"])
    plt.close("all")


def test_replot_results_redraws_from_results_csv_only(tmp_path, captured):
    """``replot_results`` draws a kept directory's plots from ``results.csv`` (no chunks needed), writes
    nothing else, and refuses a ``results.csv`` that does not match its manifest."""
    import shutil

    d = tmp_path / "kept"
    d.mkdir()
    for f in ("manifest.json", "results.csv"):
        shutil.copy(RESULTS / "realizable-findings" / f, d / f)
    before = (d / "results.csv").read_bytes()
    paths = framework.replot_results(d)
    assert [p.name for p in paths] == ["potential.png", "binary_tree.png", "oco.png", "adaptive.png"]
    assert len(captured) == 4 and (d / "results.csv").read_bytes() == before
    assert sorted(f.name for f in d.iterdir()) == ["manifest.json", "results.csv"]
    (d / "results.csv").write_bytes(before.replace(b"\n", b"\n", 1) + b"\n")
    with pytest.raises(ValueError, match="results.csv does not match the SHA-256 in manifest.json"):
        framework.replot_results(d)
    with pytest.raises(ValueError, match="is not a finished study results directory"):
        framework.replot_results(tmp_path / "none")


# --------------------------------------------------------------------------- stored notebooks

nbformat = pytest.importorskip("nbformat")
NOTEBOOKS = sorted(p.name for p in NB_DIR.glob("*.ipynb"))


def _stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_stored_notebook_ran_at_its_stated_sizes(name, monkeypatch):
    """The stored outputs come from one top-to-bottom run of the code as shown, at full size: the
    parameter cell (tagged ``parameters``, no imports beyond ``os``) prints the sizes, and rerunning
    it without ``JAXDP_NB_SMALL`` prints the same."""
    nb = nbformat.read(NB_DIR / name, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    counts = [c.get("execution_count") for c in code]
    assert counts == list(range(1, len(code) + 1)), f"{name}: re-execute it top to bottom (counts {counts})"
    params = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(params) == 1, f"{name}: one code cell tagged 'parameters' sets the sizes"
    monkeypatch.delenv("JAXDP_NB_SMALL", raising=False)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(params[0].source, f"{name}:parameters", "exec"), {"os": os})
    assert buf.getvalue().strip(), f"{name}: the parameter cell prints the sizes it runs at"
    assert _stdout(params[0]) == buf.getvalue(), (
        f"{name}: the stored outputs were made at other sizes than the code states; re-execute it")


def test_docs_notebooks_are_the_notebooks():
    """The docs render ``docs/notebooks``, which is ``notebooks/`` itself (a symlink), never a stale copy."""
    docs = ROOT / "docs" / "notebooks"
    assert docs.resolve() == NB_DIR.resolve() or all(
        (docs / n).read_bytes() == (NB_DIR / n).read_bytes() for n in NOTEBOOKS)
