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

Two storage layouts, same arithmetic (bit-identical totals):

* :class:`Compensated` keeps ``sum`` and ``comp`` in two arrays. Simple, but an
  update has two outputs that both read both inputs, and XLA's CPU backend
  compiles that as two loops over the arrays plus copies of the old values
  (the first loop overwrites what the second still reads): for a ``d``-vector
  updated every round that was most of the 30% that compensation cost Hedge
  (NOTES.md, "Throughput at scale").
* *Packed* (:func:`packed_zeros`, :func:`packed_add`, :func:`packed_total`):
  ``sum`` and ``comp`` are the real and imaginary parts of one complex array
  (``complex64`` for ``float32``). Only ``real``/``imag``/``complex`` touch the
  complex values, which are exact, so the arithmetic is Kahan's, unchanged; the
  update has one output, one loop, and no copies. Used for every per-round
  ``d``-vector: the comparators' cumulative losses (``jaxdp.experts.problem``,
  ``jaxdp.oco.problems``), Hedge's leader-relative cumulative losses
  (``jaxdp.experts.hedge``) and DP-FTRL's prefix sum (``jaxdp.oco.dp_ftrl``).

:func:`two_sum` and :func:`fast_two_sum` are the error-free transformations
(Knuth; Dekker) used to move a total by a shift without losing its low bits.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

__all__ = ["Compensated", "kahan_add", "comp_zeros", "comp_add", "comp_total", "two_sum", "fast_two_sum",
           "packed_zeros", "packed_add", "packed_total", "packed_sum", "packed_comp", "pack", "unpack",
           "complex_dtype"]


def kahan_add(s, c, x):
    """One Kahan step on arrays: returns ``(s', c')`` with ``s' ~ s + x`` and ``c'`` the new compensation.

    The compensated total is ``s' - c'``; ``s'`` alone is within one ulp of it.

    Args:
        s: running sum.
        c: compensation.
        x: the value to add.

    Returns:
        ``(s', c')``, the new sum and compensation.
    """
    y = x - c
    t = s + y
    c = (t - s) - y
    return t, c


class Compensated(NamedTuple):
    """A compensated running sum of a pytree: ``sum`` (the total, rounded) and ``comp``
    (Kahan's compensation; the exact-to-a-few-ulps total is ``sum - comp``).

    Attributes:
        sum: the running total (rounded), a pytree.
        comp: Kahan's compensation, same structure as ``sum``; the total is ``sum - comp``.
    """

    sum: Any
    comp: Any


def comp_zeros(tree: Any, dtype=None) -> Compensated:
    """A zero compensated sum shaped like ``tree`` (leaf dtypes, or ``dtype``).

    Args:
        tree: a pytree giving the leaves' shapes (and dtypes).
        dtype: dtype for every leaf, or ``None`` to keep the leaves' dtypes.

    Returns:
        A zero :class:`Compensated`.
    """
    z = jax.tree_util.tree_map(lambda a: jnp.zeros(jnp.shape(a), dtype or jnp.result_type(a)), tree)
    return Compensated(sum=z, comp=jax.tree_util.tree_map(jnp.zeros_like, z))


def comp_add(acc: Compensated, x: Any) -> Compensated:
    """Add the pytree ``x`` (same structure as ``acc.sum``) to a compensated sum.

    Args:
        acc: the compensated sum.
        x: the pytree to add, shaped like ``acc.sum``.

    Returns:
        The updated :class:`Compensated`.
    """
    treedef: Any
    leaves_s, treedef = jax.tree_util.tree_flatten(acc.sum)
    leaves_c = treedef.flatten_up_to(acc.comp)
    leaves_x = treedef.flatten_up_to(x)
    out = [kahan_add(s, c, jnp.asarray(v, s.dtype)) for s, c, v in zip(leaves_s, leaves_c, leaves_x)]
    return Compensated(sum=treedef.unflatten([o[0] for o in out]), comp=treedef.unflatten([o[1] for o in out]))


def comp_total(acc) -> Any:
    """The compensated total ``sum - comp`` (rounded to the accumulator's dtype).

    Accepts a :class:`Compensated` or a packed compensated pytree (complex leaves, :func:`packed_zeros`).

    Args:
        acc: a :class:`Compensated` or a packed compensated pytree (complex leaves).

    Returns:
        The total ``sum - comp``, in the accumulator's dtype.
    """
    if isinstance(acc, Compensated):
        return jax.tree_util.tree_map(lambda s, c: s - c, acc.sum, acc.comp)
    return packed_total(acc)


def two_sum(a, b):
    """Knuth's TwoSum: ``(s, e)`` with ``s = fl(a + b)`` and ``a + b = s + e`` exactly (6 flops, any ``a``, ``b``).

    Args:
        a, b: the two summands (floats or float arrays of broadcastable shapes, same dtype).

    Returns:
        ``(s, e)``: the rounded sum ``fl(a + b)`` and its rounding error, so that ``a + b = s + e`` exactly.
    """
    s = a + b
    bv = s - a
    return s, (a - (s - bv)) + (b - bv)


