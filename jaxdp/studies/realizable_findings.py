"""``realizable-findings``: experiments that decide the open findings on the realizable paper (REAL).

Spec and claims: ``specs/realizable-findings.toml``; page prose: ``specs/realizable-findings.md``; derivations in
docs/algorithms/realizable-findings.md. Column ``exp``:

* ``adaptive`` (Alg. 2): the doubling test as printed and flipped, in ``paper`` and ``rate`` modes, beside Alg. 1
  told L*, on near-realizable Bernoulli losses (``l_t(x*) ~ Ber(L*/T)``): doublings, draws and regret.
* ``potential`` (Alg. 5): as printed, with the corrected variant's larger K, and the corrected variant with an
  own-loss guard (:func:`jaxdp.experts.potential.guarded_potential_experts`) on the halving adversary, regret vs T.
* ``binary_tree`` (Alg. 4): ``m_set < d``, ``paper`` and ``rate`` thresholds; phases started and regret vs T.
* ``oco`` (Thm 4): DP-FTRL (matched λ) on the sphere and the masked quadratic instance
  (:mod:`jaxdp.oco.masked_quadratic`), regret vs d (claimed d^{1/3}).
"""
from __future__ import annotations

import math
import pathlib
from typing import Any, Callable

import jax.numpy as jnp
import numpy as np

from ..core import seed_keys, simulate
from ..experts import (
    HalvingParams, RealizableBernoulliParams, adaptive_sparse_vector_experts, adv_realizable_bernoulli,
    adv_realizable_halving, binary_tree_experts, binary_tree_static, experts_problem, params_from_plan,
    plan_adaptive_sparse_vector_experts, plan_binary_tree_experts, plan_potential_experts, plan_sparse_vector_experts,
    potential_experts, sparse_vector_experts,
)
from ..experts.potential import guarded_potential_experts, plan_guarded_potential_experts
from ..oco import (
    adv_smooth_realizable, dp_ftrl, dp_ftrl_lambda_matched, dp_ftrl_params, plan_dp_ftrl, smooth_realizable_params,
    squared_problem,
)
from ..oco.masked_quadratic import adv_masked_quadratic, masked_quadratic_params, masked_quadratic_problem
from ..privacy.mechanisms import tree_depth
from .analysis import _pow2, fmt_ci, loglog_slope, ratio_to_base, verdict_table
from .claims import Measurement, Verdict, judge, tally, untested_row, verdict_row
from .framework import Study, fit_slopes, plot_curves, summarize
from .specs import StudySpec

EXPERIMENTS = ("adaptive", "potential", "binary_tree", "oco")


def _names(v) -> list:
    return [e.strip() for e in str(v).split(",") if e.strip()]


def _known(v):
    bad = [e for e in _names(v) if e not in EXPERIMENTS]
    return f"unknown experiment {bad[0]!r}; known: {list(EXPERIMENTS)}" if bad else None


S = StudySpec("realizable-findings", __name__, checks={"experiments": _known})
DOC_PAGE, RESULTS, BLOCKS, CLAIMS, N_BOOT = S.doc_page, S.results, S.blocks, S.claims, 2000
#: the curves of each experiment's fit (one slope per group)
FIT_GROUPS = {"adaptive": ("learner", "mode", "Lstar"), "potential": ("learner",), "binary_tree": ("mode",),
              "oco": ("learner",)}
#: each scale a claim "free of T" is stated up to, as a function of a cell's per-point table (``_point_table``)
SCALES = {"L₀": lambda p: p["threshold0"], "L": lambda p: p["threshold0"], "1/η": lambda p: 1.0 / p["eta"],
          "(d/m_set)·τ": lambda p: p["d"] / p["m_set"] * p["tau"]}
#: docs/algorithms/realizable-findings.md#adaptive: with only a few switches, Alg. 2 is flat in T from T ≳ 10 L₀
ADAPTIVE_FLAT = 10.0


