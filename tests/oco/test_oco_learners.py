"""DP-FTRL (step-by-step vs a float64 NumPy FTRL; tree-noise variance), the realizable OCO learners,
conformance, planners and input validation."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as ss

from conformance import check_learner
from jaxdp.core import seed_keys, simulate
from jaxdp.oco import (
    Ball, adv_linear_oco, adv_smooth_realizable, dp_ftrl, dp_ftrl_params, experts_oco_net,
    experts_oco_net_params, ftrl_reference, linear_oco_params, linear_problem, logphi_grid, logphi_mc,
    plan_dp_ftrl, plan_experts_oco_net, plan_potential_oco, potential_oco, potential_oco_params,
    smooth_realizable_params, squared_problem,
)
from jaxdp.registry import get_planner


def _trajectory(learner, adversary, params, adv_params, T, key):
    """Actions x_1..x_{T+1} of one run (the simulator's key layout is irrelevant here)."""
    k_init, k_adv, k_learn = jax.random.split(key, 3)
    st = learner.init(k_init, params)
    ast = adversary.init(k_adv, adv_params)

    def body(st, t):
        st2, _ = learner.step(jax.random.fold_in(k_learn, t), st, adversary.loss(ast, t), params)
        return st2, st2.x

    _, xs = jax.lax.scan(body, st, jnp.arange(T, dtype=jnp.int32))
    return jnp.concatenate([st.x[None], xs]), ast


# --------------------------------------------------------------------------- DP-FTRL exactness


@pytest.mark.parametrize("kind", ["linear", "squared"])
def test_dp_ftrl_noiseless_equals_numpy_ftrl(kind):
    d, T, D, lam = 3, 200, 1.0, 3.0
    if kind == "linear":
        prob, adv, ap = linear_problem(d, D), adv_linear_oco(d), linear_oco_params("biased", bias=0.3)
    else:
        prob, adv, ap = squared_problem(d, D), adv_smooth_realizable(d), smooth_realizable_params(D, 0.2)
    learner = dp_ftrl(prob, T)
    xs, ast = jax.jit(lambda k: _trajectory(learner, adv, dp_ftrl_params(lam, 0.0), ap, T, k))(jax.random.key(5))
    xs = np.asarray(xs, np.float64)
    losses = jax.jit(jax.vmap(lambda t: adv.loss(ast, t)))(jnp.arange(T))
    if kind == "linear":
        g = np.asarray(losses, np.float64)
        grads = lambda t, x: g[t]  # noqa: E731
    else:
        A, B = np.asarray(losses.a, np.float64), np.asarray(losses.b, np.float64)
        grads = lambda t, x: (A[t] @ x - B[t]) * A[t]  # noqa: E731
    proj = lambda z: z * min(1.0, D / max(np.linalg.norm(z), 1e-300))  # noqa: E731
    # step by step: feed the reference the learner's own x_t, compare x_{t+1}
    G = np.zeros(d)
    for t in range(T):
        G += grads(t, xs[t])
        np.testing.assert_allclose(xs[t + 1], proj(-G / lam), atol=2e-5, err_msg=f"round {t}")
    # and the whole trajectory of the float64 reference from x_1 = 0
    ref = ftrl_reference(grads, np.zeros(d), T, lam, project=proj)
    np.testing.assert_allclose(xs, ref, atol=1e-4)


def test_dp_ftrl_tree_noise_variance():
    """b_t = -lam x_{t+1} - sum g has per-coordinate variance popcount(t) sigma^2 (docs/algorithms/primitives.md#tree-aggregation)."""
    d, T, S, sigma, lam = 4, 15, 1024, 0.7, 1.0
    prob = linear_problem(d, 1e6)                       # huge ball: no projection
    adv = adv_linear_oco(d)
    ap = linear_oco_params("rademacher")
    learner = dp_ftrl(prob, T)

    @jax.jit
    def run(keys, sig):
        return jax.vmap(lambda k: _trajectory(learner, adv, dp_ftrl_params(lam, 1.0)._replace(sigma=sig), ap, T, k)
                        )(keys)

    keys = seed_keys(11, S)
    t = np.arange(1, T + 1)
    pc = np.array([bin(i).count("1") for i in t])

    def pvalues(sig_claimed):
        (xs, ast) = run(jax.random.clone(keys), jnp.float32(sigma))
        losses = jax.vmap(lambda a: jax.vmap(lambda s: adv.loss(a, s))(jnp.arange(T)))(ast)
        b = -lam * np.asarray(xs[:, 1:], np.float64) - np.cumsum(np.asarray(losses, np.float64), axis=1)
        stat = (b ** 2).sum(axis=(0, 2)) / (pc * sig_claimed ** 2)      # ~ chi2(S d) per round
        cdf = ss.chi2.cdf(stat, S * d)
        return np.minimum(cdf, 1 - cdf) * 2, b

    p, b = pvalues(sigma)
    assert p.min() * T > 1e-7, p                        # Bonferroni over rounds
    # independence across coordinates and mean zero
    assert np.all(np.abs(b.mean(axis=(0, 2))) < 5.3 * sigma * np.sqrt(pc / (S * d)))
    p_wrong, _ = pvalues(sigma * 1.1)                    # a 10% wrong scale is rejected
    assert p_wrong.min() * T < 1e-7


# --------------------------------------------------------------------------- conformance


def test_conformance_dp_ftrl():
    d = 3
    prob = squared_problem(d, 1.0)
    params = [dp_ftrl_params(5.0, 0.5, 2.0), dp_ftrl_params(20.0, 2.0, 1.0)]
    check_learner(dp_ftrl(prob, 64), adv_smooth_realizable(d), prob, params, smooth_realizable_params(1.0, 0.1),
                  loss_range=4.5)


def _check_planned(plan_fn, params_fn, learner_fn, d, m, other, count):
    """``check_learner`` on the rate-mode plan (eps = 4, T = 64, lipschitz = 2, ``m`` points) and on the plan with
    the values ``other``; the per-run ``count`` in the learner's output stays within the plan's ``K``."""
    prob = squared_problem(d, 1.0)
    plan = plan_fn(eps=4.0, T=64, d=d, mode="rate", lipschitz=2.0, m=m)
    pp = {k: v for k, v in plan.params.items() if k != "m"}
    params = [params_fn(**pp), params_fn(**dict(pp, **other))]
    out = check_learner(learner_fn(prob, m), adv_smooth_realizable(d), prob, params,
                        smooth_realizable_params(1.0, 0.0), loss_range=4.5)
    assert np.all(out[count] <= plan.params["K"])


def test_conformance_experts_oco_net():
    _check_planned(plan_experts_oco_net, experts_oco_net_params, experts_oco_net, 1, 16, dict(L=3.0, eta=0.5),
                   "em_draws")


def test_conformance_experts_oco_net_adaptive():
    prob = squared_problem(1, 1.0)
    base = dict(eps_svt=2.0, eta=0.5, K=4, L=0.0, L_offset=2.0, Lbar0=1.0, zeta_scale=0.5, margin=-1.0,
                max_doublings=3, adaptive=True)
    params = [experts_oco_net_params(**base), experts_oco_net_params(**dict(base, eta=0.2, L_offset=4.0))]
    out = check_learner(experts_oco_net(prob, 16, adaptive=True), adv_smooth_realizable(1), prob, params,
                        smooth_realizable_params(1.0, 0.0), loss_range=4.5)
    # Alg. 2 restarts Alg. 1 (K draws each) after every doubling of the L* estimate
    assert np.all(out["doublings"] <= 3)
    assert np.all(out["em_draws"] <= 4 * (out["doublings"] + 1))


def test_conformance_potential_oco():
    _check_planned(plan_potential_oco, potential_oco_params, potential_oco, 2, 8, dict(eta=0.3, K=3), "resamples")


# --------------------------------------------------------------------------- behaviour


def test_dp_ftrl_realizable_regret_small_and_noise_hurts():
    d, T = 2, 1024
    prob = squared_problem(d, 1.0)
    adv = adv_smooth_realizable(d)
    keys = seed_keys(3, 32)
    learner = dp_ftrl(prob, T)
    ap = smooth_realizable_params(1.0)
    r0 = simulate(learner, adv, prob, dp_ftrl_params(2.0, 0.0, 2.0), ap, keys, T)
    r1 = simulate(learner, adv, prob, dp_ftrl_params(2.0, 5.0, 2.0), ap, keys, T)
    assert np.all(r0["best_loss"] < 1e-3)               # realizable comparator
    assert r0["regret"].mean() < 10.0                  # non-private FTRL: O(beta D^2 + lam D^2) = O(1)
    assert r1["regret"].mean() > 3 * r0["regret"].mean()


def test_logphi_estimators_agree():
    rng = np.random.default_rng(0)
    xs = np.array([0.3, -0.2])
    S = lambda x: 40.0 * np.sum((x - xs) ** 2, axis=-1)  # noqa: E731
    g1 = logphi_grid(S, 1.0, 2, 64, 0.5)
    g2 = logphi_grid(S, 1.0, 2, 256, 0.5)
    mc, se = logphi_mc(rng, S, 1.0, 2, 200_000, 0.5)
    assert abs(g1 - g2) < 0.02 and abs(g2 - mc) < 6 * se + 1e-3


# --------------------------------------------------------------------------- planners and validation


def test_planners_registered_and_modes():
    for name in ("dp_ftrl", "experts_oco_net", "potential_oco"):
        assert get_planner(name).fn is not None
    for mode in ("paper", "certified", "rate"):
        p = plan_dp_ftrl(eps=1.0, delta=1e-6, T=1000, d=4, mode=mode, L=2.0, D=1.0, beta=1.0)
        assert p.certified and p.params["sigma"] > 0 and p.params["lam"] > 0
        q = plan_experts_oco_net(eps=1.0, T=1000, d=1, mode=mode)
        assert q.certified
    c = plan_potential_oco(eps=1.0, T=1000, d=2, mode="certified")
    assert c.certified and c.params["s_phi"] == 2.0
    a = plan_potential_oco(eps=0.5, delta=1e-6, T=1000, d=1, mode="certified")
    assert a.certified and a.delta_certified == 1e-6
    g = plan_dp_ftrl(eps=1.0, delta=1e-6, T=1000, d=4, setting="general")
    assert g.params["lam"] > 0
    # sigma follows docs/algorithms/primitives.md#tree-aggregation: L sqrt(2H / rho*)
    H = 10
    rho = (math.sqrt(1 + math.log(1e6)) - math.sqrt(math.log(1e6))) ** 2
    assert math.isclose(plan_dp_ftrl(eps=1.0, delta=1e-6, T=1000, d=4).params["sigma"], math.sqrt(2 * H / rho))


@pytest.mark.parametrize("bad, match", [
    (lambda: dp_ftrl_params(0.0, 1.0), "lam"), (lambda: dp_ftrl_params(-1.0, 1.0), "lam"),
    (lambda: dp_ftrl_params(1.0, -1.0), "sigma"), (lambda: dp_ftrl_params(1.0, 1.0, 0.0), "clip"),
    (lambda: dp_ftrl(linear_problem(3), 0), "T_max"),
    (lambda: dp_ftrl(linear_problem(3), 10, domain=Ball(1.0, d=4)), "mismatch"),
    (lambda: dp_ftrl("linear", 10), "Problem"),
    (lambda: plan_dp_ftrl(eps=1.0, delta=0.0, T=100, d=2), "delta"),
    (lambda: plan_dp_ftrl(eps=1.0, delta=1e-6, T=100, d=2, L=0.0), "L"),
    (lambda: plan_dp_ftrl(eps=1.0, delta=1e-6, T=100, d=2, D=-1.0), "D"),
    (lambda: plan_dp_ftrl(eps=1.0, delta=1e-6, T=100, d=2, mode="retuned"), "mode"),
    (lambda: plan_dp_ftrl(eps=float("inf"), delta=1e-6, T=100, d=2), "eps"),
    (lambda: plan_experts_oco_net(eps=1.0, T=100, d=2, beta=0.7), "beta"),
    (lambda: plan_experts_oco_net(eps=1.0, T=100, d=16), "small d"),
    (lambda: plan_potential_oco(eps=1.0, T=100, d=8), "small d"),
    (lambda: potential_oco_params(eta=0.0, eps0=1.0, K=3), "eta"),
    (lambda: experts_oco_net(squared_problem(2, 1.0), 1), "m"),
    (lambda: experts_oco_net(squared_problem(2, domain=__import__("jaxdp").oco.Simplex(2)), 4), "Ball"),
])
def test_bad_learner_inputs(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        bad()
