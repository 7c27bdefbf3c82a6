"""Figures: the curve styles, :func:`plot_curves`, :func:`plot_panels`, the slope guides they draw
(:func:`slope_guides`), :func:`plot_figures` (the figures a study declares as data) and :func:`replot_results` (redraws
a finished results directory's PNGs from its hash-checked ``results.csv``).
"""
from __future__ import annotations

import os
import pathlib
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

__all__ = ["plot_curves", "plot_panels", "replot_results", "curve_style", "theory_style", "CURVE_COLORS",
           "CURVE_MARKERS", "CURVE_LINESTYLES", "label_log_ticks", "slope_guides", "plot_bars_beside_curves",
           "plot_figures"]


# Curve styles: colour, marker and line style all cycle with different periods (10, 9, 3), so no
# two curves of one Axes share all three (for fewer than 90 curves). Markers are hollow and their
# sizes alternate, so a curve drawn exactly over another leaves the one below visible.
CURVE_COLORS = tuple(f"C{i}" for i in range(10))
CURVE_MARKERS = ("o", "s", "D", "^", "v", "<", ">", "p", "h")
CURVE_LINESTYLES = ("-", "-.", ":")


def curve_style(i: int) -> dict:
    """Matplotlib keyword arguments of the ``i``-th empirical curve of an Axes (``i >= 0``).

    Colour, marker and line style cycle with periods 10, 9 and 3: curves ``i != j`` below 90 never
    share all three. Markers are hollow, with sizes alternating 7 / 5.5 / 4, so coincident
    curves stay visible. Theory curves use :func:`theory_style`.

    Args:
        i: the curve's index on its Axes (counting the curves already drawn there).

    Returns:
        ``{"color", "marker", "linestyle", "ms", "mfc", "mew", "lw"}`` for ``Axes.plot``.

    Raises:
        ValueError: ``i`` is not a non-negative integer.
    """
    if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or i < 0:
        raise ValueError(f"i must be a non-negative integer (the curve's index), got {i!r}")
    return {"color": CURVE_COLORS[i % 10], "marker": CURVE_MARKERS[i % 9], "linestyle": CURVE_LINESTYLES[i % 3],
            "ms": (7.0, 5.5, 4.0)[i % 3], "mfc": "none", "mew": 1.2, "lw": (1.4, 1.4, 1.9)[i % 3]}


