"""Planners for the privacy primitives whose parameters a theorem sets.

Each planner maps a request ``(ε, δ, T, d, …, mode)`` to a ``jaxdp.privacy.accounting.Plan``
holding the parameters and the (ε, δ) that the cited theorem certifies for
them, and is registered for ``jaxdp plan NAME``. Each plan carries the ledger of what the
configured mechanism releases; ``eps_certified`` is what ``jaxdp.privacy.accounting.certify``
proves for it (docs/guide/privacy-ledger.md). Modes:

* ``paper``: the formula as printed (CORRECTED where the printed formula is wrong);
* ``certified``: parameters for which the theorem's explicit constants certify
  the request (found numerically where needed); raises ``ValueError`` when no
  setting does;
* ``rate``: constants and log factors dropped; the plan still reports what is
  actually certified.

Numeric extras (``sensitivity``, ``beta``, …) also accept numeric strings, as
the command line passes them.
"""
from __future__ import annotations

import math
from typing import Any

from ...registry import register_planner
from ...core import validation as C
from . import ledger as LG
from .accountant import certify
from .calibrate import calibrate
from .composition import OPTIMAL_AUTO_MAX_K, eps_advanced_dr, eps_kov15_homogeneous, eps_optimal_homogeneous
from .plan import Plan, make_plan
from .zcdp import gaussian_sigma_dr, gaussian_sigma_growth, gaussian_sigma_zcdp

__all__ = [
    "plan_laplace", "plan_gaussian", "plan_tree_aggregation", "plan_above_threshold", 
    "plan_advanced_composition", "tree_levels",
]


def _num(name: str, x: Any, *, positive: bool = True) -> float:
    x = C.coerce_number(name, x)
    v = C.pos(name, x) if positive else C.nonneg(name, x)
    if v.ndim != 0:
        raise ValueError(f"{name} must be a scalar, got shape {v.shape}")
    return float(v)


# --------------------------------------------------------------------------------------------- Laplace
@register_planner("laplace", "Laplace mechanism: l1 sensitivity -> noise scale b = T*Delta1/eps (T releases)")
def plan_laplace(*, eps: float, delta: float | None = 0.0, T: int = 1, d: int | None = 1, mode: str = "paper",
                 sensitivity: float = 1.0, norm: str = "l1") -> Plan:
    """Laplace noise for ``T`` adaptive releases of a query with sensitivity Δ (GROWTH Lemma 2.2; Dwork–Roth Thm 3.6).

    ``h(S) + Lap_d(b)`` is ``(Δ₁/b)``-DP for ℓ1-sensitivity Δ₁ (``norm="l2"``: Δ₁ = sqrt(d) Δ₂).

    * ``paper`` / ``rate``: per-release ``ε₀ = ε/T`` (basic composition, Dwork–Roth Thm 3.16), ``b = Δ₁/ε₀``; δ = 0.
    * ``certified``: the largest ``ε₀`` for which the best of basic, Dwork–Roth advanced (Thm 3.20),
      corrected KOV15 and the exact optimal composition (KOV15 Thm 3.3) certifies ``(ε, δ)``;
      equals ``paper`` when ``δ = 0`` or ``T = 1``.

    Args:
        eps, delta: the target privacy (δ = 0: pure).
        T: the horizon (number of adaptive releases or steps).
        d: the dimension (unused by some planners).
        mode: ``"paper"``, ``"certified"`` or ``"rate"`` (see above).
        sensitivity: the query's sensitivity Δ.
        norm: ``"l1"`` or ``"l2"`` (Δ₁ = sqrt(d) Δ₂).

    Returns:
        A :class:`Plan` with params ``scale`` (the Laplace scale ``b``), ``eps_per_release``, ``sensitivity_l1``, ``T``.

    Raises:
        ValueError: invalid privacy parameters, horizon, mode or norm, or ``norm="l2"`` without ``d``.
    """
    e, dl, T, mode = C.planner_args(eps, delta, T, mode, ("paper", "certified", "rate"), delta_positive=False)
    dim = C.optional_dim(d)
    s = _num("sensitivity", sensitivity)
    norm = C.check_choice("norm", norm, ("l1", "l2"))
    if norm == "l2" and dim is None:
        raise ValueError("d is required with norm='l2' (Delta1 = sqrt(d) * Delta2)")
    D1 = s if norm == "l1" else math.sqrt(float(dim or 0)) * s

    def ledger(eps0: float) -> LG.Ledger:
        return LG.sequential(LG.laplace(1.0 / eps0, count=T, label="release", dim=dim or 1))

    eps0, budget = e / T, 0.0
    notes = []
    if mode == "certified" and dl > 0 and T > 1:
        x = calibrate(lambda v: certify(ledger(v), dl, use_pld=False).eps, e, lo=e / T, hi=e, increasing=True,
                      rtol=1e-9, name="eps_per_release", what="the certified eps")
        if x > e / T * (1 + 1e-9):
            eps0, budget = x, dl
            notes.append("a composition bound with delta > 0 beats basic composition here")
    params = {"scale": D1 / eps0, "eps_per_release": eps0, "sensitivity_l1": D1, "T": T}
    return make_plan(algorithm="laplace", mode=mode, params=params, eps=e, delta=dl, ledger=ledger(eps0),
                     delta_budget=budget,
                     reference="Growth conditions for private optimization, Lemma 2.2; Dwork-Roth Thm 3.6, 3.16",
                     notes=notes)


