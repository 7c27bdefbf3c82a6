"""Study ``label-dp-rates``: LABEL Table 1 measured (docs/algorithms/label-dp.md#studies).

Experiments L1–L9, spec and claims: ``specs/label-dp-rates.toml``; page prose: ``specs/label-dp-rates.md`` (one
verdict block per kept run, on the results page and the algorithm page). Every point runs at its rate-mode planner's
hyperparameters (:func:`jaxdp.label_dp.run_planned`); L9 compares them with an oracle constant (:func:`tuning_table`).
"""
from __future__ import annotations

import dataclasses
import math
import pathlib

import numpy as np
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from jaxdp.core import seed_keys
from jaxdp.label_dp import central_crossover, run_planned, setting_of
from jaxdp.label_dp.planners import plan_for_task
from jaxdp.label_dp.rates import bump_slope, label_rate_exponent, minimax_h0
from .specs import ROOT
from jaxdp.studies.claims import VERDICTS, Claim, Measurement, Verdict, judge, tally, verdict_row
from jaxdp.studies.framework import Study, fit_slopes, plot_curves, summarize, verdict_table
from jaxdp.studies.specs import StudySpec

EXPERIMENTS = ("L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9")


def _check_pair(s):
    try:
        b, g = (float(v) for v in s.split(":"))
    except ValueError:
        return "not BETA:GAMMA"
    return None if (np.isfinite(b) and np.isfinite(g) and b > 0 and g > 0) else "BETA and GAMMA must be finite and > 0"


S = StudySpec("label-dp-rates", __name__, checks={
    "experiments": lambda e: None if e.strip().upper() in EXPERIMENTS else f"unknown experiment {e!r}",
    "l7_pairs": _check_pair})
PARAMS, CLAIMS, BLOCKS = S.params, S.claims, S.blocks
#: the kept runs: results directory -> generated-block name (on every page of DOC_PAGES)
KEPT = dict(zip(("label-dp-rates", "label-dp-rates-heavy"), BLOCKS))
DOC_PAGES = S.pages
DOC_PAGE = ROOT / DOC_PAGES[0]
WHY = {"clip_bias": "../results/label-dp-rates.md#why-clipping-bias",
       "small_neps": "../results/label-dp-rates.md#why-small-n-eps2",
       "other": "../results/label-dp-rates.md#why-other"}
TOL = CLAIMS["local"].tolerance
METHODS = {
    "classification": ("local_rr_vector", "central_exp_bins", "nonprivate_bins_cls"),
    "regression": ("local_laplace_knn", "central_bins_laplace", "nonprivate_knn"),
    "heavy": ("local_laplace_knn_clipped", "central_bins_laplace_clipped", "nonprivate_knn"),
}
L7_METHODS = {"bump_cls": ("local_rr_vector", "central_exp_bins"),
              "bump_reg": ("local_laplace_knn", "central_bins_laplace")}
# L9: the constant each rule exposes (bins: c_h; kNN: c_k; clipped methods: the clipping level c_T), and its task
L9_KNOBS = {"local_rr_vector": "c_h", "central_exp_bins": "c_h", "local_laplace_knn": "c_k",
            "central_bins_laplace": "c_h", "local_laplace_knn_clipped": "c_T", "central_bins_laplace_clipped": "c_T"}
L9_TASK = {m: task for task, ms in METHODS.items() for m in ms if m in L9_KNOBS}
N_BOOT = 1000
SEED_BATCH = 4         # seeds evaluated at once inside a chunk (memory; the results do not depend on it)
SEEDS_PER_CHUNK = 64   # seed blocks per chunk: bounds memory (kNN over N x M per seed) and makes resumption finer
L7_C_M = 2.0   # bumps: m = min(G, ⌊C_M h0^{γβ-d}⌋)


def _pairs(s):
    return [tuple(float(v) for v in part.split(":")) for part in str(s).replace(";", ",").split(",") if part.strip()]


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


def _plan_point(pt: dict):
    """The planner call of one grid point (host side)."""
    return plan_for_task(pt["method"], pt["task"], **{k: pt[k] for k in ("N", "eps", "p", "K", "beta", "knob", "c")})


