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
from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp
import numpy as np

from ..core import seed_keys, simulate
from ..experts import ReplayParams, adv_replay, experts_problem, hedge, hedge_params
from ..experts import l2p_mw, l2p_mw_params, plan_l2p_mw, tree_ftrl_experts, tree_ftrl_params
from ..experts import (
    adaptive_sparse_vector_experts, params_from_plan, plan_adaptive_sparse_vector_experts,
    plan_potential_experts, plan_sparse_vector_experts, potential_experts, sparse_vector_experts,
)
from ..registry import register_study
from ._common_study import ROOT as ROOT, check_each, generated_from, page_paths
from .analysis import fmt_ci, markdown_table, publish_blocks, ratio_to_base
from .framework import Param, Study, declare_params, plot_panels, summarize

if TYPE_CHECKING:
    import pandas as pd

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
BLOCKS = ("real-experts tables", "real-experts comparisons", "real-experts verdicts")
PRIVATE = tuple(x for x in LEARNERS if x != "hedge")
N_BOOT = 2000

#: the experiments of the comparisons: the best private learner against the runner-up; tree DP-FTRL against
#: L2P-MW; at the largest ε, the sparse vector against non-private Hedge and L2P-MW against the sparse vector
BEST, TREE, HEDGE_SV, L2P_SV = ("best private vs runner-up", "tree DP-FTRL vs L2P-MW", "sparse vector vs Hedge",
                                "L2P-MW vs sparse vector")
#: the ε at which the sparse vector is compared with Hedge and with L2P-MW
EPS_TOP = 10.0
#: what each relation claims of the seed-paired ratio (the numerator's mean regret over the denominator's): above 1,
#: the denominator is ahead; below 1, the numerator is ahead; containing 1, the two are level
RELATIONS = {"above": "interval above 1", "below": "interval below 1", "level": "interval contains 1"}


def _claims() -> dict:
    """The comparisons the page's findings claim: ``(experiment, dataset, ε) -> (claim, relation, learner)``.

    ``relation`` is a key of :data:`RELATIONS`; ``learner`` is the private learner claimed best (``BEST`` only;
    ``None`` where no learner is named).
    """
    ds_all = ("bananas", "breast_cancer", "digits", "phishing", "trump_approval")
    c: dict = {}
    for ds in ds_all:
        for e in (1.0, 3.0, 10.0):   # the sparse vector leads from ε = 1 on (breast_cancer: from ε = 3)
            c[(BEST, ds, e)] = ("sparse_vector the best private learner, ahead of the runner-up", "above", "sparse_vector")
        for e in (3.0, 10.0):
            c[(TREE, ds, e)] = ("tree DP-FTRL ahead of L2P-MW", "below", None)
        c[(TREE, ds, 1.0)] = ("tree DP-FTRL ahead of L2P-MW", "below", None)
        c[(HEDGE_SV, ds, EPS_TOP)] = ("non-private Hedge ahead of the sparse vector", "above", None)
        c[(L2P_SV, ds, EPS_TOP)] = ("the sparse vector ahead of L2P-MW", "above", None)
        for e in (0.1, 0.3):         # the order of tree DP-FTRL and L2P-MW reverses at small ε
            c[(TREE, ds, e)] = ("L2P-MW ahead of tree DP-FTRL", "above", None)
    c[(BEST, "breast_cancer", 1.0)] = ("tree_ftrl the best private learner, ahead of the runner-up", "above", "tree_ftrl")
    for ds, e in (("breast_cancer", 0.1), ("digits", 0.1), ("digits", 0.3), ("trump_approval", 0.1)):
        c[(BEST, ds, e)] = ("l2p_mw the best private learner, ahead of the runner-up", "above", "l2p_mw")
    for e in (0.1, 0.3):             # bananas: every expert is close to the best; never switching costs nothing
        c[(BEST, "bananas", e)] = ("the best and the runner-up level", "level", None)
    for ds, e in (("bananas", 0.1), ("bananas", 0.3), ("bananas", 1.0), ("breast_cancer", 0.3)):
        c[(TREE, ds, e)] = ("tree DP-FTRL and L2P-MW level", "level", None)
    return c


