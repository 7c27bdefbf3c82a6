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
"""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core.random import sample_categorical
from ..core.types import Learner
from ..core.validation import check_choice, check_finite_scalar, check_nonneg, check_positive, check_positive_int
from ..mechanisms import SVTState, svt_init, svt_query, svt_restart
from ..mechanisms.sparse_vector import CSVTState, Ratio, _check_ratio, _ratio_value, csvt_query
from ..registry import CompareBuiltin, ConformanceCase, register_learner
from ._common import check_d, check_lstar, fdt, tree_where

__all__ = [
    "SVExpertsParams", "SVExpertsState", "sparse_vector_experts", "sparse_vector_params", "THRESHOLD_MODES",
    "shared_threshold_scales", "shared_threshold_unscaled_experts",
    "AdaptiveSVParams", "AdaptiveSVState", "adaptive_sparse_vector_experts", "adaptive_sparse_vector_params",
]


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
        svt: the active AboveThreshold instance (:class:`jaxdp.mechanisms.SVTState`).
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


def _query_and_draw(k_nu, k_em, state, loss, params, Lstar, paper_order):
    """One round of REAL Alg. 1/2 up to the draw: the own-loss query of the current AboveThreshold instance
    (``paper_order``: the loss before this round's) and an exponential-mechanism draw, kept on ⊤ while ``k < K``.

    Returns ``(acc_new, cum, svt, top, x_new, x)``.
    """
    acc_new = state.acc + loss[state.x]
    cum = state.cum + loss
    q = state.acc if paper_order else acc_new
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
        return _fresh_experts(d, paper_order)
    return _shared_experts(d, paper_order, _check_svt_ratio(svt_ratio), True)


def _check_svt_ratio(svt_ratio):
    """``svt_ratio``: ``"optimal"`` or a number > 0 (numeric strings from the command line accepted)."""
    if isinstance(svt_ratio, str) and svt_ratio != "optimal":
        try:
            svt_ratio = float(svt_ratio)
        except ValueError:
            raise ValueError(f"svt_ratio must be a number eps1/eps2 > 0 or 'optimal', got {svt_ratio!r}") from None
    try:
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
def _fresh_experts(d: int, paper_order: bool) -> Learner:

    def init(key, params):
        k_x, k_tau = jax.random.split(key)
        x = jax.random.randint(k_x, (), 0, d, dtype=jnp.int32)
        svt = svt_init(k_tau, params.L, params.eps_svt)
        svt = SVTState(tau_hat=svt.tau_hat, halted=svt.halted | (params.K <= 0))
        z = jnp.zeros((), fdt())
        return SVExpertsState(x=x, k=jnp.int32(0), acc=z, cum=jnp.zeros((d,), fdt()), svt=svt)

    def step(key, state, loss, params):
        k_nu, k_em, k_tau = jax.random.split(key, 3)
        acc_new, cum, svt, top, x_new, x = _query_and_draw(k_nu, k_em, state, loss, params, params.Lstar, paper_order)
        k = state.k + top.astype(jnp.int32)
        restart = top & (k < params.K)
        svt = tree_where(restart, svt_restart(k_tau, svt, params.L, params.eps_svt), svt)
        info = {"switched": x != state.x, "em_draws": top, "svt_halts": top, "svt_restarts": restart}
        return SVExpertsState(x=x, k=k, acc=jnp.where(top, 0.0, acc_new), cum=cum, svt=svt), info

    return Learner(init=init, step=step)


@functools.lru_cache(maxsize=None)
def _shared_experts(d: int, paper_order: bool, svt_ratio: Ratio, scale_with_K: bool) -> Learner:
    """REAL Alg. 1 with one threshold noise shared by the ``≤ K`` instances (``scale_with_K=False``: broken twin)."""

    def init(key, params):
        k_x, k_tau = jax.random.split(key)
        x = jax.random.randint(k_x, (), 0, d, dtype=jnp.int32)
        b_thr, b_q = shared_threshold_scales(params.eps_svt, params.K, svt_ratio, scale_with_K=scale_with_K)
        L = jnp.asarray(params.L, fdt())
        # the state is built here (not by csvt_init_from_scales, which insists on c >= 1): K = 0 is allowed
        tau_hat = L + jnp.asarray(b_thr, fdt()) * jax.random.laplace(k_tau, (), fdt())
        svt = CSVTState(tau_hat=tau_hat, query_scale=jnp.asarray(b_q, fdt()), count=jnp.int32(0),
                        c=jnp.asarray(params.K, jnp.int32))
        z = jnp.zeros((), fdt())
        return SVExpertsState(x=x, k=jnp.int32(0), acc=z, cum=jnp.zeros((d,), fdt()), svt=svt)

    def step(key, state, loss, params):
        k_nu, k_em, _ = jax.random.split(key, 3)     # the default's keys; k_tau is not needed
        acc_new = state.acc + loss[state.x]
        cum = state.cum + loss
        q = state.acc if paper_order else acc_new
        svt, top = csvt_query(k_nu, state.svt, q)     # ⊤ only while fewer than K positives so far
        x_new = sample_categorical(k_em, _em_logits(cum, params.eta, params.Lstar))
        x = jnp.where(top, x_new, state.x)
        k = state.k + top.astype(jnp.int32)
        info = {"switched": x != state.x, "em_draws": top, "svt_halts": top, "svt_restarts": jnp.zeros_like(top)}
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
    return _shared_experts(check_d(d), bool(paper_order), 1.0, False)


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


def _sv_conformance(d, T):
    from ..experts.conformance import experts_case

    return experts_case(sparse_vector_experts(d), d, [sparse_vector_params(0.5, 0.05, 5, 6.0),
                                                      sparse_vector_params(1.0, 0.2, 3, 10.0)], realizable=True)


def _sv_compare(d, T, T_max, eps, delta, problem):
    plan = _SV.certified_plan(eps=eps, delta=delta, T=T, d=d)
    return sparse_vector_experts(d), _SV.params_from_plan(plan), float(plan.eps_certified)


_SV = register_learner(
    "sparse_vector", factory=sparse_vector_experts, params_type=SVExpertsParams, problem="realizable-experts",
    private=True, planner="sparse_vector_experts", from_plan=_sv_from_plan, static=_sv_static,
    conformance=ConformanceCase(_sv_conformance),
    description="sparse-vector experts, known L*: play x until AboveThreshold reports its loss since the last "
                "switch above L, then redraw x ∝ exp(-η max(L_t, L*)/2); at most K switches "
                "(threshold='shared': one threshold noise for all K instances, Lyu et al. Alg. 1)",
    reference="Realizable private online optimization, Alg. 1, Thm 1",
    compare=CompareBuiltin(_sv_compare, "planner sparse_vector_experts, mode certified (Realizable private online "
                                        "optimization, Thm 1)"))


def _adaptive_conformance(d, T):
    from ..experts.conformance import experts_case
    from .planners import plan_adaptive_sparse_vector_experts

    plans = [plan_adaptive_sparse_vector_experts(eps=e, T=T, d=d, mode="rate") for e in (1.0, 2.0)]
    return experts_case(adaptive_sparse_vector_experts(d), d, [_ADAPTIVE.params_from_plan(p) for p in plans],
                        realizable=True)


_ADAPTIVE = register_learner(
    "adaptive_sparse_vector", factory=adaptive_sparse_vector_experts, params_type=AdaptiveSVParams,
    problem="realizable-experts", private=True, planner="adaptive_sparse_vector_experts",
    from_plan=lambda plan: adaptive_sparse_vector_params(**plan.params),
    conformance=ConformanceCase(_adaptive_conformance),
    description="sparse-vector experts with unknown L*: phases of Alg. 1 with a private doubling of the "
                "estimate of L*",
    reference="Realizable private online optimization, Alg. 2, Thm 2")
