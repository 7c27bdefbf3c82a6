"""Randomized response: binary, K-ary and the per-coordinate vector mechanism (docs/algorithms/primitives.md, docs/algorithms/label-dp.md).

Three ε-local-label-DP randomizers of a label ``y`` (LABEL = "Theoretical limits of learning with
label differential privacy"; docs/algorithms/label-dp.md):

* :func:`rr_binary` — ``y ∈ {0, 1}``; keep with probability ``e^ε/(e^ε+1)``,
  flip otherwise (Warner 1965). Likelihood ratio ``e^ε`` exactly.
* :func:`rr_kary` — ``y ∈ {0..K-1}``; keep with probability
  ``e^ε/(e^ε+K-1)``, otherwise uniform over the other ``K-1`` labels
  (LABEL Remark 1.3, the baseline). Likelihood ratio ``e^ε`` exactly.
* :func:`rr_vector` — LABEL eq. (11): ``Z ∈ {0,1}^K`` with independent coordinates::

      P(Z_j = 1) = e^{ε/2}/(e^{ε/2}+1)  if j = y,      1/(e^{ε/2}+1)  otherwise.

  Two labels ``y ≠ y'`` change the law of exactly two coordinates, each by a
  factor of at most ``e^{ε/2}`` (LABEL eq. (15)), so the whole vector is ε-LDP
  and the bound is attained (e.g. ``z = e_y`` vs ``y'``).

``eps = inf`` is allowed and gives the identity (one-hot for ``rr_vector``).
All randomizers take the key first, accept any label shape (a batch of labels
is privatized independently, one sample each), accept a traced ``eps`` (so
they can be vmapped over ε) and draw a fixed number of random words.

Floating point: the float32 coins make each randomizer ε-DP up to an additive δ floor,
``jaxdp.privacy.accounting.floating.delta_float("bernoulli" | "rr_kary" | "rr_vector", eps=ε, d=K)``
(docs/guide/auditing.md#floating-point).

Exact output probabilities (for tests and audits) are given as jittable
functions (``*_log_prob``) and host float64 matrices (``*_matrix``).
"""
from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ...core.types import fdt
from ...core.validation import check_epsilon
from ...core.validation import check_positive_int, is_concrete

__all__ = [
    "rr_binary", "rr_kary", "rr_vector",
    "rr_binary_keep_prob", "rr_kary_keep_prob", "rr_vector_probs",
    "rr_binary_log_prob", "rr_kary_log_prob", "rr_vector_log_prob",
    "rr_binary_matrix", "rr_kary_matrix", "rr_vector_coord_matrix", "rr_vector_pmf",
    "rr_max_log_ratio",
]


# --------------------------------------------------------------------------- checks


def _check_labels(y: Any, K: int, name: str = "y") -> None:
    """Labels must be integers in ``{0..K-1}`` (skipped for traced values)."""
    if not is_concrete(y):
        return
    arr = np.asarray(y)
    if arr.dtype == np.bool_:
        arr = arr.astype(np.int64)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        raise TypeError(f"{name} must be integer labels in {{0..{K - 1}}}, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must be integer labels in {{0..{K - 1}}}, got non-integer values")
    if arr.size and (arr.min() < 0 or arr.max() > K - 1):
        bad = arr[(arr < 0) | (arr > K - 1)].ravel()[0]
        raise ValueError(f"{name} must be labels in {{0..{K - 1}}} (K={K}), got {bad!r}")


# --------------------------------------------------------------------------- probabilities


def rr_binary_keep_prob(eps):
    """``P(Z = y) = e^ε/(e^ε+1) = sigmoid(ε)`` (1 at ε = ∞).

    Args:
        eps: the privacy parameter ε (scalar or array; may be traced).

    Returns:
        The keep probability, same shape as ``eps``, in the default float dtype.
    """
    return jax.nn.sigmoid(jnp.asarray(eps, fdt()))


def rr_kary_keep_prob(K: int, eps):
    """``P(Z = y) = e^ε/(e^ε+K-1) = 1/(1 + (K-1)e^{-ε})`` (1 at ε = ∞).

    Args:
        K: the number of labels.
        eps: the privacy parameter ε (scalar or array; may be traced).

    Returns:
        The keep probability, same shape as ``eps``; each other label has ``(1 - keep)/(K - 1)``.
    """
    return 1.0 / (1.0 + (K - 1) * jnp.exp(-jnp.asarray(eps, fdt())))


def rr_vector_probs(eps):
    """``(p_hit, p_miss) = (e^{ε/2}/(e^{ε/2}+1), 1/(e^{ε/2}+1))`` of LABEL eq. (11).

    Args:
        eps: the privacy parameter ε of the whole vector (scalar or array; may be traced).

    Returns:
        ``(p_hit, p_miss)``: ``P(Z_j = 1)`` for the true label's coordinate ``j = y`` and for every other one.
    """
    e = jnp.asarray(eps, fdt())
    return jax.nn.sigmoid(e / 2), jax.nn.sigmoid(-e / 2)


