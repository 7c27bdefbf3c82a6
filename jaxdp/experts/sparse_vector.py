"""Sparse-vector experts for the realizable regime (REAL Algorithms 1–2, Theorems 1–2; docs/algorithms/realizable.md#sparse-vector-experts, #adaptive-sparse-vector).

``sparse_vector_experts`` (REAL Alg. 1, Realizable private online optimization (docs/algorithms/realizable.md)): keep the
current expert ``x`` while an AboveThreshold instance says its loss since the last switch,

    q_t = sum_{i = t_p}^{t-1} l_i(x),

is below the threshold ``L``; at the first ⊤ draw a new expert from the exponential mechanism

    P(x) ∝ exp(-η s(x) / 2),      s(x) = max(sum_{i<t} l_i(x), L*),

restart the sparse vector (fresh threshold noise) and reset ``t_p``. At most ``K`` switches; after
the K-th the expert is kept forever and no instance is active.

Privacy (REAL Thm 1 proof): a loss ``l_j`` enters only the queries of the instance active at time
j, so all instances together are ``eps_svt``-DP (``eps_svt = ε/2``); each exponential-mechanism
draw is η-DP (sensitivity 1); at most K draws. Total ``eps_svt + Kη`` (pure) or, by advanced
composition, ``eps_svt + sqrt(2K ln(1/δ)) η + Kη(e^η - 1)`` with δ. The privacy depends only on
``(eps_svt, η, K)``; the threshold ``L`` and ``L*`` affect only utility.

``adaptive_sparse_vector_experts`` (REAL Alg. 2, Thm 2): the doubling trick on an estimate
``Lbar`` of ``L*``: after every exponential-mechanism draw, a Laplace check
``sum_{i<t} l_i(x_t) + Lap(K/eps0) > Lbar - margin`` doubles ``Lbar`` and restarts Alg. 1
(keeping ``cum`` and the selected expert; ``k = 0``, ``acc = 0``, fresh threshold noise at the new
``L = Lbar + L_offset``). Doublings are capped at ``max_doublings`` so that the number of phases
assumed by the privacy proof is enforced.

Step form (Realizable private online optimization, Alg. 1, Thm 1; docs/algorithms/realizable.md#sparse-vector-experts, INTERPRETATION "test-then-play"): ``step`` absorbs ``l_t``, then tests
``q_{t+1}`` (losses up to t) and, on ⊤, draws the expert for round t+1 from scores through t.
``paper_order=True`` reproduces the printed order: the query tested after round t is ``q_t``
(losses up to t-1), delaying every switch by one round (plus one extra zero-valued query right
after each switch; privacy is unchanged).

Keys per step: ``k_nu, k_em, k_tau`` (+ ``k_zeta`` for the adaptive version); every draw is made
every round and selected with ``jnp.where``.

Shared threshold (``sparse_vector_experts(d, threshold="shared")``; docs/algorithms/realizable.md#shared-threshold):
the threshold noise is drawn ONCE, ``τ̂ = L + Lap(1/ε₁)``, and reused by all ``≤ K`` instances, which
together form one sparse vector with ``c = K`` positives (Lyu, Su, Li, *Understanding the Sparse
Vector Technique for Differential Privacy*, Alg. 1, Thm 1). Its query noise must then grow with
``K``: ``Lap(2K/ε₂)`` with ``ε₁ + ε₂ = eps_svt`` (``ε₁/ε₂ = svt_ratio``; ``"optimal"`` is Lyu et al.'s
``(2K)^{-2/3}``), and the whole sparse vector is ``eps_svt``-DP, so the ledger (``eps_svt + Kη``) is
unchanged. It needs no disjoint-data argument, but the query noise is ``K`` times larger than with
fresh instances (``Lap(4/eps_svt)``), so the threshold ``L`` must be larger (``plan_sparse_vector_experts
(..., threshold="shared")``). Reusing the threshold noise with the fresh-instance scales is NOT
``eps_svt``-DP (the audit twin ``shared_threshold_unscaled_experts``). Same keys as the default: the
query noise and the exponential mechanism use ``k_nu`` and ``k_em``; ``k_tau`` is drawn and unused
(at ``K = 1``, ``svt_ratio = 1`` the two options are bit-identical).

Planners for the realizable-regime experts algorithms (Realizable private online optimization, Thms 1, 2, 6, 7).

Each returns a :class:`jaxdp.privacy.accounting.Plan` whose ``params`` are exactly the fields of the
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
import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..privacy.accounting import ledger as LG
from ..privacy.accounting.accountant import certify
from ..privacy.accounting.calibrate import calibrate
from ..privacy.accounting.floating import shared_threshold_terms
from ..privacy.accounting.plan import Plan, make_plan
from ..core.random import sample_categorical
from ..core.types import Learner, fdt, tree_where
from ..core.validation import check_beta, check_choice, check_d, check_finite_scalar, check_lstar, check_nonneg, check_positive, check_positive_int
from ..privacy.mechanisms import SVTState, svt_init, svt_query, svt_restart
from ..privacy.mechanisms.sparse_vector import CSVTState, Ratio, _check_ratio, _ratio_value, csvt_ledger_event, csvt_query
from ..registry import (
    CompareBuiltin,
    ConformanceCase,
    get_learner,
    register_learner,
    register_planner,
)
from ._common import REF, log2_ceil, planner_checks

__all__ = ['SVExpertsParams', 'SVExpertsState', 'sparse_vector_experts', 'sparse_vector_params', 'THRESHOLD_MODES', 'shared_threshold_scales', 'shared_threshold_unscaled_experts', 'AdaptiveSVParams', 'AdaptiveSVState', 'adaptive_sparse_vector_experts', 'adaptive_sparse_vector_params', 'plan_sparse_vector_experts', 'plan_adaptive_sparse_vector_experts', 'sparse_vector_static', 'sparse_vector_ledger', 'thm1_bound', 'thm2_bound', 'lower_bound_thm5']


class SVExpertsParams(NamedTuple):
    """Parameters of :func:`sparse_vector_experts` (REAL Algorithm 1).

    Attributes:
        eps_svt: ε of the sparse-vector part.
        eta: η of the exponential mechanism.
        K: the most switches (exponential-mechanism draws).
        L: the sparse-vector threshold.
        Lstar: the best expert's loss L*.
    """
    eps_svt: jax.Array   # ε of every AboveThreshold instance (ε/2 in REAL Thm 1)
    eta: jax.Array       # exponential-mechanism parameter: P(x) ∝ exp(-η s(x)/2), η-DP per draw
    K: jax.Array         # int32 switching budget (number of exponential-mechanism draws)
    L: jax.Array         # sparse-vector threshold (utility only)
    Lstar: jax.Array     # loss level L* in the scores max(cum, L*) (utility only)


class SVExpertsState(NamedTuple):
    """State of :func:`sparse_vector_experts`.

    Attributes:
        x: the current action (the expert played).
        k: the number of switches so far.
        acc: the loss of the current expert since the last switch.
        cum: the cumulative loss vector.
        svt: the active AboveThreshold instance (:class:`jaxdp.privacy.mechanisms.SVTState`).
    """
    x: jax.Array         # int32 current expert
    k: jax.Array         # int32 switches so far
    acc: jax.Array       # loss of x since the last switch, sum_{i=t_p}^{t} l_i(x)
    cum: jax.Array       # (d,) cumulative losses
    svt: SVTState        # the one active AboveThreshold instance (halted = none active);
    #                      with threshold="shared" a CSVTState (one threshold noise, c = K positives)


#: ``threshold`` options of :func:`sparse_vector_experts`
THRESHOLD_MODES = ("fresh", "shared")


def sparse_vector_params(eps_svt, eta, K, L, Lstar=0.0) -> SVExpertsParams:
    """Validated parameters for :func:`sparse_vector_experts` (host values; use a Plan's ``params``).

    Args:
        eps_svt, eta, K, L, Lstar: the fields of :class:`SVExpertsParams`.

    Returns:
        :class:`SVExpertsParams`.

    Raises:
        ValueError: invalid values.
    """
    check_positive("eps_svt", eps_svt)
    check_positive("eta", eta)
    check_positive_int("K", K, minimum=0)
    check_nonneg("L", L)
    check_lstar(Lstar)
    return SVExpertsParams(eps_svt=jnp.float32(eps_svt), eta=jnp.float32(eta), K=jnp.int32(K),
                           L=jnp.float32(L), Lstar=jnp.float32(Lstar))


def _em_logits(cum, eta, Lstar):
    return -eta * jnp.maximum(cum, Lstar) / 2.0


def _query_and_draw(k_nu, k_em, state, loss, params, Lstar, paper_order, shared=False):
    """``(acc_new, cum, svt, top, x_new, x)`` of one round of REAL Alg. 1/2: the own-loss query (``shared``: ⊤ only
    while fewer than K positives) and an exponential-mechanism draw, kept on ⊤ while ``k < K``."""
    acc_new = state.acc + loss[state.x]
    cum = state.cum + loss
    q = state.acc if paper_order else acc_new
    if shared:
        svt, top = csvt_query(k_nu, state.svt, q)
    else:
        svt, top = svt_query(k_nu, state.svt, q, params.eps_svt)
        top = top & (state.k < params.K)
    x_new = sample_categorical(k_em, _em_logits(cum, params.eta, Lstar))
    x = jnp.where(top, x_new, state.x)
    return acc_new, cum, svt, top, x_new, x


def sparse_vector_experts(d: int, paper_order: bool = False, threshold: str = "fresh",
                          svt_ratio: Ratio = 1.0) -> Learner:
    """REAL Algorithm 1 over ``d`` experts. Params: :class:`SVExpertsParams` (see ``plan_sparse_vector_experts``).

    ``threshold="fresh"`` (default, REAL Alg. 1): a fresh AboveThreshold instance (threshold noise
    ``Lap(2/eps_svt)``, query noise ``Lap(4/eps_svt)``) after every switch. ``threshold="shared"``: one
    threshold noise ``Lap(1/ε₁)`` for the whole run and query noise ``Lap(2K/ε₂)``, ``ε₁ + ε₂ = eps_svt``,
    ``ε₁/ε₂ = svt_ratio`` (Lyu et al. Alg. 1 with ``c = K``; module docstring). Both are
    ``eps_svt``-DP in their sparse-vector part. Cached: the same arguments give the same object.

    Info (summed by ``simulate``): ``switched``, ``em_draws`` (<= K), ``svt_halts`` (one per ⊤,
    equal to ``em_draws``), ``svt_restarts`` (fresh instances after init; ``1 + svt_restarts``
    instances in all, one active at a time; always 0 with ``threshold="shared"``).

    Args:
        d: the number of experts.
        paper_order: follow the paper's order of operations within a round.
        threshold: ``"fresh"`` or ``"shared"``.
        svt_ratio: ε₁/ε₂ of the shared threshold, or ``"optimal"``.

    Returns:
        The :class:`jaxdp.Learner`.
    """
    d = check_d(d)
    paper_order = bool(paper_order)
    threshold = check_choice("threshold", threshold, THRESHOLD_MODES)
    if threshold == "fresh":
        return _sv_experts(d, paper_order, False, 1.0, True)
    return _sv_experts(d, paper_order, True, _check_svt_ratio(svt_ratio), True)


def _check_svt_ratio(svt_ratio):
    """``svt_ratio``: ``"optimal"`` or a number > 0 (numeric strings from the command line accepted)."""
    try:
        if isinstance(svt_ratio, str) and svt_ratio != "optimal":
            svt_ratio = float(svt_ratio)
        _check_ratio(svt_ratio)
    except ValueError:
        raise ValueError(f"svt_ratio must be a number eps1/eps2 > 0 or 'optimal', got {svt_ratio!r}") from None
    return svt_ratio if isinstance(svt_ratio, str) else float(svt_ratio)


def shared_threshold_scales(eps_svt, K, svt_ratio: Ratio = 1.0, *, scale_with_K: bool = True) -> tuple:
    """``(b_thr, b_q)`` of the shared-threshold sparse vector with ``c = K`` positives and sensitivity 1.

    ``ε₁ = eps_svt r/(1 + r)``, ``ε₂ = eps_svt/(1 + r)`` (``r = svt_ratio``, ``"optimal"``: ``(2K)^{-2/3}``),
    ``b_thr = 1/ε₁``, ``b_q = 2K/ε₂`` (Lyu et al. Alg. 1). ``scale_with_K=False`` keeps ``b_q = 2/ε₂`` — the
    BROKEN twin's scales (with ``r = 1``: AboveThreshold's ``Lap(2/eps_svt)``, ``Lap(4/eps_svt)``).

    Args:
        eps_svt: the ε of the sparse-vector part (host float or traced array).
        K: the number of positives ``c`` (host number or traced array; ``K < 1`` is treated as 1: no instance
            is active then).
        svt_ratio: ``ε₁/ε₂``, or ``"optimal"``.
        scale_with_K: scale the query noise with ``K`` (``False``: the broken twin).

    Returns:
        ``(b_thr, b_q)``, the Laplace scales of the threshold and of each query.
    """
    c: Any
    if isinstance(K, (int, float, np.integer, np.floating)):
        c = float(max(K, 1))
    else:
        c = jnp.maximum(jnp.asarray(K), 1).astype(fdt())
    r = _ratio_value(svt_ratio, c, False)    # the mechanism's own split rule (Lyu et al. §4.2)
    eps1 = eps_svt * r / (1.0 + r)
    eps2 = eps_svt / (1.0 + r)
    return 1.0 / eps1, 2.0 * (c if scale_with_K else 1.0) / eps2


@functools.lru_cache(maxsize=None)
def _sv_experts(d: int, paper_order: bool, shared: bool, svt_ratio: Ratio, scale_with_K: bool) -> Learner:
    """REAL Alg. 1; ``shared``: one threshold noise shared by the ``≤ K`` instances (``scale_with_K=False``: broken twin)."""

    def init(key, params):
        k_x, k_tau = jax.random.split(key)
        x = jax.random.randint(k_x, (), 0, d, dtype=jnp.int32)
        if shared:
            b_thr, b_q = shared_threshold_scales(params.eps_svt, params.K, svt_ratio, scale_with_K=scale_with_K)
            # the state is built here (not by csvt_init_from_scales, which insists on c >= 1): K = 0 is allowed
            tau_hat = jnp.asarray(params.L, fdt()) + jnp.asarray(b_thr, fdt()) * jax.random.laplace(k_tau, (), fdt())
            svt = CSVTState(tau_hat=tau_hat, query_scale=jnp.asarray(b_q, fdt()), count=jnp.int32(0),
                            c=jnp.asarray(params.K, jnp.int32))
        else:
            svt = svt_init(k_tau, params.L, params.eps_svt)
            svt = SVTState(tau_hat=svt.tau_hat, halted=svt.halted | (params.K <= 0))
        return SVExpertsState(x=x, k=jnp.int32(0), acc=jnp.zeros((), fdt()), cum=jnp.zeros((d,), fdt()), svt=svt)

    def step(key, state, loss, params):
        k_nu, k_em, k_tau = jax.random.split(key, 3)     # shared: k_tau is not needed
        acc_new, cum, svt, top, x_new, x = _query_and_draw(k_nu, k_em, state, loss, params, params.Lstar, paper_order,
                                                           shared)
        k = state.k + top.astype(jnp.int32)
        if shared:
            restart = jnp.zeros_like(top)
        else:
            restart = top & (k < params.K)
            svt = tree_where(restart, svt_restart(k_tau, svt, params.L, params.eps_svt), svt)
        info = {"switched": x != state.x, "em_draws": top, "svt_halts": top, "svt_restarts": restart}
        return SVExpertsState(x=x, k=k, acc=jnp.where(top, 0.0, acc_new), cum=cum, svt=svt), info

    return Learner(init=init, step=step)


def shared_threshold_unscaled_experts(d: int, paper_order: bool = False) -> Learner:
    """BROKEN twin of :func:`sparse_vector_experts` for the audits: a shared threshold with unscaled query noise.

    The threshold noise ``Lap(2/eps_svt)`` is shared by the ``≤ K`` instances, but the query noise stays the
    fresh instances' ``Lap(4/eps_svt)`` (not scaled with ``K``). Its sparse-vector part is not ``eps_svt``-DP
    for ``K >= 2`` (docs/algorithms/realizable.md#shared-threshold). Params: :class:`SVExpertsParams`.

    Args:
        d: the number of experts.
        paper_order: follow the paper's order of operations within a round.

    Returns:
        The :class:`~jaxdp.core.Learner`.
    """
    return _sv_experts(check_d(d), bool(paper_order), True, 1.0, False)


# --------------------------------------------------------------------------- adaptive (Alg. 2)


class AdaptiveSVParams(NamedTuple):
    """Parameters of :func:`adaptive_sparse_vector_experts` (REAL Algorithm 2).

    Attributes:
        eps_svt: ε of the sparse-vector part.
        eta: η of the exponential mechanism.
        K: the most switches (exponential-mechanism draws).
        L_offset: the threshold's offset above the current estimate of L*.
        Lbar0: the initial estimate of L*.
        zeta_scale: the Laplace scale of the doubling checks.
        margin: the doubling test's margin.
        max_doublings: the cap on doublings.
    """
    eps_svt: jax.Array       # ε of each AboveThreshold instance (eps0/2)
    eta: jax.Array           # exponential-mechanism parameter (eps0/(2K))
    K: jax.Array             # int32 switching budget per phase
    L_offset: jax.Array      # L = Lbar + L_offset  (4/η + 8B/eps0 in REAL Alg. 2)
    Lbar0: jax.Array         # initial estimate of L* (1 in REAL Alg. 2)
    zeta_scale: jax.Array    # Laplace scale of the doubling check (K/eps0)
    margin: jax.Array        # doubling test: noisy loss > Lbar - margin  (5K log(1/β0)/eps0)
    max_doublings: jax.Array  # int32 cap on doublings (the privacy proof's number of phases - 1)


class AdaptiveSVState(NamedTuple):
    """State of :func:`adaptive_sparse_vector_experts`.

    Attributes:
        x, k, acc, cum, svt: as in :class:`SVExpertsState` (``k`` counts the switches of the current phase).
        Lbar: the current estimate of L*.
        n_doublings: the number of doublings so far.
    """
    x: jax.Array
    k: jax.Array             # switches in the current phase
    acc: jax.Array
    cum: jax.Array
    svt: SVTState
    Lbar: jax.Array          # current estimate of L*
    n_doublings: jax.Array   # int32


def adaptive_sparse_vector_params(eps_svt, eta, K, L_offset, Lbar0, zeta_scale, margin, max_doublings) -> AdaptiveSVParams:
    """Validated parameters for :func:`adaptive_sparse_vector_experts` (host values).

    Args:
        eps_svt: ε of the sparse-vector part.
        eta: η of the exponential mechanism.
        K: the most switches (exponential-mechanism draws).
        L_offset: the threshold's offset.
        Lbar0: the initial estimate of L*.
        zeta_scale: the Laplace scale of the doubling checks.
        margin: the doubling test's margin.
        max_doublings: the cap on doublings.

    Returns:
        :class:`AdaptiveSVParams`.

    Raises:
        ValueError: invalid values.
    """
    for name, v in (("eps_svt", eps_svt), ("eta", eta), ("Lbar0", Lbar0), ("zeta_scale", zeta_scale)):
        check_positive(name, v)
    check_positive_int("K", K)
    check_nonneg("L_offset", L_offset)
    check_finite_scalar("margin", margin)   # negative: the "flipped" doubling test
    check_positive_int("max_doublings", max_doublings, minimum=0)
    f = jnp.float32
    return AdaptiveSVParams(eps_svt=f(eps_svt), eta=f(eta), K=jnp.int32(K), L_offset=f(L_offset), Lbar0=f(Lbar0),
                            zeta_scale=f(zeta_scale), margin=f(margin), max_doublings=jnp.int32(max_doublings))


@functools.lru_cache(maxsize=None)
def adaptive_sparse_vector_experts(d: int, paper_order: bool = False) -> Learner:
    """REAL Algorithm 2 (unknown L*) over ``d`` experts. Params: :class:`AdaptiveSVParams`.

    Info: ``switched``, ``em_draws``, ``svt_halts``, ``svt_restarts``, ``laplace_checks`` (one
    per exponential-mechanism draw, <= K per phase), ``doublings`` (<= ``max_doublings``).

    Args:
        d: the number of experts.
        paper_order: follow the paper's order of operations within a round.

    Returns:
        The :class:`jaxdp.Learner`.
    """
    d = check_d(d)
    paper_order = bool(paper_order)

    def init(key, params):
        k_x, k_tau = jax.random.split(key)
        x = jax.random.randint(k_x, (), 0, d, dtype=jnp.int32)
        Lbar = jnp.asarray(params.Lbar0, fdt())
        svt = svt_init(k_tau, Lbar + params.L_offset, params.eps_svt)
        return AdaptiveSVState(x=x, k=jnp.int32(0), acc=jnp.zeros((), fdt()), cum=jnp.zeros((d,), fdt()),
                               svt=svt, Lbar=Lbar, n_doublings=jnp.int32(0))

    def step(key, state, loss, params):
        k_nu, k_em, k_tau, k_zeta = jax.random.split(key, 4)
        acc_new, cum, svt, top, x_new, x = _query_and_draw(k_nu, k_em, state, loss, params, state.Lbar, paper_order)
        # Laplace check of the selected expert's loss (REAL Alg. 2 line 7), drawn every round
        l_tilde = cum[x_new] + params.zeta_scale * jax.random.laplace(k_zeta, (), fdt())
        double = top & (l_tilde > state.Lbar - params.margin) & (state.n_doublings < params.max_doublings)
        Lbar = jnp.where(double, 2.0 * state.Lbar, state.Lbar)
        k = jnp.where(double, 0, state.k + top.astype(jnp.int32))
        restart = top & (k < params.K)
        svt = tree_where(restart, svt_restart(k_tau, svt, Lbar + params.L_offset, params.eps_svt), svt)
        info = {"switched": x != state.x, "em_draws": top, "svt_halts": top, "svt_restarts": restart,
                "laplace_checks": top, "doublings": double}
        new = AdaptiveSVState(x=x, k=k, acc=jnp.where(top, 0.0, acc_new), cum=cum, svt=svt, Lbar=Lbar,
                              n_doublings=state.n_doublings + double.astype(jnp.int32))
        return new, info

    return Learner(init=init, step=step)


# --------------------------------------------------------------------------- registry

#: the plan parameters that are :func:`sparse_vector_experts`' constructor arguments, not ``Params`` fields
_STATIC = ("threshold", "svt_ratio")


def _sv_from_plan(plan) -> SVExpertsParams:
    return sparse_vector_params(**{k: v for k, v in plan.params.items() if k not in _STATIC})


def _sv_static(plan) -> dict:
    return {k: plan.params[k] for k in _STATIC if k in plan.params}


def _sv_compare(d, T, T_max, eps, delta, problem):
    plan = _SV.certified_plan(eps=eps, delta=delta, T=T, d=d)
    return sparse_vector_experts(d), _SV.params_from_plan(plan), float(plan.eps_certified)


_SV = register_learner(
    "sparse_vector", factory=sparse_vector_experts, params_type=SVExpertsParams, problem="realizable-experts",
    private=True, planner="sparse_vector_experts", from_plan=_sv_from_plan, static=_sv_static,
    conformance=ConformanceCase("jaxdp.experts.conformance:sparse_vector_case"),
    description="sparse-vector experts, known L*: play x until AboveThreshold reports its loss since the last "
                "switch above L, then redraw x ∝ exp(-η max(L_t, L*)/2); at most K switches "
                "(threshold='shared': one threshold noise for all K instances, Lyu et al. Alg. 1)",
    reference="Realizable private online optimization, Alg. 1, Thm 1",
    compare=CompareBuiltin(_sv_compare, "planner sparse_vector_experts, mode certified (Realizable private online "
                                        "optimization, Thm 1)"))


_ADAPTIVE = register_learner(
    "adaptive_sparse_vector", factory=adaptive_sparse_vector_experts, params_type=AdaptiveSVParams,
    problem="realizable-experts", private=True, planner="adaptive_sparse_vector_experts",
    from_plan=lambda plan: adaptive_sparse_vector_params(**plan.params),
    conformance=ConformanceCase("jaxdp.experts.conformance:adaptive_sparse_vector_case"),
    description="sparse-vector experts with unknown L*: phases of Alg. 1 with a private doubling of the "
                "estimate of L*",
    reference="Realizable private online optimization, Alg. 2, Thm 2")


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
        A :class:`jaxdp.privacy.accounting.Plan` with params ``eps_svt``, ``eta``, ``K``, ``L`` and ``Lstar`` (and, with
        ``threshold="shared"``, ``threshold`` and ``svt_ratio``).

    Raises:
        ValueError: invalid privacy parameters, horizon, ``d``, mode or option.
    """
    eps, delta, T, d, mode = planner_checks(eps, delta, T, d, mode)
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
    :func:`jaxdp.privacy.accounting.floating.shared_threshold_terms` of ``b_thr/b_q`` (scales of ``svt_ratio``). The
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
        The :class:`jaxdp.privacy.accounting.Ledger` (``sequential`` of the sparse-vector event and the ``K`` draws).
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
        A :class:`jaxdp.privacy.accounting.Plan` with params ``eps_svt``, ``eta``, ``K``, ``L_offset``, ``Lbar0``,
        ``zeta_scale``, ``margin`` and ``max_doublings``.

    Raises:
        ValueError: invalid privacy parameters, horizon, ``d``, mode or option.
    """
    eps, delta, T, d, mode = planner_checks(eps, delta, T, d, mode)
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

def lower_bound_thm5(d, eps):
    """REAL Thm 5: every (ε, δ)-DP algorithm has regret >= ``log(d)/(32 ε)`` on ``adv_realizable_lb``.

    Args:
        d: the number of experts.
        eps: the privacy parameter ε.

    Returns:
        ``log(d)/(32 ε)``.
    """
    return np.log(np.asarray(d, float)) / (32.0 * np.asarray(eps, float))
