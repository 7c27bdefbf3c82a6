"""``realizable-oco``: DP-OCO in the realizable regime (docs/algorithms/realizable.md#studies; REAL Thms 3–4, App. C).

Spec and claims: ``specs/realizable-oco.toml``; page prose: ``specs/realizable-oco.md``.

* **R7** (REAL Thm 4): ``dp_ftrl`` on ``adv_smooth_realizable`` (squared losses, ``L* = 0``) with the realizable
  tuning of λ, and on its noisy twin (``b_t = <a_t, x*> + sigma_xi xi_t``) with the general one; the theory curves
  are ``dp_ftrl_regret_bound`` with constants 1. ``lam_rule="matched"`` (default) is Thm 4's balance
  ``lambda = 32 beta + (beta T E||b||^2 / D^2)^{1/3}`` at the variance ``d H sigma^2`` of the noise actually added;
  ``"thm4"`` is the printed λ (iterates pinned to the boundary at simulation-sized T).
* **R8** (REAL Thm 3, App. C): ``experts_oco_net`` and ``potential_oco`` over a grid net for ``d in {1, 2}``
  against the T-free bound with the planned constants (:func:`_r8_bound`); the ``d = 2`` / ``d = 1`` ratio next to
  ``2^{1.5}`` and ``2^2``; the quadrature error of ``potential_oco``'s log-partition function (grid vs 4x grid vs
  importance sampling). With ``r8_snap`` ``x*`` is snapped to the net, so the T-free bound is testable.
"""
from __future__ import annotations

import json
import pathlib

import jax
import jax.numpy as jnp
import numpy as np

from ..core import seed_keys, simulate
from ..oco import (
    adv_smooth_realizable, dp_ftrl, dp_ftrl_params, net_regret_bound, smooth_realizable_params, squared_problem,
)
from ..oco.realizable import (
    NET_LEARNERS, net_learner_params, plan_net_learner, realizable_dp_ftrl, realizable_dp_ftrl_bound,
    potential_oco_logphi_errors,
)
from .analysis import grid_union, markdown_table, verdict_table
from .claims import judge_curve, tally
from .framework import Study, fit_slopes, plot_curves, plot_panels, summarize
from .specs import StudySpec

S = StudySpec("realizable-oco", __name__)
DEFAULTS, QUICK, PARAMS, DOC_PAGE, RESULTS, BLOCKS = S.defaults, S.quick, S.params, S.doc_page, S.results, S.blocks
BLOCK, BOUNDS_BLOCK = BLOCKS
CLAIMS = {tuple(k.split()): c for k, c in S.claims.items()}     # keyed by (part, setting)
BETA = 1.0
#: the known log factor of each R7 rate, divided out before the "log-corrected" fit: Thm 4's realizable rate
#: ``T^{1/3} log^{2/3} T`` and the general tuning's ``sqrt(T) H^{3/2}`` with ``H = log2 T`` tree levels
LOG_FACTOR = {"realizable": lambda T: np.log(T) ** (2 / 3), "noisy": lambda T: np.log2(T) ** 1.5}


def _ftrl_params(cfg, env, T, d, eps):
    return realizable_dp_ftrl(env, T=T, d=d, eps=eps, delta=cfg["delta"], mode=cfg["mode"], D=cfg["D"],
                              lam_rule=cfg["lam_rule"], beta=BETA)


def _r7_theory(T, d, eps, cfg, env):
    """:func:`~jaxdp.oco.realizable.realizable_dp_ftrl_bound` at the run's δ, ``D`` and :data:`BETA`."""
    return realizable_dp_ftrl_bound(env, T, d, eps, cfg["delta"], cfg["D"], BETA)


def _net_plan(name, cfg, T, d):
    return plan_net_learner(name, eps=cfg["r8_eps"], T=T, d=d, mode=cfg["r8_mode"], D=cfg["D"], m=cfg["r8_m"])


