"""The one verdict rubric (jaxdp.studies.claims): each kind of claim against hand-made measurements, every
verdict reachable, and the cases the issue names (a slope over a factor of 4 is not a rate; an interval that
contains the claim but is wider than the tolerance is unresolved, with the seeds that would resolve it)."""
import math

import pytest

from jaxdp.studies.claims import Claim, Measurement, judge, seeds_to_resolve

RATE = Claim("regret ~ T^(2/3)", "rate", 2 / 3, 0.02)


def test_rate_holds_unresolved_misses():
    # label-DP L1 at 256 seeds: contains -2/3 but wider than 0.02 -> unresolved; at 4000 seeds it excludes -2/3
    l1 = Claim("error ~ N^(-2/3)", "rate", -2 / 3, 0.02)
    v = judge(l1, Measurement(-0.690, -0.728, -0.653, 256, decades=2.0))
    assert v.verdict == "consistent, unresolved" and "256 seeds" in v.reason and "about 670 seeds" in v.reason
    assert judge(l1, Measurement(-0.692, -0.701, -0.683, 4000, decades=2.0)).verdict == "misses"
    assert judge(l1, Measurement(-0.667, -0.680, -0.655, 4000, decades=2.0)).verdict == "holds"


def test_an_off_centre_interval_narrower_than_the_tolerance():
    # half-width 0.0325 < 0.05, but the interval reaches below -2/3 - 0.05: unresolved, and the reason says so
    c = Claim("error ~ N^(-2/3)", "rate", -2 / 3, 0.05)
    v = judge(c, Measurement(-0.70, -0.725, -0.66, 256, decades=2.0))
    assert v.verdict == "consistent, unresolved" and "reaches beyond its tolerance" in v.reason
    # it would miss first: once the half-width is below the estimate's distance to the claim (0.033), ~250 seeds
    assert "about 250 seeds" in v.reason


def test_a_rate_needs_two_decades():
    v = judge(Claim("slope 1/3", "rate", 1 / 3, 0.05), Measurement(0.345, 0.30, 0.39, 256, decades=math.log10(4)))
    assert v.verdict == "not tested" and "0.60 decades" in v.reason


def test_one_sided_rates():
    up = Claim("O(sqrt T)", "at_most_rate", 0.5, 0.05)
    assert judge(up, Measurement(0.45, 0.40, 0.50, 64, decades=2)).verdict == "holds"
    assert judge(up, Measurement(0.56, 0.52, 0.60, 64, decades=2)).verdict == "misses"
    assert judge(up, Measurement(0.50, 0.44, 0.58, 64, decades=2)).verdict == "consistent, unresolved"
    down = Claim("Omega(log T)", "at_least_rate", 0.2, 0.05)
    assert judge(down, Measurement(0.3, 0.25, 0.35, 64, decades=2)).verdict == "holds"
    assert judge(down, Measurement(0.1, 0.05, 0.15, 64, decades=2)).verdict == "misses"


def test_a_rate_between_two_exponents():
    """A sum N^{-1} + N^{-2/3}: its slope lies between -1 and -2/3 (the two one-sided tests at once)."""
    from jaxdp.studies.claims import Verdict, verdict_row

    c = Claim("N^-a + N^-b", "between_rate", -1.0, value_hi=-2 / 3)
    assert judge(c, Measurement(-0.85, -0.9, -0.8, 64, decades=2)).verdict == "holds"
    assert judge(c, Measurement(-1.02, -1.04, -1.0, 64, decades=2)).verdict == "holds"   # within the tolerance
    below, above = (judge(c, Measurement(e, e - 0.05, e + 0.05, 64, decades=2)) for e in (-1.1, -0.55))
    assert (below.verdict, above.verdict) == ("misses", "misses")
    assert "below" in below.reason and "above" in above.reason
    # [-1.1, -0.8] reaches 0.05 past -1.05; the estimate -0.95 is 0.10 from that edge: 64 (0.15 / 0.10)^2 = 144
    v = judge(c, Measurement(-0.95, -1.1, -0.8, 64, decades=2))
    assert v.verdict == "consistent, unresolved" and "about 150 seeds" in v.reason
    assert judge(c, Measurement(-0.85, -0.9, -0.8, 64, decades=1.5)).verdict == "not tested"
    row = verdict_row(c, Measurement(-0.85, -0.9, -0.8, 64, decades=2), Verdict("holds"), experiment="e", cell="c")
    assert (row["kind"], row["claimed"], row["claimed_hi"]) == ("between", -1.0, -2 / 3)
    with pytest.raises(ValueError, match="value_hi"):
        Claim("x", "between_rate", -0.5, value_hi=-1.0)


