"""The one Domain family (jaxdp.core.domains) that the samplers and the OCO learners share: one class per shape,
pytrees whose radius and bounds may be traced and vmapped, checked once at the public constructor, and chart
operations that agree with the domain's own."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp.oco
import jaxdp.samplers
from jaxdp.core.domains import (Ball, Box, Domain, Simplex, Unconstrained, ball, box, check_domain, simplex,
                                unconstrained)


def test_one_class_per_shape_for_both_users():
    assert jaxdp.oco.Ball is jaxdp.samplers.Ball is Ball and jaxdp.oco.Box is jaxdp.samplers.Box is Box
    assert jaxdp.oco.Simplex is jaxdp.samplers.Simplex is Simplex
    for dom in (ball(1.0), box(0.0, 1.0), simplex(3), unconstrained(), Ball(1.0), Box(0.0, 1.0, d=2), Simplex(3)):
        assert isinstance(dom, Domain)
    assert type(ball(1.0)) is Ball and type(box(0.0, 1.0)) is Box and type(simplex(3)) is Simplex


def test_domains_built_from_numbers_are_hashable_cache_keys():
    assert Ball(1.0) == Ball(1) and hash(Ball(1.0)) == hash(Ball(1))
    assert hash(Box(-1.0, 1.0, d=2)) == hash(Box((-1, -1), (1, 1))) and Simplex(3) == Simplex(3)
    calls = []

    @functools.lru_cache(maxsize=None)
    def build(dom):
        calls.append(dom)
        return dom

    build(Ball(2.0)), build(Ball(2.0)), build(Box(0.0, 1.0, d=3)), build(Box(0.0, 1.0, d=3))
    assert len(calls) == 2


def test_radius_and_bounds_are_vmapped_leaves():
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=3) * 3, jnp.float32)
    radii = jnp.asarray([0.1, 0.5, 1.0, 2.0, 10.0], jnp.float32)
    batched = jax.vmap(lambda dom: dom.project(x))(ball(radii))
    for r, p in zip(np.asarray(radii), np.asarray(batched)):
        # reference: x scaled onto the sphere of radius r when outside it (float64)
        n = np.linalg.norm(np.asarray(x, np.float64))
        np.testing.assert_allclose(p, np.asarray(x) * min(1.0, r / n), rtol=1e-6)
    lo = jnp.asarray([[-1.0, 0.0, -2.0], [0.0, 0.5, 1.0]], jnp.float32)
    hi = lo + 0.25
    clipped = jax.vmap(lambda dom: dom.project(x))(box(lo, hi))
    np.testing.assert_array_equal(np.asarray(clipped), np.clip(np.asarray(x), np.asarray(lo), np.asarray(hi)))
    # a domain passed through jit is traced leaf by leaf and gives the eager numbers
    for dom in (Ball(1.5), Box((-1, 0, 2), (1, 1, 3)), Simplex(3)):
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda dm, v: dm.project(v))(dom, x)),
                                      np.asarray(dom.project(x)))
    # the dimension is static (not a leaf)
    assert jax.tree_util.tree_leaves(Simplex(4)) == [] and len(jax.tree_util.tree_leaves(Ball(1.0, d=3))) == 1


def test_checked_once_at_the_public_constructor():
    for bad, exc, name in ((lambda: Ball(0.0), ValueError, "radius"), (lambda: Ball(float("nan")), ValueError, "D"),
                           (lambda: Ball("1"), TypeError, "radius"), (lambda: Ball(True), TypeError, "radius"),
                           (lambda: Ball(1.0, d=0), ValueError, "d"), (lambda: ball(-1.0), ValueError, "radius"),
                           (lambda: Box(1.0, 0.0, d=2), ValueError, "lo <= hi"),
                           (lambda: box(1.0, 0.0), ValueError, "lo < hi"), (lambda: Simplex(0), ValueError, "d"),
                           (lambda: simplex(1), ValueError, "d must be an integer >= 2"),
                           (lambda: check_domain("ball"), TypeError, "domain must be"),
                           (lambda: check_domain(Unconstrained()), TypeError, "domain must be"),
                           (lambda: check_domain(Box(0.0, 1.0, d=3), 4), ValueError, "Box has d=3")):
        with pytest.raises(exc, match=name):
            bad()
    # a traced radius is not checked, and rebuilding a pytree does not check its leaves
    assert float(jax.jit(lambda r: Ball(r).project(jnp.asarray([3.0, 4.0])))(2.0)[0]) == pytest.approx(1.2)
    rebuilt = jax.tree_util.tree_map(lambda _: -1.0, Ball(1.0))
    assert rebuilt.radius == -1.0
    assert check_domain(2.0, 3) == Ball(2.0) and check_domain(None, unbounded=True) == Unconstrained()


def test_chart_operations_agree_with_the_domain():
    rng = np.random.default_rng(1)
    s = Simplex(4)
    ys = rng.uniform(-0.2, 0.8, size=(500, 3))
    ys = ys[np.abs(ys.sum(1) - 1.0) > 1e-3]   # away from the facet sum y = 1, where float32 rounding decides
    ys = ys[np.all(np.abs(ys) > 1e-3, axis=1)]
    inside = jax.vmap(s.chart_contains)(jnp.asarray(ys, jnp.float32))
    np.testing.assert_array_equal(np.asarray(inside), np.all(ys >= 0, 1) & (ys.sum(1) <= 1))
    # chart projection: the nearest simplex point to (y, 1 - sum y), read in the chart (float64 reference:
    # the sort-based projection of Duchi et al. 2008, Fig. 1, written out here)
    for y in ys[:20]:
        x = np.append(y, 1.0 - y.sum())
        u = np.sort(x)[::-1]
        css = np.cumsum(u) - 1
        k = np.nonzero(u - css / np.arange(1, 5) > 0)[0][-1]
        ref = np.maximum(x - css[k] / (k + 1), 0)
        got = np.asarray(s.from_chart(s.chart_project(jnp.asarray(y, jnp.float32))))
        np.testing.assert_allclose(got, ref, atol=2e-6)
        assert bool(s.contains(jnp.asarray(got), 1e-5))
    assert s.chart_dim(4) == 3 and Ball(1.0).chart_dim(4) == 4


def test_reflection_is_the_mirror_image():
    b = ball(1.0)
    for r in (1.2, 1.9, 2.5):
        x = jnp.asarray([r, 0.0, 0.0], jnp.float32)
        np.testing.assert_allclose(np.asarray(b.reflect(x)), [2.0 - r, 0, 0], atol=1e-6)
    bx = box(jnp.asarray([0.0, -1.0]), jnp.asarray([1.0, 1.0]))
    # 1.3 mirrored at 1 -> 0.7; -2.5 mirrored at -1 -> 0.5, then inside (a width-2 interval folds once)
    np.testing.assert_allclose(np.asarray(bx.reflect(jnp.asarray([1.3, -2.5]))), [0.7, 0.5], atol=1e-6)
    inside = jnp.asarray([0.4, 0.2])
    np.testing.assert_allclose(np.asarray(bx.reflect(inside)), np.asarray(inside), atol=1e-7)
