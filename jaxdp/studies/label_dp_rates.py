"""Study ``label-dp-rates``: LABEL Table 1 measured (docs/algorithms/label-dp.md#studies).

Experiments (``cfg["experiments"]`` selects them; L4 and L8 are analyses of the L1–L3 grid):

* L1/L2/L3 (and L8) — excess risk vs N for local, central and non-private learners in
  classification, bounded regression and heavy-tailed regression for several p; fitted log-log
  slopes with bootstrap CIs against Table 1's exponents (non-private slopes stay at the
  statistical rate under heavy tails: L8);
* L4 — the central crossover ``N_c = ε^{-b/(b-a)}`` (table ``crossover``);
* L5 — local's ε²N effective sample size (excess vs ε at fixed N);
* L6 — vector RR vs K-ary RR as K grows;
* L7 — minimax exponents including the margin γ: the minimax-hard bump constructions of LABEL
  App. B / F (``gen_bump_classification``, ``gen_bump_regression``) with the bump width set by the
  lower-bound bandwidth of the regime under test (Label DP: theoretical limits, App. B, F, J; docs/algorithms/label-dp.md#lower-bounds, #generators): local
  ``h0 = (N(ε²∧1))^{-1/(2β+d)}``, central ``h0 = (εN)^{-1/(β+d)}``, fresh signs per seed. The
  excess of any method is then ``≍ h0^{β(γ+1)}`` (at most the bump mass, at least the LABEL
  Thm 1/3 lower bound), so the slopes in N are ``-β(γ+1)/(2β+d)`` (local) and ``-β(γ+1)/(β+d)``
  (central privacy term); regression (γ plays no role) ``-2β/(2β+d)`` and ``-2β/(β+d)``. The
  central runs use a small ε (``l7_eps_central``, default 0.02, crossover ``N_c = ε^{-b/(b-a)} ≥ 10^5``)
  so that the privacy term dominates the statistical one over the whole N grid (regression error
  is not capped by the bump mass; classification excess is, at any ε).
  Rows in the ``slopes`` table with ``experiment == "L7"`` and column ``theory``;
* L9 — tuning rules: the planners' bin width / k / clipping level (constant 1, ``rate`` mode)
  against an oracle choice of the constant ``c ∈ cfg["l9_c"]`` (``c_h``, ``c_k`` or ``c_T`` times
  the theory value); table ``tuning``: ``ratio = excess(c=1) / min_c excess(c)`` with a paired
  bootstrap CI over seeds (expected bounded by a constant).

Hyperparameters from the theorems in ``rate`` mode (``jaxdp.label_dp.planners.plan_for``).
"""
from __future__ import annotations

import dataclasses
import math
import pathlib

import numpy as np
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from jaxdp.core import seed_keys
from jaxdp.label_dp import (
    LabelParams, gen_bump_classification, gen_bump_regression, gen_heavy_tail_regression, gen_smooth_classification,
    gen_smooth_regression, label_rates, make_estimator, run_grid,
)
from jaxdp.label_dp.planners import plan_for
from jaxdp.label_dp.rates import label_rate_exponent
from jaxdp.registry import register_study
from jaxdp.studies._common_study import ROOT, generated_from
from jaxdp.studies.analysis import publish_blocks
from jaxdp.studies.claims import VERDICTS, Claim, Measurement, Verdict, judge, seeds_to_resolve
from jaxdp.studies.framework import Param, Study, declare_params, fit_slopes, plot_curves, summarize, verdict_table

EXPERIMENTS = ("L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9")
METHODS = {
    "classification": ("local_rr_vector", "central_exp_bins", "nonprivate_bins_cls"),
    "regression": ("local_laplace_knn", "central_bins_laplace", "nonprivate_knn"),
    "heavy": ("local_laplace_knn_clipped", "central_bins_laplace_clipped", "nonprivate_knn"),
}
L7_METHODS = {"bump_cls": ("local_rr_vector", "central_exp_bins"),
              "bump_reg": ("local_laplace_knn", "central_bins_laplace")}
# L9: the constant each rule exposes (bins: c_h; kNN: c_k; clipped methods: the clipping level c_T)
L9_KNOBS = {"local_rr_vector": "c_h", "central_exp_bins": "c_h", "local_laplace_knn": "c_k",
            "central_bins_laplace": "c_h", "local_laplace_knn_clipped": "c_T", "central_bins_laplace_clipped": "c_T"}
L9_TASK = {"local_rr_vector": "classification", "central_exp_bins": "classification",
           "local_laplace_knn": "regression", "central_bins_laplace": "regression",
           "local_laplace_knn_clipped": "heavy", "central_bins_laplace_clipped": "heavy"}


def SETTING(m):
    """The privacy setting of a method, from its name's prefix.

    Args:
        m: a method name of :data:`METHODS` (``local_*``, ``central_*`` or ``nonprivate_*``).

    Returns:
        ``"local"``, ``"central"`` or ``"nonprivate"``.
    """
    return "local" if m.startswith("local") else ("central" if m.startswith("central") else "nonprivate")