def _pt(experiment, task, method, N, eps, p=0.0, K=2, beta=1.0, gamma=1.0, c=1.0, knob="none"):
    return dict(experiment=experiment, task=task, method=method, N=int(N), eps=float(eps), p=float(p), K=int(K),
                beta=float(beta), gamma=float(gamma), c=float(c), knob=knob)


def _points(cfg: dict, exps: set) -> list:
    """The grid points of the selected experiments."""
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
            pts += [_pt("L6", "classification", m, cfg["N_fixed"], 1.0, K=K)
                    for m in ("local_rr_vector", "local_rr_kary")]
    if "L7" in exps:
        for beta, gamma in _pairs(cfg["l7_pairs"]):
            for task in ("bump_cls", "bump_reg"):
                if task == "bump_reg" and gamma != 1.0:     # γ plays no role in regression
                    continue
                for m in L7_METHODS[task]:
                    eps = cfg["l7_eps_local"] if setting_of(m) == "local" else cfg["l7_eps_central"]
                    pts += [_pt("L7", task, m, N, eps, beta=beta, gamma=gamma) for N in cfg["l7_N"]]
    if "L9" in exps:
        for m in [s.strip() for s in str(cfg["l9_methods"]).split(",") if s.strip()]:
            if m not in L9_KNOBS:
                raise ValueError(f"l9_methods: unknown {m!r}; allowed {', '.join(L9_KNOBS)}")
            p = float(cfg["l9_p"]) if L9_TASK[m] == "heavy" else 0.0
            pts += [_pt("L9", L9_TASK[m], m, N, cfg["l9_eps"], p=p, c=c, knob=L9_KNOBS[m])
                    for N in cfg["l9_N"] for c in cfg["l9_c"]]
    if not pts:
        raise ValueError(f"experiments: nothing selected ({cfg['experiments']!r})")
    return pts


def _slope_rows(df, by, theory) -> "pd.DataFrame":
    """The slopes in N of ``df``'s curves (grouped ``by``), each row with the columns ``theory(r)`` gives."""
    import pandas as pd

    sl = fit_slopes(df, "N", "excess", by=by, upper_half=False, n_boot=N_BOOT, resample="joint")
    return pd.concat([sl.reset_index(drop=True), pd.DataFrame([theory(r) for _, r in sl.iterrows()])], axis=1)


def _main_theory(r) -> dict:
    e = label_rate_exponent(r.task, setting_of(r.method), p=r.p if r.task == "heavy" else 2.0)
    return {"beta": 1.0, "gamma": 1.0, "theory_stat": -e["stat"], "theory_priv": -e["priv"]}


def _l7_theory(r) -> dict:
    e = label_rate_exponent("classification" if r.task == "bump_cls" else "regression", setting_of(r.method),
                            beta=r.beta, gamma=r.gamma if r.task == "bump_cls" else 1.0)
    return {"theory_stat": -e["stat"], "theory_priv": -e["priv"],
            "theory": bump_slope(r.task, setting_of(r.method), r.beta, r.gamma)}


def _crossover(df, main) -> "pd.DataFrame":
    """L4: the central crossover ``N_c = ε^{-b/(b-a)}`` of every task, p and ε of the run."""
    import pandas as pd

    cross = []
    for task in ("classification", "regression", "heavy"):
        for p in (sorted(set(df[df.task == "heavy"].p)) if task == "heavy" else [2.0]):
            cross += [dict(task=task, p=p, eps=eps, **central_crossover(task, eps, p))
                      for eps in sorted(set(main.eps[np.isfinite(main.eps)]))]
    return pd.DataFrame(cross)


