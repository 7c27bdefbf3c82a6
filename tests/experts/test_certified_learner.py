"""``certified_learner`` plans every private learner of the real-data experts study at its certified settings: the
certified ε never exceeds the target; Hedge is non-private (ε = inf)."""
import math

import pytest

from jaxdp.experts.realizable_setups import certified_learner


@pytest.mark.parametrize("name", ["hedge", "l2p_mw", "tree_ftrl", "sparse_vector", "potential", "adaptive_sv"])
def test_certified_eps_is_within_the_target(name):
    learner, params, eps_cert = certified_learner(name, 8, 1024, 1.0, 1e-6)
    assert callable(learner.step) and params is not None
    assert eps_cert == math.inf if name == "hedge" else 0 < eps_cert <= 1.0 + 1e-9


def test_unknown_name_is_refused():
    with pytest.raises(ValueError, match="nope"):
        certified_learner("nope", 8, 1024, 1.0, 1e-6)


@pytest.mark.parametrize("name", ["l2p_mw", "tree_ftrl", "sparse_vector"])
def test_replay_runs_under_the_key_reuse_check_and_each_stream_is_its_own(name):
    """Every stream of one grid call is the run of that stream alone (its key, its draws). The suite runs with
    ``jax_debug_key_reuse``: L2P-MW's boundary ``cond`` becomes a select under ``vmap`` and used to be counted as
    using its key twice."""
    import jax.numpy as jnp
    import numpy as np

    from jaxdp.core import seed_keys
    from jaxdp.experts.realizable_setups import replay_certified

    losses = (np.random.default_rng(3).random((3, 128, 4)) < 0.5).astype(np.float32)
    keys = seed_keys(5, np.arange(3))
    together = replay_certified(name, jnp.asarray(losses), keys, eps=1.0, delta=1e-6)
    for i in range(3):
        alone = replay_certified(name, jnp.asarray(losses[i:i + 1]), keys[i:i + 1], eps=1.0, delta=1e-6)
        assert alone["regret"][0] == together["regret"][i] and alone["switches"][0] == together["switches"][i]
