"""Study ``lazy-figure1c-large``: Figure 1(c)'s exponent for L2P-MW on alternating batches at large T.

"Private online learning via lazy algorithms", Figure 1(c) and Prop. 3.3 (docs/algorithms/lazy.md#batching-term).
With ``eps = T^-alpha`` and the paper's settings (``B = floor(1/eps)``, ``eta = eps^{2/3} T^{-1/3}``,
``p = eta/eps``), L2P-MW's expected regret on ``adv_alternating_batches`` is about

    ln(d/2)/eta + (T/4) tanh(eta B/2),     ln(d/2)/eta ∝ T^{1/3 + 2 alpha/3},   T B eta/8 ∝ T^{2/3 + alpha/3}.

The first (warm-up) term has exactly the exponent Figure 1(c) claims; the batching term has the
corrected one, and dominates only once ``T^{(1-alpha)/3} > 8 ln(d/2)``: ``T > 2.3·10^5`` at
``alpha = 1/4`` (d = 16), ``10^8`` at ``alpha = 1/2``. ``lazy-figure1c`` stops at ``T = 2^17``; this
study runs L2P-MW alone (block mode, one compilation per horizon) up to ``T = 2^24`` so the local
slope can be seen to move from the claimed to the corrected exponent. Slopes are fitted on the
realized regret (bootstrap CI over seeds) over consecutive pairs of horizons.
"""
from __future__ import annotations

import math
import pathlib

import jax.numpy as jnp
import numpy as np

from jaxdp.core import seed_keys, simulate
from jaxdp.experts import AlternatingParams, adv_alternating_batches, experts_problem
from jaxdp.lazy import alternating_prediction, figure1_exponents, l2p_mw, l2p_mw_params, plan_l2p_mw
from jaxdp.registry import register_study
from jaxdp.studies.framework import Param, Study, declare_params, fit_slopes, plot_curves, summarize


PARAMS = declare_params("lazy-figure1c-large", {
    "seeds": Param("int", lo=1), "seed": Param("int", lo=0), "d": Param("int", lo=2, hi=2 ** 20),
    "delta": Param("float", lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "alpha": Param("float", many=True, lo=0.0, hi=1.0, hi_open=True, help="eps = T^-alpha"),
    "T": Param("int", many=True, lo=2, hi=2 ** 30),
})


@register_study(
    "lazy-figure1c-large",
    defaults={"seeds": 256, "d": 16, "delta": 1e-6, "seed": 0, "alpha": [0.25, 0.5],
              "T": [2 ** 14, 2 ** 16, 2 ** 18, 2 ** 20, 2 ** 22, 2 ** 24]},
    quick={"seeds": 8, "alpha": [0.25], "T": [2 ** 10, 2 ** 12, 2 ** 14]},
    description="LAZY Figure 1(c) at large T: L2P-MW (paper settings, eps = T^-alpha) on alternating batches, "
                "local regret exponents moving from the claimed to the corrected curve")
def build(cfg: dict) -> Study:
    """The ``lazy-figure1c-large`` study: L2P-MW (rate-mode plan, ``ε = T^{-α}``) on alternating
    batches at every (α, ``T``), one point per chunk.

    Args:
        cfg: the resolved configuration: ``d``, ``delta``, the ``alpha`` and ``T`` grids, seeds and
            the root seed.

    Returns:
        The :class:`jaxdp.studies.Study`; its tables are ``summary`` (regrets per (α, ``T``) with the
        warm-up and batching terms and their sum, ``predicted``) and ``local_slopes`` (the slope over
        each pair of consecutive horizons, with the claimed and corrected exponents).
    """
    d, delta = int(cfg["d"]), float(cfg["delta"])
    points = [{"alpha": float(a), "T": int(T)} for a in cfg["alpha"] for T in cfg["T"]]

    def run(pts, seeds):
        keys = seed_keys(int(cfg["seed"]), seeds)
        out = []
        for pt in pts:
            T, a = pt["T"], pt["alpha"]
            eps = T ** -a
            pr = plan_l2p_mw(eps=eps, delta=delta, T=T, d=d, mode="rate").params
            B = int(pr["B"])
            r = simulate(l2p_mw(d, B), adv_alternating_batches(d), experts_problem(), l2p_mw_params(pr["eta"], pr["p"], B),
                         AlternatingParams(B=jnp.int32(B)), keys, T, T_max=T, n_checkpoints=4)
            n = len(seeds)
            eta = pr["eta"]
            out.append({"expected_regret": np.asarray(r["expected_regret"]), "regret": np.asarray(r["regret"]),
                        "eta": np.full(n, eta), "B": np.full(n, float(B)),
                        "warmup_lnd2_over_eta": np.full(n, math.log(d / 2) / eta),
                        "tanh_term": np.full(n, float(alternating_prediction(T, eta, B))),
                        "claimed_TB2eta2": np.full(n, T * B * B * eta * eta)})
        return out

    def analyze(df):
        s = summarize(df, ["alpha", "T"], ["regret", "expected_regret"])
        first = df.groupby(["alpha", "T"], sort=True).first().reset_index()
        for c in ("eta", "B", "warmup_lnd2_over_eta", "tanh_term", "claimed_TB2eta2"):
            s[c] = first[c].to_numpy()
        s["predicted"] = s["warmup_lnd2_over_eta"] + s["tanh_term"]
        s["ratio_to_predicted"] = s["expected_regret_mean"] / s["predicted"]
        rows = []
        Ts = sorted(df["T"].unique())
        for lo, hi in zip(Ts[:-1], Ts[1:]):
            sub = df[df["T"].isin([lo, hi])]
            f = fit_slopes(sub, "T", "regret", ["alpha"], upper_half=False)
            f["beta_claimed"] = figure1_exponents(f["alpha"].to_numpy(), "c")["L2P"]
            f["beta_corrected"] = figure1_exponents(f["alpha"].to_numpy(), "c'")["L2P printed, alternating"]
            rows.append(f)
        import pandas as pd

        return {"summary": s, "local_slopes": pd.concat(rows, ignore_index=True)}

    def plot(df, outdir: pathlib.Path):
        sl = analyze(df)["local_slopes"].rename(columns={"slope": "beta_mean", "slope_lo": "beta_lo", "slope_hi": "beta_hi"})
        sl["T"] = np.sqrt(sl["x_min"] * sl["x_max"])
        al = sorted(sl["alpha"].unique())
        th = {}
        for a in al:
            th[f"claimed, alpha={a:g}"] = (lambda T, a=a: 0 * T + figure1_exponents(a, "c")["L2P"])
            th[f"corrected, alpha={a:g}"] = (lambda T, a=a: 0 * T + figure1_exponents(a, "c'")["L2P printed, alternating"])
        return [plot_curves(sl, "T", "beta", outdir / "local_exponents.png", hue="alpha", theory=th, logy=False,
                            title="L2P-MW on alternating batches: local regret exponent vs T",
                            ylabel="local slope of log E[regret]")]

    return Study(name="lazy-figure1c-large", points=points, seeds=int(cfg["seeds"]), run=run, group_by=("alpha", "T"),
                 analyze=analyze, plot=plot, config=cfg, points_per_chunk=1, seeds_per_chunk=256,
                 description="LAZY Figure 1(c) at large T (alternating batches)")
