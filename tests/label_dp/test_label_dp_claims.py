"""The claims :mod:`jaxdp.label_dp.rates` states for the study pages: the slope LABEL Table 1 gives each learner's
excess in N (checked against the Table's exponents written out here) and the (β, γ) pairs' check text."""
import math

import numpy as np

from jaxdp.label_dp import claimed_slope, label_rates, smoothness_pairs_error


def test_claimed_slope_per_setting():
    a, b = -2 / 3, -1.0                                     # regression: a = 2/3, central b = 2β/(β+d) = 1
    assert claimed_slope("regression", "nonprivate", a, a) == (a, a)
    assert claimed_slope("regression", "local", a, a) == (a, a)
    assert claimed_slope("heavy", "local", a, -0.609) == (-0.609, -0.609)
    assert claimed_slope("regression", "central", a, b) == (b, a)
    assert claimed_slope("bump_cls", "local", a, a, -0.5) == (-0.5, -0.5)
    assert math.isnan(claimed_slope("bump_reg", "central", a, b)[0])   # no forced slope given


def test_central_slope_lies_in_its_claim():
    """The central rate N^{-a} + (εN)^{-b}'s local log-log slope stays between the claimed ends at every N."""
    lo, hi = claimed_slope("regression", "central", -2 / 3, -1.0)
    N = np.geomspace(1.0, 1e9, 300)   # around the crossover N_c = 0.1^{-3} = 1000
    s = np.diff(np.log(label_rates("regression", "central", N, 0.1))) / np.diff(np.log(N))
    assert np.all(s >= lo - 1e-12) and np.all(s <= hi + 1e-12) and s[0] < -0.95 and s[-1] > -0.7


def test_smoothness_pairs_error():
    assert smoothness_pairs_error("1:1,0.5:1") is None
    assert "BETA:GAMMA" in smoothness_pairs_error("1:x") and "'1:x'" in smoothness_pairs_error("1:x")
    assert "finite and > 0" in smoothness_pairs_error("1:0")
