"""Randomized response (binary, K-ary, vector eq. (11)): exact ratios, empirical laws, input checks."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jaxdp.privacy.mechanisms.randomized_response import (
    rr_binary, rr_binary_log_prob, rr_binary_matrix, rr_kary, rr_kary_log_prob, rr_kary_matrix, rr_max_log_ratio,
    rr_vector, rr_vector_coord_matrix, rr_vector_log_prob, rr_vector_pmf,
)

P_MIN = 1e-7


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("K", [2, 3, 5])
def test_exact_ratios_tight(eps, K):
    assert rr_max_log_ratio(rr_kary_matrix(K, eps)) == pytest.approx(eps, rel=1e-12)
    assert rr_max_log_ratio(rr_binary_matrix(eps)) == pytest.approx(eps, rel=1e-12)
    Q = rr_vector_coord_matrix(K, eps)
    # each coordinate: ratio exactly e^{eps/2} between a label hitting it and one missing it
    assert math.log(Q[0, 0] / Q[1, 0]) == pytest.approx(eps / 2, rel=1e-12)
    assert math.log((1 - Q[1, 0]) / (1 - Q[0, 0])) == pytest.approx(eps / 2, rel=1e-12)
    # whole vector: exactly e^eps (two coordinates differ), attained
    assert rr_max_log_ratio(rr_vector_pmf(K, eps)) == pytest.approx(eps, rel=1e-12)
    assert np.allclose(rr_vector_pmf(K, eps).sum(1), 1.0)
    assert np.allclose(rr_kary_matrix(K, eps).sum(1), 1.0)


def test_log_prob_functions_match_matrices():
    K, eps = 4, 0.7
    P = rr_kary_matrix(K, eps)
    y, z = np.meshgrid(np.arange(K), np.arange(K), indexing="ij")
    assert np.allclose(np.exp(np.asarray(rr_kary_log_prob(z, y, K, eps))), P, rtol=1e-5)
    assert np.allclose(np.exp(np.asarray(rr_binary_log_prob(z[:2, :2], y[:2, :2], eps))), rr_binary_matrix(eps), rtol=1e-5)
    pmf = rr_vector_pmf(K, eps)
    codes = np.arange(2 ** K)
    Z = ((codes[:, None] >> np.arange(K)[None, :]) & 1)
    for yy in range(K):
        lp = np.asarray(rr_vector_log_prob(jnp.asarray(Z), jnp.full(2 ** K, yy), eps))
        assert np.allclose(np.exp(lp), pmf[yy], rtol=1e-5)


def _chi2_p(counts, probs):
    counts = np.asarray(counts, float)
    exp = probs * counts.sum()
    return stats.chisquare(counts, exp).pvalue


@pytest.fixture(scope="module")
def draws():
    n = 200_000
    K, eps = 3, 1.0
    y = jnp.full((n,), 1, jnp.int32)
    kb, kk, kv = jax.random.split(jax.random.key(11), 3)
    return dict(n=n, K=K, eps=eps, bin=np.asarray(rr_binary(kb, jnp.zeros(n, jnp.int32), eps)),
                kary=np.asarray(rr_kary(kk, y, K, eps)), vec=np.asarray(rr_vector(kv, y, K, eps)))


def test_empirical_laws(draws):
    K, eps = draws["K"], draws["eps"]
    assert _chi2_p(np.bincount(draws["bin"], minlength=2), rr_binary_matrix(eps)[0]) > P_MIN
    assert _chi2_p(np.bincount(draws["kary"], minlength=K), rr_kary_matrix(K, eps)[1]) > P_MIN
    codes = (draws["vec"].astype(int) << np.arange(K)).sum(1)
    assert _chi2_p(np.bincount(codes, minlength=2 ** K), rr_vector_pmf(K, eps)[1]) > P_MIN
    # the test can fail: a wrong epsilon is rejected
    assert _chi2_p(np.bincount(draws["kary"], minlength=K), rr_kary_matrix(K, 1.2 * eps)[1]) < P_MIN
    assert _chi2_p(np.bincount(codes, minlength=2 ** K), rr_vector_pmf(K, 1.3 * eps)[1]) < P_MIN


def test_empirical_likelihood_ratio_within_eps(draws):
    """Histogram test on neighbouring labels: every output's empirical ratio within e^eps (up to MC error)."""
    K, eps, n = draws["K"], draws["eps"], draws["n"]
    y0 = jnp.zeros((n,), jnp.int32)
    z0 = np.asarray(rr_kary(jax.random.key(12), y0, K, eps))
    c1 = np.bincount(draws["kary"], minlength=K) / n
    c0 = np.bincount(z0, minlength=K) / n
    ratio = np.max(np.abs(np.log(c1 / c0)))
    assert ratio <= eps + 0.05
    assert ratio >= eps - 0.05  # tight


def test_non_private_limit_and_shapes():
    y = jnp.array([[0, 2], [1, 1]])
    k = jax.random.key(0)
    assert np.array_equal(np.asarray(rr_kary(k, y, 3, jnp.inf)), np.asarray(y))
    v = np.asarray(rr_vector(jax.random.key(1), y, 3, float("inf")))
    assert v.shape == (2, 2, 3) and v.dtype == np.bool_
    assert np.array_equal(v, np.eye(3, dtype=bool)[np.asarray(y)])
    assert np.array_equal(np.asarray(rr_binary(jax.random.key(2), y % 2, np.inf)), np.asarray(y % 2))
    # vmappable over eps
    out = jax.vmap(lambda kk, e: rr_vector(kk, y, 3, e))(jax.random.split(jax.random.key(3), 4), jnp.linspace(0.5, 2, 4))
    assert out.shape == (4, 2, 2, 3)


@pytest.mark.parametrize("call,match", [
    (lambda k: rr_kary(k, jnp.array([0, 3]), 3, 1.0), "labels in"),
    (lambda k: rr_kary(k, jnp.array([0, -1]), 3, 1.0), "labels in"),
    (lambda k: rr_kary(k, jnp.array([0, 1]), 1, 1.0), "K must be"),
    (lambda k: rr_vector(k, jnp.array([0, 1]), 3, 0.0), "eps must be > 0"),
    (lambda k: rr_vector(k, jnp.array([0, 1]), 3, -1.0), "eps must be > 0"),
    (lambda k: rr_binary(k, jnp.array([0, 2]), 1.0), "labels in"),
    (lambda k: rr_vector(k, jnp.array([0.5]), 3, 1.0), "integer"),
])
def test_bad_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call(jax.random.key(0))
    with pytest.raises(TypeError):
        rr_kary(jax.random.key(0), jnp.array([0]), 2.0, 1.0)
