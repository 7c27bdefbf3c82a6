"""The exponential mechanism (McSherry–Talwar; Dwork–Roth Def. 3.4, Thms 3.10–3.11; docs/algorithms/primitives.md).

Output ``o`` with probability ∝ ``exp(ε u(S, o) / (2Δu))``: ε-DP, and
``P[u(o) <= OPT - (2Δu/ε)(ln|O| + t)] <= e^{-t}``.

* :func:`exp_mech`: Gumbel-max over ``logits = ε u / (2Δu)`` (no normalization, no overflow).
* :func:`exp_mech_inverse_cdf`: the same law from one uniform and a cumulative
  sum (cheap on CPU, where the generator dominates; ``jaxdp.core.sample_categorical``).
* :func:`exp_mech_topk`: Gumbel-top-k = k sequential exponential mechanisms
  without replacement (privacy kε by basic composition).

Floating point: the float32 samplers are ε-DP only up to an additive δ floor
(``jaxdp.privacy.accounting.floating.delta_float("gumbel" | "categorical", eps=ε, d=n)``; docs/guide/auditing.md#floating-point).

Masked entries (``mask == False``) get logit ``-inf`` and are never drawn
(unless ``k`` exceeds the number of unmasked entries in the top-k case, where
the surplus slots hold masked indices in arbitrary order).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ...core.validation import check_epsilon, check_finite, check_sensitivity
from ...core.random import sample_categorical
from ...core.validation import check_positive_int

__all__ = ["exp_mech_logits", "exp_mech", "exp_mech_topk", "exp_mech_inverse_cdf"]


def _mask(logits, mask):
    if mask is None:
        return logits
    mask = jnp.asarray(mask)
    if mask.shape != logits.shape:
        raise ValueError(f"mask must have the shape of the utilities {logits.shape}, got {mask.shape}")
    return jnp.where(mask, logits, -jnp.inf)


def _check_vector(x, name):
    check_finite(x, name)
    if jnp.ndim(x) < 1 or jnp.shape(x)[-1] < 1:
        raise ValueError(f"{name} must be a non-empty array (..., n), got shape {jnp.shape(x)}")


def exp_mech_logits(utility, sensitivity, eps) -> jax.Array:
    """``ε u / (2Δu)``: the logits of the exponential mechanism.

    Args:
        utility: the utilities.
        sensitivity: the utility's sensitivity Δu.
        eps: the privacy parameter ε.

    Returns:
        ``ε u / (2Δu)``.
    """
    check_sensitivity(sensitivity)
    check_epsilon(eps, allow_inf=False)
    u = jnp.asarray(utility, jnp.result_type(utility, float))
    return u * jnp.asarray(eps / (2.0 * sensitivity), u.dtype)


def exp_mech(key: jax.Array, utility, sensitivity, eps, mask=None) -> jax.Array:
    """One draw of the exponential mechanism over the last axis of ``utility``; int32 index. ε-DP.

    Args:
        key: JAX PRNG key.
        utility: utilities, the candidates along the last axis.
        sensitivity: the utility's sensitivity Δu.
        eps: the privacy parameter ε.
        mask: optional boolean mask of allowed entries (``False``: never drawn).

    Returns:
        The drawn index (int32).
    """
    _check_vector(utility, "utility")
    logits = _mask(exp_mech_logits(utility, sensitivity, eps), mask)
    return jax.random.categorical(key, logits, axis=-1).astype(jnp.int32)


def exp_mech_inverse_cdf(key: jax.Array, logits, mask=None) -> jax.Array:
    """Exact draw from ``softmax(logits)`` with one uniform (inverse CDF); int32 index.

    Args:
        key: JAX PRNG key.
        logits: the logits.
        mask: optional boolean mask of allowed entries (``False``: never drawn).

    Returns:
        The drawn index (int32).
    """
    _check_vector(logits, "logits")
    logits = _mask(jnp.asarray(logits, jnp.result_type(logits, float)), mask)
    return sample_categorical(key, logits)


def exp_mech_topk(key: jax.Array, logits, k: int, mask=None) -> jax.Array:
    """``k`` distinct indices (int32, shape ``(..., k)``) drawn without replacement ∝ ``exp(logits)`` (Gumbel-top-k).

    ``logits`` for an ε₀-exponential mechanism are ``exp_mech_logits(u, Δu, ε₀)``;
    the k draws are then kε₀-DP by basic composition. ``k`` is static.

    Args:
        key: JAX PRNG key.
        logits: the logits (e.g. :func:`exp_mech_logits`).
        k: the number of distinct indices (static).
        mask: optional boolean mask of allowed entries (``False``: never drawn).

    Returns:
        Indices of shape ``(..., k)``.
    """
    _check_vector(logits, "logits")
    k = check_positive_int("k", k)
    n = jnp.shape(logits)[-1]
    if k > n:
        raise ValueError(f"k must be <= the number of items {n}, got {k}")
    logits = _mask(jnp.asarray(logits, jnp.result_type(logits, float)), mask)
    g = jax.random.gumbel(key, logits.shape, dtype=logits.dtype)
    _, idx = jax.lax.top_k(logits + g, k)
    return idx.astype(jnp.int32)