def _points(cfg):
    exps, pts = _names(cfg["experiments"]), []

    def pt(exp, lrn, mode, d, T, eps, Ls=0.0):
        return dict(exp=exp, learner=lrn, mode=mode, d=int(d), T=int(T), eps=float(eps), Lstar=float(Ls))

    if "adaptive" in exps:
        pts += [pt("adaptive", lrn, mode, cfg["ad_d"], T, cfg["ad_eps"], Ls) for mode in cfg["ad_modes"]
                for lrn in ("adaptive_printed", "adaptive_flipped", "sv_known_Lstar") for Ls in cfg["ad_Lstar"]
                for T in cfg["ad_T"]]
    if "potential" in exps:
        pts += [pt("potential", lrn, "rate", cfg["pot_d"], T, cfg["pot_eps"])
                for lrn in ("potential", "potential_bigK", "guarded") for T in cfg["pot_T"]]
    if "binary_tree" in exps:
        pts += [pt("binary_tree", "binary_tree", mode, cfg["bt_d"], T, cfg["bt_eps"])
                for mode in cfg["bt_modes"] for T in cfg["bt_T"]]
    if "oco" in exps:
        pts += [pt("oco", f"dp_ftrl_{inst}", "paper", d, cfg["oco_T"], cfg["oco_eps"])
                for inst in ("sphere", "masked") for d in cfg["oco_d"]]
    return pts


def _metrics(out, n, **const):
    r = {"regret": np.asarray(out["regret"], float), "best_loss": np.asarray(out["best_loss"], float)}
    for k in ("switches", "em_draws", "doublings", "phases", "padded"):
        r[k] = np.asarray(out[k], float) if k in out else np.full(n, np.nan)
    return {**r, **{k: np.full(n, float(v)) for k, v in const.items()}}


def _run_adaptive(p, cfg, keys, n):
    d, T, eps, Ls = p["d"], p["T"], p["eps"], p["Lstar"]
    if p["learner"] == "sv_known_Lstar":
        plan = plan_sparse_vector_experts(eps=eps, T=T, d=d, mode=p["mode"], beta=cfg["beta"], Lstar=Ls)
        L, thr = sparse_vector_experts(d), plan.params["L"]
    else:
        sign = "flipped" if p["learner"] == "adaptive_flipped" else "printed"
        plan = plan_adaptive_sparse_vector_experts(eps=eps, T=T, d=d, mode=p["mode"], beta=cfg["beta"], test_sign=sign)
        L, thr = adaptive_sparse_vector_experts(d), plan.params["L_offset"] + plan.params["Lbar0"]
    ap = RealizableBernoulliParams(q=jnp.float32(cfg["q"]), q_star=jnp.float32(Ls / T))
    out = simulate(L, adv_realizable_bernoulli(d), experts_problem(), params_from_plan(plan), ap, keys, T, T_max=T,
                   n_checkpoints=4)
    return _metrics(out, n, threshold0=thr, K=plan.params["K"], margin=plan.params.get("margin", np.nan),
                    eps_certified=plan.eps_certified)


def _run_potential(p, cfg, keys, n):
    d, T, eps = p["d"], p["T"], p["eps"]
    if p["learner"] == "potential":
        plan = plan_potential_experts(eps=eps, T=T, d=d, mode="rate")
        L, params = potential_experts(d), params_from_plan(plan)
    else:
        plan = plan_guarded_potential_experts(eps=eps, T=T, d=d, mode="rate")
        params = plan.to_params()
        L = guarded_potential_experts(d) if p["learner"] == "guarded" else potential_experts(d)
    ap = HalvingParams(r=jnp.int32(int(cfg["halving_r"])))
    out = simulate(L, adv_realizable_halving(d), experts_problem(), params, ap, keys, T, T_max=T, n_checkpoints=4)
    pr = plan.params
    return _metrics(out, n, K=pr["K"], eta=pr["eta"], threshold=2 * pr["alpha"] / (pr["s_phi"] * pr["eta"]),
                    eps_certified=plan.eps_certified)


def _run_binary_tree(p, cfg, keys, n):
    plan = plan_binary_tree_experts(eps=p["eps"], T=p["T"], d=p["d"], mode=p["mode"], beta=cfg["beta"])
    ap = HalvingParams(r=jnp.int32(int(cfg["halving_r"])))   # each elimination can be seen by the trees
    out = simulate(binary_tree_experts(p["d"], **binary_tree_static(plan)), adv_realizable_halving(p["d"]),
                   experts_problem(), params_from_plan(plan), ap, keys, p["T"], T_max=p["T"], n_checkpoints=4)
    pr = plan.params
    return _metrics(out, n, tau=pr["tau"], m_set=pr["m_set"], P_max=pr["P_max"], eps_certified=plan.eps_certified)


