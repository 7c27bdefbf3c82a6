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

**Non-smooth / non-quadratic losses** (``nonsmooth``, docs/algorithms/lazy.md#rmw-nonsmooth):
L2P-RMW with MALA (``loss="absolute"`` / ``"logistic"``, buffer ``capacity = T``)
on the same ``T`` grid, panel (a) dimension, ``ε = T^{-nonsmooth_alpha}``,
``plan_l2p_rmw(mode="rate", L = a_max = 1, sampler="mala")`` (uncertified:
MALA output is approximate; other modes give ``B = 1`` at these ``T``, i.e. an
``O(T d)`` MALA run every round), ``mala_steps`` from ``mala_schedule``
(``tol = 1e-2``) at the last batch's smoothness bound. Losses
``ABLoss(a_t, b_t)``, ``a_t`` uniform on the unit sphere, ``x*`` planted:

* ``absolute``: ``|<a_t, x> - b_t|``, ``b_t = <a_t, x*> + 0.1 ξ_t``, ``‖x*‖ = 1/4``;
* ``logistic``: ``log(1 + e^{-y_t <a_t, x>})``, ``y_t = sign(<a_t, x*> + 0.1 ξ_t)``, ``‖x*‖ = 1/2``.

Comparator: ``absolute_problem`` / ``logistic_problem`` with an ``n_buffer = T``
buffer (the exact problem, optimization error only). Besides the regret, each
seed reports MALA's mean acceptance probability and fraction of proposals
outside the ball on its own loss stream's measure after all ``T`` losses (the
most concentrated target of the run; ``mala_acceptance``, ``mala_outside``;
``rmw_mala_sampler``).
Tables ``nonsmooth_summary``, ``nonsmooth_slopes`` and plot ``nonsmooth.png``;
the linear tables and plots are unchanged. On by default, off in ``--quick``
(four more compiled programs would double the quick run); at quick size add
``--set nonsmooth=absolute,logistic``.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import pathlib

import numpy as np
from typing import TYPE_CHECKING, Any

from ..core import seed_keys, simulate
from ..registry import register_study
from ._common_study import ROOT as ROOT, check_each, generated_from, page_paths, upper_half
from .analysis import fmt_ci, fmt_num, markdown_table, publish_blocks
from .claims import VERDICTS, Claim, Measurement, Verdict, judge
from .framework import Param, Study, declare_params, fit_slopes, plot_panels, summarize

if TYPE_CHECKING:
    import pandas as pd

LEARNERS = ("l2p_rmw", "dp_ftrl", "nonprivate")
ADVERSARIES = ("biased", "alternating")
PANELS = ("a", "b")
NONSMOOTH = ("absolute", "logistic")
RADIUS = 0.5
DELTA = 1e-6
NOISE = 0.1          # the nonsmooth adversaries' target / label noise
MALA_TOL = 1e-2      # mala_schedule's tolerance for the nonsmooth points' step count

DEFAULTS = {
    "seeds": 256,
    "seed": 0,
    "T": [1024, 2048, 4096, 8192, 16384],
    "alpha": [0.1, 0.3, 0.5],
    "panels": list(PANELS),
    "learners": list(LEARNERS),
    "adversaries": list(ADVERSARIES),
    "mode": "rate",
    "nonsmooth": list(NONSMOOTH),
    "nonsmooth_alpha": 0.5,
}
# the nonsmooth points are compile-bound (two programs per T and loss): off in the quick grid, where they
# would double its time; run them at quick size with --quick --set nonsmooth=absolute,logistic
QUICK = {"seeds": 4, "T": [256, 1024], "alpha": [0.5], "nonsmooth": []}


def panel_d(panel: str, T: int) -> int:
    """The dimension of a panel of LAZY Figure 1 at horizon ``T``.

    Args:
        panel: ``"a"`` (``d = ceil(log T)``) or ``"b"`` (``d = ceil(T^{1/3})``).
        T: the horizon.

    Returns:
        The dimension ``d``, at least 2.
    """
    return max(2, int(math.ceil(math.log(T)))) if panel == "a" else max(2, int(math.ceil(T ** (1 / 3))))


