"""``real-experts``: private prediction with experts on loss streams built from real data.

Needs the optional extra ``jaxdp[data]`` (scikit-learn and river; their bundled files only).
For each dataset, :func:`jaxdp.data.expert_pool_losses` gives the prequential losses of a pool of
``n_experts`` online predictors on a shuffled stream of length ``T`` (the rows reshuffled every
pass). Seed ``i`` uses stream order ``i`` *and* algorithm key ``i``, so the confidence intervals
cover both the order of the data and the algorithms' randomness.

Learners (privacy certified by each planner's ``certified`` mode; ``eps_certified`` is reported):
non-private ``hedge``; ``l2p_mw`` ("Private online learning via lazy algorithms", Thm 3.10,
(ε, δ = 1e-6)); ``tree_ftrl`` (binary-tree DP-FTRL, pure); ``sparse_vector`` (realizable Alg. 1,
pure); ``adaptive_sv`` (realizable Alg. 2 with the doubling test flipped, pure); ``potential``
(realizable Alg. 5, pure). Metric: regret against the best expert in hindsight, per round
(``regret / T``), as a function of ε.
"""
from __future__ import annotations

import math
import pathlib

import jax
import jax.numpy as jnp
import numpy as np

from ..core import seed_keys, simulate
from ..experts import ReplayParams, adv_replay, experts_problem, hedge, hedge_params
from ..lazy import l2p_mw, l2p_mw_params, plan_l2p_mw, tree_ftrl_experts, tree_ftrl_params
from ..realizable import (
    adaptive_sparse_vector_experts, params_from_plan, plan_adaptive_sparse_vector_experts,
    plan_potential_experts, plan_sparse_vector_experts, potential_experts, sparse_vector_experts,
)
from ..registry import register_study
from ._common_study import ROOT as ROOT, check_each, generated_from, page_paths
from .analysis import fmt_ci, markdown_table, publish_blocks, ratio_to_base
from .framework import Param, Study, declare_params, plot_panels, summarize

LEARNERS = ("hedge", "l2p_mw", "tree_ftrl", "sparse_vector", "adaptive_sv", "potential")
DEFAULTS = {"seeds": 256, "seed": 0, "datasets": ["phishing", "bananas", "digits", "breast_cancer", "trump_approval"],
            "T": 16384, "n_experts": 32, "eps": [0.1, 0.3, 1.0, 3.0, 10.0], "delta": 1e-6,
            "learners": list(LEARNERS), "pool_seed": 0}
QUICK = {"seeds": 4, "datasets": ["breast_cancer", "phishing"], "T": 2048, "n_experts": 8, "eps": [0.3, 3.0],
         "learners": ["hedge", "l2p_mw", "sparse_vector", "potential"]}


def _learner(name, d, T, eps, delta):
    """(learner, params, eps_certified) for one grid point."""
    if name == "hedge":
        return hedge(d), hedge_params(d, T), math.inf
    if name == "l2p_mw":
        plan = plan_l2p_mw(eps=eps, delta=delta, T=T, d=d, mode="certified")
        pr = plan.params
        return l2p_mw(d, None), l2p_mw_params(pr["eta"], pr["p"], pr["B"]), plan.eps_certified
    if name == "tree_ftrl":
        return tree_ftrl_experts(d, T, noise="laplace"), tree_ftrl_params(d, T, eps, 0.0), eps
    if name == "sparse_vector":
        plan = plan_sparse_vector_experts(eps=eps, T=T, d=d, mode="certified")
        return sparse_vector_experts(d), params_from_plan(plan), plan.eps_certified
    if name == "adaptive_sv":
        plan = plan_adaptive_sparse_vector_experts(eps=eps, T=T, d=d, mode="certified", test_sign="flipped")
        return adaptive_sparse_vector_experts(d), params_from_plan(plan), plan.eps_certified
    if name == "potential":
        plan = plan_potential_experts(eps=eps, T=T, d=d, mode="certified")
        return potential_experts(d), params_from_plan(plan), plan.eps_certified
    raise ValueError(f"unknown learner {name!r}; known: {LEARNERS}")


