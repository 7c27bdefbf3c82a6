"""Public conformance checks for online learners (cf. ``pgx.api_test``, ``chex`` assertions).

Every ``Learner`` in jaxdp passes :func:`check_learner`, and ``jaxdp compare``
runs :func:`check_factory` on a user's learner before spending any time on it.
Each check raises :class:`ConformanceError` (an ``AssertionError``) whose
message says what is wrong and how to fix it:

* :func:`check_shapes` — ``init``/``step`` (and ``end_block``) return what the
  engine needs: a state with an action ``state.x`` of the problem's shape
  (an integer index in ``[0, d)`` for experts, a ``(d,)`` float vector for OCO),
  the same state structure, shapes and dtypes after ``step`` as after ``init``
  (``lax.scan`` carries it), and an ``info`` dict of scalars. Found with
  ``jax.eval_shape`` (nothing is compiled), then on real rounds: every action of
  8 seeds x 64 rounds, in one compiled call, must be in range. It also refuses
  host callbacks in ``init``/``step``/``end_block`` (``jax.debug.print``,
  ``jax.debug.callback``, ``io_callback``: found in their jaxprs, before
  anything runs), which would run on the host in every round of every seed.
* :func:`check_key_reuse` — no PRNG key is used twice (run under
  ``jax_debug_key_reuse``): a reused key correlates draws that a privacy proof
  assumes independent.
* :func:`check_pure` — ``step`` is a pure function: no side effects in its
  jaxpr (callbacks), and two independent traces compute bit-identical runs (a
  step that reads Python state, ``numpy.random`` or a counter at trace time
  does not).
* :func:`check_traces` — one compilation serves every grid point: changing the
  values of ``params``, ``adv_params`` and ``T`` does not retrace
  (``chex.assert_max_traces``). A learner that bakes hyperparameters into
  the trace recompiles for every (ε, T) of a sweep.
* :func:`check_learner` — all of the above plus jit/vmap, determinism given the
  key, sensitivity to the key (two different learner keys against the same
  losses must change some output, unless ``deterministic=True``), finite
  metrics (every ``info`` entry) and regret above the trivial lower bound.
  One compiled engine run per grid point (``seeds`` seeds x two learner keys,
  under ``jax_debug_key_reuse``) checks every action of every round: an
  expert index out of ``[0, d)`` fails ``[shapes]`` with its seed and round.
* :func:`check_factory` — for ``jaxdp compare``: a factory ``(d, T, T_max, eps, delta)
  -> Learner | (Learner, params)`` (any subset of the arguments) returns the *same* ``Learner`` object at every
  grid point (so one compilation serves the sweep), and that learner passes
  :func:`check_learner` on the problem class's first benchmark instance.

See docs/guide/own-learner.md.
"""
from __future__ import annotations

import contextlib
import dataclasses
import inspect
from typing import Any, Callable, Optional, Sequence

import chex
import jax
import jax.numpy as jnp
import numpy as np

from ..core import AdaptiveAdversary, Adversary, Learner, Problem, seed_keys
from ..core.simulate import INVALID_ACTION_KEYS, _rollout_impl

__all__ = [
    "ConformanceError", "check_learner", "check_shapes", "check_key_reuse", "check_pure", "check_traces", "check_case",
    "check_factory", "call_factory", "check_factory_signature", "FactoryReport", "FACTORY_ARGS",
]


class ConformanceError(AssertionError):
    """A learner violates the engine's protocol; the message names the check and the fix."""



def _fail(check: str, msg: str):
    raise ConformanceError(f"[{check}] {msg}")


def _key_reuse_fail(e):
    _fail("key reuse", "a PRNG key is used twice (" + str(e).splitlines()[0] + "). Split the step's key "
          "(k1, k2 = jax.random.split(key)) and use each part once; never store a key in the state and draw "
          "from it every round")


