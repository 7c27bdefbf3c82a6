"""Study ``growth-rates``: GROWTH adaptivity to κ (docs/algorithms/growth.md#studies; Growth conditions for private optimization).

Experiments (each a set of grid points; ``cfg["experiments"]`` selects them):

* G1 — ``epoch_growth_sco`` (rate mode) with one ``κ_low`` for every instance, excess vs n in the statistical
  regime (ε large): slopes vs ``-κ/(2(κ-1))`` (Theorem 2), ordered by κ.
* G2 — tightness on n-dependent hard instances (``inst_kappa_linear`` with ``τ_n = 1/√n``,
  ``inst_kappa_1d_twopoint`` with ``τ_n ∝ 1/√n``): excess vs ``τ_n θ_n``-scale ``n^{-κ/(2(κ-1))}``.
* G3 — pure vs approximate DP vs d at fixed n (privacy regime, small ε): pure ``∝ d^{κ/(κ-1)}``,
  approximate ``∝ d^{κ/(2(κ-1))}``.
* Geps — ε sweep at fixed n (privacy regime): excess ``∝ ε^{-κ/(κ-1)}``.
* G4 — ``grad_inverse_sensitivity`` (1-D grid) ERM excess vs n with Theorem 1's ρ and the κ-agnostic
  ``ρ = 1/n²``: slope ``≈ -κ/(κ-1)``.
* G5 — high probability: 99% quantile vs mean (from the G1 points; an analysis, no extra runs).
* G6 — price of not knowing κ: vary ``κ_low`` (more epochs), same instance.
* G7 — baseline ``localization_sco`` alone (worst-case rate) on the G1 instances.
"""
from __future__ import annotations

import math
import pathlib

import numpy as np

from ..core.simulate import seed_keys
from ..registry import register_study
from ..sco import (
    EpochParams, LocalizationParams, epoch_estimator, grad_inv_estimator, inst_kappa_1d_twopoint, inst_kappa_atom,
    inst_kappa_linear, inst_kappa_regression, localization_estimator, plan_epoch_growth_sco,
    plan_grad_inverse_sensitivity, plan_localization_sco, run_sco,
)
from .framework import Param, Study, declare_params, fit_slopes, plot_curves, summarize

EXPERIMENTS = ("G1", "G2", "G3", "Geps", "G4", "G5", "G6", "G7")

DEFAULTS = {
    "seeds": 32, "seed": 0, "experiments": "G1,G2,G3,Geps,G4,G5,G6,G7",
    "n": "10000,30000,100000,300000", "n_inv": "1000,3000,10000,30000,100000",
    "kappas": "1.5,2,3,4", "kappa_low": 1.5, "eps_stat": 10.0, "eps_priv": 0.5, "delta": 1e-6,
    "d_list": "1,2,4,8", "n_fixed": 30000, "eps_list": "0.1,0.3,1,3", "kappa_lows": "1.1,1.25,1.5,2",
    "n_iter": 60, "M": 2048, "g1_insts": "regression,atom,linear",
}
QUICK = {"seeds": 8, "experiments": "G1,G4,G5", "n": "1000,4000", "n_inv": "300,3000", "kappas": "1.5,3",
         "n_iter": 40, "M": 512, "g1_insts": "regression"}

