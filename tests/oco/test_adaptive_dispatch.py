"""The adaptive-regret study's library entry points (jaxdp.oco.adaptive): any learner and adversary by name, and
the oblivious bound tuned for its own horizon, recomputed here from the papers' formulas (not from the library's
bound functions)."""
import math

import numpy as np
import pytest

from jaxdp.experts import experts_problem
from jaxdp.oco.adaptive import adaptive_adversary, adaptive_learner, tuned_oblivious_bound

D = 4


def test_learners_and_adversaries_of_both_classes_by_name():
    for name, cls in (("hedge", "HedgeParams"), ("dp_ftrl", None)):
        L, p, bound = adaptive_learner(name, D, 64, 1.0, 1e-6)
        assert bound is not None and (cls is None or type(p).__name__ == cls)
    assert adaptive_learner("binary_tree", D, 64, 1.0, 1e-6)[2] is None
    adv, ap, prob = adaptive_adversary("epochs", D, 64, epoch_len=8, patience=2)
    assert type(prob) is type(experts_problem())
    assert len(adaptive_adversary("toward_last", 2, 64)) == 3
    for call in (lambda: adaptive_learner("ucb", D, 64, 1.0, 1e-6), lambda: adaptive_adversary("ucb", D, 64)):
        with pytest.raises(ValueError, match="name must be one of .*got 'ucb'"):
            call()


@pytest.mark.parametrize("T", [64, 256, 4096])
def test_hedge_bound_tuned_for_each_horizon_is_sqrt_t_ln_d_over_2(T):
    """Arora, Hazan & Kale 2012: ln d/η + ηT/8 at η = √(8 ln d/T) is √(T ln d/2), exponent 1/2 in T."""
    assert math.isclose(tuned_oblivious_bound("hedge", D, T, 1.0, 1e-6, 3.0), math.sqrt(T * math.log(D) / 2),
                        rel_tol=1e-6)


def test_l2p_mw_bound_is_its_formula_at_the_plan_for_that_horizon():
    for T in (256, 4096):
        _, p, _ = adaptive_learner("l2p_mw", D, T, 1.0, 1e-6)
        eta, B = float(p.eta), float(p.B)
        assert math.isclose(tuned_oblivious_bound("l2p_mw", D, T, 1.0, 1e-6, 0.0),
                            math.log(D) / eta + eta * T * B / 8, rel_tol=1e-6)


def test_no_bound_or_a_realizable_only_bound_is_nan():
    assert np.isnan(tuned_oblivious_bound("binary_tree", D, 256, 1.0, 1e-6, 0.0))
    assert np.isnan(tuned_oblivious_bound("potential", D, 256, 1.0, 1e-6, 5.0))
    assert np.isfinite(tuned_oblivious_bound("potential", D, 256, 1.0, 1e-6, 0.0))
