"""``mf-ftrl``: DP-FTRL with each continual-counting mechanism at equal certified (ε, δ) (docs/results/mf-ftrl.md).

DP-FTRL (``jaxdp.oco.dp_ftrl``) on the realizable-oco instances (``adv_smooth_realizable``: squared
losses on the sphere, ``L* = 0``, and its noisy twin ``b_t = <a_t, x*> + sigma_xi xi_t``), with the
prefix sums of the clipped gradients released by the binary tree, Honaker's tree, the square-root
Toeplitz factorization, a banded Toeplitz factorization (``bands`` bands, optimised for the mean
error) and a BLT (optimised for the max error) (docs/algorithms/matrix-factorization.md). Every
mechanism's ``sigma`` comes from ``plan_dp_ftrl(..., noise=mech)``: the same noise multiplier over
the factorization's own sensitivity, so every run certifies the same (ε, δ) (checked per point:
``eps_certified``).

* **T sweep** (``T``, both instances) and **ε sweep** (``eps_sweep`` at ``T_fixed``, realizable).
* λ: realizable, Thm 4's balance at the noise actually added,
  ``lambda = 32 beta + (beta T E||b||^2 / D^2)^{1/3}`` with ``E||b||^2 = d sigma^2 max_t ||B_t||^2``
  (``dp_ftrl_lambda_matched`` with the mechanism's largest prefix-noise variance per unit draw in place
  of the tree's ``H``); noisy twin, the planner's general-setting λ (same variance).
* Theory curves (constants 1), one per mechanism, from its own prefix error: realizable
  ``beta D^2 + (D^2 sqrt(beta T E||b||^2))^{2/3}`` (REAL Thm 4's form with the mechanism's variance),
  general ``2 D sqrt(T L (L + sqrt(d V) sigma))`` (the FTRL bound at the planner's λ). Both scale with
  the mechanism's max error, ``sigma^2 V = (noise multiplier x 2L x max error)^2``.

BLT and banded coefficients are optimised for the largest horizon of each sweep (stored coefficients
where ``jaxdp.privacy.mechanisms.matrix_factorization`` has them, otherwise optimised once per process) and
used for every shorter horizon of that sweep. The square root carries all past draws:
``O(T_max d)`` state and work per round, so it dominates the cost of the study.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import math
import pathlib

import jax.numpy as jnp
import numpy as np

from ..core import seed_keys, simulate
from ..privacy.mechanisms.matrix_factorization import MECHANISMS, get_mechanism
from ..oco import (
    adv_smooth_realizable, dp_ftrl, dp_ftrl_lambda_matched, dp_ftrl_params, plan_dp_ftrl, smooth_realizable_params,
    squared_problem,
)
from ..registry import register_study
from ._common_study import ROOT as ROOT, generated_from, page_paths
from .analysis import fmt_ci, fmt_num, markdown_table, publish_blocks, ratio_to_base, verdict_table
from .claims import VERDICTS, Claim, Measurement, judge
from .framework import Param, Study, declare_params, fit_slopes, plot_curves, summarize

if TYPE_CHECKING:
    import pandas as pd

DEFAULTS = {
    "seeds": 256,
    "seed": 0,
    # the problem: dimension, domain radius, noise of the noisy environment
    "d": 4,
    "D": 1.0,
    "sigma_xi": 0.3,
    "envs": ["realizable", "noisy"],
    # the mechanisms and their privacy
    "mechanisms": list(MECHANISMS),
    "bands": 16,
    "delta": 1e-6,
    "mode": "paper",
    "T": [512, 1024, 2048, 4096, 8192],
    "eps": 4.0,
    "eps_sweep": [1.0, 2.0, 4.0, 8.0, 16.0],
    "T_fixed": 2048,
}
QUICK = {"seeds": 16, "T": [128, 256, 512, 1024], "eps_sweep": [2.0, 4.0, 8.0], "T_fixed": 512}

BETA = 1.0
_POS: dict[str, Any] = dict(lo=0.0, lo_open=True)
PARAMS = declare_params("mf-ftrl", {
    "seeds": Param("int", lo=1), "seed": Param("int", lo=0), "D": Param("float", **_POS),
    "delta": Param("float", lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "mode": Param("str", choices=("paper", "certified", "rate")), "d": Param("int", lo=1, hi=2 ** 12),
    "sigma_xi": Param("float", lo=0.0), "mechanisms": Param("str", many=True, choices=MECHANISMS),
    "bands": Param("int", lo=1, hi=256), "envs": Param("str", many=True, choices=("realizable", "noisy")),
    "T": Param("int", many=True, lo=2, hi=2 ** 20), "eps": Param("float", **_POS),
    "eps_sweep": Param("float", many=True, **_POS), "T_fixed": Param("int", lo=2, hi=2 ** 20),
})


def _lipschitz(D):
    return 2.0 * D          # squared loss, ||a|| = 1, |b| <= D/2 on the ball of radius D (as in realizable-oco)


def _horizon(cfg, part):
    return int(max(cfg["T"])) if part == "T" else int(cfg["T_fixed"])


def _mechanism(cfg, name, part):
    return get_mechanism(name, _horizon(cfg, part), bands=int(cfg["bands"]))


def _point_params(cfg, name, part, env, T, eps):
    """``(lam, sigma, clip, eps_certified, V, max_error)`` of one grid point."""
    mech = _mechanism(cfg, name, part)
    D, d = cfg["D"], int(cfg["d"])
    L = _lipschitz(D)
    setting = "realizable" if env == "realizable" else "general"
    plan = plan_dp_ftrl(eps=eps, delta=cfg["delta"], T=T, d=d, mode=cfg["mode"], L=L, D=D, beta=BETA,
                        setting=setting, noise=mech)
    sigma = plan.params["sigma"]
    V = mech.max_row_norm_sq(T)
    lam = dp_ftrl_lambda_matched(T, d, V, sigma, D, BETA) if env == "realizable" else plan.params["lam"]
    return lam, sigma, plan.params["clip"], plan.eps_certified, V, mech.max_error(T)


def theory_curve(cfg, name, part, env, eps):
    """The regret bound of the module docstring for one mechanism as a function of ``T`` (constants 1).

    Args:
        cfg: the resolved configuration (``D``, ``d``, ``delta``, ``mode``, ``bands`` and the horizons).
        name: the mechanism (a name of ``jaxdp.privacy.mechanisms.matrix_factorization.MECHANISMS``).
        part: ``"T"`` or ``"eps"``, the sweep whose largest horizon the mechanism is built for.
        env: ``"realizable"`` (REAL Thm 4's form) or ``"noisy"`` (the general FTRL bound).
        eps: the privacy level ε the noise is planned for.

    Returns:
        ``f(T) -> (len(T),) array``: the bound at each horizon, with the mechanism's planned noise
        and its own prefix-noise variance at that horizon.
    """
    D, d = cfg["D"], int(cfg["d"])
    L = _lipschitz(D)

    def f(T):
        out = []
        for t in np.atleast_1d(np.asarray(T, float)):
            t = max(2, int(round(t)))
            _, sigma, _, _, V, _ = _point_params(cfg, name, part, env, t, eps)
            if env == "realizable":
                out.append(BETA * D ** 2 + (D ** 2 * math.sqrt(BETA * t * d * sigma ** 2 * V)) ** (2 / 3))
            else:
                out.append(2 * D * math.sqrt(t * L * (L + math.sqrt(d * V) * sigma)))
        return np.asarray(out)

    return f


@register_study("mf-ftrl", defaults=DEFAULTS, quick=QUICK,
                description="DP-FTRL with tree / Honaker / square-root / banded / BLT noise at equal certified eps")
def build(cfg: dict) -> Study:
    """The ``mf-ftrl`` study: per mechanism, the T sweep on each instance and the ε sweep on the
    realizable one, every point planned at the same certified (ε, δ).

    Args:
        cfg: the resolved configuration: ``D``, ``delta``, ``mode``, ``d``, ``sigma_xi``,
            ``mechanisms``, ``bands``, ``envs``, the ``T`` and ``eps_sweep`` grids, ``eps``, ``T_fixed``,
            seeds and the root seed.

    Returns:
        The :class:`jaxdp.studies.Study`; its tables are ``slopes``, ``summary`` (with each
        mechanism's regret relative to the tree) and ``ratios`` (seed-paired ratios to the tree).

    Raises:
        ValueError: an empty list of mechanisms, instances, horizons or ε.
    """
    for k in ("mechanisms", "envs", "T", "eps_sweep"):
        if not cfg[k]:
            raise ValueError(f"{k} must be a non-empty list, got {cfg[k]!r}")
    points = []
    for name in cfg["mechanisms"]:
        for env in cfg["envs"]:
            for T in cfg["T"]:
                points.append({"part": "T", "mechanism": name, "env": env, "T": int(T), "eps": float(cfg["eps"])})
        for eps in cfg["eps_sweep"]:
            points.append({"part": "eps", "mechanism": name, "env": "realizable", "T": int(cfg["T_fixed"]),
                           "eps": float(eps)})

    def check_point(p):
        lam, sigma, clip, eps_c, _, _ = _point_params(cfg, p["mechanism"], p["part"], p["env"], p["T"], p["eps"])
        dp_ftrl_params(lam, sigma, clip)
        if not eps_c <= p["eps"] * (1 + 1e-9):
            raise ValueError(f"point {p} is not certified at eps={p['eps']} (certified {eps_c})")

    def run(pts, seeds):
        name, part = pts[0]["mechanism"], pts[0]["part"]
        d, D = int(cfg["d"]), cfg["D"]
        G = len(pts)
        T = np.asarray([p["T"] for p in pts], np.int32)
        T_max = _horizon(cfg, part)
        mech = _mechanism(cfg, name, part)
        prob = squared_problem(d, D)
        adv = adv_smooth_realizable(d)
        sig_xi = [cfg["sigma_xi"] if p["env"] == "noisy" else 0.0 for p in pts]
        ap = smooth_realizable_params(D, 0.0, 0.0)
        ap = type(ap)(D=jnp.full(G, D, jnp.float32), sigma=jnp.asarray(sig_xi, jnp.float32),
                      grid_h=jnp.zeros(G, jnp.float32))
        keys = seed_keys(cfg["seed"], seeds)
        keys = jnp.broadcast_to(keys, (G,) + keys.shape)          # common random numbers across the grid
        vals = [_point_params(cfg, name, part, p["env"], p["T"], p["eps"]) for p in pts]
        params = dp_ftrl_params(1.0, 0.0, 1.0)
        params = type(params)(lam=jnp.asarray([v[0] for v in vals], jnp.float32),
                              sigma=jnp.asarray([v[1] for v in vals], jnp.float32),
                              clip=jnp.asarray([v[2] for v in vals], jnp.float32))
        out = simulate(dp_ftrl(prob, T_max, None, mech), adv, prob, params, ap, keys, T, T_max=T_max, grid=True)
        n = len(seeds)
        carried = mech.carried_bytes(T_max, d)
        return [{"regret": out["regret"][i], "best_loss": out["best_loss"][i],
                 "lam": np.full(n, vals[i][0]), "sigma": np.full(n, vals[i][1]),
                 "eps_certified": np.full(n, vals[i][3]), "max_error": np.full(n, vals[i][5]),
                 "carried_bytes": np.full(n, float(carried))} for i in range(G)]

    def analyze(df):
        import pandas as pd

        tables = {}
        rows = []
        # every point uses the same seed keys (common random numbers): resample seed indices jointly
        for (name, env), g in df[df["part"] == "T"].groupby(["mechanism", "env"]):
            s = fit_slopes(g, "T", "regret", resample="joint")
            s["mechanism"], s["env"], s["sweep"] = name, env, "T"
            rows.append(s)
        for name, g in df[df["part"] == "eps"].groupby("mechanism"):
            if g["eps"].nunique() >= 2:
                s = fit_slopes(g, "eps", "regret", upper_half=False, resample="joint")
                s["mechanism"], s["env"], s["sweep"] = name, "realizable", "eps"
                rows.append(s)
        cols = ["sweep", "mechanism", "env", "slope", "slope_lo", "slope_hi", "n_x", "x_min", "x_max"]
        tables["slopes"] = pd.concat(rows, ignore_index=True)[cols]
        summ = summarize(df, ["part", "mechanism", "env", "T", "eps"], ["regret", "best_loss"])
        extra = df.groupby(["part", "mechanism", "env", "T", "eps"])[
            ["lam", "sigma", "eps_certified", "max_error", "carried_bytes"]].first().reset_index()
        summ = summ.merge(extra, on=["part", "mechanism", "env", "T", "eps"])
        base = summ[summ["mechanism"] == "tree"][["part", "env", "T", "eps", "regret_mean"]].rename(
            columns={"regret_mean": "tree_regret"})
        summ = summ.merge(base, on=["part", "env", "T", "eps"], how="left")
        summ["regret_vs_tree"] = summ["regret_mean"] / summ["tree_regret"]
        tables["summary"] = summ.drop(columns=["tree_regret"])
        # each mechanism against the tree at equal certified (eps, delta), seeds paired
        tables["ratios"] = ratio_to_base(df, ["part", "env", "T", "eps"], "mechanism", "tree", "regret")
        return tables

    def plot(df, outdir: pathlib.Path):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        paths = []
        summ = summarize(df, ["part", "mechanism", "env", "T", "eps"], ["regret"])
        order = [m for m in cfg["mechanisms"] if m in set(summ["mechanism"])]
        s = summ[summ["part"] == "T"]
        envs = [e for e in cfg["envs"] if e in set(s["env"])]
        if len(s):
            fig, axes = plt.subplots(1, len(envs), figsize=(6.4 * len(envs), 4.6), dpi=110, squeeze=False)
            for ax, env in zip(axes[0], envs):
                th = {m: theory_curve(cfg, m, "T", env, float(cfg["eps"])) for m in order}
                plot_curves(s[s["env"] == env], "T", "regret", path=outdir / "unused.png", ax=ax, hue="mechanism",
                            hue_order=order, theory=th, ylabel="regret (mean, 95% CI)",
                            title=f"DP-FTRL, {env}, d={cfg['d']}, eps={cfg['eps']}")
            fig.tight_layout()
            p = outdir / "regret_vs_T.png"
            fig.savefig(p)
            plt.close(fig)
            paths.append(p)
        s = summ[summ["part"] == "eps"]
        if s["eps"].nunique() >= 2:
            Tf = int(cfg["T_fixed"])
            th = {m: (lambda e, m=m: np.asarray([theory_curve(cfg, m, "eps", "realizable", float(x))(Tf)[0]
                                                             for x in np.atleast_1d(e)])) for m in order}
            p = plot_curves(s, "eps", "regret", hue="mechanism", hue_order=order, path=outdir / "regret_vs_eps.png",
                            theory=th, title=f"DP-FTRL realizable, T={Tf}, d={cfg['d']}",
                            ylabel="regret (mean, 95% CI)")
            paths.append(pathlib.Path(p))
        return paths

    return Study(name="mf-ftrl", check_point=check_point, points=points, seeds=int(cfg["seeds"]), run=run,
                 group_by=("mechanism", "part"), analyze=analyze, plot=plot, config=cfg, seeds_per_chunk=16,
                 description=__doc__.strip().splitlines()[0])


DOC_PAGE, RESULTS = page_paths("mf-ftrl")
RATIO_BLOCK = "mf-ftrl-ratios"
SLOPE_BLOCK = "mf-ftrl slopes"
TWIN_BLOCK = "mf-ftrl blt vs square root"
VERDICT_BLOCK = "mf-ftrl verdicts"
BLOCKS = (RATIO_BLOCK, SLOPE_BLOCK, TWIN_BLOCK, VERDICT_BLOCK)
N_BOOT = 2000
_COLUMNS = (("honaker", "Honaker"), ("sqrt_toeplitz", "square root"), ("banded", "banded(16)"), ("blt", "BLT(4)"))


def ratio_table(ratios) -> str:
    """The docs table of regret relative to the tree (seed-paired 95% bootstrap intervals) from ``ratios.csv``.

    Args:
        ratios: the study's ``ratios`` table (:func:`jaxdp.studies.analysis.ratio_to_base`).

    Returns:
        The Markdown table: one row per (sweep, instance, ``T``, ε) — every point of the T sweep and of the ε
        sweep — one column per mechanism.
    """
    head = "| sweep | instance | T | ε | seeds | " + " | ".join(n for _, n in _COLUMNS) + " |"
    lines = [head, "|" + "---|" * (5 + len(_COLUMNS))]
    for part in ("T", "eps"):
        t = ratios[ratios["part"] == part]
        for (env, T, eps), g in t.groupby(["env", "T", "eps"], sort=True):
            by = g.set_index("mechanism")
            cells = [f"{by.at[m, 'ratio']:.2f} [{by.at[m, 'ratio_lo']:.2f}, {by.at[m, 'ratio_hi']:.2f}]"
                     if m in by.index else "-" for m, _ in _COLUMNS]
            lines.append(f"| {'T' if part == 'T' else 'ε'} | {env} | {int(T)} | {eps:g} | {int(g['n_seeds'].min())} | "
                         + " | ".join(cells) + " |")
    return "\n".join(lines)


def slope_fits(df) -> "pd.DataFrame":
    """The regret's slopes in ``T`` (each instance) and in ε, every mechanism, as the page shows them.

    Every point of the study uses the same seed keys, so each interval is a percentile bootstrap over seed
    indices resampled jointly across the points of the curve (``fit_slopes(..., resample="joint")``,
    :data:`N_BOOT` replicates); the T slopes are fitted over the upper half of the ``T`` grid, the ε slopes
    over the whole ε grid, as the study's ``slopes`` table.

    Args:
        df: the per-seed results.

    Returns:
        One row per (sweep, mechanism, instance), in the page's order: ``sweep`` (``"T"`` or ``"eps"``),
        ``mechanism``, ``env``, ``slope``, ``slope_lo``, ``slope_hi``, ``n_x``, ``x_min``, ``x_max``,
        ``n_seeds``.
    """
    import pandas as pd

    out = []
    order = {m: i for i, m in enumerate(MECHANISMS)}
    for part, x, envs in (("T", "T", ("realizable", "noisy")), ("eps", "eps", ("realizable",))):
        sub = df[df["part"] == part]
        for env in envs:
            g = sub[sub["env"] == env]
            if not len(g) or g[x].nunique() < 2:
                continue
            f = fit_slopes(g, x, "regret", by=["mechanism"], upper_half=part == "T", n_boot=N_BOOT,
                           resample="joint")
            f = f.sort_values("mechanism", key=lambda c: c.map(order))
            f.insert(0, "sweep", part)
            f.insert(2, "env", env)
            out.append(f)
    cols = ["sweep", "mechanism", "env", "slope", "slope_lo", "slope_hi", "n_x", "x_min", "x_max", "n_seeds"]
    return pd.concat(out, ignore_index=True)[cols]


def slope_table(df, fits=None, summary=None, D: float = 1.0) -> str:
    """The docs table of the regret's slopes in ``T`` (each instance) and in ε, every mechanism, beside its bound's.

    Every point of the study uses the same seed keys, so each interval is a percentile bootstrap over seed
    indices resampled jointly across the points of the curve (``fit_slopes(..., resample="joint")``); the T
    slopes are fitted over the upper half of the ``T`` grid, the ε slopes over the whole ε grid, as the study's
    ``slopes`` table.

    Args:
        df: the per-seed results.
        fits: :func:`slope_fits` of ``df`` when already computed (default: computed here).
        summary: the study's ``summary`` table; with it, each row also gives the least-squares slopes of the planned
            σ and of the bound (:func:`bounds`) over the fitted points, and regret / bound over the whole sweep.
        D: the domain radius the run used.

    Returns:
        The generated block's Markdown: a header line and one row per (sweep, mechanism, instance).
    """
    fits = slope_fits(df) if fits is None else fits
    b = bounds(summary, D) if summary is not None else None
    rows = []
    for r in fits.itertuples(index=False):
        row = ["T" if r.sweep == "T" else "ε", r.mechanism, r.env, fmt_ci(r.slope, r.slope_lo, r.slope_hi),
               f"{r.x_min:g} … {r.x_max:g}", int(r.n_seeds)]
        if b is not None:
            g, x = _points_of(b, r.sweep, r.mechanism, r.env, r.x_min, r.x_max)
            rob = _points_of(b, r.sweep, r.mechanism, r.env, -np.inf, np.inf)[0]["regret_over_bound"]
            row += [fmt_num(_loglog_slope(g[x], g["sigma"])), fmt_num(_loglog_slope(g[x], g["bound"])),
                    f"{fmt_num(rob.min(), 4)}–{fmt_num(rob.max(), 4)}"]
        rows.append(row)
    head = (generated_from("mf_ftrl", "results/mf-ftrl/results.csv")
            + " Least-squares slope of log mean regret on log T (upper half of the T grid) or log ε (the whole ε "
            "grid). Every point uses the same seed keys, so each interval is a 95% percentile bootstrap over seed "
            f"indices resampled jointly across the curve's points ({N_BOOT} replicates).")
    cols = ["sweep", "mechanism", "instance", "slope [95% CI]", "range", "seeds"]
    if b is not None:
        head += (" Beside it, over the same points, the slopes of the planned σ and of the bound (the module's theory "
                 "curve, constants 1, at the noise each point added, recovered from its planned λ in `summary.csv`), "
                 "and regret / bound over every point of the sweep.")
        cols += ["slope of σ", "slope of the bound", "regret / bound"]
    return head + "\n\n" + markdown_table(cols, rows)


def twin_line(df) -> str:
    """BLT against the square root, seed-paired, at every point of both sweeps (one generated sentence).

    Args:
        df: the per-seed results.

    Returns:
        The sentence: the range of the paired ratio ``BLT / square root`` and the points whose interval excludes 1.
    """
    r = ratio_to_base(df[df["mechanism"].isin(["sqrt_toeplitz", "blt"])], ["part", "env", "T", "eps"], "mechanism",
                      "sqrt_toeplitz", "regret", n_boot=N_BOOT)
    above = r[r["ratio_lo"] > 1]
    below = r[r["ratio_hi"] < 1]
    dev = float((r["ratio"] - 1).abs().max())
    return ("*Generated; do not edit by hand.* Mean regret of BLT(4) over the square root's, seed-paired (95% "
            f"bootstrap over seed indices, {N_BOOT} replicates), at all {len(r)} points: "
            f"{fmt_num(r['ratio'].min())}–{fmt_num(r['ratio'].max())} (at most {100 * dev:.2f}% apart). "
            f"The paired interval lies above 1 at {len(above)} points and below 1 at {len(below)}.")


#: the claims of our docs, as data, one per (sweep, instance). Both bounds carry their constants as the module
#: docstring states them (the theory curves, constants 1), so each is tested by regret / bound at every point of the
#: sweep (the T grid spans 1.2 decades and the fitted upper half 0.6: too narrow for a rate).
_THM4 = ("REAL Thm 4 ([DP-FTRL](../algorithms/realizable.md#dp-ftrl)) in our form with constants 1 at the "
         "mechanism's own prefix variance V: E[regret] ≤ βD² + (D²√(βT dσ²V))^{2/3}")
CLAIMS = {
    ("T", "realizable"): Claim(_THM4, "bound", 1.0, 0.05, link="#misses"),
    ("T", "noisy"): Claim("the FTRL bound at the planner's λ (Kairouz et al. 2021; [DP-FTRL](../algorithms/"
                          "realizable.md#dp-ftrl)): E[regret] ≤ 2D√(TL(L + √(dV) σ))", "bound", 1.0, 0.05,
                          link="#misses"),
    ("eps", "realizable"): Claim(_THM4 + ", at each ε (its ε^{−2/3} is the limit σ ∝ 1/ε, which needs "
                                 "ε ≪ ln(1/δ) ≈ 13.8)", "bound", 1.0, 0.05, link="#misses"),
}
#: two mechanisms whose per-seed regrets correlate at least this much at every point of a sweep are one piece of
#: evidence twice, and share one verdict row
SAME_EVIDENCE = 0.998


def bounds(summary, D: float = 1.0) -> "pd.DataFrame":
    """Each mechanism's theory curve at every grid point, from the λ the study planned (``summary.csv``).

    The realizable λ is ``32 beta + (beta T E||b||^2 / D^2)^{1/3}`` with ``E||b||^2 = d sigma^2 V`` the
    mechanism's largest prefix-noise variance, so ``E||b||^2 = D^2 (lambda - 32 beta)^3 / (beta T)``; the noisy
    twin adds the same noise (same ``sigma`` and ``V``). The bounds are the module docstring's (constants 1):
    realizable ``beta D^2 + (D^2 sqrt(beta T E||b||^2))^{2/3}``, noisy ``2 D sqrt(T L (L + sqrt(d V) sigma))``
    with ``sqrt(d V) sigma = sqrt(E||b||^2)`` and ``L = 2D``.

    Args:
        summary: the study's ``summary`` table (``part``, ``mechanism``, ``env``, ``T``, ``eps``, ``lam``,
            ``regret_mean``).
        D: the domain radius the run used.

    Returns:
        ``summary``'s rows with ``Eb2`` (``E||b||^2``), ``bound`` and ``regret_over_bound``; points without a
        realizable twin get NaN.
    """
    lam_r = summary[summary["env"] == "realizable"][["part", "mechanism", "T", "eps", "lam"]].rename(
        columns={"lam": "lam_realizable"})
    b = summary.merge(lam_r, on=["part", "mechanism", "T", "eps"], how="left")
    L = _lipschitz(D)
    T = b["T"].astype(float)
    eb2 = D ** 2 * (b["lam_realizable"] - 32 * BETA) ** 3 / (BETA * T)
    real = b["env"] == "realizable"
    b["Eb2"] = eb2
    b["bound"] = np.where(real, BETA * D ** 2 + (D ** 2 * np.sqrt(BETA * T * eb2)) ** (2 / 3),
                          2 * D * np.sqrt(T * L * (L + np.sqrt(eb2))))
    b["regret_over_bound"] = b["regret_mean"] / b["bound"]
    return b


def _points_of(b, sweep, mechanism, env, x_min, x_max):
    x = "T" if sweep == "T" else "eps"
    g = b[(b["part"] == sweep) & (b["mechanism"] == mechanism) & (b["env"] == env)]
    return g[(g[x] >= x_min) & (g[x] <= x_max)].sort_values(x), x


def _loglog_slope(x, y) -> float:
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0]) if ok.sum() >= 2 else math.nan




def same_evidence(df) -> set:
    """The pairs of mechanisms that are one piece of evidence twice on a sweep (:data:`SAME_EVIDENCE`).

    Args:
        df: the per-seed results (``part``, ``env``, ``T``, ``eps``, ``seed``, ``mechanism``, ``regret``).

    Returns:
        ``{(part, env, a, b)}``, ``a`` before ``b`` in ``MECHANISMS``, where the per-seed regrets of ``a`` and ``b``
        correlate at least :data:`SAME_EVIDENCE` at every point of the sweep.
    """
    import itertools

    out = set()
    for (part, env), g in df.groupby(["part", "env"]):
        cs = [p.pivot(index="seed", columns="mechanism", values="regret").corr() for _, p in g.groupby(["T", "eps"])]
        mechs = [m for m in MECHANISMS if m in cs[0].columns]
        out |= {(part, env, a, b) for a, b in itertools.combinations(mechs, 2)
                if min(float(c.at[a, b]) for c in cs) >= SAME_EVIDENCE}
    return out


def verdicts(summary, twins=(), D: float = 1.0) -> "pd.DataFrame":
    """One verdict per (sweep, mechanism, instance) against :data:`CLAIMS`, by the generic rubric
    (:func:`jaxdp.studies.claims.judge`): the measurement is the mean regret over the bound (:func:`bounds`) at every
    point of the sweep, each with its mean's 95% interval (a row shows the largest ratio and the largest lower and upper
    ends). Mechanisms that are one piece of evidence twice (``twins``) share one row ``a = b``, judged on both's points.

    Args:
        summary: the study's ``summary`` table (``part``, ``mechanism``, ``env``, ``T``, ``eps``, ``n_seeds``,
            ``lam``, ``regret_mean``, ``regret_lo``, ``regret_hi``).
        twins: ``{(part, env, a, b)}`` as :func:`same_evidence` gives them.
        D: the domain radius the run used.

    Returns:
        The verdict rows (columns of :func:`jaxdp.studies.analysis.verdict_table`), T sweep first.
    """
    import pandas as pd

    b = bounds(summary, D)
    alias = {(p, e, m2): m1 for p, e, m1, m2 in sorted(twins, key=lambda t: -MECHANISMS.index(t[2]))}

    def root(p, e, m):   # the first mechanism of a chain of twins
        return root(p, e, alias[(p, e, m)]) if (p, e, m) in alias else m

    rows = []
    for (part, env), g in sorted(b.groupby(["part", "env"]), key=lambda kv: (kv[0][0] != "T", kv[0][1] != "realizable")):
        for mech in [m for m in MECHANISMS if m in set(g["mechanism"]) and (part, env, m) not in alias]:
            same = [m for m in MECHANISMS if m in set(g["mechanism"]) and root(part, env, m) == mech]
            pts = g[g["mechanism"].isin(same) & np.isfinite(g["bound"])]
            ratio, lo, hi = (pts[c].to_numpy(float) / pts["bound"].to_numpy(float)
                             for c in ("regret_mean", "regret_lo", "regret_hi"))
            claim = CLAIMS[(part, env)]
            m = (Measurement.of_ratios(ratio, lo, hi, int(pts["n_seeds"].min())) if len(pts)
                 else Measurement(math.nan, math.nan, math.nan, 0))
            v = judge(claim, m)
            rows.append(dict(experiment=f"regret / bound vs {'T' if part == 'T' else 'ε'}", kind="at_most",
                             cell=f"{' = '.join(same)}, {env}", claim=claim.text, claimed=claim.value,
                             slope=m.estimate, slope_lo=m.lo, slope_hi=m.hi, n_seeds=m.n_seeds, verdict=v.verdict,
                             reason=v.reason, link=claim.link if v.verdict == "misses" else ""))
    return pd.DataFrame(rows)


def _run_D(d: pathlib.Path) -> float:
    import json

    m = d / "manifest.json"
    D: Any = json.loads(m.read_text())["config"]["D"] if m.exists() else DEFAULTS["D"]
    return float(D)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of ``docs/results/mf-ftrl.md`` from a kept run.

    Args:
        results_dir: the results directory holding ``results.csv``, ``summary.csv`` and ``ratios.csv``
            (default ``results/mf-ftrl``).

    Returns:
        ``{block name: Markdown}`` for :data:`BLOCKS`: the ratio table (:func:`ratio_table`, from the kept
        ``ratios.csv``), the slope table beside the bounds (:func:`slope_table`), the BLT / square-root line
        (:func:`twin_line`) and the verdict of every cell (:func:`verdicts`).
    """
    import pandas as pd

    d = pathlib.Path(results_dir) if results_dir is not None else RESULTS
    df = pd.read_csv(d / "results.csv")
    summary = pd.read_csv(d / "summary.csv")
    fits = slope_fits(df)
    D = _run_D(d)
    v = verdicts(summary, same_evidence(df), D)
    counts = v["verdict"].value_counts()
    tally = ", ".join(f"{int(counts[k])} {k}" for k in VERDICTS if k in counts)
    t, e = summary[summary["part"] == "T"], summary[summary["part"] == "eps"]
    tol = max(c.tolerance for c in CLAIMS.values())
    head = (generated_from("mf_ftrl", "results/mf-ftrl/summary.csv", "results/mf-ftrl/results.csv")
            + f" One row per (sweep, mechanism, instance), {len(v)} in all: {tally}; two mechanisms whose per-seed "
            f"regrets correlate at least {SAME_EVIDENCE} at every point of a sweep are one piece of evidence twice "
            "and share one row (`a = b`). Both bounds carry their constants (the theory curves, constants 1), so by "
            "the rubric of the [results overview](index.md#verdicts) the measurement is the mean regret over the bound "
            f"at every point of the sweep (T = {t['T'].min()} … {t['T'].max()}, or ε = {e['eps'].min():g} … "
            f"{e['eps'].max():g} at T = {e['T'].min()}), with each point's 95% interval: a row shows the largest ratio "
            f"and the largest lower and upper ends, and holds when that upper end is at most {1 + tol:g}. The bound at "
            "each point is recovered from the λ it planned (`summary.csv`).")
    return {RATIO_BLOCK: ratio_table(pd.read_csv(d / "ratios.csv")), SLOPE_BLOCK: slope_table(df, fits, summary, D),
            TWIN_BLOCK: twin_line(df), VERDICT_BLOCK: head + "\n\n" + verdict_table(v)}


def publish(outdir=None) -> list:
    """Regenerate the docs page's generated blocks from a kept run (:func:`page_blocks`).

    Args:
        outdir: the results directory (default ``results/mf-ftrl``).

    Returns:
        The names of the blocks that changed.
    """
    return publish_blocks(DOC_PAGE, page_blocks(outdir))
