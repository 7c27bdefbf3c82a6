"""What every conformance check shares: :class:`ConformanceError`, the failure helpers and the engine's
one-seed core.

Import these from ``jaxdp.testing``."""
from __future__ import annotations

import importlib

_sim_mod = importlib.import_module("jaxdp.core.simulate")

_rollout_impl = _sim_mod._rollout_impl   # the engine's pure one-seed core (unvalidated)
_n_index_actions = _sim_mod.n_index_actions


class ConformanceError(AssertionError):
    """A learner violates the engine's protocol; the message names the check and the fix."""


# tracebacks name it by its public path, as before the checks were split into modules
ConformanceError.__module__ = "jaxdp.testing"


def _fail(check: str, msg: str):
    raise ConformanceError(f"[{check}] {msg}")


def _key_reuse_fail(e):
    _fail("key reuse", "a PRNG key is used twice (" + str(e).splitlines()[0] + "). Split the step's key "
          "(k1, k2 = jax.random.split(key)) and use each part once; never store a key in the state and draw "
          "from it every round")


_RANGE_FIX = ("The engine would read loss[x] out of bounds (simulate refuses the run): fix the sampler so that "
              "it only returns indices 0..{n}-1")
