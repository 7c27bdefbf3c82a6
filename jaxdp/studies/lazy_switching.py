"""Study ``lazy-switching``: L2P switching behaviour and the lower bound for lazy algorithms (spec §9.1 Z5, Z8).

* Z5: real switches (``S_s = 0``), fake switches (``S'_s = 0``), shadow
  resamples and model changes of L2P-MW (paper settings, ``mode="rate"``) vs
  T at fixed eps; predictions ``n_yres ≈ n_batches p``, ``n_fake ≈ p (n_batches - n_real)``,
  ``n_real ≈ n_batches (1 - E[min(1, e^{Delta - 2 B eta})])``.
* Z8: on the lower-bound adversary ``adv_lazy_epochs`` (Thm 4.2), regret of
  the lazy algorithms (L2P-MW, ``private_lazy_sketch``) divided by
  ``T^{1/3} eps^{-2/3}`` stays bounded below, while the binary-tree baseline
  ``tree_ftrl_experts`` (not low-switching) is not bound by it.

The marginal check (Z7) is a unit test (``tests/test_lazy_l2p.py::test_marginal_equals_mw``).
"""
from __future__ import annotations

import math
import pathlib

import jax.numpy as jnp
import numpy as np

from jaxdp.core import seed_keys, simulate
from jaxdp.experts import LazyEpochsParams, adv_lazy_epochs, experts_problem
from jaxdp.lazy import tree_ftrl_experts, tree_ftrl_params
from jaxdp.registry import register_study
from jaxdp.studies.framework import Study, plot_curves, summarize
from jaxdp.studies.lazy_figure1c import learner_and_params


@register_study(
    "lazy-switching",
    defaults={"seeds": 64, "d": 16, "T": [1024, 2048, 4096, 8192, 16384, 32768, 65536], "eps": [0.05, 0.2],
              "delta": 1e-6, "seed": 0, "learners": ["l2p_paper", "sketch", "tree"]},
    quick={"seeds": 8, "d": 8, "T": [512, 1024, 2048], "eps": [0.1], "learners": ["l2p_paper", "tree"]},
    description="L2P switches / fake switches / shadow resamples vs T (Z5) and the lazy lower bound vs the "
                "binary-tree baseline (Z8)")
def build(cfg: dict) -> Study:
    d, Ts = int(cfg["d"]), [int(t) for t in cfg["T"]]
    T_max = max(Ts)
    points = [{"learner": ln, "eps": float(e), "T": T} for ln in cfg["learners"] for e in cfg["eps"] for T in Ts]

    def run(pts, seeds):
        keys = seed_keys(int(cfg["seed"]), seeds)
        out = []
        for pt in pts:
            T, eps = int(pt["T"]), float(pt["eps"])
            if pt["learner"] == "tree":
                L, params, info = tree_ftrl_experts(d, T_max), tree_ftrl_params(d, T, eps, float(cfg["delta"]),
                                                                                T_max=T_max), {"p": 0.0, "B": 1}
            else:
                L, params, info = learner_and_params(pt["learner"], d, T, eps, float(cfg["delta"]))
            ap = LazyEpochsParams(T=jnp.int32(T), eps=jnp.float32(eps), epoch_len=jnp.int32(0))
            r = simulate(L, adv_lazy_epochs(d), experts_problem(), params, ap, keys, T, T_max=T_max, n_checkpoints=4)
            n = len(seeds)
            m = {"expected_regret": r["expected_regret"], "switches": r["switches"].astype(float),
                 "lb_ratio": r["expected_regret"] / (T ** (1 / 3) * eps ** (-2 / 3))}
            for k in ("n_real", "n_fake", "n_yres", "n_batches"):
                m[k] = r[k].astype(float) if k in r else np.zeros(n)
            m["p"] = np.full(n, float(info.get("p", 0.0)))
            out.append(m)
        return out

    def analyze(df):
        s = summarize(df, by=["learner", "eps", "T"],
                      metrics=["expected_regret", "lb_ratio", "switches", "n_real", "n_fake", "n_yres", "n_batches", "p"])
        s["n_yres_pred"] = s["n_batches_mean"] * s["p_mean"]
        s["n_fake_pred"] = (s["n_batches_mean"] - s["n_real_mean"]) * s["p_mean"]
        cols = ["learner", "eps", "T", "expected_regret_mean", "lb_ratio_mean", "switches_mean", "n_real_mean",
                "n_fake_mean", "n_fake_pred", "n_yres_mean", "n_yres_pred"]
        return {"switching": s[cols], "summary": s}

    def plot(df, outdir: pathlib.Path):
        s = analyze(df)["summary"]
        s["curve"] = s["learner"] + " eps=" + s["eps"].astype(str)
        paths = [plot_curves(s, x="T", y="lb_ratio", hue="curve", path=outdir / "lazy_lb_ratio.png",
                             title="regret / (T^{1/3} eps^{-2/3}) on adv_lazy_epochs (Thm 4.2)")]
        sl = s[s["learner"] != "tree"]
        if len(sl):
            paths.append(plot_curves(sl, x="T", y="switches", hue="curve", path=outdir / "lazy_switches.png",
                                     title="L2P model changes vs T"))
        return paths

    return Study(name="lazy-switching", points=points, seeds=int(cfg["seeds"]), run=run,
                 group_by=("learner",), analyze=analyze, plot=plot, config=cfg,
                 description="L2P switching and the lazy lower bound")
