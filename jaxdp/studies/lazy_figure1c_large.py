"""``lazy-figure1c-large``: Figure 1(c)'s exponent for L2P-MW on alternating batches at large T.

Spec and claim: ``specs/lazy-figure1c-large.toml``; page prose: ``specs/lazy-figure1c-large.md``. The local slopes of
L2P-MW's realized regret (paper settings, ``ε = T^-α``) over consecutive horizons up to 2^24, beside the model
``ln(d/2)/η + (T/4) tanh(ηB/2)``, whose batching term has the corrected exponent (docs/algorithms/lazy.md).
"""
from __future__ import annotations

import dataclasses
import math
import pathlib

import jax.numpy as jnp
import numpy as np

from jaxdp.core import seed_keys, simulate
from jaxdp.experts import (
    AlternatingParams, adv_alternating_batches, alternating_prediction, alternating_warmup, experts_problem,
    figure1_exponents, l2p_mw, l2p_mw_params, plan_l2p_mw,
)
from jaxdp.studies.analysis import _pow2, fmt_num, verdict_table
from jaxdp.studies.claims import Measurement, Verdict, judge, tally, verdict_row
from jaxdp.studies.framework import Study, fit_slopes, plot_curves, summarize
from jaxdp.studies.specs import StudySpec

S = StudySpec("lazy-figure1c-large", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS = S.doc_page, S.results, S.blocks, S.claims
N_BOOT, MODEL_COLS = 2000, ("warmup_lnd2_over_eta", "tanh_term", "claimed_TB2eta2")


def _exp(a, which: str):
    """The ``"claimed"`` or ``"corrected"`` exponent curve (``curves`` of the study TOML) at α."""
    panel, curve = S.data["curves"][which]
    return figure1_exponents(a, panel)[curve]


def _summary(df, cols=("eta", "B") + MODEL_COLS):
    first = df.groupby(["alpha", "T"], sort=True).first().reset_index()
    return summarize(df, ["alpha", "T"], ["regret", "expected_regret"]).assign(**{c: first[c].to_numpy() for c in cols})


@S.register
def build(cfg: dict) -> Study:
    """L2P-MW (rate mode) on alternating batches at every (α, ``T``); tables ``summary`` and ``local_slopes``."""
    d, delta = int(cfg["d"]), float(cfg["delta"])

    def run(pts, seeds):
        keys, n, out = seed_keys(int(cfg["seed"]), seeds), len(seeds), []
        for pt in pts:
            T = pt["T"]
            pr = plan_l2p_mw(eps=T ** -pt["alpha"], delta=delta, T=T, d=d, mode="rate").params
            B, eta = int(pr["B"]), pr["eta"]
            r = simulate(l2p_mw(d, B), adv_alternating_batches(d), experts_problem(), l2p_mw_params(eta, pr["p"], B),
                         AlternatingParams(B=jnp.int32(B)), keys, T, T_max=T, n_checkpoints=4)
            out.append({"expected_regret": np.asarray(r["expected_regret"]), "regret": np.asarray(r["regret"]),
                        "eta": np.full(n, eta), "B": np.full(n, float(B)),
                        "warmup_lnd2_over_eta": np.full(n, alternating_warmup(d, eta)),
                        "tanh_term": np.full(n, float(alternating_prediction(T, eta, B))),
                        "claimed_TB2eta2": np.full(n, T * B * B * eta * eta)})
        return out

    def analyze(df):
        import pandas as pd

        s = _summary(df)
        s["predicted"] = s["warmup_lnd2_over_eta"] + s["tanh_term"]
        s["ratio_to_predicted"] = s["expected_regret_mean"] / s["predicted"]
        rows, Ts = [], sorted(df["T"].unique())
        for lo, hi in zip(Ts[:-1], Ts[1:]):
            # both horizons use the same seed keys: resample seed indices jointly
            f = fit_slopes(df[df["T"].isin([lo, hi])], "T", "regret", ["alpha"], upper_half=False, resample="joint")
            rows.append(f.assign(beta_claimed=_exp(f["alpha"].to_numpy(), "claimed"),
                                 beta_corrected=_exp(f["alpha"].to_numpy(), "corrected")))
        return {"summary": s, "local_slopes": pd.concat(rows, ignore_index=True)}

    def plot(df, outdir: pathlib.Path):
        sl = analyze(df)["local_slopes"].rename(columns=dict(slope="beta_mean", slope_lo="beta_lo", slope_hi="beta_hi"))
        sl["T"] = np.sqrt(sl["x_min"] * sl["x_max"])
        th = {f"{w}, alpha={a:g}": (lambda T, a=a, w=w: 0 * T + _exp(a, w))
              for a in sorted(sl["alpha"].unique()) for w in ("claimed", "corrected")}
        return [plot_curves(sl, "T", "beta", outdir / "local_exponents.png", hue="alpha", theory=th, logy=False,
                            title="L2P-MW on alternating batches: local regret exponent vs T",
                            ylabel="local slope of log E[regret]")]

    return S.study(cfg, points=S.points({**cfg, "alpha": [float(a) for a in cfg["alpha"]]}), run=run, analyze=analyze,
                   plot=plot, points_per_chunk=1, seeds_per_chunk=256)


def verdicts(slopes):
    """One verdict per local slope (``alpha``, ``x_min``, ``x_max``, the slope columns, ``n_seeds``, ``model_slope``)
    against Figure 1(c)'s exponent by the claims rubric, naming the model's local slope (but where it holds)."""
    import pandas as pd

    rows = []
    for r in slopes.itertuples(index=False):
        c = dataclasses.replace(CLAIMS["l2p_mw"], value=float(_exp(float(r.alpha), "claimed")))
        n = int(r.n_seeds) if "n_seeds" in slopes.columns and np.isfinite(r.n_seeds) else 0
        m = Measurement(float(r.slope), float(r.slope_lo), float(r.slope_hi), n,
                        decades=math.log10(float(r.x_max) / float(r.x_min)))
        v = judge(c, m)
        model = getattr(r, "model_slope", math.nan)
        notes = [v.reason, S.data["claims_notes"]["miss_reason"] if v.verdict == "misses" else "",
                 f"the model ln(d/2)/η + (T/4)tanh(ηB/2) has local slope {fmt_num(model)} here"
                 if np.isfinite(model) and v.verdict != "holds" else ""]
        rows.append(verdict_row(c, m, Verdict(v.verdict, "; ".join(filter(None, notes))),
                                cell=f"α = {r.alpha:g}, T = {_pow2(r.x_min)}–{_pow2(r.x_max)}",
                                experiment="local slope of regret vs T, ε = T^−α"))
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/lazy-figure1c-large``)."""
    import pandas as pd

    df = pd.read_csv(pathlib.Path(results_dir or RESULTS) / "results.csv")
    Ts, fits = sorted(df["T"].unique()), []
    mod = df.groupby(["alpha", "T"])[["warmup_lnd2_over_eta", "tanh_term"]].first().sum(axis=1)
    for a in sorted(df["alpha"].unique()):
        for lo, hi in zip(Ts[:-1], Ts[1:]):
            f = fit_slopes(df[(df["alpha"] == a) & df["T"].isin([lo, hi])], "T", "regret", upper_half=False,
                           n_boot=N_BOOT, resample="joint").iloc[0]
            fits.append(dict(alpha=a, x_min=lo, x_max=hi, slope=f.slope, slope_lo=f.slope_lo, slope_hi=f.slope_hi,
                             n_seeds=f.n_seeds, model_slope=math.log(mod[(a, hi)] / mod[(a, lo)]) / math.log(hi / lo),
                             claimed=float(_exp(a, "claimed")), corrected=float(_exp(a, "corrected"))))
    s = _summary(df, MODEL_COLS)
    s["model"] = s["warmup_lnd2_over_eta"] + s["tanh_term"]
    s["inside"] = (s["regret_lo"] <= s["expected_regret_mean"]) & (s["expected_regret_mean"] <= s["regret_hi"])
    fits = pd.DataFrame(fits)
    v = verdicts(fits)
    return {
        BLOCKS[0]: S.render(BLOCKS[0], S=int(df.groupby(["alpha", "T"])["seed"].nunique().min()), n_boot=N_BOOT,
                            table=S.table("local", fits)),
        BLOCKS[1]: S.render(BLOCKS[1], n_in=int(s["inside"].sum()), n=len(s), table=S.table("model", s),
                            dev=100 * float(np.max(np.abs(s["model"] / s["expected_regret_mean"] - 1)))),
        BLOCKS[2]: S.render(BLOCKS[2], rows=len(v), tally=tally(v), n_boot=N_BOOT, tol=CLAIMS["l2p_mw"].tolerance,
                            decades=math.log10(Ts[1] / Ts[0]), table=verdict_table(v)),
    }


publish = S.publisher(page_blocks)
