"""``bandits``: pseudo-regret of non-private and private bandit learners vs T, K and epsilon, with theory curves.

Three sweeps (docs/algorithms/bandits.md#study; results/bandits/):

* ``T``: every learner on the ``K = 9`` Bernoulli instance ``means = linspace(0.1, 0.9, 9)``
  (``linspace``) and on the oblivious ``switch`` instance (the "late arm": arm 0 pays 0 for the
  first ``T/3`` rounds and 1 after, the other arms pay Ber(1/2); arm 0 is the best fixed arm;
  only the EXP3 family has a bound there), private ones at ``eps``.
* ``eps``: the private learners on ``linspace`` at ``T = eps_T``.
* ``K``: every learner on ``gap`` (one arm of mean 0.5 + gap, the others 0.5) at ``T = K_T``.

Each grid point runs its own horizon with the learner tuned for it (EXP3: Auer et al. Cor. 3.2;
EXP3-IX: Neu 2015; private learners: their planners, whose plans must be certified). Theory
curves are the bounds of :mod:`jaxdp.bandits.theory`; ``slopes`` compares log-log slopes of the
measured mean pseudo-regret with the slopes of the bound over the same range.
"""
from __future__ import annotations

import dataclasses
import math
import pathlib
from typing import TYPE_CHECKING, Optional, cast

import jax.numpy as jnp
import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from .. import bandits as BD
from ..bandits import theory as TH
from ..core import seed_keys, simulate
from ..privacy.mechanisms import tree_depth
from ..registry import register_study
from ._common_study import ROOT as ROOT, check_each, generated_from, page_paths, upper_half
from .analysis import fmt_ci, fmt_num, markdown_table, publish_blocks
from .claims import VERDICTS, Claim, Measurement, Verdict, judge, judge_exact_bound
from .framework import Param, Study, declare_params, fit_slopes, plot_panels, summarize

NONPRIVATE = ("ucb1", "thompson", "exp3", "exp3_ix")
PRIVATE = ("dp_ucb_tree", "dp_se", "dp_exp3", "dp_exp3_batched", "ldp_ucb")
LEARNERS = NONPRIVATE + PRIVATE
INSTANCES = ("linspace", "switch")

DEFAULTS = {
    "seeds": 256,
    "seed": 0,
    "learners": list(LEARNERS),
    "T": [2 ** k for k in range(10, 19)],
    "K": 9,
    "eps": 1.0,
    "instances": list(INSTANCES),
    "eps_sweep": [0.1, 0.3, 1.0, 3.0, 10.0],
    "eps_T": 65536,
    "K_sweep": [2, 4, 8, 16, 32],
    "K_T": 65536,
    "gap": 0.2,
}
QUICK = {"seeds": 16, "T": [256, 512, 1024, 2048, 4096], "eps_T": 4096, "K_sweep": [2, 4, 8], "K_T": 4096}
PARAMS = declare_params("bandits", {
    "seeds": Param("int", lo=1), "seed": Param("int", lo=0),
    "learners": Param("str", many=True, choices=LEARNERS),
    "T": Param("int", many=True, lo=16, hi=2 ** 24, help="horizons of the T sweep"),
    "K": Param("int", lo=2, hi=4096, help="arms in the T and eps sweeps"),
    "eps": Param("float", lo=0.0, lo_open=True, help="privacy of the private learners in the T and K sweeps"),
    "instances": Param("str", many=True, choices=INSTANCES, help="environments of the T sweep"),
    "eps_sweep": Param("float", many=True, lo=0.0, lo_open=True, allow_empty=True),
    "eps_T": Param("int", lo=16, hi=2 ** 24),
    "K_sweep": Param("int", many=True, lo=2, hi=4096, allow_empty=True),
    "K_T": Param("int", lo=16, hi=2 ** 24),
    "gap": Param("float", lo=0.0, hi=0.5, lo_open=True, help="the best arm's lead in the K sweep"),
})

LABELS = {"ucb1": "UCB1", "thompson": "Thompson", "exp3": "EXP3", "exp3_ix": "EXP3-IX", "dp_ucb_tree": "DP-UCB (tree)",
          "dp_se": "DP-SE", "dp_exp3": "DP-EXP3", "dp_exp3_batched": "DP-EXP3 (batched)", "ldp_ucb": "LDP-UCB"}


# --------------------------------------------------------------------------- instances


def instance_means(instance: str, K: int, gap: float = 0.2) -> np.ndarray:
    """Reward means of a stochastic instance.

    Args:
        instance: ``"linspace"`` (means ``linspace(0.1, 0.9, K)``) or ``"gap"`` (the last arm at
            ``0.5 + gap``, the others at 0.5).
        K: the number of arms.
        gap: the best arm's lead on ``"gap"``.

    Returns:
        The ``(K,)`` Bernoulli means.

    Raises:
        ValueError: another instance (``"switch"`` is not stochastic).
    """
    if instance == "linspace":
        return np.linspace(0.1, 0.9, K)
    if instance == "gap":
        m = np.full(K, 0.5)
        m[-1] = 0.5 + gap
        return m
    raise ValueError(f"no reward means for instance {instance!r}")


def switch_params(K: int, T: int):
    """The ``switch`` ("late arm") instance: arm 0 pays 0 for ``T // 3`` rounds and 1 after; the others Ber(1/2).

    Args:
        K: the number of arms.
        T: the horizon.

    Returns:
        ``(before, after, switch_round)``: the ``(K,)`` means before and after the switch and the
        round ``T // 3`` at which they change (the :class:`jaxdp.bandits.SwitchingArmsParams` fields).
    """
    a = np.full(K, 0.5)
    b = np.full(K, 0.5)
    a[0], b[0] = 0.0, 1.0
    return a, b, T // 3


