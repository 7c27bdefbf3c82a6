"""Mechanisms (docs/algorithms/primitives.md; docs/guide/auditing.md): noise laws by KS / chi-square, AboveThreshold against an
independent NumPy implementation and Dwork–Roth Thm 3.24, the binary-tree counter's prefix sums
and noise variance, and input validation. Thresholds are set so a correct implementation fails
with probability < 1e-6; each test also shows that a wrong variant is rejected."""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jaxdp.privacy import mechanisms as M

P_ACCEPT = 1e-7   # p-value below which a correct implementation is rejected


def _keys(seed, n):
    return jax.random.split(jax.random.key(seed), n)


N = 20_000


# ----------------------------------------------------------------------------- Laplace / Gaussian
@pytest.fixture(scope="module")
def laplace_draws():
    f = jax.jit(jax.vmap(lambda k: M.laplace_mech(k, jnp.zeros(2), 1.0, 0.5)))
    return np.asarray(f(_keys(1, N)))          # scale 2, two coordinates


@pytest.mark.parametrize("coord", [0, 1])
def test_laplace_ks_accepts_right_scale_rejects_wrong(laplace_draws, coord):
    x = laplace_draws[:, coord]
    assert stats.kstest(x, stats.laplace(scale=2.0).cdf).pvalue > P_ACCEPT
    for wrong in (2.0 * 2 / 3, 2.0 * 3 / 2):
        assert stats.kstest(x, stats.laplace(scale=wrong).cdf).pvalue < P_ACCEPT


def test_laplace_coordinates_independent(laplace_draws):
    r, p = stats.spearmanr(laplace_draws[:, 0], laplace_draws[:, 1])
    assert p > P_ACCEPT


def test_gaussian_ks_accepts_right_scale_rejects_wrong():
    sigma = M.gaussian_sigma(1.0, 1.0, 1e-5)
    f = jax.jit(jax.vmap(lambda k: M.gaussian_mech(k, jnp.float32(3.0), sigma)))
    x = np.asarray(f(_keys(2, N))) - 3.0
    assert stats.kstest(x, stats.norm(scale=sigma).cdf).pvalue > P_ACCEPT
    for wrong in (sigma * 2 / 3, sigma * 3 / 2):
        assert stats.kstest(x, stats.norm(scale=wrong).cdf).pvalue < P_ACCEPT


def test_gaussian_sigma_formulas():
    eps, delta, s = 0.5, 1e-6, 2.0
    lg = math.log(1 / delta)
    rho = (math.sqrt(eps + lg) - math.sqrt(lg)) ** 2
    assert M.gaussian_sigma(s, eps, delta) == pytest.approx(s / math.sqrt(2 * rho))
    # the zCDP calibration certifies exactly eps: rho + 2 sqrt(rho ln 1/delta) = eps
    r = s ** 2 / (2 * M.gaussian_sigma(s, eps, delta) ** 2)
    assert r + 2 * math.sqrt(r * lg) == pytest.approx(eps, rel=1e-9)
    assert M.gaussian_sigma(s, eps, delta, "dr") == pytest.approx(s * math.sqrt(2 * math.log(1.25 / delta)) / eps)
    assert M.gaussian_sigma(s, eps, delta, "paper") == pytest.approx(2 * s * math.sqrt(math.log(2 / delta)) / eps)
    with pytest.raises(ValueError, match="eps < 1"):
        M.gaussian_sigma(1.0, 2.0, 1e-5, "dr")
    assert M.laplace_scale(3.0, float("inf")) == 0.0


# ----------------------------------------------------------------------------- exponential mechanism
UTIL = jnp.array([0.0, 1.0, 2.0, 0.5, 3.0])


def _chisq_p(counts, probs):
    counts = np.asarray(counts, float)
    keep = probs > 0
    return stats.chisquare(counts[keep], counts.sum() * probs[keep] / probs[keep].sum()).pvalue


def test_exp_mech_law_and_mask():
    eps = 1.0
    p = np.exp(eps * np.asarray(UTIL, float) / 2)
    p /= p.sum()
    ks = _keys(3, N)
    for draw in (jax.vmap(lambda k: M.exp_mech(k, UTIL, 1.0, eps)),
                 jax.vmap(lambda k: M.exp_mech_inverse_cdf(k, M.exp_mech_logits(UTIL, 1.0, eps)))):
        idx = np.asarray(jax.jit(draw)(ks))
        counts = np.bincount(idx, minlength=5)
        assert _chisq_p(counts, p) > P_ACCEPT
        q = np.exp(np.asarray(UTIL, float))        # eps twice too large is rejected
        assert _chisq_p(counts, q / q.sum()) < P_ACCEPT
        ks = _keys(4, N)
    mask = jnp.array([True, True, False, True, False])
    idx = np.asarray(jax.jit(jax.vmap(lambda k: M.exp_mech(k, UTIL, 1.0, eps, mask)))(_keys(5, 2000)))
    assert not np.isin(idx, [2, 4]).any()
    idx = np.asarray(jax.jit(jax.vmap(lambda k: M.exp_mech_inverse_cdf(k, UTIL, mask)))(_keys(6, 2000)))
    assert not np.isin(idx, [2, 4]).any()


