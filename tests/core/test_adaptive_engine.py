"""The engine's adaptive path (``AdaptiveAdversary``): an oblivious adversary wrapped as an adaptive one
that ignores what it sees gives the same runs bit for bit; adversary params vmap under ``grid=True``."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp.core import AdaptiveAdversary, seed_keys, simulate
from jaxdp.experts import BernoulliParams, HedgeParams, bernoulli_experts, experts_problem, hedge
from jaxdp.experts import l2p_mw, l2p_mw_params
from jaxdp.experts.adaptive import punish_last_action, switch_watcher, switch_watcher_params

PROB = experts_problem()
D = 6
AP = BernoulliParams(gap=jnp.float32(0.2))


def _blind(adv):
    """``adv`` as an adaptive adversary that ignores every action it is shown."""
    return AdaptiveAdversary(init=adv.init, loss=adv.loss, observe=lambda s, t, x, out: s)


@pytest.mark.parametrize("name", ["hedge", "l2p_mw"])
def test_blind_adaptive_is_bit_identical_to_oblivious(name):
    learner, params = {
        "hedge": (hedge(D), HedgeParams(jnp.float32(0.3))),
        "l2p_mw": (l2p_mw(D, 4), l2p_mw_params(0.2, 0.1, 4, block_size=4)),  # the nested block scan
    }[name]
    adv = bernoulli_experts(D)
    keys = seed_keys(3, 16)
    a = simulate(learner, adv, PROB, params, AP, keys, 150, T_max=202)
    b = simulate(learner, _blind(adv), PROB, params, AP, keys, 150, T_max=202)
    assert set(a) == set(b)
    for k in a:
        if k.startswith("expected_regret"):
            assert np.isnan(b[k]).all()      # not unbiased against an adaptive adversary: NaN
        else:
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_simulate_equals_vmapped_rollout_and_grid_over_adv_params():
    adv = switch_watcher(D)
    keys = seed_keys(0, 8)
    hp = HedgeParams(jnp.float32(0.3))
    out = simulate(hedge(D), adv, PROB, hp, switch_watcher_params(2), keys, 100)
    ro = jax.jit(jax.vmap(lambda k: jaxdp.rollout(hedge(D), adv, PROB, hp, switch_watcher_params(2), k, 100)))(seed_keys(0, 8))
    for k in ("loss", "regret", "best_loss", "switches"):
        np.testing.assert_array_equal(out[k], np.asarray(ro[k]))
    gkeys = jnp.stack([seed_keys(0, 8), seed_keys(0, 8)])
    pats = switch_watcher_params(1)._replace(patience=jnp.asarray([1, 2], jnp.int32))
    hp2 = HedgeParams(jnp.full((2,), 0.3, jnp.float32))
    g = simulate(hedge(D), adv, PROB, hp2, pats, gkeys, jnp.asarray([100, 100]), grid=True)
    np.testing.assert_array_equal(g["loss"][1], out["loss"])
    p1 = simulate(hedge(D), punish_last_action(D), PROB, hp, None, keys, 100)
    np.testing.assert_array_equal(g["loss"][0], p1["loss"])   # patience 1 is punish_last_action


def test_sees_outputs_passes_the_learners_info():
    seen = []

    def observe(s, t, x, out):
        seen.append(sorted(out))
        return s

    adv = bernoulli_experts(D)
    simulate(hedge(D), AdaptiveAdversary(adv.init, adv.loss, observe, sees_outputs=True), PROB,
             HedgeParams(jnp.float32(0.3)), AP, seed_keys(0, 2), 5)
    assert seen[-1] == ["expected_loss", "switched"]
    seen.clear()
    simulate(hedge(D), AdaptiveAdversary(adv.init, adv.loss, observe), PROB, HedgeParams(jnp.float32(0.3)), AP,
             seed_keys(0, 2), 5)
    assert seen[-1] == []


def test_not_an_adversary_is_refused():
    with pytest.raises(TypeError, match="Adversary or AdaptiveAdversary"):
        simulate(hedge(D), (lambda k, p: None, lambda s, t: None), PROB, HedgeParams(jnp.float32(0.3)), AP,
                 seed_keys(0, 2), 5)
