"""Empirical privacy audit of REAL Alg. 1 (whole algorithm, small neighbouring loss sequences)."""
from jaxdp.registry import get_audit
from jaxdp.realizable.audits import audit_sparse_vector_experts, audit_sparse_vector_experts_mislabelled


def test_sparse_vector_experts_audit_consistent():
    rep = audit_sparse_vector_experts(quick=True, seed=0, n=100_000)
    assert not rep.violation and rep.eps_lower <= rep.claimed_eps
    assert get_audit("sparse-vector-experts").fn is audit_sparse_vector_experts


def test_sparse_vector_experts_audit_flags_mislabelled_eps():
    rep = audit_sparse_vector_experts_mislabelled(quick=True, seed=1, n=40_000)
    assert rep.violation and rep.eps_lower > 2 * rep.claimed_eps