def _adversary(instance: str, K: int, Ts, gap: float):
    G = len(Ts)
    if instance == "switch":
        rows = [switch_params(K, int(T)) for T in Ts]
        ap = BD.SwitchingArmsParams(jnp.asarray(np.stack([r[0] for r in rows]), jnp.float32),
                                    jnp.asarray(np.stack([r[1] for r in rows]), jnp.float32),
                                    jnp.asarray([r[2] for r in rows], jnp.int32))
        return BD.switching_arms(K), ap
    m = instance_means(instance, K, gap)
    return BD.bernoulli_arms(K), BD.BernoulliArmsParams(jnp.asarray(np.tile(m, (G, 1)), jnp.float32))


# --------------------------------------------------------------------------- learners and their tuning


def plan_for(learner: str, K: int, T: int, eps):
    """The plan of a private learner from its planner (DP-EXP3 with ``tau = 1``, the batched one with
    ``tau = "auto"``).

    Args:
        learner: a name of :data:`LEARNERS`.
        K: the number of arms.
        T: the horizon the plan is tuned for.
        eps: the privacy level ε (pure ε-DP).

    Returns:
        The planner's plan (check ``plan.certified`` before use), or ``None`` for a non-private learner.
    """
    if learner == "dp_ucb_tree":
        return BD.plan_dp_ucb_tree(eps=eps, T=T, d=K)
    if learner == "dp_se":
        return BD.plan_dp_se(eps=eps, T=T, d=K)
    if learner == "dp_exp3":
        return BD.plan_dp_exp3(eps=eps, T=T, d=K, tau=1)
    if learner == "dp_exp3_batched":
        return BD.plan_dp_exp3(eps=eps, T=T, d=K, tau="auto")
    if learner == "ldp_ucb":
        return BD.plan_ldp_ucb(eps=eps, T=T, d=K)
    return None


def learner_setup(learner: str, K: int, T: int, eps):
    """The learner and its tuning at one grid point: fixed parameters for UCB1 and Thompson, the
    horizon-tuned rates for EXP3 and EXP3-IX, the certified plan for a private learner.

    Args:
        learner: a name of :data:`LEARNERS`.
        K: the number of arms.
        T: the horizon the parameters are tuned for.
        eps: the privacy level of a private learner (ignored for a non-private one).

    Returns:
        ``(Learner, params_class, values)``: the learner, its parameter ``NamedTuple`` class and the
        parameter values as a tuple of host numbers (the study stacks the points' values into one
        ``params_class`` of arrays).

    Raises:
        ValueError: a private learner whose plan is not certified at ``(K, T, eps)``.
    """
    if learner == "ucb1":
        return BD.ucb1(K), BD.UCB1Params, (2.0,)
    if learner == "thompson":
        return BD.thompson(K), BD.ThompsonParams, (1.0, 1.0)
    if learner == "exp3":
        g, eta = TH.exp3_tuning(K, T)
        return BD.exp3(K), BD.Exp3Params, (g, eta, 0.0)
    if learner == "exp3_ix":
        return BD.exp3_ix(K), BD.Exp3IXParams, TH.exp3_ix_tuning(K, T)
    plan = plan_for(learner, K, T, eps)
    if not plan.certified:
        raise ValueError(f"bandits: the plan of {learner} at K={K}, T={T}, eps={eps} is not certified: {plan.format()}")
    p = plan.params
    if learner == "dp_ucb_tree":
        return BD.dp_ucb_tree(K, T), BD.DPUCBParams, (p["b"],)
    if learner == "dp_se":
        return BD.dp_se(K), BD.DPSEParams, (p["eps"], p["beta"])
    if learner in ("dp_exp3", "dp_exp3_batched"):
        return BD.dp_exp3(K), BD.DPExp3Params, (p["eta"], p["gamma"], p["b"], p["B"], p["tau"])
    return BD.ldp_ucb(K), BD.LDPUCBParams, (p["b"],)


def _stack(cls, rows):
    cols = list(zip(*rows))
    arrs = []
    for c in cols:
        a = np.asarray(c)
        arrs.append(jnp.asarray(a, jnp.int32 if np.issubdtype(a.dtype, np.integer) else jnp.float32))
    return cls(*arrs)


# --------------------------------------------------------------------------- theory


def theory_value(learner: str, instance: str, K: int, T: int, eps, gap: float = 0.2) -> float:
    """The bound of :mod:`jaxdp.bandits.theory` for one grid point (NaN where none applies: stochastic
    bounds on the ``switch`` instance). Thompson sampling: the Lai–Robbins rate (a lower bound it attains).

    Args:
        learner: a name of :data:`LEARNERS`.
        instance: ``"linspace"``, ``"gap"`` or ``"switch"``.
        K: the number of arms.
        T: the horizon.
        eps: the privacy level of a private learner (its bound uses its plan's parameters).
        gap: the best arm's lead on ``"gap"``.

    Returns:
        The bound on the expected pseudo-regret at ``T`` (NaN where none applies).

    Raises:
        ValueError: an unknown learner.
    """
    T = int(T)
    adversarial = learner in ("exp3", "exp3_ix", "dp_exp3", "dp_exp3_batched")
    if instance == "switch" and not adversarial:
        return math.nan
    if learner == "exp3":
        return TH.exp3_bound(K, T)
    if learner == "exp3_ix":
        eta, g = TH.exp3_ix_tuning(K, T)
        return TH.exp3_ix_bound(K, T, eta, g)
    if learner in ("dp_exp3", "dp_exp3_batched"):
        p = plan_for(learner, K, T, eps).params
        return TH.dp_exp3_bound(K, T, p["eta"], p["gamma"], p["b"], p["B"], p["tau"])
    mu = instance_means(instance, K, gap)
    if learner == "ucb1":
        return TH.ucb1_bound(mu, T)
    if learner == "thompson":
        return TH.lai_robbins(mu, T)
    if learner == "ldp_ucb":
        return TH.ldp_ucb_bound(mu, T, 1.0 / eps)
    if learner == "dp_ucb_tree":
        H = tree_depth(T)
        return TH.dp_ucb_tree_bound(mu, T, H / eps, H)
    if learner == "dp_se":
        return TH.dp_se_bound(mu, T, eps, 1.0 / T)
    raise ValueError(f"unknown learner {learner!r}")


