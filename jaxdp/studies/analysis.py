"""Statistics over seeds (bootstrap means, log-log slope fits), the command line's plain tables and the docs'
verdict tables and generated blocks.

**Which bootstrap.** A study that evaluates every grid point with the same seed
keys (``seed_keys(seed, i)`` for seed index ``i`` at every point) draws the
same randomness at every ``x`` of a curve, so the per-point means along the
curve are correlated (common random numbers). Resampling each point's seeds
independently then treats correlated means as independent, and its interval
for the slope of ``log mean(y)`` on ``log x`` has the wrong width (too wide
for a positive correlation, which cancels in a difference of logs). The
bootstrap that matches the design resamples seed *indices*: one draw
``i_1..i_S`` with replacement, and every point of the curve uses the rows of
those seed indices (``resample="joint"``). With independent keys per point the
two bootstraps agree. Percentile intervals, 95% (Efron and Tibshirani, *An
Introduction to the Bootstrap*, 1993, ch. 13).
"""
from __future__ import annotations

import math
import pathlib
from typing import Any, Callable, Optional, Sequence

import numpy as np

__all__ = ["bootstrap_mean_ci", "summarize", "fit_slopes", "joint_slope_boot", "format_table",
           "verdict_table", "write_generated", "read_generated", "VERDICTS", "ratio_to_base", "fmt_num",
           "markdown_table", "fmt_ci_of", "publish_blocks", "stale_blocks", "width_note", "HW_TARGET", "upper_half",
           "equal_expected_regret", "seeds_to_resolve", "loglog_slope", "fit_spans", "seed_matrix"]


def bootstrap_mean_ci(values: np.ndarray, n_boot: int = 1000, level: float = 0.95, seed: int = 0):
    """Mean and percentile-bootstrap CI of the mean of ``values`` (NaNs dropped).

    Args:
        values: the samples, one per seed (any shape; flattened); NaN and inf entries are dropped.
        n_boot: bootstrap replicates (each resamples the finite values with replacement).
        level: the interval's coverage, e.g. 0.95 for the 2.5% and 97.5% percentiles.
        seed: seed of the resampling generator (the interval is reproducible).

    Returns:
        ``(mean, lo, hi)`` as floats: ``(v, v, v)`` for a single finite value, NaNs for none.
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan, math.nan
    if v.size == 1:
        return float(v[0]), float(v[0]), float(v[0])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, v.size, size=(n_boot, v.size))
    means = v[idx].mean(axis=1)
    a = (1 - level) / 2
    return float(v.mean()), float(np.quantile(means, a)), float(np.quantile(means, 1 - a))


def summarize(df, by: Sequence[str], metrics: Sequence[str], n_boot: int = 1000, quantiles: Sequence[float] = (),
              constants: Sequence[str] = ()):
    """Per-group means with 95% bootstrap intervals (:func:`bootstrap_mean_ci`) and quantiles, and the value of
    columns that are constant within a group.

    Args:
        df: the per-seed results (one row per seed and point).
        by: the grouping columns (groups are sorted; NaN keys kept).
        metrics: the columns summarized.
        n_boot: bootstrap replicates per interval.
        quantiles: levels ``q`` in ``[0, 1]`` of the NaN-aware empirical quantiles to add (for
            high-probability claims).
        constants: columns copied, each group's first value (a plan's η, a theory term: the same at every seed
            of a point).

    Returns:
        A ``pandas.DataFrame``, one row per group: the ``by`` columns, ``n_seeds`` (rows in the group)
        and, per metric, ``{metric}_mean``, ``{metric}_lo``, ``{metric}_hi`` and ``{metric}_q{q:g}``
        for each requested quantile, then one column per entry of ``constants``.
    """
    import pandas as pd

    rows = []
    for key, g in df.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row["n_seeds"] = len(g)
        for m in metrics:
            mean, lo, hi = bootstrap_mean_ci(g[m].to_numpy(), n_boot)
            row[f"{m}_mean"], row[f"{m}_lo"], row[f"{m}_hi"] = mean, lo, hi
            for q in quantiles:
                row[f"{m}_q{q:g}"] = float(np.nanquantile(g[m].to_numpy(dtype=float), q))
        rows.append(row)
    if not constants:
        return pd.DataFrame(rows)
    first = df.groupby(list(by), sort=True).first().reset_index()
    return pd.DataFrame(rows).assign(**{c: first[c].to_numpy() for c in constants})


def upper_half(xs: Any) -> Any:
    """The part of a sorted grid that ``fit_slopes(..., upper_half=True)`` fits.

    Args:
        xs: the sorted grid.

    Returns:
        Its upper half (from the middle value on) when it has at least 4 values, else the whole grid.
    """
    return xs[(len(xs) - 1) // 2:] if len(xs) >= 4 else xs


_half = upper_half  # fit_slopes' argument ``upper_half`` shadows the function


def equal_expected_regret(df, a: str, b: str, by: Sequence[str], tol: float) -> set:
    """The groups where learners ``a`` and ``b`` have the same expected regret at every seed and ``T``.

    Args:
        df: the per-seed results (``learner``, ``T``, ``seed``, ``expected_regret`` and the ``by`` columns).
        a, b: the two learners; the difference is taken relative to ``b``'s expected regret (at least 1).
        by: the columns that name a group.
        tol: the largest relative difference that counts as the same.

    Returns:
        The set of ``by`` tuples whose largest relative difference is below ``tol``.
    """
    k = [*by, "T", "seed"]
    x = df[df["learner"] == a].set_index(k)["expected_regret"]
    y = df[df["learner"] == b].set_index(k)["expected_regret"]
    both = x.index.intersection(y.index)
    rel = ((x[both] - y[both]).abs() / np.maximum(1.0, y[both].abs())).groupby(level=list(range(len(by)))).max()
    return {key for key, v in rel.items() if v < tol}


def loglog_slope(x, y) -> float:
    """Least-squares slope of ``log y`` on ``log x`` over the points where both are positive and finite.

    Args:
        x, y: the abscissae and values (array-likes of the same length).

    Returns:
        The slope, NaN with fewer than two such points.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = (x > 0) & (y > 0) & np.isfinite(y) & np.isfinite(x)
    if ok.sum() < 2:
        return math.nan
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


