"""Study ``lazy-figure1c``: LAZY Figure 1(c) — regret exponent beta(alpha) with eps = T^-alpha (docs/algorithms/lazy.md#figure-1, #studies).

Learners: L2P-MW with the paper's settings (``mode="rate"``: B = floor(1/eps),
eta = min(eps0, eps)^{2/3} T^{-1/3}), L2P-MW ``mode="retuned"``, the prior
low-switching template ``private_lazy_sketch`` (PROPOSED settings
eta = min(sqrt(8 ln d/T), eps), p = min(1, eta/eps)) and non-private Hedge.
Adversaries: the paper's lower-bound adversary (``adv_lazy_epochs``), the same
with batch-aligned epochs (``epoch_len = B`` of the paper settings), and
``adv_alternating_batches`` (period B). For each (learner, adversary, alpha)
the slope of log E[regret] vs log T is fitted over the upper half of the T
grid and compared with ``figure1_exponents`` panels (c) and (c').
"""
from __future__ import annotations

import math
import pathlib

import jax.numpy as jnp
import numpy as np

from jaxdp.core import seed_keys, simulate
from jaxdp.experts import (
    AlternatingParams, LazyEpochsParams, adv_alternating_batches, adv_lazy_epochs, experts_problem, hedge,
    hedge_eta, hedge_params,
)
from jaxdp.lazy import figure1_exponents, l2p_mw, l2p_mw_params, plan_l2p_mw, private_lazy_sketch, sketch_params
from jaxdp.registry import register_study
from jaxdp.studies.framework import Param, Study, declare_params, fit_slopes, plot_panels

LEARNERS = ("l2p_paper", "l2p_retuned", "sketch", "hedge")
ADVERSARIES = ("paper_epochs", "aligned_epochs", "alternating")


def paper_B(eps: float) -> int:
    """The paper's batch length ``B = floor(1/ε)`` (at least 1).

    Args:
        eps: the privacy level ε > 0.

    Returns:
        The batch length ``B``.
    """
    return max(1, int(math.floor(1.0 / eps)))


def learner_and_params(name: str, d: int, T: int, eps: float, delta: float, grid=(40, 30, 120)):
    """The learner and its parameters for one grid point (host-side planning): L2P-MW planned in
    ``rate`` mode (``l2p_paper``) or ``retuned`` mode, the low-switching template with
    ``η = min(sqrt(8 ln d / T), ε)``, ``p = min(1, η/ε)``, or non-private Hedge.

    Args:
        name: a name of :data:`LEARNERS`.
        d: the number of experts.
        T: the horizon.
        eps, delta: the privacy parameters.
        grid: the planner's ``(n_B, n_c, n_eta)`` search resolution (``retuned`` mode).

    Returns:
        ``(learner, params, info)``: ``info`` holds ``eta`` and ``B`` (and, for L2P, the plan's other
        parameters and ``eps_cert``, the ε its ledger certifies).

    Raises:
        ValueError: an unknown learner, or a plan the planner refuses.
    """
    if name in ("l2p_paper", "l2p_retuned"):
        plan = plan_l2p_mw(eps=eps, delta=delta, T=T, d=d, mode="rate" if name == "l2p_paper" else "retuned",
                           grid=grid)
        pr = plan.params
        return l2p_mw(d, None), l2p_mw_params(pr["eta"], pr["p"], pr["B"]), dict(pr, eps_cert=plan.eps_certified)
    if name == "sketch":
        eta = min(hedge_eta(d, T), eps)
        p = min(1.0, eta / eps)
        return private_lazy_sketch(d), sketch_params(eta, p), {"eta": eta, "p": p, "B": 1}
    if name == "hedge":
        hp = hedge_params(d, T)
        return hedge(d), hp, {"eta": float(hp.eta), "B": 1}
    raise ValueError(f"unknown learner {name!r}; known: {LEARNERS}")


