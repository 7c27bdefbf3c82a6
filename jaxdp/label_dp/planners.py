"""Bin width, k and clipping level from LABEL's theorems (Label differential privacy: theoretical limits), as planners.

Each planner is ``plan_xxx(*, eps, delta=0.0, T=None, d=1, mode="paper", N=..., **kw) -> Plan``
(``T`` is accepted as an alias of the sample size ``N`` so the generic ``jaxdp plan NAME --T ...``
works; the label bound is ``label_bound``). Theorems fix the orders only; the constants are exposed:
``h = c_h · formula``, ``k = c_k · formula``, ``T = c_T · formula`` (defaults 1).

Modes: ``paper`` — the formulas as printed (with ``ln K``); ``rate`` — ``ln K`` and
constants dropped (for exponent studies); ``certified`` — the same parameters as ``paper``: every
mechanism here is calibrated exactly to ε for any bin width / k / clipping level (the privacy proofs
of Thms 2, 4, 6, 8, 10, 12 have no side conditions). The ledger of every plan is the parallel
composition, over the labels (local) or bins (central), of one ε-DP mechanism (:func:`label_ledger`);
the accountant certifies ε, and δ = 0. Bins per axis ``M_b = max(1, round(1/h))``.
"""
from __future__ import annotations

import math
from typing import Any

from ..privacy.accounting import ledger as LG
from ..privacy.accounting.plan import Plan, make_plan
from ..core.validation import check_choice, check_delta, check_epsilon, check_positive, check_positive_int
from ..registry import register_planner

__all__ = ["plan_local_cls", "plan_central_cls", "plan_local_reg", "plan_central_reg", "plan_local_heavy",
           "plan_central_heavy", "bins_from_h", "plan_for", "plan_for_task"]

REF = "Label differential privacy: theoretical limits,"
MODES = ("paper", "certified", "rate")


def bins_from_h(h: float) -> int:
    """``M_b = max(1, round(1/h))``.

    Args:
        h: the bin width (side of a cubic bin of ``[0, 1]^d``).

    Returns:
        The number of bins per axis, at least 1.
    """
    return max(1, int(round(1.0 / h)))


def _common(eps, delta, T, N, d, mode):
    check_epsilon(eps, allow_inf=False)
    check_delta(delta)
    check_choice("mode", mode, MODES)
    if N is None:
        N = T
    if N is None:
        raise ValueError("N (the sample size; alias T) is required")
    N = check_positive_int("N", N)
    d = check_positive_int("d", d)
    return float(eps), float(delta), N, d


# the mechanism each method runs on one label (local) or one bin (central): (ledger event, what it does)
_MECH = {
    "local_rr_vector": ("randomized_response", "vector randomized response of each label (eps in all)"),
    "central_exp_bins": ("exponential", "exponential mechanism per bin (label counts, sensitivity 1)"),
    "local_laplace_knn": ("laplace", "each label + Laplace(2T/eps)"),
    "local_laplace_knn_clipped": ("laplace", "each clipped label + Laplace(2T/eps)"),
    "central_bins_laplace": ("laplace", "each bin mean + Laplace(2T/(n_l eps))"),
    "central_bins_laplace_clipped": ("laplace", "each clipped bin mean + Laplace(2T/(n_l eps))"),
}


def label_ledger(method: str, eps: float, parts: int, K: int = 2) -> LG.Ledger:
    """Parallel composition over the ``parts`` labels (local) or bins (central) of one ``eps``-DP mechanism:
    under label-DP neighbours one label changes, and it enters exactly one of them.

    Float floor: the vector randomized response flips ``K`` coins per label (``rr_vector``), the per-bin
    exponential mechanism is a Gumbel-max over ``K`` classes; the Laplace methods publish noisy labels or bin
    means (raw float releases: no valid floor).

    Args:
        method: the estimator: ``"local_rr_vector"``, ``"central_exp_bins"``, ``"local_laplace_knn"``,
            ``"local_laplace_knn_clipped"``, ``"central_bins_laplace"`` or ``"central_bins_laplace_clipped"``.
        eps: the privacy parameter ε of each mechanism (and of the whole run).
        parts: the number of labels (local) or bins (central), recorded in the ledger's label.
        K: the number of classes (coins of the vector randomized response, outcomes of the exponential mechanism).

    Returns:
        The parallel :class:`jaxdp.privacy.accounting.ledger.Ledger` holding the one event.
    """
    kind, what = _MECH[method]
    if kind == "laplace":
        ev = LG.laplace(1.0 / eps, label=what)
    elif kind == "randomized_response":
        ev = LG.randomized_response(eps, label=what, dim=int(K), sampler="rr_vector")
    else:
        ev = LG.exponential(eps, label=what, outcomes=int(K), sampler="gumbel")
    return LG.parallel(ev, label=f"{parts} disjoint {'labels' if method.startswith('local') else 'bins'}")


