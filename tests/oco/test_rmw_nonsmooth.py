"""RMW with absolute and logistic losses (buffered statistics, MALA; docs/algorithms/lazy.md#rmw-nonsmooth).

* distribution: MALA draws (independent chains under ``vmap``) against the exact target
  ``∝ exp(-β(Σ_i ℓ_i(x) + λ‖x‖²))`` integrated on a fine grid — KS tests in ``d = 1`` (interval) for both
  losses and on the marginals of ``d = 2`` (small ball); the same test rejects a wrong target (``β`` doubled);
* the log-density and its (sub)gradient over a partly filled buffer agree with a slow NumPy reference;
* L2P-RMW with these losses passes the conformance check, and ``simulate`` computes its loss;
* bad input is refused (``ValueError`` naming the parameter) before anything compiles.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from conformance import check_learner
from jaxdp.core import seed_keys, simulate
from jaxdp.oco import (ABLoss, ReplayOCOParams, absolute_problem, adv_replay_oco, adv_smooth_noisy,
                       logistic_problem, smooth_realizable_params)
from jaxdp.oco.l2p_rmw import l2p_rmw, l2p_rmw_from_plan, l2p_rmw_params, plan_l2p_rmw
from jaxdp.oco.rmw import (rmw_grad_logdensity, rmw_logdensity, rmw_mala_sampler, rmw_measure,
                           rmw_params)

P_MIN = 1e-7          # KS p-value threshold (as in the repo's other distribution tests)
N = 4000              # independent chains
STEPS = 100           # MALA steps per chain
BETA, LAM = 3.0, 0.5

# d = 1: a handful of fixed rows on the interval [-1, 1]
A1 = np.array([1.0, -0.7, 0.5, 1.2, -1.0, 0.8], np.float32)
B1 = {"absolute": np.array([0.3, 0.2, -0.4, 0.6, 0.1, -0.5], np.float32),
      "logistic": np.array([1, -1, 1, 1, -1, -1], np.float32)}
CAP1 = 8              # capacity > rows: the last two rows are masked


def _np_loss(loss, m, b):
    """NumPy ℓ and ℓ' in the margin m = <a, x> (the reference for the JAX code)."""
    if loss == "absolute":
        return np.abs(m - b), np.sign(m - b)
    z = -b * m
    return np.logaddexp(0.0, z), -b / (1.0 + np.exp(-z))


def _stats(loss, A, b, cap, mp):
    """Buffer stats built through the measure's own stats_update (one row per loss)."""
    d = A.shape[1]
    m = rmw_measure(d, loss, "mala", capacity=cap)
    st = m.stats_init(None)
    for a_i, b_i in zip(A, b):
        st = m.stats_update(st, ABLoss(jnp.asarray(a_i), jnp.asarray(b_i)), mp)
    return st


@functools.lru_cache(maxsize=None)
def _draws(loss, d, radius):
    """N independent MALA draws (and their acceptance statistics) from the d-dimensional test target."""
    if d == 1:
        A, b, cap = A1[:, None], B1[loss], CAP1
    else:
        A, b, cap = A2, B2[loss], CAP2
    mp = rmw_params(BETA, LAM, radius)
    st = _stats(loss, A, b, cap, mp)
    sample_info = rmw_mala_sampler(d, loss, mala_steps=STEPS, capacity=cap)
    x, info = jax.jit(jax.vmap(lambda k: sample_info(k, st, mp)))(jax.random.split(jax.random.key(11), N))
    return np.asarray(x, np.float64), jax.tree_util.tree_map(lambda v: float(np.mean(v)), info)


def _cdf(grid, logp):
    """Interpolated CDF of the density exp(logp) tabulated on ``grid`` (trapezoid rule)."""
    p = np.exp(logp - logp.max())
    c = np.concatenate([[0.0], np.cumsum(0.5 * (p[1:] + p[:-1]) * np.diff(grid))])
    c /= c[-1]
    return lambda x: np.interp(x, grid, c)


