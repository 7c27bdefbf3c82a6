"""Adaptive adversaries for online convex optimization: they watch the iterates played
(docs/guide/concepts.md#adversary; the experts analogues are in :mod:`jaxdp.experts.adaptive`).

The loss of round ``t`` depends on the iterates of rounds ``< t`` only
(:class:`jaxdp.core.types.AdaptiveAdversary`). "Near-Optimal Algorithms for Private Online Optimization in the
Realizable Regime" (Section 2) restricts itself to oblivious adversaries and notes that its algorithms' privacy
holds against adaptive ones; these adversaries test what happens to their regret.

* :func:`toward_last_iterate` — the linear loss ``g_t = L x_{t-1} / ||x_{t-1}||`` pointing at the
  previous iterate (``L e_0`` while that iterate is 0).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..core.types import AdaptiveAdversary, fdt
from ..core.validation import check_positive, check_positive_int, params_type_check

__all__ = ["TowardIterateParams", "toward_iterate_params", "toward_last_iterate"]


class TowardIterateParams(NamedTuple):
    """Parameters of :func:`toward_last_iterate` (:func:`toward_iterate_params`).

    Attributes:
        L: the gradient norm ``||g_t|| = L``.
    """
    L: jax.Array


def toward_iterate_params(L: float = 1.0) -> TowardIterateParams:
    """Validated parameters for :func:`toward_last_iterate`.

    Args:
        L: the gradient norm (> 0).

    Returns:
        :class:`TowardIterateParams`.
    """
    check_positive("L", L)
    return TowardIterateParams(L=jnp.asarray(L, fdt()))


class _Last(NamedTuple):
    x: jax.Array   # (d,) the iterate played in the previous round (0 before round 1)
    L: jax.Array


def toward_last_iterate(d: int) -> AdaptiveAdversary:
    """Linear losses ``g_t = L x_{t-1} / ||x_{t-1}||`` for ``linear_problem(d)``: the OCO analogue of
    :func:`jaxdp.experts.adaptive.punish_last_action`.

    The loss ``<g_t, x_t>`` is largest when the learner stays where it was: a learner whose iterate moves
    little between rounds (a lazy or a heavily regularised one) pays about ``L ||x||`` per round, while the
    best fixed point pays ``-D ||sum_t g_t||``. While the previous iterate is 0 (and in round 0) the
    gradient is the fixed direction ``L e_0``.

    Args:
        d: the dimension.

    Returns:
        The :class:`jaxdp.core.types.AdaptiveAdversary` (params :class:`TowardIterateParams`).
    """
    d = check_positive_int("d", d)
    e0 = jnp.zeros((d,), fdt()).at[0].set(1.0)

    def init(key, params):
        del key   # deterministic given the iterates
        return _Last(x=jnp.zeros((d,), fdt()), L=jnp.asarray(params.L, fdt()))

    def loss(s, t):
        n = jnp.linalg.norm(s.x)
        return s.L * jnp.where(n > 0, s.x / jnp.where(n > 0, n, 1.0), e0)

    def observe(s, t, action, outputs):
        return s._replace(x=jnp.asarray(action, fdt()))

    # adv_params of the wrong type are refused before compiling (jaxdp.core.validation.check_adversary_params)
    loss.host_check = params_type_check(  # type: ignore[attr-defined]
        "toward_last_iterate", TowardIterateParams, "toward_iterate_params(L)")
    return AdaptiveAdversary(init=init, loss=loss, observe=observe)
