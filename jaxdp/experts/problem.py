"""The experts problem (prediction from expert advice, OPE): actions are
indices in ``[d]``, a loss is a vector in ``[0, 1]^d``."""
from __future__ import annotations

import functools

import jax.numpy as jnp

from ..core.accumulate import packed_add, packed_total, packed_zeros
from ..core.types import Problem

__all__ = ["experts_problem"]


@functools.lru_cache(maxsize=None)
def experts_problem() -> Problem:
    """``value(l, x) = l[x]``; comparator: the cumulative loss vector, ``best = min_i L_T(i)``.

    The cumulative losses are a compensated (Kahan) sum
    (``jaxdp.core.accumulate``): accurate to a few ulps at ``T = 10^7`` in
    float32 for any losses in ``[0, 1]``, not only {0, 1} ones. They are stored
    packed (one complex array: running sum and compensation), which compiles to
    one loop per round; ``comp_total(stats)`` gives the totals.

    Returns:
        The experts :class:`jaxdp.Problem`.
    """

    def value(loss, x):
        return loss[x]

    def stats_init(loss):
        return packed_zeros(loss, jnp.result_type(float))

    def stats_update(stats, loss):
        return packed_add(stats, loss)

    def best(stats):
        return jnp.min(packed_total(stats))

    def best_action(stats):
        return jnp.argmin(packed_total(stats))

    return Problem(value=value, grad=None, stats_init=stats_init, stats_update=stats_update,
                   best=best, best_action=best_action)