N_BOOT = 1000
# the kept runs: results directory -> generated-block name (on every page of DOC_PAGES)
KEPT = {"label-dp-rates": "label-dp-rates verdicts", "label-dp-rates-heavy": "label-dp-rates-heavy verdicts"}
BLOCKS = tuple(KEPT.values())
DOC_PAGES = ("docs/results/label-dp-rates.md", "docs/algorithms/label-dp.md")
DOC_PAGE = ROOT / DOC_PAGES[0]
WHY = {"clip_bias": "../results/label-dp-rates.md#why-clipping-bias",
       "small_neps": "../results/label-dp-rates.md#why-small-n-eps2",
       "other": "../results/label-dp-rates.md#why-other"}
TOL = 0.05     # the tolerance on every exponent: the study's target half-width at 256 seeds
#: the claims, as data (LABEL Table 1 through ``label_rate_exponent``; docs/algorithms/label-dp.md#studies); a nan
#: value is the cell's exponent (:func:`_claim`); a local miss links the section of its regime (:func:`verdicts`)
CLAIMS = {
    "local": Claim("(N(ε²∧1))^{−a}: LABEL Table 1, Thms 2, 6", "rate", math.nan, TOL),
    "local heavy": Claim("(Nε²)^{−b}: LABEL Thm 10", "rate", math.nan, TOL),
    "nonprivate": Claim("N^{−a}: LABEL Table 1", "rate", math.nan, TOL, link=WHY["other"]),
    "central ≥": Claim("N^{−a} + (εN)^{−b}: slope between −b and −a (LABEL Table 1, Thms 4, 8, 12)", "at_least_rate",
                       math.nan, TOL, link=WHY["other"]),
    "central ≤": Claim("N^{−a} + (εN)^{−b}: slope between −b and −a (LABEL Table 1, Thms 4, 8, 12)", "at_most_rate",
                       math.nan, TOL, link=WHY["other"]),
    "L5": Claim("ε²N effective sample size: (Nε²)^{−a}, slope in Nε² (LABEL Table 1, local)", "rate", math.nan, TOL,
                link=WHY["small_neps"]),
    "L7 bump_cls": Claim("minimax-hard bumps at the lower-bound bandwidth: h0^{β(γ+1)}, forced by the construction "
                         "(LABEL App. B, Thms 1, 3)", "rate", math.nan, TOL, link=WHY["other"]),
    "L7 bump_reg": Claim("minimax-hard bumps at the lower-bound bandwidth: h0^{2β} (LABEL App. F, Thms 5, 7)", "rate",
                         math.nan, TOL, link=WHY["other"]),
    "L6": Claim("no exponent in K (a comparison of the two mechanisms)", "rate", math.nan, TOL),   # never judged
    "L9": Claim("theory constant within a bounded factor of the oracle: log(excess(c=1)/min_c excess(c)) does not "
                "grow with N", "at_most_rate", 0.0, TOL, link=WHY["other"]),
}
SEED_BATCH = 4         # seeds evaluated at once inside a chunk (memory; the results do not depend on it)
SEEDS_PER_CHUNK = 64   # seed blocks per chunk: bounds memory (kNN over N x M per seed) and makes resumption finer
L7_C_M = 2.0   # bumps: m = min(G, ⌊C_M h0^{γβ-d}⌋)


def _gen(task, p, K, beta=1.0, gamma=1.0, m0_max=4096):
    if task == "classification":
        return gen_smooth_classification(1, int(K), random_phase=True)
    if task == "regression":
        return gen_smooth_regression(1)
    if task == "bump_cls":
        return gen_bump_classification(1, float(beta), float(gamma), C_M=L7_C_M, m0_max=int(m0_max))
    if task == "bump_reg":
        return gen_bump_regression(1, float(beta), m0_max=int(m0_max))
    return gen_heavy_tail_regression(1, float(p), "student_t")


def minimax_h0(setting: str, N, eps: float, beta: float, d: int = 1):
    """Lower-bound bandwidth of LABEL App. B/F (docs/algorithms/label-dp.md#lower-bounds): local ``(N(ε²∧1))^{-1/(2β+d)}``,
    central ``(εN)^{-1/(β+d)}``.

    Args:
        setting: ``"local"``; any other value gives the central bandwidth.
        N: the sample size(s), a number or an array.
        eps: the privacy level ε.
        beta: the smoothness β of the regression function.
        d: the feature dimension.

    Returns:
        The bump width ``h0``, float64 of the shape of ``N``.
    """
    N = np.asarray(N, dtype=np.float64)
    if setting == "local":
        return (N * min(eps ** 2, 1.0)) ** (-1.0 / (2 * beta + d))
    return (eps * N) ** (-1.0 / (beta + d))


def l7_theory_slope(task: str, setting: str, beta: float, gamma: float, d: int = 1) -> float:
    """Expected slope in N of the minimax-hard excess ``h0^{β(γ+1)}`` (classification) / ``h0^{2β}`` (regression).

    Args:
        task: ``"bump_cls"`` (classification) or ``"bump_reg"`` (regression).
        setting: ``"local"`` or ``"central"``.
        beta: the smoothness β.
        gamma: the margin exponent γ (classification only).
        d: the feature dimension.

    Returns:
        The privacy term's exponent in N, negated: ``-β(γ+1)/(2β+d)`` local and ``-β(γ+1)/(β+d)``
        central for classification, ``-2β/(2β+d)`` and ``-2β/(β+d)`` for regression.
    """
    e = label_rate_exponent("classification" if task == "bump_cls" else "regression", setting, beta=beta,
                            gamma=gamma if task == "bump_cls" else 1.0, d=d)
    return -e["priv"]


