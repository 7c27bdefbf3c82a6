"""``real-experts``: private prediction with experts on loss streams built from real data (needs ``jaxdp[data]``).

Spec and findings: ``specs/real-experts.toml``; page prose: ``specs/real-experts.md``. Seed ``i`` replays stream order
``i`` of a dataset's expert-pool losses with algorithm key ``i``, so two learners at one point are compared seed by
seed; each private learner's ε is certified by its planner (:func:`jaxdp.experts.realizable_setups.replay_expert_pool`).
"""
from __future__ import annotations

import pathlib

import numpy as np

from ..experts.realizable_setups import replay_expert_pool
from .analysis import ratio_to_base
from .claims import judge_order, tally
from .framework import Study, summarize
from .plots import plot_figures
from .specs import StudySpec

S = StudySpec("real-experts", __name__)
DOC_PAGE, RESULTS, BLOCKS = S.doc_page, S.results, S.blocks
KEYS, EPS_TOP, N_BOOT = ["dataset", "learner", "eps"], S.data["eps_top"], 2000
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
    T = int(cfg["T"])

    def run(pts, seeds):
        return replay_expert_pool(pts[0]["dataset"], [(p["learner"], p["eps"]) for p in pts], cfg["seed"], seeds,
                                  T=T, n_experts=int(cfg["n_experts"]), pool_seed=cfg["pool_seed"], delta=cfg["delta"])

    def analyze(df):
        s = summarize(df, KEYS, ["regret_per_round", "regret", "switches"])
        g = df.groupby(KEYS, sort=True)
        s["eps_certified"] = g["eps_certified"].first().to_numpy()
        s["best_loss_per_round"] = (g["best_loss"].mean() / T).to_numpy()
        return {"summary": s}

    return S.study(cfg, points=[{**p, "eps": float(p["eps"])} for p in S.points(cfg)], run=run, analyze=analyze,
                   plot=lambda df, outdir: plot_figures(df, outdir, S.data["figures"], cfg))   # the TOML's figure


def comparisons(df, summary):
    """The seed-paired ratios ``other``/``base`` of mean regret (the per-seed ``df``; ``summary``: :func:`build`'s):
    at every (dataset, ε) the best private learner against the next best (learners that never switched: one entry,
    ``initial expert (...) †``) and tree DP-FTRL against L2P-MW; at ε = :data:`EPS_TOP` the sparse vector against
    Hedge and L2P-MW against the sparse vector. Rows in experiment (in that order), dataset, ε order."""
    import pandas as pd

    s, rows = summary[summary["learner"] != "hedge"], []

    def add(exp, ds, e, base, other, r=None, base_label=None, other_label=None):   # r: a row of ratio_to_base
        if r is None:
            sub = df[(df["dataset"] == ds) & (df["eps"] == e) & df["learner"].isin([base, other])]
            r = ratio_to_base(sub, ["dataset"], "learner", base, "regret", n_boot=N_BOOT).iloc[0]
        rows.append(dict(experiment=exp, dataset=ds, eps=float(e), base=base, other=other,
                         base_label=base_label or base, other_label=other_label or other,
                         **{k: r[k] for k in ("ratio", "ratio_lo", "ratio_hi", "n_seeds")}))

    # tree DP-FTRL against L2P-MW: one bootstrap stream over every (dataset, ε), in order
    tl = ratio_to_base(df[df["learner"].isin(["l2p_mw", "tree_ftrl"])], ["dataset", "eps"], "learner", "l2p_mw",
                       "regret", n_boot=N_BOOT).set_index(["dataset", "eps"])
    for (ds, e), m in s.groupby(["dataset", "eps"]):
        m = m.sort_values("regret_per_round_mean")
        frozen = list(m[m["switches_mean"] == 0]["learner"])   # switched at no seed: the initial expert throughout
        entries = [(x, f"initial expert ({', '.join(sorted(frozen))}) †" if x in frozen else x)
                   for x in m["learner"] if x not in frozen[1:]]
        (first, name1), (second, name2) = entries[:2]
        add(BEST, ds, e, first, second, None, name1, name2)
        if (ds, e) in tl.index:
            add(TREE, ds, e, "l2p_mw", "tree_ftrl", tl.loc[(ds, e)])
        if e == EPS_TOP and {"hedge", "sparse_vector", "l2p_mw"} <= set(df[(df["dataset"] == ds)
                                                                           & (df["eps"] == e)]["learner"]):
            add(HEDGE_SV, ds, e, "hedge", "sparse_vector")
            add(L2P_SV, ds, e, "sparse_vector", "l2p_mw")
    out, order = pd.DataFrame(rows), {x: i for i, x in enumerate((BEST, TREE, HEDGE_SV, L2P_SV))}
    return out.iloc[np.lexsort((out["eps"], out["dataset"], out["experiment"].map(order)))].reset_index(drop=True)


def verdicts(comp):
    """One verdict row per comparison against :data:`CLAIMS`, a paired order (:func:`~jaxdp.studies.claims.judge_order`:
    ``above`` holds when the ratio's 95% interval lies above 1, ``below`` below 1, ``level`` when it contains 1; a
    claim naming the best learner also needs it in the denominator); a comparison with no claim is "not tested"."""
    import pandas as pd

    rows = []
    for r in comp.itertuples(index=False):
        text, rel, learner = CLAIMS.get((r.experiment, r.dataset, float(r.eps)), ("no claim", "", None))
        rows.append(judge_order(text, rel, r.ratio, r.ratio_lo, r.ratio_hi, r.n_seeds, experiment=r.experiment,
                                cell=f"{r.dataset}, ε = {r.eps:g}: {r.other_label} / {r.base_label}", best=r.base,
                                claimed_best=learner, label=r.base_label, link="#comparisons"))
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/real-experts``)."""
    import pandas as pd

    d = pathlib.Path(results_dir or RESULTS)
    df, s = pd.read_csv(d / "results.csv"), pd.read_csv(d / "summary.csv")
    comp = comparisons(df, s)
    v, by = verdicts(comp), {k: S.table(k, comp[comp["experiment"] == x]) for k, x in (("tree", TREE), ("best", BEST))}
    tables = [S.render("real-experts dataset", dataset=ds, best=g["best_loss_per_round"].iloc[0],
                       table=S.table("regret", g)) for ds, g in s.groupby("dataset")]
    return {BLOCKS[0]: S.render(BLOCKS[0], S=int(s["n_seeds"].min()), tables="\n\n".join(tables)),
            BLOCKS[1]: S.render(BLOCKS[1], n_boot=N_BOOT, **by),
            BLOCKS[2]: S.render(BLOCKS[2], rows=len(v), tally=tally(v), n_boot=N_BOOT, table=S.table("verdicts", v))}


publish = S.publisher(page_blocks)