def _plan(name, mode, eps, delta, params, ref, conds=None, notes=(), parts=1, K=2):
    notes = list(notes)
    if delta > 0:
        notes.append("the mechanism is pure ε-DP: certified δ = 0")
    return make_plan(algorithm=name, mode=mode, params=params, eps=eps, delta=delta,
                     ledger=label_ledger(name, eps, parts, K), delta_budget=0.0,
                     utility_conditions=dict(conds or {}), reference=f"{REF} {ref}; docs/algorithms/label-dp.md",
                     notes=notes)


def _k_clip(k, N):
    return int(min(max(1, round(k)), N))


@register_planner("label-local-cls", "LABEL Thm 2: bin width for vector-RR local label-DP classification")
def plan_local_cls(*, eps, delta=0.0, T=None, d=1, mode="paper", N=None, beta=1.0, K=2, c_h=1.0, **kw) -> Plan:
    """``h = c_h (N(ε²∧1)/ln K)^{-1/(2β+d)}`` (Thm 2; ``rate``: without ``ln K``).

    The estimator privatises each label with the vector randomized response (LABEL eq. (11)) and classifies
    each bin by the argmax of the sum of its noisy vectors.

    Args:
        eps: the label-DP privacy parameter ε (finite, ``> 0``).
        delta: in ``[0, 1)``, accepted for the planners' common signature: the mechanism is pure, certified δ = 0.
        T: alias of ``N`` (so that ``jaxdp plan NAME --T ...`` works); used when ``N`` is ``None``.
        d: the feature dimension.
        mode: ``"paper"``, ``"certified"`` (the same parameters) or ``"rate"`` (``ln K`` dropped).
        N: the sample size (number of labelled points).
        beta: the Hölder exponent β of the regression function η.
        K: the number of classes (``>= 2``).
        c_h: the constant multiplying the bin-width formula.
        **kw: further keywords, ignored.

    Returns:
        A :class:`jaxdp.privacy.accounting.plan.Plan` with params ``eps``, ``h`` (capped at 1) and ``bins`` (per axis).
    """
    eps, delta, N, d = _common(eps, delta, T, N, d, mode)
    K = check_positive_int("K", K, minimum=2)
    check_positive("beta", beta)
    lnK = 1.0 if mode == "rate" else max(math.log(K), 1e-12)
    h = min(1.0, c_h * (N * min(eps ** 2, 1.0) / lnK) ** (-1.0 / (2 * beta + d)))
    return _plan("local_rr_vector", mode, eps, delta, {"eps": eps, "h": h, "bins": bins_from_h(h)},
                 "Thm 2, eqs. (11)-(13)", parts=N, K=K)


@register_planner("label-central-cls", "LABEL Thm 4: bin width for the per-bin exponential mechanism")
def plan_central_cls(*, eps, delta=0.0, T=None, d=1, mode="paper", N=None, beta=1.0, K=2, c_h=1.0, **kw) -> Plan:
    """``h = c_h((ln K/(εN))^{1/(β+d)} + (ln K/N)^{1/(2β+d)})`` (Thm 4).

    The estimator releases one class per bin with the exponential mechanism on the bin's label counts.

    Args:
        eps, delta, T, d, mode, N, beta, K, c_h: as in :func:`plan_local_cls`.
        **kw: further keywords, ignored.

    Returns:
        A :class:`jaxdp.privacy.accounting.plan.Plan` with params ``eps``, ``h`` (capped at 1) and ``bins`` (per axis).
    """
    eps, delta, N, d = _common(eps, delta, T, N, d, mode)
    K = check_positive_int("K", K, minimum=2)
    lnK = 1.0 if mode == "rate" else max(math.log(K), 1e-12)
    h = min(1.0, c_h * ((lnK / (eps * N)) ** (1 / (beta + d)) + (lnK / N) ** (1 / (2 * beta + d))))
    return _plan("central_exp_bins", mode, eps, delta, {"eps": eps, "h": h, "bins": bins_from_h(h)}, "Thm 4, eq. (17)",
                 parts=bins_from_h(h) ** d, K=K)


