"""Bandits: the problem, the environments, and conformance of every bandit learner (jaxdp.bandits)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as st

import jaxdp.bandits as BD
from jaxdp.bandits.testing import check_bandit_feedback, check_bandit_learner, trajectory
from jaxdp.core import Learner, seed_keys, simulate
from jaxdp.experts import BernoulliParams, bernoulli_experts
from jaxdp.testing import ConformanceError

f32 = jnp.float32
K = 3


def _dp_exp3_params(eta, gamma, b, B, tau):
    return BD.DPExp3Params(f32(eta), f32(gamma), f32(b), f32(B), jnp.int32(tau))


# every bandit learner with two grid points of its params (one compilation must serve both)
LEARNERS = {
    "ucb1": (lambda: BD.ucb1(K), [BD.UCB1Params(f32(2.0)), BD.UCB1Params(f32(1.0))]),
    "thompson": (lambda: BD.thompson(K), [BD.ThompsonParams(f32(1.0), f32(1.0)), BD.ThompsonParams(f32(0.5), f32(2.0))]),
    "exp3": (lambda: BD.exp3(K), [BD.Exp3Params(f32(0.1), f32(0.03), f32(1.0)), BD.Exp3Params(f32(0.2), f32(0.05), f32(0.0))]),
    "exp3_ix": (lambda: BD.exp3_ix(K), [BD.Exp3IXParams(f32(0.1), f32(0.05)), BD.Exp3IXParams(f32(0.2), f32(0.0))]),
    "ldp_ucb": (lambda: BD.ldp_ucb(K), [BD.LDPUCBParams(f32(1.0)), BD.LDPUCBParams(f32(0.0))]),
    "dp_ucb_tree": (lambda: BD.dp_ucb_tree(K, 64), [BD.DPUCBParams(f32(7.0)), BD.DPUCBParams(f32(0.0))]),
    "dp_se": (lambda: BD.dp_se(K), [BD.DPSEParams(f32(50.0), f32(0.9)), BD.DPSEParams(f32(5.0), f32(0.9))]),
    "dp_exp3": (lambda: BD.dp_exp3(K), [_dp_exp3_params(0.1, 0.2, 1.0, 3.0, 1), _dp_exp3_params(0.2, 0.3, 0.5, 2.0, 3)]),
}


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_bandit_learner_conformance(name):
    """jit/vmap/keys/purity/one trace/finite/in range (check_learner), and bandit feedback only."""
    make, params = LEARNERS[name]
    # T = 50 and 38 (the check's second horizon) end inside a round-robin cycle of DP-SE's first epoch,
    # so its random order of the arms (its only use of the key before the epoch ends) shows in the regret
    out = check_bandit_learner(make(), params, K, T=50, seeds=4)
    assert np.all(np.isfinite(out["regret"]))


def test_feedback_check_rejects_a_full_information_learner():
    """A learner that reads the whole loss vector (follow the leader on all arms) fails [bandit feedback]."""
    from typing import NamedTuple

    class FTL(NamedTuple):
        x: jax.Array
        cum: jax.Array

    def init(key, params):
        return FTL(x=jax.random.randint(key, (), 0, K, jnp.int32), cum=jnp.zeros((K,), f32))

    def step(key, s, loss, params):
        cum = s.cum + loss.loss
        return FTL(x=jnp.argmin(cum).astype(jnp.int32), cum=cum), {}

    with pytest.raises(ConformanceError, match="bandit feedback"):
        check_bandit_feedback(Learner(init, step), None, K, T=16)


def test_bernoulli_arms_law_and_couplings():
    """Both couplings: per-arm frequencies match the quantized means (chi-square, p > 1e-7); the common
    coupling is comonotone (a higher-mean arm pays whenever a lower one does); means reported exactly."""
    Kb, T = 4, 4000
    means = np.array([0.1, 0.35, 0.6, 0.9])
    for coupling in BD.COUPLINGS:
        adv = BD.bernoulli_arms(Kb, coupling)
        ap = BD.BernoulliArmsParams(jnp.asarray(means, f32))
        st_ = adv.init(jax.random.key(3), ap)
        ls = jax.jit(jax.vmap(lambda t: adv.loss(st_, t)))(jnp.arange(T, dtype=jnp.int32))
        r = 1.0 - np.asarray(ls.loss)
        q = BD.quantized_means(means, coupling)
        np.testing.assert_allclose(1.0 - np.asarray(ls.mean[0]), q, rtol=0, atol=1e-7)
        assert np.max(np.abs(q - means)) < 1e-4
        for i in range(Kb):
            k = r[:, i].sum()
            chi = (k - T * q[i]) ** 2 / (T * q[i] * (1 - q[i]))
            assert st.chi2.sf(chi, 1) > 1e-7, (coupling, i)
        if coupling == "common":
            assert np.all(np.diff(r, axis=1) >= 0)
        else:   # independent arms: the empirical correlation of two arms is small
            assert abs(np.corrcoef(r[:, 1], r[:, 2])[0, 1]) < 6 / np.sqrt(T)


def test_pseudo_and_realized_regret_of_one_run():
    """The two problems see the same runs: pseudo-regret = sum of gaps of the arms played (from the
    trajectory), realized = losses minus the best arm's realized total; the switching and as_bandit
    environments and a plain experts adversary run too."""
    Kb, T, S = 4, 300, 3
    means = np.array([0.2, 0.5, 0.55, 0.8])
    learner, params = BD.ucb1(Kb), BD.UCB1Params(f32(2.0))
    adv, ap = BD.bernoulli_arms(Kb), BD.BernoulliArmsParams(jnp.asarray(means, f32))
    pseudo = simulate(learner, adv, BD.bandit_problem("pseudo"), params, ap, seed_keys(5, S), T)
    real = simulate(learner, adv, BD.bandit_problem("realized"), params, ap, seed_keys(5, S), T)
    tr = trajectory(learner, adv, params, ap, seed_keys(5, S), T)
    q = BD.quantized_means(means)
    x = tr["actions"][:, :T]
    np.testing.assert_allclose(pseudo["regret"], (q.max() - q)[x].sum(1), rtol=1e-5, atol=1e-3)
    inc = np.take_along_axis(tr["loss"], x[..., None], 2)[..., 0].sum(1)
    np.testing.assert_allclose(real["regret"], inc - tr["loss"].sum(1).min(1), rtol=1e-6, atol=1e-3)
    # the switching ("late arm") environment and an experts adversary as a bandit
    sw = BD.SwitchingArmsParams(jnp.asarray([0.0, 0.5, 0.5, 0.5], f32), jnp.asarray([1.0, 0.5, 0.5, 0.5], f32),
                                jnp.int32(T // 3))
    o = simulate(learner, BD.switching_arms(Kb), BD.bandit_problem("pseudo"), params, sw, seed_keys(1, S), T)
    assert np.all(np.isfinite(o["regret"]))
    adv2, ap2 = BD.as_bandit(bernoulli_experts(Kb)), BernoulliParams(gap=f32(0.2))
    a = simulate(learner, adv2, BD.bandit_problem("pseudo"), params, ap2, seed_keys(1, S), T)
    b = simulate(learner, adv2, BD.bandit_problem("realized"), params, ap2, seed_keys(1, S), T)
    np.testing.assert_array_equal(a["regret"], b["regret"])   # a fixed sequence is its own mean


def test_arm_out_of_range_is_nan():
    def init(key, params):
        return BD.UCBState(x=jnp.int32(K), n=f32(0), N=jnp.zeros(K), S=jnp.zeros(K), prio=jnp.zeros(K))

    def step(key, s, observed, params):
        return s, {}

    bad = BD.bandit_learner(init, step)
    adv, ap = BD.bernoulli_arms(K), BD.BernoulliArmsParams(jnp.full((K,), 0.5, f32))
    out = simulate(bad, adv, BD.bandit_problem("pseudo"), None, ap, seed_keys(0, 2), 8)
    assert np.all(np.isnan(out["regret"]))


def test_params_refuse_bad_values():
    with pytest.raises(ValueError, match="means"):
        BD.BernoulliArmsParams(np.array([0.5, 1.2]))
    with pytest.raises(ValueError, match="gamma"):
        BD.Exp3Params(0.0, 0.1)
    with pytest.raises(ValueError, match="beta"):
        BD.DPSEParams(1.0, 1.0)
    with pytest.raises(ValueError, match="regret"):
        BD.bandit_problem("expected")
    with pytest.raises(ValueError, match="coupling"):
        BD.bernoulli_arms(3, "shared")
