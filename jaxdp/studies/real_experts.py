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
from .framework import Param, Study, declare_params, plot_panels, summarize

LEARNERS = ("hedge", "l2p_mw", "tree_ftrl", "sparse_vector", "adaptive_sv", "potential")
DEFAULTS = {"seeds": 32, "seed": 0, "datasets": ["phishing", "bananas", "digits", "breast_cancer", "trump_approval"],
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

    for ds in cfg["datasets"]:
        if ds not in DATASETS:
            raise ValueError(f"datasets: unknown dataset {ds!r}; known: {sorted(DATASETS)}")
    for ln in cfg["learners"]:
        if ln not in LEARNERS:
            raise ValueError(f"learners: unknown learner {ln!r}; known: {list(LEARNERS)}")
    for e in cfg["eps"]:
        if not float(e) > 0:
            raise ValueError(f"eps must be > 0, got {e!r}")
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
