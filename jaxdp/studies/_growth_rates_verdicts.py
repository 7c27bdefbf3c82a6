"""The ``growth-rates`` study's analysis: fitted slopes and summaries, G4's quadrature check, one verdict per
(experiment, cell) with the reason for a miss, and the Markdown block of the verdicts.

Re-exported by :mod:`jaxdp.studies.growth_rates`.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from ..sco import plan_grad_inverse_sensitivity
from ._growth_rates_grid import _ALGO_KEYS, _xcol, make_instance, theory_exponent
from .framework import fit_slopes, joint_slope_boot, slope_verdict, summarize, verdict_table


N_BOOT = 1000
GEPS_FLOOR_SHARE = 0.1   # Geps: fit only the ε whose mean excess is at least 10x the noiseless path's
HW_TARGET = 0.05          # a headline interval's half-width must be at most this, or the table says why
# explanations of misses and untested cells (sections of the results page; links work from docs/*/)
WHY = {
    "prox_path": "../results/growth-rates.md#why-prox-path",
    "grid_floor": "../results/growth-rates.md#why-grid-floor",
    "geps_floor": "../results/growth-rates.md#why-geps-floor",
    "float": "../results/growth-rates.md#why-float",
    "other": "../results/growth-rates.md#why-other",
}
CLAIMS = {
    "G1": ("Thm 2: n^{−κ/(2(κ−1))} upper bound", "at_most"),
    "G2": ("minimax rate n^{−κ/(2(κ−1))}", "equals"),
    "G3": ("Thms 2–3: d^{κ/(κ−1)} pure, d^{κ/(2(κ−1))} approx., upper bounds", "at_most"),
    "Geps": ("privacy term ε^{−κ/(κ−1)}", "equals"),
    "G4": ("Thm 1: ERM excess n^{−κ/(κ−1)}; agnostic ρ: n^{−min(κ/(κ−1), 2)}", "equals"),
    "G6": ("Thm 2 with κ_low ≤ κ: n^{−κ/(2(κ−1))} upper bound", "at_most"),
    "G7": ("Prop. 2 worst case: n^{−1/2} upper bound", "at_most"),
}


def _with_defaults(df):
    """Older results (before the exact G4 sampler) lack ``sampler``/``M``: their G4 rows are the 2048-cell grid."""
    df = df.copy()
    if "sampler" not in df:
        df["sampler"] = np.where(df["exp"] == "G4", "grid", "none")
    if "M" not in df:
        df["M"] = np.where(df["exp"] == "G4", 2048, 0)
    return df


def _cell(exp, r) -> str:
    k = f"κ = {r['kappa']:g}"
    if exp == "G3":
        return "pure (δ = 0)" if r["delta"] == 0 else f"approximate (δ = {r['delta']:g})"
    if exp == "Geps":
        return f"regression, {k}, n = {int(r['n_samples'])}"
    if exp == "G4":
        smp = "continuous (exact)" if r["sampler"] == "exact" else f"grid M = {int(r['M'])}"
        return f"{r['inst']}, {k}, {smp}, ρ {r['rho_rule']}"
    if exp == "G6":
        return f"regression, {k}, κ_low = {r['kappa_low']:g}"
    return f"{r['inst']}, {k}"


def _grid_floor(inst: str, kappa: float, M: int) -> float:
    """ERM excess of a uniform draw in a cell with the minimizer on its edge: the grid's resolution floor.

    1-D regression (``f_S(x) - f_S* = |x - x*|^κ``): ``h^κ/(κ+1)``; two-point (slopes ``1`` and ``τ`` on the two
    sides of ``x* = 0``): ``(h/2)(1 + τ)/2``. ``h = 2R/M``.
    """
    ins = make_instance(inst, kappa, 1, 2)
    h = 2.0 * ins.R / M
    if inst == "regression":
        return h ** kappa / (kappa + 1.0)
    tau = dict(ins.info)["tau"]
    return 0.5 * h * (1.0 + tau) / 2.0


def _geps_floor(n: int, kappa: float, kappa_low: float) -> float:
    """The noiseless algorithm's excess at ``n`` (the deterministic proximal path, ``jaxdp.sco.prox_path``)."""
    from ..sco.prox_path import epoch_prox_path_1d

    return float(epoch_prox_path_1d(int(n), float(kappa), kappa_low=float(kappa_low))["excess"])


