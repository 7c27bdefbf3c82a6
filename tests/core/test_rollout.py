"""``jaxdp.rollout``, the engine's pure core: jit/vmap/export/grad of it, bit-identical to ``simulate``;
seed tiles never change results."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp.core import seed_keys, simulate
from jaxdp.core.simulate import _layout, carry_bytes, seed_tile
from jaxdp.experts import BernoulliParams, HedgeParams, bernoulli_experts, experts_problem, hedge
from jaxdp.experts import l2p_mw, l2p_mw_params

PROB = experts_problem()
D = 6
AP = BernoulliParams(gap=jnp.float32(0.2))


def _cases():
    return {
        "hedge": (hedge(D), HedgeParams(jnp.float32(0.3))),
        "l2p_mw": (l2p_mw(D, 4), l2p_mw_params(0.2, 0.1, 4, block_size=4)),  # nested block scan
    }


def _vmapped_rollout(learner, params, T, T_max, n_ck):
    adv = bernoulli_experts(D)
    return jax.jit(jax.vmap(lambda k: jaxdp.rollout(learner, adv, PROB, params, AP, k, T, T_max=T_max,
                                                    checkpoints=n_ck)))


def _assert_same(a, b):
    assert set(a) == set(b), (sorted(a), sorted(b))
    for k in a:
        np.testing.assert_array_equal(np.asarray(a[k]), np.asarray(b[k]), err_msg=k)


@pytest.mark.parametrize("name", ["hedge", "l2p_mw"])
def test_jit_vmap_rollout_equals_simulate_bit_for_bit(name):
    learner, params = _cases()[name]
    keys = seed_keys(5, 21)
    sim = simulate(learner, bernoulli_experts(D), PROB, params, AP, keys, 45, T_max=60, n_checkpoints=8)
    ro = _vmapped_rollout(learner, params, 45, 60, 8)(jax.random.clone(keys))
    assert "checkpoint_rounds" not in ro
    np.testing.assert_array_equal(sim.pop("checkpoint_rounds"), jaxdp.checkpoint_rounds(60, 8))
    _assert_same(ro, sim)
    if name != "hedge":
        return
    # a traced horizon inside the user's own jit
    f = jax.jit(jax.vmap(lambda k, T: jaxdp.rollout(learner, bernoulli_experts(D), PROB, params, AP, k, T,
                                                     T_max=60, checkpoints=8), in_axes=(0, None)))
    _assert_same(f(jax.random.clone(keys), jnp.int32(45)), sim)


@pytest.mark.parametrize("tile", [3, None])
def test_tiles_do_not_change_results(tile):
    learner, params = _cases()["hedge"]
    keys = seed_keys(6, 29)
    ref = simulate(learner, bernoulli_experts(D), PROB, params, AP, keys, 40, tile=64)  # one tile
    got = simulate(learner, bernoulli_experts(D), PROB, params, AP, keys, 40, tile=tile)
    _assert_same(got, ref)


def test_tiles_with_grid():
    learner = hedge(D)
    G = 3
    keys = jnp.broadcast_to(seed_keys(7, 9), (G, 9))
    params = HedgeParams(jnp.asarray([0.1, 0.3, 0.5], jnp.float32))
    adv = BernoulliParams(gap=jnp.full((G,), 0.2, jnp.float32))
    Ts = np.asarray([17, 40, 33], np.int32)
    a = simulate(learner, bernoulli_experts(D), PROB, params, adv, keys, Ts, grid=True, tile=2)
    b = simulate(learner, bernoulli_experts(D), PROB, params, adv, keys, Ts, grid=True, tile=1000)
    _assert_same(a, b)
    assert a["regret"].shape == (G, 9)
    # a grid point equals rollout at that point
    for g in (1,):
        pg = jax.tree_util.tree_map(lambda v: v[g], params)
        ro = jax.jit(jax.vmap(lambda k: jaxdp.rollout(learner, bernoulli_experts(D), PROB, pg, AP, k, int(Ts[g]),
                                                      T_max=40)))(seed_keys(7, 9))
        for k in ("regret", "expected_regret", "switches", "regret_ckpt"):
            np.testing.assert_array_equal(np.asarray(ro[k]), a[k][g], err_msg=k)


def test_tile_layout_and_default():
    assert _layout(10, 1, 64) == (10, 10)
    assert _layout(10, 4, 64) == (3, 12)
    assert _layout(100, 1, 32) == (25, 100)      # 4 balanced tiles, no padding
    assert _layout(65536, 2, 4096) == (4096, 65536)
    small = carry_bytes(hedge(10), bernoulli_experts(10), PROB, HedgeParams(jnp.float32(0.1)), AP)
    big = carry_bytes(hedge(1000), bernoulli_experts(1000), PROB, HedgeParams(jnp.float32(0.1)), AP)
    assert 1000 * 4 * 3 <= big and small < big
    assert seed_tile(big, "cpu") < seed_tile(small, "cpu")
    t = seed_tile(big, "cpu")
    assert t & (t - 1) == 0
    with pytest.raises(ValueError, match="tile"):
        simulate(hedge(D), bernoulli_experts(D), PROB, HedgeParams(jnp.float32(0.3)), AP, seed_keys(0, 4), 10,
                 tile=0)


def test_rollout_export_roundtrip():
    """``jax.export`` of the vmapped rollout lowers for CPU, CUDA and TPU, and the CPU artifact reproduces simulate."""
    from jax import export

    learner, params = _cases()["hedge"]
    keys = seed_keys(8, 8)
    f = _vmapped_rollout(learner, params, 30, 30, 6)
    exp = export.export(f, platforms=("cpu", "cuda", "tpu"))(jax.random.clone(keys))
    assert set(exp.platforms) == {"cpu", "cuda", "tpu"}
    sim = simulate(learner, bernoulli_experts(D), PROB, params, AP, keys, 30, n_checkpoints=6)
    sim.pop("checkpoint_rounds")
    _assert_same(exp.call(jax.random.clone(keys)), sim)


def test_grad_over_learning_rate():
    """Hedge's expected loss ``sum_t <p_t(eta), l_t>`` is smooth in eta: ``jax.grad`` through the rollout
    matches central differences (the realized draws carry no gradient)."""
    learner = hedge(D)
    keys = seed_keys(9, 16)

    def mean_expected_loss(eta):
        out = jax.vmap(lambda k: jaxdp.rollout(learner, bernoulli_experts(D), PROB, HedgeParams(eta), AP, k, 64))(
            jax.random.clone(keys))
        return jnp.mean(out["expected_loss"])

    g = float(jax.jit(jax.grad(mean_expected_loss))(jnp.float32(0.5)))
    h = 0.05
    f = jax.jit(mean_expected_loss)
    fd = (float(f(jnp.float32(0.5 + h))) - float(f(jnp.float32(0.5 - h)))) / (2 * h)
    assert g < 0                       # a larger step moves weight to the better expert sooner
    assert abs(g - fd) <= 0.03 * abs(fd) + 1e-3, (g, fd)


def test_rollout_validation():
    learner, params = _cases()["hedge"]
    adv = bernoulli_experts(D)
    with pytest.raises(ValueError, match="T_max"):
        jax.jit(lambda k, T: jaxdp.rollout(learner, adv, PROB, params, AP, k, T))(jax.random.key(0), 5)
    with pytest.raises(ValueError, match="single key"):
        jaxdp.rollout(learner, adv, PROB, params, AP, seed_keys(0, 3), 5)
    with pytest.raises(TypeError, match="key"):
        jaxdp.rollout(learner, adv, PROB, params, AP, np.uint32([0, 1]), 5)
    with pytest.raises(ValueError, match="T must be <= T_max"):
        jaxdp.rollout(learner, adv, PROB, params, AP, jax.random.key(0), 50, T_max=10)
    with pytest.raises(ValueError, match="checkpoints"):
        jaxdp.rollout(learner, adv, PROB, params, AP, jax.random.key(0), 5, checkpoints=[0, 3])
    with pytest.raises(TypeError, match="learner"):
        jaxdp.rollout(None, adv, PROB, params, AP, jax.random.key(0), 5)
    out = jaxdp.rollout(learner, adv, PROB, params, AP, jax.random.key(0), 5, checkpoints=[2, 5])
    assert out["regret_ckpt"].shape == (2,)


def test_process_local_single_process_is_a_no_op():
    learner, params = _cases()["hedge"]
    keys = seed_keys(10, 5)
    a = simulate(learner, bernoulli_experts(D), PROB, params, AP, keys, 20)
    with jaxdp.process_local():
        b = simulate(learner, bernoulli_experts(D), PROB, params, AP, keys, 20)
        mc = jaxdp.monte_carlo(lambda k: jax.random.normal(k), keys)
    _assert_same(a, b)
    assert mc.shape == (5,)
