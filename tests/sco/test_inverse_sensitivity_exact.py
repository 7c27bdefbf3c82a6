"""Exact 1-D sampling of the ρ-smooth gradient inverse-sensitivity mechanism (GROWTH Theorem 1).

Two laws are checked against values computed independently of the sampler: the grid law against the
cell probabilities of ``jaxdp.sco.grad_inverse_sensitivity`` (softmax of its logits, chi-square), and
the continuous law on the 1-D noiseless regression, whose density ``∝ exp(-c κ(|x - x*| - ρ)_+^{κ-1})``
does not depend on the data, against its CDF by quadrature (Kolmogorov–Smirnov). One compile each.
"""
import jax
import numpy as np
import pytest
from scipy import integrate, stats

from jaxdp.sco import grad_inverse_sensitivity, inst_kappa_1d_twopoint, inst_kappa_regression
from jaxdp.sco.inverse_sensitivity import grad_inverse_sensitivity_exact

S = 6000


def _draws(inst, data, eps, rho, M, center=None):
    f = jax.jit(jax.vmap(lambda k: grad_inverse_sensitivity_exact(k, inst, data, eps, rho=rho, M=M, center=center)))
    with jax.enable_x64():
        x, info = f(jax.random.split(jax.random.key(11), S))
    assert bool(np.all(info.accepted))
    return np.asarray(x)[:, 0], info


def test_grid_law_equals_the_grid_mechanism():
    """Two-point instance (kinks: a piecewise-constant density), a window of 2 cells, and an anchor far from
    the minimizer (the law may not depend on it)."""
    inst = inst_kappa_1d_twopoint(1.5, 0.2)
    M, eps, rho = 32, 1.0, 0.07
    with jax.enable_x64():
        data = inst.sample(jax.random.key(3), 30)
        _, info = grad_inverse_sensitivity(jax.random.key(1), inst, data, eps, rho=rho, M=M)
    p = np.exp(np.asarray(info.logits) - np.max(info.logits))
    p /= p.sum()
    x, _ = _draws(inst, data, eps, rho, M, center=-0.4)
    cells = np.clip(np.floor((x + inst.R) / (2 * inst.R / M)).astype(int), 0, M - 1)
    cnt = np.bincount(cells, minlength=M)
    keep = p * S >= 5
    chi = float(((cnt[keep] - S * p[keep]) ** 2 / (S * p[keep])).sum())
    assert stats.chi2.sf(chi, keep.sum() - 1) > 1e-3, (chi, keep.sum())
    assert cnt[~keep].sum() <= max(10, 4 * S * p[~keep].sum())
    # uniform inside the cell: the offsets within cells are U[0, 1)
    off = (x + inst.R) / (2 * inst.R / M) - cells
    assert stats.kstest(off, "uniform").pvalue > 1e-3


@pytest.mark.parametrize("kappa,rho", [(3.0, 0.02)])
def test_continuous_law_matches_quadrature(kappa, rho):
    inst = inst_kappa_regression(1, kappa)
    n, eps = 40, 2.0
    with jax.enable_x64():
        data = inst.sample(jax.random.key(5), n)
    x, info = _draws(inst, data, eps, rho, None)
    c = eps * n / (4 * inst.L)
    xs = inst.xstar[0]
    dens = lambda t: np.exp(-c * kappa * max(abs(t - xs) - rho, 0.0) ** (kappa - 1))
    grid = np.linspace(-inst.R, inst.R, 801)
    cdf = np.concatenate([[0.0], np.cumsum([integrate.quad(dens, a, b)[0] for a, b in zip(grid[:-1], grid[1:])])])
    cdf /= cdf[-1]
    assert stats.kstest(x, lambda z: np.interp(z, grid, cdf)).pvalue > 1e-3
    assert float(np.mean(info.rounds)) < 4            # the geometric partition keeps acceptance high