@S.register
def build(cfg: dict) -> Study:
    """The R7 sweeps of DP-FTRL (``T`` on both instances, ε and ``d`` on the realizable one) and the R8 points of
    the grid-net learners. Tables: ``slopes``, ``summary``, ``r8_d_ratio``, ``r8_bounds``, ``logphi_error``."""
    S.validate(cfg)  # build may be called without run_study
    points = grid_union(S.data["grids"], cfg, dict(part="", learner="dp_ftrl", env="realizable", d=int(cfg["r7_d"]),
                                                   T=int(cfg["r7_T_fixed"]), eps=float(cfg["r7_eps"])), name="part")

    def check_point(p):
        if p["learner"] == "dp_ftrl":
            _ftrl_params(cfg, p["env"], p["T"], p["d"], p["eps"])
        else:
            net_learner_params(p["learner"], _net_plan(p["learner"], cfg, p["T"], p["d"]))

    def run(pts, seeds):
        name, d, G, D = pts[0]["learner"], pts[0]["d"], len(pts), cfg["D"]
        T = np.asarray([p["T"] for p in pts], np.int32)
        # one static horizon per part family, so every R7 (resp. R8) chunk of a given d reuses one compilation
        T_max = (max(max(cfg["r7_T"]), cfg["r7_T_fixed"]) if name == "dp_ftrl" else max(cfg["r8_T"]))
        T_max = int(max(T_max, T.max()))
        prob = squared_problem(d, D)
        sig_xi = [cfg["sigma_xi"] if p["env"] == "noisy" else 0.0 for p in pts]
        # R8: x* snapped to the learner's grid net (realizable on the net; no discretization error)
        h = 2.0 * D / cfg["r8_m"] if (name != "dp_ftrl" and cfg["r8_snap"]) else 0.0
        ap = type(smooth_realizable_params(D, 0.0, h))(
            D=jnp.full(G, D, jnp.float32), grid_h=jnp.full(G, h, jnp.float32), sigma=jnp.asarray(sig_xi, jnp.float32))
        keys = seed_keys(cfg["seed"], seeds)
        keys = jnp.broadcast_to(keys, (G,) + keys.shape)      # common random numbers across the grid
        if name == "dp_ftrl":
            vals = [_ftrl_params(cfg, p["env"], p["T"], d, p["eps"]) for p in pts]
            learner, each = dp_ftrl(prob, T_max), [dp_ftrl_params(*v[:3]) for v in vals]
            extra = {"lam": [v[0] for v in vals], "eps_certified": [v[3] for v in vals]}
        else:
            plans = [_net_plan(name, cfg, p["T"], d) for p in pts]
            learner, each = NET_LEARNERS[name](prob, plans[0].params["m"]), [net_learner_params(name, pl) for pl in plans]
            extra = {"eps_certified": [pl.eps_certified for pl in plans]}
        params = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *each)   # one params row per grid point
        out = simulate(learner, adv_smooth_realizable(d), prob, params, ap, keys, T, T_max=T_max, grid=True)
        n = len(seeds)
        return [{"regret": out["regret"][i], "best_loss": out["best_loss"][i],
                 "switches": out["switches"][i] if "switches" in out else np.full(n, np.nan),
                 **{k: np.full(n, v[i], float) for k, v in extra.items()}} for i in range(G)]

    def analyze(df):
        import pandas as pd

        rows = []   # every point uses the same seed keys (seed_keys(seed, seeds)): the bootstrap resamples jointly
        for env, g in df[df["part"] == "R7-T"].groupby("env"):
            s = fit_slopes(g, "T", "regret", by=["env"], resample="joint")
            lc = fit_slopes(g, "T", "regret", by=["env"], resample="joint", log_correction=LOG_FACTOR[env])
            rows.append(s.assign(slope_log_corrected=lc["slope"].to_numpy(), slope_lc_lo=lc["slope_lo"].to_numpy(),
                                 slope_lc_hi=lc["slope_hi"].to_numpy(), sweep="T",
                                 theory_slope=1 / 3 if env == "realizable" else 0.5).rename(columns={"env": "setting"}))
        for part, x, th in (("R7-eps", "eps", -2 / 3), ("R7-d", "d", 1 / 3)):
            g = df[df["part"] == part]
            if g[x].nunique() >= 2:
                rows.append(fit_slopes(g, x, "regret", upper_half=False, resample="joint").assign(
                    setting="realizable", theory_slope=th, sweep=x))
        for (name, d), g in df[df["part"] == "R8"].groupby(["learner", "d"]):
            rows.append(fit_slopes(g, "T", "regret", upper_half=False, resample="joint").assign(
                setting=f"{name} d={d}", theory_slope=0.0, sweep="T"))
        cols = ["sweep", "setting", "slope", "slope_lo", "slope_hi", "theory_slope", "slope_log_corrected",
                "slope_lc_lo", "slope_lc_hi", "n_x", "x_min", "x_max", "n_seeds", "resample"]
        tables = {"slopes": pd.concat(rows, ignore_index=True)[cols],
                  "summary": summarize(df, ["part", "learner", "env", "d", "eps", "T"],
                                       ["regret", "best_loss", "switches"])}
        r8, T8 = df[df["part"] == "R8"], int(max(cfg["r8_T"]))
        if len(r8) and r8["d"].nunique() == 2:
            m = r8.groupby(["learner", "d", "T"])["regret"].mean().unstack("d")
            d1, d2 = sorted(m.columns)
            tables["r8_d_ratio"] = (m[d2] / m[d1]).rename("ratio").reset_index().assign(
                d_pair=f"{d2}/{d1}", **{"theory_thm3_d^1.5": (d2 / d1) ** 1.5, "theory_appC_pure_d^2": (d2 / d1) ** 2})
        if len(r8):
            last = r8[r8["T"] == r8["T"].max()]
            tables["r8_bounds"] = pd.DataFrame(
                [dict(learner=n, d=int(dd), T=T8, **dict(zip(("bound", "kind"), _r8_bound(n, cfg, T8, int(dd)))),
                      **{"mean_regret@T_max": float(last[(last["learner"] == n) & (last["d"] == dd)]["regret"].mean())})
                 for n in sorted(r8["learner"].unique()) for dd in sorted(r8["d"].unique())])
        tables["logphi_error"] = pd.DataFrame([r for d in cfg["r8_d"] if "potential_oco" in cfg["r8_learners"] for r in
                                               potential_oco_logphi_errors(int(d), eps=cfg["r8_eps"], T=T8,
                                               mode=cfg["r8_mode"], D=cfg["D"], m=cfg["r8_m"], seed=cfg["seed"],
                                               snap=cfg["r8_snap"])])
        return tables

    def plot(df, outdir: pathlib.Path):
        paths, summ = [], summarize(df, ["part", "learner", "env", "d", "eps", "T"], ["regret"])
        d0, e0, Tf, T8, ylabel = int(cfg["r7_d"]), float(cfg["r7_eps"]), int(cfg["r7_T_fixed"]), max(cfg["r8_T"]), \
            "regret (mean, 95% CI)"
        s = summ[summ["part"] == "R7-T"]
        if len(s):
            paths.append(plot_panels(
                s, "env", "T", "regret", outdir / "r7_regret_vs_T.png", width=5.0, ylabel=ylabel,
                theory=lambda env, sub: {("Thm 4: T^{1/3} polylog" if env == "realizable" else
                                          "LD (sqrt(T) + sqrt(T sqrt(d)/eps))"): lambda T: _r7_theory(T, d0, e0, cfg, env)},
                title=lambda env: f"R7 dp_ftrl, {env}, d={d0}, eps={e0}"))
        for x, fn in (("eps", lambda e: _r7_theory(Tf, d0, e, cfg, "realizable")),
                      ("d", lambda dd: _r7_theory(Tf, dd, e0, cfg, "realizable"))):
            se = summ[summ["part"] == f"R7-{x}"]
            if se[x].nunique() >= 2:
                paths.append(pathlib.Path(plot_curves(se, x, "regret", path=outdir / f"r7_regret_vs_{x}.png",
                                                      theory={"Thm 4": fn}, title=f"R7 dp_ftrl realizable, T={Tf}",
                                                      ylabel=ylabel)))
        se = summ[summ["part"] == "R8"]
        if len(se):
            th8: dict = {}
            for name in sorted(se["learner"].unique()):
                for dd in sorted(se["d"].unique()):
                    b, kind = _r8_bound(name, cfg, int(T8), int(dd))
                    th8[f"{name} d={dd}: {kind}"] = lambda T, b=b: np.full_like(np.asarray(T, float), b)
            paths.append(pathlib.Path(plot_curves(
                se.assign(algo=se["learner"] + " d=" + se["d"].astype(str)), "T", "regret", hue="algo", theory=th8,
                path=outdir / "r8_regret_vs_T.png", ylabel=ylabel,
                title=f"R8 realizable DP-OCO over a grid net (eps={float(cfg['r8_eps'])}, {cfg['r8_mode']} mode)")))
        return paths

    return S.study(cfg, check_point=check_point, points=points, run=run, analyze=analyze, plot=plot)