def _pairs(s):
    out = []
    for part in str(s).replace(";", ",").split(","):
        if part.strip():
            b, g = part.split(":")
            out.append((float(b), float(g)))
    return out


def _experiments(cfg):
    exps = {e.strip().upper() for e in str(cfg["experiments"]).split(",") if e.strip()}
    bad = sorted(exps - set(EXPERIMENTS))
    if bad:
        raise ValueError(f"experiments: unknown {bad}; known {', '.join(EXPERIMENTS)}")
    if "L4" in exps:
        exps |= {"L1", "L2", "L3"}
    if "L8" in exps:
        exps.add("L3")
    return exps


def _check_pair(s):
    try:
        b, g = s.split(":")
        b, g = float(b), float(g)
    except ValueError:
        return "not BETA:GAMMA"
    if not (np.isfinite(b) and np.isfinite(g) and b > 0 and g > 0):
        return "BETA and GAMMA must be finite and > 0"
    return None


_POS: dict[str, Any] = dict(lo=0.0, lo_open=True)
PARAMS = declare_params("label-dp-rates", {
    "seeds": Param("int", lo=1), "seed": Param("int", lo=0),
    "experiments": Param("str", many=True, check=lambda e: None if e.strip().upper() in EXPERIMENTS
                         else f"unknown experiment {e!r}", help=", ".join(EXPERIMENTS)),
    "N": Param("int", many=True, lo=2, hi=2 ** 26), "eps": Param("float", many=True, **_POS),
    "p": Param("float", many=True, lo=1.0, lo_open=True, help="moment order of the heavy tail"),
    "K": Param("int", many=True, lo=2, hi=2 ** 12), "eps_sweep": Param("float", many=True, **_POS),
    "N_fixed": Param("int", lo=2, hi=2 ** 26), "M": Param("int", lo=1, hi=2 ** 24),
    "bins_max": Param("int", lo=1, hi=2 ** 20), "l7_N": Param("int", many=True, lo=2, hi=2 ** 26),
    "l7_eps_local": Param("float", **_POS), "l7_eps_central": Param("float", **_POS),
    "l7_pairs": Param("str", many=True, check=_check_pair, help="BETA:GAMMA pairs"),
    "l7_M": Param("int", lo=1, hi=2 ** 24), "l9_N": Param("int", many=True, lo=2, hi=2 ** 26),
    "l9_eps": Param("float", **_POS), "l9_p": Param("float", lo=1.0, lo_open=True),
    "l9_c": Param("float", many=True, **_POS),
    "l9_methods": Param("str", many=True, choices=tuple(L9_KNOBS)),
})


def _plan_point(pt: dict):
    """The planner call of one grid point (host side)."""
    kw = {"p": pt["p"]} if pt["task"] == "heavy" else {}
    if pt["task"] in ("classification", "bump_cls"):
        kw["K"] = pt["K"]
    if pt["task"].startswith("bump"):
        kw["beta"] = pt["beta"]
    if pt["knob"] != "none":
        kw[pt["knob"]] = pt["c"]
    eps = pt["eps"] if np.isfinite(pt["eps"]) else 1e300
    return plan_for(pt["method"], N=pt["N"], eps=eps, mode="rate", **kw)


def _pt(experiment, task, method, N, eps, p=0.0, K=2, beta=1.0, gamma=1.0, c=1.0, knob="none"):
    return dict(experiment=experiment, task=task, method=method, N=int(N), eps=float(eps), p=float(p), K=int(K),
                beta=float(beta), gamma=float(gamma), c=float(c), knob=knob)


@register_study("label-dp-rates", defaults={
    "seeds": 256, "seed": 0, "experiments": "L1,L2,L3,L5,L6,L7,L9",
    "N": [1000, 3000, 10000, 30000, 100000], "eps": [0.1, 1.0], "p": [2.0, 3.0, 4.0, 8.0],
    "K": [2, 4, 8, 16, 32], "eps_sweep": [0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0], "N_fixed": 10000, "M": 2000,
    "bins_max": 512,
    "l7_N": [1000, 3000, 10000, 30000, 100000], "l7_eps_local": 0.5, "l7_eps_central": 0.02,
    "l7_pairs": "1:1,1:0.5,0.5:1", "l7_M": 4096,
    "l9_N": [3000, 30000], "l9_eps": 0.5, "l9_p": 4.0, "l9_c": [0.25, 0.5, 1.0, 2.0, 4.0],
    "l9_methods": "local_rr_vector,central_exp_bins,local_laplace_knn,central_bins_laplace,"
                  "local_laplace_knn_clipped,central_bins_laplace_clipped",
}, quick={"seeds": 4, "N": [1000, 3000, 10000], "eps": [0.5], "p": [4.0], "K": [2, 8],
          "eps_sweep": [0.1, 0.5, 2.0], "N_fixed": 3000, "M": 300,
          "l7_N": [1000, 10000], "l7_pairs": "1:1", "l7_M": 2048,
          "l9_N": [3000], "l9_c": [0.5, 1.0, 2.0], "l9_methods": "local_rr_vector,central_bins_laplace"},
    description="LABEL Table 1: excess risk vs N (local / central / non-private), slopes vs theory, crossover, "
                "eps^2 N effective samples, K-dependence of vector vs K-ary RR, minimax-hard exponents with "
                "margin gamma (L7), theory tuning rules vs oracle constants (L9)")
