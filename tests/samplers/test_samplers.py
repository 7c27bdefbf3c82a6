"""Statistical tests of jaxdp.samplers: MALA / ULA against exact samplers, domains, vmap, blackjax.

Two-sample comparisons use z-scores of means and variances with threshold 5.3
(false-alarm probability < 1e-6 per statistic for a correct sampler) and
two-sample KS with p > 1e-7; every comparison also shows that a wrong target
(wrong scale) is rejected by the same statistic.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jaxdp.samplers import (
    Ball, Simplex, ball, box, make_grid, mala, mala_kernel, mala_schedule, sample_grid, sample_trunc_gauss_ball,
    sample_trunc_gauss_ball_rejection, simplex, ula, ula_schedule, langevin_init,
)

N = 4000
Z = 5.3


def _zmax(a, b):
    """Max |z| over coordinates of the two-sample tests on means and on variances."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    na, nb = len(a), len(b)
    zm = (a.mean(0) - b.mean(0)) / np.sqrt(a.var(0) / na + b.var(0) / nb)
    ca, cb = (a - a.mean(0)) ** 2, (b - b.mean(0)) ** 2
    zv = (ca.mean(0) - cb.mean(0)) / np.sqrt(ca.var(0) / na + cb.var(0) / nb)
    # off-diagonal covariance of the first two coordinates
    zc = 0.0
    if a.shape[1] >= 2:
        pa = (a[:, 0] - a[:, 0].mean()) * (a[:, 1] - a[:, 1].mean())
        pb = (b[:, 0] - b[:, 0].mean()) * (b[:, 1] - b[:, 1].mean())
        zc = (pa.mean() - pb.mean()) / np.sqrt(pa.var() / na + pb.var() / nb)
    return float(max(np.abs(zm).max(), np.abs(zv).max(), abs(zc)))


def _keys(seed, n=N):
    return jax.random.split(jax.random.key(seed), n)


# ----------------------------------------------------------------------------- exact truncated Gaussian

@functools.lru_cache(maxsize=None)
def _tg(d, R, M=1024):
    return jax.jit(jax.vmap(lambda k, m, s: sample_trunc_gauss_ball(k, m, s, R, M), in_axes=(0, None, None)))


@functools.lru_cache(maxsize=None)
def _tg_rej(d, R):
    return jax.jit(jax.vmap(lambda k, m, s: sample_trunc_gauss_ball_rejection(k, m, s, R, 64), in_axes=(0, None, None)))


@pytest.mark.parametrize("d", [1, 2, 5])
def test_trunc_gauss_ball_matches_rejection(d):
    R, s = 1.0, 0.6
    m = jnp.full((d,), 0.5)
    x = np.asarray(_tg(d, R)(_keys(1), m, s))
    y, ok = _tg_rej(d, R)(_keys(2), m, s)
    # given that one of the proposals was accepted, the first accepted one is an exact draw
    ok = np.asarray(ok)
    assert ok.mean() > 0.99
    y = np.asarray(y)[ok]
    assert np.all(np.linalg.norm(x, axis=1) <= R * (1 + 1e-6))
    assert _zmax(x, y) < Z
    if d == 1:
        assert stats.ks_2samp(x[:, 0], y[:, 0]).pvalue > 1e-7
    # the test can fail: a wrong scale is rejected
    bad = np.asarray(_tg(d, R)(_keys(3), m, 0.6 * s))
    assert _zmax(bad, y) > Z


def test_trunc_gauss_ball_far_mean_and_tiny_scale():
    """Mass concentrated at the boundary (||m|| >> R) and s << R: still inside, mean direction right."""
    d = 5
    m = jnp.asarray([30.0, 0, 0, 0, 0])
    x = np.asarray(_tg(d, 1.0)(_keys(4, 512), m, 0.05))
    assert np.all(np.linalg.norm(x, axis=1) <= 1.0 + 1e-6)
    assert x[:, 0].mean() > 0.98
    assert np.all(np.isfinite(x))


# ----------------------------------------------------------------------------- MALA vs exact

def _gauss_ld(mu, s):
    return lambda x: -0.5 * jnp.sum((x - mu) ** 2) / s**2


