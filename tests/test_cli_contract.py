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


# --------------------------------------------------------------------------- every command: 2, 3, 130, never 1
# One case per command of the parser (a new command without a case fails ``test_every_command_has_a_case``):
# a bad input (status 2, the message names the option or value), a refuted privacy claim where one applies
# (status 3) and Ctrl-C during the command's work (status 130; a study keeps its finished chunk and resumes).
EXAMPLES = ROOT / "examples"
TINY_STUDY = ["hedge-baseline", "--quick", "--no-progress", "--no-plot", "--set", "T=16,32", "--set", "d=3",
              "--set", "learners=hedge,ftpl", "--set", "adversaries=noise", "--seeds", "4"]   # 2 chunks
TINY_COMPARE = ["--quick", "--T", "16,32", "--d", "2", "--seeds", "2", "--instances", "iid-noise", "--learners",
                "hedge", "--audit-n", "2000", "--no-progress", "--no-plot"]
STATUSES = {0, 2, 3, 130}      # docs/guide/cli.md#exit (study verify and --processes add their own)

# command: (bad argv, words its message names), refuted argv or None, (interrupted argv, what raises Ctrl-C)
COMMANDS = {
    "study list": ((["study", "list", "--bogus"], ["--bogus"]), None, (["study", "list"], "jaxdp.registry.load_all")),
    "study show": ((["study", "show", "nosuch"], ["'nosuch'", "hedge-baseline"]), None,
                   (["study", "show", "hedge-baseline"], "jaxdp.registry.get_study")),
    "study run": ((["study", "run", "hedge-baseline", "--seeds", "0"], ["--seeds", "0"]), None,
                  (["study", "run", *TINY_STUDY], "second chunk")),
    "study plot": ((["study", "plot", "{tmp}/none"], ["none", "manifest.json"]), None,
                   (["study", "plot", "{tmp}/res"], "jaxdp.registry.get_study")),
    "study verify": ((["study", "verify", "{tmp}/none"], ["none", "manifest.json"]), None,
                     (["study", "verify", "{tmp}/res"], "jaxdp.studies.framework.verify_study")),
    "plan": ((["plan", "laplace", "--eps", "-1"], ["eps", "-1"]),
             ["plan", "l2p_mw", "--eps", "0.5", "--delta", "1e-6", "--T", "100000", "--d", "64"],
             (["plan", "laplace", "--eps", "1"], "jaxdp.registry.get_planner")),
    "audit": ((["audit", "laplace_half_scale", "--claim-factor", "0"], ["--claim-factor", "0"]),
              ["audit", "dp_exp3_quarter_scale", "--quick", "--json"],
              (["audit", "dp_exp3", "--quick"], "jaxdp.registry.get_audit")),
    "bench": ((["bench", "--out", "{tmp}/file/x.md"], ["--out", "file"]), None, (["bench", "--quick"], "jaxdp.cli._harness")),
    "compare": ((["compare", "--eps", "abc", "--out", "{tmp}/o"], ["--eps", "abc"]),
                ["compare", str(EXAMPLES / "refuted_learners.py:eps_greedy"), *TINY_COMPARE, "--json", "--out", "{tmp}/r"],
                (["compare", "--quick", "--out", "{tmp}/i"], "jaxdp.compare.compare")),
}


def _commands() -> list[str]:
    from jaxdp.cli import _parser

    leaves = []
    for cmd, p in _subparsers(_parser()):
        subs = [a for a in p._actions if type(a).__name__ == "_SubParsersAction"]
        if cmd and not subs:
            leaves.append(" ".join(cmd))
    return leaves


def test_every_command_has_a_case():
    assert sorted(_commands()) == sorted(COMMANDS), "a command of the parser without a case in COMMANDS (or a stale one)"