THEORY_NAMES = {"ucb1": "Auer et al. Thm 1", "thompson": "Lai-Robbins rate", "exp3": "Auer et al. Cor 3.2",
                "exp3_ix": "Neu 2015", "dp_exp3": "bound (docs)", "dp_exp3_batched": "bound (docs)",
                "ldp_ucb": "bound (confidence event)", "dp_ucb_tree": "bound (confidence event)",
                "dp_se": "bound (good event)"}


# --------------------------------------------------------------------------- the study


def _points(cfg: dict) -> list:
    pts = []
    eps1 = float(cfg["eps"])
    # at eps >= 1 the batched DP-EXP3 has blocks of ceil(1/eps) = 1 round: it is DP-EXP3, not run twice
    fixed = [l for l in cfg["learners"] if not (l == "dp_exp3_batched" and math.ceil(1.0 / eps1 - 1e-12) <= 1)]
    for inst in cfg["instances"]:
        for l in fixed:
            for T in cfg["T"]:
                pts.append({"sweep": "T", "learner": l, "instance": inst, "K": int(cfg["K"]), "T": int(T),
                            "eps": eps1 if l in PRIVATE else None})
    for l in cfg["learners"]:
        if l in PRIVATE:
            for e in cfg["eps_sweep"]:
                pts.append({"sweep": "eps", "learner": l, "instance": "linspace", "K": int(cfg["K"]),
                            "T": int(cfg["eps_T"]), "eps": float(e)})
    for l in fixed:
        for K in cfg["K_sweep"]:
            pts.append({"sweep": "K", "learner": l, "instance": "gap", "K": int(K), "T": int(cfg["K_T"]),
                        "eps": eps1 if l in PRIVATE else None})
    return pts


@register_study("bandits", defaults=DEFAULTS, quick=QUICK,
                description="bandit learners (UCB1, Thompson, EXP3, EXP3-IX, DP-UCB, DP-SE, DP-EXP3, LDP-UCB): "
                            "pseudo-regret vs T, K, eps with theory curves")
