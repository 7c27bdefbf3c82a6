"""jaxdp.sco MALA inverse sensitivity (GROWTH Thm 1, any d) and the Proposition 3 reduction + planner (docs/algorithms/growth.md#inverse-sensitivity, #growth-reduction)."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jaxdp.core import monte_carlo, seed_keys
from jaxdp.registry import PLANNERS
from jaxdp.sco import (
    MALAISInfo, empirical_value, grad_inverse_sensitivity, grad_inverse_sensitivity_mala, growth_reduction_erm,
    inst_kappa_linear, plan_growth_reduction_erm,
)

INST1 = inst_kappa_linear(1, 2.0, 0.5)        # f_S'(x) = x + mean(s): Laplace-like target with a flat top of width 2ρ
RHO, N_DRAWS, EPS = 0.05, 6000, 1.0


@pytest.fixture(scope="module")
def draws_1d():
    data = INST1.sample(jax.random.key(0), 100)
    grid = jax.jit(jax.vmap(lambda k, e: grad_inverse_sensitivity(k, INST1, data, e, rho=RHO, M=1024)[0][0],
                            in_axes=(0, None)))
    mala = jax.jit(jax.vmap(lambda k, e: grad_inverse_sensitivity_mala(k, INST1, data, e, rho=RHO, n_steps=200),
                            in_axes=(0, None)))
    x, info = mala(seed_keys(3, N_DRAWS), EPS)
    return dict(grid=np.asarray(grid(seed_keys(1, N_DRAWS), EPS)),
                grid_2eps=np.asarray(grid(seed_keys(2, N_DRAWS), 2 * EPS)),
                mala=np.asarray(x[:, 0]), info=info)


def test_mala_matches_exact_grid_1d(draws_1d):
    """Two-sample KS: MALA vs the exact grid sampler of the same density (d = 1, exact smoothed score)."""
    ks = stats.ks_2samp(draws_1d["mala"], draws_1d["grid"])
    assert ks.pvalue > 1e-7, ks
    # the same test rejects a wrong target: the grid density at 2ε
    bad = stats.ks_2samp(draws_1d["mala"], draws_1d["grid_2eps"])
    assert bad.pvalue < 1e-7, bad
    info = draws_1d["info"]
    assert float(np.mean(info.acceptance_rate)) > 0.5
    assert np.all(np.abs(draws_1d["mala"]) <= INST1.R)


def test_mala_conformance_any_d():
    """d = 5: shape, inside X, deterministic given the key, vmap == separate calls, runs under monte_carlo."""
    inst = inst_kappa_linear(5, 2.0, 0.4, dist="packing")
    def fn(key, eps):
        kd, ka = jax.random.split(key)
        xh, inf = grad_inverse_sensitivity_mala(ka, inst, inst.sample(kd, 60), eps, rho=0.02, n_steps=50)
        return xh, inf

    keys = seed_keys(7, 6)
    x, info = monte_carlo(fn, keys, jnp.asarray(2.0))
    assert MALAISInfo.sampler == "mala" and info.acceptance_rate.shape == (6,)
    assert x.shape == (6, 5) and np.all(np.linalg.norm(x, axis=1) <= inst.R * (1 + 1e-6))
    assert np.all(np.isfinite(x)) and np.all(info.length >= 0) and np.mean(info.acceptance_rate) > 0.3
    one, _ = jax.jit(fn)(keys[2], jnp.asarray(2.0))          # vmapped run == a single run with the same key
    np.testing.assert_allclose(x[2], np.asarray(one), rtol=1e-5, atol=1e-6)
    out = {"excess": x}
    out2, _ = monte_carlo(fn, keys, jnp.asarray(2.0))           # deterministic given the keys
    np.testing.assert_array_equal(out["excess"], out2)


def test_mala_bad_inputs():
    data = INST1.sample(jax.random.key(0), 10)
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="rho"):
        grad_inverse_sensitivity_mala(key, INST1, data, 1.0, rho=-0.1)
    with pytest.raises(ValueError, match="eps"):
        grad_inverse_sensitivity_mala(key, INST1, data, 0.0, rho=0.1)
    with pytest.raises(ValueError, match="eps"):
        grad_inverse_sensitivity_mala(key, INST1, data, math.inf, rho=0.1)
    with pytest.raises(ValueError, match="n_steps"):
        grad_inverse_sensitivity_mala(key, INST1, data, 1.0, rho=0.1, n_steps=0)
    with pytest.raises(ValueError, match="x0"):
        grad_inverse_sensitivity_mala(key, INST1, data, 1.0, rho=0.1, x0=jnp.array([2.0]))
    with pytest.raises(ValueError, match="step_size"):
        grad_inverse_sensitivity_mala(key, INST1, data, 1.0, rho=0.1, step_size=-1.0)
    with pytest.raises(ValueError):
        grad_inverse_sensitivity_mala(key, INST1, jnp.zeros((10, 3)), 1.0, rho=0.1)


def test_one_entry_point_dispatches_to_each_sampler_and_refuses_bad_input():
    """``grad_inverse_sensitivity(..., sampler=...)`` is each sampler's own function, key for key, and refuses an
    unknown sampler, options the grid does not take and a grid size for MALA before anything is traced."""
    from jaxdp.sco import grad_inverse_sensitivity
    from jaxdp.sco.inverse_sensitivity import grad_inverse_sensitivity_exact

    data = INST1.sample(jax.random.key(0), 10)
    k = lambda: jax.random.key(1)     # noqa: E731  (the same key value, a fresh key object per call)
    x_m, _ = grad_inverse_sensitivity(k(), INST1, data, 1.0, rho=0.1, sampler="mala", n_steps=20)
    y_m, _ = grad_inverse_sensitivity_mala(k(), INST1, data, 1.0, rho=0.1, n_steps=20)
    assert np.array_equal(np.asarray(x_m), np.asarray(y_m))
    x_e, _ = grad_inverse_sensitivity(k(), INST1, data, 1.0, rho=0.1, sampler="exact")
    y_e, _ = grad_inverse_sensitivity_exact(k(), INST1, data, 1.0, rho=0.1)
    key = k()
    assert np.array_equal(np.asarray(x_e), np.asarray(y_e), equal_nan=True)
    with pytest.raises(ValueError, match="sampler must be 'grid', 'exact' or 'mala', got 'gibbs'"):
        grad_inverse_sensitivity(key, INST1, data, 1.0, rho=0.1, sampler="gibbs")
    with pytest.raises(ValueError, match="grid sampler takes no options"):
        grad_inverse_sensitivity(key, INST1, data, 1.0, rho=0.1, n_steps=20)
    with pytest.raises(ValueError, match="M is a grid size"):
        grad_inverse_sensitivity(key, INST1, data, 1.0, rho=0.1, M=64, sampler="mala")


# --------------------------------------------------------------------------- Proposition 3 reduction


def test_reduction_planner_registered_and_certified():
    assert "growth_reduction_erm" in PLANNERS
    for mode in ("paper", "rate", "certified"):
        plan = plan_growth_reduction_erm(eps=1.0, delta=1e-6, n=500, d=2, mode=mode)
        assert plan.certified and plan.eps_certified == 1.0 and plan.delta_certified <= 1e-6
        p = plan.params
        assert p["k"] >= 1 and p["lam0"] > 0 and math.isclose(p["eps_round"] * p["k"], 1.0)
    # smaller eps -> weaker regularization needed later: k grows with eps (log), lam0 shrinks
    a, b = (plan_growth_reduction_erm(eps=e, n=500, d=1, mode="rate").params for e in (1.0, 1e4))
    assert b["k"] > a["k"] and b["lam0"] < a["lam0"] and b["target_excess"] < a["target_excess"]
    # d > 2: the grid inner mechanism does not exist, so nothing certifies
    assert not plan_growth_reduction_erm(eps=1.0, n=500, d=4).certified
    with pytest.raises(ValueError, match="certified"):
        plan_growth_reduction_erm(eps=1.0, n=500, d=4, mode="certified")


@pytest.mark.parametrize("d", [1, 2])
def test_reduction_runs_deterministic_and_nonprivate_limit(d):
    inst = inst_kappa_linear(d, 2.0, 0.5)
    M = 64
    with jax.enable_x64():
        data = inst.sample(jax.random.key(0), 200)
        p = plan_growth_reduction_erm(eps=1e6, n=200, d=d, L=inst.L, D=2 * inst.R, M=M, mode="rate").params
        kw = dict(kappa=p["kappa"], lam0=p["lam0"], k=p["k"], M=M, w=p["w"])
        f = jax.jit(jax.vmap(lambda key, e: growth_reduction_erm(key, inst, data, e, **kw), in_axes=(0, None)))
        x, xs = f(seed_keys(1, 8), p["eps"])
        x2, _ = f(seed_keys(1, 8), p["eps"])
        np.testing.assert_array_equal(np.asarray(x), np.asarray(x2))         # deterministic given the key
        assert xs.shape == (8, p["k"], d) and np.all(np.linalg.norm(np.asarray(xs), axis=-1) <= inst.R * (1 + 1e-9))
        erm = inst.empirical_minimizer(data)
        f_erm = float(empirical_value(inst, erm, data))
        gap = lambda xx: np.asarray(jax.vmap(lambda z: empirical_value(inst, z, data))(xx)) - f_erm
        # solver tolerance: the coarsest grid (the first rounds cover X: cells 4R/M) and the w-cell window
        tol = inst.L * (4 * inst.R / M) * (kw["w"] + 1)
        for e in (p["eps"], math.inf):
            g = gap(f(seed_keys(2, 8), e)[0])
            assert np.all(g >= -1e-12) and np.all(g <= tol), (e, g, tol)
        # at a small eps the same schedule is visibly noisier (the mechanism is not inert)
        assert np.mean(gap(f(seed_keys(3, 8), 0.5)[0])) > 3 * max(np.mean(gap(x)), tol / 10)


def test_reduction_bad_inputs():
    inst = inst_kappa_linear(1, 2.0, 0.5)
    data = inst.sample(jax.random.key(0), 20)
    key = jax.random.key(0)
    for kw, name in ((dict(lam0=0.0), "lam0"), (dict(lam0=-1.0), "lam0"), (dict(k=0), "k"),
                     (dict(kappa=1.5), "kappa"), (dict(M=1), "M"), (dict(w=-1), "w")):
        args = dict(kappa=2.0, lam0=1.0, k=3, M=32, w=1) | kw
        with pytest.raises(ValueError, match=name):
            growth_reduction_erm(key, inst, data, 1.0, **args)
    with pytest.raises(ValueError, match="eps"):
        growth_reduction_erm(key, inst, data, -1.0, kappa=2.0, lam0=1.0, k=3, M=32)
    for kw, name in ((dict(lam0=0.0), "lam0"), (dict(lam0=-2.0), "lam0"), (dict(k=0), "k"),
                     (dict(kappa=1.5), "kappa"), (dict(n=1), "n"), (dict(eps=math.inf), "eps"),
                     (dict(mode="nope"), "mode"), (dict(beta=2.0), "beta")):
        with pytest.raises(ValueError, match=name):
            plan_growth_reduction_erm(**(dict(eps=1.0, n=100, d=1) | kw))
