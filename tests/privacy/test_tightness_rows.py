"""The tightness table's rows (docs/results/tightness.md): every private learner of the registry has one, the new
rows stay within their certificates, and the slack attribution's recomputed certificates stay above the exact ε."""
from __future__ import annotations

import re

import numpy as np
import pytest

from jaxdp import registry
from jaxdp.bandits.audits import tightness_cases as bandit_cases
from jaxdp.experts.audits import audit_setting, l2p_slack, shared_sv_slack, tightness_cases as expert_cases
from jaxdp.privacy.audit import exact as X
from jaxdp.privacy.audit.tightness import UncoveredCase, WorstPair, pair_eps, tightness_row


def test_every_private_expert_and_bandit_learner_has_a_row():
    registry.load_all()
    want = {n for n, e in registry.LEARNERS.items() if e.private and e.problem != "oco"}
    have = {c.learner for c in expert_cases(quick=False, uncovered=True) + bandit_cases(quick=False)}
    assert want <= have, f"private learners without a tightness row: {sorted(want - have)}"


def test_uncovered_rows_state_why():
    for c in expert_cases(quick=True, uncovered=True):
        if isinstance(c, UncoveredCase):
            r = tightness_row(c)
            assert not r["covered"] and np.isnan(r["exact_best"]) and r["slack"] and r["bound"]


def test_dp_se_row_is_within_its_certificate():
    case = [c for c in bandit_cases(quick=False) if c.name == "dp-se"][0]
    r = tightness_row(case._replace(search=dict(max_pairs=0, restarts=0, max_evals=1500)), run_audit=False)
    assert r["exact_audited"] - 1e-12 <= r["exact_best"] <= r["certified"]


def _number(text, after):
    return float(re.search(after + r" ([0-9.e-]+)", text).group(1))


def test_l2p_slack_recomputes_above_the_exact_loss():
    """Thm 3.2 with its concentration term replaced by the exact ε(δ₁) of all fresh samples on the pair is still a
    valid bound for that pair: at least the pair's exact ε; and a pair differing in the last batch has no fresh
    sample after it (the term's exact value is 0)."""
    s = audit_setting(T=8, B=2)
    law = lambda x: X.l2p_mw_law(x, eta=s.eta, p=s.p, B=s.B)      # noqa: E731
    x0 = np.zeros((8, 2))
    x0[1:6, 1] = 1.0
    x1 = x0.copy()
    x0[0], x1[0] = (0.0, 1.0), (1.0, 0.0)
    eps = pair_eps(law, x0, x1, delta=s.delta)
    text = l2p_slack(s)(WorstPair(eps, x0, x1, 0, 1, False))
    assert _number(text, "recomputed certificate") >= eps
    y0, y1 = np.zeros((8, 2)), np.zeros((8, 2))
    y1[7] = (1.0, 0.0)
    text = l2p_slack(s)(WorstPair(0.0, y0, y1, 7, 1, False))
    assert "all 0 fresh" in text and "is 0:" in text


def test_shared_sv_slack_recomputes_above_the_exact_loss():
    x0 = np.zeros((4, 2))
    x0[1:, 1] = 1.0
    x1 = x0.copy()
    x0[0], x1[0] = (0.0, 1.0), (1.0, 0.0)
    law = lambda x: X.sv_experts_law(x, eps_svt=1.0, L=0.5, eta=0.5, K=2, threshold="shared")   # noqa: E731
    eps = pair_eps(law, x0, x1)
    text = shared_sv_slack(0.5, 2, 2.0)(WorstPair(eps, x0, x1, 0, 1, False))
    assert _number(text, "recomputed") >= eps - 1e-12
    assert _number(text, r"sparse vector \(η = 0\)") <= 1.0 + 1e-9


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_tree_ftrl_pair_within_certificate(noise):
    from jaxdp.experts.tree_ftrl import plan_tree_ftrl_experts

    plan = plan_tree_ftrl_experts(eps=1.0, delta=0.0 if noise == "laplace" else 1e-5, T=4, d=2)
    law = lambda x: X.tree_ftrl_law(x, eta=plan.params["eta"], scale=plan.params["scale"], noise=noise)  # noqa: E731
    x0 = np.zeros((4, 2))
    x0[1:, 1] = 1.0
    x1 = x0.copy()
    x0[0], x1[0] = (0.0, 1.0), (1.0, 0.0)
    assert 0.0 < pair_eps(law, x0, x1, delta=plan.delta_certified) <= plan.eps_certified
