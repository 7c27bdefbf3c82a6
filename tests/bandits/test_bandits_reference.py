"""Bandit learners against independent NumPy references, step by step, and their noise laws.

Statistical thresholds as elsewhere in the suite: KS / chi-square p-values against 1e-7 and
z-scores against 6 (a correct implementation fails with probability below 1e-6), each paired
with a wrong alternative that the same test rejects.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as st

import jaxdp.bandits as BD
from jaxdp.bandits.testing import trajectory
from jaxdp.bandits.thompson import gamma_mt
from jaxdp.core import seed_keys, simulate

f32 = jnp.float32
MU9 = np.linspace(0.1, 0.9, 9)


def _env(means):
    return BD.bernoulli_arms(len(means)), BD.BernoulliArmsParams(jnp.asarray(means, f32))


def ucb1_reference(actions, loss, prio, c=2.0):
    """Slow float64 UCB1 (Auer et al. 2002; SMPyBandits' index), teacher-forced on the run's history.

    Returns the number of rounds whose choice was compared and of near-ties (top two distinct indices
    within 1e-6 relative: float32 and float64 may order them differently) that were skipped."""
    T, K = loss.shape
    N, S = np.zeros(K), np.zeros(K)
    assert actions[0] == np.argmax(prio)      # every index is +inf: the first arm of the random order
    compared = skipped = 0
    for t in range(T):
        x = actions[t]
        N[x] += 1
        S[x] += 1.0 - loss[t, x]
        with np.errstate(divide="ignore", invalid="ignore"):
            idx = np.where(N > 0, S / N + np.sqrt(c * np.log(t + 1) / N), np.inf)
        top = idx.max()
        cand = np.flatnonzero(idx == top)
        choice = cand[np.argmax(prio[cand])]
        rest = idx[idx != top]
        if np.isfinite(top) and rest.size and top - rest.max() < 1e-6 * abs(top):
            skipped += 1
            continue
        assert actions[t + 1] == choice, f"round {t + 1}: UCB1 played {actions[t + 1]}, the reference {choice}"
        compared += 1
    return compared, skipped


def test_ucb1_matches_numpy_reference_step_by_step():
    """K = 9, means linspace(0.1, 0.9, 9), T = 10^4, 3 seeds: every choice equals the reference's, and the
    engine's pseudo-regret (same keys) is the sum of the gaps of the arms played."""
    T, S = 10_000, 3
    adv, ap = _env(MU9)
    learner, params = BD.ucb1(9), BD.UCB1Params(f32(2.0))
    tr = trajectory(learner, adv, params, ap, seed_keys(0, S), T)
    out = simulate(learner, adv, BD.bandit_problem("pseudo"), params, ap, seed_keys(0, S), T)
    q = BD.quantized_means(MU9)
    for s in range(S):
        compared, skipped = ucb1_reference(tr["actions"][s], tr["loss"][s], tr["states"].prio[s, 0])
        assert compared >= T - 5 and skipped <= 5
        assert abs(out["regret"][s] - (q.max() - q)[tr["actions"][s, :T]].sum()) < 1e-2
    # the reference is not vacuous: UCB1 with c = 1 makes other choices on the same history
    tr1 = trajectory(BD.ucb1(9), adv, BD.UCB1Params(f32(1.0)), ap, seed_keys(0, 1), 2000)
    try:
        ucb1_reference(tr1["actions"][0], tr1["loss"][0], tr1["states"].prio[0, 0])
        raise RuntimeError("the reference accepted UCB with c = 1")
    except AssertionError:
        pass


def exp3_reference_probs(actions, loss, gamma, eta, K):
    """Float64 EXP3 (Auer et al. 2002; SMPyBandits Exp3 with unbiased estimates), teacher-forced:
    the trusts p_t after every round."""
    T = loss.shape[0]
    w = np.full(K, 1.0 / K)
    p = np.full(K, 1.0 / K)
    out = np.empty((T + 1, K))
    out[0] = p
    for t in range(T):
        x = actions[t]
        w[x] *= np.exp(eta * (1.0 - loss[t, x]) / p[x])
        w /= w.sum()
        p = (1 - gamma) * w + gamma / K
        p /= p.sum()
        out[t + 1] = p
    return out


def test_exp3_probabilities_and_draws():
    """SMPyBandits' Exp3(9, gamma=0.01): the trusts match the float64 reference at every round (rtol 1e-3),
    the first K rounds play the stored permutation, and the later draws follow the trusts (per-arm
    count z-scores against sum_t p_t, |z| < 6 over 16 seeds x 9 arms). Drawing from the unmixed weights
    instead (a wrong implementation) is rejected by the reference comparison."""
    K, T, S = 9, 3000, 16
    g = 0.01
    adv, ap = _env(MU9)
    tr = trajectory(BD.exp3(K), adv, BD.Exp3Params(f32(g), f32(g / K), f32(1.0)), ap, seed_keys(2, S), T)
    zs = []
    for s in range(S):
        acts = tr["actions"][s]
        ref = exp3_reference_probs(acts, tr["loss"][s], g, g / K, K)
        np.testing.assert_allclose(tr["states"].p[s], ref, rtol=1e-3, atol=1e-7)
        perm = tr["states"].perm[s, 0]
        np.testing.assert_array_equal(acts[:K], perm)
        assert sorted(perm) == list(range(K))
        P = ref[K:T + 1]                       # x_{t+1} ~ p_{t+1} once the permutation is done
        obs = np.bincount(acts[K:T + 1], minlength=K)
        zs.append((obs - P.sum(0)) / np.sqrt((P * (1 - P)).sum(0)))
        wrong = exp3_reference_probs(acts, tr["loss"][s], 0.0, g / K, K)
        assert not np.allclose(tr["states"].p[s], wrong, rtol=1e-3, atol=1e-7)
    assert np.max(np.abs(zs)) < 6.0


def test_exp3_ix_and_dp_exp3_match_references():
    """EXP3-IX (Neu 2015) and noiseless DP-EXP3 in blocks of 3 (b = 0): distributions equal the float64
    references; DP-EXP3 only switches arm at block ends."""
    K, T, S = 5, 600, 2
    means = np.array([0.2, 0.4, 0.5, 0.6, 0.8])
    adv, ap = _env(means)
    eta, gam = 0.05, 0.02
    tr = trajectory(BD.exp3_ix(K), adv, BD.Exp3IXParams(f32(eta), f32(gam)), ap, seed_keys(4, S), T)
    for s in range(S):
        lw = np.zeros(K)
        p = np.full(K, 1.0 / K)
        for t in range(T):
            x = tr["actions"][s, t]
            lw[x] -= eta * tr["loss"][s, t, x] / (p[x] + gam)
            p = np.exp(lw - lw.max())
            p /= p.sum()
            np.testing.assert_allclose(tr["states"].p[s, t + 1], p, rtol=1e-4, atol=1e-7)
    tau, gamma, B = 3, 0.1, 2.0
    tr = trajectory(BD.dp_exp3(K), adv, BD.DPExp3Params(f32(eta), f32(gamma), f32(0.0), f32(B), jnp.int32(tau)), ap,
                    seed_keys(5, S), T)
    for s in range(S):
        acts = tr["actions"][s]
        lw = np.zeros(K)
        p = np.full(K, 1.0 / K)
        for j in range(T // tau):
            blk = acts[j * tau:(j + 1) * tau]
            assert np.all(blk == blk[0])
            x = blk[0]
            avg = tr["loss"][s, j * tau:(j + 1) * tau, x].mean()
            lw[x] -= eta * avg / p[x]
            q = np.exp(lw - lw.max())
            p = (1 - gamma) * q / q.sum() + gamma / K
            np.testing.assert_allclose(tr["states"].p[s, (j + 1) * tau], p, rtol=1e-4, atol=1e-7)


def test_dp_se_schedule_and_noise_law():
    """DP-SE, K = 3: the first epoch pulls each arm R_1 times in a round robin; at its end each released
    mean minus the exact epoch mean, times eps R_1, is Laplace(1) (KS over 300 seeds x 3 arms,
    p > 1e-7; twice the noise is rejected, p < 1e-7); with eps huge the elimination rule is the
    reference's on the exact means."""
    K, S, eps, beta = 3, 300, 1.0, 0.5
    means = np.array([0.3, 0.5, 0.8])
    adv, ap = _env(means)
    R1 = int(BD.dp_se_epoch_length(1, K, eps, beta))
    T = K * R1 + 1
    tr = trajectory(BD.dp_se(K), adv, BD.DPSEParams(f32(eps), f32(beta)), ap, seed_keys(6, S), T)
    acts = tr["actions"][:, :K * R1]
    counts = np.stack([(acts == a).sum(1) for a in range(K)], 1)
    assert np.all(counts == R1)
    r = 1.0 - np.take_along_axis(tr["loss"][:, :K * R1], acts[..., None], 2)[..., 0]
    exact = np.stack([(r * (acts == a)).sum(1) / R1 for a in range(K)], 1)
    z = ((tr["states"].noisy[:, K * R1] - exact) * eps * R1).ravel()
    assert st.kstest(z, st.laplace.cdf).pvalue > 1e-7
    assert st.kstest(z / 2.0, st.laplace.cdf).pvalue < 1e-7
    # near-noiseless: eliminations follow the reference rule on the exact epoch means
    trn = trajectory(BD.dp_se(K), adv, BD.DPSEParams(f32(1e6), f32(beta)), ap, seed_keys(7, 4),
                     K * int(BD.dp_se_epoch_length(1, K, 1e6, beta)) + 1)
    R = int(BD.dp_se_epoch_length(1, K, 1e6, beta))
    for s in range(4):
        a = trn["actions"][s, :K * R]
        rr = 1.0 - trn["loss"][s, np.arange(K * R), a]
        m = np.array([rr[a == i].mean() for i in range(K)])
        keep = m >= m.max() - 0.5 - 1e-5
        np.testing.assert_array_equal(trn["states"].active[s, K * R], keep)
        assert trn["states"].e[s, K * R] == 2


def test_tree_and_ldp_noise_laws():
    """DP-UCB: with b = 0 the trees release the exact reward sums; with b > 0 the released sum of an
    arm pulled a power-of-two number of times carries one node's Lap(b). LDP-UCB: a single
    privatised reward is r + Lap(b). Both standardized samples pass KS against Laplace(1)
    (p > 1e-7) and fail it at twice the scale."""
    K, T, S = 4, 64, 200
    means = np.array([0.2, 0.4, 0.6, 0.8])
    adv, ap = _env(means)
    tr = trajectory(BD.dp_ucb_tree(K, T), adv, BD.DPUCBParams(f32(0.0)), ap, seed_keys(8, 3), T)
    acts = tr["actions"][:, :T]
    r = 1.0 - np.take_along_axis(tr["loss"], acts[..., None], 2)[..., 0]
    cum = np.stack([np.cumsum(r * (acts == a), 1) for a in range(K)], -1)
    np.testing.assert_allclose(tr["states"].S[:, 1:], cum, atol=1e-4)
    b = 3.0
    tr = trajectory(BD.dp_ucb_tree(K, T), adv, BD.DPUCBParams(f32(b)), ap, seed_keys(9, S), T)
    acts = tr["actions"][:, :T]
    r = 1.0 - np.take_along_axis(tr["loss"], acts[..., None], 2)[..., 0]
    zs = []
    for s in range(S):
        N = tr["states"].N[s, 1:]
        for a in range(K):
            cum = np.cumsum(r[s] * (acts[s] == a))
            for n in (1, 2, 4):       # popcount 1: one node
                t = np.flatnonzero(N[:, a] == n)
                if t.size:
                    zs.append((tr["states"].S[s, t[0] + 1, a] - cum[t[0]]) / b)
    zs = np.asarray(zs)
    assert zs.size > 1000
    assert st.kstest(zs, st.laplace.cdf).pvalue > 1e-7
    assert st.kstest(zs / 2.0, st.laplace.cdf).pvalue < 1e-7
    tr = trajectory(BD.ldp_ucb(K), adv, BD.LDPUCBParams(f32(b)), ap, seed_keys(10, 2000), 1)
    x0 = tr["actions"][:, 0]
    r0 = 1.0 - tr["loss"][np.arange(2000), 0, x0]
    z = (tr["states"].S[np.arange(2000), 1, x0] - r0) / b
    assert st.kstest(z, st.laplace.cdf).pvalue > 1e-7
    assert st.kstest(z / 2.0, st.laplace.cdf).pvalue < 1e-7


def test_gamma_sampler_at_a_thompson_samplers_shapes_under_vmap():
    """At the shapes a Thompson sampler reaches (alpha ~ 1e5 after 1e5 pulls), float32 draws vmapped over keys are
    Gamma(alpha): none outside the 1e-13 tails (a cancelling acceptance test once left about 6e-4 of them at 0),
    KS p > 1e-7, and every vmapped draw equals the same key's unbatched draw."""
    for i, a in enumerate((3e4, 1.2e5, 2.4e5)):
        kd = jax.random.key_data(jax.random.split(jax.random.key(3 + i), 100_000))
        keys = jax.random.wrap_key_data(kd)
        x = np.asarray(jax.jit(jax.vmap(lambda k, a=a: gamma_mt(k, jnp.full((2,), a, f32))))(keys), np.float64)
        lo, hi = st.gamma(a).ppf(1e-13), st.gamma(a).isf(1e-13)
        assert lo <= x.min() and x.max() <= hi, (a, x.min(), x.max())
        assert st.kstest(x.ravel(), st.gamma(a).cdf).pvalue > 1e-7, a
        one = np.stack([np.asarray(gamma_mt(jax.random.wrap_key_data(kd[j]), jnp.full((2,), a, f32))) for j in range(20)])
        np.testing.assert_array_equal(one, x[:20].astype(np.float32))


def test_log_gamma_sampler_and_thompson_with_priors_below_one():
    """At shapes far below 1 the Gamma draw G_{a+1} U^{1/a} underflows float32 (42% of draws at a = 0.01), and
    Thompson's theta = G_a/(G_a + G_b) was 0/0 for 18% of first rounds under a Beta(0.01, 0.01) prior, which
    argmax turned into a bias (P[arm 0] = 0.40 instead of 1/2). log_gamma_mt returns ln G without underflow: its
    values are finite, equal ln(gamma_mt) wherever that is positive, and are Gamma(a) by KS on the regularized
    incomplete gamma (its series x^a/Gamma(a + 1) below e^-700); Thompson's first choice is uniform (binomial,
    |z| < 5.3, p < 1e-7)."""
    import importlib

    from scipy import special
    TH = importlib.import_module("jaxdp.bandits.thompson")
    for i, a in enumerate((0.01, 0.2)):
        kd = jax.random.key_data(jax.random.split(jax.random.key(20 + i), 20_000))
        lg = np.asarray(jax.jit(jax.vmap(lambda k, a=a: TH.log_gamma_mt(k, jnp.full((2,), a, f32))))(
            jax.random.wrap_key_data(kd)), np.float64).ravel()
        g = np.asarray(jax.jit(jax.vmap(lambda k, a=a: TH.gamma_mt(k, jnp.full((2,), a, f32))))(
            jax.random.wrap_key_data(kd)), np.float64).ravel()
        assert np.all(np.isfinite(lg))
        pos = g > 1e-30
        np.testing.assert_allclose(lg[pos], np.log(g[pos]), rtol=1e-5, atol=1e-4)
        cdf = np.where(lg < -700, np.exp(a * np.maximum(lg, -1e6) - special.gammaln(a + 1)),
                       special.gammainc(a, np.exp(np.maximum(lg, -700))))
        assert st.kstest(cdf, "uniform").pvalue > 1e-7, a
    n = 200_000
    L = BD.thompson(2)
    p = BD.ThompsonParams(f32(0.01), f32(0.01))
    first = np.asarray(jax.jit(jax.vmap(lambda k: L.init(k, p).x))(jax.random.split(jax.random.key(5), n)))
    assert abs(first.mean() - 0.5) / np.sqrt(0.25 / n) < 5.3
    # a shape <= 0 would never be accepted (an endless rejection loop): refused before compiling
    for bad in (np.array([1.0, 0.0]), np.array([1.0, np.nan]), np.array([[1.0]])):
        for fn in (TH.gamma_mt, TH.log_gamma_mt):
            with pytest.raises(ValueError, match="alpha"):
                fn(jax.random.key(0), bad)


def test_thompson_gamma_sampler_and_posterior():
    """gamma_mt is Gamma(alpha) for shapes below and above 1 (KS, 50k draws, p > 1e-7; shape 1.1x is
    rejected); Thompson's counts are the successes and failures of the arms it played."""
    draw = jax.jit(lambda k, a: gamma_mt(k, a))
    for a in (0.4, 1.0, 3.0, 250.0):
        x = np.asarray(draw(jax.random.key(1), jnp.full((50_000,), a, f32)))
        assert st.kstest(x, st.gamma(a).cdf).pvalue > 1e-7, a
        assert st.kstest(x, st.gamma(1.1 * a).cdf).pvalue < 1e-7, a
    K, T = 3, 200
    adv, ap = _env(np.array([0.2, 0.5, 0.7]))
    tr = trajectory(BD.thompson(K), adv, BD.ThompsonParams(f32(1.0), f32(1.0)), ap, seed_keys(11, 2), T)
    acts = tr["actions"][:, :T]
    r = 1.0 - np.take_along_axis(tr["loss"], acts[..., None], 2)[..., 0]
    for a in range(K):
        np.testing.assert_array_equal(tr["states"].S[:, -1, a], (r * (acts == a)).sum(1))
        np.testing.assert_array_equal(tr["states"].F[:, -1, a], ((1 - r) * (acts == a)).sum(1))
