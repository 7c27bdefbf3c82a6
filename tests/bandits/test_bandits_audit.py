"""Privacy audits of the private bandit learners (jaxdp.bandits.audits, ``jaxdp audit NAME``).

Each correct learner is audited at its claim on neighbouring loss sequences (one round's loss vector
changed), with events on the sequence of played arms, at quick size and fixed seeds: it must not be
refuted (family-wise alpha = 1e-7, the auditor's default, as every other audit), and the bound must
come close to what the output can reveal (power). Each broken twin must be flagged.
"""
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import registry
from jaxdp.privacy.audit import DEFAULT_ALPHA
from jaxdp.bandits import audits as BA
from jaxdp.cli import main

#: correct audits: name -> (claimed eps, the smallest eps lower bound expected at quick size, seed 0).
#: The largest loss an event on the audited output can show: dp-exp3 eps (tight); ldp-ucb
#: eps - ln(1 + eps/2) = 1.31; dp-ucb-tree eps/2 - ln(1 + eps/4) = 1.31 (only the leaf of the
#: changed reward is released in two rounds); dp-se 0.76 on its event (two Laplace noises).
CORRECT = {"dp-exp3": (1.0, 0.85), "ldp-ucb": (2.0, 1.15), "dp-ucb-tree": (4.0, 1.15), "dp-se": (1.0, 0.5)}
BROKEN = {"dp-exp3-quarter-scale": (1.0, 3.0), "dp-ucb-tree-no-noise": (4.0, 6.0)}
#: runs per input (dp-se runs 187 rounds: fewer runs keep the file short)
N = {"dp-se": 100_000}


def _run(name, **kw):
    return registry.get_audit(name).fn(quick=True, seed=0, n=N.get(name), **kw)


def test_registered():
    registry.load_all()
    for name, (eps, _) in {**CORRECT, **BROKEN}.items():
        e = registry.AUDITS[name]
        assert e.extra["claimed_eps"] == eps and e.extra["broken"] == (name in BROKEN)
        assert BA.AUDITS[name] == (eps, name in BROKEN)


@pytest.mark.parametrize("name", list(CORRECT))
def test_correct_learner_not_refuted(name):
    eps, floor = CORRECT[name]
    rep = _run(name)
    assert rep.claimed_eps == eps and rep.confidence == pytest.approx(1 - DEFAULT_ALPHA)
    assert not rep.violation and rep.eps_lower <= eps, str(rep)
    assert rep.eps_lower >= floor, str(rep)     # the audit sees most of what the output reveals


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_twin_flagged(name):
    eps, floor = BROKEN[name]
    rep = _run(name)
    assert rep.violation and rep.eps_lower >= floor, str(rep)


def test_dp_exp3_over_claim_is_flagged():
    """Power: the tight DP-EXP3 audit refutes the claim eps/1.25 of the correct learner."""
    rep = _run("dp-exp3", claim_factor=1.25)
    assert rep.violation and rep.claimed_eps == pytest.approx(0.8)


def test_cli(capsys):
    assert main(["audit", "--list"]) == 0
    out = capsys.readouterr().out
    assert "dp_exp3_quarter_scale" in out and "[broken on purpose]" in out.split("dp_ucb_tree_no_noise", 1)[1]
    assert not [ln for ln in out.splitlines() if "-" in ln.split(" ", 1)[0]]   # one spelling: underscores
    assert main(["audit", "dp-ucb-tree-no-noise", "--quick"]) == 3      # a refuted claim: status 3, as compare
    assert "VIOLATION" in capsys.readouterr().out


def test_bandit_events():
    """The compare audit's bandit events: replays of the arm of a changed round and the stay indicator."""
    acts = jnp.asarray([2, 0, 2, 2, 1], jnp.int32)
    assert float(BA.replays(0)(acts)) == 2.0 and float(BA.replays(1)(acts)) == 0.0
    assert float(BA.stays(2)(acts)) == 1.0 and float(BA.stays(0)(acts)) == 0.0
    ev = BA.bandit_events(9, 16, (0, 8))
    assert len(ev) == 8 + 4 and all(e.statistic is not None for e in ev)
    ev = BA.bandit_events(2, 4, (0,))
    assert ev[-1].n_cells == 2 ** 5
    counts = [float(e.statistic(acts)) for e in BA.bandit_events(3, 4, (0,))[:3]]
    np.testing.assert_array_equal(counts, [1, 1, 3])