def test_exp_mech_topk_is_sequential_sampling_without_replacement():
    logits = np.asarray(UTIL, float) / 2
    p = np.exp(logits) / np.exp(logits).sum()
    idx = np.asarray(jax.jit(jax.vmap(lambda k: M.exp_mech_topk(k, UTIL / 2, 2)))(_keys(7, N)))
    assert (idx[:, 0] != idx[:, 1]).all()
    # P(i, j) = p_i p_j / (1 - p_i)
    pair = np.array([[p[i] * p[j] / (1 - p[i]) if i != j else 0.0 for j in range(5)] for i in range(5)]).ravel()
    counts = np.bincount(idx[:, 0] * 5 + idx[:, 1], minlength=25)
    assert _chisq_p(counts, pair) > P_ACCEPT
    wrong = np.outer(p, p).ravel()          # with replacement, renormalized off the diagonal
    wrong[:: 6] = 0
    assert _chisq_p(counts, wrong) < P_ACCEPT
    mask = jnp.array([True, False, True, True, False])
    idx = np.asarray(jax.jit(jax.vmap(lambda k: M.exp_mech_topk(k, UTIL, 3, mask)))(_keys(8, 500)))
    assert np.isin(idx, [0, 2, 3]).all()


# ----------------------------------------------------------------------------- AboveThreshold
SVT_Q = np.array([-2.0, 0.0, 1.0, -1.0, 3.0, 2.0, 0.5, 4.0])
SVT_TAU, SVT_EPS = 1.0, 1.0


def _svt_scan(key, queries, threshold, eps):
    """AboveThreshold via the state machine inside a scan; returns the ⊤ index (k if none)."""
    k0, kq = jax.random.split(key)
    st = M.svt_init(k0, threshold, eps)

    def body(st, xs):
        t, q = xs
        st, top = M.svt_query(jax.random.fold_in(kq, t), st, q, eps)
        return st, top

    st, tops = jax.lax.scan(body, st, (jnp.arange(queries.shape[0]), queries))
    assert tops.dtype == jnp.bool_
    return jnp.where(jnp.any(tops), jnp.argmax(tops), queries.shape[0]), jnp.sum(tops), st.halted


def _svt_numpy(rng, n, queries, threshold, b_thr, b_q):
    """Independent float64 NumPy AboveThreshold: loop over queries, stop at the first ⊤."""
    out = np.full(n, len(queries))
    tau_hat = threshold + rng.laplace(0.0, b_thr, n) if b_thr > 0 else np.full(n, threshold)
    alive = np.ones(n, bool)
    for i, q in enumerate(queries):
        top = alive & (q + rng.laplace(0.0, b_q, n) >= tau_hat)
        out[top] = i
        alive &= ~top
    return out


@pytest.fixture(scope="module")
def svt_halts():
    f = jax.jit(jax.vmap(lambda k: _svt_scan(k, jnp.asarray(SVT_Q, jnp.float32), SVT_TAU, SVT_EPS)))
    idx, ntop, halted = f(_keys(9, N))
    return np.asarray(idx), np.asarray(ntop), np.asarray(halted)


def _two_sample_p(a, b, k):
    ca, cb = np.bincount(a, minlength=k + 1), np.bincount(b, minlength=k + 1)
    keep = (ca + cb) > 0
    return stats.chi2_contingency(np.stack([ca[keep], cb[keep]])).pvalue


def test_svt_halting_time_matches_numpy(svt_halts):
    idx, ntop, halted = svt_halts
    k = len(SVT_Q)
    assert ntop.max() <= 1 and np.array_equal(halted, idx < k)
    rng = np.random.default_rng(0)
    ref = _svt_numpy(rng, N, SVT_Q, SVT_TAU, 2 / SVT_EPS, 4 / SVT_EPS)
    assert _two_sample_p(idx, ref, k) > P_ACCEPT
    # the one-shot vector form is the same law
    alt = np.asarray(jax.jit(jax.vmap(lambda kk: M.above_threshold(kk, jnp.asarray(SVT_Q), SVT_TAU, SVT_EPS)))(_keys(10, N)))
    assert _two_sample_p(alt, ref, k) > P_ACCEPT
    # can fail: the NumPy reference with other noise scales is rejected
    for b_thr, b_q in ((0.0, 4.0), (2.0, 2.0), (2.0, 8.0)):
        bad = _svt_numpy(rng, N, SVT_Q, SVT_TAU, b_thr, b_q)
        assert _two_sample_p(idx, bad, k) < P_ACCEPT


