"""Studies: a grid of points × seeds, run in resumable chunks, aggregated and plotted.

A ``Study`` lists its grid points (dicts of JSON scalars) and a ``run``
function that evaluates a group of points for a block of seed indices and
returns per-seed metrics. ``run_study``:

1. splits the grid into chunks (points that share ``group_by`` values, up to
   ``points_per_chunk`` of them, × blocks of ``seeds_per_chunk`` seeds);
2. skips every chunk whose file already exists in ``out_dir/chunks`` (resume);
3. runs the others, writing each finished chunk atomically (temporary file +
   ``os.replace``), so an interrupted study loses at most the chunk in flight
   and rerunning the same command completes it with every chunk exactly once;
4. concatenates the tidy table (one row per grid point and seed) to
   ``results.csv``, writes the ``analyze`` tables and the ``plot`` PNGs, and a
   ``manifest.json`` (config, grid, versions, device, timings).

Aggregation helpers: ``summarize`` (means with 95% bootstrap intervals over
seeds) and ``fit_slopes`` (least-squares log-log slopes over the upper half of
the size grid with bootstrap CIs, spec §9 "General protocol"); ``plot_curves``
overlays theory curves on empirical ones.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import pathlib
import platform
import sys
import time
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

__all__ = [
    "Study", "run_study", "load_results", "summarize", "fit_slopes", "bootstrap_mean_ci", "plot_curves",
    "StudyResult", "resolve_config", "format_table", "plot_panels",
]

RunFn = Callable[[list, np.ndarray], list]


@dataclasses.dataclass
class Study:
    """A named grid × seeds experiment (see module docstring).

    ``run(points, seeds) -> [ {metric: array(len(seeds))} for each point ]``
    must be deterministic given the seed indices (use ``jaxdp.core.seed_keys``).
    ``analyze(df) -> {name: DataFrame}`` (the first table is printed);
    ``plot(df, outdir) -> [png paths]``.
    """

    name: str
    points: list
    seeds: int
    run: RunFn
    group_by: tuple = ()
    analyze: Optional[Callable[[Any], dict]] = None
    plot: Optional[Callable[[Any, pathlib.Path], list]] = None
    config: dict = dataclasses.field(default_factory=dict)
    seeds_per_chunk: Optional[int] = None
    points_per_chunk: int = 64
    description: str = ""

    def __post_init__(self):
        if not isinstance(self.seeds, (int, np.integer)) or isinstance(self.seeds, bool) or self.seeds < 1:
            raise ValueError(f"seeds must be a positive integer, got {self.seeds!r}")
        if not self.points:
            raise ValueError(f"study {self.name!r} has an empty grid")
        for p in self.points:
            for k, v in p.items():
                if k == "seed":
                    raise ValueError("grid points may not use the column name 'seed'")
                if not isinstance(v, (str, int, float, bool, np.integer, np.floating)) and v is not None:
                    raise TypeError(f"grid point values must be JSON scalars, got {k}={v!r}")


@dataclasses.dataclass
class StudyResult:
    df: Any
    tables: dict
    plots: list
    out_dir: pathlib.Path
    chunks_run: int
    chunks_skipped: int


# --------------------------------------------------------------------------- config


def _parse_value(text: str, like: Any) -> Any:
    """Parse a ``--set`` value with the type of the default it replaces."""
    if isinstance(like, bool):
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"expected true/false, got {text!r}")
    if isinstance(like, (list, tuple)):
        elem = like[0] if like else 0.0
        parts = [t for t in text.replace(";", ",").split(",") if t.strip()]
        return [_parse_value(t.strip(), elem) for t in parts]
    if isinstance(like, int):
        f = float(text)
        if f != int(f):
            raise ValueError(f"expected an integer, got {text!r}")
        return int(f)
    if isinstance(like, float):
        return float(text)
    return text


def resolve_config(name: str, defaults: Mapping, quick_overrides: Mapping, quick: bool,
                   overrides: Mapping[str, Any]) -> dict:
    """Defaults, then ``--quick`` overrides, then user overrides (strings parsed by the default's type).

    Unknown keys raise ``ValueError`` listing the allowed ones.
    """
    cfg = dict(defaults)
    if quick:
        cfg.update(quick_overrides)
    cfg["quick"] = bool(quick)
    for k, v in overrides.items():
        if k not in defaults:
            raise ValueError(f"unknown parameter {k!r} for study {name!r}; allowed: {', '.join(sorted(defaults))}")
        if isinstance(v, str):
            try:
                v = _parse_value(v, defaults[k])
            except ValueError as e:
                raise ValueError(f"bad value for {k}: {e}") from None
        cfg[k] = v
    return cfg


# --------------------------------------------------------------------------- running


def _chunks(study: Study) -> list[tuple[list[int], np.ndarray]]:
    groups: dict = {}
    for i, p in enumerate(study.points):
        key = tuple(p.get(g) for g in study.group_by)
        groups.setdefault(key, []).append(i)
    spc = study.seeds_per_chunk or study.seeds
    seed_blocks = [np.arange(s, min(s + spc, study.seeds)) for s in range(0, study.seeds, spc)]
    out = []
    for idx in groups.values():
        for j in range(0, len(idx), study.points_per_chunk):
            for sb in seed_blocks:
                out.append((idx[j:j + study.points_per_chunk], sb))
    return out


def _chunk_id(study: Study, point_idx: list[int], seeds: np.ndarray) -> str:
    spec = json.dumps({"points": [study.points[i] for i in point_idx], "seeds": [int(seeds[0]), int(seeds[-1])],
                       "config": _jsonable(study.config)}, sort_keys=True, default=str)
    return hashlib.sha1(spec.encode()).hexdigest()[:16]


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    return x


def _atomic_write(path: pathlib.Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _versions() -> dict:
    import jax

    import jaxdp

    try:
        devs = [str(d) for d in jax.devices()]
        kind = jax.devices()[0].device_kind
    except Exception:  # pragma: no cover
        devs, kind = [], "unknown"
    return {"jaxdp": jaxdp.__version__, "jax": jax.__version__, "numpy": np.__version__,
            "python": sys.version.split()[0], "platform": platform.platform(), "devices": devs,
            "device_kind": kind, "backend": jax.default_backend()}


class _Progress:
    def __init__(self, total: int, done: int, stream=sys.stderr, enabled: bool = True):
        self.total, self.done, self.start, self.ran = total, done, time.time(), 0
        self.stream, self.enabled = stream, enabled

    def update(self, n_rows: int):
        self.done += 1
        self.ran += 1
        if not self.enabled:
            return
        el = time.time() - self.start
        rate = self.ran / el if el > 0 else float("inf")
        eta = (self.total - self.done) / rate if rate > 0 else float("inf")
        width = 28
        fill = int(width * self.done / max(self.total, 1))
        self.stream.write(f"\r[{'#' * fill}{'.' * (width - fill)}] chunk {self.done}/{self.total}"
                          f"  {rate * 60:.1f} chunks/min  eta {eta:.0f}s   ")
        self.stream.flush()
        if self.done == self.total:
            self.stream.write("\n")


def run_study(study: Study, out_dir: os.PathLike | str, *, progress: bool = True, analyze: bool = True,
              plot: bool = True, max_chunks: Optional[int] = None) -> StudyResult:
    """Run (or resume) ``study`` into ``out_dir``; see the module docstring.

    ``max_chunks`` stops after that many new chunks (for tests of resumption).
    Finished chunks are never recomputed: their files are the record.
    """
    import pandas as pd

    out = pathlib.Path(out_dir)
    (out / "chunks").mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    cfg_json = _jsonable(study.config)
    if manifest_path.exists():
        old = json.loads(manifest_path.read_text())
        if old.get("study") != study.name or old.get("config") != cfg_json:
            raise ValueError(
                f"results directory {str(out)!r} holds a different study/config "
                f"({old.get('study')!r}); use another --out or delete it")
    manifest = {"study": study.name, "description": study.description, "config": cfg_json,
                "n_points": len(study.points), "seeds": int(study.seeds), "versions": _versions(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
    _atomic_write(manifest_path, json.dumps(manifest, indent=2, default=str))

    chunks = _chunks(study)
    todo, skipped = [], 0
    for pi, seeds in chunks:
        cid = _chunk_id(study, pi, seeds)
        if (out / "chunks" / f"{cid}.csv").exists():
            skipped += 1
        else:
            todo.append((cid, pi, seeds))
    bar = _Progress(len(chunks), skipped, enabled=progress)
    ran = 0
    t_run = time.time()
    for cid, pi, seeds in todo:
        if max_chunks is not None and ran >= max_chunks:
            break
        pts = [study.points[i] for i in pi]
        results = study.run(pts, np.asarray(seeds))
        if len(results) != len(pts):
            raise RuntimeError(f"study {study.name!r}: run returned {len(results)} results for {len(pts)} points")
        rows = []
        for i, (p, r) in zip(pi, zip(pts, results)):
            block = {"point": np.full(len(seeds), i), "seed": np.asarray(seeds)}
            for k, v in p.items():
                block[k] = [v] * len(seeds)
            for k, v in r.items():
                v = np.asarray(v)
                if v.shape != (len(seeds),):
                    raise RuntimeError(f"study {study.name!r}: metric {k!r} has shape {v.shape}, expected ({len(seeds)},)")
                block[k] = v
            rows.append(pd.DataFrame(block))
        _atomic_write(out / "chunks" / f"{cid}.csv", pd.concat(rows, ignore_index=True).to_csv(index=False))
        ran += 1
        bar.update(len(rows))
    elapsed = time.time() - t_run

    done = [c for c in chunks if (out / "chunks" / f"{_chunk_id(study, *c)}.csv").exists()]
    complete = len(done) == len(chunks)
    df = load_results(out, study) if done else pd.DataFrame()
    tables, plots = {}, []
    if complete:
        _atomic_write(out / "results.csv", df.to_csv(index=False))
        if analyze and study.analyze is not None:
            tables = study.analyze(df) or {}
            for name, t in tables.items():
                _atomic_write(out / f"{name}.csv", t.to_csv(index=False))
        if plot and study.plot is not None:
            try:
                import matplotlib

                matplotlib.use("Agg")
            except ImportError as e:  # pragma: no cover
                raise RuntimeError("plots need matplotlib: pip install 'jaxdp[studies]'") from e
            plots = [str(p) for p in (study.plot(df, out) or [])]
    manifest.update({"finished": time.strftime("%Y-%m-%dT%H:%M:%S") if complete else None,
                     "chunks_total": len(chunks), "chunks_done": len(done), "chunks_run_now": ran,
                     "run_seconds_now": round(elapsed, 3), "tables": list(tables), "plots": plots})
    _atomic_write(manifest_path, json.dumps(manifest, indent=2, default=str))
    return StudyResult(df=df, tables=tables, plots=plots, out_dir=out, chunks_run=ran, chunks_skipped=skipped)


def load_results(out_dir: os.PathLike | str, study: Optional[Study] = None):
    """The tidy table of every finished chunk in ``out_dir`` (sorted by point and seed)."""
    import pandas as pd

    out = pathlib.Path(out_dir)
    files = sorted((out / "chunks").glob("*.csv"))
    if study is not None:
        wanted = {f"{_chunk_id(study, *c)}.csv" for c in _chunks(study)}
        files = [f for f in files if f.name in wanted]
    if not files:
        return pd.DataFrame()
    df = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    return df.sort_values(["point", "seed"]).reset_index(drop=True)


# --------------------------------------------------------------------------- aggregation


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
    range, spec §9). ``log_correction(x)`` divides the means by known log
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


# --------------------------------------------------------------------------- plots


def plot_curves(summary, x: str, y: str, path: os.PathLike | str, hue: Optional[str] = None,
                theory: Optional[Mapping[str, Any]] = None, title: str = "", xlabel: Optional[str] = None,
                ylabel: Optional[str] = None, logx: bool = True, logy: bool = True, ax=None):
    """Empirical means (``{y}_mean`` with ``{y}_lo``/``{y}_hi`` error bands) per ``hue`` group,
    with theory curves overlaid as dashed lines. ``theory`` maps a label to a
    callable of the x values or to ``(xs, ys)``. Writes a PNG and returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=110)
    groups = summary.groupby(hue, sort=True) if hue else [(None, summary)]
    markers = iter("osD^v<>ph*" * 10)
    for key, g in groups:
        g = g.sort_values(x)
        label = f"{hue}={key}" if hue else y
        ax.plot(g[x], g[f"{y}_mean"], next(markers) + "-", ms=4, label=label)
        if f"{y}_lo" in g:
            ax.fill_between(g[x], g[f"{y}_lo"], g[f"{y}_hi"], alpha=0.2)
    xs_all = np.sort(summary[x].unique()).astype(float)
    for label, th in (theory or {}).items():
        if callable(th):
            xx = np.geomspace(xs_all.min(), xs_all.max(), 64) if logx and xs_all.min() > 0 else np.linspace(
                xs_all.min(), xs_all.max(), 64)
            ax.plot(xx, th(xx), "--", lw=1.2, label=f"theory: {label}")
        else:
            ax.plot(th[0], th[1], "--", lw=1.2, label=f"theory: {label}")
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
    ax.legend(fontsize=7)
    path = pathlib.Path(path)
    if own:
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)
    return path


def plot_panels(summary, panel: str, x: str, y: str, path: os.PathLike | str, *, hue: Optional[str] = None,
                theory: Optional[Callable[[Any, Any], Mapping[str, Any]]] = None,
                title: Optional[Callable[[Any], str]] = None, ylabel: Optional[str] = None, width: float = 4.3,
                **kw) -> pathlib.Path:
    """One row of :func:`plot_curves` panels, one per value of ``summary[panel]``, saved as one PNG.

    ``theory(value, sub)`` returns the theory curves of the panel whose rows are
    ``sub``; ``title(value)`` its title.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    values = sorted(summary[panel].unique())
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
