"""``real-experts``: private prediction with experts on loss streams built from real data (needs ``jaxdp[data]``).

Spec and findings: ``specs/real-experts.toml``; page prose: ``specs/real-experts.md``. Seed ``i`` replays stream order
``i`` of a dataset's expert-pool losses (:func:`jaxdp.data.expert_pool_losses`) with algorithm key ``i``, so two
learners at one point are compared seed by seed; each private learner's ε is certified by its planner.
"""
from __future__ import annotations

import pathlib

import jax.numpy as jnp
import numpy as np

from ..core import seed_keys
from ..experts.realizable_setups import replay_certified
from .analysis import ratio_to_base
from .claims import order_row, tally
from .framework import Study, summarize
from .plots import plot_figures
from .specs import StudySpec

S = StudySpec("real-experts", __name__)
DOC_PAGE, RESULTS, BLOCKS, DEFAULTS, QUICK = S.doc_page, S.results, S.blocks, S.defaults, S.quick
LEARNERS, EPS_TOP, N_BOOT = tuple(S.params["learners"].choices or ()), S.data["eps_top"], 2000
PRIVATE = tuple(x for x in LEARNERS if x != "hedge")
#: the experiments of the comparisons, in the verdict table's order
BEST, TREE, HEDGE_SV, L2P_SV = ("best private vs runner-up", "tree DP-FTRL vs L2P-MW", "sparse vector vs Hedge",
                                "L2P-MW vs sparse vector")
#: ``(experiment, dataset, ε) -> (claim, relation, learner)`` of the page's findings (``learner``: the private learner
#: claimed best, or ``None``); a comparison not listed is reported only ("not tested")
CLAIMS = {(f["experiment"], ds, float(e)): (f["claim"], f["relation"], f.get("learner"))
          for f in S.data["findings"] for ds, e in f["at"]}


@S.register
def build(cfg: dict) -> Study:
    """Every dataset × learner × ε; table ``summary``: regret per round, regret, switches, certified ε and the best
    expert's loss per round."""
    from ..data import expert_pool_losses

    T, d = int(cfg["T"]), int(cfg["n_experts"])

    def run(pts, seeds):
        losses = np.stack([expert_pool_losses(pts[0]["dataset"], T, d, order_seed=int(cfg["seed"]) * 100003 + int(s),
                                              pool_seed=int(cfg["pool_seed"])) for s in seeds])
        best, stream, out = losses.sum(axis=1).min(axis=1).astype(float), jnp.asarray(losses), []
        for pt in pts:     # seed i: stream order i with algorithm key i (one grid row per seed)
            r = replay_certified(pt["learner"], stream, seed_keys(int(cfg["seed"]), seeds), eps=pt["eps"],
                                 delta=float(cfg["delta"]))
            out.append({"regret": r["regret"], "regret_per_round": r["regret"] / T, "best_loss": best,
                        "switches": r["switches"], "eps_certified": r["eps_certified"]})
        return out

    def analyze(df):
        s = summarize(df, ["dataset", "learner", "eps"], ["regret_per_round", "regret", "switches"])
        g = df.groupby(["dataset", "learner", "eps"], sort=True)
        s["eps_certified"] = g["eps_certified"].first().to_numpy()
        s["best_loss_per_round"] = (g["best_loss"].mean() / T).to_numpy()
        return {"summary": s}

    return S.study(cfg, points=[{**p, "eps": float(p["eps"])} for p in S.points(cfg)], run=run, analyze=analyze,
                   plot=lambda df, outdir: plot_figures(df, outdir, S.data["figures"], cfg))   # the TOML's figure


def _paired(sub, base: str, other: str):
    """``other``'s mean regret over ``base``'s, seed-paired: its row of ``ratio_to_base`` (``ratio``, ``ratio_lo``,
    ``ratio_hi``, ``n_seeds``)."""
    return ratio_to_base(sub, ["dataset"], "learner", base, "regret", n_boot=N_BOOT).set_index("learner").loc[other]