def theory_slope(learner: str, panel: str, alpha: float) -> float:
    """The learner's exponent of LAZY Figure 1 (``jaxdp.experts.figure1_exponents``): regret ``∝ T^slope``.

    Args:
        learner: ``"l2p_rmw"``, ``"dp_ftrl"`` or ``"nonprivate"``.
        panel: ``"a"`` or ``"b"``.
        alpha: the privacy exponent α of ``ε = T^{-α}``.

    Returns:
        The exponent of ``T`` in the learner's regret bound.
    """
    from ..experts import figure1_exponents

    curve = {"l2p_rmw": "L2P", "dp_ftrl": "KMS+21 (DP-FTRL)"}.get(learner, "non-private")
    return float(figure1_exponents(alpha, panel)[curve])


def _l2p_plan(T, d, alpha, mode):
    from ..oco.l2p_rmw import plan_l2p_rmw

    return plan_l2p_rmw(eps=float(T) ** -alpha, delta=DELTA, T=T, d=d, mode=mode, L=1.0, D=2 * RADIUS)


def _nonsmooth_plan(T, d, alpha, loss):
    from ..oco.l2p_rmw import plan_l2p_rmw

    return plan_l2p_rmw(eps=float(T) ** -alpha, delta=DELTA, T=T, d=d, mode="rate", L=1.0, D=2 * RADIUS,
                        sampler="mala", loss=loss)


def _mala_steps(plan, T, d, loss) -> tuple[float, int]:
    """``mala_schedule``'s ``(h, n_steps)`` at the smoothness bound of the last batch's measure
    (``n = T`` rows, ``a_max = 1``; ``jaxdp.oco.rmw`` module docstring)."""
    from ..samplers import mala_schedule

    beta, lam = plan.params["beta"], plan.params["lam"]
    M = beta * (T / 4.0 + 2 * lam) if loss == "logistic" else 2 * beta * lam + (beta * T) ** 2
    h, n = mala_schedule(M, 2 * beta * lam, d, 2 * RADIUS, tol=MALA_TOL)
    return float(h), int(n)


@functools.lru_cache(maxsize=None)
def _adv_nonsmooth(d: int, loss: str):
    """``adv_smooth_noisy`` (``b = <a, x*> + σξ``) for the absolute loss; labels ``sign(b)`` for logistic."""
    import jax.numpy as jnp

    from ..core.types import Adversary
    from ..oco import ABLoss, adv_smooth_noisy

    base = adv_smooth_noisy(d)
    if loss == "absolute":
        return base

    def labels(sp, t):
        l = base.loss(sp, t)
        return ABLoss(a=l.a, b=jnp.where(l.b >= 0, 1.0, -1.0).astype(l.a.dtype))

    return Adversary(init=base.init, loss=labels)


@functools.lru_cache(maxsize=None)
def _acceptance_fn(d: int, loss: str, T: int, steps: int):
    """``(keys, mparams, adv_params) -> (acceptance, outside)`` per seed: one MALA run on the seed's own
    measure after all ``T`` losses (the most concentrated one; the adversary key as in ``jaxdp.core.simulate``)."""
    import jax
    import jax.numpy as jnp

    from ..oco.rmw import RMWBufferStats, rmw_mala_sampler

    sample_info = rmw_mala_sampler(d, loss, mala_steps=steps, capacity=T)
    adv = _adv_nonsmooth(d, loss)

    def one(key, mp, ap):
        _, k_adv, _, k_block = jax.random.split(key, 4)      # the engine's split of a seed key
        a_state = adv.init(k_adv, ap)
        rows = jax.vmap(lambda t: adv.loss(a_state, t))(jnp.arange(T, dtype=jnp.int32))
        st = RMWBufferStats(a=rows.a, b=rows.b, count=jnp.int32(T))   # = T calls of measure.stats_update
        _, info = sample_info(jax.random.fold_in(k_block, 2**31 - 1), st, mp)   # a block index no run reaches
        return info.acceptance_rate, info.outside

    return jax.jit(jax.vmap(one, in_axes=(0, None, None)))