def build(cfg: dict) -> Study:
    """The ``bandits`` study: the ``T``, ``eps`` and ``K`` sweeps of the module docstring, each
    point simulated with common random numbers (the same seed keys at every point).

    Args:
        cfg: the resolved configuration (:data:`DEFAULTS`, ``--quick`` changes :data:`QUICK`, then
            the user's overrides): learners, horizons, ``K``, ``eps``, the sweeps' grids, ``gap``,
            seeds and the root seed.

    Returns:
        The :class:`jaxdp.studies.Study`; its analysis gives the tables ``summary`` (mean
        pseudo-regret with 95% CIs and the theory bound per point) and ``slopes`` (measured against
        theory log-log slopes per sweep), its plots regret against ``T``, ε and ``K``.

    Raises:
        ValueError: an unknown learner in ``cfg["learners"]``.
    """
    check_each(cfg["learners"], lambda l: l in LEARNERS,
               "learners: unknown learner {!r}; allowed: " + ", ".join(LEARNERS))
    points = _points(cfg)
    gap = float(cfg["gap"])

    def run(pts, seeds):
        p0 = pts[0]
        name, inst, K, T = p0["learner"], p0["instance"], p0["K"], p0["T"]
        setups = [learner_setup(name, K, T, p["eps"]) for p in pts]
        learner, cls = setups[0][0], setups[0][1]
        params = _stack(cls, [s[2] for s in setups])
        Ts = np.full(len(pts), T, np.int32)
        adversary, ap = _adversary(inst, K, Ts, gap)
        keys = seed_keys(cfg["seed"], seeds)
        keys = jnp.broadcast_to(keys, (len(pts),) + keys.shape)   # common random numbers across the points
        out = simulate(learner, adversary, BD.bandit_problem("pseudo"), params, ap, keys, Ts, grid=True,
                       n_checkpoints=2)
        res = []
        for i in range(len(pts)):
            r = {"regret": out["regret"][i]}
            r["switches"] = out["switches"][i].astype(float) if "switches" in out else np.full(len(seeds), np.nan)
            res.append(r)
        return res

    def check_point(p):
        learner_setup(p["learner"], p["K"], p["T"], p["eps"])
        if p["instance"] != "switch":
            instance_means(p["instance"], p["K"], gap)

    def _theory(df):
        return [theory_value(l, i, int(k), int(t), e, gap)
                for l, i, k, t, e in zip(df["learner"], df["instance"], df["K"], df["T"], df["eps"])]

    def analyze(df):
        df = df.assign(eps=df["eps"].astype(float))
        by = ["sweep", "learner", "instance", "K", "T", "eps"]
        summ = summarize(df, by, ["regret", "switches"])
        summ["theory"] = _theory(summ)
        summ["regret/theory"] = summ["regret_mean"] / summ["theory"]
        tables = {"slopes": _slopes(df, summ), "summary": summ}
        return tables

    def _slopes(df, summ):
        import pandas as pd

        rows = []
        specs = (("T", "T", ["learner", "instance"], True), ("eps", "eps", ["learner"], False),
                 ("K", "K", ["learner"], False))
        for sweep, x, by, upper in specs:
            sub = df[df["sweep"] == sweep]
            if not len(sub) or sub[x].nunique() < 2:
                continue
            # every point uses the same seed keys: resample seed indices jointly across the curve
            sl = fit_slopes(sub, x, "regret", by=by, upper_half=upper, resample="joint")
            for _, r in sl.iterrows():
                g = summ[(summ["sweep"] == sweep) & (summ["learner"] == r["learner"])]
                if "instance" in by:
                    g = g[g["instance"] == r["instance"]]
                g = g[(g[x] >= r["x_min"]) & (g[x] <= r["x_max"])].sort_values(x)
                th = g["theory"].to_numpy(float)
                xs = g[x].to_numpy(float)
                ok = np.isfinite(th) & (th > 0)
                th_slope = float(np.polyfit(np.log(xs[ok]), np.log(th[ok]), 1)[0]) if ok.sum() >= 2 else math.nan
                rows.append({"sweep": sweep, "learner": r["learner"], "instance": r.get("instance", g["instance"].iloc[0]),
                             "x_min": r["x_min"], "x_max": r["x_max"], "slope": r["slope"], "slope_lo": r["slope_lo"],
                             "slope_hi": r["slope_hi"], "theory_slope": th_slope,
                             "regret@x_max": float(g["regret_mean"].iloc[-1]), "theory@x_max": float(th[-1]),
                             "theory": THEORY_NAMES[r["learner"]]})
        return pd.DataFrame(rows)

    def plot(df, outdir: pathlib.Path):
        df = df.assign(eps=df["eps"].astype(float))
        summ = summarize(df, ["sweep", "learner", "instance", "K", "T", "eps"], ["regret"], n_boot=200)
        summ["learner"] = summ["learner"].map(LABELS)
        inv = {v: k for k, v in LABELS.items()}
        paths = []

        def curve(sub, x):
            s = sub.sort_values(x)
            th = np.asarray(_theory(s.assign(learner=s["learner"].map(inv))), float)
            ok = np.isfinite(th)
            return {THEORY_NAMES[inv[s["learner"].iloc[0]]]: (s[x].to_numpy(float)[ok], th[ok])} if ok.any() else {}

        for inst in sorted(summ.loc[summ["sweep"] == "T", "instance"].unique()):
            for fam, names in (("nonprivate", NONPRIVATE), ("private", PRIVATE)):
                sub = summ[(summ["sweep"] == "T") & (summ["instance"] == inst)
                           & summ["learner"].isin([LABELS[n] for n in names])]
                if len(sub):
                    # regret against the best fixed arm can be negative on the switching instance: linear y axis
                    paths.append(plot_panels(sub, "learner", "T", "regret", outdir / f"regret_vs_T_{inst}_{fam}.png",
                                             theory=lambda v, s: curve(s, "T"), width=3.4,
                                             title=lambda v, inst=inst: f"{v} ({inst})",
                                             ylabel="pseudo-regret (mean, 95% CI)", logy=inst != "switch"))
        sub = summ[summ["sweep"] == "eps"]
        if len(sub):
            paths.append(plot_panels(sub, "learner", "eps", "regret", outdir / "regret_vs_eps.png",
                                     theory=lambda v, s: curve(s, "eps"), width=3.4, xlabel="eps",
                                     title=lambda v: f"{v}, T={int(sub['T'].iloc[0])}", ylabel="pseudo-regret"))
        sub = summ[summ["sweep"] == "K"]
        if len(sub):
            for fam, names in (("nonprivate", NONPRIVATE), ("private", PRIVATE)):
                s2 = sub[sub["learner"].isin([LABELS[n] for n in names])]
                if len(s2):
                    paths.append(plot_panels(s2, "learner", "K", "regret", outdir / f"regret_vs_K_{fam}.png",
                                             theory=lambda v, s: curve(s, "K"), width=3.4,
                                             title=lambda v: f"{v}, T={int(sub['T'].iloc[0])}",
                                             ylabel="pseudo-regret"))
        return paths

    return Study(name="bandits", points=points, seeds=int(cfg["seeds"]), run=run, check_point=check_point,
                 group_by=("sweep", "learner", "instance", "K", "T"), analyze=analyze, plot=plot, config=cfg,
                 description=__doc__.strip().splitlines()[0])


# --------------------------------------------------------------------------- the results page

DOC_PAGE, RESULTS = page_paths("bandits")
BLOCKS = ("bandits T sweep", "bandits eps sweep", "bandits K sweep", "bandits bounds", "bandits verdicts")
N_BOOT = 2000
#: the order of the learners in the page's tables
_RANK = {n: i for i, n in enumerate(LEARNERS)}

# --------------------------------------------------------------------------- verdicts

