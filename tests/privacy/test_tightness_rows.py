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


def test_l2p_rows_show_the_ledger_the_printed_theorem_and_composed():
    """The L2P-MW rows at the audit setting's parameters are certified by the ledger (what ``plan_l2p_mw`` reports
    for them), and show LAZY Thm 3.2 as printed and the ``composed`` certificate beside it: composed <= ledger <=
    printed, every one at least the exact ε of the audited pair (the exact law is independent of the ledgers)."""
    from jaxdp.experts.audits import L2P_PAIR
    from jaxdp.privacy.accounting import certify
    from jaxdp.privacy.accounting.l2p import l2p_composed_eps, l2p_ledger

    case = [c for c in expert_cases(quick=True) if c.name == "l2p-mw"][0]
    s = audit_setting(T=8, B=2)
    others = dict(case.others)
    assert set(others) == {"LAZY Thm 3.2 as printed", "composed"}
    led = certify(l2p_ledger(s.eta, s.p, s.B, s.T, 0.0, s.delta1, "mw", outcomes=2), s.delta).eps
    assert case.certified == pytest.approx(led, rel=1e-12)
    assert others["LAZY Thm 3.2 as printed"] == pytest.approx(s.eps, rel=1e-12)
    assert others["composed"] == pytest.approx(l2p_composed_eps(s.eta, s.p, s.B, s.T, s.delta, s.delta1)[0])
    # the numbers the page reports (docs/results/tightness.md): 0.3909 / 2.202 / 0.3802 at T = 8, B = 2
    assert (round(led, 3), round(s.eps, 3), round(others["composed"], 3)) == (0.391, 2.202, 0.38)
    x0, x1 = case.audited[L2P_PAIR]
    exact = pair_eps(case.law, x0, x1, delta=case.delta)
    assert 0.0 < exact <= others["composed"] <= case.certified <= others["LAZY Thm 3.2 as printed"]
    assert "ledger" in case.certified_by


def _coin_case(**kw):
    """A one-round randomized response (``P[1] = e^a / (1 + e^a)``, ``a = 2 l - 1``, ``l`` the round's loss): exact
    ε = 1 on the pair (0 vs 1): ``P_1[1] / P_0[1] = e``."""
    from jaxdp.privacy.audit.tightness import TightnessCase

    def law(x):
        a = 2.0 * float(np.asarray(x)[0, 0]) - 1.0
        return np.array([0, 1]), np.array([1.0, np.exp(a)]) / (1.0 + np.exp(a))
    pair = (np.zeros((1, 1)), np.ones((1, 1)))
    return TightnessCase("coin", "T=1", law, 1, np.array([0.0, 1.0]), 0.0, 2.0, {"0 vs 1": pair}, {}, **kw)


def test_row_carries_other_certificates_with_their_ratios_and_the_page_checks_them():
    from _helpers import load_benchmark

    bt = load_benchmark("bench_tightness")
    r = tightness_row(_coin_case(certified_by="a ledger", others=(("printed", 4.0), ("too small", 0.5))),
                      run_audit=False)
    assert r["exact_best"] == pytest.approx(1.0) and r["certified_by"] == "a ledger"
    assert [(lab, e) for lab, e, _ in r["others"]] == [("printed", 4.0), ("too small", 0.5)]
    assert [q for _, _, q in r["others"]] == pytest.approx([4.0, 0.5])
    text = bt.page([r])
    assert "| 2 | printed 4 (4×); too small 0.5 (0.5×) |" in text
    assert "exact ε ≤ every other certificate shown: NO" in text
    ok = bt.page([tightness_row(_coin_case(others=(("printed", 4.0),)), run_audit=False)])
    assert "exact ε ≤ every other certificate shown: yes" in ok
    plain = tightness_row(_coin_case(), run_audit=False)
    assert plain["others"] == [] and "| 2 | - |" in bt.page([plain])
