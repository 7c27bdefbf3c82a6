"""``realizable-experts``: REAL (realizable DP experts) claims R1–R6, R9 of docs/algorithms/realizable.md#studies.

Spec, grids and claims: ``specs/realizable-experts.toml``; page prose: ``specs/realizable-experts.md``. Experiments
(column ``exp``), all at the planners' ``mode``: ``vsT`` (R1), ``vsd`` (R2, R3, R9: regret and draws vs log d),
``vseps`` (R4), ``Lstar`` (R5) and ``lb`` (R6: regret ε / ln d against Thm 5's 1/32); the learners and adversaries
are :mod:`jaxdp.experts.realizable_setups`. ``binary_tree`` (Alg. 4) is planned once for the study's largest horizon
and run at every T; table ``binary_tree`` says whether it ever started a new phase.
"""
from __future__ import annotations

import pathlib

import numpy as np

from ..core import seed_keys
from ..experts import lower_bound_thm5, thm1_bound, thm2_bound
from ..experts.realizable_setups import realizable_point, run_realizable_point
from .analysis import fit_spans, verdict_table
from .claims import judge_curve, tally
from .framework import Study, fit_slopes, summarize
from .plots import plot_figures
from .specs import StudySpec, fstring, grid_points

S = StudySpec("realizable-experts", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS, LOWER_BOUND = S.doc_page, S.results, S.blocks, S.claims, S.claims["lower_bound"]
BT_KEYS = ["exp", "adversary", "d", "T", "eps"]
#: (experiment = the fits' ``vs`` variable, learners) that may run the same regret seed by seed: one row where they do
SAME = (("Lstar", ("adaptive_flipped", "adaptive_printed")), ("lb", ("potential", "sparse_vector")))


def _point(p, cfg, T_max) -> dict:
    """The keywords of point ``p`` for :mod:`jaxdp.experts.realizable_setups` (binary_tree planned for ``T_max``)."""
    return dict(d=p["d"], T=p["T"], eps=p["eps"], delta=p["delta"], Lstar=p["Lstar"], mode=cfg["mode"],
                beta=cfg["beta"], q=cfg["q"], T_plan=T_max)


def binary_tree_table(df):
    """Per binary-tree grid point, the aggregations ``binary_tree`` of its TOML over its seeds: the share that ever
    start a new phase, the phases, the model changes and the padded selections, with the plan's ``m_set``, ``P_max``
    and ``tau``."""
    g = df.assign(new_phase=df["phases"] > 0, padded_any=df["padded"] > 0).groupby(BT_KEYS, sort=True)
    t = g.agg(**{c: (col, how) for c, col, how in S.data["binary_tree"]}).reset_index()
    return t.astype({"m_set": int, "P_max": int, "phases_max": int})


def _analyze(df):
    import pandas as pd

    by = ["exp", "learner", "adversary", "d", "T", "eps", "delta", "Lstar"]
    summ = summarize(df, by, ["regret", "em_draws", "doublings"], quantiles=(0.95,), constants=("K", "eps_certified"))
    if "phases" in df:   # binary tree only (NaN elsewhere): fraction of seeds that ever started a new phase
        summ["new_phase_frac"] = df.groupby(by, sort=True)["phases"].agg(
            lambda v: float((v > 0).mean()) if v.notna().all() else np.nan).to_numpy()
    tables, sl, bt = {"summary": summ}, [], df[df["learner"] == "binary_tree"]
    if len(bt):
        tables["binary_tree"] = binary_tree_table(bt)
    for exp, x, y, keys, half, keep in S.data["fits"]:   # every point of a curve uses the same seed keys
        sub = df[df["exp"] == exp].assign(log_d=lambda t: np.log(t["d"].astype(float)))
        if len(sub := sub.query(keep) if keep else sub):
            sl.append(fit_slopes(sub, x, y, keys, upper_half=half, resample="joint"))
            sl[-1].insert(0, "fit", f"{y} vs {x.replace('_', ' ')}")
    if sl:
        tables["slopes"] = pd.concat(sl, ignore_index=True)
    lb = df[df["exp"] == "lb"].copy()
    if len(lb):
        lb["ratio"] = lb["regret"] * lb["eps"] / np.log(lb["d"])
        tables["lower_bound"] = summarize(lb, ["learner", "d", "eps"], ["ratio"]).assign(bound_1_over_32=1 / 32)
    return tables


def _plot(df, outdir: pathlib.Path, cfg):
    """R1–R6's figures (``figures`` of the TOML): each experiment's curves beside the theorems' bounds (constants 1)."""
    names = dict(cfg, thm1_bound=thm1_bound, thm2_bound=thm2_bound, lower_bound_thm5=lower_bound_thm5)
    return plot_figures(df.assign(lab=df["learner"] + np.where(df["delta"] > 0, " (eps,delta)", " pure")), outdir,
                        S.data["figures"], names)


@S.register
def build(cfg: dict) -> Study:
    """The ``vsT``, ``vsd``, ``vseps``, ``Lstar`` and ``lb`` experiments, every learner compiled once for the
    study's largest horizon. Tables: ``summary``, ``slopes``, ``binary_tree`` and ``lower_bound``."""
    points = grid_points(S.data["grids"], cfg, dict(exp="", learner="", adversary="", d=int(cfg["d0"]),
                                                    T=int(cfg["T_fixed"]), eps=float(cfg["eps0"]), delta=0.0,
                                                    Lstar=0.0))
    T_max = max(p["T"] for p in points)   # one compilation per (learner, adversary, d) for the whole study

    def run(pts, seeds):
        return [run_realizable_point(p["learner"], p["adversary"], seed_keys(cfg["seed"], seeds),
                                     **_point(p, cfg, T_max)) for p in pts]

    return S.study(cfg, points=points, run=run, analyze=_analyze,
                   check_point=lambda p: realizable_point(p["learner"], p["adversary"], **_point(p, cfg, T_max)),
                   plot=lambda df, outdir: _plot(df, outdir, cfg))


def verdicts(slopes, lower_bound=None, same: tuple = ()):
    """The verdict of every fitted cell (:data:`CLAIMS`) and of Thm 5's lower bound (:data:`LOWER_BOUND`);
    ``same``: ``(exp, learners)`` whose runs on ``exp`` are one piece of evidence (:data:`SAME`), shown as one row."""
    import pandas as pd

    merged, rows = {(e, lrn): g for e, g in same for lrn in g}, []
    name = {k: " = ".join(g) for k, g in merged.items()}
    for r in slopes.itertuples(index=False):
        k, at = (r.fit.split(" vs ")[1], r.learner), r._asdict()   # its claim key and cell: TOML f-strings
        if merged.get(k, (r.learner,))[0] == r.learner:
            c = CLAIMS.get(fstring(S.data["claim_keys"].get(r.fit, "{fit}/{learner}"), at), CLAIMS.get(r.fit))
            rows.append(judge_curve(c, r, None, k[0], experiment=r.fit, no_claim=tuple(S.data["no_claim"]),
                                    cell=name.get(k, r.learner) + fstring(S.data["cells"].get(r.fit, ""), at)))
    for lrn, lb in ([] if lower_bound is None else lower_bound.groupby("learner", sort=True)):
        if merged.get(("lb", lrn), (lrn,))[0] == lrn:
            rows.append(judge_curve(LOWER_BOUND, None, lb, bound=lb["bound_1_over_32"], stem="ratio", lower=True,
                                    cell=name.get(("lb", lrn), lrn), experiment="Thm 5 bound / regret"))
    return pd.DataFrame(rows, columns=["experiment", "cell", "claim", "claimed", "kind", "slope", "slope_lo",
                                       "slope_hi", "n_seeds", "verdict", "reason", "link"])


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/realizable-experts``)."""
    import pandas as pd

    d = pathlib.Path(results_dir or RESULTS)
    slopes, lb, df, s = (pd.read_csv(d / f"{f}.csv") for f in ("slopes", "lower_bound", "results", "summary"))
    piv = {e: df[(df["exp"] == e) & df["learner"].isin(g)].pivot_table(
        index=["d", "T", "eps", "Lstar", "seed"], columns="learner", values="regret") for e, g in SAME}
    same = tuple((e, g) for e, g in SAME if piv[e].shape[1] == len(g) and (piv[e].nunique(axis=1, dropna=False) == 1).all())
    v = verdicts(slopes, lb, same)
    t = s[s["exp"] == "vsT"].sort_values(["learner", "adversary", "T"])
    reg, lbt = S.table("regret", t), S.table("lower_bound", lb)
    head = S.render(BLOCKS[0], rows=len(v), tol=f"{LOWER_BOUND.tolerance:g}", tally=tally(v),
                    table=verdict_table(v, width=120),   # claims and reasons keyed below the table
                    merged="".join(S.render("realizable-experts merged", exp=e, learners=" and ".join(g),
                                            learners_eq=" = ".join(g)) for e, g in same),
                    spans=fit_spans(slopes))
    return dict(zip(BLOCKS, (head, reg, lbt)))


publish = S.publisher(page_blocks)