def g4_quadrature(kappa: float, n: int, eps: float, rho: float, R: float = 1.0) -> float:
    """Expected ERM excess of the continuous mechanism on the 1-D noiseless κ-regression, by quadrature.

    There ``f_S(x) = |x - x*|^κ`` for every data set (``a = ±1``, ``b = a x*``, ``x* = R/4``), so
    ``G(x) = κ (|x - x*| - ρ)_+^{κ-1}`` and the mechanism's density is ``∝ exp(-(εn/4L) G(x))`` on
    ``[-R, R]`` with ``L = κ(1.5R)^{κ-1}``: the exact ``E|x̂ - x*|^κ`` the sampler's mean must match.

    Args:
        kappa: the growth exponent κ > 1.
        n: the sample size.
        eps: the privacy level ε.
        rho: the smoothing radius ρ of the gradient's inverse sensitivity.
        R: the domain's radius.

    Returns:
        ``E|x̂ - x*|^κ`` under the mechanism's density.
    """
    from scipy import integrate

    L = kappa * (1.5 * R) ** (kappa - 1.0)
    c = eps * n / (4.0 * L)
    a, b = -1.25 * R, 0.75 * R                      # t = x - x* over [-R, R]
    w = (1.0 / (c * kappa)) ** (1.0 / (kappa - 1.0))
    dens = lambda t: math.exp(-c * kappa * max(abs(t) - rho, 0.0) ** (kappa - 1.0))
    pts = sorted({a, b, 0.0, -rho, rho} | {s * m * w for s in (-1, 1) for m in (1, 10, 50)})
    pts = [t for t in pts if a <= t <= b]
    Z = sum(integrate.quad(dens, u, v, limit=200)[0] for u, v in zip(pts[:-1], pts[1:]))
    E = sum(integrate.quad(lambda t: abs(t) ** kappa * dens(t), u, v, limit=200)[0] for u, v in zip(pts[:-1], pts[1:]))
    return E / Z


def g4_quadrature_table(summ):
    """Measured mean ERM excess of the exact continuous sampler against :func:`g4_quadrature`.

    Args:
        summ: the study's ``summary`` table (its G4 rows of the exact sampler on ``regression`` are used).

    Returns:
        One row per such point: ``kappa``, ``rho_rule``, ``n_samples``, ``rho``, ``exact_mean``,
        ``measured_mean`` with its CI (``measured_lo``, ``measured_hi``), their ``ratio`` and whether
        the CI contains the exact value (``inside``).
    """
    import pandas as pd

    rows = []
    sel = summ[(summ["exp"] == "G4") & (summ["sampler"] == "exact") & (summ["inst"] == "regression")]
    for _, r in sel.iterrows():
        inst = make_instance("regression", r["kappa"], 1, int(r["n_samples"]))
        rho = float(plan_grad_inverse_sensitivity(eps=r["eps"], d=1, n=int(r["n_samples"]), L=inst.L, D=2 * inst.R,
                                                  lam=inst.lam, kappa=inst.kappa, rho_rule=r["rho_rule"],
                                                  M=2).params["rho"])
        e = g4_quadrature(r["kappa"], int(r["n_samples"]), r["eps"], rho)
        rows.append(dict(kappa=r["kappa"], rho_rule=r["rho_rule"], n_samples=int(r["n_samples"]), rho=rho,
                         exact_mean=e, measured_mean=r["erm_excess_mean"], measured_lo=r["erm_excess_lo"],
                         measured_hi=r["erm_excess_hi"], ratio=r["erm_excess_mean"] / e,
                         inside=bool(r["erm_excess_lo"] <= e <= r["erm_excess_hi"])))
    return pd.DataFrame(rows)


def _seed_mat(g, x, y):
    xs = np.sort(g[x].unique())
    tab = g.pivot_table(index="seed", columns=x, values=y, aggfunc="mean", dropna=False).reindex(columns=list(xs))
    return xs, tab


def _cv(g, x, y) -> float:
    st = g.groupby(x)[y].agg(["mean", "std"])
    return float((st["std"] / st["mean"]).max())