@functools.lru_cache(maxsize=None)
def _mala_runner(kind, d):
    if kind == "gauss":
        mu, s, R = 0.5, 0.6, 1.0
        ld, dom = _gauss_ld(mu, s), ball(R)
        h, n = mala_schedule(1 / s**2, 1 / s**2, d, diameter=2 * R, tol=1e-5)
    elif kind == "gauss_wrong":
        mu, s, R = 0.5, 0.6 * 0.6, 1.0
        ld, dom = _gauss_ld(mu, s), ball(R)
        h, n = mala_schedule(1 / s**2, 1 / s**2, d, diameter=2 * R, tol=1e-5)
    else:  # log-concave non-Gaussian product target on a box: exp(-2 log cosh(x - 0.5))
        ld, dom = (lambda x: -2.0 * jnp.sum(jnp.log(jnp.cosh(2.0 * (x - 0.5))))), box(-1.0, 1.0)
        h, n = mala_schedule(8.0, 0.0, d, diameter=2.0 * np.sqrt(d), tol=1e-5)
    f = jax.jit(jax.vmap(lambda k: mala(k, ld, jnp.zeros(d), n, h, dom)))
    return f, float(h), n


@functools.lru_cache(maxsize=None)
def _exact_cosh(d):
    grid = make_grid([-1.0], [1.0], 4096)
    ld = lambda x: -2.0 * jnp.log(jnp.cosh(2.0 * (x[0] - 0.5)))  # noqa: E731
    one = jax.vmap(lambda k: sample_grid(k, ld, grid)[0])
    return jax.jit(lambda keys: jax.vmap(lambda kk: one(jax.random.split(kk, d)))(keys))


@pytest.mark.parametrize("d", [1, 2, 5])
def test_mala_truncated_gaussian_matches_exact(d):
    f, h, n = _mala_runner("gauss", d)
    x, info = f(_keys(10))
    x = np.asarray(x)
    y = np.asarray(_tg(d, 1.0)(_keys(11), jnp.full((d,), 0.5), 0.6))
    assert np.all(np.linalg.norm(x, axis=1) <= 1.0 + 1e-6)
    assert _zmax(x, y) < Z
    if d == 1:
        assert stats.ks_2samp(x[:, 0], y[:, 0]).pvalue > 1e-7
    acc = float(np.mean(info.acceptance_rate))
    assert 0.3 < acc < 0.98, acc
    # can fail: MALA for a wrong target is rejected by the same statistics
    fb, _, _ = _mala_runner("gauss_wrong", d)
    xb, _ = fb(_keys(12))
    assert _zmax(np.asarray(xb), y) > Z


@pytest.mark.parametrize("d", [1, 2, 5])
def test_mala_logconcave_non_gaussian_matches_grid(d):
    f, h, n = _mala_runner("cosh", d)
    x, info = f(_keys(20))
    x = np.asarray(x)
    y = np.asarray(_exact_cosh(d)(_keys(21)))
    assert np.all((x >= -1.0) & (x <= 1.0))
    assert _zmax(x, y) < Z
    if d == 1:
        assert stats.ks_2samp(x[:, 0], y[:, 0]).pvalue > 1e-7
        assert stats.ks_2samp(x[:, 0], np.clip(y[:, 0] + 0.15, -1, 1)).pvalue < 1e-7   # can fail
    acc = float(np.mean(info.acceptance_rate))
    assert 0.3 < acc < 0.98, acc


def test_sample_grid_2d_matches_trunc_gauss():
    grid = make_grid([-1.0, -1.0], [1.0, 1.0], 200)
    ld = _gauss_ld(0.5, 0.6)
    f = jax.jit(jax.vmap(lambda k: sample_grid(k, ld, grid, ball(1.0))))
    x = np.asarray(f(_keys(30)))
    assert np.all(np.linalg.norm(x, axis=1) <= 1.0 + 1e-6)
    y = np.asarray(_tg(2, 1.0)(_keys(31), jnp.full((2,), 0.5), 0.6))
    assert _zmax(x, y) < Z


