"""``growth-rates``: GROWTH adaptivity to κ (docs/algorithms/growth.md#studies), experiments G1-G7.

Spec, experiments and claims: ``specs/growth-rates.toml``; page prose: ``specs/growth-rates.md``. :data:`CLAIMS`
are judged by :func:`jaxdp.studies.claims.judge` on each fitted slope (:func:`verdicts`), with the study's hooks:
G4's misses name the grid's resolution floor or float64 resolution, Geps fits only the ε where the privacy term
dominates, G3's exponent ratio and G5's quantile ratios are measured from the per-seed results, two curves that are
one piece of evidence share a row, and an off-centre interval no wider than the tolerance says so.
"""
from __future__ import annotations

import dataclasses
import math
import pathlib
from typing import Any

import numpy as np

from ..core.simulate import seed_keys
from ..sco import (
    EpochParams, LocalizationParams, epoch_estimator, exact_excess_quadrature, grid_floor, growth_instance,
    localization_estimator, plan_epoch_growth_sco, plan_grad_inverse_sensitivity, plan_localization_sco, run_sco_cpu,
)
from ..sco.inverse_sensitivity import exact_grad_inv_estimator
from .specs import ROOT as ROOT
from .analysis import _record_slope_ci, fmt_num
from .claims import Measurement, Verdict, judge, seeds_to_resolve, tally, verdict_row
from .framework import Study, fit_slopes, joint_slope_boot, plot_curves, summarize, verdict_table
from .specs import StudySpec