def _run_oco(p, cfg, keys, n):
    d, T, D = p["d"], p["T"], float(cfg["oco_D"])
    plan = plan_dp_ftrl(eps=p["eps"], delta=cfg["delta"], T=T, d=d, mode="paper", L=2.0 * D, D=D, beta=1.0)
    lam = dp_ftrl_lambda_matched(T, d, tree_depth(T), plan.params["sigma"], D, 1.0)   # matched Thm 4 balance
    params = dp_ftrl_params(lam, plan.params["sigma"], plan.params["clip"])
    if p["learner"] == "dp_ftrl_masked":
        prob, adv, ap = masked_quadratic_problem(d, D), adv_masked_quadratic(d), masked_quadratic_params(D, 0.5)
    else:
        prob, adv, ap = squared_problem(d, D), adv_smooth_realizable(d), smooth_realizable_params(D, 0.0)
    out = simulate(dp_ftrl(prob, T), adv, prob, params, ap, keys, T, T_max=T, n_checkpoints=4)
    return _metrics(out, n, lam=lam, sigma=plan.params["sigma"], eps_certified=plan.eps_certified)


_RUN = {"adaptive": _run_adaptive, "potential": _run_potential, "binary_tree": _run_binary_tree, "oco": _run_oco}


def _fit_table(df, n_boot: int = 500):
    """Every fit: regret vs ``T`` per curve (vs ``d`` for ``oco``), seeds resampled jointly; ``None`` if none."""
    import pandas as pd

    sl = []
    for exp, grp in FIT_GROUPS.items():
        x, sub = "d" if exp == "oco" else "T", df[df["exp"] == exp]
        if len(sub) and sub[x].nunique() > 1:
            f = fit_slopes(sub, x, "regret", list(grp), upper_half=False, n_boot=n_boot, resample="joint")
            f.insert(0, "fit", f"{exp}: regret vs {x}")
            sl.append(f.assign(claimed=1 / 3) if exp == "oco" else f)
    return pd.concat(sl, ignore_index=True) if sl else None


def _plot(df, outdir: pathlib.Path):
    paths = []
    for exp, x, hue in (("potential", "T", "learner"), ("binary_tree", "T", "mode"), ("oco", "d", "learner")):
        sub = df[df["exp"] == exp]
        if len(sub):
            s = summarize(sub, [hue, x], ["regret"])
            th = {"linear in T": lambda T: T / 2.0} if exp == "potential" else (
                {"d^(1/3)": (lambda d, s=s: float(s["regret_mean"].min()) * (d / float(s["d"].min())) ** (1 / 3))}
                if exp == "oco" else None)
            paths.append(plot_curves(s, x, "regret", outdir / f"{exp}.png", hue=hue, theory=th,
                                     title=f"realizable findings: {exp}"))
    sub = df[df["exp"] == "adaptive"]
    if len(sub):
        sub = sub.assign(curve=sub["learner"] + " / " + sub["mode"] + " / L*=" + sub["Lstar"].map("{:g}".format))
        paths.append(plot_curves(summarize(sub, ["curve", "T"], ["regret"]), "T", "regret", outdir / "adaptive.png",
                                 hue="curve", theory={"T/2 (never switches)": lambda T: T / 2.0},
                                 title="Alg. 2: regret vs T (printed vs flipped doubling test)"))
    return paths


@S.register
def build(cfg: dict) -> Study:
    """The ``adaptive``, ``potential``, ``binary_tree`` and ``oco`` experiments (module docstring). Tables:
    ``summary`` (regret, draws, doublings and phases per point) and ``slopes`` (:func:`_fit_table`)."""
    def run(pts, seeds):
        keys = seed_keys(int(cfg["seed"]), seeds)
        return [_RUN[p["exp"]](p, cfg, keys, len(seeds)) for p in pts]

    def analyze(df):
        tables = {"summary": summarize(df, ["exp", "learner", "mode", "d", "T", "eps", "Lstar"],
                                       ["regret", "em_draws", "doublings", "phases"])}
        fits = _fit_table(df)
        return tables if fits is None else {**tables, "slopes": fits}

    return S.study(cfg, points=_points(cfg), run=run, analyze=analyze, plot=_plot, seeds_per_chunk=None,
                   points_per_chunk=16)