_DATASETS = ("digits", "breast_cancer", "wine", "iris", "diabetes", "phishing", "bananas", "trump_approval")
PARAMS = declare_params("real-experts", {
    "seeds": Param("int", lo=1), "seed": Param("int", lo=0), "datasets": Param("str", many=True, choices=_DATASETS),
    "T": Param("int", lo=2, hi=2 ** 26), "n_experts": Param("int", lo=2, hi=4096),
    "eps": Param("float", many=True, lo=0.0, lo_open=True), "delta": Param("float", lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "learners": Param("str", many=True, choices=LEARNERS), "pool_seed": Param("int", lo=0),
})


@register_study("real-experts", defaults=DEFAULTS, quick=QUICK,
                description="Private experts on real data (sklearn/river bundled sets; jaxdp[data]): regret vs eps "
                            "for Hedge, L2P-MW, tree DP-FTRL, sparse-vector, adaptive SV and potential experts")
def build(cfg: dict) -> Study:
    """The ``real-experts`` study: every dataset × learner × ε, each seed replaying its own stream
    order of the dataset's expert-pool losses.

    Args:
        cfg: the resolved configuration: ``datasets``, ``learners``, the ``eps`` grid, ``delta``,
            ``T``, ``n_experts``, ``pool_seed``, seeds and the root seed.

    Returns:
        The :class:`jaxdp.studies.Study`; its table ``summary`` holds the regret per round, regret
        and switches per (dataset, learner, ε) with the certified ε and the best expert's loss per round.

    Raises:
        ValueError: an unknown dataset or learner, or ``eps <= 0``.
    """
    from ..data import DATASETS, expert_pool_losses

    check_each(cfg["datasets"], lambda ds: ds in DATASETS,
               "datasets: unknown dataset {!r}; known: " + str(sorted(DATASETS)))
    check_each(cfg["learners"], lambda ln: ln in LEARNERS,
               "learners: unknown learner {!r}; known: " + str(list(LEARNERS)))
    check_each(cfg["eps"], lambda e: float(e) > 0, "eps must be > 0, got {!r}")
    T, d = int(cfg["T"]), int(cfg["n_experts"])
    points = [{"dataset": ds, "learner": ln, "eps": float(e)}
              for ds in cfg["datasets"] for ln in cfg["learners"] for e in cfg["eps"]]

    def run(pts, seeds):
        ds = pts[0]["dataset"]
        losses = np.stack([expert_pool_losses(ds, T, d, order_seed=int(cfg["seed"]) * 100003 + int(s),
                                              pool_seed=int(cfg["pool_seed"])) for s in seeds])
        G = len(seeds)
        ap = ReplayParams(losses=jnp.asarray(losses))            # one stream order per seed (grid axis)
        keys = seed_keys(int(cfg["seed"]), seeds)[:, None]        # (G, 1): one algorithm key per order
        Tg = jnp.full((G,), T, jnp.int32)
        best = losses.sum(axis=1).min(axis=1)
        out = []
        for pt in pts:
            L, params, e_cert = _learner(pt["learner"], d, T, pt["eps"], float(cfg["delta"]))
            params = jax.tree_util.tree_map(lambda v: jnp.broadcast_to(jnp.asarray(v), (G,) + jnp.shape(v)), params)
            r = simulate(L, adv_replay(d), experts_problem(), params, ap, keys, Tg, T_max=T, grid=True,
                         n_checkpoints=4)
            reg = np.asarray(r["regret"], float)[:, 0]
            out.append({"regret": reg, "regret_per_round": reg / T, "best_loss": best.astype(float),
                        "switches": np.asarray(r["switches"], float)[:, 0],
                        "eps_certified": np.full(G, e_cert, float)})
        return out

    def analyze(df):
        s = summarize(df, ["dataset", "learner", "eps"], ["regret_per_round", "regret", "switches"])
        s["eps_certified"] = df.groupby(["dataset", "learner", "eps"], sort=True)["eps_certified"].first().to_numpy()
        s["best_loss_per_round"] = (df.groupby(["dataset", "learner", "eps"], sort=True)["best_loss"].mean()
                                    / T).to_numpy()
        return {"summary": s}

    def plot(df, outdir: pathlib.Path):
        s = analyze(df)["summary"]
        return [plot_panels(s, "dataset", "eps", "regret_per_round", outdir / "real_experts.png", hue="learner",
                            ylabel="regret / T", title=lambda v: f"{v} (T={T}, {d} experts)", logy=False)]

    return Study(name="real-experts", points=points, seeds=int(cfg["seeds"]), run=run, group_by=("dataset", "learner"),
                 analyze=analyze, plot=plot, config=cfg, description="private experts on real data")


# --------------------------------------------------------------------------- the results page

DOC_PAGE, RESULTS = page_paths("real-experts")
BLOCKS = ("real-experts tables", "real-experts comparisons")
PRIVATE = tuple(x for x in LEARNERS if x != "hedge")
N_BOOT = 2000


def _comparisons(df, s, still) -> str:
    """The seed-paired comparisons block: at every (dataset, ε) the best private learner by mean regret against
    the next best, then tree DP-FTRL against L2P-MW; ``s`` is the per-point summary of the regret per round and
    ``still`` is True where a learner never switched."""
    eps = sorted(df["eps"].unique())
    priv = df[df["learner"].isin(PRIVATE)]
    means = s[s["learner"].isin(PRIVATE)]
    brow = []
    for ds in sorted(df["dataset"].unique()):
        cells = []
        for e in eps:
            m = means[(means["dataset"] == ds) & (means["eps"] == e)].sort_values("regret_per_round_mean")
            # learners that never switched played the same initial expert: one entry, not several
            frozen = [x for x in m["learner"] if bool(still.loc[(ds, x, e)])]
            entries = []
            for x in m["learner"]:
                if x in frozen:
                    if x == frozen[0]:
                        entries.append((x, "initial expert (" + ", ".join(sorted(frozen)) + ") †"))
                else:
                    entries.append((x, x))
            (first, name1), (second, name2) = entries[0], entries[1]
            sub = priv[(priv["dataset"] == ds) & (priv["eps"] == e) & priv["learner"].isin([first, second])]
            x = ratio_to_base(sub, ["dataset"], "learner", first, "regret", n_boot=N_BOOT).iloc[0]
            cells.append(f"{name1}; {name2} {fmt_ci(x['ratio'], x['ratio_lo'], x['ratio_hi'], 2)}")
        brow.append([ds, *cells])
    tl = ratio_to_base(df[df["learner"].isin(["l2p_mw", "tree_ftrl"])], ["dataset", "eps"], "learner", "l2p_mw",
                       "regret", n_boot=N_BOOT).set_index(["dataset", "eps"])
    trow = [[ds, *[fmt_ci(tl.at[(ds, e), "ratio"], tl.at[(ds, e), "ratio_lo"], tl.at[(ds, e), "ratio_hi"], 2)
                   for e in eps]] for ds in sorted(df["dataset"].unique())]
    return ("*Generated; do not edit by hand.* Seed-paired comparisons (95% bootstrap over seed indices, "
            f"{N_BOOT} replicates). Best private learner by mean regret at each point, and the next best's mean "
            "regret over the best's (above 1: the best is ahead; an interval containing 1: the two are level):\n\n"
            + markdown_table(["dataset", *[f"ε = {e:g}" for e in eps]], brow)
            + "\n\nTree DP-FTRL's mean regret over L2P-MW's (below 1: the tree is ahead):\n\n"
            + markdown_table(["dataset", *[f"ε = {e:g}" for e in eps]], trow))


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of ``docs/results/real-experts.md`` from a kept run's ``results.csv``.

    Seed ``i`` uses stream order ``i`` and algorithm key ``i`` for every learner and ε, so two learners at one
    point are compared seed by seed (:func:`jaxdp.studies.analysis.ratio_to_base`); a learner that never switches
    plays its initial expert, the same draw for every such learner.

    Args:
        results_dir: the results directory (default ``results/real-experts``).

    Returns:
        ``{block name: Markdown}`` for :data:`BLOCKS`: the regret per round of every (dataset, learner, ε), and the
        seed-paired comparisons (the best private learner at each point against the next best; tree DP-FTRL
        against L2P-MW).
    """
    import pandas as pd

    d = pathlib.Path(results_dir) if results_dir is not None else RESULTS
    df = pd.read_csv(d / "results.csv")
    S = int(df.groupby(["dataset", "learner", "eps"])["seed"].nunique().min())
    s = summarize(df, ["dataset", "learner", "eps"], ["regret_per_round"])
    still = df.groupby(["dataset", "learner", "eps"])["switches"].max() == 0
    T = float((df["regret"] / df["regret_per_round"]).dropna().median())
    best = df.groupby("dataset")["best_loss"].mean().to_dict()
    eps = sorted(df["eps"].unique())
    parts = [generated_from("real_experts", "results/real-experts/results.csv")
             + f" Regret per round, mean [95% CI] over {S} seeds. Hedge is non-private: its cells repeat "
             "one run in every ε column. † marks a learner that switched at no seed: it played its initial random "
             "expert throughout, the same draw, seed by seed, as any other learner marked † at that dataset."]
    for ds in sorted(df["dataset"].unique()):
        g = s[s["dataset"] == ds].set_index(["learner", "eps"])
        rows = []
        for ln in sorted(df[df["dataset"] == ds]["learner"].unique()):
            cells = []
            for e in eps:
                r = g.loc[(ln, e)]
                mark = " †" if ln != "hedge" and bool(still.loc[(ds, ln, e)]) else ""
                cells.append(fmt_ci(r["regret_per_round_mean"], r["regret_per_round_lo"], r["regret_per_round_hi"], 4)
                             + mark)
            rows.append([ln, *cells])
        parts.append(f"### {ds} (best expert's loss per round {best[ds] / T:.3f})\n\n"
                     + markdown_table(["learner", *[f"ε = {e:g}" for e in eps]], rows))
    tables = "\n\n".join(parts)

    return {BLOCKS[0]: tables, BLOCKS[1]: _comparisons(df, s, still)}


def publish(results_dir=None) -> list:
    """Rewrite the generated blocks of ``docs/results/real-experts.md`` from a kept run (:func:`page_blocks`).

    Args:
        results_dir: the results directory (default ``results/real-experts``).

    Returns:
        The names of the blocks that changed.
    """
    return publish_blocks(DOC_PAGE, page_blocks(results_dir))