def rr_binary_log_prob(z, y, eps):
    """``log P(rr_binary(y) = z)``, elementwise.

    Args:
        z: released labels in ``{0, 1}``.
        y: true labels in ``{0, 1}``, broadcastable with ``z``.
        eps: the privacy parameter ε.

    Returns:
        ``log sigmoid(ε)`` where ``z == y``, ``log sigmoid(-ε)`` elsewhere; the broadcast shape of ``z`` and ``y``.
    """
    e = jnp.asarray(eps, fdt())
    same = jnp.asarray(z) == jnp.asarray(y)
    return jnp.where(same, jax.nn.log_sigmoid(e), jax.nn.log_sigmoid(-e))


def rr_kary_log_prob(z, y, K: int, eps):
    """``log P(rr_kary(y) = z)``: ``log(e^ε/(e^ε+K-1))`` if ``z = y`` else ``log(1/(e^ε+K-1))``.

    Args:
        z: released labels in ``{0..K-1}``.
        y: true labels, broadcastable with ``z``.
        K: the number of labels.
        eps: the privacy parameter ε.

    Returns:
        The log-probabilities, the broadcast shape of ``z`` and ``y``.
    """
    e = jnp.asarray(eps, fdt())
    log_norm = jnp.logaddexp(e, jnp.log(K - 1.0))
    same = jnp.asarray(z) == jnp.asarray(y)
    return jnp.where(same, e - log_norm, -log_norm)


def rr_vector_log_prob(z, y, eps):
    """``log P(rr_vector(y) = z)`` for ``z ∈ {0,1}^K`` (last axis K): a sum of K Bernoulli log-likelihoods.

    Args:
        z: released vectors of shape ``(..., K)`` (0/1 or bool).
        y: true labels in ``{0..K-1}``, of shape ``z.shape[:-1]`` (or broadcastable to it).
        eps: the privacy parameter ε of the whole vector.

    Returns:
        The log-probabilities, of shape ``z.shape[:-1]``.
    """
    e = jnp.asarray(eps, fdt())
    z = jnp.asarray(z).astype(bool)
    K = z.shape[-1]
    hit = jax.nn.one_hot(jnp.asarray(y), K, dtype=bool)
    # log P(Z_j = z_j) = log sigmoid(+-ε/2): + when z_j agrees with the one-hot of y
    agree = z == hit
    return jnp.sum(jnp.where(agree, jax.nn.log_sigmoid(e / 2), jax.nn.log_sigmoid(-e / 2)), axis=-1)


def rr_binary_matrix(eps: float) -> np.ndarray:
    """Host float64 ``P[y, z] = P(rr_binary(y) = z)``, shape (2, 2).

    Args:
        eps: the privacy parameter ε (``inf``: the identity).

    Returns:
        The 2×2 row-stochastic transition matrix.
    """
    return rr_kary_matrix(2, eps)


def rr_kary_matrix(K: int, eps: float) -> np.ndarray:
    """Host float64 ``P[y, z] = P(rr_kary(y) = z)``, shape (K, K); rows sum to 1.

    Args:
        K: the number of labels (``>= 2``).
        eps: the privacy parameter ε (``inf``: the identity).

    Returns:
        The matrix with ``e^ε/(e^ε+K-1)`` on the diagonal and ``1/(e^ε+K-1)`` elsewhere.
    """
    K = check_positive_int("K", K, minimum=2)
    check_epsilon(eps)
    eps = float(eps)
    if math.isinf(eps):
        return np.eye(K)
    # e^ε/(e^ε+K-1) computed as 1/(1+(K-1)e^{-ε}) (no overflow at large ε)
    keep = 1.0 / (1.0 + (K - 1) * math.exp(-eps))
    other = math.exp(-eps) * keep  # = 1/(e^ε+K-1), exact
    P = np.full((K, K), other)
    np.fill_diagonal(P, keep)
    return P


def rr_vector_coord_matrix(K: int, eps: float) -> np.ndarray:
    """Host float64 ``Q[y, j] = P(rr_vector(y)_j = 1)``, shape (K, K) (eq. (11)).

    Args:
        K: the number of labels (``>= 2``).
        eps: the privacy parameter ε of the whole vector (``inf``: one-hot).

    Returns:
        The matrix with ``p_hit`` on the diagonal and ``p_miss`` elsewhere (:func:`rr_vector_probs`); rows do not
        sum to 1 (the coordinates are independent coins).
    """
    K = check_positive_int("K", K, minimum=2)
    check_epsilon(eps)
    eps = float(eps)
    hit = 1.0 if math.isinf(eps) else 1.0 / (1.0 + math.exp(-eps / 2))
    Q = np.full((K, K), 1.0 - hit)
    np.fill_diagonal(Q, hit)
    return Q


