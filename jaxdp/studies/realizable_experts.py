"""``realizable-experts``: REAL (realizable DP experts) claims R1–R6, R9 of docs/algorithms/realizable.md#studies.

Spec and claims: ``specs/realizable-experts.toml``; page prose: ``specs/realizable-experts.md``. Experiments
(column ``exp``), all at the planners' ``mode``: ``vsT`` (R1, regret vs T on the halving and Bernoulli adversaries),
``vsd`` (R2, R3, R9: regret and draws vs log d, pure and approximate), ``vseps`` (R4), ``Lstar`` (R5: Alg. 2's
doubling test as printed and flipped, and the known-L* sparse vector, on ``l_t(x*) ~ Ber(L*/T)``) and ``lb`` (R6:
regret ε / ln d against Thm 5's 1/32). ``binary_tree`` (REAL Alg. 4, docs/algorithms/realizable.md#binary-tree-experts)
is planned once for the study's largest horizon and run at every T; table ``binary_tree`` says whether it ever
started a new phase.
"""
from __future__ import annotations

import math
import pathlib

import jax.numpy as jnp
import numpy as np

from ..core import seed_keys, simulate
from ..experts import (
    HalvingParams, HedgeParams, RealizableBernoulliParams, RealizableLBParams, adaptive_sparse_vector_experts,
    adv_realizable_bernoulli, adv_realizable_halving, adv_realizable_lb, binary_tree_experts, binary_tree_static,
    experts_problem, hedge, lower_bound_thm5, params_from_plan, plan_adaptive_sparse_vector_experts,
    plan_binary_tree_experts, plan_potential_experts, plan_sparse_vector_experts, potential_experts,
    sparse_vector_experts, thm1_bound, thm2_bound,
)
from .analysis import verdict_table
from .claims import Measurement, judge, tally, untested_row, verdict_row
from .framework import Study, fit_slopes, plot_curves, summarize
from .specs import StudySpec