def seed_matrix(g, x: str, y: str):
    """A curve's per-seed values: its abscissae and the ``(seeds, points)`` table of ``y``.

    Args:
        g: the curve's rows (a data frame with columns ``seed``, ``x`` and ``y``).
        x, y: the abscissa and the measured column.

    Returns:
        ``(xs, table)``: the sorted distinct ``x`` and a data frame indexed by seed with one column per ``x``
        (the mean of ``y`` over rows of the same seed and ``x``; NaN where missing).
    """
    xs = np.sort(g[x].unique())
    return xs, g.pivot_table(index="seed", columns=x, values=y, aggfunc="mean", dropna=False).reindex(columns=list(xs))


def _slopes_rows(lx: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Least-squares slope of ``log means[b]`` on ``lx`` for every row ``b``; NaN where fewer than 2 points are
    positive and finite."""
    means = np.atleast_2d(means)
    ok = (means > 0) & np.isfinite(means)
    out = np.full(means.shape[0], math.nan)
    full = ok.all(axis=1)
    if full.any() and lx.size >= 2:
        ly = np.log(means[full])
        xc = lx - lx.mean()
        out[full] = (ly - ly.mean(axis=1, keepdims=True)) @ xc / (xc @ xc)
    for b in np.flatnonzero(~full):
        if ok[b].sum() >= 2:
            out[b] = loglog_slope(np.exp(lx), means[b])
    return out


def joint_slope_boot(Y: np.ndarray, xs, n_boot: int = 500, seed: int = 0, corr=None, rng=None):
    """Slope and bootstrap slopes of ``log mean(Y[:, j])`` on ``log xs[j]`` with seed indices resampled jointly.

    Several curves that share seed indices can be bootstrapped with one resampling by passing the same
    ``rng`` state (or by stacking their columns and fitting column subsets of the same resampled means,
    as :func:`fit_slopes` does per group).

    Args:
        Y: ``(seeds, points)`` array; rows are seed indices, columns the points ``xs``, NaN where a
            seed is missing.
        xs: the ``points`` positive abscissae (e.g. horizons ``T``).
        n_boot: bootstrap replicates; each draws ``seeds`` row indices with replacement, shared by
            every column.
        seed: seed of a new generator, used when ``rng`` is not given.
        corr: ``(points,)`` divisors of the means (a known log factor, for a log-corrected slope);
            default ones.
        rng: a ``numpy.random.Generator`` to draw from instead (to share one stream between curves).

    Returns:
        ``(slope, boots)``: the least-squares slope of ``log(mean(Y[:, j]) / corr[j])`` on
        ``log xs[j]`` (a float) and the ``(n_boot,)`` bootstrap slopes (NaN where fewer than two
        means are positive and finite).
    """
    Y = np.asarray(Y, float)
    lx = np.log(np.asarray(xs, float))
    corr = np.ones(Y.shape[1]) if corr is None else np.asarray(corr, float)
    rng = np.random.default_rng(seed) if rng is None else rng
    with np.errstate(invalid="ignore"):
        s = float(_slopes_rows(lx, np.nanmean(Y, axis=0) / corr)[0])
        idx = rng.integers(0, Y.shape[0], size=(n_boot, Y.shape[0]))
        means = np.nanmean(Y[idx], axis=1) / corr          # (n_boot, points)
    return s, _slopes_rows(lx, means)


def ratio_to_base(df, by: Sequence[str], hue: str, base: str, y: str, n_boot: int = 2000, seed: int = 0,
                  level: float = 0.95, count_differ: bool = False):
    """``mean(y | hue) / mean(y | hue = base)`` per group of ``by``, with a paired bootstrap CI.

    The bootstrap resamples seed indices jointly for the two means (the runs of one seed index share
    their instance draws, so the ratio's interval is paired).

    Args:
        df: the per-seed results; needs a ``seed`` column (the seed index of each row).
        by: the grouping columns.
        hue: the column whose values are compared (e.g. the learner).
        base: the value of ``hue`` in the denominator; groups without it are skipped.
        y: the metric column.
        n_boot: bootstrap replicates.
        seed: seed of the resampling generator.
        level: the interval's coverage.
        count_differ: add the column ``ndiff``: the shared seed indices at which the two values of ``y`` differ
            (0: the two are the same runs, seed by seed).

    Returns:
        A ``pandas.DataFrame`` with the ``by`` columns, ``hue``, ``ratio``, ``ratio_lo``, ``ratio_hi`` and
        ``n_seeds`` (seed indices present for both values), one row per group and value ``!= base``
        with at least two shared seed indices.
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    a = (1.0 - level) / 2.0
    rows = []
    for key, g in df.groupby(list(by)):
        wide = g.pivot_table(index="seed", columns=hue, values=y, aggfunc="mean")
        if base not in wide.columns:
            continue
        for h in wide.columns:
            pair = wide[[base, h]].dropna().to_numpy(float) if h != base else wide[[base]].dropna().to_numpy(float)
            if h == base or len(pair) < 2:
                continue
            idx = rng.integers(0, len(pair), size=(n_boot, len(pair)))
            with np.errstate(divide="ignore", invalid="ignore"):
                boots = pair[idx, 1].mean(axis=1) / pair[idx, 0].mean(axis=1)
                r = pair[:, 1].mean() / pair[:, 0].mean()
            lo, hi = np.nanquantile(boots, [a, 1.0 - a])
            rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,))), hue: h, "ratio": r,
                         "ratio_lo": lo, "ratio_hi": hi, "n_seeds": len(pair),
                         **({"ndiff": int((pair[:, 0] != pair[:, 1]).sum())} if count_differ else {})})
    return pd.DataFrame(rows)