@S.register
def build(cfg: dict) -> Study:
    """The selected experiments' points in seed batches of ``SEED_BATCH``, at the rate-mode planners' values."""
    import pandas as pd

    pts = _points(cfg, _experiments(cfg))
    l7_pairs = _pairs(cfg["l7_pairs"])
    N_max = int(max([max(cfg["N"]), cfg["N_fixed"]] + list(cfg["l9_N"])))
    N_max_l7 = int(max(cfg["l7_N"]))
    # cells / bins per axis needed by the smallest bump width (and the quadrature resolving it)
    m0_l7 = int(np.ceil(1.0 / min([float(minimax_h0(s, N_max_l7, float(cfg[f"l7_eps_{s}"]), b))
                                   for s in ("local", "central") for b, _ in l7_pairs] or [1.0]))) + 1

    def run(points, seeds):   # a chunk's seeds in batches of SEED_BATCH: the same draws (one key per seed index)
        p0, seeds = points[0], np.asarray(seeds)
        size = (dict(N_max=N_max_l7, M=int(cfg["l7_M"]), bins_max=max(m0_l7, 2)) if p0["task"].startswith("bump")
                else dict(N_max=N_max, M=int(cfg["M"]), bins_max=int(cfg["bins_max"])))
        parts = [run_planned(p0["task"], p0["method"], seed_keys(int(cfg["seed"]), seeds[i:i + SEED_BATCH]),
                             [pt["N"] for pt in points], [pt["eps"] for pt in points], [pt["c"] for pt in points],
                             **{k: p0[k] for k in ("p", "K", "beta", "gamma", "knob")}, C_M=L7_C_M,
                             m0_max=max(m0_l7, 2), **size) for i in range(0, len(seeds), SEED_BATCH)]
        exc = np.concatenate([np.asarray(e) for e in parts], axis=-1)
        return [{"excess": exc[i]} for i in range(len(points))]

    def analyze(df):
        tables, parts = {}, []
        main, l7, l5 = df[df.experiment.isin(["L1", "L2", "L3"])], df[df.experiment == "L7"], df[df.experiment == "L5"]
        if len(main):
            parts.append(_slope_rows(main, ["experiment", "task", "method", "eps", "p"], _main_theory))
        if len(l7):
            parts.append(_slope_rows(l7, ["experiment", "task", "method", "eps", "p", "beta", "gamma"], _l7_theory))
        if parts:
            tables["slopes"] = pd.concat(parts, ignore_index=True)
        if len(main):
            tables["crossover"] = _crossover(df, main)
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

    return S.study(cfg, points=pts, run=run, check_point=_plan_point, analyze=analyze,
                   plot=lambda df, outdir: _plot(df, pathlib.Path(outdir), cfg),
                   seeds_per_chunk=SEEDS_PER_CHUNK, description="")


def _plot(df, outdir: pathlib.Path, cfg: dict) -> list:
    """One figure per experiment run (L1–L3 and L7 per task vs N, L6 vs K, L9 vs c): mean excess with 95% CIs."""
    figs = [(e, e, "N", f"{e}_excess_vs_N") for e in ("L1", "L2", "L3")] + [("L6", "L6", "K", "L6_K_dependence")]
    figs += [("L7", t, "N", f"L7_minimax_{t}") for t in ("bump_cls", "bump_reg")] + [("L9", "L9", "c", "L9_tuning")]
    paths = []
    for exp, sel, x, name in figs:
        sub = df[(df.experiment == exp) & ((df.task == sel) | (exp == sel))]
        if len(sub):
            sub = sub.assign(curve=[_lbl_cell(r) + (f", N = {r['N']}" if x != "N" else "") for _, r in sub.iterrows()])
            paths.append(plot_curves(summarize(sub, ["curve", x], ["excess"]), x, "excess", outdir / f"{name}.png",
                                     hue="curve", title=f"{exp}: {sel} (rate-mode parameters)"))
    return paths


def _ratio(means, i1) -> float:
    """``means[i1] / min(means)``; 0/0 (exact at the best c and at c = 1) counts as ratio 1."""
    return 1.0 if means[i1] == means.min() else (means[i1] / means.min() if means.min() > 0 else np.inf)


