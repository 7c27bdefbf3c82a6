"""DP-FTRL's per-mechanism planning (``plan_dp_ftrl_point``) and the bound recovered from its λ
(``dp_ftrl_bound_of_lambda``), against the formulas derived by hand: the realizable λ balances
``E||b||^2 = d sigma^2 V`` (``lambda = 32 beta + (beta T E||b||^2 / D^2)^{1/3}``), and the bounds are
``beta D^2 + D^2 (lambda - 32 beta)`` (realizable) and ``2D sqrt(T L (L + sqrt(E||b||^2)))`` with ``L = 2D``."""
import math

import pytest

from jaxdp.oco import dp_ftrl_bound_of_lambda, plan_dp_ftrl, plan_dp_ftrl_point, squared_loss_lipschitz
from jaxdp.privacy.mechanisms.matrix_factorization import get_mechanism


@pytest.mark.parametrize("name", ["tree", "sqrt_toeplitz", "blt"])
def test_realizable_lambda_balances_the_noise_added_and_the_bound_recovers_it(name):
    T, d, D, beta, eps, delta = 512, 4, 1.5, 1.0, 4.0, 1e-6
    mech = get_mechanism(name, T, bands=16)
    lam, sigma, clip, eps_c, V, _ = plan_dp_ftrl_point(mech, eps=eps, delta=delta, T=T, d=d, D=D, beta=beta)
    assert clip == squared_loss_lipschitz(D) == 3.0 and eps_c <= eps * (1 + 1e-9)
    Eb2 = d * sigma ** 2 * V
    assert lam == pytest.approx(32 * beta + (beta * T * Eb2 / D ** 2) ** (1 / 3), rel=1e-12)
    eb2, bound = dp_ftrl_bound_of_lambda(lam, T, D, beta, True)
    assert eb2 == pytest.approx(Eb2, rel=1e-9)
    assert float(bound) == pytest.approx(beta * D ** 2 + D ** 2 * (lam - 32 * beta), rel=1e-12)
    _, noisy = dp_ftrl_bound_of_lambda(lam, T, D, beta, False)
    assert float(noisy) == pytest.approx(2 * D * math.sqrt(T * 3.0 * (3.0 + math.sqrt(Eb2))), rel=1e-12)


def test_general_lambda_is_the_planners():
    mech = get_mechanism("honaker", 256)
    lam = plan_dp_ftrl_point(mech, eps=2.0, delta=1e-6, T=256, d=3, D=1.0, beta=1.0, realizable=False)[0]
    plan = plan_dp_ftrl(eps=2.0, delta=1e-6, T=256, d=3, L=2.0, D=1.0, beta=1.0, setting="general", noise=mech)
    assert lam == plan.params["lam"]
