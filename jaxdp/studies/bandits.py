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
# --------------------------------------------------------------------------- verdicts

#: the claimed exponent of a T or K cell: the log-log slope of its bound (the kept ``theory`` column, the bounds of
#: :mod:`jaxdp.bandits.theory`) over the fitted range, the "slope of the bound" of docs/algorithms/bandits.md#study
BOUND_SLOPE = "slope of the bound"
#: each learner's bound as docs/algorithms/bandits.md states it
BOUNDS = {
    "ucb1": "Σ 8 ln T/Δ_i + (1 + π²/3) Σ Δ_i (Auer, Cesa-Bianchi & Fischer 2002, Thm 1)",
    "thompson": "Lai–Robbins rate Σ Δ_i ln T/kl(μ_i, μ*), attained asymptotically (Agrawal & Goyal 2012)",
    "exp3": "2√(e−1)·√(TK ln K) (Auer, Cesa-Bianchi, Freund & Schapire 2002, Cor. 3.2)",
    "exp3_ix": "(3/√2)·√(TK ln K) (Neu 2015)",
    "dp_ucb_tree": "O(Σ ln T/Δ_i + K H ln T/ε) while the radii hold (Tossou & Dimitrakakis 2016)",
    "dp_se": "O(Σ ln T/Δ_a + K ln T/ε) on the good event (Sajed & Sheffet 2019)",
    "dp_exp3": "2√(τTK ln K (2 + B + 2b²)), b = 1/ε, B = b ln T (DP-EXP3-Lap, Tossou & Dimitrakakis 2017)",
    "dp_exp3_batched": "2√(τTK ln K (2 + B + 2b²)), τ = ⌈1/ε⌉, b = 1/(ετ) (Asi, Raman & Talwar 2025)",
    "ldp_ucb": "O(Σ (1 + 1/ε²) ln T/Δ_i) (Ren, Zhou, Lui & Zhang 2020)",
}
#: learners whose bound is for stationary stochastic arms (none applies on the switching instance)
STOCHASTIC = ("ucb1", "thompson", "dp_ucb_tree", "dp_se", "ldp_ucb")
_NOT_STATED = ("", math.nan, "")
#: (sweep, learner[, instance]) -> (claim text, claimed exponent, kind); the exponent :data:`BOUND_SLOPE` is read
#: from the bound of each cell, a pair is the range of a ``between`` claim; ``None``: no bound applies
CLAIMS: dict = {
    **{("T", ln): (BOUNDS[ln], BOUND_SLOPE, "at_most") for ln in BOUNDS},
    **{("K", ln): (BOUNDS[ln], BOUND_SLOPE, "at_most") for ln in BOUNDS},
    **{("T", ln, "switch"): None for ln in STOCHASTIC},
    ("T", "dp_se", "switch"): ("linear: successive elimination drops the late arm in its first epoch, regret ≈ T/6",
                               1.0, "equals"),
    ("eps", "dp_ucb_tree"): ("O(Σ ln T/Δ_i + K H ln T/ε): an ε-free term plus one in 1/ε", (-1.0, 0.0), "between"),
    ("eps", "dp_se"): ("O(Σ ln T/Δ_a + K ln T/ε): an ε-free term plus one in 1/ε (Sajed & Sheffet 2019)",
                       (-1.0, 0.0), "between"),
    ("eps", "dp_exp3"): ("2√(τTK ln K (2 + B + 2b²)), b = 1/ε, B = b ln T: terms in ε⁰, ε^−1/2, ε^−1",
                         (-1.0, 0.0), "between"),
    ("eps", "dp_exp3_batched"): ("τ = ⌈1/ε⌉: ε^−1/2 for ε < 1 (Asi, Raman & Talwar 2025), the per-round bound "
                                 "for ε ≥ 1", (-1.0, 0.0), "between"),
    ("eps", "ldp_ucb"): ("O(Σ (1 + 1/ε²) ln T/Δ_i): an ε-free term plus one in 1/ε²", (-2.0, 0.0), "between"),
}
#: the section of the results page that explains every miss
MISS_LINK = "#misses"
#: the experiment column of the verdict rows, per sweep
EXPERIMENTS = {"T": "regret vs T", "eps": "regret vs ε", "K": "regret vs K"}


def _x_label(sweep: str, v) -> str:
    from .analysis import _pow2

    return {"T": lambda: f"T = {_pow2(v)}", "eps": lambda: f"ε = {float(v):g}", "K": lambda: f"K = {int(v)}"}[sweep]()


def late_arm_cost(K: int, T: int) -> float:
    """The pseudo-regret of a learner that never plays the switching instance's best fixed arm: that arm's total
    mean reward over the ``T`` rounds less the best other arm's (:func:`switch_params`).

    Args:
        K: the number of arms.
        T: the horizon.

    Returns:
        The linear cost (``T/2 − ⌊T/3⌋`` for the late arm's 0-then-1 rewards against Ber(1/2)).
    """

    before, after, s = switch_params(K, T)
    gain = s * before + (T - s) * after
    best = int(np.argmax(gain))
    return float(gain[best] - np.delete(gain, best).max())


