"""Compensated long-horizon accumulators (``jaxdp.core.accumulate``) against float64 NumPy references:
the comparators' cumulative losses (experts, OCO) and Hedge's own cumulative losses stay within a few
float32 ulps where plain float32 running sums are off by many; the packed layout is the two-array one
bit for bit; Hedge's leader-relative compensated gaps keep totals and weights accurate for 10^7 rounds,
where one-word gaps and weights formed from totals do not."""
import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.harness.accuracy import T7, run_cheaper_sums, run_hedge_switch, switch_reference, ulps
from jaxdp.core import comp_add, comp_total, comp_zeros, seed_keys, simulate
from jaxdp.core.accumulate import (Compensated, pack, packed_add, packed_sum, packed_total, packed_zeros, two_sum,
                                   unpack)
from jaxdp.experts import HedgeParams, ReplayParams, adv_replay, experts_problem, hedge
from jaxdp.oco import linear_problem


_ulps = ulps


def _plain_f32(x, start):
    s = np.asarray(start, np.float32).copy()
    return np.cumsum(np.concatenate([s[None], x.astype(np.float32)]), axis=0, dtype=np.float32)[-1]


def _deep_run_terms(seed: int):
    """``2^15`` uniform float32 terms added to starts at ``2^23`` (where a 10^7-round run of [0, 1] losses is),
    with the float64 reference sums."""
    rng = np.random.default_rng(seed)
    x = rng.random((2 ** 15, 4)).astype(np.float32)
    start = np.float32(2.0 ** 23) + np.arange(4, dtype=np.float32)
    return x, start, start.astype(np.float64) + x.astype(np.float64).sum(0)


def test_compensated_sum_deep_into_a_long_run():
    """Start at 2^23 (where a 10^7-round run of [0, 1] losses is) and add 2^15 uniform terms (float32 spacing 1): a plain float32 sum
    rounds every addition to a whole number and drifts by tens of ulps; the compensated one stays within 2 ulps of float64."""
    x, start, ref = _deep_run_terms(0)

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


# --------------------------------------------------------------------------- packed layout, Hedge's gaps, T = 10^7


def test_packed_sum_is_the_compensated_sum_bit_for_bit():
    """The packed layout (one complex array) runs Kahan's arithmetic unchanged: same bits as ``Compensated``,
    deep in a long run where the plain float32 sum fails."""
    x, start, ref = _deep_run_terms(3)

    @jax.jit
    def run(x):
        a = comp_zeros(jnp.zeros(4, jnp.float32))._replace(sum=jnp.asarray(start))
        z = pack(a)
        a = jax.lax.scan(lambda a, v: (comp_add(a, v), None), a, x)[0]
        z = jax.lax.scan(lambda z, v: (packed_add(z, v), None), z, x)[0]
        return a, z

    a, z = run(jnp.asarray(x))
    assert z.dtype == jnp.complex64 and packed_zeros(jnp.zeros(3)).dtype == jnp.complex64
    np.testing.assert_array_equal(packed_sum(z), a.sum)
    np.testing.assert_array_equal(unpack(z).comp, a.comp)
    np.testing.assert_array_equal(packed_total(z), comp_total(a))
    np.testing.assert_array_equal(comp_total(z), comp_total(a))       # comp_total takes either layout
    assert np.all(_ulps(packed_total(z), ref) <= 2)
    assert isinstance(unpack(z), Compensated)


def test_two_sum_is_error_free():
    rng = np.random.default_rng(4)
    a = (rng.random(10 ** 5) * 2.0 ** rng.integers(-20, 24, 10 ** 5)).astype(np.float32)
    b = -(rng.random(10 ** 5) * 2.0 ** rng.integers(-20, 24, 10 ** 5)).astype(np.float32)
    s, e = jax.jit(two_sum)(jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_array_equal(np.asarray(s, np.float64) + np.asarray(e, np.float64),
                                  a.astype(np.float64) + b.astype(np.float64))


def test_hedge_at_ten_million_rounds_totals_and_weights():
    """Hedge (d = 3) for T = 10^7 rounds on ``benchmarks.harness.accuracy.switch_losses``: the cumulative losses
    ``lead + gap`` are within a few float32 ulps of float64 for every expert (the one 2e5 behind included), and the final weights, which
    hinge on B's gap after its comeback, match float64 Hedge to 1e-6 relative. The comparator agrees too."""
    eta = HedgeParams(jnp.float32(np.sqrt(8 * np.log(3) / T7)))
    prob = experts_problem()
    st, stats = run_hedge_switch(float(eta.eta))
    ref = switch_reference()
    assert np.all(_ulps(st.cum, ref) <= 2), _ulps(st.cum, ref)
    assert np.all(_ulps(comp_total(stats), ref) <= 2)
    assert _ulps(prob.best(stats), ref.min()) <= 2
    lg = -float(eta.eta) * (ref - ref.min())
    p_ref = np.exp(lg) / np.exp(lg).sum()
    p = np.asarray(st.p, np.float64)
    assert abs(p_ref[0] - p_ref[1]) > 1e-4 and p_ref[2] < 1e-80     # A and B nearly tied, C far behind
    np.testing.assert_allclose(p[:2], p_ref[:2], rtol=1e-6)
    assert p[2] < 1e-30
    assert float(st.mu) == float(jnp.min(jnp.real(st.gap))) and 0.0 <= float(st.mu) <= 1.0


def test_what_the_hedge_test_rules_out():
    """On the same 10^7 rounds, the two cheaper representations fail the checks above: plain float32 gaps
    (leader-relative, one word per expert) put B's total ~10^5 ulps off after its comeback, and Kahan totals
    with logits formed from them (the previous Hedge) get the final weights only to ~1e-4."""
    ref = switch_reference()
    eta = np.float32(np.sqrt(8 * np.log(3) / T7))
    gap, lead, lead_c, s, sc, _ = run_cheaper_sums()
    plain_gap_totals = (float(lead) - float(lead_c)) + np.asarray(gap, np.float64)
    assert _ulps(plain_gap_totals, ref)[1] > 1000
    lg = -eta * s
    w = np.asarray(jnp.exp(lg - jnp.max(lg)), np.float64)
    lg64 = -float(eta) * (ref - ref.min())
    p_ref = np.exp(lg64) / np.exp(lg64).sum()
    assert np.max(np.abs(w[:2] / w.sum() - p_ref[:2]) / p_ref[:2]) > 1e-5
