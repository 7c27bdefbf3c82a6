"""``lazy-figure1ab``: LAZY Figure 1(a),(b) for DP-OCO, L2P-RMW vs DP-FTRL vs FTRL (docs/algorithms/lazy.md#studies).

Spec and claims: ``specs/lazy-figure1ab.toml``; page prose: ``specs/lazy-figure1ab.md``. Linear losses on the ball of
radius 1/2, ``ε = T^{-α}``, ``d = ceil(log T)`` (panel a) or ``ceil(T^{1/3})`` (panel b), biased and alternating
adversaries; the log-log slopes of regret in ``T`` against ``figure1_exponents``. With ``nonsmooth``: L2P-RMW with
MALA on the absolute and logistic losses (docs/algorithms/lazy.md#rmw-nonsmooth), with MALA's acceptance and
fraction of proposals outside the ball on each seed's measure after all ``T`` losses.
"""
from __future__ import annotations

import dataclasses
import math
import pathlib
from typing import Any

import numpy as np

from ..core import seed_keys, simulate
from .analysis import upper_half
from .analysis import verdict_table
from .claims import Claim, Measurement, Verdict, judge, tally, verdict_row
from .framework import Study, fit_slopes, plot_panels, summarize
from .specs import StudySpec

S = StudySpec("lazy-figure1ab", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS = S.doc_page, S.results, S.blocks, S.claims
LEARNERS, ADVERSARIES = tuple(S.params["learners"].choices or ()), tuple(S.params["adversaries"].choices or ())
RADIUS, DELTA, NOISE, MALA_TOL = 0.5, 1e-6, 0.1, 1e-2   # ball radius; δ; nonsmooth noise; mala_schedule's tol
N_BOOT, TOL, BY = 2000, 0.05, ["learner", "adversary", "panel", "alpha"]
#: a slope interval narrower than this has no spread over seeds: the curve is deterministic
EXACT = 1e-6


def panel_d(panel: str, T: int) -> int:
    """The dimension of a panel of LAZY Figure 1 at horizon ``T``: ``ceil(log T)`` (a) or ``ceil(T^{1/3})`` (b)."""
    return max(2, int(math.ceil(math.log(T)))) if panel == "a" else max(2, int(math.ceil(T ** (1 / 3))))


def theory_slope(learner: str, panel: str, alpha: float) -> float:
    """The learner's exponent of LAZY Figure 1 (``jaxdp.experts.figure1_exponents``): regret ``∝ T^slope``."""
    from ..experts import figure1_exponents

    curve = {"l2p_rmw": "L2P", "dp_ftrl": "KMS+21 (DP-FTRL)"}.get(learner, "non-private")
    return float(figure1_exponents(alpha, panel)[curve])


def _l2p_plan(T, d, alpha, mode, **kw):
    from ..oco.l2p_rmw import plan_l2p_rmw

    return plan_l2p_rmw(eps=float(T) ** -alpha, delta=DELTA, T=T, d=d, mode=mode, L=1.0, D=2 * RADIUS, **kw)


def _dp_ftrl_plan(T, d, alpha):
    from ..oco.dp_ftrl import plan_dp_ftrl

    return plan_dp_ftrl(eps=float(T) ** -alpha, delta=DELTA, T=T, d=d, L=1.0, D=RADIUS, setting="general")


def _mala_steps(plan, T, d, loss) -> tuple[float, int]:
    from ..oco import rmw_mala_schedule

    return rmw_mala_schedule(plan.params["beta"], plan.params["lam"], T, d, loss, RADIUS, tol=MALA_TOL)


def _run_nonsmooth(pt: dict, seeds: np.ndarray, cfg: dict) -> dict:
    from ..oco import absolute_problem, adv_nonsmooth, logistic_problem, rmw_mala_diagnostics, smooth_realizable_params
    from ..oco.l2p_rmw import l2p_rmw_from_plan

    T, d, alpha, loss = int(pt["T"]), int(pt["d"]), float(pt["alpha"]), pt["loss"]
    plan = _l2p_plan(T, d, alpha, "rate", sampler="mala", loss=loss)
    h, steps = _mala_steps(plan, T, d, loss)
    prob = (absolute_problem if loss == "absolute" else logistic_problem)(d, RADIUS, n_buffer=T)
    ap = smooth_realizable_params(RADIUS if loss == "absolute" else 2 * RADIUS, sigma=NOISE)
    keys = seed_keys(int(cfg["seed"]) + 7919 * T + (1 if loss == "absolute" else 2), seeds)
    learner, params = l2p_rmw_from_plan(plan, d, capacity=T, mala_steps=steps)
    out = simulate(learner, adv_nonsmooth(d, loss), prob, params, ap, keys, T)
    acc, outside = rmw_mala_diagnostics(d, loss, T, steps)(keys, params.measure, ap)
    n = len(seeds)
    return {"regret": out["regret"], "B": np.full(n, float(plan.params["B"])), "lag_prediction": np.full(n, np.nan),
            "switches": out.get("switches", np.zeros(n)).astype(float),
            "mala_acceptance": np.asarray(acc, float), "mala_outside": np.asarray(outside, float),
            "mala_steps": np.full(n, float(steps)), "mala_step_size": np.full(n, h)}


def _run_point(pt: dict, seeds: np.ndarray, cfg: dict) -> dict:
    if pt.get("loss", "linear") != "linear":
        return _run_nonsmooth(pt, seeds, cfg)
    from ..oco import adv_linear_oco, linear_oco_params, linear_problem
    from ..oco.dp_ftrl import dp_ftrl, dp_ftrl_params
    from ..oco.l2p_rmw import l2p_rmw_from_plan

    T, d, alpha = int(pt["T"]), int(pt["d"]), float(pt["alpha"])
    plan = _l2p_plan(T, d, alpha, cfg["mode"])
    B, n, prob = int(plan.params["B"]), len(seeds), linear_problem(d, RADIUS)
    params: Any
    if pt["learner"] == "l2p_rmw":
        learner, params = l2p_rmw_from_plan(plan, d)
    else:
        learner = dp_ftrl(prob, T)
        params = (dp_ftrl_params(**_dp_ftrl_plan(T, d, alpha).params) if pt["learner"] == "dp_ftrl" else
                  dp_ftrl_params(lam=math.sqrt(T) / RADIUS, sigma=0.0))
    out = simulate(learner, adv_linear_oco(d), prob, params, linear_oco_params(pt["adversary"], L=1.0, bias=0.2, B=B),
                   seed_keys(int(cfg["seed"]) + 7919 * T, seeds), T)
    res = {"regret": out["regret"], "B": np.full(n, float(B)),
           "lag_prediction": np.full(n, float(T) * (B - 1) / (4 * plan.params["lam"])),
           "switches": out.get("switches", np.zeros(n)).astype(float)}
    return dict(res, **{k: np.full(n, np.nan) for k in ("mala_acceptance", "mala_outside", "mala_steps",
                                                         "mala_step_size")})   # exact sampler: no MALA


def _check_point(pt: dict, cfg: dict) -> None:
    T, d, alpha = int(pt["T"]), int(pt["d"]), float(pt["alpha"])
    if pt.get("loss", "linear") != "linear":
        _mala_steps(_l2p_plan(T, d, alpha, "rate", sampler="mala", loss=pt["loss"]), T, d, pt["loss"])
        return
    _l2p_plan(T, d, alpha, cfg["mode"])
    if pt["learner"] == "dp_ftrl":
        _dp_ftrl_plan(T, d, alpha)


def _split(df):
    lin = df["loss"] == "linear" if "loss" in df else np.ones(len(df), bool)
    return df[lin], df[~lin]


def _theory_curves(s, learners, panel, alpha) -> dict:
    """Each learner's theory exponent at ``(panel, alpha)``, anchored at its first measured point of ``s``."""
    T0, th = float(s["T"].min()), {}
    for l, name in learners:
        y0 = float(s[(s["learner"] == l) & (s["T"] == T0)]["regret_mean"].mean())
        b = theory_slope(name, panel, alpha)
        th[f"{name} theory T^{b:.2f}"] = lambda T, y0=y0, b=b, T0=T0: y0 * (np.asarray(T) / T0) ** b
    return th


@S.register
def build(cfg: dict) -> Study:
    """Every learner × adversary × panel × α × ``T`` on linear losses, plus the L2P-RMW + MALA points of the
    ``nonsmooth`` losses. Tables: ``slopes`` (with ``theory_slope``) and ``summary`` for the linear losses,
    ``nonsmooth_summary`` and ``nonsmooth_slopes`` for the others."""
    nonsmooth = cfg.get("nonsmooth", [])
    if isinstance(nonsmooth, str):
        nonsmooth = [v.strip() for v in nonsmooth.split(",") if v.strip()]
    points = [dict(p, d=panel_d(p["panel"], p["T"]), loss="linear")
              for p in S.points({**cfg, "T": [int(T) for T in cfg["T"]], "alpha": [float(a) for a in cfg["alpha"]]})]
    points += [{"learner": "l2p_rmw", "adversary": loss, "panel": "a", "alpha": float(cfg.get("nonsmooth_alpha", 0.5)),
                "T": int(T), "d": panel_d("a", int(T)), "loss": loss} for loss in nonsmooth for T in cfg["T"]]

    def run(pts, seeds):
        return [_run_point(pt, np.asarray(seeds), cfg) for pt in pts]

    def analyze(df):
        # the seed keys depend on T (seed + 7919 T), so the horizons of a curve are independent draws and the
        # default bootstrap (each T's seeds resampled on their own) matches the design
        df, ns = _split(df.assign(regret_pos=np.maximum(df["regret"], 1e-3)))
        tables = {}
        if len(df):
            tables["slopes"] = _linear_fit(df)
            tables["summary"] = summarize(df, BY + ["T"], ["regret", "switches", "lag_prediction"])
        if len(ns):
            tables["nonsmooth_summary"] = summarize(ns, ["loss", "alpha", "T", "d", "B"], ["regret", "switches",
                                                    "mala_acceptance", "mala_outside", "mala_steps"])
            tables["nonsmooth_slopes"] = _nonsmooth_fit(ns, None)[0]
        return tables

    def plot(df, outdir: pathlib.Path):
        df, ns = _split(df)
        paths = []
        if len(df):
            summ = summarize(df.assign(regret=np.maximum(df["regret"], 1e-3)), BY + ["T"], ["regret"])
            for panel in sorted(summ["panel"].unique()):
                for alpha in sorted(summ["alpha"].unique()):
                    s = summ[(summ["panel"] == panel) & (summ["alpha"] == alpha)]
                    paths.append(plot_panels(
                        s, "adversary", "T", "regret", outdir / f"figure1{panel}_alpha{alpha}.png", hue="learner",
                        theory=lambda adversary, s, panel=panel, alpha=alpha: _theory_curves(
                            s, [(l, l) for l in sorted(s["learner"].unique())], panel, alpha),
                        title=lambda a, panel=panel, alpha=alpha: f"panel ({panel}), alpha={alpha}, {a}",
                        ylabel="regret (mean, 95% CI)", width=4.4))
        if len(ns):
            summ = summarize(ns.assign(regret=np.maximum(ns["regret"], 1e-3), learner="l2p_rmw (MALA)"),
                             ["learner", "loss", "alpha", "T"], ["regret"])
            alpha = float(summ["alpha"].iloc[0])
            paths.append(plot_panels(
                summ, "loss", "T", "regret", outdir / "nonsmooth.png", hue="learner",
                theory=lambda loss, s: _theory_curves(s, [("l2p_rmw (MALA)", "l2p_rmw")], "a", alpha),
                title=lambda l: f"L2P-RMW + MALA, {l} loss, panel (a) d, alpha={alpha}",
                ylabel="regret (mean, 95% CI)", width=4.4))
        return paths

    return S.study(cfg, check_point=lambda p: _check_point(p, cfg), points=points, run=run, analyze=analyze, plot=plot)


def claim(learner: str, panel: str, alpha: float) -> Claim:
    """The claim of one cell at :func:`theory_slope` (panel ``"nonsmooth"``: the MALA cells, at panel (a)'s)."""
    return dataclasses.replace(CLAIMS[f"{learner}_{panel}"],
                               value=theory_slope(learner, "a" if panel == "nonsmooth" else panel, alpha))


def _versus(lo: float, hi: float, claim: float) -> str:
    if hi - lo < EXACT:
        return "exact (no spread over seeds)"
    if lo <= claim <= hi:
        return "contains it"
    return "above" if lo > claim else "below"


def _fitted(summ, keys: dict, x_min: float, x_max: float) -> tuple:
    """``(zero, fitted, seeds)``: the fitted horizons of a curve whose regret interval contains 0, the fitted
    horizons and the fewest seeds at any of them."""
    g = summ
    for k, v in keys.items():
        g = g[g[k] == v]
    f = g[(g["T"] >= x_min) & (g["T"] <= x_max)]
    zero = int(((f["regret_lo"] <= 0) & (f["regret_hi"] >= 0)).sum())
    return zero, len(f), int(f["n_seeds"].min()) if len(f) else 0


def _ftrl_same_runs(lin) -> bool:
    """Whether non-private FTRL's runs on the biased adversary are the same at every α, seed by seed."""
    np_runs = lin[(lin["learner"] == "nonprivate") & (lin["adversary"] == "biased")].pivot_table(
        index=["panel", "T", "seed"], columns="alpha", values="regret")
    return bool(len(np_runs)) and float((np_runs.max(axis=1) - np_runs.min(axis=1)).abs().max()) == 0.0


def _judge(r, c: Claim, keys: dict, summ, experiment: str, cell: str) -> dict:
    """One verdict row of the slope ``r`` against ``c``, after the one hook the rubric lacks: a log-slope of a mean
    regret whose interval contains 0 at a fitted T is not a rate."""
    zero, n_fit, seeds = _fitted(summ, keys, r.x_min, r.x_max)
    m = Measurement(float(r.slope), float(r.slope_lo), float(r.slope_hi), seeds,
                    decades=math.log10(float(r.x_max) / float(r.x_min)))
    v = (Verdict("not tested", f"regret's interval contains 0 at {zero} of {n_fit} fitted T: its log-slope is not "
                               "a rate") if zero else judge(c, m))
    return verdict_row(c, m, v, experiment=experiment, cell=cell)


def verdicts(slopes, summary, nonsmooth=None, nonsmooth_summary=None, ftrl_same_runs: bool = False):
    """One verdict per fitted cell of the linear ``slopes`` and the ``nonsmooth`` slopes against :data:`CLAIMS`,
    biased adversary first; with ``ftrl_same_runs`` non-private FTRL's biased-adversary cells (one run at every α)
    are one row, the first α's fit."""
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
        rows.append(_judge(r, claim(r.learner, r.panel, r.alpha), keys, summary,
                           f"linear, {r.adversary}, panel ({r.panel})", cell))
    if nonsmooth is not None and nonsmooth_summary is not None:
        for r in nonsmooth.sort_values(["loss", "alpha"], kind="stable").itertuples(index=False):
            rows.append(_judge(r, claim("l2p_rmw", "nonsmooth", r.alpha), dict(loss=r.loss, alpha=r.alpha),
                               nonsmooth_summary, f"{r.loss} loss (MALA), panel (a)", f"l2p_rmw, α = {r.alpha:g}"))
    cols = ["experiment", "cell", "claim", "claimed", "kind", "slope", "slope_lo", "slope_hi", "n_seeds",
            "verdict", "reason", "link"]
    return pd.DataFrame(rows, columns=cols)


def _linear_fit(lin, n_boot=None):
    """The slopes of the linear points ``lin`` (with ``regret_pos``) with ``theory_slope``; ``n_boot=None``: the
    default."""
    sl = fit_slopes(lin, "T", "regret_pos", by=BY, **({} if n_boot is None else {"n_boot": n_boot}))
    sl["theory_slope"] = [theory_slope(r.learner, r.panel, r.alpha) for r in sl.itertuples()]
    return sl


def _nonsmooth_fit(ns, n_boot=N_BOOT) -> tuple:
    """``(slopes, summary)`` of the non-smooth points ``ns`` (with ``regret_pos``); ``n_boot=None``: the default."""
    nby = ["loss", "alpha"]
    nsl = fit_slopes(ns, "T", "regret_pos", by=nby, **({} if n_boot is None else {"n_boot": n_boot}))
    nsl["theory_slope"] = [theory_slope("l2p_rmw", "a", r.alpha) for r in nsl.itertuples()]
    return nsl, summarize(ns, nby + ["T", "d", "B"], ["regret", "mala_acceptance", "mala_outside", "mala_steps"])


def _nonsmooth_block(nsl, nsumm) -> str:
    """The non-smooth block: every L2P-RMW + MALA point and the slope of every (loss, α) against its exponent."""
    if nsl is None or nsumm is None or not len(nsumm):
        return S.render("lazy-figure1ab no nonsmooth")
    return S.render(BLOCKS[1], points=S.table("nonsmooth_points", nsumm),
                    slopes=S.table("nonsmooth_slopes", nsl, versus=_versus))


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/lazy-figure1ab``). The seed keys
    depend on ``T``, so each slope's interval resamples every horizon's seeds on its own; the verdicts use the same
    fits as the tables (:data:`N_BOOT` replicates)."""
    import pandas as pd

    df = pd.read_csv(pathlib.Path(results_dir or RESULTS) / "results.csv")
    df = df.assign(regret_pos=np.maximum(df["regret"], 1e-3))
    lin, ns = _split(df)
    sl, summ = _linear_fit(lin, N_BOOT), summarize(lin, BY + ["T"], ["regret"])
    Tmax, np_same, first_alpha = int(lin["T"].max()), _ftrl_same_runs(lin), float(lin["alpha"].min())
    notes = []
    for r in sl.itertuples(index=False):
        zero, n_fit, _ = _fitted(summ, {k: getattr(r, k) for k in BY}, r.x_min, r.x_max)
        n = [f"regret's interval contains 0 at {zero} of {n_fit} fitted T: not a rate"] if zero else []
        if r.learner == "nonprivate" and r.adversary == "biased" and np_same and r.alpha != first_alpha:
            n.append(f"the runs of α = {first_alpha:g}, seed by seed (FTRL does not depend on ε)")
        notes.append("; ".join(n) or "—")
    rows = sl.merge(summ[summ["T"] == Tmax][BY + ["regret_mean", "regret_lo", "regret_hi"]], on=BY, how="left").assign(
        note=notes)
    up = upper_half(sorted(lin["T"].unique()))
    nsl, nsumm = _nonsmooth_fit(ns) if len(ns) else (None, None)
    v = verdicts(sl, summ, nsl, nsumm, ftrl_same_runs=np_same)
    return {
        BLOCKS[0]: S.render(BLOCKS[0], cells=len(rows), S=int(df.groupby(BY + ["loss", "T"])["seed"].nunique().min()),
                            T_lo=int(up[0]), T_hi=int(up[-1]), n_boot=N_BOOT, T_max=Tmax,
                            table=S.table("slopes", rows, T_max=Tmax, versus=_versus)),
        BLOCKS[1]: _nonsmooth_block(nsl, nsumm),
        BLOCKS[2]: S.render(BLOCKS[2], rows=len(v), linear=len(sl), nonsmooth=0 if nsl is None else len(nsl),
                            same_runs=S.render("lazy-figure1ab same runs") if np_same else "", tol=TOL,
                            decades=math.log10(float(sl["x_max"].max()) / float(sl["x_min"].min())),
                            T_lo=int(sl["x_min"].min()), T_hi=int(sl["x_max"].max()), n_boot=N_BOOT, tally=tally(v),
                            table=verdict_table(v)),
    }


publish = S.publisher(page_blocks)