def _data_sum_1d(loss, g):
    return _np_loss(loss, A1[:, None] * g[None, :], B1[loss][:, None])[0].sum(0)


@pytest.mark.parametrize("loss", ["absolute", "logistic"])
def test_mala_matches_grid_target_d1(loss):
    x, info = _draws(loss, 1, 1.0)
    assert np.all(np.abs(x) <= 1.0 + 1e-6)
    g = np.linspace(-1.0, 1.0, 200_001)
    S = _data_sum_1d(loss, g)
    good = stats.kstest(x[:, 0], _cdf(g, -BETA * (S + LAM * g * g)))
    assert good.pvalue > P_MIN, (good.statistic, good.pvalue)
    # the same test can fail: beta doubled is rejected
    bad = stats.kstest(x[:, 0], _cdf(g, -2 * BETA * (S + LAM * g * g)))
    assert bad.pvalue < P_MIN, (bad.statistic, bad.pvalue)
    assert 0.3 < info.acceptance_rate <= 1.0, info


# d = 2: a small ball and five rows
R2, CAP2 = 0.6, 5
A2 = np.array([[1.0, 0.2], [-0.3, 0.9], [0.6, -0.6], [0.8, 0.5], [-0.9, -0.1]], np.float32)
B2 = {"absolute": np.array([0.2, -0.3, 0.1, 0.4, -0.2], np.float32),
      "logistic": np.array([1, 1, -1, 1, -1], np.float32)}


@pytest.mark.parametrize("loss", ["absolute"])
def test_mala_matches_grid_target_d2_ball(loss):
    x, info = _draws(loss, 2, R2)
    assert np.all(np.linalg.norm(x, axis=1) <= R2 * (1 + 1e-6))
    n = 801
    u = np.linspace(-R2, R2, n)
    X1, X2 = np.meshgrid(u, u, indexing="ij")
    pts = np.stack([X1.ravel(), X2.ravel()], 1)
    S = _np_loss(loss, pts @ A2.T.astype(np.float64), B2[loss][None, :])[0].sum(1)
    inside = (pts ** 2).sum(1) <= R2 ** 2
    for beta in (BETA, 2 * BETA):
        lp = np.where(inside, -beta * (S + LAM * (pts ** 2).sum(1)), -np.inf)
        w = np.exp(lp - lp[inside].max()).reshape(n, n)
        ps = []
        for axis in (0, 1):
            marg = w.sum(1 - axis)          # marginal density of x[axis] on the grid u
            ps.append(stats.kstest(x[:, axis], _cdf(u, np.log(np.maximum(marg, 1e-300)))).pvalue)
        if beta == BETA:
            assert min(ps) > P_MIN, ps
        else:
            assert min(ps) < P_MIN, ps      # the wrong target is rejected
    assert 0.3 < info.acceptance_rate <= 1.0, info


# ----------------------------------------------------------------------------- NumPy reference