def _run_nonsmooth(pt: dict, seeds: np.ndarray, cfg: dict) -> dict:
    from ..oco import absolute_problem, logistic_problem, smooth_realizable_params
    from ..oco.l2p_rmw import l2p_rmw_from_plan

    T, d, alpha, loss = int(pt["T"]), int(pt["d"]), float(pt["alpha"]), pt["loss"]
    plan = _nonsmooth_plan(T, d, alpha, loss)
    B = int(plan.params["B"])
    h, steps = _mala_steps(plan, T, d, loss)
    make = absolute_problem if loss == "absolute" else logistic_problem
    prob = make(d, RADIUS, n_buffer=T)
    ap = smooth_realizable_params(RADIUS if loss == "absolute" else 2 * RADIUS, sigma=NOISE)
    keys = seed_keys(int(cfg["seed"]) + 7919 * T + (1 if loss == "absolute" else 2), seeds)
    learner, params = l2p_rmw_from_plan(plan, d, capacity=T, mala_steps=steps)
    out = simulate(learner, _adv_nonsmooth(d, loss), prob, params, ap, keys, T)
    acc, outside = _acceptance_fn(d, loss, T, steps)(keys, params.measure, ap)
    n = len(seeds)
    return {"regret": out["regret"], "B": np.full(n, float(B)), "lag_prediction": np.full(n, np.nan),
            "switches": out.get("switches", np.zeros(n)).astype(float),
            "mala_acceptance": np.asarray(acc, float), "mala_outside": np.asarray(outside, float),
            "mala_steps": np.full(n, float(steps)), "mala_step_size": np.full(n, h)}


def _run_point(pt: dict, seeds: np.ndarray, cfg: dict) -> dict:
    if pt.get("loss", "linear") != "linear":
        return _run_nonsmooth(pt, seeds, cfg)
    from ..oco import adv_linear_oco, linear_oco_params, linear_problem
    from ..oco.dp_ftrl import dp_ftrl, dp_ftrl_params, plan_dp_ftrl
    from ..oco.l2p_rmw import l2p_rmw_from_plan

    T, d, alpha = int(pt["T"]), int(pt["d"]), float(pt["alpha"])
    plan = _l2p_plan(T, d, alpha, cfg["mode"])
    B = int(plan.params["B"])
    prob = linear_problem(d, RADIUS)
    ap = linear_oco_params(pt["adversary"], L=1.0, bias=0.2, B=B)
    keys = seed_keys(int(cfg["seed"]) + 7919 * T, seeds)
    params: Any
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
    for k in ("mala_acceptance", "mala_outside", "mala_steps", "mala_step_size"):
        res[k] = np.full(len(seeds), np.nan)   # exact sampler: no MALA
    return res


PARAMS = declare_params("lazy-figure1ab", {
    "seeds": Param("int", lo=1), "seed": Param("int", lo=0), "T": Param("int", many=True, lo=16, hi=2 ** 26),
    "alpha": Param("float", many=True, lo=0.0, hi=1.0, hi_open=True, help="eps = T^-alpha"),
    "panels": Param("str", many=True, choices=PANELS), "learners": Param("str", many=True, choices=LEARNERS),
    "adversaries": Param("str", many=True, choices=ADVERSARIES),
    "mode": Param("str", choices=("paper", "certified", "rate", "retuned")),
    "nonsmooth": Param("str", many=True, choices=NONSMOOTH, allow_empty=True,
                       help="L2P-RMW with MALA on these losses; empty: none"),
    "nonsmooth_alpha": Param("float", lo=0.0, hi=1.0, hi_open=True, help="eps = T^-alpha for the nonsmooth points"),
})


def _check_point(pt: dict, cfg: dict) -> None:
    T, d, alpha = int(pt["T"]), int(pt["d"]), float(pt["alpha"])
    if pt.get("loss", "linear") != "linear":
        _mala_steps(_nonsmooth_plan(T, d, alpha, pt["loss"]), T, d, pt["loss"])
        return
    plan = _l2p_plan(T, d, alpha, cfg["mode"])
    if pt["learner"] == "dp_ftrl":
        from ..oco.dp_ftrl import plan_dp_ftrl

        plan_dp_ftrl(eps=float(T) ** -alpha, delta=DELTA, T=T, d=d, L=1.0, D=RADIUS, setting="general")
    del plan


@register_study("lazy-figure1ab", defaults=DEFAULTS, quick=QUICK,
                description="LAZY Figure 1(a),(b): L2P-RMW vs DP-FTRL vs non-private on linear DP-OCO (Z3)")
