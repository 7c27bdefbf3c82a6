"""``mf-ftrl``: DP-FTRL with each continual-counting mechanism at equal certified (ε, δ) (docs/results/mf-ftrl.md).

Spec, design and claims: ``specs/mf-ftrl.toml``; page prose: ``specs/mf-ftrl.md``. Every point's ``sigma`` comes
from ``plan_dp_ftrl(..., noise=mech)``; the claims are judged on regret / :func:`bounds` at every point of a sweep.
"""
from __future__ import annotations

import functools
import pathlib

import jax.numpy as jnp
import numpy as np

from ..core import seed_keys, simulate
from ..oco import (DPFTRLParams, SmoothRealizableParams, adv_smooth_realizable, dp_ftrl, dp_ftrl_bound_of_lambda,
                   dp_ftrl_params, squared_problem)
from ..oco.dp_ftrl import plan_dp_ftrl_certified
from ..privacy.mechanisms.matrix_factorization import MECHANISMS, get_mechanism
from .analysis import fmt_num, ratio_to_base, verdict_table
from .claims import tally
from .framework import Study, fit_slopes, summarize
from .plots import plot_figures
from .specs import StudySpec, curve_slopes, grid_points, judge_curves, kept_manifest, twin_curves

S = StudySpec("mf-ftrl", __name__)
DOC_PAGE, RESULTS, BLOCKS = S.doc_page, S.results, S.blocks
RATIO_BLOCK, SLOPE_BLOCK, TWIN_BLOCK, VERDICT_BLOCK = BLOCKS
CLAIMS = S.claims     # keyed by "<sweep> <instance>", found by the tuple (sweep, instance)
BETA, N_BOOT, KEYS, P = 1.0, 2000, ["part", "mechanism", "env", "T", "eps"], ["part", "env", "T", "eps"]
SAME_EVIDENCE = S.data["same_evidence"]


def _plan(cfg, p) -> tuple:
    """``(mechanism, T_max, (lam, sigma, clip, eps_certified, V, max_error))`` of one grid point: the mechanism built
    for its sweep's largest horizon ``T_max``, planned by :func:`~jaxdp.oco.dp_ftrl.plan_dp_ftrl_certified`."""
    T_max = int(max(cfg["T"])) if p["part"] == "T" else int(cfg["T_fixed"])
    mech = get_mechanism(p["mechanism"], T_max, bands=int(cfg["bands"]))
    return mech, T_max, plan_dp_ftrl_certified(mech, eps=p["eps"], delta=cfg["delta"], T=p["T"], d=int(cfg["d"]),
                                           D=cfg["D"], beta=BETA, mode=cfg["mode"], realizable=p["env"] == "realizable")


@S.register
def build(cfg: dict) -> Study:
    """Per mechanism, the T sweep on each instance and the ε sweep on the realizable one, all at the same certified
    (ε, δ). Tables: ``slopes``, ``summary`` (with each mechanism's regret relative to the tree), ``ratios``."""
    points = [p for m in cfg["mechanisms"]     # per mechanism, its T sweep, then its ε sweep
              for p in grid_points(S.data["grids"], cfg, dict(part="", mechanism=m, env="", T=0, eps=0.0), "part")]

    def run(pts, seeds):
        (mech, T_max, _), d, D, G = _plan(cfg, pts[0]), int(cfg["d"]), cfg["D"], len(pts)
        T, prob = np.asarray([p["T"] for p in pts], np.int32), squared_problem(d, D)
        f32 = lambda v: jnp.asarray(v, jnp.float32)
        ap = SmoothRealizableParams(D=f32([D] * G), grid_h=f32([0.0] * G),
                                    sigma=f32([cfg["sigma_xi"] if p["env"] == "noisy" else 0.0 for p in pts]))
        keys = seed_keys(cfg["seed"], seeds)
        keys = jnp.broadcast_to(keys, (G,) + keys.shape)          # common random numbers across the grid
        vals = [_plan(cfg, p)[2] for p in pts]
        out = simulate(dp_ftrl(prob, T_max, None, mech), adv_smooth_realizable(d), prob,
                       DPFTRLParams(*(f32([v[k] for v in vals]) for k in range(3))), ap, keys, T, T_max=T_max, grid=True)
        full, carried = (lambda v: np.full(len(seeds), v)), float(mech.carried_bytes(T_max, d))
        return [{"regret": out["regret"][i], "best_loss": out["best_loss"][i], "lam": full(v[0]), "sigma": full(v[1]),
                 "eps_certified": full(v[3]), "max_error": full(v[5]), "carried_bytes": full(carried)}
                for i, v in enumerate(vals)]

    def analyze(df):
        slopes = slope_fits(df)   # every point uses the same seed keys: seed indices resampled jointly
        summ = summarize(df, KEYS, ["regret", "best_loss"],
                         constants=("lam", "sigma", "eps_certified", "max_error", "carried_bytes"))
        tree = summ[summ["mechanism"] == "tree"].set_index(P)["regret_mean"]
        summ["regret_vs_tree"] = summ["regret_mean"].to_numpy() / tree.reindex(summ.set_index(P).index).to_numpy()
        # each mechanism against the tree at equal certified (eps, delta), seeds paired
        return {"slopes": slopes, "summary": summ, "ratios": ratio_to_base(df, P, "mechanism", "tree", "regret")}

    def plot(df, outdir: pathlib.Path):
        """The TOML's ``figures``: mean regret (95% CI) per mechanism, dashed its bound per point (:func:`bounds`)."""
        order, lam = [m for m in cfg["mechanisms"] if m in set(df["mechanism"])], df.groupby(KEYS)["lam"].first()
        return plot_figures(df, outdir, S.data["figures"], cfg, hue_order=order,
                            summary=lambda rows, _, y: bounds(summarize(rows, KEYS, y).join(lam, on=KEYS), cfg["D"]))

    return S.study(cfg, points=points, run=run, analyze=analyze, plot=plot, seeds_per_chunk=16,
                   check_point=lambda p: dp_ftrl_params(*_plan(cfg, p)[2][:3]))   # plan_dp_ftrl_certified refuses an ε