#: the section of the results page that explains every miss
MISS_LINK = "#misses"
_DP_EXP3 = "E[R_T] ≤ γT + τ ln K/η + ηTK(1 + 2b²)/(1 − γ) + 2b with B = b ln T, "
#: the claims of docs/algorithms/bandits.md, as data. Every bound of :mod:`jaxdp.bandits.theory` (the kept ``theory``
#: column) carries its constants, so it is tested by regret/bound at every fitted point of every sweep; Thompson
#: sampling's Lai–Robbins rate is attained only asymptotically, a rate (its ``value`` NaN: the rate's log-log slope
#: over each cell's fitted range); a key ``(learner, instance)`` overrides the learner's claim there, ``None``: no
#: claim applies (a stochastic bound on the oblivious switching instance)
CLAIMS: dict = {
    "ucb1": Claim("E[R̄_T] ≤ Σ 8 ln T/Δ_i + (1 + π²/3) Σ Δ_i (Auer, Cesa-Bianchi & Fischer 2002, Thm 1)", "bound", 1.0,
                  0.05, link=MISS_LINK),
    "thompson": Claim("regret / Lai–Robbins rate Σ Δ_i ln T/kl(μ_i, μ*) → 1 as T → ∞ (Kaufmann, Korda & Munos 2012): "
                      "the rate's log-log slope", "rate", math.nan, 0.05, link=MISS_LINK),
    "exp3": Claim("E[R_T] ≤ 2√(e−1)·√(TK ln K) (Auer, Cesa-Bianchi, Freund & Schapire 2002, Cor. 3.2)", "bound", 1.0,
                  0.05, link=MISS_LINK),
    "exp3_ix": Claim("E[R_T] ≤ (3/√2)·√(TK ln K) (Neu 2015)", "bound", 1.0, 0.05, link=MISS_LINK),
    "dp_ucb_tree": Claim("E[R̄_T] ≤ Σ Δ_i N_i + (1 + 2π²/3) Σ Δ_i, N_i the pulls while the radii √(2 ln T/n) + "
                         "u(H, 4 ln T)/n hold: O(Σ ln T/Δ_i + K H ln T/ε) (Tossou & Dimitrakakis 2016)", "bound", 1.0,
                         0.05, link=MISS_LINK),
    "dp_se": Claim("E[R̄_T] ≤ Σ Δ_a Σ_{e ≤ e_a} R_e + βT max Δ on the good event: O(Σ ln T/Δ_a + K ln T/ε) (Sajed & "
                   "Sheffet 2019)", "bound", 1.0, 0.05, link=MISS_LINK),
    "dp_exp3": Claim(_DP_EXP3 + "τ = 1, b = 1/ε (DP-EXP3-Lap, Tossou & Dimitrakakis 2017; derived on the algorithm "
                     "page)", "bound", 1.0, 0.05, link=MISS_LINK),
    "dp_exp3_batched": Claim(_DP_EXP3 + "τ = ⌈1/ε⌉, b = 1/(ετ) (Asi, Raman & Talwar 2025)", "bound", 1.0, 0.05,
                             link=MISS_LINK),
    "ldp_ucb": Claim("E[R̄_T] ≤ Σ Δ_i N_i + (1 + 2π²/3) Σ Δ_i, N_i the pulls while the radii √(2 ln T/n) + "
                     "u(n, 4 ln T)/n hold: O(Σ (1 + 1/ε²) ln T/Δ_i) (Ren, Zhou, Lui & Zhang 2020)", "bound", 1.0, 0.05,
                     link=MISS_LINK),
    **{(ln, "switch"): None for ln in ("ucb1", "thompson", "dp_ucb_tree", "ldp_ucb")},
    ("dp_se", "switch"): Claim("linear: successive elimination drops the late arm in its first epoch, regret / "
                               "(T/2 − ⌊T/3⌋) → 1 (algorithm page, environments)", "rate", 1.0, 0.05, link=MISS_LINK),
}
#: a learner whose runs are another's, seed by seed, at some points (``repeats`` of :func:`verdicts`)
TWIN_OF = {"dp_exp3_batched": "dp_exp3"}
_X = {"T": "T", "eps": "ε", "K": "K"}


def _x_label(sweep: str, v) -> str:
    from .analysis import _pow2

    return {"T": lambda: f"T = {_pow2(v)}", "eps": lambda: f"ε = {float(v):g}", "K": lambda: f"K = {int(v)}"}[sweep]()


def _trivial_cap(pts, gap: float) -> np.ndarray:
    """Which points' bound is a trivial cap: ``T·max Δ`` of a stochastic instance (the index policies' bounds are
    ``min(·, T·max Δ)``) or ``T`` (DP-EXP3's bound is ``min(·, T)``); pseudo-regret never exceeds either."""

    out = []
    for p in pts.itertuples(index=False):
        caps = [float(p.T)]
        if p.instance != "switch":
            mu = instance_means(p.instance, int(p.K), gap)
            caps.append(float(p.T) * float((mu.max() - mu).max()))
        out.append(any(np.isclose(p.theory, c, rtol=1e-9, atol=0.0) for c in caps))
    return np.asarray(out, bool)


def _bound_verdict(claim: Claim, pts, n: int, x: str, gap: float, repeated) -> tuple:
    """``(Verdict, Measurement or None)`` of a bound on the points ``pts`` of one cell: regret/bound at every point
    but those whose bound is the trivial cap and those in ``repeated`` (another learner's runs); an exact evaluation
    (no spread over seeds at any point) is judged by its value."""
    own = pts[~pts[x].isin(list(repeated))]
    capped = _trivial_cap(own, gap)
    tested = own[~capped]
    notes = [f"the bound is the trivial cap (T·max Δ or T) at {', '.join(_x_label(x, v) for v in own[x][capped])}, "
             f"tested at the other {len(tested)}"] if capped.any() else []
    if len(own) < len(pts):
        notes.append(f"at {', '.join(_x_label(x, v) for v in sorted(repeated))} its runs are "
                     f"{LABELS[TWIN_OF[pts['learner'].iloc[0]]]}'s, seed by seed, and counted in that row")
    if not len(tested):
        return Verdict("not tested", "the bound is the trivial cap (T·max Δ or T) at every fitted point"), None
    b = tested["theory"].to_numpy(float)
    mean, lo, hi = (tested[c].to_numpy(float) / b for c in ("regret_mean", "regret_lo", "regret_hi"))
    m = Measurement.of_ratios(mean, lo, hi, n)
    v = judge_exact_bound(m) if m.exact(mean, lo, hi) else judge(claim, m)
    if m.estimate <= 0:
        notes.append("pseudo-regret ≤ 0 at every tested point (below the best fixed arm)")
    return Verdict(v.verdict, "; ".join([v.reason, *notes]) if v.reason else "; ".join(notes)), m