def _trivial_cap(pts, gap: float) -> np.ndarray:
    """Which points' bound is a trivial cap: ``T·max Δ`` of a stochastic instance (the index policies' bounds are
    ``min(·, T·max Δ)``) or ``T`` (DP-EXP3's bound is ``min(·, T)``)."""

    out = []
    for p in pts.itertuples(index=False):
        caps = [float(p.T)]
        if p.instance != "switch":
            mu = instance_means(p.instance, int(p.K), gap)
            caps.append(float(p.T) * float((mu.max() - mu).max()))
        out.append(any(np.isclose(p.theory, c, rtol=1e-9, atol=0.0) for c in caps))
    return np.asarray(out, bool)


def _miss_reason(r, pts, kind: str, claimed: float) -> str:
    """Why a claimed cell misses, from its fitted points: a curve rising toward its bound, or a linear curve plus a
    slower remainder."""
    reg = pts["regret_mean"].to_numpy(float)
    th = pts["theory"].to_numpy(float)
    if kind == "at_most" and len(pts) >= 2 and np.isfinite(th).all() and (th > 0).all():
        ratio = reg / th
        if (ratio < 1).all() and ratio[-1] > ratio[0]:
            if r.learner == "thompson":   # its reference is the asymptotic rate, not a finite-T bound
                return (f"below the rate at every fitted point but rising toward it (regret/rate {ratio[0]:.2f} → "
                        f"{ratio[-1]:.2f}): the rate is attained asymptotically, approached from below")
            return (f"below its bound at every fitted point but rising toward it (regret/bound {ratio[0]:.2f} → "
                    f"{ratio[-1]:.2f}): a bound caps the value, not the local slope")
    if kind == "equals" and claimed == 1.0 and r.instance == "switch" and r.slope < 1 and len(pts) >= 2:
        lin = np.array([late_arm_cost(int(k), int(t)) for k, t in zip(pts["K"], pts["T"])])
        rest = reg - lin
        if (rest > 0).all() and (lin > 0).all():
            return (f"the late arm's linear cost T/2 − ⌊T/3⌋ plus a remainder that grows more slowly ({rest[0]:,.0f} → "
                    f"{rest[-1]:,.0f} over the fitted T), so the fitted slope is below 1; regret/cost = "
                    f"{reg[-1] / lin[-1]:.3f} at {_x_label('T', pts['T'].iloc[-1])}")
    return "the measured slope lies outside the claim"