def theory_style(j: int, offset: int = 0) -> dict:
    """Matplotlib keyword arguments of the ``j``-th theory curve of an Axes: no marker, dashed
    (dotted from the 11th on), colour ``C{(offset + j) mod 10}``.

    Args:
        j: the theory curve's index on its Axes.
        offset: the number of empirical curves on the Axes: with fewer than 10 curves in all, no
            theory curve shares an empirical one's colour.

    Returns:
        ``{"color", "marker", "linestyle", "lw", "zorder"}`` for ``Axes.plot`` (drawn below the data).

    Raises:
        ValueError: ``j`` or ``offset`` is not a non-negative integer.
    """
    for name, v in (("j", j), ("offset", offset)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {v!r}")
    return {"color": CURVE_COLORS[(offset + j) % 10], "marker": "None", "linestyle": ("--", ":")[(j // 10) % 2],
            "lw": 1.3, "zorder": 1.8}


def _pyplot():
    """``matplotlib.pyplot`` on the Agg backend (writes files, needs no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _tick_text(v: float, _pos=None, plain: bool = True) -> str:
    """A log-axis tick label: plain digits from 0.001 to 999999 (with ``plain``), ``m×10^e`` otherwise."""
    if not np.isfinite(v) or v <= 0:
        return ""
    if plain and 1e-3 <= v < 1e6:
        return f"{v:g}"
    e = int(np.floor(np.log10(v) + 1e-9))
    m = v / 10.0 ** e
    if e == 0:
        return f"{m:g}"
    return f"$10^{{{e}}}$" if abs(m - 1) < 1e-6 else f"${m:g}\\times10^{{{e}}}$"


def _log_ticks(lo: float, hi: float, subs) -> list:
    """The ticks ``m * 10^e`` (``m`` in ``subs``) within ``[lo, hi]``."""
    return [m * 10.0 ** e for e in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1)
            for m in subs if lo <= m * 10.0 ** e <= hi]


def label_log_ticks(ax) -> None:
    """Label enough ticks of every logarithmic axis of ``ax`` to read values off it.

    The labelled ticks are the densest of 1, 2, ..., 9 / 1, 2, 3, 5 / 1, 2, 5 / 1, 3 / 1 times each power of ten
    whose labels fit along the axis without touching (so a panel spanning less than a decade still
    has several labels, never one); unlabelled minor ticks mark every multiple. Labels read as plain
    numbers where the whole axis lies between 0.001 and 999999, as ``m×10^e`` otherwise.

    Args:
        ax: a Matplotlib Axes, its data already drawn (the limits decide the labelled ticks).
    """
    import matplotlib
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    box = ax.get_position()
    w, h = ax.figure.get_size_inches() * 72.0
    for axis, lim, room in ((ax.xaxis, ax.get_xlim(), box.width * w), (ax.yaxis, ax.get_ylim(), box.height * h)):
        if axis.get_scale() != "log":
            continue
        lo, hi = sorted(float(v) for v in lim)
        if not (lo > 0 and np.isfinite(hi)):
            continue
        size = matplotlib.rcParams["xtick.labelsize"] if axis is ax.xaxis else matplotlib.rcParams["ytick.labelsize"]
        pt = matplotlib.font_manager.FontProperties(size=size).get_size_in_points()
        plain = all(1e-3 <= t < 1e6 for t in _log_ticks(lo, hi, range(1, 10)))   # one notation per axis
        every = tuple(float(k) for k in range(1, 10))
        # nothing fits: decades, or where fewer than two decades show, the sparsest choice labelling two ticks
        subs = next((c for c in ((1.0,), (1.0, 3.0), (1.0, 2.0, 5.0)) if len(_log_ticks(lo, hi, c)) >= 2), every)
        for cand in (every, (1.0, 2.0, 3.0, 5.0), (1.0, 2.0, 5.0), (1.0, 3.0)):
            ticks = _log_ticks(lo, hi, cand)
            # each label's extent along the axis: its width side by side (about 0.62 em a character), or
            # a line stacked; neighbours (at their log distance) leave a gap of most of an em
            ext = [0.62 * pt * len(_tick_text(t, None, plain).strip("$").replace("\\times", "x"))
                   if axis is ax.xaxis else pt for t in ticks]
            apart = [room * np.log10(b / a) / np.log10(hi / lo) for a, b in zip(ticks, ticks[1:])]
            if len(ticks) >= 2 and all(d >= (e0 + e1) / 2 + 0.8 * pt for d, e0, e1 in zip(apart, ext, ext[1:])):
                subs = cand
                break
        axis.set_major_locator(LogLocator(base=10.0, subs=subs))
        axis.set_major_formatter(FuncFormatter(lambda v, pos, plain=plain: _tick_text(v, pos, plain)))
        axis.set_minor_locator(LogLocator(base=10.0, subs=every))
        axis.set_minor_formatter(NullFormatter())


def slope_guides(claims_by_curve: Mapping[Any, Optional[float]], data, x: str, y: str, hue: str = "curve",
                 limit: Optional[int] = 4) -> dict:
    """Dashed guides of the claimed log-log slopes, the ``theory=`` mapping of :func:`plot_curves`.

    For each curve with a claimed exponent ``e`` (a power law ``y ∝ x^e``), the guide
    ``g(x) = y0 (x / x0)^e`` through the curve's anchor ``(x0, y0)``: its point of smallest ``x``
    with a finite positive ``x`` and mean (a point a log-log Axes can draw). On log-log axes the
    guide is a straight line of slope ``e`` through that point, so a curve following its claimed
    rate runs parallel to its guide.

    Args:
        claims_by_curve: ``{hue value: e}`` in drawing order; ``None`` or a non-finite ``e`` (no claim) draws no
            guide, nor does a curve with no drawable point or absent from ``data``.
        data: a table of :func:`jaxdp.studies.analysis.summarize` with the columns ``x``, ``{y}_mean`` and ``hue``.
        x: the abscissa column.
        y: the metric's name (the stem of its summary columns).
        hue: the column whose values name the curves.
        limit: at most this many guides (the first curves of ``claims_by_curve``); ``None``: one per curve.

    Returns:
        ``{"slope {e:.2f} ({curve})": g}``, each ``g`` a callable of an array of ``x`` values.

    Raises:
        ValueError: ``data`` lacks one of the columns, or ``limit`` is not ``None`` or a non-negative integer.
    """
    if limit is not None and (not isinstance(limit, (int, np.integer)) or isinstance(limit, bool) or limit < 0):
        raise ValueError(f"limit must be None or a non-negative integer (the most guides drawn), got {limit!r}")
    missing = [c for c in (x, f"{y}_mean", hue) if c not in data]
    if missing:
        raise ValueError(f"data must have the columns {[x, f'{y}_mean', hue]!r}; missing {missing!r}")
    out: dict = {}
    for curve, e in claims_by_curve.items():
        if limit is not None and len(out) >= limit:
            break
        if e is None or not np.isfinite(float(e)):
            continue
        g = data[data[hue] == curve]
        xs, ys = g[x].to_numpy(float), g[f"{y}_mean"].to_numpy(float)
        ok = np.isfinite(xs) & np.isfinite(ys) & (xs > 0) & (ys > 0)
        if not ok.any():
            continue
        i = np.flatnonzero(ok)[np.argmin(xs[ok])]
        out[f"slope {float(e):.2f} ({curve})"] = (
            lambda v, x0=float(xs[i]), y0=float(ys[i]), e=float(e): y0 * (np.asarray(v, float) / x0) ** e)
    return out


def plot_curves(summary, x: str, y: str, path: os.PathLike | str, hue: Optional[str] = None,
                theory: Optional[Mapping[str, Any]] = None, title: str = "", xlabel: Optional[str] = None,
                ylabel: Optional[str] = None, logx: bool = True, logy: bool = True, ax=None,
                hue_order: Optional[Sequence] = None, hue_labels: Optional[Mapping[Any, str]] = None):
    """Empirical means (``{y}_mean`` with ``{y}_lo``/``{y}_hi`` error bands) per ``hue`` group,
    with theory curves overlaid as dashed lines. ``theory`` maps a label to a
    callable of the x values or to ``(xs, ys)``. Every curve, theory included, is in the legend,
    and no two curves share colour, marker and line style (:func:`curve_style`). ``hue_order``
    fixes which style each ``hue`` value gets (:func:`plot_panels` passes every panel the same
    order). A curve whose points are an earlier curve's says so in its legend entry (``(= ...)``),
    since it is drawn over it. Log axes label enough ticks to read values (:func:`label_log_ticks`).
    With ``ax`` the curves are drawn there, nothing is saved and the caller draws the legend (one per figure);
    otherwise writes a PNG whose legend is below the Axes, never over a curve (:func:`_save_with_legend`).

    Args:
        summary: a table of :func:`jaxdp.studies.analysis.summarize` (columns ``x``, ``{y}_mean`` and
            optionally ``{y}_lo``, ``{y}_hi`` and ``hue``).
        x: the abscissa column.
        y: the metric's name (the stem of its summary columns).
        path: the PNG written (unless ``ax`` is given).
        hue: the column whose values are separate curves; ``None``: one curve.
        theory: ``{label: f}`` with ``f(xs) -> ys`` evaluated on 64 points spanning the data, or
            ``{label: (xs, ys)}``.
        title: the Axes' title.
        xlabel, ylabel: axis labels (default the column names).
        logx, logy: logarithmic axes.
        ax: a Matplotlib Axes to draw on; the figure is then neither laid out nor saved.
        hue_order: the ``hue`` values in style order; must contain every value present.
        hue_labels: ``{hue value: legend label}`` replacing ``"{hue}={value}"``.

    Returns:
        ``path`` as a :class:`pathlib.Path`.

    Raises:
        ValueError: ``hue_order`` misses a value of ``hue``.
    """
    plt = _pyplot()
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=110)
    start = len(ax.lines)   # styles continue after curves already on ``ax``
    if hue:
        order = list(hue_order) if hue_order is not None else sorted(summary[hue].unique())
        missing = sorted(set(summary[hue].unique()) - set(order), key=str)
        if missing:
            raise ValueError(f"hue_order must list every value of {hue!r}; missing {missing!r}")
        groups = [(k, summary[summary[hue] == k]) for k in order]
    else:
        order, groups = [None], [(None, summary)]
    drawn: list = []
    for i, (key, g) in enumerate(groups):
        if not len(g):
            continue   # a value absent from this panel keeps its style index for the others
        g = g.sort_values(x)
        st = curve_style(start + i)
        label = (hue_labels or {}).get(key, f"{hue}={key}") if hue else y
        xs, ys = g[x].to_numpy(float), g[f"{y}_mean"].to_numpy(float)   # the same points (to 1e-9) as an earlier curve
        same = [lb for lb, px, py in drawn if np.array_equal(px, xs) and np.allclose(py, ys, rtol=1e-9, atol=0,
                                                                                        equal_nan=True)]
        drawn.append((label, xs, ys))
        if same:   # drawn exactly over an earlier curve: say so, or the reader looks for a missing line
            label += f" (= {same[0].split(' (')[0]}: same values)"
        ax.plot(g[x], g[f"{y}_mean"], label=label, **st)
        if f"{y}_lo" in g:
            ax.fill_between(g[x], g[f"{y}_lo"], g[f"{y}_hi"], color=st["color"], alpha=0.15, lw=0)
    xs_all = np.sort(summary[x].unique()).astype(float)
    for j, (label, th) in enumerate((theory or {}).items()):
        if callable(th):
            xx = np.geomspace(xs_all.min(), xs_all.max(), 64) if logx and xs_all.min() > 0 else np.linspace(
                xs_all.min(), xs_all.max(), 64)
            yy = th(xx)
        else:
            xx, yy = th
        ax.plot(xx, yy, label=f"theory: {label}", **theory_style(j, start + len(order)))
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    label_log_ticks(ax)
    return _save_with_legend(fig, path) if own else pathlib.Path(path)


def _distinct_parts(titles: Sequence[str]) -> dict:
    """``{title: what sets it apart}``: the titles less the words (up to a comma or space) they all begin or end with."""
    if len(set(titles)) < 2:
        return {t: t for t in titles}
    pre, suf = os.path.commonprefix(list(titles)), os.path.commonprefix([t[::-1] for t in titles])[::-1]
    pre = pre[:pre.rfind(" ") + 1]   # whole words only
    suf = suf[min((i for i in (suf.find(","), suf.find(" ")) if i >= 0), default=len(suf)):]
    return {t: t[len(pre):len(t) - len(suf)].strip(" ,") or t for t in titles}


def plot_panels(summary, panel: str, x: str, y: str, path: os.PathLike | str, *, hue: Optional[str] = None,
                theory: Optional[Callable[..., Mapping[str, Any]]] = None,
                title: Optional[Callable[..., str]] = None, ylabel: Optional[str] = None, width: float = 4.3,
                **kw) -> pathlib.Path:
    """One row of :func:`plot_curves` panels, one per value of ``summary[panel]``, saved as one PNG.

    A ``hue`` value has the same style in every panel, and the figure has one legend, below the
    panels (:func:`_save_with_legend`); a theory curve drawn in some panels only is named with their titles.

    Args:
        summary: a table of :func:`jaxdp.studies.analysis.summarize`.
        panel: the column whose sorted values are the panels.
        x: the abscissa column.
        y: the metric's name (the stem of its summary columns).
        path: the PNG written.
        hue: the column whose values are separate curves within a panel.
        theory: ``theory(value, sub)`` returns the theory curves (as in :func:`plot_curves`) of the
            panel of ``value`` whose rows are ``sub``.
        title: ``title(value)`` is the panel's title (default ``"{panel}={value}"``).
        ylabel: the y-axis label.
        width: the width of one panel, in inches.
        **kw: further arguments of :func:`plot_curves` (``logx``, ``logy``, ``xlabel``, ``hue_order``,
            ``hue_labels``).

    Returns:
        ``path`` as a :class:`pathlib.Path`.
    """
    plt = _pyplot()
    values = sorted(summary[panel].unique())
    if hue and "hue_order" not in kw:
        kw["hue_order"] = sorted(summary[hue].unique())
    fig, axes = plt.subplots(1, len(values), figsize=(width * len(values), 3.8), dpi=110, squeeze=False)
    for ax, v in zip(axes[0], values):
        sub = summary[summary[panel] == v]
        plot_curves(sub, x, y, path=path, hue=hue, ax=ax, theory=theory(v, sub) if theory else None,
                    title=title(v) if title else f"{panel}={v}", ylabel=ylabel, **kw)
    # a theory curve drawn in some panels only (styles repeat across panels) and a curve that coincides with
    # another in some panels only: the entry names those panels (by what tells their titles apart)
    short = _distinct_parts([ax.get_title() for ax in axes[0]])
    where: dict = {}
    for ax in axes[0]:
        for line in ax.lines:
            base, _, same = line.get_label().partition(" (= ")
            where.setdefault(base, {})[short[ax.get_title()]] = same.removesuffix(": same values)")
    for ax in axes[0]:
        for line in ax.lines:
            base = line.get_label().partition(" (= ")[0]
            panels = [t for t, _ in where[base].items()]
            same = {t: x for t, x in where[base].items() if x}
            if base.startswith("theory: ") and len(panels) < len(values):
                line.set_label(f"theory [{'; '.join(panels)}]: {base.removeprefix('theory: ')}")
            elif same and len(same) < len(panels):
                line.set_label(f"{base} (= {next(iter(same.values()))}: same values in {'; '.join(same)})")
    return _save_with_legend(fig, path)


def plot_bars_beside_curves(bars: Mapping[str, Any], marks: Optional[Sequence[Any]], summary, x: str, y: str,
                            path: os.PathLike | str, *, mark_label: str = "exact", bar_title: str = "",
                            bar_xlabel: str = "", bar_ylabel: str = "", **kw) -> pathlib.Path:
    """Grouped bars (e.g. a histogram per group against its exact distribution) beside a :func:`plot_curves` panel.

    Left: ``bars`` as one bar per group at each category ``0..k-1``, side by side; ``marks[i]`` (same length) is
    drawn as a black tick over group ``i``'s bars, all marks as one legend entry ``mark_label``. Right: the curves
    of ``summary``. The figure has one legend, below both panels (:func:`_save_with_legend`).

    Args:
        bars: ``{legend label: k heights}``, in drawing order.
        marks: per group (same order as ``bars``) ``k`` values marked over its bars, or ``None``.
        summary: the right panel's table (as in :func:`plot_curves`).
        x: the right panel's abscissa column.
        y: the right panel's metric (the stem of its summary columns).
        path: the PNG written.
        mark_label: the legend entry of the marks.
        bar_title: the left panel's title.
        bar_xlabel: the left panel's x-axis label.
        bar_ylabel: the left panel's y-axis label.
        **kw: further arguments of :func:`plot_curves` (``hue``, ``title``, ``xlabel``, ``ylabel``, ``logx``,
            ``logy``, ...).

    Returns:
        ``path`` as a :class:`pathlib.Path`.
    """
    plt = _pyplot()
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=110)
    width, mark_x = 0.8 / max(len(bars), 1), []
    for i, (label, h) in enumerate(bars.items()):
        xs = np.arange(len(h)) + (i - (len(bars) - 1) / 2) * width
        a0.bar(xs, h, width=width, alpha=0.6, label=label)
        mark_x.append(xs)
    if marks is not None and len(mark_x):   # one marker-only line, so one legend entry
        a0.plot(np.concatenate(mark_x), np.concatenate([np.asarray(m, float) for m in marks]), color="k", marker="_",
                linestyle="None", ms=max(3.0, 60 * width), mew=2, label=mark_label)
    a0.set(xlabel=bar_xlabel, ylabel=bar_ylabel)
    a0.set_title(bar_title, fontsize=9)
    plot_curves(summary, x, y, path=path, ax=a1, **kw)
    return _save_with_legend(fig, path)


def _save_with_legend(fig, path: os.PathLike | str) -> pathlib.Path:
    """Lay out ``fig``, put its one legend below the panels, write it to ``path`` and close it.

    The legend is outside every Axes, so it never covers a curve, and ``bbox_inches="tight"`` keeps it inside the
    image: the entries of every Axes merged by label in order of first appearance, none for a line with no finite
    point (nothing drawn), in as many columns as fit the figure's width; any per-Axes legend is removed.
    """
    fig.tight_layout()
    handles: dict = {}
    for ax in fig.axes:
        for h, label in zip(*ax.get_legend_handles_labels()):
            data = h.get_ydata() if hasattr(h, "get_ydata") else None
            if data is not None and not np.isfinite(np.asarray(data, dtype=float)).any():
                continue
            handles.setdefault(label, h)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if handles:
        per = max(len(lb) for lb in handles) * 7.0 * 0.55 + 3.5 * 7.0 + 10   # points per column at font size 7
        fig.legend(list(handles.values()), list(handles), loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=max(1, min(len(handles), int(fig.get_size_inches()[0] * 72.0 // per))), fontsize=7.0,
                   frameon=False)
    path = pathlib.Path(path)
    fig.savefig(path, bbox_inches="tight")
    _pyplot().close(fig)
    return path


def replot_results(out_dir: os.PathLike | str) -> list[pathlib.Path]:
    """Redraw the plots of a finished results directory from its ``results.csv``.

    Works where the chunks are gone (kept results keep only ``results.csv``, ``manifest.json`` and
    the tables): the study is rebuilt from the manifest's config, ``results.csv`` is checked against
    the SHA-256 the manifest records, and only the ``plot`` PNGs are rewritten, never a table or
    ``results.csv``.

    Args:
        out_dir: the finished study's results directory.

    Returns:
        The paths of the plots written.

    Raises:
        ValueError: a directory that is not a finished study, a ``results.csv`` whose hash does not
            match, or a study without plots.
    """
    import pandas as pd

    from .. import registry
    from .store import _read_manifest, verify_study

    out = pathlib.Path(out_dir)
    if not (out / "manifest.json").exists() or not (out / "results.csv").exists():
        raise ValueError(f"out_dir {str(out)!r} is not a finished study results directory "
                         f"(needs manifest.json and results.csv)")
    manifest = _read_manifest(out)
    registry.load_all()
    study = registry.get_study(manifest["study"]).fn(dict(manifest["config"]))
    if verify_study(out, study).results.startswith("damaged"):
        raise ValueError(f"out_dir {str(out)!r}: results.csv does not match the SHA-256 in manifest.json")
    if study.plot is None:
        raise ValueError(f"study {study.name!r} has no plots")
    data = pd.read_csv(out / "results.csv")
    return [pathlib.Path(p) for p in (study.plot(data, out) or [])]


def plot_figures(df, outdir: os.PathLike | str, figures: Sequence[Mapping[str, Any]], names: Mapping[str, Any],
                 defaults: Optional[Mapping[str, Any]] = None, summary: Optional[Callable[..., Any]] = None,
                 **kw: Any) -> list[pathlib.Path]:
    """The figures a study declares as data (``[[figures]]`` of its TOML, every key defaulting to its
    ``[figure_defaults]``): per figure, the mean of one column against another per curve, beside theory curves.

    A figure is a mapping with ``name`` (the PNG's stem), ``x``, ``y`` and optionally:

    * ``rows``: a pandas query selecting its rows, reading ``names`` as ``@name`` (``"learner in @private"``).
    * ``each``: a column: one figure per sorted value among the rows, ``{<column>}`` in ``name`` and ``title``.
    * ``hue``: the column naming the curves; ``curve``: instead, an f-string of a row
      (:func:`~jaxdp.studies.specs.fstring`, which also sees ``x``, the figure's abscissa) naming its curve: the
      ``hue`` column ``curve``.
    * ``panel``: a column: one panel per value (:func:`plot_panels`), ``width`` a panel's.
    * ``title`` (a ``str.format`` template of ``names`` and ``{panel column}``), ``xlabel``, ``ylabel``, ``logx``,
      ``logy``, ``hue_labels`` (as :func:`plot_curves`'); ``min_x``: draw only with at least this many distinct
      ``x`` (default 1).
    * ``theory``: ``{label: expression}`` in ``x``, ``names`` and ``s`` the figure's summary
      (:func:`~jaxdp.studies.claims.theory_curves`); with ``panel`` ``{panel value: {label: expression}}``.
    * ``theory_for``: ``{column: {label: expression}}``, both ``str.format`` templates of ``{column}``: one theory
      curve per label and sorted finite value of the column among the figure's rows (a rate per ε of the run),
      after the figure's ``theory``.
    * ``guides``: an expression of a curve's first row (its columns and ``names``): the curve's claimed log-log
      slope, drawn as a guide through its first drawable point (:func:`slope_guides`, one per curve), last.
    * ``theory_column``: a column of the summary holding a theory value at every point: one curve per ``hue``
      value through its finite points sorted by ``x``, in ``hue_order`` (else order of first appearance); with
      ``theory_by``, a column of the summary: one curve per value of that column instead, the value its label
      (e.g. a bound's name in a figure without ``hue``).
    * ``relative_to``: each curve's mean and interval divided by its mean at ``x`` equal to this value (a knob
      relative to its default).

    Args:
        df: the per-seed rows.
        outdir: where the PNGs go.
        figures: the declared figures, in drawing order.
        names: what the titles and expressions read (the configuration, library bounds and rates).
        defaults: keys every figure has unless it states its own (a study's ``[figure_defaults]``).
        summary: ``summary(rows, keys, [y])``, the table a figure draws (default
            :func:`~jaxdp.studies.analysis.summarize`; ``keys`` are the panel, hue and ``x`` columns).
        **kw: further arguments of :func:`plot_curves` for every figure (``hue_order``, ...).

    Returns:
        The PNGs written, in order.
    """
    from .analysis import summarize
    from .claims import theory_curves
    from .specs import fstring

    paths = []
    for f in ({**(defaults or {}), **g} for g in figures):
        sel = df.query(f["rows"], local_dict=dict(names)) if f.get("rows") else df
        if "curve" in f:
            sel = sel.assign(curve=[fstring(f["curve"], r, x=f["x"]) for r in sel.to_dict("records")])
        th, hue, base = dict(f.get("theory", {})), f.get("hue", "curve" if "curve" in f else None), dict(names)
        for col, exprs in f.get("theory_for", {}).items():
            for v in sorted(set(sel[col][np.isfinite(sel[col].astype(float))])):
                th.update({lb.format(**{col: v}): e.format(**{col: v}) for lb, e in exprs.items()})
        if "guides" in f:
            ns = {"__builtins__": {}, "min": min, "max": max, **names}
            for c, r in sel.groupby(hue).first().iterrows():
                e = float(eval(f["guides"], ns, dict(r)))
                if np.isfinite(e):
                    th[f"slope {e:.2f} ({c})"] = f"guide({c!r}, {e!r}, x, s)"
            base["guide"] = lambda c, e, xx, s, f=f, hue=hue: next(iter(slope_guides(
                {c: e}, s, f["x"], f["y"], hue, None).values()), lambda v: np.full(np.shape(v), np.nan))(xx)

        def summ(rows, keys, ys, f=f, hue=hue):
            s = (summary or summarize)(rows, keys, ys)
            if "relative_to" not in f:
                return s
            at_ref = s[np.isclose(s[f["x"]], float(f["relative_to"]))].set_index(hue)[f"{ys[0]}_mean"]
            ref = s[hue].map(at_ref).to_numpy()
            return s.assign(**{f"{ys[0]}_{k}": s[f"{ys[0]}_{k}"] / ref for k in ("mean", "lo", "hi")})

        for v in sorted(sel[f["each"]].unique()) if "each" in f else [None]:
            at = {**base, f["each"]: v} if "each" in f else base
            sub = sel[sel[f["each"]] == v] if "each" in f else sel
            keys = [k for k in (f.get("panel"), hue) if k] + [f["x"]]
            if not len(sub) or sub[f["x"]].nunique() < int(f.get("min_x", 1)):
                continue
            s = summ(sub, keys, [f["y"]])
            path, args = pathlib.Path(outdir) / f"{f['name'].format(**at)}.png", dict(kw)
            args.update({k: f[k] for k in ("xlabel", "ylabel", "logx", "logy", "hue_labels") if k in f}, **({"hue": hue} if hue else {}))

            def theory(t, sub, f=f, at=at, hue=hue):   # the declared expressions, or a column's value at every point
                if "theory_column" not in f:
                    return theory_curves(t, dict(at, s=sub))
                by, col, x, out = f.get("theory_by", hue), f["theory_column"], f["x"], {}
                for key in (kw["hue_order"] if by == hue and kw.get("hue_order") is not None else sub[by].unique()):
                    g = sub[(sub[by] == key) & np.isfinite(sub[x].astype(float)) & np.isfinite(sub[col].astype(float))]
                    if len(g):
                        g = g.sort_values(x)
                        out[key] = (g[x].to_numpy(float), g[col].to_numpy(float))
                return out

            if f.get("panel"):
                paths.append(plot_panels(s, f["panel"], f["x"], f["y"], path, width=float(f.get("width", 4.3)),
                                         theory=lambda p, sub, f=f, th=th: theory(th.get(p, {}), sub),
                                         title=lambda p, f=f, at=at: f["title"].format(**{**at, f["panel"]: p}),
                                         **args))
            else:
                paths.append(plot_curves(s, f["x"], f["y"], path, theory=theory(th, s),
                                         title=f.get("title", "").format(**at), **args))
    return paths
