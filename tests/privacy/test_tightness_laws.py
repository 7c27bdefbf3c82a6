"""Exact laws added for the tightness table (docs/results/tightness.md): tree-FTRL at d = 2 and the lazy sketch.

Each law is checked (i) against Monte Carlo frequencies of the REAL learner (``jaxdp`` step functions run by
``learner_mechanism``, fixed seeds) with a chi-square test at p > 1e-6, so a correct law fails with probability
below 1e-6, and (ii) against an independent NumPy enumeration written from the algorithm's description on a tiny
case (dense-grid integration over the node noises; explicit enumeration of every coin), to 1e-6 absolute.
"""
from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp.experts.sketch import private_lazy_sketch, sketch_params
from jaxdp.experts.tree_ftrl import TreeFTRLParams, tree_ftrl_experts
from jaxdp.privacy.audit import exact as X
from _helpers import chi2_p
from jaxdp.privacy.audit.learners import action_code, learner_mechanism

P_ACCEPT = 1e-6


def _mc_codes(learner, params, losses, n, seed):
    mech = learner_mechanism(learner, params, output=action_code(2))
    keys = jax.random.split(jax.random.key(seed), n)
    return np.asarray(jax.jit(jax.vmap(mech, in_axes=(0, None)))(keys, jnp.asarray(losses, jnp.float32)))


LOSSES = np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])


@pytest.mark.parametrize("noise, scale, eta", [("laplace", 1.5, 1.2), ("gaussian", 1.0, 1.5)])
def test_tree_ftrl_law_matches_the_learner(noise, scale, eta):
    T = LOSSES.shape[0]
    codes, probs = X.tree_ftrl_law(LOSSES, eta=eta, scale=scale, noise=noise)
    assert probs.sum() == pytest.approx(1.0, abs=1e-10) and codes.size == 2 ** (T + 1)
    got = _mc_codes(tree_ftrl_experts(2, T, noise), TreeFTRLParams(eta=jnp.float32(eta), scale=jnp.float32(scale)),
                    LOSSES, 300_000, 7)
    counts = np.array([(got == c).sum() for c in codes])
    assert counts.sum() == got.size
    assert chi2_p(counts, probs) > P_ACCEPT


def _lap_diff_density(b, grid):
    """Density of N0 - N1, N_i ~ Lap(b), by numerical convolution on ``grid`` (not the closed form)."""
    h = grid[1] - grid[0]
    f = np.exp(-np.abs(grid) / b) / (2 * b)
    g = np.convolve(f, f[::-1], mode="same") * h
    return g / (g.sum() * h)


def test_tree_ftrl_law_matches_a_grid_enumeration():
    """T = 3: Z_1 = n_1, Z_2 = n_2, Z_3 = n_2 + n_3 (the dyadic decomposition); the expectation of the product of
    the three softmax probabilities as a dense Riemann sum over (n_1, n_2, n_3)."""
    b, eta = 1.0, 0.8
    L = LOSSES[:3]
    codes, probs = X.tree_ftrl_law(L, eta=eta, scale=b, noise="laplace")
    grid = np.linspace(-40, 40, 4001)
    h = grid[1] - grid[0]
    dens = _lap_diff_density(b, grid) * h
    D = np.cumsum(L[:, 0] - L[:, 1])
    sig = lambda u: 1.0 / (1.0 + np.exp(-u))                    # noqa: E731
    ref = {}
    for xs in itertools.product((0, 1), repeat=3):             # x_2, x_3, x_4
        f = [lambda z, t=t, x=x: sig((2 * x - 1) * eta * (D[t] + z)) for t, x in enumerate(xs)]
        a = (f[0](grid) * dens).sum()
        inner = np.array([(f[2](z2 + grid) * dens).sum() for z2 in grid[::8]])
        bsum = (f[1](grid[::8]) * inner * dens[::8]).sum() * 8
        for x1 in (0, 1):
            ref[x1 + 2 * xs[0] + 4 * xs[1] + 8 * xs[2]] = 0.5 * a * bsum
    for c, p in zip(codes, probs):
        assert p == pytest.approx(ref[int(c)], abs=1e-5)


def test_tree_ftrl_law_refuses_bad_input():
    with pytest.raises(ValueError, match="losses"):
        X.tree_ftrl_law(np.zeros((9, 2)), eta=1.0, scale=1.0)
    with pytest.raises(ValueError, match="noise"):
        X.noise_difference_quadrature("cauchy", 1.0)
    with pytest.raises(ValueError, match="scale"):
        X.noise_difference_quadrature("laplace", 0.0)


def test_sketch_law_matches_the_learner():
    L = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    eta, p = 0.7, 0.3
    codes, probs = X.lazy_sketch_law(L, eta=eta, p=p)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    got = _mc_codes(private_lazy_sketch(2), sketch_params(eta, p), L, 300_000, 3)
    counts = np.array([(got == c).sum() for c in codes])
    assert counts.sum() == got.size
    assert chi2_p(counts, probs) > P_ACCEPT


