"""``exact_law_reference``: the ρ the inverse-sensitivity planner gives the 1-D κ-regression instance under each rule
(Theorem 1's, or 1/n² agnostic), and the continuous law's mean ERM excess at that ρ, recomputed here by direct
quadrature of the density ``∝ exp(-(εn/4L) κ (|t| - ρ)_+^{κ-1})``, ``t = x - x*`` on ``[-1.25, 0.75]``,
``L = κ 1.5^{κ-1}`` (R = 1), of ``|t|^κ``."""
import math

import pytest
from scipy import integrate

from jaxdp.sco import exact_law_reference, growth_instance, plan_grad_inverse_sensitivity


def _mean_excess(kappa, n, eps, rho):
    c = eps * n / (4 * kappa * 1.5 ** (kappa - 1))
    logp = lambda t: -c * kappa * max(abs(t) - rho, 0.0) ** (kappa - 1)   # noqa: E731
    w = (1 / (c * kappa)) ** (1 / (kappa - 1))
    brk = [t for t in sorted({-rho, rho, 0.0, -w, w, -10 * w, 10 * w}) if -1.25 < t < 0.75]
    z = integrate.quad(lambda t: math.exp(logp(t)), -1.25, 0.75, points=brk, limit=400)[0]
    m = integrate.quad(lambda t: abs(t) ** kappa * math.exp(logp(t)), -1.25, 0.75, points=brk, limit=400)[0]
    return m / z


@pytest.mark.parametrize("kappa,rule", [(2.0, "theorem"), (3.0, "agnostic"), (4.0, "theorem")])
def test_reference_is_the_planned_rho_and_the_laws_mean(kappa, rule):
    n, eps = 1000, 0.5
    rho, mean = exact_law_reference(kappa, n, eps, rule)
    inst = growth_instance("regression", kappa, 1, n)
    plan = plan_grad_inverse_sensitivity(eps=eps, d=1, n=n, L=inst.L, D=2 * inst.R, lam=inst.lam, kappa=kappa,
                                         rho_rule=rule, M=2)
    assert rho == float(plan.params["rho"])
    if rule == "agnostic":
        assert rho == pytest.approx(1 / n ** 2)
    assert mean == pytest.approx(_mean_excess(kappa, n, eps, rho), rel=1e-6)
