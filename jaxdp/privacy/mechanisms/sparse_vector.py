"""AboveThreshold / sparse vector as a state machine (Dwork–Roth Alg. 1, Thms 3.23–3.24; REAL Lemma 2.3; docs/algorithms/primitives.md).

Also the c-positive sparse vector whose ONE threshold noise is shared by all its positives
(:func:`csvt_init` / :func:`csvt_query` / :func:`sparse_vector`; section "c positives" below;
docs/algorithms/primitives.md#shared-threshold-svt).

One instance answers a stream of queries ``q_1, q_2, ...`` of sensitivity Δ
against a threshold τ and halts at its first ⊤::

    init:   τ̂ = τ + Lap(2Δ/ε)                 (threshold noise, once per instance)
    query:  ν = Lap(4Δ/ε)                      (fresh noise per query)
            if not halted and q + ν >= τ̂:  answer ⊤ and halt;  otherwise answer ⊥

The whole answer vector (any number of ⊥ then one ⊤) is ε-DP (Dwork–Roth
Thm 3.23). Accuracy (Thm 3.24): over k queries, with probability >= 1 - β,
every ⊥ query has ``q_i <= τ + α`` and the ⊤ query has ``q_k >= τ - α``, with
``α = 8Δ(log k + log(2/β))/ε`` (:func:`svt_accuracy_alpha`).

Floating point: with float32 Laplace draws the answers are ε-DP up to an additive δ of
``jaxdp.privacy.accounting.floating.delta_float("laplace", eps=ε, d=2)`` per query (docs/guide/auditing.md#floating-point).

A halted instance answers ⊥ to everything until :func:`svt_restart` draws a
fresh τ̂ (REAL's ``InitializeSparseVec``). Every function draws its noise on
every call, so it can sit inside ``lax.scan`` / ``vmap`` with a fixed number
of random draws per round; select with ``jnp.where`` on ``top`` / ``halted``.

Example (inside a scan step)::

    k_q, k_r = jax.random.split(key)
    svt, top = svt_query(k_q, svt, q, eps)
    svt = jax.tree.map(lambda a, b: jnp.where(top, a, b), svt_restart(k_r, svt, tau, eps), svt)

**c positives, one threshold noise** (Lyu, Su, Li, *Understanding the Sparse Vector Technique for
Differential Privacy*, PVLDB 2017, Alg. 1 and Thm 1). With ``ε = ε₁ + ε₂``::

    init:   τ̂ = τ + ρ,  ρ = Lap(Δ/ε₁)             (drawn once, shared by all c positives)
    query:  ν_i = Lap(2cΔ/ε₂)                      (Lap(cΔ/ε₂) when the queries are monotone)
            if fewer than c ⊤ so far and q_i + ν_i >= τ̂:  answer ⊤ (the c-th ⊤ halts it);  else ⊥

The whole answer vector is (ε₁ + ε₂)-DP (Thm 1). Proof sketch: for neighbours D, D' write the
probability of an answer vector as an integral over ρ = z and substitute z' = z + Δ; the density of
ρ costs e^{ε₁}; every ⊥ is at least as likely under D' with the threshold raised by Δ (its query
moved by at most Δ); every ⊤ needs its query noise shifted by at most 2Δ, costing e^{ε₂/c}, and there
are at most c of them. With monotone queries one of the two Δ's cancels, so Lap(cΔ/ε₂) suffices.
``c = 1`` with ε₁ = ε₂ = ε/2 is Dwork–Roth's AboveThreshold. §4.2: the split minimising the variance
of ν_i − ρ is ε₁:ε₂ = 1:(2c)^{2/3} (1:c^{2/3} monotone), ``ratio="optimal"``; the default ``ratio=1``
is Alg. 1 as printed. Accounting: :func:`plan_sparse_vector` (scales, ε₁, ε₂, a ledger event).

Reusing the threshold noise across c positives while keeping AboveThreshold's query noise
Lap(4Δ/ε) (i.e. ε₂ = cε/2 above) is only ((1 + c)ε/2)-DP, not ε-DP; the audit catalogue's
``svt-shared-threshold-unscaled`` flags it (docs/algorithms/primitives.md#shared-threshold-svt).
"""
from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, NamedTuple, Union