def rr_vector_pmf(K: int, eps: float) -> np.ndarray:
    """Host float64 law of the whole vector: ``P[y, code(z)]`` over all ``2^K`` outputs
    (``code(z) = Σ_j z_j 2^j``), shape (K, 2^K). Use only for small K (≤ 16).

    Args:
        K: the number of labels, ``2 <= K <= 16``.
        eps: the privacy parameter ε of the whole vector.

    Returns:
        The ``(K, 2^K)`` row-stochastic matrix.

    Raises:
        ValueError: ``K > 16``.
    """
    K = check_positive_int("K", K, minimum=2)
    if K > 16:
        raise ValueError(f"K must be <= 16 for the full vector pmf (2^K outputs), got {K}")
    Q = rr_vector_coord_matrix(K, eps)
    codes = np.arange(2 ** K)
    Z = ((codes[:, None] >> np.arange(K)[None, :]) & 1).astype(bool)  # (2^K, K)
    P = np.prod(np.where(Z[None, :, :], Q[:, None, :], 1.0 - Q[:, None, :]), axis=-1)
    return P


def rr_max_log_ratio(P: np.ndarray) -> float:
    """``max_{y, y', z} log P[y, z]/P[y', z]`` of an output-probability matrix (rows = inputs);
    the exact pure-DP ε of the randomizer (``inf`` if some output has probability 0 under one input only).

    Args:
        P: the transition matrix, ``P[y, z]`` the probability of output ``z`` on input ``y``
            (e.g. :func:`rr_kary_matrix`, :func:`rr_vector_pmf`).

    Returns:
        The largest log-likelihood ratio over pairs of inputs and outputs (outputs impossible under both ignored).
    """
    P = np.asarray(P, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        L = np.log(P)
        R = L[:, None, :] - L[None, :, :]
    R = np.where(np.isnan(R), -np.inf, R)  # 0/0: the output is impossible under both
    return float(np.max(R))


# --------------------------------------------------------------------------- randomizers


def rr_binary(key: jax.Array, y, eps) -> jax.Array:
    """Binary randomized response: ``Z = y`` w.p. ``e^ε/(e^ε+1)``, else ``1 - y``. ε-LDP (tight).

    Args:
      key: typed PRNG key.
      y: labels in ``{0, 1}`` (bool or int), any shape.
      eps: ε > 0 (``inf`` = identity); may be traced.
    Returns:
      int32 array of the shape of ``y``.
    """
    check_epsilon(eps)
    _check_labels(y, 2)
    y = jnp.asarray(y).astype(jnp.int32)
    keep = jax.random.bernoulli(key, rr_binary_keep_prob(eps), y.shape)
    return jnp.where(keep, y, 1 - y)


def rr_kary(key: jax.Array, y, K: int, eps) -> jax.Array:
    """K-ary randomized response (LABEL Remark 1.3 baseline).

    ``P(Z = y) = e^ε/(e^ε+K-1)``; otherwise ``Z`` is uniform on the other
    ``K-1`` labels, so ``P(Z = z) = 1/(e^ε+K-1)`` for every ``z ≠ y``.
    ε-LDP and tight: ``P(Z=y | y)/P(Z=y | y') = e^ε``.

    Two random draws per label (keep coin, offset in ``{1..K-1}``); ``Z = (y + offset) mod K``
    when not kept.

    Returns int32 labels of the shape of ``y``.

    Args:
        key: JAX PRNG key.
        y: the true labels in ``{0..K-1}``.
        K: the number of labels.
        eps: the local privacy parameter ε.

    Returns:
        Int32 labels of the shape of ``y``.
    """
    K = check_positive_int("K", K, minimum=2)
    check_epsilon(eps)
    _check_labels(y, K)
    y = jnp.asarray(y).astype(jnp.int32)
    k_keep, k_off = jax.random.split(key)
    keep = jax.random.bernoulli(k_keep, rr_kary_keep_prob(K, eps), y.shape)
    off = jax.random.randint(k_off, y.shape, 1, K, dtype=jnp.int32)
    return jnp.where(keep, y, (y + off) % K)


def rr_vector(key: jax.Array, y, K: int, eps) -> jax.Array:
    """Per-coordinate randomized response of LABEL eq. (11) (Theorem 2).

    ``Z ∈ {0,1}^K``, independent coordinates, ``P(Z_j=1) = e^{ε/2}/(e^{ε/2}+1)``
    if ``j = y`` and ``1/(e^{ε/2}+1)`` otherwise. ε-LDP: the log-likelihood
    ratio of any output under two labels is at most ``ε`` (``ε/2`` from each
    of the two coordinates that differ, eq. (15)), with equality at e.g.
    ``z = e_y``.

    Args:
      key: typed PRNG key.
      y: integer labels in ``{0..K-1}``, any shape ``S``.
      K: number of classes (static, ``>= 2``).
      eps: ε > 0 (``inf`` = one-hot); may be traced.
    Returns:
      bool array of shape ``S + (K,)``.
    """
    K = check_positive_int("K", K, minimum=2)
    check_epsilon(eps)
    _check_labels(y, K)
    y = jnp.asarray(y).astype(jnp.int32)
    p_hit, p_miss = rr_vector_probs(eps)
    onehot = jax.nn.one_hot(y, K, dtype=bool)
    u = jax.random.uniform(key, y.shape + (K,), dtype=fdt())
    return u < jnp.where(onehot, p_hit, p_miss)
