"""Study ``label-dp-rates``: LABEL Table 1 measured (docs/algorithms/label-dp.md#studies).

Experiments L1–L9, grids and claims: ``specs/label-dp-rates.toml``; page prose: ``specs/label-dp-rates.md`` (one
verdict block per kept run, on the results page and the algorithm page). Every point runs at its rate-mode planner's
hyperparameters (:func:`jaxdp.label_dp.run_planned`); L9 compares them with an oracle constant
(:func:`~jaxdp.studies.analysis.oracle_ratios`). Theory: :func:`jaxdp.label_dp.slope_theory`.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..core import seed_keys
from ..label_dp import (bump_slope, central_crossovers, claimed_slope, effective_sample_fit, label_rates,
                        minimax_cells, run_planned, setting_of, slope_theory, smoothness_pairs, smoothness_pairs_error)
from ..label_dp.planners import plan_for_task
from .analysis import oracle_ratio_slope, oracle_ratios, verdict_table
from .claims import judge_curve, tally
from .framework import Study, fit_slopes, summarize
from .plots import plot_figures
from .specs import ROOT, StudySpec, fstring, grid_points, kept_manifest, kept_runs

S: StudySpec = StudySpec("label-dp-rates", __name__, checks={
    "experiments": lambda e: None if e.strip().upper() in S.data["experiments"] else f"unknown experiment {e!r}",
    "l7_pairs": smoothness_pairs_error})
CLAIMS, BLOCKS, DOC_PAGES, WHY, TOL = S.claims, S.blocks, S.pages, S.data["why"], S.claims["local"].tolerance
CELLS = S.data["cells"]   # each verdict row's cell, f-strings on a row
KEPT = dict(zip(("label-dp-rates", "label-dp-rates-heavy"), BLOCKS))   # kept run -> its block (on every page)
DOC_PAGE = ROOT / DOC_PAGES[0]
N_BOOT, SEED_BATCH, SEEDS_PER_CHUNK = 1000, 4, 64   # seeds per compiled batch and per chunk: memory, resumption
L7_C_M = 2.0   # bumps: m = min(G, ⌊C_M h0^{γβ-d}⌋)
POINT = dict(experiment="", task="", method="", N=0, eps=0.0, p=0.0, K=2, beta=1.0, gamma=1.0, c=1.0, knob="none")


def _points(cfg: dict) -> list:
    """The selected experiments' points (L4 needs L1–L3, L8 needs L3) by the grids of ``specs/label-dp-rates.toml``,
    L7's for each (β, γ) (γ plays no role in regression); a non-private learner once per curve, at ε = ∞."""
    exps = {e.strip().upper() for e in str(cfg["experiments"]).split(",") if e.strip()}
    exps |= ({"L1", "L2", "L3"} if "L4" in exps else set()) | ({"L3"} if "L8" in exps else set())
    pairs = [list(bg) for bg in smoothness_pairs(cfg["l7_pairs"])]   # L7's (β, γ), the grid's "$l7_pairs"
    pts = grid_points(S.data["grids"], dict(cfg, l7_pairs=pairs), POINT, "experiment", exps)
    pts = [dict(p, eps=math.inf) if setting_of(p["method"]) == "nonprivate" else p for p in pts]
    return list({(tuple(p.items()) if p["eps"] == math.inf else i): p for i, p in enumerate(pts)}.values())


def _slope_rows(df, by):
    """The slopes in N of ``df``'s curves (grouped ``by``), each with its theory (:func:`slope_theory`)."""
    import pandas as pd

    sl = fit_slopes(df, "N", "excess", by=by, upper_half=False, n_boot=N_BOOT, resample="joint")
    th = [slope_theory(r.task, r.method, r.p, r.get("beta", 1.0), r.get("gamma", 1.0)) for _, r in sl.iterrows()]
    return pd.concat([sl.reset_index(drop=True), pd.DataFrame(th)], axis=1)


@S.register
def build(cfg: dict) -> Study:
    """The selected experiments' points in seed batches of ``SEED_BATCH``, at the rate-mode planners' values."""
    import pandas as pd

    N_max, N7 = int(max([max(cfg["N"]), cfg["N_fixed"]] + list(cfg["l9_N"]))), int(max(cfg["l7_N"]))
    betas = [b for b, _ in smoothness_pairs(cfg["l7_pairs"])]   # the bumps' cells per axis (and the quadrature's bins)
    m0 = minimax_cells(N7, {s: cfg[f"l7_eps_{s}"] for s in ("local", "central")}, betas)

    def run(points, seeds):   # the same draws however seeds are batched (one key per seed index)
        p0 = points[0]
        size = (dict(N_max=N7, M=int(cfg["l7_M"]), bins_max=m0) if p0["task"].startswith("bump")
                else dict(N_max=N_max, M=int(cfg["M"]), bins_max=int(cfg["bins_max"])))
        exc = run_planned(p0["task"], p0["method"], seed_keys(int(cfg["seed"]), np.asarray(seeds)),
                          *([pt[k] for pt in points] for k in ("N", "eps", "c")), C_M=L7_C_M, m0_max=m0,
                          seed_batch=SEED_BATCH, **{k: p0[k] for k in ("p", "K", "beta", "gamma", "knob")}, **size)
        return [{"excess": exc[i]} for i in range(len(points))]

    def analyze(df):
        tables, by, ex = {}, ["experiment", "task", "method", "eps", "p"], df.experiment
        main, l7, l5 = df[ex.isin(["L1", "L2", "L3"])], df[ex == "L7"], df[(ex == "L5") & (df.eps <= 1.0)]
        parts = [_slope_rows(d, by + extra) for d, extra in ((main, []), (l7, ["beta", "gamma"])) if len(d)]
        if parts:
            tables["slopes"] = pd.concat(parts, ignore_index=True)
        if len(main):
            tables["crossover"] = pd.DataFrame(central_crossovers(sorted(set(main.eps[np.isfinite(main.eps)])),
                                                                  sorted(set(df[df.task == "heavy"].p))))
        if (ex == "L5").any():
            eff = fit_slopes(l5, "eps", "excess", ["task", "method"], False, N_BOOT, resample="joint")
            tables["eps_effective_samples"] = eff.assign(theory=[2 * slope_theory(t, m)["theory_priv"]
                                                                 for t, m in zip(eff.task, eff.method)])
        if (ex == "L6").any():
            tables["K_dependence"] = summarize(df[ex == "L6"], ["K", "method"], ["excess"])
        if (ex == "L9").any():
            tables["tuning"] = oracle_ratios(df[ex == "L9"], ["task", "method", "knob", "N", "eps", "p"], "c",
                                             "excess", n_boot=N_BOOT, name="theory")
        return {**tables, "verdicts": verdicts(df, tables)}

    return S.study(cfg, points=_points(cfg), run=run, analyze=analyze, description="",   # check: a point's planner call
                   check_point=lambda pt: plan_for_task(pt["method"], pt["task"], **{k: pt[k] for k in (
                       "N", "eps", "p", "K", "beta", "knob", "c")}),
                   plot=lambda df, outdir: plot_figures(df, outdir, S.data["figures"], dict(
                       cfg, label_rates=label_rates, bump_slope=bump_slope, setting_of=setting_of),
                       S.data["figure_defaults"]), seeds_per_chunk=SEEDS_PER_CHUNK)