import jax
import jax.numpy as jnp
import numpy as np

from ...core.validation import check_epsilon, check_finite, check_scale, check_sensitivity, optional_dim, planner_args
from ..accounting.plan import Plan
from ...core.validation import check_positive_int, check_probability, is_concrete
from ...registry import register_planner

if TYPE_CHECKING:  # pragma: no cover
    from ..accounting.ledger import Event

__all__ = [
    "SVTState", "svt_init", "svt_query", "svt_restart", "svt_noise_scales", "svt_accuracy_alpha",
    "above_threshold",
    "CSVTState", "csvt_budget_split", "csvt_noise_scales", "csvt_init", "csvt_init_from_scales", "csvt_query",
    "csvt_halted", "sparse_vector", "sparse_vector_from_scales", "csvt_accuracy_alpha", "csvt_ledger_event",
    "plan_sparse_vector", "plan_sparse_vector_shared",
]


class SVTState(NamedTuple):
    """State of one AboveThreshold instance.

    Attributes:
        tau_hat: the noisy threshold τ̂.
        halted: whether the instance has answered ⊤.
    """

    tau_hat: jax.Array   # float, the noisy threshold τ + Lap(2Δ/ε)
    halted: jax.Array    # bool, True once the instance has answered ⊤


def svt_noise_scales(eps, sensitivity=1.0):
    """Dwork–Roth Alg. 1 Laplace scales ``(2Δ/ε, 4Δ/ε)`` for the threshold and the queries.

    Args:
        eps: the privacy parameter ε.
        sensitivity: the query's sensitivity Δ.

    Returns:
        ``(2Δ/ε, 4Δ/ε)``.
    """
    return 2.0 * sensitivity / eps, 4.0 * sensitivity / eps


def svt_accuracy_alpha(k: int, beta: float, eps: float, sensitivity: float = 1.0) -> float:
    """α of Dwork–Roth Thm 3.24: ``8Δ(log k + log(2/β))/ε`` (host float).

    Args:
        k: the number of queries.
        beta: the failure probability.
        eps: the privacy parameter ε.
        sensitivity: the query's sensitivity Δ.

    Returns:
        α (host float).
    """
    k = check_positive_int("k", k)
    check_probability("beta", beta, open_left=True, open_right=True)
    check_epsilon(eps, allow_inf=False)
    check_sensitivity(sensitivity)
    return 8.0 * sensitivity * (math.log(k) + math.log(2.0 / beta)) / eps


def _check(eps, sensitivity):
    check_epsilon(eps)
    check_sensitivity(sensitivity)


def _float(x):
    return jnp.asarray(x, dtype=jnp.result_type(float))


def svt_init(key: jax.Array, threshold, eps, sensitivity=1.0) -> SVTState:
    """A fresh instance: ``τ̂ = threshold + Lap(2Δ/ε)``, not halted. One Laplace draw (shape of ``threshold``).

    Args:
        key: JAX PRNG key.
        threshold: the threshold τ.
        eps: the privacy parameter ε.
        sensitivity: the query's sensitivity Δ.

    Returns:
        The fresh :class:`SVTState`.
    """
    _check(eps, sensitivity)
    tau_hat = csvt_init_from_scales(key, threshold, svt_noise_scales(eps, sensitivity)[0], 0.0, 1).tau_hat
    return SVTState(tau_hat=tau_hat, halted=jnp.zeros(jnp.shape(tau_hat), jnp.bool_))


