"""``lazy-batching``: the batching term of the L2P analysis at large horizons.

Spec and claims: ``specs/lazy-batching.toml``; page prose: ``specs/lazy-batching.md``. L2P-MW at the paper's rate-form
settings on alternating batches pays ``(T/4) tanh(eta B / 2) ≈ T B eta / 8`` (docs/algorithms/lazy.md#batching-term),
growing like ``T^{2/3}``; Prop. 3.3 claims a batching term ``T B^2 eta^2`` (``T^{1/3}``). The slope in ``T`` decides.
"""
from __future__ import annotations

import dataclasses
import math
import pathlib

import numpy as np

from ..core import seed_keys
from ..experts.lazy_setups import alternating_batches_run
from .analysis import _pow2, summarize, verdict_table
from .claims import judge_curve, tally
from .framework import Study, fit_slopes, plot_curves
from .specs import StudySpec, curve_slopes

S = StudySpec("lazy-batching", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS = S.doc_page, S.results, S.blocks, S.claims
VERDICT_BLOCK, LEARNERS, TOL, N_BOOT = BLOCKS[2], S.params["learners"].choices, CLAIMS["l2p_paper"].tolerance, 2000
TERMS = ("TBeta_over_8", "tanh_exact", "claimed_TB2eta2", "valid_bound")   # lazy_setups.batching_terms


def summary(df):
    """Per ``(learner, T)``: the regret's summary with the plan (``eta``, ``p``, ``B``), the candidate terms and
    E[regret]'s ratios to ``T B η/8`` and to the claimed ``T B² η²``."""
    s = summarize(df, ["learner", "T"], ["expected_regret", "regret", "switches"], constants=("eta", "p", "B") + TERMS)
    return s.assign(ratio_to_TBeta8=s["expected_regret_mean"] / s["TBeta_over_8"],
                    ratio_to_claimed=s["expected_regret_mean"] / s["claimed_TB2eta2"])


@S.register
def build(cfg: dict) -> Study:
    """L2P-MW with its rate-mode plan, and per-round multiplicative weights at the same η, against alternating
    batches of length ``B`` at every horizon (:func:`~jaxdp.experts.lazy_setups.alternating_batches_run`). Tables:
    ``summary`` (:func:`summary`) and ``slopes`` (:func:`slope_fits`)."""
    d, eps, delta = int(cfg["d"]), float(cfg["eps"]), float(cfg["delta"])

    def run(pts, seeds):   # per point its run_columns, a plan's value or a term repeated per seed
        keys = seed_keys(int(cfg["seed"]), seeds)
        runs = [alternating_batches_run(keys, d, int(pt["T"]), eps, delta, pt["learner"]) for pt in pts]
        return [{k: np.broadcast_to(r[k], len(seeds)) for k in S.data["run_columns"]} for r in runs]

    def plot(df, outdir: pathlib.Path):
        s = summary(df)
        sl2p = s[s["learner"] == "l2p_paper"].sort_values("T")
        xs = sl2p["T"].to_numpy(float)
        theory = {label: (xs, sl2p[col].to_numpy()) for label, col in S.data["plot_terms"].items()}
        return [plot_curves(s, x="T", y="expected_regret", hue="learner", path=outdir / "lazy_batching.png",
                            theory=theory, title=f"L2P-MW on alternating batches (d={d}, eps={eps:g})",
                            ylabel="expected regret (mean, 95% CI)")]

    def analyze(df):
        s = summary(df)
        return {"summary": s, "slopes": slope_fits(df, s, n_boot=500)}

    return S.study(cfg, run=run, analyze=analyze, plot=plot, seeds_per_chunk=256, points_per_chunk=1)


def slope_fits(df, points, n_boot: int = N_BOOT):
    """The realized regret's slope in ``T`` per learner over the whole grid (every horizon uses the same seed keys:
    seed indices resampled jointly across ``T``), with ``slope_TBeta8`` and ``slope_claimed``, the least-squares
    slopes of ``T B η/8`` and ``T B² η²`` over the same ``T`` (``points``: the per-point table, :func:`summary`)."""
    sl = fit_slopes(df, x="T", y="regret", by=["learner"], upper_half=False, n_boot=n_boot, resample="joint")
    return curve_slopes(sl, points, "T", {"slope_TBeta8": "TBeta_over_8", "slope_claimed": "claimed_TB2eta2"},
                        ["learner"])


def verdicts(slopes):
    """One verdict row per fitted learner of the slopes table (:func:`~jaxdp.studies.claims.judge_curve`; the
    claimed exponent: its ``claimed_column``)."""
    import pandas as pd

    rows = []
    for r in slopes.itertuples(index=False):
        c = dataclasses.replace(CLAIMS[r.learner], value=float(getattr(r, S.data["claimed_column"][r.learner])))
        rows.append(judge_curve(c, r, experiment="regret vs T", cell=str(r.learner)))
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/lazy-batching``)."""
    import pandas as pd

    df = pd.read_csv(pathlib.Path(results_dir or RESULTS) / "results.csv")
    s = summary(df)
    sl = slope_fits(df, s)
    sl["slope_expected"] = fit_slopes(df, x="T", y="expected_regret", by=["learner"], upper_half=False,
                                      n_boot=10)["slope"]
    v = verdicts(sl)
    lo, hi = float(sl["x_min"].min()), float(sl["x_max"].max())
    return {BLOCKS[0]: S.render(BLOCKS[0], S=int(s["n_seeds"].min()), table=S.table("regret", s)),
            BLOCKS[1]: S.render(BLOCKS[1], T_lo=_pow2(s["T"].min()), T_hi=_pow2(s["T"].max()), n_boot=N_BOOT,
                                table=S.table("slopes", sl)),
            VERDICT_BLOCK: S.render(VERDICT_BLOCK, rows=len(v), tol=f"{TOL:g}", T_lo=_pow2(lo), T_hi=_pow2(hi),
                                    decades=f"{math.log10(hi / lo):.2f}", n_boot=N_BOOT, tally=tally(v),
                                    table=verdict_table(v))}


publish = S.publisher(page_blocks)
