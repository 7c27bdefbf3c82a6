"""The command line's contract (docs/guide/cli.md): ``plan --json`` of every registered planner, in every mode it
offers, validates against the published schema ``docs/guide/plan.schema.json`` (stable types: ``delta_float`` a
number or null, with its reason in ``delta_float_note``)."""
from __future__ import annotations

import inspect
import json

import pytest

from _helpers import ROOT
from jaxdp import registry
from jaxdp.privacy.accounting.plan import PLAN_MODES

jsonschema = pytest.importorskip("jsonschema")
SCHEMA = json.loads((ROOT / "docs" / "guide" / "plan.schema.json").read_text())
ARGS = dict(eps=1.0, delta=1e-6, T=1000, d=2, n=1000)


def _planners() -> list[str]:
    registry.load_all()
    return sorted(registry.PLANNERS)


@pytest.mark.parametrize("name", _planners())
def test_plan_json_validates_against_the_published_schema(name):
    fn = registry.get_planner(name).fn
    sig = inspect.signature(fn).parameters
    kw = {k: v for k, v in ARGS.items() if k in sig}
    modes = PLAN_MODES if "mode" in sig else (None,)
    checked = 0
    for mode in modes:
        try:
            plan = fn(**kw, **({"mode": mode} if mode else {}))
        except ValueError as e:               # a mode this planner does not offer: refused by name
            assert mode is not None and "mode" in str(e), e
            continue
        out = json.loads(plan.to_json())
        jsonschema.validate(out, SCHEMA)
        assert out["delta_float"] is None or isinstance(out["delta_float"], float)
        if out["delta_float"] is None:
            assert out["delta_float_note"], "a null delta_float says why"
        checked += 1
    assert checked >= 1


def _subparsers(parser, prefix=()):
    import argparse

    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subparsers(sub, prefix + (name,))


def test_every_option_of_every_command_has_help():
    from jaxdp.cli import _parser

    missing = [f"jaxdp {' '.join(cmd)} {'/'.join(a.option_strings) or a.dest}"
               for cmd, p in _subparsers(_parser()) for a in p._actions
               if not a.help and a.dest not in ("help", "version", "cmd", "study_cmd")
               and type(a).__name__ != "_SubParsersAction"]
    assert not missing, missing


def test_misspelt_keys_suggest_the_nearest(capsys):
    from jaxdp.cli import main

    main(["study", "run", "hedge-baseline", "--quick", "--set", "gapp=0.2", "--out", "/nonexistent/x"])
    main(["plan", "laplace", "--eps", "1", "--set", "sensitivty=2"])
    err = capsys.readouterr().err
    assert "did you mean 'gap'?" in err and "did you mean 'sensitivity'?" in err
