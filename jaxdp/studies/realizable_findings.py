"""``realizable-findings``: experiments that decide the open findings on the realizable paper.

"Realizable private online optimization"; derivations in docs/algorithms/realizable-findings.md.
Column ``exp``:

* ``adaptive`` (Alg. 2): the doubling test as printed (``noisy loss > Lbar - margin``) and
  flipped (``> Lbar + margin``), in ``paper`` and ``rate`` modes, beside Alg. 1 told L*, on
  near-realizable Bernoulli losses (``l_t(x*) ~ Ber(L*/T)``). Reports the doublings (final
  ``Lbar = 2^doublings``), draws and regret. Prediction: printed doubles ``~log2(margin)`` times
  whatever L*; flipped doubles only when L* exceeds ``Lbar``; paper mode's threshold exceeds T, so
  it never switches.
* ``potential`` (Alg. 5): the algorithm as printed (``potential``), the same with the larger K of
  the corrected variant (``potential_bigK``) and the corrected variant with an own-loss guard
  (``guarded``, :func:`jaxdp.experts.potential.guarded_potential_experts`) on the halving
  adversary: regret vs T (printed: linear; guarded: flat up to its scale 1/η ∝ log T).
* ``binary_tree`` (Alg. 4): ``d`` with ``m_set < d`` so that new phases are possible; ``paper``
  and ``rate`` thresholds; phases started and regret vs T.
* ``oco`` (Thm 4): DP-FTRL (matched lambda) on the sphere instance and on the masked quadratic
  instance (:mod:`jaxdp.oco.masked_quadratic`), regret vs d; slope in d (claimed 1/3).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pathlib

import jax.numpy as jnp
import numpy as np

from ..core import seed_keys, simulate
from ..experts import HalvingParams, RealizableBernoulliParams, adv_realizable_bernoulli, adv_realizable_halving, experts_problem
from ..privacy.mechanisms import tree_depth
from ..oco import (
    adv_smooth_realizable, dp_ftrl, dp_ftrl_lambda_matched, dp_ftrl_params, plan_dp_ftrl, smooth_realizable_params,
    squared_problem,
)
from ..oco.masked_quadratic import adv_masked_quadratic, masked_quadratic_params, masked_quadratic_problem
from ..experts import (
    adaptive_sparse_vector_experts, binary_tree_experts, binary_tree_static, params_from_plan,
    plan_adaptive_sparse_vector_experts, plan_binary_tree_experts, plan_potential_experts, plan_sparse_vector_experts,
    potential_experts, sparse_vector_experts,
)
from ..experts.potential import guarded_potential_experts, plan_guarded_potential_experts
from ..registry import register_study
from .analysis import _pow2, fmt_ci, fmt_num, markdown_table, publish_blocks, ratio_to_base, verdict_table
from .framework import Param, Study, declare_params, fit_slopes, plot_curves, summarize

if TYPE_CHECKING:
    import pandas as pd

DEFAULTS = {
    "seeds": 256, "seed": 0, "beta": 0.1, "q": 0.5, "delta": 1e-6,
    "experiments": "adaptive,potential,binary_tree,oco",
    # adaptive
    "ad_d": 16, "ad_eps": 4.0, "ad_T": [2 ** 16, 2 ** 18, 2 ** 20], "ad_Lstar": [0, 4096], "ad_modes": ["rate", "paper"],
    # potential
    "pot_d": 16, "pot_eps": 8.0, "halving_r": 1024, "pot_T": [2 ** 14, 2 ** 16, 2 ** 18, 2 ** 20],
    # binary tree
    "bt_d": 256, "bt_eps": 1.0, "bt_T": [2 ** 14, 2 ** 16, 2 ** 18], "bt_modes": ["rate", "paper"],
    # oco
    "oco_d": [2, 4, 8, 16, 32, 64, 128], "oco_T": 8192, "oco_eps": 4.0, "oco_D": 1.0,
}
QUICK = {"seeds": 4, "ad_T": [2 ** 14], "ad_Lstar": [0, 64], "pot_T": [2 ** 12, 2 ** 14], "halving_r": 256,
         "bt_d": 64, "bt_T": [2 ** 12, 2 ** 14], "oco_d": [2, 8], "oco_T": 1024}

EXPERIMENTS = ("adaptive", "potential", "binary_tree", "oco")


def _points(cfg):
    exps = [e.strip() for e in str(cfg["experiments"]).split(",") if e.strip()]
    for e in exps:
        if e not in EXPERIMENTS:
            raise ValueError(f"experiments: unknown experiment {e!r}; known: {list(EXPERIMENTS)}")
    pts = []
    if "adaptive" in exps:
        for mode in cfg["ad_modes"]:
            for lrn in ("adaptive_printed", "adaptive_flipped", "sv_known_Lstar"):
                for Ls in cfg["ad_Lstar"]:
                    for T in cfg["ad_T"]:
                        pts.append(dict(exp="adaptive", learner=lrn, mode=mode, d=int(cfg["ad_d"]), T=int(T),
                                        eps=float(cfg["ad_eps"]), Lstar=float(Ls)))
    if "potential" in exps:
        for lrn in ("potential", "potential_bigK", "guarded"):
            for T in cfg["pot_T"]:
                pts.append(dict(exp="potential", learner=lrn, mode="rate", d=int(cfg["pot_d"]), T=int(T),
                                eps=float(cfg["pot_eps"]), Lstar=0.0))
    if "binary_tree" in exps:
        for mode in cfg["bt_modes"]:
            for T in cfg["bt_T"]:
                pts.append(dict(exp="binary_tree", learner="binary_tree", mode=mode, d=int(cfg["bt_d"]), T=int(T),
                                eps=float(cfg["bt_eps"]), Lstar=0.0))
    if "oco" in exps:
        for inst in ("sphere", "masked"):
            for d in cfg["oco_d"]:
                pts.append(dict(exp="oco", learner=f"dp_ftrl_{inst}", mode="paper", d=int(d), T=int(cfg["oco_T"]),
                                eps=float(cfg["oco_eps"]), Lstar=0.0))
    return pts


def _metrics(out, n, **const):
    r = {"regret": np.asarray(out["regret"], float), "best_loss": np.asarray(out["best_loss"], float),
         "switches": np.asarray(out["switches"], float) if "switches" in out else np.full(n, np.nan)}
    for k in ("em_draws", "doublings", "phases", "padded"):
        r[k] = np.asarray(out[k], float) if k in out else np.full(n, np.nan)
    for k, v in const.items():
        r[k] = np.full(n, float(v))
    return r


def _run_adaptive(p, cfg, keys, n):
    d, T, eps, Ls = p["d"], p["T"], p["eps"], p["Lstar"]
    if p["learner"] == "sv_known_Lstar":
        plan = plan_sparse_vector_experts(eps=eps, T=T, d=d, mode=p["mode"], beta=cfg["beta"], Lstar=Ls)
        L = sparse_vector_experts(d)
        thr = plan.params["L"]
    else:
        sign = "flipped" if p["learner"] == "adaptive_flipped" else "printed"
        plan = plan_adaptive_sparse_vector_experts(eps=eps, T=T, d=d, mode=p["mode"], beta=cfg["beta"], test_sign=sign)
        L = adaptive_sparse_vector_experts(d)
        thr = plan.params["L_offset"] + plan.params["Lbar0"]
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
    d, T, eps = p["d"], p["T"], p["eps"]
    plan = plan_binary_tree_experts(eps=eps, T=T, d=d, mode=p["mode"], beta=cfg["beta"])
    L = binary_tree_experts(d, **binary_tree_static(plan))
    # halving epochs of length tau + 1: each elimination can be seen by the trees
    r = int(cfg["halving_r"])
    out = simulate(L, adv_realizable_halving(d), experts_problem(), params_from_plan(plan), HalvingParams(r=jnp.int32(r)),
                   keys, T, T_max=T, n_checkpoints=4)
    pr = plan.params
    return _metrics(out, n, tau=pr["tau"], m_set=pr["m_set"], P_max=pr["P_max"], eps_certified=plan.eps_certified)


def _run_oco(p, cfg, keys, n):
    d, T, eps, D = p["d"], p["T"], p["eps"], float(cfg["oco_D"])
    Lip = 2.0 * D
    plan = plan_dp_ftrl(eps=eps, delta=cfg["delta"], T=T, d=d, mode="paper", L=Lip, D=D, beta=1.0)
    lam = dp_ftrl_lambda_matched(T, d, tree_depth(T), plan.params["sigma"], D, 1.0)   # matched Thm 4 balance
    params = dp_ftrl_params(lam, plan.params["sigma"], plan.params["clip"])
    if p["learner"] == "dp_ftrl_masked":
        prob, adv, ap = masked_quadratic_problem(d, D), adv_masked_quadratic(d), masked_quadratic_params(D, 0.5)
    else:
        prob, adv, ap = squared_problem(d, D), adv_smooth_realizable(d), smooth_realizable_params(D, 0.0)
    out = simulate(dp_ftrl(prob, T), adv, prob, params, ap, keys, T, T_max=T, n_checkpoints=4)
    return _metrics(out, n, lam=lam, sigma=plan.params["sigma"], eps_certified=plan.eps_certified)


#: the curves of each experiment's fit (one slope per group) and its abscissa
FIT_GROUPS = {"adaptive": ("learner", "mode", "Lstar"), "potential": ("learner",), "binary_tree": ("mode",),
              "oco": ("learner",)}


def _fit_table(df, n_boot: int = 500):
    """Every fit of the study: regret vs ``T`` per curve of ``adaptive``, ``potential`` and ``binary_tree``, regret vs
    ``d`` per ``oco`` instance (claimed 1/3), over the whole grid; every point uses the same seed keys, so seed
    indices are resampled jointly across a curve. ``None`` when nothing has two abscissae."""
    import pandas as pd

    sl = []
    for exp, grp in FIT_GROUPS.items():
        x = "d" if exp == "oco" else "T"
        sub = df[df["exp"] == exp]
        if len(sub) and sub[x].nunique() > 1:
            f = fit_slopes(sub, x, "regret", list(grp), upper_half=False, n_boot=n_boot, resample="joint")
            f.insert(0, "fit", f"{exp}: regret vs {x}")
            if exp == "oco":
                f["claimed"] = 1 / 3
            sl.append(f)
    return pd.concat(sl, ignore_index=True) if sl else None


_RUN = {"adaptive": _run_adaptive, "potential": _run_potential, "binary_tree": _run_binary_tree, "oco": _run_oco}


_POS: dict[str, Any] = dict(lo=0.0, lo_open=True)
PARAMS = declare_params("realizable-findings", {
    "seeds": Param("int", lo=1), "seed": Param("int", lo=0),
    "beta": Param("float", lo=0.0, hi=0.5, lo_open=True, hi_open=True),
    "q": Param("float", lo=0.0, hi=1.0, lo_open=True), "delta": Param("float", lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "experiments": Param("str", help="comma-separated subset of " + ",".join(EXPERIMENTS)),
    "ad_d": Param("int", lo=2), "ad_eps": Param("float", **_POS), "ad_T": Param("int", many=True, lo=2, hi=2 ** 30),
    "ad_Lstar": Param("float", many=True, lo=0.0), "ad_modes": Param("str", many=True, choices=("paper", "certified", "rate")),
    "pot_d": Param("int", lo=2), "pot_eps": Param("float", **_POS), "halving_r": Param("int", lo=1),
    "pot_T": Param("int", many=True, lo=2, hi=2 ** 30),
    "bt_d": Param("int", lo=2), "bt_eps": Param("float", **_POS), "bt_T": Param("int", many=True, lo=2, hi=2 ** 30),
    "bt_modes": Param("str", many=True, choices=("paper", "rate")),
    "oco_d": Param("int", many=True, lo=1, hi=4096), "oco_T": Param("int", lo=2, hi=2 ** 30),
    "oco_eps": Param("float", **_POS), "oco_D": Param("float", **_POS),
})


@register_study("realizable-findings", defaults=DEFAULTS, quick=QUICK,
                description="REAL open findings: Alg. 2 doubling sign/offset, Alg. 5 stale sample (guarded variant), "
                            "Alg. 4 horizon, DP-OCO instance growing with d")
def build(cfg: dict) -> Study:
    """The ``realizable-findings`` study: the ``adaptive``, ``potential``, ``binary_tree`` and ``oco``
    experiments of the module docstring.

    Args:
        cfg: the resolved configuration: ``experiments`` (the selection), each experiment's grids
            and settings, seeds and the root seed.

    Returns:
        The :class:`jaxdp.studies.Study`; its tables are ``summary`` (regret, draws, doublings and
        phases per point) and ``slopes`` (regret vs ``T`` per experiment, and vs ``d`` for ``oco``
        with the claimed 1/3).

    Raises:
        ValueError: an unknown experiment.
    """
    points = _points(cfg)

    def run(pts, seeds):
        keys = seed_keys(int(cfg["seed"]), seeds)
        return [_RUN[p["exp"]](p, cfg, keys, len(seeds)) for p in pts]

    def analyze(df):
        by = ["exp", "learner", "mode", "d", "T", "eps", "Lstar"]
        s = summarize(df, by, ["regret", "em_draws", "doublings", "phases"])
        tables = {"summary": s}
        fits = _fit_table(df)
        if fits is not None:
            tables["slopes"] = fits
        return tables

    def plot(df, outdir: pathlib.Path):
        paths = []
        for exp, x, hue in (("potential", "T", "learner"), ("binary_tree", "T", "mode"), ("oco", "d", "learner")):
            sub = df[df["exp"] == exp]
            if not len(sub):
                continue
            s = summarize(sub, [hue, x], ["regret"])
            th = {"linear in T": lambda T: T / 2.0} if exp == "potential" else (
                {"d^(1/3)": (lambda d, s=s: float(s["regret_mean"].min()) * (d / float(s["d"].min())) ** (1 / 3))}
                if exp == "oco" else None)
            paths.append(plot_curves(s, x, "regret", outdir / f"{exp}.png", hue=hue, theory=th,
                                     title=f"realizable findings: {exp}"))
        sub = df[df["exp"] == "adaptive"].copy()
        if len(sub):
            sub["curve"] = sub["learner"] + " / " + sub["mode"] + " / L*=" + sub["Lstar"].map("{:g}".format)
            s = summarize(sub, ["curve", "T"], ["regret"])
            paths.append(plot_curves(s, "T", "regret", outdir / "adaptive.png", hue="curve",
                                     theory={"T/2 (never switches)": lambda T: T / 2.0},
                                     title="Alg. 2: regret vs T (printed vs flipped doubling test)"))
        return paths

    return Study(name="realizable-findings", points=points, seeds=int(cfg["seeds"]), run=run,
                 group_by=("exp", "learner", "mode", "d", "T"), analyze=analyze, plot=plot, config=cfg,
                 seeds_per_chunk=None, points_per_chunk=16, description="REAL open findings")


# --------------------------------------------------------------------------- the results page

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC_PAGE = ROOT / "docs" / "results" / "realizable-findings.md"
RESULTS = ROOT / "results" / "realizable-findings"
BLOCKS = ("realizable-findings adaptive", "realizable-findings potential", "realizable-findings binary tree",
          "realizable-findings oco", "realizable-findings slopes", "realizable-findings verdicts")
N_BOOT = 2000

# --------------------------------------------------------------------------- verdicts
_WHY = "../algorithms/realizable-findings.md#"
#: (experiment, curve: the learner, or the threshold mode of ``binary_tree``) -> (claim as the docs state it, claimed
#: exponent, kind, the T-dependent scale the claim is stated up to or ``None``); docs/algorithms/realizable.md and
#: docs/algorithms/realizable-findings.md. Curves not listed are "not tested".
CLAIMS = {
    ("adaptive", "adaptive_flipped"): ("Thm 2: regret free of T once T ≳ 10 L₀ (slope after ÷ L₀)", 0.0, "at_most", "L₀"),
    ("adaptive", "adaptive_printed"): ("Thm 2: regret free of T once T ≳ log₂(0.8m)·L₀ + 0.8m, the printed test's "
                                       "doublings first (slope after ÷ L₀)", 0.0, "at_most", "L₀"),
    ("adaptive", "sv_known_Lstar"): ("Thm 1 (L* told): regret free of T (slope after ÷ L)", 0.0, "at_most", "L"),
    ("potential", "potential"): ("Thm 6: regret O(log² d · log T/ε) = O(ln d/η) (slope after ÷ 1/η)", 0.0, "at_most",
                                 "1/η"),
    ("potential", "potential_bigK"): ("Thm 6 with the corrected variant's K (slope after ÷ 1/η)", 0.0, "at_most", "1/η"),
    ("potential", "guarded"): ("corrected variant, sketched and not proved: 2e^{3α/s_φ}(L* + ln(1/γ)/η) "
                               "(slope after ÷ 1/η)", 0.0, "at_most", "1/η"),
    ("binary_tree", "paper"): ("Alg. 4: regret ≈ (d/2m_set)·τ, free of T once T ≫ (d/m_set)·τ (slope after ÷ "
                               "(d/m_set)·τ)", 0.0, "at_most", "(d/m_set)·τ"),
    ("binary_tree", "rate"): ("Alg. 4: regret ≈ (d/2m_set)·τ, free of T once T ≫ (d/m_set)·τ (slope after ÷ "
                              "(d/m_set)·τ)", 0.0, "at_most", "(d/m_set)·τ"),
    ("oco", "dp_ftrl_masked"): ("Thm 4: regret ∝ d^{1/3} (worst case; the masked quadratic instance)", 1 / 3, "equals",
                                None),
    ("oco", "dp_ftrl_sphere"): ("Thm 4: regret ∝ d^{1/3} (worst case)", 1 / 3, "equals", None),
}
#: each scale as a function of a cell's per-point table (one row per abscissa, columns of ``results.csv``)
SCALES = {"L₀": lambda p: p["threshold0"], "L": lambda p: p["threshold0"], "1/η": lambda p: 1.0 / p["eta"],
          "(d/m_set)·τ": lambda p: p["d"] / p["m_set"] * p["tau"]}
#: docs/algorithms/realizable-findings.md#adaptive: with only a few switches, Alg. 2 is flat in T from T ≳ 10 L₀
ADAPTIVE_FLAT = 10.0


def _sci(v: float) -> str:
    """``v`` with two significant digits as the pages print a large number (``1.7·10⁵``)."""
    m, e_txt = f"{float(v):.1e}".split("e")
    e = int(e_txt)
    sup = str(e).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return m if e == 0 else f"{m}·10{sup}"


def _log_slope(x, y) -> float:
    """Least-squares slope of ``log y`` on ``log x`` (the fits' slope of a deterministic curve)."""
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


def _point_table(results):
    """One row per grid point of ``results.csv``: the means of regret, draws and phases, the share of seeds whose
    regret exceeds T/2, and the planners' constants (first value)."""
    by = ["exp", "learner", "mode", "d", "T", "Lstar"]
    g = results.assign(stuck=results["regret"] > results["T"] / 2).groupby(by, sort=True, dropna=False)
    const = [c for c in ("threshold0", "margin", "eta", "tau", "m_set", "P_max", "lam") if c in results]
    return g[["regret", "em_draws", "phases", "stuck"]].mean().join(g[const].first()).reset_index()


def _cell_points(pts, r, exp):
    """The grid points of one fitted cell, sorted by the fit's abscissa and restricted to its range."""
    x = "d" if exp == "oco" else "T"
    sel = pts[pts["exp"] == exp]
    for k in FIT_GROUPS[exp]:
        sel = sel[sel[k] == getattr(r, k)]
    sel = sel[(sel[x] >= r.x_min) & (sel[x] <= r.x_max)]
    return sel.sort_values(x).reset_index(drop=True), x


def _cell_name(r, exp) -> str:
    if exp == "adaptive":
        return f"{r.learner}, {r.mode}, L* = {r.Lstar:g}"
    if exp == "binary_tree":
        return f"{r.mode} τ"
    return str(r.learner).replace("dp_ftrl_", "")


def _below_regime(exp, curve, p) -> str:
    """Why the cell's grid does not reach the horizon its claim is derived for (``""`` when it does).

    docs/algorithms/realizable-findings.md: Alg. 2 is flat from T ≳ 10 L₀ with the flipped test, from
    T ≳ log₂(0.8 m)·L₀ + 0.8 m with the printed one (its doublings come first); Alg. 4 with the paper's τ from
    T ≫ (d/m_set)·τ. The rate τ of Alg. 4 fails at every horizon (its log factor is needed), so it is tested.
    """
    if exp == "adaptive" and curve == "adaptive_flipped":
        need, rule = ADAPTIVE_FLAT * p["threshold0"], "10 L₀"
    elif exp == "adaptive" and curve == "adaptive_printed":
        m8 = 0.8 * p["margin"].abs()
        need, rule = np.log2(m8) * p["threshold0"] + m8, "log₂(0.8m)·L₀ + 0.8m"
    elif exp == "binary_tree" and curve == "paper":
        need, rule = p["d"] / p["m_set"] * p["tau"], "(d/m_set)·τ"
    else:
        return ""
    T = p["T"].to_numpy(float)
    need = need.to_numpy(float)
    if (T >= need).all():
        return ""
    if T[-1] < need[-1]:
        why = f"the grid ends at T = {_pow2(T[-1])}, below {rule} = {_sci(need[-1])} there"
    else:
        why = f"the grid starts at T = {_pow2(T[0])}, below {rule} = {_sci(need[0])} there"
    if exp == "binary_tree":
        quiet = p.loc[p["phases"] == 0, "T"]
        if len(quiet):
            why += f"; no phase ends at T ≤ {_pow2(quiet.max())}"
    return why


def _miss_reason(exp, curve, p, scale) -> tuple:
    """``(reason, link)`` of a miss: the derivation that explains it, with the cell's numbers."""
    if exp == "adaptive":
        sc = SCALES[scale](p).to_numpy(float)
        why = (f"regret ÷ {scale} goes {p['regret'].iloc[0] / sc[0]:.2f} → {p['regret'].iloc[-1] / sc[-1]:.2f} "
               f"while the mean draws go {p['em_draws'].iloc[0]:.2f} → {p['em_draws'].iloc[-1]:.2f}")
        if curve == "sv_known_Lstar":
            if float(p["Lstar"].iloc[0]) > 0:
                why += ("; the best expert's own loss over the discarded epochs (≈ L*·t/T) shrinks as T grows, so the "
                        "regret rises towards its T-free limit")
            return why, "#misses"
        return why + ": each switch costs up to the threshold", _WHY + "adaptive"
    if exp == "potential":
        last = p.iloc[-1]
        if curve == "guarded":
            return (f"utility measured, not proved; regret ÷ 1/η goes {p['regret'].iloc[0] * p['eta'].iloc[0]:.2f} → "
                    f"{last['regret'] * last['eta']:.2f}", _WHY + "potential")
        why = "more budget does not help, " if curve == "potential_bigK" else ""
        return (why + f"the stale sample (Lemma C.3 is false): {last['stuck']:.0%} of seeds end with regret > T/2 at "
                f"T = {_pow2(last['T'])}", _WHY + "potential")
    if exp == "binary_tree":
        last = p.iloc[-1]
        why = f"regret/T = {last['regret'] / last['T']:.2f} at T = {_pow2(last['T'])}"
        if curve == "rate":
            why = (f"τ without its log factor sits in the zero-loss expert's tree noise: {last['phases']:.1f} of "
                   f"P_max − 1 = {int(last['P_max']) - 1} new phases used, " + why)
        return why, _WHY + "binary-tree"
    if exp == "oco" and curve == "dp_ftrl_masked":
        s = _log_slope(p["d"], p["lam"])
        return (f"λ = 32β + (…)^{{1/3}} grows only as d^{s:.3f} here (its d-free term 32β), so the noise cost "
                f"∝ d/λ² grows as d^{1 - 2 * s:.3f}", _WHY + "oco")
    return "the measured slope is outside the claim", "#misses"


def verdicts(slopes, results) -> "pd.DataFrame":
    """One verdict per fitted cell of the ``slopes`` table, against the claims of ``CLAIMS``.

    A "free of T" claim is tested on the slope of the mean regret divided by its scale (``SCALES``: a deterministic
    function of T, so the slope and both ends of its interval move by the scale's own log-log slope), ``at_most``
    0. A cell whose grid does not reach the horizon the claim is derived for (Alg. 2 below 10 L₀, or below
    log₂(0.8m)·L₀ + 0.8m for the printed test; Alg. 4 with the paper's τ below (d/m_set)·τ) is "not tested", as is
    the sphere instance in d (not the worst case of Theorem 4) and any curve without a claim. Every miss names the
    derivation that explains it.

    Args:
        slopes: the fits, as the study's ``slopes`` table (``fit``, the curve columns ``learner``, ``mode``,
            ``Lstar``, ``slope``, ``slope_lo``, ``slope_hi``, ``x_min``, ``x_max``, ``n_seeds``).
        results: the per-seed rows of ``results.csv`` (the regret, draws and phases, and the planners' constants
            ``threshold0``, ``margin``, ``eta``, ``tau``, ``m_set``, ``P_max``, ``lam`` of the cells' points).

    Returns:
        The verdict rows (columns of :func:`jaxdp.studies.analysis.verdict_table`).
    """
    import pandas as pd

    from .analysis import slope_verdict

    pts = _point_table(results)
    rows = []
    for r in slopes.itertuples(index=False):
        exp = r.fit.split(":")[0]
        curve = r.mode if exp == "binary_tree" else r.learner
        p, x = _cell_points(pts, r, exp)
        row = dict(experiment=r.fit, cell=_cell_name(r, exp), n_seeds=int(r.n_seeds), reason="", link="")
        if (exp, curve) not in CLAIMS:
            rows.append(dict(row, claim="no claim stated for this curve", claimed=np.nan, kind="equals",
                             slope=r.slope, slope_lo=r.slope_lo, slope_hi=r.slope_hi, verdict="not tested",
                             reason="reported for comparison"))
            continue
        text, claimed, kind, scale = CLAIMS[(exp, curve)]
        shift = _log_slope(p[x], SCALES[scale](p)) if scale and len(p) > 1 else 0.0
        row.update(claim=text, claimed=claimed, kind=kind, slope=r.slope - shift, slope_lo=r.slope_lo - shift,
                   slope_hi=r.slope_hi - shift)
        below = _below_regime(exp, curve, p)
        if below:
            rows.append(dict(row, verdict="not tested", reason=below, link=_WHY + ("adaptive" if exp == "adaptive"
                                                                                  else "binary-tree")))
            continue
        if exp == "oco" and curve == "dp_ftrl_sphere":
            rows.append(dict(row, verdict="not tested", link=_WHY + "oco",
                             reason="the sphere instance's curvature E[aaᵀ] = I/d cancels the d of the tree noise, so "
                                    "it gets easier with d: not the worst case"))
            continue
        v = slope_verdict(row["slope_lo"], row["slope_hi"], claimed, kind)
        if v == "misses":
            reason, link = _miss_reason(exp, curve, p, scale)
            row.update(reason=reason, link=link)
        elif v == "not tested":
            row.update(reason="no interval: fewer than two positive means")
        rows.append(dict(row, verdict=v))
    return pd.DataFrame(rows)


def _counts(v) -> str:
    """The verdict counts of a verdict table, as one sentence."""
    n = v["verdict"].value_counts()
    parts = [f"{int(n.get(k, 0))} {w}" for k, w in (("holds", "hold"), ("holds by construction", "hold by construction"),
                                                    ("misses", "miss"), ("not tested", "not tested"))]
    return f"**{len(v)} fitted cells: " + ", ".join(parts) + ".**"


def _summary(g, by, extra=()):
    s = summarize(g, by, ["regret"])
    agg = g.groupby(by, sort=True).agg(**{c: (c, "mean") for c in ("em_draws", "doublings", "phases")},
                                       **{f"{c}_first": (c, "first") for c in extra})
    return s.merge(agg.reset_index(), on=by)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of ``docs/results/realizable-findings.md`` from a kept run's ``results.csv``.

    Every point uses the same seed keys (``seed_keys(seed, i)``), so the slopes' intervals resample seed indices
    jointly across a curve's points and comparisons between learners at one point are seed-paired
    (:func:`jaxdp.studies.analysis.ratio_to_base`).

    Args:
        results_dir: the results directory (default ``results/realizable-findings``).

    Returns:
        ``{block name: Markdown}`` for :data:`BLOCKS`: the four experiments' tables (every point), the slopes and
        the verdict of every fitted cell (:func:`verdicts`).
    """
    import pandas as pd

    dd = pathlib.Path(results_dir) if results_dir is not None else RESULTS
    df = pd.read_csv(dd / "results.csv")
    S = int(df.groupby(["exp", "learner", "mode", "d", "T", "Lstar"])["seed"].nunique().min())
    out = {}
    src = (f"*Generated from `results/realizable-findings/results.csv` by `jaxdp.studies.realizable_findings.publish`; "
           f"do not edit by hand.* {S} seeds per point; regret means with 95% bootstrap intervals over the point's "
           "seeds.")

    a = df[df["exp"] == "adaptive"]
    if len(a):
        s = _summary(a, ["learner", "mode", "Lstar", "T"], ("threshold0",))
        rows = [[r.learner, r.mode, f"{r.Lstar:g}", _pow2(r.T), fmt_ci(r.regret_mean, r.regret_lo, r.regret_hi, 0),
                 f"{r.em_draws:.2f}", "—" if not np.isfinite(r.doublings) else f"{r.doublings:.2f}",
                 f"{r.threshold0_first:.0f}"] for r in s.itertuples(index=False)]
        pair = a[a["learner"].isin(["adaptive_printed", "adaptive_flipped"])]
        w = pair.pivot_table(index=["mode", "Lstar", "T", "seed"], columns="learner", values="regret")
        ndiff = (w["adaptive_printed"] != w["adaptive_flipped"]).groupby(level=[0, 1, 2]).sum()
        rat = ratio_to_base(pair, ["mode", "Lstar", "T"], "learner", "adaptive_flipped", "regret", n_boot=N_BOOT)
        prows = [[r.mode, f"{r.Lstar:g}", _pow2(r.T), int(ndiff.loc[(r.mode, r.Lstar, r.T)]),
                  fmt_ci(r.ratio, r.ratio_lo, r.ratio_hi)] for r in rat.itertuples(index=False)]
        same = [k for k, v in ndiff.items() if v == 0]
        modes = sorted({k[0] for k in same})
        full = [m for m in modes if all(v == 0 for k, v in ndiff.items() if k[0] == m)]
        note = (f"In {', '.join(full)} mode the printed and flipped tests give the same regret at every seed, L* and T "
                "(the doublings change nothing at these horizons): those rows are one measurement, not two. "
                if full else "")
        out[BLOCKS[0]] = (src + "\n\n" + markdown_table(
            ["learner", "mode", "L*", "T", "regret [95% CI]", "draws", "doublings", "initial threshold L₀"], rows)
            + "\n\n" + note + "Printed against flipped, seed-paired (both read the same seed keys): seeds whose "
            f"regret differs, and the ratio of mean regrets printed / flipped with a 95% paired bootstrap interval "
            f"({N_BOOT} replicates).\n\n"
            + markdown_table(["mode", "L*", "T", "seeds that differ", "printed / flipped [95% CI]"], prows))

    p = df[df["exp"] == "potential"]
    if len(p):
        s = _summary(p, ["learner", "T"], ("K", "threshold"))
        half = p.assign(h=p["regret"] > p["T"] / 2).groupby(["learner", "T"])["h"].mean()
        rows = [[r.learner, _pow2(r.T), fmt_ci(r.regret_mean, r.regret_lo, r.regret_hi, 0),
                 f"{r.regret_mean / r.T:.3f}", f"{r.em_draws:.1f}", f"{r.K_first:.0f}", f"{r.threshold_first:.0f}",
                 f"{half.loc[(r.learner, r.T)]:.2f}"] for r in s.itertuples(index=False)]
        rat = ratio_to_base(p, ["T"], "learner", "potential", "regret", n_boot=N_BOOT)
        prows = [[r.learner, _pow2(r.T), fmt_ci(r.ratio, r.ratio_lo, r.ratio_hi)] for r in rat.itertuples(index=False)]
        out[BLOCKS[1]] = (src + "\n\n" + markdown_table(
            ["learner", "T", "regret [95% CI]", "regret / T", "resamples", "K", "threshold 2α/(s_φη)",
             "seeds with regret > T/2"], rows) + "\n\nEach variant over the algorithm as printed, seed-paired (95% "
            f"paired bootstrap, {N_BOOT} replicates):\n\n"
            + markdown_table(["learner", "T", "regret / printed's [95% CI]"], prows))

    b = df[df["exp"] == "binary_tree"]
    if len(b):
        s = _summary(b, ["mode", "T"], ("m_set", "tau"))
        anyp = b.assign(h=b["phases"] > 0).groupby(["mode", "T"])["h"].mean()
        rows = [[r.mode, _pow2(r.T), fmt_ci(r.regret_mean, r.regret_lo, r.regret_hi, 0), f"{r.regret_mean / r.T:.3f}",
                 f"{r.phases:.2f}", f"{anyp.loc[(r.mode, r.T)]:.2f}", f"{r.m_set_first:.0f}", f"{r.tau_first:.0f}"]
                for r in s.itertuples(index=False)]
        out[BLOCKS[2]] = src + "\n\n" + markdown_table(
            ["threshold", "T", "regret [95% CI]", "regret / T", "new phases", "seeds with a new phase", "m_set", "τ"],
            rows)

    o = df[df["exp"] == "oco"]
    if len(o):
        s = summarize(o, ["learner", "d"], ["regret"])
        rows = [[r.learner.replace("dp_ftrl_", ""), int(r.d), fmt_ci(r.regret_mean, r.regret_lo, r.regret_hi, 2)]
                for r in s.itertuples(index=False)]
        fa = fit_slopes(o, "d", "regret", ["learner"], upper_half=False, n_boot=N_BOOT, resample="joint")
        f8 = fit_slopes(o[o["d"] >= 8], "d", "regret", ["learner"], upper_half=False, n_boot=N_BOOT, resample="joint")
        srows = [[x.learner.replace("dp_ftrl_", ""), fmt_ci(x.slope, x.slope_lo, x.slope_hi),
                  fmt_ci(y.slope, y.slope_lo, y.slope_hi), fmt_num(1 / 3)] for x, y in
                 zip(fa.itertuples(index=False), f8.itertuples(index=False))]
        out[BLOCKS[3]] = (src + " Slopes: seed indices resampled jointly across d.\n\n"
                          + markdown_table(["instance", "d", "regret [95% CI]"], rows) + "\n\n"
                          + markdown_table(["instance", "slope in d, all d [95% CI]", "slope in d, d ≥ 8 [95% CI]",
                                            "claimed"], srows))

    fits = _fit_table(df, N_BOOT)
    rows = []
    for r in (fits.itertuples(index=False) if fits is not None else ()):
        exp = r.fit.split(":")[0]
        if exp == "oco":
            rows.append([r.fit, r.learner, fmt_ci(r.slope, r.slope_lo, r.slope_hi), f"{r.x_min:g} … {r.x_max:g}",
                         int(r.n_seeds)])
        else:
            cell = ", ".join(f"{k} = {getattr(r, k):g}" if k == "Lstar" else str(getattr(r, k)) for k in FIT_GROUPS[exp])
            rows.append([r.fit, cell, fmt_ci(r.slope, r.slope_lo, r.slope_hi), f"{_pow2(r.x_min)} … {_pow2(r.x_max)}",
                         int(r.n_seeds)])
    out[BLOCKS[4]] = ("*Generated; do not edit by hand.* Every fit of the study: least-squares slope of log mean regret "
                      "over the whole grid. Every point uses the same seed keys, so each interval is a 95% percentile "
                      f"bootstrap over seed indices resampled jointly across the curve's points ({N_BOOT} replicates)."
                      "\n\n" + markdown_table(["fit", "curve", "slope [95% CI]", "range", "seeds"], rows))
    if fits is not None:
        v = verdicts(fits, df)
        out[BLOCKS[5]] = (f"*Generated from `results/realizable-findings/results.csv`; do not edit by hand.* {S} seeds "
                          "per point. The fits are those of the [last table](#every-fit): every point uses the same "
                          "seed keys, so each 95% interval is a percentile bootstrap over seed indices resampled "
                          f"jointly across the curve's points ({N_BOOT} replicates; `slopes.csv` keeps the same fits "
                          "with the study's fewer replicates). A claim \"free of T\" is stated up to the T-dependent "
                          "scale of its derivation (L₀ or L, the sparse-vector threshold; 1/η ∝ log T; (d/m_set)·τ), so "
                          "its slope is that of the mean regret divided by the scale: the scale is a deterministic "
                          "function of T, which shifts the slope and both ends of its interval by the scale's own "
                          "slope. A cell whose grid does not reach the horizon the claim is derived for is not "
                          "tested.\n\n" + _counts(v) + "\n\n" + verdict_table(v))
    return out


def publish(results_dir=None) -> list:
    """Rewrite the generated blocks of ``docs/results/realizable-findings.md`` from a kept run (:func:`page_blocks`).

    Args:
        results_dir: the results directory (default ``results/realizable-findings``).

    Returns:
        The names of the blocks that changed.
    """
    return publish_blocks(DOC_PAGE, page_blocks(results_dir))