def test_mala_simplex_dirichlet():
    alpha = jnp.asarray([2.0, 3.0, 4.0])
    ld = lambda x: jnp.sum((alpha - 1.0) * jnp.log(jnp.maximum(x, 1e-30)))  # noqa: E731
    f = jax.jit(jax.vmap(lambda k: mala(k, ld, jnp.full((3,), 1 / 3), 300, 0.01, simplex(3))))
    x, info = f(_keys(40))
    x = np.asarray(x)
    assert np.all(x >= 0) and np.allclose(x.sum(1), 1.0, atol=1e-5)
    y = np.asarray(jax.vmap(lambda k: jax.random.dirichlet(k, alpha))(_keys(41)))
    assert _zmax(x[:, :2], y[:, :2]) < Z
    assert 0.2 < float(np.mean(info.acceptance_rate)) < 0.99


# ----------------------------------------------------------------------------- domains, ULA, vmap, blackjax

@pytest.mark.parametrize("dom_name", ["ball", "box", "simplex"])
def test_never_leaves_domain(dom_name):
    d = 4
    dom = {"ball": ball(0.5), "box": box(-0.2, 0.3), "simplex": simplex(d)}[dom_name]
    ld = _gauss_ld(3.0, 1.0)  # pulls hard towards the outside
    keys = _keys(50, 256)
    xm, im = jax.vmap(lambda k: mala(k, ld, jnp.full((d,), 0.25), 50, 0.5, dom))(keys)
    xu, iu = jax.vmap(lambda k: ula(k, ld, jnp.full((d,), 0.25), 50, 0.5, dom))(keys)
    xp, _ = jax.vmap(lambda k: ula(k, ld, jnp.full((d,), 0.25), 50, 0.5, dom, boundary="project"))(keys)
    for x in (np.asarray(xm), np.asarray(xu), np.asarray(xp)):
        if dom_name == "ball":
            assert np.all(np.linalg.norm(x, axis=1) <= 0.5 * (1 + 1e-6))
        elif dom_name == "box":
            assert np.all((x >= -0.2 - 1e-7) & (x <= 0.3 + 1e-7))
        else:
            assert np.all(x >= 0) and np.allclose(x.sum(1), 1.0, atol=1e-5)
    assert float(np.mean(im.outside)) > 0.1 and float(np.mean(iu.outside)) > 0.1


def test_ula_close_but_biased_documented():
    """ULA with its schedule lands near the target (the bias is O(h)); reflection keeps it inside."""
    d = 2
    h, n = ula_schedule(1 / 0.36, 1 / 0.36, d, diameter=2.0, tol=0.1)
    f = jax.jit(jax.vmap(lambda k: ula(k, _gauss_ld(0.5, 0.6), jnp.zeros(d), n, h, ball(1.0))[0]))
    x = np.asarray(f(_keys(60)))
    y = np.asarray(_tg(2, 1.0)(_keys(61), jnp.full((2,), 0.5), 0.6))
    assert np.all(np.linalg.norm(x, axis=1) <= 1.0 + 1e-6)
    assert np.abs(x.mean(0) - y.mean(0)).max() < 0.05


def test_vmap_matches_single_calls():
    d = 3
    keys = lambda: _keys(70, 4)  # noqa: E731  (fresh copies: the key-reuse checker is on)
    ld = _gauss_ld(0.2, 0.5)
    batched = jax.jit(jax.vmap(lambda k: mala(k, ld, jnp.zeros(d), 20, 0.05, ball(1.0))[0]))(keys())
    batched_u = jax.jit(jax.vmap(lambda k: ula(k, ld, jnp.zeros(d), 20, 0.05, ball(1.0))[0]))(keys())
    batched_t = jax.jit(jax.vmap(lambda k: sample_trunc_gauss_ball(k, jnp.full((d,), 0.3), 0.5, 1.0, 256)))(keys())
    single = jax.jit(lambda k: mala(k, ld, jnp.zeros(d), 20, 0.05, ball(1.0))[0])
    single_u = jax.jit(lambda k: ula(k, ld, jnp.zeros(d), 20, 0.05, ball(1.0))[0])
    single_t = jax.jit(lambda k: sample_trunc_gauss_ball(k, jnp.full((d,), 0.3), 0.5, 1.0, 256))
    # same random draws and accept/reject decisions; XLA may fuse the float arithmetic differently
    # under vmap (observed: 1-ulp differences), so positions are compared to float32 round-off
    for i in range(4):
        np.testing.assert_allclose(np.asarray(batched[i]), np.asarray(single(keys()[i])), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(batched_u[i]), np.asarray(single_u(keys()[i])), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(batched_t[i]), np.asarray(single_t(keys()[i])), rtol=1e-5, atol=1e-6)


