"""Study ``lazy-batching``: the batching term of the L2P analysis at large horizons.

L2P-MW with the paper's settings (Thm 3.2 rate form: ``B = floor(1/eps)``,
``eta = min(eps0, eps)^{2/3} T^{-1/3}``, ``p = max(eta/eps, B/T)``) against the
alternating-batches adversary (expert 0 loses in even batches, expert 1 in odd
ones; batch length ``B``). A batch-constant learner pays, per pair of batches,
the weight lag of one batch, so its expected regret is

    E[Regret] ≈ (T/4) tanh(eta B / 2) ≈ T B eta / 8,

while Prop. 3.3 of "Private online learning via lazy algorithms" (docs:
docs/algorithms/lazy.md#batching-term) bounds the batching term by
``T B^2 eta^2``. With ``eta ∝ T^{-1/3}`` and ``B`` fixed, the first grows like
``T^{2/3}`` and the second like ``T^{1/3}``; the fitted slope of the mean regret
in ``T`` decides between them. Every row also reports both terms, the exact
``(T/4) tanh(eta B/2)`` and the full valid bound ``ln d/eta + T B eta/8``.
"""
from __future__ import annotations

import dataclasses
import math
import pathlib
from typing import TYPE_CHECKING

import jax.numpy as jnp
import numpy as np

from jaxdp.core import seed_keys, simulate
from jaxdp.experts import AlternatingParams, adv_alternating_batches, experts_problem, hedge, hedge_params
from jaxdp.experts import alternating_prediction, l2p_mw, l2p_mw_params, l2p_mw_regret_bound, plan_l2p_mw
from jaxdp.registry import register_study
from jaxdp.studies._common_study import ROOT as ROOT, generated_from, page_paths
from jaxdp.studies.analysis import _pow2, fmt_ci, fmt_num, markdown_table, publish_blocks
from jaxdp.studies.claims import VERDICTS, Claim, Measurement, judge
from jaxdp.studies.framework import Param, Study, declare_params, fit_slopes, plot_curves, summarize

if TYPE_CHECKING:
    import pandas as pd

DOC_PAGE, RESULTS = page_paths("lazy-batching")
VERDICT_BLOCK = "lazy-batching verdicts"
BLOCKS = ("lazy-batching regret", "lazy-batching slopes", VERDICT_BLOCK)
N_BOOT = 2000

LEARNERS = ("l2p_paper", "mw_same_eta")


def batching_terms(T, B, eta, d):
    """The candidate batching terms for one configuration; the exact alternating-batches regret and
    the valid bound are the library's ``alternating_prediction`` and ``l2p_mw_regret_bound``.

    Args:
        T: the horizon (rounds).
        B: the batch length.
        eta: the learning rate η.
        d: the number of experts.

    Returns:
        A dict of floats: ``TBeta_over_8`` (``T B η / 8``), ``tanh_exact`` (``(T/4) tanh(η B / 2)``),
        ``claimed_TB2eta2`` (``T B² η²``) and ``valid_bound`` (``ln d / η + T B η / 8``).
    """
    T, B, eta = float(T), float(B), float(eta)
    return {"TBeta_over_8": T * B * eta / 8, "tanh_exact": float(alternating_prediction(T, eta, B)),
            "claimed_TB2eta2": T * B * B * eta * eta, "valid_bound": float(l2p_mw_regret_bound(d, T, eta, B))}


