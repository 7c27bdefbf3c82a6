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

# the checks by topic, in the order of the API page; every name is importable from here as before
from ._common import ConformanceError
from ._shapes import check_shapes
from ._traces import check_key_reuse, check_pure, check_traces
from ._learner import check_learner, check_case
from ._factories import FactoryReport, FACTORY_ARGS, check_factory_signature, call_factory, check_factory
# not in __all__ (the checks share them)
from ._common import _sim_mod, _rollout_impl, _n_index_actions, _fail, _key_reuse_fail, _RANGE_FIX  # noqa: F401
from ._shapes import (_leaf_type, _struct, _describe_diff, _action_spec, _check_static,  # noqa: F401
                      _CALLBACK_PRIMS, _subjaxprs, _callback_prims, _check_callbacks, _play)  # noqa: F401
from ._traces import _runner, _check_traces, _public  # noqa: F401
from ._learner import _SALTS, _salts_differ, _ENGINE_KEYS, _info_fix, _check_engine_out  # noqa: F401
from ._factories import _FACTORY_ALIASES  # noqa: F401

__all__ = [
    "ConformanceError", "check_learner", "check_shapes", "check_key_reuse", "check_pure", "check_traces", "check_case",
    "check_factory", "call_factory", "check_factory_signature", "FactoryReport", "FACTORY_ARGS",
]
