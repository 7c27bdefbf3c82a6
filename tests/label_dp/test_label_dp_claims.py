"""The claims :mod:`jaxdp.label_dp.rates` states for the study pages: the slope LABEL Table 1 gives each learner's
excess in N (checked against the Table's exponents written out here) and the (β, γ) pairs' check text."""
import math

import numpy as np

from jaxdp.label_dp import claimed_slope, effective_sample_fit, label_rates, smoothness_pairs_error


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


def test_effective_sample_fit_is_the_slope_in_n_eps2():
    """At fixed N the local rate (Nε²)^{-a} has slope -2a in ε: read in Nε² it is -a, over the squared ε range."""
    a, N, eps = 2 / 3, 1e4, np.array([0.05, 0.1, 0.25, 0.5, 1.0])
    y = (N * eps ** 2) ** -a
    s = np.polyfit(np.log(eps), np.log(y), 1)[0]
    f = effective_sample_fit(dict(slope=s, slope_lo=s - 0.1, slope_hi=s + 0.1, x_min=0.05, x_max=1.0, theory=-2 * a,
                                  n_seeds=7))
    assert math.isclose(f["slope"], -a) and math.isclose(f["theory"], -a) and f["n_seeds"] == 7
    assert (f["slope_lo"], f["slope_hi"]) == ((s - 0.1) / 2, (s + 0.1) / 2)
    assert math.isclose(f["x_min"], 0.0025) and f["x_max"] == 1.0
    assert np.isclose(np.polyfit(np.log(N * eps ** 2), np.log(y), 1)[0], f["slope"])
    assert "theory" not in effective_sample_fit(dict(slope=s, slope_lo=s, slope_hi=s, x_min=0.1, x_max=1.0))


def test_claimed_slope_refuses_an_unknown_setting():
    import pytest

    with pytest.raises(ValueError, match="setting must be one of local, central, nonprivate, got 'centrl'"):
        claimed_slope("regression", "centrl", -0.5, -0.25)