def verdicts(df, slopes, summ) -> "pd.DataFrame":
    """One verdict per (experiment, cell): every fitted curve, the G3 exponent ratio and G5's quantile ratios.

    Intervals: 95% percentile bootstrap over seed indices resampled jointly across the points of a curve
    (the points share seed keys). Verdicts by :func:`jaxdp.studies.analysis.slope_verdict`; cells whose claim
    cannot be tested at the run's sizes are ``not tested`` with the measured reason.

    Args:
        df: the per-seed results (one row per point and seed).
        slopes: the ``slopes`` table of :func:`analyze` (one fitted curve per row, with ``theory``).
        summ: the ``summary`` table of :func:`analyze` (the verdicts are computed from ``df`` and ``slopes``).

    Returns:
        The verdict rows in the columns of :func:`jaxdp.studies.analysis.verdict_table`, ordered by experiment.
    """
    import pandas as pd

    rows = []
    rng = np.random.default_rng(1)
    for _, r in slopes.iterrows():
        exp = r["exp"]
        if exp not in CLAIMS:
            continue
        claim, kind = CLAIMS[exp]
        claimed = float(r["theory"])
        v = slope_verdict(r["slope_lo"], r["slope_hi"], claimed, kind)
        reason, link = "", ""
        x = _xcol(exp)
        y = "erm_excess" if exp == "G4" else "excess"
        sel = (df["exp"] == exp)
        for c in ("inst", "kappa", "delta", "kappa_low", "rho_rule", "sampler", "M", "d" if x != "d" else None):
            if c is not None and c in r and c in df:
                sel &= (df[c] == r[c])
        g = df[sel]
        cell = _cell(exp, r)
        if exp == "Geps":
            # fit only where the privacy term dominates: the noiseless path's excess <= 10% of the mean excess
            floor = _geps_floor(int(r["n_samples"]), r["kappa"], r["kappa_low"])
            sm = g.groupby("eps")["excess"].mean()
            keep = sorted(e for e in sm.index if floor <= GEPS_FLOOR_SHARE * sm.loc[e])
            if len(keep) < 3:
                v = "not tested"
                worst = sm.index.max()
                reason = (f"the noiseless path's excess {floor:.2g} is {floor / sm.loc[worst]:.0%} of the mean excess "
                          f"at ε = {worst:g}; only {len(keep)} of the ε values keep it below "
                          f"{GEPS_FLOOR_SHARE:.0%}, so the privacy term cannot be isolated")
                link = WHY["geps_floor"]
            elif len(keep) < len(sm):
                r = r.copy()
                fr = fit_slopes(g[g["eps"].isin(keep)], x="eps", y="excess", upper_half=False, n_boot=N_BOOT,
                                resample="joint").iloc[0]
                for c in ("slope", "slope_lo", "slope_hi", "n_seeds"):
                    r[c] = fr[c]
                v = slope_verdict(r["slope_lo"], r["slope_hi"], claimed, kind)
                cell += f", ε ∈ {{{', '.join(f'{e:g}' for e in keep)}}} (path excess ≤ {GEPS_FLOOR_SHARE:.0%})"
        if v == "misses":
            if exp in ("G1", "G6", "G7") and r["inst"] == "regression" and r["kappa"] >= 3:
                reason, link = "deterministic path of the noiseless instance (no statistical error)", WHY["prox_path"]
            elif exp == "G4" and r["sampler"] == "grid" and (
                    float(g.groupby("n_samples")[y].mean().iloc[-1]) <= 10 * _grid_floor(r["inst"], r["kappa"],
                                                                                         int(r["M"]))):
                floor = _grid_floor(r["inst"], r["kappa"], int(r["M"]))
                mean = float(g.groupby("n_samples")[y].mean().iloc[-1])
                reason = (f"grid resolution floor: at n = {int(r['x_max'])} the mean ERM excess {mean:.2g} is "
                          f"{mean / floor:.1f}× the floor {floor:.2g} of a uniform draw in the minimizer's cell")
                link = WHY["grid_floor"]
            elif exp == "G4" and float(g.groupby("n_samples")[y].mean().iloc[-1]) < 1e-13:
                mean = float(g.groupby("n_samples")[y].mean().iloc[-1])
                reason = (f"float64 resolution: at n = {int(r['x_max'])} the mean ERM excess {mean:.2g} is a "
                          f"difference of two empirical risks of order 0.05, each rounded at about 1e-17")
                link = WHY["float"]
            else:
                reason, link = "see 'Other misses'", WHY["other"]
        hw = (r["slope_hi"] - r["slope_lo"]) / 2
        if v in ("holds", "misses") and hw > HW_TARGET:
            extra = (f"half-width {hw:.3f} > {HW_TARGET}: the {y} varies across seeds (coefficient of variation "
                     f"up to {_cv(g, x, y):.1f})")
            reason = f"{reason}; {extra}" if reason else extra
        rows.append(dict(experiment=exp, cell=cell, claim=claim, claimed=claimed, kind=kind,
                         slope=r["slope"], slope_lo=r["slope_lo"], slope_hi=r["slope_hi"],
                         n_seeds=int(r.get("n_seeds", g.groupby(x).size().min())), verdict=v, reason=reason,
                         link=link))
    # G3: the ratio of the two exponents (pure / approximate), one joint resampling of both curves
    g3 = df[df["exp"] == "G3"]
    if len(g3) and g3["delta"].nunique() == 2:
        xs, tp = _seed_mat(g3[g3["delta"] == 0], "d", "excess")
        _, ta = _seed_mat(g3[g3["delta"] > 0], "d", "excess")
        ta = ta.reindex(tp.index)
        sp, bp = joint_slope_boot(tp.to_numpy(float), xs, 0, rng=rng)
        sa, _ = joint_slope_boot(ta.to_numpy(float), xs, 0, rng=rng)
        idx = rng.integers(0, len(tp), size=(N_BOOT, len(tp)))
        mp = np.nanmean(tp.to_numpy(float)[idx], axis=1)
        ma = np.nanmean(ta.to_numpy(float)[idx], axis=1)
        lx = np.log(xs.astype(float))
        xc = lx - lx.mean()
        slope = lambda m: (np.log(m) - np.log(m).mean(axis=1, keepdims=True)) @ xc / (xc @ xc)
        ratio = slope(mp) / slope(ma)
        lo, hi = np.nanquantile(ratio, [0.025, 0.975])
        v = slope_verdict(lo, hi, 2.0, "equals")
        hw = (hi - lo) / 2
        reason = "" if v == "holds" else "see 'Other misses'"
        link = "" if v == "holds" else WHY["other"]
        if hw > HW_TARGET:
            reason = (reason + "; " if reason else "") + (f"half-width {hw:.3f} > {HW_TARGET}: a ratio of two "
                                                          f"slopes, each with its own seed variance")
        rows.append(dict(experiment="G3", cell="exponent ratio pure / approximate", claim="Thm 2 vs 3: ratio 2",
                         claimed=2.0, kind="equals", slope=sp / sa, slope_lo=lo, slope_hi=hi,
                         n_seeds=int(len(tp)), verdict=v, reason=reason, link=link))
    # G5: q99 / mean against n for every G1 curve (claim: bounded, i.e. slope <= 0)
    g1 = df[df["exp"] == "G1"]
    for (inst, kappa), g in g1.groupby(["inst", "kappa"], sort=True):
        xs, tab = _seed_mat(g, "n_samples", "excess")
        Y = tab.to_numpy(float)
        lx = np.log(xs.astype(float))
        xc = lx - lx.mean()

        def q_slope(Yb):
            q = np.nanquantile(Yb, 0.99, axis=-2) / np.nanmean(Yb, axis=-2)
            lq = np.log(q)
            return (lq - lq.mean(axis=-1, keepdims=True)) @ xc / (xc @ xc)

        s0 = float(q_slope(Y))
        idx = rng.integers(0, len(Y), size=(200, len(Y)))
        bs = q_slope(Y[idx])
        lo, hi = np.nanquantile(bs, [0.025, 0.975])
        v = slope_verdict(lo, hi, 0.0, "at_most")
        hw = (hi - lo) / 2
        reason = "" if v == "holds" else "see 'Other misses'"
        link = "" if v == "holds" else WHY["other"]
        if v in ("holds", "misses") and hw > HW_TARGET:
            reason = (reason + "; " if reason else "") + (f"half-width {hw:.3f} > {HW_TARGET}: a 99% quantile "
                                                          f"rests on the top 1% of the seeds")
        rows.append(dict(experiment="G5", cell=f"q99/mean vs n, {inst}, κ = {kappa:g}",
                         claim="high probability: q99/mean bounded in n (log 1/β)", claimed=0.0, kind="at_most",
                         slope=s0, slope_lo=lo, slope_hi=hi, n_seeds=int(len(Y)), verdict=v, reason=reason,
                         link=link))
    order = {e: i for i, e in enumerate(("G1", "G2", "G3", "Geps", "G4", "G5", "G6", "G7"))}
    out = pd.DataFrame(rows)
    if len(out):
        out = out.sort_values("experiment", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)
    return out