def build(cfg: dict) -> Study:
    """The ``label-dp-rates`` study: the points of the selected experiments (module docstring), run
    in seed batches of ``SEED_BATCH`` with the rate-mode planners' hyperparameters.

    Args:
        cfg: the resolved configuration: ``experiments``, the ``N``, ε, ``p`` and ``K`` grids, the
            L5, L7 and L9 settings, seeds and the root seed.

    Returns:
        The :class:`jaxdp.studies.Study`; its tables are ``slopes`` (with the theory exponents),
        ``crossover``, ``eps_effective_samples``, ``K_dependence``, ``tuning`` and ``verdicts`` (those
        of the experiments run).

    Raises:
        ValueError: an unknown experiment or L9 method, or no point selected.
    """
    exps = _experiments(cfg)
    pts = []
    for task in ("classification", "regression", "heavy"):
        exp = {"classification": "L1", "regression": "L2"}.get(task, "L3")
        if exp not in exps:
            continue
        for p in (cfg["p"] if task == "heavy" else [0.0]):
            for m in METHODS[task]:
                for eps in (cfg["eps"] if not m.startswith("nonprivate") else [float("inf")]):
                    pts += [_pt(exp, task, m, N, eps, p) for N in cfg["N"]]
    if "L5" in exps:
        for m, task in (("local_rr_vector", "classification"), ("local_laplace_knn", "regression")):
            pts += [_pt("L5", task, m, cfg["N_fixed"], eps) for eps in cfg["eps_sweep"]]
    if "L6" in exps:
        for K in cfg["K"]:
            pts += [_pt("L6", "classification", m, cfg["N_fixed"], 1.0, K=K) for m in ("local_rr_vector", "local_rr_kary")]
    l7_pairs = _pairs(cfg["l7_pairs"])
    if "L7" in exps:
        for beta, gamma in l7_pairs:
            for task in ("bump_cls", "bump_reg"):
                if task == "bump_reg" and gamma != 1.0:     # γ plays no role in regression
                    continue
                for m in L7_METHODS[task]:
                    eps = cfg["l7_eps_local"] if SETTING(m) == "local" else cfg["l7_eps_central"]
                    pts += [_pt("L7", task, m, N, eps, beta=beta, gamma=gamma) for N in cfg["l7_N"]]
    if "L9" in exps:
        for m in [s.strip() for s in str(cfg["l9_methods"]).split(",") if s.strip()]:
            if m not in L9_KNOBS:
                raise ValueError(f"l9_methods: unknown {m!r}; allowed {', '.join(L9_KNOBS)}")
            task = L9_TASK[m]
            p = float(cfg["l9_p"]) if task == "heavy" else 0.0
            pts += [_pt("L9", task, m, N, cfg["l9_eps"], p=p, c=c, knob=L9_KNOBS[m])
                    for N in cfg["l9_N"] for c in cfg["l9_c"]]
    if not pts:
        raise ValueError(f"experiments: nothing selected ({cfg['experiments']!r})")
    N_max = int(max([max(cfg["N"]), cfg["N_fixed"]] + list(cfg["l9_N"])))
    N_max_l7 = int(max(cfg["l7_N"]))
    # cells / bins per axis needed by the smallest bump width (and the quadrature resolving it)
    m0_l7 = int(np.ceil(1.0 / min([float(minimax_h0(s, N_max_l7, float(cfg[f"l7_eps_{s}"]), b))
                                   for s in ("local", "central") for b, _ in l7_pairs] or [1.0]))) + 1

    def run(points, seeds):
        p0 = points[0]
        bump = p0["task"].startswith("bump")
        gen = _gen(p0["task"], p0["p"], p0["K"], p0["beta"], p0["gamma"], m0_max=max(m0_l7, 2))
        if bump:
            fn = make_estimator(gen, p0["method"], N_max=N_max_l7, M=int(cfg["l7_M"]), bins_max=max(m0_l7, 2))
        else:
            fn = make_estimator(gen, p0["method"], N_max=N_max, M=int(cfg["M"]), bins_max=int(cfg["bins_max"]))
        plans, h0 = [], []
        for pt in points:
            kw = {"p": pt["p"]} if pt["task"] == "heavy" else {}
            if pt["task"] in ("classification", "bump_cls"):
                kw["K"] = pt["K"]
            if bump:
                kw["beta"] = pt["beta"]
            if pt["knob"] != "none":
                kw[pt["knob"]] = pt["c"]
            eps = pt["eps"] if np.isfinite(pt["eps"]) else 1e300
            plans.append(plan_for(pt["method"], N=pt["N"], eps=eps, mode="rate", **kw))
            h0.append(float(minimax_h0(SETTING(pt["method"]), pt["N"], pt["eps"], pt["beta"])) if bump else 1.0)
        prm = LabelParams(*[np.asarray([pl[f] for pl in plans]) for f in ("eps", "bins", "k", "clip")])
        prm = prm._replace(eps=np.asarray([pt["eps"] for pt in points]))
        # a chunk's seeds in batches of SEED_BATCH: the same draws (one key per seed index), less memory
        seeds = np.asarray(seeds)
        parts = [run_grid(fn, seed_keys(int(cfg["seed"]), seeds[i:i + SEED_BATCH]),
                          np.asarray([pt["N"] for pt in points]), prm, np.asarray(h0))["excess"]
                 for i in range(0, len(seeds), SEED_BATCH)]
        exc = np.concatenate([np.asarray(e) for e in parts], axis=-1)
        return [{"excess": exc[i]} for i in range(len(points))]

    def analyze(df):
        import pandas as pd

        tables = {}
        main = df[df.experiment.isin(["L1", "L2", "L3"])]
        parts = []
        if len(main):
            sl = fit_slopes(main, "N", "excess", by=["experiment", "task", "method", "eps", "p"], upper_half=False,
                            n_boot=N_BOOT, resample="joint")
            rows = []
            for _, r in sl.iterrows():
                e = label_rate_exponent(r.task, SETTING(r.method), p=r.p if r.task == "heavy" else 2.0)
                rows.append({"beta": 1.0, "gamma": 1.0, "theory_stat": -e["stat"], "theory_priv": -e["priv"]})
            parts.append(pd.concat([sl.reset_index(drop=True), pd.DataFrame(rows)], axis=1))
        l7 = df[df.experiment == "L7"]
        if len(l7):
            sl = fit_slopes(l7, "N", "excess", by=["experiment", "task", "method", "eps", "p", "beta", "gamma"],
                            upper_half=False, n_boot=N_BOOT, resample="joint")
            rows = []
            for _, r in sl.iterrows():
                e = label_rate_exponent("classification" if r.task == "bump_cls" else "regression", SETTING(r.method),
                                        beta=r.beta, gamma=r.gamma if r.task == "bump_cls" else 1.0)
                rows.append({"theory_stat": -e["stat"], "theory_priv": -e["priv"],
                             "theory": l7_theory_slope(r.task, SETTING(r.method), r.beta, r.gamma)})
            parts.append(pd.concat([sl.reset_index(drop=True), pd.DataFrame(rows)], axis=1))
        if parts:
            tables["slopes"] = pd.concat(parts, ignore_index=True)
        if len(main):
            cross = []
            for task in ("classification", "regression", "heavy"):
                for p in (sorted(set(df[df.task == "heavy"].p)) if task == "heavy" else [2.0]):
                    e = label_rate_exponent(task, "central", p=p)
                    a, b = e["stat"], e["priv"]
                    for eps in sorted(set(main.eps[np.isfinite(main.eps)])):
                        cross.append(dict(task=task, p=p, eps=eps, a=a, b=b,
                                          N_crossover=eps ** (-b / (b - a)) if b > a else float("nan")))
            tables["crossover"] = pd.DataFrame(cross)
        l5 = df[df.experiment == "L5"]
        if len(l5):
            eff = fit_slopes(l5[l5.eps <= 1.0], "eps", "excess", by=["task", "method"], upper_half=False,
                             n_boot=N_BOOT, resample="joint")
            eff["theory"] = [-2 * label_rate_exponent(t, "local")["priv"] for t in eff.task]
            tables["eps_effective_samples"] = eff
        if (df.experiment == "L6").any():
            tables["K_dependence"] = summarize(df[df.experiment == "L6"], ["K", "method"], ["excess"])
        if (df.experiment == "L9").any():
            tables["tuning"] = tuning_table(df[df.experiment == "L9"])
        tables["verdicts"] = verdicts(df, tables)
        return tables

    def plot(df, outdir: pathlib.Path):
        paths = _plot(df, outdir)
        # a kept run: regenerate the docs' verdict tables from the tables just written
        out = pathlib.Path(outdir).resolve()
        if out.parent == (ROOT / "results").resolve() and out.name in KEPT and (out / "results.csv").exists():
            publish(out)
        return paths

    def _plot(df, outdir: pathlib.Path):
        paths = []
        for exp in ("L1", "L2", "L3"):
            sub = df[df.experiment == exp]
            if not len(sub):
                continue
            s = summarize(sub.assign(curve=sub.method + " eps=" + sub.eps.astype(str) + " p=" + sub.p.astype(str)),
                          ["curve", "N"], ["excess"])
            task = sub.task.iloc[0]
            Ns = np.asarray(sorted(sub.N.unique()), float)
            theory = {}
            for eps in sorted(set(sub.eps[np.isfinite(sub.eps)])):
                for st in ("local", "central"):
                    y = label_rates(task, st, Ns, eps, p=float(sub.p.max()) if task == "heavy" else 2.0)
                    theory[f"{st} theory eps={eps}"] = (Ns, y)
            paths.append(plot_curves(s, "N", "excess", outdir / f"{exp}_excess_vs_N.png", hue="curve", theory=theory,
                                     title=f"{exp}: {task} (rate-mode parameters)"))
        if (df.experiment == "L6").any():
            l6 = summarize(df[df.experiment == "L6"], ["K", "method"], ["excess"])
            paths.append(plot_curves(l6, "K", "excess", outdir / "L6_K_dependence.png", hue="method",
                                     title="L6: vector RR vs K-ary RR"))
        l7 = df[df.experiment == "L7"]
        for task in ("bump_cls", "bump_reg"):
            sub = l7[l7.task == task]
            if not len(sub):
                continue
            sub = sub.assign(curve=sub.method + " b=" + sub.beta.astype(str) + " g=" + sub.gamma.astype(str))
            s = summarize(sub, ["curve", "method", "beta", "gamma", "N"], ["excess"])
            theory = {}
            for (curve, m, b, g), grp in s.groupby(["curve", "method", "beta", "gamma"]):
                grp = grp.sort_values("N")
                Ns = grp.N.to_numpy(float)
                sl = l7_theory_slope(task, SETTING(m), b, g)
                # theory line through the first empirical point (the constants are not known)
                theory[f"{curve} slope {sl:.3g}"] = (Ns, grp.excess_mean.iloc[0] * (Ns / Ns[0]) ** sl)
            paths.append(plot_curves(s, "N", "excess", outdir / f"L7_minimax_{task}.png", hue="curve", theory=theory,
                                     title=f"L7: minimax-hard {task}, h0 = lower-bound bandwidth "
                                           f"(eps local {cfg['l7_eps_local']}, central {cfg['l7_eps_central']})"))
        l9 = df[df.experiment == "L9"]
        if len(l9):
            l9 = l9.assign(curve=l9.method + " N=" + l9.N.astype(str))
            s = summarize(l9, ["curve", "c"], ["excess"])
            ref = s[np.isclose(s.c, 1.0)].set_index("curve").excess_mean
            for col in ("excess_mean", "excess_lo", "excess_hi"):
                s[col] = s[col] / s.curve.map(ref).to_numpy()
            paths.append(plot_curves(s, "c", "excess", outdir / "L9_tuning.png", hue="curve",
                                     ylabel="excess / excess at theory constant (c=1)",
                                     title="L9: theory rule (c=1) vs constant c x theory"))
        return paths

    return Study(name="label-dp-rates", points=pts, seeds=int(cfg["seeds"]), run=run, check_point=_plan_point,
                 group_by=("task", "method", "p", "K", "beta", "gamma"), analyze=analyze, plot=plot, config=cfg,
                 seeds_per_chunk=SEEDS_PER_CHUNK)