@register_planner("label-local-reg", "LABEL Thm 6: k for Laplace-label kNN regression (bounded labels)")
def plan_local_reg(*, eps, delta=0.0, T=None, d=1, mode="paper", N=None, beta=1.0, label_bound=1.0,
                   c_k=1.0, **kw) -> Plan:
    """``k = c_k N^{2β/(d+2β)} (ε∧1)^{-2d/(d+2β)}`` clipped to ``[1, N]``; Laplace scale ``2T/ε``.

    Thm 6: each label, bounded by ``T = label_bound``, gets ``Lap(2T/ε)`` noise, and the estimate at ``x`` is
    the mean of the ``k`` nearest noisy labels.

    Args:
        eps, delta, T, d, N, beta: as in :func:`plan_local_cls`.
        mode: ``"paper"``, ``"certified"`` (the same parameters) or ``"rate"`` (the formula has no ``ln K``: same parameters).
        label_bound: the bound ``T`` on ``|Y|`` (LABEL Assumption 2); the Laplace noise's sensitivity is ``2T``.
        c_k: the constant multiplying the formula for ``k``.
        **kw: further keywords, ignored.

    Returns:
        A :class:`jaxdp.privacy.accounting.plan.Plan` with params ``eps``, ``k``, ``clip`` (``label_bound``) and
        ``laplace_scale``, and the utility condition that ``k <= N`` held before clipping.
    """
    eps, delta, N, d = _common(eps, delta, T, N, d, mode)
    check_positive("label_bound", label_bound)
    k_raw = c_k * N ** (2 * beta / (d + 2 * beta)) * min(eps, 1.0) ** (-2 * d / (d + 2 * beta))
    k = _k_clip(k_raw, N)
    return _plan("local_laplace_knn", mode, eps, delta,
                 {"eps": eps, "k": k, "clip": float(label_bound), "laplace_scale": 2 * label_bound / eps},
                 "Thm 6", {"k <= N without clipping": k_raw <= N}, parts=N)


@register_planner("label-central-reg", "LABEL Thm 8: bin width for Laplace-noised bin means (bounded labels)")
def plan_central_reg(*, eps, delta=0.0, T=None, d=1, mode="paper", N=None, beta=1.0, label_bound=1.0,
                     c_h=1.0, **kw) -> Plan:
    """``h = c_h(N^{-1/(2β+d)} + (εN)^{-1/(d+β)})``; noise ``Lap(2T/(n_l ε))`` (CORRECTED scale).

    Thm 8: the mean of the ``n_l`` labels (bounded by ``T = label_bound``) in each bin gets Laplace noise.

    Args:
        eps, delta, T, d, mode, N, beta: as in :func:`plan_local_reg`.
        label_bound: as in :func:`plan_local_reg`; here also the clipping level of the bin means.
        c_h: as in :func:`plan_local_cls`.
        **kw: further keywords, ignored.

    Returns:
        A :class:`jaxdp.privacy.accounting.plan.Plan` with params ``eps``, ``h`` (capped at 1), ``bins`` and ``clip``.
    """
    eps, delta, N, d = _common(eps, delta, T, N, d, mode)
    check_positive("label_bound", label_bound)
    h = min(1.0, c_h * (N ** (-1 / (2 * beta + d)) + (eps * N) ** (-1 / (d + beta))))
    return _plan("central_bins_laplace", mode, eps, delta,
                 {"eps": eps, "h": h, "bins": bins_from_h(h), "clip": float(label_bound)}, "Thm 8, eq. (23)",
                 notes=["Laplace scale 2T/(n_l eps) (printed 2/(n_l eps) is the T = 1 case; CORRECTED)"],
                 parts=bins_from_h(h) ** d)


