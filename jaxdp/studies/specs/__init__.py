"""Studies as data: a study's spec (``<name>.toml``) and its results-page prose (``<name>.md``).

A study is three short things:

* ``specs/<name>.toml``: its description, default and ``--quick`` configuration, the declared range of every
  parameter (``[params.<key>]``: the fields of :class:`~jaxdp.studies.spec.Param`), its grid (``grid``: the
  point keys and the configuration lists they range over, outermost first), its ``group_by`` keys, its claims
  (``[claims.<key>]``: the fields of :class:`~jaxdp.studies.claims.Claim`; a key of several words is also found
  by their tuple), the generated blocks of its results page (``blocks``), the pages that carry them (``pages``,
  default its results page) and its page tables (``[columns]``: headers, or ``[header, cell]`` pairs whose cells
  are f-strings on a data frame's rows, :meth:`StudySpec.table`);
* ``specs/<name>.md``: the prose of each generated block, a Markdown template whose ``{fields}`` the study
  fills from its kept run (``<!-- block: <block name> -->`` opens each one; ``{{``/``}}`` are literal braces);
* ``jaxdp/studies/<module>.py``: the science only: how one chunk of the grid runs, its tables and plots, and
  the values its page's blocks show.

:class:`StudySpec` reads the first two and gives the third the registration, its ``Study``, the claims and the
page machinery, so no study repeats them.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import pathlib
import re
import sys
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ..analysis import (_pow2, _slopes_rows, fmt_ci_of, fmt_num, joint_slope_boot, loglog_slope, markdown_table,
                        publish_blocks, seed_matrix)
from ..claims import Claim, Measurement, fit_points, judge, verdict_row
from ..config import check_params
from ..spec import Param, Study, declare_params

__all__ = ["StudySpec", "SPEC_DIR", "seed_matrix", "same_evidence", "curve_slopes", "twin_curves",
           "judge_curves", "kept_manifest", "fstring", "grid_points", "curve_notes", "derived_tables",
           "boot_claims"]

#: where the specs and page templates live
SPEC_DIR = pathlib.Path(__file__).resolve().parent
#: the repository root (the folder holding ``docs`` and ``results``)
ROOT = SPEC_DIR.parents[2]
_BLOCK = re.compile(r"^<!-- block: (.+?) -->\n", re.M)


class StudySpec:
    """One study's declarations, read from ``specs/<name>.toml`` and ``specs/<name>.md``.

    Attributes:
        name: the study's registered name.
        module: the study module's last dotted part (``"hedge_baseline"``), named by its pages.
        data: the parsed TOML.
        defaults, quick: the default configuration and the ``--quick`` overrides.
        params: ``{key: Param}`` (``checks`` adds a ``check`` function to some).
        claims: ``{key: Claim}``; a space-separated TOML key (``[claims."hedge noise"]``) is also found by the
            tuple of its words (``claims["hedge", "noise"]``).
        pages: the pages carrying the generated blocks (``pages = [...]`` in the TOML, relative to the repository;
            default the study's own results page).
        blocks: the names of the results page's generated blocks, in page order.
        doc_page, results: ``docs/results/<name>.md`` and ``results/<name>`` under the repository root.
        description: one line for listings and the manifest.

    Args:
        name: the study's name (``"hedge-baseline"``).
        module: the study module's ``__name__``.
        checks: ``{param key: check(value) -> error text or None}`` for checks TOML cannot state.
    """

    def __init__(self, name: str, module: str, checks: Optional[Mapping[str, Callable[[Any], Optional[str]]]] = None):
        self.name, self.module = name, module.rsplit(".", 1)[-1]
        with open(SPEC_DIR / f"{name}.toml", "rb") as f:
            self.data = tomllib.load(f)
        self.description = self.data["description"]
        self.defaults, self.quick = dict(self.data["defaults"]), dict(self.data.get("quick", {}))
        self.params = {k: Param(**{**v, **({"choices": tuple(v["choices"])} if "choices" in v else {})})
                       for k, v in self.data.get("params", {}).items()}
        for k, fn in (checks or {}).items():
            self.params[k] = dataclasses.replace(self.params[k], check=fn)
        self.claims = _Claims((k, Claim(**v)) for k, v in self.data.get("claims", {}).items())
        self.pages = tuple(self.data.get("pages", (f"docs/results/{name}.md",)))
        self.blocks = tuple(self.data.get("blocks", ()))
        self.doc_page = ROOT / "docs" / "results" / f"{name}.md"
        self.results = ROOT / "results" / name
        md = SPEC_DIR / f"{name}.md"
        self._templates = _templates(md.read_text(encoding="utf-8")) if md.exists() else {}

    def register(self, build: Callable[[dict], Any]) -> Callable[[dict], Any]:
        """Register ``build(cfg) -> Study`` as this study (``jaxdp study run <name>``) with its declared params."""
        from ...registry import register_study

        if self.params:
            declare_params(self.name, self.params)
        return register_study(self.name, defaults=self.defaults, quick=self.quick,
                              description=self.description)(build)

    def points(self, cfg: Mapping[str, Any]) -> list[dict]:
        """The grid: one point per combination of the configuration lists named by ``grid`` (outermost first).

        Args:
            cfg: the resolved configuration.

        Returns:
            ``[{point key: value}]``; integers stay integers.
        """
        keys = [k for k, _ in self.data["grid"]]
        lists = [[_scalar(v) for v in cfg[c]] for _, c in self.data["grid"]]
        return [dict(zip(keys, combo)) for combo in itertools.product(*lists)]

    def study(self, cfg: dict, **kw: Any):
        """The :class:`~jaxdp.studies.spec.Study` of ``cfg``: this study's name, grid (:meth:`points`), seeds,
        ``group_by`` and description, with ``kw`` (``run``, ``analyze``, ``plot``, ...; ``points`` replaces the grid).

        Args:
            cfg: the resolved configuration.
            **kw: further fields of the study, or ones that replace the declared.

        Returns:
            The study.
        """
        if "points" not in kw:
            kw["points"] = self.points(cfg)
        kw = {"group_by": tuple(self.data["group_by"]), "description": self.description, **kw}
        return Study(name=self.name, seeds=int(cfg["seeds"]), config=cfg, **kw)

    def generated(self, *files: str) -> str:
        """The opening sentence of a generated block: the kept files it is made from and who writes it.

        Args:
            *files: the files as the block names them (default ``results/<name>/results.csv``).
        """
        files = files or (f"results/{self.name}/results.csv",)
        return (f"*Generated from {' and '.join(f'`{f}`' for f in files)} by "
                f"`jaxdp.studies.{self.module}.publish`; do not edit by hand.*")

    def render(self, block: str, **values: Any) -> str:
        """The block's Markdown: its template filled with ``values`` (``generated`` defaults to
        :meth:`generated`).

        Raises:
            KeyError: no template for ``block``, or a field without a value.
        """
        values.setdefault("generated", self.generated())
        return self._templates[block].format_map(values)

    def validate(self, cfg: Mapping[str, Any]) -> None:
        """Check ``cfg`` against the declared params (:func:`~jaxdp.studies.config.check_params`).

        Raises:
            ValueError: a value outside its declaration.
        """
        check_params(self.name, cfg, self.params)

    def table(self, name: str, rows, **values: Any) -> str:
        """A Markdown table declared under the study TOML's ``[columns].<name>``.

        Each column is a header, or a pair ``[header, cell]`` whose cell is an f-string evaluated on each row of a
        data frame: the row's columns (``row["..."]`` for a name that is no identifier), ``values`` and the page's
        formats ``num(v, digits=3)``, ``ci(stem, digits=3)`` (``stem`` or ``stem_mean`` with ``stem_lo`` and
        ``stem_hi``), ``pow2(T)``. One column ``{per = <column>, header = ..., cell = ...}`` is one column per sorted
        value ``v`` of the data frame's ``<column>`` (its header sees ``<column> = v``), or per value of ``values``
        (a list, in its order) headed by ``headers`` (a list as long): the table's rows are then the distinct tuples
        of the other columns' cells, in order of first appearance, and a cell with no row of its value reads
        ``empty`` (default nothing). So a table has one column per ε of a run, whatever the run's ε.

        Args:
            name: the key of the columns under ``[columns]``.
            rows: the rows, one list of cell strings each, or the data frame the cells are evaluated on.
            **values: the ``{fields}`` of the headers, also seen by the cells.
        """
        cols = [c if isinstance(c, (list, dict)) else [c, None] for c in self.data["columns"][name]]

        def head(h: str, **at: Any) -> str:
            return h.format_map({**values, **at}) if values or at else h

        if isinstance(rows, (list, tuple)):
            return markdown_table([head(h) for h, _ in cols], rows)
        recs = rows.to_dict("records")
        spread = next((c for c in cols if isinstance(c, dict)), None)
        if spread is None:
            return markdown_table([head(h) for h, _ in cols],
                                  [[fstring(cell, r, **values) for _, cell in cols] for r in recs])
        per, empty = spread["per"], spread.get("empty", "")
        vals = list(spread.get("values") or sorted({r[per] for r in recs}))
        heads = spread.get("headers") or [head(spread["header"], **{per: v}) for v in vals]
        out: dict = {}   # {the other columns' cells: {value: cell}}
        for r in recs:
            key = tuple(fstring(c[1], r, **values) for c in cols if isinstance(c, list))
            out.setdefault(key, {})[r[per]] = fstring(spread["cell"], r, **values)
        table = []
        for key, got in out.items():
            fixed = iter(key)
            table.append([x for c in cols
                          for x in ([got.get(v, empty) for v in vals] if c is spread else [next(fixed)])])
        return markdown_table([x for c in cols for x in (heads if c is spread else [head(c[0])])], table)

    def publish(self, blocks: Mapping[str, str]) -> list:
        """Write the generated blocks into every page of :attr:`pages`; returns the names of those that changed."""
        if len(self.pages) == 1:
            return publish_blocks(ROOT / self.pages[0], dict(blocks))
        return sorted({n for p in self.pages for n in publish_blocks(ROOT / p, dict(blocks))})


    def publisher(self, page_blocks: Callable[..., Mapping[str, str]]) -> Callable[..., list]:
        """The study's ``publish(results_dir=None)``: rewrite its pages' generated blocks from a kept run.

        Args:
            page_blocks: the study's ``page_blocks(results_dir=None) -> {block: Markdown}``.

        Returns:
            ``publish(results_dir=None) -> [names of the blocks that changed]``.
        """
        def publish(results_dir=None) -> list:
            return self.publish(page_blocks(results_dir))

        publish.__doc__ = (f"Rewrite the generated blocks of the ``{self.name}`` results page from a kept run "
                           f"(default ``results/{self.name}``); returns the names of those that changed.")
        publish.__module__ = f"jaxdp.studies.{self.module}"
        return publish


def grid_points(grids: Mapping, cfg: Mapping, template: dict, name: str = "exp", select=None, **names: Any) -> list:
    """The points of a grid declared as data: per experiment, products one after the other, each filtered.

    An entry may set several keys at once and a product may carry a condition, so a grid whose axes depend on each
    other (an instance defined only for some κ) is data too.

    Args:
        grids: ``{experiment: [product, ...]}``. A product is a list of entries ``[keys, values]``, outermost first:
            ``keys`` one point key or several joined by commas; ``values`` ``"$key"`` (the configuration's list,
            comma-separated string or scalar) or a literal list (of values, or of lists of values for several keys;
            a ``"$key"`` inside is the configuration's scalar). An entry ``["where", condition]`` keeps the points
            where the Python condition holds on the configuration's values (as lists), ``names`` and the point's
            values (which win).
        cfg: the resolved configuration.
        template: every point's keys in order with their defaults; each value is cast to its default's type.
        name: the point key holding the experiment's name.
        select: the experiments to include (default all).
        **names: further names the conditions see.

    Returns:
        ``[point]``: the experiments in the order of ``grids``, each product outermost first.
    """
    def listed(v):
        if isinstance(v, str):
            return [x.strip() for x in v.split(",") if x.strip()]
        return list(v) if isinstance(v, (list, tuple)) else [v]

    def cast(k, v):
        v = cfg[v[1:]] if isinstance(v, str) and v.startswith("$") else v
        return int(float(v)) if type(template[k]) is int else type(template[k])(v)

    env, out = {**{k: listed(v) for k, v in cfg.items()}, **names}, []
    for exp, products in grids.items():
        for product in products if select is None or exp in select else ():
            where = [v for k, v in product if k == "where"]
            axes = [(k.split(","), [x if isinstance(x, list) else [x] for x in
                                    (listed(cfg[v[1:]]) if isinstance(v, str) else v)])
                    for k, v in product if k != "where"]
            for combo in itertools.product(*[vals for _, vals in axes]):
                pt = dict(template, **{name: exp})
                pt.update({k: cast(k, x) for (keys, _), vals in zip(axes, combo) for k, x in zip(keys, vals)})
                if all(eval(w, {"__builtins__": {}}, {**env, **pt}) for w in where):
                    out.append(pt)
    return out


def fstring(template: str, row, **values: Any) -> str:
    """A page's f-string (a TOML cell, as in :meth:`StudySpec.table`) evaluated on one row.

    Args:
        template: the f-string's text; it sees the row's columns, ``values`` and the page's formats ``num``,
            ``ci``, ``pow2`` (:meth:`StudySpec.table`).
        row: a mapping (a dict or a ``pandas.Series``) of column names to values.
        **values: further names the template sees.

    Returns:
        The filled text.
    """
    r = dict(row)
    return eval("f" + repr(template), {**_CELLS, **values, **r, "row": r, "ci": functools.partial(fmt_ci_of, r)})


def kept_manifest(results_dir) -> dict:
    """A kept run's ``manifest.json`` (its ``config``, ``seeds``, ``n_points``, ...), or ``{}`` where it has none.

    Args:
        results_dir: the run's directory.

    Returns:
        The parsed manifest.
    """
    import json

    path = pathlib.Path(results_dir) / "manifest.json"
    return json.loads(path.read_text()) if path.exists() else {}


def same_evidence(curves, corr: float, rel: float) -> dict:
    """The curves that are one piece of evidence twice: the same key, and at every point means within ``rel`` of
    each other and per-seed values that correlate at least ``corr``.

    Args:
        curves: ``[(j, key, table)]`` in row order: a curve's row label, what must match for two curves to be
            compared (claim and grid), and its per-seed table (:func:`seed_matrix`).
        corr: the smallest per-seed correlation, at every point, of two curves that are one piece of evidence.
        rel: the largest relative difference of their means at any point.

    Returns:
        ``{j: (i, c)}``: curve ``j`` repeats the earlier curve ``i``, with ``c`` the smallest correlation.
    """
    seen: dict = {}
    out: dict = {}
    for j, key, b in curves:
        for i, a in seen.get(key, []):
            u, w = a.to_numpy(float), b.reindex(a.index).to_numpy(float)
            ok = np.isfinite(u) & np.isfinite(w)
            mu = [(u[ok[:, k], k].mean(), w[ok[:, k], k].mean()) for k in range(u.shape[1])]
            if all(abs(p - q) <= rel * abs(p) for p, q in mu):
                c = min(float(np.corrcoef(u[ok[:, k], k], w[ok[:, k], k])[0, 1]) for k in range(u.shape[1]))
                if c >= corr:
                    out[j] = (i, c)
                    break
        else:
            seen.setdefault(key, []).append((j, b))
    return out


def curve_slopes(fits, points, x, columns: Mapping[str, str], keys: Sequence[str]):
    """Beside each fit, the log-log slopes of deterministic columns (a bound, a planned σ) over the fit's points.

    Args:
        fits: the fits (:func:`~jaxdp.studies.analysis.fit_slopes` rows with ``x_min``, ``x_max`` and ``keys``).
        points: the per-point table holding ``keys``, the abscissa and the ``columns``.
        x: the abscissa's column, or ``x(fit row) -> column`` when it differs between fits.
        columns: ``{new column: column of points}``.
        keys: the columns that select a fit's curve among ``points``.

    Returns:
        A copy of ``fits`` with one column per entry of ``columns``: the least-squares slope of the log column on the
        log abscissa over the curve's points with ``x_min <= x <= x_max`` (:func:`~jaxdp.studies.claims.fit_points`,
        :func:`~jaxdp.studies.analysis.loglog_slope`).
    """
    out: dict = {c: [] for c in columns}
    for r in fits.to_dict("records"):
        xc = x(r) if callable(x) else x
        g = fit_points(points, r, keys, xc)
        for c, col in columns.items():
            out[c].append(loglog_slope(g[xc], g[col]))
    return fits.assign(**out)


def twin_curves(df, by: Sequence[str], hue: str, order: Sequence, x, y: str, corr: float,
                rel: float = math.inf) -> set:
    """Within each group of ``by``, the curves of ``hue`` that are one piece of evidence (:func:`same_evidence`).

    Args:
        df: the per-seed rows (``seed``, ``by``, ``hue``, the abscissa, ``y``).
        by: the columns of a group (a sweep): only curves of one group are compared.
        hue: the column naming a curve.
        order: the values of ``hue`` in the order compared (a later curve repeats an earlier one).
        x: the abscissa's column, or ``x(group key tuple) -> column``.
        y: the measured column.
        corr, rel: :func:`same_evidence`'s smallest per-seed correlation and largest relative difference of means.

    Returns:
        ``{(*group key, a, b)}``: curve ``b`` of the group repeats the earlier curve ``a``.
    """
    out = set()
    for key, g in df.groupby(list(by)):
        key = key if isinstance(key, tuple) else (key,)
        xc = x(key) if callable(x) else x
        curves = [(h, 0, seed_matrix(g[g[hue] == h], xc, y)[1]) for h in order if h in set(g[hue])]
        out |= {(*key, a, b) for b, (a, _) in same_evidence(curves, corr, rel).items()}
    return out


def judge_curves(points, by: Sequence[str], hue: str, order: Sequence, claim: Callable, experiment: Callable,
                 cell: Callable, twins=(), group_order: Optional[Callable] = None, **judge: Any):
    """One verdict row per curve (a value of ``hue`` within a group of ``by``) by
    :func:`~jaxdp.studies.claims.judge_curve` on all its points (a ``"bound"`` claim needs no fit); curves that are
    one piece of evidence (:func:`twin_curves`) share the first one's row, judged on all their points.

    Args:
        points: the per-point table (the columns a bound is judged on: ``bound``, ``<stem>_mean``, ...).
        by: the columns of a group (a sweep).
        hue: the column naming a curve.
        order: the values of ``hue`` in row order.
        claim, experiment: ``f(group key tuple)``: the group's claim and the rows' experiment.
        cell: ``cell(group key tuple, [curves])``: the row's cell, given the curves it stands for.
        twins: ``{(*group key, a, b)}``: curve ``b`` repeats curve ``a`` of the group.
        group_order: a sort key of the group key tuples (default their order).
        **judge: further keywords of :func:`~jaxdp.studies.claims.judge_curve`.

    Returns:
        The verdict rows (a ``pandas.DataFrame``), groups in order, curves in ``order`` within each.
    """
    import pandas as pd

    from ..claims import judge_curve

    rows, twins = [], set(twins)
    groups = [((k if isinstance(k, tuple) else (k,)), g) for k, g in points.groupby(list(by))]
    for key, g in sorted(groups, key=lambda kv: group_order(kv[0]) if group_order else kv[0]):
        merged = {t[-1] for t in twins if tuple(t[:-2]) == key}
        for h in [h for h in order if h in set(g[hue]) and h not in merged]:
            same = [h] + [b for b in order if (*key, h, b) in twins]
            rows.append(judge_curve(claim(key), None, g[g[hue].isin(same)], experiment=experiment(key),
                                    cell=cell(key, same), **judge))
    return pd.DataFrame(rows)


class _Claims(dict):
    """``{key: Claim}`` that also finds a space-separated key by the tuple of its words."""

    def __getitem__(self, key):
        return super().__getitem__(" ".join(key) if isinstance(key, tuple) else key)

    def __contains__(self, key):
        return super().__contains__(" ".join(key) if isinstance(key, tuple) else key)

    def get(self, key, default=None):
        return self[key] if key in self else default


_CELLS = {"__builtins__": {}, "num": fmt_num, "pow2": _pow2, "int": int, "float": float, "abs": abs, "len": len,
          "str": str, "min": min, "max": max, "format": format, "isfinite": math.isfinite}


def _scalar(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    return int(v) if isinstance(v, (int, np.integer)) else float(v) if isinstance(v, np.floating) else v


def _templates(text: str) -> dict:
    parts = _BLOCK.split(text)
    return {parts[i]: parts[i + 1].strip("\n") for i in range(1, len(parts), 2)}


def kept_runs(kept: Mapping[str, Any], results_dir=None) -> list:
    """The kept runs a study's page blocks are made from: ``results_dir`` alone (one of them), default every one.

    Args:
        kept: ``{run name: what the page makes of it (a block's name)}``, each run kept under ``results/<name>``.
        results_dir: one run's directory, or ``None`` for every run of ``kept``.

    Returns:
        ``[(directory, run name, kept[run name])]``, in the order of ``kept`` by default.

    Raises:
        ValueError: ``results_dir`` is not the directory of a run of ``kept``.
    """
    dirs = [pathlib.Path(results_dir)] if results_dir is not None else [ROOT / "results" / n for n in kept]
    bad = [str(d) for d in dirs if d.resolve().name not in kept]
    if bad:
        raise ValueError(f"results_dir must be the directory of a kept run ({', '.join(kept)}), got {bad[0]!r}")
    return [(d, d.resolve().name, kept[d.resolve().name]) for d in dirs]


def curve_notes(notes: Sequence[Mapping[str, Any]], render: Callable[..., str], default: Optional[str] = None,
                name: str = "exp", refit: Optional[Callable] = None, **names: Any) -> tuple[Callable, Callable]:
    """The ``hook`` and ``miss`` of :func:`~jaxdp.studies.claims.judge_fits` from data (``[[notes]]`` of a
    study's TOML): which points of a curve its slope is fitted over, and what explains a missed slope.

    Each note names its experiment (column ``name`` of the fit row), ``x`` and ``y`` (the curve's abscissa and
    measured columns) and optionally ``values`` (``{name: expression}``, evaluated in order). A note with ``keep``
    (a condition on one point, ``at`` its abscissa and ``mean`` its mean) fits the slope only over the points kept
    (``kept``, their abscissae): with fewer than ``min_keep`` the curve is not tested, the reason the template
    ``untested`` and the link ``link``; with fewer than all it is refitted, the template ``note`` after its cell.
    Any other note explains a miss where its condition ``when`` holds, ``mean`` the mean at the curve's largest
    ``x``: the reason the template ``reason``, the link ``link``. The expressions see the fit row's columns,
    ``means`` (the mean of ``y`` per ``x``, sorted), ``mean``, the earlier values, ``names`` and the page's formats
    (:func:`fstring`); ``show`` (``{name: expression}``) adds what a kept note's templates show, seeing ``kept``.

    Args:
        notes: the notes, in the order they are tried.
        render: ``render(template name, **values) -> str`` (:meth:`StudySpec.render`).
        default: the link of a miss no note explains (``None``: the claim's link,
            :func:`~jaxdp.studies.claims.verdict_row`).
        name: the fit row's column naming the experiment.
        refit: ``refit(x, y, rows) -> fit row`` over the kept points (needed by a note with ``keep``).
        **names: further names the expressions see (library floors, constants).

    Returns:
        ``(hook, miss)``: ``hook(fit row, curve rows) -> (fit, Verdict or None, cell note, link)`` and
        ``miss(fit row, curve rows) -> (reason, link)``, each by the first note of the row's experiment that
        applies (else ``(fit row, None, "", "")`` and ``("", default)``).

    Raises:
        ValueError: a note with ``keep`` and no ``refit``.
    """
    from ..claims import Verdict

    if refit is None and any("keep" in n for n in notes):
        raise ValueError("refit must be given when a note keeps points (refit(x, y, rows) -> fit row), got None")
    env = {**_CELLS, **names}

    def scope(note, fit, rows) -> dict:
        means = rows.groupby(note["x"])[note["y"]].mean()
        out = {**dict(fit), "means": means, "mean": float(means.iloc[-1])}
        for k, expr in note.get("values", {}).items():
            out[k] = eval(expr, env, out)
        return out

    def hook(fit, rows) -> tuple:
        for note in (n for n in notes if n[name] == fit[name] and "keep" in n):
            at = scope(note, fit, rows)
            at["kept"] = [x for x, m in at["means"].items() if eval(note["keep"], env, {**at, "at": x, "mean": m})]
            for k, expr in note.get("show", {}).items():
                at[k] = eval(expr, env, at)
            if len(at["kept"]) < int(note["min_keep"]):
                return fit, Verdict("not tested", render(note["untested"], **at)), "", note["link"]
            if len(at["kept"]) < len(at["means"]):
                refitted = refit(note["x"], note["y"], rows[rows[note["x"]].isin(at["kept"])])   # type: ignore[misc]
                return refitted, None, render(note["note"], **at), ""
        return fit, None, "", ""

    def miss(fit, rows) -> tuple:
        for note in (n for n in notes if n[name] == fit[name] and "keep" not in n):
            at = scope(note, fit, rows)
            if eval(note["when"], env, at):
                return render(note["reason"], **at), note["link"]
        return "", default

    return hook, miss


def derived_tables(tables: Mapping[str, Mapping[str, Any]], frames: Mapping[str, Any]) -> dict:
    """A study's small derived tables as data (``[tables.<name>]`` of its TOML): rows of one of its frames, grouped
    means, kept columns and computed ones, so a table an ``analyze`` writes beside its fits needs no code.

    Each table reads ``from`` (the name of a frame of ``frames``) and optionally ``needs`` (columns the frame must
    hold, else the table is not made), ``rows`` (a :meth:`pandas.DataFrame.query` selecting rows; no table when
    none is left), ``by`` with ``mean`` (the mean of column ``mean`` per group of the ``by`` columns, sorted, as
    columns), ``columns`` (the columns kept, in order) and ``assign`` (``{column: expression}`` evaluated by
    :meth:`pandas.DataFrame.eval`, in order; a column name that is no identifier in backticks).

    Args:
        tables: ``{name: declaration}``, in the order the tables are made.
        frames: ``{name: pandas.DataFrame}`` the declarations read (``"results"``, ``"summary"``, ...).

    Returns:
        ``{name: pandas.DataFrame}`` of the tables made, in the order of ``tables``.
    """
    out = {}
    for name, t in tables.items():
        d = frames[t["from"]]
        if not set(t.get("needs", ())) <= set(d.columns):
            continue
        d = d.query(t["rows"]) if "rows" in t else d
        if not len(d):
            continue
        d = d.groupby(list(t["by"]))[t["mean"]].mean().reset_index() if "by" in t else d
        d = d[list(t["columns"])].copy() if "columns" in t else d
        for c, expr in t.get("assign", {}).items():
            d = d.assign(**{c: d.eval(expr)})
        out[name] = d
    return out


def boot_claims(df, decls: Sequence[Mapping[str, Any]], claims: Mapping[str, Any], rng) -> list:
    """The verdict rows of exponents measured by a bootstrap over seeds, declared as data (``[[boot_claims]]`` of a
    study's TOML): claims about a curve that its own fitted slope does not state, each judged by
    :func:`~jaxdp.studies.claims.judge` on its 95% percentile interval over the span of its abscissae (in decades,
    as a rate needs), the row linked to the claim's explanation.

    Each declaration names its ``claim`` (a key of ``claims``), the row's ``experiment``, ``rows`` (a
    :meth:`pandas.DataFrame.query` selecting per-seed rows), ``x`` and ``y`` (the abscissa and the measured column),
    ``n_boot``, ``cell`` (an f-string of the group's ``by`` values, :func:`fstring`) and one measurement, its
    bootstrap replicates resampling seed indices jointly across the curve's points (:func:`seed_matrix`):

    * ``num`` and ``den`` (queries among the rows): the ratio of the two curves' log-log slopes of the seed means,
      both curves resampled with the same seed indices (a pure-DP exponent over an approximate-DP one); no row
      unless both curves have rows;
    * ``quantile`` (a level in (0, 1)) and optionally ``by`` (columns): per group, sorted, the log-log slope of the
      curve's quantile over its mean (bounded in ``x`` when the tail is a constant times the mean).

    Args:
        df: the per-seed rows (``seed`` and the columns the declarations name).
        decls: the declarations, in row order.
        claims: ``{key: Claim}`` (:attr:`StudySpec.claims`).
        rng: the ``numpy.random.Generator`` every bootstrap draws from, in row order.

    Returns:
        The verdict rows (:func:`~jaxdp.studies.claims.verdict_row`), declarations in order, groups sorted.
    """
    def quantile_slopes(Y, lx, q: float):   # the slope of log(q-quantile / mean) per (..., seeds, points) stack
        return _slopes_rows(lx, np.nanquantile(Y, q, axis=-2) / np.nanmean(Y, axis=-2))

    rows = []
    for b in decls:
        d, n_boot, xy = df.query(b["rows"]), int(b["n_boot"]), (b["x"], b["y"])
        if "num" in b:
            num, den = d.query(b["num"]), d.query(b["den"])
            if not (len(num) and len(den)):
                continue
            xs, tab = seed_matrix(num, *xy)
            Y, other, lx = tab.to_numpy(float), seed_matrix(den, *xy)[1].reindex(tab.index).to_numpy(float), np.log(xs)
            est = joint_slope_boot(Y, xs, 0, rng=rng)[0] / joint_slope_boot(other, xs, 0, rng=rng)[0]
            idx = rng.integers(0, len(Y), size=(n_boot, len(Y)))
            boots = _slopes_rows(lx, np.nanmean(Y[idx], axis=1)) / _slopes_rows(lx, np.nanmean(other[idx], axis=1))
            measured: list = [({}, len(tab), xs, est, boots)]
        else:
            by, q, measured = list(b.get("by", ())), float(b["quantile"]), []
            for key, g in (d.groupby(by, sort=True) if by else [((), d)]):
                xs, tab = seed_matrix(g, *xy)
                Y, lx = tab.to_numpy(float), np.log(np.asarray(xs, float))
                boots = quantile_slopes(Y[rng.integers(0, len(Y), size=(n_boot, len(Y)))], lx, q)
                measured.append((dict(zip(by, key if isinstance(key, tuple) else (key,))), len(tab), xs,
                                 quantile_slopes(Y, lx, q)[0], boots))
        for at, n, xs, est, boots in measured:
            c, (lo, hi) = claims[b["claim"]], (float(v) for v in np.nanquantile(boots, [0.025, 0.975]))
            m = Measurement(float(est), lo, hi, n, decades=math.log10(max(xs) / min(xs)))
            rows.append(verdict_row(c, m, judge(c, m), experiment=b["experiment"], cell=fstring(b["cell"], at),
                                    link=c.link))
    return rows
