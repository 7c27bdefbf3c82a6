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
  ``jax.eval_shape`` (nothing is compiled), then on a few real rounds.
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
  key, sensitivity to the key, finite metrics and regret above the trivial
  lower bound.
* :func:`check_factory` — for ``jaxdp compare``: a factory ``(d, T, T_max, eps, delta)
  -> Learner | (Learner, params)`` (any subset of the arguments) returns the *same* ``Learner`` object at every
  grid point (so one compilation serves the sweep), and that learner passes
  :func:`check_learner` on the problem class's first benchmark instance.

See docs/guide/own-learner.md.
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any, Callable, Optional, Sequence

import chex
import jax
import jax.numpy as jnp
import numpy as np

from .core import Adversary, Learner, Problem, seed_keys

_sim_mod = importlib.import_module("jaxdp.core.simulate")

# the engine's pure one-seed core (unvalidated), under its current or historical name
_simulate_one = getattr(_sim_mod, "_rollout_impl", None) or getattr(_sim_mod, "_simulate_one")

__all__ = [
    "ConformanceError", "check_learner", "check_shapes", "check_key_reuse", "check_pure", "check_traces",
    "check_factory", "call_factory", "FactoryReport",
]


class ConformanceError(AssertionError):
    """A learner violates the engine's protocol; the message names the check and the fix."""


def _fail(check: str, msg: str):
    raise ConformanceError(f"[{check}] {msg}")


# --------------------------------------------------------------------------- shapes


def _leaf_type(v) -> str:
    weak = isinstance(v, (bool, int, float, complex)) or bool(getattr(v, "weak_type", False))
    return f"{jnp.result_type(v)}{list(np.shape(v))}" + (" (weakly typed Python number)" if weak else "")


def _struct(tree):
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return str(treedef), [_leaf_type(v) for v in leaves]


def _describe_diff(a, b) -> str:
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
                 rounds: int = 8, d: Optional[int] = None) -> None:
    """``init``/``step``/``end_block`` return what the simulator needs (module docstring).

    ``d``: the number of experts (default: the length of a loss vector); the
    played index must lie in ``[0, d)``. Runs ``rounds`` real rounds to check
    the actions' values.
    """
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

    # a few real rounds: the actions' values (out-of-range indices would be clamped silently)
    try:
        xs = np.asarray(_play(learner, adversary, params, adv_params, rounds))
    except jax.errors.KeyReuseError as e:
        _key_reuse_fail(e)
    if kind == "index":
        n = d if d is not None else (int(np.prod(loss.shape)) if hasattr(loss, "shape") else None)
        if n is not None and (xs.min() < 0 or xs.max() >= n):
            _fail("shapes", f"state.x must be an expert index in [0, {n}), got values in [{xs.min()}, {xs.max()}]")
    elif not np.all(np.isfinite(xs)):
        _fail("shapes", "state.x must be finite")


@jax.jit
def _noop(x):
    return x


def _play(learner, adversary, params, adv_params, rounds: int):
    """Actions ``x_1..x_{rounds+1}`` of one run (block learners: ``end_block`` after every block)."""
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

    return jax.jit(run)(jax.random.key(7))


# --------------------------------------------------------------------------- keys, purity, traces


def _runner(learner, adversary, problem, T_max: int):
    ck = (1, T_max)

    def run(params, adv_params, keys, T_):
        one = lambda k: _simulate_one(learner, adversary, problem, T_max, ck, params, adv_params, k, T_)  # noqa: E731
        return jax.vmap(one)(keys)

    return run


def check_key_reuse(learner: Learner, adversary: Adversary, problem: Problem, params: Any, adv_params: Any,
                    T: int = 16, seeds: int = 2) -> None:
    """No PRNG key is consumed twice (the whole run is traced under ``jax_debug_key_reuse``)."""
    from jax.errors import KeyReuseError

    run = jax.jit(_runner(learner, adversary, problem, T))
    try:
        with jax.debug_key_reuse(True):
            jax.block_until_ready(run(params, adv_params, seed_keys(1, seeds), jnp.int32(T)))
    except KeyReuseError as e:
        _key_reuse_fail(e)


def _key_reuse_fail(e):
    _fail("key reuse", "a PRNG key is used twice (" + str(e).splitlines()[0] + "). Split the step's key "
          "(k1, k2 = jax.random.split(key)) and use each part once; never store a key in the state and draw "
          "from it every round")


def check_pure(learner: Learner, adversary: Adversary, problem: Problem, params: Any, adv_params: Any,
               T: int = 16, seeds: int = 2) -> None:
    """``step`` has no side effects and two independent traces of a run are identical (same program, same
    constants): a step that reads ``numpy.random``, Python ``random``, a counter or the clock at trace time
    is not. Traces only; nothing is compiled."""
    run = _runner(learner, adversary, problem, T)
    args = (params, adv_params, seed_keys(2, seeds), jnp.int32(T))
    # a fresh function object per trace: make_jaxpr caches traces by function identity
    traces = [jax.make_jaxpr(lambda *a: run(*a))(*args) for _ in range(2)]
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


