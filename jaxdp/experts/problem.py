"""The experts problem (prediction from expert advice, OPE): actions are
indices in ``[d]``, a loss is a vector in ``[0, 1]^d`` (spec §0.3)."""
from __future__ import annotations

import functools

import jax.numpy as jnp

from ..core.types import Problem

__all__ = ["experts_problem"]


@functools.lru_cache(maxsize=None)
def experts_problem() -> Problem:
    """``value(l, x) = l[x]``; comparator: the cumulative loss vector, ``best = min_i L_T(i)``."""

    def value(loss, x):
        return loss[x]

    def stats_init(loss):
        return jnp.zeros(loss.shape, jnp.result_type(float))

    def stats_update(stats, loss):
        return stats + loss

    def best(stats):
        return jnp.min(stats)

    def best_action(stats):
        return jnp.argmin(stats)

    return Problem(value=value, grad=None, stats_init=stats_init, stats_update=stats_update,
                   best=best, best_action=best_action)
