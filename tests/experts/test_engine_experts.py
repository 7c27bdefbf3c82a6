"""Non-private experts learners: conformance, NumPy reference, marginals, switching."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from conformance import check_learner
from jaxdp.core import seed_keys, simulate
from jaxdp.experts import (
    AlternatingParams, BernoulliParams, HalvingParams, HedgeParams, LazyEpochsParams, RealizableBernoulliParams,
    RealizableLBParams, ReplayParams, adv_alternating_batches, adv_lazy_epochs, adv_realizable_bernoulli,
    adv_realizable_halving, adv_realizable_lb, adv_replay, bernoulli_experts, experts_problem, ftpl, hedge,
    shrinking_dartboard,
)

D = 6
P_LO = 1e-7  # p-value threshold: a correct implementation fails with probability < 1e-6 overall


def _params(*etas):
    return [HedgeParams(eta=jnp.float32(e)) for e in etas]


ADVERSARIES = {
    "bernoulli": (bernoulli_experts(D), BernoulliParams(gap=jnp.float32(0.1))),
    "lazy_epochs": (adv_lazy_epochs(D), LazyEpochsParams(T=jnp.int32(64), eps=jnp.float32(0.05), epoch_len=jnp.int32(0))),
    "alternating": (adv_alternating_batches(D), AlternatingParams(B=jnp.int32(4))),
    "realizable": (adv_realizable_bernoulli(D), RealizableBernoulliParams(q=jnp.float32(0.5), q_star=jnp.float32(0.0))),
    "halving": (adv_realizable_halving(D), HalvingParams(r=jnp.int32(8))),
    "realizable_lb": (adv_realizable_lb(D), RealizableLBParams(T=jnp.int32(64), eps=jnp.float32(0.5))),
}


@pytest.mark.parametrize("learner", [hedge(D), shrinking_dartboard(D), shrinking_dartboard(D, "geulen"),
                                     ftpl(D, "exponential"), ftpl(D, "gumbel")],
                         ids=["hedge", "dartboard", "dartboard-geulen", "ftpl-exp", "ftpl-gumbel"])
def test_conformance_learners(learner):
    adv, ap = ADVERSARIES["bernoulli"]
    check_learner(learner, adv, experts_problem(), _params(0.1, 0.3), ap)


@pytest.mark.parametrize("name", sorted(ADVERSARIES))
def test_conformance_adversaries(name):
    adv, ap = ADVERSARIES[name]
    out = check_learner(hedge(D), adv, experts_problem(), _params(0.2, 0.5), ap,
                        deterministic=name in ("alternating",))
    if name in ("realizable", "halving", "realizable_lb"):
        assert np.all(out["best_loss"] == 0.0), "realizable sequences have a zero-loss expert"


def _run_steps(learner, losses, params, keys):
    """Play a fixed loss sequence; return (x_t for t=1..T, per-round expected losses) per key."""

    def one(key):
        k_init, k_run = jax.random.split(key)
        st = learner.init(k_init, params)

        def body(st, inp):
            t, loss = inp
            st2, info = learner.step(jax.random.fold_in(k_run, t), st, loss, params)
            return st2, (st.x, info.get("expected_loss", jnp.float32(0)))

        _, (xs, el) = jax.lax.scan(body, st, (jnp.arange(losses.shape[0]), losses))
        return xs, el

    return jax.jit(jax.vmap(one))(keys)


def _np_hedge_dists(losses, eta):
    cum = np.zeros(losses.shape[1])
    ps = []
    for ell in losses:
        w = -eta * cum
        p = np.exp(w - w.max())
        ps.append(p / p.sum())
        cum += ell
    return np.array(ps)


@pytest.fixture(scope="module")
def fixed_losses():
    rng = np.random.default_rng(5)
    L = (rng.random((40, D)) < np.linspace(0.2, 0.7, D)).astype(np.float32)
    L[:, 2] = rng.random(40).astype(np.float32)  # one expert with fractional losses
    return L


def test_hedge_matches_numpy_reference_step_by_step(fixed_losses):
    """Distributions, expected losses and the inverse-CDF draws agree with a float64 NumPy reference."""
    eta = 0.35
    params = HedgeParams(eta=jnp.float32(eta))
    learner = hedge(D)
    ps = _np_hedge_dists(fixed_losses, eta)
    key = jax.random.key(3)
    k_init, k_run = jax.random.split(key)
    st = learner.init(k_init, params)
    for t, ell in enumerate(fixed_losses):
        np.testing.assert_allclose(np.asarray(st.p), ps[t], rtol=2e-5, atol=1e-7)
        kt = jax.random.fold_in(k_run, t)
        u = float(jax.random.uniform(jax.random.clone(kt), (1,))[0])
        st2, info = learner.step(kt, st, jnp.asarray(ell), params)
        np.testing.assert_allclose(float(info["expected_loss"]), ps[t] @ ell, rtol=1e-5)
        # the draw for round t+1: one uniform u, first index with cumsum(p) > u * sum(p)
        nxt = _np_hedge_dists(np.vstack([fixed_losses[: t + 1], np.zeros((1, D))]), eta)[-1]
        c = np.cumsum(nxt)
        x_ref = int(np.sum(c <= u * c[-1]))
        if np.min(np.abs(c - u * c[-1])) > 1e-5:  # skip draws within round-off of a cell boundary
            assert int(st2.x) == x_ref, (t, int(st2.x), x_ref)
        st = st2


def test_hedge_expected_loss_matches_monte_carlo(fixed_losses):
    """E[sum_t l_t(x_t)] computed exactly from Hedge's distributions equals the Monte Carlo mean."""
    eta = 0.35
    T = fixed_losses.shape[0]
    ps = _np_hedge_dists(fixed_losses, eta)
    exact = float(np.sum(ps * fixed_losses))
    S = 8192
    out = simulate(hedge(D), adv_replay(D), experts_problem(), HedgeParams(eta=jnp.float32(eta)),
                   ReplayParams(losses=jnp.asarray(fixed_losses)), seed_keys(11, S), T)
    np.testing.assert_allclose(out["expected_loss"], exact, rtol=1e-4)
    mc = out["loss"]
    half_width = 5.3 * mc.std(ddof=1) / math.sqrt(S)
    assert abs(mc.mean() - exact) < half_width, (mc.mean(), exact, half_width)
    np.testing.assert_allclose(out["best_loss"], fixed_losses.sum(0).min(), rtol=1e-6)


