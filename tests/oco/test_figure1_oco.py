"""LAZY Figure 1(a),(b) for DP-OCO (``jaxdp.oco.l2p_rmw``): the panels' dimensions and exponents against the
figure's closed forms, each point's setup against its planners, bad input, and one small run."""
from __future__ import annotations

import math

import numpy as np
import pytest

from jaxdp.core import seed_keys
from jaxdp.oco import (
    LINEAR_MODES, figure1_dimension, figure1_oco_exponent, figure1_oco_point, figure1_oco_setup, plan_dp_ftrl,
    plan_l2p_rmw,
)


def test_dimension_of_each_panel():
    # (a): d = ceil(ln T); (b): d = ceil(T^(1/3)); at least 2
    assert [figure1_dimension("a", T) for T in (2, 1024, 16384)] == [2, 7, 10]
    assert [figure1_dimension("b", T) for T in (2, 1000, 1024, 16384)] == [2, 10, 11, 26]


@pytest.mark.parametrize("alpha", [0.0, 0.1, 0.3, 0.5, 0.9])
def test_exponents_are_figure_1s(alpha):
    # Figure 1 (logs and constants ignored): L2P max(1/2, 1/3 + 2a/3) in (a), 1/2 + 2a/3 in (b); DP-FTRL
    # 1/2 + a/2 in (a), 7/12 + a/2 in (b); non-private FTRL 1/2; none above 1 (regret is at most linear in T)
    want = {("l2p_rmw", "a"): max(0.5, 1 / 3 + 2 * alpha / 3), ("l2p_rmw", "b"): 0.5 + 2 * alpha / 3,
            ("dp_ftrl", "a"): 0.5 + alpha / 2, ("dp_ftrl", "b"): 7 / 12 + alpha / 2,
            ("nonprivate", "a"): 0.5, ("nonprivate", "b"): 0.5}
    for (learner, panel), e in want.items():
        assert figure1_oco_exponent(learner, panel, alpha) == pytest.approx(min(e, 1.0), abs=1e-12)


def test_setup_follows_the_planners():
    T, d, alpha, radius, delta = 256, 6, 0.5, 0.5, 1e-6
    eps = T ** -alpha
    plan = plan_l2p_rmw(eps=eps, delta=delta, T=T, d=d, mode="rate", L=1.0, D=2 * radius).params
    s = figure1_oco_setup("l2p_rmw", T, d, alpha, adversary="alternating")
    assert s["extras"]["B"] == plan["B"] and s["diagnostics"] is None
    assert s["extras"]["lag_prediction"] == pytest.approx(T * (plan["B"] - 1) / (4 * plan["lam"]), rel=1e-12)
    assert math.isnan(s["extras"]["mala_steps"]) and math.isnan(s["extras"]["mala_step_size"])
    ap = s["adversary_params"]
    assert int(ap.mode) == LINEAR_MODES.index("alternating") and int(ap.B) == plan["B"]
    assert float(ap.bias) == pytest.approx(0.2) and float(ap.L) == 1.0
    ftrl = figure1_oco_setup("nonprivate", T, d, alpha)["params"]      # λ = √T / radius, no noise
    assert float(ftrl.lam) == pytest.approx(math.sqrt(T) / radius) and float(ftrl.sigma) == 0.0
    dp = figure1_oco_setup("dp_ftrl", T, d, alpha)["params"]
    want = plan_dp_ftrl(eps=eps, delta=delta, T=T, d=d, L=1.0, D=radius, setting="general").params
    assert float(dp.lam) == pytest.approx(want["lam"], rel=1e-6) and float(dp.sigma) == pytest.approx(want["sigma"],
                                                                                                       rel=1e-6)


@pytest.mark.parametrize("call,name", [
    (lambda: figure1_dimension("c", 64), "panel"),
    (lambda: figure1_oco_exponent("hedge", "a", 0.5), "learner"),
    (lambda: figure1_oco_exponent("l2p_rmw", "c", 0.5), "panel"),
    (lambda: figure1_oco_setup("l2p_rmw", 64, 2, 0.5, loss="hinge"), "loss"),
    (lambda: figure1_oco_setup("dp_ftrl", 64, 2, 0.5, loss="absolute"), "learner"),
    (lambda: figure1_oco_setup("l2p_rmw", 64, 2, 0.5, adversary="worst"), "mode"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_a_point_runs_every_seed():
    keys = seed_keys(3, np.arange(3))
    out = figure1_oco_point(keys, "nonprivate", 32, 2, 0.5)
    assert set(out) == {"regret", "B", "lag_prediction", "switches", "mala_acceptance", "mala_outside", "mala_steps",
                        "mala_step_size"}
    assert all(np.shape(v) == (3,) for v in out.values())
    assert np.isfinite(np.asarray(out["regret"])).all() and np.isnan(out["mala_acceptance"]).all()
    # the runs are a function of the keys: the same keys give the same regrets, other keys others
    again, other = figure1_oco_point(keys, "nonprivate", 32, 2, 0.5), figure1_oco_point(
        seed_keys(4, np.arange(3)), "nonprivate", 32, 2, 0.5)
    assert np.array_equal(np.asarray(again["regret"]), np.asarray(out["regret"]))
    assert not np.array_equal(np.asarray(other["regret"]), np.asarray(out["regret"]))