def adversary_and_params(name: str, d: int, T: int, eps: float):
    """The adversary of one grid point and its parameters.

    Args:
        name: ``"paper_epochs"`` (the lower-bound adversary with the paper's epochs),
            ``"aligned_epochs"`` (epochs of length ``B = paper_B(eps)``) or ``"alternating"``
            (alternating batches of length ``B``).
        d: the number of experts.
        T: the horizon.
        eps: the privacy level ε that sets ``B`` and the epochs.

    Returns:
        ``(adversary, params)``.

    Raises:
        ValueError: an unknown adversary.
    """
    B = paper_B(eps)
    if name == "paper_epochs":
        return adv_lazy_epochs(d), LazyEpochsParams(T=jnp.int32(T), eps=jnp.float32(eps), epoch_len=jnp.int32(0))
    if name == "aligned_epochs":
        return adv_lazy_epochs(d), LazyEpochsParams(T=jnp.int32(T), eps=jnp.float32(eps), epoch_len=jnp.int32(B))
    if name == "alternating":
        return adv_alternating_batches(d), AlternatingParams(B=jnp.int32(B))
    raise ValueError(f"unknown adversary {name!r}; known: {ADVERSARIES}")


THEORY = {  # (learner, adversary) -> expected exponent curve of alpha
    ("l2p_paper", "paper_epochs"): ("claimed (c) L2P", lambda a: figure1_exponents(a, "c")["L2P"]),
    ("l2p_paper", "alternating"): ("(c') printed, alternating", lambda a: figure1_exponents(a, "c'")["L2P printed, alternating"]),
    ("l2p_paper", "aligned_epochs"): ("(c') batch-aligned", lambda a: figure1_exponents(a, "c'")["batch-constant B=1/eps, batch-aligned epochs"]),
    ("l2p_retuned", "alternating"): ("(c') retuned", lambda a: figure1_exponents(a, "c'")["L2P retuned"]),
    ("l2p_retuned", "paper_epochs"): ("(c') retuned", lambda a: figure1_exponents(a, "c'")["L2P retuned"]),
    ("hedge", "paper_epochs"): ("non-private", lambda a: 0.5 + 0 * np.asarray(a)),
}


