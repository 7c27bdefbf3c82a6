"""Study ``growth-rates``: GROWTH adaptivity to κ (docs/algorithms/growth.md#studies; Growth conditions for private optimization).

Experiments (each a set of grid points; ``cfg["experiments"]`` selects them):

* G1 — ``epoch_growth_sco`` (rate mode) with one ``κ_low`` for every instance, excess vs n in the statistical
  regime (ε large): slopes vs ``-κ/(2(κ-1))`` (Theorem 2), ordered by κ.
* G2 — tightness on n-dependent hard instances (``inst_kappa_linear`` with ``τ_n = 1/√n``,
  ``inst_kappa_1d_twopoint`` with ``τ_n ∝ 1/√n``): excess vs ``τ_n θ_n``-scale ``n^{-κ/(2(κ-1))}``.
* G3 — pure vs approximate DP vs d at fixed n (privacy regime, small ε): pure ``∝ d^{κ/(κ-1)}``,
  approximate ``∝ d^{κ/(2(κ-1))}``.
* Geps — ε sweep at fixed n (privacy regime): excess ``∝ ε^{-κ/(κ-1)}``.
* G4 — the ρ-smooth gradient inverse-sensitivity mechanism (Theorem 1), ERM excess vs n, sampled
  exactly (:mod:`jaxdp.sco.inverse_sensitivity`): the continuous density (``sampler="exact"``)
  with Theorem 1's ρ and with the κ-agnostic ``ρ = 1/n²``, and the law of the ``M``-cell grid
  mechanism (``sampler="grid"``, ``M`` and ``M_fine`` cells, Theorem 1's ρ). Claimed slope
  ``-κ/(κ-1)``; for the agnostic ρ, ``-min(κ/(κ-1), 2)`` (its ``Lρ = L/n²`` term is the larger one
  when κ < 2). The grid's excess cannot fall below its resolution floor ``≈ λ h²/3`` (``h = 2R/M``).
* G5 — high probability: 99% quantile vs mean (from the G1 points; an analysis, no extra runs).
* G6 — price of not knowing κ: vary ``κ_low`` (more epochs), same instance.
* G7 — baseline ``localization_sco`` alone (worst-case rate) on the G1 instances.

Verdicts: the claims are :data:`CLAIMS` (:class:`jaxdp.studies.claims.Claim`; each experiment's exponent is a function
of κ, :func:`theory_exponent`), judged by :func:`jaxdp.studies.claims.judge` on the fitted slope over its range
(:func:`verdicts`). Two curves that are one piece of evidence (the same runs, or runs correlated seed by seed) are
one row. The study's own hooks: G4's misses name the grid's resolution floor or float64 resolution, Geps fits only
the ε where the privacy term dominates, the G3 exponent ratio and G5's quantile ratios are measured from the
per-seed results, and an off-centre interval no wider than the tolerance gets a reason that says so.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import pathlib
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from ..core.simulate import seed_keys
from ..registry import register_study
from ..sco import (
    EpochParams, LocalizationParams, epoch_estimator, inst_kappa_1d_twopoint, inst_kappa_atom,
    inst_kappa_linear, inst_kappa_regression, localization_estimator, plan_epoch_growth_sco,
    plan_grad_inverse_sensitivity, plan_localization_sco, run_sco,
)
from ..sco.inverse_sensitivity import exact_grad_inv_estimator
from ._common_study import ROOT as ROOT, generated_from, page_paths
from .analysis import _record_slope_ci, fmt_num
from .claims import VERDICTS, Claim, Measurement, Verdict, judge, seeds_to_resolve
from .framework import (
    Param, Study, declare_params, fit_slopes, joint_slope_boot, plot_curves, summarize, verdict_table, write_generated,
)


# --------------------------------------------------------------------------- the grid and the runs

EXPERIMENTS = ("G1", "G2", "G3", "Geps", "G4", "G5", "G6", "G7")

DEFAULTS = {
    "seeds": 1024, "seed": 0, "experiments": "G1,G2,G3,Geps,G4,G5,G6,G7",
    "n": "10000,30000,100000,300000", "n_inv": "1000,3000,10000,30000,100000",
    "kappas": "1.5,2,3,4", "kappa_low": 1.5, "eps_stat": 10.0, "eps_priv": 0.5, "delta": 1e-6,
    "d_list": "1,2,4,8", "n_fixed": 30000, "eps_list": "0.1,0.3,1,3", "kappa_lows": "1.1,1.25,1.5,2",
    "n_iter": 60, "M": 2048, "M_fine": 0, "g1_insts": "regression,atom,linear",
}
QUICK = {"seeds": 8, "experiments": "G1,G4,G5", "n": "1000,4000", "n_inv": "300,3000", "kappas": "1.5,3",
         "n_iter": 40, "M": 512, "M_fine": 0, "g1_insts": "regression"}
SEED_BATCH = 16         # seeds evaluated at once inside a chunk (memory; the results do not depend on it)
SEEDS_PER_CHUNK = 128   # seed block of a chunk: bounds memory (n up to 3e5 samples per seed) and the work lost on a stop

_POS: dict[str, Any] = dict(lo=0.0, lo_open=True)
_KAPPA: dict[str, Any] = dict(lo=1.0, lo_open=True, help="growth exponent kappa > 1")
PARAMS = declare_params("growth-rates", {
    "seeds": Param("int", lo=1), "seed": Param("int", lo=0),
    "experiments": Param("str", many=True, choices=EXPERIMENTS),
    "n": Param("int", many=True, lo=2, hi=2 ** 30), "n_inv": Param("int", many=True, lo=2, hi=2 ** 30),
    "kappas": Param("float", many=True, **_KAPPA), "kappa_low": Param("float", **_KAPPA),
    "eps_stat": Param("float", **_POS), "eps_priv": Param("float", **_POS),
    "delta": Param("float", lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "d_list": Param("int", many=True, lo=1, hi=2 ** 12), "n_fixed": Param("int", lo=2, hi=2 ** 30),
    "eps_list": Param("float", many=True, **_POS), "kappa_lows": Param("float", many=True, **_KAPPA),
    "n_iter": Param("int", lo=1, hi=2 ** 20), "M": Param("int", lo=2, hi=2 ** 30),
    "M_fine": Param("int", lo=0, hi=2 ** 30, help="a finer grid for G4 (0: none)"),
    "g1_insts": Param("str", many=True, choices=("regression", "atom", "linear")),
})

_ALGO_KEYS = ("exp", "algo", "inst", "kappa", "d", "eps", "delta", "kappa_low", "rho_rule", "sampler", "M")


def _floats(s):
    return [float(v) for v in str(s).split(",") if v.strip()]


def _ints(s):
    return [int(float(v)) for v in str(s).split(",") if v.strip()]


def make_instance(name: str, kappa: float, d: int, n: int):
    """Instances of the study (Growth conditions for private optimization, Thms 4-6; docs/algorithms/growth.md#instances).

    Args:
        name: ``regression`` (κ-norm regression), ``atom``, ``linear`` (bias τ = 1/2), ``twopoint``, or
            ``linear_hard`` / ``twopoint_hard``, whose bias shrinks as ``1/√n`` (the minimax scaling).
        kappa: the growth exponent κ > 1 (``atom``, ``twopoint*``: κ ≤ 2; ``linear*``: κ ≥ 2).
        d: the dimension (the two-point instances are 1-D).
        n: the sample size (used by the ``*_hard`` instances only).

    Returns:
        The :class:`jaxdp.sco.SCOInstance`.

    Raises:
        ValueError: an unknown name.
    """
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
    """The exponent each experiment's slope is compared with (``r = κ/(κ-1)``): ``-r/2`` in n for
    G1, G2, G5, G6; ``-1/2`` for G7; ``-r`` for G4 (``-min(r, 2)`` with the agnostic ρ) and for Geps
    in ε; ``r`` (pure) or ``r/2`` (approximate DP) in d for G3.

    Args:
        p: a grid point, with the keys ``exp``, ``kappa``, ``delta`` and, for G4, ``rho_rule``.

    Returns:
        The claimed log-log slope.
    """
    k = p["kappa"]
    r = k / (k - 1.0)
    if p["exp"] == "G4" and p.get("rho_rule") == "agnostic":
        return -min(r, 2.0)
    return {"G1": -r / 2, "G2": -r / 2, "G5": -r / 2, "G6": -r / 2, "G7": -0.5, "G4": -r, "Geps": -r,
            "G3": r if p["delta"] == 0 else r / 2}[p["exp"]]


def _point(exp, algo, inst, kappa, d, n, eps, delta, kappa_low, rho_rule="none", sampler="none", M=0):
    return dict(exp=exp, algo=algo, inst=inst, kappa=float(kappa), d=int(d), n_samples=int(n), eps=float(eps),
                delta=float(delta), kappa_low=float(kappa_low), rho_rule=rho_rule, sampler=sampler, M=int(M))


def build_points(cfg: dict) -> list:
    """The grid points of the selected experiments (module docstring).

    Args:
        cfg: the resolved configuration (``experiments``, the ``n``, κ, ``d`` and ε grids, ...).

    Returns:
        One dict per point: ``exp``, ``algo``, ``inst``, ``kappa``, ``d``, ``n_samples``, ``eps``,
        ``delta``, ``kappa_low``, ``rho_rule``, ``sampler``, ``M``.

    Raises:
        ValueError: an unknown experiment.
    """
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
    if "G4" in exps:
        # the grid law with both rules is one law wherever both windows are below one cell: theorem ρ only
        variants = [("theorem", "exact", 0), ("agnostic", "exact", 0), ("theorem", "grid", int(cfg["M"]))]
        if int(cfg["M_fine"]) > 0:
            variants.append(("theorem", "grid", int(cfg["M_fine"])))
        pts += [_point("G4", "grad_inv", i, k, 1, n, cfg["eps_priv"], 0.0, kl, rule, smp, M)
                for i, k in [("twopoint", 1.5)] + [("regression", k) for k in kappas if k >= 2]
                for rule, smp, M in variants for n in _ints(cfg["n_inv"])]
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
    if "G6" in exps:
        pts += [_point("G6", "epoch", "regression", 3.0, 1, n, cfg["eps_stat"], 0.0, klow)
                for klow in _floats(cfg["kappa_lows"]) for n in ns]
    if "G7" in exps:
        pts += [_point("G7", "localization", i, k, 1, n, cfg["eps_stat"], 0.0, kl) for i, k in g1_insts for n in ns]
    return pts


def check_point(p: dict, cfg: dict) -> None:
    """The instance and the planner call of :func:`run_point`, without running anything.

    Args:
        p: a grid point of :func:`build_points`.
        cfg: the resolved configuration.

    Raises:
        ValueError: the instance or the planner refuses the point.
    """
    inst = make_instance(p["inst"], p["kappa"], p["d"], p["n_samples"])
    n = p["n_samples"]
    if p["algo"] == "epoch":
        plan_epoch_growth_sco(eps=p["eps"], delta=p["delta"], d=p["d"], n=n, kappa_low=p["kappa_low"],
                              L=inst.L, D=2 * inst.R, mode="rate")
    elif p["algo"] == "localization":
        plan_localization_sco(eps=p["eps"], delta=p["delta"], d=p["d"], n=n, L=inst.L, D=2 * inst.R, mode="rate")
    else:
        plan_grad_inverse_sensitivity(eps=p["eps"], d=p["d"], n=n, L=inst.L, D=2 * inst.R, lam=inst.lam,
                                      kappa=inst.kappa, rho_rule=p["rho_rule"], M=max(int(p["M"]), 2))


# XLA:CPU's YNNPACK fusion lowers the float64 reductions of the 1-D solvers (a mean over the samples inside
# every bisection step) about 40x slower than XLA's own loops (measured: 90-100 ns per sample and step
# against 2-3 ns, for the 1-D regression and atom instances); the study compiles its estimators without it.
_CPU_COMPILER_OPTIONS = {"xla_cpu_experimental_ynn_fusion_type": ""}


@functools.lru_cache(maxsize=None)
def _compiled(fn, n_args: int):
    import jax

    return jax.jit(jax.vmap(fn, in_axes=(0,) + (None,) * n_args), compiler_options=_CPU_COMPILER_OPTIONS)


def _run(fn, keys, *args):
    """``run_sco(fn, keys, *args)`` (float64, one vmapped call over the seeds) compiled without YNNPACK
    fusions on CPU; other backends go through :func:`jaxdp.sco.run_sco` unchanged."""
    import jax
    import jax.numpy as jnp

    if jax.default_backend() != "cpu" or len(jax.devices()) != 1:
        return run_sco(fn, keys, *args)
    with jax.enable_x64():
        args = jax.tree_util.tree_map(lambda v: jnp.asarray(v, jnp.float64) if isinstance(v, float) else v, args)
        out = _compiled(fn, len(args))(keys, *args)
        out = jax.tree_util.tree_map(np.asarray, out)
    if isinstance(out, dict) and "gap_ok" in out and not np.asarray(out["gap_ok"], bool).all():
        ok = np.asarray(out["gap_ok"], bool)
        warnings.warn(f"{int((~ok).sum())} of {ok.size} runs refused (a phase's solver missed its certified gap); "
                      f"their metrics are NaN", RuntimeWarning, stacklevel=2)
    return out


def run_point(p: dict, keys, cfg: dict) -> dict:
    """Run one grid point: plan the algorithm, then one float64 run per key (vmapped).

    Args:
        p: a grid point of :func:`build_points`.
        keys: one typed PRNG key per seed, shape ``(S,)``.
        cfg: the resolved configuration (``n_iter``: solver iterations per phase).

    Returns:
        ``(S,)`` float arrays: ``excess`` (population excess risk) with ``dist`` (distance to the
        minimizer) and ``gap_ok`` (the phases' solvers met their certified gap) for EPOCH-GROWTH and
        localization; ``excess``, ``erm_excess`` (empirical excess risk) and ``accepted`` for the
        inverse-sensitivity sampler (G4).
    """
    inst = make_instance(p["inst"], p["kappa"], p["d"], p["n_samples"])
    n, n_iter = p["n_samples"], int(cfg["n_iter"])
    if p["algo"] == "epoch":
        pl = plan_epoch_growth_sco(eps=p["eps"], delta=p["delta"], d=p["d"], n=n, kappa_low=p["kappa_low"],
                                   L=inst.L, D=2 * inst.R, mode="rate").params
        fn = epoch_estimator(inst, n, pl["n_epochs"], pl["k"], n_iter)
        out = _run(fn, keys, EpochParams(*(float(pl[k]) for k in ("eta0", "eps", "delta", "gauss_mult",
                                                                   "phase_offset"))))  # type: ignore[arg-type]
    elif p["algo"] == "localization":
        pl = plan_localization_sco(eps=p["eps"], delta=p["delta"], d=p["d"], n=n, L=inst.L, D=2 * inst.R,
                                   mode="rate").params
        fn = localization_estimator(inst, n, pl["k"], n_iter)
        out = _run(fn, keys, LocalizationParams(*(float(pl[k]) for k in ("eta", "eps", "delta", "gauss_mult",
                                                                          "phase_offset"))))  # type: ignore[arg-type]
    else:
        pl = plan_grad_inverse_sensitivity(eps=p["eps"], d=p["d"], n=n, L=inst.L, D=2 * inst.R, lam=inst.lam,
                                           kappa=inst.kappa, rho_rule=p["rho_rule"], M=max(int(p["M"]), 2)).params
        # exact draws: the continuous density (M = 0) or the M-cell grid law (jaxdp.sco.inverse_sensitivity, sampler="exact")
        fn = exact_grad_inv_estimator(inst, n, float(pl["rho"]), int(p["M"]))
        out = _run(fn, keys, float(p["eps"]))
        return {"excess": np.asarray(out["excess"], float), "erm_excess": np.asarray(out["erm_excess"], float),
                "accepted": np.asarray(out["accepted"], float)}
    return {"excess": np.asarray(out["excess"], float), "dist": np.asarray(out["dist"], float),
            "gap_ok": np.asarray(out["gap_ok"], float)}


def _xcol(exp: str) -> str:
    return {"G3": "d", "Geps": "eps"}.get(exp, "n_samples")


# --------------------------------------------------------------------------- the analysis and the verdicts

N_BOOT = 1000
GEPS_FLOOR_SHARE = 0.1   # Geps: fit only the ε whose mean excess is at least 10x the noiseless path's
TOL = 0.05               # an exponent's tolerance: the half-width the study aims at (1024 seeds per point)
#: two curves are one piece of evidence when at every point their per-seed values correlate at least TWIN_CORR and
#: their means differ by at most TWIN_REL
TWIN_CORR, TWIN_REL = 0.999, 0.01
# explanations of misses and untested cells (sections of the results page; links work from docs/*/)
WHY = {k: f"../results/growth-rates.md#why-{k}" for k in ("grid-floor", "geps-floor", "float", "other")}
_claim = functools.partial(Claim, value=math.nan, tolerance=TOL, link=WHY["other"])
#: the claims of GROWTH (Asi, Levy & Duchi, NeurIPS 2021; docs/algorithms/growth.md), as data. Its displays are
#: reconstructed (the exponents are certain, the constants and log factors are not), so every claim is an exponent,
#: tested by a slope over at least two decades of its variable; a NaN value is the κ-dependent exponent of
#: :func:`theory_exponent`, filled in per cell.
CLAIMS = {
    "G1": _claim(text="Thm 2: n^{−κ/(2(κ−1))} upper bound", kind="at_most_rate"),
    "G2": _claim(text="Thm 2 with Thms 4–5: minimax rate n^{−κ/(2(κ−1))}", kind="rate"),
    "G3": _claim(text="Thms 2–3: d^{κ/(κ−1)} pure, d^{κ/(2(κ−1))} approx., upper bounds", kind="at_most_rate"),
    "G3 ratio": _claim(text="Thm 2 vs 3: ratio 2", kind="rate", value=2.0, tolerance=2 * TOL),
    "Geps": _claim(text="Thm 2: privacy term ε^{−κ/(κ−1)}", kind="rate"),
    "G4": _claim(text="Thm 1: ERM excess n^{−κ/(κ−1)}; agnostic ρ: n^{−min(κ/(κ−1), 2)}", kind="rate"),
    "G5": _claim(text="high probability: q99/mean bounded in n (log 1/β)", kind="at_most_rate", value=0.0),
    "G6": _claim(text="Thm 2 with κ_low ≤ κ: n^{−κ/(2(κ−1))} upper bound", kind="at_most_rate"),
    "G7": _claim(text="Prop. 2 worst case: n^{−1/2} upper bound", kind="at_most_rate"),
}
_KIND = {"rate": "equals", "equality": "equals", "at_most_rate": "at_most", "at_least_rate": "at_least"}


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
    if exp == "Geps":
        return f"regression, {k}, n = {int(r['n_samples'])}"
    if exp == "G4":
        smp = "continuous (exact)" if r["sampler"] == "exact" else f"grid M = {int(r['M'])}"
        return f"{r['inst']}, {k}, {smp}, ρ {r['rho_rule']}"
    if exp == "G6":
        return f"regression, {k}, κ_low = {r['kappa_low']:g}"
    return f"{r['inst']}, {k}"


def _grid_floor(inst: str, kappa: float, M: int) -> float:
    """ERM excess of a uniform draw in a cell with the minimizer on its edge: the grid's resolution floor.

    1-D regression (``f_S(x) - f_S* = |x - x*|^κ``): ``h^κ/(κ+1)``; two-point (slopes ``1`` and ``τ`` on the two
    sides of ``x* = 0``): ``(h/2)(1 + τ)/2``. ``h = 2R/M``.
    """
    ins = make_instance(inst, kappa, 1, 2)
    h = 2.0 * ins.R / M
    if inst == "regression":
        return h ** kappa / (kappa + 1.0)
    tau = dict(ins.info)["tau"]
    return 0.5 * h * (1.0 + tau) / 2.0


def _geps_floor(n: int, kappa: float, kappa_low: float) -> float:
    """The noiseless algorithm's excess at ``n`` (the deterministic proximal path, ``jaxdp.sco.prox_path``)."""
    from ..sco.prox_path import epoch_prox_path_1d

    return float(epoch_prox_path_1d(int(n), float(kappa), kappa_low=float(kappa_low))["excess"])


def g4_quadrature(kappa: float, n: int, eps: float, rho: float, R: float = 1.0) -> float:
    """Expected ERM excess of the continuous mechanism on the 1-D noiseless κ-regression, by quadrature.

    There ``f_S(x) = |x - x*|^κ`` for every data set (``a = ±1``, ``b = a x*``, ``x* = R/4``), so
    ``G(x) = κ (|x - x*| - ρ)_+^{κ-1}`` and the mechanism's density is ``∝ exp(-(εn/4L) G(x))`` on
    ``[-R, R]`` with ``L = κ(1.5R)^{κ-1}``: the exact ``E|x̂ - x*|^κ`` the sampler's mean must match.

    Args:
        kappa: the growth exponent κ > 1.
        n: the sample size.
        eps: the privacy level ε.
        rho: the smoothing radius ρ of the gradient's inverse sensitivity.
        R: the domain's radius.

    Returns:
        ``E|x̂ - x*|^κ`` under the mechanism's density.
    """
    from scipy import integrate

    L = kappa * (1.5 * R) ** (kappa - 1.0)
    c = eps * n / (4.0 * L)
    a, b = -1.25 * R, 0.75 * R                      # t = x - x* over [-R, R]
    w = (1.0 / (c * kappa)) ** (1.0 / (kappa - 1.0))
    dens = lambda t: math.exp(-c * kappa * max(abs(t) - rho, 0.0) ** (kappa - 1.0))
    pts = sorted({a, b, 0.0, -rho, rho} | {s * m * w for s in (-1, 1) for m in (1, 10, 50)})
    pts = [t for t in pts if a <= t <= b]
    Z = sum(integrate.quad(dens, u, v, limit=200)[0] for u, v in zip(pts[:-1], pts[1:]))
    E = sum(integrate.quad(lambda t: abs(t) ** kappa * dens(t), u, v, limit=200)[0] for u, v in zip(pts[:-1], pts[1:]))
    return E / Z


def g4_quadrature_table(summ):
    """Measured mean ERM excess of the exact continuous sampler against :func:`g4_quadrature`.

    Args:
        summ: the study's ``summary`` table (its G4 rows of the exact sampler on ``regression`` are used).

    Returns:
        One row per such point: ``kappa``, ``rho_rule``, ``n_samples``, ``rho``, ``exact_mean``,
        ``measured_mean`` with its CI (``measured_lo``, ``measured_hi``), their ``ratio`` and whether
        the CI contains the exact value (``inside``).
    """
    import pandas as pd

    rows = []
    sel = summ[(summ["exp"] == "G4") & (summ["sampler"] == "exact") & (summ["inst"] == "regression")]
    for _, r in sel.iterrows():
        inst = make_instance("regression", r["kappa"], 1, int(r["n_samples"]))
        rho = float(plan_grad_inverse_sensitivity(eps=r["eps"], d=1, n=int(r["n_samples"]), L=inst.L, D=2 * inst.R,
                                                  lam=inst.lam, kappa=inst.kappa, rho_rule=r["rho_rule"],
                                                  M=2).params["rho"])
        e = g4_quadrature(r["kappa"], int(r["n_samples"]), r["eps"], rho)
        rows.append(dict(kappa=r["kappa"], rho_rule=r["rho_rule"], n_samples=int(r["n_samples"]), rho=rho,
                         exact_mean=e, measured_mean=r["erm_excess_mean"], measured_lo=r["erm_excess_lo"],
                         measured_hi=r["erm_excess_hi"], ratio=r["erm_excess_mean"] / e,
                         inside=bool(r["erm_excess_lo"] <= e <= r["erm_excess_hi"])))
    return pd.DataFrame(rows)


def _seed_mat(g, x, y):
    xs = np.sort(g[x].unique())
    tab = g.pivot_table(index="seed", columns=x, values=y, aggfunc="mean", dropna=False).reindex(columns=list(xs))
    return xs, tab


def _curve(df, exp, r):
    x = _xcol(exp)
    sel = df["exp"] == exp
    for c in ("inst", "kappa", "delta", "kappa_low", "rho_rule", "sampler", "M", "d" if x != "d" else None):
        if c is not None and c in r and c in df:
            sel &= df[c] == r[c]
    return df[sel]


def _twins(df, slopes) -> dict:
    """``{j: (i, c)}``: curve ``j`` of ``slopes`` is the same evidence as the earlier curve ``i``: the same claimed
    exponent and grid, and at every point means within ``TWIN_REL`` and a per-seed correlation of at least
    ``TWIN_CORR`` (``c``: the smallest)."""
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


def _judge(claim: Claim, m: Measurement) -> Verdict:
    """``judge``, with a true reason where a rate's interval is no wider than the tolerance but off-centre (the
    rubric's reason would call its half-width wider than the tolerance)."""
    v = judge(claim, m)
    hw, off = (m.hi - m.lo) / 2, abs(m.estimate - claim.value)
    if v.verdict != "consistent, unresolved" or claim.kind != "rate" or hw > claim.tolerance:
        return v
    end = m.hi if m.hi - claim.value > claim.value - m.lo else m.lo
    what = (f"about {seeds_to_resolve(hw, m.n_seeds, claim.tolerance - off)} would bring it within the tolerance"
            if off < claim.tolerance else "more would exclude the claim")
    return Verdict(v.verdict, f"the interval contains the claim and its half-width {hw:.3f} is within the tolerance "
                              f"{claim.tolerance:g}, but it is centred {off:.3f} from the claim and reaches "
                              f"{fmt_num(end)}; were the estimate to stay, at {m.n_seeds} seeds per point {what}")


def _geps(g, r):
    """Geps's hook: ``(fit, verdict or None, cell note)``, fitted only over the ε where the noiseless path's excess
    is at most ``GEPS_FLOOR_SHARE`` of the mean excess (the privacy term dominates); not tested below 3 such ε."""
    floor = _geps_floor(int(r["n_samples"]), r["kappa"], r["kappa_low"])
    sm = g.groupby("eps")["excess"].mean()
    keep = sorted(e for e in sm.index if floor <= GEPS_FLOOR_SHARE * sm.loc[e])
    if len(keep) < 3:
        e = sm.index.max()
        return r, Verdict("not tested", f"the noiseless path's excess {floor:.2g} is {floor / sm.loc[e]:.0%} of the mean "
                                        f"excess at ε = {e:g}; only {len(keep)} of the ε values keep it below "
                                        f"{GEPS_FLOOR_SHARE:.0%}, so the privacy term cannot be isolated"), ""
    if len(keep) == len(sm):
        return r, None, ""
    fr = fit_slopes(g[g["eps"].isin(keep)], x="eps", y="excess", upper_half=False, n_boot=N_BOOT, resample="joint")
    fit = r.copy()
    for c in ("slope", "slope_lo", "slope_hi", "n_seeds", "x_min", "x_max"):
        fit[c] = fr[c].iloc[0]
    return fit, None, f", ε ∈ {{{', '.join(f'{e:g}' for e in keep)}}} (path excess ≤ {GEPS_FLOOR_SHARE:.0%})"


def _miss_why(exp, r, g) -> tuple:
    """G4's hook: ``(note, link)`` of a miss at the grid's resolution floor or at float64 resolution."""
    if exp != "G4":
        return "", WHY["other"]
    mean = float(g.groupby("n_samples")["erm_excess"].mean().iloc[-1])
    floor = _grid_floor(r["inst"], r["kappa"], int(r["M"])) if r["sampler"] == "grid" else 0.0
    if mean <= 10 * floor:
        return (f"grid resolution floor: at n = {int(r['x_max'])} the mean ERM excess {mean:.2g} is "
                f"{mean / floor:.1f}× the floor {floor:.2g} of a uniform draw in the minimizer's cell", WHY["grid-floor"])
    if mean < 1e-13:
        return (f"float64 resolution: at n = {int(r['x_max'])} the mean ERM excess {mean:.2g} is a difference of two "
                "empirical risks of order 0.05, each rounded at about 1e-17", WHY["float"])
    return "", WHY["other"]


def _row(exp, cell, claim: Claim, m: Measurement, v: Verdict, link: str = "") -> dict:
    return dict(experiment=exp, cell=cell, claim=claim.text, claimed=claim.value, kind=_KIND[claim.kind],
                slope=m.estimate, slope_lo=m.lo, slope_hi=m.hi, n_seeds=int(m.n_seeds), verdict=v.verdict,
                reason=v.reason, link=link)


def _measured_ratios(df, rng) -> list:
    """G3's ratio of the pure and approximate exponents (one joint resampling of both curves) and G5's q99/mean
    against n for every G1 curve, measured from the per-seed results."""
    def slope(xs, ly):   # least-squares slope of log y on log x, along the last axis
        xc = np.log(np.asarray(xs, float)) - np.log(np.asarray(xs, float)).mean()
        return (ly - ly.mean(axis=-1, keepdims=True)) @ xc / (xc @ xc)

    def row(exp, cell, claim, xs, est, boots, S):
        lo, hi = np.nanquantile(boots, [0.025, 0.975])
        m = Measurement(float(est), float(lo), float(hi), S, decades=math.log10(max(xs) / min(xs)))
        return _row(exp, cell, claim, m, _judge(claim, m), claim.link)

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


def verdicts(df, slopes) -> "pd.DataFrame":
    """One verdict per (experiment, cell) against :data:`CLAIMS`, by the generic rubric
    (:func:`jaxdp.studies.claims.judge`): every fitted curve, the G3 exponent ratio and G5's quantile ratios.

    A curve's measurement is its slope with its 95% interval (percentile bootstrap over seed indices resampled
    jointly across the curve's points) and the span of its fitted range in decades. A curve that is the same evidence
    as an earlier one (:func:`_twins`) shares its row (``a = b`` in the cell, the correlation in the reason).

    Args:
        df: the per-seed results (one row per point and seed).
        slopes: the ``slopes`` table of :func:`analyze` (one fitted curve per row, with ``theory``, ``x_min``,
            ``x_max`` and ``n_seeds``), as ``slopes.csv`` keeps it.

    Returns:
        The verdict rows in the columns of :func:`jaxdp.studies.analysis.verdict_table`, ordered by experiment.
    """
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
                same = f"one row for both curves: per-seed correlation at least {c:.5f} at every point"
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
        rows.append(_row(exp, cell + note, claim, m, Verdict(v.verdict, "; ".join(s for s in (v.reason, same) if s)),
                         link))
    rows += _measured_ratios(df, np.random.default_rng(1))
    out = pd.DataFrame(rows)
    order = {e: i for i, e in enumerate(EXPERIMENTS)}
    return out.sort_values("experiment", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)


def analyze(df):
    """The study's tables: slopes per curve (seed indices resampled jointly), summaries with 99%
    quantiles, G5's quantile ratios, solver and sampler rates, G4's quadrature check and the verdicts.

    Args:
        df: the per-seed results.

    Returns:
        ``{table name: DataFrame}``: ``slopes``, ``summary``, ``verdicts`` and, when their rows are
        present, ``G5_high_probability``, ``solver``, ``sampler`` and ``G4_quadrature``.
    """
    import pandas as pd

    df = _with_defaults(df)
    tables = {}
    slope_rows = []
    for exp, g in df.groupby("exp", sort=False):
        x = _xcol(exp)
        by = [c for c in _ALGO_KEYS + ("n_samples", "d", "eps") if c != x and c in g and c != "exp"]
        y = "erm_excess" if exp == "G4" else "excess"
        # every point of a curve uses the same seed keys: resample seed indices jointly
        s = fit_slopes(g, x=x, y=y, by=by, upper_half=False, n_boot=N_BOOT, resample="joint")
        s.insert(0, "exp", exp)
        s["theory"] = [theory_exponent(dict(exp=exp, kappa=r["kappa"], delta=r.get("delta", 0.0),
                                            rho_rule=r.get("rho_rule"))) for _, r in s.iterrows()]
        slope_rows.append(s)
    tables["slopes"] = pd.concat(slope_rows, ignore_index=True)
    metrics = [m for m in ("excess", "erm_excess") if m in df]
    by = ["exp", "algo", "inst", "kappa", "d", "n_samples", "eps", "delta", "kappa_low", "rho_rule", "sampler", "M"]
    summ = summarize(df, by=by, metrics=metrics, n_boot=200, quantiles=(0.99,))
    tables["summary"] = summ
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


# --------------------------------------------------------------------------- the docs' generated blocks

DOC_PAGE, RESULTS = page_paths("growth-rates")
DOC_PAGES = ("docs/results/growth-rates.md", "docs/algorithms/growth.md")
BLOCK = "growth-rates verdicts"
BLOCKS = (BLOCK,)


def _block(verdicts_df, manifest: dict) -> str:
    """The generated block: seeds, how the rows are judged, then the verdict table."""
    S = int(manifest.get("seeds", verdicts_df["n_seeds"].max()))
    counts = verdicts_df["verdict"].value_counts()
    tally = ", ".join(f"{int(counts[k])} {k}" for k in VERDICTS if k in counts)
    first = generated_from("growth_rates", "results/growth-rates/slopes.csv", "results/growth-rates/results.csv")
    head = (f"{first} **{S} seeds per point**, {int(manifest.get('n_points', 0))} grid points. One row per "
            f"(experiment, cell), {len(verdicts_df)} in all: {tally}. Two curves that are one piece of evidence (the "
            f"same claimed exponent and, at every point, per-seed values that correlate at least {TWIN_CORR:g} and "
            f"means within {TWIN_REL:.0%}) share one row (`a = b` in its cell, their correlation in its reason). The "
            "claims are the exponents of [GROWTH](../algorithms/growth.md) (its constants and log factors are not "
            "known), judged by the rubric of the [results overview](../results/index.md#verdicts) with a tolerance "
            f"of {TOL:g} ({CLAIMS['G3 ratio'].tolerance:g} for G3's ratio of two exponents): a slope tests a rate "
            "only over a fitted range of at least two decades of its variable, and `≤` marks an upper bound (it "
            "misses only when the whole interval lies above it). Every point of a curve uses the same seed keys, so "
            "each interval is a 95% percentile bootstrap over seed indices resampled jointly across the curve's "
            f"points ({N_BOOT} replicates).")
    return head + "\n\n" + verdict_table(verdicts_df)


def _kept(results_dir=None):
    import json

    import pandas as pd

    d = pathlib.Path(results_dir) if results_dir is not None else RESULTS
    v = verdicts(pd.read_csv(d / "results.csv"), pd.read_csv(d / "slopes.csv"))
    return d, v, json.loads((d / "manifest.json").read_text())


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the docs pages, from a finished results directory.

    Args:
        results_dir: the results directory (default ``results/growth-rates``); its ``results.csv``, ``slopes.csv``
            and ``manifest.json`` are read, nothing is written.

    Returns:
        ``{block name: Markdown}`` for :data:`BLOCKS`.
    """
    _, v, manifest = _kept(results_dir)
    return {BLOCK: _block(v, manifest)}


def publish(out_dir=None, pages=DOC_PAGES, manifest_update: bool = False) -> list:
    """Write the verdict table of a finished results directory into the docs' generated blocks.

    Args:
        out_dir: the results directory (default ``results/growth-rates``).
        pages: the docs pages, relative to the repository, holding the generated block.
        manifest_update: also record ``seeds_per_point`` and the widest half-width of a tested cell in the
            directory's ``manifest.json`` (``ci`` key); a kept run is left as it is by default.

    Returns:
        The pages that changed.
    """
    out, v, manifest = _kept(out_dir)
    if manifest_update:
        _record_slope_ci(out, manifest, v, ("holds", "consistent, unresolved", "misses"), N_BOOT)
    body = _block(v, manifest)
    return [p for p in pages if write_generated(ROOT / p, BLOCK, body)]


def plot(df, outdir: pathlib.Path):
    """One plot per experiment (``growth_{exp}.png``: mean excess against its ``x`` with 95% CIs and
    up to four theory slopes); in the kept results directory it also refreshes the docs' verdicts.

    Args:
        df: the per-seed results.
        outdir: the directory the plots are written to.

    Returns:
        The paths of the plots.
    """
    outdir = pathlib.Path(outdir)
    df = _with_defaults(df)
    paths = []
    metrics = [m for m in ("excess", "erm_excess") if m in df]
    summ = summarize(df, by=["exp", "algo", "inst", "kappa", "d", "n_samples", "eps", "delta", "kappa_low", "rho_rule",
                             "sampler", "M"], metrics=metrics, n_boot=200)
    for exp, g in summ.groupby("exp", sort=False):
        x = _xcol(exp)
        y = "erm_excess" if exp == "G4" else "excess"
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
                theory[f"slope {e:.2f} ({curve[:18]})"] = (lambda xs, x0=x0, y0=y0, e=e: y0 * (np.asarray(xs) / x0) ** e)
        paths.append(plot_curves(g, x=x, y=f"{y}", path=outdir / f"growth_{exp}.png", hue="curve", theory=theory,
                                 title=f"growth-rates {exp}"))
    # the kept run: the docs' verdict tables are regenerated from the tables just written
    if outdir.resolve() == RESULTS.resolve() and (outdir / "results.csv").exists() and (outdir / "slopes.csv").exists():
        publish(outdir)
    return paths


@register_study("growth-rates", defaults=DEFAULTS, quick=QUICK,
                description="GROWTH: private SCO adapting to kappa-growth (G1-G7: rates vs n, d, eps; inverse sensitivity)")
def build(cfg: dict) -> Study:
    """The ``growth-rates`` study: the points of :func:`build_points`, run by :func:`run_point` in
    seed batches of ``SEED_BATCH``, analysed by :func:`analyze` and plotted by :func:`plot`.

    Args:
        cfg: the resolved configuration (:data:`DEFAULTS`, ``--quick`` changes :data:`QUICK`, overrides).

    Returns:
        The :class:`jaxdp.studies.Study`.
    """
    points = build_points(cfg)

    def run(pts, seeds):
        # a chunk's seeds in batches of SEED_BATCH: the same draws (one key per seed index), less memory
        seeds = np.asarray(seeds)
        out = []
        for p in pts:
            parts = [run_point(p, seed_keys(int(cfg["seed"]), seeds[i:i + SEED_BATCH]), cfg)
                     for i in range(0, len(seeds), SEED_BATCH)]
            out.append({k: np.concatenate([q[k] for q in parts]) for k in parts[0]})
        return out

    return Study(name="growth-rates", points=points, seeds=int(cfg["seeds"]), run=run, seeds_per_chunk=SEEDS_PER_CHUNK,
                 check_point=lambda p: check_point(p, cfg),
                 group_by=("exp", "algo", "inst", "kappa"), analyze=analyze, plot=plot, config=cfg,
                 description="GROWTH adaptivity to kappa (docs/algorithms/growth.md#studies)")