def slope_fits(df):
    """The regret's slopes in ``T`` (upper half of the grid, each instance) and in ε (whole grid), every mechanism,
    seed indices resampled jointly across a curve's points; one row per (sweep, mechanism, instance)."""
    import pandas as pd

    out = [fit_slopes(g, part, "regret", by=["mechanism"], upper_half=part == "T", n_boot=N_BOOT, resample="joint")
           .sort_values("mechanism", key=lambda c: c.map(MECHANISMS.index)).assign(sweep=part, env=env)
           for part, env in (("T", "realizable"), ("T", "noisy"), ("eps", "realizable"))
           if len(g := df[(df["part"] == part) & (df["env"] == env)]) and g[part].nunique() >= 2]
    return pd.concat(out, ignore_index=True)[S.data["slope_columns"]]


def bounds(summary, D: float = 1.0):
    """Each mechanism's theory curve at every point of ``summary`` (with ``Eb2``, ``bound``, ``regret_over_bound``),
    recovered from its realizable twin's planned λ (:func:`~jaxdp.oco.dp_ftrl_bound_of_lambda`)."""
    lam_r = summary[summary["env"] == "realizable"][["part", "mechanism", "T", "eps", "lam"]]
    b = summary.merge(lam_r.rename(columns={"lam": "lam_realizable"}), on=["part", "mechanism", "T", "eps"], how="left")
    b["Eb2"], b["bound"] = dp_ftrl_bound_of_lambda(b["lam_realizable"], b["T"].astype(float), D, BETA,
                                                   b["env"] == "realizable")
    b["regret_over_bound"] = b["regret_mean"] / b["bound"]
    return b


#: ``same_evidence(df) -> {(part, env, a, b)}``, ``a`` before ``b`` in ``MECHANISMS``: the mechanisms whose per-seed
#: regrets correlate at least :data:`SAME_EVIDENCE` at every point of a sweep (:func:`~.specs.twin_curves`)
same_evidence = functools.partial(twin_curves, by=["part", "env"], hue="mechanism", order=MECHANISMS,
                                  x=lambda k: k[0], y="regret", corr=SAME_EVIDENCE)


def verdicts(summary, twins=(), D: float = 1.0):
    """One verdict row per (sweep, mechanism, instance), T sweep first, against :data:`CLAIMS`: mean regret /
    :func:`bounds` at every point of the sweep; twins (:func:`same_evidence`) share one row ``a = b``."""
    b = bounds(summary, D)
    return judge_curves(b[np.isfinite(b["bound"])], ["part", "env"], "mechanism", MECHANISMS, CLAIMS.__getitem__,
                        lambda k: f"regret / bound vs {'T' if k[0] == 'T' else 'ε'}",
                        lambda k, same: f"{' = '.join(same)}, {k[1]}", twins,
                        group_order=lambda k: (k[0] != "T", k[1] != "realizable"))   # T sweep first


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/mf-ftrl``)."""
    import pandas as pd

    d = pathlib.Path(results_dir) if results_dir is not None else RESULTS
    df, summary = pd.read_csv(d / "results.csv"), pd.read_csv(d / "summary.csv")
    D = float(kept_manifest(d).get("config", S.defaults)["D"])
    v, b, fits = verdicts(summary, same_evidence(df), D), bounds(summary, D), slope_fits(df)
    rob = b.groupby(KEYS[:3])["regret_over_bound"].agg(rob_lo="min", rob_hi="max").reset_index()
    sl = curve_slopes(fits.assign(part=fits["sweep"]), b, lambda r: r["part"],
                      {"sigma_slope": "sigma", "bound_slope": "bound"}, KEYS[:3]).merge(rob, on=KEYS[:3])
    t, e = summary[summary["part"] == "T"], summary[summary["part"] == "eps"]
    r = ratio_to_base(df[df["mechanism"].isin(["sqrt_toeplitz", "blt"])], ["part", "env", "T", "eps"], "mechanism",
                      "sqrt_toeplitz", "regret", n_boot=N_BOOT)
    ratios = pd.read_csv(d / "ratios.csv").sort_values(P, kind="stable")   # one row per point, T sweep first
    ratios["n_seeds"] = ratios.groupby(P)["n_seeds"].transform("min")
    return {RATIO_BLOCK: S.render(RATIO_BLOCK, table=S.table("ratios", ratios)),
            SLOPE_BLOCK: S.render(SLOPE_BLOCK, n_boot=N_BOOT, table=S.table("slopes", sl)),
            TWIN_BLOCK: S.render(TWIN_BLOCK, n_boot=N_BOOT, n=len(r), lo=fmt_num(r["ratio"].min()),
                                 hi=fmt_num(r["ratio"].max()), dev=100 * float((r["ratio"] - 1).abs().max()),
                                 above=int((r["ratio_lo"] > 1).sum()), below=int((r["ratio_hi"] < 1).sum())),
            VERDICT_BLOCK: S.render(VERDICT_BLOCK, rows=len(v), tally=tally(v), same=SAME_EVIDENCE, T_lo=t["T"].min(),
                                    T_hi=t["T"].max(), e_lo=e["eps"].min(), e_hi=e["eps"].max(), e_T=e["T"].min(),
                                    cap=1 + max(c.tolerance for c in CLAIMS.values()), table=verdict_table(v))}


publish = S.publisher(page_blocks)