def _sci(v: float) -> str:
    """``v`` with two significant digits as the pages print a large number (``1.7·10⁵``)."""
    m, e = f"{float(v):.1e}".split("e")
    return m if int(e) == 0 else f"{m}·10" + str(int(e)).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _point_table(results):
    """One row per grid point: mean regret, draws, phases, share of seeds with regret > T/2, planners' constants."""
    by = ["exp", "learner", "mode", "d", "T", "Lstar"]
    g = results.assign(stuck=results["regret"] > results["T"] / 2).groupby(by, sort=True, dropna=False)
    const = [c for c in ("threshold0", "margin", "eta", "tau", "m_set", "P_max", "lam") if c in results]
    return g[["regret", "em_draws", "phases", "stuck"]].mean().join(g[const].first()).reset_index()


def _cell_points(pts, r, exp):
    """The grid points of one fitted cell, sorted by the fit's abscissa and restricted to its range."""
    x, sel = "d" if exp == "oco" else "T", pts[pts["exp"] == exp]
    for k in FIT_GROUPS[exp]:
        sel = sel[sel[k] == getattr(r, k)]
    return sel[(sel[x] >= r.x_min) & (sel[x] <= r.x_max)].sort_values(x).reset_index(drop=True), x


def _cell_name(r, exp) -> str:
    if exp == "adaptive":
        return f"{r.learner}, {r.mode}, L* = {r.Lstar:g}"
    return f"{r.mode} τ" if exp == "binary_tree" else str(r.learner).replace("dp_ftrl_", "")


def _below_regime(exp, curve, p) -> str:
    """Why the cell's grid does not reach the horizon its claim is derived for (``""`` when it does): Alg. 2 from
    T ≳ 10 L₀ flipped, T ≳ log₂(0.8m)·L₀ + 0.8m printed; Alg. 4 with the paper's τ from T ≫ (d/m_set)·τ."""
    if exp == "adaptive" and curve == "adaptive_flipped":
        need, rule = ADAPTIVE_FLAT * p["threshold0"], "10 L₀"
    elif exp == "adaptive" and curve == "adaptive_printed":
        m8 = 0.8 * p["margin"].abs()
        need, rule = np.log2(m8) * p["threshold0"] + m8, "log₂(0.8m)·L₀ + 0.8m"
    elif exp == "binary_tree" and curve == "paper":
        need, rule = p["d"] / p["m_set"] * p["tau"], "(d/m_set)·τ"
    else:
        return ""
    T, need = p["T"].to_numpy(float), need.to_numpy(float)
    if (T >= need).all():
        return ""
    end, i = ("ends", -1) if T[-1] < need[-1] else ("starts", 0)
    why = f"the grid {end} at T = {_pow2(T[i])}, below {rule} = {_sci(need[i])} there"
    quiet = p.loc[p["phases"] == 0, "T"] if exp == "binary_tree" else p["T"].iloc[:0]
    return why + (f"; no phase ends at T ≤ {_pow2(quiet.max())}" if len(quiet) else "")


