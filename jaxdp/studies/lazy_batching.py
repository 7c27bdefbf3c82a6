"""``lazy-batching``: the batching term of the L2P analysis at large horizons.

Spec and claims: ``specs/lazy-batching.toml``; page prose: ``specs/lazy-batching.md``. L2P-MW at the paper's rate-form
settings on alternating batches pays ``(T/4) tanh(eta B / 2) ≈ T B eta / 8`` (docs/algorithms/lazy.md#batching-term),
growing like ``T^{2/3}``; Prop. 3.3 claims a batching term ``T B^2 eta^2`` (``T^{1/3}``). The slope in ``T`` decides.
"""
from __future__ import annotations

import dataclasses
import math
import pathlib

import jax.numpy as jnp
import numpy as np

from ..core import seed_keys, simulate
from ..experts import AlternatingParams, adv_alternating_batches, experts_problem, hedge, hedge_params
from ..experts import alternating_prediction, l2p_mw, l2p_mw_params, l2p_mw_regret_bound, plan_l2p_mw
from .analysis import _pow2, loglog_slope, verdict_table
from .claims import judge_curve, tally
from .framework import Study, fit_slopes, plot_curves, summarize
from .specs import StudySpec

S = StudySpec("lazy-batching", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS = S.doc_page, S.results, S.blocks, S.claims
VERDICT_BLOCK, LEARNERS, TOL, N_BOOT = BLOCKS[2], S.params["learners"].choices, CLAIMS["l2p_paper"].tolerance, 2000
TERMS = ("TBeta_over_8", "tanh_exact", "claimed_TB2eta2", "valid_bound")


def batching_terms(T, B, eta, d):
    """The candidate batching terms of one configuration: ``TBeta_over_8`` (``T B η / 8``), ``tanh_exact``
    (``(T/4) tanh(η B / 2)``, :func:`~jaxdp.experts.alternating_prediction`), ``claimed_TB2eta2`` (``T B² η²``) and
    ``valid_bound`` (``ln d / η + T B η / 8``, :func:`~jaxdp.experts.l2p_mw_regret_bound`), as floats."""
    T, B, eta = float(T), float(B), float(eta)
    return {"TBeta_over_8": T * B * eta / 8, "tanh_exact": float(alternating_prediction(T, eta, B)),
            "claimed_TB2eta2": T * B * B * eta * eta, "valid_bound": float(l2p_mw_regret_bound(d, T, eta, B))}


@S.register
def build(cfg: dict) -> Study:
    """L2P-MW with its rate-mode plan, and per-round multiplicative weights at the same η, against alternating
    batches of length ``B`` at every horizon. Tables: ``summary`` (per ``(learner, T)``, with the plan and the
    candidate terms) and ``slopes`` (the regret's slope in ``T`` with the slopes of the two terms)."""
    d, eps, delta = int(cfg["d"]), float(cfg["eps"]), float(cfg["delta"])

    def run(pts, seeds):
        keys, out, n = seed_keys(int(cfg["seed"]), seeds), [], len(seeds)
        for pt in pts:
            T = int(pt["T"])
            pr = plan_l2p_mw(eps=eps, delta=delta, T=T, d=d, mode="rate").params
            B = int(pr["B"])
            if pt["learner"] == "l2p_paper":
                L, params = l2p_mw(d, B), l2p_mw_params(pr["eta"], pr["p"], B)
            else:  # per-round multiplicative weights with the same eta (no batching)
                L, params = hedge(d), hedge_params(d, T)._replace(eta=jnp.float32(pr["eta"]))
            r = simulate(L, adv_alternating_batches(d), experts_problem(), params, AlternatingParams(B=jnp.int32(B)),
                         keys, T, T_max=T, n_checkpoints=4)
            m = {k: np.asarray(r[k]) for k in ("expected_regret", "regret", "switches")}
            m.update(eta=np.full(n, pr["eta"]), p=np.full(n, pr["p"]), B=np.full(n, float(B)))
            m.update({k: np.full(n, v) for k, v in batching_terms(T, B, pr["eta"], d).items()})
            out.append(m)
        return out

    def analyze(df):
        s = summarize(df, by=["learner", "T"], metrics=["expected_regret", "regret", "switches"])
        first = df.groupby(["learner", "T"], sort=True).first().reset_index()
        for c in ("eta", "p", "B") + TERMS:
            s[c] = first[c].to_numpy()
        s["ratio_to_TBeta8"] = s["expected_regret_mean"] / s["TBeta_over_8"]
        s["ratio_to_claimed"] = s["expected_regret_mean"] / s["claimed_TB2eta2"]
        return {"summary": s, "slopes": slope_fits(df, n_boot=500)}

    def plot(df, outdir: pathlib.Path):
        s = analyze(df)["summary"]
        sl2p = s[s["learner"] == "l2p_paper"].sort_values("T")
        xs = sl2p["T"].to_numpy(float)
        theory = {"T B eta / 8": (xs, sl2p["TBeta_over_8"].to_numpy()),
                  "claimed T B^2 eta^2": (xs, sl2p["claimed_TB2eta2"].to_numpy()),
                  "ln d/eta + T B eta/8": (xs, sl2p["valid_bound"].to_numpy())}
        return [plot_curves(s, x="T", y="expected_regret", hue="learner", path=outdir / "lazy_batching.png",
                            theory=theory, title=f"L2P-MW on alternating batches (d={d}, eps={eps:g})",
                            ylabel="expected regret (mean, 95% CI)")]

    return S.study(cfg, run=run, analyze=analyze, plot=plot, seeds_per_chunk=256, points_per_chunk=1)


def slope_fits(df, n_boot: int = N_BOOT):
    """The realized regret's slope in ``T`` per learner over the whole grid (every horizon uses the same seed keys:
    seed indices resampled jointly across ``T``), with ``slope_TBeta8`` and ``slope_claimed``, the least-squares
    slopes of ``T B η/8`` and ``T B² η²`` over the same ``T``."""
    sl = fit_slopes(df, x="T", y="regret", by=["learner"], upper_half=False, n_boot=n_boot, resample="joint")
    first = df.groupby(["learner", "T"], sort=True).first().reset_index()
    for col, name in (("TBeta_over_8", "slope_TBeta8"), ("claimed_TB2eta2", "slope_claimed")):
        sl[name] = [loglog_slope(g["T"], g[col])
                    for _, g in first.groupby("learner", sort=True)]
    return sl


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
    s = summarize(df, by=["learner", "T"], metrics=["expected_regret", "regret", "switches"])
    first = df.groupby(["learner", "T"], sort=True).first().reset_index()
    for c in TERMS[:3]:
        s[c] = first[c].to_numpy()
    sl = slope_fits(df)
    sl["slope_expected"] = fit_slopes(df, x="T", y="expected_regret", by=["learner"], upper_half=False,
                                      n_boot=10)["slope"]
    v = verdicts(sl)
    lo, hi = float(sl["x_min"].min()), float(sl["x_max"].max())
    return {BLOCKS[0]: S.render(BLOCKS[0], S=int(df.groupby(["learner", "T"])["seed"].nunique().min()),
                            table=S.table("regret", s)),
            BLOCKS[1]: S.render(BLOCKS[1], T_lo=_pow2(s["T"].min()), T_hi=_pow2(s["T"].max()), n_boot=N_BOOT,
                                table=S.table("slopes", sl)),
            VERDICT_BLOCK: S.render(VERDICT_BLOCK, rows=len(v), tol=f"{TOL:g}", T_lo=_pow2(lo), T_hi=_pow2(hi),
                                    decades=f"{math.log10(hi / lo):.2f}", n_boot=N_BOOT, tally=tally(v),
                                    table=verdict_table(v))}


publish = S.publisher(page_blocks)
