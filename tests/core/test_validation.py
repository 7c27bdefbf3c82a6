"""Bad inputs give clear ValueError/TypeError naming the parameter, before anything compiles."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp.core import seed_keys, simulate
from jaxdp.core.validation import check_delta, check_epsilon
from jaxdp.experts import (
    BernoulliParams, HedgeParams, ReplayParams, adv_replay, bernoulli_experts, experts_problem, ftpl, hedge,
    hedge_eta, hedge_params, load_losses, shrinking_dartboard,
)

H, ADV, PROB = hedge(4), bernoulli_experts(4), experts_problem()
P, AP = HedgeParams(jnp.float32(0.1)), BernoulliParams(jnp.float32(0.1))


@pytest.mark.parametrize("T,exc,match", [(0, ValueError, "T must be a positive integer"),
                                         (-3, ValueError, "T must be a positive integer"),
                                         (10.5, TypeError, "T must be a positive integer"),
                                         (np.array([5, 6]), ValueError, "T must be a single integer")])
def test_simulate_bad_T(T, exc, match):
    with pytest.raises(exc, match=match):
        simulate(H, ADV, PROB, P, AP, seed_keys(0, 2), T)


def test_simulate_T_above_T_max():
    with pytest.raises(ValueError, match="T must be <= T_max=10, got 20"):
        simulate(H, ADV, PROB, P, AP, seed_keys(0, 2), 20, T_max=10)


def test_simulate_bad_keys_and_objects():
    with pytest.raises(TypeError, match="keys must be a typed PRNG key"):
        simulate(H, ADV, PROB, P, AP, np.arange(3), 10)
    with pytest.raises(ValueError, match="keys must have 1 dimension"):
        simulate(H, ADV, PROB, P, AP, jax.random.key(0), 10)
    with pytest.raises(TypeError, match="learner must be a jaxdp Learner"):
        simulate(lambda: 0, ADV, PROB, P, AP, seed_keys(0, 2), 10)
    with pytest.raises(ValueError, match="leading axis of length 3"):
        simulate(H, ADV, PROB, P, BernoulliParams(jnp.zeros(3)), jnp.broadcast_to(seed_keys(0, 2), (3, 2)),
                 np.array([4, 4, 4]), grid=True)


@pytest.mark.parametrize("fn,args,exc,match", [
    (hedge_eta, (1, 100), ValueError, "d must be an integer >= 2, got 1"),
    (hedge_eta, (10, 0), ValueError, "T must be an integer >= 1, got 0"),
    (hedge_eta, (10, 1e3), TypeError, "T must be an integer"),
    (hedge_params, (10, 100, -0.5), ValueError, "eta must be > 0, got -0.5"),
    (hedge_params, (10, 100, float("nan")), ValueError, "eta must be a positive number"),
    (hedge, (0,), ValueError, "d must be an integer >= 2, got 0"),
    (shrinking_dartboard, (4, "bogus"), ValueError, "variant must be one of"),
    (ftpl, (4, "cauchy"), ValueError, "noise must be one of"),
    (check_epsilon, (0.0,), ValueError, "eps must be > 0, got 0.0"),
    (check_delta, (1.0,), ValueError, r"delta must be in \[0.0, 1.0\), got 1.0"),
])
def test_constructor_errors(fn, args, exc, match):
    with pytest.raises(exc, match=match):
        fn(*args)


def test_replay_validation(tmp_path):
    with pytest.raises(ValueError, match=r"every entry in \[0.0, 1.0\], got 1.5 at index \(1, 2\)"):
        load_losses(np.array([[0, 0, 0], [0, 0, 1.5]]))
    with pytest.raises(ValueError, match="must be finite"):
        load_losses(np.array([[0, np.nan]]))
    with pytest.raises(ValueError, match="2-D array"):
        load_losses(np.zeros(5))
    with pytest.raises(ValueError, match="d=4 columns"):
        load_losses(np.zeros((5, 3)), d=4)
    with pytest.raises(ValueError, match="does not exist"):
        load_losses(str(tmp_path / "missing.npy"))
    arr = np.random.default_rng(0).random((20, 4)).astype(np.float32)
    for name in ("l.npy", "l.csv"):
        path = tmp_path / name
        np.save(path, arr) if name.endswith(".npy") else np.savetxt(path, arr, delimiter=",")
        got = load_losses(str(path), d=4)
        np.testing.assert_allclose(got, arr, rtol=1e-6)
    out = simulate(hedge(4), adv_replay(4), PROB, P, ReplayParams(jnp.asarray(got)), seed_keys(0, 3), 20)
    np.testing.assert_allclose(out["best_loss"], arr.sum(0).min(), rtol=1e-5)