def _beyond(exp, curve, p, scale) -> str:
    """What the derivation says of a slope beyond its claim, with the cell's numbers."""
    if exp == "adaptive":
        sc = SCALES[scale](p).to_numpy(float)
        why = (f"regret ÷ {scale} goes {p['regret'].iloc[0] / sc[0]:.2f} → {p['regret'].iloc[-1] / sc[-1]:.2f} "
               f"while the mean draws go {p['em_draws'].iloc[0]:.2f} → {p['em_draws'].iloc[-1]:.2f}")
        if curve != "sv_known_Lstar":
            return why + ": each switch costs up to the threshold"
        return why + ("; the best expert's own loss over the discarded epochs (≈ L*·t/T) shrinks as T grows, so the "
                      "regret rises towards its T-free limit" if float(p["Lstar"].iloc[0]) > 0 else "")
    last = p.iloc[-1]
    if exp == "potential" and curve == "guarded":
        return (f"utility measured, not proved; regret ÷ 1/η goes {p['regret'].iloc[0] * p['eta'].iloc[0]:.2f} → "
                f"{last['regret'] * last['eta']:.2f}")
    if exp == "potential":
        return ("more budget does not help, " if curve == "potential_bigK" else "") + (
            f"the stale sample (Lemma C.3 is false): {last['stuck']:.0%} of seeds end with regret > T/2 at "
            f"T = {_pow2(last['T'])}")
    if exp == "binary_tree":
        why = f"regret/T = {last['regret'] / last['T']:.2f} at T = {_pow2(last['T'])}"
        return why if curve != "rate" else (f"τ without its log factor sits in the zero-loss expert's tree noise: "
                                            f"{last['phases']:.1f} of P_max − 1 = {int(last['P_max']) - 1} new "
                                            f"phases used, " + why)
    if exp == "oco" and curve == "dp_ftrl_masked":
        s = loglog_slope(p["d"], p["lam"])
        return (f"λ = 32β + (…)^{{1/3}} grows only as d^{s:.3f} here (its d-free term 32β), so the noise cost "
                f"∝ d/λ² grows as d^{1 - 2 * s:.3f}")
    return "the measured slope is outside the claim"


def verdicts(slopes, results):
    """One verdict per fitted cell of ``slopes`` against :data:`CLAIMS`, by :func:`judge`. A claim "free of T" is
    tested on the slope of the mean regret divided by its scale (``[scale]`` of the study TOML: a deterministic function
    of T, which shifts the slope and both ends of its interval); a cell below the horizon its claim is derived for,
    a claim of ``[untested]`` and a curve without a claim are not tested. A miss, or a fit too short to test that
    lies beyond its claim, says why (:func:`_beyond`) and links to the derivation.

    Args:
        slopes: the fits (:func:`_fit_table`); results: the per-seed rows of ``results.csv``.
    """
    import pandas as pd

    pts, rows = _point_table(results), []
    for r in slopes.itertuples(index=False):
        exp = r.fit.split(":")[0]
        curve = r.mode if exp == "binary_tree" else r.learner
        (p, x), cell, key = _cell_points(pts, r, exp), _cell_name(r, exp), f"{exp}/{curve}"
        scale, claim = S.data["scale"].get(key, S.data["scale"].get(exp)), CLAIMS.get(key, CLAIMS.get(exp))
        shift = loglog_slope(p[x], SCALES[scale](p)) if scale and len(p) > 1 else 0.0
        m = Measurement(r.slope - shift, r.slope_lo - shift, r.slope_hi - shift, int(r.n_seeds),
                        decades=math.log10(float(r.x_max) / float(r.x_min)))
        if claim is None:
            rows.append(untested_row(r.fit, cell, "no claim stated for this curve", "reported for comparison", m=m))
            continue
        why = _below_regime(exp, curve, p) or S.data["untested"].get(key, "")
        v = Verdict("not tested", why) if why else judge(claim, m)
        c = claim.value
        beyond = not why and m.hi > m.lo and (m.lo > c if claim.kind == "at_most_rate" else not m.lo <= c <= m.hi)
        if beyond:
            sep = ": " if v.verdict == "misses" else "; over it the slope lies beyond the claim: "
            v = Verdict(v.verdict, v.reason + sep + _beyond(exp, curve, p, scale))
        rows.append(verdict_row(claim, m, v, experiment=r.fit, cell=cell, link=claim.link if why or beyond else None))
    return pd.DataFrame(rows)


def _summary(g, by, extra=()):
    agg = g.groupby(by, sort=True).agg(**{c: (c, "mean") for c in ("em_draws", "doublings", "phases")},
                                       **{f"{c}_first": (c, "first") for c in extra})
    return summarize(g, by, ["regret"]).merge(agg.reset_index(), on=by)


