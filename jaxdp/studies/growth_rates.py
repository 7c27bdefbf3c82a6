"""``growth-rates``: GROWTH adaptivity to κ (docs/algorithms/growth.md#studies), experiments G1-G7.

Spec, experiments, claims, figures (each experiment's abscissa, measure, cells and claimed exponent) and tables:
``specs/growth-rates.toml``; page prose: ``specs/growth-rates.md``. Every fitted slope is judged by
:func:`jaxdp.studies.claims.judge`; Geps fits only the ε where the privacy term dominates and G4's misses name the
grid's resolution floor or float64 resolution (``[[notes]]``, by :func:`~jaxdp.studies.specs.curve_notes`), G3's
exponent ratio and G5's quantile ratios are bootstrapped from the per-seed results (``[[boot_claims]]``, by
:func:`~jaxdp.studies.specs.boot_claims`), and two curves that are one piece of evidence
(:func:`~jaxdp.studies.specs.same_evidence`) share a row.
"""
from __future__ import annotations

import dataclasses
import functools
import pathlib

import numpy as np

from ..sco import exact_law_reference, grid_floor, growth_point, run_growth_point
from ..sco.prox_path import epoch_prox_path_1d
from .claims import against_reference, judge_fits, tally
from .framework import Study, fit_slopes, summarize, verdict_table
from .plots import plot_figures
from .specs import (StudySpec, boot_claims, curve_notes, derived_tables, fstring, grid_points, kept_manifest,
                    same_evidence, seed_matrix)

