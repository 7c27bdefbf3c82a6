"""Worst-pair search on every learner with an exact law (docs/results/tightness.md): the pair found is at least
as bad as today's audited pairs and never beyond the certificate."""
import pytest

from jaxdp.bandits.audits import tightness_cases as bandit_cases
from jaxdp.experts.audits import tightness_cases as expert_cases
from jaxdp.privacy.audit.tightness import tightness_row

CASES = {f"{c.name} {c.size}": c for c in expert_cases(quick=True) + bandit_cases()}


@pytest.mark.parametrize("label", sorted(CASES))
def test_worst_pair_is_at_least_the_audited_and_within_the_certificate(label):
    case = CASES[label]
    if case.name == "l2p-mw":   # the exhaustive table run takes ~1.5 min: a budgeted search from the audited pair
        case = case._replace(search=dict(max_pairs=0, restarts=1, max_evals=400))
    r = tightness_row(case, run_audit=False)
    assert r["exact_best"] >= r["exact_audited"] - 1e-9
    assert r["exact_best"] <= r["certified"]


def test_known_values():
    """The searched sparse-vector worst case is the learned audit's 1.042 (every one-round change in {0,e1,e2,1}^4);
    the UCB argmax leaks 2 - ln 2 on every pair."""
    import math

    r = tightness_row(CASES["sparse-vector-experts T=4, d=2, K=1, eps_svt=1, eta=1"], run_audit=False)
    assert r["exhaustive"] and r["exact_best"] == pytest.approx(1.042, abs=1e-3)
    assert r["exact_audited"] == pytest.approx(0.956, abs=1e-3)
    r = tightness_row(CASES["dp-ucb-tree K=2, T=2, H=2, b=0.5"], run_audit=False)
    assert r["exact_best"] == pytest.approx(2 - math.log(2), abs=1e-9)