def fit_slopes(df, x: str, y: str, by: Sequence[str] = (), upper_half: bool = True, n_boot: int = 500,
               seed: int = 0, log_correction: Optional[Callable[[np.ndarray], np.ndarray]] = None,
               resample: str = "independent"):
    """Least-squares slope of ``log mean(y)`` vs ``log x`` per group, with a 95% bootstrap CI over seeds.

    ``upper_half`` fits on the upper half of the ``x`` grid (the asymptotic
    range, docs/guide/studies.md#output). ``log_correction(x)`` divides the means by known log
    factors first (the "log-corrected slope"). ``resample``: ``"independent"`` resamples each ``x``'s
    seeds on its own; ``"joint"`` resamples seed indices once per bootstrap replicate and uses them at
    every ``x`` of the group (the right bootstrap when the points share seed keys, module docstring;
    needs a ``seed`` column, and adds the columns ``n_seeds``, the fewest seeds at any ``x``, and
    ``resample``).

    Args:
        df: the per-seed results.
        x: the abscissa column (positive, e.g. ``T``).
        y: the metric column; only positive, finite means enter a fit.
        by: the grouping columns (one slope per group); empty: one slope over ``df``.
        upper_half: fit on the upper half of the group's ``x`` grid when it has at least 4 values.
        n_boot: bootstrap replicates for the 95% percentile interval.
        seed: seed of the resampling generator.
        log_correction: ``x -> divisor`` applied to the means before the fit (a known log factor).
        resample: ``"independent"`` or ``"joint"`` (above).

    Returns:
        A ``pandas.DataFrame``, one row per group: the ``by`` columns, ``slope``, ``slope_lo``,
        ``slope_hi``, ``n_x`` (points fitted), ``x_min``, ``x_max`` (and ``n_seeds``, ``resample`` for
        ``"joint"``).

    Raises:
        ValueError: ``resample`` is neither value, or ``"joint"`` without a ``seed`` column.
    """
    import pandas as pd

    if resample not in ("independent", "joint"):
        raise ValueError(f"resample must be 'independent' or 'joint', got {resample!r}")
    if resample == "joint" and "seed" not in df:
        raise ValueError("resample='joint' needs a 'seed' column (the seed index of each row)")
    rng = np.random.default_rng(seed)
    rows = []
    groups = df.groupby(list(by), sort=True, dropna=False) if by else [((), df)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        xs = np.sort(g[x].unique())
        if upper_half:
            xs = _half(xs)
        corr = log_correction(np.asarray(xs, float)) if log_correction else np.ones(len(xs))
        row = dict(zip(by, key))
        if resample == "joint":
            Y = seed_matrix(g[g[x].isin(xs)], x, y)[1].to_numpy(dtype=float)
            s, boots = joint_slope_boot(Y, xs, n_boot, corr=corr, rng=rng)
            extra = dict(n_seeds=int(np.isfinite(Y).sum(axis=0).min()) if Y.size else 0, resample="joint")
        else:
            per_x = [g.loc[g[x] == xv, y].to_numpy(dtype=float) for xv in xs]
            means = np.array([np.nanmean(v) if v.size else np.nan for v in per_x]) / corr
            s = loglog_slope(xs, means)
            boots = []
            for _ in range(n_boot):
                bm = np.array([np.nanmean(v[rng.integers(0, v.size, v.size)]) if v.size else np.nan
                               for v in per_x]) / corr
                boots.append(loglog_slope(xs, bm))
            extra = {}
        boots = np.asarray(boots)
        boots = boots[np.isfinite(boots)]
        row.update(slope=s, slope_lo=float(np.quantile(boots, 0.025)) if boots.size else math.nan,
                   slope_hi=float(np.quantile(boots, 0.975)) if boots.size else math.nan,
                   n_x=len(xs), x_min=float(xs[0]) if len(xs) else math.nan,
                   x_max=float(xs[-1]) if len(xs) else math.nan, **extra)
        rows.append(row)
    return pd.DataFrame(rows)


def format_table(df, max_rows: int = 40, floatfmt: str = "{:.4g}") -> str:
    """A plain-text table of a data frame (no extra dependency), columns right-aligned.

    Args:
        df: the table (``None`` or empty prints ``(empty)``).
        max_rows: rows shown; a final line counts the rows left out.
        floatfmt: format of float cells (``str.format`` syntax); other cells use ``str``.

    Returns:
        The table as text: a header line, a dashed rule and one line per row.
    """
    if df is None or len(df) == 0:
        return "(empty)"
    cols = list(df.columns)
    rows = [[floatfmt.format(v) if isinstance(v, (float, np.floating)) else str(v) for v in r]
            for r in df.head(max_rows).itertuples(index=False)]
    widths = [max(len(str(c)), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    line = "  ".join(str(c).rjust(w) for c, w in zip(cols, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in rows]
    if len(df) > max_rows:
        out.append(f"... ({len(df) - max_rows} more rows)")
    return "\n".join(out)


# --------------------------------------------------------------------------- verdict tables of the docs

VERDICTS = ("holds", "holds by construction", "consistent, unresolved", "misses", "not tested")
#: a headline slope's 95% half-width should be at most this; a wider tested cell says why (:func:`width_note`)
HW_TARGET = 0.05


def fit_spans(fits, by: str = "fit") -> str:
    """The span of each fit's variable, in decades, as the verdict blocks list them (``"1.20 (a), 1.81 (b)"``).

    Args:
        fits: the fits (:func:`fit_slopes` rows with ``x_min`` and ``x_max``), labelled by the column ``by``.
        by: the column naming each fit.

    Returns:
        ``log10(max x_max / min x_min)`` of each fit, two decimals, followed by the fit's name, sorted by name.
    """
    span = {f: math.log10(g["x_max"].max() / g["x_min"].min()) for f, g in fits.groupby(by)}
    return ", ".join(f"{span[f]:.2f} ({f})" for f in sorted(span))


def seeds_to_resolve(halfwidth: float, n_seeds: int, tolerance: float) -> int:
    """About how many seeds per point would bring a 95% half-width down to ``tolerance`` (``S·(w/tol)²``,
    rounded up to a multiple of 10).

    Args:
        halfwidth: the measured half-width.
        n_seeds: the seeds per point behind it.
        tolerance: the half-width aimed at.

    Returns:
        The number of seeds per point.
    """
    return int(math.ceil(n_seeds * (halfwidth / tolerance) ** 2 / 10.0) * 10)


def width_note(halfwidth: float, n_seeds: int, target: float = HW_TARGET) -> str:
    """Why a tested cell's interval is wider than ``target``: the seeds it had and about how many would do.

    A bootstrap interval's width shrinks as ``1/√S`` in the number of seeds ``S``, so ``S·(w/target)²`` seeds
    would bring a half-width ``w`` down to ``target``. Empty when the interval is narrow enough.

    Args:
        halfwidth: the cell's 95% half-width.
        n_seeds: the seeds per point behind it.
        target: the half-width aimed at.

    Returns:
        ``""`` or a note such as ``"half-width 0.085 > 0.05 at 256 seeds per point (about 740 would reach
        0.05)"``.
    """
    if not (np.isfinite(halfwidth) and halfwidth > target) or n_seeds <= 0:
        return ""
    need = seeds_to_resolve(halfwidth, n_seeds, target)
    return (f"half-width {halfwidth:.3f} > {target:g} at {int(n_seeds)} seeds per point (about {need} would reach "
            f"{target:g})")


def _fmt(v, digits=3):
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "—"
    return f"{v:.{digits}f}".replace("-", "−")


def verdict_table(verdicts, *, digits: int = 3, width: Optional[int] = None) -> str:
    """Markdown table of a study's verdicts, one row per (experiment, cell).

    ``verdicts`` columns: ``experiment``, ``cell`` (the parameters), ``claim`` (what is claimed, text),
    ``claimed`` (the exponent), ``kind`` (``equals`` / ``at_most`` / ``at_least`` / ``between``, the latter with
    a column ``claimed_hi``), ``slope``, ``slope_lo``,
    ``slope_hi``, ``n_seeds``, ``verdict`` (one of :data:`VERDICTS`), ``reason`` (text; required for
    every verdict but ``holds``) and ``link`` (an anchor or page for the reason; required for a miss).
    The half-width column is ``(slope_hi - slope_lo)/2``; a tested cell wider than :data:`HW_TARGET` whose reason
    does not already speak of its half-width gets :func:`width_note` (the seeds it had, and about how many would
    reach the target).

    Args:
        verdicts: the verdict rows, a ``pandas.DataFrame`` with the columns above.
        digits: decimals of the exponents and slopes shown.
        width: fit the table's lines in this many characters: each claim becomes a key (``C1``, …) and each
            reason and link a note (``n1``, …), both spelled out in lists below the table, wrapped to ``width``;
            the ``±`` column is left out (the interval shows it), an interval narrower than ``digits`` reads
            ``[±0.000]``, and a seed count shared by every row is said once below the table.

    Returns:
        The Markdown table (header and one line per verdict), with ``width`` followed by the claims and notes.

    Raises:
        ValueError: a verdict not in :data:`VERDICTS`, a non-``holds`` verdict without a reason, or a
            miss without a link.
    """
    lines = ["| experiment | cell | claim | claimed | measured [95% CI] | ± | seeds | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    rel = {"equals": "", "at_most": "≤ ", "at_least": "≥ "}
    claims: dict = {}
    notes: dict = {}
    for r in verdicts.itertuples(index=False):
        hw = (r.slope_hi - r.slope_lo) / 2 if np.isfinite(r.slope_hi) and np.isfinite(r.slope_lo) else math.nan
        meas = (f"{_fmt(r.slope, digits)} [{_fmt(r.slope_lo, digits)}, {_fmt(r.slope_hi, digits)}]"
                if np.isfinite(r.slope) else "—")
        if width is not None and np.isfinite(r.slope) and _fmt(r.slope_lo, digits) == _fmt(r.slope_hi, digits):
            meas = f"{_fmt(r.slope, digits)} [±{_fmt(0.0, digits)}]"   # an interval narrower than the digits
        v = str(r.verdict)
        if v not in VERDICTS:
            raise ValueError(f"verdict {v!r} of {r.experiment} {r.cell}: not one of {VERDICTS}")
        reason = "" if (not isinstance(r.reason, str)) else r.reason
        link = "" if (not isinstance(r.link, str)) else r.link
        if v == "misses" and not link:
            raise ValueError(f"{r.experiment} {r.cell}: a miss needs a link to its explanation")
        if v != "holds" and not reason:
            raise ValueError(f"{r.experiment} {r.cell}: verdict {v!r} needs a reason")
        cellv = {"holds": "holds", "misses": "**misses**"}.get(v, v)
        if v != "not tested" and "half-width" not in reason:
            note = width_note(hw, int(r.n_seeds))
            reason = f"{reason}; {note}" if (reason and note) else (reason or note)
        why = (f": {reason}" if reason else "") + (f" ([why]({link}))" if link else "")
        if width is not None and why:
            cellv += f" ({notes.setdefault(why.removeprefix(': '), f'n{len(notes) + 1}')})"
        else:
            cellv += why
        if r.kind == "between":
            claimed = f"{_fmt(r.claimed, digits)} … {_fmt(getattr(r, 'claimed_hi', math.nan), digits)}"
        else:
            claimed = f"{rel.get(r.kind, '')}{_fmt(r.claimed, digits)}"
        claim = claims.setdefault(r.claim, f"C{len(claims) + 1}") if width is not None else r.claim
        pm, seeds = (f" {_fmt(hw, digits)} |", f" {int(r.n_seeds)} |") if width is None else ("", "")
        if width is not None and verdicts["n_seeds"].nunique() > 1:
            seeds = f" {int(r.n_seeds)} |"
        lines.append(f"| {r.experiment} | {r.cell} | {claim} | {claimed} | {meas} |{pm}{seeds} {cellv} |")
    if width is None:
        return "\n".join(lines)
    import textwrap

    lines[:2] = [lines[0].replace(" ± |", ""), lines[1][4:]]
    if verdicts["n_seeds"].nunique() == 1:   # one seed count for every row: said once, below the table
        lines[:2] = [lines[0].replace(" seeds |", ""), lines[1][4:]]
        lines += ["", f"Seeds per point: {int(verdicts['n_seeds'].iloc[0])} in every row."]
    for title, keyed in (("Claims", claims), ("Notes", notes)):
        if keyed:
            lines += ["", f"{title}:", ""] + [textwrap.fill(f"- {k}: {text}", width, subsequent_indent="  ",
                                                            break_long_words=False, break_on_hyphens=False)
                                              for text, k in keyed.items()]
    return "\n".join(lines)


def _block(path, name: str) -> tuple:
    """``(text, start, end)``: the page's text and the span between the block's markers."""
    text = pathlib.Path(path).read_text(encoding="utf-8")
    a, b = f"<!-- BEGIN GENERATED: {name} -->", f"<!-- END GENERATED: {name} -->"
    i, j = text.find(a), text.find(b)
    if i < 0 or j < i:
        raise ValueError(f"{path}: no generated block {name!r} (markers {a!r} ... {b!r})")
    return text, i + len(a), j


def read_generated(path, name: str) -> str:
    """The text of a generated block of a docs page.

    Args:
        path: the Markdown page.
        name: the block's name, as in ``<!-- BEGIN GENERATED: name -->`` ... ``<!-- END GENERATED: name -->``.

    Returns:
        The text between the two markers, without leading and trailing newlines.

    Raises:
        ValueError: the page has no such pair of markers.
    """
    text, i, j = _block(path, name)
    return text[i:j].strip("\n")


def write_generated(path, name: str, body: str) -> bool:
    """Replace the text between the markers ``<!-- BEGIN GENERATED: name -->`` and ``<!-- END GENERATED: name -->``
    of a page (the markers must exist: a page is never extended silently).

    Args:
        path: the Markdown page (rewritten only when the text changes).
        name: the block's name in its markers.
        body: the new text of the block (surrounding newlines normalized to one).

    Returns:
        Whether the page changed.

    Raises:
        ValueError: the page has no such pair of markers.
    """
    text, i, j = _block(path, name)
    new = text[:i] + "\n" + body.strip("\n") + "\n" + text[j:]
    if new != text:
        pathlib.Path(path).write_text(new, encoding="utf-8")
    return new != text


# --------------------------------------------------------------------------- small helpers of the generated pages


def fmt_num(v, digits: int = 3) -> str:
    """A number as the docs print it: ``digits`` decimals, a typographic minus, ``—`` for NaN or ``None``.

    Args:
        v: the number (``None``, NaN and inf print ``—``).
        digits: decimals shown.

    Returns:
        The text of the number.
    """
    return _fmt(None if v is None else float(v), digits)


def fmt_ci_of(row, stem: str, digits: int = 3) -> str:
    """A row's estimate ``stem`` (or ``stem_mean``) with its interval ``stem_lo``, ``stem_hi`` as the docs print it:
    ``mean [lo, hi]`` (:func:`fmt_num` for each number).

    Args:
        row: a mapping (a dict, or a ``pandas.Series``) holding the three values; when the interval has no width
            (``|hi - lo| <= 1e-9 max(1, |mean|)``: no spread over seeds) only the estimate is shown.
        stem: the name of the estimate.
        digits: decimals shown.

    Returns:
        The text, ``—`` when the estimate is not finite.
    """
    mean, lo, hi = row.get(stem, row.get(f"{stem}_mean")), row[f"{stem}_lo"], row[f"{stem}_hi"]
    if mean is None or not np.isfinite(float(mean)):
        return "—"
    m = fmt_num(mean, digits)
    if np.isfinite(float(lo)) and np.isfinite(float(hi)) and abs(float(hi) - float(lo)) <= 1e-9 * max(1.0, abs(float(mean))):
        return m
    return f"{m} [{fmt_num(lo, digits)}, {fmt_num(hi, digits)}]"


def _pow2(T) -> str:
    """``T`` as the generated pages print a horizon: ``2^k`` when it is a power of two, else its digits."""
    T = int(T)
    k = T.bit_length() - 1
    return f"2^{k}" if T == 1 << k else str(T)


def markdown_table(header: Sequence[str], rows) -> str:
    """A Markdown table: the header line, the rule and one line per row (cells converted with ``str``).

    Args:
        header: the column names.
        rows: the rows, each a sequence of as many cells as ``header``.

    Returns:
        The table's Markdown.

    Raises:
        ValueError: a row with the wrong number of cells.
    """
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        r = [str(c) for c in r]
        if len(r) != len(header):
            raise ValueError(f"row {r} has {len(r)} cells for {len(header)} columns")
        lines.append("| " + " | ".join(r) + " |")
    return "\n".join(lines)


def publish_blocks(path, blocks: dict) -> list:
    """Write several generated blocks of one page (:func:`write_generated` for each).

    Args:
        path: the Markdown page.
        blocks: ``{block name: body}``.

    Returns:
        The names of the blocks whose text changed.
    """
    return [name for name, body in blocks.items() if write_generated(path, name, body)]


def stale_blocks(path, blocks: dict) -> list:
    """The blocks of a page that differ from what they should be (for tests: ``[]`` when the page is current).

    Args:
        path: the Markdown page.
        blocks: ``{block name: expected body}``.

    Returns:
        The names of the blocks that are missing or differ.
    """
    out = []
    for name, body in blocks.items():
        try:
            if read_generated(path, name) != body.strip("\n"):
                out.append(name)
        except ValueError:
            out.append(name)
    return out


# --------------------------------------------------------------------------- a knob's default against an oracle


def _ratio_to_best(means: np.ndarray, i: int) -> float:
    """``means[i] / min(means)``; 0/0 (the default is the best and its mean is 0) counts as ratio 1."""
    return 1.0 if means[i] == means.min() else (means[i] / means.min() if means.min() > 0 else np.inf)


def oracle_ratios(df, by: Sequence[str], knob: str, y: str, default: float = 1.0, n_boot: int = 1000,
                  seed: int = 0, name: str = "default"):
    """A tuning knob's default value against the oracle value of its grid: per group of ``by``, the knob value with
    the least mean ``y`` and ``mean y(default) / min_knob mean y``, with a 95% bootstrap interval over seed indices
    resampled jointly across the knob's values (the runs of one seed index share their draws).

    Args:
        df: the per-seed rows (columns ``seed``, ``knob``, ``y`` and ``by``).
        by: the grouping columns.
        knob: the column of the knob's value.
        y: the measured column (smaller is better).
        default: the knob's default value; groups whose grid lacks it are skipped.
        n_boot: bootstrap replicates.
        seed: seed of the one generator the groups draw from, in order.
        name: the default's name in the column of its mean, ``<y>_<name>``.

    Returns:
        A ``pandas.DataFrame``, one row per group: the ``by`` columns, ``n_seeds`` (seeds with every knob value),
        ``<y>_<name>``, ``<knob>_oracle``, ``<y>_oracle``, ``ratio``, ``ratio_lo``, ``ratio_hi`` (inverted-CDF
        percentiles; a 0/0 ratio counts as 1) and ``<knob>_grid`` (the values, comma-separated).
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    for key, g in df.groupby(list(by), sort=True):
        tab = g.pivot_table(index="seed", columns=knob, values=y, aggfunc="mean").dropna()
        ks = tab.columns.to_numpy(float)
        if not np.any(np.isclose(ks, default)) or tab.empty:
            continue
        i, vals = int(np.argmin(np.abs(ks - default))), tab.to_numpy(float)
        means = vals.mean(axis=0)
        boots = np.array([_ratio_to_best(vals[rng.integers(0, len(vals), len(vals))].mean(axis=0), i)
                          for _ in range(n_boot)])
        rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,))), "n_seeds": len(vals),
                     f"{y}_{name}": means[i], f"{knob}_oracle": ks[int(np.argmin(means))], f"{y}_oracle": means.min(),
                     "ratio": _ratio_to_best(means, i),
                     "ratio_lo": float(np.quantile(boots, 0.025, method="inverted_cdf")),
                     "ratio_hi": float(np.quantile(boots, 0.975, method="inverted_cdf")),
                     f"{knob}_grid": ",".join(f"{k:g}" for k in ks)})
    return pd.DataFrame(rows)


def oracle_ratio_slope(g, x: str, knob: str, y: str, default: float = 1.0, n_boot: int = 1000, rng=None) -> tuple:
    """Whether a knob's default falls behind the oracle as ``x`` grows: the least-squares slope in ``log x`` of
    ``log(mean y(default) / min_knob mean y)``, with a 95% percentile bootstrap over seed indices resampled jointly
    across every ``(x, knob)`` point.

    Args:
        g: one curve's per-seed rows (columns ``seed``, ``x``, ``knob`` and ``y``); seeds missing a point are dropped.
        x: the fitted variable (e.g. the sample size).
        knob: the column of the knob's value.
        y: the measured column.
        default: the knob's default value (the grid's nearest is used).
        n_boot: bootstrap replicates.
        rng: a ``numpy.random.Generator`` (to share one stream between curves); default a new one seeded 0.

    Returns:
        ``(slope, lo, hi, n_seeds, xs)``: the slope, its interval (``nanquantile``), the seeds and the sorted
        values of ``x``.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    tab = g.pivot_table(index="seed", columns=[x, knob], values=y, aggfunc="mean").dropna()
    xs, ks = sorted(g[x].unique()), np.asarray(sorted(g[knob].unique()), float)
    i, lx = int(np.argmin(np.abs(ks - default))), np.log(np.asarray(xs, float))
    vals = tab.to_numpy(float).reshape(len(tab), len(xs), len(ks))

    def slope(v):                  # v: (..., seed, x, knob) -> one slope per row (:func:`_slopes_rows`)
        mm = v.mean(axis=-3)
        return _slopes_rows(lx, mm[..., i] / mm.min(axis=-1))

    lo, hi = np.nanquantile(slope(vals[rng.integers(0, len(vals), size=(n_boot, len(vals)))]), [0.025, 0.975])
    return float(slope(vals)[0]), float(lo), float(hi), len(vals), xs


__all__ += ["oracle_ratios", "oracle_ratio_slope"]