def tuning_table(df, n_boot: int = 1000, seed: int = 0):
    """L9: per (task, method, N, eps, p): the oracle constant ``c* = argmin_c mean excess(c)`` and
    ``ratio = mean excess(c=1) / mean excess(c*)`` (≥ 1) with a 95% bootstrap CI that resamples
    seeds jointly across ``c`` (every ``c`` sees the same datasets: common random numbers).

    Args:
        df: the L9 rows of the per-seed results (columns ``task``, ``method``, ``knob``, ``N``, ``eps``,
            ``p``, ``c``, ``seed``, ``excess``).
        n_boot: bootstrap replicates.
        seed: seed of the resampling generator.

    Returns:
        One row per group with ``c = 1`` on its grid: ``n_seeds``, ``excess_theory`` (at ``c = 1``),
        ``c_oracle``, ``excess_oracle``, ``ratio``, ``ratio_lo``, ``ratio_hi`` and ``c_grid``.
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    for key, g in df.groupby(["task", "method", "knob", "N", "eps", "p"], sort=True):
        tab = g.pivot_table(index="seed", columns="c", values="excess", aggfunc="mean").dropna()
        cs = tab.columns.to_numpy(float)
        if not np.any(np.isclose(cs, 1.0)) or tab.empty:
            continue
        i1 = int(np.argmin(np.abs(cs - 1.0)))
        vals = tab.to_numpy(float)
        means = vals.mean(axis=0)
        boots = np.empty(n_boot)
        for b in range(n_boot):
            mb = vals[rng.integers(0, len(vals), len(vals))].mean(axis=0)
            # 0/0 (every resampled seed exact at the best c and at c = 1) counts as ratio 1
            boots[b] = 1.0 if mb[i1] == mb.min() else (mb[i1] / mb.min() if mb.min() > 0 else np.inf)
        rows.append(dict(zip(["task", "method", "knob", "N", "eps", "p"], key), n_seeds=len(vals),
                         excess_theory=means[i1], c_oracle=cs[int(np.argmin(means))], excess_oracle=means.min(),
                         ratio=1.0 if means[i1] == means.min() else (means[i1] / means.min() if means.min() > 0 else np.inf),
                         ratio_lo=float(np.quantile(boots, 0.025, method="inverted_cdf")),
                         ratio_hi=float(np.quantile(boots, 0.975, method="inverted_cdf")), c_grid=",".join(f"{c:g}" for c in cs)))
    return pd.DataFrame(rows)


def _lbl_cell(r) -> str:
    eps = "" if not np.isfinite(r["eps"]) else f", ε = {r['eps']:g}"
    p = f", p = {r['p']:g}" if r["task"] == "heavy" else ""
    return f"{r['task']}, {r['method']}{p}{eps}"


def _claim(key: str, value: float, link: str | None = None) -> Claim:
    """The claim ``CLAIMS[key]`` with the cell's exponent (and the section that explains a miss of this cell)."""
    c = CLAIMS[key]
    return dataclasses.replace(c, value=float(value), link=c.link if link is None else link)


