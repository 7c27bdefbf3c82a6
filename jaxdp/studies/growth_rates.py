"""Study ``growth-rates``: GROWTH adaptivity to κ (docs/algorithms/growth.md#studies; Growth conditions for private optimization).

Experiments (each a set of grid points; ``cfg["experiments"]`` selects them):

* G1 — ``epoch_growth_sco`` (rate mode) with one ``κ_low`` for every instance, excess vs n in the statistical
  regime (ε large): slopes vs ``-κ/(2(κ-1))`` (Theorem 2), ordered by κ.
* G2 — tightness on n-dependent hard instances (``inst_kappa_linear`` with ``τ_n = 1/√n``,
  ``inst_kappa_1d_twopoint`` with ``τ_n ∝ 1/√n``): excess vs ``τ_n θ_n``-scale ``n^{-κ/(2(κ-1))}``.
* G3 — pure vs approximate DP vs d at fixed n (privacy regime, small ε): pure ``∝ d^{κ/(κ-1)}``,
  approximate ``∝ d^{κ/(2(κ-1))}``.
* Geps — ε sweep at fixed n (privacy regime): excess ``∝ ε^{-κ/(κ-1)}``.
* G4 — the ρ-smooth gradient inverse-sensitivity mechanism (Theorem 1), ERM excess vs n, sampled
  exactly (:mod:`jaxdp.sco.inverse_sensitivity`): the continuous density (``sampler="exact"``)
  with Theorem 1's ρ and with the κ-agnostic ``ρ = 1/n²``, and the law of the ``M``-cell grid
  mechanism (``sampler="grid"``, ``M`` and ``M_fine`` cells, Theorem 1's ρ). Claimed slope
  ``-κ/(κ-1)``; for the agnostic ρ, ``-min(κ/(κ-1), 2)`` (its ``Lρ = L/n²`` term is the larger one
  when κ < 2). The grid's excess cannot fall below its resolution floor ``≈ λ h²/3`` (``h = 2R/M``).
* G5 — high probability: 99% quantile vs mean (from the G1 points; an analysis, no extra runs).
* G6 — price of not knowing κ: vary ``κ_low`` (more epochs), same instance.
* G7 — baseline ``localization_sco`` alone (worst-case rate) on the G1 instances.
"""
from __future__ import annotations

import pathlib

import numpy as np

from ..core.simulate import seed_keys
from ..registry import register_study
from .analysis import _record_slope_ci
from .framework import Study, plot_curves, summarize, write_generated

# The grid and runs (_growth_rates_grid) and the analysis (_growth_rates_verdicts) live in their own modules; every
# name this module held before that split, its imports included, stays importable from here.
import functools  # noqa: F401
import math  # noqa: F401
import warnings  # noqa: F401
from typing import TYPE_CHECKING, Any  # noqa: F401

from ..sco import (  # noqa: F401
    EpochParams, LocalizationParams, epoch_estimator, inst_kappa_1d_twopoint, inst_kappa_atom,
    inst_kappa_linear, inst_kappa_regression, localization_estimator, plan_epoch_growth_sco,
    plan_grad_inverse_sensitivity, plan_localization_sco, run_sco,
)
from ..sco.inverse_sensitivity import exact_grad_inv_estimator  # noqa: F401
from .framework import (  # noqa: F401
    Param, declare_params, fit_slopes, joint_slope_boot, slope_verdict, verdict_table,
)
from ._growth_rates_grid import (  # noqa: F401
    EXPERIMENTS, DEFAULTS, QUICK, SEED_BATCH, SEEDS_PER_CHUNK, _POS, _KAPPA, PARAMS, _ALGO_KEYS, _floats, _ints,
    make_instance, theory_exponent, _point, build_points, check_point, _CPU_COMPILER_OPTIONS, _compiled, _run,
    run_point, _xcol,
)
from ._growth_rates_verdicts import (  # noqa: F401
    N_BOOT, GEPS_FLOOR_SHARE, HW_TARGET, WHY, CLAIMS, _with_defaults, _cell, _grid_floor, _geps_floor, g4_quadrature,
    g4_quadrature_table, _seed_mat, _cv, verdicts, analyze, verdict_markdown,
)


ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC_PAGES = ("docs/results/growth-rates.md", "docs/algorithms/growth.md")
BLOCK = "growth-rates verdicts"