@pytest.mark.parametrize("loss", ["absolute", "logistic"])
def test_logdensity_and_gradient_match_numpy_reference(loss):
    rng = np.random.default_rng(3)
    d, cap, n = 4, 12, 7                                  # 7 rows in a buffer of 12: 5 masked rows
    A = rng.normal(size=(n, d)).astype(np.float32)
    b = (rng.normal(size=n) if loss == "absolute" else rng.choice([-1.0, 1.0], n)).astype(np.float32)
    beta, lam = 1.7, 0.3
    mp = rmw_params(beta, lam, 2.0)
    st = _stats(loss, A, b, cap, mp)
    assert int(st.count) == n and np.all(np.asarray(st.a)[n:] == 0)
    m = rmw_measure(d, loss, "mala", capacity=cap)
    for _ in range(5):
        x = rng.normal(size=d).astype(np.float32)
        val, grad = 0.0, 2.0 * lam * x.astype(np.float64)
        for i in range(n):                                 # slow reference: one row at a time
            li, dli = _np_loss(loss, float(np.dot(A[i], x)), float(b[i]))
            val += li
            grad = grad + dli * A[i]
        ref_f = -beta * (val + lam * float(np.dot(x, x)))
        np.testing.assert_allclose(float(rmw_logdensity(loss, st, jnp.asarray(x), mp)), ref_f, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(rmw_grad_logdensity(loss, st, jnp.asarray(x), mp)), -beta * grad,
                                   rtol=1e-5, atol=1e-5)
        # Assumption 3.1(2): log mu_{t+1}(x)/mu_t(x) = -beta * loss_t(x)
        lr = float(m.log_ratio(ABLoss(jnp.asarray(A[0]), jnp.asarray(b[0])), jnp.asarray(x), mp))
        np.testing.assert_allclose(lr, -beta * _np_loss(loss, float(np.dot(A[0], x)), float(b[0]))[0], rtol=1e-5)
    # the logistic gradient is the derivative of the log-density (the absolute one is a subgradient)
    if loss == "logistic":
        x = jnp.asarray(rng.normal(size=d).astype(np.float32))
        np.testing.assert_allclose(np.asarray(jax.grad(lambda z: rmw_logdensity(loss, st, z, mp))(x)),
                                   np.asarray(rmw_grad_logdensity(loss, st, x, mp)), rtol=1e-4, atol=1e-5)


def test_buffer_overflow_gives_nan_sample():
    mp = rmw_params(1.0, 1.0, 1.0)
    st = _stats("absolute", A1[:, None], B1["absolute"], 4, mp)   # 6 losses, capacity 4
    assert int(st.count) == 6
    x = rmw_measure(1, "absolute", "mala", mala_steps=5, capacity=4).sample(jax.random.key(0), st, mp)
    assert np.all(np.isnan(np.asarray(x)))


# ----------------------------------------------------------------------------- L2P + engine


def _conf_params(B):
    return [l2p_rmw_params(beta=2.0, lam=4.0, radius=0.5, eta=0.1, p=0.3, B=B),
            l2p_rmw_params(beta=5.0, lam=2.0, radius=0.5, eta=0.2, p=0.1, B=B)]


def _labels_data(T, d, seed=5):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(T, d))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    y = np.where(a @ np.full(d, 0.3) + 0.2 * rng.normal(size=T) >= 0, 1.0, -1.0)
    return np.concatenate([a, y[:, None]], 1).astype(np.float32)


def _setup(loss, d, T):
    if loss == "absolute":
        return adv_smooth_noisy(d), absolute_problem(d, 0.5, n_buffer=T), smooth_realizable_params(0.5, sigma=0.1)
    return adv_replay_oco(d, "ab"), logistic_problem(d, 0.5, n_buffer=T), ReplayOCOParams(data=_labels_data(T, d))


@pytest.mark.parametrize("loss", ["absolute", "logistic"])
def test_conformance_and_simulate(loss):
    d, T, B = 2, 32, 4
    adv, prob, ap = _setup(loss, d, T)
    learner = l2p_rmw(d, B, loss=loss, sampler="mala", mala_steps=20, capacity=T)
    # the key-reuse pass (a separate compilation) once: the sampling code and keys are the same for both losses
    out = check_learner(learner, adv, prob, _conf_params(B), ap, T=T, seeds=3, loss_range=2.0,
                        key_reuse=(loss == "absolute"))
    assert np.all(out["n_batches"] >= 1)
    if loss == "absolute":
        # simulate computes the learner's loss (check_learner ran the same engine core for the logistic loss)
        out = simulate(learner, adv, prob, _conf_params(B)[0], ap, seed_keys(1, 4), T)
    max_loss = 0.5 + 0.25 + 0.5 if loss == "absolute" else np.log1p(np.exp(0.5))   # |<a,x>| <= 1/2, |b| bounded
    assert np.all(np.isfinite(out["loss"])) and np.all(out["loss"] > 0)
    np.testing.assert_allclose(out["regret"], out["loss"] - out["best_loss"], rtol=1e-5, atol=1e-4)
    assert np.all(out["best_loss"] <= out["loss"] + 1e-4)
    assert np.all(out["loss"] <= T * max_loss)