def _call(argv, tmp_path, capsys):
    from jaxdp.cli import main

    (tmp_path / "file").write_text("")
    (tmp_path / "res").mkdir(exist_ok=True)
    (tmp_path / "res" / "manifest.json").write_text(json.dumps({"study": "hedge-baseline", "config": {}}))
    try:
        code = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    except SystemExit as e:          # argparse's own refusals
        code = e.code
    cap = capsys.readouterr()
    assert code in STATUSES, (argv, code, cap.err[-2000:])
    return code, cap.out, cap.err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_bad_input_exits_2_naming_it(command, tmp_path, capsys):
    (argv, words), _, _ = COMMANDS[command]
    code, _, err = _call(argv, tmp_path, capsys)
    assert code == 2, err
    line = [ln for ln in err.splitlines() if "error:" in ln][-1]
    assert all(w in line for w in words), line
    assert "Traceback" not in err


@pytest.mark.parametrize("command", sorted(c for c, (_, refuted, _) in COMMANDS.items() if refuted))
def test_a_refuted_claim_exits_3(command, tmp_path, capsys):
    argv = COMMANDS[command][1]
    code, out, err = _call(argv, tmp_path, capsys)
    assert code == 3, err[-2000:]
    if "--json" in argv:               # the published schema of the command's JSON
        doc = json.loads(out)
        jsonschema.validate(doc, json.loads((ROOT / "docs" / "guide" / f"{command}.schema.json").read_text()))
        assert doc["exit_status"] == 3
        assert doc.get("verdict", "VIOLATION") == "VIOLATION" and doc.get("refuted", ["x"])
        ran = [r["switches_mean"] is None for r in doc.get("rows", []) if r["status"] != "not-run"]
        assert len(set(ran)) <= 1, "switches for every learner or for none"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_ctrl_c_exits_130_and_keeps_what_is_finished(command, tmp_path, capsys, monkeypatch):
    import importlib

    import jaxdp.cli as cli

    argv, target = COMMANDS[command][2]

    def interrupt(*a, **k):
        raise KeyboardInterrupt

    if target == "second chunk":        # Ctrl-C while the second of two chunks runs: the first is kept
        build = cli._build

        def interrupted_build(name, quick, overrides):
            study, cfg = build(name, quick, overrides)
            run, calls = study.run, []

            def run_then_stop(pts, seeds):
                calls.append(1)
                if len(calls) == 2:
                    raise KeyboardInterrupt
                return run(pts, seeds)
            study.run = run_then_stop
            return study, cfg
        monkeypatch.setattr(cli, "_build", interrupted_build)
        argv = [*argv, "--out", str(tmp_path / "study")]
    else:
        module, _, attr = target.rpartition(".")
        monkeypatch.setattr(importlib.import_module(module), attr, interrupt)
    code, _, err = _call(argv, tmp_path, capsys)
    assert code == 130 and "interrupted; rerun to resume" in err, err[-2000:]
    if target == "second chunk":
        monkeypatch.undo()
        code, _, err = _call(argv, tmp_path, capsys)
        assert code == 0 and "(1 chunks run, 1 already done)" in err, err[-2000:]


def test_audit_json_validates_against_the_published_schema(capsys):
    from jaxdp.cli import main

    schema = json.loads((ROOT / "docs" / "guide" / "audit.schema.json").read_text())
    assert main(["audit", "--list", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    jsonschema.validate(listing, schema)
    assert {a["name"] for a in listing} >= {"laplace_half_scale", "dp_exp3"}
    assert main(["audit", "dp-exp3", "--quick", "--json", "--seed", "1"]) == 0      # an alias, a consistent verdict
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, schema)
    assert (doc["name"], doc["verdict"], doc["seed"], doc["exit_status"]) == ("dp_exp3", "consistent", 1, 0)


def test_guide_pages_spell_registry_names_with_underscores():
    """docs/guide/*.md name planners, audits and learners as listed (underscores); cli.md#names shows the alias once."""
    registry.load_all()
    hyphenated = {n.replace("_", "-") for n in [*registry.PLANNERS, *registry.AUDITS, *registry.LEARNERS] if "_" in n}
    found = [f"{page.name}: `{h}`" for page in sorted((ROOT / "docs" / "guide").glob("*.md"))
             for h in sorted(hyphenated) if f"`{h}`" in page.read_text()]
    assert not found, found