def _svt_accuracy_failures(idx, queries, tau, alpha):
    k = len(queries)
    fail = np.zeros(len(idx), bool)
    for i in range(k):
        below_bad = queries[i] > tau + alpha           # answered ⊥ although far above
        top_bad = queries[i] < tau - alpha             # answered ⊤ although far below
        fail |= ((idx > i) & below_bad) | ((idx == i) & top_bad)
    return fail


def test_svt_accuracy_thm_3_24():
    eps, beta, k, tau = 1.0, 0.2, 16, 0.0
    alpha = M.svt_accuracy_alpha(k, beta, eps)
    # adversarial stream: k - 1 queries just below tau - alpha, then one just above tau + alpha
    q = np.full(k, tau - alpha - 1e-3)
    q[-1] = tau + alpha + 1e-3
    for scale_factor, should_hold in ((1.0, True), (4.0, False)):
        e = eps / scale_factor                          # a 4x noisier SVT misses the bound
        f = jax.jit(jax.vmap(lambda kk: M.above_threshold(kk, jnp.asarray(q, jnp.float32), tau, e)))
        idx = np.asarray(f(_keys(11, 4000)))
        nfail = _svt_accuracy_failures(idx, q, tau, alpha).sum()
        # one-sided Clopper–Pearson: is the failure rate significantly above beta?
        lo = stats.beta.ppf(1e-7, nfail, 4000 - nfail + 1) if nfail > 0 else 0.0
        assert (lo <= beta) == should_hold, (scale_factor, nfail)


def test_svt_restart_and_halted_answers_bottom():
    k = jax.random.split(jax.random.key(12), 4)
    st = M.svt_init(k[0], 0.0, 1.0)
    st, top = M.svt_query(k[1], st, 1e6, 1.0)
    assert bool(top) and bool(st.halted)
    st2, top2 = M.svt_query(k[2], st, 1e6, 1.0)
    assert not bool(top2) and bool(st2.halted)
    st3 = M.svt_restart(k[3], st2, 0.0, 1.0)
    assert not bool(st3.halted) and st3.tau_hat.dtype == st.tau_hat.dtype
    assert M.svt_noise_scales(0.5, 2.0) == (8.0, 16.0)


def test_svt_scan_vmap_bit_identical():
    q = jnp.asarray(SVT_Q, jnp.float32)
    keys = _keys(13, 8)
    batched = jax.jit(jax.vmap(lambda kk: _svt_scan(kk, q, SVT_TAU, SVT_EPS)[0]))(keys)
    one = jax.jit(lambda kk: _svt_scan(kk, q, SVT_TAU, SVT_EPS)[0])
    single = [int(one(kk)) for kk in keys]
    assert list(np.asarray(batched)) == single


# ----------------------------------------------------------------------------- binary tree
def test_tree_depth():
    assert [M.tree_depth(T) for T in (1, 2, 3, 4, 7, 8, 1000, 1024)] == [1, 2, 2, 3, 3, 4, 10, 11]


@pytest.mark.parametrize("shape", [(), (3,)])
def test_tree_noiseless_exact_prefix_sums(shape):
    T = 100
    a = np.random.default_rng(1).uniform(size=(T,) + shape)
    c = np.asarray(M.tree_prefix_sums(jax.random.key(14), a, 0.0))
    np.testing.assert_allclose(c, np.cumsum(a, axis=0), rtol=1e-5, atol=1e-4)
    # step by step with a deeper tree than needed, Gaussian noise kind
    H = M.tree_depth(T) + 2
    st = M.tree_init(H, shape)
    step = jax.jit(lambda k, s, x: M.tree_step(k, s, x, 0.0, "gaussian"))
    for t in range(T):
        st, ct = step(jax.random.fold_in(jax.random.key(15), t), st, a[t])
        np.testing.assert_allclose(np.asarray(ct), a[: t + 1].sum(0), rtol=1e-5, atol=1e-4)
    assert int(st.t) == T and st.alpha.shape == (H,) + shape


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_tree_noise_variance_is_popcount_times_node_variance(noise):
    T, n, scale = 15, 40_000, 1.5
    f = jax.jit(jax.vmap(lambda k: M.tree_prefix_sums(k, jnp.zeros((T,)), scale, noise)))
    c = np.asarray(f(_keys(16, n)), np.float64)
    node_var = 2 * scale ** 2 if noise == "laplace" else scale ** 2
    pc = np.array([bin(t).count("1") for t in range(1, T + 1)])
    expect = pc * node_var
    np.testing.assert_allclose(np.asarray(M.tree_noise_variance(np.arange(1, T + 1), scale, noise)), expect, rtol=1e-6)
    v = c.var(axis=0)
    # SE of a sample variance: sigma^2 sqrt((kurt - 1)/n), kurt <= 6 (Laplace); z = 6 with 15 tests
    tol = 6 * np.sqrt(5 / n)
    assert np.all(np.abs(v / expect - 1) < tol), v / expect
    # can fail: a counter adding one more (or one fewer) node per prefix is far outside the band
    assert np.all(np.abs(v / ((pc + 1) * node_var) - 1) > tol)
    # prefixes at t and 2t (t odd < 8) share exactly the nodes of t below the top bit: covariance check
    cov = np.mean(c[:, 2] * c[:, 3])     # t=3 (nodes {0,1}) and t=4 (node {2}): independent
    assert abs(cov) < 6 * np.sqrt(expect[2] * expect[3] / n) * 2


