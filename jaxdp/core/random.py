"""Random-number primitives that count draws (docs/guide/benchmarks.md).

On CPU the threefry generator, not the arithmetic, dominates a simulated
round, so the samplers here use as few random words as possible:

* ``sample_categorical``: one uniform and a cumulative sum (inverse CDF),
  instead of ``d`` Gumbels.
* ``bernoulli_half``: 32 fair coins per random 32-bit word.
* ``bernoulli_bits``: Bernoulli(q) from 8 random bits per coin (q rounded to a
  multiple of 1/256; the rounding is exact for the q used in the library's
  adversaries and reported otherwise).
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp

__all__ = ["sample_categorical", "sample_from_weights", "sample_categorical_gumbel", "bernoulli_half", "bernoulli_bits", "log_uniform"]


def sample_categorical(key: jax.Array, logits: jax.Array, axis: int = -1) -> jax.Array:
    """Exact draw from ``softmax(logits)`` with one uniform (inverse CDF).

    ``w = exp(logits - max(logits))``; returns the first index ``i`` with
    ``cumsum(w)[i] > U * sum(w)`` (scaling ``U`` by the computed total makes
    the draw robust to round-off in the normalization). Entries with
    probability 0 (logit ``-inf``, or underflow) are never drawn.

    Args:
        key: JAX PRNG key.
        logits: unnormalized log-probabilities.
        axis: the axis of ``logits`` holding the categories.

    Returns:
        The drawn index (int32), with ``axis`` removed.
    """
    if axis != -1:
        logits = jnp.moveaxis(logits, axis, -1)
    m = jnp.max(logits, axis=-1, keepdims=True)
    w = jnp.exp(logits - m)
    return sample_from_weights(key, w)


def sample_from_weights(key: jax.Array, w: jax.Array, total: jax.Array | None = None) -> jax.Array:
    """Exact draw of an index with probability ``w_i / sum(w)`` (``w >= 0``), one uniform.

    Inverse CDF: the first ``i`` with ``cumsum(w)[i] > u``, ``u ~ U[0, sum w)``.
    For ``d > 32`` it works in two levels (blocks of ``b = ceil(sqrt(d))``
    weights: a cumulative sum over the block totals, then one inside the chosen
    block), ``O(d)`` work instead of a length-``d`` cumulative sum, which XLA
    lowers to a ``reduce_window`` costing ``O(d^2)`` per row on CPU.

    Zero weights are never drawn: ``u`` is clipped below the computed total of
    each level, and an entry of weight 0 has the same cumulative sum as its
    predecessor, so it is always skipped. ``total`` is accepted for callers
    that have the sum, but the draw uses the cumulative sums' own totals.

    Args:
        key: JAX PRNG key (one uniform per row is drawn from it).
        w: non-negative, unnormalised weights of shape ``(..., d)``, at least one positive per row;
            no gradient flows through them.
        total: ``sum(w, axis=-1)`` if the caller has it; ignored.

    Returns:
        The drawn indices, ``int32`` of shape ``w.shape[:-1]``, each in ``[0, d)``.
    """
    del total
    w = jax.lax.stop_gradient(w)  # the index is discrete: no gradient flows through the draw
    d = w.shape[-1]
    r = jax.random.uniform(key, w.shape[:-1], dtype=w.dtype)
    if d <= 32:
        c = jnp.cumsum(w, axis=-1)
        u = jnp.minimum(r * c[..., -1], jnp.nextafter(c[..., -1], 0))
        return jnp.sum(c <= u[..., None], axis=-1).astype(jnp.int32)
    b = int(math.ceil(math.sqrt(d)))
    nb = -(-d // b)
    wp = jnp.pad(w, [(0, 0)] * (w.ndim - 1) + [(0, nb * b - d)]) if nb * b > d else w
    W = wp.reshape(w.shape[:-1] + (nb, b))
    cb = jnp.cumsum(jnp.sum(W, axis=-1), axis=-1)
    u = jnp.minimum(r * cb[..., -1], jnp.nextafter(cb[..., -1], 0))
    j = jnp.sum(cb <= u[..., None], axis=-1)
    cb_before = jnp.concatenate([jnp.zeros_like(cb[..., :1]), cb[..., :-1]], axis=-1)
    before = jnp.take_along_axis(cb_before, j[..., None], axis=-1)[..., 0]
    row = jnp.take_along_axis(W, j[..., None, None], axis=-2)[..., 0, :]
    c2 = jnp.cumsum(row, axis=-1)
    u2 = jnp.minimum(u - before, jnp.nextafter(c2[..., -1], 0))
    i = jnp.sum(c2 <= u2[..., None], axis=-1)
    return (j * b + i).astype(jnp.int32)


def sample_categorical_gumbel(key: jax.Array, logits: jax.Array, axis: int = -1) -> jax.Array:
    """Gumbel-max draw from ``softmax(logits)`` (``d`` random numbers).

    Args:
        key: JAX PRNG key.
        logits: unnormalized log-probabilities.
        axis: the axis of ``logits`` holding the categories.

    Returns:
        The drawn index, with ``axis`` removed.
    """
    return jax.random.categorical(key, logits, axis=axis).astype(jnp.int32)


def bernoulli_half(key: jax.Array, shape: tuple) -> jax.Array:
    """i.i.d. fair coins (bool) from ``ceil(n/32)`` random words.

    Args:
        key: JAX PRNG key.
        shape: shape of the output.

    Returns:
        A bool array of fair coins.
    """
    n = 1
    for s in shape:
        n *= int(s)
    words = -(-n // 32)
    bits = jax.random.bits(key, (words,), dtype=jnp.uint32)
    shifts = jnp.arange(32, dtype=jnp.uint32)
    coins = ((bits[:, None] >> shifts[None, :]) & 1).astype(jnp.bool_).reshape(-1)[:n]
    return coins.reshape(shape)


def bernoulli_bits(key: jax.Array, q: jax.Array, shape: tuple) -> jax.Array:
    """i.i.d. Bernoulli(q) (bool) from 8 random bits each: ``P(1) = round(256 q) / 256``.

    ``q`` broadcasts against ``shape``. Four coins per random 32-bit word.

    Args:
        key: JAX PRNG key.
        q: success probabilities, broadcast against ``shape`` (resolution 1/256).
        shape: shape of the output.

    Returns:
        A bool array of Bernoulli(q) draws.
    """
    n = 1
    for s in shape:
        n *= int(s)
    words = -(-n // 4)
    bits = jax.random.bits(key, (words,), dtype=jnp.uint32)
    shifts = jnp.arange(0, 32, 8, dtype=jnp.uint32)
    bytes_ = ((bits[:, None] >> shifts[None, :]) & 0xFF).reshape(-1)[:n].reshape(shape)
    thresh = jnp.round(jnp.asarray(q) * 256.0).astype(jnp.uint32)
    return bytes_ < thresh


def log_uniform(key: jax.Array, shape: tuple = ()) -> jax.Array:
    """``log U`` for ``U ~ Uniform(0, 1]`` (never ``-inf``).

    Args:
        key: JAX PRNG key.
        shape: shape of the output.

    Returns:
        ``log U`` for ``U ~ Uniform(0, 1]``, finite.
    """
    u = jax.random.uniform(key, shape, minval=jnp.finfo(jnp.float32).tiny, maxval=1.0)
    return jnp.log(u)
