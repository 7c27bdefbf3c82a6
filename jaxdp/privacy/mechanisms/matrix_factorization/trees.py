r"""Tree-based continual counters: the binary tree and Honaker's variance-reduced tree.

**Binary tree** (Dwork et al. 2010; Chan, Shi & Song 2011; Kairouz et al. 2021, App. B.1). Round
``t`` closes the dyadic node of level ``i = ctz(t)`` covering rounds ``(t - 2^i, t]`` and gives it
fresh noise; the release at ``t`` sums the ``popcount(t)`` nodes of the binary expansion of ``t``.
As a factorization ``A = B C``: ``C`` (``n x n``) has row ``t`` the indicator of that node, ``B`` row
``t`` the indicator of the nodes in the expansion, so ``||B_t||^2 = popcount(t)`` and, with
``L = bit_length(n)`` levels, ``sens(C) = sqrt(L)`` (round 1 is in the ``L`` nodes ending at
``1, 2, 4, ..., 2^{L-1}``). The streaming form is the lean tree
(:func:`jaxdp.privacy.mechanisms.tree.suffix_tree_advance`): suffix sums of the open nodes' noise, one row
read and one written per round. DP-FTRL's default noise (``jaxdp.oco.dp_ftrl.LeanTree``) is this counter's
:meth:`BinaryTree.advance` fed with the scaled draws.

**Honaker's tree** (Honaker 2015, "Efficient use of differentially private binary trees";
the streaming, bottom-up form of Kairouz et al. 2021). Every *complete* dyadic node is noised (the
right children too: a round still enters at most one node per level, so ``sens(C) = sqrt(L)`` is
unchanged), and a node's value is re-estimated from its own noisy value ``y`` and the estimates of
its two children by inverse-variance weighting:

.. math::

    \hat v_\ell = w_\ell\, y_\ell + (1 - w_\ell)(\hat v^{\rm left}_{\ell-1} + \hat v^{\rm right}_{\ell-1}),\qquad
    v_0 = 1,\quad v_\ell = \frac{2 v_{\ell-1}}{2 v_{\ell-1} + 1},\quad w_\ell = v_\ell,

``v_l`` the variance of a level-``l`` estimate per unit node variance (``v_l -> 1/2``). Only
complete subtrees are used, so the estimate of a node is final when it closes (no top-down pass:
its parent is not complete yet when the node is released). The release at ``t`` sums the
estimates of the nodes of the expansion of ``t`` (disjoint subtrees, independent):
``||B_t||^2 = sum_{l in bits(t)} v_l``.

Streaming: round ``t`` closes the nodes of levels ``0..i`` (``i = ctz(t)``): the right children of
levels ``< i`` and the left child at level ``i``. Only the estimate of the level-``i`` node is ever
used again, and it is ``F + sum_{l<i} a_{i,l} left_l``, with ``left_l`` the stored estimates of the
open left children (all of which were released before) and ``F`` a combination of the ``i + 1``
fresh node noises that no release ever sees separately. For Gaussian noise ``F`` is one Gaussian of
variance ``f_i^2 = sum_l c_{i,l}^2``, so the generator draws **one** normal per round, like the tree;
for Laplace noise it draws the ``H`` level noises of the round (a sum of Laplace variables is not
Laplace). Carried state: the ``H`` left-child estimates.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax.numpy as jnp
import numpy as np

from ....core.validation import check_positive_int
from ..tree import ctz, suffix_tree_advance
from .base import ContinualCounter, CounterState, _check_kind

__all__ = ["BinaryTree", "HonakerTree", "honaker_variances"]


@dataclasses.dataclass(frozen=True)
class BinaryTree(ContinualCounter):
    """The binary-tree counter (module docstring): ``sens = sqrt(L)``, ``||B_t||^2 = popcount(t)``.

    Carried state: ``H + 1`` rows (``H = bit_length(T_max)``), one draw per round (Gaussian or Laplace).
    """

    name: ClassVar[str] = "tree"

    def rows(self, T_max: int) -> int:
        return int(check_positive_int("T_max", T_max)).bit_length() + 1

    def advance(self, state, z, kind="gaussian"):
        _check_kind(kind)
        t = state.t + 1
        buf, row = suffix_tree_advance(state.buf, t, z[0])
        return CounterState(buf=buf, t=t), row

    def sensitivity(self, n, norm="l2"):
        L = int(check_positive_int("n", n)).bit_length()
        return float(np.sqrt(L)) if norm == "l2" else float(L)

    def row_norms_sq(self, n):
        return np.bitwise_count(np.arange(1, check_positive_int("n", n) + 1, dtype=np.int64)).astype(np.float64)

    def dense(self, n):
        n = check_positive_int("n", n)
        C = np.zeros((n, n))
        B = np.zeros((n, n))
        for t in range(1, n + 1):
            C[t - 1, t - (1 << ctz(t)):t] = 1.0
            s = t
            while s:
                B[t - 1, s - 1] = 1.0
                s &= s - 1
        return B, C


def honaker_variances(H: int) -> np.ndarray:
    """``v_0..v_{H-1}``: variance of a level-``l`` Honaker estimate per unit node variance.

    A level-``l`` estimate combines the node's own noisy value (variance 1) with the sum of its two children's
    estimates (variance ``2 v_{l-1}``) by inverse-variance weighting (Honaker 2015):
    ``v_0 = 1``, ``v_l = 2 v_{l-1} / (2 v_{l-1} + 1)``.

    Args:
        H: the number of tree levels.

    Returns:
        The float64 array ``(v_0, ..., v_{H-1})``, decreasing from 1 towards 1/2.
    """
    v = np.ones(H)
    for l in range(1, H):
        v[l] = 2 * v[l - 1] / (2 * v[l - 1] + 1)
    return v


def _honaker_tables(H: int):
    """``a[i, l]`` (weight of the stored left estimate of level ``l < i`` in the new level-``i`` estimate),
    ``c[i, l]`` (weight of the fresh level-``l`` node noise, ``l <= i``) and ``f[i] = ||c[i]||_2``."""
    w = honaker_variances(H)
    a = np.zeros((H, H))
    c = np.zeros((H, H))
    for i in range(H):
        for l in range(i + 1):
            tail = np.prod(1.0 - w[l + 1:i + 1])
            c[i, l] = w[l] * tail
            if l < i:
                a[i, l] = tail
    return w, a, c, np.sqrt(np.sum(c * c, axis=1))


@dataclasses.dataclass(frozen=True)
class HonakerTree(ContinualCounter):
    """Honaker's variance-reduced tree, streaming bottom-up form (module docstring).

    Same sensitivity as :class:`BinaryTree`; ``||B_t||^2 = sum_{l in bits(t)} v_l`` (``v_l -> 1/2``, so about
    half the tree's variance at deep levels). Carried state: ``H`` rows; one normal per round (Gaussian) or
    ``H`` Laplace draws per round.
    """

    name: ClassVar[str] = "honaker"

    def rows(self, T_max: int) -> int:
        return int(check_positive_int("T_max", T_max)).bit_length()

    def draw_count(self, state, kind="gaussian"):
        return 1 if kind == "gaussian" else state.buf.shape[0]

    def advance(self, state, z, kind="gaussian"):
        _check_kind(kind)
        left = state.buf
        H = left.shape[0]
        dtype = left.dtype
        t = state.t + 1
        i = ctz(t)
        lev = jnp.arange(H, dtype=jnp.int32).reshape((H,) + (1,) * (left.ndim - 1))
        w, a, _, f = _honaker_tables(H)
        if kind == "gaussian":
            at_i = jnp.arange(H, dtype=jnp.int32) == i
            arow = jnp.sum(jnp.where(at_i[:, None], jnp.asarray(a, dtype), 0), axis=0)        # (H,)
            fi = jnp.sum(jnp.where(at_i, jnp.asarray(f, dtype), 0))
            new = fi * z[0] + jnp.tensordot(arow, left, axes=1)
        else:
            est = z[0]
            new = est
            for l in range(1, H):
                est = w[l] * z[l] + (1.0 - w[l]) * (left[l - 1] + est)
                new = jnp.where(i == l, est, new)
        left = jnp.where(lev == i, new[None], left)
        bits = ((t >> lev) & 1).astype(jnp.bool_)
        return CounterState(buf=left, t=t), jnp.sum(jnp.where(bits, left, 0), axis=0)

    sensitivity = BinaryTree.sensitivity

    def row_norms_sq(self, n):
        n = check_positive_int("n", n)
        v = honaker_variances(int(n).bit_length())
        t = np.arange(1, n + 1, dtype=np.int64)
        out = np.zeros(n)
        for l in range(len(v)):
            out += ((t >> l) & 1) * v[l]
        return out

    def nodes(self, n: int) -> list[tuple[int, int]]:
        """The complete dyadic nodes ``(level l, index k)`` (covering rounds ``((k-1) 2^l, k 2^l]``) over ``n``
        rounds, in the order of the rows of :meth:`dense`'s ``C``: by closing round, lower levels first."""
        n = check_positive_int("n", n)
        out = []
        for t in range(1, n + 1):
            out += [(l, t >> l) for l in range(ctz(t) + 1)]
        return out

    def dense(self, n):
        n = check_positive_int("n", n)
        nodes = self.nodes(n)
        idx = {nd: r for r, nd in enumerate(nodes)}
        C = np.zeros((len(nodes), n))
        for (l, k), r in idx.items():
            C[r, (k - 1) << l:k << l] = 1.0
        w = honaker_variances(max(1, int(n).bit_length()))
        est = {}
        for (l, k) in nodes:                      # children close before (or with, lower first) their parent
            e = np.zeros(len(nodes))
            e[idx[(l, k)]] = 1.0
            if l > 0:
                e = w[l] * e + (1.0 - w[l]) * (est[(l - 1, 2 * k - 1)] + est[(l - 1, 2 * k)])
            est[(l, k)] = e
        B = np.zeros((n, len(nodes)))
        for t in range(1, n + 1):
            for l in range(int(t).bit_length()):
                if (t >> l) & 1:
                    B[t - 1] += est[(l, t >> l)]
        return B, C