def tuning_table(df, n_boot: int = 1000, seed: int = 0):
    """L9 per (task, method, N, ε, p): the oracle ``c*`` and ``mean excess(c=1) / mean excess(c*)`` with a seed-joint
    95% bootstrap CI."""
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
        boots = np.array([_ratio(vals[rng.integers(0, len(vals), len(vals))].mean(axis=0), i1) for _ in range(n_boot)])
        rows.append(dict(zip(["task", "method", "knob", "N", "eps", "p"], key), n_seeds=len(vals),
                         excess_theory=means[i1], c_oracle=cs[int(np.argmin(means))], excess_oracle=means.min(),
                         ratio=_ratio(means, i1), ratio_lo=float(np.quantile(boots, 0.025, method="inverted_cdf")),
                         ratio_hi=float(np.quantile(boots, 0.975, method="inverted_cdf")),
                         c_grid=",".join(f"{c:g}" for c in cs)))
    return pd.DataFrame(rows)


def _lbl_cell(r) -> str:
    eps = "" if not np.isfinite(r["eps"]) else f", ε = {r['eps']:g}"
    p = f", p = {r['p']:g}" if r["task"] == "heavy" else ""
    return f"{r['task']}, {r['method']}{p}{eps}"


def _claim(key: str, value: float, link: str | None = None) -> Claim:
    """``CLAIMS[key]`` with the cell's exponent (and the section that explains a miss of this cell)."""
    c = CLAIMS[key]
    return dataclasses.replace(c, value=float(value), link=c.link if link is None else link)


def _judge_range(lo: Claim, hi: Claim, m: Measurement) -> Verdict:
    """A slope claimed between two exponents (two one-sided claims): the first of not tested, misses, unresolved."""
    vs = [judge(lo, m), judge(hi, m)]
    return next((v for k in VERDICTS[::-1] for v in vs if v.verdict == k and k != "holds"), Verdict("holds"))


def _meas(r, scale=1.0, decades=None) -> Measurement:
    return Measurement(r["slope"] / scale, r["slope_lo"] / scale, r["slope_hi"] / scale, int(r["n_seeds"]),
                       decades=math.log10(r["x_max"] / r["x_min"]) if decades is None else decades)


def _l9_slope(g, rng):
    """The slope in log N of log(excess(c=1) / min_c excess(c)) of one L9 curve, its bootstrap interval, seeds, Ns."""
    tab = g.pivot_table(index="seed", columns=["N", "c"], values="excess", aggfunc="mean").dropna()
    Ns, cs = sorted(g.N.unique()), np.asarray(sorted(g.c.unique()), float)
    i1, xc = int(np.argmin(np.abs(cs - 1.0))), np.log(np.asarray(Ns, float)) - np.log(np.asarray(Ns, float)).mean()
    vals = tab.to_numpy(float).reshape(len(tab), len(Ns), len(cs))

    def lslope(v):                  # v: (..., seed, N, c)
        mm = v.mean(axis=-3)
        lr = np.log(mm[..., i1] / mm.min(axis=-1))
        return (lr - lr.mean(axis=-1, keepdims=True)) @ xc / (xc @ xc)

    lo, hi = np.nanquantile(lslope(vals[rng.integers(0, len(vals), size=(N_BOOT, len(vals)))]), [0.025, 0.975])
    return Measurement(float(lslope(vals)), lo, hi, len(vals), decades=math.log10(Ns[-1] / Ns[0])), Ns