def _adaptive_block(a, **kw):
    s = _summary(a, ["learner", "mode", "Lstar", "T"], ("threshold0",))
    pair = a[a["learner"].isin(["adaptive_printed", "adaptive_flipped"])]
    w = pair.pivot_table(index=["mode", "Lstar", "T", "seed"], columns="learner", values="regret")
    ndiff = (w["adaptive_printed"] != w["adaptive_flipped"]).groupby(level=[0, 1, 2]).sum()
    rat = ratio_to_base(pair, ["mode", "Lstar", "T"], "learner", "adaptive_flipped", "regret", n_boot=N_BOOT)
    modes = sorted({k[0] for k, v in ndiff.items() if v == 0})
    full = [m for m in modes if all(v == 0 for k, v in ndiff.items() if k[0] == m)]
    note = S.render("realizable-findings same runs", modes=", ".join(full)) + " " if full else ""
    paired = rat.assign(ndiff=[ndiff.loc[k] for k in zip(rat["mode"], rat["Lstar"], rat["T"])])
    return S.render(BLOCKS[0], note=note, paired=S.table("adaptive_paired", paired), table=S.table("adaptive", s),
                    **kw)


def _potential_block(p, **kw):
    s = _summary(p, ["learner", "T"], ("K", "threshold"))
    half = p.assign(h=p["regret"] > p["T"] / 2).groupby(["learner", "T"])["h"].mean()
    s["half"] = [half.loc[k] for k in zip(s["learner"], s["T"])]
    rat = ratio_to_base(p, ["T"], "learner", "potential", "regret", n_boot=N_BOOT)
    return S.render(BLOCKS[1], table=S.table("potential", s), paired=S.table("potential_paired", rat), **kw)


def _binary_tree_block(b, **kw):
    s = _summary(b, ["mode", "T"], ("m_set", "tau"))
    anyp = b.assign(h=b["phases"] > 0).groupby(["mode", "T"])["h"].mean()
    s["anyp"] = [anyp.loc[k] for k in zip(s["mode"], s["T"])]
    return S.render(BLOCKS[2], table=S.table("binary_tree", s), **kw)


def _oco_block(o, **kw):
    s = summarize(o, ["learner", "d"], ["regret"])
    fa, f8 = (fit_slopes(g, "d", "regret", ["learner"], upper_half=False, n_boot=N_BOOT, resample="joint")
              for g in (o, o[o["d"] >= 8]))
    fa[["slope8", "slope8_lo", "slope8_hi"]] = f8[["slope", "slope_lo", "slope_hi"]].to_numpy()
    return S.render(BLOCKS[3], table=S.table("oco", s), slopes=S.table("oco_slopes", fa), **kw)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/realizable-findings``)."""
    import pandas as pd

    df = pd.read_csv(pathlib.Path(results_dir or RESULTS) / "results.csv")
    S_ = int(df.groupby(["exp", "learner", "mode", "d", "T", "Lstar"])["seed"].nunique().min())
    makers: tuple[Callable[..., Any], ...] = (_adaptive_block, _potential_block, _binary_tree_block, _oco_block)
    out = {blk: fn(df[df["exp"] == exp], S=S_, n_boot=N_BOOT) for blk, exp, fn in zip(BLOCKS, EXPERIMENTS, makers)
        if (df["exp"] == exp).any()}
    fits, rows = _fit_table(df, N_BOOT), []
    for r in (fits.itertuples(index=False) if fits is not None else ()):
        exp = r.fit.split(":")[0]
        cell = r.learner if exp == "oco" else ", ".join(
            f"{k} = {getattr(r, k):g}" if k == "Lstar" else str(getattr(r, k)) for k in FIT_GROUPS[exp])
        rng = f"{r.x_min:g} … {r.x_max:g}" if exp == "oco" else f"{_pow2(r.x_min)} … {_pow2(r.x_max)}"
        rows.append([r.fit, cell, fmt_ci(r.slope, r.slope_lo, r.slope_hi), rng, int(r.n_seeds)])
    out[BLOCKS[4]] = S.render(BLOCKS[4], n_boot=N_BOOT, table=S.table("fits", rows))
    if fits is not None:
        v = verdicts(fits, df)
        span = {f: math.log10(g["x_max"].max() / g["x_min"].min()) for f, g in fits.groupby("fit")}
        out[BLOCKS[5]] = S.render(BLOCKS[5], S=S_, n_boot=N_BOOT, tol=f"{CLAIMS['oco/dp_ftrl_masked'].tolerance:g}",
                                  spans=", ".join(f"{span[f]:.2f} ({f})" for f in sorted(span)), rows=len(v),
                                  tally=tally(v), table=verdict_table(v))
    return out


publish = S.publisher(page_blocks)
