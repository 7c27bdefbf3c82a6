"""``[shapes]`` and ``[host callback]``: what ``init``/``step``/``end_block`` return (found with
``jax.eval_shape``), the host callbacks in their jaxprs, and the actions of real rounds
(:func:`check_shapes`).

Import these from ``jaxdp.testing``."""
from __future__ import annotations

from typing import Any, Optional

import jax
import jax.numpy as jnp
import numpy as np

from ..core import Adversary, Learner, Problem, seed_keys
from ._common import _RANGE_FIX, _fail, _key_reuse_fail


def _leaf_type(v) -> str:
    weak = isinstance(v, (bool, int, float, complex)) or bool(getattr(v, "weak_type", False))
    return f"{jnp.result_type(v)}{list(np.shape(v))}" + (" (weakly typed Python number)" if weak else "")


def _struct(tree):
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return str(treedef), [_leaf_type(v) for v in leaves]


def _describe_diff(a, b) -> str:
    ta: Any
    tb: Any
    la, ta = jax.tree_util.tree_flatten_with_path(a)
    lb, tb = jax.tree_util.tree_flatten_with_path(b)
    if ta != tb:
        return f"structure {ta} after init, {tb} after step"
    for (pa, sa), (_, sb) in zip(la, lb):
        if (sa.shape, sa.dtype) != (sb.shape, sb.dtype):
            return (f"leaf state{jax.tree_util.keystr(pa)} is {sa.dtype}{list(sa.shape)} after init "
                    f"but {sb.dtype}{list(sb.shape)} after step")
    return ""


def _action_spec(problem: Problem, loss_struct) -> tuple[str, tuple]:
    """``("index", ())`` for finite action sets (experts), ``("vector", (d,))`` for OCO problems."""
    if problem.grad is None:
        return "index", ()
    shape = getattr(loss_struct, "shape", None)
    if shape is None:   # structured OCO losses (e.g. ABLoss(a, b)): the action has a's shape
        leaves = jax.tree_util.tree_leaves(loss_struct)
        shape = max((tuple(leaf.shape) for leaf in leaves), key=len)
    return "vector", tuple(shape)


def check_shapes(learner: Learner, adversary: Adversary, problem: Problem, params: Any, adv_params: Any,
                 rounds: int = 64, d: Optional[int] = None, seeds: int = 8) -> None:
    """``init``/``step``/``end_block`` return what the simulator needs (module docstring).

    ``d``: the number of experts (default: the length of a loss vector); every
    played index must lie in ``[0, d)`` (OCO: every point must be finite). The
    actions are checked on ``rounds`` real rounds of ``seeds`` seeds in one
    compiled call. ``init``/``step``/``end_block`` must not hold host callbacks
    (``jax.debug.print``, ``jax.debug.callback``, ``io_callback``).

    Args:
        learner: the learner under test.
        adversary: the adversary.
        problem: the problem.
        params: the learner's params.
        adv_params: the adversary's params.
        rounds: the number of real rounds checked.
        d: the number of experts (default: the length of a loss vector).
        seeds: the number of seeds.

    Raises:
        ConformanceError: an action, shape or host callback is wrong (``[shapes]``, ``[host callback]``).
    """
    kind, n = _check_static(learner, adversary, problem, params, adv_params, d)
    rounds = max(int(rounds), 2 * (int(learner.block_size) if learner.end_block is not None else 1) + 1)
    try:
        xs = _play(learner, adversary, params, adv_params, rounds, seeds)     # (seeds, rounds + 1[, d])
    except jax.errors.KeyReuseError as e:
        _key_reuse_fail(e)
    checked = f"{seeds} seeds x {rounds} rounds checked"
    if kind == "index":
        if n is not None:
            bad = (xs < 0) | (xs >= n)
            if bad.any():
                s_, r_ = (int(i) for i in np.argwhere(bad)[0])
                _fail("shapes", f"state.x must be an expert index in [0, {n}), got {int(xs[s_, r_])} "
                                f"{'from init' if r_ == 0 else f'after round {r_ - 1}'} of seed {s_} "
                                f"({int(bad.sum())} of {bad.size} actions out of range; {checked}). "
                                + _RANGE_FIX.format(n=n))
    else:
        finite = np.isfinite(xs).reshape(xs.shape[:2] + (-1,)).all(-1)
        if not finite.all():
            s_, r_ = (int(i) for i in np.argwhere(~finite)[0])
            _fail("shapes", f"state.x must be finite, got a NaN/inf entry "
                            f"{'from init' if r_ == 0 else f'after round {r_ - 1}'} of seed {s_} ({checked}): "
                            f"guard the update (divisions, logs, projections)")