# --------------------------------------------------------------------------------------------- Gaussian
@register_planner("gaussian", "Gaussian mechanism: l2 sensitivity -> sigma (GROWTH Lemma 2.3 corrected / Dwork-Roth / zCDP / accountant)")
def plan_gaussian(*, eps: float, delta: float, T: int = 1, d: int | None = 1, mode: str = "paper",
                  sensitivity: float = 1.0, method: str = "best") -> Plan:
    """Gaussian noise σ for ``T`` adaptive releases with ℓ2-sensitivity Δ₂.

    * ``paper``: GROWTH Lemma 2.3 CORRECTED, ``σ = 2Δ₂ sqrt(log(2T/δ)) T/ε`` (per-release ``(ε/T, δ/T)``,
      GROWTH Lemma 2.1 basic composition); the lemma needs ``ε/T <= 1``, and above that the plan
      only reports what the accountant certifies for this σ.
    * ``certified``: ``method="zcdp"``: ``σ = Δ₂ sqrt(T/(2ρ*(ε, δ)))`` (Bun–Steinke; any ε;
      ``gaussian_sigma_zcdp(Δ₂, ε, δ, count=T)``);
      ``"dr"``: Dwork–Roth Thm A.1 per release at ``(ε/T, δ/T)`` (needs ε/T < 1);
      ``"accountant"``: the smallest σ that the accountant (PLD of the T-fold Gaussian) certifies;
      ``"best"``: the smallest of the three.
    * ``rate``: ``σ = Δ₂ sqrt(T)/ε``.

    ``eps_certified`` is what the accountant proves for the ledger ``gaussian(σ/Δ₂) x T``
    (``jaxdp.privacy.accounting.certify``). ``params["noise_sq"] = d σ²`` is ``E‖noise‖²`` per release.

    Args:
        eps, delta: the target privacy.
        T: the horizon (number of adaptive releases or steps).
        d: the dimension (unused by some planners).
        mode: ``"paper"``, ``"certified"`` or ``"rate"`` (see above).
        sensitivity: the query's sensitivity Δ.
        method: ``"zcdp"``, ``"dr"``, ``"accountant"`` or ``"best"`` (``certified`` mode).

    Returns:
        A :class:`Plan` with σ.

    Raises:
        ValueError: invalid privacy parameters, horizon, mode or method.
    """
    e, dl, T, mode = C.planner_args(eps, delta, T, mode, ("paper", "certified", "rate"), delta_positive=True)
    dim = C.optional_dim(d)
    D = _num("sensitivity", sensitivity)
    method = C.check_choice("method", method, ("best", "zcdp", "dr", "accountant"))
    conditions: dict[str, bool] = {}
    notes: list[str] = []

    def ledger(sigma: float) -> LG.Ledger:
        return LG.sequential(LG.gaussian(sigma / D, count=T, label="release", dim=dim or 1))

    if mode == "paper":
        # Lemma 2.3 is a statement for a per-release eps <= 1; above it the formula is still evaluated (the
        # mode is "the formula as printed") and the plan reports what the accountant certifies for that sigma
        sigma = float(gaussian_sigma_growth(D, e / T, dl / T, allow_eps_above_1=True))
        if e / T > 1.0:
            notes.append(f"per-release eps = eps/T = {e / T:g} > 1 is outside GROWTH Lemma 2.3; eps_certified is "
                         "the accountant's for this sigma")
    elif mode == "rate":
        sigma = D * math.sqrt(T) / e
    else:
        cands = {}
        if method in ("best", "zcdp", "accountant"):
            cands["zcdp"] = float(gaussian_sigma_zcdp(D, e, dl, count=T))
        if method in ("best", "dr"):
            ok = e / T < 1.0
            if method == "dr":
                conditions["eps/T < 1 (Dwork-Roth Thm A.1)"] = ok
                if not ok:
                    raise ValueError(f"method='dr' needs a per-release eps = eps/T < 1 (Dwork-Roth Thm A.1), got "
                                     f"eps={e}, T={T}; use method='zcdp'")
            if ok:
                cands["dr"] = float(gaussian_sigma_dr(D, e / T, dl / T))
        if method in ("best", "accountant"):
            hi = cands["zcdp"]
            cands["accountant"] = calibrate(lambda sg: certify(ledger(sg), dl).eps, e, lo=hi / 50.0, hi=hi,
                                            increasing=False, rtol=1e-7, name="sigma", what="the certified eps")
            if method == "accountant":
                cands.pop("zcdp")
        used = min(cands, key=lambda k: cands[k])
        sigma = cands[used]
        notes.append("calibrated by " + {"zcdp": "zCDP (Bun-Steinke)", "dr": "Dwork-Roth Thm A.1 per release",
                                         "accountant": "bisection against the accountant"}[used])
    params = {"sigma": sigma, "sensitivity_l2": D, "T": T}
    if dim is not None:
        params["noise_sq"] = dim * sigma * sigma
    return make_plan(algorithm="gaussian", mode=mode, params=params, eps=e, delta=dl, ledger=ledger(sigma),
                     conditions=conditions,
                     reference="Growth conditions for private optimization, Lemma 2.3 (CORRECTED); Dwork-Roth Thm A.1; "
                               "Bun-Steinke Prop. 1.3, 1.6", notes=notes)