def svt_query(key: jax.Array, state: SVTState, q, eps, sensitivity=1.0) -> tuple[SVTState, jax.Array]:
    """Answer one query: ``top = not halted and q + Lap(4Δ/ε) >= τ̂``; the instance halts on ⊤.

    Returns ``(state', top)``; a halted instance answers ⊥ (``top=False``).
    One Laplace draw per call, whether or not the instance is halted.

    Args:
        key: JAX PRNG key.
        state: the instance's state.
        q: the query's value.
        eps: the privacy parameter ε.
        sensitivity: the query's sensitivity Δ.

    Returns:
        ``(state', top)``.
    """
    _check(eps, sensitivity)
    check_finite(q, "q")
    q = jnp.asarray(q, dtype=state.tau_hat.dtype)
    _, b_q = svt_noise_scales(eps, sensitivity)
    nu = jax.random.laplace(key, jnp.shape(state.tau_hat), dtype=state.tau_hat.dtype)
    top = jnp.logical_and(jnp.logical_not(state.halted), q + jnp.asarray(b_q, q.dtype) * nu >= state.tau_hat)
    return SVTState(tau_hat=state.tau_hat, halted=jnp.logical_or(state.halted, top)), top


def svt_restart(key: jax.Array, state: SVTState, threshold, eps, sensitivity=1.0) -> SVTState:
    """A new instance (fresh τ̂, ``halted=False``) replacing ``state``; the same draw as :func:`svt_init`.

    ``state`` only fixes the dtype/shape; under ``vmap`` select between it and
    the result with ``jnp.where`` to restart only some lanes.

    Args:
        key: JAX PRNG key.
        state: the instance replaced (fixes dtype and shape only).
        threshold: the threshold τ.
        eps: the privacy parameter ε.
        sensitivity: the query's sensitivity Δ.

    Returns:
        The new :class:`SVTState`.
    """
    new = svt_init(key, jnp.broadcast_to(_float(threshold), jnp.shape(state.tau_hat)), eps, sensitivity)
    return SVTState(tau_hat=new.tau_hat.astype(state.tau_hat.dtype), halted=new.halted)


def above_threshold(key: jax.Array, queries, threshold, eps, sensitivity=1.0) -> jax.Array:
    """Run one AboveThreshold instance over a whole query vector; return the index of the ⊤ answer.

    ``queries`` has shape ``(k,)``; returns an int32 in ``[0, k]``, ``k``
    meaning "no ⊤" (all ⊥). This index is the instance's entire output. Keys:
    ``split(key, 2)`` → threshold noise, then ``k`` query noises drawn at once
    (equivalent to a scan of :func:`svt_query`, since a halted instance's later
    noise is never looked at).

    Args:
        key: JAX PRNG key.
        queries: the query values, shape ``(k,)``.
        threshold: the threshold τ.
        eps: the privacy parameter ε.
        sensitivity: the query's sensitivity Δ.

    Returns:
        The index of the ⊤ answer, int32 in ``[0, k]`` (``k``: all ⊥).
    """
    _check(eps, sensitivity)
    b_thr, b_q = svt_noise_scales(eps, sensitivity)
    top = sparse_vector_from_scales(key, queries, threshold, b_thr, b_q, 1)
    return jnp.where(jnp.any(top), jnp.argmax(top), top.shape[0]).astype(jnp.int32)


# ----------------------------------------------------------------------------- c positives, one threshold noise
# (Lyu, Su, Li 2017, Alg. 1, Thm 1; the math is in the module docstring)

Ratio = Union[float, int, str]


class CSVTState(NamedTuple):
    """State of one c-positive sparse vector whose threshold noise is shared by its positives (Lyu et al. Alg. 1).

    Attributes:
        tau_hat: the noisy threshold τ̂ (drawn once).
        query_scale: the query noise's Laplace scale.
        count: the number of ⊤ answers so far.
        c: the number of positives allowed.
    """

    tau_hat: jax.Array       # float, τ + ρ with ρ ~ Lap(Δ/ε₁), drawn once per instance
    query_scale: jax.Array   # float, Laplace scale of every query's noise (2cΔ/ε₂; cΔ/ε₂ for monotone queries)
    count: jax.Array  # type: ignore[assignment]  # int32, ⊤ answers so far (shadows tuple.count)
    c: jax.Array             # int32, the cap: the instance halts after its c-th ⊤