def build(cfg: dict) -> Study:
    """The ``lazy-figure1ab`` study: every learner × adversary × panel × α × ``T`` on linear losses,
    plus the L2P-RMW + MALA points of the non-smooth losses (module docstring).

    Args:
        cfg: the resolved configuration: the ``T`` and ``alpha`` grids, ``panels``, ``learners``,
            ``adversaries``, the L2P planner ``mode``, ``nonsmooth`` losses and their
            ``nonsmooth_alpha``, seeds and the root seed.

    Returns:
        The :class:`jaxdp.studies.Study`; its tables are ``slopes`` (with ``theory_slope``) and
        ``summary`` for the linear losses, ``nonsmooth_summary`` and ``nonsmooth_slopes`` for the others.

    Raises:
        ValueError: an unknown learner, adversary, panel or loss, ``T < 16``, α outside ``[0, 1)`` or
            an unknown mode.
    """
    for name, allowed in (("learners", LEARNERS), ("adversaries", ADVERSARIES), ("panels", PANELS)):
        check_each(cfg[name], lambda v: v in allowed, name + ": unknown value {!r}; allowed: " + ", ".join(allowed))
    check_each(cfg["T"], lambda T: int(T) >= 16, "T must be integers >= 16, got {!r}")
    check_each(cfg["alpha"], lambda a: 0 <= float(a) < 1, "alpha must be in [0, 1), got {!r}")
    if cfg["mode"] not in ("paper", "certified", "rate", "retuned"):
        raise ValueError(f"mode must be one of paper, certified, rate, retuned; got {cfg['mode']!r}")
    if not 0 <= float(cfg.get("nonsmooth_alpha", 0.5)) < 1:
        raise ValueError(f"nonsmooth_alpha must be in [0, 1), got {cfg['nonsmooth_alpha']!r}")
    nonsmooth = cfg.get("nonsmooth", [])
    if isinstance(nonsmooth, str):
        nonsmooth = [v.strip() for v in nonsmooth.split(",") if v.strip()]
    check_each(nonsmooth, lambda v: v in NONSMOOTH, "nonsmooth: unknown value {!r}; allowed: " + ", ".join(NONSMOOTH))
    points = [{"learner": l, "adversary": a, "panel": p, "alpha": float(al), "T": int(T),
               "d": panel_d(p, int(T)), "loss": "linear"}
              for l in cfg["learners"] for a in cfg["adversaries"] for p in cfg["panels"]
              for al in cfg["alpha"] for T in cfg["T"]]
    points += [{"learner": "l2p_rmw", "adversary": loss, "panel": "a", "alpha": float(cfg.get("nonsmooth_alpha", 0.5)),
                "T": int(T), "d": panel_d("a", int(T)), "loss": loss}
               for loss in nonsmooth for T in cfg["T"]]

    def run(pts, seeds):
        return [_run_point(pt, np.asarray(seeds), cfg) for pt in pts]

    def split(df):
        lin = df["loss"] == "linear" if "loss" in df else np.ones(len(df), bool)
        return df[lin], df[~lin]

    def analyze(df):
        # the seed keys depend on T (seed + 7919 T), so the horizons of a curve are independent draws and the
        # default bootstrap (each T's seeds resampled on their own) matches the design
        by = ["learner", "adversary", "panel", "alpha"]
        df = df.assign(regret_pos=np.maximum(df["regret"], 1e-3))
        df, ns = split(df)
        tables = {}
        if len(df):
            slopes = fit_slopes(df, "T", "regret_pos", by=by)
            slopes["theory_slope"] = [theory_slope(r.learner, r.panel, r.alpha) for r in slopes.itertuples()]
            tables["slopes"] = slopes
            tables["summary"] = summarize(df, by + ["T"], ["regret", "switches", "lag_prediction"])
        if len(ns):
            nby = ["loss", "alpha"]
            tables["nonsmooth_summary"] = summarize(
                ns, nby + ["T", "d", "B"], ["regret", "switches", "mala_acceptance", "mala_outside", "mala_steps"])
            sl = fit_slopes(ns, "T", "regret_pos", by=nby)
            sl["theory_slope"] = [theory_slope("l2p_rmw", "a", r.alpha) for r in sl.itertuples()]
            tables["nonsmooth_slopes"] = sl
        return tables

    def plot_nonsmooth(ns, outdir):
        summ = summarize(ns.assign(regret=np.maximum(ns["regret"], 1e-3), learner="l2p_rmw (MALA)"),
                         ["learner", "loss", "alpha", "T"], ["regret"])

        def theory(loss, s):
            T0 = float(s["T"].min())
            y0 = float(s[s["T"] == T0]["regret_mean"].mean())
            b = theory_slope("l2p_rmw", "a", float(s["alpha"].iloc[0]))
            return {f"l2p_rmw theory T^{b:.2f}": lambda T: y0 * (np.asarray(T) / T0) ** b}

        return plot_panels(summ, "loss", "T", "regret", outdir / "nonsmooth.png", hue="learner", theory=theory,
                           title=lambda l: f"L2P-RMW + MALA, {l} loss, panel (a) d, "
                                           f"alpha={float(summ['alpha'].iloc[0])}",
                           ylabel="regret (mean, 95% CI)", width=4.4)

    def plot(df, outdir: pathlib.Path):
        df, ns = split(df)
        extra = [plot_nonsmooth(ns, outdir)] if len(ns) else []
        if not len(df):
            return extra
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
        return paths + extra

    return Study(name="lazy-figure1ab", check_point=lambda p: _check_point(p, cfg), points=points,
                 seeds=int(cfg["seeds"]), run=run,
                 group_by=("learner", "adversary", "panel"), analyze=analyze, plot=plot, config=cfg,
                 description=__doc__.strip().splitlines()[0])


