"""Empirical privacy audit of REAL Alg. 1 (whole algorithm, a family of neighbouring loss sequences)."""
from jaxdp.registry import get_audit
from jaxdp.experts.audits import (
    audit_sparse_vector_experts, audit_sparse_vector_experts_mislabelled, neighbour_family,
)


def test_sparse_vector_experts_audit_consistent_and_searches_pairs():
    rep = audit_sparse_vector_experts(quick=True, seed=0, n=100_000)
    assert not rep.violation and rep.eps_lower <= rep.claimed_eps
    assert get_audit("sparse-vector-experts").fn is audit_sparse_vector_experts
    # the search finds a more revealing pair than the former single one (0 vs l_1 = (1, 0):
    # eps_lower 0.30 with twice the runs)
    assert rep.n_pairs == len(neighbour_family()) == 9 and rep.pair != "l1: 0 vs e1", str(rep)
    assert rep.eps_lower > 0.45, str(rep)
    # an over-claim by 4 would be flagged (the bound does not depend on the claim)
    assert rep.eps_lower > rep.claimed_eps / 4


def test_sparse_vector_experts_audit_flags_mislabelled_eps():
    rep = audit_sparse_vector_experts_mislabelled(quick=True, seed=1, n=40_000)
    assert rep.violation and rep.eps_lower > 2 * rep.claimed_eps
