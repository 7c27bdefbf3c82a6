"""OCO domains, problems and adversaries: projections, comparators vs scipy/brute force, gradients vs
jax.grad, adversary properties and input validation."""
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize as so

from jaxdp.oco import (
    ABLoss, Ball, Box, Simplex, absolute_problem, adv_linear_oco, adv_replay_oco, adv_smooth_realizable,
    ball_grid, check_domain, hinge_problem, linear_oco_params, linear_problem, load_oco_data, logistic_problem,
    problem_info, smooth_realizable_params, squared_problem, ReplayOCOParams,
)


def _accumulate(problem, losses):
    @jax.jit
    def run(losses):
        st = problem.stats_init(jax.tree_util.tree_map(lambda v: v[0], losses))
        return jax.lax.scan(lambda s, l: (problem.stats_update(s, l), None), st, losses)[0]

    return run(losses)


# --------------------------------------------------------------------------- domains


def test_projections_are_nearest_points():
    rng = np.random.default_rng(0)
    doms = [Ball(1.5), Box(-1.0, 0.5, d=3), Box((-1, 0, 2), (1, 1, 3)), Simplex(3)]
    for dom in doms:
        proj = jax.jit(jax.vmap(dom.project))
        xs = rng.normal(size=(20, 3)) * 3
        ps = np.asarray(proj(jnp.asarray(xs, jnp.float32)), np.float64)
        assert bool(jnp.all(jax.vmap(lambda x: dom.contains(x, 1e-5))(jnp.asarray(ps))))
        # each projection is at least as close as any random feasible point
        cand = np.asarray(proj(jnp.asarray(rng.normal(size=(400, 3)) * 3, jnp.float32)), np.float64)
        for x, p in zip(xs, ps):
            assert np.linalg.norm(x - p) <= np.min(np.linalg.norm(x - cand, axis=1)) + 1e-5
    # simplex projection vs scipy
    s = Simplex(4)
    x = np.array([0.9, -0.3, 0.6, 0.2])
    res = so.minimize(lambda z: np.sum((z - x) ** 2), np.full(4, 0.25), method="SLSQP", bounds=[(0, None)] * 4,
                      constraints=[{"type": "eq", "fun": lambda z: z.sum() - 1}], options={"ftol": 1e-12})
    np.testing.assert_allclose(np.asarray(s.project(jnp.asarray(x, jnp.float32))), res.x, atol=1e-5)


def test_domain_constants_and_oracle():
    assert Ball(2.0).diameter == 4.0 and Ball(2.0).radius == 2.0
    b = Box(-1.0, 2.0, d=2)
    # the diameter in the default float dtype (what the samplers' step size uses), the radius in float64
    assert math.isclose(b.diameter, 3 * math.sqrt(2), rel_tol=1e-6) and math.isclose(b.radius, 2 * math.sqrt(2))
    g = jnp.asarray([1.0, -2.0])
    for dom in (Ball(1.0), b, Simplex(2)):
        x = dom.minimize_linear(g)
        assert math.isclose(float(jnp.dot(g, x)), float(dom.min_linear_value(g)), rel_tol=1e-6)
    for dd, m in ((1, 10), (2, 16), (2, 5)):
        pts, rho, vol = ball_grid(1.0, dd, m)
        assert pts.shape[1] == dd and np.all(np.linalg.norm(pts, axis=1) <= 1.0)
        assert math.isclose(vol, (2.0 / m) ** dd)
        # the covering radius is a true bound: brute force over random ball points (boundary included)
        rng = np.random.default_rng(dd * 100 + m)
        z = rng.normal(size=(4000, dd))
        z = z / np.linalg.norm(z, axis=1, keepdims=True) * rng.random((4000, 1)) ** (1 / dd)
        z[:1000] /= np.linalg.norm(z[:1000], axis=1, keepdims=True)
        dist = np.sqrt(((z[:, None, :] - pts[None]) ** 2).sum(-1)).min(1)
        assert dist.max() <= rho + 1e-6 and (dd > 1 or math.isclose(rho, 1.0 / m))