def _check_c(c):
    """``c``: a positive integer (or an integer array, all >= 1); ``ValueError`` naming ``c`` otherwise."""
    if not is_concrete(c):
        return c
    arr = None
    if not isinstance(c, (bool, str, bytes)) and not (hasattr(c, "dtype") and c.dtype == bool):
        try:
            arr = np.asarray(c)
        except Exception:  # pragma: no cover
            arr = None
    if arr is None or arr.dtype == object or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"c (the number of positive answers) must be a positive integer, got {c!r}")
    if np.any(arr < 1):
        raise ValueError(f"c (the number of positive answers) must be an integer >= 1, got {arr.tolist()!r}")
    return int(arr) if arr.ndim == 0 else c


def _check_ratio(ratio) -> None:
    if isinstance(ratio, str):
        if ratio != "optimal":
            raise ValueError(f"ratio must be a number eps1/eps2 > 0 or 'optimal', got {ratio!r}")
        return
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float, np.integer, np.floating)) \
            or not (math.isfinite(float(ratio)) and float(ratio) > 0):
        raise ValueError(f"ratio must be a number eps1/eps2 > 0 (finite) or 'optimal', got {ratio!r}")


def _ratio_value(ratio: Ratio, c, monotone: bool):
    if isinstance(ratio, str):      # Lyu et al. §4.2: ε₁:ε₂ = 1:(2c)^{2/3}, monotone 1:c^{2/3}
        base = c if monotone else 2 * c
        return base ** (-2.0 / 3.0)
    return float(ratio)


def _csvt_checks(eps, c, sensitivity, ratio, monotone):
    check_epsilon(eps)
    _check_c(c)
    check_sensitivity(sensitivity)
    _check_ratio(ratio)
    if not isinstance(monotone, (bool, np.bool_)):
        raise ValueError(f"monotone must be True or False, got {monotone!r}")


def csvt_budget_split(eps, c, *, ratio: Ratio = 1.0, monotone: bool = False) -> tuple:
    """``(ε₁, ε₂)`` with ``ε₁ + ε₂ = ε`` and ``ε₁/ε₂ = ratio`` (``"optimal"``: ``(2c)^{-2/3}``, monotone ``c^{-2/3}``;
    Lyu, Su, Li 2017 §4.2). ε₁ pays for the one threshold noise, ε₂ for the c positives.

    Args:
        eps: the privacy parameter ε.
        c: the number of positive (⊤) answers before the instance halts.
        ratio: ε₁/ε₂, or ``"optimal"``.
        monotone: the queries are monotone.

    Returns:
        ``(ε₁, ε₂)``.
    """
    _csvt_checks(eps, c, 1.0, ratio, monotone)
    r = _ratio_value(ratio, c, bool(monotone))
    return eps * r / (1.0 + r), eps / (1.0 + r)


def csvt_noise_scales(eps, c, sensitivity=1.0, *, ratio: Ratio = 1.0, monotone: bool = False) -> tuple:
    """Laplace scales ``(Δ/ε₁, 2cΔ/ε₂)`` of Lyu et al. Alg. 1 (``(Δ/ε₁, cΔ/ε₂)`` for monotone queries).

    With ``c = 1``, ``ratio = 1``: ``(2Δ/ε, 4Δ/ε)``, Dwork–Roth's AboveThreshold (:func:`svt_noise_scales`).

    Args:
        eps: the privacy parameter ε.
        c: the number of positive (⊤) answers before the instance halts.
        sensitivity: the query's sensitivity Δ.
        ratio: ε₁/ε₂, or ``"optimal"``.
        monotone: the queries are monotone.

    Returns:
        ``(threshold scale, query scale)``.
    """
    _csvt_checks(eps, c, sensitivity, ratio, monotone)
    eps1, eps2 = csvt_budget_split(eps, c, ratio=ratio, monotone=monotone)
    mult = 1.0 if monotone else 2.0
    return sensitivity / eps1, mult * c * sensitivity / eps2