def _judge(claim: Claim, m: Measurement) -> Verdict:
    """:func:`jaxdp.studies.claims.judge`, with the reason of an unresolved exponent restated: the rubric counts the
    seeds that bring the half-width to the tolerance, but an interval off the claim's centre can be narrower than
    the tolerance and still reach past it; it resolves (holds or misses, the estimate staying put) once its
    half-width is at most the larger of its distance to the claim and its room inside the tolerance."""
    v = judge(claim, m)
    if v.verdict != "consistent, unresolved":
        return v
    hw, d, tol = (m.hi - m.lo) / 2, m.estimate - claim.value, claim.tolerance
    inside = {"rate": -abs(d), "at_most_rate": -d, "at_least_rate": d}[claim.kind]   # > 0: on the claimed side
    need = seeds_to_resolve(hw, m.n_seeds, max(inside + tol, -inside))
    c = f"{claim.value:.3f}".replace("-", "−")
    return Verdict(v.verdict, f"the interval contains the claim but reaches past its tolerance {tol:g} (half-width "
                              f"{hw:.3f}, {abs(d):.3f} from {c}) at {m.n_seeds} seeds per point (about {need} would "
                              "resolve it)")


def _judge_range(lo: Claim, hi: Claim, m: Measurement) -> Verdict:
    """A slope claimed between two exponents (two one-sided claims): the first of not tested, misses, unresolved."""
    vs = [_judge(lo, m), _judge(hi, m)]
    return next((v for k in VERDICTS[::-1] for v in vs if v.verdict == k and k != "holds"), Verdict("holds"))


