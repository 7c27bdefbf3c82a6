"""Potential-based experts (REAL Algorithm 5, App. C, Theorems 6–7; docs/algorithms/realizable.md#potential-experts).

With ``μ`` uniform on ``[d]`` and the potential

    log φ_η(t) = logsumexp(-η cum_t) - log d,        cum_t = sum_{i<=t} l_i,

the learner keeps its expert while the drop of the potential since the last resample,
``Δ_t = log φ(t*(k)) - log φ(t-1)``, stays below the threshold ``2α`` (tested by AboveThreshold),
and on ⊤ resamples ``x ∝ exp(-η cum) μ(x)`` (the MW measure), ``k += 1``, ``t*(k) = t - 1``.
After K resamples the expert is kept forever.

CORRECTED units (Realizable private online optimization, Alg. 5, Thms 6-7; docs/algorithms/realizable.md#potential-corrections): the query is ``q_t = Δ_t / (s_φ η)`` with threshold ``2α/(s_φ η)``
and AboveThreshold noises ``Lap(2/eps0)``, ``Lap(4/eps0)``; ``Δ_t`` has sensitivity ``s_φ η`` with
``s_φ = 2`` in general (both potentials move when the changed loss precedes ``t*(k)``); the paper
implicitly uses ``s_φ = 1``. Test-then-play: the query before round t uses ``φ(t-1)``.

Privacy: per phase, the sparse vector is ``eps0 · (2/s_φ)``-DP and the resample ``2η``-DP
(replace-one; the normaliser moves too), over at most K phases (basic or advanced composition).

Keys per step: ``k_nu, k_x, k_tau``.
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from ..privacy.accounting import ledger as LG
from ..privacy.accounting.accountant import certify
from ..privacy.accounting.calibrate import calibrate
from ..privacy.accounting.plan import Plan, make_plan
from ..core.random import sample_categorical
from ..core.types import Learner, fdt, tree_where
from ..core.validation import check_d, check_eps_finite, check_positive, check_positive_int
from ..privacy.mechanisms import SVTState, svt_init, svt_query, svt_restart
from ..registry import (
    CompareBuiltin,
    ConformanceCase,
    register_learner,
    register_planner,
)
from ._common import REF, planner_checks

__all__ = ['PotentialParams', 'PotentialState', 'potential_experts', 'potential_params', 'GuardedPotentialState', 'guarded_potential_experts', 'guarded_k_factor', 'plan_guarded_potential_experts', 'plan_potential_experts', 'potential_ledger', 'potential_settings', 'thm6_bound']


class PotentialParams(NamedTuple):
    """Parameters of :func:`potential_experts` (REAL Algorithm 5).

    Attributes:
        eps0: the per-resample privacy ε₀.
        eta: η of the exponential mechanism.
        K: the most switches (exponential-mechanism draws).
        alpha: the potential's exponent α.
        s_phi: the sensitivity factor of the potential.
    """
    eps0: jax.Array     # ε of every AboveThreshold instance
    eta: jax.Array      # MW / potential temperature
    K: jax.Array        # int32 maximum number of resamples
    alpha: jax.Array    # threshold 2α on the drop of log φ
    s_phi: jax.Array    # assumed sensitivity of Δ_t in units of η (1 paper, 2 certified)


class PotentialState(NamedTuple):
    """State of :func:`potential_experts`.

    Attributes:
        x: the current action (the expert played).
        k: the number of switches so far.
        cum: the cumulative loss vector.
        logphi_star: the log-potential at the last resample.
        svt: the active AboveThreshold instance (:class:`jaxdp.privacy.mechanisms.SVTState`).
    """
    x: jax.Array             # int32 current expert
    k: jax.Array             # int32 resamples so far
    cum: jax.Array           # (d,) cumulative losses
    logphi_star: jax.Array   # log φ(t*(k))
    svt: SVTState


def potential_params(eps0, eta, K, alpha=1.0, s_phi=2.0) -> PotentialParams:
    """Validated parameters for :func:`potential_experts` (host values).

    Args:
        eps0, eta, K, alpha, s_phi: the fields of :class:`PotentialParams`.

    Returns:
        :class:`PotentialParams`.

    Raises:
        ValueError: invalid values.
    """
    for name, v in (("eps0", eps0), ("eta", eta), ("alpha", alpha), ("s_phi", s_phi)):
        check_positive(name, v)
    check_positive_int("K", K, minimum=0)
    f = jnp.float32
    return PotentialParams(eps0=f(eps0), eta=f(eta), K=jnp.int32(K), alpha=f(alpha), s_phi=f(s_phi))


def _threshold(params: PotentialParams) -> jax.Array:
    """The AboveThreshold threshold ``2α/(s_φ η)`` of every phase."""
    return 2.0 * params.alpha / (params.s_phi * params.eta)


def potential_experts(d: int) -> Learner:
    """REAL Algorithm 5 over ``d`` experts with uniform μ. Params: :class:`PotentialParams`.

    Info: ``switched``, ``em_draws`` (resamples, <= K), ``svt_halts``, ``svt_restarts``.

    Args:
        d: the number of experts.

    Returns:
        The :class:`jaxdp.Learner`.
    """
    return _potential(check_d(d), False)


# --------------------------------------------------------------------------- guarded variant (correction)


class GuardedPotentialState(NamedTuple):
    """State of :func:`guarded_potential_experts`.

    Attributes:
        x: the current expert (int32).
        k: the number of resamples so far (int32).
        cum: the ``(d,)`` cumulative losses.
        logphi_star: the log-potential ``log φ(t*(k))`` at the last resample.
        acc: the loss of the current expert since the last resample (the guard's query).
        svt: the active AboveThreshold instance (:class:`jaxdp.privacy.mechanisms.SVTState`).
    """
    x: jax.Array             # int32 current expert
    k: jax.Array             # int32 resamples so far
    cum: jax.Array           # (d,) cumulative losses
    logphi_star: jax.Array   # log φ(t*(k))
    acc: jax.Array           # loss of the current expert since the last resample
    svt: SVTState


def guarded_potential_experts(d: int) -> Learner:
    """REAL Algorithm 5 with an own-loss guard: a corrected variant (docs/algorithms/realizable-findings.md).

    Lemma C.3 bounds the loss of the stale sample ``x ~ p_{t*}`` by that of a fresh sample
    ``x ~ p_{t-1}`` using ``exp(-η S_{t*}(x)) <= exp(-η S_{t-1}(x))``; the inequality goes the
    other way (``S`` is non-decreasing), and the ratio ``p_{t*}(x)/p_{t-1}(x)
    = exp(η (S_{t-1}(x) - S_{t*}(x))) φ(t-1)/φ(t*)`` is unbounded for the expert actually played.
    The guard bounds it: one AboveThreshold instance per phase answers the query

        q_t = max( Δ_t / (s_φ η),  acc_t ),   Δ_t = log φ(t*) - log φ(t-1),  acc_t = S_{t-1}(x) - S_{t*}(x),

    against the threshold ``2α/(s_φ η)``. Both arguments have sensitivity 1, so their maximum
    does too, and privacy is exactly that of :func:`potential_experts` with the same
    ``(eps0, η, K, s_φ)``. While no ⊤ has occurred, ``η acc_t <= 3α/s_φ`` (with the SVT accuracy of
    Lemma C.2), hence ``p_{t*}(x_t) <= e^{3α/s_φ} p_{t-1}(x_t)`` and Lemma C.3's chain goes through
    with ``e^{3α}`` replaced by ``e^{3α/s_φ}``. Phases that end through the guard cost at least
    ``α/(s_φ η)`` loss each, so there are at most ``s_φ η · (total loss)/α`` of them: ``K`` must grow
    by that number (:func:`plan_guarded_potential_experts`). Params: :class:`PotentialParams`.

    **Privacy is proved; the utility bound is measured, not proved.** The sketch above has two gaps
    (docs/algorithms/realizable-findings.md#potential): with the guard, when a phase ends depends on the
    expert drawn, so within a phase the played expert is no longer distributed as ``p_{t*}``; and ``K`` is
    sized from the *expected* number of guard phases (a Markov-type bound), which does not show that the
    resample budget runs out with probability ``O(1/T)``. In simulation the regret plateaus (slope in ``T``
    0.13 on the halving adversary).

    Args:
        d: the number of experts.

    Returns:
        The :class:`~jaxdp.core.Learner`.
    """
    return _potential(check_d(d), True)


@functools.lru_cache(maxsize=None)
def _potential(d: int, guard: bool) -> Learner:
    """REAL Alg. 5 (``guard``: with the own-loss guard of :func:`guarded_potential_experts`)."""
    log_d = math.log(d)

    def init(key, params):
        k_x, k_tau = jax.random.split(key)
        x = jax.random.randint(k_x, (), 0, d, dtype=jnp.int32)
        svt = svt_init(k_tau, _threshold(params), params.eps0)
        svt = SVTState(tau_hat=svt.tau_hat, halted=svt.halted | (params.K <= 0))   # halted at once if K = 0
        z = jnp.zeros((), fdt())
        if guard:
            return GuardedPotentialState(x=x, k=jnp.int32(0), cum=jnp.zeros((d,), fdt()), logphi_star=z, acc=z,
                                         svt=svt)
        return PotentialState(x=x, k=jnp.int32(0), cum=jnp.zeros((d,), fdt()), logphi_star=z, svt=svt)

    def step(key, state, loss, params):
        k_nu, k_x, k_tau = jax.random.split(key, 3)
        cum = state.cum + loss
        logits = -params.eta * cum
        logphi = jax.nn.logsumexp(logits) - log_d
        q = (state.logphi_star - logphi) / (params.s_phi * params.eta)
        if guard:
            acc = state.acc + loss[state.x]
            q = jnp.maximum(q, acc)
        svt, top = svt_query(k_nu, state.svt, q, params.eps0)
        top = top & (state.k < params.K)
        x = jnp.where(top, sample_categorical(k_x, logits), state.x)
        k = state.k + top.astype(jnp.int32)
        restart = top & (k < params.K)
        svt = tree_where(restart, svt_restart(k_tau, svt, _threshold(params), params.eps0), svt)
        info = {"switched": x != state.x, "em_draws": top, "svt_halts": top, "svt_restarts": restart}
        new = state._replace(x=x, k=k, cum=cum, logphi_star=jnp.where(top, logphi, state.logphi_star), svt=svt)
        return (new._replace(acc=jnp.where(top, 0.0, acc)) if guard else new), info

    return Learner(init=init, step=step)


def guarded_k_factor(alpha: float = 1.0, s_phi: float = 2.0) -> float:
    """``c_K`` in ``K = ceil(c_K ln(1/γ))`` for the guarded variant (realizable, ``γ = 1/d``).

    ``1/α`` potential phases per unit of ``ln(1/γ)`` plus the guard phases, ``2 e^{3α/s_φ} s_φ/α`` per unit
    (expected). A heuristic sizing: an expected count does not bound the probability that the budget runs out.

    Args:
        alpha: the potential's exponent ``α`` (threshold ``2α`` on the drop of ``log φ``).
        s_phi: the sensitivity factor ``s_φ`` of the potential.

    Returns:
        ``1/α + 2 e^{3α/s_φ} s_φ/α``.
    """
    return 1.0 / alpha + 2.0 * math.exp(3.0 * alpha / s_phi) * s_phi / alpha


def plan_guarded_potential_experts(*, eps: float, T: int, d: int, mode: str = "rate", K_factor: float | None = None):
    """A plan for :func:`guarded_potential_experts` (pure DP).

    Same accounting as ``plan_potential_experts`` (``s_φ = 2``; per phase an AboveThreshold instance,
    ``2 eps0/s_φ``-DP, and one ``2η``-DP sample; ``K`` phases; eps0 the largest the accountant
    certifies), with ``K = ceil(K_factor ln d)`` (default :func:`guarded_k_factor`) and
    ``η = eps0 / (c log T)``, ``c = 8`` (``rate``) or ``112`` (``certified``).

    The privacy certificate is proved; the utility claim is measured, not proved (the plan's utility
    conditions say so; :func:`guarded_potential_experts`).

    Args:
        eps: the privacy parameter ε.
        T: the horizon (``>= 2``).
        d: the number of experts.
        mode: ``"rate"`` or ``"certified"``.
        K_factor: ``c_K`` in ``K = ceil(c_K ln d)`` (``None``: :func:`guarded_k_factor` at ``α = 1``, ``s_φ = 2``).

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan` whose params are those of :class:`PotentialParams`.

    Raises:
        ValueError: an invalid ``eps``, ``T``, ``d``, ``mode`` or ``K_factor``.
    """
    from ..privacy.accounting.plan import make_plan

    check_eps_finite(eps)
    T = check_positive_int("T", T, minimum=2)
    d = check_d(d)
    if mode not in ("rate", "certified"):
        raise ValueError(f"mode must be one of ['rate', 'certified'], got {mode!r}")
    kf = guarded_k_factor() if K_factor is None else float(K_factor)
    check_positive("K_factor", kf)
    K = max(1, int(math.ceil(kf * math.log(d) - 1e-9)))
    eps0, eta, s_phi = potential_settings(float(eps), 0.0, T, K, mode, outcomes=d)
    return make_plan(algorithm="guarded_potential_experts", mode=mode,
                     params=dict(eps0=float(eps0), eta=float(eta), K=K, alpha=1.0, s_phi=s_phi),
                     eps=float(eps), delta=0.0, ledger=potential_ledger(eps0, eta, s_phi, K, d, T=T),
                     utility_conditions={"eta < 1/2 (Lemma C.3)": eta < 0.5,
                                         "utility bound proved (no: measured only; see the docs' findings page)":
                                             False},
                     reference="Realizable private online optimization, Alg. 5 + own-loss guard; "
                               "docs/algorithms/realizable-findings.md#potential",
                     notes=[f"K = {K} = ceil({kf:.3g} ln d), eps0 = {eps0:.4g}, eta = {eta:.4g}"])


# --------------------------------------------------------------------------- registry


def _from_plan(plan) -> PotentialParams:
    return potential_params(**plan.params)


def _compare(d, T, T_max, eps, delta, problem):
    plan = _POTENTIAL.certified_plan(eps=eps, delta=delta if eps < 1 else 0.0, T=T, d=d)
    return potential_experts(d), _POTENTIAL.params_from_plan(plan), float(plan.eps_certified)


_POTENTIAL = register_learner(
    "potential", factory=potential_experts, params_type=PotentialParams, problem="realizable-experts",
    private=True, planner="potential_experts", from_plan=_from_plan,
    conformance=ConformanceCase("jaxdp.experts.conformance:potential_case"),
    description="potential-based experts: resample x from the MW measure when AboveThreshold reports a drop "
                "of log φ by 2α since the last resample; at most K resamples",
    reference="Realizable private online optimization, Alg. 5, Thms 6-7",
    compare=CompareBuiltin(_compare, "planner potential_experts, mode certified (Realizable private online "
                                     "optimization, Thms 6-7)"))

register_learner(
    "guarded_potential", factory=guarded_potential_experts, params_type=PotentialParams,
    problem="realizable-experts", private=True, plans=("guarded_potential_experts",), from_plan=_from_plan,
    conformance=ConformanceCase("jaxdp.experts.conformance:guarded_potential_case"),
    description="Alg. 5 with an own-loss guard: also resample when the played expert's own loss crosses a "
                "private threshold (plan_guarded_potential_experts; utility measured, not proved)",
    reference="Realizable private online optimization, Alg. 5 + own-loss guard; "
              "docs/algorithms/realizable-findings.md#potential")


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
        The :class:`jaxdp.privacy.accounting.Ledger` (``sequential`` over ``K`` phases).
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
        A :class:`jaxdp.privacy.accounting.Plan` with params ``eps0``, ``eta``, ``K``, ``alpha`` and ``s_phi``.

    Raises:
        ValueError: invalid privacy parameters, horizon, ``d`` or mode.
    """
    eps, delta, T, d, mode = planner_checks(eps, delta, T, d, mode)
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
