"""``hedge-baseline``: Hedge, the shrinking dartboard and FTPL on the built-in adversaries, regret vs T.

Spec and claims: ``specs/hedge-baseline.toml``; page prose: ``specs/hedge-baseline.md``. Hedge and the dartboard
run at η = √(8 ln d/T) against the bound √(T ln d/2) (docs/algorithms/primitives.md#hedge); FTPL with exponential
perturbations at its own tuning.
"""
from __future__ import annotations

import math
import pathlib

import jax.numpy as jnp
import numpy as np

from ..core import seed_keys, simulate
from ..experts import (
    AlternatingParams, BernoulliParams, HedgeParams, LazyEpochsParams, adv_alternating_batches, adv_lazy_epochs,
    bernoulli_experts, experts_problem, ftpl, ftpl_eta, hedge, hedge_eta, hedge_regret_bound, shrinking_dartboard,
)
from .analysis import equal_expected_regret, upper_half
from .analysis import fmt_ci, fmt_num, markdown_table, verdict_table
from .claims import Measurement, judge, judge_exact_bound, tally, untested_row, verdict_row
from .framework import Study, fit_slopes, plot_panels, summarize
from .specs import StudySpec

S = StudySpec("hedge-baseline", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS, MISS_LINK = S.doc_page, S.results, S.blocks, S.claims, "#misses"
BY, N_BOOT = ["learner", "adversary", "d"], 2000


def _hedge_bound(d, T) -> float:
    """``ln d/η + ηT/8`` at ``η = √(8 ln d/T)``: ``√(T ln d/2)``."""
    return float(hedge_regret_bound(int(d), int(T), hedge_eta(int(d), int(T))))


def _eta(name: str, d: int, T: int) -> float:
    return ftpl_eta(d, T, "exponential") if name == "ftpl" else hedge_eta(d, T)


def _adversary(name: str, d: int, T: np.ndarray, cfg: dict):
    G = len(T)
    return {"noise": lambda: (bernoulli_experts(d), BernoulliParams(gap=jnp.zeros(G, jnp.float32))),
            "planted": lambda: (bernoulli_experts(d), BernoulliParams(gap=jnp.full(G, cfg["gap"], jnp.float32))),
            "alternating": lambda: (adv_alternating_batches(d), AlternatingParams(B=jnp.ones(G, jnp.int32))),
            "epochs": lambda: (adv_lazy_epochs(d), LazyEpochsParams(
                T=jnp.asarray(T, jnp.int32), eps=jnp.ones(G, jnp.float32),
                epoch_len=jnp.full(G, cfg["epoch_len"], jnp.int32)))}[name]()


def _fit_regret(df):
    """The expected regret where the learner reports it (Hedge, dartboard: same mean, less variance), else the
    realized regret (FTPL)."""
    has = np.isfinite(df["expected_regret"])
    return df.assign(fit_regret=np.where(has, df["expected_regret"], df["regret"]),
                     fit_metric=np.where(has, "expected_regret", "regret"))


@S.register
def build(cfg: dict) -> Study:
    """Every learner × adversary × ``d`` × ``T``; the horizons of a curve run in one grid call with common random
    numbers. Tables: ``summary`` (per point, with the bound) and ``slopes`` (log-log slopes in ``T``)."""
    def run(pts, seeds):
        name, adv, d = pts[0]["learner"], pts[0]["adversary"], pts[0]["d"]
        T = np.asarray([p["T"] for p in pts], np.int32)
        eta = jnp.asarray([_eta(name, d, int(t)) for t in T], jnp.float32)
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
        df = _fit_regret(df)
        summ = summarize(df, BY + ["T"], ["fit_regret", "regret", "expected_regret", "switches"])
        summ["bound"] = [_hedge_bound(d, T) for d, T in zip(summ["d"], summ["T"])]
        slopes = fit_slopes(df, "T", "fit_regret", by=BY, resample="joint")  # same keys at every T of a curve
        slopes["switch_slope"] = fit_slopes(df, "T", "switches", by=BY, resample="joint")["slope"].to_numpy()
        last = summ.sort_values("T").groupby(BY).tail(1)
        slopes = slopes.merge(last[BY + ["T", "expected_regret_mean", "regret_mean", "bound", "switches_mean"]], on=BY)
        slopes = slopes.rename(columns={"T": "T_max", "expected_regret_mean": "expected_regret@T_max",
                                        "regret_mean": "regret@T_max", "bound": "sqrt(T ln d/2)",
                                        "switches_mean": "switches@T_max"})
        slopes = slopes.merge(df.groupby(BY)["fit_metric"].first().reset_index(), on=BY).assign(theory_slope=0.5)
        cols = BY + ["fit_metric", "slope", "slope_lo", "slope_hi", "theory_slope", "T_max", "expected_regret@T_max",
                     "regret@T_max", "sqrt(T ln d/2)", "switches@T_max", "switch_slope"]
        return {"slopes": slopes[cols], "summary": summ}

    def plot(df, outdir):
        summ = summarize(_fit_regret(df), BY + ["T"], ["fit_regret"])
        return [plot_panels(summ[summ["d"] == d], "adversary", "T", "fit_regret", outdir / f"regret_vs_T_d{d}.png",
                            hue="learner", width=4.2, title=lambda a, d=d: f"{a}, d={d}",
                            hue_labels={"dartboard": "learner=dartboard (E[regret] = Hedge's by construction)"},
                            theory=lambda a, sub, d=d: {"sqrt(T ln d / 2)": (
                                np.sort(np.unique(sub["T"])).astype(float),
                                np.array([_hedge_bound(d, T) for T in np.sort(np.unique(sub["T"]))]))},
                            ylabel="expected regret (FTPL: regret); mean, 95% CI") for d in sorted(summ["d"].unique())]

    def check_point(p):
        _eta(p["learner"], p["d"], p["T"])
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
        n = int(g["n_seeds"].min()) if len(g) else 0
        cell = f"{'hedge = dartboard' if r.learner == 'hedge' and (r.adversary, r.d) in twins else r.learner}, " \
               f"{r.adversary}, d = {int(r.d)}"
        claim = CLAIMS.get(r.learner)
        if claim is None:
            rows.append(untested_row("regret vs T", cell, "no bound stated", "our docs state no bound for this "
                                     "learner", n))
        elif claim.kind == "bound":
            g = g[(g["T"] >= getattr(r, "x_min", -np.inf)) & (g["T"] <= getattr(r, "x_max", np.inf))].sort_values("T")
            if not len(g):
                rows.append(untested_row("regret / bound", cell, claim.text, "no point in the fitted range", n,
                                         kind="at_most", claimed=1.0))
                continue
            b = np.array([_hedge_bound(r.d, T) for T in g["T"]])
            ratios = [g[f"fit_regret_{k}"].to_numpy() / b for k in ("mean", "lo", "hi")]
            m = Measurement.of_ratios(*ratios, n)
            v = judge_exact_bound(m, " at every fitted T") if m.exact(*ratios) else judge(claim, m)
            rows.append(verdict_row(claim, m, v, experiment="regret / bound", cell=cell))
        else:
            m = Measurement(float(r.slope), float(r.slope_lo), float(r.slope_hi), n,
                            decades=math.log10(float(r.x_max) / float(r.x_min)))
            rows.append(verdict_row(claim, m, judge(claim, m), experiment="regret vs T", cell=cell))
    return pd.DataFrame(rows)


def same_expected_regret(df, a: str = "dartboard", b: str = "hedge") -> set:
    """The ``(adversary, d)`` where learners ``a`` and ``b`` have the same expected regret at every seed and T."""
    return equal_expected_regret(df, a, b, ["adversary", "d"], 1e-6)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/hedge-baseline``)."""
    import pandas as pd

    df = _fit_regret(pd.read_csv(pathlib.Path(results_dir or RESULTS) / "results.csv"))
    sl = fit_slopes(df, "T", "fit_regret", by=BY, n_boot=N_BOOT, resample="joint")
    summ = summarize(df, BY + ["T"], ["fit_regret", "regret", "switches"])
    last, twins, rows = summ.sort_values("T").groupby(BY).tail(1).set_index(BY), same_expected_regret(df), []
    fitted_on = df.groupby(BY)["fit_metric"].first()
    for r in sl.itertuples(index=False):
        L, exact = last.loc[(r.learner, r.adversary, r.d)], r.slope_hi - r.slope_lo < 1e-9
        vs = ("exact (E[regret] the same for every seed)" if exact else "contains 1/2"
              if r.slope_lo <= 0.5 <= r.slope_hi else "above 1/2" if r.slope_lo > 0.5 else "below 1/2")
        vs += "; Hedge's E[regret], seed by seed" if r.learner == "dartboard" and (r.adversary, r.d) in twins else ""
        rows.append([r.learner, r.adversary, int(r.d), fitted_on.loc[(r.learner, r.adversary, r.d)],
                     fmt_num(r.slope) if exact else fmt_ci(r.slope, r.slope_lo, r.slope_hi), vs,
                     fmt_num(L["fit_regret_mean"], 1), fmt_num(L["regret_mean"], 1),
                     fmt_num(_hedge_bound(r.d, int(L["T"])), 1), f"{L['switches_mean']:.0f}"])
    xs = sorted(df["T"].unique())
    up = upper_half(xs)
    table = markdown_table(["learner", "adversary", "d", "fitted on", "slope [95% CI]", "against the theory's 1/2",
                            "fitted regret", "realized regret", "√(T ln d/2)", "switches"], rows)
    v = verdicts(sl, summ, twins)
    S_ = int(df.groupby(BY + ["T"])["seed"].nunique().min())
    return {BLOCKS[0]: S.render(BLOCKS[0], cells=len(rows), S=S_, T_lo=int(up[0]), T_hi=int(up[-1]), n_boot=N_BOOT,
                                T_max=int(xs[-1]), table=table),
            BLOCKS[1]: S.render(BLOCKS[1], rows=len(v), tally=tally(v), n_boot=N_BOOT, table=verdict_table(v))}


publish = S.publisher(page_blocks)