def csvt_init_from_scales(key: jax.Array, threshold, threshold_scale, query_scale, c) -> CSVTState:
    """A fresh c-positive instance with explicit noise scales: ``τ̂ = threshold + Lap(threshold_scale)``.

    No privacy claim by itself: :func:`csvt_init` picks the scales of Lyu et al. Alg. 1 from ε.
    One Laplace draw (shape of ``threshold``). ``c`` may be traced (e.g. a learner's ``K``).

    Args:
        key: JAX PRNG key (the threshold noise).
        threshold: the threshold τ (scalar or array: one instance per entry).
        threshold_scale: the Laplace scale of the threshold noise, drawn once (``>= 0``; 0: exact threshold).
        query_scale: the Laplace scale of each query's fresh noise (``>= 0``), kept in the state.
        c: the number of positive (⊤) answers before the instance halts (integer ``>= 1``, or an integer array).

    Returns:
        The fresh :class:`CSVTState` (``count = 0``), with ``threshold``'s shape.
    """
    check_finite(threshold, "threshold")
    check_scale(threshold_scale, "threshold_scale")
    check_scale(query_scale, "query_scale")
    _check_c(c)
    threshold = _float(threshold)
    z = jax.random.laplace(key, jnp.shape(threshold), dtype=threshold.dtype)
    tau_hat = threshold + jnp.asarray(threshold_scale, threshold.dtype) * z
    shape = jnp.shape(threshold)
    return CSVTState(tau_hat=tau_hat, query_scale=jnp.broadcast_to(jnp.asarray(query_scale, threshold.dtype), shape),
                     count=jnp.zeros(shape, jnp.int32), c=jnp.broadcast_to(jnp.asarray(c, jnp.int32), shape))


def csvt_init(key: jax.Array, threshold, eps, c, sensitivity=1.0, *, ratio: Ratio = 1.0,
              monotone: bool = False) -> CSVTState:
    """A fresh instance of Lyu et al.'s sparse vector with ``c`` positives: ``τ̂ = τ + Lap(Δ/ε₁)`` (once).

    The noise scales (:func:`csvt_noise_scales`) are kept in the state, so :func:`csvt_query` needs no
    privacy parameter and cannot be called with a different one. The whole answer vector is
    ε-DP (Lyu, Su, Li 2017, Thm 1). Host-side inputs are validated before anything is compiled.

    Args:
        key: JAX PRNG key.
        threshold: the threshold τ.
        eps, c, sensitivity, ratio, monotone: as in :func:`csvt_noise_scales`.

    Returns:
        The fresh :class:`CSVTState`.

    Raises:
        ValueError: invalid host-side privacy parameters, ``c`` or ``ratio``.
    """
    _csvt_checks(eps, c, sensitivity, ratio, monotone)
    check_finite(threshold, "threshold")
    b_thr, b_q = csvt_noise_scales(eps, c, sensitivity, ratio=ratio, monotone=monotone)
    return csvt_init_from_scales(key, threshold, b_thr, b_q, c)


def csvt_halted(state: CSVTState) -> jax.Array:
    """True once the instance has answered its ``c``-th ⊤ (it then answers ⊥ to everything).

    Args:
        state: the instance's state.

    Returns:
        A boolean array.
    """
    return state.count >= state.c


def csvt_query(key: jax.Array, state: CSVTState, q) -> tuple[CSVTState, jax.Array]:
    """Answer one query: ``top = (count < c) and q + Lap(query_scale) >= τ̂``; ``count`` += top.

    The threshold noise is NOT redrawn after a ⊤ (that is the point of Lyu et al. Alg. 1). Returns
    ``(state', top)``; one Laplace draw per call, whether or not the instance has halted.

    Args:
        key: JAX PRNG key.
        state: the instance's state.
        q: the query's value.

    Returns:
        ``(state', top)``.
    """
    check_finite(q, "q")
    q = jnp.asarray(q, dtype=state.tau_hat.dtype)
    nu = jax.random.laplace(key, jnp.shape(state.tau_hat), dtype=state.tau_hat.dtype)
    top = jnp.logical_and(state.count < state.c, q + state.query_scale * nu >= state.tau_hat)
    return state._replace(count=state.count + top.astype(jnp.int32)), top


