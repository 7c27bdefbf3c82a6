"""Label DP (Label DP: theoretical limits; docs/algorithms/label-dp.md): generators, learners, non-private limits, references, batching, input checks."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import spatial, stats

from jaxdp.label_dp import (
    CLS_METHODS, NONPRIVATE_OF, REG_METHODS, LabelParams, excess_risk, fit, gen_bump_classification,
    gen_bump_regression, gen_heavy_tail_regression, gen_margin_classification, gen_smooth_classification,
    gen_smooth_regression, label_rates, make_estimator, make_params, predict, run_grid, sample, quad_grid,
)
from jaxdp.label_dp.planners import plan_for, plan_local_heavy, plan_local_cls
from jaxdp.label_dp.rates import label_rate_exponent

P_MIN = 1e-7


# --------------------------------------------------------------------------- generators


def _holder_ratio(eta_fn, beta, M=4096):
    x = (np.arange(M) + 0.5) / M
    e = np.asarray(eta_fn(jnp.asarray(x)[:, None]))
    e = e[..., 1] if e.ndim == 2 else e
    worst = 0.0
    for lag in [1, 3, 10, 30, 100, 300, 1000]:
        worst = max(worst, np.max(np.abs(e[lag:] - e[:-lag]) / (lag / M) ** beta))
    return worst


def _margin_ratio(diff, gamma):
    ts = np.logspace(-3, 0, 13)
    return max(np.mean((diff > 0) & (diff < t)) / t ** gamma for t in ts)


@pytest.mark.parametrize("h0", [0.1, 0.02, 0.005])
def test_bump_classification_smoothness_and_margin(h0):
    for beta, gamma in [(1.0, 1.0), (1.0, 0.5), (0.5, 1.0)]:
        gen = gen_bump_classification(1, beta, gamma)
        theta = gen.instance(jax.random.key(3), jnp.asarray(h0))
        ratio = _holder_ratio(lambda x: gen.eta(theta, x), beta)
        assert ratio <= gen.L * (1 + 1e-3), (beta, gamma, h0, ratio, gen.L)
        grid = quad_grid(1, 1 << 16)
        e = np.asarray(gen.eta(theta, grid))
        assert np.all(e >= 0.25 - 1e-6) and np.all(e <= 0.75 + 1e-6)
        # margin: P(0 < eta* - eta_s < t) <= C_T t^gamma with a constant independent of h0
        assert _margin_ratio(np.abs(e[:, 1] - e[:, 0]), gamma) <= 8.0


def test_fixed_generators_smoothness_and_margin():
    g = gen_smooth_classification()
    assert _holder_ratio(lambda x: g.eta({}, x), 1.0) <= g.L * (1 + 1e-3)
    e = np.asarray(g.eta({}, quad_grid(1, 1 << 16)))
    assert _margin_ratio(np.abs(e[:, 1] - e[:, 0]), 1.0) <= 2.0
    for a in [0.5, 1.0]:
        g = gen_margin_classification(a)
        assert _holder_ratio(lambda x: g.eta({}, x), a) <= g.L * (1 + 1e-3)
        e = np.asarray(g.eta({}, quad_grid(1, 1 << 16)))
        assert _margin_ratio(np.abs(e[:, 1] - e[:, 0]), 1 / a) <= 2.0
        # and the margin exponent is not larger than claimed (the check can fail)
        assert _margin_ratio(np.abs(e[:, 1] - e[:, 0]), 1.5 / a) > 5.0
    g = gen_smooth_regression()
    assert _holder_ratio(lambda x: g.eta({}, x), 1.0) <= g.L * (1 + 1e-3)


def test_label_laws_and_moments():
    g = gen_smooth_regression(T=2.0)
    X, Y = sample(g, jax.random.key(0), {}, 200_000)
    Y = np.asarray(Y)
    assert set(np.unique(Y)) <= {-2.0, 2.0}
    resid = Y - np.asarray(g.eta({}, X))
    assert abs(resid.mean()) < 5.3 * resid.std() / np.sqrt(Y.size)
    # heavy tails: mean is eta, the p-th absolute moment of the noise matches the closed form (p=2)
    g = gen_heavy_tail_regression(1, 2.0, "student_t")
    X, Y = sample(g, jax.random.key(1), {}, 200_000)
    xi = np.asarray(Y) - np.asarray(g.eta({}, X))
    assert abs(xi.mean()) < 5.3 * xi.std() / np.sqrt(xi.size)
    assert np.mean(xi ** 2) == pytest.approx(dict(g.info)["E_abs_xi_p"], rel=0.2)
    # three-point: E[Y|x] = eta, E|Y|^p = M_p exactly
    g = gen_heavy_tail_regression(1, 3.0, "three_point", M_p=1.0)
    theta = g.instance(jax.random.key(2), jnp.asarray(0.25))
    x = jnp.full((100_000, 1), 0.125)
    Y = np.asarray(g.labels(jax.random.key(3), theta, x))
    assert len(np.unique(Y)) == 3
    e = float(g.eta(theta, x[:1])[0])
    assert abs(Y.mean() - e) < 5.3 * Y.std() / np.sqrt(Y.size)
    assert np.mean(np.abs(Y) ** 3) == pytest.approx(1.0, rel=0.1)


def test_excess_risk_bayes_zero_other_positive():
    grid = quad_grid(1, 2000)
    for g, h0 in [(gen_smooth_classification(), 1.0), (gen_smooth_classification(K=4), 1.0),
                  (gen_bump_classification(), 0.05)]:
        theta = g.instance(jax.random.key(0), jnp.asarray(h0))
        e = g.eta(theta, grid)
        bayes = jnp.argmax(e, -1)
        assert float(excess_risk(g, theta, grid, bayes)) == 0.0
        assert float(excess_risk(g, theta, grid, (bayes + 1) % g.K)) > 0.0
    for g, h0 in [(gen_smooth_regression(), 1.0), (gen_bump_regression(), 0.1)]:
        theta = g.instance(jax.random.key(0), jnp.asarray(h0))
        e = g.eta(theta, grid)
        assert float(excess_risk(g, theta, grid, e)) == 0.0
        assert float(excess_risk(g, theta, grid, e + 0.01)) > 0.0


# --------------------------------------------------------------------------- learners


@pytest.fixture(scope="module")
def cls_data():
    g = gen_smooth_classification(K=3)
    X, Y = sample(g, jax.random.key(5), {}, 600)
    return np.asarray(X), np.asarray(Y)


@pytest.fixture(scope="module")
def reg_data():
    g = gen_heavy_tail_regression(1, 3.0, "student_t")
    X, Y = sample(g, jax.random.key(6), {}, 600)
    return np.asarray(X), np.asarray(Y)


def test_non_private_limit_every_learner(cls_data, reg_data):
    grid = quad_grid(1, 500)
    for m in CLS_METHODS[:3]:
        X, Y = cls_data
        a = predict(fit(m, jax.random.key(9), X, Y, None, make_params(np.inf, 7), K=3), grid)
        b = predict(fit(NONPRIVATE_OF[m], jax.random.key(9), X, Y, None, make_params(np.inf, 7), K=3), grid)
        assert np.array_equal(np.asarray(a), np.asarray(b)), m
    X, Y = reg_data
    for m in REG_METHODS:
        if m.startswith("nonprivate"):
            continue
        T = 2.5
        Yin = np.clip(Y, -T, T) if m in ("local_laplace_knn", "central_bins_laplace") else Y
        a = predict(fit(m, jax.random.key(9), X, Yin, None, make_params(np.inf, 7, 13, T)), grid)
        b = predict(fit(NONPRIVATE_OF[m], jax.random.key(9), X, Yin, None, make_params(np.inf, 7, 13, T)), grid)
        assert np.array_equal(np.asarray(a), np.asarray(b)), m
        # and a finite eps really adds noise
        c = predict(fit(m, jax.random.key(9), X, Yin, None, make_params(1.0, 7, 13, T)), grid)
        assert not np.allclose(np.asarray(a), np.asarray(c))


@pytest.mark.parametrize("d", [1, 2])
def test_knn_matches_kdtree(d):
    rng = np.random.default_rng(d)
    N, k = 300, 17
    X = rng.uniform(size=(N, d))
    Y = rng.normal(size=N)
    q = rng.uniform(size=(200, d))
    f = fit("nonprivate_knn", jax.random.key(0), X, Y, None, make_params(np.inf, 1, k))
    got = np.asarray(predict(f, q))
    _, idx = spatial.cKDTree(X).query(q, k=k)
    ref = Y[idx].mean(1)
    assert np.allclose(got, ref, atol=1e-5)
    # padding: the first n rows with a mask give the kNN of those rows only
    n = 120
    mask = np.arange(N) < n
    f = fit("nonprivate_knn", jax.random.key(0), X, Y, mask, make_params(np.inf, 1, k))
    _, idx = spatial.cKDTree(X[:n]).query(q, k=k)
    assert np.allclose(np.asarray(predict(f, q)), Y[:n][idx].mean(1), atol=1e-5)


def test_binning_matches_numpy(cls_data):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(500, 2))
    Y = rng.normal(size=500)
    bins = 6
    f = fit("nonprivate_bins_reg", jax.random.key(0), X, Y, None, make_params(np.inf, bins))
    idx = np.minimum((X * bins).astype(int), bins - 1)
    lin = idx[:, 0] + bins * idx[:, 1]
    s = np.bincount(lin, Y, minlength=bins ** 2)
    n = np.bincount(lin, minlength=bins ** 2)
    ref = np.where(n > 0, s / np.maximum(n, 1), 0.0)
    assert np.allclose(np.asarray(f.table), ref, atol=1e-5)
    # classification majority vote
    Xc, Yc = cls_data
    f = fit("nonprivate_bins_cls", jax.random.key(0), Xc, Yc, None, make_params(np.inf, 5), K=3)
    b = np.minimum((Xc[:, 0] * 5).astype(int), 4)
    cnt = np.zeros((5, 3))
    np.add.at(cnt, (b, Yc), 1)
    top = cnt.max(1, keepdims=True)
    assert all(cnt[l, c] == top[l, 0] for l, c in enumerate(np.asarray(f.table)))


def test_laplace_scales_match_sensitivity(reg_data):
    X, _ = reg_data
    T, eps, n = 1.5, 0.8, 400
    Y = np.full(n, 0.3)
    Xn = X[:n]
    fl = jax.jit(jax.vmap(lambda k: fit("local_laplace_knn", k, Xn, Y, None, make_params(eps, 1, 1, T), bins_max=1).csum))
    cs = np.asarray(fl(jax.random.split(jax.random.key(1), 40)))
    noise = np.diff(cs, axis=1).ravel() - 0.3            # k = 1 windows: each Z_i - Y_i
    assert stats.kstest(noise, stats.laplace(scale=2 * T / eps).cdf).pvalue > P_MIN
    assert stats.kstest(noise, stats.laplace(scale=1.15 * 2 * T / eps).cdf).pvalue < P_MIN
    # central: one bin, mean + Lap(2T/(n eps))
    fc = jax.jit(jax.vmap(lambda k: fit("central_bins_laplace", k, Xn, Y, None, make_params(eps, 1, 1, T), bins_max=1).table[0]))
    w = np.asarray(fc(jax.random.split(jax.random.key(2), 20000))) - 0.3
    assert stats.kstest(w, stats.laplace(scale=2 * T / (n * eps)).cdf).pvalue > P_MIN
    assert stats.kstest(w, stats.laplace(scale=1.15 * 2 * T / (n * eps)).cdf).pvalue < P_MIN


def test_exp_mech_per_bin_law_and_empty_bins():
    # one bin with counts (3, 1, 0): P(c = j) ∝ exp(eps n_j / 2); the other bins are empty -> uniform
    X = np.array([[0.1], [0.1], [0.1], [0.1]])
    Y = np.array([0, 0, 0, 1])
    eps = 1.0
    f = jax.jit(jax.vmap(lambda k: fit("central_exp_bins", k, X, Y, None, make_params(eps, 2), K=3, bins_max=2).table))
    c = np.asarray(f(jax.random.split(jax.random.key(4), 60000)))
    p = np.exp(eps * np.array([3, 1, 0]) / 2)
    p /= p.sum()
    assert stats.chisquare(np.bincount(c[:, 0], minlength=3), p * c.shape[0]).pvalue > P_MIN
    assert stats.chisquare(np.bincount(c[:, 1], minlength=3), np.full(3, c.shape[0] / 3)).pvalue > P_MIN
    q = np.exp(1.3 * eps * np.array([3, 1, 0]) / 2)
    assert stats.chisquare(np.bincount(c[:, 0], minlength=3), q / q.sum() * c.shape[0]).pvalue < P_MIN
    # regression: empty bins predict 0
    fr = fit("central_bins_laplace", jax.random.key(0), X, np.full(4, 0.5), None, make_params(eps, 2, 1, 1.0))
    assert float(fr.table[1]) == 0.0


def test_batched_over_seeds_and_N_one_compile():
    gen = gen_smooth_regression()
    traces = []
    fn0 = make_estimator(gen, "local_laplace_knn", N_max=2000, M=200, bins_max=64)

    def fn(key, N, params, h0):
        traces.append(1)
        return fn0(key, N, params, h0)

    keys = jax.random.split(jax.random.key(0), 4)
    prm = LabelParams(np.array([1.0, 2.0]), np.array([4, 8]), np.array([10, 40]), np.array([1.0, 1.0]))
    r1 = run_grid(fn, keys, np.array([500, 2000]), prm)
    r2 = run_grid(fn, keys, np.array([700, 1500]), prm._replace(k=np.array([20, 30])))
    assert len(traces) == 1
    assert r1["excess"].shape == (2, 4) and np.all(np.isfinite(r2["excess"]))
    # equals a single-point evaluation (masking == the first N samples)
    single = run_grid(fn, keys[:1], np.array([500]), LabelParams(1.0, 4, 10, 1.0))
    assert np.allclose(single["excess"][0, 0], r1["excess"][0, 0], rtol=1e-5)


@pytest.mark.parametrize("call,err,match", [
    (lambda X, Y: fit("local_rr_vector", jax.random.key(0), X, Y + 5, None, make_params(1.0, 4), K=3), ValueError, "class labels"),
    (lambda X, Y: fit("local_rr_vector", jax.random.key(0), X, Y, None, make_params(1.0, 4), K=1), ValueError, "K must be"),
    (lambda X, Y: fit("central_exp_bins", jax.random.key(0), X, Y, None, make_params(0.0, 4), K=3), ValueError, "eps must be > 0"),
    (lambda X, Y: fit("central_exp_bins", jax.random.key(0), X, Y, None, make_params(-1.0, 4), K=3), ValueError, "eps"),
    (lambda X, Y: fit("local_laplace_knn", jax.random.key(0), X, Y * 3.0, None, make_params(1.0, 1, 5, 1.0)), ValueError, r"\|Y\| <= clip"),
    (lambda X, Y: fit("central_bins_laplace", jax.random.key(0), X, Y * 3.0, None, make_params(1.0, 4, 1, 1.0)), ValueError, r"\|Y\| <= clip"),
    (lambda X, Y: fit("nonprivate_knn", jax.random.key(0), X, Y * 1.0, None, make_params(np.inf, 1, 10_000)), ValueError, "k must be <= N"),
    (lambda X, Y: fit("nonprivate_knn", jax.random.key(0), X, Y * 1.0, None, make_params(np.inf, 1, 0)), ValueError, "k must be"),
    (lambda X, Y: fit("nonprivate_bins_reg", jax.random.key(0), X, Y * 1.0, None, make_params(np.inf, 0)), ValueError, "bins"),
    (lambda X, Y: fit("nope", jax.random.key(0), X, Y, None, make_params()), ValueError, "method must be"),
    (lambda X, Y: make_estimator(gen_smooth_regression(), "local_rr_vector", N_max=10), ValueError, "does not apply"),
    (lambda X, Y: plan_local_cls(eps=0.0, N=100), ValueError, "eps"),
    (lambda X, Y: plan_local_heavy(eps=1.0, N=100, p=1.5), ValueError, "p must be"),
])
def test_bad_inputs(cls_data, call, err, match):
    X, Y = cls_data
    with pytest.raises(err, match=match):
        call(X, Y)


def test_planners_and_rates():
    p = plan_local_cls(eps=0.5, N=10_000, K=8, mode="paper")
    assert p.certified and p.params["bins"] >= 1
    assert plan_local_cls(eps=0.5, N=10_000, K=8, mode="rate").params["h"] < p.params["h"]
    ph = plan_local_heavy(eps=0.5, N=10_000, p=3.0)
    pp = plan_local_heavy(eps=0.5, N=10_000, p=3.0, k_rule="printed")
    assert ph.params["k"] != pp.params["k"]
    for m in CLS_METHODS + REG_METHODS:
        assert plan_for(m, N=1000, eps=1.0)["k"] <= 1000
    assert label_rate_exponent("heavy", "local", p=2)["priv"] == pytest.approx(0.4)
    assert label_rate_exponent("heavy", "central", p=4)["priv"] == pytest.approx(6 / 7)
    assert label_rate_exponent("classification", "central")["priv"] == pytest.approx(1.0)
    assert label_rates("regression", "central", 1000, 0.1) == pytest.approx(1000 ** (-2 / 3) + 100.0 ** -1)


def test_smoothness_pairs():
    """The L7 (β, γ) pairs as written, ``;`` or ``,`` between them; a malformed or non-positive pair is refused."""
    from jaxdp.label_dp import smoothness_pairs

    assert smoothness_pairs("1:1,1:0.5; 0.5:1") == [(1.0, 1.0), (1.0, 0.5), (0.5, 1.0)]
    for bad, why in (("1:x", "not BETA:GAMMA"), ("1:2:3", "not BETA:GAMMA"), ("0:1", "finite and > 0"),
                     ("1:inf", "finite and > 0")):
        with pytest.raises(ValueError, match=why):
            smoothness_pairs(bad)
