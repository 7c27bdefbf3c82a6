"""Where ``jaxdp compare`` puts a learner, as a user meets it on the command line.

A learner is ranked only when its privacy is certified by a ledger (the private built-ins) or
claimed and not refuted by the audit (yours); a refuted or unaudited claim is listed unranked (exit
status 3 when refuted); a non-private learner (built-in Hedge, or yours declared with
``claimed_eps = inf``) is a reference, never ranked, and the plot's legend says so. The command line
the leaderboard prints resumes a ``--quick`` run without recomputing anything, and a refusal to
resume names each differing setting.
"""
import json
import math
import os
import pathlib
import shlex
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from _helpers import ROOT
from jaxdp.cli import main
from jaxdp.compare import EXIT_REFUTED, RANKED, _Judge, Builtin

EXAMPLES = ROOT / "examples"
# a --quick run at tiny sizes: one instance, the non-private Hedge and tree_ftrl (its noise calibrated to eps)
TINY = ["--quick", "--T", "16,32", "--d", "2", "--seeds", "2", "--instances", "iid-noise", "--learners",
        "hedge,tree_ftrl", "--audit-n", "2000", "--no-progress"]
TITLES = {"ranked": "**Ranked**", "not ranked": "**Not ranked**",
          "reference": "**Non-private references (never ranked)**"}


def _blocks(md: str) -> dict:
    """The leaderboard's tables by block title (one instance here)."""
    found = {}
    for name, title in TITLES.items():
        if title in md:
            rest = md.split(title, 1)[1]
            found[name] = rest.split("\n\n", 2)[1]     # the table after the title
    return found


def _legend(png: pathlib.Path) -> list:
    from PIL import Image

    with Image.open(png) as im:
        return im.info["Description"].splitlines()


# case, factory, extra arguments, your learner's name, its status, its block, exit status, its legend entry
CASES = [
    ("declared non-private (factory attribute claimed_eps = inf)", "refuted_learners.py:hedge_nonprivate", [],
     "hedge_nonprivate", "non-private", "reference", 0, "hedge_nonprivate: non-private"),
    ("declared non-private (--claimed-eps inf)", "refuted_learners.py:eps_greedy", ["--claimed-eps", "inf"],
     "eps_greedy", "non-private", "reference", 0, "eps_greedy: non-private"),
    ("non-private, claims eps = 1: refuted", "refuted_learners.py:eps_greedy", [],
     "eps_greedy", "refuted", "not ranked", EXIT_REFUTED, "eps_greedy claims ε=1: REFUTED by audit (not ranked)"),
    ("private, --no-audit: unaudited", "my_learner.py:make", ["--no-audit"],
     "noisy_leader", "unaudited", "not ranked", 0, "noisy_leader claims ε=1: unaudited (not ranked)"),
]


