"""``real-label-dp``: label-DP learners on real data, beside randomized response with a prior.

Spec and claims: ``specs/real-label-dp.toml``; page prose: ``specs/real-label-dp.md``. Needs ``jaxdp[data]``.
Features are public under label DP: each dataset's are reduced to ``q = 2`` principal components rank-transformed to
``[0, 1]^2``; the labels are private. Seed ``i`` draws a 70/30 train/test split (the same for every method) and the
mechanisms' randomness. Classification (test accuracy): ``nonprivate_bins_cls``, ``local_rr_kary``,
``local_rr_vector``, ``central_exp_bins`` and ``rr_prior`` (two-stage RRWithPrior, Ghazi et al. 2021: K-ary RR on
the first half of the labels gives the per-bin prior of the second half). Regression (test MSE of standardized
labels): ``nonprivate_knn``, ``local_laplace_knn_clipped``, ``central_bins_laplace_clipped``,
``nonprivate_bins_reg``. Bin counts and kNN ``k`` from the LABEL planners (rate mode, d = 2).
"""
from __future__ import annotations

import pathlib

import numpy as np

from ..core import seed_keys
from ..label_dp import plan_fit_predict, public_features
from .analysis import bootstrap_mean_ci, fmt_ci, markdown_table
from .claims import Measurement, judge
from .framework import Study, plot_panels, summarize
from .specs import StudySpec

S = StudySpec("real-label-dp", __name__)
CLAIMS, DOC_PAGE, RESULTS, BLOCKS = S.claims, S.doc_page, S.results, S.blocks
#: the methods per task; the compared pair per task (the claim: ``metric(a) - metric(b) >= 0`` at ``SMALL_EPS``)
METHODS, PAIRS, SMALL_EPS, N_BOOT = S.data["methods"], S.data["pairs"], S.data["small_eps"], 4000


@S.register
def build(cfg: dict) -> Study:
    """Every dataset × method of its task × ε (non-private once, at ε = ∞); each seed draws its own split."""
    from ..data import DATASETS, load_dataset

    tf = float(cfg["train_frac"])
    points = [{"dataset": ds, "task": DATASETS[ds][2], "method": m, "eps": float(e)} for ds in cfg["datasets"]
              for m in METHODS[DATASETS[ds][2]]
              for e in ([float("inf")] if m.startswith("nonprivate") else cfg["eps"])]

    def run(pts, seeds):
        data = load_dataset(pts[0]["dataset"])
        Z = public_features(data.X)
        n = Z.shape[0]
        ntr = int(round(tf * n))
        cls, K = data.task == "classification", data.n_classes
        y = data.y if cls else (data.y - data.y.mean()) / data.y.std()
        out = []
        for pt in pts:
            vals = []
            for s, key in zip(seeds, seed_keys(int(cfg["seed"]), seeds)):
                perm = np.random.default_rng([int(cfg["seed"]), int(s), 7]).permutation(n)
                tr, te = perm[:ntr], perm[ntr:]
                pred = plan_fit_predict(pt["method"], key, Z[tr], y[tr], Z[te], pt["eps"], K)
                vals.append(float(np.mean(pred == y[te])) if cls else float(np.mean((pred - y[te]) ** 2)))
            out.append({"accuracy" if cls else "mse": np.asarray(vals),
                        "mse" if cls else "accuracy": np.full(len(seeds), np.nan)})
        return out

    def analyze(df):
        return {"summary": summarize(df, ["dataset", "task", "method", "eps"], ["accuracy", "mse"])}

    def plot(df, outdir: pathlib.Path):
        import pandas as pd

        s, paths = analyze(df)["summary"], []
        eps_f = sorted(e for e in s["eps"].unique() if np.isfinite(e))
        for task, y in (("classification", "accuracy"), ("regression", "mse")):
            sub = s[s["task"] == task]
            if len(sub):   # non-private methods: a flat line across the eps grid
                npv = sub[~np.isfinite(sub["eps"])]
                sub = pd.concat([sub[np.isfinite(sub["eps"])]] + [npv.assign(eps=e) for e in eps_f], ignore_index=True)
                paths.append(plot_panels(sub, "dataset", "eps", y, outdir / f"real_label_dp_{task}.png", hue="method",
                                         ylabel=y, logy=(y == "mse")))
        return paths

    return S.study(cfg, points=points, run=run, analyze=analyze, plot=plot, description="label DP on real data")


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
        rows.append(dict(dataset=dataset, task=task, difference=f"{metric}: {a} − {b}", mean=mean, lo=lo, hi=hi,
                         n_seeds=n, verdict=v.verdict, reason=v.reason))
    return pd.DataFrame(rows)


def _ci(g, e, metric: str) -> str:
    return fmt_ci(g.loc[e, f"{metric}_mean"], g.loc[e, f"{metric}_lo"], g.loc[e, f"{metric}_hi"], 3) \
        if e in g.index else ""


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/real-label-dp``)."""
    import pandas as pd

    d = pathlib.Path(results_dir or RESULTS)
    df, s = pd.read_csv(d / "results.csv"), pd.read_csv(d / "summary.csv")
    c = claims(df)
    table = S.table("claims", c.rename(columns={"lo": "mean_lo", "hi": "mean_hi"}))
    eps_all, prow = sorted(e for e in df["eps"].unique() if np.isfinite(e)), []
    for dataset in sorted(df[df["method"] == "rr_prior"]["dataset"].unique()):
        cells = []
        for e in eps_all:
            m, lo, hi, _ = paired_difference(df, dataset, "accuracy", "rr_prior", "local_rr_kary", e)
            cells.append(f"{fmt_ci(m, lo, hi, 3)} ({'better' if lo > 0 else 'worse' if hi < 0 else 'no difference shown'})")
        prow.append([dataset] + cells)
    parts = []
    for task, metric in (("classification", "accuracy"), ("regression", "mse")):
        st = s[s["task"] == task]
        if len(st):
            parts.append(f"### {task}: test {metric}, mean [95% CI] over {int(st['n_seeds'].min())} splits")
        for dataset in sorted(st["dataset"].unique()):
            g = st[st["dataset"] == dataset]
            eps = sorted(e for e in g["eps"].unique() if np.isfinite(e))
            rows = [[method] + [_ci(gm, e, metric) for e in eps] + [_ci(gm, np.inf, metric)]
                    for method, gm in ((m, g[g["method"] == m].set_index("eps")) for m in sorted(g["method"].unique()))]
            parts.append(f"**{dataset}**\n\n" + markdown_table(["method"] + [f"ε = {e:g}" for e in eps]
                                                               + ["non-private"], rows))
    tol = f"{CLAIMS['classification'].tolerance:g}"
    return {BLOCKS[0]: S.render(BLOCKS[0], eps=f"{SMALL_EPS:g}", S=int(s["n_seeds"].min()), tol=tol, table=table),
            BLOCKS[1]: S.render(BLOCKS[1], table=markdown_table(["dataset"] + [f"ε = {e:g}" for e in eps_all], prow)),
            BLOCKS[2]: S.render(BLOCKS[2], tables="\n\n".join(parts))}


publish = S.publisher(page_blocks)
