"""Figures: the curve styles, :func:`plot_curves`, :func:`plot_panels` and :func:`replot_results` (redraws a
finished results directory's PNGs from its hash-checked ``results.csv``).
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import pathlib
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

__all__ = ["plot_curves", "plot_panels", "replot_results", "curve_style", "theory_style", "CURVE_COLORS",
           "CURVE_MARKERS", "CURVE_LINESTYLES"]


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


def plot_curves(summary, x: str, y: str, path: os.PathLike | str, hue: Optional[str] = None,
                theory: Optional[Mapping[str, Any]] = None, title: str = "", xlabel: Optional[str] = None,
                ylabel: Optional[str] = None, logx: bool = True, logy: bool = True, ax=None,
                hue_order: Optional[Sequence] = None):
    """Empirical means (``{y}_mean`` with ``{y}_lo``/``{y}_hi`` error bands) per ``hue`` group,
    with theory curves overlaid as dashed lines. ``theory`` maps a label to a
    callable of the x values or to ``(xs, ys)``. Every curve, theory included, is in the legend,
    and no two curves share colour, marker and line style (:func:`curve_style`). ``hue_order``
    fixes which style each ``hue`` value gets (:func:`plot_panels` passes every panel the same
    order). With ``ax`` the curves are drawn there and nothing is saved; otherwise writes a PNG.

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

    Returns:
        ``path`` as a :class:`pathlib.Path`.

    Raises:
        ValueError: ``hue_order`` misses a value of ``hue``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    for i, (key, g) in enumerate(groups):
        if not len(g):
            continue   # a value absent from this panel keeps its style index for the others
        g = g.sort_values(x)
        st = curve_style(start + i)
        ax.plot(g[x], g[f"{y}_mean"], label=f"{hue}={key}" if hue else y, **st)
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
    from matplotlib.ticker import NullFormatter

    if logx:
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    n_entries = len(ax.get_legend_handles_labels()[0])
    if own and n_entries > 8:
        # many curves: the legend goes beside the axes, never over the data
        fig.set_size_inches(6.4 + 3.6, max(4.4, 0.17 * n_entries + 1.0))
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    else:
        ax.legend(fontsize=7)
    path = pathlib.Path(path)
    if own:
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)
    return path


def plot_panels(summary, panel: str, x: str, y: str, path: os.PathLike | str, *, hue: Optional[str] = None,
                theory: Optional[Callable[..., Mapping[str, Any]]] = None,
                title: Optional[Callable[..., str]] = None, ylabel: Optional[str] = None, width: float = 4.3,
                **kw) -> pathlib.Path:
    """One row of :func:`plot_curves` panels, one per value of ``summary[panel]``, saved as one PNG.

    A ``hue`` value has the same style in every panel.

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
        **kw: further arguments of :func:`plot_curves` (``logx``, ``logy``, ``xlabel``, ``hue_order``).

    Returns:
        ``path`` as a :class:`pathlib.Path`.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    values = sorted(summary[panel].unique())
    if hue and "hue_order" not in kw:
        kw["hue_order"] = sorted(summary[hue].unique())
    fig, axes = plt.subplots(1, len(values), figsize=(width * len(values), 3.8), dpi=110, squeeze=False)
    for ax, v in zip(axes[0], values):
        sub = summary[summary[panel] == v]
        plot_curves(sub, x, y, path=path, hue=hue, ax=ax, theory=theory(v, sub) if theory else None,
                    title=title(v) if title else f"{panel}={v}", ylabel=ylabel, **kw)
    fig.tight_layout()
    path = pathlib.Path(path)
    fig.savefig(path)
    plt.close(fig)
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

    out = pathlib.Path(out_dir)
    mpath, rpath = out / "manifest.json", out / "results.csv"
    if not mpath.exists() or not rpath.exists():
        raise ValueError(f"out_dir {str(out)!r} is not a finished study results directory "
                         f"(needs manifest.json and results.csv)")
    manifest = json.loads(mpath.read_text())
    data = rpath.read_bytes()
    want = (manifest.get("results") or {}).get("sha256")
    if want is not None and hashlib.sha256(data).hexdigest() != want:
        raise ValueError(f"out_dir {str(out)!r}: results.csv does not match the SHA-256 in manifest.json")
    registry.load_all()
    study = registry.get_study(manifest["study"]).fn(dict(manifest["config"]))
    if study.plot is None:
        raise ValueError(f"study {study.name!r} has no plots")
    import matplotlib

    matplotlib.use("Agg")
    return [pathlib.Path(p) for p in (study.plot(pd.read_csv(io.BytesIO(data)), out) or [])]