def test_mala_agrees_with_blackjax_step_for_step():
    blackjax = pytest.importorskip("blackjax")
    d = 4
    ld = lambda x: -0.5 * jnp.sum(x**2 * jnp.arange(1.0, d + 1.0)) + jnp.sum(jnp.sin(x))  # noqa: E731
    h = 0.1
    keys = jax.random.split(jax.random.key(80), 50)
    keys_b = jax.random.split(jax.random.key(80), 50)   # the same keys, a separate copy for blackjax
    kern = mala_kernel(ld, None)
    bk = blackjax.mala.build_kernel()
    x0 = jnp.full((d,), 0.3)
    ours = langevin_init(ld, x0)
    theirs = blackjax.mala.init(x0, ld)
    n_acc = 0
    for i in range(50):
        ours, (p, a, _) = kern(keys[i], ours, h)
        theirs, info = bk(keys_b[i], theirs, ld, h)
        np.testing.assert_allclose(np.asarray(ours.position), np.asarray(theirs.position), rtol=1e-5, atol=1e-5)
        assert bool(a) == bool(info.is_accepted)
        np.testing.assert_allclose(float(p), float(info.acceptance_rate), rtol=1e-4, atol=1e-6)
        n_acc += int(a)
    assert 0 < n_acc < 50


# ----------------------------------------------------------------------------- input validation

def test_bad_inputs_raise_clear_errors():
    ld = _gauss_ld(0.0, 1.0)
    k = jax.random.key(0)
    with pytest.raises(ValueError, match="step_size"):
        mala(k, ld, jnp.zeros(2), 10, 0.0, ball(1.0))
    with pytest.raises(ValueError, match="step_size"):
        ula(k, ld, jnp.zeros(2), 10, -1.0, ball(1.0))
    with pytest.raises(ValueError, match="n_steps"):
        mala(k, ld, jnp.zeros(2), 0, 0.1, ball(1.0))
    with pytest.raises(TypeError, match="n_steps"):
        mala(k, ld, jnp.zeros(2), 10.0, 0.1, ball(1.0))
    with pytest.raises(ValueError, match="x0"):
        mala(k, ld, jnp.zeros((2, 2)), 10, 0.1, ball(1.0))
    with pytest.raises(ValueError, match="radius"):
        ball(0.0)
    with pytest.raises(ValueError, match="lo < hi"):
        box(1.0, 0.0)
    with pytest.raises(ValueError, match="d"):
        simplex(1)
    with pytest.raises(ValueError, match="Simplex has d=3, x0 has d=4"):
        mala(k, ld, jnp.zeros(4), 10, 0.1, simplex(3))
    with pytest.raises(ValueError, match="Box has d=3, x0 has d=4"):
        mala(k, ld, jnp.zeros(4), 10, 0.1, box(jnp.zeros(3), jnp.ones(3)))
    with pytest.raises(ValueError, match="smoothness"):
        mala_schedule(0.0, 0.0, 2, diameter=1.0)
    with pytest.raises(ValueError, match="strong_convexity"):
        mala_schedule(1.0, 2.0, 2)
    with pytest.raises(ValueError, match="s must be"):
        sample_trunc_gauss_ball(k, jnp.zeros(2), 0.0, 1.0)
    with pytest.raises(ValueError, match="R must be"):
        sample_trunc_gauss_ball(k, jnp.zeros(2), 1.0, -1.0)
    with pytest.raises(TypeError, match="domain"):
        mala(k, ld, jnp.zeros(2), 10, 0.1, "ball")


def test_oco_domains_are_accepted():
    # one family (jaxdp.core.domains): the OCO learners' domains are the samplers' domains
    import jaxdp.oco as oco
    assert oco.Ball is Ball and oco.Simplex is Simplex
    ld = _gauss_ld(2.0, 1.0)
    x, _ = mala(jax.random.key(1), ld, jnp.zeros(3), 30, 0.2, oco.Ball(0.5))
    assert float(jnp.linalg.norm(x)) <= 0.5 + 1e-6
    x, _ = mala(jax.random.key(2), ld, jnp.full((3,), 1 / 3), 30, 0.05, oco.Simplex(3))
    assert abs(float(x.sum()) - 1.0) < 1e-5 and bool(jnp.all(x >= 0))
