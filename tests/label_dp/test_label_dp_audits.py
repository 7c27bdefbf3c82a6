"""Empirical audits of the label-DP mechanisms: correct ones consistent, broken ones flagged."""
import pytest

from jaxdp.label_dp.audits import EXP_BINS_PAIRS, audit_exp_bins, audit_rr_vector


@pytest.mark.parametrize("fn", [audit_rr_vector, audit_exp_bins])
def test_audits(fn):
    good = fn(quick=True, seed=1)
    assert not good.violation and good.eps_lower <= 1.0
    assert good.delta_float > 0 and "verified down to delta_float" in str(good)
    bad = fn(quick=True, seed=2, broken=True)
    assert bad.violation and bad.eps_lower > 1.0


def test_exp_bins_searches_label_pairs():
    """The search picks the most revealing pair (unanimous bin + one minority label: true loss 0.845)
    and flags a 2x over-claim of the correct mechanism."""
    rep = audit_exp_bins(quick=True, seed=3, claim_factor=2.0)
    assert rep.n_pairs == len(EXP_BINS_PAIRS) == 3 and rep.pair == "00000 vs 00001", str(rep)
    assert rep.violation and rep.claimed_eps == 0.5
