"""Auditing online learners in the adaptive privacy game (docs/guide/auditing.md#adaptive-game).

**The two privacy games.** In the *oblivious* game (:func:`jaxdp.privacy.audit.learners.audit_learner`) the two
neighbouring loss sequences ``x0, x1`` are fixed before the run. In the *adaptive* game the adversary writes the
losses as the run goes, from what the learner has released so far, and the neighbouring relation holds for the
pair of streams it writes: in every round it proposes two losses ``(l0_t, l1_t)``, equal in every round but one
(the *challenge* round), and the learner of world ``b ∈ {0, 1}`` receives ``lb_t``. The challenge round, its two
losses and every other loss may depend on the view. A learner is (ε, δ)-DP against adaptive adversaries when, for
every such strategy, the adversary's view in world 0 and in world 1 satisfy ``P[V0 ∈ E] <= e^ε P[V1 ∈ E] + δ``
(the adaptive-adversary privacy of "Private Online Prediction from Experts: Separations and Faster Rates", Asi,
Feldman, Koren, Talwar, and the adaptive streams of "Improved Differential Privacy for SGD via Optimal Private Linear
Operators on Adaptive Streams", Denisov, McMahan, Rush, Smith, Thakurta). Every oblivious pair is such a strategy (one
that ignores the view), so adaptive DP implies oblivious DP; the converse fails (:mod:`jaxdp.experts.adaptive_audits`
has a learner that is private in one game and not in the other).

**What the adversary sees.** Before it writes ``l_t`` (0-indexed round ``t``) the strategy sees
:class:`GameView`: the actions ``x_0, ..., x_t`` (``x_t`` is released at the start of round ``t``, before ``l_t``,
and does not depend on it), and, with ``sees_outputs=True``, the learner's released outputs (``Learner.release``,
else its ``info`` dict) of the rounds ``< t``, e.g. noisy counts; plus whether the challenge round has passed. It also has its own key,
``fold_in(fold_in(key, ADV_SALT), t)``, the same in both worlds. The learner's keys are those of
:func:`jaxdp.privacy.audit.learners.learner_mechanism` (``init``, ``fold_in(k_step, t)``, ``fold_in(k_block, j)``),
the same in both worlds: the two worlds differ only through the losses. The audited output is the whole view:
the ``T + 1`` actions (and the ``T`` rounds' outputs where the adversary sees them).

**Exactly one challenge.** The game enforces it: the first round where a strategy proposes ``l0 ≠ l1`` is the
challenge; in every later round both worlds get ``l0``. :func:`challenge_strategy` builds strategies that fire
once, on a trigger of the view, and at the last round if the trigger never fired, so every run has exactly one
challenge round (:func:`play_adaptive_game` records the proposed pairs; the tests check it run by run).

**As a mechanism.** :func:`adaptive_mechanism` is ``(key, [s, b]) -> view``: strategy ``s`` played in world ``b``
(one compiled program, ``lax.switch`` over the strategies). :func:`audit_learner_adaptive` hands the pairs
``([s, 0], [s, 1])`` to :func:`jaxdp.privacy.audit.audit_mechanism`, so it inherits its Clopper–Pearson bounds,
the search/evaluation split and the family-wise error α; a strategy that ignores the view gives exactly the
runs (same keys, same actions) and hence the same ``ε_lower`` as :func:`audit_learner` on the fixed pair.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ...core.types import released
from ...core.validation import check_positive_int
from .auditor import DEFAULT_ALPHA, AuditReport, SearchEvents, audit_mechanism
from .learners import _count, _last_coord, _mean_coord, action_code

__all__ = [
    "GameView", "NeighbourStrategy", "challenge_strategy", "oblivious_strategy", "adaptive_mechanism",
    "play_adaptive_game", "audit_learner_adaptive", "default_events", "ADV_SALT",
]

#: the adversary's key is ``fold_in(key, ADV_SALT)`` (the learner's keys come from ``split(key, 3)``, as in
#: :func:`jaxdp.privacy.audit.learners.learner_mechanism`)
ADV_SALT = 0x5AD7


class GameView(NamedTuple):
    """What the adversary of the adaptive game sees before it writes the loss of round ``t``.

    Attributes:
        t: the 0-indexed round (int32 scalar).
        actions: ``(T + 1, ...)``: the actions ``x_0 .. x_t`` (released before ``l_t``); later entries are 0.
        outputs: the learner's released outputs of the rounds ``< t`` (``Learner.release``, else the ``info`` that
            ``step`` returns; a block-mode learner's ``end_block`` info is not part of the view), each entry stacked
            to ``(T, ...)`` (later rows 0), or ``{}`` when the strategy does not see outputs.
        challenged: bool scalar: the challenge round has passed (the two worlds' losses differed in a round ``< t``).
    """

    t: jax.Array
    actions: jax.Array
    outputs: Any
    challenged: jax.Array


class NeighbourStrategy(NamedTuple):
    """An adaptive neighbouring strategy: ``losses(key, view) -> (l0, l1)``, the losses of round ``view.t`` in the two
    worlds (pure: a function of its own key and the :class:`GameView`).

    Attributes:
        name: the label shown in audit reports.
        losses: ``(key, view) -> (l0, l1)``; the two must be equal in every round but one (module docstring).
        sees_outputs: the strategy sees the learner's released outputs (``view.outputs``), not only its actions.
    """

    name: str
    losses: Callable[[jax.Array, GameView], tuple]
    sees_outputs: bool = False


def challenge_strategy(name: str, T: int, *, trigger: Callable[[GameView], Any],
                       pair: Callable[[GameView], tuple], base: Optional[Callable[[GameView], Any]] = None,
                       sees_outputs: bool = False) -> NeighbourStrategy:
    """A strategy that challenges once: at the first round where ``trigger(view)`` holds, or at round ``T - 1``.

    In the challenge round world 0 gets ``u`` and world 1 ``v``, ``(u, v) = pair(view)``; in every other round both get
    ``base(view)`` (default: zeros shaped like ``u``).

    Args:
        name: the label of the strategy.
        T: the horizon (the fallback challenge is in round ``T - 1``).
        trigger: ``view -> bool``: challenge now (ignored once the challenge has passed).
        pair: ``view -> (u, v)``: the two losses of the challenge round (they must differ).
        base: ``view -> loss``: the common loss of the other rounds.
        sees_outputs: the trigger, pair or base read ``view.outputs``.

    Returns:
        The :class:`NeighbourStrategy`.
    """
    T = check_positive_int("T", T)
    if not (callable(trigger) and callable(pair) and (base is None or callable(base))):
        raise TypeError("trigger, pair and base must be callables of the GameView")

    def losses(key, view):
        u, v = pair(view)
        c = jnp.zeros_like(u) if base is None else jnp.asarray(base(view), u.dtype)
        fire = ~view.challenged & (jnp.asarray(trigger(view), bool) | (view.t == T - 1))
        return jnp.where(fire, u, c), jnp.where(fire, v, c)

    return NeighbourStrategy(str(name), losses, bool(sees_outputs))


def oblivious_strategy(t0: int, u, v, base=None, name: Optional[str] = None) -> NeighbourStrategy:
    """The oblivious pair as a strategy: losses ``base`` (a fixed ``(T, d)`` array, default zeros) except round ``t0``,
    ``u`` in world 0 and ``v`` in world 1; it ignores the view.

    Args:
        t0: the challenge round (0-indexed).
        u: world 0's loss in round ``t0``.
        v: world 1's loss in round ``t0``.
        base: the ``(T, d)`` losses of both worlds elsewhere (``None``: zeros, ``T`` unbounded).
        name: the label (default ``"oblivious l{t0+1}"``).

    Returns:
        The :class:`NeighbourStrategy` (the pair of :func:`jaxdp.privacy.audit.learners.loss_neighbours` with these
        values).
    """
    if isinstance(t0, bool) or not isinstance(t0, (int, np.integer)) or t0 < 0:
        raise ValueError(f"t0 must be an integer >= 0, got {t0!r}")
    u = jnp.asarray(u, jnp.float32)
    v = jnp.asarray(v, jnp.float32)
    if u.shape != v.shape:
        raise ValueError(f"u and v must have the same shape, got {u.shape} and {v.shape}")
    b = None if base is None else jnp.asarray(base, jnp.float32)
    if b is not None and (b.ndim != u.ndim + 1 or b.shape[1:] != u.shape or not 0 <= t0 < b.shape[0]):
        raise ValueError(f"base must have shape (T, {u.shape}) with t0 < T, got {b.shape}")

    def losses(key, view):
        c = jnp.zeros_like(u) if b is None else b[view.t]
        now = view.t == t0
        return jnp.where(now, u, c), jnp.where(now, v, c)

    return NeighbourStrategy(name or f"oblivious l{int(t0) + 1}", losses, False)


def _check_strategies(strategies) -> list:
    if isinstance(strategies, NeighbourStrategy):
        strategies = [strategies]
    strategies = list(strategies)
    if not strategies:
        raise ValueError("strategies must contain at least one NeighbourStrategy, got none")
    for s in strategies:
        if not isinstance(s, NeighbourStrategy):
            raise TypeError(f"strategies must be NeighbourStrategy objects, got {type(s).__name__}")
    names = [s.name for s in strategies]
    if len(set(names)) != len(names):
        raise ValueError(f"strategy names must be distinct, got {names}")
    return strategies


def _game(learner, params, strategies: list, T: int, sees_outputs: bool, record: bool, d: Optional[int] = None
          ) -> Callable:
    """``(key, x) -> view`` (``record``: ``-> (view, (l0s, l1s))``) for ``x = [s, b]`` (module docstring).

    The losses' shape: probed on a strategy that does not read outputs, else ``(d,)`` float32."""
    b_sz = int(learner.block_size)
    if learner.end_block is not None and T % b_sz:
        raise ValueError(f"T = {T} must be a multiple of the learner's block_size {b_sz}")
    s0 = jax.eval_shape(learner.init, jax.random.key(0), params)
    x_spec = s0.x
    sees = [bool(sees_outputs and s.sees_outputs) for s in strategies]

    def probe_loss():
        view = GameView(jnp.int32(0), jnp.zeros((T + 1,) + x_spec.shape, x_spec.dtype), {}, jnp.bool_(False))
        for s in strategies:
            if not (sees_outputs and s.sees_outputs):
                return jax.eval_shape(lambda k: s.losses(k, view)[0], jax.random.key(0))
        if d is None:
            raise ValueError("every strategy reads the learner's outputs: give d (losses of shape (d,))")
        return jax.ShapeDtypeStruct((int(d),), jnp.float32)

    l_spec = probe_loss()
    def out_of_step(k, s, l):
        s, info = learner.step(k, s, l, params)
        return released(learner, s, info, params)

    info_spec = jax.eval_shape(out_of_step, jax.random.key(0), s0,
                               jax.ShapeDtypeStruct(l_spec.shape, l_spec.dtype)) if sees_outputs else {}

    def mech(key, x):
        x = jnp.asarray(x, jnp.int32)
        s_idx, world = x[0], x[1]
        k_init, k_step, k_block = jax.random.split(key, 3)
        k_adv = jax.random.fold_in(key, ADV_SALT)
        st = learner.init(k_init, params)
        acts = jnp.zeros((T + 1,) + x_spec.shape, x_spec.dtype)
        outs = jax.tree.map(lambda a: jnp.zeros((T,) + a.shape, a.dtype), info_spec)

        def branch(i):
            def f(k, view):
                v = view if sees[i] else view._replace(outputs={})
                l0, l1 = strategies[i].losses(k, v)
                return jnp.asarray(l0, l_spec.dtype), jnp.asarray(l1, l_spec.dtype)
            return f

        branches = [branch(i) for i in range(len(strategies))]

        def rnd(carry, t):
            st, acts, outs, ch = carry
            acts = acts.at[t].set(st.x)
            view = GameView(t, acts, outs, ch)
            ka = jax.random.fold_in(k_adv, t)
            l0, l1 = branches[0](ka, view) if len(branches) == 1 else jax.lax.switch(s_idx, branches, ka, view)
            l1 = jnp.where(ch, l0, l1)                       # one challenge: later proposals get world 0's loss
            fire = jnp.any(l0 != l1)
            st, info = learner.step(jax.random.fold_in(k_step, t), st, jnp.where(world == 1, l1, l0), params)
            if sees_outputs:
                outs = jax.tree.map(lambda o, a: o.at[t].set(a), outs, released(learner, st, info, params))
            return (st, acts, outs, ch | fire), ((l0, l1) if record else None)

        carry = (st, acts, outs, jnp.bool_(False))
        if learner.end_block is None:
            carry, rec = jax.lax.scan(rnd, carry, jnp.arange(T))
        else:
            def blk(carry, j):
                carry, rec = jax.lax.scan(rnd, carry, j * b_sz + jnp.arange(b_sz))
                st, _ = learner.end_block(jax.random.fold_in(k_block, j), carry[0], params)
                return (st,) + carry[1:], rec

            carry, rec = jax.lax.scan(blk, carry, jnp.arange(T // b_sz))
            if record:
                rec = jax.tree.map(lambda a: a.reshape((T,) + a.shape[2:]), rec)
        st, acts, outs, _ = carry
        acts = acts.at[T].set(st.x)
        view = (acts, outs) if sees_outputs else acts
        return (view, rec) if record else view

    return mech


def adaptive_mechanism(learner, params, strategies: Sequence[NeighbourStrategy], *, T: int,
                       sees_outputs: bool = False, d: Optional[int] = None) -> Callable:
    """The adaptive game as a mechanism ``(key, x) -> view`` for :func:`jaxdp.privacy.audit.audit_mechanism`.

    ``x = [s, b]`` (int32): strategy ``strategies[s]`` played against ``learner`` in world ``b``, ``T`` rounds in one
    ``lax.scan`` (a nested one for block-mode learners); jit and vmap it over keys.

    Args:
        learner: the :class:`jaxdp.Learner`.
        params: its parameters.
        strategies: the :class:`NeighbourStrategy` objects (all writing losses of one shape and dtype).
        T: the horizon (a multiple of ``block_size`` for block-mode learners).
        sees_outputs: the view includes the learner's ``info`` of every round (seen by the strategies whose
            ``sees_outputs`` is set; the audited output then is ``(actions, outputs)``).
        d: the losses are ``(d,)`` float32 (needed only when every strategy reads outputs).

    Returns:
        The jittable ``(key, x) -> actions`` (``(T + 1, ...)``), or ``-> (actions, outputs)`` with ``sees_outputs``.
    """
    T = check_positive_int("T", T)
    return _game(learner, params, _check_strategies(strategies), T, bool(sees_outputs), False, d)


def play_adaptive_game(learner, params, strategy: NeighbourStrategy, *, T: int, keys: jax.Array, world: int,
                       sees_outputs: bool = False, d: Optional[int] = None) -> dict:
    """Play ``strategy`` against ``learner`` in ``world`` on every key (vmapped), recording the proposed losses.

    Args:
        learner: the :class:`jaxdp.Learner`.
        params: its parameters.
        strategy: the :class:`NeighbourStrategy`.
        T: the horizon.
        keys: a batch of typed PRNG keys (one run each).
        world: 0 or 1.
        sees_outputs: as in :func:`adaptive_mechanism`.
        d: the losses are ``(d,)`` float32 (needed only when the strategy reads outputs).

    Returns:
        ``{"actions", "outputs", "l0", "l1"}``: per run, the ``T + 1`` actions, the ``info`` of every round (``{}``
        without ``sees_outputs``) and the two worlds' proposed losses of every round (after the one-challenge rule).
    """
    T = check_positive_int("T", T)
    if world not in (0, 1):
        raise ValueError(f"world must be 0 or 1, got {world!r}")
    mech = _game(learner, params, _check_strategies([strategy]), T, bool(sees_outputs), True, d)
    view, (l0, l1) = jax.jit(jax.vmap(lambda k: mech(k, jnp.array([0, world], jnp.int32))))(keys)
    acts, outs = view if sees_outputs else (view, {})
    return {"actions": acts, "outputs": outs, "l0": l0, "l1": l1}


def _on_actions(f):
    def g(out):
        return f(out[0])
    return g


def default_events(shape, d: int, on_actions: bool = False) -> list:
    """The default event families of :func:`jaxdp.privacy.audit.learners.audit_learner` for actions of ``shape``.

    Integer actions (experts): the number of rounds playing each expert and, when ``d^(T+1) <= 4096``, the whole action
    sequence as a cell; vector actions (OCO): each coordinate's mean over the rounds and its final value.

    Args:
        shape: the ``jax.ShapeDtypeStruct`` of the ``(T + 1, ...)`` actions.
        d: the number of experts / the dimension.
        on_actions: the audited output is ``(actions, outputs)`` (apply the statistics to its first entry).

    Returns:
        A list of :class:`jaxdp.privacy.audit.SearchEvents`.
    """
    w = _on_actions if on_actions else (lambda f: f)
    if jnp.issubdtype(shape.dtype, jnp.integer) and len(shape.shape) == 1:
        k = int(d)
        events = [SearchEvents(statistic=w(_count(j))) for j in range(min(k, 8))]
        if k ** shape.shape[0] <= 4096:
            events.append(SearchEvents(cell=w(action_code(k)), n_cells=k ** shape.shape[0]))
        return events
    if len(shape.shape) == 1:
        return [SearchEvents(statistic=w(lambda a: jnp.mean(a).astype(jnp.float32))),
                SearchEvents(statistic=w(lambda a: a[-1].astype(jnp.float32)))]
    dims = shape.shape[-1]
    return ([SearchEvents(statistic=w(_mean_coord(j))) for j in range(min(dims, 4))]
            + [SearchEvents(statistic=w(_last_coord(j))) for j in range(min(dims, 4))])


def audit_learner_adaptive(learner, params, strategies: Sequence[NeighbourStrategy], *, T: int, d: int,
                           claimed_eps: float, claimed_delta: float = 0.0, n: int = 100_000, key: jax.Array,
                           alpha: float = DEFAULT_ALPHA, events: Any = None, n_best: int = 4,
                           sees_outputs: bool = False, search: Optional[float] = None,
                           delta_float: Optional[float] = None, name: str = "learner") -> AuditReport:
    """Audit an online learner in the adaptive game against (``claimed_eps``, ``claimed_delta``).

    Every strategy is one neighbouring "pair": its world 0 against its world 1 (:func:`adaptive_mechanism`); the
    auditor (:func:`jaxdp.privacy.audit.audit_mechanism`) searches the best (strategy, event, direction) on part of the
    runs and bounds ε on fresh ones, family-wise error ``alpha``. Default events: those of
    :func:`jaxdp.privacy.audit.learners.audit_learner` on the actions (:func:`default_events`).

    Args:
        learner: the :class:`jaxdp.Learner` audited.
        params: its parameters.
        strategies: the :class:`NeighbourStrategy` objects.
        T: the horizon.
        d: the number of experts / the dimension (for the default events).
        claimed_eps: the claimed ε (> 0, finite).
        claimed_delta: the claimed δ in ``[0, 1)``.
        n: runs per world and strategy.
        key: typed PRNG key.
        alpha: family-wise error: a learner satisfying the claim in the adaptive game is flagged with probability
            ``<= alpha``.
        events: event families as in :func:`jaxdp.privacy.audit.audit_mechanism` (default above); with
            ``sees_outputs`` they receive ``(actions, outputs)``.
        n_best: tests kept by the search and evaluated on fresh runs.
        sees_outputs: the view includes the learner's released outputs (:func:`adaptive_mechanism`).
        search: the search fraction (default: the auditor's).
        delta_float: float δ floor added to ``claimed_delta`` (default ``2^-23``).
        name: the name shown in the report.

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`; its ``pair`` is the best strategy's name.
    """
    T = check_positive_int("T", T)
    d = check_positive_int("d", d)
    strategies = _check_strategies(strategies)
    mech = _game(learner, params, strategies, T, bool(sees_outputs), False, d)
    pairs = {s.name: (np.array([i, 0], np.int32), np.array([i, 1], np.int32)) for i, s in enumerate(strategies)}
    if events is None:
        out = jax.eval_shape(mech, jax.random.key(0), jnp.zeros((2,), jnp.int32))
        events = default_events(out[0] if sees_outputs else out, d, on_actions=bool(sees_outputs))
    return audit_mechanism(mech, pairs, events, claimed_eps=claimed_eps, claimed_delta=claimed_delta, n=n, key=key,
                           alpha=alpha, n_best=n_best, search=search, delta_float=delta_float, name=name)