def _r8_bound(name: str, cfg: dict, T: int, d: int):
    """``net_regret_bound`` of the R8 point's plan."""
    return net_regret_bound(name, _net_plan(name, cfg, T, d).params, cfg["D"], d)


def verdicts(summary, cfg: dict):
    """One verdict row per sweep (R7 in T on both instances, in ε and d; R8 in T per learner and d) against
    :data:`CLAIMS`: mean regret / bound at every point of the sweep. ``cfg``: the run's configuration."""
    import pandas as pd

    b = summary.copy()
    b["bound"] = [_r7_theory(r.T, r.d, r.eps, cfg, r.env) if r.learner == "dp_ftrl" else
                  _r8_bound(r.learner, cfg, int(r.T), int(r.d))[0] for r in b.itertuples(index=False)]
    rows = []
    for part, key, x in (("R7-T", "env", "T"), ("R7-eps", "env", "eps"), ("R7-d", "env", "d"), ("R8", "learner", "T")):
        for (setting, *rest), g in b[b["part"] == part].groupby([key] + (["d"] if part == "R8" else [])):
            cell = (f"{setting} d={rest[0]}, T = {g['T'].min()} … {g['T'].max()}" if part == "R8" else
                    f"{setting}, {'ε' if x == 'eps' else x} = {g[x].min():g} … {g[x].max():g}")
            rows.append(judge_curve(CLAIMS[(part, setting)], None, g, experiment=f"{part[:2]}: regret / bound",
                                    cell=cell))
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/realizable-oco``)."""
    import pandas as pd

    d = pathlib.Path(results_dir) if results_dir is not None else RESULTS
    cfg = {**DEFAULTS, **json.loads((d / "manifest.json").read_text())["config"]}
    v = verdicts(pd.read_csv(d / "summary.csv"), cfg)
    tol = max(c.tolerance for c in CLAIMS.values())
    rows = [[r.learner, int(r.d), int(r.T), f"{getattr(r, '_5'):.1f}", f"{r.bound:.1f}", r.kind]
            for r in pd.read_csv(d / "r8_bounds.csv").itertuples(index=False)]
    return {BLOCK: S.render(BLOCK, generated=S.generated("results/realizable-oco/summary.csv"), rows=len(v),
                            tally=tally(v), cap=1 + tol, tol=tol, table=verdict_table(v)),
            BOUNDS_BLOCK: S.render(BOUNDS_BLOCK, table=markdown_table(["learner", "d", "T", "mean regret", "bound",
                                                                      "kind"], rows))}


publish = S.publisher(page_blocks)