_RANGE_FIX = ("The engine would read loss[x] out of bounds (simulate refuses the run): fix the sampler so that "
              "it only returns indices 0..{n}-1")


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
    """``init``/``step``/``end_block`` return what the simulator needs (module docstring): every played index
    in ``[0, d)`` (OCO: every point finite), checked on real rounds in one compiled call, and no host callbacks
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
    if learner.release is not None:
        try:
            out0, out1 = (jax.eval_shape(learner.release, st, params) for st in (state, new))
        except Exception as e:
            _fail("shapes", f"learner.release(state, params) failed to trace: {type(e).__name__}: "
                            f"{str(e).splitlines()[0] if str(e) else ''}")
        diff = _describe_diff(out0, out1)
        if diff or not all(hasattr(leaf, "shape") for leaf in jax.tree_util.tree_leaves(out0)):
            _fail("shapes", f"learner.release must return a pytree of arrays with the same structure, shapes and "
                            f"dtypes after init and after step (the adaptive game stacks it per round): "
                            f"{diff or 'a leaf is not an array'}")
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


def _runner(learner, adversary, problem, T_max: int, salts: int = 1):
    """The engine's one-seed core vmapped over keys (with ``flag_actions``). With ``salts > 1`` every key
    runs ``salts`` times with different learner keys (salt 0: the key itself) against the same losses;
    the outputs then have ``seeds * salts`` rows, seed-major."""
    ck = (1, T_max)

    def run(params, adv_params, keys, T_):
        def one(k, salt):
            return _rollout_impl(learner, adversary, problem, T_max, ck, params, adv_params, k, T_,
                                 flag_actions=True, learner_salt=salt)

        if salts == 1:
            return jax.vmap(lambda k: one(k, None))(keys)
        lanes = jnp.arange(keys.shape[0] * salts)
        return jax.vmap(one)(keys[lanes // salts], (lanes % salts).astype(jnp.uint32))

    return run


def check_key_reuse(learner: Learner, adversary: Adversary, problem: Problem, params: Any, adv_params: Any,
                    T: int = 16, seeds: int = 2) -> None:
    """No PRNG key is consumed twice (the whole run is traced under ``jax_debug_key_reuse``).

    Args:
        learner, adversary, problem, params, adv_params, seeds: as in :func:`check_shapes`.
        T: the horizon.

    Raises:
        ConformanceError: a key is consumed twice (``[key reuse]``).
    """
    from jax.errors import KeyReuseError

    run = jax.jit(_runner(learner, adversary, problem, T))
    try:
        with jax.debug_key_reuse(True):
            jax.block_until_ready(run(params, adv_params, seed_keys(1, seeds), jnp.int32(T)))
    except KeyReuseError as e:
        _key_reuse_fail(e)


def check_pure(learner: Learner, adversary: Adversary, problem: Problem, params: Any, adv_params: Any,
               T: int = 16, seeds: int = 2) -> None:
    """``step`` has no side effects and two independent traces of a run are identical (same program, same
    constants): a step that reads ``numpy.random``, Python ``random``, a counter or the clock at trace time
    is not. Traces only; nothing is compiled.

    Args:
        learner, adversary, problem, params, adv_params, seeds: as in :func:`check_shapes`.
        T: the horizon.

    Raises:
        ConformanceError: the two traces differ (``[impure step]``).
    """
    run = _runner(learner, adversary, problem, T)
    args = (params, adv_params, seed_keys(2, seeds), jnp.int32(T))
    # a fresh function object per trace: make_jaxpr caches traces by function identity
    traces = [jax.make_jaxpr(lambda *a: run(*a))(*args) for _ in range(2)]
    found = _callback_prims(traces[0].jaxpr)
    if found & {"debug_print", "debug_callback"}:
        _fail("host callback", f"the run calls the host ({', '.join(sorted(found))}: jax.debug.print or "
                               "jax.debug.callback): it would run in every round of every seed. Remove it from "
                               "the learner")
    bad = sorted({type(e).__name__ for e in traces[0].effects if "Debug" not in type(e).__name__})
    if bad:
        _fail("impure step", f"the run has side effects {bad} (io_callback / ordered effects): a step must be a "
                             f"pure function of (key, state, loss, params)")
    a, b = traces
    same = str(a.jaxpr) == str(b.jaxpr) and len(a.consts) == len(b.consts) and all(
        np.shape(u) == np.shape(v) and np.array_equal(np.asarray(u), np.asarray(v))
        for u, v in zip(a.consts, b.consts) if not isinstance(u, jax.Array) or not jnp.issubdtype(
            u.dtype, jax.dtypes.prng_key))
    if not same:
        _fail("impure step", "two traces of the same run differ: step reads something other than its arguments "
                             "at trace time (numpy.random, Python random, a global counter, the clock). Draw "
                             "randomness from the key it is given and keep state in the state pytree")


def _check_traces(learner, adversary, problem, params_list, adv_params, T, seeds, salts: int = 1):
    if len(params_list) < 2:
        raise ValueError(f"params_list must hold at least two parameter settings (grid points), got {len(params_list)}")
    s0 = _struct(params_list[0])
    for i, p in enumerate(params_list[1:], 1):
        if _struct(p) != s0:
            _fail("recompiles", f"grid point {i} has params of another structure, shape or dtype than point 0 "
                                f"({_struct(p)} vs {s0}): every grid point would compile again. Keep one "
                                "params pytree (a NamedTuple of jnp arrays, not Python numbers) whose values vary")
    keys = seed_keys(123, seeds)
    fn = _runner(learner, adversary, problem, T, salts)

    @jax.jit
    @chex.assert_max_traces(n=1)
    def run(params, adv_params, keys, T_):
        return fn(params, adv_params, keys, T_)

    chex.clear_trace_counter()
    outs = []
    for i, params in enumerate(params_list):
        # a different horizon at each grid point: one trace must serve all T <= T_max
        T_i = T - (i % 2) * (T // 4)
        try:
            out = run(params, adv_params, jax.random.clone(keys), jnp.int32(T_i))
        except jax.errors.KeyReuseError as e:   # under jax_debug_key_reuse
            _key_reuse_fail(e)
        except AssertionError as e:
            if "trace" not in str(e).lower():
                raise
            _fail("recompiles", "the run was traced again for a new grid point (params values / T changed): "
                                "a hyperparameter is a Python number or a static argument. Put every value that "
                                "varies across a sweep in the params pytree as a jnp array")
        outs.append((T_i, jax.tree_util.tree_map(np.asarray, out)))
    return outs, run


def check_traces(learner: Learner, adversary: Adversary, problem: Problem, params_list: Sequence[Any],
                 adv_params: Any, T: int = 64, seeds: int = 2) -> list:
    """One trace serves every grid point: the values of ``params``, ``adv_params`` and ``T`` vary, the
    compilation does not (``chex.assert_max_traces(n=1)``). Returns ``[(T_i, metrics)]`` per grid point.

    Args:
        learner: the learner under test.
        adversary: the adversary.
        problem: the problem.
        params_list: the grid points' params, of one pytree structure.
        adv_params: the adversary's params.
        T: the horizon (``T_max``).
        seeds: the number of seeds.

    Returns:
        ``[(T_i, metrics)]``, one pair per grid point.

    Raises:
        ConformanceError: a grid point recompiles (``[recompiles]``).
    """
    outs = _check_traces(learner, adversary, problem, params_list, adv_params, T, seeds)[0]
    return [(T_i, _public(out)) for T_i, out in outs]


def _public(out: dict) -> dict:
    return {k: v for k, v in out.items() if k not in INVALID_ACTION_KEYS}


#: learner keys per seed in check_learner's engine runs (two: the key-sensitivity check compares them)
_SALTS = 2


def check_learner(learner: Learner, adversary: Adversary, problem: Problem, params_list: Sequence[Any],
                  adv_params: Any, T: int = 64, seeds: int = 4, deterministic: bool = False,
                  loss_range: float = 1.0, key_reuse: bool = True, purity: bool = True,
                  d: Optional[int] = None) -> dict:
    """The conformance check every ``Learner`` in jaxdp passes (module docstring).

    One compiled engine run per grid point checks every round of ``seeds`` seeds, each with two
    learner keys against the same losses: every action in range (``[shapes]``), every metric and
    ``info`` entry finite (``[finite]``), determinism given the key, and sensitivity to the key.

    Args:
      learner, adversary, problem: the engine objects.
      params_list: at least two parameter settings (grid points) of one pytree structure.
      adv_params: the adversary's parameters.
      T: the horizon (``T_max``); alternate grid points run at ``3T/4`` (traced horizon).
      seeds: seeds per run (each run twice, with two learner keys).
      deterministic: the learner ignores its key (e.g. follow-the-leader); skips the key-sensitivity
        check (two learner keys against the same losses must change some output of some seed).
      loss_range: per-round loss range; regret must be ``>= -loss_range * T``.
      key_reuse, purity: also check key reuse (the engine runs under ``jax_debug_key_reuse``) and
        :func:`check_pure`.
      d: the number of experts (default: the length of a loss vector).

    Against an :class:`jaxdp.core.AdaptiveAdversary` the losses depend on the actions, so two learner keys
    face different losses: the key-sensitivity check (which needs the losses fixed) is skipped, and
    ``expected_regret`` is NaN by design (not a ``[finite]`` failure).

    Returns:
        The metrics of the first grid point (``(seeds,)`` arrays, equal to ``simulate``'s with the same keys).

    Raises:
        ConformanceError: a check failed; the message starts with the check's name in brackets:
            ``[shapes]``, ``[host callback]``, ``[key reuse]``, ``[impure step]``, ``[recompiles]``,
            ``[finite]``, ``[horizon]``, ``[deterministic]`` or ``[key]``.
        ValueError: ``params_list`` holds fewer than two grid points.
    """
    if not isinstance(learner, Learner):
        _fail("shapes", f"expected a jaxdp.Learner, got {type(learner).__name__}")
    if len(params_list) < 2:
        raise ValueError(f"params_list must hold at least two parameter settings (grid points), got {len(params_list)}")
    _, n = _check_static(learner, adversary, problem, params_list[0], adv_params, d)
    adaptive = isinstance(adversary, AdaptiveAdversary)
    if purity:
        check_pure(learner, adversary, problem, params_list[0], adv_params)
    # every engine run of this check under jax_debug_key_reuse (one compilation; no separate key-reuse run)
    with jax.debug_key_reuse(True) if key_reuse else contextlib.nullcontext():
        outs, run = _check_traces(learner, adversary, problem, params_list, adv_params, T, seeds, _SALTS)
        for g, (T_i, out) in enumerate(outs):
            _check_engine_out(out, T_i, T, g, loss_range, n, seeds, adaptive)
        keys = seed_keys(123, seeds)
        again = jax.tree_util.tree_map(np.asarray, run(params_list[0], adv_params, jax.random.clone(keys),
                                                       jnp.int32(T)))
    first = outs[0][1]
    for k in again:
        if not np.array_equal(again[k], first[k], equal_nan=True):
            _fail("deterministic", f"two runs with the same keys differ in {k!r}: the learner is not a function "
                                   "of its keys")
    if adaptive:   # the losses follow the actions: the [key] check needs them fixed
        return {k: v.reshape((seeds, _SALTS) + v.shape[1:])[:, 0] for k, v in _public(first).items()}
    for g, (_, out) in enumerate(outs):
        _check_losses_fixed(out, seeds, g)
    if not deterministic and not any(_salts_differ(out, seeds) for _, out in outs):
        _fail("key", f"two different learner keys against the same losses gave identical runs (every metric "
                     f"and info entry) on all {seeds} seeds and {len(outs)} grid points: the learner ignores "
                     f"its key. Draw its randomness from the key passed to init/step/end_block (split it: "
                     f"k1, k2 = jax.random.split(key)), or, if it is deterministic by design, pass "
                     f"deterministic=True (a jaxdp compare factory: set factory.deterministic = True)")
    return {k: v.reshape((seeds, _SALTS) + v.shape[1:])[:, 0] for k, v in _public(first).items()}


def _check_losses_fixed(out: dict, seeds: int, g: int) -> None:
    """The ``[key]`` check compares two learner keys against the same losses: the adversary's key is not
    salted, so each seed's comparator loss (``best_loss``, a function of the losses alone) is one number for
    both learner keys. Were it not, a learner that ignores its key would still see its outputs change (the
    losses would) and the check could never fire."""
    best = out["best_loss"].reshape((seeds, _SALTS))
    if not np.array_equal(best[:, :1].repeat(_SALTS, axis=1), best, equal_nan=True):
        raise AssertionError(f"jaxdp.testing: the learner keys of one seed faced different losses at grid point {g} "
                             f"(best_loss {best.tolist()}): the adversary's key must not depend on the learner's "
                             "salt (an engine bug, not the learner's)")


def _salts_differ(out: dict, seeds: int) -> bool:
    """Did the learner keys of some seed give different outputs?"""
    for k, v in _public(out).items():
        v = v.reshape((seeds, _SALTS) + v.shape[1:])
        a, b = v[:, :1], v[:, 1:]
        same = (a == b) | ((np.isnan(a) & np.isnan(b)) if v.dtype.kind in "fc" else False)
        if not same.all():
            return True
    return False


_ENGINE_KEYS = ("T", "loss", "best_loss", "regret", "regret_ckpt", "expected_loss", "expected_regret",
                "expected_regret_ckpt")


def _info_fix(name: str) -> str:
    return (f"info[{name!r}] must be a finite number in every round (the simulator sums it): guard the divisions "
            f"and logs that produce it, e.g. jnp.where(n > 0, s / n, 0.0)")


def _check_engine_out(out: dict, T_i: int, T: int, g: int, loss_range: float, n: Optional[int],
                      seeds: int, adaptive: bool = False) -> None:
    """``[shapes]``/``[finite]``/``[horizon]`` on one grid point's engine output (``seeds * salts`` rows)."""
    salts = max(1, out["regret"].shape[0] // seeds)
    bad_round = out.get("invalid_action_round")
    if bad_round is not None and np.any(bad_round >= 0):
        lane = int(np.argwhere(bad_round >= 0)[0][0])
        n_bad = int(np.sum(bad_round >= 0))
        _fail("shapes", f"state.x must be an expert index in [0, {n if n is not None else 'd'}), got "
                        f"{int(out['invalid_action'][lane])} in round {int(bad_round[lane])} (counting from 0) of "
                        f"seed {lane // salts} (learner key {lane % salts}) at grid point {g} ({n_bad} of "
                        f"{bad_round.size} runs of {T_i} rounds affected). "
                        + _RANGE_FIX.format(n=n if n is not None else "d"))
    ck_ok = np.asarray([1, T]) <= T_i      # the runner's checkpoint rounds: (1, T_max)
    for k, v in out.items():
        if k in INVALID_ACTION_KEYS or v.dtype.kind not in "fc":
            continue
        if adaptive and k.startswith("expected_regret"):   # NaN by design (AdaptiveAdversary)
            continue
        vv = v[..., ck_ok] if k.endswith("_ckpt") else v
        if np.all(np.isfinite(vv)):
            continue
        at = tuple(int(i) for i in np.argwhere(~np.isfinite(vv))[0])
        where = f"seed {at[0] // salts} (learner key {at[0] % salts}) at grid point {g}"
        if k in _ENGINE_KEYS:
            _fail("finite", f"{k} is {vv[at].item()!r} for {where}: the incurred loss problem.value(loss, state.x) "
                            f"(or info['expected_loss']) is not finite; keep state.x finite and in the domain, and "
                            f"info['expected_loss'] finite")
        name = "switched" if k == "switches" else k
        _fail("finite", f"info[{name!r}] summed over the rounds is {vv[at].item()!r} for {where}. " + _info_fix(name))
    if not np.all(out["regret"] >= -loss_range * T - 1e-3):
        _fail("finite", f"regret {out['regret'].min()} is below the trivial lower bound -{loss_range} * T")
    if not np.all(out["T"] == T_i):
        _fail("horizon", f"runs report T={out['T']} instead of {T_i}")


# --------------------------------------------------------------------------- registered learners' cases


def check_case(case, d: Optional[int] = None, T: Optional[int] = None) -> dict:
    """Run :func:`check_learner` on a registered learner's :class:`jaxdp.registry.ConformanceCase` at ``d``, ``T``
    (default: the case's) with the case's options; returns the metrics of its first grid point.

    Args:
        case: a :class:`jaxdp.registry.ConformanceCase`.
        d: the number of experts (default: the case's).
        T: the horizon (default: the case's).

    Returns:
        The metrics of the first grid point.

    Raises:
        ConformanceError: a check failed.
    """
    T = int(T or case.T)
    learner, adversary, problem, params_list, adv_params = case.parts(d, T)
    kw = dict(T=T, seeds=case.seeds)
    kw.update(case.check)
    return check_learner(learner, adversary, problem, list(params_list), adv_params, **kw)


@dataclasses.dataclass
class FactoryReport:
    """What :func:`check_factory` found: the learner, its params at each checked grid point, the
    factory's claimed ε (``None`` if it claims none) and whether it is deterministic.

    Attributes:
        learner: the learner the factory returns (the same object at every grid point).
        params: its params at each checked grid point.
        claimed_eps: the factory's claimed ε (``None`` if it claims none).
        deterministic: whether the learner ignores its key.
        checks: the metrics of the checks.
    """

    learner: Learner
    params: list
    claimed_eps: Optional[float]
    deterministic: bool
    checks: list


#: the arguments a ``jaxdp compare`` factory may take (by these names; any subset, or ``**kwargs``)
FACTORY_ARGS = ("d", "T", "T_max", "eps", "delta")
_FACTORY_ALIASES = {"n": "d", "n_experts": "d", "dim": "d", "k": "d", "horizon": "T", "t": "T", "n_rounds": "T",
                    "rounds": "T", "epsilon": "eps", "privacy": "eps", "t_max": "T_max", "tmax": "T_max",
                    "max_T": "T_max", "Delta": "delta"}


def check_factory_signature(factory: Callable) -> None:
    """Refuse a factory that ``jaxdp compare`` cannot call: every parameter without a default must be one of
    :data:`FACTORY_ARGS` (``d, T, T_max, eps, delta``), passed by keyword. Raises ``TypeError`` listing the
    allowed names (and the likely rename). A factory whose signature cannot be read is accepted.

    Args:
        factory: the factory.

    Raises:
        TypeError: a parameter without a default is not one of :data:`FACTORY_ARGS`.
    """
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return
    bad = []
    for prm in sig.parameters.values():
        if prm.kind in (prm.VAR_POSITIONAL, prm.VAR_KEYWORD) or prm.default is not prm.empty:
            continue
        if prm.kind == prm.POSITIONAL_ONLY or prm.name not in FACTORY_ARGS:
            bad.append(prm)
    if bad:
        name = getattr(factory, "__qualname__", None) or getattr(factory, "__name__", None) or repr(factory)
        hints = [f"{p.name} -> {_FACTORY_ALIASES.get(p.name, _FACTORY_ALIASES.get(p.name.lower()))}"
                 for p in bad if p.name not in FACTORY_ARGS
                 and _FACTORY_ALIASES.get(p.name, _FACTORY_ALIASES.get(p.name.lower()))]
        posonly = [p.name for p in bad if p.kind == p.POSITIONAL_ONLY and p.name in FACTORY_ARGS]
        raise TypeError(
            f"factory {name}{sig} has required parameter(s) {', '.join(p.name for p in bad)} that jaxdp cannot "
            f"pass: a factory receives, by keyword, any of {', '.join(FACTORY_ARGS)} (or **kwargs). Rename them "
            + (f"({'; '.join(hints)}) " if hints else "")
            + "or give them defaults"
            + (f"; {', '.join(posonly)} must not be positional-only (drop the '/')" if posonly else ""))


def call_factory(factory: Callable, *, d: int, T: int, eps: float, delta: float,
                 T_max: Optional[int] = None) -> tuple[Learner, Any]:
    """Call ``factory`` with the arguments it accepts among ``d, T, T_max, eps, delta``; return
    ``(learner, params)``.

    ``T`` is the horizon the run is tuned for, ``T_max >= T`` the largest horizon of the sweep
    (size static arrays, e.g. a tree, by it: the learner must not depend on ``T``).
    A factory may return a ``Learner`` (``params = None``: its hyperparameters are
    closed over) or a ``(Learner, params)`` pair. A factory with a required parameter of another
    name is refused first (:func:`check_factory_signature`).

    Args:
        factory: the factory.
        d: the number of experts (or the dimension).
        T: the horizon the run is tuned for.
        eps, delta: the privacy parameters.
        T_max: the largest horizon of the sweep (default ``T``).

    Returns:
        ``(learner, params)``.

    Raises:
        TypeError: the factory has a required parameter of another name.
    """
    if not callable(factory):
        raise TypeError(f"factory must be callable, got {type(factory).__name__}")
    check_factory_signature(factory)
    try:
        sig = inspect.signature(factory)
        accepts_kw = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
        names = set(sig.parameters)
    except (TypeError, ValueError):  # pragma: no cover - builtins
        accepts_kw, names = True, set()
    all_kw = dict(d=d, T=T, T_max=T if T_max is None else T_max, eps=eps, delta=delta)
    kw = {k: v for k, v in all_kw.items() if accepts_kw or k in names}
    out = factory(**kw)
    if isinstance(out, Learner):
        return out, None
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], Learner):
        return out[0], out[1]
    raise TypeError(f"the factory must return a jaxdp.Learner or a (Learner, params) pair, got {type(out).__name__}")


