"""``realizable-experts``: REAL (realizable DP experts) claims R1–R6, R9 of docs/algorithms/realizable.md#studies.

Spec, grids and claims: ``specs/realizable-experts.toml``; page prose: ``specs/realizable-experts.md``. Experiments
(column ``exp``), all at the planners' ``mode``: ``vsT`` (R1), ``vsd`` (R2, R3, R9: regret and draws vs log d),
``vseps`` (R4), ``Lstar`` (R5) and ``lb`` (R6: regret ε / ln d against Thm 5's 1/32); the learners and adversaries
are :mod:`jaxdp.experts.realizable_setups`. ``binary_tree`` (Alg. 4) is planned once for the study's largest horizon
and run at every T; table ``binary_tree`` says whether it ever started a new phase.
"""
from __future__ import annotations

import math
import pathlib

import numpy as np

from ..core import seed_keys
from ..experts import lower_bound_thm5, thm1_bound, thm2_bound
from ..experts.realizable_setups import realizable_point, run_realizable_point
from .analysis import fit_spans, grid_union, verdict_table
from .claims import judge_curve, judge_lower_bound, tally
from .framework import Study, fit_slopes, plot_curves, summarize
from .specs import StudySpec

S = StudySpec("realizable-experts", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS, LOWER_BOUND = S.doc_page, S.results, S.blocks, S.claims, S.claims["lower_bound"]
#: (experiment = the fits' ``vs`` variable, learners) that may run the same regret seed by seed: one row where they do
SAME = (("Lstar", ("adaptive_flipped", "adaptive_printed")), ("lb", ("potential", "sparse_vector")))


def _point(p, cfg, T_max) -> dict:
    """The keywords of point ``p`` for :mod:`jaxdp.experts.realizable_setups` (binary_tree planned for ``T_max``)."""
    return dict(d=p["d"], T=p["T"], eps=p["eps"], delta=p["delta"], Lstar=p["Lstar"], mode=cfg["mode"],
                beta=cfg["beta"], q=cfg["q"], T_plan=T_max)


def binary_tree_table(df):
    """Per binary-tree grid point: the share of seeds that ever start a new phase, the phases, the model changes and
    the padded selections, with the plan's ``m_set``, ``P_max`` and ``tau``."""
    import pandas as pd

    rows = []
    for key, g in df.groupby(["exp", "adversary", "d", "T", "eps"], sort=True):
        ph = g["phases"].to_numpy(float)
        rows.append(dict(zip(["exp", "adversary", "d", "T", "eps"], key), n_seeds=len(g),
                         m_set=int(g["m_set"].iloc[0]), P_max=int(g["P_max"].iloc[0]), tau=float(g["tau"].iloc[0]),
                         regret_mean=float(g["regret"].mean()), best_loss_mean=float(g["best_loss"].mean()),
                         switches_mean=float(g["switches"].mean()), phases_mean=float(ph.mean()),
                         phases_max=int(ph.max()), new_phase_frac=float((ph > 0).mean()),
                         ever_new_phase=bool((ph > 0).any()), padded_frac=float((g["padded"] > 0).mean())))
    return pd.DataFrame(rows)


def _analyze(df):
    import pandas as pd

    by = ["exp", "learner", "adversary", "d", "T", "eps", "delta", "Lstar"]
    summ = summarize(df, by, ["regret", "em_draws", "doublings"], quantiles=(0.95,))
    for c in ("K", "eps_certified"):
        summ[c] = df.groupby(by, sort=True)[c].first().to_numpy()
    if "phases" in df:   # binary tree only (NaN elsewhere): fraction of seeds that ever started a new phase
        summ["new_phase_frac"] = df.groupby(by, sort=True)["phases"].agg(
            lambda v: float((v > 0).mean()) if v.notna().all() else np.nan).to_numpy()
    tables, sl, bt = {"summary": summ}, [], df[df["learner"] == "binary_tree"]
    if len(bt):
        tables["binary_tree"] = binary_tree_table(bt)
    for exp, x, grp in (("vsT", "T", ["learner", "adversary"]), ("vseps", "eps", ["learner"]),
                        ("Lstar", "Lstar", ["learner"])):
        sub = df[(df["exp"] == exp) & ((df[x] > 0) if x == "Lstar" else True)]
        if len(sub):
            sl.append(fit_slopes(sub, x, "regret", grp, resample="joint"))   # every point uses the same seed keys
            sl[-1].insert(0, "fit", f"regret vs {x}")
    sub = df[df["exp"] == "vsd"].assign(log_d=lambda t: np.log(t["d"].astype(float)))
    for y in ("regret", "em_draws") if len(sub) else ():
        sl.append(fit_slopes(sub, "log_d", y, ["learner", "delta"], upper_half=False, resample="joint"))
        sl[-1].insert(0, "fit", f"{y} vs log d")
    if sl:
        tables["slopes"] = pd.concat(sl, ignore_index=True)
    lb = df[df["exp"] == "lb"].copy()
    if len(lb):
        lb["ratio"] = lb["regret"] * lb["eps"] / np.log(lb["d"])
        tables["lower_bound"] = summarize(lb, ["learner", "d", "eps"], ["ratio"]).assign(bound_1_over_32=1 / 32)
    return tables


def _plot(df, outdir: pathlib.Path, cfg):
    """R1–R6's figures: each experiment's curves beside the theorems' bounds (constants 1)."""
    d0, e0, Tf, beta, mode = cfg["d0"], cfg["eps0"], cfg["T_fixed"], cfg["beta"], cfg["mode"]
    df = df.assign(lab=df["learner"] + np.where(df["delta"] > 0, " (eps,delta)", " pure"))
    thm1 = {"Thm 1 (consts 1)": lambda T: thm1_bound(d0, T, e0, beta),
            "hedge ln d/eta": lambda T: np.full_like(T, math.log(d0))}
    figures = [(f"R1_regret_vs_T_{a}", "vsT", df["adversary"] == a, "learner", "T", "regret", lambda s: thm1,
                f"R1 regret vs T ({a}, d={d0}, eps={e0}, mode={mode})")
               for a in sorted(df.loc[df["exp"] == "vsT", "adversary"].unique())] + [
        ("R2_regret_vs_d", "vsd", True, "lab", "d", "regret", lambda s: {
            "Thm 1 pure": lambda d: thm1_bound(d, Tf, e0, beta),
            "Thm 1 approx": lambda d: thm1_bound(d, Tf, e0, beta, cfg["delta"])},
         f"R2/R9 regret vs d (T={Tf}, mode={mode})"),
        ("R3_switches_vs_d", "vsd", True, "lab", "d", "em_draws", lambda s: {"log2 d": np.log2},
         "R3 exponential-mechanism draws (switches) vs d"),
        ("R4_regret_vs_eps", "vseps", True, "learner", "eps", "regret", lambda s: {
            "c/eps": lambda e: float(s["regret_mean"].iloc[0]) * float(s["eps"].iloc[0]) / e}, "R4 regret vs eps"),
        ("R5_regret_vs_Lstar", "Lstar", df["Lstar"] > 0, "learner", "Lstar", "regret", lambda s: {
            "Thm 2 (consts 1)": lambda L: thm2_bound(d0, Tf, e0, beta, L)}, "R5 adaptivity to L*"),
        ("R6_lower_bound", "lb", True, "learner", "eps", "regret", lambda s: {
            "log d/(32 eps)": lambda e: lower_bound_thm5(int(df.loc[df["exp"] == "lb", "d"].min()), e)},
         "R6 Thm 5 instance: regret vs eps")]
    paths = []
    for name, exp, rows, hue, x, y, theory, title in figures:
        if len(sub := df[(df["exp"] == exp) & rows]):
            s = summarize(sub, [hue, x], [y])
            paths.append(plot_curves(s, x, y, outdir / f"{name}.png", hue=hue, theory=theory(s), title=title))
    return paths


@S.register
def build(cfg: dict) -> Study:
    """The ``vsT``, ``vsd``, ``vseps``, ``Lstar`` and ``lb`` experiments, every learner compiled once for the
    study's largest horizon. Tables: ``summary``, ``slopes``, ``binary_tree`` and ``lower_bound``."""
    points = grid_union(S.data["grids"], cfg, dict(exp="", learner="", adversary="", d=int(cfg["d0"]),
                                                   T=int(cfg["T_fixed"]), eps=float(cfg["eps0"]), delta=0.0, Lstar=0.0))
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
        delta, logd, k = float(getattr(r, "delta", np.nan)), r.fit.endswith("log d"), (r.fit.split(" vs ")[1], r.learner)
        adv = getattr(r, "adversary", None)
        if merged.get(k, (r.learner,))[0] == r.learner:
            rows.append(judge_curve(CLAIMS.get(f"{r.fit}/{r.learner}" + (f"/delta={delta:g}" if logd else ""),
                                               CLAIMS.get(r.fit)), r, None, k[0], experiment=r.fit,
                                    cell=name.get(k, r.learner) + (f", δ = {delta:g}" if logd else f", {adv}"
                                                                    if isinstance(adv, str) else ""),
                                    no_claim=("no exponent stated for this learner",
                                              "no exponent stated: reported for comparison")))
    for lrn, lb in ([] if lower_bound is None else lower_bound.groupby("learner", sort=True)):
        if merged.get(("lb", lrn), (lrn,))[0] == lrn:
            rows.append(judge_lower_bound(LOWER_BOUND, lb, bound=lb["bound_1_over_32"], cell=name.get(("lb", lrn), lrn),
                                          experiment="Thm 5 bound / regret"))
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
