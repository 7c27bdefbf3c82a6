"""The command line as a user meets it: one row per case.

* Ctrl-C (SIGINT) at any moment of a real ``jaxdp study run`` exits 130 with one line, also when
  the shell started it with SIGINT ignored (background jobs of a script), and keeps every finished
  chunk (the chunk in flight is finished first); a Ctrl-C during the merge, or one a library
  swallowed, still interrupts;
* refusals are one line naming what is wrong and what is allowed (``--out`` naming a file, an
  unknown planner key, a planner's missing options, an option a planner does not take);
* discoverability: ``jaxdp study show NAME``, help text for every ``jaxdp plan`` option,
  ``jaxdp --version``, ``python -m jaxdp``, the plan's pointers to the privacy-ledger guide,
  ``py.typed``.

The SIGINT cases run real processes on a 2-chunk study (seconds each); the rest run in-process.
"""
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import pytest

import jaxdp
from jaxdp.cli import _parser, main

TINY = ["hedge-baseline", "--quick", "--no-progress", "--no-plot", "--set", "T=16,32", "--set", "d=3",
        "--set", "learners=hedge,ftpl", "--set", "adversaries=noise", "--seeds", "4"]   # 2 chunks


def _env():
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    for k in ("JAXDP_PROCESS_ID", "JAXDP_NUM_PROCESSES", "JAXDP_COORDINATOR", "SLURM_PROCID", "SLURM_NTASKS",
              "JAXDP_NO_MERGE"):
        env.pop(k, None)
    return env