def fast_two_sum(a, b):
    """Dekker's Fast2Sum: ``(s, e)`` with ``s = fl(a + b)`` and ``a + b = s + e`` exactly when
    ``|a| >= |b|`` (or ``a + b`` is exact); 3 flops.

    Args:
        a: the larger summand in magnitude.
        b: the smaller summand in magnitude (the result is exact only if ``|a| >= |b|``).

    Returns:
        ``(s, e)``: the rounded sum ``fl(a + b)`` and its rounding error ``e = b - (s - a)``.
    """
    s = a + b
    return s, b - (s - a)


# --------------------------------------------------------------------------- packed layout


def complex_dtype(dtype) -> jnp.dtype:
    """The complex dtype whose parts are ``dtype`` (``float32 -> complex64``, ``float64 -> complex128``).

    Args:
        dtype: a float32 or float64 dtype (anything ``jnp.dtype`` accepts).

    Returns:
        ``complex64`` or ``complex128``.

    Raises:
        TypeError: ``dtype`` is neither float32 nor float64.
    """
    dtype = jnp.dtype(dtype)
    if dtype == jnp.float64:
        return jnp.dtype(jnp.complex128)
    if dtype == jnp.float32:
        return jnp.dtype(jnp.complex64)
    raise TypeError(f"packed compensated sums need float32 or float64 parts, got {dtype}")


def packed_zeros(tree: Any, dtype=None) -> Any:
    """A zero packed compensated sum shaped like ``tree``: complex leaves whose real part is the
    running sum and imaginary part Kahan's compensation (parts: the leaf dtypes, or ``dtype``;
    integer leaves get the default float).

    Args:
        tree: a pytree of arrays (or shapes-and-dtypes) giving each leaf's shape and dtype.
        dtype: the float dtype of the parts for every leaf; ``None`` uses each leaf's own dtype.

    Returns:
        A pytree like ``tree`` of complex zeros (``complex64`` for float32 parts, ``complex128`` for float64).
    """
    def z(a):
        dt = dtype or jnp.result_type(a)
        if not jnp.issubdtype(dt, jnp.floating):
            dt = jnp.result_type(float)
        return jnp.zeros(jnp.shape(a), complex_dtype(dt))

    return jax.tree_util.tree_map(z, tree)


def _packed_add_leaf(z, x):
    s, c = jnp.real(z), jnp.imag(z)
    t, c = kahan_add(s, c, jnp.asarray(x, s.dtype))
    return jax.lax.complex(t, c)


def packed_add(z: Any, x: Any) -> Any:
    """Add the pytree ``x`` to a packed compensated sum (the Kahan step of :func:`kahan_add`, one output per leaf).

    Args:
        z: the packed compensated sum (complex leaves: sum in the real part, compensation in the imaginary).
        x: the values to add, a pytree with ``z``'s structure (each leaf cast to the part dtype).

    Returns:
        The updated packed sum, same structure and dtypes as ``z``.
    """
    treedef: Any
    leaves, treedef = jax.tree_util.tree_flatten(z)
    return treedef.unflatten([_packed_add_leaf(a, v) for a, v in zip(leaves, treedef.flatten_up_to(x))])


def packed_total(z: Any) -> Any:
    """The compensated total ``real - imag`` of a packed sum (rounded to the part dtype).

    Args:
        z: a packed compensated sum.

    Returns:
        A pytree of real arrays: ``sum - comp`` per leaf.
    """
    return jax.tree_util.tree_map(lambda a: jnp.real(a) - jnp.imag(a), z)


def packed_sum(z: Any) -> Any:
    """The running sum alone (the real part; within an ulp or so of the compensated total).

    Args:
        z: a packed compensated sum.

    Returns:
        A pytree of real arrays: the running sums.
    """
    return jax.tree_util.tree_map(jnp.real, z)


def packed_comp(z: Any) -> Any:
    """Kahan's compensation (the imaginary part): the total is ``packed_sum(z) - packed_comp(z)``.

    Args:
        z: a packed compensated sum.

    Returns:
        A pytree of real arrays: the compensations.
    """
    return jax.tree_util.tree_map(jnp.imag, z)


def pack(acc: Compensated) -> Any:
    """A :class:`Compensated` as a packed pytree (exact).

    Args:
        acc: the two-array accumulator.

    Returns:
        A pytree of complex arrays with ``acc.sum`` as the real and ``acc.comp`` as the imaginary parts.
    """
    return jax.tree_util.tree_map(jax.lax.complex, acc.sum, acc.comp)


def unpack(z: Any) -> Compensated:
    """A packed pytree as a :class:`Compensated` (exact).

    Args:
        z: a packed compensated sum.

    Returns:
        ``Compensated(sum=real parts, comp=imaginary parts)``.
    """
    return Compensated(sum=packed_sum(z), comp=packed_comp(z))
