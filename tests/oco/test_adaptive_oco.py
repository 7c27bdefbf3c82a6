"""``jaxdp.oco.adaptive.toward_last_iterate``: the gradient points at the previous iterate (a scripted
learner, against NumPy), and DP-FTRL runs against it under ``simulate``."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp.core import Learner
from jaxdp.oco import linear_problem
from jaxdp.oco.adaptive import toward_iterate_params, toward_last_iterate


class _Script(NamedTuple):
    x: jax.Array
    t: jax.Array


def test_gradient_points_at_the_previous_iterate():
    d, n, L = 3, 12, 2.0
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(n, d)).astype(np.float32)
    xs[4] = 0.0                                   # a zero iterate: the next gradient is L e_0
    script = jnp.asarray(xs)
    learner = Learner(init=lambda k, p: _Script(x=script[0], t=jnp.int32(0)),
                      step=lambda k, s, g, p: (_Script(x=script[jnp.minimum(s.t + 1, n - 1)], t=s.t + 1), {}))
    prob = linear_problem(d, radius=10.0)
    run = jax.jit(jax.vmap(lambda T: jaxdp.rollout(learner, toward_last_iterate(d), prob, None,
                                                   toward_iterate_params(L), jax.random.key(0), T, T_max=n)))
    out = run(jnp.arange(1, n + 1, dtype=jnp.int32))
    incurred = np.diff(np.concatenate([[0.0], np.asarray(out["loss"], np.float64)]))
    e0 = np.eye(d)[0]
    G, ref = np.zeros(d), []
    for t in range(n):
        prev = xs[t - 1].astype(np.float64) if t else np.zeros(d)
        nrm = np.linalg.norm(prev)
        g = L * (prev / nrm if nrm > 0 else e0)
        ref.append(g @ xs[t])
        G += g
    np.testing.assert_allclose(incurred, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(float(out["best_loss"][-1]), -10.0 * np.linalg.norm(G), rtol=1e-5)


def test_dp_ftrl_runs_against_it():
    from jaxdp.oco import dp_ftrl, dp_ftrl_params
    d, T = 4, 256
    prob = linear_problem(d)
    out = jaxdp.simulate(dp_ftrl(prob, T), toward_last_iterate(d), prob, dp_ftrl_params(lam=float(np.sqrt(T)),
                         sigma=0.5), toward_iterate_params(1.0), jaxdp.seed_keys(0, 8), T)
    assert np.isfinite(out["regret"]).all()


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="L"):
        toward_iterate_params(0.0)


def test_dp_ftrl_passes_the_shared_conformance_check_and_wrong_adv_params_are_refused():
    from jaxdp.oco import dp_ftrl, dp_ftrl_params
    from jaxdp.testing import check_learner

    d, T = 3, 64
    prob = linear_problem(d)
    out = check_learner(dp_ftrl(prob, T), toward_last_iterate(d), prob,
                        [dp_ftrl_params(lam=8.0, sigma=0.5), dp_ftrl_params(lam=16.0, sigma=0.5)],
                        toward_iterate_params(1.0), T=T, seeds=4, loss_range=2.0 * np.sqrt(d))
    assert np.isfinite(out["regret"]).all()
    with pytest.raises(TypeError, match="TowardIterateParams"):
        jaxdp.simulate(dp_ftrl(prob, T), toward_last_iterate(d), prob, dp_ftrl_params(lam=8.0, sigma=0.5), None,
                       jaxdp.seed_keys(0, 2), T)