def test_bound_with_its_constant_is_tested_by_the_ratio():
    b = Claim("E[regret] <= sqrt(T ln d / 2)", "bound", 1.0, 0.05)
    assert judge(b, Measurement(0.7, 0.68, 0.72, 64)).verdict == "holds"
    assert judge(b, Measurement(1.2, 1.1, 1.3, 64)).verdict == "misses"
    assert judge(b, Measurement(0.9, 0.8, 1.0, 64, ratios_lo=(0.8, 1.01))).verdict == "misses"
    assert judge(b, Measurement(0.99, 0.9, 1.1, 64)).verdict == "consistent, unresolved"
    # the mf-ftrl case: regret at 0.03-0.14 of its bound holds whatever its slope over a short range
    assert judge(b, Measurement(0.14, 0.12, 0.15, 64)).verdict == "holds"


def test_equality_and_no_spread():
    eq = Claim("same expected regret", "equality", 0.0, 0.01)
    assert judge(eq, Measurement(0.001, -0.004, 0.006, 64)).verdict == "holds"
    assert judge(eq, Measurement(0.03, 0.02, 0.04, 64)).verdict == "misses"
    assert judge(eq, Measurement(0.5, 0.5, 0.5, 64)).verdict == "not tested"
    assert judge(eq, Measurement(math.nan, 0, 1, 64)).verdict == "not tested"


def test_claims_are_checked_and_seeds_rounded_up():
    with pytest.raises(ValueError, match="kind"):
        Claim("x", "slope", 0.5, 0.1)
    with pytest.raises(ValueError, match="tolerance"):
        Claim("x", "rate", 0.5, 0.0)
    assert seeds_to_resolve(0.085, 256, 0.05) == 740


def test_rows_carry_a_link_a_claimed_range_and_an_untested_measurement():
    from jaxdp.studies.claims import Verdict, untested_row, verdict_row

    m = Measurement(-0.6, -0.7, -0.5, 64, decades=2.0)
    row = verdict_row(RATE, m, Verdict("holds"), experiment="e", cell="c", link="#why", claimed_hi=-0.5)
    assert row["link"] == "#why" and row["claimed_hi"] == -0.5
    assert verdict_row(RATE, m, Verdict("holds"), experiment="e", cell="c")["link"] == ""
    assert "claimed_hi" not in verdict_row(RATE, m, Verdict("holds"), experiment="e", cell="c")
    u = untested_row("e", "c", "no claim", "reported for comparison", m=m)
    assert (u["slope"], u["slope_lo"], u["slope_hi"], u["n_seeds"], u["verdict"]) == (-0.6, -0.7, -0.5, 64,
                                                                                        "not tested")
    assert math.isnan(untested_row("e", "c", "no claim", "why")["slope"])


def test_study_spec_pages_table_validate_and_tuple_claim_keys():
    from jaxdp.studies.specs import StudySpec

    b = StudySpec("bandits", "bandits")
    assert b.pages == ("docs/results/bandits.md",)
    assert b.claims["dp_se", "switch"] is b.claims["dp_se switch"] and ("dp_se", "switch") in b.claims
    assert b.claims.get(("ucb1", "switch")) is None
    assert b.table("T_sweep", [["a"] * 8], T_max=8).splitlines()[0].startswith("| learner | instance |")
    assert "regret at T = 8 [95% CI]" in b.table("T_sweep", [["a"] * 8], T_max=8)
    b.validate(b.defaults)
    with pytest.raises(ValueError, match="K"):
        b.validate({**b.defaults, "K": 1})
    assert StudySpec("growth-rates", "growth_rates").pages == ("docs/results/growth-rates.md",
                                                              "docs/algorithms/growth.md")