def verdicts(df, tables):
    """One verdict per fitted curve of ``tables`` (and of ``df``'s L6/L9 rows) against :data:`CLAIMS`: L1–L3/L8 the
    slope in N (central: a ``between_rate`` claim, −b to −a), L5 the slope in Nε², L7 the bumps', L6 not tested,
    L9 the log ratio's."""
    import pandas as pd

    rows, sl, eff = [], tables.get("slopes"), tables.get("eps_effective_samples")
    for _, r in (sl.iterrows() if sl is not None else ()):   # the claim's key and the row's experiment: cells
        at = dict(setting=setting_of(r["method"]))
        lo, hi = claimed_slope(r["task"], at["setting"], r["theory_stat"], r["theory_priv"], r.get("theory", math.nan))
        small = at["setting"] == "local" and r["eps"] ** 2 * r["x_max"] <= 1e4   # else the claim's link (TOML)
        c = dataclasses.replace(CLAIMS[fstring(CELLS["claim"], r, **at)], value=lo, value_hi=hi,
                                **({"link": WHY["small_neps"]} if small else {}))
        rows.append(judge_curve(c, r, None, "N", experiment=fstring(CELLS["experiment"], r, **at),
                                cell=fstring(CELLS["L7" if r["experiment"] == "L7" else "main"], r, **at)))
    for _, r in (eff.iterrows() if eff is not None else ()):   # judged in Nε²: half the slope in ε
        fit = pd.Series(effective_sample_fit(r))
        N = int(df[(df.experiment == "L5") & (df.method == r["method"])].N.iloc[0])
        rows.append(judge_curve(dataclasses.replace(CLAIMS["L5"], value=fit.theory), fit, None, "eps",
                                experiment="L5", cell=fstring(CELLS["L5"], r, N=N)))
    for mth, g in df[df.experiment == "L6"].groupby("method"):
        fit = fit_slopes(g, "K", "excess", upper_half=False, n_boot=N_BOOT, resample="joint").iloc[0]
        rows.append(judge_curve(CLAIMS["L6"], fit, None, "K", experiment="L6", cell=fstring(CELLS["L6"], g.iloc[0])))
    l9, rng = df[df.experiment == "L9"], np.random.default_rng(2)
    for (mth, eps, p), g in (l9.groupby(["method", "eps", "p"]) if l9.N.nunique() >= 2 else ()):
        s, lo, hi, n, Ns = oracle_ratio_slope(g, "N", "c", "excess", n_boot=N_BOOT, rng=rng)
        fit = pd.Series(dict(slope=s, slope_lo=lo, slope_hi=hi, n_seeds=n, x_min=Ns[0], x_max=Ns[-1]))
        c = CLAIMS["L9"] if hi > lo else dataclasses.replace(CLAIMS["L9"], untested=S.data["no_interval"], link="")
        rows.append(judge_curve(c, fit, None, "N", experiment="L9", cell=fstring(CELLS["L9"], g.iloc[0], Ns=Ns)))
    return pd.DataFrame(rows, columns=["experiment", "cell", "claim", "kind", "claimed_hi", "claimed", "slope",
                                       "slope_lo", "slope_hi", "n_seeds", "verdict", "reason", "link"])


def page_blocks(results_dir=None) -> dict:
    """``{block name: Markdown}``: the verdict block of one kept run (a key of :data:`KEPT`), default of each."""
    import pandas as pd

    out = {}
    for d, name, block in kept_runs(KEPT, results_dir):
        tables = {t: pd.read_csv(d / f"{t}.csv") for t in ("slopes", "eps_effective_samples") if (d / f"{t}.csv").exists()}
        v = verdicts(pd.read_csv(d / "results.csv"), tables)
        files = [f"results/{name}/{f}.csv" for f in ("results", *tables)]
        out[block] = S.render("verdicts", **kept_manifest(d), generated=S.generated(*files), rows=len(v), tally=tally(v),
                              tol=f"{TOL:g}", n_boot=N_BOOT, table=verdict_table(v))
    return out


publish = S.publisher(page_blocks)
