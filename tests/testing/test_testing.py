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
from jaxdp import Learner, seed_keys
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


# --------------------------------------------------------------------------- [key]: the losses held fixed

FTL = _learner(lambda k, lg, s, p: jnp.argmax(lg).astype(jnp.int32), init_x=jnp.int32(0))     # never reads a key
FTPL = _learner(lambda k, lg, s, p: jnp.argmax(lg + jax.random.gumbel(k, lg.shape) / p.eta).astype(jnp.int32),
                init_x=jnp.int32(0))                                                         # perturbed leader


def test_key_check_runs_both_learner_keys_against_the_same_losses():
    """Two learner keys of one seed face one loss sequence (the adversary's key is not salted): a random
    adversary cannot make a key-ignoring learner look randomized."""
    from jaxdp.testing import _runner

    for learner, same in ((FTL, True), (GOOD, False)):
        out = jax.jit(_runner(learner, ADV, PROB, 64, salts=2))(PARAMS[0], AP, seed_keys(5, 4), jnp.int32(64))
        best = np.asarray(out["best_loss"]).reshape(4, 2)
        assert np.unique(best[:, 0]).size == 4             # a random adversary: every seed's losses differ ...
        np.testing.assert_array_equal(best[:, 0], best[:, 1])   # ... and both learner keys see the same ones
        regret = np.asarray(out["regret"]).reshape(4, 2)
        assert np.array_equal(regret[:, 0], regret[:, 1]) == same
    # were the losses salted with the learner key, check_learner would stop rather than run a vacuous [key] check
    from jaxdp.testing import _check_losses_fixed

    _check_losses_fixed({"best_loss": best.reshape(-1)}, 4, 0)
    with pytest.raises(AssertionError, match="faced different losses at grid point 0"):
        _check_losses_fixed({"best_loss": np.arange(8.0)}, 4, 0)


def test_key_ignoring_follow_the_leader_fails_key_against_a_random_adversary():
    with pytest.raises(ConformanceError, match=r"^\[key\] two different learner keys against the same losses"):
        check_learner(FTL, ADV, PROB, PARAMS, AP, T=32)
    check_learner(FTL, ADV, PROB, PARAMS, AP, T=32, deterministic=True)    # declared deterministic: exempt
    for randomized in (GOOD, FTPL):                                          # Hedge-like and FTPL-like pass
        check_learner(randomized, ADV, PROB, PARAMS, AP, T=32)
    check_learner(hedge(D), ADV, PROB, [hedge_params(D, 32), hedge_params(D, 32, eta=0.5)], AP, T=32)

    @functools.lru_cache(maxsize=None)
    def cached(d):
        return FTL

    def ftl_factory(d):
        return cached(d), P(eta=jnp.float32(1.0))

    with pytest.raises(ConformanceError, match=r"^\[key\]"):
        check_factory(ftl_factory, ADV, PROB, AP, d=D, T=32, eps=[0.5, 1.0], delta=1e-6)
    ftl_factory.deterministic = True
    assert check_factory(ftl_factory, ADV, PROB, AP, d=D, T=32, eps=[0.5, 1.0], delta=1e-6).deterministic
