"""Statistics over seeds: NaN-aware means, bootstrap intervals and log-log slope fits.

Owns :func:`bootstrap_mean_ci` (percentile bootstrap of the mean, NaNs
dropped), :func:`summarize` (per-group means with 95% intervals and
quantiles), :func:`fit_slopes` (least-squares ``log mean(y)`` vs ``log x``
slopes over the upper half of the grid, with bootstrap intervals) and
:func:`format_table` (the plain-text tables the command line prints). Depends
on no other module of ``jaxdp.studies``.
"""
from __future__ import annotations

import math
from typing import Callable, Optional, Sequence

import numpy as np

__all__ = ["bootstrap_mean_ci", "summarize", "fit_slopes", "format_table"]


def bootstrap_mean_ci(values: np.ndarray, n_boot: int = 1000, level: float = 0.95, seed: int = 0):
    """Mean and percentile-bootstrap CI of the mean of ``values`` (NaNs dropped)."""
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


def summarize(df, by: Sequence[str], metrics: Sequence[str], n_boot: int = 1000, quantiles: Sequence[float] = ()):
    """One row per group: ``{metric}_mean``, ``{metric}_lo``, ``{metric}_hi`` (95% bootstrap CI), ``n_seeds``,
    and ``{metric}_q{q}`` for each requested quantile (high-probability claims)."""
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
    return pd.DataFrame(rows)


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    ok = (x > 0) & (y > 0) & np.isfinite(y)
    if ok.sum() < 2:
        return math.nan
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


def fit_slopes(df, x: str, y: str, by: Sequence[str] = (), upper_half: bool = True, n_boot: int = 500,
               seed: int = 0, log_correction: Optional[Callable[[np.ndarray], np.ndarray]] = None):
    """Least-squares slope of ``log mean(y)`` vs ``log x`` per group, with a 95% bootstrap CI over seeds.

    ``upper_half`` fits on the upper half of the ``x`` grid (the asymptotic
    range, docs/guide/studies.md#output). ``log_correction(x)`` divides the means by known log
    factors first (the "log-corrected slope"). Returns columns ``slope``,
    ``slope_lo``, ``slope_hi``, ``n_x``, ``x_min``, ``x_max``.
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    groups = df.groupby(list(by), sort=True, dropna=False) if by else [((), df)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        xs = np.sort(g[x].unique())
        if upper_half and len(xs) >= 4:
            xs = xs[(len(xs) - 1) // 2:]
        per_x = [g.loc[g[x] == xv, y].to_numpy(dtype=float) for xv in xs]
        corr = log_correction(np.asarray(xs, float)) if log_correction else np.ones(len(xs))
        means = np.array([np.nanmean(v) if v.size else np.nan for v in per_x]) / corr
        s = _slope(np.asarray(xs, float), means)
        boots = []
        for _ in range(n_boot):
            bm = np.array([np.nanmean(v[rng.integers(0, v.size, v.size)]) if v.size else np.nan for v in per_x]) / corr
            boots.append(_slope(np.asarray(xs, float), bm))
        boots = np.asarray(boots)
        boots = boots[np.isfinite(boots)]
        row = dict(zip(by, key))
        row.update(slope=s, slope_lo=float(np.quantile(boots, 0.025)) if boots.size else math.nan,
                   slope_hi=float(np.quantile(boots, 0.975)) if boots.size else math.nan,
                   n_x=len(xs), x_min=float(xs[0]) if len(xs) else math.nan,
                   x_max=float(xs[-1]) if len(xs) else math.nan)
        rows.append(row)
    return pd.DataFrame(rows)


def format_table(df, max_rows: int = 40, floatfmt: str = "{:.4g}") -> str:
    """A plain-text table (no extra dependency)."""
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