def sparse_vector_from_scales(key: jax.Array, queries, threshold, threshold_scale, query_scale, c) -> jax.Array:
    """A whole query vector through one shared-threshold instance with explicit scales; the bool answers ``(k,)``.

    Keys: ``split(key, 2)`` → the threshold noise, then ``k`` query noises drawn at once (the law
    of a scan of :func:`csvt_query`; noise after the ``c``-th ⊤ is never looked at).
    No privacy claim by itself (:func:`sparse_vector` picks the scales from ε).

    Args:
        key: JAX PRNG key.
        queries: the query values, shape ``(k,)``.
        threshold: the threshold τ (scalar).
        threshold_scale: the Laplace scale of the threshold noise (``>= 0``).
        query_scale: the Laplace scale of each query's noise (``>= 0``).
        c: the number of positive answers before the instance halts.

    Returns:
        Bool answers of shape ``(k,)``: ``True`` (⊤) where ``q_i + Lap(query_scale) >= τ̂`` among the first ``c``
        such queries, ``False`` elsewhere.

    Raises:
        ValueError: ``queries`` is not 1-D, or invalid scales, threshold or ``c``.
    """
    check_finite(queries, "queries")
    check_finite(threshold, "threshold")
    check_scale(threshold_scale, "threshold_scale")
    check_scale(query_scale, "query_scale")
    _check_c(c)
    queries = _float(queries)
    if queries.ndim != 1:
        raise ValueError(f"queries must have shape (k,), got {queries.shape}")
    k_thr, k_q = jax.random.split(key)
    tau_hat = _float(threshold) + jnp.asarray(threshold_scale, queries.dtype) * jax.random.laplace(
        k_thr, (), dtype=queries.dtype)
    nu = jax.random.laplace(k_q, queries.shape, dtype=queries.dtype)
    above = queries + jnp.asarray(query_scale, queries.dtype) * nu >= tau_hat
    return jnp.logical_and(above, jnp.cumsum(above.astype(jnp.int32)) <= c)


def sparse_vector(key: jax.Array, queries, threshold, eps, c, sensitivity=1.0, *, ratio: Ratio = 1.0,
                  monotone: bool = False) -> jax.Array:
    """Lyu et al. Alg. 1 over a whole query vector ``(k,)``: the answers (bool, ``True`` = ⊤, at most ``c``).

    Every answer after the ``c``-th ⊤ is ⊥ (the instance has halted). The answer vector is the
    mechanism's entire output and is ε-DP (Thm 1).

    Args:
        key: JAX PRNG key.
        queries: the query values, shape ``(k,)``, each of sensitivity ``sensitivity``.
        threshold: the threshold τ (scalar).
        eps: the privacy parameter ε of the whole answer vector.
        c: the number of positive (⊤) answers before the instance halts.
        sensitivity: the queries' sensitivity Δ.
        ratio: ε₁/ε₂ (threshold budget over query budget), or ``"optimal"`` (§4.2).
        monotone: the queries are monotone (the query noise is then ``Lap(cΔ/ε₂)`` instead of ``Lap(2cΔ/ε₂)``).

    Returns:
        Bool answers of shape ``(k,)``, at most ``c`` of them ``True``.

    Raises:
        ValueError: invalid privacy parameters, ``c``, ``ratio`` or queries.
    """
    _csvt_checks(eps, c, sensitivity, ratio, monotone)
    b_thr, b_q = csvt_noise_scales(eps, c, sensitivity, ratio=ratio, monotone=monotone)
    return sparse_vector_from_scales(key, queries, threshold, b_thr, b_q, c)


