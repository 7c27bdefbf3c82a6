"""Learners that are not private, and how ``jaxdp compare`` lists them.

* ``eps_greedy``: follow the leader, exploring a uniformly random expert with probability 0.1.
  Random exploration is not privacy (the leader is a deterministic function of the losses), yet it
  claims eps = 1: the privacy audit refutes the claim, and the leaderboard lists it as not ranked
  (``jaxdp compare`` exits with status 3).
* ``hedge_claims_eps1``: plain Hedge claiming eps = 1, the same mistake; refuted too.
* ``hedge_nonprivate``: plain Hedge declared non-private (``claimed_eps = math.inf``): shown as a
  reference next to the built-in non-private Hedge, never ranked and not audited.

    jaxdp compare examples/my_learner.py:make examples/refuted_learners.py:eps_greedy \\
        examples/refuted_learners.py:hedge_nonprivate --problem experts --quick --out my-results

See docs/guide/compare.md#ranking.
"""
import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxdp import Learner
from jaxdp.experts import hedge, hedge_params


class State(NamedTuple):
    x: jax.Array       # the expert played this round (int32)
    cum: jax.Array     # cumulative loss vector (exact: no noise)


class Params(NamedTuple):
    explore: jax.Array  # probability of playing a uniformly random expert


@functools.lru_cache(maxsize=None)  # one Learner object per d: one compilation per sweep
def greedy_leader(d: int) -> Learner:
    def init(key, params):
        return State(x=jax.random.randint(key, (), 0, d, jnp.int32), cum=jnp.zeros((d,), jnp.float32))

    def step(key, state, loss, params):
        k_explore, k_expert = jax.random.split(key)
        cum = state.cum + loss
        leader = jnp.argmin(cum).astype(jnp.int32)
        uniform = jax.random.randint(k_expert, (), 0, d, jnp.int32)
        x = jnp.where(jax.random.uniform(k_explore) < params.explore, uniform, leader)
        return State(x=x, cum=cum), {"switched": x != state.x}

    return Learner(init, step)


def eps_greedy(d: int):
    """Follow the leader with exploration rate 0.1; claims eps = 1 (wrongly)."""
    return greedy_leader(d), Params(explore=jnp.float32(0.1))


eps_greedy.claimed_eps = 1.0


def hedge_claims_eps1(d: int, T: int):
    """Plain Hedge (eta = sqrt(8 ln d / T)); claims eps = 1 (wrongly)."""
    return hedge(d), hedge_params(d, T)


hedge_claims_eps1.claimed_eps = 1.0


def hedge_nonprivate(d: int, T: int):
    """Plain Hedge, declared non-private: a reference, never ranked."""
    return hedge(d), hedge_params(d, T)


hedge_nonprivate.claimed_eps = math.inf