@pytest.mark.parametrize("bad, match", [
    (lambda: Ball(0.0), "D"), (lambda: Ball(-1.0), "D"), (lambda: Ball(float("nan")), "D"),
    (lambda: Box(1.0, 0.0, d=2), "lo <= hi"), (lambda: Box((0, 2), (1, 1)), "lo"),
    (lambda: Box(0.0, 1.0), "dimension d"), (lambda: Box((0, 0), (1, 1), d=3), "length"),
    (lambda: Simplex(0), "d"), (lambda: check_domain(Ball(1.0, d=3), 4), "mismatch"),
    (lambda: check_domain("ball"), "Ball, Box or Simplex"),
    (lambda: linear_problem(4, domain=Box(0.0, 1.0, d=3)), "mismatch"),
    (lambda: linear_problem(0), "d"), (lambda: linear_problem(3, -1.0), "D"),
    (lambda: squared_problem(3, a_max=0.0), "a_max"),
    (lambda: linear_oco_params("sideways"), "mode"), (lambda: linear_oco_params(L=0.0), "L"),
    (lambda: linear_oco_params(B=0), "B"), (lambda: linear_oco_params(bias=1.5), "bias"),
    (lambda: smooth_realizable_params(D=0.0), "D"), (lambda: smooth_realizable_params(grid_h=0.6), "grid_h"), (lambda: smooth_realizable_params(sigma=-1.0), "sigma"),
    (lambda: load_oco_data(np.zeros((5, 3)), 4), r"\(T, 4\)"),
    (lambda: load_oco_data(np.full((5, 4), np.nan), 4), "finite"),
    (lambda: load_oco_data(np.ones((5, 3)), 2, kind="ab", max_norm=1.0), "norm"),
])
def test_bad_inputs(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        bad()


# --------------------------------------------------------------------------- comparators


def test_linear_comparator_exact():
    rng = np.random.default_rng(1)
    G = rng.normal(size=(30, 3)).astype(np.float32)
    for dom in (Ball(2.0), Box(-1.0, 0.5, d=3), Simplex(3)):
        p = linear_problem(3, domain=dom)
        st = _accumulate(p, jnp.asarray(G))
        Gs = G.astype(np.float64).sum(0)
        if isinstance(dom, Ball):
            ref = -2.0 * np.linalg.norm(Gs)
        else:
            lo, hi = ((dom.lo, dom.hi) if isinstance(dom, Box) else ((0,) * 3, (1,) * 3))
            A_eq, b_eq = (np.ones((1, 3)), [1.0]) if isinstance(dom, Simplex) else (None, None)
            ref = so.linprog(Gs, A_eq=A_eq, b_eq=b_eq, bounds=list(zip(lo, hi))).fun
        assert abs(float(jax.jit(p.best)(st)) - ref) < 1e-4 * max(1, abs(ref))
        x = jax.jit(p.best_action)(st)
        assert abs(float(jnp.dot(jnp.asarray(Gs, jnp.float32), x)) - ref) < 1e-4 * max(1, abs(ref))


@pytest.mark.parametrize("dom", [Ball(1.0), Ball(0.3), Box(-0.5, 0.2, d=3), Simplex(3)])
def test_squared_comparator_vs_scipy(dom):
    rng = np.random.default_rng(2)
    p = squared_problem(3, domain=dom)
    best, best_action = jax.jit(p.best), jax.jit(p.best_action)
    for trial in range(3):
        n = 20 + 5 * trial
        a = rng.normal(size=(n, 3))
        a[:, 2] *= 0.01 * trial          # near-singular designs too
        b = rng.normal(size=n) + a @ np.array([2.0, -1.0, 0.5])
        st = _accumulate(p, ABLoss(jnp.asarray(a, jnp.float32), jnp.asarray(b, jnp.float32)))
        f = lambda x: 0.5 * np.sum((a @ x - b) ** 2)  # noqa: E731
        if isinstance(dom, Box):
            r = so.lsq_linear(a, b, bounds=(np.asarray(dom.lo), np.asarray(dom.hi)), tol=1e-12)
            ref = f(r.x)
        else:
            cons = ([{"type": "ineq", "fun": lambda x: dom.D ** 2 - x @ x}] if isinstance(dom, Ball) else
                    [{"type": "eq", "fun": lambda x: x.sum() - 1}])
            bounds = None if isinstance(dom, Ball) else [(0, 1)] * 3
            x0 = np.zeros(3) if isinstance(dom, Ball) else np.full(3, 1 / 3)
            ref = min(so.minimize(f, x0 + 0.01 * k, method="SLSQP", constraints=cons, bounds=bounds,
                                  options={"ftol": 1e-14, "maxiter": 500}).fun for k in range(3))
        got = float(best(st))
        assert abs(got - ref) <= 2e-4 * max(1.0, ref), (dom, trial, got, ref)
        x = np.asarray(best_action(st), np.float64)
        assert abs(f(x) - ref) <= 2e-4 * max(1.0, ref)


def test_squared_realizable_comparator_is_zero():
    d = 3
    p = squared_problem(d, 1.0)
    adv = adv_smooth_realizable(d)
    st_adv = adv.init(jax.random.key(0), smooth_realizable_params(1.0, 0.0))
    losses = jax.jit(jax.vmap(lambda t: adv.loss(st_adv, t)))(jnp.arange(200))
    st = _accumulate(p, losses)
    assert float(jax.jit(p.best)(st)) < 1e-4
    np.testing.assert_allclose(np.asarray(jax.jit(p.best_action)(st)), np.asarray(st_adv[0].x_star), atol=1e-3)


@pytest.mark.parametrize("family", ["absolute", "hinge", "logistic"])
def test_buffer_comparator_upper_bounds_scipy(family):
    rng = np.random.default_rng(3)
    d, n = 2, 60
    a = rng.normal(size=(n, d)) / math.sqrt(d)
    if family == "absolute":
        b = a @ np.array([0.3, -0.4]) + 0.1 * rng.normal(size=n)
        p = absolute_problem(d, 1.0, n_buffer=64, n_iter=400)
        f = lambda x: np.sum(np.abs(a @ x - b))  # noqa: E731
    else:
        b = np.sign(a @ np.array([1.0, -0.5]) + 0.3 * rng.normal(size=n))
        p = (hinge_problem if family == "hinge" else logistic_problem)(d, 1.0, n_buffer=64, n_iter=400)
        f = ((lambda x: np.sum(np.maximum(0, 1 - b * (a @ x)))) if family == "hinge"
             else (lambda x: np.sum(np.logaddexp(0, -b * (a @ x)))))
    st = _accumulate(p, ABLoss(jnp.asarray(a, jnp.float32), jnp.asarray(b, jnp.float32)))
    cons = [{"type": "ineq", "fun": lambda x: 1.0 - x @ x}]
    ref = min(so.minimize(f, x0, method="SLSQP" if family == "logistic" else "COBYLA", constraints=cons,
                          options={"maxiter": 5000}).fun for x0 in (np.zeros(d), np.array([0.5, -0.5])))
    best = jax.jit(p.best)
    got = float(best(st))
    info = problem_info(p)
    assert got >= ref - 1e-3 * max(1, ref)                  # a feasible value: never below the minimum
    assert got <= ref + 0.02 * max(1.0, ref), (got, ref)    # buffer solve (t <= n_buffer) is accurate
    assert info.comparator == "buffer+net" and info.net_covering_radius > 0
    # past the buffer the net bound alone: error <= T L rho
    st2 = st._replace(count=jnp.int32(10 ** 6))
    got2 = float(best(st2))
    assert ref - 1e-3 <= got2 <= ref + n * info.lipschitz * info.net_covering_radius + 1e-3


# --------------------------------------------------------------------------- gradients and constants


def test_gradients_match_jax_grad_and_constants():
    rng = np.random.default_rng(4)
    d = 3
    probs = {"linear": linear_problem(d, 1.0), "squared": squared_problem(d, 1.0),
             "absolute": absolute_problem(d, 1.0), "hinge": hinge_problem(d, 1.0),
             "logistic": logistic_problem(d, 1.0)}
    xs = np.asarray(jax.vmap(Ball(1.0).project)(jnp.asarray(rng.normal(size=(10, d)), jnp.float32)))
    a = rng.normal(size=(10, d))
    a = jnp.asarray(a / np.linalg.norm(a, axis=1, keepdims=True), jnp.float32)
    for name, p in probs.items():
        info = problem_info(p)
        b = jnp.asarray(rng.choice([-1.0, 1.0], 10) if name in ("hinge", "logistic") else rng.normal(size=10),
                        jnp.float32)
        loss = a if name == "linear" else ABLoss(a, b)
        g, gj = jax.jit(jax.vmap(lambda l, x: (p.grad(l, x), jax.grad(lambda z: p.value(l, z))(x))))(loss, xs)
        np.testing.assert_allclose(np.asarray(g), np.asarray(gj), rtol=1e-5, atol=1e-6)
        if name != "squared":
            assert np.all(np.linalg.norm(np.asarray(g), axis=1) <= info.lipschitz * (1 + 1e-5))
    sq = problem_info(probs["squared"])
    assert sq.smoothness == 1.0 and sq.lipschitz == 2.0 and sq.nonneg
    assert problem_info(probs["logistic"]).smoothness == 0.25
    assert math.isinf(problem_info(probs["hinge"]).smoothness)


# --------------------------------------------------------------------------- adversaries


@functools.lru_cache(maxsize=None)
def _runner(adv, T):
    @jax.jit
    def run(key, params):
        st = adv.init(key, params)
        return jax.vmap(lambda t: adv.loss(st, t))(jnp.arange(T, dtype=jnp.int32)), st

    return run


def _losses(adv, params, T, seed=0):
    return _runner(adv, T)(jax.random.key(seed), params)


def test_adv_linear_oco_modes():
    d, T = 5, 4000
    adv = adv_linear_oco(d)
    g, st = _losses(adv, linear_oco_params("biased", L=2.0, bias=0.25), T)
    g = np.asarray(g)
    np.testing.assert_allclose(np.linalg.norm(g, axis=1), 2.0, rtol=1e-6)
    star, sign = int(st[0].star), float(st[0].sign)
    # E[g] = L bias sign e_star; std of the mean per coordinate <= 2/sqrt(T); z = 6
    mean = g.mean(0)
    expect = np.zeros(d)
    expect[star] = 2.0 * 0.25 * sign
    assert np.all(np.abs(mean - expect) < 6 * 2.0 / math.sqrt(T))
    g, _ = _losses(adv, linear_oco_params("rademacher", L=1.0), T)
    g = np.asarray(g)
    np.testing.assert_allclose(np.abs(g), 1 / math.sqrt(d), rtol=1e-6)
    assert np.all(np.abs(g.mean(0)) < 6 / math.sqrt(d * T))
    g, _ = _losses(adv, linear_oco_params("alternating", L=1.0, B=3), T)
    g = np.asarray(g)
    for t in range(12):
        np.testing.assert_allclose(g[t], g[0] * (-1) ** (t // 3), rtol=1e-6)


def test_adv_smooth_realizable_and_noisy():
    d = 4
    adv = adv_smooth_realizable(d)
    losses, st = _losses(adv, smooth_realizable_params(2.0, 0.0), 4000)
    xs = np.asarray(st[0].x_star)                       # ||x*|| = D/2 = 1
    assert math.isclose(np.linalg.norm(xs), 1.0, rel_tol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(losses.a), axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(losses.a) @ xs, np.asarray(losses.b), atol=1e-5)
    noisy, _ = _losses(adv, smooth_realizable_params(2.0, 0.5), 4000)
    r = np.asarray(noisy.b) - np.asarray(noisy.a) @ xs
    assert abs(r.std() - 0.5) < 6 * 0.5 / math.sqrt(2 * 4000)
    # snapped to the grid net of ball_grid(D, d, m): x* is a net point
    m = 8
    _, st2 = _losses(adv, smooth_realizable_params(2.0, 0.0, grid_h=2 * 2.0 / m), 4000)
    pts, _, _ = ball_grid(2.0, d, m)
    assert np.min(np.linalg.norm(pts - np.asarray(st2[0].x_star), axis=1)) < 1e-5


def test_adv_replay_oco():
    data = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    adv = adv_replay_oco(3)
    g, _ = _losses(adv, ReplayOCOParams(jnp.asarray(load_oco_data(data, 3))), 6)
    np.testing.assert_allclose(np.asarray(g)[:4], data)
    np.testing.assert_allclose(np.asarray(g)[5], data[3])
    ab = adv_replay_oco(2, "ab")
    l, _ = _losses(ab, ReplayOCOParams(jnp.asarray(load_oco_data(data, 2, kind="ab"))), 2)
    np.testing.assert_allclose(np.asarray(l.a), data[:2, :2])
    np.testing.assert_allclose(np.asarray(l.b), data[:2, 2])
