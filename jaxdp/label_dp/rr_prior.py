"""Randomized response with a prior (RRWithPrior; Ghazi, Golowich, Kumar, Manurangsi, Zhang,
"Deep learning with label differential privacy", NeurIPS 2021, Alg. 2; docs/algorithms/label-dp.md#rr-with-prior).

Given a prior ``p`` over the ``K`` classes for one example (computed without its label) and its
label ``y``, RRWithPrior picks the ``k`` most likely classes ``Y_k`` under ``p``, with ``k`` maximizing

    w_k = (sum_{c in Y_k} p_c) * e^eps / (e^eps + k - 1),

and runs k-ary randomized response restricted to ``Y_k``: if ``y in Y_k`` it outputs ``y`` with
probability ``e^eps/(e^eps + k - 1)`` and each other class of ``Y_k`` with ``1/(e^eps + k - 1)``; if
``y`` is not in ``Y_k`` it outputs a uniform class of ``Y_k``. For every output ``o`` and labels
``y, y'`` the probability ratio is at most ``e^eps`` (``e^eps/(e^eps+k-1) / (1/k) <= e^eps`` and
``(1/k) / (1/(e^eps+k-1)) <= e^eps``), so the output is eps-label-DP whatever the prior, as long as
the prior does not depend on ``y``. With a uniform prior it is K-ary randomized response.

:func:`rr_with_prior` privatizes a batch of labels (pure, jittable, vmappable);
:func:`rr_with_prior_probs` gives the exact output distribution (for tests and audits);
:func:`rr_prior_fit_predict` is a two-stage bin-majority classifier built on it.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..core.validation import check_epsilon, check_positive_int, is_concrete

__all__ = ["rr_with_prior", "rr_with_prior_probs", "rr_prior_k", "rr_prior_fit_predict"]


def rr_prior_k(prior: jax.Array, eps) -> tuple[jax.Array, jax.Array]:
    """``(k, order)``: the optimal set size (int32, ``1 <= k <= K``) and the classes sorted by
    decreasing prior (``Y_k = order[:k]``) for priors of shape ``(..., K)``.

    ``k`` maximises ``w_k = (sum_{c in Y_k} p_c) e^ε / (e^ε + k - 1)`` (ties: the smallest ``k``; ε is capped at
    80 to avoid overflow).

    Args:
        prior: the priors over the ``K`` classes, shape ``(..., K)`` (rows summing to 1).
        eps: the privacy parameter ε (scalar, may be traced).

    Returns:
        ``(k, order)``: ``k`` of shape ``prior.shape[:-1]`` and ``order`` of ``prior``'s shape (stable sort, so
        equal priors keep their class order).
    """
    K = prior.shape[-1]
    order = jnp.argsort(-prior, axis=-1, stable=True)
    ps = jnp.take_along_axis(prior, order, axis=-1)
    ks = jnp.arange(1, K + 1, dtype=prior.dtype)
    ee = jnp.exp(jnp.minimum(jnp.asarray(eps, prior.dtype), 80.0))
    w = jnp.cumsum(ps, axis=-1) * ee / (ee + ks - 1.0)
    k = jnp.argmax(w, axis=-1).astype(jnp.int32) + 1
    return k, order


def rr_with_prior_probs(prior: jax.Array, y: jax.Array, eps) -> jax.Array:
    """Exact output distribution ``(..., K)`` of :func:`rr_with_prior` for labels ``y``.

    Inside ``Y_k``: ``e^ε/(e^ε + k - 1)`` for ``y`` and ``1/(e^ε + k - 1)`` for the others if ``y ∈ Y_k``, ``1/k``
    each if not; 0 outside ``Y_k``.

    Args:
        prior: the priors, shape ``(..., K)``.
        y: the true labels, shape ``prior.shape[:-1]`` (integers in ``{0..K-1}``).
        eps: the privacy parameter ε.

    Returns:
        The output probabilities, shape ``(..., K)``, each row summing to 1.
    """
    K = prior.shape[-1]
    k, order = rr_prior_k(prior, eps)
    rank = jnp.argsort(order, axis=-1)                        # rank[c] = position of class c
    in_set = rank < k[..., None]                              # (..., K)
    ee = jnp.exp(jnp.minimum(jnp.asarray(eps, prior.dtype), 80.0))
    kf = k.astype(prior.dtype)[..., None]
    y_in = jnp.take_along_axis(in_set, y[..., None], axis=-1)  # (..., 1)
    is_y = jnp.arange(K) == y[..., None]
    p_in = jnp.where(is_y, ee, 1.0) / (ee + kf - 1.0)
    p_out = jnp.ones_like(prior) / kf
    return jnp.where(in_set, jnp.where(y_in, p_in, p_out), 0.0)


def rr_with_prior(key: jax.Array, prior: jax.Array, y: jax.Array, eps) -> jax.Array:
    """Privatize labels ``y`` (int, shape ``(N,)``) with priors ``(N, K)`` (rows summing to 1) at
    level ``eps`` (``inf``: labels returned unchanged). One uniform per label (inverse CDF).

    The output is ε-label-DP whatever the prior, as long as the prior of an example does not depend on its
    own label (module docstring).

    Args:
        key: JAX PRNG key.
        prior: the priors over the ``K >= 2`` classes, shape ``(N, K)`` (any leading shape matching ``y``).
        y: the true labels, shape ``(N,)``.
        eps: the privacy parameter ε (may be traced; ``inf`` allowed).

    Returns:
        The privatized labels, ``int32`` of ``y``'s shape.

    Raises:
        ValueError: ``prior`` has no class axis, fewer than two classes, or ``eps`` is invalid.
    """
    if is_concrete(eps):
        check_epsilon(eps)
    if prior.ndim < 1:
        raise ValueError(f"prior must have a class axis, got shape {prior.shape}")
    check_positive_int("K (classes)", prior.shape[-1], minimum=2)
    y = jnp.asarray(y, jnp.int32)
    probs = rr_with_prior_probs(jnp.asarray(prior), y, eps)
    u = jax.random.uniform(key, y.shape, probs.dtype)
    cdf = jnp.cumsum(probs, axis=-1)
    out = jnp.sum(cdf < u[..., None] * cdf[..., -1:], axis=-1).astype(jnp.int32)
    return jnp.where(jnp.isinf(jnp.asarray(eps)), y, jnp.minimum(out, prior.shape[-1] - 1))


def rr_prior_fit_predict(key: jax.Array, Xtr, ytr, Xte, K: int, eps: float, bins: int) -> np.ndarray:
    """Two-stage RRWithPrior with a bin-majority classifier (host side): the first half of the training labels goes
    through K-ary RR, their debiased per-bin class frequencies are the prior of the second half, which goes through
    :func:`rr_with_prior`; the classifier is the bin majority of all privatized labels. Every label is privatized
    once, so the labels are ε-label-DP.

    Args:
        key: the PRNG key.
        Xtr, ytr: the ``(n, d)`` training features in ``[0, 1]^d`` and their ``n`` labels in ``{0, …, K-1}``.
        Xte: the test features.
        K: the number of classes.
        eps: ε (``inf``: no privatization in the first stage).
        bins: bins per axis.

    Returns:
        The test predictions.
    """
    from ..privacy.mechanisms.randomized_response import rr_kary
    from .estimators import bin_index

    n = Xtr.shape[0]
    h = n // 2
    k1, k2, k3 = jax.random.split(key, 3)
    G = int(bins) ** Xtr.shape[1]
    b = np.asarray(bin_index(jnp.asarray(Xtr), bins))
    z1 = np.asarray(rr_kary(k1, jnp.asarray(ytr[:h]), K, eps)) if np.isfinite(eps) else ytr[:h]
    counts = np.zeros((G, K))
    np.add.at(counts, (b[:h], z1), 1.0)
    ee = np.exp(min(eps, 80.0))
    tot = counts.sum(axis=1, keepdims=True)
    freq = counts / np.maximum(tot, 1)
    # debias K-ary RR: P(z = c) = (e^eps 1[c=y] + 1[c!=y]) / (e^eps + K - 1)
    prior = np.clip((freq * (ee + K - 1) - 1.0) / (ee - 1.0), 0.0, None) + 1e-3
    prior /= prior.sum(axis=1, keepdims=True)
    z2 = np.asarray(rr_with_prior(k2, jnp.asarray(prior[b[h:]]), jnp.asarray(ytr[h:]), eps))
    z = np.concatenate([z1, z2])
    votes = np.zeros((G, K))
    np.add.at(votes, (b, z), 1.0)
    jitter = np.asarray(jax.random.uniform(k3, (G, K))) * 0.5
    table = np.argmax(votes + jitter, axis=1)
    return table[np.asarray(bin_index(jnp.asarray(Xte), bins))]