#: ``(experiment, dataset, ε) -> (claim, relation, learner)`` of the page's findings; a comparison not listed is
#: reported only ("not tested")
CLAIMS = _claims()


def _paired(sub, base: str, other: str) -> tuple:
    """``(ratio, lo, hi, n_seeds)``: ``other``'s mean regret over ``base``'s, seed-paired (``ratio_to_base``)."""
    x = ratio_to_base(sub, ["dataset"], "learner", base, "regret", n_boot=N_BOOT).set_index("learner").loc[other]
    return float(x["ratio"]), float(x["ratio_lo"]), float(x["ratio_hi"]), int(x["n_seeds"])


def comparisons(df) -> "pd.DataFrame":
    """The seed-paired comparisons of a kept run: at every (dataset, ε) the best private learner by mean regret
    against the next best and tree DP-FTRL against L2P-MW; at ε = :data:`EPS_TOP` the sparse vector against
    non-private Hedge and L2P-MW against the sparse vector.

    Learners that never switched at a point played the same initial expert (the same draw, seed by seed): they
    enter the best-versus-runner-up comparison as one entry, labelled ``initial expert (...) †``.

    Args:
        df: the per-seed results (``results.csv``: ``dataset``, ``learner``, ``eps``, ``seed``, ``regret``,
            ``regret_per_round``, ``switches``).

    Returns:
        A ``pandas.DataFrame``, one row per comparison: ``experiment``, ``dataset``, ``eps``, ``base`` and
        ``other`` (the learners of the denominator and the numerator), ``base_label`` and ``other_label`` (as the
        page names them), ``ratio`` (``other``'s mean regret over ``base``'s), ``ratio_lo``, ``ratio_hi`` (95%
        bootstrap over seed indices, both learners resampled together) and ``n_seeds``.
    """
    import pandas as pd

    s = summarize(df, ["dataset", "learner", "eps"], ["regret_per_round"])
    still = df.groupby(["dataset", "learner", "eps"])["switches"].max() == 0
    priv = df[df["learner"].isin(PRIVATE)]
    means = s[s["learner"].isin(PRIVATE)]
    rows = []

    def add(exp, ds, e, base, other, base_label, other_label, paired):
        r, lo, hi, n = paired
        rows.append(dict(experiment=exp, dataset=ds, eps=float(e), base=base, other=other, base_label=base_label,
                         other_label=other_label, ratio=r, ratio_lo=lo, ratio_hi=hi, n_seeds=n))

    def two(ds, e, a, b):
        return df[(df["dataset"] == ds) & (df["eps"] == e) & df["learner"].isin([a, b])]

    # tree DP-FTRL against L2P-MW: one bootstrap stream over every (dataset, ε), in order
    tl = ratio_to_base(df[df["learner"].isin(["l2p_mw", "tree_ftrl"])], ["dataset", "eps"], "learner", "l2p_mw",
                       "regret", n_boot=N_BOOT).set_index(["dataset", "eps"])

    for ds in sorted(df["dataset"].unique()):
        for e in sorted(df["eps"].unique()):
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
            add(BEST, ds, e, first, second, name1, name2, _paired(sub, first, second))
            if (ds, e) in tl.index:
                t = tl.loc[(ds, e)]
                add(TREE, ds, e, "l2p_mw", "tree_ftrl", "l2p_mw", "tree_ftrl",
                    (float(t["ratio"]), float(t["ratio_lo"]), float(t["ratio_hi"]), int(t["n_seeds"])))
            learners = set(df[(df["dataset"] == ds) & (df["eps"] == e)]["learner"])
            if e == EPS_TOP and {"hedge", "sparse_vector", "l2p_mw"} <= learners:
                add(HEDGE_SV, ds, e, "hedge", "sparse_vector", "hedge", "sparse_vector",
                    _paired(two(ds, e, "hedge", "sparse_vector"), "hedge", "sparse_vector"))
                add(L2P_SV, ds, e, "sparse_vector", "l2p_mw", "sparse_vector", "l2p_mw",
                    _paired(two(ds, e, "sparse_vector", "l2p_mw"), "sparse_vector", "l2p_mw"))
    return pd.DataFrame(rows)