def test_plan_accepts_nonsmooth_losses_like_mala():
    kw = dict(eps=1.0, delta=1e-6, T=4096, d=8, mode="rate", L=1.0, D=1.0, sampler="mala")
    ref = plan_l2p_rmw(**kw)
    for loss in ("absolute", "logistic"):
        plan = plan_l2p_rmw(**kw, loss=loss)
        assert plan.params["loss"] == loss
        # the same parameters and the same (absent) certificate as linear losses with MALA
        for k in ("beta", "lam", "eta", "p", "B", "eta_div"):
            assert plan.params[k] == ref.params[k], k
        assert plan.eps_certified == ref.eps_certified == float("inf")
        assert plan.conditions["exact sampler"] is False
        learner, params = l2p_rmw_from_plan(plan, 8, capacity=4096, mala_steps=10)
        assert learner is l2p_rmw(8, plan.params["B"], loss=loss, sampler="mala", mala_steps=10, capacity=4096)
    with pytest.raises(ValueError, match="certified"):
        plan_l2p_rmw(**{**kw, "mode": "certified", "grid": (12, 10, 40)}, loss="absolute")


# ----------------------------------------------------------------------------- bad input


@pytest.fixture
def no_compile():
    """Fails the test if XLA compiles anything inside the block."""
    import jax.monitoring as mon

    events = []

    def listener(name, *a, **k):
        if "compile" in name:
            events.append(name)

    mon.register_event_duration_secs_listener(listener)
    yield events
    mon.unregister_event_duration_listener(listener)


BAD = [
    (lambda: rmw_measure(2, "hinge", "mala", capacity=8), "loss"),
    (lambda: l2p_rmw(2, 4, loss="huber", sampler="mala", capacity=8), "loss"),
    (lambda: plan_l2p_rmw(eps=1.0, delta=1e-6, T=64, d=2, loss="hinge", sampler="mala"), "loss"),
    (lambda: rmw_measure(2, "absolute", "exact", capacity=8), "sampler"),
    (lambda: l2p_rmw(2, 4, loss="logistic", capacity=8), "sampler"),          # default sampler is exact
    (lambda: plan_l2p_rmw(eps=1.0, delta=1e-6, T=64, d=2, loss="absolute"), "sampler"),
    (lambda: rmw_mala_sampler(2, "linear", capacity=8), "capacity"),
    (lambda: rmw_measure(2, "absolute", "mala"), "capacity"),                  # missing
    (lambda: l2p_rmw(2, 4, loss="absolute", sampler="mala", capacity=0), "capacity"),
    (lambda: l2p_rmw(2, 4, loss="logistic", sampler="mala", capacity=-3), "capacity"),
    (lambda: rmw_measure(2, "logistic", "mala", capacity=2.5), "capacity"),
    (lambda: rmw_measure(2, "logistic", "mala", capacity="8"), "capacity"),
    (lambda: rmw_measure(2, "absolute", "mala", capacity=True), "capacity"),
    (lambda: rmw_measure(2, "linear", "mala", capacity=8), "capacity"),        # meaningless for linear
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_input_raises_before_compiling(i, no_compile):
    fn, name = BAD[i]
    with pytest.raises(ValueError, match=name):
        fn()
    assert not no_compile, no_compile


def test_exact_sampler_error_names_what_is_allowed():
    with pytest.raises(ValueError, match="sampler='exact'") as e:
        rmw_measure(3, "absolute", "exact", capacity=8)
    assert "loss='absolute'" in str(e.value) and "mala" in str(e.value)


@pytest.mark.parametrize("setting,param", [("nonsmooth=hinge", "nonsmooth"), ("nonsmooth_alpha=1", "nonsmooth_alpha")])
def test_study_refuses_bad_nonsmooth_settings(setting, param, tmp_path, capsys):
    from jaxdp.cli import main

    out = tmp_path / "out"
    rc = main(["study", "run", "lazy-figure1ab", "--quick", "--set", setting, "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and f"parameter {param}=" in err, err
    assert not out.exists()
