"""Study ``label-dp-rates``: LABEL Table 1 measured (spec §9.4, L1–L6 and L8).

Excess risk vs N for local, central and non-private learners in classification (L1), bounded
regression (L2) and heavy-tailed regression for several p (L3, L8); fitted log-log slopes with
bootstrap CIs against Table 1's exponents; the central crossover ``N_c = ε^{-b/(b-a)}`` (L4); local's
ε²N effective sample size (L5: excess vs ε at fixed N); vector RR vs K-ary RR as K grows (L6).
Hyperparameters from the theorems in ``rate`` mode (``jaxdp.label_dp.planners.plan_for``).
"""
from __future__ import annotations

import pathlib

import numpy as np

from jaxdp.core import seed_keys
from jaxdp.label_dp import (
    LabelParams, gen_heavy_tail_regression, gen_smooth_classification, gen_smooth_regression, label_rates,
    make_estimator, run_grid,
)
from jaxdp.label_dp.planners import plan_for
from jaxdp.label_dp.rates import label_rate_exponent
from jaxdp.registry import register_study
from jaxdp.studies.framework import Study, fit_slopes, plot_curves, summarize

METHODS = {
    "classification": ("local_rr_vector", "central_exp_bins", "nonprivate_bins_cls"),
    "regression": ("local_laplace_knn", "central_bins_laplace", "nonprivate_knn"),
    "heavy": ("local_laplace_knn_clipped", "central_bins_laplace_clipped", "nonprivate_knn"),
}
SETTING = lambda m: "local" if m.startswith("local") else ("central" if m.startswith("central") else "nonprivate")


def _gen(task, p, K):
    if task == "classification":
        return gen_smooth_classification(1, int(K), random_phase=True)
    if task == "regression":
        return gen_smooth_regression(1)
    return gen_heavy_tail_regression(1, float(p), "student_t")


@register_study("label-dp-rates", defaults={
    "seeds": 32, "seed": 0, "N": [1000, 3000, 10000, 30000, 100000], "eps": [0.1, 1.0], "p": [2.0, 3.0, 4.0, 8.0],
    "K": [2, 4, 8, 16, 32], "eps_sweep": [0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0], "N_fixed": 10000, "M": 2000,
    "bins_max": 512,
}, quick={"seeds": 4, "N": [1000, 3000, 10000], "eps": [0.5], "p": [4.0], "K": [2, 8],
          "eps_sweep": [0.1, 0.5, 2.0], "N_fixed": 3000, "M": 300},
    description="LABEL Table 1: excess risk vs N (local / central / non-private), slopes vs theory, crossover, "
                "eps^2 N effective samples, K-dependence of vector vs K-ary RR")