# ----------------------------------------------------------------------------------------- tree aggregation
def tree_levels(T: int) -> int:
    """H = floor(log2 T) + 1: the number of tree levels; each step enters at most H nodes.

    Args:
        T: the number of steps.

    Returns:
        H.
    """
    T = C.count_arg(T, "T")
    return int(T).bit_length()


@register_planner("tree_aggregation", "DP-FTRL tree aggregation: Gaussian node noise sigma for T steps")
def plan_tree_aggregation(*, eps: float, delta: float, T: int, d: int | None = 1, mode: str = "paper",
                          L: float = 1.0, adjacency: str = "replace_one") -> Plan:
    """Node noise σ of tree aggregation over ``T`` gradients of norm ``<= L`` (Kairouz et al. 2021 App. B.1; REAL Alg. 3).

    With ``H = floor(log2 T) + 1`` levels, replacing one gradient moves ``<= H`` nodes by ``<= 2L``
    (add/remove: ``L``), so the released tree has ℓ2-sensitivity ``Δ = 2L sqrt(H)`` and is
    ``ρ = Δ²/(2σ²)``-zCDP:

        ``paper`` / ``certified``: σ = L sqrt(2H/ρ*(ε, δ))   (replace-one; half of it for add/remove;
                                  ``gaussian_sigma_zcdp(node sensitivity, ε, δ, count=H)``),
        ``rate``: σ = L/ε.

    ``params["noise_sq_max"] = H d σ²`` bounds ``E‖b_t‖²`` of the prefix-sum noise.

    Args:
        eps, delta: the target privacy.
        T: the number of gradients.
        d: the dimension (unused by some planners).
        mode: ``"paper"``, ``"certified"`` or ``"rate"`` (see above).
        L: the gradients' norm bound.
        adjacency: ``"replace_one"`` or ``"add_remove"``.

    Returns:
        A :class:`Plan` with params ``sigma`` (the node noise σ), ``H``, ``rho``, ``T`` and, when ``d`` is given,
        ``noise_sq_max``.

    Raises:
        ValueError: invalid privacy parameters, horizon, mode or adjacency.
    """
    e, dl, T, mode = C.planner_args(eps, delta, T, mode, ("paper", "certified", "rate"), delta_positive=True)
    dim = C.optional_dim(d)
    L = _num("L", L)
    adjacency = C.check_choice("adjacency", adjacency, ("replace_one", "add_remove"))
    H = tree_levels(T)
    node_sens = 2.0 * L if adjacency == "replace_one" else L
    if mode == "rate":
        sigma = L / e
    else:
        sigma = float(gaussian_sigma_zcdp(node_sens, e, dl, count=H))
    rho = node_sens ** 2 * H / (2.0 * sigma ** 2)
    params = {"sigma": sigma, "H": H, "rho": rho, "T": T}
    if dim is not None:
        params["noise_sq_max"] = H * dim * sigma * sigma
    ledger = LG.sequential(LG.tree_aggregation(sigma / node_sens, T, label="tree of prefix sums", dim=dim or 1))
    return make_plan(algorithm="tree_aggregation", mode=mode, params=params, eps=e, delta=dl, ledger=ledger,
                     reference="Realizable private online optimization, Alg. 3 / Thm 4; Kairouz et al. 2021 App. B.1",
                     notes=[f"{adjacency} adjacency: node sensitivity {node_sens:g}"])


