"""``lazy-figure1ab``: LAZY Figure 1(a),(b) for DP-OCO — L2P-RMW vs DP-FTRL vs non-private FTRL (docs/algorithms/lazy.md#studies).

Linear losses ``g_t`` (``||g_t|| = 1``) on the ball of radius 1/2 (diameter
``D = 1``), ``ε = T^{-α}``, ``δ = 1e-6``, ``d = ceil(log T)`` (panel a) or
``d = ceil(T^{1/3})`` (panel b). Adversaries (``adv_linear_oco``): ``biased``
(a planted coordinate, benign) and ``alternating`` (sign flips every ``B``
rounds, ``B`` the L2P batch size: the worst case for batch-lazy methods).

* ``l2p_rmw``: LAZY Thm 3.12 through ``plan_l2p_rmw`` (``mode`` from the config,
  default ``rate``: printed settings have ``B < 1`` or ``p > 1`` at these T),
  exact sampler (``sample_trunc_gauss_ball``), fresh samples once per batch.
* ``dp_ftrl``: tree-aggregated FTRL (``plan_dp_ftrl``, ``setting="general"``), theory ``1/2 + α/2``.
* ``nonprivate``: FTRL with ``λ = sqrt(T)/R``.

Fitted log-log slopes of regret vs ``T`` per (learner, adversary, panel, α)
are compared with ``figure1_exponents``: L2P (a) ``max(1/2, 1/3 + 2α/3)``,
(b) ``1/2 + 2α/3``; DP-FTRL (a) ``1/2 + α/2``, (b) ``7/12 + α/2``; and, on the
alternating sequence, the extra ``L² T (B-1)/(4λ)`` of Lazy private online learning, Thm 3.12; docs/algorithms/lazy.md#l2p-rmw.
"""
from __future__ import annotations

import math
import pathlib

import numpy as np

from ..core import seed_keys, simulate
from ..registry import register_study
from .framework import Param, Study, declare_params, fit_slopes, plot_panels, summarize

LEARNERS = ("l2p_rmw", "dp_ftrl", "nonprivate")
ADVERSARIES = ("biased", "alternating")
PANELS = ("a", "b")
RADIUS = 0.5
DELTA = 1e-6

DEFAULTS = {
    "seeds": 32,
    "seed": 0,
    "T": [1024, 2048, 4096, 8192, 16384],
    "alpha": [0.1, 0.3, 0.5],
    "panels": list(PANELS),
    "learners": list(LEARNERS),
    "adversaries": list(ADVERSARIES),
    "mode": "rate",
}
QUICK = {"seeds": 4, "T": [256, 1024], "alpha": [0.5]}


def panel_d(panel: str, T: int) -> int:
    return max(2, int(math.ceil(math.log(T)))) if panel == "a" else max(2, int(math.ceil(T ** (1 / 3))))


def theory_slope(learner: str, panel: str, alpha: float) -> float:
    if learner == "l2p_rmw":
        return min(1.0, max(0.5, 1 / 3 + 2 * alpha / 3) if panel == "a" else 0.5 + 2 * alpha / 3)
    if learner == "dp_ftrl":
        return min(1.0, 0.5 + alpha / 2 if panel == "a" else 7 / 12 + alpha / 2)
    return 0.5


def _l2p_plan(T, d, alpha, mode):
    from ..oco.l2p_rmw import plan_l2p_rmw

    return plan_l2p_rmw(eps=float(T) ** -alpha, delta=DELTA, T=T, d=d, mode=mode, L=1.0, D=2 * RADIUS)


def _run_point(pt: dict, seeds: np.ndarray, cfg: dict) -> dict:
    from ..oco import adv_linear_oco, linear_oco_params, linear_problem
    from ..oco.dp_ftrl import dp_ftrl, dp_ftrl_params, plan_dp_ftrl
    from ..oco.l2p_rmw import l2p_rmw_from_plan

    T, d, alpha = int(pt["T"]), int(pt["d"]), float(pt["alpha"])
    plan = _l2p_plan(T, d, alpha, cfg["mode"])
    B = int(plan.params["B"])
    prob = linear_problem(d, RADIUS)
    ap = linear_oco_params(pt["adversary"], L=1.0, bias=0.2, B=B)
    keys = seed_keys(int(cfg["seed"]) + 7919 * T, seeds)
    if pt["learner"] == "l2p_rmw":
        learner, params = l2p_rmw_from_plan(plan, d)
    else:
        learner = dp_ftrl(prob, T)
        if pt["learner"] == "dp_ftrl":
            pf = plan_dp_ftrl(eps=float(T) ** -alpha, delta=DELTA, T=T, d=d, L=1.0, D=RADIUS, setting="general")
            params = dp_ftrl_params(**pf.params)
        else:
            params = dp_ftrl_params(lam=math.sqrt(T) / RADIUS, sigma=0.0)
    out = simulate(learner, adv_linear_oco(d), prob, params, ap, keys, T)
    res = {"regret": out["regret"], "B": np.full(len(seeds), float(B)),
           "lag_prediction": np.full(len(seeds), float(T) * (B - 1) / (4 * plan.params["lam"]))}
    res["switches"] = out.get("switches", np.zeros(len(seeds))).astype(float)
    return res


