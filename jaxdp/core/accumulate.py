"""Compensated (Kahan) accumulators for long-horizon sums in float32.

A plain float32 running sum of ``T`` terms loses about ``log2(T)`` bits: at
``T = 10^7`` with losses in ``[0, 1]`` the total is ~``5e6``, whose float32
spacing is 0.5, and the rounding errors of ten million additions add up to
whole units. Kahan's compensated sum carries the rounding error of every
addition in a second word ``c`` and feeds it back into the next one:

    y = x - c;   t = s + y;   c = (t - s) - y;   s = t.

Its error is at most ``2 eps |S| + O(T eps^2) sum |x_t|`` (Higham, *Accuracy
and Stability of Numerical Algorithms*, Thm 4.8): a few ulps of the total at
``T = 10^7`` in float32 (``T eps^2 ~ 1e-7``), and the stored ``s`` itself is
the compensated total rounded to float32 (``|c| <= ulp(s)``). XLA does not
reassociate floating-point additions, so the compensation survives
compilation on CPU, GPU and TPU. The cost is one extra word per accumulated
value and three extra additions per update.

Used for the simulator's scalar totals, the comparators' cumulative losses
(``jaxdp.experts.problem``, ``jaxdp.oco.problems``) and Hedge's cumulative
losses (``jaxdp.experts.hedge``).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

__all__ = ["Compensated", "kahan_add", "comp_zeros", "comp_add", "comp_total"]


def kahan_add(s, c, x):
    """One Kahan step on arrays: returns ``(s', c')`` with ``s' ~ s + x`` and ``c'`` the new compensation.

    The compensated total is ``s' - c'``; ``s'`` alone is within one ulp of it.
    """
    y = x - c
    t = s + y
    c = (t - s) - y
    return t, c


class Compensated(NamedTuple):
    """A compensated running sum of a pytree: ``sum`` (the total, rounded) and ``comp``
    (Kahan's compensation; the exact-to-a-few-ulps total is ``sum - comp``)."""

    sum: Any
    comp: Any


def comp_zeros(tree: Any, dtype=None) -> Compensated:
    """A zero compensated sum shaped like ``tree`` (leaf dtypes, or ``dtype``)."""
    z = jax.tree_util.tree_map(lambda a: jnp.zeros(jnp.shape(a), dtype or jnp.result_type(a)), tree)
    return Compensated(sum=z, comp=jax.tree_util.tree_map(jnp.zeros_like, z))


def comp_add(acc: Compensated, x: Any) -> Compensated:
    """Add the pytree ``x`` (same structure as ``acc.sum``) to a compensated sum."""
    leaves_s, treedef = jax.tree_util.tree_flatten(acc.sum)
    leaves_c = treedef.flatten_up_to(acc.comp)
    leaves_x = treedef.flatten_up_to(x)
    out = [kahan_add(s, c, jnp.asarray(v, s.dtype)) for s, c, v in zip(leaves_s, leaves_c, leaves_x)]
    return Compensated(sum=treedef.unflatten([o[0] for o in out]), comp=treedef.unflatten([o[1] for o in out]))


def comp_total(acc: Compensated) -> Any:
    """The compensated total ``sum - comp`` (rounded to the accumulator's dtype)."""
    return jax.tree_util.tree_map(lambda s, c: s - c, acc.sum, acc.comp)
