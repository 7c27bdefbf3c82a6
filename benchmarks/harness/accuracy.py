"""The 10^7-round accuracy scenario for cumulative losses, shared by tests/core/test_accumulators.py and
``benchmarks/bench_hedge.py --accuracy`` (one definition of the sequence, its float64 reference and the runs).

Three experts: A loses 0.5 then 0.7, B 0.6 then 0.55 (B falls 6·10⁵ behind and comes back to a tie at
``T = 10^7``: constant, non-dyadic losses, so every float32 rounding of a large gap goes the same way),
C a uniform in [0.3, 0.9] from a hash of the round index (random roundings). The losses are
bit-identical in NumPy and JAX, so the float64 reference is exact for the float32 terms.
"""
from __future__ import annotations

import numpy as np

from jaxdp.core.validation import check_positive, check_positive_int

__all__ = ["T7", "T7_SWITCH", "hash_uniform", "switch_losses", "switch_reference", "run_hedge_switch",
           "run_cheaper_sums", "ulps"]

T7, T7_SWITCH = 10 ** 7, 6 * 10 ** 6


def hash_uniform(t, xp):
    """A float32 uniform in ``[0, 1)`` from the round index, bit-identical in NumPy (``xp=np``) and JAX (``xp=jnp``).

    An integer hash of ``t`` (multiply, xor-shift, multiply, xor-shift on uint32) keeps its top 24 bits.

    Args:
        t: the round indices (uint32 array).
        xp: the array module, ``numpy`` or ``jax.numpy``.

    Returns:
        The float32 uniforms, of the shape of ``t``, multiples of ``2^-24``.
    """
    x = (t * xp.uint32(2654435761)) ^ (t >> 7)
    x = x * xp.uint32(0x85EBCA6B)
    x = x ^ (x >> 13)
    return (x >> 8).astype(xp.float32) * xp.float32(2.0 ** -24)


def switch_losses(t, xp):
    """The losses of the three experts of the scenario (module docstring) in round(s) ``t``.

    Args:
        t: the round indices (uint32 array).
        xp: the array module, ``numpy`` or ``jax.numpy``.

    Returns:
        float32 losses of shape ``t.shape + (3,)``: A ``0.5`` then ``0.7``, B ``0.6`` then ``0.55`` (switching at
        ``T7_SWITCH``), C ``0.3 + 0.6 u`` with ``u`` = :func:`hash_uniform` of ``t``.
    """
    early = t < T7_SWITCH
    a = xp.where(early, xp.float32(0.5), xp.float32(0.7))
    b = xp.where(early, xp.float32(0.6), xp.float32(0.55))
    c = xp.float32(0.3) + xp.float32(0.6) * hash_uniform(t.astype(xp.uint32), xp)
    return xp.stack([a, b, c], axis=-1).astype(xp.float32)


def switch_reference(T: int = T7) -> np.ndarray:
    """float64 sums of the float32 losses of rounds ``0 … T-1`` (in ten chunks): the exact cumulative losses.

    Args:
        T: the number of rounds.

    Returns:
        The ``(3,)`` float64 cumulative losses of the three experts.
    """
    T = check_positive_int("T", T)
    ref = np.zeros(3)
    for c in range(10):
        ref += switch_losses(np.arange(c * T // 10, (c + 1) * T // 10, dtype=np.uint32), np).astype(np.float64).sum(0)
    return ref


def ulps(got, ref) -> np.ndarray:
    """``|got - ref|`` in units of the float32 spacing at ``ref``.

    Args:
        got: the computed values.
        ref: the reference values (float64; broadcast with ``got``).

    Returns:
        The float64 errors in float32 ulps.
    """
    ref = np.asarray(ref, np.float64)
    return np.abs(np.asarray(got, np.float64) - ref) / np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)


def run_hedge_switch(eta: float, T: int = T7, key=None):
    """The library's Hedge (``d = 3``) and the experts comparator on the scenario for ``T`` rounds, one jitted scan.

    Args:
        eta: Hedge's learning rate (``> 0``).
        T: the number of rounds.
        key: JAX PRNG key (``None``: ``jax.random.key(0)``); round ``t`` uses ``fold_in(key, t)``.

    Returns:
        ``(HedgeState, comparator stats)``: the learner's final state and the packed Kahan cumulative losses of
        :func:`jaxdp.experts.experts_problem`.
    """
    import jax
    import jax.numpy as jnp

    from jaxdp.experts import HedgeParams, experts_problem, hedge

    T = check_positive_int("T", T)
    check_positive("eta", eta)
    learner, prob, hp = hedge(3), experts_problem(), HedgeParams(jnp.float32(eta))
    key = jax.random.key(0) if key is None else key

    @jax.jit
    def run(key):
        def body(c, t):
            st, stats = c
            loss = switch_losses(t.astype(jnp.uint32), jnp)
            return (learner.step(jax.random.fold_in(key, t), st, loss, hp)[0], prob.stats_update(stats, loss)), None

        c0 = (learner.init(key, hp), prob.stats_init(jnp.zeros(3, jnp.float32)))
        return jax.lax.scan(body, c0, jnp.arange(T, dtype=jnp.int32))[0]

    return run(key)


def run_cheaper_sums(T: int = T7):
    """The representations the library rejects, accumulated over the same rounds as :func:`run_hedge_switch`.

    One-word float32 gaps to a Kahan leader (``gap, lead, lead_c``), Kahan totals (``s, sc``; the previous
    Hedge) and plain float32 totals (``plain``).

    Args:
        T: the number of rounds.

    Returns:
        ``(gap, lead, lead_c, s, sc, plain)`` as JAX float32 arrays (``(3,)`` vectors and scalar leader terms).
    """
    import jax
    import jax.numpy as jnp

    from jaxdp.core.accumulate import kahan_add

    T = check_positive_int("T", T)

    @jax.jit
    def run():
        def body(c, t):
            gap, lead, lead_c, s, sc, plain = c
            loss = switch_losses(t.astype(jnp.uint32), jnp)
            r = gap + loss
            m = jnp.min(r)
            lead, lead_c = kahan_add(lead, lead_c, m)
            s, sc = kahan_add(s, sc, loss)
            return (r - m, lead, lead_c, s, sc, plain + loss), None

        z, z0 = jnp.zeros(3, jnp.float32), jnp.zeros((), jnp.float32)
        return jax.lax.scan(body, (z, z0, z0, z, z, z), jnp.arange(T, dtype=jnp.int32))[0]

    return run()