def _comparisons_block(comp) -> str:
    """The seed-paired comparisons block (``comp`` from :func:`comparisons`): at every (dataset, ε) the best
    private learner against the next best, then tree DP-FTRL against L2P-MW."""
    eps = sorted(comp["eps"].unique())
    dss = sorted(comp["dataset"].unique())
    best = comp[comp["experiment"] == BEST].set_index(["dataset", "eps"])
    brow = [[ds, *[f"{best.at[(ds, e), 'base_label']}; {best.at[(ds, e), 'other_label']} "
                   + fmt_ci(best.at[(ds, e), "ratio"], best.at[(ds, e), "ratio_lo"], best.at[(ds, e), "ratio_hi"], 2)
                   for e in eps]] for ds in dss]
    tl = comp[comp["experiment"] == TREE].set_index(["dataset", "eps"])
    trow = [[ds, *[fmt_ci(tl.at[(ds, e), "ratio"], tl.at[(ds, e), "ratio_lo"], tl.at[(ds, e), "ratio_hi"], 2)
                   for e in eps]] for ds in dss]
    return ("*Generated; do not edit by hand.* Seed-paired comparisons (95% bootstrap over seed indices, "
            f"{N_BOOT} replicates). Best private learner by mean regret at each point, and the next best's mean "
            "regret over the best's (above 1: the best is ahead; an interval containing 1: the two are level):\n\n"
            + markdown_table(["dataset", *[f"ε = {e:g}" for e in eps]], brow)
            + "\n\nTree DP-FTRL's mean regret over L2P-MW's (below 1: the tree is ahead):\n\n"
            + markdown_table(["dataset", *[f"ε = {e:g}" for e in eps]], trow))


def verdicts(comp) -> "pd.DataFrame":
    """One verdict per seed-paired comparison, against the claims of the page's findings (:data:`CLAIMS`).

    A claim ``above`` holds when the ratio's 95% interval lies above 1, ``below`` when it lies below 1, ``level``
    when it contains 1; a claim naming the best learner also needs that learner in the denominator. A comparison
    with no claim is "not tested" (reported only).

    Args:
        comp: the comparisons (:func:`comparisons`): ``experiment``, ``dataset``, ``eps``, ``base``,
            ``base_label``, ``other_label``, ``ratio``, ``ratio_lo``, ``ratio_hi``, ``n_seeds``.

    Returns:
        The verdict rows: ``experiment``, ``cell`` (dataset, ε and the ratio's two learners), ``claim``,
        ``relation``, ``ratio``, ``ratio_lo``, ``ratio_hi``, ``n_seeds``, ``verdict`` (one of
        :data:`jaxdp.studies.analysis.VERDICTS`), ``reason`` and ``link``.
    """
    import pandas as pd

    rows = []
    for r in comp.itertuples(index=False):
        cell = f"{r.dataset}, ε = {r.eps:g}: {r.other_label} / {r.base_label}"
        row = dict(experiment=r.experiment, cell=cell, ratio=r.ratio, ratio_lo=r.ratio_lo, ratio_hi=r.ratio_hi,
                   n_seeds=int(r.n_seeds), reason="", link="")
        key = (r.experiment, r.dataset, float(r.eps))
        if key not in CLAIMS:
            rows.append(dict(row, claim="no claim", relation="", verdict="not tested",
                             reason="reported only, no order claimed"))
            continue
        text, rel, learner = CLAIMS[key]
        lo, hi = float(r.ratio_lo), float(r.ratio_hi)
        if not (np.isfinite(lo) and np.isfinite(hi)):
            rows.append(dict(row, claim=text, relation=rel, verdict="not tested", reason="no paired interval"))
            continue
        ok = {"above": lo > 1.0, "below": hi < 1.0, "level": lo <= 1.0 <= hi}[rel]
        reason = ""
        if learner is not None and r.base != learner:
            ok, reason = False, f"the best by mean is {r.base_label}, not {learner}"
        elif not ok:
            reason = {"above": "the interval does not lie above 1", "below": "the interval does not lie below 1",
                      "level": "the interval excludes 1"}[rel]
        rows.append(dict(row, claim=f"{text} ({RELATIONS[rel]})", relation=rel,
                         verdict="holds" if ok else "misses", reason=reason, link="" if ok else "#comparisons"))
    order = {x: i for i, x in enumerate((BEST, TREE, HEDGE_SV, L2P_SV))}
    keys = [(order.get(r.experiment, len(order)), str(r.experiment), r.dataset, float(r.eps))
            for r in comp.itertuples(index=False)]
    return pd.DataFrame([rows[i] for i in sorted(range(len(rows)), key=keys.__getitem__)])


