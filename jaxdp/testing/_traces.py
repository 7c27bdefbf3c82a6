"""``[key reuse]``, ``[impure step]`` and ``[recompiles]``: the engine run under ``jax_debug_key_reuse``
(:func:`check_key_reuse`), two traces compared (:func:`check_pure`) and one trace for every grid point
(:func:`check_traces`).

Import these from ``jaxdp.testing``."""
from __future__ import annotations

from typing import Any, Sequence

import chex
import jax
import jax.numpy as jnp
import numpy as np

from ..core import Adversary, Learner, Problem, seed_keys
from ._common import _fail, _key_reuse_fail, _rollout_impl, _sim_mod
from ._shapes import _callback_prims, _struct


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
    return {k: v for k, v in out.items() if k not in _sim_mod.INVALID_ACTION_KEYS}