def csvt_accuracy_alpha(k: int, beta: float, eps: float, c: int, sensitivity: float = 1.0, *, ratio: Ratio = 1.0,
                        monotone: bool = False) -> float:
    """α such that, over ``k`` queries, with probability ``>= 1 - β`` every ⊥ has ``q_i < τ + α`` and every ⊤ has
    ``q_i >= τ - α``: ``α = (Δ/ε₁) ln(2/β) + (2cΔ/ε₂) ln(2k/β)`` (union bound on ``|ρ|`` and the ``k`` ``|ν_i|``;
    host float). For ``c = 1`` it is at most Dwork–Roth's ``8Δ(log k + log(2/β))/ε``.

    Args:
        k: the number of queries.
        beta: the failure probability.
        eps, c, sensitivity, ratio, monotone: as in :func:`csvt_noise_scales`.

    Returns:
        α (host float).
    """
    k = check_positive_int("k", k)
    check_probability("beta", beta, open_left=True, open_right=True)
    check_epsilon(eps, allow_inf=False)
    b_thr, b_q = csvt_noise_scales(eps, c, sensitivity, ratio=ratio, monotone=monotone)
    return float(b_thr * math.log(2.0 / beta) + b_q * math.log(2.0 * k / beta))


def csvt_ledger_event(eps: float, c: int, *, count: int = 1, queries: int = 1, label: str = "") -> "Event":
    """The privacy-ledger event of ``count`` shared-threshold instances, each ``eps``-DP (Lyu et al. Thm 1).

    A sparse-vector event (``jaxdp.privacy.accounting.ledger.above_threshold``: pure ``eps`` per instance, any number
    of ⊥); the label records ``c`` and the shared threshold. ``queries``: query draws per instance (float floor).

    Args:
        eps: the privacy of one instance (``ε₁ + ε₂``), finite.
        c: the number of positive answers per instance.
        count: the number of instances run one after another.
        queries: the most queries one instance answers (float coupling terms).
        label: a name for reports; ``""`` gives one naming ``c`` and Lyu et al. Alg. 1.

    Returns:
        The :class:`jaxdp.privacy.accounting.ledger.Event` of kind ``"above_threshold"``.
    """
    from ..accounting import ledger as LG

    check_epsilon(eps, allow_inf=False)
    c = _check_c(c)
    lab = label or f"sparse vector, c={c} positives sharing one threshold noise (Lyu et al. Alg. 1)"
    return LG.above_threshold(float(eps), count=count, label=lab, queries=queries)


def plan_sparse_vector(*, eps: float, c: int, sensitivity: float = 1.0, ratio: Ratio = 1.0, monotone: bool = False,
                       k: int | None = None, beta: float = 0.05) -> "Plan":
    """Noise scales and certified ε of Lyu et al.'s c-positive sparse vector with one shared threshold noise.

    ``ε₁ = ε r/(1 + r)``, ``ε₂ = ε/(1 + r)`` (``r = ratio``; ``"optimal"`` per §4.2), threshold noise
    ``Lap(Δ/ε₁)`` once, query noise ``Lap(2cΔ/ε₂)`` (``Lap(cΔ/ε₂)`` if ``monotone``); the instance is
    ``(ε₁ + ε₂)``-DP (Thm 1). Returns a :class:`jaxdp.privacy.accounting.plan.Plan` whose ledger holds one
    sparse-vector event (:func:`csvt_ledger_event`); ``eps_certified`` is the accountant's. With ``k`` (the
    number of queries) the params also carry the accuracy ``alpha`` of :func:`csvt_accuracy_alpha` at ``beta``.

    Args:
        eps, c, sensitivity, ratio, monotone: as in :func:`csvt_noise_scales`.
        k: the number of queries (optional; adds the accuracy ``alpha``).
        beta: the failure probability.

    Returns:
        A :class:`jaxdp.privacy.accounting.plan.Plan`.

    Raises:
        ValueError: invalid privacy parameters, ``c``, ``ratio`` or ``k``.
    """
    from ..accounting import ledger as LG
    from ..accounting.plan import make_plan

    check_epsilon(eps, allow_inf=False)
    _csvt_checks(eps, c, sensitivity, ratio, monotone)
    c = _check_c(c)
    if isinstance(c, np.ndarray):
        raise ValueError(f"c must be a single positive integer for a plan, got an array {c.tolist()!r}")
    eps, sensitivity = float(eps), float(sensitivity)
    eps1, eps2 = csvt_budget_split(eps, c, ratio=ratio, monotone=monotone)
    b_thr, b_q = csvt_noise_scales(eps, c, sensitivity, ratio=ratio, monotone=monotone)
    params = {"threshold_scale": float(b_thr), "query_scale": float(b_q), "eps1": float(eps1), "eps2": float(eps2),
              "c": int(c), "sensitivity": sensitivity, "ratio": float(_ratio_value(ratio, c, bool(monotone))),
              "monotone": bool(monotone)}
    if k is not None:
        k = check_positive_int("k", k)
        params.update(k=k, beta=float(beta), alpha=csvt_accuracy_alpha(k, beta, eps, c, sensitivity, ratio=ratio,
                                                                        monotone=monotone))
    ledger = LG.sequential(csvt_ledger_event(eps1 + eps2, c, queries=k or 1))
    notes = [f"eps1 = {eps1:.6g} pays for the one threshold noise, eps2 = {eps2:.6g} for the c = {c} positives"]
    if monotone:
        notes.append("monotone queries: every query moves in the same direction between neighbours (else use "
                     "monotone=False)")
    return make_plan(algorithm="sparse_vector_shared_threshold", mode="paper", params=params, eps=eps, delta=0.0,
                     ledger=ledger, delta_budget=0.0, notes=notes,
                     reference="Understanding the Sparse Vector Technique for Differential Privacy (Lyu, Su, Li, "
                               "PVLDB 2017), Alg. 1, Thm 1; docs/algorithms/primitives.md#shared-threshold-svt")