def publish(out_dir=None, pages=DOC_PAGES, manifest_update: bool = True) -> list:
    """Write the verdict table of a finished results directory into the docs' generated blocks.

    Reads ``verdicts.csv`` and ``manifest.json`` of ``out_dir`` (default ``results/growth-rates``); with
    ``manifest_update`` also records ``seeds_per_point`` and the widest half-width in ``manifest.json``
    (``ci`` key).

    Args:
        out_dir: the results directory (default ``results/growth-rates``).
        pages: the docs pages, relative to the repository, holding the generated block.
        manifest_update: record the interval summary in the directory's ``manifest.json``.

    Returns:
        The pages that changed.
    """
    import json

    import pandas as pd

    out = pathlib.Path(out_dir) if out_dir is not None else ROOT / "results" / "growth-rates"
    v = pd.read_csv(out / "verdicts.csv")
    manifest = json.loads((out / "manifest.json").read_text())
    if manifest_update:
        _record_slope_ci(out, manifest, v, ("holds", "misses"), N_BOOT)
    body = verdict_markdown(v, manifest)
    return [p for p in pages if write_generated(ROOT / p, BLOCK, body)]


PARTIAL_BLOCK = "growth-rates verdicts, finished experiments of the rerun"
PARTIAL_CSV = "verdicts_rerun.csv"


def publish_partial(run_dir, out_dir=None, pages=DOC_PAGES[:1]) -> list:
    """Verdicts of the experiments an *unfinished* run has finished (every point at every seed).

    Reads the verified chunks of ``run_dir`` (:func:`jaxdp.studies.framework.load_results`), analyses the
    complete experiments as :func:`analyze` does, writes ``PARTIAL_CSV`` into ``out_dir`` (default
    ``results/growth-rates``) and the generated block ``PARTIAL_BLOCK`` of ``pages``. Until the full run
    replaces the kept results, this is how its finished experiments reach the docs.

    Args:
        run_dir: the directory of the unfinished run.
        out_dir: where ``PARTIAL_CSV`` is written (default ``results/growth-rates``).
        pages: the docs pages, relative to the repository, holding the block.

    Returns:
        The pages that changed (none when no experiment is finished).
    """
    import json

    from .framework import load_results

    run = pathlib.Path(run_dir)
    out = pathlib.Path(out_dir) if out_dir is not None else ROOT / "results" / "growth-rates"
    manifest = json.loads((run / "manifest.json").read_text())
    cfg = {**DEFAULTS, **manifest["config"]}
    study = build(cfg)
    df = load_results(run, study)
    S = int(cfg["seeds"])
    counts = df.groupby("point")["seed"].nunique() if len(df) else None
    done = [e for e in EXPERIMENTS if e != "G5" and any(p["exp"] == e for p in study.points) and all(
        counts is not None and counts.get(i, 0) == S for i, p in enumerate(study.points) if p["exp"] == e)]
    v = analyze(df[df["exp"].isin(done)])["verdicts"] if done else None
    if v is None or not len(v):
        return []
    v.to_csv(out / PARTIAL_CSV, index=False)
    n_pts = sum(1 for p in study.points if p["exp"] in done)
    return [p for p in pages if write_generated(ROOT / p, PARTIAL_BLOCK, partial_markdown(v, S, n_pts, done))]


def partial_markdown(v, seeds: int, n_points: int, done) -> str:
    """The generated block of :func:`publish_partial`.

    Args:
        v: the verdict rows of the finished experiments.
        seeds: seeds per point of the run.
        n_points: grid points of the finished experiments.
        done: the finished experiments' names.

    Returns:
        The block's Markdown.
    """
    src = (f"`results/growth-rates/{PARTIAL_CSV}` by `jaxdp.studies.growth_rates.publish_partial`, from the "
           f"finished experiments ({', '.join(done)}) of the rerun at the default size while the rest of it runs")
    return verdict_markdown(v, {"seeds": seeds, "n_points": n_points}, source=src)


