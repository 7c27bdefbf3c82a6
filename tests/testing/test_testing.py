"""jaxdp.testing: every conformance check passes a correct learner and rejects a broken one with a
message naming the check."""
import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from _helpers import ADV, AP, D, P, PARAMS, PROB
from jaxdp import Learner
from jaxdp.core.random import sample_categorical
from jaxdp.experts import hedge, hedge_params
from jaxdp.testing import (
    ConformanceError, call_factory, check_factory, check_key_reuse, check_learner, check_pure, check_shapes,
)


class S(NamedTuple):
    x: jax.Array
    cum: jax.Array


def _learner(step_body, init_x=None):
    """A Hedge-like learner whose draw is ``step_body(key, logits, state, params) -> x``."""

    def init(key, params):
        x = sample_categorical(key, jnp.zeros((D,))) if init_x is None else init_x
        return S(x=x, cum=jnp.zeros((D,), jnp.float32))

    def step(key, state, loss, params):
        cum = state.cum + loss
        x = step_body(key, -params.eta * cum, state, params)
        return S(x=x, cum=cum), {"switched": x != state.x}

    return Learner(init, step)


GOOD = _learner(lambda k, lg, s, p: sample_categorical(k, lg))


def test_good_learner_passes_every_check():
    out = check_learner(GOOD, ADV, PROB, PARAMS, AP, T=32, seeds=4)
    assert out["regret"].shape == (4,)
    check_learner(hedge(D), ADV, PROB, [hedge_params(D, 32), hedge_params(D, 32, eta=0.5)], AP, T=32)


def _reuse(k, lg, s, p):
    noise = jax.random.gumbel(k, lg.shape)               # the key is used ...
    return sample_categorical(k, lg + 0 * noise)          # ... and used again


def test_key_reuse_is_caught():
    bad = _learner(_reuse)
    with pytest.raises(ConformanceError, match=r"\[key reuse\]"):
        check_key_reuse(bad, ADV, PROB, PARAMS[0], AP)
    with pytest.raises(ConformanceError, match=r"\[key reuse\]"):
        check_learner(bad, ADV, PROB, PARAMS, AP, T=16)
    check_key_reuse(GOOD, ADV, PROB, PARAMS[0], AP)


def test_impure_step_is_caught():
    counter = {"n": 0}

    def trace_time_random(k, lg, s, p):
        counter["n"] += 1   # Python state read at trace time: each trace bakes another constant
        return sample_categorical(k, lg + jnp.float32(np.random.default_rng(counter["n"]).normal()))

    with pytest.raises(ConformanceError, match=r"\[impure step\]"):
        check_pure(_learner(trace_time_random), ADV, PROB, PARAMS[0], AP)

    def with_callback(k, lg, s, p):
        jax.experimental.io_callback(lambda: None, None)
        return sample_categorical(k, lg)

    import jax.experimental  # noqa: F401

    with pytest.raises(ConformanceError, match=r"\[impure step\].*side effects"):
        check_pure(_learner(with_callback), ADV, PROB, PARAMS[0], AP)
    check_pure(GOOD, ADV, PROB, PARAMS[0], AP)


def test_recompiles_are_caught():
    # a Python float and a float32 array: another (weak) type, so each grid point traces again
    with pytest.raises(ConformanceError, match=r"\[recompiles\]"):
        check_learner(GOOD, ADV, PROB, [P(eta=0.3), P(eta=jnp.float32(0.1))], AP, T=16)

    def closure_factory(d, T, eps):   # hyperparameters closed over: a new Learner per grid point
        eta = math.sqrt(8 * math.log(d) / T)
        return _learner(lambda k, lg, s, p: sample_categorical(k, lg * eta / 0.3))

    with pytest.raises(ConformanceError, match=r"\[recompiles\].*different Learner"):
        check_factory(closure_factory, ADV, PROB, AP, d=D, T=32, eps=[1.0], delta=1e-6)

    @functools.lru_cache(maxsize=None)
    def cached(d):
        return GOOD

    def good_factory(d, T, eps):
        return cached(d), P(eta=jnp.float32(math.sqrt(8 * math.log(d) / T)))

    rep = check_factory(good_factory, ADV, PROB, AP, d=D, T=32, eps=[0.5, 1.0], delta=1e-6)
    assert rep.learner is GOOD and not rep.deterministic


def test_wrong_shapes_are_caught():
    float_x = _learner(lambda k, lg, s, p: jnp.argmin(lg).astype(jnp.float32), init_x=jnp.float32(0))
    with pytest.raises(ConformanceError, match=r"\[shapes\] state.x must be an integer scalar"):
        check_shapes(float_x, ADV, PROB, PARAMS[0], AP)
    dtype_change = _learner(lambda k, lg, s, p: sample_categorical(k, lg).astype(jnp.int8))
    with pytest.raises(ConformanceError, match=r"\[shapes\] step must return a state .*int8"):
        check_shapes(dtype_change, ADV, PROB, PARAMS[0], AP)
    out_of_range = _learner(lambda k, lg, s, p: jnp.int32(D))
    with pytest.raises(ConformanceError, match=r"\[shapes\] state.x must be an expert index in \[0, 4\)"):
        check_shapes(out_of_range, ADV, PROB, PARAMS[0], AP)

    def init(key, params):
        return S(x=jnp.int32(0), cum=jnp.zeros((D,)))

    def step(key, state, loss, params):
        return state, {"per_expert": loss}

    with pytest.raises(ConformanceError, match=r"\[shapes\] info\['per_expert'\] must be a scalar"):
        check_shapes(Learner(init, step), ADV, PROB, PARAMS[0], AP)
    with pytest.raises(ConformanceError, match=r"\[shapes\] learner.init must return a state with the action"):
        check_shapes(Learner(lambda k, p: jnp.zeros(3), step), ADV, PROB, PARAMS[0], AP)
    check_shapes(GOOD, ADV, PROB, PARAMS[0], AP)


def test_call_factory_passes_only_accepted_arguments():
    seen = {}

    def f(d, eps):
        seen.update(d=d, eps=eps)
        return GOOD

    assert call_factory(f, d=3, T=10, eps=0.5, delta=1e-6) == (GOOD, None)
    assert seen == {"d": 3, "eps": 0.5}
    with pytest.raises(TypeError, match="must return a jaxdp.Learner"):
        call_factory(lambda d: 1, d=3, T=10, eps=0.5, delta=1e-6)