def _chi2_pvalue(xs, p):
    counts = np.bincount(xs, minlength=len(p))
    keep = p > 0
    assert counts[~keep].sum() == 0
    exp = p[keep] * len(xs)
    return stats.chisquare(counts[keep], exp).pvalue


@pytest.fixture(scope="module")
def marginal_runs(fixed_losses):
    eta = 0.4
    S = 20000
    keys = seed_keys(21, S)
    params = HedgeParams(eta=jnp.float32(eta))
    xs_dart, _ = _run_steps(shrinking_dartboard(D), jnp.asarray(fixed_losses), params, keys)
    return eta, np.asarray(xs_dart)


def test_dartboard_marginal_equals_hedge(fixed_losses, marginal_runs):
    eta, xs = marginal_runs
    ps = _np_hedge_dists(fixed_losses, eta)
    for t in (0, 5, 20, 39):
        pv = _chi2_pvalue(xs[:, t], ps[t])
        assert pv > P_LO, (t, pv)


def test_chi2_detects_wrong_marginal(fixed_losses, marginal_runs):
    """The same test rejects the marginal of a learner that never switches (a broken dartboard)."""
    eta, xs = marginal_runs
    ps = _np_hedge_dists(fixed_losses, eta)
    frozen = xs[:, 0]  # what a dartboard that always keeps would play at round 40
    assert _chi2_pvalue(frozen, ps[39]) < 1e-12


def test_ftpl_gumbel_is_hedge(fixed_losses):
    eta = 0.4
    S = 20000
    xs, _ = _run_steps(ftpl(D, "gumbel"), jnp.asarray(fixed_losses), HedgeParams(eta=jnp.float32(eta)), seed_keys(8, S))
    ps = _np_hedge_dists(fixed_losses, eta)
    for t in (3, 39):
        assert _chi2_pvalue(np.asarray(xs)[:, t], ps[t]) > P_LO


def test_dartboard_switches_are_sqrt_T():
    """Resamples <= ln d + η L* in expectation (docs/algorithms/primitives.md#dartboard); switches grow like sqrt(T ln d)."""
    d = 16
    res = {}
    for T in (256, 4096):
        eta = math.sqrt(8 * math.log(d) / T)
        out = simulate(shrinking_dartboard(d), bernoulli_experts(d), experts_problem(),
                       HedgeParams(eta=jnp.float32(eta)), BernoulliParams(gap=jnp.float32(0.0)), seed_keys(4, 256), T)
        bound = math.log(d) + eta * out["best_loss"]
        # per-seed resamples are a sum of independent Bernoullis with mean <= bound: mean over 256 seeds
        assert out["resampled"].mean() <= bound.mean() + 5.3 * math.sqrt(bound.mean() / 256)
        res[T] = out["switches"].mean()
        hedge_out = simulate(hedge(d), bernoulli_experts(d), experts_problem(), HedgeParams(eta=jnp.float32(eta)),
                             BernoulliParams(gap=jnp.float32(0.0)), seed_keys(4, 256), T)
        assert out["switches"].mean() < 0.25 * hedge_out["switches"].mean()
    slope = math.log(res[4096] / res[256]) / math.log(16)
    assert 0.35 < slope < 0.65, slope