def verdicts(slopes, summary, gap: Optional[float] = None, repeats=None) -> "pd.DataFrame":
    """One verdict per fitted cell of a ``slopes`` table against :data:`CLAIMS`, by the generic rubric
    (:func:`jaxdp.studies.claims.judge`).

    A bound with its constants is tested by regret/bound at every fitted point of the cell (a row shows the largest
    ratio with the largest upper end of the per-point 95% intervals); a point whose bound is the trivial cap
    (``T·max Δ`` or ``T``, which pseudo-regret never exceeds) tests nothing and is left out, and a cell with no
    spread over seeds at any tested point is an exact evaluation. A rate is tested by the cell's slope over its
    fitted range (two decades at least). A point where a learner's runs are another's, seed by seed (``repeats``),
    is that learner's evidence and is left out of its row.

    Args:
        slopes: one row per fitted curve: ``sweep`` (``"T"``, ``"eps"`` or ``"K"``), ``learner``, ``instance``,
            ``x_min``, ``x_max`` (the fitted range), ``slope``, ``slope_lo``, ``slope_hi``, ``theory_slope`` (the
            bound's slope over the range), as in ``slopes.csv``.
        summary: one row per grid point: ``sweep``, ``learner``, ``instance``, ``K``, ``T``, ``eps``, ``n_seeds``,
            ``regret_mean``, ``regret_lo``, ``regret_hi`` and ``theory`` (the bound), as in ``summary.csv``.
        gap: the best arm's lead on the ``gap`` instance (the K sweep's trivial cap ``T·gap``).
        repeats: ``{(sweep, learner): values of the swept variable}`` where the learner's runs are those of
            :data:`TWIN_OF`'s learner, seed by seed (default: none).

    Returns:
        The verdict rows (columns of :func:`jaxdp.studies.analysis.verdict_table`).
    """
    import pandas as pd

    gap = float(cast(float, DEFAULTS["gap"])) if gap is None else float(gap)
    repeats = repeats or {}
    rows = []
    for r in slopes.itertuples(index=False):
        x = r.sweep
        pts = summary[(summary["sweep"] == x) & (summary["learner"] == r.learner) & (summary["instance"] == r.instance)]
        pts = pts[(pts[x] >= r.x_min) & (pts[x] <= r.x_max)].sort_values(x)
        n = int(pts["n_seeds"].min()) if len(pts) else 0
        row = dict(cell=f"{LABELS[r.learner]}, {r.instance}", n_seeds=n)
        claim = CLAIMS[(r.learner, r.instance)] if (r.learner, r.instance) in CLAIMS else CLAIMS.get(r.learner)
        if claim is None:
            rows.append(dict(row, experiment=f"regret vs {_X[x]}", claim="no bound applies", claimed=math.nan,
                             kind="equals", slope=math.nan, slope_lo=math.nan, slope_hi=math.nan, verdict="not tested",
                             reason="the learner's bound is for stationary stochastic arms, not the oblivious "
                                    "switching instance", link=""))
            continue
        if claim.kind == "bound":
            v, m = _bound_verdict(claim, pts, n, x, gap, repeats.get((x, r.learner), ()))
            row.update(experiment=f"regret / bound over {_X[x]}", claimed=1.0, kind="at_most",
                       slope=m.estimate if m else math.nan, slope_lo=m.lo if m else math.nan,
                       slope_hi=m.hi if m else math.nan)
        else:
            if math.isnan(claim.value):
                claim = dataclasses.replace(claim, value=float(r.theory_slope))
            fin = np.isfinite(r.slope)   # no point estimate: the bootstrap's interval is not shown either
            v = judge(claim, Measurement(float(r.slope), float(r.slope_lo), float(r.slope_hi), n,
                                         decades=math.log10(float(r.x_max) / float(r.x_min))))
            row.update(experiment=f"regret vs {_X[x]}", claimed=claim.value, kind="equals", slope=r.slope,
                       slope_lo=r.slope_lo if fin else math.nan, slope_hi=r.slope_hi if fin else math.nan)
        rows.append(dict(row, claim=claim.text, verdict=v.verdict, reason=v.reason,
                         link=claim.link if v.verdict == "misses" else ""))
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- the page's blocks


def _theory_slope(th, x: str, lo: float, hi: float) -> float:
    g = th[(th[x] >= lo) & (th[x] <= hi)].sort_values(x)
    v = g["theory"].to_numpy(float)
    ok = np.isfinite(v) & (v > 0)
    if ok.sum() < 2:
        return math.nan
    return float(np.polyfit(np.log(g[x].to_numpy(float)[ok]), np.log(v[ok]), 1)[0])


def _spread_free(df, keys) -> set:
    """Points (tuples of ``keys``) where every seed has the same pseudo-regret."""
    g = df.groupby(keys, dropna=False)["regret"].agg(lambda v: float(v.max() - v.min()))
    return {k for k, v in g.items() if v == 0.0}


def _page_fits(df, summ):
    """Every fitted curve of the page, as in ``slopes.csv``: the T sweep per (learner, instance) over the upper half
    of the grid, the ε and K sweeps per learner over the whole grid; seed indices resampled jointly across each curve
    (:data:`N_BOOT` replicates), with the bound's slope over the fitted range."""
    import pandas as pd

    parts = []
    for sweep, by, upper in (("T", ["learner", "instance"], True), ("eps", ["learner"], False),
                             ("K", ["learner"], False)):
        sub = df[df["sweep"] == sweep]
        sl = fit_slopes(sub, sweep, "regret", by=by, upper_half=upper, n_boot=N_BOOT, resample="joint")
        if "instance" not in sl:
            sl["instance"] = sub.groupby("learner")["instance"].first().reindex(sl["learner"]).to_numpy()
        sl.insert(0, "sweep", sweep)
        sl["theory_slope"] = [
            _theory_slope(summ[(summ["sweep"] == sweep) & (summ["learner"] == r.learner)
                               & (summ["instance"] == r.instance)], sweep, r.x_min, r.x_max)
            for r in sl.itertuples(index=False)]
        parts.append(sl)
    return pd.concat(parts, ignore_index=True)


