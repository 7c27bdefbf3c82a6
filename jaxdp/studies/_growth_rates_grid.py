"""The ``growth-rates`` study's grid and runs: its experiments and parameters, the instances, the grid points
of every experiment, their checks and the compiled run of one point over a batch of seeds.

Re-exported by :mod:`jaxdp.studies.growth_rates`, which registers the study.
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np

from ..sco import (
    EpochParams, LocalizationParams, epoch_estimator, inst_kappa_1d_twopoint, inst_kappa_atom,
    inst_kappa_linear, inst_kappa_regression, localization_estimator, plan_epoch_growth_sco,
    plan_grad_inverse_sensitivity, plan_localization_sco, run_sco,
)
from ..sco.inverse_sensitivity import exact_grad_inv_estimator
from .framework import Param, declare_params


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
        # exact draws: the continuous density (M = 0) or the M-cell grid law (jaxdp.sco.inverse_sensitivity)
        fn = exact_grad_inv_estimator(inst, n, float(pl["rho"]), int(p["M"]))
        out = _run(fn, keys, float(p["eps"]))
        return {"excess": np.asarray(out["excess"], float), "erm_excess": np.asarray(out["erm_excess"], float),
                "accepted": np.asarray(out["accepted"], float)}
    return {"excess": np.asarray(out["excess"], float), "dist": np.asarray(out["dist"], float),
            "gap_ok": np.asarray(out["gap_ok"], float)}


def _xcol(exp: str) -> str:
    return {"G3": "d", "Geps": "eps"}.get(exp, "n_samples")
