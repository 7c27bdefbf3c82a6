"""Exact laws of the bandit audits' outputs (jaxdp.bandits.audits) against independent simulation.

Each law is checked against a float64 NumPy simulation written from the algorithm's description (not from the
code under test) by a chi-square test at p > 1e-8, and also against the jaxdp learners themselves on the audited
pairs; with nineteen such checks a correct law fails with probability below 1e-6
(fixed seeds: the tests are deterministic). The exact losses on the audited pairs are checked against their
closed forms.
"""
from __future__ import annotations

import math

import jax
import numpy as np
import pytest
from scipy import stats

from jaxdp.privacy.audit.learners import action_code, learner_mechanism
from jaxdp.bandits import audits as A
from jaxdp.bandits.ucb import DPUCBParams, LDPUCBParams, dp_ucb_tree, ldp_ucb

P_ACCEPT = 1e-8


def _chi2_p(counts, probs):
    counts, probs = np.asarray(counts, float), np.asarray(probs, float)
    keep = probs > 0
    assert counts[~keep].sum() == 0
    return stats.chisquare(counts[keep], probs[keep] * counts.sum()).pvalue


def _sim_index_policy(rng, n, losses, b, tree):
    """K = 2, T = 2: UCB-type play (random tie-break order, unpulled arms first) with each pulled reward released
    plus Lap(b) (LDP-UCB's local randomizer; DP-UCB's one-leaf tree), index = noisy mean + sqrt(2 ln n/N) +
    b max(sqrt(8 m L), 2 sqrt2 L)/N with L = 4 ln n, m = N (LDP) or popcount(N) (tree). Returns codes x1+2x2+4x3."""
    prio = rng.random((n, 2))
    x = [np.argmax(prio, 1)]
    N, S = np.zeros((n, 2)), np.zeros((n, 2))
    rows = np.arange(n)
    for t in range(2):
        a = x[-1]
        reward = 1.0 - losses[t][a] + rng.laplace(0.0, b, n)
        N[rows, a] += 1
        S[rows, a] += reward
        nn = t + 1.0
        L = 4.0 * math.log(nn)
        m = np.vectorize(lambda k: bin(int(k)).count("1"))(N) if tree else N
        safe = np.maximum(N, 1.0)
        idx = S / safe + np.sqrt(2.0 * math.log(nn) / safe) + b * np.maximum(np.sqrt(8 * m * L), 2 * math.sqrt(2) * L) / safe
        idx = np.where(N > 0, idx, np.inf)
        top = idx.max(1, keepdims=True)
        x.append(np.argmax(np.where(idx == top, prio, -1.0), 1))
    return x[0] + 2 * x[1] + 4 * x[2]


def _ucb_pairs():
    base = np.zeros((2, 2))
    base[:, 1] = 1.0
    a, c = base.copy(), base.copy()
    a[0], c[0] = [1.0, 0.0], [0.0, 1.0]
    return a, c


def test_laplace_difference_tail_matches_quadrature():
    from scipy import integrate
    b = 0.7
    dens = lambda u: math.exp(-abs(u) / b) * (1 + abs(u) / b) / (4 * b)      # noqa: E731
    for w in (-1.3, 0.0, 0.4, 2.5):
        got = float(A.laplace_difference_sf(w, b))
        ref = integrate.quad(dens, w, np.inf)[0] if w >= 0 else 1.0 - integrate.quad(dens, -np.inf, w)[0]
        assert got == pytest.approx(ref, abs=1e-10)


@pytest.mark.parametrize("which", [0, 1, 2])
@pytest.mark.parametrize("tree", [False, True])
def test_index_policy_law_matches_simulation(which, tree):
    rng = np.random.default_rng(100 + which + 10 * tree)
    losses = list(_ucb_pairs()) + [np.array([[0.3, 0.8], [0.6, 0.1]])]
    x, b = losses[which], (0.5 if tree else 0.5 * (1 + which))
    codes, probs = A.index_policy_law(x, b)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    got = _sim_index_policy(rng, 200_000, x, b, tree)
    cells = np.arange(8)
    p = np.zeros(8)
    p[codes] = probs
    assert _chi2_p([(got == c).sum() for c in cells], p) > P_ACCEPT


@pytest.mark.parametrize("learner", ["ldp", "tree"])
def test_index_policy_law_matches_the_learner(learner):
    """The law models jaxdp's own learners: their action codes on the audited pair, by chi-square."""
    b = 0.5
    lrn, params = (ldp_ucb(2), LDPUCBParams(np.float32(b))) if learner == "ldp" else \
        (dp_ucb_tree(2, 2), DPUCBParams(np.float32(b)))
    mech = jax.jit(jax.vmap(learner_mechanism(lrn, params, output=action_code(2)), in_axes=(0, None)))
    for i, x in enumerate(_ucb_pairs()):
        keys = jax.random.split(jax.random.key(7 + i), 100_000)
        got = np.asarray(mech(keys, np.asarray(x, np.float32)))
        codes, probs = A.index_policy_law(x, b)
        p = np.zeros(8)
        p[codes] = probs
        assert _chi2_p([(got == c).sum() for c in range(8)], p) > P_ACCEPT


def _sim_dp_se(rng, n, losses, eps, R):
    """DP-SE's first epoch, K = 2: alternate the arms from a random first one, R pulls each, release each mean plus
    Lap(1/(eps R)), eliminate an arm whose release is below the other's minus 1/2. Codes f + 2 outcome."""
    f = rng.integers(0, 2, n)
    sums = np.zeros((n, 2))
    rows = np.arange(n)
    for t in range(2 * R):
        a = np.where(t % 2 == 0, f, 1 - f)
        sums[rows, a] += 1.0 - losses[t][a]
    mu = sums / R + rng.laplace(0.0, 1.0 / (eps * R), (n, 2))
    out = np.where(mu[:, 1] < mu[:, 0] - 0.5, 0, np.where(mu[:, 0] < mu[:, 1] - 0.5, 1, 2))
    return f + 2 * out