def verdicts(slopes, summary, gap: Optional[float] = None) -> "pd.DataFrame":
    """One verdict per fitted cell of a ``slopes`` table, against the bounds of docs/algorithms/bandits.md (:data:`CLAIMS`).

    In the T and K sweeps the claimed exponent is the slope of the cell's bound over the fitted range, an upper-bound
    exponent (``at_most``: holds unless the whole interval lies above it); a cell is "not tested" where that bound is
    a trivial cap (``T·max Δ`` or ``T``) at a fitted point (its slope is then not the theorem's rate), where no bound
    applies (a stochastic bound on the switching instance), where a fitted mean is not positive (no log-log slope) or
    where the curve has no spread over seeds. DP-SE on the switching instance is claimed linear (slope 1). In the ε
    sweep the bounds are sums of an ε-free term and terms in 1/ε (LDP-UCB: 1/ε²): the slope lies ``between`` their
    exponents.

    Args:
        slopes: one row per fitted curve: ``sweep`` (``"T"``, ``"eps"`` or ``"K"``), ``learner``, ``instance``,
            ``x_min``, ``x_max`` (the fitted range), ``slope``, ``slope_lo``, ``slope_hi``, ``theory_slope`` (the
            bound's slope over the range) and optionally ``n_seeds`` (as in ``slopes.csv``).
        summary: one row per grid point: ``sweep``, ``learner``, ``instance``, ``K``, ``T``, ``eps``, ``n_seeds``,
            ``regret_mean`` and ``theory`` (the bound), as in ``summary.csv``.
        gap: the best arm's lead on the ``gap`` instance (the K sweep's trivial cap ``T·gap``).

    Returns:
        The verdict rows (columns of :func:`jaxdp.studies.analysis.verdict_table`, with ``claimed_hi`` for the
        ``between`` claims).
    """
    import pandas as pd

    from .analysis import slope_verdict

    gap = float(cast(float, DEFAULTS["gap"])) if gap is None else float(gap)

    rows = []
    for r in slopes.itertuples(index=False):
        x = r.sweep
        pts = summary[(summary["sweep"] == x) & (summary["learner"] == r.learner) & (summary["instance"] == r.instance)]
        pts = pts[(pts[x] >= r.x_min) & (pts[x] <= r.x_max)].sort_values(x)
        n = float(getattr(r, "n_seeds", math.nan))
        n_seeds = int(n) if np.isfinite(n) else (int(pts["n_seeds"].min()) if len(pts) else 0)
        row = dict(experiment=EXPERIMENTS[x], cell=f"{LABELS[r.learner]}, {r.instance}", slope=r.slope,
                   slope_lo=r.slope_lo, slope_hi=r.slope_hi, n_seeds=n_seeds, claimed_hi=math.nan, reason="", link="")
        key = (x, r.learner, r.instance)
        claim = CLAIMS[key] if key in CLAIMS else CLAIMS.get(key[:2], _NOT_STATED)
        m = len(pts)
        nonpos = int((pts["regret_mean"] <= 0).sum())
        below = f"pseudo-regret ≤ 0 at {nonpos} of the {m} fitted points (below the best fixed arm)"
        if not np.isfinite(r.slope):   # no point estimate: the bootstrap's interval is not shown either
            row.update(slope_lo=math.nan, slope_hi=math.nan)
        if claim is None:
            rows.append(dict(row, claim="no bound applies", claimed=math.nan, kind="equals", verdict="not tested",
                             reason="the learner's bound is for stationary stochastic arms, not the oblivious "
                                    "switching instance" + (f"; {below}" if nonpos else "")))
            continue
        if claim is _NOT_STATED:
            rows.append(dict(row, claim="no exponent stated", claimed=math.nan, kind="equals", verdict="not tested",
                             reason="our docs state no bound for this learner here"))
            continue
        text, exp, kind = claim
        lo_c, hi_c = (exp if kind == "between" else (r.theory_slope if exp == BOUND_SLOPE else exp, math.nan))
        row = dict(row, claim=text, claimed=float(lo_c), kind=kind, claimed_hi=float(hi_c))
        capped = _trivial_cap(pts, gap) if exp == BOUND_SLOPE else np.zeros(m, bool)
        if not np.isfinite(r.slope):
            rows.append(dict(row, verdict="not tested", reason=f"{below}: no log-log slope"))
        elif nonpos:
            rows.append(dict(row, verdict="not tested",
                             reason=f"{below}: the slope is fitted on the other {m - nonpos} only"))
        elif not (r.slope_hi - r.slope_lo > 1e-9 * max(1.0, abs(r.slope))):
            rows.append(dict(row, verdict="not tested", reason="no spread over seeds: no sampling interval"))
        elif capped.any():
            at = ", ".join(_x_label(x, v) for v in pts[x][capped])
            rows.append(dict(row, verdict="not tested",
                             reason=f"the bound is a trivial cap (T·max Δ or T) at {int(capped.sum())} of the {m} fitted "
                                    f"points ({at}), so its slope is not the theorem's rate there"))
        elif not np.isfinite(lo_c):
            rows.append(dict(row, verdict="not tested", reason="no bound value over the fitted range"))
        else:
            v = slope_verdict(r.slope_lo, r.slope_hi, float(lo_c), kind, float(hi_c))
            if v == "misses":
                row.update(reason=_miss_reason(r, pts, kind, float(lo_c)), link=MISS_LINK)
            rows.append(dict(row, verdict=v))
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


def _verdict_block(fits, summ, gap: float) -> str:
    """The verdict block: its head (the claims, how the intervals were resampled, the counts) and table."""
    from .analysis import verdict_table

    v = verdicts(fits.sort_values(["sweep", "instance", "learner"],
                                  key=lambda c: c.map(_RANK) if c.name == "learner" else
                                  c.map({"T": 0, "eps": 1, "K": 2}) if c.name == "sweep" else c), summ, gap)
    counts = v["verdict"].value_counts()
    tally = ", ".join(f"{int(counts[k])} {k}" for k in ("holds", "holds by construction", "misses", "not tested")
                      if k in counts)
    head = (generated_from("bandits", "results/bandits/results.csv", "summary.csv")
            + f" One row per fitted curve, {len(v)} in all: {tally}. The claims are the bounds of the "
            "[algorithm page](../algorithms/bandits.md) (`jaxdp.bandits.theory`, the kept `theory` column). In the T "
            "and K sweeps the claimed exponent is the log-log slope of the curve's bound over the fitted range, an "
            "upper-bound exponent (`≤`: it holds unless the whole interval lies above it); in the ε sweep each bound is "
            "a sum of an ε-free term and terms in 1/ε (LDP-UCB: 1/ε²), so the slope is claimed to lie between their "
            "exponents. Every grid point uses the same seed keys, so each 95% interval is a percentile bootstrap over "
            f"seed indices resampled jointly across the curve's points ({N_BOOT} replicates), the fits of the sweep "
            "tables below.")
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
    out[BLOCKS[4]] = _verdict_block(fits, summ, _kept_gap(d))
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
