"""AboveThreshold / sparse vector as a state machine (Dwork–Roth Alg. 1, Thms 3.23–3.24; REAL Lemma 2.3; docs/algorithms/primitives.md).

One instance answers a stream of queries ``q_1, q_2, ...`` of sensitivity Δ
against a threshold τ and halts at its first ⊤::

    init:   τ̂ = τ + Lap(2Δ/ε)                 (threshold noise, once per instance)
    query:  ν = Lap(4Δ/ε)                      (fresh noise per query)
            if not halted and q + ν >= τ̂:  answer ⊤ and halt;  otherwise answer ⊥

The whole answer vector (any number of ⊥ then one ⊤) is ε-DP (Dwork–Roth
Thm 3.23). Accuracy (Thm 3.24): over k queries, with probability >= 1 - β,
every ⊥ query has ``q_i <= τ + α`` and the ⊤ query has ``q_k >= τ - α``, with
``α = 8Δ(log k + log(2/β))/ε`` (:func:`svt_accuracy_alpha`).

Floating point: with float32 Laplace draws the answers are ε-DP up to an additive δ of
``jaxdp.accounting.floating.delta_float("laplace", eps=ε, d=2)`` per query (docs/guide/auditing.md#floating-point).

A halted instance answers ⊥ to everything until :func:`svt_restart` draws a
fresh τ̂ (REAL's ``InitializeSparseVec``). Every function draws its noise on
every call, so it can sit inside ``lax.scan`` / ``vmap`` with a fixed number
of random draws per round; select with ``jnp.where`` on ``top`` / ``halted``.

Example (inside a scan step)::

    k_q, k_r = jax.random.split(key)
    svt, top = svt_query(k_q, svt, q, eps)
    svt = jax.tree.map(lambda a, b: jnp.where(top, a, b), svt_restart(k_r, svt, tau, eps), svt)
"""
from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ._checks import check_eps, check_finite, check_sensitivity
from ..core.validation import check_positive_int, check_probability

__all__ = [
    "SVTState", "svt_init", "svt_query", "svt_restart", "svt_noise_scales", "svt_accuracy_alpha",
    "above_threshold",
]


class SVTState(NamedTuple):
    """State of one AboveThreshold instance."""

    tau_hat: jax.Array   # float, the noisy threshold τ + Lap(2Δ/ε)
    halted: jax.Array    # bool, True once the instance has answered ⊤


def svt_noise_scales(eps, sensitivity=1.0):
    """Dwork–Roth Alg. 1 Laplace scales ``(2Δ/ε, 4Δ/ε)`` for the threshold and the queries."""
    return 2.0 * sensitivity / eps, 4.0 * sensitivity / eps


def svt_accuracy_alpha(k: int, beta: float, eps: float, sensitivity: float = 1.0) -> float:
    """α of Dwork–Roth Thm 3.24: ``8Δ(log k + log(2/β))/ε`` (host float)."""
    k = check_positive_int("k", k)
    check_probability("beta", beta, open_left=True, open_right=True)
    check_eps(eps, allow_inf=False)
    check_sensitivity(sensitivity)
    return 8.0 * sensitivity * (math.log(k) + math.log(2.0 / beta)) / eps


def _check(eps, sensitivity, **finite):
    check_eps(eps)
    check_sensitivity(sensitivity)
    for name, v in finite.items():
        check_finite(v, name)


def _float(x):
    return jnp.asarray(x, dtype=jnp.result_type(float))


def svt_init(key: jax.Array, threshold, eps, sensitivity=1.0) -> SVTState:
    """A fresh instance: ``τ̂ = threshold + Lap(2Δ/ε)``, not halted. One Laplace draw (shape of ``threshold``)."""
    _check(eps, sensitivity, threshold=threshold)
    threshold = _float(threshold)
    b_thr, _ = svt_noise_scales(eps, sensitivity)
    z = jax.random.laplace(key, jnp.shape(threshold), dtype=threshold.dtype)
    tau_hat = threshold + jnp.asarray(b_thr, threshold.dtype) * z
    return SVTState(tau_hat=tau_hat, halted=jnp.zeros(jnp.shape(threshold), jnp.bool_))


def svt_query(key: jax.Array, state: SVTState, q, eps, sensitivity=1.0) -> tuple[SVTState, jax.Array]:
    """Answer one query: ``top = not halted and q + Lap(4Δ/ε) >= τ̂``; the instance halts on ⊤.

    Returns ``(state', top)``; a halted instance answers ⊥ (``top=False``).
    One Laplace draw per call, whether or not the instance is halted.
    """
    _check(eps, sensitivity, q=q)
    q = jnp.asarray(q, dtype=state.tau_hat.dtype)
    _, b_q = svt_noise_scales(eps, sensitivity)
    nu = jax.random.laplace(key, jnp.shape(state.tau_hat), dtype=state.tau_hat.dtype)
    top = jnp.logical_and(jnp.logical_not(state.halted), q + jnp.asarray(b_q, q.dtype) * nu >= state.tau_hat)
    return SVTState(tau_hat=state.tau_hat, halted=jnp.logical_or(state.halted, top)), top


def svt_restart(key: jax.Array, state: SVTState, threshold, eps, sensitivity=1.0) -> SVTState:
    """A new instance (fresh τ̂, ``halted=False``) replacing ``state``; the same draw as :func:`svt_init`.

    ``state`` only fixes the dtype/shape; under ``vmap`` select between it and
    the result with ``jnp.where`` to restart only some lanes.
    """
    new = svt_init(key, jnp.broadcast_to(_float(threshold), jnp.shape(state.tau_hat)), eps, sensitivity)
    return SVTState(tau_hat=new.tau_hat.astype(state.tau_hat.dtype), halted=new.halted)


def above_threshold(key: jax.Array, queries, threshold, eps, sensitivity=1.0) -> jax.Array:
    """Run one AboveThreshold instance over a whole query vector; return the index of the ⊤ answer.

    ``queries`` has shape ``(k,)``; returns an int32 in ``[0, k]``, ``k``
    meaning "no ⊤" (all ⊥). This index is the instance's entire output. Keys:
    ``split(key, 2)`` → threshold noise, then ``k`` query noises drawn at once
    (equivalent to a scan of :func:`svt_query`, since a halted instance's later
    noise is never looked at).
    """
    _check(eps, sensitivity, queries=queries, threshold=threshold)
    queries = _float(queries)
    if queries.ndim != 1:
        raise ValueError(f"queries must have shape (k,), got {queries.shape}")
    k_thr, k_q = jax.random.split(key)
    state = svt_init(k_thr, threshold, eps, sensitivity)
    _, b_q = svt_noise_scales(eps, sensitivity)
    nu = jax.random.laplace(k_q, queries.shape, dtype=queries.dtype)
    above = queries + jnp.asarray(b_q, queries.dtype) * nu >= state.tau_hat
    k = queries.shape[0]
    return jnp.where(jnp.any(above), jnp.argmax(above), k).astype(jnp.int32)
