"""The adaptive-regret setups (jaxdp.experts.adaptive_setups, jaxdp.oco.adaptive): every name builds a learner
and an adversary that run, each bound is the formula it names (recomputed here from the papers' expressions, not
from the library function), and an unknown name is refused naming the parameter."""
import math

import numpy as np
import pytest

from jaxdp import seed_keys, simulate
from jaxdp.experts import (
    ADAPTIVE_EXPERTS_ADVERSARIES, ADAPTIVE_EXPERTS_LEARNERS, adaptive_experts_adversary, adaptive_experts_learner,
)
from jaxdp.oco.adaptive import (
    ADAPTIVE_OCO_ADVERSARIES, ADAPTIVE_OCO_LEARNERS, adaptive_oco_adversary, adaptive_oco_learner,
)

D, T = 4, 64


@pytest.mark.parametrize("name", ADAPTIVE_EXPERTS_LEARNERS)
def test_every_experts_learner_runs_against_every_adversary(name):
    L, p, bound = adaptive_experts_learner(name, D, T, 1.0, 1e-6)
    for adv_name in ADAPTIVE_EXPERTS_ADVERSARIES:
        adv, ap = adaptive_experts_adversary(adv_name, D, T, epoch_len=8, patience=2)
        from jaxdp.experts import experts_problem

        r = simulate(L, adv, experts_problem(), p, ap, seed_keys(0, 2), T)
        assert np.isfinite(np.asarray(r["regret"])).all(), (name, adv_name)
        assert (np.asarray(r["regret"]) <= T).all()
    if bound is not None:
        b = bound(T, np.zeros(2))
        assert b.shape == (2,) and (np.isnan(b) | (b > 0)).all()


def test_hedge_and_dartboard_bound_is_sqrt_t_ln_d_over_2():
    """Hedge's bound at its own tuning eta = sqrt(8 ln d / T) is sqrt(T ln d / 2) (Arora, Hazan & Kale 2012)."""
    for name in ("hedge", "dartboard"):
        _, p, bound = adaptive_experts_learner(name, D, T, 1.0, 1e-6)
        assert math.isclose(float(p.eta), math.sqrt(8 * math.log(D) / T), rel_tol=1e-6)
        assert math.isclose(float(bound(T, np.zeros(1))[0]), math.sqrt(T * math.log(D) / 2), rel_tol=1e-6)


def test_l2p_mw_bound_is_ln_d_over_eta_plus_eta_t_b_over_8():
    _, p, bound = adaptive_experts_learner("l2p_mw", D, T, 1.0, 1e-6)
    eta, B = float(p.eta), float(p.B)
    assert math.isclose(float(bound(T, np.zeros(1))[0]), math.log(D) / eta + eta * T * B / 8, rel_tol=1e-6)


def test_potential_bound_holds_for_realizable_streams_only():
    _, _, bound = adaptive_experts_learner("potential", D, T, 1.0, 1e-6)
    b = bound(T, np.array([0.0, 3.0]))
    assert np.isfinite(b[0]) and np.isnan(b[1])


@pytest.mark.parametrize("name", ADAPTIVE_OCO_LEARNERS)
def test_every_oco_learner_runs_against_every_adversary(name):
    L, p, bound = adaptive_oco_learner(name, 2, T, 1.0, 1e-6)
    for adv_name in ADAPTIVE_OCO_ADVERSARIES:
        adv, ap, prob = adaptive_oco_adversary(adv_name, 2)
        r = simulate(L, adv, prob, p, ap, seed_keys(0, 2), T)
        assert np.isfinite(np.asarray(r["regret"])).all(), (name, adv_name)
    assert (bound(T, np.zeros(3)) > 0).all()


@pytest.mark.parametrize("call, match", [
    (lambda: adaptive_experts_learner("ucb", D, T, 1.0, 1e-6), "name must be one of .*got 'ucb'"),
    (lambda: adaptive_experts_adversary("linear", D, T), "name must be one of .*got 'linear'"),
    (lambda: adaptive_oco_learner("hedge", 2, T, 1.0, 1e-6), "name must be one of .*got 'hedge'"),
    (lambda: adaptive_oco_adversary("epochs", 2), "name must be one of .*got 'epochs'"),
    (lambda: adaptive_experts_adversary("epochs", D, T, epoch_len=0), "epoch_len must be an integer >= 1, got 0"),
    (lambda: adaptive_experts_adversary("switch_watcher", D, T, patience=0), "patience must be an integer >= 1"),
])
def test_unknown_names_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()