def _check_static(learner, adversary, problem, params, adv_params, d: Optional[int]) -> tuple[str, Optional[int]]:
    """The part of :func:`check_shapes` that runs nothing: structure, shapes and dtypes (``jax.eval_shape``),
    and no host callbacks (the jaxprs). Returns the action kind and, for expert indices, ``d``."""
    if not isinstance(learner, Learner):
        _fail("shapes", f"expected a jaxdp.Learner(init, step), got {type(learner).__name__}")
    for name in ("init", "step"):
        if not callable(getattr(learner, name)):
            _fail("shapes", f"learner.{name} must be callable, got {getattr(learner, name)!r}")
    if learner.end_block is not None and (not isinstance(learner.block_size, int) or learner.block_size < 1):
        _fail("shapes", f"learner.block_size must be a static int >= 1 with end_block, got {learner.block_size!r}")
    key = jax.random.key(0)
    try:
        a_state = jax.eval_shape(adversary.init, key, adv_params)
        loss = jax.eval_shape(adversary.loss, a_state, jnp.int32(0))
    except Exception as e:  # pragma: no cover - the built-in instances are tested
        _fail("shapes", f"the adversary failed to trace: {e}")
    try:
        state = jax.eval_shape(learner.init, key, params)
    except jax.errors.KeyReuseError as e:
        _key_reuse_fail(e)
    except Exception as e:
        _fail("shapes", f"learner.init(key, params) failed to trace: {type(e).__name__}: {str(e).splitlines()[0]}")
    if not hasattr(state, "x"):
        _fail("shapes", f"learner.init must return a state with the action played in `state.x` "
                        f"(a NamedTuple with a field x), got {type(state).__name__}")
    kind, shape = _action_spec(problem, loss)
    x = state.x
    if kind == "index":
        if tuple(x.shape) != () or not jnp.issubdtype(x.dtype, jnp.integer):
            _fail("shapes", f"state.x must be an integer scalar (the expert played), got {x.dtype}{list(x.shape)}")
    else:
        if tuple(x.shape) != shape or not jnp.issubdtype(x.dtype, jnp.floating):
            _fail("shapes", f"state.x must be a float vector of shape {list(shape)} (the point played), "
                            f"got {x.dtype}{list(x.shape)}")
    try:
        new, info = jax.eval_shape(learner.step, key, state, loss, params)
    except jax.errors.KeyReuseError as e:
        _key_reuse_fail(e)
    except Exception as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        _fail("shapes", f"learner.step(key, state, loss, params) failed to trace with a loss of shape "
                        f"{getattr(loss, 'shape', '?')}: {type(e).__name__}: {msg}")
    diff = _describe_diff(state, new)
    if diff:
        _fail("shapes", f"step must return a state with the same structure, shapes and dtypes as init "
                        f"(lax.scan carries it): {diff}")
    if not isinstance(info, dict):
        _fail("shapes", f"step must return (state, info) with info a dict of scalars, got {type(info).__name__}")
    for k, v in info.items():
        for leaf in jax.tree_util.tree_leaves(v):
            if tuple(leaf.shape) != ():
                _fail("shapes", f"info[{k!r}] must be a scalar (the simulator sums it over rounds), "
                                f"got shape {list(leaf.shape)}")
    if learner.end_block is not None:
        try:
            new_b, binfo = jax.eval_shape(learner.end_block, key, state, params)
        except Exception as e:
            _fail("shapes", f"learner.end_block(key, state, params) failed to trace: {e}")
        diff = _describe_diff(state, new_b)
        if diff:
            _fail("shapes", f"end_block must return a state like init's: {diff}")
    try:
        val = jax.eval_shape(problem.value, loss, x)
    except Exception as e:
        _fail("shapes", f"problem.value(loss, state.x) failed: {e}")
    if tuple(val.shape) != ():
        _fail("shapes", f"problem.value(loss, state.x) must be a scalar, got shape {list(val.shape)}")

    _check_callbacks(learner, key, state, loss, params)
    n = None
    if kind == "index":
        n = d if d is not None else (int(np.prod(loss.shape)) if hasattr(loss, "shape") else None)
    return kind, n


