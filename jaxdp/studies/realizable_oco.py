"""``realizable-oco``: DP-OCO in the realizable regime (docs/algorithms/realizable.md#studies; REAL Thms 3–4, App. C).

Spec, grids and claims (R7: DP-FTRL, REAL Thm 4; R8: the grid-net learners, REAL Thm 3 and App. C):
``specs/realizable-oco.toml``; page prose: ``specs/realizable-oco.md``. The points, their plans and the instance are
:func:`jaxdp.oco.realizable.realizable_oco_point`; the theory curves are the library's bounds with constants 1.
"""
from __future__ import annotations

import functools
import pathlib

import numpy as np

from ..core import seed_keys
from ..oco.realizable import (
    planned_net_bound, potential_oco_logphi_errors, realizable_dp_ftrl_bound, realizable_oco_point, run_realizable_oco,
)
from .analysis import verdict_table
from .claims import judge_curve, tally, theory_curves
from .framework import Study, fit_slopes, plot_curves, summarize
from .plots import plot_figures
from .specs import StudySpec, grid_points, kept_manifest

S = StudySpec("realizable-oco", __name__)
DEFAULTS, DOC_PAGE, RESULTS, BLOCKS, CLAIMS = S.defaults, S.doc_page, S.results, S.blocks, S.claims   # (part, setting)
BLOCK, BOUNDS_BLOCK = BLOCKS
BETA, YLABEL = 1.0, "regret (mean, 95% CI)"