# --------------------------------------------------------------------------------------------- AboveThreshold
@register_planner("above_threshold", "AboveThreshold / sparse vector: noise scales and accuracy alpha for k=T queries")
def plan_above_threshold(*, eps: float, delta: float | None = 0.0, T: int, d: int | None = None,
                         mode: str = "paper", beta: float = 0.05, sensitivity: float = 1.0) -> Plan:
    """AboveThreshold over ``k = T`` queries of sensitivity Δ (Dwork–Roth Alg. 1, Thms 3.23–3.24; REAL Lemma 2.3).

    Threshold noise ``Lap(2Δ/ε)``, query noise ``Lap(4Δ/ε)``; ε-DP (δ = 0) for any number of ⊥ and one ⊤.
    With probability ``>= 1 − β`` it is (α, β)-accurate with ``α = 8Δ(log k + log(2/β))/ε`` (Thm 3.24).
    Modes ``paper`` and ``certified`` coincide (the theorem's constants are explicit); ``d`` is unused.

    Args:
        eps, delta: the target privacy (ε-DP; δ unused).
        T: the number of queries k.
        d: unused.
        mode: ``"paper"``, ``"certified"`` or ``"rate"`` (see above).
        beta: the failure probability of the accuracy statement.
        sensitivity: the query's sensitivity Δ.

    Returns:
        A :class:`Plan` with the noise scales and α.

    Raises:
        ValueError: invalid privacy parameters, horizon, mode or β.
    """
    e, dl, T, mode = C.planner_args(eps, delta, T, mode, ("paper", "certified"), delta_positive=False)
    C.optional_dim(d)
    b = float(C.prob_open(C.coerce_number("beta", beta), "beta"))
    D = _num("sensitivity", sensitivity)
    params = {"threshold_scale": 2.0 * D / e, "query_scale": 4.0 * D / e,
              "alpha": 8.0 * D * (math.log(T) + math.log(2.0 / b)) / e, "beta": b, "k": T}
    ledger = LG.sequential(LG.above_threshold(e, queries=T, label="AboveThreshold over k queries"))
    return make_plan(algorithm="above_threshold", mode=mode, params=params, eps=e, delta=dl, ledger=ledger,
                     delta_budget=0.0,
                     reference="Dwork-Roth Alg. 1, Thm 3.23-3.24; Realizable private online optimization, Lemma 2.3")


# ----------------------------------------------------------------------------------------- advanced composition
_COMPOSITION_METHODS = ("best", "basic", "dr", "kov", "optimal")


def _composed(method: str, e0: float, d0: float, k: int, delta: float) -> float:
    if method == "basic":
        return k * e0
    slack = delta - k * d0
    if method == "dr":
        return min(k * e0, eps_advanced_dr(e0, d0, k, slack)[0])
    dtil = 1.0 - (1.0 - delta) / math.exp(k * math.log1p(-d0))
    if method == "kov":
        return eps_kov15_homogeneous(e0, d0, k, dtil)[0]
    if method == "optimal":
        return eps_optimal_homogeneous(e0, d0, k, delta)
    return certify(LG.sequential(LG.approx(e0, d0, count=k)), delta).eps