DOC_PAGE, RESULTS = page_paths("lazy-figure1ab")
BLOCKS = ("lazy-figure1ab slopes", "lazy-figure1ab nonsmooth", "lazy-figure1ab verdicts")
N_BOOT = 2000
#: a slope interval narrower than this has no spread over seeds: the curve is deterministic
EXACT = 1e-6

#: the tolerance of every exponent (the study's slopes have half-widths 0.001-0.19 at 256 seeds)
TOL = 0.05
#: Figure 1's regret exponents (docs/algorithms/lazy.md#figure-1: logs and constants ignored), orders that bound
#: the regret's growth from above: kind ``at_most_rate``, tested by the slope over two decades of T; each cell's
#: ``value`` is :func:`theory_slope` at its α (:func:`claim`)
CLAIMS = {(learner, panel): Claim(text, "at_most_rate", math.nan, TOL, link="#saturated") for (learner, panel), text in {
    ("l2p_rmw", "a"): "L2P-RMW (Thm 3.12), Figure 1(a): regret ≲ T^max(½, ⅓ + 2α/3)",
    ("l2p_rmw", "b"): "L2P-RMW (Thm 3.12), Figure 1(b): regret ≲ T^(½ + 2α/3)",
    ("dp_ftrl", "a"): "DP-FTRL (Kairouz et al.), Figure 1(a): regret ≲ T^(½ + α/2)",
    ("dp_ftrl", "b"): "DP-FTRL (Kairouz et al.), Figure 1(b): regret ≲ T^(7/12 + α/2)",
    ("nonprivate", "a"): "non-private FTRL, Figure 1(a): regret ≲ T^½",
    ("nonprivate", "b"): "non-private FTRL, Figure 1(b): regret ≲ T^½",
    # the non-smooth (MALA) cells: Thm 3.12 holds for any convex Lipschitz loss (docs/algorithms/lazy.md#rmw-nonsmooth)
    ("l2p_rmw", "nonsmooth"): "L2P-RMW (Thm 3.12, any convex Lipschitz loss), Figure 1(a): regret ≲ T^max(½, ⅓ + 2α/3)",
}.items()}


def claim(learner: str, panel: str, alpha: float) -> Claim:
    """The claim of one cell: :data:`CLAIMS` at :func:`theory_slope` (panel ``"nonsmooth"``: the MALA cells, at
    panel (a)'s exponent).

    Args:
        learner: the learner.
        panel: ``"a"``, ``"b"`` or ``"nonsmooth"``.
        alpha: the privacy exponent α.

    Returns:
        The :class:`jaxdp.studies.claims.Claim`.
    """
    return dataclasses.replace(CLAIMS[(learner, panel)],
                               value=theory_slope(learner, "a" if panel == "nonsmooth" else panel, alpha))


def _versus(lo: float, hi: float, claim: float) -> str:
    if hi - lo < EXACT:
        return "exact (no spread over seeds)"
    if lo <= claim <= hi:
        return "contains it"
    return "above" if lo > claim else "below"


def _fitted(summ, keys: dict, x_min: float, x_max: float) -> tuple:
    """``(zero, fitted, seeds)`` of one curve of a summary table: the fitted horizons whose regret interval contains
    0, the fitted horizons and the fewest seeds at any of them."""
    g = summ
    for k, v in keys.items():
        g = g[g[k] == v]
    f = g[(g["T"] >= x_min) & (g["T"] <= x_max)]
    zero = int(((f["regret_lo"] <= 0) & (f["regret_hi"] >= 0)).sum())
    return zero, len(f), int(f["n_seeds"].min()) if len(f) else 0