PARAMS = declare_params("lazy-figure1c", {
    "seeds": Param("int", lo=1), "seed": Param("int", lo=0), "d": Param("int", lo=2, hi=2 ** 20),
    "T": Param("int", many=True, lo=2, hi=2 ** 31 - 1),
    "alpha": Param("float", many=True, lo=0.0, hi=1.0, hi_open=True, help="eps = T^-alpha <= 1"),
    "delta": Param("float", lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "learners": Param("str", many=True, choices=LEARNERS), "adversaries": Param("str", many=True, choices=ADVERSARIES),
})


@register_study(
    "lazy-figure1c",
    # full size (results/lazy-figure1c/COMMAND.md): 12 (learner, adversary) x 3 alpha x 7 T x 256 seeds,
    # ~2.4e9 seed-rounds, about 15 min on one free CPU core
    defaults={"seeds": 256, "d": 16, "T": [2048, 4096, 8192, 16384, 32768, 65536, 131072],
              "alpha": [0.25, 0.5, 0.75], "delta": 1e-6, "seed": 0,
              "learners": list(LEARNERS), "adversaries": list(ADVERSARIES)},
    quick={"seeds": 4, "d": 8, "T": [512, 1024, 2048], "alpha": [0.25, 0.5, 0.75],
           "learners": ["l2p_paper", "l2p_retuned", "hedge"], "adversaries": ["paper_epochs", "alternating"]},
    description="LAZY Figure 1(c): regret exponent vs alpha (eps = T^-alpha) for L2P (paper/retuned), "
                "prior low-switching template and Hedge on three adversaries (Lazy private online learning; docs/algorithms/lazy.md#studies)")
def build(cfg: dict) -> Study:
    """The ``lazy-figure1c`` study: every learner × adversary × α × ``T`` with ``ε = T^{-α}``.

    Args:
        cfg: the resolved configuration: ``d``, the ``T`` and ``alpha`` grids, ``delta``,
            ``learners``, ``adversaries``, seeds and the root seed.

    Returns:
        The :class:`jaxdp.studies.Study`; its table ``exponents`` holds the fitted exponent ``β`` of
        the expected regret in ``T`` per (learner, adversary, α) with the applicable curve of
        ``figure1_exponents`` (``beta_theory``) and the claimed panel (c) value.
    """
    d, Ts = int(cfg["d"]), [int(t) for t in cfg["T"]]
    points = [{"learner": ln, "adversary": an, "alpha": float(a), "T": T}
              for ln in cfg["learners"] for an in cfg["adversaries"] for a in cfg["alpha"] for T in Ts]

    def run(pts, seeds):
        keys = seed_keys(int(cfg["seed"]), seeds)
        out = []
        for pt in pts:
            T = int(pt["T"])
            eps = T ** -pt["alpha"]
            L, params, info = learner_and_params(pt["learner"], d, T, eps, float(cfg["delta"]))
            A, ap = adversary_and_params(pt["adversary"], d, T, eps)
            # T_max = T: each horizon costs T rounds, not max(T) (one compilation per horizon)
            r = simulate(L, A, experts_problem(), params, ap, keys, T, T_max=T, n_checkpoints=4)
            m = {"expected_regret": r["expected_regret"], "regret": r["regret"], "switches": r["switches"]}
            m["eta"] = np.full(len(seeds), info["eta"])
            m["B"] = np.full(len(seeds), float(info["B"]))
            out.append(m)
        return out

    def analyze(df):
        sl = fit_slopes(df, x="T", y="expected_regret", by=["learner", "adversary", "alpha"])
        sl["beta_theory"] = [THEORY.get((r.learner, r.adversary), ("", lambda a: np.nan))[1](r.alpha)
                             for r in sl.itertuples()]
        sl["beta_claimed_c"] = figure1_exponents(sl["alpha"].to_numpy(), "c")["L2P"]
        return {"exponents": sl}

    def plot(df, outdir: pathlib.Path):
        # one panel per adversary (four learners each), with the exponent curves that apply to it
        sl = analyze(df)["exponents"]
        sl = sl.rename(columns={"slope": "beta_mean", "slope_lo": "beta_lo", "slope_hi": "beta_hi"})
        claimed = {"(c) L2P claimed": lambda a: figure1_exponents(a, "c")["L2P"],
                   "(c) AFKT23b": lambda a: figure1_exponents(a, "c")["AFKT23b"],
                   "non-private 1/2": lambda a: 0.5 + 0 * np.asarray(a)}
        corrected = {
            "paper_epochs": {"(c') retuned": lambda a: figure1_exponents(a, "c'")["L2P retuned"]},
            "alternating": {"(c') printed, alternating": lambda a: figure1_exponents(a, "c'")["L2P printed, alternating"],
                            "(c') retuned": lambda a: figure1_exponents(a, "c'")["L2P retuned"]},
            "aligned_epochs": {"(c') batch-aligned": lambda a: figure1_exponents(a, "c'")[
                "batch-constant B=1/eps, batch-aligned epochs"]},
        }
        return [plot_panels(sl, "adversary", "alpha", "beta", outdir / "lazy_figure1c.png", hue="learner",
                            theory=lambda adv, sub: {**claimed, **corrected.get(adv, {})},
                            title=lambda adv: f"LAZY Figure 1(c), adversary {adv}", logx=False, logy=False,
                            xlabel="alpha (eps = T^-alpha)", ylabel="beta (expected regret ~ T^beta), 95% CI",
                            width=4.6)]

    def check_point(pt):
        T = int(pt["T"])
        eps = T ** -pt["alpha"]
        learner_and_params(pt["learner"], d, T, eps, float(cfg["delta"]))
        adversary_and_params(pt["adversary"], d, T, eps)

    return Study(name="lazy-figure1c", points=points, seeds=int(cfg["seeds"]), run=run, check_point=check_point,
                 group_by=("learner", "adversary"), analyze=analyze, plot=plot, config=cfg,
                 description="LAZY Figure 1(c) and its corrections")