def verdicts(df, tables) -> "pd.DataFrame":
    """One verdict per fitted curve of the run against :data:`CLAIMS`, by the generic rubric
    (:func:`jaxdp.studies.claims.judge`; tolerance :data:`TOL` on every exponent).

    L1–L3 and L8: the slope in ``N`` against LABEL Table 1 (:func:`jaxdp.label_dp.rates.label_rate_exponent`);
    local and non-private rates are single power laws (``"rate"``); a central rate ``N^{-a} + (εN)^{-b}`` has a
    slope between ``-b`` and ``-a`` at every ``N``, two one-sided claims. L5: the slope in ``Nε²`` (half the slope
    in ε at fixed ``N``). L7: the minimax-hard bumps' exponent. L6 states no exponent (not tested). L9: the theory
    constant's excess over the oracle's must not grow with ``N`` (an order: the slope of the log ratio ≤ 0). Every
    slope is judged over the decades of its fitted range.

    Args:
        df: the per-seed results (the L6 and L9 rows are fitted here).
        tables: the analysis tables (``slopes``, ``eps_effective_samples``), as ``analyze`` or the kept CSVs give.

    Returns:
        The verdict rows in the columns of :func:`jaxdp.studies.analysis.verdict_table`.
    """
    import pandas as pd

    rows = []

    def add(exp, cell, claim, r, m, v, kind="equals", claimed=None, claimed_hi=np.nan):
        rows.append(dict(experiment=exp, cell=cell, claim=claim.text, kind=kind, claimed_hi=claimed_hi,
                         claimed=claim.value if claimed is None else claimed, slope=r["slope"],
                         slope_lo=r["slope_lo"], slope_hi=r["slope_hi"], n_seeds=int(m.n_seeds), verdict=v.verdict,
                         reason=v.reason, link=claim.link if v.verdict == "misses" else ""))

    def meas(r, scale=1.0, decades=None):
        return Measurement(r["slope"] / scale, r["slope_lo"] / scale, r["slope_hi"] / scale, int(r["n_seeds"]),
                           decades=math.log10(r["x_max"] / r["x_min"]) if decades is None else decades)

    sl = tables.get("slopes")
    for _, r in (sl.iterrows() if sl is not None else ()):
        m, setting = meas(r), SETTING(r["method"])
        if r["experiment"] == "L7":
            c = _claim("L7 " + r["task"], r["theory"])
            add("L7", f"{r['task']}, {setting} ({r['method']}), (β, γ) = ({r['beta']:g}, {r['gamma']:g})", c, r, m,
                _judge(c, m))
            continue
        exp = "L8" if (r["task"] == "heavy" and setting == "nonprivate") else r["experiment"]
        a, b = float(r["theory_stat"]), float(r["theory_priv"])      # negative exponents
        if setting == "central":
            lo_c, hi_c = _claim("central ≥", min(a, b)), _claim("central ≤", max(a, b))
            add(exp, _lbl_cell(r), lo_c, r, m, _judge_range(lo_c, hi_c, m), "between", min(a, b), max(a, b))
            continue
        link = None
        if setting == "local":
            small = r["eps"] ** 2 * r["x_max"] <= 1e4
            link = WHY["small_neps"] if small else (WHY["clip_bias"] if r["task"] == "heavy" else WHY["other"])
        c = _claim({"nonprivate": "nonprivate", "local": "local heavy" if r["task"] == "heavy" else "local"}[setting],
                   b if setting == "local" else a, link)
        add(exp, _lbl_cell(r), c, r, m, _judge(c, m))
    eff = tables.get("eps_effective_samples")
    for _, r in (eff.iterrows() if eff is not None else ()):
        nf = int(df[(df.experiment == "L5") & (df.method == r["method"])].N.iloc[0])
        m = meas(r, 2.0, math.log10((r["x_max"] / r["x_min"]) ** 2))     # Nε² spans the square of ε's range
        c = _claim("L5", r["theory"] / 2)
        add("L5", f"{r['task']}, {r['method']}, excess vs ε ≤ 1 at N = {nf}", c,
            dict(slope=m.estimate, slope_lo=m.lo, slope_hi=m.hi), m, _judge(c, m))
    for mth, g in df[df.experiment == "L6"].groupby("method"):
        r = fit_slopes(g, "K", "excess", upper_half=False, n_boot=N_BOOT, resample="joint").iloc[0]
        add("L6", f"{mth}, excess vs K at N = {int(g.N.iloc[0])}, ε = {g.eps.iloc[0]:g}", CLAIMS["L6"], r, meas(r),
            Verdict("not tested", "Table 1 states no K-exponent; K_dependence.csv compares the mechanisms"),
            claimed=np.nan)
    l9 = df[df.experiment == "L9"]
    rng = np.random.default_rng(2)
    for (mth, eps, p), g in (l9.groupby(["method", "eps", "p"]) if l9.N.nunique() >= 2 else ()):
        tab = g.pivot_table(index="seed", columns=["N", "c"], values="excess", aggfunc="mean").dropna()
        Ns, cs = sorted(g.N.unique()), np.asarray(sorted(g.c.unique()), float)
        i1, xc = int(np.argmin(np.abs(cs - 1.0))), np.log(np.asarray(Ns, float)) - np.log(np.asarray(Ns, float)).mean()
        vals = tab.to_numpy(float).reshape(len(tab), len(Ns), len(cs))

        def lslope(v):                  # slope in log N of log(excess(c=1) / min_c excess(c)), v: (..., seed, N, c)
            mm = v.mean(axis=-3)
            lr = np.log(mm[..., i1] / mm.min(axis=-1))
            return (lr - lr.mean(axis=-1, keepdims=True)) @ xc / (xc @ xc)

        lo, hi = np.nanquantile(lslope(vals[rng.integers(0, len(vals), size=(N_BOOT, len(vals)))]), [0.025, 0.975])
        r = dict(slope=float(lslope(vals)), slope_lo=lo, slope_hi=hi)
        m = Measurement(r["slope"], lo, hi, len(vals), decades=math.log10(Ns[-1] / Ns[0]))
        v = _judge(CLAIMS["L9"], m) if hi > lo else Verdict("not tested", "c = 1 is the oracle's constant at every N "
                                                            "in every resample: no sampling interval")
        add("L9", f"{mth}, ε = {eps:g}" + (f", p = {p:g}" if L9_TASK[mth] == "heavy" else "") +
            f", N = {Ns[0]}…{Ns[-1]}", CLAIMS["L9"], r, m, v, "at_most")
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated verdict blocks of the kept runs, from their ``results.csv``, ``slopes.csv`` and
    ``eps_effective_samples.csv`` (:func:`verdicts`; files are read, never written).

    Args:
        results_dir: one kept results directory (its name a key of :data:`KEPT`); default: every kept run.

    Returns:
        ``{block name: Markdown}``.

    Raises:
        ValueError: ``results_dir`` is not a kept results directory.
    """
    import json

    import pandas as pd

    dirs = [pathlib.Path(results_dir)] if results_dir is not None else [ROOT / "results" / n for n in KEPT]
    out = {}
    for d in dirs:
        name = d.resolve().name
        if name not in KEPT:
            raise ValueError(f"{d}: not a kept label-dp-rates results directory ({', '.join(KEPT)})")
        tables = {t: pd.read_csv(d / f"{t}.csv") for t in ("slopes", "eps_effective_samples") if (d / f"{t}.csv").exists()}
        v = verdicts(pd.read_csv(d / "results.csv"), tables)
        manifest = json.loads((d / "manifest.json").read_text())
        counts = v["verdict"].value_counts()
        tally = ", ".join(f"{int(counts[k])} {k}" for k in VERDICTS if k in counts)
        files = [f"results/{name}/{f}.csv" for f in ("results", *tables)]
        head = (generated_from("label_dp_rates", *files) + f" **{int(manifest['seeds'])} seeds per point**, "
                f"{int(manifest['n_points'])} grid points. One row per fitted curve, {len(v)} in all: {tally}; no two "
                "rows are the same evidence (curves of different experiments share at most one point). The claims are "
                "LABEL Table 1's exponents, judged by the rubric of the [results overview](../results/index.md#verdicts) "
                f"with a tolerance of {TOL:g} on every exponent, each slope over the decades of its fitted range (a "
                "rate needs two): a local or non-private rate is one exponent; a central rate "
                "`N^{−a} + (εN)^{−b}` is two one-sided claims, a slope between −b and −a (`a … b`); L5 is the slope "
                "in `Nε²` (half the slope in ε); L9's ratio not growing with N is an order (`≤`). Slopes are "
                "least-squares fits over the whole grid; every point of a curve uses the same seed keys, so each "
                "interval is a 95% percentile bootstrap over seed indices resampled jointly across the curve's "
                f"points ({N_BOOT} replicates).")
        out[KEPT[name]] = head + "\n\n" + verdict_table(v)
    return out


def publish(results_dir=None) -> list:
    """Rewrite the verdict blocks of :data:`DOC_PAGES` from the kept runs (:func:`page_blocks`).

    Args:
        results_dir: one kept results directory; default: every kept run.

    Returns:
        The pages that changed.
    """
    blocks = page_blocks(results_dir)
    return [p for p in DOC_PAGES if publish_blocks(ROOT / p, blocks)]
