"""``jaxdp audit NAME --exact`` (docs/guide/auditing.md#tightness): the exact ε of a registered learner's audited pairs
and of the worst pair found, its JSON against the published schema, and exit 2 with a clear message where NAME has
no exact law."""
from __future__ import annotations

import json
import math

import pytest

from _helpers import ROOT
from jaxdp.cli import main

jsonschema = pytest.importorskip("jsonschema")
SCHEMA = json.loads((ROOT / "docs" / "guide" / "audit.schema.json").read_text())


def test_exact_json_validates_and_matches_the_closed_form(capsys):
    assert main(["audit", "ldp-ucb", "--exact", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    jsonschema.validate(out, SCHEMA)
    assert out["learner"] == "ldp_ucb" and out["worst"]["exhaustive"]
    # the argmax of two rewards plus Lap(1/2) noise leaks 2 - ln 2 on every pair (closed form)
    assert out["worst"]["eps"] == pytest.approx(2 - math.log(2), abs=1e-9)
    assert all(a["eps"] <= out["worst"]["eps"] + 1e-12 for a in out["audited"])
    assert out["worst"]["eps"] <= out["certified"]


def test_exact_text_by_registry_name(capsys):
    assert main(["audit", "sparse_vector", "--exact", "--quick"]) == 0
    text = capsys.readouterr().out
    assert "certified eps" in text and "worst pair found" in text and "exact eps" in text


@pytest.mark.parametrize("name, match", [("dp-ftrl", "has no exact law: continuous output"),
                                         ("hedge-not-private", "no exact law for"),
                                         ("binary_tree", "has no exact law")])
def test_no_exact_law_exits_2_with_the_reason(name, match, capsys):
    assert main(["audit", name, "--exact"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jaxdp: error:") and match in err


def test_exact_refuses_contradictory_options(capsys):
    assert main(["audit", "ldp-ucb", "--exact", "--claim-factor", "2"]) == 2
    assert "--claim-factor" in capsys.readouterr().err
    assert main(["audit", "--exact"]) == 2
    assert "needs one learner" in capsys.readouterr().err
