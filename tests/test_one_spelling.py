"""One spelling (issue 37, part 6; docs/guide/cli.md#names): planners, audits and learners (with ``compare``'s
built-ins) are named with underscores everywhere; the hyphenated spelling is an alias (a one-line note on
stderr from the CLI, silent in the library). Studies keep their hyphenated names."""
from __future__ import annotations

import json

import pytest

from jaxdp import registry
from jaxdp.cli import main

PLAN = ["--eps", "1", "--T", "1000", "--d", "4"]


def _names(listing: str) -> list[str]:
    return [ln.split()[0] for ln in listing.splitlines() if ln.strip()]


def test_plan_takes_either_spelling_and_gives_the_same_plan(capsys):
    outs = {}
    for name in ("dp_exp3", "dp-exp3"):
        for extra in ([], ["--json"]):
            assert main(["plan", name, *PLAN, *extra]) == 0
            cap = capsys.readouterr()
            outs[name, bool(extra)] = cap.out
            if name == "dp-exp3":
                assert cap.err == ("jaxdp: note: planner 'dp-exp3' is spelt 'dp_exp3' (underscores, as Python "
                                   "names); the hyphenated spelling is an alias\n")
            else:
                assert cap.err == ""
    assert outs["dp_exp3", False] == outs["dp-exp3", False]
    assert json.loads(outs["dp_exp3", True]) == json.loads(outs["dp-exp3", True])
    # an audit too (refused input: the note comes first, then the error names the parameter; status 2)
    assert main(["audit", "laplace-half-scale", "--claim-factor", "0"]) == 2
    err = capsys.readouterr().err
    assert "audit 'laplace-half-scale' is spelt 'laplace_half_scale'" in err and "--claim-factor must be > 0" in err


def test_listings_spell_names_the_same_way(capsys):
    assert main(["plan", "--list"]) == 0
    planners = _names(capsys.readouterr().out)
    assert main(["compare", "--problem", "bandits", "--list"]) == 0
    out = capsys.readouterr().out
    builtins = out.split("built-in learners: ", 1)[1].strip().split(", ")
    assert {"dp_exp3", "dp_ucb_tree", "dp_se", "ldp_ucb"} <= set(builtins) & set(planners), (builtins, planners)
    assert main(["audit", "--list"]) == 0
    audits = _names(capsys.readouterr().out)
    for names in (planners, builtins, audits):
        assert names and not [n for n in names if "-" in n], names
    registry.load_all()
    assert not [n for n in list(registry.PLANNERS) + list(registry.AUDITS) + list(registry.LEARNERS) if "-" in n]
    # a learner's planner is the planner's registered name
    assert {e.planner for e in registry.LEARNERS.values() if e.planner} <= set(registry.PLANNERS)


def test_library_lookups_accept_the_alias_silently(capsys):
    assert registry.get_planner("dp-exp3") is registry.get_planner("dp_exp3")
    assert registry.get_planner("label-local-cls").name == "label_local_cls"
    assert registry.get_audit("laplace-half-scale") is registry.get_audit("laplace_half_scale")
    assert registry.get_learner("dp-ucb-tree") is registry.get_learner("dp_ucb_tree")
    assert "dp-exp3" in registry.PLANNERS and registry.PLANNERS["dp-exp3"].name == "dp_exp3"
    assert registry.PLANNERS.get("dp-exp3") is registry.PLANNERS["dp_exp3"] and registry.PLANNERS.get("nope") is None
    with pytest.raises(ValueError, match="unknown planner 'dp-nope'"):
        registry.get_planner("dp-nope")
    with pytest.raises(TypeError, match="name must be a string"):
        registry.get_planner(3)
    # compare's built-ins: the alias is accepted (the unknown name after it is what is refused)
    from jaxdp.compare import compare

    with pytest.raises(ValueError, match="unknown built-in learner 'nope' for bandits"):
        compare(None, "bandits", learners=["dp-exp3", "nope"], quick=True)
    assert capsys.readouterr().err == ""
    # studies keep their hyphenated names
    assert registry.get_study("hedge-baseline").name == "hedge-baseline"
