"""``lazy-figure1ab``: LAZY Figure 1(a),(b) for DP-OCO, L2P-RMW vs DP-FTRL vs FTRL (docs/algorithms/lazy.md#studies).

Spec and claims: ``specs/lazy-figure1ab.toml``; page prose: ``specs/lazy-figure1ab.md``. Each point is
:func:`jaxdp.oco.figure1_oco_point` (linear losses, ``ε = T^{-α}``, ``d`` by the panel, biased and alternating
adversaries; ``nonsmooth``: L2P-RMW with MALA on absolute and logistic losses, docs/algorithms/lazy.md#rmw-nonsmooth);
the log-log slopes of regret in ``T`` are judged against :func:`jaxdp.oco.figure1_oco_exponent`.
"""
from __future__ import annotations

import dataclasses
import math
import pathlib

import numpy as np

from ..core import seed_keys
from ..oco import figure1_dimension, figure1_oco_exponent, figure1_oco_point, figure1_oco_setup
from .claims import judge_curve, tally
from .framework import Study, fit_slopes, plot_panels, summarize, verdict_table
from .plots import slope_guides
from .specs import StudySpec

S = StudySpec("lazy-figure1ab", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS = S.doc_page, S.results, S.blocks, S.claims
N_BOOT, TOL, BY, NBY = 2000, 0.05, ["learner", "adversary", "panel", "alpha"], ["loss", "alpha"]
SEED_OF_LOSS = {"linear": 0, "absolute": 1, "logistic": 2}   # the seed keys: seed + 7919 T + this


def _tables(df, n_boot=None) -> dict:
    """``slopes`` (of ``regret_pos``, the regret floored at 10⁻³, in ``T``, with each cell's Figure 1 exponent
    ``theory_slope``) and ``summary`` of the linear losses, ``nonsmooth_slopes`` (at L2P-RMW's panel (a) exponent)
    and ``nonsmooth_summary`` of the others, each when it has points; ``n_boot=None``: the default replicates. The
    seed keys depend on ``T``, so the horizons of a curve are independent draws and the default bootstrap (each
    ``T``'s seeds resampled on their own) matches the design."""
    df, lin, out = df.assign(regret_pos=np.maximum(df["regret"], 1e-3)), df["loss"] == "linear", {}
    for pre, sub, by, per_point in (("", df[lin], BY, ["lag_prediction"]), ("nonsmooth_", df[~lin], NBY, [
            "mala_acceptance", "mala_outside", "mala_steps"])):
        if len(sub):
            sl = fit_slopes(sub, "T", "regret_pos", by=by, **({} if n_boot is None else {"n_boot": n_boot}))
            sl["theory_slope"] = [figure1_oco_exponent(getattr(r, "learner", "l2p_rmw"), getattr(r, "panel", "a"),
                                                       r.alpha) for r in sl.itertuples()]
            out[pre + "slopes"], out[pre + "summary"] = sl, summarize(
                sub, by + ["T"] + (["d", "B"] if pre else []), ["regret", "switches"] + per_point)
    return out


@S.register
def build(cfg: dict) -> Study:
    """Every learner × adversary × panel × α × ``T`` on linear losses, plus the L2P-RMW + MALA points of the
    ``nonsmooth`` losses (:func:`_tables`); a point is :func:`jaxdp.oco.figure1_oco_point`."""
    ns = {"learners": ["l2p_rmw"], "adversaries": cfg["nonsmooth"], "panels": ["a"], "alpha": [cfg["nonsmooth_alpha"]]}
    points = [dict(p, d=figure1_dimension(p["panel"], p["T"]), loss="linear") for p in S.points(cfg)] + [
        dict(p, d=figure1_dimension("a", p["T"]), loss=p["adversary"]) for p in S.points({**cfg, **ns})]
    setup = lambda p: dict(adversary=p["adversary"], loss=p["loss"], mode=cfg["mode"])

    def run(pts, seeds):   # the seed keys depend on T and the loss: every point is an independent draw
        return [figure1_oco_point(seed_keys(int(cfg["seed"]) + 7919 * p["T"] + SEED_OF_LOSS[p["loss"]],
                                            np.asarray(seeds)), p["learner"], p["T"], p["d"], p["alpha"], **setup(p))
                for p in pts]

    def plot(df, outdir: pathlib.Path):   # one figure per panel and α, one of the MALA points; Figure 1's guides
        df = df.assign(regret=np.maximum(df["regret"], 1e-3), learner=df["learner"].where(
            df["loss"] == "linear", "l2p_rmw (MALA)"), mala=df["loss"] != "linear")
        summ, paths = summarize(df, ["mala", "panel", "alpha", "adversary", "learner", "T"], ["regret"]), []
        for (mala, panel, alpha), s in summ.groupby(["mala", "panel", "alpha"], sort=True):
            paths.append(plot_panels(
                s, "adversary", "T", "regret", outdir / (f"figure1{panel}_alpha{alpha}.png", "nonsmooth.png")[mala],
                hue="learner", ylabel="regret (mean, 95% CI)", width=4.4,
                theory=lambda a, s: slope_guides({l: figure1_oco_exponent(l.split()[0], panel, alpha) for l in
                                                  sorted(s["learner"].unique())}, s, "T", "regret", hue="learner"),
                title=lambda a: f"L2P-RMW + MALA, {a} loss, panel (a) d, alpha={alpha}" if mala else
                f"panel ({panel}), alpha={alpha}, {a}"))
        return paths

    return S.study(cfg, points=points, run=run, analyze=_tables, plot=plot,
                   check_point=lambda p: figure1_oco_setup(p["learner"], p["T"], p["d"], p["alpha"], **setup(p)))


def fitted(slopes, summary, keys):
    """``slopes`` with, per cell, ``n_fit`` (its fitted horizons), ``zero`` (those whose regret interval contains 0)
    and ``n_seeds`` (the fewest seeds at any of them), from the per-point ``summary``; ``keys``: a cell's columns."""
    g = slopes[keys + ["x_min", "x_max"]].merge(summary, on=keys)
    g = g[g["T"].between(g["x_min"], g["x_max"])].assign(zero=(g["regret_lo"] <= 0) & (g["regret_hi"] >= 0))
    agg = g.groupby(keys, sort=False).agg(n_fit=("T", "size"), zero=("zero", "sum"), n_seeds=("n_seeds", "min"))
    return slopes.merge(agg.reset_index(), on=keys, how="left")


def _row(r, key: str, experiment: str, cell: str) -> dict:
    """:func:`judge_curve` of the fitted cell ``r`` (:func:`fitted`) against the claim ``key`` at the cell's Figure 1
    exponent (``theory_slope``), after the one hook the rubric lacks: a log-slope of a mean regret whose interval
    contains 0 at a fitted T is not a rate."""
    why = (f"regret's interval contains 0 at {r.zero} of {r.n_fit} fitted T: its log-slope is not a rate"
           if r.zero else "")
    c = dataclasses.replace(CLAIMS[key], value=float(r.theory_slope), **({"untested": why, "link": ""} if why else {}))
    return judge_curve(c, r, None, experiment=experiment, cell=cell)


def verdicts(slopes, nonsmooth=None, ftrl_same_runs: bool = False):
    """One verdict per fitted cell (:func:`fitted`) of the linear ``slopes`` and the ``nonsmooth`` slopes against
    :data:`CLAIMS` (keys ``<learner>_<panel>``, ``l2p_rmw_nonsmooth``), biased adversary first; with ``ftrl_same_runs``
    non-private FTRL's biased-adversary cells (one run at every α) are one row, the first α's fit."""
    import pandas as pd

    order = {v: i for k in ("learners", "adversaries") for i, v in enumerate(S.params[k].choices or ())}
    sl = slopes.sort_values(["adversary", "panel", "learner", "alpha"], kind="stable",
                            key=lambda c: c.map(order) if c.name in ("adversary", "learner") else c)
    one = ftrl_same_runs & (sl["learner"] == "nonprivate") & (sl["adversary"] == "biased")
    alphas = {p: ", ".join(f"{a:g}" for a in g) for p, g in sl[one].groupby("panel")["alpha"]}
    again = sl.duplicated(["learner", "adversary", "panel"])   # a later α of the same curve
    rows = [_row(r, f"{r.learner}_{r.panel}", f"linear, {r.adversary}, panel ({r.panel})",
                 f"nonprivate, α = {alphas[r.panel]} (one run)" if same else f"{r.learner}, α = {r.alpha:g}")
            for r, same, dup in zip(sl.itertuples(index=False), one, again) if not (same and dup)]
    for r in (() if nonsmooth is None else nonsmooth.sort_values(NBY, kind="stable").itertuples(index=False)):
        rows.append(_row(r, "l2p_rmw_nonsmooth", f"{r.loss} loss (MALA), panel (a)", f"l2p_rmw, α = {r.alpha:g}"))
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/lazy-figure1ab``): the tables
    of :func:`_tables` at :data:`N_BOOT` replicates, and the verdicts of the same fits. Non-private FTRL does not
    depend on ε: where its runs on the biased adversary are the same at every α, seed by seed, they are one row."""
    import pandas as pd

    df = pd.read_csv(pathlib.Path(results_dir or RESULTS) / "results.csv")
    t, lin = _tables(df, N_BOOT), df[df["loss"] == "linear"]
    sl, nsl = fitted(t["slopes"], t["summary"], BY), t.get("nonsmooth_slopes")
    nsl = None if nsl is None else fitted(nsl, t["nonsmooth_summary"], NBY)
    runs = lin[(lin["learner"] == "nonprivate") & (lin["adversary"] == "biased")].pivot_table(
        index=["panel", "T", "seed"], columns="alpha", values="regret").to_numpy()   # FTRL does not depend on ε
    same, a0, Tmax = bool(runs.size) and not np.ptp(runs, axis=1).any(), float(lin["alpha"].min()), int(lin["T"].max())
    last = t["summary"][t["summary"]["T"] == Tmax][BY + ["regret_mean", "regret_lo", "regret_hi"]]
    v, lo, hi = verdicts(sl, nsl, ftrl_same_runs=same), int(sl["x_min"].min()), int(sl["x_max"].max())
    return {
        BLOCKS[0]: S.render(BLOCKS[0], cells=len(sl), S=int(df.groupby(BY + ["loss", "T"])["seed"].nunique().min()),
                            T_lo=lo, T_hi=hi, n_boot=N_BOOT, T_max=Tmax,
                            table=S.table("slopes", sl.merge(last, on=BY, how="left"), T_max=Tmax, same=same, a0=a0,
                                          **S.data["notes"])),
        BLOCKS[1]: S.render("lazy-figure1ab no nonsmooth") if nsl is None else S.render(BLOCKS[1], points=S.table(
            "nonsmooth_points", t["nonsmooth_summary"]), slopes=S.table("nonsmooth_slopes", nsl)),
        BLOCKS[2]: S.render(BLOCKS[2], rows=len(v), linear=len(sl), nonsmooth=0 if nsl is None else len(nsl),
                            same_runs=S.render("lazy-figure1ab same runs") if same else "", tol=TOL,
                            decades=math.log10(hi / lo), T_lo=lo, T_hi=hi, n_boot=N_BOOT, tally=tally(v),
                            table=verdict_table(v)),
    }


publish = S.publisher(page_blocks)