@register_planner("sparse_vector_shared", "Lyu-Su-Li Alg. 1: c positives under one shared threshold noise "
                                          "(query noise Lap(2c*Delta/eps2)), k=T queries")
def plan_sparse_vector_shared(*, eps: float, delta: float | None = 0.0, T: int, d: int | None = None,
                              mode: str = "paper", c: int = 1, sensitivity: float = 1.0, ratio: Any = 1.0,
                              monotone: bool = False, beta: float = 0.05) -> Plan:
    """The c-positive sparse vector with one shared threshold noise, over ``k = T`` queries (Lyu, Su, Li,
    "Understanding the Sparse Vector Technique for Differential Privacy", PVLDB 2017, Alg. 1, Thm 1).

    ``ε₁ = ε r/(1+r)`` pays for the threshold noise ``Lap(Δ/ε₁)``, drawn once; ``ε₂ = ε/(1+r)`` for the query
    noise ``Lap(2cΔ/ε₂)`` (``Lap(cΔ/ε₂)`` for monotone queries); ``r = ratio`` (``"optimal"``: §4.2's
    ``(2c)^{-2/3}``). The run is ε-DP (δ = 0) for any number of ⊥ and up to ``c`` ⊤. This is the command-line
    face of :func:`plan_sparse_vector` (with ``k = T``); modes ``paper`` and ``certified``
    coincide and ``d`` is unused.

    Args:
        eps: the privacy parameter ε.
        delta: accepted for the planners' common signature (in ``[0, 1)``, ``None`` = 0); the plan is pure.
        T: the number of queries ``k`` (one per round).
        d: unused (validated when given).
        mode: ``"paper"`` or ``"certified"`` (the same parameters).
        c: the number of positive (⊤) answers before the instance halts.
        sensitivity: the queries' sensitivity Δ.
        ratio: ε₁/ε₂, or ``"optimal"``.
        monotone: the queries are monotone.
        beta: the failure probability of the accuracy ``alpha`` reported in the params.

    Returns:
        The :class:`jaxdp.privacy.accounting.plan.Plan` of :func:`plan_sparse_vector` (params ``threshold_scale``,
        ``query_scale``, ``eps1``, ``eps2``, ``alpha``, ...), with ``mode`` set to the one requested.

    Raises:
        ValueError: invalid privacy parameters, mode, ``c``, ``ratio`` or ``T``.
    """
    e, _dl, T, mode = planner_args(eps, delta, T, mode, ("paper", "certified"), delta_positive=False)
    optional_dim(d)
    plan = plan_sparse_vector(eps=e, c=c, sensitivity=sensitivity, ratio=ratio, monotone=monotone, k=T, beta=beta)
    return plan if mode == plan.mode else dataclasses.replace(plan, mode=mode)