@register_planner("label-local-heavy", "LABEL Thm 10: k and clipping T for clipped Laplace-label kNN (heavy tails)")
def plan_local_heavy(*, eps, delta=0.0, T=None, d=1, mode="paper", N=None, beta=1.0, p=2.0, c_k=1.0, c_T=1.0,
                     k_rule="corrected", **kw) -> Plan:
    """Corrected (default): ``k = N^{2pβ/A} ε^{-2d(p-1)/A} ∨ N^{2β/(2β+d)}``, ``A = 2pβ + d(p-1)``;
    printed (``k_rule="printed"``): ``k = (Nε²)^{2pβ/A} ∨ N^{2β/(2β+d)}``; ``T = c_T (kε²)^{1/(2p)}``.

    Thm 10: labels with a finite ``p``-th moment are clipped to ``[-T, T]``, privatised with ``Lap(2T/ε)``
    and averaged over the ``k`` nearest neighbours; ``k`` is clipped to ``[1, N]``.

    Args:
        eps, delta, T, d, mode, N, beta: as in :func:`plan_local_reg`.
        p: the order of the labels' finite moment (LABEL Assumption 3), ``>= 2``.
        c_k: as in :func:`plan_local_reg`.
        c_T: the constant multiplying the clipping level ``T``.
        k_rule: ``"corrected"`` (the rule re-derived from the bound, docs/algorithms/label-dp.md) or ``"printed"``.
        **kw: further keywords, ignored.

    Returns:
        A :class:`jaxdp.privacy.accounting.plan.Plan` with params ``eps``, ``k``, ``clip`` (``T``) and ``laplace_scale``.

    Raises:
        ValueError: ``p < 2``, an unknown ``k_rule`` or invalid common arguments.
    """
    eps, delta, N, d = _common(eps, delta, T, N, d, mode)
    check_choice("k_rule", k_rule, ["corrected", "printed"])
    check_positive("p", p)
    if p < 2:
        raise ValueError(f"p must be >= 2 (LABEL Assumption 3), got {p}")
    A = 2 * p * beta + d * (p - 1)
    if k_rule == "corrected":
        k_main = N ** (2 * p * beta / A) * eps ** (-2 * d * (p - 1) / A)
    else:
        k_main = (N * eps ** 2) ** (2 * p * beta / A)
    k_raw = c_k * max(k_main, N ** (2 * beta / (2 * beta + d)))
    k = _k_clip(k_raw, N)
    clip = c_T * (k * eps ** 2) ** (1 / (2 * p))
    return _plan("local_laplace_knn_clipped", mode, eps, delta,
                 {"eps": eps, "k": k, "clip": float(clip), "laplace_scale": 2 * clip / eps}, "Thm 10 (k CORRECTED)",
                 {"k <= N without clipping": k_raw <= N}, notes=[f"k_rule={k_rule}"], parts=N)


@register_planner("label-central-heavy", "LABEL Thm 12: bin width and clipping T for clipped Laplace bin means")
def plan_central_heavy(*, eps, delta=0.0, T=None, d=1, mode="paper", N=None, beta=1.0, p=2.0, c_h=1.0, c_T=1.0,
                       **kw) -> Plan:
    """``h = c_h(N^{-1/(2β+d)} + (εN)^{-(p-1)/(pβ+d(p-1))})``, ``T = c_T(εNh^d)^{1/p}`` (Thm 12).

    Labels are clipped to ``[-T, T]`` and each bin mean gets ``Lap(2T/(n_l ε))`` noise.

    Args:
        eps, delta, T, d, mode, N, beta: as in :func:`plan_local_reg`.
        p, c_T: as in :func:`plan_local_heavy`.
        c_h: as in :func:`plan_local_cls`.
        **kw: further keywords, ignored.

    Returns:
        A :class:`jaxdp.privacy.accounting.plan.Plan` with params ``eps``, ``h`` (capped at 1), ``bins`` and ``clip`` (``T``).

    Raises:
        ValueError: ``p < 2`` or invalid common arguments.
    """
    eps, delta, N, d = _common(eps, delta, T, N, d, mode)
    if p < 2:
        raise ValueError(f"p must be >= 2 (LABEL Assumption 3), got {p}")
    h = min(1.0, c_h * (N ** (-1 / (2 * beta + d)) + (eps * N) ** (-(p - 1) / (p * beta + d * (p - 1)))))
    clip = c_T * (eps * N * h ** d) ** (1 / p)
    return _plan("central_bins_laplace_clipped", mode, eps, delta,
                 {"eps": eps, "h": h, "bins": bins_from_h(h), "clip": float(clip)}, "Thm 12, eq. (28)",
                 parts=bins_from_h(h) ** d)