PARAMS = declare_params("lazy-figure1ab", {
    "seeds": Param("int", lo=1), "seed": Param("int", lo=0), "T": Param("int", many=True, lo=16, hi=2 ** 26),
    "alpha": Param("float", many=True, lo=0.0, hi=1.0, hi_open=True, help="eps = T^-alpha"),
    "panels": Param("str", many=True, choices=PANELS), "learners": Param("str", many=True, choices=LEARNERS),
    "adversaries": Param("str", many=True, choices=ADVERSARIES),
    "mode": Param("str", choices=("paper", "certified", "rate", "retuned")),
})


def _check_point(pt: dict, cfg: dict) -> None:
    T, d, alpha = int(pt["T"]), int(pt["d"]), float(pt["alpha"])
    plan = _l2p_plan(T, d, alpha, cfg["mode"])
    if pt["learner"] == "dp_ftrl":
        from ..oco.dp_ftrl import plan_dp_ftrl

        plan_dp_ftrl(eps=float(T) ** -alpha, delta=DELTA, T=T, d=d, L=1.0, D=RADIUS, setting="general")
    del plan


@register_study("lazy-figure1ab", defaults=DEFAULTS, quick=QUICK,
                description="LAZY Figure 1(a),(b): L2P-RMW vs DP-FTRL vs non-private on linear DP-OCO (Z3)")
def build(cfg: dict) -> Study:
    for name, allowed in (("learners", LEARNERS), ("adversaries", ADVERSARIES), ("panels", PANELS)):
        for v in cfg[name]:
            if v not in allowed:
                raise ValueError(f"{name}: unknown value {v!r}; allowed: {', '.join(allowed)}")
    for T in cfg["T"]:
        if int(T) < 16:
            raise ValueError(f"T must be integers >= 16, got {T!r}")
    for a in cfg["alpha"]:
        if not 0 <= float(a) < 1:
            raise ValueError(f"alpha must be in [0, 1), got {a!r}")
    if cfg["mode"] not in ("paper", "certified", "rate", "retuned"):
        raise ValueError(f"mode must be one of paper, certified, rate, retuned; got {cfg['mode']!r}")
    points = [{"learner": l, "adversary": a, "panel": p, "alpha": float(al), "T": int(T),
               "d": panel_d(p, int(T))}
              for l in cfg["learners"] for a in cfg["adversaries"] for p in cfg["panels"]
              for al in cfg["alpha"] for T in cfg["T"]]

    def run(pts, seeds):
        return [_run_point(pt, np.asarray(seeds), cfg) for pt in pts]

    def analyze(df):
        by = ["learner", "adversary", "panel", "alpha"]
        df = df.assign(regret_pos=np.maximum(df["regret"], 1e-3))
        slopes = fit_slopes(df, "T", "regret_pos", by=by)
        slopes["theory_slope"] = [theory_slope(r.learner, r.panel, r.alpha) for r in slopes.itertuples()]
        summ = summarize(df, by + ["T"], ["regret", "switches", "lag_prediction"])
        return {"slopes": slopes, "summary": summ}

    def plot(df, outdir: pathlib.Path):
        summ = summarize(df.assign(regret=np.maximum(df["regret"], 1e-3)),
                         ["learner", "adversary", "panel", "alpha", "T"], ["regret"])

        def theory(panel, alpha):
            def curves(adversary, s):
                # each learner's theory exponent, anchored at its first measured point
                T0 = float(s["T"].min())
                th = {}
                for l in sorted(s["learner"].unique()):
                    y0 = float(s[(s["learner"] == l) & (s["T"] == T0)]["regret_mean"].mean())
                    b = theory_slope(l, panel, alpha)
                    th[f"{l} theory T^{b:.2f}"] = lambda T, y0=y0, b=b, T0=T0: y0 * (np.asarray(T) / T0) ** b
                return th

            return curves

        paths = []
        for panel in sorted(summ["panel"].unique()):
            for alpha in sorted(summ["alpha"].unique()):
                s = summ[(summ["panel"] == panel) & (summ["alpha"] == alpha)]
                paths.append(plot_panels(
                    s, "adversary", "T", "regret", outdir / f"figure1{panel}_alpha{alpha}.png", hue="learner",
                    theory=theory(panel, alpha), title=lambda a, panel=panel, alpha=alpha:
                    f"panel ({panel}), alpha={alpha}, {a}", ylabel="regret (mean, 95% CI)", width=4.4))
        return paths

    return Study(name="lazy-figure1ab", check_point=lambda p: _check_point(p, cfg), points=points,
                 seeds=int(cfg["seeds"]), run=run,
                 group_by=("learner", "adversary", "panel"), analyze=analyze, plot=plot, config=cfg,
                 description=__doc__.strip().splitlines()[0])
