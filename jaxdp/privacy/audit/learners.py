"""Auditing online learners on neighbouring loss sequences (docs/guide/auditing.md#auditing-your-own-learner).

Two loss sequences are neighbours (replace-one) when they differ in one round's loss vector.
:func:`loss_neighbours` builds a small family of such pairs: an all-zero base sequence with
round ``t``'s loss set to two different vectors ``u ≠ v`` from a small set (``0``, the unit
vectors ``e_j``, the all-ones vector), for a few rounds ``t``. The strongest pair is rarely the
obvious one: for REAL Alg. 1 the pair ``(1, 0)`` vs ``(0, 1)`` reveals about twice as much as
``0`` vs ``(1, 0)``.

:func:`learner_mechanism` turns a :class:`jaxdp.core.Learner` into ``(key, losses) -> actions``
(the action of every round and the one after the last loss: everything the learner releases),
and :func:`audit_learner` runs :func:`jaxdp.privacy.audit.audit_mechanism` over the family.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ...core.validation import check_positive_int
from .auditor import DEFAULT_ALPHA, AuditReport, SearchEvents, audit_mechanism
from .pairs import _vec

__all__ = ["loss_neighbours", "learner_mechanism", "audit_learner", "audit_learner_learned", "action_code"]


def loss_neighbours(T: int, d: int, *, rounds: Sequence[int] = (0,), values: Optional[Sequence] = None,
                    base: Optional[np.ndarray] = None, prefix: str = "") -> dict:
    """A family of replace-one neighbouring loss sequences, ``{label: (x0, x1)}`` (float32 ``(T, d)`` arrays).

    For every round ``t`` in ``rounds`` and every unordered pair ``u ≠ v`` of ``values`` (default: ``0``, ``e_1 … e_d``
    and ``1`` for ``d <= 4``, else ``0``, ``e_1``, ``e_2`` and ``1``), ``x0`` and ``x1`` equal ``base`` (default all
    zeros) except that round ``t`` holds ``u``, resp. ``v``. Labels read ``"{prefix}l{t+1}: u vs v"``; merge several
    calls (different bases, distinct prefixes) for a larger family. Non-zero bases matter: a loss history that brings an
    algorithm near a decision boundary can make a later change far more visible.

    Args:
        T: the horizon (number of rounds).
        d: the dimension of a loss vector.
        rounds: the rounds ``t`` (0-indexed) whose loss differs.
        values: the loss vectors ``u, v``, each of shape ``(d,)`` (default above).
        base: the ``(T, d)`` losses the two sequences share elsewhere (default all zeros).
        prefix: prepended to every label.

    Returns:
        ``{label: (x0, x1)}`` with float32 ``(T, d)`` arrays.

    Raises:
        ValueError: a ``base`` of the wrong shape, a value not of shape ``(d,)`` or a round outside ``[0, T)``.
    """
    T = check_positive_int("T", T)
    d = check_positive_int("d", d)
    if base is None:
        base = np.zeros((T, d), np.float32)
    base = np.asarray(base, np.float32)
    if base.shape != (T, d):
        raise ValueError(f"base must have shape (T, d) = {(T, d)}, got {base.shape}")
    if values is None:
        eye = np.eye(d, dtype=np.float32)
        values = [np.zeros(d, np.float32)] + [eye[j] for j in range(min(d, 4 if d <= 4 else 2))] + \
                 [np.ones(d, np.float32)]
        if d == 1:
            values = values[:2]
    values = [np.asarray(v, np.float32) for v in values]
    for v in values:
        if v.shape != (d,):
            raise ValueError(f"values must be loss vectors of shape ({d},), got shape {v.shape}")
    rounds = list(rounds)
    for t in rounds:
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not 0 <= t < T:
            raise ValueError(f"rounds must be integers in [0, {T}), got {t!r}")

    out = {}
    for t in rounds:
        for u, v in itertools.combinations(values, 2):
            if np.array_equal(u, v):
                continue
            x0, x1 = base.copy(), base.copy()
            x0[t], x1[t] = u, v
            out[f"{prefix}l{t + 1}: {_vec(u)} vs {_vec(v)}"] = (jnp.asarray(x0), jnp.asarray(x1))
    return out


def learner_mechanism(learner, params, *, output: Optional[Callable] = None) -> Callable:
    """``(key, losses) -> output(actions)``: run ``learner`` over a ``(T, d)`` loss array.

    ``actions`` stacks ``state.x`` before every round and after the last one (``T + 1`` entries): what an observer of
    the learner sees. Block-mode learners (``end_block``) run a nested scan; ``T`` must then be a multiple of
    ``block_size``. Keys: ``init``, every ``step`` and every ``end_block`` get their own (``fold_in`` by round / block).

    Args:
        learner: the :class:`jaxdp.Learner` to run.
        params: its parameters.
        output: post-processes the actions (default identity), e.g. :func:`action_code`.

    Returns:
        The jittable ``(key, losses) -> output(actions)`` (it raises ``ValueError`` for a block-mode learner when ``T``
        is not a multiple of ``block_size``).
    """
    b = int(learner.block_size)

    def mech(key, losses):
        T = losses.shape[0]
        k_init, k_step, k_block = jax.random.split(key, 3)
        s = learner.init(k_init, params)

        def rnd(s, t):
            x = s.x
            s, _ = learner.step(jax.random.fold_in(k_step, t), s, losses[t], params)
            return s, x

        if learner.end_block is None:
            s, xs = jax.lax.scan(rnd, s, jnp.arange(T))
        else:
            if T % b:
                raise ValueError(f"T = {T} must be a multiple of the learner's block_size {b}")

            def blk(s, j):
                s, xs = jax.lax.scan(rnd, s, j * b + jnp.arange(b))
                s, _ = learner.end_block(jax.random.fold_in(k_block, j), s, params)
                return s, xs

            s, xs = jax.lax.scan(blk, s, jnp.arange(T // b))
            xs = xs.reshape((T,) + xs.shape[2:])
        acts = jnp.concatenate([xs, s.x[None]])
        return acts if output is None else output(acts)

    return mech


def action_code(d: int) -> Callable:
    """``actions -> int``: the sequence of expert indices in base ``d`` (a cell for :class:`HistogramEvents`).

    Args:
        d: the number of experts (>= 2).

    Returns:
        The jittable ``actions -> sum_t actions[t] · d^t`` (int32).
    """
    d = check_positive_int("d", d, minimum=2)

    def code(acts):
        w = d ** jnp.arange(acts.shape[0], dtype=jnp.int32)
        return jnp.sum(acts.astype(jnp.int32) * w)

    return code


def _count(j):
    def f(acts):
        return jnp.sum(acts == j).astype(jnp.float32)
    return f


def _mean_coord(j):
    def f(acts):
        return jnp.mean(acts[..., j]).astype(jnp.float32)
    return f


def _last_coord(j):
    def f(acts):
        return acts[-1, j].astype(jnp.float32)
    return f


def audit_learner(learner, params, *, T: int, d: int, claimed_eps: float, claimed_delta: float = 0.0,
                  n: int = 100_000, key: jax.Array, alpha: float = DEFAULT_ALPHA, rounds: Sequence[int] = (0,),
                  values: Optional[Sequence] = None, events: Any = None, n_best: int = 4,
                  delta_float: Optional[float] = None, name: str = "learner") -> AuditReport:
    """Audit an online learner against (``claimed_eps``, ``claimed_delta``) over :func:`loss_neighbours`.

    Default events: for integer actions (experts), the whole action sequence as a cell when ``d^(T+1) <= 4096`` (unions
    of cells searched) and the number of rounds playing each expert; for vector actions (OCO), each coordinate's mean
    over the rounds and its final value. The search uses half of the ``n`` runs per input; the family-wise error is
    ``alpha``.

    Args:
        learner: the :class:`jaxdp.Learner` audited.
        params: its parameters.
        T: the horizon.
        d: the dimension of a loss vector.
        claimed_eps: the claimed ε (> 0, finite).
        claimed_delta: the claimed δ in ``[0, 1)``.
        n: runs per input.
        key: typed PRNG key.
        alpha: family-wise error: a learner satisfying the claim is flagged with probability ``<= alpha``.
        rounds: the rounds whose loss differs (:func:`loss_neighbours`).
        values: the loss vectors compared (:func:`loss_neighbours`; default there).
        events: event families as in :func:`jaxdp.privacy.audit.audit_mechanism` (default above).
        n_best: tests kept by the search and evaluated on fresh runs.
        delta_float: float δ floor added to ``claimed_delta`` (default ``2^-23``).
        name: the name shown in the report.

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    mech = learner_mechanism(learner, params)
    pairs = loss_neighbours(T, d, rounds=rounds, values=values)
    if events is None:
        x0 = next(iter(pairs.values()))[0]
        shape = jax.eval_shape(mech, jax.random.key(0), x0)
        if jnp.issubdtype(shape.dtype, jnp.integer) and shape.ndim == 1:
            k = int(d)
            events = [SearchEvents(statistic=_count(j)) for j in range(min(k, 8))]
            if k ** shape.shape[0] <= 4096:
                events.append(SearchEvents(cell=action_code(k), n_cells=k ** shape.shape[0]))
        else:
            dims = shape.shape[-1] if shape.ndim > 1 else 1
            if shape.ndim == 1:
                events = [SearchEvents(statistic=lambda a: jnp.mean(a).astype(jnp.float32)),
                          SearchEvents(statistic=lambda a: a[-1].astype(jnp.float32))]
            else:
                events = ([SearchEvents(statistic=_mean_coord(j)) for j in range(min(dims, 4))]
                          + [SearchEvents(statistic=_last_coord(j)) for j in range(min(dims, 4))])
    return audit_mechanism(mech, pairs, events, claimed_eps=claimed_eps, claimed_delta=claimed_delta, n=n, key=key,
                           alpha=alpha, n_best=n_best, delta_float=delta_float, name=name)


