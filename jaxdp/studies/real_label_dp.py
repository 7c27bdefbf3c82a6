"""``real-label-dp``: label-DP learners on real data, beside randomized response with a prior.

Spec and claims: ``specs/real-label-dp.toml``; page prose: ``specs/real-label-dp.md``. Needs ``jaxdp[data]``.
Seed ``i`` draws one train/test split for every method and the mechanisms' randomness
(:func:`jaxdp.label_dp.real_setups.real_data_scores`: public features, private labels). Classification (test
accuracy) and regression (test MSE of standardized labels) methods per task are the TOML's ``[methods]``; each
task's claim compares its ``[pairs]`` seed-paired at ``small_eps``.
"""
from __future__ import annotations

import pathlib

import numpy as np

from ..label_dp.real_setups import real_data_scores
from .analysis import bootstrap_mean_ci
from .claims import Measurement, judge
from .framework import Study, summarize
from .plots import plot_figures
from .specs import StudySpec

S = StudySpec("real-label-dp", __name__)
CLAIMS, DOC_PAGE, RESULTS, BLOCKS = S.claims, S.doc_page, S.results, S.blocks
#: the methods per task; the compared pair per task (the claim: ``metric(a) - metric(b) >= 0`` at ``SMALL_EPS``)
METHODS, PAIRS, SMALL_EPS, N_BOOT = S.data["methods"], S.data["pairs"], S.data["small_eps"], 4000


def _flat(rows, keys, ys):
    """The figures' summary: a non-private method (ε = ∞) drawn as a flat line across the finite ε."""
    import pandas as pd

    s = summarize(rows, keys, ys)
    fin = np.isfinite(s["eps"])
    return pd.concat([s[fin]] + [s[~fin].assign(eps=e) for e in sorted(s[fin]["eps"].unique())], ignore_index=True)


@S.register
def build(cfg: dict) -> Study:
    """Every dataset × method of its task × ε (non-private once, at ε = ∞); each seed draws its own split."""
    from ..data import DATASETS, load_dataset

    points = [{"dataset": ds, "task": DATASETS[ds][2], "method": m, "eps": float(e)} for ds in cfg["datasets"]
              for m in METHODS[DATASETS[ds][2]]
              for e in ([float("inf")] if m.startswith("nonprivate") else cfg["eps"])]

    def run(pts, seeds):
        return real_data_scores(load_dataset(pts[0]["dataset"]), [(p["method"], p["eps"]) for p in pts],
                                seed=int(cfg["seed"]), seeds=seeds, train_frac=float(cfg["train_frac"]))

    return S.study(cfg, points=points, run=run, description="label DP on real data",
                   analyze=lambda df: {"summary": summarize(df, ["dataset", "task", "method", "eps"],
                                                            ["accuracy", "mse"])},
                   plot=lambda df, outdir: plot_figures(df, outdir, S.data["figures"], cfg, summary=_flat))


def paired_difference(df, dataset: str, metric: str, a: str, b: str, eps: float, n_boot: int = N_BOOT,
                      seed: int = 0) -> tuple:
    """``(mean, lo, hi, n_seeds)`` of ``metric(a) - metric(b)`` at one (dataset, ε), seed-paired bootstrap."""
    def one(m):
        e = np.inf if m.startswith("nonprivate") else eps
        g = df[(df["dataset"] == dataset) & (df["method"] == m) & np.isclose(df["eps"], e)]
        return g.set_index("seed")[metric]

    d = (one(a) - one(b)).dropna().to_numpy(float)
    mean, lo, hi = bootstrap_mean_ci(d, n_boot=n_boot, seed=seed)
    return mean, lo, hi, len(d)


def claims(df):
    """Central beats local at ε = ``SMALL_EPS``: per dataset, :data:`PAIRS`' paired difference and its verdict."""
    import pandas as pd

    rows = []
    for (dataset, task), _ in df.groupby(["dataset", "task"], sort=True):
        a, b, metric = PAIRS[task]
        if not {a, b} <= set(df[df["dataset"] == dataset]["method"]) or not np.isclose(df["eps"], SMALL_EPS).any():
            continue
        mean, lo, hi, n = paired_difference(df, dataset, metric, a, b, SMALL_EPS)
        v = judge(CLAIMS[task], Measurement(mean, lo, hi, n, decades=0.0))
        rows.append(dict(dataset=dataset, task=task, difference=f"{metric}: {a} − {b}", mean=mean, mean_lo=lo,
                         mean_hi=hi, n_seeds=n, verdict=v.verdict, reason=v.reason))
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/real-label-dp``)."""
    import pandas as pd

    d = pathlib.Path(results_dir or RESULTS)
    df, s = pd.read_csv(d / "results.csv"), pd.read_csv(d / "summary.csv")
    eps = sorted(e for e in df["eps"].unique() if np.isfinite(e))
    prior = pd.DataFrame([(ds, e, *paired_difference(df, ds, "accuracy", "rr_prior", "local_rr_kary", e)[:3])
                          for ds in sorted(df[df["method"] == "rr_prior"]["dataset"].unique()) for e in eps],
                         columns=["dataset", "eps", "mean", "mean_lo", "mean_hi"])
    parts = []
    for task, metric in (("classification", "accuracy"), ("regression", "mse")):
        st = s[s["task"] == task].assign(private=lambda t: np.isfinite(t["eps"]))
        if len(st):
            parts.append(S.render("real-label-dp task", task=task, metric=metric, S=int(st["n_seeds"].min())))
        for dataset, g in st.groupby("dataset"):   # a non-private row at a finite ε: no column of its own
            g = g.assign(eps=g["eps"].where(g["private"], g[g["private"]]["eps"].min()))
            parts.append(S.render("real-label-dp dataset", dataset=dataset,
                                  table=S.table("methods", g, metric=metric)))
    return {BLOCKS[0]: S.render(BLOCKS[0], eps=f"{SMALL_EPS:g}", S=int(s["n_seeds"].min()),
                                tol=f"{CLAIMS['classification'].tolerance:g}", table=S.table("claims", claims(df))),
            BLOCKS[1]: S.render(BLOCKS[1], table=S.table("prior", prior)),
            BLOCKS[2]: S.render(BLOCKS[2], tables="\n\n".join(parts))}


publish = S.publisher(page_blocks)
