"""``lazy-figure1c-large``: Figure 1(c)'s exponent for L2P-MW on alternating batches at large T.

Spec and claim: ``specs/lazy-figure1c-large.toml``; page prose: ``specs/lazy-figure1c-large.md``. The local slopes of
L2P-MW's realized regret (paper settings, ``ε = T^-α``) over consecutive horizons up to 2^24, beside the model
``ln(d/2)/η + (T/4) tanh(ηB/2)``, whose batching term has the corrected exponent (docs/algorithms/lazy.md).
"""
from __future__ import annotations

import dataclasses
import math
import pathlib

import numpy as np

from jaxdp.core import seed_keys
from jaxdp.experts import figure1_exponents
from jaxdp.experts.lazy_setups import alternating_batches_run
from jaxdp.studies.analysis import _pow2, fmt_num, summarize, verdict_table
from jaxdp.studies.claims import judge_curve, tally
from jaxdp.studies.framework import Study, fit_slopes
from jaxdp.studies.plots import plot_figures
from jaxdp.studies.specs import StudySpec, curve_slopes

S = StudySpec("lazy-figure1c-large", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS, NOTES = S.doc_page, S.results, S.blocks, S.claims, S.data["claims_notes"]
N_BOOT, MODEL_COLS = 2000, ("warmup_lnd2_over_eta", "tanh_term", "claimed_TB2eta2")
BETA = {"slope": "beta_mean", "slope_lo": "beta_lo", "slope_hi": "beta_hi"}   # a local slope as the figure's mean, CI


def _exp(a, which: str):
    """The ``"claimed"`` or ``"corrected"`` exponent curve (``curves`` of the study TOML) at α."""
    panel, curve = S.data["curves"][which]
    return figure1_exponents(a, panel)[curve]


def summary(df):
    """Per (α, ``T``): the regret's summary, the plan's η and B, the model's terms, ``predicted`` (their sum),
    ``ratio_to_predicted`` and ``inside`` (E[regret] within the realized regret's interval)."""
    s = summarize(df, ["alpha", "T"], ["regret", "expected_regret"], constants=("eta", "B") + MODEL_COLS)
    s["predicted"] = s["warmup_lnd2_over_eta"] + s["tanh_term"]
    s["ratio_to_predicted"] = s["expected_regret_mean"] / s["predicted"]
    return s.assign(inside=(s["regret_lo"] <= s["expected_regret_mean"]) & (s["expected_regret_mean"] <= s["regret_hi"]))


def local_fits(df, n_boot: int = N_BOOT):
    """Per α, the realized regret's local slopes between consecutive horizons (both use the same seed keys: seed
    indices resampled jointly), with the model's local slope ``model_slope`` and Figure 1(c)'s ``beta_claimed`` and
    ``beta_corrected`` exponents at α."""
    import pandas as pd

    Ts = sorted(df["T"].unique())
    f = pd.concat([fit_slopes(g[g["T"].isin([lo, hi])], "T", "regret", ["alpha"], upper_half=False, n_boot=n_boot,
                              resample="joint") for _, g in df.groupby("alpha") for lo, hi in zip(Ts[:-1], Ts[1:])])
    f = curve_slopes(f.reset_index(drop=True), summary(df), "T", {"model_slope": "predicted"}, ["alpha"])
    return f.assign(beta_claimed=_exp(f["alpha"].to_numpy(), "claimed"),
                    beta_corrected=_exp(f["alpha"].to_numpy(), "corrected"))


@S.register
def build(cfg: dict) -> Study:
    """L2P-MW (rate mode) on alternating batches at every (α, ``T``); tables ``summary`` and ``local_slopes``."""
    d, delta = int(cfg["d"]), float(cfg["delta"])

    def run(pts, seeds):   # per point its run_columns, a plan's value or a term repeated per seed
        keys, cols = seed_keys(int(cfg["seed"]), seeds), S.data["run_columns"]
        runs = [alternating_batches_run(keys, d, pt["T"], pt["T"] ** -pt["alpha"], delta) for pt in pts]
        return [{c: np.broadcast_to(r[k], len(seeds)) for c, k in cols.items()} for r in runs]

    def plot(df, outdir: pathlib.Path):   # [[figures]]: the local exponents, each at its horizons' geometric mean
        return plot_figures(df, outdir, S.data["figures"], {"exponent": _exp}, summary=lambda rows, *_: local_fits(
            rows, 500).rename(columns=BETA).assign(T=lambda s: np.sqrt(s["x_min"] * s["x_max"])))

    return S.study(cfg, points=S.points({**cfg, "alpha": [float(a) for a in cfg["alpha"]]}), run=run, plot=plot,
                   analyze=lambda df: {"summary": summary(df), "local_slopes": local_fits(df, 500)},
                   points_per_chunk=1, seeds_per_chunk=256)


def verdicts(fits):
    """One verdict per local slope (:func:`local_fits` rows) against Figure 1(c)'s exponent at its α by the claims
    rubric (:func:`~jaxdp.studies.claims.judge_curve`); a miss says why (``miss_reason``), and a row that does not
    hold names the model's local slope ``model_slope``."""
    import pandas as pd

    rows = []
    for r in fits.itertuples(index=False):
        c = dataclasses.replace(CLAIMS["l2p_mw"], value=float(_exp(float(r.alpha), "claimed")))
        cell = f"α = {r.alpha:g}, T = {_pow2(r.x_min)}–{_pow2(r.x_max)}"
        v = judge_curve(c, r, experiment=NOTES["experiment"], cell=cell)
        model = NOTES["model"].format(fmt_num(r.model_slope)) if np.isfinite(r.model_slope) else ""
        notes = [v["reason"], NOTES["miss_reason"] if v["verdict"] == "misses" else "",
                 "" if v["verdict"] == "holds" else model]
        rows.append({**v, "reason": "; ".join(filter(None, notes))})
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/lazy-figure1c-large``)."""
    import pandas as pd

    df = pd.read_csv(pathlib.Path(results_dir or RESULTS) / "results.csv")
    fits, s, Ts = local_fits(df), summary(df), sorted(df["T"].unique())
    v = verdicts(fits)
    return {
        BLOCKS[0]: S.render(BLOCKS[0], S=int(s["n_seeds"].min()), n_boot=N_BOOT, table=S.table("local", fits)),
        BLOCKS[1]: S.render(BLOCKS[1], n_in=int(s["inside"].sum()), n=len(s), table=S.table("model", s),
                            dev=100 * float(np.max(np.abs(s["predicted"] / s["expected_regret_mean"] - 1)))),
        BLOCKS[2]: S.render(BLOCKS[2], rows=len(v), tally=tally(v), n_boot=N_BOOT, tol=CLAIMS["l2p_mw"].tolerance,
                            decades=math.log10(Ts[1] / Ts[0]), table=verdict_table(v)),
    }


publish = S.publisher(page_blocks)