def check_factory(factory: Callable, adversary: Adversary, problem: Problem, adv_params: Any, *, d: int,
                  T: int, eps: Sequence[float], delta: float, deterministic: Optional[bool] = None,
                  seeds: int = 4) -> FactoryReport:
    """Conformance of a ``jaxdp compare`` factory (module docstring).

    The factory is called at the grid points ``(T, eps[0])``, ``(T // 2, eps[-1])``
    (two settings even if one ε is given; ``T_max = T``); the learners it returns must be the
    same object, and it must pass :func:`check_learner` over the params. A
    factory that sets ``deterministic = True`` (attribute) skips the
    key-sensitivity check.

    Args:
        factory: the ``jaxdp compare`` factory.
        adversary: the adversary.
        problem: the problem.
        adv_params: the adversary's params.
        d: the number of experts.
        T: the horizon.
        eps: the ε values to call the factory with (at least one).
        delta: the δ passed to the factory.
        deterministic: the learner ignores its key (default: the factory's ``deterministic`` attribute).
        seeds: seeds per run.

    Returns:
        A :class:`FactoryReport`.

    Raises:
        ConformanceError: the factory or its learner fails a check.
    """
    eps = list(eps)
    grid = [(T, eps[0]), (max(2, T // 2), eps[-1] if len(eps) > 1 else eps[0] * 2)]
    learners, params = [], []
    for T_i, e in grid:
        lrn, p = call_factory(factory, d=d, T=T_i, eps=e, delta=delta, T_max=T)
        learners.append(lrn)
        params.append(p)
    if learners[0] != learners[1]:
        _fail("recompiles", "the factory returned a different Learner object for another (T, eps): every grid "
                            "point would compile again. Return the same Learner (cache its constructor on static "
                            "arguments such as d, e.g. functools.lru_cache) and put T- and eps-dependent values "
                            "in a params pytree: return (learner, params)")
    if deterministic is None:
        deterministic = bool(getattr(factory, "deterministic", False))
    claimed = getattr(factory, "claimed_eps", None)
    check_learner(learners[0], adversary, problem, params, adv_params, T=min(T, 64), seeds=seeds,
                  deterministic=deterministic, d=d)
    return FactoryReport(learner=learners[0], params=params, claimed_eps=None if claimed is None else float(claimed),
                         deterministic=deterministic,
                         checks=["shapes", "host callback", "key reuse", "impure step", "recompiles", "finite",
                                 "deterministic", "key"])