@pytest.mark.parametrize("which", [0, 1])
def test_dp_se_law_matches_simulation(which):
    _, R, T, pairs = A._se_setting()
    x = np.asarray(list(pairs.values())[0][which], np.float64)
    codes, probs = A.dp_se_law(x, A.EPS_SE, R)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    got = _sim_dp_se(np.random.default_rng(300 + which), 200_000, x, A.EPS_SE, R)
    p = np.zeros(6)
    p[codes] = probs
    assert _chi2_p([(got == c).sum() for c in range(6)], p) > P_ACCEPT


def test_dp_se_law_matches_the_learner():
    """The law models jaxdp's DP-SE: the first arm and the two actions after epoch 1, on the audited pair."""
    params, R, T, pairs = A._se_setting()
    from jaxdp.bandits.elimination import dp_se
    mech = jax.jit(jax.vmap(learner_mechanism(dp_se(2), params), in_axes=(0, None)))
    for i, x in enumerate(list(pairs.values())[0]):
        acts = np.asarray(mech(jax.random.split(jax.random.key(11 + i), 100_000), np.asarray(x, np.float32)))
        after = acts[:, 2 * R:2 * R + 2]
        out = np.where((after == 0).all(1), 0, np.where((after == 1).all(1), 1, 2))
        got = acts[:, 0] + 2 * out
        codes, probs = A.dp_se_law(np.asarray(x, np.float64), A.EPS_SE, R)
        p = np.zeros(6)
        p[codes] = probs
        assert _chi2_p([(got == c).sum() for c in range(6)], p) > P_ACCEPT


def test_exact_losses_on_the_audited_pairs():
    # LDP-UCB (b = 1/2) and DP-UCB (node scale H/eps = 1/2): eps' - ln(1 + eps'/2) with eps' = 2
    for name, claim in (("ldp-ucb", 2.0), ("dp-ucb-tree", 4.0)):
        ex = A.exact_audit_eps(name)
        assert ex == pytest.approx(2.0 - math.log(2.0), abs=1e-12)
        assert claim / ex > 1.5                       # no valid audit of these pairs detects a 1.5x over-claim
        assert A.exact_audit_eps(name, p_min=1e-3) == pytest.approx(ex)
    se = A.exact_audit_eps("dp-se")
    assert 0.7181 < se <= 1.0                         # the default-size audit's bound is below it; the claim above
    exp3 = A.exact_audit_eps("dp-exp3")
    assert 0.9705 < exp3 <= 1.0                       # above the default-size audit's bound, below the claim
    assert exp3 == pytest.approx(0.99835, abs=1e-4)
    with pytest.raises(ValueError):
        A.exact_audit_eps("dp-exp3-quarter-scale")


def _sim_dp_exp3(rng, n, losses, eta, gamma, b, B):
    """DP-EXP3 with tau = 1, K = 2, T = 2 (float64 NumPy, from the algorithm): x1 uniform; after each round the played
    arm's loss plus Lap(b), clipped to [-B, 1 + B], over its probability, times -eta, is added to its log-weight; the
    next arm is drawn from (1 - gamma) softmax + gamma/2. Returns codes x1 + 2 x2 + 4 x3."""
    p = np.full((n, 2), 0.5)
    logw = np.zeros((n, 2))
    rows = np.arange(n)
    x = [(rng.random(n) >= p[:, 0]).astype(int)]
    for t in range(2):
        a = x[-1]
        u = np.clip(losses[t][a] + rng.laplace(0.0, b, n), -B, 1.0 + B)
        logw[rows, a] -= eta * u / p[rows, a]
        logw -= logw.max(1, keepdims=True)
        q = np.exp(logw) / np.exp(logw).sum(1, keepdims=True)
        p = (1.0 - gamma) * q + gamma / 2
        x.append((rng.random(n) >= p[:, 0]).astype(int))
    return x[0] + 2 * x[1] + 4 * x[2]


@pytest.mark.parametrize("which", [0, 1, 2])
def test_dp_exp3_law_matches_simulation(which):
    losses = [np.zeros((2, 2)), np.array([[1.0, 1.0], [0.0, 0.0]]), np.array([[0.2, 0.9], [0.7, 0.4]])][which]
    eta, gamma, b, B = (20.0, 1e-3, 1.0, 1.0) if which < 2 else (3.0, 0.1, 0.5, 0.5)
    codes, probs = A.dp_exp3_law(losses, eta, gamma, b, B)
    assert probs.sum() == pytest.approx(1.0, abs=1e-10)
    got = _sim_dp_exp3(np.random.default_rng(500 + which), 200_000, losses, eta, gamma, b, B)
    assert _chi2_p([(got == c).sum() for c in codes], probs) > P_ACCEPT


def test_dp_exp3_law_matches_the_learner():
    from jaxdp.bandits.exp3 import dp_exp3
    prm = A._exp3_setting()
    mech = jax.jit(jax.vmap(learner_mechanism(dp_exp3(2), prm, output=action_code(2)), in_axes=(0, None)))
    for i, x in enumerate((np.zeros((2, 2)), np.array([[1.0, 1.0], [0.0, 0.0]]))):
        got = np.asarray(mech(jax.random.split(jax.random.key(21 + i), 100_000), np.asarray(x, np.float32)))
        codes, probs = A.dp_exp3_law(x, float(prm.eta), float(prm.gamma), float(prm.b), float(prm.B))
        assert _chi2_p([(got == c).sum() for c in codes], probs) > P_ACCEPT