S = StudySpec("growth-rates", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS = S.doc_page, S.results, S.blocks, S.claims
DOC_PAGES, BLOCK, EXPERIMENTS = S.pages, S.blocks[0], S.params["experiments"].choices
SEED_BATCH, SEEDS_PER_CHUNK = 16, 128   # seeds per vmapped call, per chunk (memory; the results do not depend on it)
N_BOOT, GEPS_FLOOR_SHARE = 1000, 0.1    # Geps fits only the ε whose mean excess is at least 10x the noiseless path's
#: two curves are one piece of evidence when at every point their per-seed values correlate at least TWIN_CORR and
#: their means differ by at most TWIN_REL
TWIN_CORR, TWIN_REL = 0.999, 0.01
_REASON = S.data["reasons"]
#: explanations of misses and untested cells (sections of the results page; links work from docs/*/)
WHY = {k: f"../results/growth-rates.md#why-{k}" for k in ("grid-floor", "geps-floor", "float", "other")}
_ALGO_KEYS = ("exp", "algo", "inst", "kappa", "d", "eps", "delta", "kappa_low", "rho_rule", "sampler", "M")
_SUMMARY_BY = ["exp", "algo", "inst", "kappa", "d", "n_samples", "eps", "delta", "kappa_low", "rho_rule", "sampler",
               "M"]


def _floats(s):
    return [float(v) for v in str(s).split(",") if v.strip()]


def _ints(s):
    return [int(float(v)) for v in str(s).split(",") if v.strip()]


def theory_exponent(p: dict) -> float:
    """The claimed log-log slope of a point's experiment (``r = κ/(κ-1)``): ``-r/2`` in n for G1, G2, G5, G6;
    ``-1/2`` for G7; ``-r`` for G4 (``-min(r, 2)`` with the agnostic ρ) and Geps (in ε); ``r`` or ``r/2`` in d
    (G3, pure or approximate DP)."""
    r = p["kappa"] / (p["kappa"] - 1.0)
    if p["exp"] == "G4" and p.get("rho_rule") == "agnostic":
        return -min(r, 2.0)
    return {"G1": -r / 2, "G2": -r / 2, "G5": -r / 2, "G6": -r / 2, "G7": -0.5, "G4": -r, "Geps": -r,
            "G3": r if p["delta"] == 0 else r / 2}[p["exp"]]


def _point(exp, algo, inst, kappa, d, n, eps, delta, kappa_low, rho_rule="none", sampler="none", M=0):
    return dict(exp=exp, algo=algo, inst=inst, kappa=float(kappa), d=int(d), n_samples=int(n), eps=float(eps),
                delta=float(delta), kappa_low=float(kappa_low), rho_rule=rho_rule, sampler=sampler, M=int(M))


def build_points(cfg: dict) -> list:
    """The grid points of the selected experiments (``specs/growth-rates.toml``), one dict per point."""
    exps = [e.strip() for e in str(cfg["experiments"]).split(",") if e.strip()]
    ns, kappas, kl = _ints(cfg["n"]), _floats(cfg["kappas"]), float(cfg["kappa_low"])
    names = [v.strip() for v in str(cfg["g1_insts"]).split(",")]
    g1_insts = ([("regression", k) for k in kappas if "regression" in names]
                + [("atom", k) for k in kappas if k <= 2 and "atom" in names]
                + [("linear", k) for k in kappas if k >= 2 and "linear" in names])
    pts = []
    if "G4" in exps:
        # the grid law with both rules is one law wherever both windows are below one cell: theorem ρ only
        variants = [("theorem", "exact", 0), ("agnostic", "exact", 0), ("theorem", "grid", int(cfg["M"]))]
        variants += [("theorem", "grid", int(cfg["M_fine"]))] if int(cfg["M_fine"]) > 0 else []
        pts += [_point("G4", "grad_inv", i, k, 1, n, cfg["eps_priv"], 0.0, kl, rule, smp, M)
                for i, k in [("twopoint", 1.5)] + [("regression", k) for k in kappas if k >= 2]
                for rule, smp, M in variants for n in _ints(cfg["n_inv"])]
    if "G1" in exps or "G5" in exps:
        pts += [_point("G1", "epoch", i, k, 1, n, cfg["eps_stat"], 0.0, kl) for i, k in g1_insts for n in ns]
    if "G2" in exps:
        hard = [("linear_hard", k) for k in kappas if k >= 2] + [("twopoint_hard", k) for k in kappas if k <= 2]
        pts += [_point("G2", "epoch", i, k, 1, n, cfg["eps_stat"], 0.0, kl) for i, k in hard for n in ns]
    if "G3" in exps:
        pts += [_point("G3", "epoch", "regression", 2.0, d, cfg["n_fixed"], cfg["eps_priv"], dl, kl)
                for d in _ints(cfg["d_list"]) for dl in (0.0, float(cfg["delta"]))]
    if "Geps" in exps:
        pts += [_point("Geps", "epoch", "regression", k, 1, cfg["n_fixed"], e, 0.0, kl)
                for k in kappas for e in _floats(cfg["eps_list"])]
    if "G6" in exps:
        pts += [_point("G6", "epoch", "regression", 3.0, 1, n, cfg["eps_stat"], 0.0, klow)
                for klow in _floats(cfg["kappa_lows"]) for n in ns]
    if "G7" in exps:
        pts += [_point("G7", "localization", i, k, 1, n, cfg["eps_stat"], 0.0, kl) for i, k in g1_insts for n in ns]
    return pts


def _plan(p: dict, inst):
    """The planner call of a point (its ``.params``)."""
    kw = dict(eps=p["eps"], d=p["d"], n=p["n_samples"], L=inst.L, D=2 * inst.R)
    if p["algo"] == "epoch":
        return plan_epoch_growth_sco(delta=p["delta"], kappa_low=p["kappa_low"], mode="rate", **kw).params
    if p["algo"] == "localization":
        return plan_localization_sco(delta=p["delta"], mode="rate", **kw).params
    return plan_grad_inverse_sensitivity(lam=inst.lam, kappa=inst.kappa, rho_rule=p["rho_rule"], M=max(int(p["M"]), 2),
                                         **kw).params


def check_point(p: dict, cfg: dict) -> None:
    """The instance and the planner call of :func:`run_point`, without running anything (``ValueError`` if refused)."""
    _plan(p, growth_instance(p["inst"], p["kappa"], p["d"], p["n_samples"]))


def run_point(p: dict, keys, cfg: dict) -> dict:
    """One grid point, one float64 run per key (vmapped): ``(S,)`` arrays ``excess`` with ``dist`` and ``gap_ok``
    (EPOCH-GROWTH, localization) or with ``erm_excess`` and ``accepted`` (the inverse-sensitivity sampler, G4)."""
    inst = growth_instance(p["inst"], p["kappa"], p["d"], p["n_samples"])
    n, n_iter, pl = p["n_samples"], int(cfg["n_iter"]), _plan(p, inst)
    if p["algo"] == "grad_inv":
        # exact draws: the continuous density (M = 0) or the M-cell grid law
        out = run_sco_cpu(exact_grad_inv_estimator(inst, n, float(pl["rho"]), int(p["M"])), keys, float(p["eps"]))
        return {k: np.asarray(out[k], float) for k in ("excess", "erm_excess", "accepted")}
    P: Any
    if p["algo"] == "epoch":
        fn, P, names = epoch_estimator(inst, n, pl["n_epochs"], pl["k"], n_iter), EpochParams, "eta0"
    else:
        fn, P, names = localization_estimator(inst, n, pl["k"], n_iter), LocalizationParams, "eta"
    out = run_sco_cpu(fn, keys, P(*(float(pl[k]) for k in (names, "eps", "delta", "gauss_mult", "phase_offset"))))
    return {k: np.asarray(out[k], float) for k in ("excess", "dist", "gap_ok")}


def _xcol(exp: str) -> str:
    return {"G3": "d", "Geps": "eps"}.get(exp, "n_samples")


def _with_defaults(df):
    """Older results (before the exact G4 sampler) lack ``sampler``/``M``: their G4 rows are the 2048-cell grid."""
    df = df.copy()
    if "sampler" not in df:
        df["sampler"] = np.where(df["exp"] == "G4", "grid", "none")
    if "M" not in df:
        df["M"] = np.where(df["exp"] == "G4", 2048, 0)
    return df


def _cell(exp, r) -> str:
    k = f"κ = {r['kappa']:g}"
    if exp == "G3":
        return "pure (δ = 0)" if r["delta"] == 0 else f"approximate (δ = {r['delta']:g})"
    if exp == "G4":
        smp = "continuous (exact)" if r["sampler"] == "exact" else f"grid M = {int(r['M'])}"
        return f"{r['inst']}, {k}, {smp}, ρ {r['rho_rule']}"
    if exp == "Geps":
        return f"regression, {k}, n = {int(r['n_samples'])}"
    return f"regression, {k}, κ_low = {r['kappa_low']:g}" if exp == "G6" else f"{r['inst']}, {k}"


def _geps_floor(n: int, kappa: float, kappa_low: float) -> float:
    """The noiseless algorithm's excess at ``n`` (the deterministic proximal path, ``jaxdp.sco.prox_path``)."""
    from ..sco.prox_path import epoch_prox_path_1d

    return float(epoch_prox_path_1d(int(n), float(kappa), kappa_low=float(kappa_low))["excess"])


def g4_quadrature_table(summ):
    """The exact continuous sampler's measured mean ERM excess (regression rows of ``summ``) against
    :func:`jaxdp.sco.exact_excess_quadrature`: its ratio and whether the CI contains the exact value."""
    import pandas as pd

    rows = []
    sel = summ[(summ["exp"] == "G4") & (summ["sampler"] == "exact") & (summ["inst"] == "regression")]
    for _, r in sel.iterrows():
        n = int(r["n_samples"])
        p = dict(algo="grad_inv", eps=r["eps"], d=1, n_samples=n, rho_rule=r["rho_rule"], M=2)
        rho = float(_plan(p, growth_instance("regression", r["kappa"], 1, n))["rho"])
        e = exact_excess_quadrature(r["kappa"], n, r["eps"], rho)
        rows.append(dict(kappa=r["kappa"], rho_rule=r["rho_rule"], n_samples=n, rho=rho, exact_mean=e,
                         measured_mean=r["erm_excess_mean"], measured_lo=r["erm_excess_lo"],
                         measured_hi=r["erm_excess_hi"], ratio=r["erm_excess_mean"] / e,
                         inside=bool(r["erm_excess_lo"] <= e <= r["erm_excess_hi"])))
    return pd.DataFrame(rows)


def _seed_mat(g, x, y):
    xs = np.sort(g[x].unique())
    return xs, g.pivot_table(index="seed", columns=x, values=y, aggfunc="mean", dropna=False).reindex(columns=list(xs))


def _curve(df, exp, r):
    x = _xcol(exp)
    sel = df["exp"] == exp
    for c in ("inst", "kappa", "delta", "kappa_low", "rho_rule", "sampler", "M", "d" if x != "d" else None):
        if c is not None and c in r and c in df:
            sel &= df[c] == r[c]
    return df[sel]


def _twins(df, slopes) -> dict:
    """``{j: (i, c)}``: curve ``j`` of ``slopes`` is the same evidence as the earlier curve ``i`` (the same claimed
    exponent and grid, means within ``TWIN_REL``, per-seed correlation ``c >= TWIN_CORR`` at every point)."""
    seen: dict = {}
    out: dict = {}
    for j, r in slopes.iterrows():
        y = "erm_excess" if r["exp"] == "G4" else "excess"
        xs, b = _seed_mat(_curve(df, r["exp"], r), _xcol(r["exp"]), y)
        key = (_xcol(r["exp"]), y, float(r["theory"]), tuple(xs))
        for i, a in seen.get(key, []):
            u, w = a.to_numpy(float), b.reindex(a.index).to_numpy(float)
            ok = np.isfinite(u) & np.isfinite(w)
            mu = [(u[ok[:, k], k].mean(), w[ok[:, k], k].mean()) for k in range(u.shape[1])]
            if all(abs(p - q) <= TWIN_REL * abs(p) for p, q in mu):
                c = min(float(np.corrcoef(u[ok[:, k], k], w[ok[:, k], k])[0, 1]) for k in range(u.shape[1]))
                if c >= TWIN_CORR:
                    out[j] = (i, c)
                    break
        else:
            seen.setdefault(key, []).append((j, b))
    return out


def _merged(a: str, b: str, exp_a: str, exp_b: str) -> str:
    """The cell of one row for two curves: ``…, ρ agnostic = ρ theorem``, or ``a (= G6: b)`` across experiments."""
    if exp_a != exp_b:
        return f"{a} (= {exp_b}: {b})"
    pa, pb = a.split(", "), b.split(", ")
    k = next((i for i, (u, w) in enumerate(zip(pa, pb)) if u != w), len(pa))
    return ", ".join(pa[:k] + [f"{', '.join(pa[k:])} = {', '.join(pb[k:])}"])


def _judge(claim, m: Measurement) -> Verdict:
    """``judge``, with a true reason where a rate's interval is no wider than the tolerance but off-centre."""
    v = judge(claim, m)
    hw, off = (m.hi - m.lo) / 2, abs(m.estimate - claim.value)
    if v.verdict != "consistent, unresolved" or claim.kind != "rate" or hw > claim.tolerance:
        return v
    end = m.hi if m.hi - claim.value > claim.value - m.lo else m.lo
    what = (_REASON["off_centre_in"].format(seeds=seeds_to_resolve(hw, m.n_seeds, claim.tolerance - off))
            if off < claim.tolerance else _REASON["off_centre_out"])
    return Verdict(v.verdict, _REASON["off_centre"].format(hw=hw, tol=claim.tolerance, off=off, end=fmt_num(end),
                                                           S=m.n_seeds, what=what))


def _geps(g, r):
    """Geps's hook: ``(fit, verdict or None, cell note)``, fitted only over the ε where the noiseless path's excess
    is at most ``GEPS_FLOOR_SHARE`` of the mean excess; not tested below 3 such ε."""
    floor = _geps_floor(int(r["n_samples"]), r["kappa"], r["kappa_low"])
    sm = g.groupby("eps")["excess"].mean()
    keep = sorted(e for e in sm.index if floor <= GEPS_FLOOR_SHARE * sm.loc[e])
    if len(keep) < 3:
        e = sm.index.max()
        return r, Verdict("not tested", _REASON["geps_untested"].format(
            floor=floor, share=floor / sm.loc[e], eps=e, kept=len(keep), cap=GEPS_FLOOR_SHARE)), ""
    if len(keep) == len(sm):
        return r, None, ""
    fr = fit_slopes(g[g["eps"].isin(keep)], x="eps", y="excess", upper_half=False, n_boot=N_BOOT, resample="joint")
    fit = r.copy()
    for c in ("slope", "slope_lo", "slope_hi", "n_seeds", "x_min", "x_max"):
        fit[c] = fr[c].iloc[0]
    return fit, None, _REASON["geps_note"].format(eps=", ".join(f"{e:g}" for e in keep), cap=GEPS_FLOOR_SHARE)


def _miss_why(exp, r, g) -> tuple:
    """G4's hook: ``(note, link)`` of a miss at the grid's resolution floor or at float64 resolution."""
    if exp != "G4":
        return "", WHY["other"]
    mean = float(g.groupby("n_samples")["erm_excess"].mean().iloc[-1])
    floor = grid_floor(r["inst"], r["kappa"], int(r["M"])) if r["sampler"] == "grid" else 0.0
    n = int(r["x_max"])
    if mean <= 10 * floor:
        return _REASON["grid_floor"].format(n=n, mean=mean, ratio=mean / floor, floor=floor), WHY["grid-floor"]
    if mean < 1e-13:
        return _REASON["float"].format(n=n, mean=mean), WHY["float"]
    return "", WHY["other"]


def _measured_ratios(df, rng) -> list:
    """G3's ratio of the pure and approximate exponents (one joint resampling of both curves) and G5's q99/mean
    against n for every G1 curve, measured from the per-seed results."""
    def slope(xs, ly):   # least-squares slope of log y on log x, along the last axis
        xc = np.log(np.asarray(xs, float)) - np.log(np.asarray(xs, float)).mean()
        return (ly - ly.mean(axis=-1, keepdims=True)) @ xc / (xc @ xc)

    def row(exp, cell, claim, xs, est, boots, S):
        lo, hi = np.nanquantile(boots, [0.025, 0.975])
        m = Measurement(float(est), float(lo), float(hi), S, decades=math.log10(max(xs) / min(xs)))
        return verdict_row(claim, m, _judge(claim, m), experiment=exp, cell=cell, link=claim.link)

    rows = []
    g3 = df[df["exp"] == "G3"]
    if len(g3) and g3["delta"].nunique() == 2:
        xs, tp = _seed_mat(g3[g3["delta"] == 0], "d", "excess")
        ta = _seed_mat(g3[g3["delta"] > 0], "d", "excess")[1].reindex(tp.index)
        P, A = tp.to_numpy(float), ta.to_numpy(float)
        sp, sa = joint_slope_boot(P, xs, 0, rng=rng)[0], joint_slope_boot(A, xs, 0, rng=rng)[0]
        idx = rng.integers(0, len(P), size=(N_BOOT, len(P)))
        boots = slope(xs, np.log(np.nanmean(P[idx], axis=1))) / slope(xs, np.log(np.nanmean(A[idx], axis=1)))
        rows.append(row("G3", "exponent ratio pure / approximate", CLAIMS["G3 ratio"], xs, sp / sa, boots, len(P)))
    for (inst, kappa), g in df[df["exp"] == "G1"].groupby(["inst", "kappa"], sort=True):
        xs, tab = _seed_mat(g, "n_samples", "excess")
        Y = tab.to_numpy(float)
        q = lambda Yb: slope(xs, np.log(np.nanquantile(Yb, 0.99, axis=-2) / np.nanmean(Yb, axis=-2)))  # noqa: E731
        boots = q(Y[rng.integers(0, len(Y), size=(200, len(Y)))])
        rows.append(row("G5", f"q99/mean vs n, {inst}, κ = {kappa:g}", CLAIMS["G5"], xs, q(Y), boots, len(Y)))
    return rows


def verdicts(df, slopes):
    """One verdict per (experiment, cell) against :data:`CLAIMS` (the rubric of :func:`judge`): every fitted curve
    of ``slopes`` (a curve that is the same evidence as an earlier one, :func:`_twins`, shares its row), the G3
    exponent ratio and G5's quantile ratios, from the per-seed results ``df``; ordered by experiment."""
    import pandas as pd

    df = _with_defaults(df)
    twins = _twins(df, slopes)
    rows = []
    for j, r in slopes.iterrows():
        exp, cell, same = r["exp"], _cell(r["exp"], r), ""
        if exp not in CLAIMS or j in twins:
            continue
        for k, (i, c) in twins.items():
            if i == j:
                cell = _merged(cell, _cell(slopes.loc[k, "exp"], slopes.loc[k]), exp, slopes.loc[k, "exp"])
                same = _REASON["twins"].format(c=c)
        claim = dataclasses.replace(CLAIMS[exp], value=float(r["theory"]))
        g = _curve(df, exp, r)
        fit, v, note = _geps(g, r) if exp == "Geps" else (r, None, "")
        link = WHY["geps-floor"] if v else ""
        m = Measurement(float(fit["slope"]), float(fit["slope_lo"]), float(fit["slope_hi"]), int(fit["n_seeds"]),
                        decades=math.log10(float(fit["x_max"]) / float(fit["x_min"])))
        v = v or _judge(claim, m)
        if v.verdict == "misses":
            why, link = _miss_why(exp, r, g)
            v = Verdict(v.verdict, f"{v.reason}; {why}" if why else v.reason)
        v = Verdict(v.verdict, "; ".join(s for s in (v.reason, same) if s))
        rows.append(verdict_row(claim, m, v, experiment=exp, cell=cell + note, link=link))
    rows += _measured_ratios(df, np.random.default_rng(1))
    order = {e: i for i, e in enumerate(EXPERIMENTS)}
    return pd.DataFrame(rows).sort_values("experiment", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)


def analyze(df):
    """The study's tables: ``slopes`` (per curve, seed indices resampled jointly), ``summary`` (with 99%
    quantiles), ``verdicts`` and, when their rows are present, ``G5_high_probability``, ``solver``, ``sampler`` and
    ``G4_quadrature``."""
    import pandas as pd

    df = _with_defaults(df)
    slope_rows = []
    for exp, g in df.groupby("exp", sort=False):
        x = _xcol(exp)
        by = [c for c in _ALGO_KEYS + ("n_samples", "d", "eps") if c != x and c in g and c != "exp"]
        y = "erm_excess" if exp == "G4" else "excess"
        s = fit_slopes(g, x=x, y=y, by=by, upper_half=False, n_boot=N_BOOT, resample="joint")
        s.insert(0, "exp", exp)
        s["theory"] = [theory_exponent(dict(exp=exp, kappa=r["kappa"], delta=r.get("delta", 0.0),
                                            rho_rule=r.get("rho_rule"))) for _, r in s.iterrows()]
        slope_rows.append(s)
    summ = summarize(df, by=_SUMMARY_BY, metrics=[m for m in ("excess", "erm_excess") if m in df], n_boot=200,
                     quantiles=(0.99,))
    tables = {"slopes": pd.concat(slope_rows, ignore_index=True), "summary": summ}
    g1 = summ[summ["exp"] == "G1"]
    if len(g1):
        q = g1[["inst", "kappa", "n_samples", "excess_mean", "excess_q0.99"]].copy()
        q["q99_over_mean"] = q["excess_q0.99"] / q["excess_mean"]
        tables["G5_high_probability"] = q
    if "gap_ok" in df:
        tables["solver"] = df.groupby("exp")["gap_ok"].mean().reset_index()
    if "accepted" in df and (df["exp"] == "G4").any():
        tables["sampler"] = df[df["exp"] == "G4"].groupby(["inst", "kappa", "sampler", "M", "rho_rule"])[
            "accepted"].mean().reset_index()
    if ((summ["exp"] == "G4") & (summ["sampler"] == "exact") & (summ["inst"] == "regression")).any():
        tables["G4_quadrature"] = g4_quadrature_table(summ)
    tables["verdicts"] = verdicts(df, tables["slopes"])
    return tables


def _kept(results_dir=None):
    import json

    import pandas as pd

    d = pathlib.Path(results_dir) if results_dir is not None else RESULTS
    return d, verdicts(pd.read_csv(d / "results.csv"), pd.read_csv(d / "slopes.csv")), json.loads(
        (d / "manifest.json").read_text())


def _block(v, manifest: dict) -> str:
    return S.render(BLOCK, generated=S.generated(f"results/{S.name}/slopes.csv", f"results/{S.name}/results.csv"),
                    S=int(manifest.get("seeds", v["n_seeds"].max())), n_points=int(manifest.get("n_points", 0)),
                    rows=len(v), tally=tally(v), twin_corr=TWIN_CORR, twin_rel=TWIN_REL, tol=CLAIMS["G1"].tolerance,
                    tol_ratio=CLAIMS["G3 ratio"].tolerance, n_boot=N_BOOT, table=verdict_table(v))


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the docs pages from a kept run (default ``results/growth-rates``)."""
    _, v, manifest = _kept(results_dir)
    return {BLOCK: _block(v, manifest)}


def publish(results_dir=None, manifest_update: bool = False) -> list:
    """Rewrite the verdict block of :data:`DOC_PAGES` from a kept run; ``manifest_update`` also records the
    intervals' summary (``ci``) in its ``manifest.json``. Returns the names of the blocks that changed."""
    out, v, manifest = _kept(results_dir)
    if manifest_update:
        _record_slope_ci(out, manifest, v, ("holds", "consistent, unresolved", "misses"), N_BOOT)
    return S.publish({BLOCK: _block(v, manifest)})


def plot(df, outdir: pathlib.Path):
    """``growth_{exp}.png`` per experiment (mean excess against its ``x`` with 95% CIs, up to four theory slopes);
    in the kept results directory it also refreshes the docs' verdicts."""
    outdir, df, paths = pathlib.Path(outdir), _with_defaults(df), []
    summ = summarize(df, by=_SUMMARY_BY, metrics=[m for m in ("excess", "erm_excess") if m in df], n_boot=200)
    for exp, g in summ.groupby("exp", sort=False):
        x, y = _xcol(exp), "erm_excess" if exp == "G4" else "excess"
        g = g.copy()
        g["curve"] = (g["inst"] + " k=" + g["kappa"].astype(str) + " klow=" + g["kappa_low"].astype(str)
                      + " d=" + g["delta"].astype(str) + " " + g["rho_rule"].astype(str)
                      + np.where(g["sampler"] == "grid", " grid M=" + g["M"].astype(str),
                                 np.where(g["sampler"] == "exact", " exact", "")))
        theory: dict = {}
        for curve, h in g.groupby("curve"):
            h = h.sort_values(x)
            e = theory_exponent(dict(exp=exp, kappa=h["kappa"].iloc[0], delta=h["delta"].iloc[0],
                                     rho_rule=h["rho_rule"].iloc[0]))
            x0, y0 = float(h[x].iloc[0]), float(h[f"{y}_mean"].iloc[0])
            if y0 > 0 and len(theory) < 4:
                theory[f"slope {e:.2f} ({curve})"] = (lambda xs, x0=x0, y0=y0, e=e: y0 * (np.asarray(xs) / x0) ** e)
        paths.append(plot_curves(g, x=x, y=y, path=outdir / f"growth_{exp}.png", hue="curve", theory=theory,
                                 title=f"growth-rates {exp}"))
    if outdir.resolve() == RESULTS.resolve() and (outdir / "results.csv").exists() and (outdir / "slopes.csv").exists():
        publish(outdir)
    return paths


@S.register
def build(cfg: dict) -> Study:
    """The points of :func:`build_points`, run by :func:`run_point` in seed batches of ``SEED_BATCH``, analysed by
    :func:`analyze` and plotted by :func:`plot`."""
    def run(pts, seeds):
        seeds, out = np.asarray(seeds), []
        for p in pts:   # a chunk's seeds in batches: the same draws (one key per seed index), less memory
            parts = [run_point(p, seed_keys(int(cfg["seed"]), seeds[i:i + SEED_BATCH]), cfg)
                     for i in range(0, len(seeds), SEED_BATCH)]
            out.append({k: np.concatenate([q[k] for q in parts]) for k in parts[0]})
        return out

    return S.study(cfg, points=build_points(cfg), run=run, seeds_per_chunk=SEEDS_PER_CHUNK,
                   check_point=lambda p: check_point(p, cfg), analyze=analyze, plot=plot)