def test_tree_aggregation_sigma():
    L, H, eps, delta = 2.0, 10, 1.0, 1e-6
    s = M.tree_aggregation_sigma(L, H, eps, delta)
    rho = 2 * L ** 2 * H / s ** 2
    assert rho + 2 * math.sqrt(rho * math.log(1 / delta)) == pytest.approx(eps, rel=1e-9)
    assert M.tree_laplace_scale(H, 0.5) == pytest.approx(20.0)


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize("call, match", [
    (lambda: M.laplace_mech(jax.random.key(0), 0.0, 1.0, 0.0), "eps"),
    (lambda: M.laplace_mech(jax.random.key(0), 0.0, 1.0, -1.0), "eps"),
    (lambda: M.laplace_mech(jax.random.key(0), 0.0, 0.0, 1.0), "sensitivity"),
    (lambda: M.laplace_mech(jax.random.key(0), np.array([0.0, np.nan]), 1.0, 1.0), "value"),
    (lambda: M.laplace_scale(-1.0, 1.0), "sensitivity"),
    (lambda: M.gaussian_sigma(1.0, 1.0, 1.0), "delta"),
    (lambda: M.gaussian_sigma(1.0, 1.0, -0.1), "delta"),
    (lambda: M.gaussian_sigma(1.0, 1.0, 0.0), "delta"),
    (lambda: M.gaussian_sigma(1.0, float("nan"), 1e-5), "eps"),
    (lambda: M.gaussian_sigma(1.0, 1.0, 1e-5, method="foo"), "method"),
    (lambda: M.gaussian_mech(jax.random.key(0), 0.0, -1.0), "sigma"),
    (lambda: M.gaussian_mech(jax.random.key(0), np.inf, 1.0), "value"),
    (lambda: M.exp_mech(jax.random.key(0), UTIL, 1.0, 0.0), "eps"),
    (lambda: M.exp_mech(jax.random.key(0), UTIL, 1.0, 1.0, mask=jnp.ones(3, bool)), "mask"),
    (lambda: M.exp_mech_topk(jax.random.key(0), UTIL, 6), "k"),
    (lambda: M.exp_mech_topk(jax.random.key(0), UTIL, 0), "k"),
    (lambda: M.svt_init(jax.random.key(0), 0.0, 0.0), "eps"),
    (lambda: M.svt_init(jax.random.key(0), np.nan, 1.0), "threshold"),
    (lambda: M.svt_init(jax.random.key(0), 0.0, 1.0, sensitivity=-2.0), "sensitivity"),
    (lambda: M.svt_query(jax.random.key(0), M.SVTState(jnp.float32(0), jnp.bool_(False)), np.inf, 1.0), "q"),
    (lambda: M.above_threshold(jax.random.key(0), np.zeros((2, 2)), 0.0, 1.0), "queries"),
    (lambda: M.svt_accuracy_alpha(10, 1.5, 1.0), "beta"),
    (lambda: M.tree_depth(0), "T_max"),
    (lambda: M.tree_init(0), "H"),
    (lambda: M.tree_step(jax.random.key(0), M.tree_init(3, (2,)), jnp.zeros(3), 1.0), "shape"),
    (lambda: M.tree_step(jax.random.key(0), M.tree_init(3), 0.0, -1.0), "scale"),
    (lambda: M.tree_step(jax.random.key(0), M.tree_init(3), 0.0, 1.0, noise="cauchy"), "noise"),
    (lambda: M.tree_step(jax.random.key(0), M.tree_init(3), np.nan, 1.0), "a"),
    (lambda: M.tree_prefix_sums(jax.random.key(0), np.zeros(8), 1.0, H=3), "H=3"),
    (lambda: M.tree_aggregation_sigma(1.0, 4, 1.0, 0.0), "delta"),
    (lambda: M.tree_aggregation_sigma(0.0, 4, 1.0, 1e-5), "L"),
])
def test_bad_inputs_raise_before_compiling(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
