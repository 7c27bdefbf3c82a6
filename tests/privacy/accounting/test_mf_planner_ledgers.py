"""Reference ledgers for the planners that take a continual-counting mechanism (``noise=``), derived from the
algorithm and not from the planners' code.

A factorization ``A = B C`` of the prefix-sum matrix releases ``B (C x + z)``; with single participation one
data point changes one column of ``x``, so the release is the Gaussian (Laplace) mechanism on ``C x`` with
sensitivity ``Δ · max_j ||C[:, j]||`` in l2 (l1). The matrices come from the mechanism's ``dense(n)`` (whose
product is checked here to be the prefix-sum matrix); the column norms, the sensitivity of one data point and the
privacy of the Gaussian mechanism (Balle and Wang 2018, "Improving the Gaussian mechanism for differential
privacy", Thm 8: the exact (ε, δ) curve) are computed here with NumPy and SciPy.

* DP-FTRL (OCO): gradients of norm ≤ L, replace-one: ``Δ₂ = 2L``; noise ``σ`` per coordinate.
* Tree-based FTRL experts: a loss vector in ``[0, 1]^d`` changes by ``√d`` in l2 (``d`` in l1); the Gaussian
  noise scale is ``scale``, the Laplace scale ``b`` gives ``ε = Δ₁ sens₁ / b``.

The certificate of every plan must be at least the reference ε (never under-claimed) and, since both compute
the same exact quantity, within 1e-3 of it.
"""
import math

import numpy as np
import pytest

scipy_stats = pytest.importorskip("scipy.stats")
from scipy import optimize  # noqa: E402

from jaxdp.experts.tree_ftrl import plan_tree_ftrl_experts  # noqa: E402
from jaxdp.privacy.mechanisms.matrix_factorization import (  # noqa: E402
    BinaryTree, HonakerTree, SqrtToeplitz, stored_banded, stored_blt)
from jaxdp.oco import plan_dp_ftrl  # noqa: E402

T = 512
MECHS = {"tree": BinaryTree(), "honaker": HonakerTree(), "sqrt_toeplitz": SqrtToeplitz(),
         "banded": stored_banded(1000, 4, "mean"), "blt": stored_blt(1000, 3)}


def _column_norm(mech, n: int, ord_: int) -> float:
    B, C = mech.dense(n)
    A = np.tril(np.ones((n, n)))
    assert np.allclose(B @ C, A, atol=1e-6), f"{mech!r}: B C is not the prefix-sum matrix"
    return float(np.max(np.linalg.norm(C, ord=ord_, axis=0)))


def _gaussian_delta(eps: float, mu: float) -> float:
    """δ(ε) of the Gaussian mechanism with sensitivity/σ = μ (Balle-Wang Thm 8)."""
    N = scipy_stats.norm
    return float(N.cdf(mu / 2 - eps / mu) - math.exp(eps) * N.cdf(-mu / 2 - eps / mu))


def _gaussian_eps(mu: float, delta: float) -> float:
    if _gaussian_delta(0.0, mu) <= delta:
        return 0.0
    return float(optimize.brentq(lambda e: _gaussian_delta(e, mu) - delta, 0.0, 100.0 * (1 + mu * mu), xtol=1e-12))


@pytest.mark.parametrize("name", sorted(MECHS))
@pytest.mark.parametrize("setting", ["realizable", "general"])
def test_dp_ftrl_reference(name, setting):
    mech, L, delta = MECHS[name], 2.0, 1e-6
    for eps in (0.5, 4.0):
        plan = plan_dp_ftrl(eps=eps, delta=delta, T=T, d=4, L=L, setting=setting, mode="certified", noise=mech)
        mu = 2.0 * L * _column_norm(mech, T, 2) / plan.params["sigma"]
        ref = _gaussian_eps(mu, delta)
        assert plan.eps_certified >= ref * (1 - 1e-6), (name, eps, plan.eps_certified, ref)
        assert plan.eps_certified <= ref * (1 + 1e-3) + 1e-9, (name, eps, plan.eps_certified, ref)
        assert plan.eps_certified <= eps * (1 + 1e-9)


@pytest.mark.parametrize("name", sorted(MECHS))
def test_tree_experts_reference(name):
    mech, d = MECHS[name], 8
    gauss = plan_tree_ftrl_experts(eps=1.0, delta=1e-6, T=T, d=d, mode="certified", noise=mech)
    ref = _gaussian_eps(math.sqrt(d) * _column_norm(mech, T, 2) / gauss.params["scale"], 1e-6)
    assert ref * (1 - 1e-6) <= gauss.eps_certified <= ref * (1 + 1e-3) + 1e-9, (name, gauss.eps_certified, ref)
    lap = plan_tree_ftrl_experts(eps=1.0, delta=0.0, T=T, d=d, mode="certified", noise=mech)
    ref_l = d * _column_norm(mech, T, 1) / lap.params["scale"]
    assert lap.delta_certified == 0.0
    assert ref_l * (1 - 1e-9) <= lap.eps_certified <= ref_l * (1 + 1e-9), (name, lap.eps_certified, ref_l)


def test_reference_catches_a_halved_sensitivity():
    """The reference is sharp enough to catch a plan whose noise was calibrated to half the column norm."""
    mech, L, delta = MECHS["blt"], 2.0, 1e-6
    plan = plan_dp_ftrl(eps=1.0, delta=delta, T=T, d=4, L=L, mode="certified", noise=mech)
    ref_half = _gaussian_eps(2.0 * L * _column_norm(mech, T, 2) / (plan.params["sigma"] / 2.0), delta)
    assert ref_half > plan.eps_certified * 1.5
