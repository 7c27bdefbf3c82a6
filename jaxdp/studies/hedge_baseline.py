"""``hedge-baseline``: Hedge, the shrinking dartboard and FTPL on the built-in adversaries, regret vs T.

Spec and claims: ``specs/hedge-baseline.toml``; page prose: ``specs/hedge-baseline.md``. Hedge and the dartboard
run at η = √(8 ln d/T) against the bound √(T ln d/2) (docs/algorithms/primitives.md#hedge); FTPL with exponential
perturbations at its own tuning.
"""
from __future__ import annotations

import pathlib

import jax.numpy as jnp
import numpy as np

from ..core import seed_keys, simulate
from ..experts import (
    AlternatingParams, BernoulliParams, HedgeParams, LazyEpochsParams, adv_alternating_batches, adv_lazy_epochs,
    bernoulli_experts, experts_problem, ftpl, ftpl_eta, hedge, hedge_eta, hedge_regret_bound, shrinking_dartboard,
)
from .analysis import equal_expected_regret, upper_half, verdict_table
from .claims import judge_curve, tally
from .framework import Study, fit_slopes, plot_panels, summarize
from .specs import StudySpec

S = StudySpec("hedge-baseline", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS, MISS_LINK = S.doc_page, S.results, S.blocks, S.claims, "#misses"
BY, N_BOOT = ["learner", "adversary", "d"], 2000


def _hedge_bound(d, T) -> float:
    """``ln d/η + ηT/8`` at ``η = √(8 ln d/T)``: ``√(T ln d/2)``."""
    return float(hedge_regret_bound(int(d), int(T), hedge_eta(int(d), int(T))))


def _adversary(name: str, d: int, T: np.ndarray, cfg: dict):
    G = len(T)
    return {"noise": lambda: (bernoulli_experts(d), BernoulliParams(gap=jnp.zeros(G, jnp.float32))),
            "planted": lambda: (bernoulli_experts(d), BernoulliParams(gap=jnp.full(G, cfg["gap"], jnp.float32))),
            "alternating": lambda: (adv_alternating_batches(d), AlternatingParams(B=jnp.ones(G, jnp.int32))),
            "epochs": lambda: (adv_lazy_epochs(d), LazyEpochsParams(
                T=jnp.asarray(T, jnp.int32), eps=jnp.ones(G, jnp.float32),
                epoch_len=jnp.full(G, cfg["epoch_len"], jnp.int32)))}[name]()


def _tables(df, n_boot: int = 500):
    """The per-seed results with ``fit_regret`` (the expected regret where the learner reports it, Hedge and the
    dartboard: same mean, less variance; else the realized regret, FTPL), the per-point ``summary`` (with the bound)
    and the slope in ``T`` of every curve (seed indices resampled jointly) with its last point's values."""
    has = np.isfinite(df["expected_regret"])
    df = df.assign(fit_regret=np.where(has, df["expected_regret"], df["regret"]),
                   fit_metric=np.where(has, "expected_regret", "regret"))
    summ = summarize(df, BY + ["T"], ["fit_regret", "regret", "expected_regret", "switches"])
    summ["bound"] = [_hedge_bound(d, T) for d, T in zip(summ["d"], summ["T"])]
    last = summ.sort_values("T").groupby(BY).tail(1)[BY + ["T", "fit_regret_mean", "expected_regret_mean",
                                                        "regret_mean", "bound", "switches_mean"]]
    sl = fit_slopes(df, "T", "fit_regret", by=BY, n_boot=n_boot, resample="joint").merge(last, on=BY)
    return df, summ, sl.merge(df.groupby(BY)["fit_metric"].first().reset_index(), on=BY)


@S.register
def build(cfg: dict) -> Study:
    """Every learner × adversary × ``d`` × ``T``; the horizons of a curve run in one grid call with common random
    numbers. Tables: ``summary`` (per point, with the bound) and ``slopes`` (log-log slopes in ``T``)."""
    def run(pts, seeds):
        name, adv, d = pts[0]["learner"], pts[0]["adversary"], pts[0]["d"]
        T = np.asarray([p["T"] for p in pts], np.int32)
        eta = jnp.asarray([(ftpl_eta(d, int(t), "exponential") if name == "ftpl" else hedge_eta(d, int(t)))
                           for t in T], jnp.float32)
        keys = seed_keys(cfg["seed"], seeds)
        keys = jnp.broadcast_to(keys, (len(pts),) + keys.shape)  # common random numbers across T
        learner = {"hedge": hedge, "dartboard": shrinking_dartboard, "ftpl": ftpl}[name](d)
        adversary, ap = _adversary(adv, d, T, cfg)
        out = simulate(learner, adversary, experts_problem(), HedgeParams(eta=eta), ap, keys, T, grid=True)
        nan = np.full(len(seeds), np.nan)
        return [{"regret": out["regret"][i], "switches": out["switches"][i],
                 "expected_regret": out["expected_regret"][i] if "expected_regret" in out else nan}
                for i in range(len(pts))]

    def analyze(df):
        df, summ, sl = _tables(df)
        sl["switch_slope"] = fit_slopes(df, "T", "switches", by=BY, resample="joint")["slope"].to_numpy()
        sl = sl.assign(theory_slope=0.5).rename(columns={
            "T": "T_max", "expected_regret_mean": "expected_regret@T_max", "regret_mean": "regret@T_max",
            "bound": "sqrt(T ln d/2)", "switches_mean": "switches@T_max"})
        cols = BY + ["fit_metric", "slope", "slope_lo", "slope_hi", "theory_slope", "T_max", "expected_regret@T_max",
                     "regret@T_max", "sqrt(T ln d/2)", "switches@T_max", "switch_slope"]
        return {"slopes": sl[cols], "summary": summ}

    def plot(df, outdir):
        summ = _tables(df)[1]
        return [plot_panels(summ[summ["d"] == d], "adversary", "T", "fit_regret", outdir / f"regret_vs_T_d{d}.png",
                            hue="learner", width=4.2, title=lambda a, d=d: f"{a}, d={d}",
                            hue_labels={"dartboard": "learner=dartboard (E[regret] = Hedge's by construction)"},
                            theory=lambda a, sub, d=d: {"sqrt(T ln d / 2)": (
                                np.sort(np.unique(sub["T"])).astype(float),
                                np.array([_hedge_bound(d, T) for T in np.sort(np.unique(sub["T"]))]))},
                            ylabel="expected regret (FTPL: regret); mean, 95% CI") for d in sorted(summ["d"].unique())]

    def check_point(p):
        (ftpl_eta(p["d"], p["T"], "exponential") if p["learner"] == "ftpl" else hedge_eta(p["d"], p["T"]))
        _adversary(p["adversary"], p["d"], np.asarray([p["T"]], np.int32), cfg)

    return S.study(cfg, run=run, check_point=check_point, analyze=analyze, plot=plot)


def verdicts(slopes, summary, twins=None):
    """One verdict row per fitted (learner, adversary, ``d``) curve against :data:`CLAIMS`. A bound is judged on
    regret / √(T ln d/2) at every fitted ``T`` (an exact evaluation when every seed has the same regret), an order
    on the slope in ``T``; a dartboard curve whose expected regret is Hedge's seed by seed (``twins``: its
    ``(adversary, d)``) is Hedge's row."""
    import pandas as pd

    twins, rows = set(twins or ()), []
    for r in slopes.itertuples(index=False):
        if r.learner == "dartboard" and (r.adversary, r.d) in twins:
            continue
        g = summary[(summary["learner"] == r.learner) & (summary["adversary"] == r.adversary) & (summary["d"] == r.d)]
        cell = f"{'hedge = dartboard' if r.learner == 'hedge' and (r.adversary, r.d) in twins else r.learner}, " \
               f"{r.adversary}, d = {int(r.d)}"
        claim = CLAIMS.get(r.learner)
        bounded = claim is not None and claim.kind == "bound"
        g = g[g["T"].between(r.x_min, r.x_max)].sort_values("T")
        rows.append(judge_curve(claim, r, g, experiment="regret / bound" if bounded else "regret vs T", cell=cell,
                                bound=[_hedge_bound(r.d, T) for T in g["T"]], stem="fit_regret",
                                exact_where=" at every fitted T",
                                no_claim=("no bound stated", "our docs state no bound for this learner")))
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/hedge-baseline``)."""
    import pandas as pd

    df, summ, t = _tables(pd.read_csv(pathlib.Path(results_dir or RESULTS) / "results.csv"), N_BOOT)
    twins = equal_expected_regret(df, "dartboard", "hedge", ["adversary", "d"], 1e-6)
    t["twin"] = ["; Hedge's E[regret], seed by seed" if r.learner == "dartboard" and (r.adversary, r.d) in twins else ""
                 for r in t.itertuples()]
    xs = sorted(df["T"].unique())
    up = upper_half(xs)
    v = verdicts(t, summ, twins)
    S_ = int(df.groupby(BY + ["T"])["seed"].nunique().min())
    return {BLOCKS[0]: S.render(BLOCKS[0], cells=len(t), S=S_, T_lo=int(up[0]), T_hi=int(up[-1]), n_boot=N_BOOT,
                                T_max=int(xs[-1]), table=S.table("slopes", t)),
            BLOCKS[1]: S.render(BLOCKS[1], rows=len(v), tally=tally(v), n_boot=N_BOOT, table=verdict_table(v))}


publish = S.publisher(page_blocks)
