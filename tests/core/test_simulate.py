"""The engine: traced horizon, grids, checkpoints, nested block scans, monte_carlo, multi-device."""
import json
import os
import subprocess
import sys
import textwrap
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp.core import Learner, checkpoint_rounds, monte_carlo, seed_keys, simulate
from jaxdp.experts import BernoulliParams, HedgeParams, bernoulli_experts, experts_problem, hedge

D = 5
H, ADV, PROB = hedge(D), bernoulli_experts(D), experts_problem()
AP = BernoulliParams(gap=jnp.float32(0.2))


def test_traced_horizon_equals_exact_horizon():
    keys = seed_keys(0, 16)
    a = simulate(H, ADV, PROB, HedgeParams(jnp.float32(0.3)), AP, keys, 50, T_max=120)
    b = simulate(H, ADV, PROB, HedgeParams(jnp.float32(0.3)), AP, keys, 50)
    for k in ("regret", "loss", "best_loss", "expected_regret", "switches"):
        np.testing.assert_array_equal(a[k], b[k])
    assert np.all(a["T"] == 50)


def test_same_keys_same_adversary_across_learners():
    keys = seed_keys(1, 8)
    a = simulate(H, ADV, PROB, HedgeParams(jnp.float32(0.1)), AP, keys, 40)
    b = simulate(H, ADV, PROB, HedgeParams(jnp.float32(0.9)), AP, keys, 40)
    np.testing.assert_array_equal(a["best_loss"], b["best_loss"])  # common random numbers
    assert not np.array_equal(a["loss"], b["loss"])


def test_grid_equals_separate_runs():
    keys = seed_keys(2, 8)
    etas = jnp.asarray([0.1, 0.5, 1.0], jnp.float32)
    Ts = np.asarray([30, 64, 17], np.int32)
    g = simulate(H, ADV, PROB, HedgeParams(etas), BernoulliParams(gap=jnp.full(3, 0.2, jnp.float32)),
                 jnp.broadcast_to(keys, (3, 8)), Ts, grid=True)
    for i in range(3):
        s = simulate(H, ADV, PROB, HedgeParams(etas[i]), AP, keys, int(Ts[i]), T_max=64)
        for k in ("regret", "expected_regret", "switches"):
            np.testing.assert_allclose(g[k][i], s[k], rtol=1e-6)


def test_checkpoints():
    r = checkpoint_rounds(1000, 10)
    assert r[0] == 1 and r[-1] == 1000 and np.all(np.diff(r) > 0)
    out = simulate(H, ADV, PROB, HedgeParams(jnp.float32(0.3)), AP, seed_keys(3, 4), 70, T_max=100,
                   n_checkpoints=12)
    rounds = out["checkpoint_rounds"]
    ck = out["regret_ckpt"]
    assert ck.shape == (4, len(rounds))
    assert np.all(np.isnan(ck[:, rounds > 70]))
    assert np.all(np.isfinite(ck[:, rounds <= 70]))
    full = simulate(H, ADV, PROB, HedgeParams(jnp.float32(0.3)), AP, seed_keys(3, 4), 100, n_checkpoints=12)
    np.testing.assert_allclose(full["regret_ckpt"][:, -1], full["regret"], rtol=1e-6)


class _BS(NamedTuple):
    x: jax.Array
    rounds: jax.Array
    blocks: jax.Array


def _block_learner(B):
    """Plays 0; counts rounds and end-of-block calls (which draw a 'fresh sample')."""

    def init(key, params):
        return _BS(x=jnp.int32(0), rounds=jnp.int32(0), blocks=jnp.int32(0))

    def step(key, st, loss, params):
        return st._replace(rounds=st.rounds + 1), {"rounds": jnp.int32(1)}

    def end_block(key, st, params):
        x = jax.random.randint(key, (), 0, D)
        return st._replace(x=x, blocks=st.blocks + 1), {"fresh_samples": jnp.int32(1)}

    return Learner(init=init, step=step, block_size=B, end_block=end_block)