def _run(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as e:          # argparse's --help / --version
        code = e.code
    cap = capsys.readouterr()
    return code, cap.out, cap.err


# --------------------------------------------------------------------------- Ctrl-C

def _ignore_sigint():                 # what a non-interactive shell does to a background job
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _chunk_started(out):
    return (out / "claims").exists() and any(not c.name.startswith(".") for c in (out / "claims").iterdir())


# (case, when SIGINT is sent: seconds after the start or a condition on the results directory,
#  SIGINT ignored by the parent shell)
# (Before the interpreter runs jaxdp's first line, 0.1-0.4 s after the start on a loaded 2-core
# machine, Python's own default applies: the process dies of SIGINT, which a shell reports as 130.)
SIGINT_CASES = [
    ("0.5s: importing", 0.5, False),
    ("1s: importing or building", 1.0, False),
    ("1s: SIGINT ignored by the shell", 1.0, True),
    ("chunk in flight", _chunk_started, False),
]


@pytest.mark.parametrize("case,when,ignored", SIGINT_CASES, ids=[c[0] for c in SIGINT_CASES])
def test_ctrl_c_at_any_moment_exits_130(case, when, ignored, tmp_path):
    out = tmp_path / "run"
    p = subprocess.Popen([sys.executable, "-m", "jaxdp", "study", "run", *TINY, "--out", str(out)], env=_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=_ignore_sigint if ignored else None)
    t0 = time.time()
    if callable(when):
        while not when(out) and p.poll() is None and time.time() < t0 + 120:
            time.sleep(0.005)
    else:
        time.sleep(when)
    assert p.poll() is None, f"{case}: the run ended before the signal"
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130, f"{case}: exit {p.returncode}\n{err[-2000:]}"
    assert "jaxdp: interrupted; rerun to resume" in err and "Traceback" not in err, err[-2000:]
    if callable(when):
        # the chunk in flight was finished and kept (verified: intact, incomplete); a rerun resumes
        assert "stopping after the chunk in flight" in err and "finished chunks are kept in" in err
        assert len(list((out / "chunks").glob("*.csv"))) == 1, err[-2000:]
        assert main(["study", "verify", str(out)]) == 3


def test_ctrl_c_during_the_merge_and_a_swallowed_one_still_interrupt(tmp_path):
    """In-process: a Ctrl-C while the results are merged raises after the merge (complete results
    kept), and one the command line recorded but a library swallowed stops the run before any chunk."""
    import numpy as np

    from jaxdp.cli import _EarlySigint
    from jaxdp.studies.framework import Study, StudyInterrupted, run_study

    def study(analyze=None):
        return Study(name="sigint-probe", points=[{"x": 1}, {"x": 2}], seeds=3, analyze=analyze,
                     run=lambda pts, seeds: [{"m": np.asarray(seeds, float) * p["x"]} for p in pts])

    with pytest.raises(StudyInterrupted):
        run_study(study(lambda df: os.kill(os.getpid(), signal.SIGINT) or {}), tmp_path / "merge", progress=False,
                  plot=False)
    assert (tmp_path / "merge" / "results.csv").exists()

    early = _EarlySigint().install()
    try:
        early.hit = True
        with pytest.raises(StudyInterrupted):
            run_study(study(), tmp_path / "early", progress=False, plot=False)
    finally:
        early.restore()
    assert not list((tmp_path / "early").glob("chunks/*.csv"))
    run_study(study(), tmp_path / "early", progress=False, plot=False)    # not hit: runs
    assert (tmp_path / "early" / "results.csv").exists()


# --------------------------------------------------------------------------- refusals and discoverability

def _a_file(tmp_path):
    f = tmp_path / "results.txt"
    f.write_text("not a directory")
    return str(f)


PLAN = ["plan", "l2p_mw", "--eps", "0.5", "--delta", "1e-6", "--T", "100000", "--d", "64"]

# (case, argv (a callable of tmp_path for paths), exit status, in stdout, in stderr, in neither)
CLI_CASES = [
    ("--out names a file", lambda t: ["study", "run", *TINY, "--out", _a_file(t)], 2, [],
     ["jaxdp: error: --out", "is an existing file, not a directory"], ["Traceback"]),
    ("--out inside a file", lambda t: ["study", "run", *TINY, "--out", _a_file(t) + "/sub"], 2, [],
     ["which is a file, not a directory"], ["Traceback"]),
    ("compare --out not writable: refused before the run", ["compare", "--quick", "--out", "/proc/jaxdp-out"], 2, [],
     ["jaxdp: error: --out '/proc/jaxdp-out' cannot be written"], ["Traceback", "chunk"]),
    ("bench --out not writable: refused before the run", ["bench", "--quick", "--out", "/proc/jaxdp-bench.md"], 2,
     [], ["jaxdp: error: --out '/proc/jaxdp-bench.md' cannot be written"], ["Traceback"]),
    ("plan: unknown --set key", [*PLAN, "--set", "foo=1"], 2, [],
     ["planner 'l2p_mw' has no parameter 'foo'", "allowed keys: eps, delta, T, d, mode, B, grid"], ["Traceback"]),
    ("plan: no options", ["plan", "l2p_mw"], 2, [],
     ["planner 'l2p_mw' needs --eps, --delta, --T, --d"], ["Traceback", "keyword-only"]),
    ("plan: one option missing", ["plan", "l2p_mw", "--eps", "1", "--delta", "1e-6", "--d", "4"], 2, [],
     ["planner 'l2p_mw' needs --T;"], ["--eps,"]),
    ("plan: an option it does not take", ["plan", "laplace", "--eps", "1", "--n", "5"], 2, [],
     ["planner 'laplace' takes no --n; its parameters: --eps, --delta, --T, --d, --mode, --set sensitivity"], []),
    ("plan: NOT certified by default exits 3 and points to the guide", PLAN, 3,
     ["NOT certified", "see docs/guide/privacy-ledger.md#modes", "--mode certified"],
     ["do not certify the requested (eps, delta) (exit status 3)"], ["Traceback"]),
    ("plan: NOT certified in a mode asked for exits 0", [*PLAN, "--mode", "paper"], 0, ["NOT certified"], [],
     ["exit status 3"]),
    ("plan: a float floor of 1 points to the guide",
     ["plan", "potential_oco", "--eps", "50", "--delta", "1e-3", "--T", "10000", "--d", "2", "--mode", "certified"],
     0, ["-> OK", "float32 delta floor  1 ", "see docs/guide/privacy-ledger.md#float-floor"], [],
     ["privacy-ledger.md#modes"]),
    ("plan: certified, floor below 1: no pointer", ["plan", "above_threshold", "--eps", "1", "--T", "100000"], 0,
     ["-> OK", "float32 delta floor  0."], [], ["docs/guide/privacy-ledger.md"]),
    ("plan: --json is pure JSON", [*PLAN, "--mode", "paper", "--json"], 0, ['"certified"'], [], ["docs/guide"]),
    ("plan: --json, NOT certified by default", [*PLAN, "--json"], 3, ['"ok": false'], [], ["docs/guide"]),
    ("study show", ["study", "show", "hedge-baseline"], 0,
     ["hedge-baseline: Hedge, shrinking dartboard and FTPL", "seeds", "int, >= 1", "default 64   (--quick: 32)",
      "independent runs per grid point", "list of int, in [2, 1048576]", "default 10,100   (--quick: 10)",
      "list of str, one of hedge, dartboard, ftpl", "float, in [0, 0.5]", "the planted expert's loss is Ber(1/2 - gap)",
      "about (jaxdp.studies.hedge_baseline):"], [], []),
    ("study show: unknown study", ["study", "show", "nope"], 2, [], ["unknown study 'nope'; known: "], ["Traceback"]),
    ("--version", ["--version"], 0, [f"jaxdp {jaxdp.__version__}"], [], []),
    ("plan --help", ["plan", "--help"], 0, ["--mode MODE", "certified", "--set KEY=VALUE", "allowed ones",
                                            "jaxdp plan l2p_mw", "--mode certified"], [], []),
]


@pytest.mark.parametrize("case,argv,code,out_has,err_has,absent", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_case(case, argv, code, out_has, err_has, absent, tmp_path, capsys):
    got, out, err = _run(argv(tmp_path) if callable(argv) else argv, capsys)
    assert got == code, f"{case}: exit {got}\n{out[-1500:]}\n{err[-1500:]}"
    for s in out_has:
        assert s in out, f"{case}: {s!r} not in stdout:\n{out[-3000:]}"
    for s in err_has:
        assert s in err, f"{case}: {s!r} not in stderr:\n{err[-1500:]}"
    for s in absent:
        assert s not in out and s not in err, f"{case}: {s!r} printed"
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err       # one line


def test_every_plan_and_study_option_has_help():
    sub = next(a for a in _parser()._actions if a.dest == "cmd").choices
    plan = sub["plan"]
    study = next(a for a in sub["study"]._actions if a.dest == "study_cmd").choices
    for parser in (plan, study["run"], study["show"]):
        for a in parser._actions:
            if a.dest != "help":
                assert a.help, f"{parser.prog} {a.option_strings or a.dest} has no help text"


def test_python_dash_m_jaxdp_and_py_typed():
    r = subprocess.run([sys.executable, "-m", "jaxdp", "--version"], env=_env(), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == f"jaxdp {jaxdp.__version__}", r.stderr
    r = subprocess.run([sys.executable, "-m", "jaxdp", "study"], env=_env(), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and r.stderr == "jaxdp: error: usage: jaxdp study {list,show,run,plot,verify} ...\n"
    pkg = pathlib.Path(jaxdp.__file__).parent
    assert (pkg / "py.typed").exists() and (pkg / "__main__.py").exists()
    pyproject = pkg.parent / "pyproject.toml"
    if pyproject.exists():            # a source checkout: setuptools ships py.typed
        assert re.search(r'\[tool\.setuptools\.package-data\]\s*jaxdp\s*=\s*\[[^\]]*"py\.typed"',
                         pyproject.read_text())
