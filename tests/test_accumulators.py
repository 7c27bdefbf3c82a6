"""Compensated long-horizon accumulators (``jaxdp.core.accumulate``) against float64 NumPy references:
the comparators' cumulative losses (experts, OCO) and Hedge's own cumulative losses stay within a few
float32 ulps where plain float32 running sums are off by many."""
import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.core import comp_add, comp_total, comp_zeros, seed_keys, simulate
from jaxdp.experts import HedgeParams, ReplayParams, adv_replay, experts_problem, hedge
from jaxdp.oco import linear_problem


def _ulps(got, ref):
    """|got - ref| in units of the float32 spacing at ref."""
    ref = np.asarray(ref, np.float64)
    return np.abs(np.asarray(got, np.float64) - ref) / np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)


def _plain_f32(x, start):
    s = np.asarray(start, np.float32).copy()
    return np.cumsum(np.concatenate([s[None], x.astype(np.float32)]), axis=0, dtype=np.float32)[-1]


def test_compensated_sum_deep_into_a_long_run():
    """Start at 2^23 (where a 10^7-round run of [0, 1] losses is) and add 2^15 uniform terms (float32 spacing 1): a plain float32 sum
    rounds every addition to a whole number and drifts by tens of ulps; the compensated one stays within 2 ulps of float64."""
    rng = np.random.default_rng(0)
    x = rng.random((2 ** 15, 4)).astype(np.float32)
    start = np.float32(2.0 ** 23) + np.arange(4, dtype=np.float32)
    ref = start.astype(np.float64) + x.astype(np.float64).sum(0)

    @jax.jit
    def run(x):
        acc = comp_zeros(jnp.zeros(4, jnp.float32))
        acc = acc._replace(sum=jnp.asarray(start))
        acc = jax.lax.scan(lambda a, v: (comp_add(a, v), None), acc, x)[0]
        return comp_total(acc), acc.sum

    total, s = run(jnp.asarray(x))
    assert np.all(_ulps(total, ref) <= 2), _ulps(total, ref)
    assert np.all(_ulps(s, ref) <= 2)                       # the stored sum alone is within an ulp or so
    assert np.max(_ulps(_plain_f32(x, start), ref)) > 8   # the plain float32 sum fails this test


def test_oco_linear_comparator_signed_gradients():
    """G = sum_t g_t for signed g over 2^17 rounds."""
    rng = np.random.default_rng(1)
    g = (rng.random((2 ** 17, 3)) * 2 - 0.9).astype(np.float32)
    prob = linear_problem(3, 1.0)

    @jax.jit
    def run(g):
        st = prob.stats_init(g[0])
        st = jax.lax.scan(lambda s, v: (prob.stats_update(s, v), None), st, g)[0]
        return comp_total(st), prob.best(st)

    G, best = run(jnp.asarray(g))
    ref = g.astype(np.float64).sum(0)
    assert np.all(_ulps(G, ref) <= 2), _ulps(G, ref)
    np.testing.assert_allclose(float(best), -np.linalg.norm(ref), rtol=3e-7)
    assert np.max(_ulps(_plain_f32(g, np.zeros(3)), ref)) > 8


def test_hedge_and_comparator_on_a_uniform_loss_replay():
    """Hedge (d = 2) on replayed uniform losses, 2^18 rounds: the comparator ``best_loss`` and Hedge's own
    cumulative losses match float64 to a few ulps (plain float32 sums are off by many)."""
    rng = np.random.default_rng(2)
    T, d = 2 ** 18, 2
    losses = rng.random((T, d)).astype(np.float32)
    ref = losses.astype(np.float64).sum(0)
    out = simulate(hedge(d), adv_replay(d), experts_problem(), HedgeParams(jnp.float32(0.01)),
                   ReplayParams(jnp.asarray(losses)), seed_keys(0, 2), T)
    assert np.all(_ulps(out["best_loss"], ref.min()) <= 4), (out["best_loss"], ref.min())
    assert np.max(_ulps(_plain_f32(losses, np.zeros(d)), ref)) > 16

    learner = hedge(d)

    @jax.jit
    def cum(key, losses):
        k_init, k_steps = jax.random.split(key)
        st = learner.init(k_init, HedgeParams(jnp.float32(0.01)))
        keys = jax.random.split(k_steps, losses.shape[0])
        st = jax.lax.scan(lambda s, kl: (learner.step(kl[0], s, kl[1], HedgeParams(jnp.float32(0.01)))[0], None),
                          st, (keys, jnp.asarray(losses)))[0]
        return st.cum

    assert np.all(_ulps(cum(jax.random.key(1), jnp.asarray(losses)), ref) <= 4)