def verdicts(df, tables) -> "pd.DataFrame":
    """One verdict per fitted curve of ``tables`` (and of ``df``'s L6/L9 rows) against :data:`CLAIMS`: L1–L3/L8 the
    slope in N (central: between −b and −a), L5 the slope in Nε², L7 the bumps', L6 not tested, L9 the log ratio's."""
    import pandas as pd

    rows = []

    def add(exp, cell, claim, m, v, **kw):
        rows.append(verdict_row(claim, m, v, experiment=exp, cell=cell, **kw))

    sl = tables.get("slopes")
    for _, r in (sl.iterrows() if sl is not None else ()):
        m, setting = _meas(r), setting_of(r["method"])
        if r["experiment"] == "L7":
            c = _claim("L7 " + r["task"], r["theory"])
            add("L7", f"{r['task']}, {setting} ({r['method']}), (β, γ) = ({r['beta']:g}, {r['gamma']:g})", c, m,
                judge(c, m))
            continue
        exp = "L8" if (r["task"] == "heavy" and setting == "nonprivate") else r["experiment"]
        a, b = float(r["theory_stat"]), float(r["theory_priv"])      # negative exponents
        if setting == "central":
            lo_c, hi_c = _claim("central ≥", min(a, b)), _claim("central ≤", max(a, b))
            add(exp, _lbl_cell(r), lo_c, m, _judge_range(lo_c, hi_c, m), kind="between", claimed=min(a, b),
                claimed_hi=max(a, b))
            continue
        link = None
        if setting == "local":
            small = r["eps"] ** 2 * r["x_max"] <= 1e4
            link = WHY["small_neps"] if small else (WHY["clip_bias"] if r["task"] == "heavy" else WHY["other"])
        c = _claim({"nonprivate": "nonprivate", "local": "local heavy" if r["task"] == "heavy" else "local"}[setting],
                   b if setting == "local" else a, link)
        add(exp, _lbl_cell(r), c, m, judge(c, m))
    eff = tables.get("eps_effective_samples")
    for _, r in (eff.iterrows() if eff is not None else ()):
        nf = int(df[(df.experiment == "L5") & (df.method == r["method"])].N.iloc[0])
        m = _meas(r, 2.0, math.log10((r["x_max"] / r["x_min"]) ** 2))     # Nε² spans the square of ε's range
        c = _claim("L5", r["theory"] / 2)
        add("L5", f"{r['task']}, {r['method']}, excess vs ε ≤ 1 at N = {nf}", c, m, judge(c, m))
    for mth, g in df[df.experiment == "L6"].groupby("method"):
        r = fit_slopes(g, "K", "excess", upper_half=False, n_boot=N_BOOT, resample="joint").iloc[0]
        add("L6", f"{mth}, excess vs K at N = {int(g.N.iloc[0])}, ε = {g.eps.iloc[0]:g}", CLAIMS["L6"], _meas(r),
            Verdict("not tested", "Table 1 states no K-exponent; K_dependence.csv compares the mechanisms"))
    l9, rng = df[df.experiment == "L9"], np.random.default_rng(2)
    for (mth, eps, p), g in (l9.groupby(["method", "eps", "p"]) if l9.N.nunique() >= 2 else ()):
        m, Ns = _l9_slope(g, rng)
        v = judge(CLAIMS["L9"], m) if m.hi > m.lo else Verdict("not tested", "c = 1 is the oracle's constant at "
                                                                "every N in every resample: no sampling interval")
        add("L9", f"{mth}, ε = {eps:g}" + (f", p = {p:g}" if L9_TASK[mth] == "heavy" else "") +
            f", N = {Ns[0]}…{Ns[-1]}", CLAIMS["L9"], m, v)
    cols = ["experiment", "cell", "claim", "kind", "claimed_hi", "claimed", "slope", "slope_lo", "slope_hi", "n_seeds",
            "verdict", "reason", "link"]
    return pd.DataFrame(rows, columns=cols)


def page_blocks(results_dir=None) -> dict:
    """``{block name: Markdown}``: the verdict block of one kept run (a key of :data:`KEPT`), default of each."""
    import json

    import pandas as pd

    dirs = [pathlib.Path(results_dir)] if results_dir is not None else [ROOT / "results" / n for n in KEPT]
    out = {}
    for d in dirs:
        name = d.resolve().name
        if name not in KEPT:
            raise ValueError(f"{d}: not a kept label-dp-rates results directory ({', '.join(KEPT)})")
        tables = {t: pd.read_csv(d / f"{t}.csv") for t in ("slopes", "eps_effective_samples")
                  if (d / f"{t}.csv").exists()}
        v = verdicts(pd.read_csv(d / "results.csv"), tables)
        manifest = json.loads((d / "manifest.json").read_text())
        files = [f"results/{name}/{f}.csv" for f in ("results", *tables)]
        out[KEPT[name]] = S.render("verdicts", generated=S.generated(*files), seeds=int(manifest["seeds"]),
                                   n_points=int(manifest["n_points"]), rows=len(v), tally=tally(v),
                                   tol=f"{TOL:g}", n_boot=N_BOOT, table=verdict_table(v))
    return out


publish = S.publisher(page_blocks)