def plot(df, outdir: pathlib.Path):
    """One plot per experiment (``growth_{exp}.png``: mean excess against its ``x`` with 95% CIs and
    up to four theory slopes); in the kept results directory it also refreshes the docs' verdicts.

    Args:
        df: the per-seed results.
        outdir: the directory the plots are written to.

    Returns:
        The paths of the plots.
    """
    outdir = pathlib.Path(outdir)
    df = _with_defaults(df)
    paths = []
    metrics = [m for m in ("excess", "erm_excess") if m in df]
    summ = summarize(df, by=["exp", "algo", "inst", "kappa", "d", "n_samples", "eps", "delta", "kappa_low", "rho_rule",
                             "sampler", "M"], metrics=metrics, n_boot=200)
    for exp, g in summ.groupby("exp", sort=False):
        x = _xcol(exp)
        y = "erm_excess" if exp == "G4" else "excess"
        g = g.copy()
        g["curve"] = (g["inst"] + " k=" + g["kappa"].astype(str) + " klow=" + g["kappa_low"].astype(str)
                      + " d=" + g["delta"].astype(str) + " " + g["rho_rule"].astype(str)
                      + np.where(g["sampler"] == "grid", " grid M=" + g["M"].astype(str),
                                 np.where(g["sampler"] == "exact", " exact", "")))
        theory: dict = {}
        for curve, h in g.groupby("curve"):
            h = h.sort_values(x)
            e = theory_exponent(dict(exp=exp, kappa=h["kappa"].iloc[0], delta=h["delta"].iloc[0],
                                     rho_rule=h["rho_rule"].iloc[0]))
            x0, y0 = float(h[x].iloc[0]), float(h[f"{y}_mean"].iloc[0])
            if y0 > 0 and len(theory) < 4:
                theory[f"slope {e:.2f} ({curve[:18]})"] = (lambda xs, x0=x0, y0=y0, e=e: y0 * (np.asarray(xs) / x0) ** e)
        paths.append(plot_curves(g, x=x, y=f"{y}", path=outdir / f"growth_{exp}.png", hue="curve", theory=theory,
                                 title=f"growth-rates {exp}"))
    # the kept run: the docs' verdict tables are regenerated from the tables just written
    if outdir.resolve() == (ROOT / "results" / "growth-rates").resolve() and (outdir / "verdicts.csv").exists():
        publish(outdir, manifest_update=False)
    return paths


@register_study("growth-rates", defaults=DEFAULTS, quick=QUICK,
                description="GROWTH: private SCO adapting to kappa-growth (G1-G7: rates vs n, d, eps; inverse sensitivity)")
def build(cfg: dict) -> Study:
    """The ``growth-rates`` study: the points of :func:`build_points`, run by :func:`run_point` in
    seed batches of ``SEED_BATCH``, analysed by :func:`analyze` and plotted by :func:`plot`.

    Args:
        cfg: the resolved configuration (:data:`DEFAULTS`, ``--quick`` changes :data:`QUICK`, overrides).

    Returns:
        The :class:`jaxdp.studies.Study`.
    """
    points = build_points(cfg)

    def run(pts, seeds):
        # a chunk's seeds in batches of SEED_BATCH: the same draws (one key per seed index), less memory
        seeds = np.asarray(seeds)
        out = []
        for p in pts:
            parts = [run_point(p, seed_keys(int(cfg["seed"]), seeds[i:i + SEED_BATCH]), cfg)
                     for i in range(0, len(seeds), SEED_BATCH)]
            out.append({k: np.concatenate([q[k] for q in parts]) for k in parts[0]})
        return out

    return Study(name="growth-rates", points=points, seeds=int(cfg["seeds"]), run=run, seeds_per_chunk=SEEDS_PER_CHUNK,
                 check_point=lambda p: check_point(p, cfg),
                 group_by=("exp", "algo", "inst", "kappa"), analyze=analyze, plot=plot, config=cfg,
                 description="GROWTH adaptivity to kappa (docs/algorithms/growth.md#studies)")
