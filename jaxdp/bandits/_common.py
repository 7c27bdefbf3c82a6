r"""Shared pieces of the bandit learners: the checked params decorator, their factory decorator, tie-breaking and confidence radii."""
from __future__ import annotations

import functools
import math
from typing import Callable

import jax
import jax.numpy as jnp

from ..core.types import Learner, fdt
from ..core.validation import check_positive_int, checked_params

__all__ = ["checked_params", "arms_factory", "argmax_priority", "random_priority", "laplace_sum_radius"]

SQRT8 = math.sqrt(8.0)
TWO_SQRT2 = 2.0 * math.sqrt(2.0)


def arms_factory(build: Callable[[int], Learner]) -> Callable[[int], Learner]:
    """Decorator of the learner factories whose only argument is the number of arms ``K``: the factory checks ``K``
    (a positive int) before ``build`` sees it and caches one learner per ``K``.

    Args:
        build: ``K -> Learner``, called with the checked ``K``.

    Returns:
        The factory (``build``'s name, docstring and signature), cached as with ``functools.lru_cache``.
    """

    @functools.lru_cache(maxsize=None)
    @functools.wraps(build)
    def factory(K: int) -> Learner:
        return build(check_positive_int("K", K))

    return factory


def random_priority(key: jax.Array, K: int) -> jax.Array:
    """A uniformly random strict order of the ``K`` arms (a permutation, as floats): the tie-break.

    Args:
        key: JAX PRNG key.
        K: the number of arms.

    Returns:
        The ``(K,)`` priorities, a permutation of ``0, ..., K - 1`` in the floating dtype of :func:`jaxdp.core.types.fdt`.
    """
    return jax.random.permutation(key, K).astype(fdt())


def argmax_priority(index: jax.Array, priority: jax.Array) -> jax.Array:
    """``argmax index``; ties go to the arm of highest ``priority`` (a random order drawn at ``init``).

    With all indices tied (every arm unpulled, index ``+inf``) this plays the arms in the
    uniformly random order of ``priority``, as SMPyBandits' ``IndexPolicy.choice`` does (it
    draws a fresh uniform tie-break at every tie; here the order is drawn once per run, which
    costs no random number per round).

    Args:
        index: the ``(K,)`` indices of the arms.
        priority: the ``(K,)`` tie-break priorities (distinct, non-negative; :func:`random_priority`).

    Returns:
        The chosen arm (int32 scalar).
    """
    top = jnp.max(index)
    return jnp.argmax(jnp.where(index == top, priority, -1.0)).astype(jnp.int32)


def laplace_sum_radius(m, L, b):
    """``u`` with ``P(Σ_{j ≤ m}  Z_j ≥ u) ≤ e^{-L}`` for i.i.d. ``Z_j ~ Lap(b)``.

    Derivation: ``E e^{λ Z} = (1 - b²λ²)⁻¹ ≤ e^{2 b² λ²}``
    for ``|λ| ≤ 1/(√2 b)`` (``-ln(1 - x) <= 2x`` for ``x <= 1/2``). Chernoff gives
    ``P(Σ Z_j ≥ u) ≤ exp(-min(u²/(8 m b²), u/(2√2 b)))``, so
    ``u = b max(sqrt(8 m L), 2√2 L)`` suffices. The same bound holds for the lower tail.

    Args:
        m: the number of Laplace terms in the sum (array or scalar, ``>= 0``).
        L: the log of the inverse failure probability (e.g. ``4 ln n``).
        b: the Laplace scale.

    Returns:
        The radius ``b max(sqrt(8 m L), 2√2 L)`` (broadcast over the arguments).
    """
    return b * jnp.maximum(SQRT8 * jnp.sqrt(m * L), TWO_SQRT2 * L)