# host callbacks: jax.debug.print / jax.debug.callback / jax.experimental.io_callback
_CALLBACK_PRIMS = ("debug_print", "debug_callback", "io_callback")


def _subjaxprs(v):
    if hasattr(v, "eqns"):
        yield v
    elif hasattr(v, "jaxpr") and hasattr(getattr(v, "jaxpr"), "eqns"):
        yield v.jaxpr
    elif isinstance(v, (tuple, list)):
        for u in v:
            yield from _subjaxprs(u)


def _callback_prims(jaxpr) -> set:
    """Names of the host-callback primitives anywhere in ``jaxpr`` (nested jit/scan/cond/while bodies too)."""
    found, todo, seen = set(), [jaxpr], set()
    while todo:
        j = todo.pop()
        if id(j) in seen:
            continue
        seen.add(id(j))
        for eqn in j.eqns:
            if eqn.primitive.name in _CALLBACK_PRIMS:
                found.add(eqn.primitive.name)
            for v in eqn.params.values():
                todo.extend(_subjaxprs(v))
    return found


def _check_callbacks(learner, key, state, loss, params) -> None:
    """``[host callback]``: no ``jax.debug.print``/``jax.debug.callback``/``io_callback`` in
    ``init``/``step``/``end_block`` (read from their jaxprs; nothing runs)."""
    fns = [("init", learner.init, (key, params)), ("step", learner.step, (key, state, loss, params))]
    if learner.end_block is not None:
        fns.append(("end_block", learner.end_block, (key, state, params)))
    for name, fn, args in fns:
        try:
            found = _callback_prims(jax.make_jaxpr(fn)(*args).jaxpr)
        except jax.errors.KeyReuseError as e:
            _key_reuse_fail(e)
        except Exception:  # noqa: BLE001 - traced already by eval_shape; nothing more to say here
            continue
        if found:
            _fail("host callback", f"learner.{name} calls the host ({', '.join(sorted(found))}: jax.debug.print, "
                                   f"jax.debug.callback or io_callback). Under simulate it would run on the host "
                                   f"in every round of every seed (millions of lines or calls in jaxdp compare) and "
                                   f"stall the compiled loop. Remove it from the learner; to debug, call "
                                   f"learner.{name}(...) on one round outside simulate and print there")


def _play(learner, adversary, params, adv_params, rounds: int, seeds: int) -> np.ndarray:
    """Actions ``x_1..x_{rounds+1}`` of ``seeds`` runs, shape ``(seeds, rounds + 1[, d])``, in one compiled
    call (block learners: ``end_block`` after every block). The runs go one after the other (``lax.map``):
    a batched step compiles more slowly than a few hundred tiny rounds run."""
    b = max(1, int(learner.block_size)) if learner.end_block is not None else 1

    def run(key):
        k_i, k_a, k_s, k_b = jax.random.split(key, 4)
        st = learner.init(k_i, params)
        a = adversary.init(k_a, adv_params)

        def body(st, t):
            st2, _ = learner.step(jax.random.fold_in(k_s, t), st, adversary.loss(a, t), params)
            if learner.end_block is not None:
                st2 = jax.lax.cond((t + 1) % b == 0,
                                   lambda s: learner.end_block(jax.random.fold_in(k_b, t), s, params)[0],
                                   lambda s: s, st2)
            return st2, st.x

        last, xs = jax.lax.scan(body, st, jnp.arange(rounds, dtype=jnp.int32))
        return jnp.concatenate([xs, last.x[None]])

    return np.asarray(jax.jit(lambda keys: jax.lax.map(run, keys))(seed_keys(7, seeds)))