@register_planner("advanced_composition", "per-step (eps0, delta0) so that T-fold adaptive composition is (eps, delta)-DP")
def plan_advanced_composition(*, eps: float, delta: float, T: int, d: int | None = None, mode: str = "paper",
                              delta_split: float = 0.5, method: str = "best") -> Plan:
    """Per-step privacy for a ``k = T``-fold adaptive composition with target ``(ε, δ)``.

    The δ budget is split: ``δ' = delta_split·δ`` of slack, per step ``δ₀ = (1 − delta_split)δ/k``.

    * ``paper``: Dwork–Roth Cor. 3.21, ``ε₀ = ε/(2 sqrt(2k ln(1/δ')))`` (condition ``ε < 1``).
    * ``certified``: the largest ``ε₀`` whose composition is certified by ``method``: ``"dr"``
      (Dwork–Roth Thm 3.20, capped by basic), ``"kov"`` (KOV15 Thm 3.5, corrected LAZY eq. (4)),
      ``"optimal"`` (KOV15 Thm 3.3, exact; ``k <= OPTIMAL_AUTO_MAX_K``), ``"basic"``, or ``"best"``
      (whatever the accountant proves: all of them). Every method's ``ε₀`` is certified by the
      accountant at the requested ``(ε, δ)`` (it evaluates all these bounds); a ``ValueError`` is raised
      where that fails, and for ``"optimal"`` with ``k > OPTIMAL_AUTO_MAX_K``.
    * ``rate``: ``ε₀ = ε/sqrt(k)``.

    ``eps_certified`` is what the accountant proves for ``approx(ε₀, δ₀) x k``; for ``method="basic"``,
    ``"dr"`` or ``"kov"`` it is usually below ``ε`` (the accountant's exact optimal composition is tighter than
    the bound that set ``ε₀``). ``d`` is unused.

    Args:
        eps, delta: the target privacy.
        T: the number of composed steps k.
        d: unused.
        mode: ``"paper"``, ``"certified"`` or ``"rate"`` (see above).
        delta_split: the share of δ kept as the slack δ'.
        method: ``"dr"``, ``"kov"``, ``"optimal"``, ``"basic"`` or ``"best"`` (``certified`` mode).

    Returns:
        A :class:`Plan` with the per-step ``(ε₀, δ₀)``.

    Raises:
        ValueError: the accountant cannot certify the request, or ``"optimal"`` with ``k > OPTIMAL_AUTO_MAX_K``.
    """
    e, dl, k, mode = C.planner_args(eps, delta, T, mode, ("paper", "certified", "rate"), delta_positive=True)
    C.optional_dim(d)
    split = float(C.prob_open(C.coerce_number("delta_split", delta_split), "delta_split"))
    method = C.check_choice("method", method, _COMPOSITION_METHODS)
    d_slack = split * dl
    d0 = (1.0 - split) * dl / k
    notes: list[str] = []

    def ledger(e0: float) -> LG.Ledger:
        return LG.sequential(LG.approx(e0, d0, count=k, label="step"))

    if mode == "paper":
        if e >= 1.0:
            notes.append("Dwork-Roth Cor. 3.21's simplified formula assumes eps < 1; the certificate is the accountant's")
        e0 = e / (2.0 * math.sqrt(2.0 * k * math.log(1.0 / d_slack)))
    elif mode == "rate":
        e0 = e / math.sqrt(k)
    else:
        if method == "optimal" and k > OPTIMAL_AUTO_MAX_K:
            raise ValueError(f"method='optimal' needs T <= OPTIMAL_AUTO_MAX_K = {OPTIMAL_AUTO_MAX_K} (the accountant "
                             f"certifies the exact optimal composition only up to there), got T={k}; use "
                             f"method='best' or 'kov'")
        fn = ((lambda x: certify(ledger(x), dl, use_pld=False).eps) if method == "best"
              else (lambda x: _composed(method, x, d0, k, dl)))
        e0 = calibrate(fn, e, lo=e / k * (1 - 1e-12), hi=e, increasing=True, rtol=1e-9,
                       name="eps_step", what=f"the {method} composition bound")
        got = certify(ledger(e0), dl).eps
        if not got <= e * (1 + 1e-9):     # pragma: no cover - every method's bound is one the accountant evaluates
            raise ValueError(f"method={method!r}: the accountant certifies only eps={got:.6g} > {e:.6g} for "
                             f"eps_step={e0:.6g}, T={k}; use method='best'")
    params = {"eps_step": e0, "delta_step": d0, "k": k, "delta_slack": d_slack}
    return make_plan(algorithm="advanced_composition", mode=mode, params=params, eps=e, delta=dl,
                     ledger=ledger(e0), notes=notes,
                     reference="Dwork-Roth Thm 3.20, Cor. 3.21; Kairouz-Oh-Viswanath 2015 Thms 3.3, 3.5; "
                               "Lazy private online learning, Lemma A.3 (CORRECTED)")