def _ftrl_same_runs(lin) -> bool:
    """Whether non-private FTRL's runs on the biased adversary are the same at every α, seed by seed (FTRL
    does not depend on ε and the keys depend only on T)."""
    np_runs = lin[(lin["learner"] == "nonprivate") & (lin["adversary"] == "biased")].pivot_table(
        index=["panel", "T", "seed"], columns="alpha", values="regret")
    return bool(len(np_runs)) and float((np_runs.max(axis=1) - np_runs.min(axis=1)).abs().max()) == 0.0


def _judge(r, c: Claim, keys: dict, summ) -> dict:
    """One verdict row of the slope ``r`` against ``c`` (:func:`jaxdp.studies.claims.judge`), after the one hook the
    rubric lacks: a log-slope of a mean regret whose interval contains 0 at a fitted T is not a rate."""
    zero, n_fit, seeds = _fitted(summ, keys, r.x_min, r.x_max)
    v = (Verdict("not tested", f"regret's interval contains 0 at {zero} of {n_fit} fitted T: its log-slope is not "
                               "a rate") if zero else
         judge(c, Measurement(float(r.slope), float(r.slope_lo), float(r.slope_hi), seeds,
                              decades=math.log10(float(r.x_max) / float(r.x_min)))))
    return dict(claim=c.text, claimed=c.value, kind="at_most", slope=r.slope, slope_lo=r.slope_lo,
                slope_hi=r.slope_hi, n_seeds=seeds, verdict=v.verdict, reason=v.reason,
                link=c.link if v.verdict == "misses" else "")


def verdicts(slopes: "pd.DataFrame", summary: "pd.DataFrame", nonsmooth: "pd.DataFrame | None" = None,
             nonsmooth_summary: "pd.DataFrame | None" = None, ftrl_same_runs: bool = False) -> "pd.DataFrame":
    """One verdict per fitted cell of the linear ``slopes`` and the ``nonsmooth`` slopes against :data:`CLAIMS`, by
    the generic rubric (:func:`jaxdp.studies.claims.judge`; a slope over fewer than two decades of T is not tested).

    With ``ftrl_same_runs``, non-private FTRL's cells on the biased adversary are one run at every α (the same
    evidence): they are one row, the first α's fit.

    Args:
        slopes: the linear losses' slopes (columns ``learner``, ``adversary``, ``panel``, ``alpha``, ``slope``,
            ``slope_lo``, ``slope_hi``, ``x_min``, ``x_max``).
        summary: the linear losses' per-point regret (``learner``, ``adversary``, ``panel``, ``alpha``, ``T``,
            ``n_seeds``, ``regret_lo``, ``regret_hi``).
        nonsmooth: the non-smooth losses' slopes (``loss``, ``alpha``, the slope columns), or ``None``.
        nonsmooth_summary: their per-point regret (``loss``, ``alpha``, ``T``, ``n_seeds``, ``regret_lo``,
            ``regret_hi``), or ``None``.
        ftrl_same_runs: whether non-private FTRL's biased-adversary runs are the same at every α, seed by seed.

    Returns:
        The verdict rows (columns of :func:`jaxdp.studies.analysis.verdict_table`), biased adversary first.
    """
    import pandas as pd

    order = {a: i for i, a in enumerate(ADVERSARIES)}
    lorder = {l: i for i, l in enumerate(LEARNERS)}
    sl = slopes.assign(_a=slopes["adversary"].map(order), _l=slopes["learner"].map(lorder)).sort_values(
        ["_a", "panel", "_l", "alpha"], kind="stable")
    rows = []
    for r in sl.itertuples(index=False):
        cell = f"{r.learner}, α = {r.alpha:g}"
        if ftrl_same_runs and r.learner == "nonprivate" and r.adversary == "biased":
            same = sl[(sl["learner"] == r.learner) & (sl["adversary"] == r.adversary) & (sl["panel"] == r.panel)]
            if r.alpha != same["alpha"].min():
                continue
            cell = f"nonprivate, α = {', '.join(f'{a:g}' for a in same['alpha'])} (one run)"
        keys = dict(learner=r.learner, adversary=r.adversary, panel=r.panel, alpha=r.alpha)
        rows.append(dict(_judge(r, claim(r.learner, r.panel, r.alpha), keys, summary), cell=cell,
                         experiment=f"linear, {r.adversary}, panel ({r.panel})"))
    if nonsmooth is not None and nonsmooth_summary is not None:
        for r in nonsmooth.sort_values(["loss", "alpha"], kind="stable").itertuples(index=False):
            rows.append(dict(_judge(r, claim("l2p_rmw", "nonsmooth", r.alpha), dict(loss=r.loss, alpha=r.alpha),
                                    nonsmooth_summary), experiment=f"{r.loss} loss (MALA), panel (a)",
                             cell=f"l2p_rmw, α = {r.alpha:g}"))
    cols = ["experiment", "cell", "claim", "claimed", "kind", "slope", "slope_lo", "slope_hi", "n_seeds",
            "verdict", "reason", "link"]
    return pd.DataFrame(rows, columns=cols)