def _sweep_block(sl, summ, x: str, column, head: str, note) -> str:
    """The block of the ``x`` sweep (``"eps"`` or ``"K"``): every learner's mean regret at each ``x`` (``column(x)``
    heads its column), the fitted slope ``sl`` of log mean regret on log ``x`` over the whole grid (seed indices
    resampled jointly), the bound's slope and ``note(learner)``, under ``head``."""
    xs = sorted(summ.loc[summ["sweep"] == x, x].unique())
    sl = sl.sort_values("learner", key=lambda c: c.map(_RANK))
    rows = []
    for r in sl.itertuples(index=False):
        g = summ[(summ["sweep"] == x) & (summ["learner"] == r.learner)].set_index(x)
        cells = [f"{g.at[v, 'regret_mean']:,.0f}" if v in g.index else "—" for v in xs]
        rows.append([LABELS[r.learner], *cells, fmt_ci(r.slope, r.slope_lo, r.slope_hi), fmt_num(r.theory_slope),
                     note(r.learner)])
    return head + "\n\n" + markdown_table(
        ["learner", *[column(v) for v in xs], "slope [95% CI]", "slope of the bound", "note"], rows)


def _verdict_block(fits, summ, gap: float, repeats: dict) -> str:
    """The verdict block: its head (the claims, the rubric, the counts) and table."""
    from .analysis import verdict_table

    v = verdicts(fits.sort_values(["sweep", "instance", "learner"],
                                  key=lambda c: c.map(_RANK) if c.name == "learner" else
                                  c.map({"T": 0, "eps": 1, "K": 2}) if c.name == "sweep" else c), summ, gap, repeats)
    counts = v["verdict"].value_counts()
    tally = ", ".join(f"{int(counts[k])} {k}" for k in VERDICTS if k in counts)
    twin = "; ".join(f"{LABELS[ln]}'s points at " + ", ".join(_x_label(x, e) for e in sorted(xs))
                     + f" are {LABELS[TWIN_OF[ln]]}'s runs, seed by seed, and counted once, in {LABELS[TWIN_OF[ln]]}'s "
                     "row" for (x, ln), xs in repeats.items() if xs)
    head = (generated_from("bandits", "results/bandits/results.csv", "summary.csv")
            + f" One row per fitted curve, {len(v)} in all: {tally}; evidence shown twice is shown once"
            + (f" ({twin})" if twin else "") + ". The claims are the bounds of the "
            "[algorithm page](../algorithms/bandits.md) (`jaxdp.bandits.theory`, the kept `theory` column), judged by "
            "the rubric of the [results overview](index.md#verdicts). Every bound carries its constants, so the "
            "measurement is the mean pseudo-regret over the bound at every fitted point of the sweep (the largest "
            "ratio, with the largest upper end of the per-point 95% intervals; holds when that end is at most 1.05); "
            "a point where the bound is the trivial cap T·max Δ or T, which pseudo-regret never exceeds, tests "
            "nothing and is left out. Thompson sampling's Lai–Robbins rate and DP-SE's linear regret on `switch` are "
            "attained asymptotically: rates, tested by the slope (tolerance 0.05) only over two decades of the swept "
            "variable. The slopes' intervals are percentile bootstraps over seed indices resampled jointly across "
            f"the curve's points ({N_BOOT} replicates), the fits of the sweep tables below.")
    return head + "\n\n" + verdict_table(v)