def test_sketch_law_matches_coin_enumeration():
    """Every outcome of the coins S (accept), S' (not fake) and the fresh draw, enumerated from the description:
    keep x iff S and S' (S w.p. min(1, μ̄_t(x)/μ̄_{t-1}(x) e^{-η}), S' w.p. 1 - p), else x ~ μ̄_t."""
    L = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    eta, p, d = 0.9, 0.4, 2
    codes, probs = X.lazy_sketch_law(L, eta=eta, p=p)
    law = dict(zip(codes.tolist(), probs.tolist()))

    def mu(cum):
        w = np.exp(-eta * cum)
        return w / w.sum()

    ref: dict = {}

    def walk(t, x, cum, code, pr):
        if t == len(L):
            ref[code] = ref.get(code, 0.0) + pr
            return
        new = cum + L[t]
        acc = min(1.0, mu(new)[x] / mu(cum)[x] * np.exp(-eta))
        for S, pS in ((True, acc), (False, 1 - acc)):
            for Sp, pSp in ((True, 1 - p), (False, p)):
                if S and Sp:
                    walk(t + 1, x, new, code + x * d ** (t + 1), pr * pS * pSp)
                else:
                    for y in range(d):
                        walk(t + 1, y, new, code + y * d ** (t + 1), pr * pS * pSp * mu(new)[y])

    for x0 in range(d):
        walk(0, x0, np.zeros(d), x0, 1.0 / d)
    assert set(ref) == set(law)
    for c, v in ref.items():
        assert law[c] == pytest.approx(v, abs=1e-12)


@pytest.mark.parametrize("guard", [False, True])
def test_potential_law_matches_the_learner(guard):
    from jaxdp.experts.potential import guarded_potential_experts, potential_experts, potential_params

    kw = dict(eps0=1.0, eta=0.5, K=2, alpha=0.25, s_phi=2.0)
    codes, probs = X.potential_law(LOSSES, guard=guard, **kw)
    assert probs.sum() == pytest.approx(1.0, abs=1e-10)
    learner = guarded_potential_experts(2) if guard else potential_experts(2)
    got = _mc_codes(learner, potential_params(**kw), LOSSES, 300_000, 11 + guard)
    counts = np.array([(got == c).sum() for c in codes])
    assert counts.sum() == got.size                      # no action sequence outside the enumerated ones
    assert chi2_p(counts, probs) > P_ACCEPT


def test_potential_law_matches_a_grid_enumeration():
    """T = 2, K = 1 (one AboveThreshold instance, no restart): the answers are independent given τ̂, so
    P = E_τ̂ Π_t P(answer_t | τ̂), integrated on a dense uniform grid; the resample is softmax(-η cum)."""
    L = np.array([[1.0, 0.0], [0.0, 1.0]])
    eps0, eta, alpha, s_phi = 1.0, 0.8, 0.2, 2.0
    codes, probs = X.potential_law(L, eps0=eps0, eta=eta, K=1, alpha=alpha, s_phi=s_phi)
    b_thr, b_q = 2 / eps0, 4 / eps0
    thr = 2 * alpha / (s_phi * eta)
    grid = np.linspace(thr - 80, thr + 80, 400_001)
    h = grid[1] - grid[0]
    dens = np.exp(-np.abs(grid - thr) / b_thr) / (2 * b_thr) * h
    up = lambda q: np.where(grid - q <= 0, 1 - 0.5 * np.exp((grid - q) / b_q), 0.5 * np.exp(-(grid - q) / b_q))  # noqa: E731
    lse = lambda c: np.log(np.exp(-eta * c).sum()) - np.log(2)                                                     # noqa: E731
    cum1, cum2 = L[0], L[0] + L[1]
    q1, q2 = -lse(cum1) / (s_phi * eta), -lse(cum2) / (s_phi * eta)
    soft = lambda c: np.exp(-eta * c) / np.exp(-eta * c).sum()                                                     # noqa: E731
    ref: dict = {}
    for x1 in (0, 1):
        add = lambda code, p: ref.__setitem__(code, ref.get(code, 0.0) + 0.5 * p)                                 # noqa: E731
        p_none = float(((1 - up(q1)) * (1 - up(q2)) * dens).sum())
        add(x1 + 2 * x1 + 4 * x1, p_none)
        p_top1 = float((up(q1) * dens).sum())
        for y in (0, 1):
            add(x1 + 2 * y + 4 * y, p_top1 * soft(cum1)[y])
        p_top2 = float(((1 - up(q1)) * up(q2) * dens).sum())
        for y in (0, 1):
            add(x1 + 2 * x1 + 4 * y, p_top2 * soft(cum2)[y])
    law = dict(zip(codes.tolist(), probs.tolist()))
    assert set(law) == set(ref)
    for c, v in ref.items():
        assert law[c] == pytest.approx(v, abs=1e-6)
