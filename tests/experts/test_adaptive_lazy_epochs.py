"""``adaptive_lazy_epochs``: LAZY Thm 4.2's epochs re-targeted onto the played expert. Its losses against a scripted
learner equal a reference built from the oblivious ``adv_lazy_epochs`` (same key) and the rule
``l_t = max(l^{(e)}, e_{x_{t-1}})``; a learner that never switches pays 1 every round after the first and has linear
regret; Hedge keeps its bound; the shared conformance check passes."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp.core import Learner, seed_keys, simulate
from jaxdp.experts import (
    HedgeParams, LazyEpochsParams, adaptive_lazy_epochs, adv_lazy_epochs, experts_problem, hedge, hedge_params,
)

PROB = experts_problem()


class _Script(NamedTuple):
    x: jax.Array
    t: jax.Array


def _scripted(acts):
    script = jnp.asarray(acts, jnp.int32)
    n = len(acts)

    def step(key, s, loss, params):
        return _Script(x=script[jnp.minimum(s.t + 1, n - 1)], t=s.t + 1), {"played": s.x}

    return Learner(init=lambda k, p: _Script(x=script[0], t=jnp.int32(0)), step=step)


def _per_round(learner, adv, ap, key, n):
    run = jax.jit(jax.vmap(lambda T: jaxdp.rollout(learner, adv, PROB, None, ap, key, T, T_max=n)))
    out = run(jnp.arange(1, n + 1, dtype=jnp.int32))
    return np.diff(np.concatenate([[0.0], np.asarray(out["loss"], np.float64)])), out


def _params(T, epoch_len):
    return LazyEpochsParams(T=jnp.int32(T), eps=jnp.float32(1.0), epoch_len=jnp.int32(epoch_len))


def test_losses_follow_the_oblivious_epochs_with_the_previous_action_set_to_one():
    d, n, ep = 4, 48, 5
    rng = np.random.default_rng(3)
    acts = rng.integers(0, d, n).astype(np.int32)
    acts[10:20] = 2   # a held run
    ap = _params(n, ep)
    incurred, out = _per_round(_scripted(acts), adaptive_lazy_epochs(d), ap, jax.random.key(11), n)
    # the oblivious epochs from the same engine key: the adversary's stream is split(key, 4)[1]
    _, k_adv, _, _ = jax.random.split(jax.random.key(11), 4)
    obl = adv_lazy_epochs(d)
    s = obl.init(k_adv, ap)
    base = np.stack([np.asarray(obl.loss(s, jnp.int32(t)), np.float64) for t in range(n)])
    assert base.min() == 0 and base.max() == 1 and (base[:ep] == base[0]).all()   # one vector per epoch
    ref = base.copy()
    ref[np.arange(1, n), acts[:-1]] = 1.0                                         # l_t[x_{t-1}] = 1
    np.testing.assert_array_equal(incurred, ref[np.arange(n), acts])
    assert float(out["best_loss"][-1]) == ref.sum(0).min()
    assert (incurred[11:20] == 1).all()                                           # held: pays every round


def test_a_learner_that_never_switches_has_linear_regret_and_hedge_keeps_its_bound():
    d, T, S = 10, 4096, 32
    ap = _params(T, 32)
    stay = simulate(_scripted(np.zeros(4, np.int32)), adaptive_lazy_epochs(d), PROB, None, ap, seed_keys(0, S), T)
    # it pays every round after the first (round 0: the epoch's bit); the best expert about T/2 + O(sqrt(32 T))
    assert set(np.unique(stay["loss"])) <= {T - 1, T}
    assert (stay["regret"] >= 0.35 * T).all()
    hp = hedge_params(d, T)
    fresh = simulate(hedge(d), adaptive_lazy_epochs(d), PROB, hp, ap, seed_keys(0, S), T)
    eta = float(hp.eta)
    assert fresh["regret"].mean() <= np.log(d) / eta + eta * T / 8
    assert np.isnan(fresh["expected_regret"]).all()


def test_hedge_passes_the_shared_conformance_check():
    from jaxdp.testing import check_learner

    out = check_learner(hedge(4), adaptive_lazy_epochs(4), PROB, [hedge_params(4, 64), hedge_params(4, 128)],
                        _params(64, 4), T=64, seeds=4)
    assert np.isnan(out["expected_regret"]).all() and np.isfinite(out["regret"]).all()


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="d"):
        adaptive_lazy_epochs(1)
    with pytest.raises(TypeError, match="LazyEpochsParams"):
        simulate(hedge(4), adaptive_lazy_epochs(4), PROB, HedgeParams(0.1), None, seed_keys(0, 2), 8)