def _nonsmooth_fit(ns) -> tuple:
    """``(slopes, summary)`` of the non-smooth points ``ns`` (the non-linear losses' rows, with ``regret_pos``)."""
    nby = ["loss", "alpha"]
    nsl = fit_slopes(ns, "T", "regret_pos", by=nby, n_boot=N_BOOT)
    nsl["theory_slope"] = [theory_slope("l2p_rmw", "a", r.alpha) for r in nsl.itertuples()]
    nsumm = summarize(ns, nby + ["T", "d", "B"], ["regret", "mala_acceptance", "mala_outside", "mala_steps"])
    return nsl, nsumm


def _nonsmooth_block(nsl, nsumm) -> str:
    """The non-smooth block of the page: every L2P-RMW + MALA point (``nsumm``) and the slope of every (loss, α)
    (``nsl``) against its claimed exponent."""
    if nsl is None or nsumm is None or not len(nsumm):
        return "*Generated; do not edit by hand.* No non-smooth points in this run."
    nrows = []
    for r in nsumm.itertuples(index=False):
        nrows.append([r.loss, f"{r.alpha:g}", int(r.T), int(r.d), int(r.B),
                      fmt_ci(r.regret_mean, r.regret_lo, r.regret_hi, 1), fmt_num(r.mala_acceptance_mean, 2),
                      fmt_num(r.mala_outside_mean, 2), int(r.mala_steps_mean)])
    srows = [[r.loss, f"{r.alpha:g}", fmt_ci(r.slope, r.slope_lo, r.slope_hi),
              fmt_num(r.theory_slope), _versus(r.slope_lo, r.slope_hi, r.theory_slope)] for r in nsl.itertuples()]
    nhead = ("*Generated; do not edit by hand.* L2P-RMW with MALA (rate mode, panel (a) dimension). The keys "
             "depend on T and the loss, so every point is an independent draw.")
    return (nhead + "\n\n" + markdown_table(
        ["loss", "α", "T", "d", "B", "regret [95% CI]", "MALA acceptance", "proposals outside the ball",
         "MALA steps"], nrows) + "\n\n" + markdown_table(
        ["loss", "α", "slope [95% CI]", "claimed", "interval vs claimed"], srows))


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of ``docs/results/lazy-figure1ab.md`` from a kept run's ``results.csv``.

    The seed keys of a point depend on its horizon (``seed + 7919 T``), so the horizons of a curve are independent
    draws and each slope's interval resamples every horizon's seeds on its own (the default of ``fit_slopes``);
    the learners, α and panels at one horizon share their keys. The verdicts use the same fits as the tables
    (:data:`N_BOOT` replicates, more than the study's own ``slopes.csv``), so the page shows one interval per cell.

    Args:
        results_dir: the results directory (default ``results/lazy-figure1ab``).

    Returns:
        ``{block name: Markdown}`` for :data:`BLOCKS`: the slope of every linear-loss (learner, adversary, panel, α)
        with its regret at the largest T, the non-smooth (MALA) points, and the verdict of every fitted cell.
    """
    import pandas as pd

    from .analysis import verdict_table

    dd = pathlib.Path(results_dir) if results_dir is not None else RESULTS
    df = pd.read_csv(dd / "results.csv")
    df = df.assign(regret_pos=np.maximum(df["regret"], 1e-3))
    lin = df[df["loss"] == "linear"]
    ns = df[df["loss"] != "linear"]
    by = ["learner", "adversary", "panel", "alpha"]
    S = int(df.groupby(by + ["loss", "T"])["seed"].nunique().min())
    sl = fit_slopes(lin, "T", "regret_pos", by=by, n_boot=N_BOOT)
    sl["theory_slope"] = [theory_slope(r.learner, r.panel, r.alpha) for r in sl.itertuples()]
    summ = summarize(lin, by + ["T"], ["regret"])
    Tmax = int(lin["T"].max())
    # non-private FTRL does not depend on eps and its keys depend only on T: the same runs at every alpha
    np_same = _ftrl_same_runs(lin)
    first_alpha = float(lin["alpha"].min())
    rows = []
    for r in sl.itertuples(index=False):
        g = summ[(summ["learner"] == r.learner) & (summ["adversary"] == r.adversary) & (summ["panel"] == r.panel)
                 & (summ["alpha"] == r.alpha)]
        last = g[g["T"] == Tmax].iloc[0]
        claim = r.theory_slope
        notes = []
        zero, n_fit, _ = _fitted(g, {}, r.x_min, r.x_max)
        if zero:
            notes.append(f"regret's interval contains 0 at {zero} of {n_fit} fitted T: not a rate")
        if r.learner == "nonprivate" and r.adversary == "biased" and np_same and r.alpha != first_alpha:
            notes.append(f"the runs of α = {first_alpha:g}, seed by seed (FTRL does not depend on ε)")
        rows.append([r.learner, r.adversary, r.panel, f"{r.alpha:g}", fmt_ci(r.slope, r.slope_lo, r.slope_hi),
                     fmt_num(claim), _versus(r.slope_lo, r.slope_hi, claim),
                     fmt_ci(last["regret_mean"], last["regret_lo"], last["regret_hi"], 1), "; ".join(notes) or "—"])
    up = upper_half(sorted(lin["T"].unique()))
    head = (generated_from("lazy_figure1ab", "results/lazy-figure1ab/results.csv")
            + f" {len(rows)} linear-loss cells, {S} seeds per point. Slope of log mean regret on log T "
            f"over T = {int(up[0])} … {int(up[-1])} (means floored at 10⁻³ as the study fits), against the exponent "
            "of Figure 1 for the learner. The seed keys depend on T, so the horizons of a curve are independent "
            f"draws and each interval resamples every horizon's seeds on its own ({N_BOOT} replicates). Regret at "
            f"T = {Tmax}.")
    slopes = head + "\n\n" + markdown_table(
        ["learner", "adversary", "panel", "α", "slope [95% CI]", "figure's exponent", "interval vs exponent",
         f"regret at T = {Tmax} [95% CI]", "note"], rows)
    nsl, nsumm = _nonsmooth_fit(ns) if len(ns) else (None, None)
    v = verdicts(sl, summ, nsl, nsumm, ftrl_same_runs=np_same)
    counts = v["verdict"].value_counts()
    decades = math.log10(float(sl["x_max"].max()) / float(sl["x_min"].min()))
    vhead = (generated_from("lazy_figure1ab", "results/lazy-figure1ab/results.csv")
             + f" {len(v)} rows for {len(sl)} linear-loss and {0 if nsl is None else len(nsl)} non-smooth (MALA) "
             "cells, the same fits as the tables below: one row per fitted cell"
             + (", except that non-private FTRL's cells on the biased adversary are one run at every α, seed by seed "
                "(FTRL does not depend on ε): the same evidence, one row per panel (`α = … (one run)`)" if np_same
                else "")
             + ". Every exponent of Figure 1 is an order (logs and constants ignored) that bounds the regret's growth "
             "from above, judged by the rubric of the [results overview](index.md#verdicts) with tolerance "
             f"{TOL:g}: a slope tests it only over two decades of T, and these fits span {decades:.2f} "
             f"(T = {int(sl['x_min'].min())} … {int(sl['x_max'].max())}). The seed keys depend on T (and the loss), so the horizons of a curve are independent "
             f"draws and each 95% interval resamples every horizon's seeds on its own ({N_BOOT} replicates). "
             + "Verdicts: " + ", ".join(f"{int(counts[k])} {k}" for k in VERDICTS if k in counts) + ".")
    return {BLOCKS[0]: slopes,
            BLOCKS[1]: _nonsmooth_block(nsl, nsumm),
            BLOCKS[2]: vhead + "\n\n" + verdict_table(v)}


def publish(results_dir=None) -> list:
    """Rewrite the generated blocks of ``docs/results/lazy-figure1ab.md`` from a kept run (:func:`page_blocks`).

    Args:
        results_dir: the results directory (default ``results/lazy-figure1ab``).

    Returns:
        The names of the blocks that changed.
    """
    return publish_blocks(DOC_PAGE, page_blocks(results_dir))
