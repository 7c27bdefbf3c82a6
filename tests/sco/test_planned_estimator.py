"""``jaxdp.sco.planned_estimator``: each algorithm at its planner's parameters (the plan it returns is the planner's
own call on the instance's L and D = 2R), and an unknown algorithm refused by name. No JAX compile."""
import pytest

from jaxdp.sco import (EpochParams, LocalizationParams, growth_instance, plan_epoch_growth_sco,
                       plan_grad_inverse_sensitivity, plan_localization_sco, planned_estimator)


def test_each_algorithm_at_its_planners_parameters():
    inst = growth_instance("regression", 3.0, 1, 1000)
    kw = dict(eps=0.5, d=1, n=1000, L=inst.L, D=2 * inst.R)
    fn, args, plan = planned_estimator("epoch", inst, 1000, eps=0.5, kappa_low=1.5)
    assert callable(fn) and isinstance(args, EpochParams)
    assert plan == plan_epoch_growth_sco(delta=0.0, kappa_low=1.5, mode="rate", **kw).params
    assert float(args.eta0) == float(plan["eta0"]) and float(args.eps) == float(plan["eps"])
    _, args, plan = planned_estimator("localization", inst, 1000, eps=0.5, delta=1e-6)
    assert isinstance(args, LocalizationParams)
    assert plan == plan_localization_sco(delta=1e-6, mode="rate", **{**kw}).params
    _, args, plan = planned_estimator("grad_inv", inst, 1000, eps=0.5, rho_rule="agnostic")
    assert args == 0.5
    assert plan == plan_grad_inverse_sensitivity(lam=inst.lam, kappa=inst.kappa, rho_rule="agnostic", M=2, **kw).params


def test_unknown_algorithm_is_refused_by_name():
    with pytest.raises(ValueError, match="algo must be"):
        planned_estimator("sgd", growth_instance("regression", 3.0, 1, 100), 100, eps=1.0)
