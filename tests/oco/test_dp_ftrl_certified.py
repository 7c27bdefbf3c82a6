"""``plan_dp_ftrl_certified``: the per-mechanism plan when it certifies the ε asked for, and a ValueError naming
``eps``, its value and the certified one when it does not (mechanisms are compared at equal certified privacy)."""
import importlib

import pytest

from jaxdp.privacy.mechanisms.matrix_factorization import get_mechanism

F = importlib.import_module("jaxdp.oco.dp_ftrl")     # the module (``jaxdp.oco.dp_ftrl`` is also the learner's name)


def test_a_certified_plan_is_the_points_plan():
    mech = get_mechanism("tree", 256)
    kw = dict(eps=2.0, delta=1e-6, T=256, d=3, D=1.0, beta=1.0)
    plan = F.plan_dp_ftrl_certified(mech, **kw)
    assert plan == F.plan_dp_ftrl_point(mech, **kw) and plan[3] <= 2.0 * (1 + 1e-9)


def test_a_plan_certifying_more_than_eps_is_refused(monkeypatch):
    mech = get_mechanism("tree", 256)
    real = F.plan_dp_ftrl_point

    def loose(*a, **k):   # the same plan, reporting a certified ε above the one asked for
        lam, sigma, clip, eps_c, V, err = real(*a, **k)
        return lam, sigma, clip, 2.5, V, err

    monkeypatch.setattr(F, "plan_dp_ftrl_point", loose)
    with pytest.raises(ValueError, match=r"eps=2\.0 is not certified.*certified 2\.5"):
        F.plan_dp_ftrl_certified(mech, eps=2.0, delta=1e-6, T=256, d=3, D=1.0, beta=1.0)
