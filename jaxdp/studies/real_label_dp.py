"""``real-label-dp``: label-DP learners on real data, beside randomized response with a prior.

Needs the optional extra ``jaxdp[data]`` (bundled scikit-learn / river files only). Features are
public under label DP, so each dataset's features are reduced to ``q = 2`` principal components
and rank-transformed to ``[0, 1]^2`` (the domain of jaxdp's bin and kNN learners); the labels are
the private part. Seed ``i`` draws a 70/30 train/test split and the mechanisms' randomness.

Classification (test accuracy): ``nonprivate_bins_cls``, ``local_rr_kary`` (K-ary RR + bin
majority), ``local_rr_vector`` (LABEL eq. (11)), ``central_exp_bins`` (LABEL eq. (17)) and
``rr_prior`` — RRWithPrior (Ghazi et al. 2021; :mod:`jaxdp.label_dp.rr_prior`) in two stages:
the first half of the training labels goes through K-ary RR, their debiased per-bin class
frequencies are the prior for the second half, which goes through RRWithPrior; the classifier is
the bin majority of all privatized labels. Every label is privatized once, so all local methods
are eps-label-DP. Bin counts and kNN ``k`` come from the LABEL planners (``plan_for``, rate mode,
d = 2).

Regression (test MSE of standardized labels): ``nonprivate_knn``, ``local_laplace_knn_clipped``
(LABEL Thm 10), ``central_bins_laplace_clipped`` (Thm 12), ``nonprivate_bins_reg``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import pathlib

import jax
import jax.numpy as jnp
import numpy as np

from ..core import seed_keys
from ..label_dp import fit, make_params, predict
from ..label_dp.planners import plan_for
from ..label_dp.rr_prior import rr_with_prior
from ..privacy.mechanisms.randomized_response import rr_kary
from ..registry import register_study
from ._common_study import ROOT as ROOT, check_each, page_paths
from .analysis import bootstrap_mean_ci
from .framework import Param, Study, declare_params, plot_panels, summarize


if TYPE_CHECKING:
    import pandas as pd

CLS = ("nonprivate_bins_cls", "local_rr_kary", "local_rr_vector", "central_exp_bins", "rr_prior")
REG = ("nonprivate_knn", "local_laplace_knn_clipped", "central_bins_laplace_clipped", "nonprivate_bins_reg")
DEFAULTS = {"seeds": 256, "seed": 0, "datasets": ["breast_cancer", "digits", "wine", "phishing", "bananas",
                                                 "diabetes", "trump_approval"],
            "eps": [0.1, 0.3, 1.0, 3.0, 10.0], "train_frac": 0.7}
QUICK = {"seeds": 4, "datasets": ["breast_cancer", "diabetes"], "eps": [0.5, 4.0]}


def public_features(X: np.ndarray, q: int = 2) -> np.ndarray:
    """First ``q`` principal components, rank-transformed to ``(0, 1)`` (labels are not used).

    Args:
        X: the ``(n, p)`` features.
        q: the number of principal components kept.

    Returns:
        ``(n, q)`` features: per component, ``(rank + 1/2) / n``, uniform on ``(0, 1)``.
    """
    Xc = X - X.mean(axis=0)
    _, _, vt = np.linalg.svd(Xc, full_matrices=False)
    Z = Xc @ vt[:q].T
    ranks = np.argsort(np.argsort(Z, axis=0), axis=0)
    return (ranks + 0.5) / Z.shape[0]


def _rr_prior_fit_predict(key, Xtr, ytr, Xte, K, eps, bins):
    """Two-stage RRWithPrior (see module docstring); returns test predictions."""
    from ..label_dp import bin_index

    n = Xtr.shape[0]
    h = n // 2
    k1, k2, k3 = jax.random.split(key, 3)
    G = int(bins) ** Xtr.shape[1]
    b = np.asarray(bin_index(jnp.asarray(Xtr), bins))
    z1 = np.asarray(rr_kary(k1, jnp.asarray(ytr[:h]), K, eps)) if np.isfinite(eps) else ytr[:h]
    counts = np.zeros((G, K))
    np.add.at(counts, (b[:h], z1), 1.0)
    ee = np.exp(min(eps, 80.0))
    tot = counts.sum(axis=1, keepdims=True)
    freq = counts / np.maximum(tot, 1)
    # debias K-ary RR: P(z = c) = (e^eps 1[c=y] + 1[c!=y]) / (e^eps + K - 1)
    prior = np.clip((freq * (ee + K - 1) - 1.0) / (ee - 1.0), 0.0, None) + 1e-3
    prior /= prior.sum(axis=1, keepdims=True)
    z2 = np.asarray(rr_with_prior(k2, jnp.asarray(prior[b[h:]]), jnp.asarray(ytr[h:]), eps))
    z = np.concatenate([z1, z2])
    votes = np.zeros((G, K))
    np.add.at(votes, (b, z), 1.0)
    jitter = np.asarray(jax.random.uniform(k3, (G, K))) * 0.5
    table = np.argmax(votes + jitter, axis=1)
    return table[np.asarray(bin_index(jnp.asarray(Xte), bins))]


PARAMS = declare_params("real-label-dp", {
    "seeds": Param("int", lo=1), "seed": Param("int", lo=0),
    "datasets": Param("str", many=True, choices=("digits", "breast_cancer", "wine", "iris", "diabetes", "phishing",
                                                   "bananas", "trump_approval")),
    "eps": Param("float", many=True, lo=0.0, lo_open=True), "train_frac": Param("float", lo=0.1, hi=0.9),
})


@register_study("real-label-dp", defaults=DEFAULTS, quick=QUICK,
                description="Label DP on real data (sklearn/river bundled sets; jaxdp[data]): accuracy / MSE vs eps, "
                            "local and central label-DP learners beside RR with a prior")
def build(cfg: dict) -> Study:
    """The ``real-label-dp`` study: every dataset × method of its task × ε (non-private methods once,
    at ε = ∞), each seed drawing its own train/test split.

    Args:
        cfg: the resolved configuration: ``datasets``, the ``eps`` grid, ``train_frac``, seeds and the
            root seed.

    Returns:
        The :class:`jaxdp.studies.Study`; its table ``summary`` holds the test accuracy
        (classification) or MSE of the standardized labels (regression) per (dataset, method, ε).

    Raises:
        ValueError: an unknown dataset, ``eps <= 0`` or ``train_frac`` outside ``[0.1, 0.9]``.
    """
    from ..data import DATASETS, load_dataset

    check_each(cfg["datasets"], lambda ds: ds in DATASETS,
               "datasets: unknown dataset {!r}; known: " + str(sorted(DATASETS)))
    check_each(cfg["eps"], lambda e: float(e) > 0, "eps must be > 0, got {!r}")
    tf = float(cfg["train_frac"])
    if not 0.1 <= tf <= 0.9:
        raise ValueError(f"train_frac must be in [0.1, 0.9], got {tf!r}")
    points = []
    for ds in cfg["datasets"]:
        task = DATASETS[ds][2]
        for m in (CLS if task == "classification" else REG):
            for e in ([float("inf")] if m.startswith("nonprivate") else cfg["eps"]):
                points.append({"dataset": ds, "task": task, "method": m, "eps": float(e)})

    def run(pts, seeds):
        dsname = pts[0]["dataset"]
        data = load_dataset(dsname)
        Z = public_features(data.X)
        n = Z.shape[0]
        ntr = int(round(tf * n))
        cls = data.task == "classification"
        K = data.n_classes
        y = data.y if cls else (data.y - data.y.mean()) / data.y.std()
        out = []
        for pt in pts:
            vals = []
            for s, key in zip(seeds, seed_keys(int(cfg["seed"]), seeds)):
                perm = np.random.default_rng([int(cfg["seed"]), int(s), 7]).permutation(n)
                tr, te = perm[:ntr], perm[ntr:]
                method, eps = pt["method"], pt["eps"]
                kw = {"K": K} if cls else {"label_bound": 3.0, "p": 2.0}
                base = "local_rr_kary" if method == "rr_prior" else method
                hp = plan_for(base, N=ntr, eps=eps if np.isfinite(eps) else 1e300, d=2, mode="rate", **kw)
                if method == "rr_prior":
                    pred = _rr_prior_fit_predict(key, Z[tr], y[tr], Z[te], K, eps, int(hp["bins"]))
                else:
                    prm = make_params(eps=eps, bins=hp["bins"], k=min(hp["k"], ntr), clip=hp["clip"])
                    f = fit(method, key, Z[tr], jnp.asarray(y[tr]), params=prm, K=max(K, 2))
                    pred = np.asarray(predict(f, Z[te]))
                if cls:
                    vals.append(float(np.mean(pred == y[te])))
                else:
                    vals.append(float(np.mean((pred - y[te]) ** 2)))
            out.append({"accuracy" if cls else "mse": np.asarray(vals),
                        "mse" if cls else "accuracy": np.full(len(seeds), np.nan)})
        return out

    def analyze(df):
        s = summarize(df, ["dataset", "task", "method", "eps"], ["accuracy", "mse"])
        return {"summary": s}

    def plot(df, outdir: pathlib.Path):
        s = analyze(df)["summary"]
        paths = []
        eps_f = sorted(e for e in s["eps"].unique() if np.isfinite(e))
        for task, y in (("classification", "accuracy"), ("regression", "mse")):
            sub = s[s["task"] == task].copy()
            if not len(sub):
                continue
            # non-private methods: a flat line across the eps grid
            npv = sub[~np.isfinite(sub["eps"])]
            rows = [sub[np.isfinite(sub["eps"])]]
            for e in eps_f:
                rows.append(npv.assign(eps=e))
            import pandas as pd

            sub = pd.concat(rows, ignore_index=True)
            paths.append(plot_panels(sub, "dataset", "eps", y, outdir / f"real_label_dp_{task}.png", hue="method",
                                     ylabel=y, logy=(y == "mse")))
        return paths

    return Study(name="real-label-dp", points=points, seeds=int(cfg["seeds"]), run=run, group_by=("dataset",),
                 analyze=analyze, plot=plot, config=cfg, description="label DP on real data")


# --------------------------------------------------------------------------- the docs page, generated
DOC_PAGE, RESULTS = page_paths("real-label-dp")
BLOCKS = ("real-label-dp claims", "real-label-dp prior", "real-label-dp tables")
N_BOOT = 4000
#: ε of the "central beats local at small ε" comparison (LABEL Table 1: the central rates are better for ε < 1)
SMALL_EPS = 0.1


def paired_difference(df, dataset: str, metric: str, a: str, b: str, eps: float, n_boot: int = N_BOOT,
                      seed: int = 0) -> tuple:
    """Mean of ``metric(a) - metric(b)`` over seeds at one (dataset, ε), with a seed-paired 95% bootstrap.

    Seed ``i`` draws the same train/test split for every method (one key per seed), so the two methods'
    results at a seed are paired and the difference is resampled by seed.

    Args:
        df: the study's ``results.csv`` rows.
        dataset: the dataset.
        metric: ``"accuracy"`` or ``"mse"``.
        a, b: the two methods.
        eps: the privacy parameter of both (the non-private methods are stored at ``ε = inf``).
        n_boot: bootstrap resamples.
        seed: the bootstrap's NumPy seed.

    Returns:
        ``(mean, lo, hi, n_seeds)``.
    """
    def one(m):
        e = np.inf if m.startswith("nonprivate") else eps
        g = df[(df["dataset"] == dataset) & (df["method"] == m) & np.isclose(df["eps"], e)]
        return g.set_index("seed")[metric]

    d = (one(a) - one(b)).dropna().to_numpy(float)
    mean, lo, hi = bootstrap_mean_ci(d, n_boot=n_boot, seed=seed)
    return mean, lo, hi, len(d)


def claims(df) -> "pd.DataFrame":
    """The page's comparisons, each a seed-paired difference with its interval and a verdict.

    * central beats local at ε = ``SMALL_EPS`` (LABEL Table 1): per classification dataset, accuracy of the
      per-bin exponential mechanism minus K-ary RR; per regression dataset, MSE of local Laplace + kNN minus
      central Laplace bin means. "holds" when the interval is above 0, "misses" otherwise.

    Args:
        df: the study's ``results.csv`` rows.

    Returns:
        One row per dataset: task, the difference and its interval, seeds and the verdict.
    """
    import pandas as pd

    rows = []
    for (dataset, task), _ in df.groupby(["dataset", "task"], sort=True):
        if task == "classification":
            a, b, metric = "central_exp_bins", "local_rr_kary", "accuracy"
        else:
            a, b, metric = "local_laplace_knn_clipped", "central_bins_laplace_clipped", "mse"
        if not {a, b} <= set(df[df["dataset"] == dataset]["method"]) or not np.isclose(df["eps"], SMALL_EPS).any():
            continue
        mean, lo, hi, n = paired_difference(df, dataset, metric, a, b, SMALL_EPS)
        rows.append(dict(dataset=dataset, task=task, difference=f"{metric}: {a} − {b}" if task == "classification"
                         else f"{metric}: {a} − {b}", mean=mean, lo=lo, hi=hi, n_seeds=n,
                         verdict="holds" if lo > 0 else "misses"))
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of ``docs/results/real-label-dp.md`` from a kept run.

    Args:
        results_dir: the results directory (default ``results/real-label-dp``).

    Returns:
        ``{block name: Markdown}``: the central-vs-local claims, RRWithPrior minus K-ary RR at every
        (dataset, ε), and every dataset's method × ε table.
    """
    import pandas as pd

    from .analysis import fmt_ci, markdown_table

    d = pathlib.Path(results_dir) if results_dir is not None else RESULTS
    df = pd.read_csv(d / "results.csv")
    s = pd.read_csv(d / "summary.csv")
    c = claims(df)
    n = int(s["n_seeds"].min())
    claim = (f"Seed-paired differences at ε = {SMALL_EPS:g} over {n} splits (95% bootstrap over seeds); the claim "
             "holds when the interval is above 0.\n\n"
             + markdown_table(["dataset", "task", "difference", "mean [95% CI]", "verdict"],
                              [[r.dataset, r.task, r.difference, fmt_ci(r.mean, r.lo, r.hi, 3), r.verdict]
                               for r in c.itertuples(index=False)]))
    eps_all = sorted(e for e in df["eps"].unique() if np.isfinite(e))
    prow = []
    for dataset in sorted(df[df["method"] == "rr_prior"]["dataset"].unique()):
        cells = []
        for e in eps_all:
            m, lo, hi, _ = paired_difference(df, dataset, "accuracy", "rr_prior", "local_rr_kary", e)
            tag = "better" if lo > 0 else "worse" if hi < 0 else "no difference shown"
            cells.append(f"{fmt_ci(m, lo, hi, 3)} ({tag})")
        prow.append([dataset] + cells)
    prior = ("Accuracy of RRWithPrior minus K-ary RR, seed-paired, mean [95% CI]; \"better\"/\"worse\" when the "
             "interval excludes 0.\n\n" + markdown_table(["dataset"] + [f"ε = {e:g}" for e in eps_all], prow))
    parts = []
    for task, metric in (("classification", "accuracy"), ("regression", "mse")):
        st = s[s["task"] == task]
        if not len(st):
            continue
        parts.append(f"### {task}: test {metric}, mean [95% CI] over {int(st['n_seeds'].min())} splits")
        for dataset in sorted(st["dataset"].unique()):
            g = st[st["dataset"] == dataset]
            eps = sorted(e for e in g["eps"].unique() if np.isfinite(e))
            rows = []
            for method in sorted(g["method"].unique()):
                gm = g[g["method"] == method].set_index("eps")
                cells = [fmt_ci(gm.loc[e, f"{metric}_mean"], gm.loc[e, f"{metric}_lo"], gm.loc[e, f"{metric}_hi"], 3)
                         if e in gm.index else "" for e in eps]
                npv = (fmt_ci(gm.loc[np.inf, f"{metric}_mean"], gm.loc[np.inf, f"{metric}_lo"],
                              gm.loc[np.inf, f"{metric}_hi"], 3) if np.inf in gm.index else "")
                rows.append([method] + cells + [npv])
            parts.append(f"**{dataset}**\n\n" + markdown_table(["method"] + [f"ε = {e:g}" for e in eps]
                                                               + ["non-private"], rows))
    return dict(zip(BLOCKS, (claim, prior, "\n\n".join(parts))))


def publish(results_dir=None) -> list:
    """Rewrite the generated blocks of ``docs/results/real-label-dp.md`` from a kept run (:func:`page_blocks`).

    Args:
        results_dir: the results directory (default ``results/real-label-dp``).

    Returns:
        The names of the blocks that changed.
    """
    from .analysis import publish_blocks

    return publish_blocks(DOC_PAGE, page_blocks(results_dir))