S = StudySpec("realizable-experts", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS, LOWER_BOUND = S.doc_page, S.results, S.blocks, S.claims, S.claims["lower_bound"]
#: (experiment = the fits' ``vs`` variable, learners) that may run the same regret seed by seed: one row where they do
SAME = (("Lstar", ("adaptive_flipped", "adaptive_printed")), ("lb", ("potential", "sparse_vector")))
_LEARNERS = {"binary_tree": None, "sparse_vector": sparse_vector_experts, "potential": potential_experts,
             "sparse_vector_known_Lstar": sparse_vector_experts, "adaptive_printed": adaptive_sparse_vector_experts,
             "adaptive_flipped": adaptive_sparse_vector_experts, "hedge": hedge}


def _plan(p, cfg):
    """The planner's plan of point ``p`` (``None`` for Hedge); binary_tree is planned for the study's ``_T_max``."""
    name, d, T, eps, mode, beta = p["learner"], p["d"], p["T"], p["eps"], cfg["mode"], cfg["beta"]
    if name in ("sparse_vector", "sparse_vector_known_Lstar"):
        Ls = p["Lstar"] if name == "sparse_vector_known_Lstar" else 0.0
        return plan_sparse_vector_experts(eps=eps, delta=p["delta"], T=T, d=d, mode=mode, beta=beta, Lstar=Ls)
    if name == "potential":
        return plan_potential_experts(eps=min(eps, 0.99) if p["delta"] > 0 else eps, delta=p["delta"], T=T, d=d,
                                      mode=mode)
    if name.startswith("adaptive"):
        sign = "flipped" if name == "adaptive_flipped" else "printed"
        return plan_adaptive_sparse_vector_experts(eps=eps, T=T, d=d, mode=mode, beta=beta, test_sign=sign)
    if name == "binary_tree":
        return plan_binary_tree_experts(eps=eps, T=int(cfg["_T_max"]), d=d, mode=mode, beta=beta)
    return None


def _adversary(p, cfg):
    """The adversary of point ``p`` and its params (halving epochs r = 2L + 1, L the sparse-vector threshold)."""
    d, T, adv = p["d"], p["T"], p["adversary"]
    if adv == "halving":
        L = plan_sparse_vector_experts(eps=p["eps"], T=T, d=d, mode=cfg["mode"], beta=cfg["beta"]).params["L"]
        return adv_realizable_halving(d), HalvingParams(r=jnp.int32(int(2 * L) + 1))
    if adv == "lb":
        return adv_realizable_lb(d), RealizableLBParams(T=jnp.int32(T), eps=jnp.float32(p["eps"]))
    if p["Lstar"] > T:
        raise ValueError(f"Lstar={p['Lstar']} must be <= T_fixed={T} (the best expert's loss probability is Lstar/T)")
    q_star = p["Lstar"] / T if adv == "near_bernoulli" else 0
    return adv_realizable_bernoulli(d), RealizableBernoulliParams(q=jnp.float32(cfg["q"]), q_star=jnp.float32(q_star))


def _check_point(p, cfg):
    """Every planner and params constructor a point calls, without simulating."""
    plan = _plan(p, cfg)
    if plan is not None:
        params_from_plan(plan)
    _adversary(p, cfg)


def _points(cfg):
    d0, e0, pts = int(cfg["d0"]), float(cfg["eps0"]), []

    def pt(exp, lrn, adv, d=d0, T=cfg["T_fixed"], eps=e0, delta=0.0, Ls=0.0):
        return dict(exp=exp, learner=lrn, adversary=adv, d=int(d), T=int(T), eps=float(eps), delta=float(delta),
                    Lstar=float(Ls))

    pts += [pt("vsT", lrn, adv, T=T) for adv in cfg["vsT_adversaries"]
            for lrn in ("sparse_vector", "potential", "binary_tree", "hedge") for T in cfg["T"]]
    pts += [pt("vsd", lrn, "halving", d=d, delta=delta) for lrn, delta in (
        ("sparse_vector", 0.0), ("sparse_vector", cfg["delta"]), ("potential", 0.0), ("binary_tree", 0.0))
        for d in cfg["d"]]
    pts += [pt("vseps", "sparse_vector", "halving", eps=eps) for eps in cfg["eps"]]
    pts += [pt("Lstar", lrn, "near_bernoulli", Ls=Ls) for lrn in (
        "adaptive_printed", "adaptive_flipped", "sparse_vector_known_Lstar") for Ls in cfg["Lstar"]]
    pts += [pt("lb", lrn, "lb", d=d, T=cfg["lb_T"], eps=eps) for lrn in ("sparse_vector", "potential")
            for d in cfg["lb_d"] for eps in cfg["lb_eps"]]
    return pts


def _run_point(p, cfg, seeds, T_max):
    name, d, n = p["learner"], p["d"], len(seeds)
    plan = _plan(p, cfg)
    params = HedgeParams(eta=jnp.float32(1.0)) if plan is None else params_from_plan(plan)
    learner = binary_tree_experts(d, **binary_tree_static(plan)) if name == "binary_tree" else _LEARNERS[name](d)
    adversary, ap = _adversary(p, cfg)
    out = simulate(learner, adversary, experts_problem(), params, ap, seed_keys(cfg["seed"], seeds), p["T"],
                   T_max=T_max)
    res = {"regret": out["regret"].astype(float), "best_loss": out["best_loss"].astype(float),
           "switches": out["switches"].astype(float), "em_draws": out.get("em_draws", out["switches"]).astype(float),
           "doublings": out.get("doublings", np.zeros(n)).astype(float),
           "eps_certified": np.full(n, plan.eps_certified if plan else np.inf),
           "K": np.full(n, plan.params.get("K", np.nan) if plan else np.nan, dtype=float)}
    if name == "binary_tree":
        res.update(phases=out["phases"].astype(float), padded=out["padded"].astype(float),
                   **{k: np.full(n, float(plan.params[k])) for k in ("m_set", "P_max", "tau")})
    return res


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
    d0, e0, Tf, beta, mode = cfg["d0"], cfg["eps0"], cfg["T_fixed"], cfg["beta"], cfg["mode"]
    paths, s = [], summarize(df[df["exp"] == "vsT"], ["learner", "adversary", "T"], ["regret"])
    for adv, g in s.groupby("adversary"):
        th = {"Thm 1 (consts 1)": lambda T: thm1_bound(d0, T, e0, beta),
              "hedge ln d/eta": lambda T: np.full_like(T, math.log(d0))}
        paths.append(plot_curves(g, "T", "regret", outdir / f"R1_regret_vs_T_{adv}.png", hue="learner", theory=th,
                                 title=f"R1 regret vs T ({adv}, d={d0}, eps={e0}, mode={mode})"))
    sub = df[df["exp"] == "vsd"].copy()
    if len(sub):
        sub["lab"] = sub["learner"] + np.where(sub["delta"] > 0, " (eps,delta)", " pure")
        s = summarize(sub, ["lab", "d"], ["regret", "em_draws"])
        paths.append(plot_curves(s, "d", "regret", outdir / "R2_regret_vs_d.png", hue="lab",
                                 theory={"Thm 1 pure": lambda d: thm1_bound(d, Tf, e0, beta),
                                         "Thm 1 approx": lambda d: thm1_bound(d, Tf, e0, beta, cfg["delta"])},
                                 title=f"R2/R9 regret vs d (T={Tf}, mode={mode})"))
        paths.append(plot_curves(s, "d", "em_draws", outdir / "R3_switches_vs_d.png", hue="lab",   # log y: the small counts stay apart
                                 theory={"log2 d": lambda d: np.log2(d)},
                                 title="R3 exponential-mechanism draws (switches) vs d"))
    s = summarize(df[df["exp"] == "vseps"], ["learner", "eps"], ["regret"])
    if len(s):
        r0 = float(s["regret_mean"].iloc[0]) * float(s["eps"].iloc[0])
        paths.append(plot_curves(s, "eps", "regret", outdir / "R4_regret_vs_eps.png", hue="learner",
                                 theory={"c/eps": lambda e: r0 / e}, title="R4 regret vs eps"))
    sub = df[(df["exp"] == "Lstar") & (df["Lstar"] > 0)]
    if len(sub):
        paths.append(plot_curves(summarize(sub, ["learner", "Lstar"], ["regret"]), "Lstar", "regret",
                                 outdir / "R5_regret_vs_Lstar.png", hue="learner", title="R5 adaptivity to L*",
                                 theory={"Thm 2 (consts 1)": lambda L: thm2_bound(d0, Tf, e0, beta, L)}))
    lb = df[df["exp"] == "lb"]
    if len(lb):
        paths.append(plot_curves(summarize(lb, ["learner", "eps"], ["regret"]), "eps", "regret",
                                 outdir / "R6_lower_bound.png", hue="learner", title="R6 Thm 5 instance: regret vs eps",
                                 theory={"log d/(32 eps)": lambda e: lower_bound_thm5(int(lb["d"].min()), e)}))
    return paths


@S.register
def build(cfg: dict) -> Study:
    """The ``vsT``, ``vsd``, ``vseps``, ``Lstar`` and ``lb`` experiments, every learner compiled once for the
    study's largest horizon. Tables: ``summary``, ``slopes``, ``binary_tree`` and ``lower_bound``."""
    points = _points(cfg)
    T_max = max(p["T"] for p in points)   # one compilation per (learner, adversary, d) for the whole study
    run_cfg = dict(cfg, _T_max=T_max)     # binary_tree is planned for T_max
    return S.study(cfg, points=points, run=lambda pts, seeds: [_run_point(p, run_cfg, seeds, T_max) for p in pts],
                   check_point=lambda p: _check_point(p, run_cfg), analyze=_analyze,
                   plot=lambda df, outdir: _plot(df, outdir, cfg))


def verdicts(slopes, lower_bound=None, same: tuple = ()):
    """The verdict of every fitted cell (:data:`CLAIMS`) and of Thm 5 (:data:`LOWER_BOUND`), by :func:`judge`;
    ``same``: ``(exp, learners)`` whose runs on ``exp`` are one piece of evidence (:data:`SAME`), shown as one row."""
    import pandas as pd

    merged, rows = {(e, lrn): g for e, g in same for lrn in g}, []
    name = {k: " = ".join(g) for k, g in merged.items()}
    for r in slopes.itertuples(index=False):
        delta, logd, k = float(getattr(r, "delta", np.nan)), r.fit.endswith("log d"), (r.fit.split(" vs ")[1], r.learner)
        if merged.get(k, (r.learner,))[0] != r.learner:
            continue
        m = Measurement(float(r.slope), float(r.slope_lo), float(r.slope_hi), int(np.nan_to_num(r.n_seeds)),
                        decades=math.log10(float(r.x_max) / float(r.x_min)))
        adv = getattr(r, "adversary", None)
        cell = name.get(k, r.learner) + (f", δ = {delta:g}" if logd else f", {adv}" if isinstance(adv, str) else "")
        claim = CLAIMS.get(f"{r.fit}/{r.learner}" + (f"/delta={delta:g}" if logd else ""), CLAIMS.get(r.fit))
        if claim is None:
            rows.append(untested_row(r.fit, cell, "no exponent stated for this learner",
                                     "no exponent stated: reported for comparison", m=m))
        else:
            rows.append(verdict_row(claim, m, judge(claim, m), experiment=r.fit, cell=cell))
    for lrn, lb in ([] if lower_bound is None else lower_bound.groupby("learner", sort=True)):
        if merged.get(("lb", lrn), (lrn,))[0] == lrn:
            inv = lb[["ratio_mean", "ratio_lo", "ratio_hi"]].rdiv(lb["bound_1_over_32"], axis=0)   # hook: a lower bound
            m = Measurement(float(inv["ratio_mean"].max()), float(inv["ratio_hi"].min()), float(inv["ratio_lo"].max()),
                            int(lb["n_seeds"].min()), ratios_lo=list(inv["ratio_hi"]))
            rows.append(verdict_row(LOWER_BOUND, m, judge(LOWER_BOUND, m), cell=name.get(("lb", lrn), lrn),
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
    span = {f: math.log10(g["x_max"].max() / g["x_min"].min()) for f, g in slopes.groupby("fit")}
    t = s[s["exp"] == "vsT"].sort_values(["learner", "adversary", "T"])
    reg, lbt = S.table("regret", t), S.table("lower_bound", lb)
    head = S.render(BLOCKS[0], rows=len(v), tol=f"{LOWER_BOUND.tolerance:g}", tally=tally(v),
                    table=verdict_table(v, width=120),   # claims and reasons keyed below the table
                    merged="".join(S.render("realizable-experts merged", exp=e, learners=" and ".join(g),
                                            learners_eq=" = ".join(g)) for e, g in same),
                    spans=", ".join(f"{span[f]:.2f} ({f})" for f in sorted(span)))
    return dict(zip(BLOCKS, (head, reg, lbt)))


publish = S.publisher(page_blocks)
