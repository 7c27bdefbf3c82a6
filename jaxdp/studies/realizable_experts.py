"""``realizable-experts``: REAL (realizable DP experts) claims R1–R6, R9 of docs/algorithms/realizable.md#studies.

Experiments (column ``exp``), all with the planners' ``mode`` (default ``rate``: privacy
parameters certified, threshold constants dropped; docs/guide/planning.md#modes):

* ``vsT`` (R1): regret vs T at fixed d, ε for ``sparse_vector`` (pure), ``potential``,
  ``binary_tree`` (REAL Alg. 4 as concretized in docs/algorithms/realizable.md#binary-tree-experts) and non-private ``hedge`` (fixed η = 1)
  on ``adv_realizable_halving`` (epochs r = 2L + 1, L the sparse-vector threshold) and
  ``adv_realizable_bernoulli``. Expected: flat.
* ``vsd`` (R2, R3, R9): regret and exponential-mechanism draws (switches) vs d, pure and
  approximate (δ = 1e-6) sparse vector, potential and binary tree; slopes vs log d.

* ``vseps`` (R4): regret vs ε (slope −1).
* ``Lstar`` (R5): ``adaptive_sparse_vector`` (doubling test as printed and flipped) and the
  known-L* sparse vector on near-realizable Bernoulli losses, ``l_t(x*) ~ Ber(L*/T)``.
* ``lb`` (R6): ``adv_realizable_lb`` (REAL Thm 5), ratio regret / (log d / ε) vs the bound 1/32.

``binary_tree`` starts a new phase (a fresh exponential-mechanism selection of ``m_set`` experts)
only when every tree output of the current set exceeds ``tau = H^1.5 / eps_tree`` (``rate`` mode;
``× log(2 m_set T/β)`` otherwise). Where ``m_set = min(d, ceil(2 log(dT))) = d`` (d <= 16 on the
default and quick grids) the zero-loss expert is always in the set, so a new phase can only be
triggered by the Laplace tree noise of that expert (std ~ sqrt(2 popcount(t)) H / eps_tree,
comparable to tau) and the re-selection is padded with used experts; for larger d a phase ends
when every selected expert looks non-zero. It is planned once for the study's largest
horizon ``T_max`` (it must know ``T_max`` to size its trees: ``H = floor(log2 T_max) + 1``) and
run for every ``T <= T_max``, so the ``vsT`` curve is one algorithm observed at several horizons.
Table ``binary_tree`` (and column ``new_phase_frac`` of ``summary``) reports, per grid point,
whether it ever started a new phase: the fraction of seeds that did, the mean and max number of
phases, the model changes (argmin of the noisy tree outputs moving within the set) and the share
of padded selections, with ``m_set``, ``P_max`` and ``tau``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import math
import pathlib

import jax.numpy as jnp
import numpy as np

from ..core import seed_keys, simulate
from ..experts import (
    HalvingParams, HedgeParams, RealizableBernoulliParams, RealizableLBParams, adv_realizable_bernoulli,
    adv_realizable_halving, adv_realizable_lb, experts_problem, hedge,
)
from ..experts import (
    adaptive_sparse_vector_experts, binary_tree_experts, binary_tree_static, lower_bound_thm5, params_from_plan,
    plan_adaptive_sparse_vector_experts, plan_binary_tree_experts, plan_potential_experts, plan_sparse_vector_experts,
    potential_experts, sparse_vector_experts, thm1_bound, thm2_bound,
)
from ..registry import register_study
from ._common_study import ROOT as ROOT, page_paths
from .analysis import _pow2, fmt_ci, markdown_table, publish_blocks, verdict_table
from .claims import VERDICTS, Claim, Measurement, Verdict, judge
from .framework import Param, Study, declare_params, fit_slopes, plot_curves, summarize

if TYPE_CHECKING:
    import pandas as pd

DEFAULTS = {
    "seeds": 256, "seed": 0, "mode": "rate", "beta": 0.1, "q": 0.5, "delta": 1e-6,   # 256 seeds: ~2 h on a busy 2-core CPU
    "d0": 16, "eps0": 1.0, "vsT_adversaries": ["halving", "bernoulli"],
    "T": [2 ** 12, 2 ** 13, 2 ** 14, 2 ** 15, 2 ** 16, 2 ** 17],
    "T_fixed": 2 ** 17,
    "d": [4, 16, 64, 256, 1024],
    "eps": [0.5, 1.0, 2.0, 4.0],
    "Lstar": [0, 1, 4, 16, 64, 256, 1024],
    "lb_d": [32, 256], "lb_eps": [0.05, 0.1], "lb_T": 2 ** 12,
}
QUICK = {"seeds": 8, "vsT_adversaries": ["halving"], "T": [2 ** 10, 2 ** 12], "T_fixed": 2 ** 12, "d": [4, 16], "eps": [1.0, 4.0],
         "Lstar": [0, 16], "lb_d": [32], "lb_eps": [0.1], "lb_T": 2 ** 10}


_POS: dict[str, Any] = dict(lo=0.0, lo_open=True)
PARAMS = declare_params("realizable-experts", {
    "seeds": Param("int", lo=1), "seed": Param("int", lo=0), "mode": Param("str", choices=("paper", "certified", "rate")),
    "beta": Param("float", lo=0.0, hi=1.0, lo_open=True, hi_open=True, help="failure probability"),
    "q": Param("float", lo=0.0, hi=1.0), "delta": Param("float", lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "d0": Param("int", lo=2, hi=2 ** 20), "eps0": Param("float", **_POS),
    "vsT_adversaries": Param("str", many=True, choices=("halving", "bernoulli"), allow_empty=True),
    "T": Param("int", many=True, lo=2, hi=2 ** 30), "T_fixed": Param("int", lo=2, hi=2 ** 30),
    "d": Param("int", many=True, lo=2, hi=2 ** 20), "eps": Param("float", many=True, **_POS),
    "Lstar": Param("float", many=True, lo=0.0), "lb_d": Param("int", many=True, lo=2, hi=2 ** 20),
    "lb_eps": Param("float", many=True, **_POS), "lb_T": Param("int", lo=2, hi=2 ** 30),
})


def _check_point(p, cfg):
    """Every planner and params constructor ``_run_point`` calls, without simulating."""
    d, T, eps, name = p["d"], p["T"], p["eps"], p["learner"]
    if name != "hedge":
        sign = "flipped" if name == "adaptive_flipped" else "printed"
        params_from_plan(_plan("sparse_vector" if name == "sparse_vector_known_Lstar" else name, cfg, d, T, eps,
                               p["delta"], Lstar=p["Lstar"] if name == "sparse_vector_known_Lstar" else 0.0, sign=sign))
    plan_sparse_vector_experts(eps=eps, T=T, d=d, mode=cfg["mode"], beta=cfg["beta"])
    if p["adversary"] == "bernoulli":
        RealizableBernoulliParams(q=jnp.float32(cfg["q"]), q_star=jnp.float32(0))
    elif p["adversary"] == "near_bernoulli":
        if p["Lstar"] > T:
            raise ValueError(f"Lstar={p['Lstar']} must be <= T_fixed={T} (the best expert's loss probability "
                             f"is Lstar/T)")
        RealizableBernoulliParams(q=jnp.float32(cfg["q"]), q_star=jnp.float32(p["Lstar"] / T))


def _plan(learner, cfg, d, T, eps, delta=0.0, Lstar=0.0, sign="printed"):
    mode = cfg["mode"]
    if learner == "sparse_vector":
        return plan_sparse_vector_experts(eps=eps, delta=delta, T=T, d=d, mode=mode, beta=cfg["beta"], Lstar=Lstar)
    if learner == "potential":
        return plan_potential_experts(eps=min(eps, 0.99) if delta > 0 else eps, delta=delta, T=T, d=d,
                                      mode=mode if mode != "paper" else "paper")
    if learner.startswith("adaptive"):
        return plan_adaptive_sparse_vector_experts(eps=eps, T=T, d=d, mode=mode, beta=cfg["beta"], test_sign=sign)
    if learner == "binary_tree":   # planned for the study's largest horizon (its trees are sized by T_max)
        return plan_binary_tree_experts(eps=eps, T=int(cfg["_T_max"]), d=d, mode=mode, beta=cfg["beta"])
    raise ValueError(learner)


def _learner(name, d, plan=None):
    if name == "binary_tree":   # static m_set, P_max, T_max (the study's largest T) come from the plan
        return binary_tree_experts(d, **binary_tree_static(plan))
    if name in ("sparse_vector", "sparse_vector_known_Lstar"):
        return sparse_vector_experts(d)
    if name == "potential":
        return potential_experts(d)
    if name.startswith("adaptive"):
        return adaptive_sparse_vector_experts(d)
    if name == "hedge":
        return hedge(d)
    raise ValueError(name)


def _points(cfg):
    pts = []
    d0, e0 = int(cfg["d0"]), float(cfg["eps0"])
    for adv in cfg["vsT_adversaries"]:
        for lrn in ("sparse_vector", "potential", "binary_tree", "hedge"):
            for T in cfg["T"]:
                pts.append(dict(exp="vsT", learner=lrn, adversary=adv, d=d0, T=int(T), eps=e0, delta=0.0, Lstar=0.0))
    for lrn, delta in (("sparse_vector", 0.0), ("sparse_vector", cfg["delta"]), ("potential", 0.0),
                       ("binary_tree", 0.0)):
        for d in cfg["d"]:
            pts.append(dict(exp="vsd", learner=lrn, adversary="halving", d=int(d), T=int(cfg["T_fixed"]), eps=e0,
                            delta=float(delta), Lstar=0.0))
    for eps in cfg["eps"]:
        pts.append(dict(exp="vseps", learner="sparse_vector", adversary="halving", d=d0, T=int(cfg["T_fixed"]),
                        eps=float(eps), delta=0.0, Lstar=0.0))
    for lrn in ("adaptive_printed", "adaptive_flipped", "sparse_vector_known_Lstar"):
        for Ls in cfg["Lstar"]:
            pts.append(dict(exp="Lstar", learner=lrn, adversary="near_bernoulli", d=d0, T=int(cfg["T_fixed"]), eps=e0,
                            delta=0.0, Lstar=float(Ls)))
    for lrn in ("sparse_vector", "potential"):
        for d in cfg["lb_d"]:
            for eps in cfg["lb_eps"]:
                pts.append(dict(exp="lb", learner=lrn, adversary="lb", d=int(d), T=int(cfg["lb_T"]), eps=float(eps),
                                delta=0.0, Lstar=0.0))
    return pts


def _run_point(p, cfg, seeds, T_max):
    d, T, eps = p["d"], p["T"], p["eps"]
    name = p["learner"]
    if name == "hedge":
        params = HedgeParams(eta=jnp.float32(1.0))
        plan = None
    else:
        sign = "flipped" if name == "adaptive_flipped" else "printed"
        plan = _plan("sparse_vector" if name == "sparse_vector_known_Lstar" else name, cfg, d, T, eps, p["delta"],
                     Lstar=p["Lstar"] if name == "sparse_vector_known_Lstar" else 0.0, sign=sign)
        params = params_from_plan(plan)
    sv_plan = plan_sparse_vector_experts(eps=eps, T=T, d=d, mode=cfg["mode"], beta=cfg["beta"])
    adv = p["adversary"]
    if adv == "halving":
        adversary, ap = adv_realizable_halving(d), HalvingParams(r=jnp.int32(int(2 * sv_plan.params["L"]) + 1))
    elif adv == "bernoulli":
        adversary, ap = adv_realizable_bernoulli(d), RealizableBernoulliParams(q=jnp.float32(cfg["q"]), q_star=jnp.float32(0))
    elif adv == "near_bernoulli":
        adversary = adv_realizable_bernoulli(d)
        ap = RealizableBernoulliParams(q=jnp.float32(cfg["q"]), q_star=jnp.float32(p["Lstar"] / T))
    else:
        adversary, ap = adv_realizable_lb(d), RealizableLBParams(T=jnp.int32(T), eps=jnp.float32(eps))
    out = simulate(_learner(name, d, plan), adversary, experts_problem(), params, ap,
                   seed_keys(cfg["seed"], seeds), T, T_max=T_max)
    res = {"regret": out["regret"].astype(float), "best_loss": out["best_loss"].astype(float),
           "switches": out["switches"].astype(float),
           "em_draws": out.get("em_draws", out["switches"]).astype(float),
           "doublings": out.get("doublings", np.zeros(len(seeds))).astype(float),
           "eps_certified": np.full(len(seeds), plan.eps_certified if plan else np.inf),
           "K": np.full(len(seeds), plan.params.get("K", np.nan) if plan else np.nan, dtype=float)}
    if name == "binary_tree":
        res["phases"] = out["phases"].astype(float)
        res["padded"] = out["padded"].astype(float)
        for k in ("m_set", "P_max", "tau"):
            res[k] = np.full(len(seeds), float(plan.params[k]))
    return res


def binary_tree_table(df):
    """Per binary-tree grid point: does it ever start a new phase (switch its expert set)?
    ``new_phase_frac`` is the fraction of seeds with at least one new phase, ``phases_mean`` / ``phases_max`` the
    number of new phases, ``switches_mean`` the model changes (x_t != x_{t-1}, also within a set).

    Args:
        df: the per-seed rows of the binary-tree learner (with its ``phases``, ``padded``, ``m_set``,
            ``P_max`` and ``tau`` columns).

    Returns:
        One row per (experiment, adversary, ``d``, ``T``, ε): ``n_seeds``, ``m_set``, ``P_max``,
        ``tau``, the mean regret, best loss and switches, ``phases_mean``, ``phases_max``,
        ``new_phase_frac``, ``ever_new_phase`` and ``padded_frac`` (seeds with a padded selection).
    """
    import pandas as pd

    rows = []
    for key, g in df.groupby(["exp", "adversary", "d", "T", "eps"], sort=True):
        ph = g["phases"].to_numpy(float)
        rows.append(dict(zip(["exp", "adversary", "d", "T", "eps"], key), n_seeds=len(g),
                         m_set=int(g["m_set"].iloc[0]), P_max=int(g["P_max"].iloc[0]), tau=float(g["tau"].iloc[0]),
                         regret_mean=float(g["regret"].mean()), best_loss_mean=float(g["best_loss"].mean()),
                         switches_mean=float(g["switches"].mean()), phases_mean=float(ph.mean()),
                         phases_max=int(ph.max()), new_phase_frac=float((ph > 0).mean()),
                         ever_new_phase=bool((ph > 0).any()), padded_frac=float((g["padded"] > 0).mean())))
    return pd.DataFrame(rows)


@register_study("realizable-experts", defaults=DEFAULTS, quick=QUICK,
                description="REAL realizable DP experts: regret vs T, log d, eps, L*; switches; Thm 5 lower bound")
def build(cfg: dict) -> Study:
    """The ``realizable-experts`` study: the ``vsT``, ``vsd``, ``vseps``, ``Lstar`` and ``lb``
    experiments of the module docstring, every learner compiled once for the study's largest horizon.

    Args:
        cfg: the resolved configuration: planner ``mode``, ``beta`` (failure probability), ``q``,
            ``delta``, ``d0`` and ``eps0`` (the fixed ``d`` and ε), the grids of each experiment,
            seeds and the root seed.

    Returns:
        The :class:`jaxdp.studies.Study`; its tables are ``summary``, ``slopes``, ``binary_tree``
        (:func:`binary_tree_table`) and ``lower_bound`` (regret ε / log d against 1/32).

    Raises:
        ValueError: ``d < 2``, ``eps <= 0``, ``Lstar < 0`` or an unknown mode.
    """
    for d in list(cfg["d"]) + [cfg["d0"]] + list(cfg["lb_d"]):
        if int(d) < 2:
            raise ValueError(f"d must be integers >= 2, got {d!r}")
    for e in list(cfg["eps"]) + [cfg["eps0"]] + list(cfg["lb_eps"]):
        if not float(e) > 0:
            raise ValueError(f"eps must be > 0, got {e!r}")
    for Ls in cfg["Lstar"]:
        if float(Ls) < 0:
            raise ValueError(f"Lstar must be >= 0, got {Ls!r}")
    if cfg["mode"] not in ("paper", "certified", "rate"):
        raise ValueError(f"mode must be one of ['paper', 'certified', 'rate'], got {cfg['mode']!r}")
    points = _points(cfg)

    T_max = max(p["T"] for p in points)   # one compilation per (learner, adversary, d) for the whole study
    run_cfg = dict(cfg, _T_max=T_max)     # binary_tree is planned for T_max

    def run(pts, seeds):
        return [_run_point(p, run_cfg, seeds, T_max) for p in pts]

    def analyze(df):
        by = ["exp", "learner", "adversary", "d", "T", "eps", "delta", "Lstar"]
        summ = summarize(df, by, ["regret", "em_draws", "doublings"], quantiles=(0.95,))
        summ["K"] = df.groupby(by, sort=True)["K"].first().to_numpy()
        summ["eps_certified"] = df.groupby(by, sort=True)["eps_certified"].first().to_numpy()
        if "phases" in df:   # binary tree only (NaN elsewhere): fraction of seeds that ever started a new phase
            summ["new_phase_frac"] = df.groupby(by, sort=True)["phases"].agg(
                lambda v: float((v > 0).mean()) if v.notna().all() else np.nan).to_numpy()
        tables = {"summary": summ}
        bt = df[df["learner"] == "binary_tree"]
        if len(bt):
            tables["binary_tree"] = binary_tree_table(bt)
        sl = []
        for exp, x, y, grp in (("vsT", "T", "regret", ["learner", "adversary"]),
                               ("vseps", "eps", "regret", ["learner"]),
                               ("Lstar", "Lstar", "regret", ["learner"])):
            sub = df[(df["exp"] == exp) & ((df[x] > 0) if x == "Lstar" else True)]
            if len(sub):
                f = fit_slopes(sub, x, y, grp, resample="joint")    # every point uses the same seed keys
                f.insert(0, "fit", f"{y} vs {x}")
                sl.append(f)
        sub = df[df["exp"] == "vsd"].copy()
        if len(sub):
            sub["log_d"] = np.log(sub["d"].astype(float))
            for y in ("regret", "em_draws"):
                f = fit_slopes(sub, "log_d", y, ["learner", "delta"], upper_half=False, resample="joint")
                f.insert(0, "fit", f"{y} vs log d")
                sl.append(f)
        if sl:
            import pandas as pd

            tables["slopes"] = pd.concat(sl, ignore_index=True)
        lb = df[df["exp"] == "lb"].copy()
        if len(lb):
            lb["ratio"] = lb["regret"] * lb["eps"] / np.log(lb["d"])
            t = summarize(lb, ["learner", "d", "eps"], ["ratio"])
            t["bound_1_over_32"] = 1 / 32
            tables["lower_bound"] = t
        return tables

    def plot(df, outdir: pathlib.Path):
        paths = []
        cfg_mode = cfg["mode"]
        s = summarize(df[df["exp"] == "vsT"], ["learner", "adversary", "T"], ["regret"])
        for adv, g in s.groupby("adversary"):
            th = {"Thm 1 (consts 1)": lambda T: thm1_bound(cfg["d0"], T, cfg["eps0"], cfg["beta"]),
                  "hedge ln d/eta": lambda T: np.full_like(T, math.log(cfg["d0"]))}
            paths.append(plot_curves(g, "T", "regret", outdir / f"R1_regret_vs_T_{adv}.png", hue="learner", theory=th,
                                     title=f"R1 regret vs T ({adv}, d={cfg['d0']}, eps={cfg['eps0']}, mode={cfg_mode})"))
        sub = df[df["exp"] == "vsd"].copy()
        if len(sub):
            sub["lab"] = sub["learner"] + np.where(sub["delta"] > 0, " (eps,delta)", " pure")
            s = summarize(sub, ["lab", "d"], ["regret", "em_draws"])
            paths.append(plot_curves(s, "d", "regret", outdir / "R2_regret_vs_d.png", hue="lab",
                                     theory={"Thm 1 pure": lambda d: thm1_bound(d, cfg["T_fixed"], cfg["eps0"], cfg["beta"]),
                                             "Thm 1 approx": lambda d: thm1_bound(d, cfg["T_fixed"], cfg["eps0"], cfg["beta"],
                                                                                  cfg["delta"])},
                                     title=f"R2/R9 regret vs d (T={cfg['T_fixed']}, mode={cfg_mode})"))
            paths.append(plot_curves(s, "d", "em_draws", outdir / "R3_switches_vs_d.png", hue="lab", logy=False,
                                     theory={"log2 d": lambda d: np.log2(d)},
                                     title="R3 exponential-mechanism draws (switches) vs d"))
        s = summarize(df[df["exp"] == "vseps"], ["learner", "eps"], ["regret"])
        if len(s):
            r0 = float(s["regret_mean"].iloc[0]) * float(s["eps"].iloc[0])
            paths.append(plot_curves(s, "eps", "regret", outdir / "R4_regret_vs_eps.png", hue="learner",
                                     theory={"c/eps": lambda e: r0 / e}, title="R4 regret vs eps"))
        sub = df[(df["exp"] == "Lstar") & (df["Lstar"] > 0)]
        if len(sub):
            s = summarize(sub, ["learner", "Lstar"], ["regret"])
            paths.append(plot_curves(s, "Lstar", "regret", outdir / "R5_regret_vs_Lstar.png", hue="learner",
                                     theory={"Thm 2 (consts 1)": lambda L: thm2_bound(cfg["d0"], cfg["T_fixed"], cfg["eps0"],
                                                                                      cfg["beta"], L)},
                                     title="R5 adaptivity to L*"))
        lb = df[df["exp"] == "lb"]
        if len(lb):
            s = summarize(lb, ["learner", "eps"], ["regret"])
            paths.append(plot_curves(s, "eps", "regret", outdir / "R6_lower_bound.png", hue="learner",
                                     theory={"log d/(32 eps)": lambda e: lower_bound_thm5(int(lb["d"].min()), e)},
                                     title="R6 Thm 5 instance: regret vs eps"))
        return paths

    return Study(name="realizable-experts", points=points, seeds=int(cfg["seeds"]), run=run,
                 check_point=lambda p: _check_point(p, run_cfg),
                 group_by=("exp", "learner", "adversary", "d"), analyze=analyze, plot=plot, config=cfg,
                 description="REAL realizable DP experts (docs/algorithms/realizable.md#studies)")


# --------------------------------------------------------------------------- verdicts and the docs page
DOC_PAGE, RESULTS = page_paths("realizable-experts")
BLOCKS = ("realizable-experts verdicts", "realizable-experts regret", "realizable-experts lower bound")
TOL, _AM = 0.05, "at_most_rate"   # every claim's tolerance (the slopes' half-widths are 0.003-0.17 at 256 seeds)
#: (fit, learner, δ or None) -> REAL's claim (docs/algorithms/realizable.md#studies): orders without constants but 1/ε
CLAIMS = {k: Claim(text, kind, value, TOL, link="#misses") for k, (text, kind, value) in {  # type: ignore[misc]  # a literal with ** entries
    **{("regret vs T", lrn, None): (f"regret free of T ({src})", _AM, 0.0) for lrn, src in (
        ("sparse_vector", "REAL Thm 1"), ("potential", "REAL Thm 6"), ("binary_tree", "REAL Alg. 4"),
        ("hedge", "non-private Hedge, fixed η: O(log d / η)"))},
    ("regret vs eps", "sparse_vector", None): ("regret ∝ 1/ε (REAL Thm 1)", "rate", -1.0),
    **{("regret vs Lstar", lrn, None): ("regret ≲ L*·polylog + polylog/ε, linear in L* (REAL Thm 2)", _AM, 1.0)
       for lrn in ("sparse_vector_known_Lstar", "adaptive_printed", "adaptive_flipped")},
    ("regret vs log d", "sparse_vector", 0.0): ("regret ≲ log² d / ε (REAL Thm 1, pure)", _AM, 2.0),
    ("regret vs log d", "sparse_vector", 1e-6): ("regret ≲ log^{1.5} d / ε (REAL Thm 1, approximate)", _AM, 1.5),
    ("regret vs log d", "potential", 0.0): ("regret ≲ log² d · log T / ε (REAL Thm 6, pure)", _AM, 2.0),
    **{("em_draws vs log d", "sparse_vector", dl): ("O(log d) switches (REAL Lemma 3.1)", _AM, 1.0) for dl in (0.0, 1e-6)},
}.items()}
LOWER_BOUND = Claim("every ε-DP learner: regret ≥ ln d / (32 ε) on adv_realizable_lb (REAL Thm 5), as "
                    "(ln d / 32ε) / regret ≤ 1", "bound", 1.0, TOL, link="#r6")
#: (experiment = the fits' ``vs`` variable, learners) that may run the same regret seed by seed: one row where they do
SAME = (("Lstar", ("adaptive_flipped", "adaptive_printed")), ("lb", ("potential", "sparse_vector")))


def verdicts(slopes, lower_bound=None, same: tuple = ()) -> "pd.DataFrame":
    """The verdict of every fitted cell (:data:`CLAIMS`) and of Thm 5 (:data:`LOWER_BOUND`), by :func:`judge`.

    Args:
        slopes: the study's ``slopes`` table (with ``x_min``, ``x_max``: a slope tests a rate over two decades).
        lower_bound: the study's ``lower_bound`` table (``ratio`` = regret ε / ln d per learner, d, ε), or ``None``.
        same: ``(exp, learners)`` whose runs on ``exp`` are one piece of evidence (:data:`SAME`): one row.

    Returns:
        The verdict rows (columns of :func:`jaxdp.studies.analysis.verdict_table`).
    """
    import pandas as pd

    def row(claim, m, **kw):
        v = judge(claim, m) if claim else Verdict("not tested", "no exponent stated: reported for comparison")
        return dict(kw, claim=claim.text if claim else "no exponent stated for this learner", slope=m.estimate,
                    claimed=claim.value if claim else math.nan, kind="equals" if claim is None or claim.kind == "rate"
                    else "at_most", slope_lo=m.lo, slope_hi=m.hi, n_seeds=m.n_seeds, verdict=v.verdict,
                    reason=v.reason, link=claim.link if claim and v.verdict == "misses" else "")

    merged, rows = {(e, lrn): g for e, g in same for lrn in g}, []
    name = {k: ", ".join(g) + " (one run)" for k, g in merged.items()}
    for r in slopes.itertuples(index=False):
        delta, logd, k = float(getattr(r, "delta", np.nan)), r.fit.endswith("log d"), (r.fit[r.fit.index(" vs ") + 4:], r.learner)
        if merged.get(k, (r.learner,))[0] == r.learner:
            m = Measurement(float(r.slope), float(r.slope_lo), float(r.slope_hi), int(np.nan_to_num(r.n_seeds)),
                            decades=math.log10(float(r.x_max) / float(r.x_min)))
            rows.append(row(CLAIMS.get((r.fit, r.learner, delta if logd else None)), m, experiment=r.fit,
                            cell=name.get(k, r.learner) + (f", δ = {delta:g}" if logd else f", {r.adversary}"
                                                           if isinstance(getattr(r, "adversary", None), str) else "")))
    for lrn, lb in ([] if lower_bound is None else lower_bound.groupby("learner", sort=True)):
        if merged.get(("lb", lrn), (lrn,))[0] == lrn:
            inv = lb[["ratio_mean", "ratio_lo", "ratio_hi"]].rdiv(lb["bound_1_over_32"], axis=0)   # hook: a lower bound
            m = Measurement(float(inv["ratio_mean"].max()), float(inv["ratio_hi"].min()), float(inv["ratio_lo"].max()),
                            int(lb["n_seeds"].min()), ratios_lo=list(inv["ratio_hi"]))
            rows.append(row(LOWER_BOUND, m, experiment="Thm 5 bound / regret, every (d, ε)", cell=name.get(("lb", lrn), lrn)))
    return pd.DataFrame(rows, columns=["experiment", "cell", "claim", "claimed", "kind", "slope", "slope_lo",
                                       "slope_hi", "n_seeds", "verdict", "reason", "link"])


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of ``docs/results/realizable-experts.md`` from a kept run.

    Args:
        results_dir: the results directory (default ``results/realizable-experts``).

    Returns:
        ``{block name: Markdown}``: the verdicts, the regret of every R1 point and the lower-bound ratios of R6.
    """
    import pandas as pd

    d = pathlib.Path(results_dir) if results_dir is not None else RESULTS
    slopes, lb, df, s = (pd.read_csv(d / f"{f}.csv") for f in ("slopes", "lower_bound", "results", "summary"))
    piv = {e: df[(df["exp"] == e) & df["learner"].isin(g)].pivot_table(
        index=["d", "T", "eps", "Lstar", "seed"], columns="learner", values="regret") for e, g in SAME}
    same = tuple((e, g) for e, g in SAME if piv[e].shape[1] == len(g) and (piv[e].nunique(axis=1, dropna=False) == 1).all())
    v = verdicts(slopes, lb, same)
    n, span = v["verdict"].value_counts(), {f: math.log10(g["x_max"].max() / g["x_min"].min()) for f, g in slopes.groupby("fit")}
    head = (f"{len(v)} rows: one per fitted cell of `slopes.csv` and one for Thm 5's bound (`lower_bound.csv`)" + "".join(
        f"; on `{e}`, {' and '.join(g)} ran the same regret seed by seed: the same evidence, one row (`(one run)`)"
        for e, g in same) + f". Rubric of the [results overview](index.md#verdicts), tolerance {TOL:g}: REAL's exponents "
        "are orders without constants, and a slope tests one only over two decades of its variable; the fits span "
        + ", ".join(f"{span[f]:.2f} ({f})" for f in sorted(span)) + " decades. Thm 5's bound carries its constant: "
        "(ln d / 32ε) / regret ≤ 1 at every (d, ε). Seeds resampled jointly across each curve's points; 95% bootstrap "
        "intervals. Verdicts: " + ", ".join(f"{n[k]} {k}" for k in VERDICTS if k in n) + ".\n\n")
    t = s[s["exp"] == "vsT"].sort_values(["learner", "adversary", "T"])
    reg = markdown_table(["learner", "adversary", "T", "regret [95% CI]", "exponential-mechanism draws"],
                         [[r.learner, r.adversary, _pow2(r.T), fmt_ci(r.regret_mean, r.regret_lo, r.regret_hi, 0),
                           f"{r.em_draws_mean:.1f}"] for r in t.itertuples(index=False)])
    lbt = markdown_table(["learner", "d", "ε", "regret·ε/ln d [95% CI]", "Thm 5 bound"],
                         [[r.learner, int(r.d), f"{r.eps:g}", fmt_ci(r.ratio_mean, r.ratio_lo, r.ratio_hi, 3), "1/32"]
                          for r in lb.itertuples(index=False)])
    return dict(zip(BLOCKS, (head + verdict_table(v), reg, lbt)))


def publish(results_dir=None) -> list:
    """Rewrite the generated blocks of ``docs/results/realizable-experts.md`` from a kept run.

    Args:
        results_dir: the results directory (default ``results/realizable-experts``).

    Returns:
        The names of the blocks that changed.
    """
    return publish_blocks(DOC_PAGE, page_blocks(results_dir))
