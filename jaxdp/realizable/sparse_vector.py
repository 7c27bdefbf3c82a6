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
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..core.random import sample_categorical
from ..core.types import Learner
from ..core.validation import check_finite_scalar, check_nonneg, check_positive, check_positive_int
from ..mechanisms import SVTState, svt_init, svt_query, svt_restart
from ._common import check_d, check_lstar, fdt, tree_where

__all__ = [
    "SVExpertsParams", "SVExpertsState", "sparse_vector_experts", "sparse_vector_params",
    "AdaptiveSVParams", "AdaptiveSVState", "adaptive_sparse_vector_experts", "adaptive_sparse_vector_params",
]


class SVExpertsParams(NamedTuple):
    eps_svt: jax.Array   # ε of every AboveThreshold instance (ε/2 in REAL Thm 1)
    eta: jax.Array       # exponential-mechanism parameter: P(x) ∝ exp(-η s(x)/2), η-DP per draw
    K: jax.Array         # int32 switching budget (number of exponential-mechanism draws)
    L: jax.Array         # sparse-vector threshold (utility only)
    Lstar: jax.Array     # loss level L* in the scores max(cum, L*) (utility only)


class SVExpertsState(NamedTuple):
    x: jax.Array         # int32 current expert
    k: jax.Array         # int32 switches so far
    acc: jax.Array       # loss of x since the last switch, sum_{i=t_p}^{t} l_i(x)
    cum: jax.Array       # (d,) cumulative losses
    svt: SVTState        # the one active AboveThreshold instance (halted = none active)


def sparse_vector_params(eps_svt, eta, K, L, Lstar=0.0) -> SVExpertsParams:
    """Validated parameters for :func:`sparse_vector_experts` (host values; use a Plan's ``params``)."""
    check_positive("eps_svt", eps_svt)
    check_positive("eta", eta)
    check_positive_int("K", K, minimum=0)
    check_nonneg("L", L)
    check_lstar(Lstar)
    return SVExpertsParams(eps_svt=jnp.float32(eps_svt), eta=jnp.float32(eta), K=jnp.int32(K),
                           L=jnp.float32(L), Lstar=jnp.float32(Lstar))


def _em_logits(cum, eta, Lstar):
    return -eta * jnp.maximum(cum, Lstar) / 2.0


@functools.lru_cache(maxsize=None)
def sparse_vector_experts(d: int, paper_order: bool = False) -> Learner:
    """REAL Algorithm 1 over ``d`` experts. Params: :class:`SVExpertsParams` (see ``plan_sparse_vector_experts``).

    Info (summed by ``simulate``): ``switched``, ``em_draws`` (<= K), ``svt_halts`` (one per ⊤,
    equal to ``em_draws``), ``svt_restarts`` (fresh instances after init; ``1 + svt_restarts``
    instances in all, one active at a time).
    """
    d = check_d(d)
    paper_order = bool(paper_order)

    def init(key, params):
        k_x, k_tau = jax.random.split(key)
        x = jax.random.randint(k_x, (), 0, d, dtype=jnp.int32)
        svt = svt_init(k_tau, params.L, params.eps_svt)
        svt = SVTState(tau_hat=svt.tau_hat, halted=svt.halted | (params.K <= 0))
        z = jnp.zeros((), fdt())
        return SVExpertsState(x=x, k=jnp.int32(0), acc=z, cum=jnp.zeros((d,), fdt()), svt=svt)

    def step(key, state, loss, params):
        k_nu, k_em, k_tau = jax.random.split(key, 3)
        acc_new = state.acc + loss[state.x]
        cum = state.cum + loss
        q = state.acc if paper_order else acc_new
        svt, top = svt_query(k_nu, state.svt, q, params.eps_svt)
        top = top & (state.k < params.K)
        x_new = sample_categorical(k_em, _em_logits(cum, params.eta, params.Lstar))
        x = jnp.where(top, x_new, state.x)
        k = state.k + top.astype(jnp.int32)
        restart = top & (k < params.K)
        svt = tree_where(restart, svt_restart(k_tau, svt, params.L, params.eps_svt), svt)
        info = {"switched": x != state.x, "em_draws": top, "svt_halts": top, "svt_restarts": restart}
        return SVExpertsState(x=x, k=k, acc=jnp.where(top, 0.0, acc_new), cum=cum, svt=svt), info

    return Learner(init=init, step=step)


# --------------------------------------------------------------------------- adaptive (Alg. 2)


class AdaptiveSVParams(NamedTuple):
    eps_svt: jax.Array       # ε of each AboveThreshold instance (eps0/2)
    eta: jax.Array           # exponential-mechanism parameter (eps0/(2K))
    K: jax.Array             # int32 switching budget per phase
    L_offset: jax.Array      # L = Lbar + L_offset  (4/η + 8B/eps0 in REAL Alg. 2)
    Lbar0: jax.Array         # initial estimate of L* (1 in REAL Alg. 2)
    zeta_scale: jax.Array    # Laplace scale of the doubling check (K/eps0)
    margin: jax.Array        # doubling test: noisy loss > Lbar - margin  (5K log(1/β0)/eps0)
    max_doublings: jax.Array  # int32 cap on doublings (the privacy proof's number of phases - 1)


class AdaptiveSVState(NamedTuple):
    x: jax.Array
    k: jax.Array             # switches in the current phase
    acc: jax.Array
    cum: jax.Array
    svt: SVTState
    Lbar: jax.Array          # current estimate of L*
    n_doublings: jax.Array   # int32


def adaptive_sparse_vector_params(eps_svt, eta, K, L_offset, Lbar0, zeta_scale, margin, max_doublings) -> AdaptiveSVParams:
    """Validated parameters for :func:`adaptive_sparse_vector_experts` (host values)."""
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
        acc_new = state.acc + loss[state.x]
        cum = state.cum + loss
        q = state.acc if paper_order else acc_new
        svt, top = svt_query(k_nu, state.svt, q, params.eps_svt)
        top = top & (state.k < params.K)
        x_new = sample_categorical(k_em, _em_logits(cum, params.eta, state.Lbar))
        x = jnp.where(top, x_new, state.x)
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
