"""The floating-point δ floor of the privacy-critical samplers (docs/guide/auditing.md#floating-point).

A pure ε-DP proof is about exact real-valued noise. The library draws its noise in
float32 (or float64 under ``jax.experimental.enable_x64``), and a float sampler
realises a *quantised* law. This module bounds how far that law is from the exact
one and turns the bound into an additive δ per mechanism invocation.

**The lemma.** If an ε-DP mechanism ``M`` and its float implementation ``M̂`` can be
coupled so that their releases differ with probability at most ``τ`` on every input
(total variation ``≤ τ``), then ``M̂`` is ``(ε, (1 + e^ε) τ)``-DP:
``P[M̂(D) ∈ S] ≤ P[M(D) ∈ S] + τ ≤ e^ε P[M(D') ∈ S] + τ ≤ e^ε (P[M̂(D') ∈ S] + τ) + τ``.
The δ it adds composes like any other δ (basic, advanced, optimal composition and
PLD all treat a per-mechanism ``(ε_i, δ_i)`` with ``Σ δ_i`` added), so a ledger adds
:func:`delta_float` once per invocation.

**The uniform.** ``jax.random.uniform`` in a dtype with ``m`` mantissa bits sets the
``m`` mantissa bits of a float in ``[1, 2)`` at random and subtracts 1: it takes the
``2^m`` values ``k 2^{-m}``, each with probability ``q = 2^{-m}`` (``m = 23``,
``q ≈ 1.19e-7`` in float32; ``m = 52``, ``q ≈ 2.2e-16`` in float64). Couple it with
an exact uniform ``U_c ∈ [U, U + q)``. Every sampler below is a monotone transform of
the uniform followed by a release that is a function of *threshold events*, so the
coupled releases differ only when ``U_c`` crosses a threshold inside one grid cell:
probability ``≤ q`` per threshold crossed.

Per-kind ``τ`` (``q = 2^{-m}``, ``u = q/2`` the unit round-off, ``d`` outcomes or coordinates):

* ``"bernoulli"`` (``uniform < p``: binary randomized response's keep coin,
  ``jax.random.bernoulli``): ``τ = q + u`` (grid cell, plus the rounding of ``p``).
* ``"rr_kary"`` (k-ary randomized response): the keep coin plus the offset
  (``jax.random.randint`` from 32-bit words, bias ``<= 2^{-32}``): ``τ = q + u + 2^{-32}``.
* ``"rr_vector"`` (``d`` independent coins): ``τ = d (q + u)`` (union over coordinates).
* ``"laplace"`` (``jax.random.laplace``: ``sign(v) log1p(-|v|)`` with ``v`` uniform on
  ``[-1 + 2^{-24}, 1)`` in float32): ``τ = 2q`` per coordinate (grid cell plus the
  rounding of ``log1p``). Its tails are *cut*: ``z <= 24 ln 2 ≈ 16.6`` and
  ``z >= -(22 ln 2 + 0.3) ≈ -15.5`` scales in float32; the exact tail mass beyond the cut,
  ``e^{-16.6}/2 ≈ 3e-8``, lies inside the coupling's grid cells. The release must be a
  function of threshold events of ``value + b z`` (AboveThreshold, report-noisy-max,
  comparisons, post-processing by a monotone map). A *raw* float Laplace output is not
  covered by any δ floor: its support depends on the input (Mironov, "On significance of
  the least significant bits for differential privacy", CCS 2012).
* ``"gaussian"`` (``sqrt 2 erfinv(v)``): ``τ = 2q`` per coordinate, same caveat.
* ``"categorical"`` (inverse CDF, ``jaxdp.core.sample_categorical``; exponential
  mechanism / Gibbs sampling over ``d`` outcomes): each of the ``d - 1`` boundaries of the
  inverse CDF is off by the grid cell ``q`` plus the rounding of the cumulative sum
  (``n_add + 3`` round-offs, ``n_add = d`` for ``d <= 32`` and ``2⌈√d⌉`` for the two-level
  sum): ``τ = (d - 1)(q + (n_add + 3) u)``. Rounding of the logits themselves is an ε
  effect (the utility's sensitivity grows by two ulps of its magnitude), not a δ one.
* ``"gumbel"`` (``jax.random.categorical``: Gumbel-max over ``d`` logits): ``τ = 2dq``.

**Counting draws in a program** (what :meth:`jaxdp.privacy.accounting.ledger.Ledger.delta_float` does). A
program is an adaptive composition of mechanisms; under neighbours ``D, D'`` only the mechanisms the
changed record enters (the ones its ledger lists) see different inputs, and every other float step has
the same law under ``D`` and ``D'``, so it costs nothing. Each listed mechanism ``i`` is
``(ε_i, δ_i + (1 + e^{ε_i}) τ_i)``-DP with ``τ_i`` a union bound over its *coupling terms*: one per
float draw **and per threshold decision that draw enters**. A fresh query noise is compared once (one
term); a noise reused across rounds (AboveThreshold's threshold noise, a tree-aggregation node) counts
once per round it is compared in. Draws made every round and discarded (``jnp.where`` on an unused
branch) are not part of any release and cost nothing; draws that are used count however rare they are:
AboveThreshold over ``T`` rounds costs ``T`` queries, not one. The per-decision count needs the later
thresholds of a reused draw not to branch on its own earlier decisions, except by ending its instance:
true for AboveThreshold (only ⊥ continues it) and for tree nodes against the library's oblivious
adversaries (docs/guide/concepts.md#adversary). A threshold noise shared by several positives under
adaptive queries (Lyu et al.'s sparse vector inside a learner) is bounded differently, by
:func:`shared_threshold_terms`. The ``δ_i`` add as in any composition theorem (basic, advanced, optimal;
an ``(ε, δ)`` mechanism is dominated by randomized response with a ``δ`` atom). A Gaussian mechanism has
no single ``ε_i``: apply the lemma to the whole program with its certified ``ε`` instead.

**Raw releases.** A mechanism that publishes its noisy float value itself (``h(S) + Lap(b)``,
``h(S) + N(0, σ²)``, a continuous sample, model iterates) is not covered: the set of floats it can
print depends on its input (Mironov, "On significance of the least significant bits for differential
privacy", CCS 2012), and no coupling bound holds. Its ledger reports *no valid float floor*.

The floor matters most for *pure* DP claims: ``δ = 0`` holds for no float sampler, and an audit cannot verify a pure-DP mechanism below
:data:`FLOAT32_DELTA_FLOOR`. Under ``jax.experimental.enable_x64`` the same samplers draw
52-bit uniforms and the floor drops to ``2^{-52}``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "FLOAT32_UNIFORM_QUANTUM", "FLOAT64_UNIFORM_QUANTUM", "FLOAT32_DELTA_FLOOR", "FLOAT64_DELTA_FLOOR",
    "FLOAT_KINDS", "LAPLACE_TAIL_CUT_FLOAT32", "uniform_quantum", "tv_float", "delta_float",
    "laplace_mean_shift", "shared_threshold_terms",
]

#: Resolution (probability of each value) of ``jax.random.uniform`` in float32: ``2^-23``.
FLOAT32_UNIFORM_QUANTUM: float = 2.0 ** -23
#: The same in float64 (``jax.experimental.enable_x64``): ``2^-52``.
FLOAT64_UNIFORM_QUANTUM: float = 2.0 ** -52
#: The smallest δ at which any float32 sampler's ε-DP guarantee can hold: one grid cell, ``2^-23 ≈ 1.19e-7``.
#: An audit never reports a pure-DP claim as verified below it.
FLOAT32_DELTA_FLOOR: float = FLOAT32_UNIFORM_QUANTUM
#: The float64 floor, ``2^-52 ≈ 2.2e-16``.
FLOAT64_DELTA_FLOOR: float = FLOAT64_UNIFORM_QUANTUM
#: ``jax.random.laplace`` in float32 never returns ``|z|`` above ``24 ln 2 ≈ 16.64`` scales.
LAPLACE_TAIL_CUT_FLOAT32: float = 24.0 * math.log(2.0)

FLOAT_KINDS = ("bernoulli", "rr_kary", "rr_vector", "laplace", "gaussian", "categorical", "gumbel")


def uniform_quantum(dtype: Any = np.float32) -> float:
    """``2^{-m}`` for a float dtype with ``m`` mantissa bits: the probability of each value of ``jax.random.uniform``.

    Args:
        dtype: a floating dtype (``float16``, ``bfloat16``, ``float32``, ``float64``).

    Returns:
        ``2^{-m}``: ``2^{-23}`` for float32, ``2^{-52}`` for float64.

    Raises:
        TypeError: ``dtype`` is not a floating dtype.
    """
    try:
        fi = np.finfo(np.dtype(dtype))
    except (TypeError, ValueError) as e:
        raise TypeError(f"dtype must be a floating dtype (float16, bfloat16, float32, float64), got {dtype!r}") from e
    return 2.0 ** (-int(fi.nmant))


def tv_float(kind: str, dtype: Any = np.float32, *, d: int = 1) -> float:
    """Coupling bound ``τ`` between one float draw of ``kind`` and the exact law (module docstring).

    Args:
        kind: the sampler, one of :data:`FLOAT_KINDS` (``"bernoulli"``, ``"rr_kary"``, ``"rr_vector"``,
            ``"laplace"``, ``"gaussian"``, ``"categorical"``, ``"gumbel"``).
        dtype: the float dtype the sampler draws in.
        d: number of coordinates (``laplace``, ``gaussian``, ``rr_vector``) or of outcomes
            (``categorical``, ``gumbel``); ignored by ``bernoulli`` and ``rr_kary``.

    Returns:
        τ, a float in ``[0, 1]``: e.g. ``2qd`` for ``laplace``, ``(d - 1)(q + (n_add + 3) u)`` for ``categorical``.

    Raises:
        ValueError: unknown ``kind`` or ``d < 1``.
    """
    if kind not in FLOAT_KINDS:
        raise ValueError(f"kind must be one of {FLOAT_KINDS}, got {kind!r}")
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    d = int(d)
    q = uniform_quantum(dtype)
    u = q / 2.0
    if kind == "bernoulli":
        tau = q + u
    elif kind == "rr_kary":
        tau = q + u + 2.0 ** -32
    elif kind == "rr_vector":
        tau = d * (q + u)
    elif kind == "categorical":
        n_add = d if d <= 32 else 2 * int(math.ceil(math.sqrt(d)))
        tau = (d - 1) * (q + (n_add + 3) * u)
    else:  # laplace, gaussian, gumbel
        tau = 2.0 * q * d
    return float(min(1.0, tau))


def delta_float(kind: str, dtype: Any = np.float32, *, eps: float = 0.0, d: int = 1, draws: int = 1) -> float:
    """Additive δ of ``draws`` float invocations of an ε-DP sampler of ``kind`` (per invocation ε = ``eps``).

    ``δ_float = draws · (1 + e^ε) · τ`` with ``τ = tv_float(kind, dtype, d=d)`` (the coupling
    lemma of the module docstring), capped at 1. Add it to the invocation's δ in a ledger.
    ``eps = 0`` gives the floor of a mechanism whose ε is not known (``2τ``).
    Example: one AboveThreshold query compares two Laplace draws, so
    ``delta_float("laplace", eps=eps, d=2)``; in float32 at ε = 1 that is ``1.77e-6``.

    Args:
        kind: the sampler, one of :data:`FLOAT_KINDS`.
        dtype: the float dtype the sampler draws in.
        eps: the ε of one invocation (``>= 0``; ``inf`` or above 700 gives δ = 1).
        d: coordinates or outcomes per draw (see :func:`tv_float`).
        draws: the number of coupling terms (float draws and threshold decisions), ``>= 0``.

    Returns:
        The additive δ, in ``[0, 1]``.

    Raises:
        ValueError: ``eps`` negative or not a number, ``draws`` not an integer ``>= 0``, or an invalid ``kind``/``d``.
    """
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating, np.integer)) or not eps >= 0:
        raise ValueError(f"eps must be a number >= 0 (inf allowed), got {eps!r}")
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 0:
        raise ValueError(f"draws must be an integer >= 0, got {draws!r}")
    tau = tv_float(kind, dtype, d=d)
    if draws == 0 or tau == 0.0:
        return 0.0
    if math.isinf(float(eps)) or float(eps) > 700.0:
        return 1.0
    return float(min(1.0, int(draws) * (1.0 + math.exp(float(eps))) * tau))


def laplace_mean_shift(dtype: Any = np.float32) -> float:
    """A bound on ``E|z_exact − z_float|`` (in scales) under the coupling of ``jax.random.laplace``, in units of ``q``.

    The coupled exact draw lies in the image of the float draw's uniform cell (probability ``q`` each), so
    ``E|Δz| <= q Σ_cells width = q W`` over the float support ``W = 2 m ln 2 + 0.3`` (``m`` mantissa bits:
    the cuts ``(m+1) ln 2`` and ``(m−1) ln 2 + 0.3``), plus ``q`` per side for the exponential tail beyond
    each cut (mean one scale) and ``q`` for the rounding of ``log1p``: ``W + 3``.

    Args:
        dtype: the float dtype of the Laplace draw.

    Returns:
        ``W + 3 = 2 m ln 2 + 3.3`` (so ``E|Δz| <= q (W + 3)`` scales).
    """
    m = int(np.finfo(np.dtype(dtype)).nmant)
    return 2.0 * m * math.log(2.0) + 0.3 + 3.0


def shared_threshold_terms(scale_ratio: float, dtype: Any = np.float64) -> int:
    """Laplace coupling terms (``2q`` each) per query of a sparse vector whose threshold noise is shared by several
    positives and whose queries depend on earlier answers (module docstring).

    Per query: one term for the fresh query noise ``Lap(b_q)`` (its threshold is fixed by the history), and for the
    shared threshold ``τ̂ = L + b_thr z``: with the query noises exact, the answers of the float and the exact
    threshold first differ at a query whose value falls between them, probability at most
    ``E|b_thr Δz| / (2 b_q)`` (the query noise density is at most ``1/(2 b_q)``; its draw is independent of the
    history and of ``τ̂``), i.e. ``(b_thr/b_q) laplace_mean_shift/4`` terms of ``2q``. ``scale_ratio = b_thr/b_q``.
    The default ``dtype`` (float64, the wider support) makes the count valid in float32 too.

    Args:
        scale_ratio: ``b_thr/b_q``, the threshold noise's Laplace scale over the query noise's; finite, ``>= 0``.
        dtype: the dtype whose support bounds the mean shift (:func:`laplace_mean_shift`).

    Returns:
        ``1 + ceil(scale_ratio · laplace_mean_shift(dtype) / 4)``: the ``terms_per_query`` of
        :func:`jaxdp.privacy.accounting.ledger.above_threshold`.

    Raises:
        ValueError: ``scale_ratio`` negative, infinite or not a number.
    """
    if isinstance(scale_ratio, bool) or not isinstance(scale_ratio, (int, float, np.floating, np.integer)) \
            or not 0 <= float(scale_ratio) < math.inf:
        raise ValueError(f"scale_ratio must be a finite number >= 0 (b_thr/b_q), got {scale_ratio!r}")
    return 1 + int(math.ceil(float(scale_ratio) * laplace_mean_shift(dtype) / 4.0 - 1e-12))
