"""Planners for the realizable-regime experts algorithms (Realizable private online optimization, Thms 1, 2, 6, 7).

Each returns a :class:`jaxdp.accounting.Plan` whose ``params`` are exactly the fields of the
algorithm's ``Params`` (build them with ``plan.to_params()``), the ledger of the mechanisms
the configured algorithm runs (docs/guide/privacy-ledger.md), the (ε, δ) the accountant proves
for it, and the theorem's side conditions, privacy and utility apart. Modes:

* ``paper``: the printed formulas;
* ``certified``: corrected constants, parameters certify the requested (ε, δ);
* ``rate``: absolute constants dropped from utility-only quantities (thresholds); the privacy
  parameters stay certified where possible, and whatever is certified is reported.

Float δ floor (``Plan.delta_float``; docs/guide/privacy-ledger.md#float-floor): the ledgers count every
float draw the configured run can make in the mechanisms one loss enters. The sparse vector is queried
every round, so its AboveThreshold events carry ``T`` queries (the instance a loss enters may stay active
for the whole run), each a fresh query noise compared with the threshold noise (two Laplace terms); the
exponential-mechanism draws are counted as used (at most ``K``: the draws the step functions make every
round and discard with ``jnp.where`` are never released).

Also the theory curves of the theorems (constants 1) for plots.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Optional

import numpy as np

from ..accounting import ledger as LG
from ..accounting.accountant import certify
from ..accounting.calibrate import calibrate
from ..accounting.floating import shared_threshold_terms
from ..accounting.plan import Plan, make_plan
from ..core.validation import check_choice, check_positive, check_positive_int
from ..mechanisms.matrix_factorization import resolve_noise
from ..mechanisms.sparse_vector import Ratio, csvt_ledger_event
from ..registry import get_learner, learner_for_plan, register_planner
from ._common import check_beta, check_d, check_delta_for, check_eps_finite, check_lstar, check_mode, log2_ceil
from .sparse_vector import THRESHOLD_MODES, _check_svt_ratio, shared_threshold_scales

__all__ = [
    "plan_sparse_vector_experts", "plan_adaptive_sparse_vector_experts", "plan_potential_experts",
    "plan_binary_tree_experts", "params_from_plan", "binary_tree_static", "sparse_vector_static",
    "sparse_vector_ledger",
    "thm1_bound", "thm2_bound", "thm6_bound", "lower_bound_thm5",
]

REF = "Realizable private online optimization,"


def _common_checks(eps, delta, T, d, mode, modes=("paper", "certified", "rate")):
    d = check_d(d)
    eps = float(check_eps_finite(eps))
    delta = check_delta_for(delta, approximate=False)
    T = check_positive_int("T", T, minimum=2)
    mode = check_mode(mode, modes)
    return eps, delta, T, d, mode


# --------------------------------------------------------------------------- Alg. 1 / Thm 1


@register_planner("sparse_vector_experts", "REAL Alg. 1 / Thm 1: sparse-vector experts, known L* (pure or approximate DP)")
def plan_sparse_vector_experts(*, eps: float, delta: float = 0.0, T: int, d: int, mode: str = "paper",
                               beta: float = 0.1, Lstar: float = 0.0, threshold_scale: float = 1.0,
                               threshold: str = "fresh", svt_ratio: Ratio = 1.0) -> Plan:
    """Theorem 1 settings. ``delta == 0``: pure (η = ε/(2K)); ``delta > 0``: approximate
    (η = ε/sqrt(32 K log(1/δ)) as printed; ``certified`` solves advanced composition for η).

    ``K = ceil(6 ceil(log2 d) + 24 log(1/β))`` (``k < K`` with a real K allows ``ceil(K)`` switches),
    ``B = log(2T²/β)``, ``L = L* + c(4/η + 8B/ε)`` (paper), ``c(4/η + 16B/ε)`` (certified, CORRECTED
    SVT accuracy), ``c(1/η + B/ε)`` (rate), with ``c = threshold_scale`` (utility only: privacy
    depends on ``(eps_svt, η, K)`` alone).

    ``threshold="shared"``: one threshold noise for all ``K`` instances (Understanding the Sparse Vector
    Technique for Differential Privacy, Alg. 1, Thm 1, with ``c = K``): threshold noise ``Lap(b_thr)``,
    ``b_thr = 1/ε₁``, query noise ``Lap(b_q)``, ``b_q = 2K/ε₂``, ``ε₁ + ε₂ = eps_svt = ε/2``,
    ``ε₁/ε₂ = svt_ratio`` (``"optimal"``: ``(2K)^{-2/3}``). Same ledger, hence the same certified ε; the
    threshold uses the shared sparse vector's accuracy, a union bound over one ``|ρ|`` and ``T`` query
    noises: ``L = L* + c(4/η + b_q B)`` (paper; ``8B/ε`` at ``K = 1``), ``c(4/η + (b_thr + b_q) B)``
    (certified), ``c(1/η + b_q B/8)`` (rate). The plan's params then also hold the static
    ``threshold`` and ``svt_ratio`` (:func:`sparse_vector_static`).

    Args:
        eps: the privacy parameter ε.
        delta: the privacy parameter δ (0: pure DP).
        T: the horizon.
        d: the number of experts.
        mode: ``"paper"``, ``"certified"`` or ``"rate"`` (see above).
        beta: the failure probability β.
        Lstar: the best expert's loss L*.
        threshold_scale: the factor ``c`` of the threshold (utility only).
        threshold: ``"fresh"`` or ``"shared"``.
        svt_ratio: ε₁/ε₂ of the shared threshold, or ``"optimal"``.

    Returns:
        A :class:`jaxdp.accounting.Plan` with params ``eps_svt``, ``eta``, ``K``, ``L`` and ``Lstar`` (and, with
        ``threshold="shared"``, ``threshold`` and ``svt_ratio``).

    Raises:
        ValueError: invalid privacy parameters, horizon, ``d``, mode or option.
    """
    eps, delta, T, d, mode = _common_checks(eps, delta, T, d, mode)
    check_beta(beta)
    check_lstar(Lstar)
    check_positive("threshold_scale", threshold_scale)
    threshold = check_choice("threshold", threshold, THRESHOLD_MODES)
    if threshold == "shared":
        svt_ratio = _check_svt_ratio(svt_ratio)
    approx = delta > 0
    m = log2_ceil(d)
    K_real = 6 * m + 24 * math.log(1 / beta)
    K = int(math.ceil(K_real - 1e-9))
    B = math.log(2 * T * T / beta)
    eps_svt = eps / 2
    notes = []
    pure_eta = eps / (2 * K)

    def ledger(eta_: float) -> LG.Ledger:
        return sparse_vector_ledger(eps_svt, eta_, K, d, threshold=threshold, T=T,
                                    svt_ratio=svt_ratio if threshold == "shared" else 1.0)

    if not approx:
        eta = eps / (2 * K_real) if mode == "paper" else pure_eta
    elif mode == "paper":
        eta = eps / math.sqrt(32 * K_real * math.log(1 / delta))
    else:
        eta = calibrate(lambda e: certify(ledger(e), delta, use_pld=False).eps, eps, lo=pure_eta * (1 - 1e-12),
                        hi=16 * eps, increasing=True, rtol=1e-9, name="eta", what="the certified eps")
    c_eta, c_B = {"paper": (4, 8), "certified": (4, 16), "rate": (1, 1)}[mode]
    if threshold == "fresh":
        L = Lstar + threshold_scale * (c_eta / eta + c_B * B / eps)
        utility = {
            "0 < beta < 1/2": True,
            "K >= 6 ceil(log2 d) + 24 log(1/beta) (Lemma 3.1)": K >= K_real - 1e-9,
            "L - 16B/eps >= L* + 4/eta (SVT accuracy, CORRECTED)": L - 16 * B / eps >= Lstar + 4 / eta - 1e-9,
        }
    else:
        b_thr, b_q = shared_threshold_scales(eps_svt, K, svt_ratio)
        alpha = {"paper": b_q * B, "certified": (b_thr + b_q) * B, "rate": b_q * B / 8}[mode]
        L = Lstar + threshold_scale * (c_eta / eta + alpha)
        utility = {
            "0 < beta < 1/2": True,
            "K >= 6 ceil(log2 d) + 24 log(1/beta) (Lemma 3.1)": K >= K_real - 1e-9,
            "L - (b_thr + b_q) B >= L* + 4/eta (shared sparse-vector accuracy)":
                L - (b_thr + b_q) * B >= Lstar + 4 / eta - 1e-9,
        }
        notes.append(f"threshold noise drawn once and shared by the K = {K} instances (Lyu et al. Alg. 1, c = K): "
                     f"threshold Lap({b_thr:.4g}), query Lap({b_q:.4g}) against Lap({4 / eps_svt:.4g}) with fresh "
                     "instances; same certified eps, larger threshold L")
    if approx:
        utility["eps <= sqrt(log T log(1/delta)) (Thm 1, approximate)"] = (
            eps <= math.sqrt(math.log(T) * math.log(1 / delta)))
    if mode == "paper" and K != K_real:
        notes.append(f"K = ceil({K_real:.3f}) = {K} draws but eta uses the real K")
    if mode == "rate":
        notes.append("rate mode: threshold constants 4 and 8 dropped (utility only; privacy unchanged)")
    notes.append(f"B = log(2T^2/beta) = {B:.4g}; switches expected O(log d), budget K = {K}")
    params: dict[str, Any] = dict(eps_svt=eps_svt, eta=float(eta), K=K, L=float(L), Lstar=float(Lstar))
    reference = f"{REF} Alg. 1, Thm 1; docs/algorithms/realizable.md#sparse-vector-experts"
    if threshold == "shared":
        params.update(threshold=threshold, svt_ratio=svt_ratio)
        reference = (f"{REF} Alg. 1, Thm 1; Understanding the Sparse Vector Technique for Differential Privacy, "
                     "Alg. 1, Thm 1; docs/algorithms/realizable.md#shared-threshold")
    plan = make_plan(algorithm="sparse_vector_experts", mode=mode, params=params,
                     eps=eps, delta=delta, ledger=ledger(eta), utility_conditions=utility,
                     reference=reference, notes=notes)
    if mode == "certified" and not plan.certified:  # pragma: no cover - the calibration always certifies
        raise ValueError(f"cannot certify eps={eps}, delta={delta} for sparse_vector_experts: {plan.format()}")
    return plan


def sparse_vector_ledger(eps_svt: float, eta: float, K: int, d: int, threshold: str = "fresh", *, T: int,
                         svt_ratio: Ratio = 1.0) -> LG.Ledger:
    """Alg. 1's privacy ledger: the sparse-vector part ``eps_svt`` and ``K`` exponential-mechanism draws.

    Every AboveThreshold instance together is ``eps_svt``-DP (a loss enters the queries of the instance
    active when it arrives only; REAL Thm 1 proof), and ``K`` exponential-mechanism draws
    ``exp(-eta s/2)`` with ``s`` of sensitivity 1 are each ``eta``-DP; the two compose sequentially.

    ``threshold="shared"``: the ``K`` instances are one sparse vector with ``c = K`` positives and one threshold
    noise, ``eps_svt``-DP by Lyu et al.'s Thm 1 (no disjoint-data argument needed); the same numbers.

    Float floor: ``T`` queries (one per round; the instance a loss enters may last the whole run), two Laplace
    terms each (the fresh query noise, and the threshold noise at that comparison: an instance's queries are
    fixed once it starts, and only ⊥ continues it). The shared threshold with ``K >= 2`` positives is compared
    by queries that depend on earlier ⊤ (the expert changes), so its term is
    :func:`jaxdp.accounting.floating.shared_threshold_terms` of ``b_thr/b_q`` (scales of ``svt_ratio``). The
    ``K`` categorical draws are over ``d`` experts.

    Args:
        eps_svt: the ε of the sparse-vector part.
        eta: the ``η`` of each exponential-mechanism draw.
        K: the largest number of switches (exponential-mechanism draws).
        d: the number of experts (outcomes of each draw).
        threshold: ``"fresh"`` or ``"shared"``.
        T: the horizon (queries counted for the float floor).
        svt_ratio: ``ε₁/ε₂`` of the shared threshold, or ``"optimal"`` (used with ``"shared"`` only).

    Returns:
        The :class:`jaxdp.accounting.Ledger` (``sequential`` of the sparse-vector event and the ``K`` draws).
    """
    T = int(T)
    if threshold == "shared":
        svt = csvt_ledger_event(eps_svt, K, label=f"one sparse vector, threshold noise shared by its c = K = {K} "
                                                  "positives (Lyu et al. Alg. 1)")
        b_thr, b_q = shared_threshold_scales(eps_svt, K, svt_ratio)
        terms = 2 if K <= 1 else shared_threshold_terms(float(b_thr) / float(b_q))
        svt = dataclasses.replace(svt, float_draws=T, float_dim=terms)
    else:
        svt = LG.above_threshold(eps_svt, label="all sparse-vector instances (each loss enters one)", queries=T)
    return LG.sequential(
        svt, LG.exponential(eta, count=K, label="exponential-mechanism draws at switches", outcomes=d))


def sparse_vector_static(plan: Plan) -> dict:
    """The static constructor arguments of a sparse-vector-experts plan.

    ``sparse_vector_experts(d, **sparse_vector_static(plan))`` builds the learner the plan is for (the
    registered learner's :meth:`~jaxdp.registry.LearnerEntry.static_from_plan`).

    Args:
        plan: a plan of :func:`plan_sparse_vector_experts`.

    Returns:
        ``{"threshold", "svt_ratio"}`` for a shared-threshold plan; empty for the default fresh instances.
    """
    return get_learner("sparse_vector").static_from_plan(plan)


# --------------------------------------------------------------------------- Alg. 2 / Thm 2


@register_planner("adaptive_sparse_vector_experts", "REAL Alg. 2 / Thm 2: sparse-vector experts with unknown L* (doubling)")
def plan_adaptive_sparse_vector_experts(*, eps: float, delta: float = 0.0, T: int, d: int, mode: str = "paper",
                                        beta: float = 0.1, test_sign: str = "printed") -> Plan:
    """Theorem 2 settings (pure DP; ``delta`` is ignored).

    ``paper``: ``eps0 = ε/(2 ln T)``, cap ``ceil(log2 T)`` doublings — but then up to
    ``P = ceil(log2 T) + 1 > ln T`` phases run and the certified total is ``(1.5 P + 0.5) eps0 ≈ 1.1–1.2 ε``
    (the proof's "at most log T phases" uses log2).
    ``certified``: ``P = ceil(log2 T) + 1`` phases, ``eps0 = ε/(2P)``, integer K in η, 16B SVT accuracy; it
    certifies ``(1.5 P + 0.5)/(2P) ε ≈ 0.77 ε`` (the split is the theorem's, sized for ``2 eps0`` per phase).
    ``rate``: as certified with threshold/margin constants dropped.

    Ledger (docs/algorithms/realizable.md#adaptive-sparse-vector): per phase ``K`` exponential-mechanism draws
    (``η``) and ``K`` doubling checks (``Lap(zeta_scale)``); they score ``cum``, every loss so far, so they compose
    sequentially over the ``P`` phases. The sparse-vector instances do not: a loss enters ``acc``, the loss of
    the current expert since the last switch, which restarts at every switch (hence at every doubling, which
    happens at a switch), so it enters the queries of the one instance active in its round, in one phase. The
    phases' instances run on disjoint rounds and compose in parallel: ``eps0/2`` for all of them together,
    not ``P eps0/2``. Total ``eps0/2 + P K (η + 1/zeta_scale) = (1.5 P + 0.5) eps0``.

    ``test_sign="printed"`` doubles when ``noisy loss > Lbar - margin`` (as printed; at simulation
    sizes margin > T, so it doubles at every switch until the cap); ``"flipped"`` uses
    ``> Lbar + margin`` (the reading under which the utility proof's "does not double when
    Lbar >= L*" holds). The sign does not affect privacy.

    Args:
        eps, T, d, mode, beta: as in :func:`plan_sparse_vector_experts`.
        delta: ignored (pure DP).
        test_sign: ``"printed"`` or ``"flipped"``.

    Returns:
        A :class:`jaxdp.accounting.Plan` with params ``eps_svt``, ``eta``, ``K``, ``L_offset``, ``Lbar0``,
        ``zeta_scale``, ``margin`` and ``max_doublings``.

    Raises:
        ValueError: invalid privacy parameters, horizon, ``d``, mode or option.
    """
    eps, delta, T, d, mode = _common_checks(eps, delta, T, d, mode)
    check_beta(beta)
    if test_sign not in ("printed", "flipped"):
        raise ValueError(f"test_sign must be one of ['printed', 'flipped'], got {test_sign!r}")
    m = log2_ceil(d)
    lg2T = int(math.ceil(math.log2(T)))
    beta0 = beta / T
    K_real = 6 * m + 24 * math.log(1 / beta0)
    K = int(math.ceil(K_real - 1e-9))
    B = math.log(2 * T * T / beta0)
    if mode == "paper":
        eps0 = eps / (2 * math.log(T))
        eta = eps0 / (2 * K_real)
    else:
        eps0 = eps / (2 * (lg2T + 1))
        eta = eps0 / (2 * K)
    max_doublings = lg2T
    c_eta, c_B, c_m = {"paper": (4, 8, 5), "certified": (4, 16, 5), "rate": (1, 1, 1)}[mode]
    margin = c_m * K * math.log(1 / beta0) / eps0
    if test_sign == "flipped":
        margin = -margin
    zeta_scale = K_real / eps0 if mode == "paper" else K / eps0
    P = max_doublings + 1
    svt = LG.parallel(
        *(LG.above_threshold(eps0 / 2, label=f"phase {i + 1}: its sparse-vector instances (each loss enters one)",
                             queries=T) for i in range(P)),
        label=f"sparse-vector instances of the P = {P} phases: disjoint rounds (acc restarts at every switch)")
    phase = LG.sequential(
        LG.exponential(eta, count=K, label="exponential-mechanism draws (score cum: all losses so far)", outcomes=d),
        LG.laplace(zeta_scale, count=K, label="doubling checks: cum[x] + Lap(zeta_scale) > Lbar - margin",
                   release="threshold"),
        count=P, label="phase (Alg. 1 run); at most ceil(log2 T) + 1 phases")
    plan = make_plan(
        algorithm="adaptive_sparse_vector_experts", mode=mode,
        params=dict(eps_svt=eps0 / 2, eta=float(eta), K=K, L_offset=float(c_eta / eta + c_B * B / eps0),
                    Lbar0=1.0, zeta_scale=float(zeta_scale), margin=float(margin), max_doublings=max_doublings),
        eps=eps, delta=delta, ledger=LG.sequential(svt, phase), delta_budget=0.0,
        conditions={"phases <= ceil(log2 T) + 1 (the doubling cap, enforced by the algorithm)": True},
        utility_conditions={"0 < beta < 1/2": True},
        reference=f"{REF} Alg. 2, Thm 2; docs/algorithms/realizable.md",
        notes=[f"eps0 = {eps0:.4g}, K = {K}, at most {max_doublings + 1} phases, margin = {margin:.4g}",
               f"doubling test sign: {test_sign}"])
    if mode == "certified" and not plan.certified:  # pragma: no cover
        raise ValueError(f"cannot certify eps={eps} for adaptive_sparse_vector_experts: {plan.format()}")
    return plan


# --------------------------------------------------------------------------- Alg. 5 / Thms 6–7


def potential_ledger(eps0: float, eta: float, s_phi: float, K: int, outcomes: int = 1, *, T: int) -> LG.Ledger:
    """Alg. 5's privacy ledger: ``K`` phases, each an AboveThreshold instance and one sample.

    Each phase's AboveThreshold instance runs on ``Δ_t/(s_φ η)``, whose true sensitivity is ``2η`` (so it is
    ``eps0·2/s_φ``-DP), and its sample ``∝ exp(-η S)`` is ``2η``-DP under replace-one neighbours (CORRECTED
    accounting; docs/algorithms/realizable.md).

    Float floor: every phase's query reads the potential of all losses, so every instance is charged; the
    ``K`` instances share the ``T`` rounds (one query per round), ``T`` queries in all (two Laplace terms
    each); one categorical draw over ``outcomes`` per phase.

    Args:
        eps0: the AboveThreshold ε₀ the learner's noise is calibrated to.
        eta: the potential's and the sample's ``η``.
        s_phi: the assumed sensitivity factor ``s_φ`` of ``Δ_t`` in units of ``η`` (1 paper, 2 certified).
        K: the largest number of phases (resamples).
        outcomes: the number of outcomes of each sample (the experts ``d``).
        T: the horizon.

    Returns:
        The :class:`jaxdp.accounting.Ledger` (``sequential`` over ``K`` phases).
    """
    T = int(T)
    return LG.sequential(LG.sequential(
        LG.above_threshold(eps0 * 2.0 / s_phi, label="AboveThreshold on the potential drop", queries=T,
                           queries_total=T),
        LG.exponential(2.0 * eta, label="sample exp(-eta S)", outcomes=outcomes),
        count=K, label="phase"))


def potential_settings(eps: float, delta: float, T: int, K: int, mode: str, outcomes: int = 1,
                       eta_ratio: Optional[float] = None) -> tuple[float, float, float]:
    """``(eps0, eta, s_phi)`` of Thms 6–7 (REAL Alg. 5) for ``(ε, δ)`` over ``K`` phases.

    ``paper``: ``s_phi = 1``, ``eps0 = ε/K`` (pure) or ``ε/sqrt(K log(1/δ))`` (approximate),
    ``eta = eps0/(56 log T)``. ``certified`` and ``rate``: ``s_phi = 2``, ``eta = eta_ratio · eps0`` and ``eps0``
    the largest whose :func:`potential_ledger` the accountant certifies at ``(ε, δ)``.

    Args:
        eps, delta: the privacy target (``delta = 0``: pure DP).
        T: the horizon.
        K: the largest number of phases.
        mode: ``"paper"``, ``"certified"`` or ``"rate"``.
        outcomes: the number of outcomes of each sample (the experts ``d``).
        eta_ratio: ``eta / eps0`` (``None``: ``1/(112 ln T)`` certified, ``1/(8 ln T)`` rate; unused in paper mode).

    Returns:
        ``(eps0, eta, s_phi)``.
    """
    lnT = math.log(T)
    approx = delta > 0
    if mode == "paper":
        eps0 = eps / K if not approx else eps / math.sqrt(K * math.log(1 / delta))
        return eps0, eps0 / (56 * lnT), 1.0
    ratio = eta_ratio if eta_ratio is not None else (1.0 / (112 * lnT) if mode == "certified" else 1.0 / (8 * lnT))
    def cert(e0: float) -> float:
        return certify(potential_ledger(e0, ratio * e0, 2.0, K, outcomes, T=T), delta, use_pld=False).eps

    eps0 = calibrate(cert, eps, lo=eps / (2 * K), hi=eps, increasing=True, rtol=1e-9, name="eps0",
                     what="the certified eps")
    return eps0, ratio * eps0, 2.0


@register_planner("potential_experts", "REAL Alg. 5 / Thms 6-7: potential-based experts (pure or approximate DP)")
def plan_potential_experts(*, eps: float, delta: float = 0.0, T: int, d: int, mode: str = "paper",
                           gamma: float | None = None) -> Plan:
    """Theorem 6 (``delta == 0``) or 7 (``delta > 0``): ``α = 1``, ``β = 1/T²``, ``K = ceil(2 ln(1/γ))``
    (``γ = 1/d`` for DP-OPE).

    ``paper``: ``eps0 = ε/K`` (Thm 6) or ``ε/sqrt(K log(1/δ))`` (Thm 7), ``η = eps0/(56 log T)``,
    ``s_φ = 1``; certified ε reported with the CORRECTED accounting (sensitivity 2η of Δ_t, 2η per
    resample, factor K): about 2ε. ``certified``: ``s_φ = 2``, ``η = eps0/(112 log T)``, eps0 solved so
    the total is ε. ``rate``: ``s_φ = 2``, ``η = eps0/(8 log T)`` (constant 112 -> 8), eps0 solved.

    Args:
        eps, delta, T, d, mode: as in :func:`plan_sparse_vector_experts`.
        gamma: γ (default ``1/d``).

    Returns:
        A :class:`jaxdp.accounting.Plan` with params ``eps0``, ``eta``, ``K``, ``alpha`` and ``s_phi``.

    Raises:
        ValueError: invalid privacy parameters, horizon, ``d`` or mode.
    """
    eps, delta, T, d, mode = _common_checks(eps, delta, T, d, mode)
    if gamma is None:
        gamma = 1.0 / d
    gamma = float(gamma)
    if not (0 < gamma < 1):
        raise ValueError(f"gamma must be in (0, 1), got {gamma!r}")
    approx = delta > 0
    K = int(math.ceil(2 * math.log(1 / gamma) - 1e-9))
    K = max(K, 1)
    lnT = math.log(T)
    beta = 1.0 / T ** 2
    eps0, eta, s_phi = potential_settings(eps, delta, T, K, mode, outcomes=d)
    alpha = 1.0
    utility = {
        "alpha >= 8 eta (log T + log(2T/beta)) / eps0 (Lemma C.2)":
            alpha >= 8 * eta * (lnT + math.log(2 * T / beta)) / eps0 - 1e-12,
        "eta < 1/2 (Lemma C.3)": eta < 0.5,
    }
    if approx:
        utility["eps < 1 (Thm 7)"] = eps < 1
    notes = [f"K = {K}, eps0 = {eps0:.4g}, eta = {eta:.4g}, s_phi = {s_phi:g}"]
    if mode == "paper":
        notes.append("paper accounting ignores the 2*eta sensitivity of Delta_t and of the resample, and the factor K: "
                     "the certified eps is the ledger's")
    plan = make_plan(algorithm="potential_experts", mode=mode,
                     params=dict(eps0=float(eps0), eta=float(eta), K=K, alpha=alpha, s_phi=s_phi),
                     eps=eps, delta=delta, ledger=potential_ledger(eps0, eta, s_phi, K, d, T=T),
                     utility_conditions=utility,
                     reference=f"{REF} Alg. 5, Thm {7 if approx else 6}; docs/algorithms/realizable.md", notes=notes)
    if mode == "certified" and not plan.certified:  # pragma: no cover - the calibration always certifies
        raise ValueError(f"cannot certify eps={eps}, delta={delta} for potential_experts: {plan.format()}")
    return plan


# --------------------------------------------------------------------------- Alg. 4 (sketch)


@register_planner("binary_tree_experts", "REAL Alg. 4 (concretized): binary-tree experts, pure DP")
def plan_binary_tree_experts(*, eps: float, delta: float = 0.0, T: int, d: int, mode: str = "paper",
                             beta: float = 0.1, noise=None) -> Plan:
    """PROPOSED defaults (docs/algorithms/realizable.md): ``m_set = min(d, ceil(2 log(dT)))``, ``P_max = ceil(log2 d) + 8``,
    ``eps_tree = ε/(2 m_set)``, ``eta_sel = ε/(2 m_set P_max)``, ``tau = (H^1.5/eps_tree) log(2 m_set T/β)``
    (``rate``: the log factor dropped). ``paper`` and ``certified`` coincide (the defaults certify ε).
    The static ``m_set``, ``P_max``, ``T_max`` go to :func:`binary_tree_experts`.

    Float floor: the counters' noisy sums are only compared (with ``tau``, and with each other for the
    argmin), so every round each of a counter's ``<= H`` live nodes enters two decisions: ``2 T H`` Laplace
    terms per counter (a node's comparisons do not branch on its own earlier ones against an oblivious
    adversary); the selections are Gumbel-top-``m_set`` (each coordinate enters ``m_set`` rank comparisons,
    one Gumbel term per draw).

    ``noise``: the counters' continual-counting mechanism (``None``/``"tree"``: the tree, as above; a name or a
    ``jaxdp.mechanisms.matrix_factorization.ContinualCounter``): Laplace draws of scale ``sens_1(C)/eps_tree``
    keep each counter ``eps_tree``-DP, so the ledger and ``eps`` are the tree's; ``tau`` takes the
    mechanism's largest noise standard deviation ``sqrt(2 max_t ||B_t||^2) sens_1(C)/eps_tree`` in place of
    the tree's ``H^1.5/eps_tree``. A release depends on up to ``T`` draws, so each decision is charged
    ``T`` float terms per draw in the floor. Pass ``noise`` to ``binary_tree_experts`` too.

    Args:
        eps, delta, T, d, mode, beta: as in :func:`plan_sparse_vector_experts`.
        noise: the counters' continual-counting mechanism (``None``/``"tree"``: the tree).

    Returns:
        A :class:`jaxdp.accounting.Plan` with params ``eps_tree``, ``eta_sel``, ``tau``, ``m_set``, ``P_max`` and
        ``T_max``.

    Raises:
        ValueError: invalid privacy parameters, horizon, ``d``, mode or noise.
    """
    eps, delta, T, d, mode = _common_checks(eps, delta, T, d, mode)
    check_beta(beta)
    mech = resolve_noise(noise, T)
    if mech is not None:
        return _plan_binary_tree_mf(mech, eps=eps, delta=delta, T=T, d=d, mode=mode, beta=beta)
    m_set, P_max, eps_tree, eta_sel = _binary_tree_sizes(eps, T, d)
    H = int(T).bit_length()
    tau = H ** 1.5 / eps_tree * (1.0 if mode == "rate" else math.log(2 * m_set * T / beta))
    # float floor: a counter's noisy prefix sums are only compared (with tau, and with the other counters for
    # the argmin): each round, each of its <= H live nodes enters 2 decisions; selections are Gumbel-top-m_set
    counters = LG.laplace(1.0 / eps_tree, count=m_set, label=f"binary-tree counters of the current set (Laplace node "
                                                              f"noise H/eps_tree, H={H})",
                          release="threshold", draws=2 * T * H)
    return _binary_tree_plan(counters, eps=eps, delta=delta, T=T, d=d, mode=mode, m_set=m_set, P_max=P_max,
                             eps_tree=eps_tree, eta_sel=eta_sel, tau=tau,
                             reference=f"{REF} Alg. 4 (sketch; our concretization, docs/algorithms/realizable.md)",
                             notes=[f"m_set, P_max, T_max are static: binary_tree_experts(d, **binary_tree_static(plan)); H={H}",
                                    "pure DP; delta is not used"])


def _binary_tree_sizes(eps, T, d):
    """``(m_set, P_max, eps_tree, eta_sel)``: the set size, the most sets, the counters' and the selections' ε."""
    m_set = min(d, int(math.ceil(2 * math.log(d * T))))
    P_max = log2_ceil(d) + 8
    return m_set, P_max, eps / (2 * m_set), eps / (2 * m_set * P_max)


def _binary_tree_plan(counters, *, eps, delta, T, d, mode, m_set, P_max, eps_tree, eta_sel, tau, reference, notes) -> Plan:
    """The binary-tree plan: the ledger (the ``counters`` event, then the selections) and its parameters."""
    ledger = LG.sequential(
        counters,
        LG.exponential(eta_sel, count=P_max * m_set, label="exponential-mechanism selections of later sets",
                       outcomes=d, sampler="gumbel"))
    return make_plan(algorithm="binary_tree_experts", mode=mode,
                     params=dict(eps_tree=eps_tree, eta_sel=eta_sel, tau=float(tau), m_set=m_set, P_max=P_max, T_max=T),
                     eps=eps, delta=delta, ledger=ledger, delta_budget=0.0,
                     conditions={"m_set <= d": m_set <= d}, reference=reference, notes=notes)


def _plan_binary_tree_mf(mech, *, eps, delta, T, d, mode, beta) -> Plan:
    m_set, P_max, eps_tree, eta_sel = _binary_tree_sizes(eps, T, d)
    sens1 = mech.sensitivity(T, "l1")
    std = math.sqrt(2.0 * mech.max_row_norm_sq(T)) * sens1 / eps_tree
    tau = std * (1.0 if mode == "rate" else math.log(2 * m_set * T / beta))
    k = mech.draw_count(mech.init(T, ()), "laplace")
    counters = LG.laplace(1.0 / eps_tree, count=m_set, label=f"{mech.describe()} counters of the current set (Laplace "
                                                              f"draws sens_1(C)/eps_tree, sens_1(C)={sens1:.6g})",
                          release="threshold", draws=2 * T * T * k)
    return _binary_tree_plan(counters, eps=eps, delta=delta, T=T, d=d, mode=mode, m_set=m_set, P_max=P_max,
                             eps_tree=eps_tree, eta_sel=eta_sel, tau=tau,
                             reference=f"{REF} Alg. 4 (sketch; our concretization, docs/algorithms/realizable.md); "
                                       "Denisov et al. 2022 (matrix-factorization counters)",
                             notes=[f"m_set, P_max, T_max are static: binary_tree_experts(d, **binary_tree_static(plan), "
                                    f"noise=...) with the same mechanism ({mech.describe()})", "pure DP; delta is not used"])


def binary_tree_static(plan: Plan) -> dict:
    """The static constructor arguments ``m_set, P_max, T_max`` of a binary-tree plan
    (the registered learner's :meth:`~jaxdp.registry.LearnerEntry.static_from_plan`).

    Args:
        plan: a plan of the matching planner.

    Returns:
        ``{"m_set": ..., "P_max": ..., "T_max": ...}``.
    """
    return get_learner("binary_tree").static_from_plan(plan)


def params_from_plan(plan: Plan):
    """The learner's ``Params`` NamedTuple (validated) for a realizable-experts plan: ``plan.to_params()``
    (the registered learner's :meth:`~jaxdp.registry.LearnerEntry.params_from_plan`).

    Args:
        plan: a plan of the matching planner.

    Returns:
        The learner's ``Params``.
    """
    try:
        entry = learner_for_plan(plan)
    except ValueError:
        entry = None
    if entry is None or entry.problem != "realizable-experts":
        raise ValueError(f"not a realizable-experts plan: {plan.algorithm!r}")
    return entry.params_from_plan(plan)


# --------------------------------------------------------------------------- theory curves (constants 1)


def thm1_bound(d, T, eps, beta=0.1, delta=0.0, Lstar=0.0):
    """REAL Thm 1 with constants 1: ``L* log(d/β) + (log²d + log(T/β) log(d/β))/ε`` (pure) or
    ``... + (log^{1.5}d sqrt(log(1/δ)) + log(T/β) log(d/β))/ε`` (approximate).

    Args:
        d: the number of experts.
        T: the horizon.
        eps: the privacy parameter ε.
        beta: the failure probability β.
        delta: the privacy parameter δ (0: pure DP).
        Lstar: the best expert's loss L*.

    Returns:
        The bound.
    """
    d, T, eps = np.asarray(d, float), np.asarray(T, float), np.asarray(eps, float)
    ld = np.log(d)
    head = ld ** 2 if delta == 0 else ld ** 1.5 * math.sqrt(math.log(1 / delta))
    return Lstar * np.log(d / beta) + (head + np.log(T / beta) * np.log(d / beta)) / eps


def thm2_bound(d, T, eps, beta=0.1, Lstar=0.0):
    """REAL Thm 2 with constants 1.

    Args:
        d, T, eps, beta, Lstar: as in :func:`thm1_bound`.

    Returns:
        The bound.
    """
    d, T, eps = np.asarray(d, float), np.asarray(T, float), np.asarray(eps, float)
    lT = np.log(T)
    return (Lstar * np.log(T * d / beta) * lT
            + (np.log(d) ** 2 * lT + np.log(T / beta) * np.log(T * d / beta) * lT) / eps)


def thm6_bound(d, T, eps, delta=0.0):
    """REAL Thms 6/7 with constants 1 (γ = 1/d): ``log²d log T/ε`` or ``log^{1.5}d log T sqrt(log 1/δ)/ε``.

    Args:
        d, T, eps, delta: as in :func:`thm1_bound`.

    Returns:
        The bound.
    """
    d, T, eps = np.asarray(d, float), np.asarray(T, float), np.asarray(eps, float)
    if delta == 0:
        return np.log(d) ** 2 * np.log(T) / eps
    return np.log(d) ** 1.5 * np.log(T) * math.sqrt(math.log(1 / delta)) / eps


def lower_bound_thm5(d, eps):
    """REAL Thm 5: every (ε, δ)-DP algorithm has regret >= ``log(d)/(32 ε)`` on ``adv_realizable_lb``.

    Args:
        d: the number of experts.
        eps: the privacy parameter ε.

    Returns:
        ``log(d)/(32 ε)``.
    """
    return np.log(np.asarray(d, float)) / (32.0 * np.asarray(eps, float))
