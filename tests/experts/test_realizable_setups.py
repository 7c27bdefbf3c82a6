"""The REAL study setups (jaxdp.experts.realizable_setups) are the planners' own plans and the learners' own
params, name their inputs when they refuse them, and the Lemma 3.4 checks (lazy_setups.z7_marginal_checks) are
marginal_check at nu_s and nu_{s-1}. No simulation."""
import numpy as np
import pytest

from jaxdp.experts import (
    marginal_check, mw_marginal, params_from_plan, plan_adaptive_sparse_vector_experts, plan_binary_tree_experts,
    plan_potential_experts, plan_sparse_vector_experts, z7_losses,
)
from jaxdp.experts.lazy_setups import z7_marginal_checks
from jaxdp.experts.realizable_setups import (
    realizable_adversary, realizable_constants, realizable_learner, realizable_plan,
)

KW = dict(eps=2.0, T=4096, d=16)


@pytest.mark.parametrize("name, direct", [
    ("sparse_vector", lambda: plan_sparse_vector_experts(mode="rate", **KW)),
    ("sv_known_Lstar", lambda: plan_sparse_vector_experts(mode="rate", Lstar=64.0, **KW)),
    ("adaptive_flipped", lambda: plan_adaptive_sparse_vector_experts(mode="rate", test_sign="flipped", **KW)),
    ("adaptive_printed", lambda: plan_adaptive_sparse_vector_experts(mode="rate", **KW)),
    ("potential", lambda: plan_potential_experts(mode="rate", **KW)),
    ("binary_tree", lambda: plan_binary_tree_experts(mode="rate", **KW)),
])
def test_plans_and_params_are_the_planners(name, direct):
    plan, want = realizable_plan(name, mode="rate", Lstar=64.0, **KW), direct()
    assert plan.params == want.params and plan.eps_certified == want.eps_certified
    _, params = realizable_learner(name, KW["d"], plan)
    for a, b in zip(params, params_from_plan(want)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    const = realizable_constants(name, plan)
    if name.startswith("adaptive"):
        assert const["threshold0"] == plan.params["L_offset"] + plan.params["Lbar0"]
    elif name in ("sparse_vector", "sv_known_Lstar"):
        assert const["threshold0"] == plan.params["L"] and np.isnan(const["margin"])


def test_refusals_name_the_parameter():
    with pytest.raises(ValueError, match="learner must be one of"):
        realizable_plan("nope", **KW)
    with pytest.raises(ValueError, match="adversary must be one of"):
        realizable_adversary("nope", 4)
    with pytest.raises(ValueError, match="has no plan"):
        realizable_constants("hedge", realizable_plan("sparse_vector", **KW))
    assert realizable_plan("hedge", **KW) is None


def test_z7_marginal_checks_are_marginal_check_at_nu_s_and_nu_s_minus_1():
    d, B, nb, eta = 4, 3, 6, 0.3
    losses = z7_losses(d, B, nb, 0)
    rng = np.random.default_rng(0)
    counts = {s: rng.multinomial(5000, mw_marginal(losses, eta, (s - 1) * B)).astype(float) for s in (1, 2, 5)}
    rows = z7_marginal_checks(counts, losses, eta, B)
    assert [r["s"] for r in rows] == [1, 2, 5] and [r["round"] for r in rows] == [1, 4, 13]
    for r in rows:
        want = marginal_check(counts[r["s"]], mw_marginal(losses, eta, (r["s"] - 1) * B))
        assert all(r[k] == want[k] for k in want)
        prev = mw_marginal(losses, eta, max(r["s"] - 2, 0) * B)
        if r["s"] == 1:
            assert np.isnan(r["tv_vs_prev"]) and not r["prev_rejected"]
        else:
            assert r["tv_vs_prev"] == marginal_check(counts[r["s"]], prev)["tv"]