@pytest.mark.parametrize("case,factory,extra,name,status,block,code,legend", CASES, ids=[c[0] for c in CASES])
def test_where_a_learner_lands(case, factory, extra, name, status, block, code, legend, tmp_path, capsys):
    out = tmp_path / "o"
    rc = main(["compare", str(EXAMPLES / factory), *TINY, *extra, "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == code, err[-2000:]
    lb = pd.read_csv(out / "leaderboard.csv")
    assert list(lb["learner"]).count(name) == 1
    mine = lb[lb["learner"] == name].iloc[0]
    assert (mine["kind"], mine["status"], bool(mine["ranked"])) == ("yours", status, False)
    assert pd.isna(mine["rank"])
    # the built-ins: tree_ftrl certified (calibrated to eps = 1) and ranked; Hedge a reference
    tree = lb[lb["learner"] == "tree_ftrl"].iloc[0]
    assert tree["status"] == "certified" and tree["rank"] >= 1 and tree["eps_certified"] == 1.0
    hedge = lb[lb["learner"] == "hedge"].iloc[0]
    assert hedge["status"] == "non-private" and pd.isna(hedge["rank"]) and hedge["eps_certified"] == math.inf
    # only certified or not-refuted claims carry a rank, and the ranks are 1..k
    ranked = lb[lb["rank"].notna()]
    assert set(ranked["status"]) <= set(RANKED) and sorted(ranked["rank"]) == list(range(1, len(ranked) + 1))
    # the Markdown leaderboard puts it in its block, and nowhere else
    blocks = _blocks((out / "leaderboard.md").read_text())
    assert f"**{name}**" in blocks[block]
    assert all(f"**{name}**" not in t for b, t in blocks.items() if b != block)
    assert "| hedge |" in blocks["reference"] and "| tree_ftrl |" in blocks["ranked"]
    if status == "refuted":
        assert f"**{name}** ⚠ REFUTED" in blocks[block]
        assert f"refuted the claim of {name}" in err and f"exit status {EXIT_REFUTED}" in err
    # the plot's legend marks it, and never labels non-private Hedge with an eps
    labels = _legend(out / "regret_vs_T.png")
    assert legend in labels and "hedge: non-private" in labels and "tree_ftrl ε=1" in labels
    assert not any(lb_.startswith("hedge ε") for lb_ in labels)


def test_judge_table():
    """Every status the leaderboard gives, from the claim, the ledger and the audit."""
    b = [Builtin("hedge", None, False, ""), Builtin("l2p_mw", None, True, "")]

    class U:
        def __init__(self, name, claimed_eps):
            self.name, self.claimed_eps = name, claimed_eps

    users = [U("each", None), U("two", 2.0), U("inf", math.inf), U("half", 0.5)]
    audits = {"each": {1.0: {"eps_lower": 0.1, "violation": False}, 0.25: {"eps_lower": 3.0, "violation": True}},
              "two": {2.0: {"eps_lower": 0.0, "violation": False}},
              "half": {0.5: {"eps_lower": 0.2, "violation": False}}}
    j = _Judge(users, b, audits)
    table = [  # learner, eps, certified, eps certified -> status
        ("hedge", 1.0, True, math.inf, "non-private"),
        ("l2p_mw", 1.0, True, 0.2, "certified"),
        ("l2p_mw", 1.0, False, math.nan, "not-run"),
        ("l2p_mw", 1.0, True, 1.5, "weaker-claim"),
        ("each", 1.0, True, 1.0, "not-refuted"),
        ("each", 0.25, True, 0.25, "refuted"),
        ("each", 0.5, True, 0.5, "unaudited"),      # no audit at this level
        ("two", 1.0, True, 2.0, "weaker-claim"),    # claims eps = 2 at eps = 1: not matched
        ("two", 2.0, True, 2.0, "not-refuted"),
        ("half", 1.0, True, 0.5, "not-refuted"),    # more private than the level compared
        ("inf", 1.0, True, math.inf, "non-private"),
    ]
    got = [(lrn, e, j.judge(lrn, e, c, ec)["status"]) for lrn, e, c, ec, _ in table]
    assert got == [(lrn, e, st) for lrn, e, _, _, st in table]
    assert j.judge("each", 0.25)["audit_eps_lower"] == 3.0 and j.claim("inf", 1.0) == math.inf


def test_exit_statuses_are_documented(capsys):
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"{EXIT_REFUTED} leaderboard written, and the audit refuted" in help_text
    assert "--claimed-eps" in help_text and "inf declares it non-private" in help_text
    guide = (ROOT / "docs" / "guide" / "compare.md").read_text()
    for row in ("| 0 |", f"| {EXIT_REFUTED} |", "| 2 |", "| 130 |"):
        assert row in guide.split("{#exit-status}")[1], row


def _run_line(cmd: str, cwd) -> subprocess.CompletedProcess:
    """Run a printed ``jaxdp compare ...`` line in a shell, in a fresh process, as a user would."""
    bindir = os.path.dirname(sys.executable)
    if not os.path.exists(os.path.join(bindir, "jaxdp")):    # no console script: the same CLI as a module
        cmd = f"{shlex.quote(sys.executable)} -m jaxdp.cli " + cmd.split(" ", 1)[1]
    env = dict(os.environ, JAX_PLATFORMS="cpu", PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_reproduce_line_resumes_a_quick_run_and_refusals_name_the_setting(tmp_path, capsys):
    learner = EXAMPLES / "my_learner.py"
    out = tmp_path / "run"
    assert main(["compare", f"{learner}:make", *TINY, "--no-plot", "--out", str(out)]) == 0
    capsys.readouterr()
    lb = pd.read_csv(out / "leaderboard.csv")
    mine = lb[lb["learner"] == "noisy_leader"].iloc[0]
    assert mine["status"] == "not-refuted" and mine["rank"] >= 1     # a private learner, audited: ranked
    md = (out / "leaderboard.md").read_text()
    cmd = md.split("```bash\n", 1)[1].split("\n```", 1)[0]
    assert cmd == (out / "command.txt").read_text().strip()
    for part in ("--quick", "--audit-n 2000", "--T 16,32", "--d 2", "--seeds 2", "--instances iid-noise",
                 "--learners hedge,tree_ftrl", "--no-plot", f"--out {out}"):
        assert part in cmd, (part, cmd)
    results = (out / "results.csv").read_bytes()
    chunks = {p.name: p.stat().st_mtime_ns for p in (out / "chunks").iterdir()}

    # the printed line resumes the run: nothing is checked, audited or run again
    r = _run_line(cmd, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "0 chunks run" in r.stderr and "audit: reusing" in r.stderr and "not rechecked" in r.stderr
    assert "conformance checks of" not in r.stderr and "audit of noisy_leader at" not in r.stderr
    assert (out / "results.csv").read_bytes() == results
    assert {p.name: p.stat().st_mtime_ns for p in (out / "chunks").iterdir()} == chunks
    assert (out / "leaderboard.md").read_text() == md

    # a refusal names each differing setting (old value there, new value now) and the resuming command
    argv = shlex.split(cmd)[1:]
    refusals = [
        ([a for a in argv if a != "--quick"], ["--quick: given there, not given now"]),
        ([("0.5" if prev == "--eps" else a) for prev, a in zip([""] + argv, argv)], ["--eps: 1 there, 0.5 now"]),
        ([("4" if prev == "--seeds" else "32,64" if prev == "--T" else a) for prev, a in zip([""] + argv, argv)],
         ["--seeds: 2 there, 4 now", "--T: 16,32 there, 32,64 now"]),
    ]
    for args, names in refusals:
        assert main(args) == 2
        err = capsys.readouterr().err
        assert "holds another run" in err and f"Resume it with: {cmd}   (or use another --out" in err, err
        for n in names:
            assert n in err, (n, err)
    # results copied to another directory: the resume line names where they are now, not where they were made
    moved = tmp_path / "runb"
    shutil.copytree(out, moved)
    assert main([("0.5" if prev == "--eps" else str(moved) if prev == "--out" else a)
                 for prev, a in zip([""] + argv, argv)]) == 2
    err = capsys.readouterr().err
    resume = err.split("Resume it with: ", 1)[1].split("   (or use another --out", 1)[0]
    assert resume == cmd.replace(f"--out {out}", f"--out {moved}") and f"--out {moved}" in resume, err
    # the directory was made by another version of the learner's module
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["config"]["users"][0]["source_sha1"] = "0" * 16
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "noisy_leader: source of its module (the learner's code changed): 0000000000000000 there" in err, err