_POS = dict(lo=0.0, lo_open=True)
_KAPPA = dict(lo=1.0, lo_open=True, help="growth exponent kappa > 1")
PARAMS = declare_params("growth-rates", {
    "seeds": Param("int", lo=1), "seed": Param("int", lo=0),
    "experiments": Param("str", many=True, choices=EXPERIMENTS),
    "n": Param("int", many=True, lo=2, hi=2 ** 30), "n_inv": Param("int", many=True, lo=2, hi=2 ** 30),
    "kappas": Param("float", many=True, **_KAPPA), "kappa_low": Param("float", **_KAPPA),
    "eps_stat": Param("float", **_POS), "eps_priv": Param("float", **_POS),
    "delta": Param("float", lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "d_list": Param("int", many=True, lo=1, hi=2 ** 12), "n_fixed": Param("int", lo=2, hi=2 ** 30),
    "eps_list": Param("float", many=True, **_POS), "kappa_lows": Param("float", many=True, **_KAPPA),
    "n_iter": Param("int", lo=1, hi=2 ** 20), "M": Param("int", lo=1, hi=2 ** 24),
    "g1_insts": Param("str", many=True, choices=("regression", "atom", "linear")),
})

_ALGO_KEYS = ("exp", "algo", "inst", "kappa", "d", "eps", "delta", "kappa_low", "rho_rule")


def _floats(s):
    return [float(v) for v in str(s).split(",") if v.strip()]


def _ints(s):
    return [int(float(v)) for v in str(s).split(",") if v.strip()]


def make_instance(name: str, kappa: float, d: int, n: int):
    """Instances of the study (Growth conditions for private optimization, Thms 4-6; docs/algorithms/growth.md#instances); ``*_hard`` use the n-dependent minimax scalings (PROPOSED)."""
    if name == "regression":
        return inst_kappa_regression(d, kappa)
    if name == "atom":
        return inst_kappa_atom(d, kappa, 0.5)
    if name == "linear":
        return inst_kappa_linear(d, kappa, 0.5)
    if name == "linear_hard":
        return inst_kappa_linear(d, kappa, min(0.5, 1.0 / math.sqrt(n)))
    if name == "twopoint":
        return inst_kappa_1d_twopoint(kappa, 0.5 ** (kappa - 1) / kappa / 2)
    if name == "twopoint_hard":
        return inst_kappa_1d_twopoint(kappa, min(0.5 ** (kappa - 1) / kappa, 1.0 / math.sqrt(n)))
    raise ValueError(f"unknown instance {name!r}")


def theory_exponent(p: dict) -> float:
    """The exponent each experiment's slope is compared with."""
    k = p["kappa"]
    r = k / (k - 1.0)
    return {"G1": -r / 2, "G2": -r / 2, "G5": -r / 2, "G6": -r / 2, "G7": -0.5, "G4": -r, "Geps": -r,
            "G3": r if p["delta"] == 0 else r / 2}[p["exp"]]


def _point(exp, algo, inst, kappa, d, n, eps, delta, kappa_low, rho_rule="none"):
    return dict(exp=exp, algo=algo, inst=inst, kappa=float(kappa), d=int(d), n_samples=int(n), eps=float(eps),
                delta=float(delta), kappa_low=float(kappa_low), rho_rule=rho_rule)


def build_points(cfg: dict) -> list:
    exps = [e.strip() for e in str(cfg["experiments"]).split(",") if e.strip()]
    for e in exps:
        if e not in EXPERIMENTS:
            raise ValueError(f"experiments: unknown {e!r}; known {EXPERIMENTS}")
    ns, kappas, kl = _ints(cfg["n"]), _floats(cfg["kappas"]), float(cfg["kappa_low"])
    pts = []
    names = [v.strip() for v in str(cfg["g1_insts"]).split(",")]
    g1_insts = [("regression", k) for k in kappas if "regression" in names] + \
               [("atom", k) for k in kappas if k <= 2 and "atom" in names] + \
               [("linear", k) for k in kappas if k >= 2 and "linear" in names]
    if "G1" in exps or "G5" in exps:
        pts += [_point("G1", "epoch", i, k, 1, n, cfg["eps_stat"], 0.0, kl) for i, k in g1_insts for n in ns]
    if "G2" in exps:
        pts += [_point("G2", "epoch", "linear_hard", k, 1, n, cfg["eps_stat"], 0.0, kl) for k in kappas if k >= 2
                for n in ns]
        pts += [_point("G2", "epoch", "twopoint_hard", k, 1, n, cfg["eps_stat"], 0.0, kl) for k in kappas if k <= 2
                for n in ns]
    if "G3" in exps:
        pts += [_point("G3", "epoch", "regression", 2.0, d, cfg["n_fixed"], cfg["eps_priv"], dl, kl)
                for d in _ints(cfg["d_list"]) for dl in (0.0, float(cfg["delta"]))]
    if "Geps" in exps:
        pts += [_point("Geps", "epoch", "regression", k, 1, cfg["n_fixed"], e, 0.0, kl)
                for k in kappas for e in _floats(cfg["eps_list"])]
    if "G4" in exps:
        pts += [_point("G4", "grad_inv", i, k, 1, n, cfg["eps_priv"], 0.0, kl, rule)
                for i, k in [("twopoint", 1.5)] + [("regression", k) for k in kappas if k >= 2]
                for n in _ints(cfg["n_inv"]) for rule in ("theorem", "agnostic")]
    if "G6" in exps:
        pts += [_point("G6", "epoch", "regression", 3.0, 1, n, cfg["eps_stat"], 0.0, klow)
                for klow in _floats(cfg["kappa_lows"]) for n in ns]
    if "G7" in exps:
        pts += [_point("G7", "localization", i, k, 1, n, cfg["eps_stat"], 0.0, kl) for i, k in g1_insts for n in ns]
    return pts


def check_point(p: dict, cfg: dict) -> None:
    """The instance and the planner call of ``run_point``, without running anything."""
    inst = make_instance(p["inst"], p["kappa"], p["d"], p["n_samples"])
    n = p["n_samples"]
    if p["algo"] == "epoch":
        plan_epoch_growth_sco(eps=p["eps"], delta=p["delta"], d=p["d"], n=n, kappa_low=p["kappa_low"],
                              L=inst.L, D=2 * inst.R, mode="rate")
    elif p["algo"] == "localization":
        plan_localization_sco(eps=p["eps"], delta=p["delta"], d=p["d"], n=n, L=inst.L, D=2 * inst.R, mode="rate")
    else:
        plan_grad_inverse_sensitivity(eps=p["eps"], d=p["d"], n=n, L=inst.L, D=2 * inst.R, lam=inst.lam,
                                      kappa=inst.kappa, rho_rule=p["rho_rule"], M=int(cfg["M"]))


def run_point(p: dict, keys, cfg: dict) -> dict:
    """Run one grid point for the given keys; returns metric arrays."""
    inst = make_instance(p["inst"], p["kappa"], p["d"], p["n_samples"])
    n, n_iter = p["n_samples"], int(cfg["n_iter"])
    if p["algo"] == "epoch":
        pl = plan_epoch_growth_sco(eps=p["eps"], delta=p["delta"], d=p["d"], n=n, kappa_low=p["kappa_low"],
                                   L=inst.L, D=2 * inst.R, mode="rate").params
        fn = epoch_estimator(inst, n, pl["n_epochs"], pl["k"], n_iter)
        out = run_sco(fn, keys, EpochParams(pl["eta0"], pl["eps"], pl["delta"], pl["gauss_mult"], pl["phase_offset"]))
    elif p["algo"] == "localization":
        pl = plan_localization_sco(eps=p["eps"], delta=p["delta"], d=p["d"], n=n, L=inst.L, D=2 * inst.R,
                                   mode="rate").params
        fn = localization_estimator(inst, n, pl["k"], n_iter)
        out = run_sco(fn, keys, LocalizationParams(pl["eta"], pl["eps"], pl["delta"], pl["gauss_mult"],
                                                   pl["phase_offset"]))
    else:
        pl = plan_grad_inverse_sensitivity(eps=p["eps"], d=p["d"], n=n, L=inst.L, D=2 * inst.R, lam=inst.lam,
                                           kappa=inst.kappa, rho_rule=p["rho_rule"], M=int(cfg["M"])).params
        fn = grad_inv_estimator(inst, n, float(pl["rho"]), int(cfg["M"]))
        out = run_sco(fn, keys, float(p["eps"]))
        return {"excess": np.asarray(out["excess"], float), "erm_excess": np.asarray(out["erm_excess"], float)}
    return {"excess": np.asarray(out["excess"], float), "dist": np.asarray(out["dist"], float),
            "gap_ok": np.asarray(out["gap_ok"], float)}


def _xcol(exp: str) -> str:
    return {"G3": "d", "Geps": "eps"}.get(exp, "n_samples")


def analyze(df):
    import pandas as pd

    tables = {}
    slope_rows = []
    for exp, g in df.groupby("exp", sort=False):
        x = _xcol(exp)
        by = [c for c in _ALGO_KEYS + ("n_samples", "d", "eps") if c != x and c in g and c != "exp"]
        y = "erm_excess" if exp == "G4" else "excess"
        s = fit_slopes(g, x=x, y=y, by=by, upper_half=False)
        s.insert(0, "exp", exp)
        s["theory"] = [theory_exponent(dict(exp=exp, kappa=r["kappa"], delta=r.get("delta", 0.0)))
                       for _, r in s.iterrows()]
        slope_rows.append(s)
    tables["slopes"] = pd.concat(slope_rows, ignore_index=True)
    metrics = [m for m in ("excess", "erm_excess") if m in df]
    summ = summarize(df, by=["exp", "algo", "inst", "kappa", "d", "n_samples", "eps", "delta", "kappa_low", "rho_rule"],
                     metrics=metrics, n_boot=200, quantiles=(0.99,))
    tables["summary"] = summ
    g1 = summ[summ["exp"] == "G1"]
    if len(g1):
        q = g1[["inst", "kappa", "n_samples", "excess_mean", "excess_q0.99"]].copy()
        q["q99_over_mean"] = q["excess_q0.99"] / q["excess_mean"]
        tables["G5_high_probability"] = q
    if "gap_ok" in df:
        tables["solver"] = df.groupby("exp")["gap_ok"].mean().reset_index()
    return tables


def plot(df, outdir: pathlib.Path):
    outdir = pathlib.Path(outdir)
    paths = []
    metrics = [m for m in ("excess", "erm_excess") if m in df]
    summ = summarize(df, by=["exp", "algo", "inst", "kappa", "d", "n_samples", "eps", "delta", "kappa_low", "rho_rule"],
                     metrics=metrics, n_boot=200)
    for exp, g in summ.groupby("exp", sort=False):
        x = _xcol(exp)
        y = "erm_excess" if exp == "G4" else "excess"
        g = g.copy()
        g["curve"] = (g["inst"] + " k=" + g["kappa"].astype(str) + " klow=" + g["kappa_low"].astype(str)
                      + " d=" + g["delta"].astype(str) + " " + g["rho_rule"].astype(str))
        theory = {}
        for curve, h in g.groupby("curve"):
            h = h.sort_values(x)
            e = theory_exponent(dict(exp=exp, kappa=h["kappa"].iloc[0], delta=h["delta"].iloc[0]))
            x0, y0 = float(h[x].iloc[0]), float(h[f"{y}_mean"].iloc[0])
            if y0 > 0 and len(theory) < 4:
                theory[f"slope {e:.2f} ({curve[:18]})"] = (lambda xs, x0=x0, y0=y0, e=e: y0 * (np.asarray(xs) / x0) ** e)
        paths.append(plot_curves(g, x=x, y=f"{y}", path=outdir / f"growth_{exp}.png", hue="curve", theory=theory,
                                 title=f"growth-rates {exp}"))
    return paths


@register_study("growth-rates", defaults=DEFAULTS, quick=QUICK,
                description="GROWTH: private SCO adapting to kappa-growth (G1-G7: rates vs n, d, eps; inverse sensitivity)")
def build(cfg: dict) -> Study:
    points = build_points(cfg)

    def run(pts, seeds):
        keys = seed_keys(int(cfg["seed"]), seeds)
        return [run_point(p, keys, cfg) for p in pts]

    return Study(name="growth-rates", points=points, seeds=int(cfg["seeds"]), run=run,
                 check_point=lambda p: check_point(p, cfg),
                 group_by=("exp", "algo", "inst", "kappa"), analyze=analyze, plot=plot, config=cfg,
                 description="GROWTH adaptivity to kappa (docs/algorithms/growth.md#studies)")