def build(cfg: dict) -> Study:
    pts = []
    for task in ("classification", "regression", "heavy"):
        ps = cfg["p"] if task == "heavy" else [0.0]
        for p in ps:
            for m in METHODS[task]:
                for eps in (cfg["eps"] if not m.startswith("nonprivate") else [float("inf")]):
                    for N in cfg["N"]:
                        pts.append(dict(experiment={"classification": "L1", "regression": "L2"}.get(task, "L3"),
                                        task=task, method=m, N=int(N), eps=float(eps), p=float(p), K=2))
    for m, task in (("local_rr_vector", "classification"), ("local_laplace_knn", "regression")):
        for eps in cfg["eps_sweep"]:
            pts.append(dict(experiment="L5", task=task, method=m, N=int(cfg["N_fixed"]), eps=float(eps), p=0.0, K=2))
    for K in cfg["K"]:
        for m in ("local_rr_vector", "local_rr_kary"):
            pts.append(dict(experiment="L6", task="classification", method=m, N=int(cfg["N_fixed"]), eps=1.0,
                            p=0.0, K=int(K)))
    N_max = int(max(max(cfg["N"]), cfg["N_fixed"]))

    def run(points, seeds):
        p0 = points[0]
        gen = _gen(p0["task"], p0["p"], p0["K"])
        fn = make_estimator(gen, p0["method"], N_max=N_max, M=int(cfg["M"]), bins_max=int(cfg["bins_max"]))
        kw = {"p": p0["p"]} if p0["task"] == "heavy" else {}
        if p0["task"] == "classification":
            kw["K"] = p0["K"]
        plans = [plan_for(pt["method"], N=pt["N"], eps=pt["eps"] if np.isfinite(pt["eps"]) else 1e300,
                          mode="rate", **kw) for pt in points]
        prm = LabelParams(*[np.asarray([pl[f] for pl in plans]) for f in ("eps", "bins", "k", "clip")])
        prm = prm._replace(eps=np.asarray([pt["eps"] for pt in points]))
        out = run_grid(fn, seed_keys(int(cfg["seed"]), seeds), np.asarray([pt["N"] for pt in points]), prm)
        return [{"excess": out["excess"][i]} for i in range(len(points))]

    def analyze(df):
        import pandas as pd

        main = df[df.experiment.isin(["L1", "L2", "L3"])]
        sl = fit_slopes(main, "N", "excess", by=["experiment", "task", "method", "eps", "p"], upper_half=False)
        rows = []
        for _, r in sl.iterrows():
            e = label_rate_exponent(r.task, SETTING(r.method), p=r.p if r.task == "heavy" else 2.0)
            rows.append({"theory_stat": -e["stat"], "theory_priv": -e["priv"]})
        sl = pd.concat([sl.reset_index(drop=True), pd.DataFrame(rows)], axis=1)
        cross = []
        for task in ("classification", "regression", "heavy"):
            for p in (sorted(set(df[df.task == "heavy"].p)) if task == "heavy" else [2.0]):
                e = label_rate_exponent(task, "central", p=p)
                a, b = e["stat"], e["priv"]
                for eps in sorted(set(main.eps[np.isfinite(main.eps)])):
                    cross.append(dict(task=task, p=p, eps=eps, a=a, b=b,
                                      N_crossover=eps ** (-b / (b - a)) if b > a else float("nan")))
        l5 = df[df.experiment == "L5"]
        eff = fit_slopes(l5[l5.eps <= 1.0], "eps", "excess", by=["task", "method"], upper_half=False)
        eff["theory"] = [-2 * label_rate_exponent(t, "local")["priv"] for t in eff.task]
        l6 = summarize(df[df.experiment == "L6"], ["K", "method"], ["excess"])
        return {"slopes": sl, "crossover": pd.DataFrame(cross), "eps_effective_samples": eff, "K_dependence": l6}

    def plot(df, outdir: pathlib.Path):
        paths = []
        for exp in ("L1", "L2", "L3"):
            sub = df[df.experiment == exp]
            s = summarize(sub.assign(curve=sub.method + " eps=" + sub.eps.astype(str) + " p=" + sub.p.astype(str)),
                          ["curve", "N"], ["excess"])
            task = sub.task.iloc[0]
            Ns = np.asarray(sorted(sub.N.unique()), float)
            theory = {}
            for eps in sorted(set(sub.eps[np.isfinite(sub.eps)])):
                for st in ("local", "central"):
                    y = label_rates(task, st, Ns, eps, p=float(sub.p.max()) if task == "heavy" else 2.0)
                    theory[f"{st} theory eps={eps}"] = (Ns, y)
            paths.append(plot_curves(s, "N", "excess", outdir / f"{exp}_excess_vs_N.png", hue="curve", theory=theory,
                                     title=f"{exp}: {task} (rate-mode parameters)"))
        l6 = summarize(df[df.experiment == "L6"], ["K", "method"], ["excess"])
        paths.append(plot_curves(l6, "K", "excess", outdir / "L6_K_dependence.png", hue="method",
                                 title="L6: vector RR vs K-ary RR"))
        return paths

    return Study(name="label-dp-rates", points=pts, seeds=int(cfg["seeds"]), run=run,
                 group_by=("task", "method", "p", "K"), analyze=analyze, plot=plot, config=cfg)
