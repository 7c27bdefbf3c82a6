"""jaxdp.sco (GROWTH, docs/algorithms/growth.md): instances, ERM solver certificates, noise calibration, grid sampler, inputs."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jaxdp.core import seed_keys
from jaxdp.sco import (
    EpochParams, LocalizationParams, accuracy_floor, empirical_value, epoch_estimator, epoch_growth_sco, grad_inverse_sensitivity,
    growth_epochs, growth_holds, inst_kappa_1d_twopoint, inst_kappa_atom, inst_kappa_linear, inst_kappa_regression,
    inst_sign_cube, inverse_sensitivity, localization_sco, plan_epoch_growth_sco, plan_grad_inverse_sensitivity,
    plan_localization_sco, run_sco, solve_prox_erm,
)

INSTANCES = [
    inst_kappa_linear(2, 2.0, 0.5), inst_kappa_linear(3, 3.0, 0.4, dist="packing"),
    inst_kappa_1d_twopoint(1.5, 0.1), inst_kappa_1d_twopoint(2.0, 0.2, sign=-1),
    inst_kappa_regression(2, 1.5), inst_kappa_regression(3, 4.0), inst_kappa_atom(2, 1.5, 0.5),
    inst_kappa_atom(1, 2.0, 0.3),
]


def _ball_points(rng, d, R, m, centre=None, scale=1.0):
    z = rng.normal(size=(m, d))
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    r = R * scale * rng.uniform(size=(m, 1)) ** (1.0 / d)
    pts = z * r + (0 if centre is None else centre)
    nrm = np.linalg.norm(pts, axis=1, keepdims=True)
    return pts * np.minimum(1.0, R / nrm)


@pytest.mark.parametrize("inst", INSTANCES, ids=repr)
def test_growth_condition_and_minimizer(inst):
    rng = np.random.default_rng(0)
    xs = _ball_points(rng, inst.d, inst.R, 2000)
    assert growth_holds(inst, xs).all()
    xstar = np.asarray(inst.xstar)
    with jax.enable_x64():
        assert abs(float(inst.excess(jnp.asarray(xstar)))) < 1e-12
        # excess = f(x) - f* agrees with the population value
        ex = np.asarray(jax.vmap(inst.excess)(jnp.asarray(xs)))
        pv = np.asarray(jax.vmap(inst.population_value)(jnp.asarray(xs))) - inst.fstar
        np.testing.assert_allclose(ex, np.maximum(pv, 0), atol=1e-12)
    # a smaller exponent (same λ) fails near x* (two-point: near the far kink, where growth is exactly κ)
    centre = xstar
    if inst.name == "inst_kappa_linear" and inst.kappa > 2:
        return  # interior x* ≠ 0: locally quadratic, so a smaller exponent holds near x* (GROWTH remark, docs/algorithms/growth.md#instances)
    if inst.name == "inst_kappa_1d_twopoint":
        info = dict(inst.info)
        centre = np.asarray([info["theta"] if info["sign"] == 1 else 0.0])
    near = _ball_points(rng, inst.d, inst.R, 2000, centre=centre, scale=1e-3)
    assert not growth_holds(inst, near, kappa=inst.kappa - 0.3).all()


def test_excess_matches_monte_carlo_population():
    """Closed-form f(x) against an average of F(x; s) over many samples (population objective is right)."""
    for inst in (inst_kappa_linear(2, 3.0, 0.5, dist="packing"), inst_kappa_regression(2, 1.5),
                 inst_kappa_atom(2, 1.5, 0.4), inst_kappa_1d_twopoint(1.5, 0.1), inst_sign_cube(3)):
        with jax.enable_x64():
            data = inst.sample(jax.random.key(1), 400_000)
            x = jnp.asarray(_ball_points(np.random.default_rng(1), inst.d, inst.R, 1)[0])
            mc = float(empirical_value(inst, x, data))
            sd = float(jnp.std(jax.vmap(lambda s: inst.loss(x, s))(data))) / math.sqrt(data.shape[0])
            assert abs(mc - float(inst.population_value(x))) < 6 * sd + 1e-12, inst


def test_empirical_minimizers():
    rng = np.random.default_rng(2)
    for inst in (inst_kappa_linear(2, 2.0, 0.3), inst_kappa_1d_twopoint(1.5, 0.1), inst_kappa_regression(2, 3.0),
                 inst_sign_cube(2)):
        with jax.enable_x64():
            data = inst.sample(jax.random.key(3), 300)
            xs = inst.empirical_minimizer(data)
            v = float(empirical_value(inst, xs, data))
            pts = _ball_points(rng, inst.d, inst.R, 500)
            vals = np.asarray(jax.vmap(lambda x: empirical_value(inst, x, data))(jnp.asarray(pts)))
            assert vals.min() >= v - 1e-12, inst


@pytest.fixture(scope="module")
def loc_runs():
    """Algorithm 1 on fixed data, vmapped over 3000 keys, pure and approximate DP, and ε = ∞."""
    inst = inst_kappa_linear(2, 2.0, 0.5)
    with jax.enable_x64():
        data = inst.sample(jax.random.key(10), 240)
        x0 = jnp.zeros(2)
        f = jax.jit(jax.vmap(lambda key, p: localization_sco(key, inst, data, x0, p, k=3, n_iter=60),
                             in_axes=(0, None)))
        out = {}
        for i, (name, (eps, delta, gm)) in enumerate({"pure": (1.0, 0.0, 0.0), "gauss": (1.0, 1e-5, 2 * math.sqrt(math.log(1e5))),
                                       "inf": (math.inf, 1e-5, 0.0)}.items()):
            p = LocalizationParams(*(jnp.asarray(v, jnp.float64) for v in (0.05, eps, delta, gm, 0.0)))
            x, info = f(seed_keys(5 + i, 3000), p)
            out[name] = (np.asarray(x), {k: np.asarray(v) for k, v in info.items()})
        return inst, out


def test_noise_scale_ks(loc_runs):
    inst, out = loc_runs
    _, info = out["pure"]
    eta_i = 0.05 * 16.0 ** -np.arange(3)
    fl = accuracy_floor(inst, np.float64)             # 8 u R sqrt(d): the phase's accuracy is L eta_i + fl
    np.testing.assert_allclose(info["scale"][0], (4 * inst.L * eta_i + 2 * fl) * math.sqrt(2) / 1.0, rtol=1e-14)
    z = (info["zeta"] / info["scale"][..., None]).ravel()
    assert stats.kstest(z, stats.laplace.cdf).pvalue > 1e-7
    assert stats.kstest(z / 1.15, stats.laplace.cdf).pvalue < 1e-7       # a wrong scale is rejected
    assert stats.kstest(z, stats.norm.cdf).pvalue < 1e-7                  # and so is the wrong law
    _, info = out["gauss"]
    np.testing.assert_allclose(info["scale"][0], (4 * inst.L * eta_i + 2 * fl) * math.sqrt(math.log(1e5)),
                               rtol=1e-14)
    z = (info["zeta"] / info["scale"][..., None]).ravel()
    assert stats.kstest(z, stats.norm.cdf).pvalue > 1e-7
    assert stats.kstest(z / 1.15, stats.norm.cdf).pvalue < 1e-7


def test_solver_gap_every_phase(loc_runs):
    _, out = loc_runs
    for name in out:
        _, info = out[name]
        assert (info["gap"] <= info["gap_required"]).all(), name


def test_eps_inf_is_nonprivate(loc_runs):
    _, out = loc_runs
    x, info = out["inf"]
    assert (info["zeta"] == 0).all()
    np.testing.assert_array_equal(x, info["xhat"][:, -1])
    assert np.ptp(x, axis=0).max() == 0      # deterministic: the data alone decides


def test_gap_certificate_is_honest():
    """The reported gap bounds F(x) - min F (true optimum from a long solve), and the solver is accurate."""
    inst = inst_kappa_regression(2, 3.0)
    with jax.enable_x64():
        data = inst.sample(jax.random.key(4), 300)
        c = jnp.asarray([0.3, -0.2])
        cs, rs = jnp.asarray([[0.0, 0.0], [0.3, -0.2]]), jnp.asarray([1.0, 0.5])
        w = jnp.ones(300)
        short = solve_prox_erm(inst, data, w, c, 0.5, cs, rs, c, n_iter=5)
        long = solve_prox_erm(inst, data, w, c, 0.5, cs, rs, c, n_iter=2000)
        assert float(long.gap) < 1e-12
        assert float(short.value - long.value) <= float(short.gap) + 1e-12
        assert float(short.gap) > 0


def test_epoch_vmappable_deterministic_and_gap():
    inst = inst_kappa_1d_twopoint(1.5, 0.1)
    pl = plan_epoch_growth_sco(eps=2.0, n=800, d=1, kappa_low=1.5, L=inst.L, D=1.0, mode="rate").params
    fn = epoch_estimator(inst, 800, pl["n_epochs"], pl["k"], 40)
    p = EpochParams(pl["eta0"], pl["eps"], pl["delta"], pl["gauss_mult"], pl["phase_offset"])
    a = run_sco(fn, seed_keys(3, 8), p)
    perm = np.array([4, 5, 6, 7, 0, 1, 2, 3])
    b = run_sco(fn, seed_keys(3, perm), p)        # same seeds, other batch positions: same results
    np.testing.assert_array_equal(a["excess"][perm], b["excess"])
    assert a["gap_ok"].all() and np.isfinite(a["excess"]).all()
    assert np.unique(a["excess"]).size == 8


@pytest.fixture(scope="module")
def grid_draws():
    inst = inst_kappa_regression(1, 2.0)
    with jax.enable_x64():
        data = inst.sample(jax.random.key(7), 40)
        f = jax.jit(jax.vmap(lambda k: grad_inverse_sensitivity(k, inst, data, 0.5, rho=0.1, M=24)))
        x, info = f(seed_keys(8, 40000))
        return np.asarray(x), np.asarray(info.cell), np.asarray(info.logits[0]), np.asarray(info.centers[0])


def test_grid_sampler_matches_density(grid_draws):
    x, cell, logits, centers = grid_draws
    p = np.exp(logits - logits.max())
    p /= p.sum()
    counts = np.bincount(cell, minlength=p.size)
    keep = p * cell.size >= 5
    tail = p[~keep].sum() > 0
    obs = np.append(counts[keep], counts[~keep].sum()) if tail else counts[keep]
    exp = (np.append(p[keep], p[~keep].sum()) if tail else p[keep]) * cell.size
    assert stats.chisquare(obs, exp).pvalue > 1e-7
    q = np.exp(0.9 * (logits - logits.max()))         # a mis-scaled density is rejected
    q /= q.sum()
    exp_q = (np.append(q[keep], q[~keep].sum()) if tail else q[keep]) * cell.size
    assert stats.chisquare(obs, exp_q).pvalue < 1e-7
    h = centers[1, 0] - centers[0, 0]
    assert np.all(np.abs(x[:, 0] - centers[cell, 0]) <= h / 2 + 1e-12)   # jitter stays in the cell


def test_inverse_sensitivity_exact_and_eps_inf():
    inst = inst_kappa_1d_twopoint(1.5, 0.1)
    with jax.enable_x64():
        data = inst.sample(jax.random.key(11), 101)
        _, info = inverse_sensitivity(jax.random.key(12), inst, data, 1.0, M=64)
        lengths = -2 * np.asarray(info.logits)
        assert np.allclose(lengths, np.round(lengths)) and lengths.min() == 0   # integer Hamming lengths
        xs = inst.empirical_minimizer(data)
        x, info = grad_inverse_sensitivity(jax.random.key(13), inst, data, jnp.inf, rho=0.0, M=64)
        assert abs(float(x[0] - xs[0])) <= 1.0 / 64 + 1e-12         # ε = ∞: the ERM cell
        assert np.isfinite(np.asarray(info.logits)).sum() <= 2


def test_bad_inputs():
    with pytest.raises(ValueError, match="kappa_low"):
        growth_epochs(1000, 1.0)
    with pytest.raises(ValueError, match="kappa_low"):
        plan_epoch_growth_sco(eps=1.0, n=1000, d=1, kappa_low=0.9)
    with pytest.raises(ValueError, match="D"):
        plan_epoch_growth_sco(eps=1.0, n=1000, d=1, D=0.0)
    with pytest.raises(ValueError, match="D"):
        inst_sign_cube(2, D=-1.0)
    with pytest.raises(ValueError, match="phases"):
        plan_epoch_growth_sco(eps=1.0, n=20, d=1, kappa_low=1.5)
    inst = inst_kappa_linear(1, 2.0, 0.5)
    data = np.zeros((5, 1))
    p = EpochParams(0.1, 1.0, 0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="phases"):
        epoch_growth_sco(jax.random.key(0), inst, data, np.zeros(1), p, n_epochs=3, k=2)
    with pytest.raises(ValueError, match="eps"):
        localization_sco(jax.random.key(1), inst, np.zeros((10, 1)), np.zeros(1),
                         LocalizationParams(0.1, -1.0, 0.0, 0.0, 1.0), k=2)
    with pytest.raises(ValueError, match="shape"):
        localization_sco(jax.random.key(2), inst, np.zeros((10, 3)), np.zeros(1),
                         LocalizationParams(0.1, 1.0, 0.0, 0.0, 1.0), k=2)
    with pytest.raises(ValueError, match="kappa"):
        inst_kappa_linear(2, 1.5, 0.5)
    with pytest.raises(ValueError, match="theta"):
        inst_kappa_1d_twopoint(1.5, 0.9)


def test_planners():
    from jaxdp.registry import get_planner

    for name in ("localization_sco", "epoch_growth_sco", "grad_inverse_sensitivity"):
        assert get_planner(name).fn is not None
    p = plan_localization_sco(eps=1.0, delta=0.0, n=10000, d=2)
    assert p.certified and p.params["k"] == math.ceil(math.log(10000))
    g = plan_localization_sco(eps=1.0, delta=1e-6, n=10000, d=2, mode="paper")
    assert g.eps_certified > 1.0 and not g.certified          # the printed Gaussian σ does not certify ε
    c = plan_localization_sco(eps=1.0, delta=1e-6, n=10000, d=2, mode="certified")
    assert c.certified and c.params["gauss_mult"] > g.params["gauss_mult"]
    e = plan_epoch_growth_sco(eps=1.0, n=100000, d=1, kappa_low=1.25)
    assert e.params["n_epochs"] == math.ceil(2 * math.log(100000) / 0.25)
    assert plan_epoch_growth_sco(eps=1.0, n=100000, d=1, kappa_low=1.25, mode="rate").params["n_epochs"] == \
        math.ceil(math.log(100000) / 0.25)
    with pytest.raises(ValueError, match="certified"):
        plan_grad_inverse_sensitivity(eps=1.0, n=1000, d=4, mode="certified")
    with pytest.raises(ValueError, match="mode"):
        plan_localization_sco(eps=1.0, n=1000, d=1, mode="retuned")


def test_solver_gap_miss_refuses_and_normal_runs_are_unchanged():
    """A phase whose solver misses its certified gap (max_solver_rounds=1, 5 iterations, a large step) makes the run
    release NaN, so nothing uncertified is released, and run_sco reports it; certified runs return the phases' own
    output bit for bit, and ε = ∞ runs are never refused. One compiled program per algorithm (traced params)."""
    from jaxdp.sco.localization import _phases

    inst = inst_kappa_regression(2, 1.5)            # κ < 2: no smoothness, the solver has no convergence guarantee
    with jax.enable_x64():
        data = inst.sample(jax.random.key(0), 120)
    blocks = data[:120].reshape(2, 60, inst.m)

    def loc(key, p):
        x0 = jnp.zeros(2, data.dtype)
        x, info = localization_sco(jax.random.clone(key), inst, data, x0, p, k=2, n_iter=5, max_solver_rounds=1)
        ref, _ = _phases(key, inst, blocks.astype(data.dtype), x0, jnp.zeros((1, 2), data.dtype),
                         jnp.full((1,), inst.R, data.dtype), p.eta, p.eps, p.delta, p.gauss_mult, p.phase_offset, 5, 1)
        return dict(x=x, ref=ref, gap_ok=info["certified"], phase_ok=info["gap_ok"])

    keys = seed_keys(0, 3)
    ok = LocalizationParams(0.05, 1.0, 0.0, 0.0, 1.0)
    a = run_sco(loc, keys, ok)
    assert a["gap_ok"].all() and np.isfinite(a["x"]).all()
    np.testing.assert_array_equal(a["x"], a["ref"])              # unchanged: bit-identical to the phases' output
    hard = LocalizationParams(0.5, 1.0, 0.0, 0.0, 0.0)
    with pytest.warns(RuntimeWarning, match="3 of 3 runs refused"):
        b = run_sco(loc, keys, hard)
    assert np.isnan(b["x"]).all() and not b["phase_ok"].all(axis=1).any()
    assert np.isfinite(b["ref"]).all()                            # the uncertified value that was withheld
    c = run_sco(loc, keys, hard._replace(eps=math.inf))           # non-private: nothing to refuse
    assert not c["gap_ok"].any() and np.isfinite(c["x"]).all()

    def epo(key, p):
        x, info = epoch_growth_sco(key, inst, data, jnp.zeros(2, data.dtype), p, n_epochs=2, k=2, n_iter=5,
                                   max_solver_rounds=1)
        return dict(x=x, x_end=info["x_end"], gap_ok=info["certified"], phase_ok=info["gap_ok"])

    with pytest.warns(RuntimeWarning, match="runs refused"):
        e = run_sco(epo, keys, EpochParams(0.5, 1.0, 0.0, 0.0, 0.0))
    first_bad = np.argmin(e["phase_ok"].all(axis=2), axis=1)      # per run: the first epoch with a failing phase
    assert np.isnan(e["x"]).all()
    for r in range(3):
        assert np.isnan(e["x_end"][r, first_bad[r]:]).all() and np.isfinite(e["x_end"][r, :first_bad[r]]).all()


def test_sco_plan_states_the_refusal():
    p = plan_localization_sco(eps=1.0, delta=0.0, n=10000, d=2)
    (cond, held), = p.conditions.items()
    assert held and "else NaN" in cond and "refusal" in cond
    assert any("(eps, delta + e^eps gamma)" in n for n in p.notes)