def comparisons(df):
    """The seed-paired ratios ``other``/``base`` of mean regret: at every (dataset, ε) the best private learner against
    the next best (learners that never switched: one entry, ``initial expert (...) †``) and tree DP-FTRL against
    L2P-MW; at ε = :data:`EPS_TOP` the sparse vector against Hedge and L2P-MW against the sparse vector. Rows in
    experiment (in that order), dataset, ε order."""
    import pandas as pd

    s = summarize(df, ["dataset", "learner", "eps"], ["regret_per_round"])
    still = df.groupby(["dataset", "learner", "eps"])["switches"].max() == 0
    priv, means, rows = df[df["learner"].isin(PRIVATE)], s[s["learner"].isin(PRIVATE)], []

    def add(exp, ds, e, base, other, r, base_label=None, other_label=None):   # r: a row of ratio_to_base
        rows.append(dict(experiment=exp, dataset=ds, eps=float(e), base=base, other=other,
                         base_label=base_label or base, other_label=other_label or other, ratio=float(r["ratio"]),
                         ratio_lo=float(r["ratio_lo"]), ratio_hi=float(r["ratio_hi"]), n_seeds=int(r["n_seeds"])))

    def two(ds, e, a, b):
        return _paired(df[(df["dataset"] == ds) & (df["eps"] == e) & df["learner"].isin([a, b])], a, b)

    # tree DP-FTRL against L2P-MW: one bootstrap stream over every (dataset, ε), in order
    tl = ratio_to_base(df[df["learner"].isin(["l2p_mw", "tree_ftrl"])], ["dataset", "eps"], "learner", "l2p_mw",
                       "regret", n_boot=N_BOOT).set_index(["dataset", "eps"])
    for ds in sorted(df["dataset"].unique()):
        for e in sorted(df["eps"].unique()):
            m = means[(means["dataset"] == ds) & (means["eps"] == e)].sort_values("regret_per_round_mean")
            frozen = [x for x in m["learner"] if bool(still.loc[(ds, x, e)])]
            entries = [(x, "initial expert (" + ", ".join(sorted(frozen)) + ") †" if x in frozen else x)
                       for x in m["learner"] if x not in frozen[1:]]
            (first, name1), (second, name2) = entries[0], entries[1]
            sub = priv[(priv["dataset"] == ds) & (priv["eps"] == e) & priv["learner"].isin([first, second])]
            add(BEST, ds, e, first, second, _paired(sub, first, second), name1, name2)
            if (ds, e) in tl.index:
                add(TREE, ds, e, "l2p_mw", "tree_ftrl", tl.loc[(ds, e)])
            if e == EPS_TOP and {"hedge", "sparse_vector", "l2p_mw"} <= set(df[(df["dataset"] == ds)
                                                                               & (df["eps"] == e)]["learner"]):
                add(HEDGE_SV, ds, e, "hedge", "sparse_vector", two(ds, e, "hedge", "sparse_vector"))
                add(L2P_SV, ds, e, "sparse_vector", "l2p_mw", two(ds, e, "sparse_vector", "l2p_mw"))
    out, order = pd.DataFrame(rows), {x: i for i, x in enumerate((BEST, TREE, HEDGE_SV, L2P_SV))}
    return out.iloc[np.lexsort((out["eps"], out["dataset"], out["experiment"].map(order)))].reset_index(drop=True)


def verdicts(comp):
    """One verdict row per comparison against :data:`CLAIMS`, a paired order (:func:`~jaxdp.studies.claims.order_row`:
    ``above`` holds when the ratio's 95% interval lies above 1, ``below`` below 1, ``level`` when it contains 1; a
    claim naming the best learner also needs it in the denominator); a comparison with no claim is "not tested"."""
    import pandas as pd

    rows = []
    for r in comp.itertuples(index=False):
        text, rel, learner = CLAIMS.get((r.experiment, r.dataset, float(r.eps)), ("no claim", "", None))
        rows.append(order_row(text, rel, r.ratio, r.ratio_lo, r.ratio_hi, r.n_seeds, experiment=r.experiment,
                              cell=f"{r.dataset}, ε = {r.eps:g}: {r.other_label} / {r.base_label}", best=r.base,
                              claimed_best=learner, label=r.base_label, link="#comparisons"))
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/real-experts``)."""
    import pandas as pd

    df = pd.read_csv(pathlib.Path(results_dir or RESULTS) / "results.csv")
    s = summarize(df, ["dataset", "learner", "eps"], ["regret_per_round"])
    still = df.groupby(["dataset", "learner", "eps"])["switches"].max() == 0
    T = float((df["regret"] / df["regret_per_round"]).dropna().median())
    best = df.groupby("dataset")["best_loss"].mean().to_dict()
    s = s.join(still.rename("frozen"), on=["dataset", "learner", "eps"])   # the [columns] mark a private one †
    comp = comparisons(df)
    v, by = verdicts(comp), {k: S.table(k, comp[comp["experiment"] == x]) for k, x in (("tree", TREE), ("best", BEST))}
    tables = [f"### {ds} (best expert's loss per round {best[ds] / T:.3f})\n\n" + S.table("regret", g)
              for ds, g in s.groupby("dataset")]
    return {BLOCKS[0]: S.render(BLOCKS[0], S=int(df.groupby(["dataset", "learner", "eps"])["seed"].nunique().min()),
                                tables="\n\n".join(tables)),
            BLOCKS[1]: S.render(BLOCKS[1], n_boot=N_BOOT, **by),
            BLOCKS[2]: S.render(BLOCKS[2], rows=len(v), tally=tally(v), n_boot=N_BOOT, table=S.table("verdicts", v))}


publish = S.publisher(page_blocks)