_BY_METHOD = {
    "local_rr_vector": plan_local_cls, "local_rr_kary": plan_local_cls, "central_exp_bins": plan_central_cls,
    "nonprivate_bins_cls": plan_central_cls,
    "local_laplace_knn": plan_local_reg, "local_laplace_knn_clipped": plan_local_heavy,
    "central_bins_laplace": plan_central_reg, "central_bins_laplace_clipped": plan_central_heavy,
}


def plan_for(method: str, *, N: int, eps: float, d: int = 1, mode: str = "rate", **kw) -> dict:
    """Hyperparameters (``eps``, ``bins``, ``k``, ``clip``) for ``method`` from its theorem.

    Non-private methods use the ε → ∞ limit of their private counterpart's rule
    (bins ``N^{-1/(2β+d)}``, ``k = N^{2β/(2β+d)}``, no clipping for kNN unless ``clip`` is given).

    Args:
        method: an estimator of :mod:`jaxdp.label_dp.estimators` (``"local_rr_vector"``, ``"local_rr_kary"``,
            ``"central_exp_bins"``, the Laplace kNN and bin methods, or a ``"nonprivate_*"`` baseline).
        N: the sample size.
        eps: the privacy parameter ε (ignored by the non-private methods).
        d: the feature dimension.
        mode: the planner mode (default ``"rate"``: the exponent studies' setting).
        **kw: the planner's constants and model parameters (``beta``, ``K``, ``p``, ``c_h``, ``c_k``, ``c_T``,
            ``label_bound``, ``k_rule``), and ``clip`` for the non-private regression baselines.

    Returns:
        ``{"eps", "bins", "k", "clip"}``: ``bins`` per axis (1 for kNN), ``k`` (1 for bin methods) and the clipping
        level (``inf`` when none).
    """
    inf = float("inf")
    if method == "nonprivate_bins_cls":
        p = plan_central_cls(eps=1e300, N=N, d=d, mode=mode, **kw).params
        return {"eps": inf, "bins": p["bins"], "k": 1, "clip": inf}
    if method == "nonprivate_bins_reg":
        p = plan_central_reg(eps=1e300, N=N, d=d, mode=mode, **kw).params
        return {"eps": inf, "bins": p["bins"], "k": 1, "clip": kw.get("clip", inf)}
    if method == "nonprivate_knn":
        beta = kw.get("beta", 1.0)
        k = _k_clip(kw.get("c_k", 1.0) * N ** (2 * beta / (2 * beta + d)), N)
        return {"eps": inf, "bins": 1, "k": k, "clip": kw.get("clip", inf)}
    kw = {k: v for k, v in kw.items() if k != "clip"}
    p = _BY_METHOD[method](eps=eps, N=N, d=d, mode=mode, **kw).params
    return {"eps": float(eps), "bins": int(p.get("bins", 1)), "k": int(p.get("k", 1)),
            "clip": float(p.get("clip", kw.get("label_bound", 1.0)))}


def plan_for_task(method: str, task: str, *, N: int, eps: float, p: float = 0.0, K: int = 2, beta: float = 1.0,
                  knob: str = "none", c: float = 1.0) -> dict:
    """:func:`plan_for` in rate mode with the model parameters a task of
    :func:`jaxdp.label_dp.generators.task_generator` needs.

    Args:
        method: the estimator.
        task: ``"classification"`` and ``"bump_cls"`` (pass ``K``), ``"regression"``, ``"heavy"`` (pass ``p``),
            ``"bump_reg"``; the bumps pass ``beta``.
        N: the sample size.
        eps: the privacy parameter (``inf``: the non-private limit).
        p, K, beta: the heavy tail's moment order, the number of classes and the smoothness β.
        knob: a planner constant to set (``"c_h"``, ``"c_k"``, ``"c_T"``), or ``"none"``.
        c: its value.

    Returns:
        ``{"eps", "bins", "k", "clip"}`` (:func:`plan_for`).
    """
    kw: dict[str, Any] = {"p": p} if task == "heavy" else {}
    if task in ("classification", "bump_cls"):
        kw["K"] = K
    if task.startswith("bump"):
        kw["beta"] = beta
    if knob != "none":
        kw[knob] = c
    return plan_for(method, N=N, eps=eps if math.isfinite(eps) else 1e300, mode="rate", **kw)