def _check_traces(learner, adversary, problem, params_list, adv_params, T, seeds):
    if len(params_list) < 2:
        raise ValueError(f"params_list must hold at least two parameter settings (grid points), got {len(params_list)}")
    s0 = _struct(params_list[0])
    for i, p in enumerate(params_list[1:], 1):
        if _struct(p) != s0:
            _fail("recompiles", f"grid point {i} has params of another structure, shape or dtype than point 0 "
                                f"({_struct(p)} vs {s0}): every grid point would compile again. Keep one "
                                "params pytree (a NamedTuple of jnp arrays, not Python numbers) whose values vary")
    keys = seed_keys(123, seeds)
    fn = _runner(learner, adversary, problem, T)

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
        except jax.errors.KeyReuseError as e:   # with jax_debug_key_reuse on globally (the test session)
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
    compilation does not (``chex.assert_max_traces(n=1)``). Returns ``[(T_i, metrics)]`` per grid point."""
    return _check_traces(learner, adversary, problem, params_list, adv_params, T, seeds)[0]


# --------------------------------------------------------------------------- the full check


def check_learner(learner: Learner, adversary: Adversary, problem: Problem, params_list: Sequence[Any],
                  adv_params: Any, T: int = 64, seeds: int = 4, deterministic: bool = False,
                  loss_range: float = 1.0, key_reuse: bool = True, purity: bool = True,
                  d: Optional[int] = None) -> dict:
    """The conformance check every ``Learner`` in jaxdp passes (module docstring).

    Args:
      learner, adversary, problem: the engine objects.
      params_list: at least two parameter settings (grid points) of one pytree structure.
      adv_params: the adversary's parameters.
      T: the horizon (``T_max``); alternate grid points run at ``3T/4`` (traced horizon).
      seeds: seeds per run.
      deterministic: the learner ignores its key (e.g. follow-the-leader); skips the key-sensitivity check.
      loss_range: per-round loss range; regret must be ``>= -loss_range * T``.
      key_reuse, purity: also run :func:`check_key_reuse` and :func:`check_pure`.

    Returns the metrics of the first grid point. Raises :class:`ConformanceError`.
    """
    if not isinstance(learner, Learner):
        _fail("shapes", f"expected a jaxdp.Learner, got {type(learner).__name__}")
    if len(params_list) < 2:
        raise ValueError(f"params_list must hold at least two parameter settings (grid points), got {len(params_list)}")
    check_shapes(learner, adversary, problem, params_list[0], adv_params, d=d)
    if key_reuse and not jax.config.jax_debug_key_reuse:   # else check_traces below runs under it
        check_key_reuse(learner, adversary, problem, params_list[0], adv_params)
    if purity:
        check_pure(learner, adversary, problem, params_list[0], adv_params)
    outs, run = _check_traces(learner, adversary, problem, params_list, adv_params, T, seeds)
    for T_i, out in outs:
        for k, v in out.items():
            if not np.all(np.isfinite(v[~np.isnan(v)] if v.dtype.kind == "f" else v)):
                _fail("finite", f"non-finite {k}")
        if not np.all(out["regret"] >= -loss_range * T - 1e-3):
            _fail("finite", f"regret {out['regret'].min()} is below the trivial lower bound -{loss_range} * T")
        if not np.all(out["T"] == T_i):
            _fail("horizon", f"runs report T={out['T']} instead of {T_i}")
    keys = seed_keys(123, seeds)
    again = jax.tree_util.tree_map(np.asarray, run(params_list[0], adv_params, jax.random.clone(keys), jnp.int32(T)))
    first = outs[0][1]
    for k in again:
        if not np.array_equal(again[k], first[k], equal_nan=True):
            _fail("deterministic", f"two runs with the same keys differ in {k!r}: the learner is not a function "
                                   "of its keys")
    if not deterministic:
        varied = np.unique(first["loss"]).size > 1 or np.unique(first["regret"]).size > 1 or any(
            np.unique(v).size > 1 for k, v in first.items() if k not in ("T",) and np.ndim(v) == 1)
        if not varied:
            _fail("key", "different seeds gave identical runs: the learner ignores its key? "
                         "(pass deterministic=True for a deterministic learner)")
    return first


# --------------------------------------------------------------------------- factories (jaxdp compare)


@dataclasses.dataclass
class FactoryReport:
    """What :func:`check_factory` found: the learner, its params at each checked grid point, the
    factory's claimed ε (``None`` if it claims none) and whether it is deterministic."""

    learner: Learner
    params: list
    claimed_eps: Optional[float]
    deterministic: bool
    checks: list


def call_factory(factory: Callable, *, d: int, T: int, eps: float, delta: float,
                 T_max: Optional[int] = None) -> tuple[Learner, Any]:
    """Call ``factory`` with the arguments it accepts among ``d, T, T_max, eps, delta``; return
    ``(learner, params)``.

    ``T`` is the horizon the run is tuned for, ``T_max >= T`` the largest horizon of the sweep
    (size static arrays, e.g. a tree, by it: the learner must not depend on ``T``).
    A factory may return a ``Learner`` (``params = None``: its hyperparameters are
    closed over) or a ``(Learner, params)`` pair.
    """
    if not callable(factory):
        raise TypeError(f"factory must be callable, got {type(factory).__name__}")
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
                         checks=["shapes", "key reuse", "impure step", "recompiles", "finite", "deterministic",
                                 "key"])
