"""Random-number primitives that count draws (spec §3.4, DESIGN.md performance notes).

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

import jax
import jax.numpy as jnp

__all__ = ["sample_categorical", "sample_categorical_gumbel", "bernoulli_half", "bernoulli_bits", "log_uniform"]


def sample_categorical(key: jax.Array, logits: jax.Array, axis: int = -1) -> jax.Array:
    """Exact draw from ``softmax(logits)`` with one uniform (inverse CDF).

    ``p = exp(logits - logsumexp(logits))``; returns the first index ``i`` with
    ``cumsum(p)[i] > U * sum(p)`` (scaling ``U`` by the computed total makes
    the draw robust to round-off in the normalization; an index with
    probability 0 is never returned). Entries with logit ``-inf`` are never
    drawn.
    """
    if axis != -1:
        logits = jnp.moveaxis(logits, axis, -1)
    lse = jax.nn.logsumexp(logits, axis=-1, keepdims=True)
    p = jnp.exp(logits - lse)
    c = jnp.cumsum(p, axis=-1)
    u = jax.random.uniform(key, logits.shape[:-1] + (1,), dtype=c.dtype) * c[..., -1:]
    idx = jnp.sum(c <= u, axis=-1)
    # guard against round-off: never return an index past the last positive-probability entry
    last = logits.shape[-1] - 1 - jnp.argmax(jnp.flip(p > 0, axis=-1), axis=-1)
    return jnp.minimum(idx, last).astype(jnp.int32)


def sample_categorical_gumbel(key: jax.Array, logits: jax.Array, axis: int = -1) -> jax.Array:
    """Gumbel-max draw from ``softmax(logits)`` (``d`` random numbers)."""
    return jax.random.categorical(key, logits, axis=axis).astype(jnp.int32)


def bernoulli_half(key: jax.Array, shape: tuple) -> jax.Array:
    """i.i.d. fair coins (bool) from ``ceil(n/32)`` random words."""
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
    """``log U`` for ``U ~ Uniform(0, 1]`` (never ``-inf``)."""
    u = jax.random.uniform(key, shape, minval=jnp.finfo(jnp.float32).tiny, maxval=1.0)
    return jnp.log(u)