@pytest.mark.parametrize("T,T_max,B", [(40, 40, 8), (37, 50, 8), (50, 50, 7), (5, 50, 7), (9, 12, 1)])
def test_nested_block_scan(T, T_max, B):
    out = simulate(_block_learner(B), ADV, PROB, HedgeParams(jnp.float32(0.1)), AP, seed_keys(4, 3), T, T_max=T_max)
    assert np.all(out["rounds"] == T)
    # one end_block call per block boundary that starts a block with active rounds
    assert np.all(out["fresh_samples"] == -(-T // B) - 1)


def test_monte_carlo():
    def est(key, shift):
        return {"mean": jnp.mean(jax.random.normal(key, (100,))) + shift, "one": jnp.float32(1)}

    out = monte_carlo(est, seed_keys(0, 37), jnp.float32(0.0))
    assert out["mean"].shape == (37,) and np.all(out["one"] == 1)
    assert abs(out["mean"].mean()) < 5.3 / np.sqrt(37 * 100)
    again = monte_carlo(est, seed_keys(0, 37), jnp.float32(0.0))
    np.testing.assert_array_equal(out["mean"], again["mean"])


_MD_SCRIPT = textwrap.dedent("""
    import json, sys
    import jax, jax.numpy as jnp, numpy as np
    from jaxdp.core import seed_keys, simulate, monte_carlo
    from jaxdp.experts import BernoulliParams, HedgeParams, bernoulli_experts, experts_problem, shrinking_dartboard
    out = simulate(shrinking_dartboard(7), bernoulli_experts(7), experts_problem(), HedgeParams(jnp.float32(0.3)),
                   BernoulliParams(gap=jnp.float32(0.1)), seed_keys(9, 10), 200)
    mc = monte_carlo(lambda k: jax.random.normal(k, (3,)).sum(), seed_keys(2, 6))
    print(json.dumps({"n_dev": jax.local_device_count(),
                      "res": {k: np.asarray(v).tolist() for k, v in out.items()}, "mc": mc.tolist()}))
""")


def _run_md(n_dev):
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS=f"--xla_force_host_platform_device_count={n_dev}")
    r = subprocess.run([sys.executable, "-c", _MD_SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_multi_device_bit_identical():
    """Seeds sharded over 4 forced CPU devices (10 seeds: padded to 12) give bit-identical results."""
    one, four = _run_md(1), _run_md(4)
    assert one["n_dev"] == 1 and four["n_dev"] == 4
    assert one["res"] == four["res"]
    assert one["mc"] == four["mc"]


def _temp_bytes(learner, params, T_max, d=50):
    import functools

    from jaxdp.core.simulate import _rollout_impl

    ck = tuple(int(r) for r in checkpoint_rounds(T_max, 16))
    f = jax.jit(jax.vmap(functools.partial(_rollout_impl, learner, bernoulli_experts(d), PROB, T_max, ck),
                         in_axes=(None, None, 0, None)))
    c = f.lower(params, AP, seed_keys(0, 64), jnp.int32(T_max)).compile()
    return c.memory_analysis().temp_size_in_bytes


def test_memory_does_not_grow_with_horizon():
    """XLA's compiled temp buffers are the same at T_max = 10^3 and 10^6 (no O(T) arrays)."""
    from jaxdp.experts import l2p_mw, l2p_mw_params

    for learner, params in [(hedge(50), HedgeParams(jnp.float32(0.1))),
                            (l2p_mw(50, 8), l2p_mw_params(0.01, 0.1, 8, block_size=8))]:
        small, big = _temp_bytes(learner, params, 10**3), _temp_bytes(learner, params, 10**6)
        assert big <= small * 1.05 + 4096, (small, big)


def test_a_reused_key_is_reported_as_key_reuse_not_as_a_misfit():
    """A learner that draws twice from one key fails with JAX's ``KeyReuseError`` (the suite runs with
    ``jax_debug_key_reuse``), not with the engine's "do not fit together" message meant for shape errors."""
    def init(key, params):
        return H.init(key, params)

    def step(key, state, loss, params):
        state, info = H.step(key, state, loss, params)
        return state._replace(x=jax.random.randint(key, (), 0, D)), info

    with pytest.raises(jax.errors.KeyReuseError):
        simulate(Learner(init, step), ADV, PROB, HedgeParams(jnp.float32(0.3)), AP, seed_keys(0, 2), 8)