def analyze(df):
    """The study's tables: slopes per curve (seed indices resampled jointly), summaries with 99%
    quantiles, G5's quantile ratios, solver and sampler rates, G4's quadrature check and the verdicts.

    Args:
        df: the per-seed results.

    Returns:
        ``{table name: DataFrame}``: ``slopes``, ``summary``, ``verdicts`` and, when their rows are
        present, ``G5_high_probability``, ``solver``, ``sampler`` and ``G4_quadrature``.
    """
    import pandas as pd

    df = _with_defaults(df)
    tables = {}
    slope_rows = []
    for exp, g in df.groupby("exp", sort=False):
        x = _xcol(exp)
        by = [c for c in _ALGO_KEYS + ("n_samples", "d", "eps") if c != x and c in g and c != "exp"]
        y = "erm_excess" if exp == "G4" else "excess"
        # every point of a curve uses the same seed keys: resample seed indices jointly
        s = fit_slopes(g, x=x, y=y, by=by, upper_half=False, n_boot=N_BOOT, resample="joint")
        s.insert(0, "exp", exp)
        s["theory"] = [theory_exponent(dict(exp=exp, kappa=r["kappa"], delta=r.get("delta", 0.0),
                                            rho_rule=r.get("rho_rule"))) for _, r in s.iterrows()]
        slope_rows.append(s)
    tables["slopes"] = pd.concat(slope_rows, ignore_index=True)
    metrics = [m for m in ("excess", "erm_excess") if m in df]
    by = ["exp", "algo", "inst", "kappa", "d", "n_samples", "eps", "delta", "kappa_low", "rho_rule", "sampler", "M"]
    summ = summarize(df, by=by, metrics=metrics, n_boot=200, quantiles=(0.99,))
    tables["summary"] = summ
    g1 = summ[summ["exp"] == "G1"]
    if len(g1):
        q = g1[["inst", "kappa", "n_samples", "excess_mean", "excess_q0.99"]].copy()
        q["q99_over_mean"] = q["excess_q0.99"] / q["excess_mean"]
        tables["G5_high_probability"] = q
    if "gap_ok" in df:
        tables["solver"] = df.groupby("exp")["gap_ok"].mean().reset_index()
    if "accepted" in df and (df["exp"] == "G4").any():
        tables["sampler"] = df[df["exp"] == "G4"].groupby(["inst", "kappa", "sampler", "M", "rho_rule"])[
            "accepted"].mean().reset_index()
    if ((summ["exp"] == "G4") & (summ["sampler"] == "exact") & (summ["inst"] == "regression")).any():
        tables["G4_quadrature"] = g4_quadrature_table(summ)
    tables["verdicts"] = verdicts(df, tables["slopes"], summ)
    return tables