def audit_learner_learned(learner, params, *, T: int, d: int, claimed_eps: float, claimed_delta: float = 0.0,
                          key: jax.Array, neighbours: Optional[dict] = None, classifiers: Optional[Sequence] = None,
                          n_train: int = 50_000, n_select: int = 100_000, n_eval: int = 1_000_000, n_best: int = 1,
                          alpha: float = DEFAULT_ALPHA, delta_float: Optional[float] = None,
                          name: str = "learner") -> AuditReport:
    """Audit an online learner with learned events (:func:`jaxdp.privacy.audit.audit_learned`) on its whole trajectory.

    Neighbours default to :func:`jaxdp.privacy.audit.pairs.loss_flip_pairs` (one round's loss flipped, on zero losses and after
    expert 1 lost every earlier round). Default classifiers: for integer actions (experts) a histogram of the whole
    action sequence when ``d^(T+1) <= 2^16`` and a logistic regression on
    :func:`jaxdp.privacy.audit.learned.trajectory_features`; for vector actions (OCO) logistic regression and a small MLP on the
    flattened action sequence. The family-wise error ``alpha`` covers the pair search.

    Args:
        learner, params, T, d, claimed_eps, claimed_delta, key: as in :func:`audit_learner`.
        neighbours: ``{label: (x0, x1)}`` pairs of ``(T, d)`` loss arrays (default above).
        classifiers: :class:`jaxdp.privacy.audit.Logistic`, :class:`jaxdp.privacy.audit.MLP` and/or :class:`jaxdp.privacy.audit.Histogram`
            (default above).
        n_train, n_select, n_eval: runs per input for training, for choosing the event and for the bound (fresh), as in
            :func:`jaxdp.privacy.audit.audit_learned`.
        n_best: candidates (pair × classifier) evaluated on fresh runs.
        alpha: family-wise error: a learner satisfying the claim is flagged with probability at most α.
        delta_float: float δ floor added to ``claimed_delta`` (default ``2^-23``).
        name: the name shown in the report.

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    from .learned import MLP, Histogram, Logistic, audit_learned, flat_features, trajectory_features
    from .pairs import loss_flip_pairs

    mech = learner_mechanism(learner, params)
    pairs = neighbours if neighbours is not None else loss_flip_pairs(T, d)
    if classifiers is None:
        x0 = np.asarray(next(iter(pairs.values()))[0], np.float32)
        shape = jax.eval_shape(mech, jax.random.key(0), jnp.asarray(x0))
        if jnp.issubdtype(shape.dtype, jnp.integer) and shape.ndim == 1:
            classifiers = [Logistic(trajectory_features(d))]
            if d ** shape.shape[0] <= 1 << 16:
                classifiers.insert(0, Histogram(d ** shape.shape[0], action_code(d)))
        else:
            classifiers = [Logistic(flat_features), MLP(flat_features, steps=300, batch=2048)]
    pairs = {k: (jnp.asarray(a, jnp.float32), jnp.asarray(b, jnp.float32)) for k, (a, b) in pairs.items()}
    return audit_learned(mech, pairs, claimed_eps=claimed_eps, claimed_delta=claimed_delta, key=key,
                         classifiers=classifiers, n_train=n_train, n_select=n_select, n_eval=n_eval, n_best=n_best,
                         alpha=alpha, delta_float=delta_float, name=name)
