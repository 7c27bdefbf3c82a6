"""``hedge-baseline``: Hedge, the shrinking dartboard and FTPL on the built-in adversaries, regret vs T.

Spec and claims: ``specs/hedge-baseline.toml``; page prose: ``specs/hedge-baseline.md``. Hedge and the dartboard
run at η = √(8 ln d/T) against the bound √(T ln d/2) (docs/algorithms/primitives.md#hedge); FTPL with exponential
perturbations at its own tuning (:func:`jaxdp.experts.realizable_setups.baseline_setup`).
"""
from __future__ import annotations

import pathlib

import numpy as np

from ..core import seed_keys
from ..experts.hedge import hedge_tuned_regret_bound
from ..experts.realizable_setups import baseline_setup, run_baseline_curve
from .analysis import equal_expected_regret, upper_half, verdict_table
from .claims import fit_points, judge_fits, tally
from .framework import Study, fit_slopes, summarize
from .plots import plot_figures
from .specs import StudySpec

S = StudySpec("hedge-baseline", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS, MISS_LINK = S.doc_page, S.results, S.blocks, S.claims, "#misses"
BY, N_BOOT = ["learner", "adversary", "d"], 2000


def _tables(df, n_boot: int = 500):
    """The per-seed results with ``fit_regret`` (the expected regret where the learner reports it, Hedge and the
    dartboard: same mean, less variance; else the realized regret, FTPL), the per-point ``summary`` (with the bound)
    and the slope in ``T`` of every curve (seed indices resampled jointly) with its last point's values."""
    has = np.isfinite(df["expected_regret"])
    df = df.assign(fit_regret=np.where(has, df["expected_regret"], df["regret"]),
                   fit_metric=np.where(has, "expected_regret", "regret"))
    summ = summarize(df, BY + ["T"], ["fit_regret", "regret", "expected_regret", "switches"])
    summ["bound"] = [hedge_tuned_regret_bound(d, T) for d, T in zip(summ["d"], summ["T"])]
    last = summ.sort_values("T").groupby(BY).tail(1)[BY + ["T", "fit_regret_mean", "expected_regret_mean",
                                                        "regret_mean", "bound", "switches_mean"]]
    sl = fit_slopes(df, "T", "fit_regret", by=BY, n_boot=n_boot, resample="joint").merge(last, on=BY)
    return df, summ, sl.merge(df.groupby(BY)["fit_metric"].first().reset_index(), on=BY)


@S.register
def build(cfg: dict) -> Study:
    """Every learner × adversary × ``d`` × ``T``; the horizons of a curve run in one grid call with common random
    numbers. Tables: ``summary`` (per point, with the bound) and ``slopes`` (log-log slopes in ``T``)."""
    def run(pts, seeds):
        return run_baseline_curve(pts[0]["learner"], pts[0]["adversary"], seed_keys(cfg["seed"], seeds),
                                  d=pts[0]["d"], T=[p["T"] for p in pts], gap=cfg["gap"], epoch_len=cfg["epoch_len"])

    def analyze(df):
        df, summ, sl = _tables(df)
        sl["switch_slope"] = fit_slopes(df, "T", "switches", by=BY, resample="joint")["slope"].to_numpy()
        sl = sl.assign(theory_slope=0.5).rename(columns={
            "T": "T_max", "expected_regret_mean": "expected_regret@T_max", "regret_mean": "regret@T_max",
            "bound": "sqrt(T ln d/2)", "switches_mean": "switches@T_max"})
        cols = BY + ["fit_metric", "slope", "slope_lo", "slope_hi", "theory_slope", "T_max", "expected_regret@T_max",
                     "regret@T_max", "sqrt(T ln d/2)", "switches@T_max", "switch_slope"]
        return {"slopes": sl[cols], "summary": summ}

    def check_point(p):
        baseline_setup(p["learner"], p["adversary"], p["d"], [p["T"]], gap=cfg["gap"], epoch_len=cfg["epoch_len"])

    return S.study(cfg, run=run, check_point=check_point, analyze=analyze, plot=lambda df, outdir: plot_figures(
        _tables(df)[0], outdir, S.data["figures"], cfg))


def verdicts(slopes, summary, twins=()):
    """One verdict row per fitted (learner, adversary, ``d``) curve against :data:`CLAIMS`
    (:func:`~jaxdp.studies.claims.judge_fits`): a bound on regret / √(T ln d/2) at every fitted ``T`` (the
    ``summary``'s ``bound``; an exact evaluation when every seed has the same regret), an order on the slope in ``T``;
    a dartboard curve whose expected regret is Hedge's seed by seed (``twins``: its ``(adversary, d)``) is Hedge's
    row."""
    exp = {ln: "regret / bound" if ln in CLAIMS and CLAIMS[ln].kind == "bound" else "regret vs T"
           for ln in set(slopes["learner"]) | set(summary["learner"])}
    import pandas as pd

    fits = slopes[[not (ln == "dartboard" and (a, d) in twins) for ln, a, d in zip(*(slopes[k] for k in BY))]]
    return pd.DataFrame(judge_fits(fits.assign(fit=fits["learner"].map(exp)), lambda r: CLAIMS.get(r.learner),
                                   lambda r: ", ".join(["hedge = dartboard" if r.learner == "hedge" and (r.adversary, r.d)
                                                        in twins else r.learner, r.adversary, f"d = {int(r.d)}"]),
                                   lambda r: fit_points(summary, r, BY, "T"), stem="fit_regret",
                                   exact_where=" at every fitted T",
                                   no_claim=("no bound stated", "our docs state no bound for this learner")))


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/hedge-baseline``)."""
    import pandas as pd

    df, summ, t = _tables(pd.read_csv(pathlib.Path(results_dir or RESULTS) / "results.csv"), N_BOOT)
    twins = equal_expected_regret(df, "dartboard", "hedge", ["adversary", "d"], 1e-6)
    t["twin"] = ["; Hedge's E[regret], seed by seed" if r.learner == "dartboard" and (r.adversary, r.d) in twins else ""
                 for r in t.itertuples()]
    xs = sorted(df["T"].unique())
    up, v = upper_half(xs), verdicts(t, summ, twins)
    S_ = int(df.groupby(BY + ["T"])["seed"].nunique().min())
    return {BLOCKS[0]: S.render(BLOCKS[0], cells=len(t), S=S_, T_lo=int(up[0]), T_hi=int(up[-1]), n_boot=N_BOOT,
                                T_max=int(xs[-1]), table=S.table("slopes", t)),
            BLOCKS[1]: S.render(BLOCKS[1], rows=len(v), tally=tally(v), n_boot=N_BOOT, table=verdict_table(v))}


publish = S.publisher(page_blocks)
