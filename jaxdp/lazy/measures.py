"""Measure families for L2P (LAZY Assumption 3.1; docs/algorithms/primitives.md#hedge; docs/algorithms/lazy.md#setting).

``mw_measure(d)``: multiplicative weights, ``mu_t(x) = exp(-eta sum_{i<t} l_i(x))``
on ``[d]`` (LAZY eq. (2), Lemma 3.9): ``mu_{t+1}(x)/mu_t(x) = e^{-eta l_t(x)}``
and ``D_inf(mu_{t+1}, mu_t) <= eta`` for losses in ``[0, 1]``, so Assumption
3.1 holds with ``eta_div = eta`` and ``delta0 = 0``.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..core.random import sample_categorical
from ..core.validation import check_positive_int
from .l2p import LazyMeasure

__all__ = ["MWMeasureParams", "mw_measure"]


class MWMeasureParams(NamedTuple):
    """Parameters of the MW measure.

    Attributes:
        eta: the MW learning rate.
    """
    eta: jax.Array    # MW step size (= eta_div of Assumption 3.1)


@functools.lru_cache(maxsize=None)
def mw_measure(d: int) -> LazyMeasure:
    """The MW measure family over ``d`` experts (stats: the cumulative loss vector).

    ``sample`` is the one-uniform inverse-CDF draw from ``softmax(-eta cum)``;
    ``summary`` is that probability vector (computed once per batch) and
    ``expected_loss`` its inner product with the round's loss.

    Args:
        d: the number of experts.

    Returns:
        The :class:`LazyMeasure`.
    """
    d = check_positive_int("d", d)
    fdt = jnp.result_type(float)

    def stats_init(loss_example):
        del loss_example
        return jnp.zeros((d,), fdt)

    def stats_update(cum, loss, mp):
        return cum + loss

    def log_ratio(loss, x, mp):
        return -mp.eta * loss[x]

    def sample(key, cum, mp):
        return sample_categorical(key, -mp.eta * cum)

    def summary(cum, mp):
        return jax.nn.softmax(-mp.eta * cum)

    def expected_loss(p, loss):
        return jnp.dot(p, loss)

    return LazyMeasure(stats_init=stats_init, stats_update=stats_update, log_ratio=log_ratio, sample=sample,
                       summary=summary, expected_loss=expected_loss)