PARAMS = declare_params("lazy-batching", {
    "seeds": Param("int", lo=1), "seed": Param("int", lo=0), "d": Param("int", lo=2, hi=2 ** 20),
    "eps": Param("float", lo=0.0, hi=1.0, lo_open=True), "delta": Param("float", lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "T": Param("int", many=True, lo=2, hi=2 ** 30), "learners": Param("str", many=True, choices=LEARNERS),
})


@register_study(
    "lazy-batching",
    defaults={"seeds": 1024, "d": 2, "eps": 0.02, "delta": 1e-6, "seed": 0,
              "T": [2 ** 14, 2 ** 16, 2 ** 18, 2 ** 20, 2 ** 22], "learners": list(LEARNERS)},
    quick={"seeds": 16, "T": [2 ** 10, 2 ** 12, 2 ** 14]},
    description="LAZY batching term at scale: L2P-MW (paper eta, B = 1/eps, p = eta/eps) on alternating batches, "
                "mean regret vs T B eta/8 and the claimed T B^2 eta^2")
def build(cfg: dict) -> Study:
    """The ``lazy-batching`` study: L2P-MW with its rate-mode plan, and per-round multiplicative
    weights at the same η, against alternating batches of length ``B`` at every horizon.

    Args:
        cfg: the resolved configuration: ``d``, ``eps``, ``delta``, the ``T`` grid, ``learners``,
            seeds and the root seed.

    Returns:
        The :class:`jaxdp.studies.Study`; its tables are ``summary`` (regrets and switches per
        ``(learner, T)`` with the plan and both candidate terms) and ``slopes`` (the regret's slope in
        ``T`` with the slopes of the two terms over the same grid).

    Raises:
        ValueError: an unknown learner.
    """
    d, eps, delta = int(cfg["d"]), float(cfg["eps"]), float(cfg["delta"])
    Ts = [int(t) for t in cfg["T"]]
    for ln in cfg["learners"]:
        if ln not in LEARNERS:
            raise ValueError(f"unknown learner {ln!r}; known: {LEARNERS}")
    points = [{"learner": ln, "T": T} for ln in cfg["learners"] for T in Ts]

    def plan(T):
        return plan_l2p_mw(eps=eps, delta=delta, T=T, d=d, mode="rate").params

    def run(pts, seeds):
        keys = seed_keys(int(cfg["seed"]), seeds)
        out = []
        for pt in pts:
            T = int(pt["T"])
            pr = plan(T)
            B = int(pr["B"])
            if pt["learner"] == "l2p_paper":
                L, params = l2p_mw(d, B), l2p_mw_params(pr["eta"], pr["p"], B)
            else:  # per-round multiplicative weights with the same eta (no batching)
                L, params = hedge(d), hedge_params(d, T)._replace(eta=jnp.float32(pr["eta"]))
            r = simulate(L, adv_alternating_batches(d), experts_problem(), params, AlternatingParams(B=jnp.int32(B)),
                         keys, T, T_max=T, n_checkpoints=4)
            m = {"expected_regret": np.asarray(r["expected_regret"]), "regret": np.asarray(r["regret"]),
                 "switches": np.asarray(r["switches"])}
            n = len(seeds)
            m.update(eta=np.full(n, pr["eta"]), p=np.full(n, pr["p"]), B=np.full(n, float(B)))
            for k, v in batching_terms(T, B, pr["eta"], d).items():
                m[k] = np.full(n, v)
            out.append(m)
        return out

    def analyze(df):
        s = summarize(df, by=["learner", "T"], metrics=["expected_regret", "regret", "switches"])
        first = df.groupby(["learner", "T"], sort=True).first().reset_index()
        for c in ("eta", "p", "B", "TBeta_over_8", "tanh_exact", "claimed_TB2eta2", "valid_bound"):
            s[c] = first[c].to_numpy()
        s["ratio_to_TBeta8"] = s["expected_regret_mean"] / s["TBeta_over_8"]
        s["ratio_to_claimed"] = s["expected_regret_mean"] / s["claimed_TB2eta2"]
        # realized regret (CI over seeds; the expected regret is deterministic on this adversary), and
        # the slopes of the two candidate terms over the same grid (eta's T-dependence included). Every T
        # uses the same seed keys: the bootstrap resamples seed indices jointly across the T grid.
        sl = fit_slopes(df, x="T", y="regret", by=["learner"], upper_half=False, resample="joint")
        for col, name in (("TBeta_over_8", "slope_TBeta8"), ("claimed_TB2eta2", "slope_claimed")):
            sl[name] = [float(np.polyfit(np.log(g["T"]), np.log(g[col]), 1)[0])
                        for _, g in s.groupby("learner", sort=True)]
        return {"summary": s, "slopes": sl}

    def plot(df, outdir: pathlib.Path):
        s = analyze(df)["summary"]
        sl2p = s[s["learner"] == "l2p_paper"].sort_values("T")
        xs = sl2p["T"].to_numpy(float)
        theory = {"T B eta / 8": (xs, sl2p["TBeta_over_8"].to_numpy()),
                  "claimed T B^2 eta^2": (xs, sl2p["claimed_TB2eta2"].to_numpy()),
                  "ln d/eta + T B eta/8": (xs, sl2p["valid_bound"].to_numpy())}
        return [plot_curves(s, x="T", y="expected_regret", hue="learner", path=outdir / "lazy_batching.png",
                            theory=theory, title=f"L2P-MW on alternating batches (d={d}, eps={eps:g})",
                            ylabel="expected regret (mean, 95% CI)")]

    return Study(name="lazy-batching", points=points, seeds=int(cfg["seeds"]), run=run, group_by=("learner", "T"),
                 analyze=analyze, plot=plot, config=cfg, seeds_per_chunk=256, points_per_chunk=1,
                 description="LAZY batching term at scale (alternating batches)")


#: the tolerance of both exponents (the slopes' half-widths are 0.007 and 0.078 at 1024 seeds)
TOL = 0.05
#: learner -> (its claim, the column of the slopes table that holds the claimed exponent). Both exponents are the
#: slopes of the stated terms over the study's own T grid (η's T-dependence, ε₀ included: the "slope of" columns of
#: the page's slope table), so each cell's ``value`` is its row's column. Prop. 3.3's ``O(T B² η²)`` has no constant:
#: an order bounding the regret's growth from above (``at_most_rate``). Per-round MW's ``≈ (T/4) tanh(η/2) ≈ Tη/8``
#: is its large-T form (``rate``; ``B`` is fixed, so ``Tη/8`` has the slope of ``T B η/8``).
CLAIMS = {
    "l2p_paper": (Claim("LAZY Prop. 3.3: batching term O(T B² η²) (its slope over this grid)", "at_most_rate",
                        math.nan, TOL, link="../algorithms/lazy.md#batching-term"), "slope_claimed"),
    "mw_same_eta": (Claim("per-round MW at L2P's η: E[regret] ≈ (T/4) tanh(η/2) ≈ Tη/8 (lazy.md, batching term; its "
                          "slope over this grid)", "rate", math.nan, TOL, link="#misses"), "slope_TBeta8"),
}


def slope_fits(df) -> "pd.DataFrame":
    """The realized regret's slope in ``T`` per learner, with the slopes of the two candidate terms over the grid.

    Every horizon uses the same seed keys, so the interval resamples seed indices jointly across the ``T`` grid
    (``fit_slopes(..., resample="joint")``, :data:`N_BOOT` replicates), over the whole grid as the study's
    ``slopes`` table.

    Args:
        df: the per-seed results (``learner``, ``T``, ``seed``, ``regret`` and the term columns).

    Returns:
        One row per learner: ``learner``, ``slope``, ``slope_lo``, ``slope_hi``, ``n_x``, ``x_min``, ``x_max``,
        ``n_seeds``, ``resample``, ``slope_TBeta8`` and ``slope_claimed`` (least-squares slopes of ``T B η/8``
        and ``T B² η²`` over the same ``T``).
    """
    sl = fit_slopes(df, x="T", y="regret", by=["learner"], upper_half=False, n_boot=N_BOOT, resample="joint")
    first = df.groupby(["learner", "T"], sort=True).first().reset_index()
    for col, name in (("TBeta_over_8", "slope_TBeta8"), ("claimed_TB2eta2", "slope_claimed")):
        sl[name] = [float(np.polyfit(np.log(g["T"].to_numpy(float)), np.log(g[col].to_numpy(float)), 1)[0])
                    for _, g in first.groupby("learner", sort=True)]
    return sl


def verdicts(slopes) -> "pd.DataFrame":
    """One verdict per fitted cell (learner) of the slopes table against :data:`CLAIMS`, by the generic rubric
    (:func:`jaxdp.studies.claims.judge` over ``log10(x_max/x_min)`` decades of T). The two learners are separate runs:
    no two rows are the same evidence.

    Args:
        slopes: the slopes table (:func:`slope_fits` or the study's ``slopes.csv``): ``learner``, ``slope``,
            ``slope_lo``, ``slope_hi``, ``n_seeds``, ``x_min``, ``x_max``, ``slope_TBeta8``, ``slope_claimed``.

    Returns:
        The verdict rows (columns of :func:`jaxdp.studies.analysis.verdict_table`).
    """
    import pandas as pd

    rows = []
    for r in slopes.itertuples(index=False):
        c = dataclasses.replace(CLAIMS[r.learner][0], value=float(getattr(r, CLAIMS[r.learner][1])))
        m = Measurement(float(r.slope), float(r.slope_lo), float(r.slope_hi), int(r.n_seeds),
                        decades=math.log10(float(r.x_max) / float(r.x_min)))
        v = judge(c, m)
        rows.append(dict(experiment="regret vs T", cell=str(r.learner), claim=c.text, claimed=c.value,
                         kind="at_most" if c.kind == "at_most_rate" else "equals", slope=m.estimate, slope_lo=m.lo,
                         slope_hi=m.hi, n_seeds=m.n_seeds, verdict=v.verdict, reason=v.reason,
                         link=c.link if v.verdict == "misses" else ""))
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of ``docs/results/lazy-batching.md`` from a kept run's ``results.csv``.

    Every horizon uses the same seed keys (``seed_keys(seed, i)`` at every point), so the slope's interval
    resamples seed indices jointly across the ``T`` grid (``fit_slopes(..., resample="joint")``). The
    expected regret is the same number for every seed (a deterministic adversary, and weights that do not
    depend on the learner's coins), so it has no interval.

    Args:
        results_dir: the results directory (default ``results/lazy-batching``).

    Returns:
        ``{block name: Markdown}`` for the names in :data:`BLOCKS`: the regret table (every learner and
        ``T``), the slope table (every learner) and the verdict of every fitted cell (:func:`verdicts`).
    """
    import pandas as pd

    from jaxdp.studies.analysis import verdict_table

    d = pathlib.Path(results_dir) if results_dir is not None else RESULTS
    df = pd.read_csv(d / "results.csv")
    S = int(df.groupby(["learner", "T"])["seed"].nunique().min())
    s = summarize(df, by=["learner", "T"], metrics=["expected_regret", "regret", "switches"])
    first = df.groupby(["learner", "T"], sort=True).first().reset_index()
    for c in ("TBeta_over_8", "tanh_exact", "claimed_TB2eta2"):
        s[c] = first[c].to_numpy()
    rows = []
    for r in s.itertuples(index=False):
        spread = r.expected_regret_hi - r.expected_regret_lo
        exp = fmt_num(r.expected_regret_mean, 1) + ("" if spread == 0 else " (varies by seed)")
        rows.append([r.learner, _pow2(r.T), exp, fmt_ci(r.regret_mean, r.regret_lo, r.regret_hi, 1),
                     fmt_num(r.TBeta_over_8, 1), fmt_num(r.tanh_exact, 1), fmt_num(r.claimed_TB2eta2, 1),
                     fmt_num(r.expected_regret_mean / r.TBeta_over_8, 3),
                     fmt_num(r.expected_regret_mean / r.claimed_TB2eta2, 2), f"{r.switches_mean:.0f}"])
    head = (generated_from("lazy_batching", "results/lazy-batching/results.csv")
            + f" {S} seeds per point. E[regret] is the learner's expected regret ⟨p_t, ℓ_t⟩ summed "
            "over the rounds: on this deterministic adversary it is the same number for every seed, so it has "
            "no interval; the realized regret (the loss of the experts actually played) carries the seeds' "
            "spread (95% percentile bootstrap over that point's seeds).")
    regret = head + "\n\n" + markdown_table(
        ["learner", "T", "E[regret]", "realized regret [95% CI]", "T B η/8", "(T/4) tanh(ηB/2)",
         "claimed T B² η²", "E[regret] / (T B η/8)", "E[regret] / claimed", "switches"], rows)
    sl = slope_fits(df)
    se = fit_slopes(df, x="T", y="expected_regret", by=["learner"], upper_half=False, n_boot=10)
    srows = [[r.learner, fmt_ci(r.slope, r.slope_lo, r.slope_hi), fmt_num(e.slope), fmt_num(r.slope_TBeta8),
              fmt_num(r.slope_claimed), int(r.n_seeds)] for r, e in zip(sl.itertuples(index=False),
                                                                       se.itertuples(index=False))]
    shead = (f"*Generated; do not edit by hand.* Least-squares slopes of log mean regret on log T over the whole "
             f"grid ({_pow2(s['T'].min())} … {_pow2(s['T'].max())}). Every T uses the same seed keys, so the "
             f"interval is a 95% percentile bootstrap over seed indices resampled jointly across the T grid "
             f"({N_BOOT} replicates). The slope of E[regret] has no interval (one value per point).")
    slopes = shead + "\n\n" + markdown_table(
        ["learner", "slope of realized regret [95% CI]", "slope of E[regret]", "slope of T B η/8",
         "slope of T B² η²", "seeds"], srows)
    v = verdicts(sl)
    counts = v["verdict"].value_counts()
    decades = math.log10(float(sl["x_max"].max()) / float(sl["x_min"].min()))
    vhead = (f"{len(v)} rows, one per learner (two separate runs: no row repeats another's evidence), the fits of the "
             f"slope table below. Judged by the rubric of the [results overview](index.md#verdicts) with tolerance "
             f"{TOL:g}; every fit spans T = {_pow2(sl['x_min'].min())} … {_pow2(sl['x_max'].max())}, {decades:.2f} "
             "decades, so a slope tests a rate. Each claimed exponent is the slope of the stated term over the same "
             "grid (η's T-dependence included). Every T uses the same seed keys, so seed indices are resampled "
             f"jointly across the T grid (95% percentile bootstrap, {N_BOOT} replicates). Verdicts: "
             + ", ".join(f"{int(counts[k])} {k}" for k in VERDICTS if k in counts) + ".\n\n")
    return {BLOCKS[0]: regret, BLOCKS[1]: slopes, VERDICT_BLOCK: vhead + verdict_table(v)}


def publish(results_dir=None) -> list:
    """Rewrite the generated blocks of ``docs/results/lazy-batching.md`` from a kept run (:func:`page_blocks`).

    Args:
        results_dir: the results directory (default ``results/lazy-batching``).

    Returns:
        The names of the blocks that changed.
    """
    return publish_blocks(DOC_PAGE, page_blocks(results_dir))