def verdict_markdown(verdicts_df, manifest: dict, source: str = "") -> str:
    """The generated block of the docs: seeds, bootstrap, widest interval, then the verdict table.

    Args:
        verdicts_df: the verdict rows (:func:`verdicts`).
        manifest: the run's manifest (``seeds``, ``n_points``).
        source: the Markdown naming where the table comes from (default: the kept ``verdicts.csv``).

    Returns:
        The block's Markdown.
    """
    S = int(manifest.get("seeds", verdicts_df["n_seeds"].max()))
    tested = verdicts_df[verdicts_df["verdict"].isin(["holds", "misses"])]
    hw = (tested["slope_hi"] - tested["slope_lo"]) / 2
    i = hw.idxmax() if len(hw) else None
    widest = (f"widest 95% half-width of a tested cell: {hw[i]:.3f} ({tested.loc[i, 'experiment']}, "
              f"{tested.loc[i, 'cell']})" if i is not None else "no tested cell")
    counts = verdicts_df["verdict"].value_counts()
    tally = ", ".join(f"{counts.get(k, 0)} {k}" for k in ("holds", "misses", "not tested"))
    source = source or "`results/growth-rates/verdicts.csv` by `jaxdp.studies.growth_rates.publish`"
    head = (f"*Generated from {source}; do not edit by hand.* **{S} seeds per point**, "
            f"{int(manifest.get('n_points', 0))} grid points. Every point of a curve uses the same seed keys, so each interval is a 95% percentile bootstrap over seed indices "
            f"resampled jointly across the curve's points ({N_BOOT} replicates). {len(verdicts_df)} cells: {tally}; "
            f"{widest}. `≤` marks an upper-bound claim (holds unless the whole interval is above it).")
    return head + "\n\n" + verdict_table(verdicts_df)
