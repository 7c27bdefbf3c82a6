"""Adaptive experts adversaries (``jaxdp.experts.adaptive``): a NumPy reference of Hedge against
``punish_last_action`` round by round, follow-the-leader's linear regret, and the switch watcher's losses
against a scripted learner."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp.core import Learner, seed_keys, simulate
from jaxdp.experts import HedgeParams, experts_problem, hedge
from jaxdp.experts.adaptive import punish_last_action, switch_watcher, switch_watcher_params

PROB = experts_problem()


def _recording(learner):
    """``learner`` that also reports the action it played each round (summed by the engine: per-round
    values come from differences over the horizon)."""
    def step(key, state, loss, params):
        new, info = learner.step(key, state, loss, params)
        return new, dict(info, played=state.x)
    return learner._replace(step=step)


def _per_round(learner, adv, params, adv_params, key_fn, n):
    run = jax.jit(jax.vmap(lambda T: jaxdp.rollout(learner, adv, PROB, params, adv_params, key_fn(), T, T_max=n)))
    out = run(jnp.arange(1, n + 1, dtype=jnp.int32))
    played = np.diff(np.concatenate([[0], np.asarray(out["played"])]))
    incurred = np.diff(np.concatenate([[0.0], np.asarray(out["loss"], np.float64)]))
    return played, incurred, out


def test_hedge_against_punish_last_action_matches_a_numpy_reference():
    d, n, eta = 4, 120, 0.4
    learner = _recording(hedge(d))
    played, incurred, out = _per_round(learner, punish_last_action(d), HedgeParams(jnp.float32(eta)), None,
                                       lambda: jax.random.key(7), n)
    # the learner's uniforms, from the engine's key layout: split(key, 4) = (learn, adversary, init, block)
    k_learn, _, k_init, _ = jax.random.split(jax.random.key(7), 4)
    f = jnp.result_type(float)
    r0 = float(jax.random.uniform(k_init, (), dtype=f))
    rs = [float(jax.random.uniform(jax.random.fold_in(k_learn, t), (), dtype=f)) for t in range(n)]
    # Hedge from its definition: x_0 uniform, x_{t+1} ~ p_{t+1} ∝ exp(-eta L_t) by inverse CDF with r_t
    eta32 = float(np.float32(eta))
    L = np.zeros(d)
    x, prev = min(int(r0 * d), d - 1), None
    ref_x, ref_loss = [], []
    for t in range(n):
        loss = np.zeros(d) if prev is None else np.eye(d)[prev]   # l_t = e_{x_{t-1}}
        ref_x.append(x)
        ref_loss.append(loss[x])
        L += loss
        w = np.exp(-eta32 * (L - L.min()))
        prev, x = x, int(np.sum(np.cumsum(w) <= rs[t] * w.sum()))
    np.testing.assert_array_equal(played, ref_x)
    np.testing.assert_array_equal(incurred, ref_loss)
    assert float(out["best_loss"][-1]) == L.min()
    assert np.isnan(np.asarray(out["expected_regret"])).all()


class _FTL(NamedTuple):
    x: jax.Array
    cum: jax.Array


def _ftl(d):
    """Follow the leader: deterministic, plays the first expert of least cumulative loss."""
    def init(key, params):
        return _FTL(x=jnp.int32(0), cum=jnp.zeros((d,), jnp.result_type(float)))

    def step(key, s, loss, params):
        cum = s.cum + loss
        x = jnp.argmin(cum).astype(jnp.int32)
        return _FTL(x=x, cum=cum), {"switched": x != s.x}

    return Learner(init=init, step=step)


@pytest.mark.parametrize("d", [2, 5])
def test_follow_the_leader_suffers_linear_regret(d):
    T = 3000
    out = simulate(_ftl(d), punish_last_action(d), PROB, None, None, seed_keys(0, 2), T)
    # deterministic learner, deterministic adversary: every seed alike; regret grows like T (d = 2: T/6)
    assert (out["regret"] >= 0.1 * T).all()
    r = out["regret_ckpt"][0]
    rounds = out["checkpoint_rounds"]
    assert r[-1] / rounds[-1] == pytest.approx(r[-4] / rounds[-4], rel=0.2)


def test_hedge_keeps_small_regret_against_punish_last_action():
    d, T = 8, 4096
    eta = float(np.sqrt(8 * np.log(d) / T))
    out = simulate(hedge(d), punish_last_action(d), PROB, HedgeParams(jnp.float32(eta)), None, seed_keys(0, 64), T)
    assert out["regret"].mean() <= np.log(d) / eta + eta * T / 8


class _Script(NamedTuple):
    x: jax.Array
    t: jax.Array


def test_switch_watcher_loss_follows_the_held_run():
    d, n, pat = 3, 40, 3
    acts = np.array([(t // 4) % d if t % 9 else 0 for t in range(n)], np.int32)
    # a scripted learner: round t plays acts[t]
    script = jnp.asarray(acts)
    learner = Learner(init=lambda k, p: _Script(x=script[0], t=jnp.int32(0)),
                      step=lambda k, s, loss, p: (_Script(x=script[jnp.minimum(s.t + 1, n - 1)], t=s.t + 1), {}))
    _, incurred, out = _per_round(_recording(learner), switch_watcher(d), None, switch_watcher_params(pat),
                                  lambda: jax.random.key(0), n)
    ref, L, held, run = [], np.zeros(d), -1, 0
    for t in range(n):
        loss = np.eye(d)[held] if run >= pat else np.zeros(d)
        ref.append(loss[acts[t]])
        L += loss
        run = run + 1 if acts[t] == held else 1
        held = acts[t]
    np.testing.assert_array_equal(incurred, ref)
    assert float(out["best_loss"][-1]) == L.min()
    assert sum(ref) > 0


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="patience"):
        switch_watcher_params(0)
    with pytest.raises(ValueError, match="d"):
        punish_last_action(1)


def test_the_shrinking_dartboard_is_linear_against_the_switch_watcher_and_hedge_is_not():
    # the dartboard's marginal equals Hedge's, but it keeps its action between switches: an adversary that
    # watches the held action makes it pay about once per round (LAZY's footnote: its bound may fail)
    from jaxdp.experts import hedge_params, shrinking_dartboard
    d, T = 10, 2048
    hp = hedge_params(d, T)
    bound = np.log(d) / float(hp.eta) + float(hp.eta) * T / 8
    lazy = simulate(shrinking_dartboard(d), switch_watcher(d), PROB, hp, switch_watcher_params(3), seed_keys(0, 16), T)
    fresh = simulate(hedge(d), switch_watcher(d), PROB, hp, switch_watcher_params(3), seed_keys(0, 16), T)
    assert lazy["regret"].mean() >= 0.5 * T > 10 * bound
    assert fresh["regret"].mean() <= bound


@pytest.mark.parametrize("adv, adv_params", [(punish_last_action(4), None),
                                             (switch_watcher(4), switch_watcher_params(2))],
                         ids=["punish_last_action", "switch_watcher"])
def test_hedge_passes_the_shared_conformance_check_against_adaptive_adversaries(adv, adv_params):
    from jaxdp.experts import hedge_params
    from jaxdp.testing import check_learner

    out = check_learner(hedge(4), adv, PROB, [hedge_params(4, 64), hedge_params(4, 128)], adv_params, T=64, seeds=4)
    assert np.isnan(out["expected_regret"]).all() and np.isfinite(out["regret"]).all()


def test_wrong_adv_params_are_refused_before_compiling():
    keys = seed_keys(0, 2)
    with pytest.raises(TypeError, match="SwitchWatcherParams"):
        simulate(hedge(4), switch_watcher(4), PROB, HedgeParams(0.1), None, keys, 8)
