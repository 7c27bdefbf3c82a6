"""DP-FTRL and the tree-based experts with any continual-counting mechanism (noise=): the default tree is unchanged,
the other mechanisms are wired, planned (every mode, ledger with the factorization's sensitivity, no float floor for
raw releases) and pass the conformance check."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conformance import check_learner
from jaxdp.privacy.accounting.plan import NO_FLOAT_FLOOR_RAW
from jaxdp.experts import RealizableBernoulliParams, adv_realizable_bernoulli, experts_problem
from jaxdp.experts import tree_ftrl_experts, tree_ftrl_params
from jaxdp.experts.tree_ftrl import plan_tree_ftrl_experts
from jaxdp.privacy.mechanisms.matrix_factorization import BinaryTree, HonakerTree, SqrtToeplitz, stored_banded, stored_blt
from jaxdp.oco import adv_smooth_realizable, dp_ftrl, dp_ftrl_params, plan_dp_ftrl, smooth_realizable_params, squared_problem
from jaxdp.experts import binary_tree_experts
from jaxdp.experts import binary_tree_static, plan_binary_tree_experts

MECHS = {"honaker": HonakerTree(), "sqrt_toeplitz": SqrtToeplitz(), "banded": stored_banded(1000, 4, "mean"),
         "blt": stored_blt(1000, 3)}


@pytest.mark.parametrize("name", ["honaker"])
def test_dp_ftrl_mechanism_noise_is_the_mechanism_stream(name):
    """x_{t+1} = Proj(-(G_t + sigma w_t)/lam) with w_t the mechanism's stream under the learner's keys."""
    mech = MECHS[name]
    d, T, lam, sigma = 2, 40, 30.0, 0.7
    prob = squared_problem(d, 10.0)
    lrn = dp_ftrl(prob, T, None, mech)
    adv = adv_smooth_realizable(d)
    ap = smooth_realizable_params(1.0, 0.0)
    params = dp_ftrl_params(lam, sigma)
    keys = jax.random.split(jax.random.key(3), T + 2)

    def run(keys):
        ast = adv.init(keys[0], ap)
        st = lrn.init(keys[1], params)

        def body(c, kt):
            st, ast = c
            k, t = kt
            loss = adv.loss(ast, t)
            g = prob.grad(loss, st.x)
            st2, _ = lrn.step(k, st, loss, params)
            return (st2, ast), (st2.x, g)

        _, (xs, gs) = jax.lax.scan(body, (st, ast), (keys[2:], jnp.arange(T)))
        return xs, gs

    xs, gs = jax.jit(run)(jax.random.clone(keys))

    def noise(keys):
        def body(s, k):
            return mech.step(k, s, sigma)
        return jax.lax.scan(body, mech.init(T, (d,)), keys)[1]

    w = np.asarray(jax.jit(noise)(keys[2:]), np.float64)
    G = np.cumsum(np.asarray(gs, np.float64), axis=0)
    z = -(G + w) / lam
    nrm = np.maximum(np.linalg.norm(z, axis=1, keepdims=True) / 10.0, 1.0)
    np.testing.assert_allclose(np.asarray(xs), z / nrm, atol=1e-4)


@pytest.mark.parametrize("name", ["blt"])
def test_conformance_dp_ftrl_mechanisms(name):
    d = 3
    prob = squared_problem(d, 1.0)
    params = [dp_ftrl_params(5.0, 0.5, 2.0), dp_ftrl_params(20.0, 2.0, 1.0)]
    check_learner(dp_ftrl(prob, 64, None, MECHS[name]), adv_smooth_realizable(d), prob, params,
                  smooth_realizable_params(1.0, 0.1), loss_range=4.5)


def test_conformance_experts_mechanisms():
    d, T = 4, 64
    ap = RealizableBernoulliParams(q=jnp.float32(0.5), q_star=jnp.float32(0.0))
    mech = MECHS["sqrt_toeplitz"]
    check_learner(tree_ftrl_experts(d, T, mech), adv_realizable_bernoulli(d), experts_problem(),
                  [tree_ftrl_params(d, T, 1.0, 1e-5, noise=mech), tree_ftrl_params(d, T, 0.5, 1e-5, noise=mech)], ap, T=T)
    band = MECHS["banded"]
    plans = [plan_binary_tree_experts(eps=e, T=T, d=d, mode="rate", noise=band) for e in (1.0, 4.0)]
    from jaxdp.experts.binary_tree import binary_tree_params
    ps = [binary_tree_params(**{k: v for k, v in p.params.items() if k not in ("m_set", "P_max", "T_max")})
          for p in plans]
    check_learner(binary_tree_experts(d, **binary_tree_static(plans[0]), noise=band), adv_realizable_bernoulli(d),
                  experts_problem(), ps, ap, T=T)


def _same_steps(a, b, params, loss_at, rounds=6):
    """init + a few jitted steps of two learners with the same keys and losses give identical states."""
    ka = jax.random.split(jax.random.key(0), rounds + 1)
    kb = jax.random.clone(ka)
    sa, sb = a.init(ka[0], params), b.init(kb[0], params)
    step_a, step_b = jax.jit(a.step), jax.jit(b.step)
    for t in range(rounds):
        sa, ia = step_a(ka[t + 1], sa, loss_at(t), params)
        sb, ib = step_b(kb[t + 1], sb, loss_at(t), params)
        for u, v in zip(jax.tree_util.tree_leaves((sa, ia)), jax.tree_util.tree_leaves((sb, ib))):
            np.testing.assert_array_equal(np.asarray(u), np.asarray(v))


def _bernoulli(d, rounds=6):
    losses = jax.random.bernoulli(jax.random.key(1), 0.5, (rounds, d)).astype(jnp.float32)
    return lambda t: losses[t]


def test_dp_ftrl_default_tree_is_bit_identical():
    d = 3
    prob = squared_problem(d, 1.0)
    adv = adv_smooth_realizable(d)
    ast = adv.init(jax.random.key(5), smooth_realizable_params(1.0, 0.1))
    p = dp_ftrl_params(5.0, 0.8, 2.0)
    _same_steps(dp_ftrl(prob, 100), dp_ftrl(prob, 100, None, BinaryTree()), p, lambda t: adv.loss(ast, t), rounds=12)


def test_experts_default_tree_unchanged():
    d, T = 4, 50
    for dl in (0.0, 1e-5):
        a, b = tree_ftrl_params(d, T, 1.0, dl), tree_ftrl_params(d, T, 1.0, dl, noise=BinaryTree())
        assert float(a.scale) == float(b.scale)
    _same_steps(tree_ftrl_experts(d, T, "gaussian"), tree_ftrl_experts(d, T, BinaryTree()), a, _bernoulli(d))
    plan = plan_binary_tree_experts(eps=2.0, T=T, d=d)
    assert plan_binary_tree_experts(eps=2.0, T=T, d=d, noise="tree").to_dict() == plan.to_dict()
    from jaxdp.experts.binary_tree import binary_tree_params
    pp = binary_tree_params(**{k: v for k, v in plan.params.items() if k not in ("m_set", "P_max", "T_max")})
    st = binary_tree_static(plan)
    _same_steps(binary_tree_experts(d, **st), binary_tree_experts(d, **st, noise=BinaryTree()), pp, _bernoulli(d))


@pytest.mark.parametrize("mode", ["paper", "certified", "rate"])
def test_dp_ftrl_plans_every_mechanism_equal_certificate(mode):
    base = plan_dp_ftrl(eps=1.0, delta=1e-6, T=1000, d=4, mode=mode, L=2.0)
    assert base.to_dict() == plan_dp_ftrl(eps=1.0, delta=1e-6, T=1000, d=4, mode=mode, L=2.0, noise="tree").to_dict()
    for setting in ("realizable", "general"):
        for name, mech in MECHS.items():
            p = plan_dp_ftrl(eps=1.0, delta=1e-6, T=1000, d=4, mode=mode, L=2.0, setting=setting, noise=mech)
            assert p.certified and math.isclose(p.eps_certified, base.eps_certified, rel_tol=1e-9)
            (ev, _), = list(p.ledger.events())
            assert ev.kind == "gaussian" and ev.float_dim == 4
            # sigma = 2L sens(C) / sqrt(2 rho*): the tree's noise multiplier
            assert math.isclose(ev.noise_multiplier * 2.0 * 2.0 * mech.sensitivity(1000), p.params["sigma"],
                                rel_tol=1e-12)
            assert p.delta_float is None and p.delta_float_note == NO_FLOAT_FLOOR_RAW
    # the mechanism with less prefix noise gets the larger general-setting lambda's counterpart: less noise
    g = {n: plan_dp_ftrl(eps=1.0, delta=1e-6, T=1000, d=4, setting="general", noise=m).params["lam"]
         for n, m in MECHS.items()}
    assert g["blt"] < g["honaker"]
    named = plan_dp_ftrl(eps=1.0, delta=1e-6, T=1000, d=4, noise="blt")
    assert named.params == plan_dp_ftrl(eps=1.0, delta=1e-6, T=1000, d=4, noise=stored_blt(1000, 3)).params


@pytest.mark.parametrize("mode", ["paper", "certified", "rate"])
def test_experts_plans(mode):
    for noise in (None, "honaker", SqrtToeplitz(), MECHS["blt"]):
        for delta in (0.0, 1e-6):
            p = plan_tree_ftrl_experts(eps=1.0, delta=delta, T=500, d=8, mode=mode, noise=noise)
            assert p.certified and p.delta_certified == delta
            assert p.delta_float is None and p.delta_float_note == NO_FLOAT_FLOOR_RAW
            q = tree_ftrl_params(8, 500, 1.0, delta, noise=noise)
            assert math.isclose(float(q.scale), p.params["scale"], rel_tol=1e-6)
        b = plan_binary_tree_experts(eps=1.0, T=500, d=8, mode=mode, noise=noise)
        assert b.certified and b.eps_certified <= 1.0 + 1e-9 and b.params["tau"] > 0
        assert b.delta_float is not None          # compared only: a (conservative) float floor


def test_noise_argument_validation():
    prob = squared_problem(2, 1.0)
    with pytest.raises(TypeError, match="noise must be"):
        dp_ftrl(prob, 10, None, 2.0)
    assert dp_ftrl(prob, 10, None, "tree") is not None
    with pytest.raises(ValueError, match="kind"):
        tree_ftrl_experts(4, 10, "gaussian", kind="laplace")
    with pytest.raises(ValueError, match="mechanism"):
        plan_dp_ftrl(eps=1.0, delta=1e-6, T=100, d=2, noise="fourier")
    with pytest.raises(TypeError, match="noise must be"):
        plan_tree_ftrl_experts(eps=1.0, T=100, d=4, noise=1.5)