def _kept_gap(d: pathlib.Path) -> float:
    """The ``gap`` of the kept run's configuration (``manifest.json``), else the default."""
    import json

    try:
        return float(json.loads((d / "manifest.json").read_text())["config"]["gap"])
    except (OSError, KeyError, ValueError):
        return cast(float, DEFAULTS["gap"])


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of ``docs/results/bandits.md`` from a kept run's ``results.csv`` and ``summary.csv``.

    Every grid point uses the same seed keys (common random numbers), so each slope's interval resamples seed
    indices jointly across the points of its curve (``fit_slopes(..., resample="joint")``); the bound of each point
    is the kept ``summary.csv``'s ``theory`` column.

    Args:
        results_dir: the results directory (default ``results/bandits``).

    Returns:
        ``{block name: Markdown}`` for :data:`BLOCKS`: the T sweep (every learner and instance), the ε sweep,
        the K sweep (every learner), the check of every point against its bound and the verdict of every fitted
        curve (:func:`verdicts`).
    """
    import pandas as pd

    d = pathlib.Path(results_dir) if results_dir is not None else RESULTS
    df = pd.read_csv(d / "results.csv")
    df = df.assign(eps=df["eps"].astype(float))
    th = pd.read_csv(d / "summary.csv")
    keys = ["sweep", "learner", "instance", "K", "T", "eps"]
    summ = summarize(df, keys, ["regret"]).merge(th[keys + ["theory"]], on=keys, how="left")
    S = int(df.groupby(keys, dropna=False)["seed"].nunique().min())
    flat = _spread_free(df, keys)
    fits = _page_fits(df, summ)
    out = {}

    # T sweep
    t = df[df["sweep"] == "T"]
    sl = fits[fits["sweep"] == "T"]
    sl = sl.sort_values(["instance", "learner"], key=lambda c: c.map(_RANK) if c.name == "learner" else c)
    rows = []
    for r in sl.itertuples(index=False):
        g = summ[(summ["sweep"] == "T") & (summ["learner"] == r.learner) & (summ["instance"] == r.instance)]
        last = g.sort_values("T").iloc[-1]
        notes = []
        fitted = g[(g["T"] >= r.x_min) & (g["T"] <= r.x_max)]
        n_pos = int((fitted["regret_mean"] > 0).sum())
        if not np.isfinite(r.slope):
            notes.append(f"pseudo-regret ≤ 0 at {len(fitted) - n_pos} of the {len(fitted)} fitted horizons "
                         "(below the best fixed arm): no log-log slope")
        elif n_pos < len(fitted):
            notes.append(f"fitted on the {n_pos} of {len(fitted)} horizons with a positive mean; "
                         "the others are below the best fixed arm")
        if not np.isfinite(last["theory"]):
            notes.append("no bound applies (a stochastic bound on the oblivious switching instance)")
        nflat = sum(k[:3] == ("T", r.learner, r.instance) for k in flat)
        if nflat:
            notes.append(f"no spread over seeds at {nflat} horizon(s)")
        rows.append([LABELS[r.learner], r.instance,
                     fmt_ci(r.slope, r.slope_lo, r.slope_hi) if np.isfinite(r.slope) else "—",
                     fmt_num(r.theory_slope),
                     fmt_ci(last["regret_mean"], last["regret_lo"], last["regret_hi"], 0), fmt_num(last["theory"], 0),
                     fmt_num(last["regret_mean"] / last["theory"], 2), "; ".join(notes) or "—"])
    Ts = sorted(t["T"].unique())
    up = upper_half(Ts)
    head = (generated_from("bandits", "results/bandits/results.csv", "summary.csv")
            + f" {len(rows)} (learner, instance) curves, {S} seeds per point. Slope of log mean "
            f"pseudo-regret on log T over T = {int(up[0])} … {int(up[-1])}; every point uses the same seed keys, so "
            f"each interval is a 95% percentile bootstrap over seed indices resampled jointly across the curve "
            f"({N_BOOT} replicates). Regret and bound at T = {int(Ts[-1])}.")
    out[BLOCKS[0]] = head + "\n\n" + markdown_table(
        ["learner", "instance", "slope [95% CI]", "slope of the bound", f"regret at T = {int(Ts[-1])} [95% CI]",
         "bound", "regret / bound", "note"], rows)

    # eps sweep
    e = df[df["sweep"] == "eps"]
    same = set()
    if {"dp_exp3", "dp_exp3_batched"} <= set(e["learner"]):
        a = e[e["learner"] == "dp_exp3"].set_index(["eps", "seed"])["regret"]
        b = e[e["learner"] == "dp_exp3_batched"].set_index(["eps", "seed"])["regret"]
        dif = (a - b).abs().groupby(level=0).max()
        same = {float(k) for k, v in dif.items() if v == 0.0}
    batched = ("the per-round DP-EXP3's runs, seed by seed, at ε = " + ", ".join(f"{x:g}" for x in sorted(same))
               + " (blocks of one round)")
    T_e = int(e["T"].iloc[0])
    head = (f"*Generated; do not edit by hand.* Mean pseudo-regret at T = {T_e} (`linspace`), {S} seeds; slope of "
            "log mean regret on log ε over the whole grid, seed indices resampled jointly across ε.")
    out[BLOCKS[1]] = _sweep_block(fits[fits["sweep"] == "eps"], summ, "eps", lambda x: f"ε = {x:g}", head,
                                  lambda ln: batched if ln == "dp_exp3_batched" and same else "—")

    # K sweep
    k = df[df["sweep"] == "K"]

    def no_spread(ln):
        nflat = sorted(kk[3] for kk in flat if kk[0] == "K" and kk[1] == ln)
        return ("no spread over seeds at K = " + ", ".join(str(int(x)) for x in nflat)) if nflat else "—"

    T_k = int(k["T"].iloc[0])
    head = (f"*Generated; do not edit by hand.* Mean pseudo-regret on `gap` at T = {T_k}, {S} seeds; slope of log "
            "mean regret on log K over the whole grid, seed indices resampled jointly across K.")
    out[BLOCKS[2]] = _sweep_block(fits[fits["sweep"] == "K"], summ, "K", lambda x: f"K = {int(x)}", head, no_spread)

    # every point against its bound
    b = summ[np.isfinite(summ["theory"]) & (summ["theory"] > 0)].copy()
    b["ratio"] = b["regret_mean"] / b["theory"]
    top = b.sort_values("ratio", ascending=False).iloc[0]
    over = b[b["regret_hi"] > b["theory"]]
    above = b[b["regret_mean"] > b["theory"]]

    def where(r):
        x = {"T": f"T = {int(r['T'])}", "eps": f"ε = {r['eps']:g}", "K": f"K = {int(r['K'])}"}[r["sweep"]]
        return f"{LABELS[r['learner']]} on `{r['instance']}`, {x}"

    none = summ[~summ.index.isin(b.index)]
    pairs = ", ".join(f"{LABELS[lr]} on `{inst}`" for lr, inst in
                      none[["learner", "instance"]].drop_duplicates().itertuples(index=False))
    lines = [f"*Generated; do not edit by hand.* {len(b)} of {len(summ)} points have a bound; "
             f"{len(none)} have none ({pairs or 'none'}).",
             f"Mean above its bound: {len(above)} points" + (" (" + "; ".join(where(r) for _, r in above.iterrows())
                                                             + ")" if len(above) else "") + ".",
             f"Largest mean / bound: {top['ratio']:.2f} ({where(top)}).",
             f"95% interval reaching above its bound: {len(over)} point(s)"
             + (": " + "; ".join(f"{where(r)} (mean {r['ratio']:.2f} of the bound)" for _, r in over.iterrows())
                if len(over) else "") + "."]
    out[BLOCKS[4]] = _verdict_block(fits, summ, _kept_gap(d), {("eps", "dp_exp3_batched"): same})
    out[BLOCKS[3]] = "\n".join(f"* {ln}" if i else ln for i, ln in enumerate(lines))
    return out


def publish(results_dir=None) -> list:
    """Rewrite the generated blocks of ``docs/results/bandits.md`` from a kept run (:func:`page_blocks`).

    Args:
        results_dir: the results directory (default ``results/bandits``).

    Returns:
        The names of the blocks that changed.
    """
    return publish_blocks(DOC_PAGE, page_blocks(results_dir))
