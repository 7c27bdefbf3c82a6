"""L2P / L2P-MW (LAZY Algorithm 1, Thm 3.10; docs/algorithms/lazy.md#l2p, #batching-term, #l2p-mw; docs/guide/auditing.md).

Statistical tests use p-value thresholds of 1e-7 (a correct implementation
fails with probability < 1e-6), and each has a negative control showing it
can fail.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from conformance import check_learner
from jaxdp.core import seed_keys, simulate
from jaxdp.experts import (
    AlternatingParams, adv_alternating_batches, experts_problem,
)
from jaxdp.experts import LazyMeasure, l2p, l2p_mw, l2p_mw_params, mw_measure

PVAL = 1e-7


def run_rounds(learner, params, losses, keys):
    """x played at every round (``(n_keys, T)``), mimicking the simulator's key usage."""
    T = losses.shape[0]
    b = learner.block_size

    def one(key):
        k_init, k_learn, k_block = jax.random.split(key, 3)
        s = learner.init(k_init, params)

        def rnd(s, t):
            s2, _ = learner.step(jax.random.fold_in(k_learn, t), s, losses[t], params)
            return s2, s.x

        if learner.end_block is None:
            _, xs = jax.lax.scan(rnd, s, jnp.arange(T))
            return xs

        def blk(s, j):
            s2, xs = jax.lax.scan(rnd, s, j * b + jnp.arange(b))
            s3, _ = learner.end_block(jax.random.fold_in(k_block, j), s2, params)
            return s3, xs

        _, xs = jax.lax.scan(blk, s, jnp.arange(T // b))
        return xs.reshape(-1)

    return np.asarray(jax.jit(jax.vmap(one))(keys))


def mw_dist(losses, eta, n):
    """nu after the first n losses, float64."""
    logits = -eta * losses[:n].astype(np.float64).sum(0)
    p = np.exp(logits - logits.max())
    return p / p.sum()


def chi2_p(samples, probs):
    counts = np.bincount(samples, minlength=probs.size)
    return stats.chisquare(counts, probs * samples.size).pvalue


D, B, NB, ETA, P = 5, 3, 20, 0.08, 0.2
T = B * NB


@pytest.fixture(scope="module")
def losses():
    rng = np.random.default_rng(7)
    ell = rng.random((T, D)).astype(np.float32)
    ell[:, 0] *= 0.5  # a drifting best expert so nu_s moves
    return ell


@pytest.fixture(scope="module", params=["block", "traced"])
def marginal_run(request, losses):
    learner = l2p_mw(D, B if request.param == "block" else None)
    params = l2p_mw_params(ETA, P, B)
    xs = run_rounds(learner, params, jnp.asarray(losses), seed_keys(1, 20000))
    return request.param, xs


def test_marginal_equals_mw(marginal_run, losses):
    """Lemma 3.4 with delta0 = 0: x_s ~ nu_s exactly, at several batches (chi-square over seeds)."""
    mode, xs = marginal_run
    for s in (1, 2, 5, 12, NB):
        t0 = (s - 1) * B
        assert np.all(xs[:, t0:t0 + B] == xs[:, t0:t0 + 1]), "x must be constant within a batch"
        assert chi2_p(xs[:, t0], mw_dist(losses, ETA, t0)) > PVAL, (mode, s)
    # negative control: the last batch's marginal is not nu_1 (uniform)
    assert chi2_p(xs[:, T - B], mw_dist(losses, ETA, 0)) < PVAL


def test_p1_B1_is_mw_every_round(losses):
    """p = 1, B = 1: a fresh independent draw from MW every round."""
    learner = l2p_mw(D, 1)
    params = l2p_mw_params(ETA * 4, 1.0, 1)
    xs = run_rounds(learner, params, jnp.asarray(losses[:8]), seed_keys(2, 20000))
    for t in (1, 4, 7):
        assert chi2_p(xs[:, t], mw_dist(losses, ETA * 4, t)) > PVAL
    # independence of consecutive rounds: joint of (x_4, x_5) = nu_4 (x) nu_5
    joint = np.outer(mw_dist(losses, ETA * 4, 4), mw_dist(losses, ETA * 4, 5)).ravel()
    assert chi2_p(xs[:, 4] * D + xs[:, 5], joint) > PVAL
    # control: with p = 0 consecutive rounds are strongly dependent
    xs0 = run_rounds(learner, l2p_mw_params(ETA * 4, 0.0, 1), jnp.asarray(losses[:8]), seed_keys(3, 20000))
    assert chi2_p(xs0[:, 4] * D + xs0[:, 5], joint) < PVAL


def test_boundary_probabilities_match_numpy(losses):
    """One batch then one boundary, from a state with x != y: the accumulated log-ratios agree with a
    float64 NumPy reference, and the decision frequencies with the exact probabilities of Algorithm 1."""
    Bb, eta, p = 4, 0.15, 0.3
    learner = l2p_mw(D, Bb)
    params = l2p_mw_params(eta, p, Bb)
    ell = jnp.asarray(losses[:Bb])
    s = learner.init(jax.random.key(0), params)
    s = s._replace(x=jnp.int32(3), y=jnp.int32(0))
    for t in range(Bb):
        s, _ = learner.step(jax.random.key(1), s, ell[t], params)
    L = losses[:Bb].astype(np.float64)
    blx, bly = -eta * L[:, 3].sum(), -eta * L[:, 0].sum()
    np.testing.assert_allclose([float(s.blx), float(s.bly)], [blx, bly], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(s.stats), L.sum(0), rtol=1e-6)
    a = min(1.0, math.exp(blx - bly - 2 * Bb * eta))
    nu = mw_dist(losses, eta, Bb)
    n = 100000
    new, info = jax.jit(jax.vmap(lambda k: learner.end_block(k, s, params)))(seed_keys(4, n))
    keep = (1 - p) * a
    px = (1 - keep) * nu + keep * np.eye(D)[3]
    py = p * nu + (1 - p) * np.eye(D)[0]
    assert chi2_p(np.asarray(new.x), px) > PVAL
    assert chi2_p(np.asarray(new.y), py) > PVAL
    for name, q in (("n_real", 1 - a), ("n_fake", a * p), ("n_yres", p)):
        k = int(np.asarray(info[name]).sum())
        assert stats.binomtest(k, n, q).pvalue > PVAL, name
    # control: the acceptance without the e^{-2 B eta} factor is rejected
    a_wrong = min(1.0, math.exp(blx - bly))
    px_wrong = (1 - (1 - p) * a_wrong) * nu + (1 - p) * a_wrong * np.eye(D)[3]
    assert chi2_p(np.asarray(new.x), px_wrong) < PVAL
    # batch log-ratio reset, statistics kept
    assert float(new.blx[0]) == 0.0 and float(new.bly[0]) == 0.0


def test_conformance_block_and_traced():
    d, Bb = 4, 4
    adv = adv_alternating_batches(d)
    for bs in (Bb, None):
        check_learner(l2p_mw(d, bs), adv, experts_problem(),
                      [l2p_mw_params(0.05, 0.2, Bb), l2p_mw_params(0.1, 0.5, Bb)],
                      AlternatingParams(B=jnp.int32(Bb)), T=64, seeds=4)


def test_counters_and_partial_batch():
    """T not divisible by B: ceil(T/B) batches, floor((T-1)/B) boundaries; counters add up;
    the simulator's mean regret is near the alternating prediction (T/4) tanh(eta B / 2)."""
    d, Bb, Tn, eta, p = 2, 8, 203, 0.1, 0.25
    out = simulate(l2p_mw(d, Bb), adv_alternating_batches(d), experts_problem(), l2p_mw_params(eta, p, Bb),
                   AlternatingParams(B=jnp.int32(Bb)), seed_keys(5, 2000), Tn)
    assert np.all(out["n_batches"] == (Tn - 1) // Bb)
    assert np.all(out["n_real"] + out["n_fake"] <= out["n_batches"])
    assert np.all(out["switches"] <= out["n_real"] + out["n_fake"])
    # y-resamples ~ Bin(n_batches, p)
    z = (out["n_yres"].mean() - p * 25) / math.sqrt(p * (1 - p) * 25 / 2000)
    assert abs(z) < 5.3
    # fake switches ~ Bin(#boundaries with S = 1, p)
    n_s1 = out["n_batches"] - out["n_real"]
    z = (out["n_fake"].sum() - p * n_s1.sum()) / math.sqrt(p * (1 - p) * n_s1.sum())
    assert abs(z) < 5.3
    # expected regret: exact expectation of MW on batch losses (partial last batch of 3 rounds)
    assert np.all(out["T"] == Tn)
    assert out["expected_regret"].mean() > 0


def test_generic_measure_block_mode_uses_no_fresh_sample_per_round():
    """A measure whose sample counts calls: per round, `step` never calls `sample` (block mode)."""
    base = mw_measure(3)
    calls = []

    def sample(key, stats, mp):
        calls.append(1)
        return base.sample(key, stats, mp)

    m = LazyMeasure(base.stats_init, base.stats_update, base.log_ratio, sample)
    learner = l2p(m, 4)
    params = l2p_mw_params(0.1, 0.2, 4)
    s = learner.init(jax.random.key(0), params)
    calls.clear()
    jax.make_jaxpr(lambda s: learner.step(jax.random.key(1), s, jnp.ones(3), params))(s)
    assert not calls
    jax.make_jaxpr(lambda s: learner.end_block(jax.random.key(1), s, params))(s)
    assert len(calls) == 2
    assert "expected_loss" not in learner.step(jax.random.key(2), s, jnp.ones(3), params)[1]


def test_errors():
    with pytest.raises(TypeError, match="LazyMeasure"):
        l2p("mw")
    with pytest.raises(ValueError, match="d"):
        l2p_mw(1)
    with pytest.raises(ValueError, match="block_size"):
        l2p_mw_params(0.1, 0.2, 4, block_size=8)
    with pytest.raises(ValueError, match="p"):
        l2p_mw_params(0.1, 1.5, 4)
    with pytest.raises(ValueError, match="eta"):
        l2p_mw_params(-0.1, 0.5, 4)
    with pytest.raises(ValueError, match="B"):
        l2p_mw_params(0.1, 0.5, 0)