@S.register
def build(cfg: dict) -> Study:
    """The R7 sweeps of DP-FTRL (``T`` on both instances, ε and ``d`` on the realizable one) and the R8 points of
    the grid-net learners. Tables: ``slopes``, ``summary``, ``r8_d_ratio``, ``r8_bounds``, ``logphi_error``."""
    S.validate(cfg)  # build may be called without run_study
    points = grid_points(S.data["grids"], cfg, dict(part="", learner="dp_ftrl", env="realizable", d=int(cfg["r7_d"]),
                                                    T=int(cfg["r7_T_fixed"]), eps=float(cfg["r7_eps"])), name="part")

    def point(p) -> dict:
        """The keywords of :func:`~jaxdp.oco.realizable.realizable_oco_point` for point ``p`` (R8: the ``r8_*`` plan,
        ``x*`` snapped to the net with ``r8_snap``)."""
        net = p["learner"] != "dp_ftrl"
        return dict(learner=p["learner"], env=p["env"], T=p["T"], d=p["d"], eps=p["eps"], delta=cfg["delta"],
                    D=cfg["D"], mode=cfg["r8_mode" if net else "mode"], lam_rule=cfg["lam_rule"], beta=BETA,
                    sigma_xi=cfg["sigma_xi"], m=cfg["r8_m"], snap=net and cfg["r8_snap"])

    def run(pts, seeds):
        # one static horizon per part family, so every R7 (resp. R8) chunk of a given d reuses one compilation
        T_max = max(max(cfg["r7_T"]), cfg["r7_T_fixed"]) if pts[0]["learner"] == "dp_ftrl" else max(cfg["r8_T"])
        return run_realizable_oco([point(p) for p in pts], seed_keys(cfg["seed"], seeds),
                                  int(max(T_max, max(p["T"] for p in pts))))

    def analyze(df):
        import pandas as pd

        rows = []   # every point uses the same seed keys (seed_keys(seed, seeds)): the bootstrap resamples jointly
        for part, f in S.data["fits"].items():
            for key, g in df[df["part"] == part].groupby(f["by"]):
                if g[f["x"]].nunique() >= 2:
                    fit = functools.partial(fit_slopes, g, f["x"], "regret", upper_half=f["upper_half"],
                                            resample="joint")
                    setting = " d=".join(map(str, key))       # the env (R7), "<learner> d=<d>" (R8)
                    rows.append(fit().assign(sweep=f["x"], setting=setting, theory_slope=f["theory"].get(setting, 0.0)))
                    if part == "R7-T":      # also with the rate's known log factor (the TOML's log_factor) divided out
                        lc = fit(log_correction=theory_curves(S.data["log_factor"], {})[setting])
                        rows[-1] = rows[-1].assign(slope_log_corrected=lc["slope"], slope_lc_lo=lc["slope_lo"],
                                                   slope_lc_hi=lc["slope_hi"])
        tables = {"slopes": pd.concat(rows, ignore_index=True)[S.data["slope_columns"]],
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
            tables["r8_bounds"] = pd.DataFrame([
                dict(learner=n, d=dd, T=T8, bound=b, kind=kind,
                     **{"mean_regret@T_max": float(last[(last["learner"] == n) & (last["d"] == dd)]["regret"].mean())})
                for n, dd, b, kind in _r8_bounds(cfg, r8)])
        tables["logphi_error"] = pd.DataFrame([r for d in cfg["r8_d"] if "potential_oco" in cfg["r8_learners"] for r in
                                               potential_oco_logphi_errors(int(d), eps=cfg["r8_eps"], T=T8,
                                               mode=cfg["r8_mode"], D=cfg["D"], m=cfg["r8_m"], seed=cfg["seed"],
                                               snap=cfg["r8_snap"])])
        return tables

    def plot(df, outdir: pathlib.Path):
        names = dict(cfg, beta=BETA, bound=realizable_dp_ftrl_bound)
        paths = plot_figures(df, outdir, S.data["figures"], names)      # R7: DP-FTRL's bound beside each sweep
        if (df["part"] == "R8").any():
            se = summarize(df[df["part"] == "R8"], ["part", "learner", "env", "d", "eps", "T"], ["regret"])
            th8 = {f"{n} d={dd}: {kind}": (lambda T, b=b: np.full_like(np.asarray(T, float), b))
                   for n, dd, b, kind in _r8_bounds(cfg, se)}
            paths.append(pathlib.Path(plot_curves(
                se.assign(algo=se["learner"] + " d=" + se["d"].astype(str)), "T", "regret", hue="algo", theory=th8,
                path=outdir / "r8_regret_vs_T.png", ylabel=YLABEL,
                title=f"R8 realizable DP-OCO over a grid net (eps={float(cfg['r8_eps'])}, {cfg['r8_mode']} mode)")))
        return paths

    return S.study(cfg, check_point=lambda p: realizable_oco_point(**point(p), T_max=p["T"]), points=points, run=run,
                   analyze=analyze, plot=plot)


def _r8_bound(name: str, cfg: dict, T: int, d: int):
    """:func:`~jaxdp.oco.realizable.planned_net_bound` at the run's ``r8_*`` plan: ``(bound, kind)``."""
    return planned_net_bound(name, eps=cfg["r8_eps"], T=T, d=d, mode=cfg["r8_mode"], D=cfg["D"], m=cfg["r8_m"])


def _r8_bounds(cfg: dict, r8) -> list:
    """``(learner, d, bound, kind)`` of every R8 learner and ``d`` of the rows ``r8`` at the largest ``r8_T``."""
    return [(n, int(dd), *_r8_bound(n, cfg, int(max(cfg["r8_T"])), int(dd)))
            for n in sorted(r8["learner"].unique()) for dd in sorted(r8["d"].unique())]


def verdicts(summary, cfg: dict):
    """One verdict row per sweep (R7 in T on both instances, in ε and d; R8 in T per learner and d) against
    :data:`CLAIMS`: mean regret / bound at every point of the sweep. ``cfg``: the run's configuration."""
    import pandas as pd

    b = summary.copy()
    b["bound"] = [realizable_dp_ftrl_bound(r.env, r.T, r.d, r.eps, cfg["delta"], cfg["D"], BETA)
                  if r.learner == "dp_ftrl" else _r8_bound(r.learner, cfg, int(r.T), int(r.d))[0]
                  for r in b.itertuples(index=False)]
    rows = []
    for part, f in S.data["fits"].items():         # the sweeps: one per curve of the slope fits
        for key, g in b[b["part"] == part].groupby(f["by"]):
            x = f["x"]
            cell = f"{' d='.join(map(str, key))}, {f.get('symbol', x)} = {g[x].min():g} … {g[x].max():g}"
            rows.append(judge_curve(CLAIMS[(part, key[0])], None, g, experiment=f"{part[:2]}: regret / bound",
                                    cell=cell))
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/realizable-oco``)."""
    import pandas as pd

    d = pathlib.Path(results_dir) if results_dir is not None else RESULTS
    cfg = {**DEFAULTS, **kept_manifest(d)["config"]}
    v = verdicts(pd.read_csv(d / "summary.csv"), cfg)
    tol = max(c.tolerance for c in CLAIMS.values())
    return {BLOCK: S.render(BLOCK, generated=S.generated("results/realizable-oco/summary.csv"), rows=len(v),
                            tally=tally(v), cap=1 + tol, tol=tol, table=verdict_table(v)),
            BOUNDS_BLOCK: S.render(BOUNDS_BLOCK, table=S.table("r8_bounds", pd.read_csv(d / "r8_bounds.csv")))}


publish = S.publisher(page_blocks)