S = StudySpec("growth-rates", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS, DOC_PAGES, BLOCK = S.doc_page, S.results, S.blocks, S.claims, S.pages, S.blocks[0]
EXPERIMENTS = S.params["experiments"].choices
SEED_BATCH, SEEDS_PER_CHUNK = 16, 128   # seeds per vmapped call, per chunk (memory; the results do not depend on it)
N_BOOT = 1000                           # bootstrap replicates of a slope
TWIN_CORR, TWIN_REL = 0.999, 0.01       # one piece of evidence: per-seed correlation and relative mean difference
FIG = {e: {**S.data["figure_defaults"], **f} for e, f in S.data["figures"].items()}   # each experiment's x, y, curve
KEYS = list(S.data["point"])   # a grid point's keys, in order ([point]: their defaults)


def theory_exponent(p: dict) -> float:
    """The claimed log-log slope of a point's experiment: its figure's ``guides`` (``specs/growth-rates.toml``)."""
    return float(eval(FIG[p["exp"]]["guides"], {"__builtins__": {"min": min}}, dict(p)))


def build_points(cfg: dict) -> list:
    """The grid points of the selected experiments (``[grids]`` of ``specs/growth-rates.toml``; G5 is computed from
    G1's points), one dict per point."""
    exps = str(cfg["experiments"]).replace(" ", "").split(",")
    return grid_points(S.data["grids"], cfg, S.data["point"], select=exps + ["G1"] * ("G5" in exps))


def _curve(df, exp, r):
    sel, x = df["exp"] == exp, FIG[exp]["x"]
    for c in ("inst", "kappa", "delta", "kappa_low", "rho_rule", "sampler", "M", "d" if x != "d" else None):
        sel &= (df[c] == r[c]) if c in r and c in df else True
    return df[sel]


def verdicts(df, slopes):
    """One verdict per (experiment, cell) of ``slopes`` against :data:`CLAIMS` (a curve that is the same evidence as
    an earlier one shares its row), with G3's exponent ratio and G5's quantile ratios; ordered by experiment."""
    import pandas as pd

    xy = {j: (FIG[r["exp"]]["x"], FIG[r["exp"]]["y"]) for j, r in slopes.iterrows()}   # a curve's abscissa, measure
    mats = {j: seed_matrix(_curve(df, r["exp"], r), *xy[j]) for j, r in slopes.iterrows()}
    twins = same_evidence([(j, (*xy[j], float(r["theory"]), tuple(mats[j][0])), mats[j][1])
                           for j, r in slopes.iterrows()], TWIN_CORR, TWIN_REL)

    hook, miss = curve_notes(S.data["notes"], S.render, refit=lambda x, y, g: fit_slopes(
        g, x=x, y=y, upper_half=False, n_boot=N_BOOT, resample="joint").iloc[0], epoch_prox_path_1d=epoch_prox_path_1d,
        grid_floor=grid_floor)
    rows = judge_fits(slopes, lambda r: dataclasses.replace(CLAIMS[r["exp"]], value=float(r["theory"]))
                      if r["exp"] in CLAIMS else None, lambda r: fstring(FIG[r["exp"]]["curve"], r),
                      lambda r: _curve(df, r["exp"], r), experiment="exp", twins=twins, no_claim=None,
                      same=lambda c: S.render("growth-rates reason twins", c=c), hook=hook, miss=miss)
    order = {e: i for i, e in enumerate(EXPERIMENTS)}
    rows += boot_claims(df, S.data["boot_claims"], CLAIMS, np.random.default_rng(1))   # G3's ratio, G5's quantiles
    return pd.DataFrame(rows).sort_values(
        "experiment", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)


def analyze(df):
    """``slopes`` (per curve, seed indices resampled jointly), ``summary`` (with 99% quantiles), ``verdicts``, and
    where present ``G5_high_probability``, ``solver``, ``sampler`` and ``G4_quadrature`` (the exact law's mean ERM
    excess against :func:`jaxdp.sco.exact_excess_quadrature`)."""
    import pandas as pd

    fits = []
    for exp, g in df.groupby("exp", sort=False):
        x = FIG[exp]["x"]
        s = fit_slopes(g, x=x, y=FIG[exp]["y"], upper_half=False, n_boot=N_BOOT,
                       by=[c for c in KEYS[1:5] + KEYS[6:] + ["n_samples", "d", "eps"] if c != x], resample="joint")
        s.insert(0, "exp", exp)
        s["theory"] = [theory_exponent(dict(r, exp=exp)) for _, r in s.iterrows()]
        fits.append(s)
    summ = summarize(df, by=KEYS, metrics=[m for m in ("excess", "erm_excess") if m in df], n_boot=200,
                     quantiles=(0.99,))
    t = {"slopes": pd.concat(fits, ignore_index=True), "summary": summ,
         **derived_tables(S.data["tables"], {"results": df, "summary": summ})}
    ex = summ[(summ["exp"] == "G4") & (summ["sampler"] == "exact") & (summ["inst"] == "regression")]
    if len(ex):
        t["G4_quadrature"] = against_reference(ex, lambda r: exact_law_reference(
            r["kappa"], int(r["n_samples"]), r["eps"], r["rho_rule"]), ["rho", "exact_mean"], "erm_excess",
            keys=["kappa", "rho_rule", "n_samples"])
    t["verdicts"] = verdicts(df, t["slopes"])
    return t


def page_blocks(results_dir=None) -> dict:
    """The verdict block of :data:`DOC_PAGES` from a kept run (default ``results/growth-rates``)."""
    import pandas as pd

    d = pathlib.Path(results_dir or RESULTS)
    v, mf = verdicts(pd.read_csv(d / "results.csv"), pd.read_csv(d / "slopes.csv")), kept_manifest(d)
    return {BLOCK: S.render(BLOCK, S=int(mf.get("seeds", v["n_seeds"].max())), n_points=int(mf.get("n_points", 0)),
                            rows=len(v), tally=tally(v), twin_corr=TWIN_CORR, twin_rel=TWIN_REL, n_boot=N_BOOT,
                            tol=CLAIMS["G1"].tolerance, tol_ratio=CLAIMS["G3 ratio"].tolerance, table=verdict_table(v))}


publish = S.publisher(page_blocks)


@S.register
def build(cfg: dict) -> Study:
    """The points of :func:`build_points`, run by :func:`jaxdp.sco.run_growth_point` in seed batches of
    ``SEED_BATCH``."""
    def run(pts, seeds):   # a chunk's seeds in batches: the same draws (one key per seed index), less memory
        return [run_growth_point(p, int(cfg["seed"]), seeds, int(cfg["n_iter"]), SEED_BATCH) for p in pts]

    return S.study(cfg, points=build_points(cfg), run=run, seeds_per_chunk=SEEDS_PER_CHUNK, check_point=growth_point,
                   analyze=analyze, plot=lambda df, outdir: plot_figures(
                       df, outdir, list(FIG.values()), cfg, summary=functools.partial(summarize, n_boot=200)))
