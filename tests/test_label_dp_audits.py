"""Empirical audits of the label-DP mechanisms: correct ones consistent, broken ones flagged."""
import pytest

from jaxdp.label_dp.audits import audit_exp_bins, audit_rr_vector


@pytest.mark.parametrize("fn", [audit_rr_vector, audit_exp_bins])
def test_audits(fn):
    good = fn(quick=True, seed=1)
    assert not good.violation and good.eps_lower <= 1.0
    bad = fn(quick=True, seed=2, broken=True)
    assert bad.violation and bad.eps_lower > 1.0