def _verdict_block(v) -> str:
    """The comparison-verdict table of the page (``v`` from :func:`verdicts`), with its tally."""
    from .analysis import VERDICTS

    rows = []
    for r in v.itertuples(index=False):
        if r.verdict not in VERDICTS:
            raise ValueError(f"verdict {r.verdict!r} of {r.experiment} {r.cell}: not one of {VERDICTS}")
        if r.verdict != "holds" and not r.reason:
            raise ValueError(f"{r.experiment} {r.cell}: verdict {r.verdict!r} needs a reason")
        if r.verdict == "misses" and not r.link:
            raise ValueError(f"{r.experiment} {r.cell}: a miss needs a link to its explanation")
        cellv = {"holds": "holds", "misses": "**misses**"}.get(r.verdict, r.verdict)
        if r.reason:
            cellv += f": {r.reason}"
        if r.link:
            cellv += f" ([why]({r.link}))"
        rows.append([r.experiment, r.cell, r.claim, fmt_ci(r.ratio, r.ratio_lo, r.ratio_hi, 3), int(r.n_seeds), cellv])
    counts = v["verdict"].value_counts()
    # the classes of the earlier rubric, and "consistent, unresolved" where present (this study keeps that rubric)
    tally = ", ".join(f"{int(counts.get(k, 0))} {k}" for k in VERDICTS if k != "consistent, unresolved" or counts.get(k))
    return (f"*Generated; do not edit by hand.* {len(v)} seed-paired comparisons: {tally}. Each ratio is the "
            "numerator's mean regret over the denominator's at one (dataset, ε); seed i uses stream order i and "
            "algorithm key i for every learner, so the 95% percentile bootstrap resamples seed indices jointly for "
            f"the two learners ({N_BOOT} replicates). No paper states an order of these learners on these streams: "
            "the claims are this page's findings.\n\n"
            + markdown_table(["experiment", "cell", "claim", "measured [95% CI]", "seeds", "verdict"], rows))


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of ``docs/results/real-experts.md`` from a kept run's ``results.csv``.

    Seed ``i`` uses stream order ``i`` and algorithm key ``i`` for every learner and ε, so two learners at one
    point are compared seed by seed (:func:`jaxdp.studies.analysis.ratio_to_base`); a learner that never switches
    plays its initial expert, the same draw for every such learner.

    Args:
        results_dir: the results directory (default ``results/real-experts``).

    Returns:
        ``{block name: Markdown}`` for :data:`BLOCKS`: the regret per round of every (dataset, learner, ε), the
        seed-paired comparisons (the best private learner at each point against the next best; tree DP-FTRL
        against L2P-MW) and the verdict of every comparison against the page's claims (:func:`verdicts`).
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

    comp = comparisons(df)
    return {BLOCKS[0]: tables, BLOCKS[1]: _comparisons_block(comp), BLOCKS[2]: _verdict_block(verdicts(comp))}


def publish(results_dir=None) -> list:
    """Rewrite the generated blocks of ``docs/results/real-experts.md`` from a kept run (:func:`page_blocks`).

    Args:
        results_dir: the results directory (default ``results/real-experts``).

    Returns:
        The names of the blocks that changed.
    """
    return publish_blocks(DOC_PAGE, page_blocks(results_dir))
