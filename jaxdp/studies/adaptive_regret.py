"""``adaptive-regret``: every experts and OCO learner against the oblivious instance and the adaptive adversaries.

Spec and claims: ``specs/adaptive-regret.toml``; page prose: ``specs/adaptive-regret.md``. Each (learner, adversary)
curve runs every ``T`` on the same seed keys (common random numbers, also across learners: an adaptive adversary's
losses differ between learners only through what it saw). The verdicts (:func:`verdicts`) judge each cell against
the learner's oblivious bound in the library: regret / bound at every ``T`` where the bound carries its constant,
and the log-log slope against the bound's own slope over the fitted range.
"""
from __future__ import annotations

import functools
import pathlib

import numpy as np

from ..oco.adaptive import ADAPTIVE_OCO_LEARNERS, adaptive_adversary, adaptive_learner, tuned_oblivious_bound
from .analysis import verdict_table
from .claims import judge_curve, tally
from .framework import Study, fit_slopes, summarize
from .plots import plot_figures
from .specs import StudySpec, curve_slopes, kept_manifest

S = StudySpec("adaptive-regret", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS = S.doc_page, S.results, S.blocks, S.claims
BY, N_BOOT, OCO = ["learner", "adversary"], 1000, ADAPTIVE_OCO_LEARNERS
ADAPTIVE = {"punish_last", "switch_watcher", "adaptive_epochs", "toward_last"}


def dim(cfg: dict, learner: str) -> int:
    """The dimension of ``learner``'s class: ``oco_d`` for the OCO learners, the number of experts ``d`` otherwise."""
    return int(cfg["oco_d"] if learner in OCO else cfg["d"])


def points(cfg: dict) -> list:
    """Experts learners × the experts adversaries, OCO learners × the OCO adversaries, × ``T``."""
    return [{"learner": ln, "adversary": a, "T": int(T)} for ln in cfg["learners"]
            for a in (cfg["oco_adversaries"] if ln in OCO else cfg["adversaries"]) for T in cfg["T"]]


@S.register
def build(cfg: dict) -> Study:
    """Every learner × its class's adversaries × ``T``, one compiled run per point. Tables: ``summary`` (per point:
    regret, regret / bound, L*, switches) and ``slopes``."""
    from ..core import seed_keys, simulate

    eps, delta = float(cfg["eps"]), float(cfg["delta"])
    adversary = functools.partial(adaptive_adversary, epoch_len=cfg["epoch_len"], patience=cfg["patience"],
                                  bias=cfg["bias"])
    T_run = max(int(t) for t in cfg["T"])
    n_ck = T_run.bit_length()   # checkpoint_rounds(T_run, n_ck): every power of two up to T_run

    def run(pts, seeds):
        # one run of horizon T_run per (learner, adversary); each point reads the regret at its round T
        pt, keys = pts[0], seed_keys(int(cfg["seed"]), seeds)
        d = dim(cfg, pt["learner"])
        L, params, bound = adaptive_learner(pt["learner"], d, T_run, eps, delta)
        adv, ap, prob = adversary(pt["adversary"], d, T_run)
        r = simulate(L, adv, prob, params, ap, keys, T_run, n_checkpoints=n_ck)
        at = {int(t): i for i, t in enumerate(r["checkpoint_rounds"])}
        best = np.asarray(r["best_loss"], float)
        sw = np.asarray(r.get("switches", np.zeros(len(seeds))), float)
        out = []
        for p in pts:
            T = int(p["T"])
            reg = np.asarray(r["regret_ckpt"], float)[:, at[T]]
            b = bound(T, best * T / T_run) if bound is not None else np.full(len(seeds), np.nan)
            out.append({"regret": reg, "best_loss": best, "bound": b, "ratio": reg / b, "switches": sw})
        return out

    def analyze(df):
        summ = summarize(df, BY + ["T"], ["regret", "ratio", "bound", "best_loss", "switches"])
        return {"slopes": slopes(df, cfg), "summary": summ}

    def plot(df, outdir):   # [[figures]]; a mean regret below 1e-3 is drawn at 1e-3 (a log axis)
        return plot_figures(df, outdir, S.data["figures"], {}, summary=lambda rows, keys, ys: summarize(
            rows, keys, ys).pipe(lambda s: s.assign(regret_mean=np.maximum(s["regret_mean"], 1e-3))))

    def check_point(p):
        if int(p["T"]) & (int(p["T"]) - 1):
            raise ValueError(f"adaptive-regret: every T must be a power of two (a checkpoint), got {p['T']}")
        adaptive_learner(p["learner"], dim(cfg, p["learner"]), T_run, eps, delta)
        adversary(p["adversary"], dim(cfg, p["learner"]), T_run)

    return S.study(cfg, points=points(cfg), run=run, check_point=check_point, analyze=analyze, plot=plot,
                   seeds_per_chunk=int(cfg["seeds_per_chunk"]))


def slopes(df, cfg: dict, bound=None):
    """Per (learner, adversary): the log-log slope of the mean regret in ``T`` over every ``T`` (joint bootstrap over
    seed indices) and ``bound_slope``, the log-log slope over the same ``T`` of ``bound(learner, T, L*_T)``, default
    the learner's oblivious bound tuned for each horizon (:func:`jaxdp.oco.adaptive.tuned_oblivious_bound`; ``L*_T``
    scales the run's mean best loss by ``T/T_run``; NaN where the bound is NaN)."""
    sl = fit_slopes(df, "T", "regret", by=BY, upper_half=False, n_boot=N_BOOT, resample="joint")
    pts = df[BY + ["T"]].drop_duplicates().merge(df.groupby(BY, as_index=False)["best_loss"].mean(), on=BY)
    bound = bound or (lambda ln, T, L: tuned_oblivious_bound(ln, dim(cfg, ln), T, float(cfg["eps"]),
                                                             float(cfg["delta"]), L))
    pts["tuned"] = [bound(r.learner, int(r.T), float(r.best_loss) * int(r.T) / int(df["T"].max()))
                    for r in pts.itertuples(index=False)]
    return curve_slopes(sl, pts, "T", {"bound_slope": "tuned"}, BY)


def verdicts(df, cfg: dict, bound=None):
    """Per (learner, adversary) cell: ``regret / bound`` at every ``T`` (claims of kind ``bound``; the bound at the
    run's parameters) and the slope against ``bound_slope``, the exponent of the bound tuned for each horizon (at
    most); a learner without a bound, or whose bound does not apply, gets a ``not tested`` row."""
    import dataclasses

    import pandas as pd

    summ, rows = summarize(df, BY + ["T"], ["ratio"]), []
    for r in slopes(df, cfg, bound).itertuples(index=False):
        c, cell = CLAIMS.get(r.learner), f"{r.learner}, {r.adversary}"
        if c is None or not np.isfinite(r.bound_slope):
            why = "no regret bound for this learner in the library" if c is None else \
                "its bound holds for realizable streams (L* = 0) only; here L* > 0"
            rows.append(judge_curve(None, r, experiment="regret vs T", cell=cell,
                                    no_claim=(c.text if c else "no bound stated", why)))
            continue
        if c.kind == "bound":
            g = summ[(summ["learner"] == r.learner) & (summ["adversary"] == r.adversary)].sort_values("T")
            rows.append(judge_curve(c, points=g, bound=np.ones(len(g)), stem="ratio", experiment="regret / bound",
                                    cell=cell))
        rate = dataclasses.replace(c, kind="at_most_rate", value=round(float(r.bound_slope), 3))
        rows.append(judge_curve(rate, r, experiment="regret vs T (slope ≤ the bound's)", cell=cell))
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/adaptive-regret``)."""
    import pandas as pd

    df = pd.read_csv(pathlib.Path(results_dir or RESULTS) / "results.csv")
    cfg = kept_manifest(results_dir or RESULTS)["config"]
    summ = summarize(df, BY + ["T"], ["regret", "ratio", "best_loss", "switches"])
    last = summ.sort_values("T").groupby(BY).tail(1)
    rows = slopes(df, cfg).merge(last, on=BY, how="left")
    xs = sorted(df["T"].unique())
    table = S.table("slopes", rows, adaptive=sorted(ADAPTIVE), T_hi=xs[-1])
    v = verdicts(df, cfg)
    n = int(df.groupby(BY + ["T"])["seed"].nunique().min())
    return {BLOCKS[0]: S.render(BLOCKS[0], cells=len(rows), S=n, T_lo=int(xs[0]), T_hi=int(xs[-1]), n_boot=N_BOOT,
                                table=table),
            BLOCKS[1]: S.render(BLOCKS[1], rows=len(v), tally=tally(v), table=verdict_table(v))}


publish = S.publisher(page_blocks)
