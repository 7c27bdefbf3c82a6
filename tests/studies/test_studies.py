"""Studies: chunked, atomic, resumable runs; aggregation; the CLI."""
import json
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from jaxdp import registry
from jaxdp.cli import main
from jaxdp.studies.framework import fit_slopes, resolve_config, run_study, summarize

TINY = {"seeds": 8, "d": [4], "T": [32, 64, 128, 256], "learners": ["hedge", "dartboard"],
        "adversaries": ["noise", "alternating"]}


def _study(**over):
    e = registry.get_study("hedge-baseline")
    cfg = resolve_config("hedge-baseline", e.extra["defaults"], e.extra["quick"], True, {**TINY, **over})
    st = e.fn(cfg)
    st.seeds_per_chunk = 4
    return st


def test_interrupted_study_resumes_with_every_chunk_once(tmp_path):
    full = run_study(_study(), tmp_path / "full", progress=False, plot=False)
    n_chunks = full.chunks_run
    assert n_chunks == 8  # 2 learners x 2 adversaries x 2 seed blocks

    part = tmp_path / "part"
    r1 = run_study(_study(), part, progress=False, plot=False, max_chunks=3)
    assert r1.chunks_run == 3 and not (part / "results.csv").exists()

    # a crash inside a chunk leaves no partial file behind
    st = _study()
    calls = {"n": 0}
    inner = st.run

    def crashing(points, seeds):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return inner(points, seeds)

    st.run = crashing
    with pytest.raises(KeyboardInterrupt):
        run_study(st, part, progress=False, plot=False)
    assert len(list((part / "chunks").glob("*.csv"))) == 4
    assert not list((part / "chunks").glob(".*tmp*"))

    r3 = run_study(_study(), part, progress=False, plot=False)
    assert r3.chunks_skipped == 4 and r3.chunks_run == n_chunks - 4
    df = pd.read_csv(part / "results.csv")
    assert not df.duplicated(["point", "seed"]).any()
    assert len(df) == len(_study().points) * 8
    pd.testing.assert_frame_equal(df, pd.read_csv(tmp_path / "full" / "results.csv"))
    m = json.loads((part / "manifest.json").read_text())
    assert m["chunks_done"] == n_chunks and m["versions"]["jax"]


def test_killed_process_resumes(tmp_path):
    """SIGKILL a real `jaxdp study run` mid-way; the rerun completes with every chunk exactly once."""
    out = tmp_path / "killed"
    args = [sys.executable, "-m", "jaxdp.cli", "study", "run", "hedge-baseline", "--quick", "--out", str(out),
            "--no-progress", "--no-plot", "--set", "T=64,128,256,512", "--set", "d=4", "--seeds", "8",
            "--set", "learners=hedge,dartboard"]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while time.time() < deadline and len(list((out / "chunks").glob("*.csv"))) < 2 and p.poll() is None:
        time.sleep(0.05)
    assert p.poll() is None, "the study finished before it could be killed"
    p.send_signal(signal.SIGKILL)
    p.wait()
    done_before = {f.name: f.read_bytes() for f in (out / "chunks").glob("*.csv")}
    assert 2 <= len(done_before) < 8
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-1500:]
    files = {f.name: f.read_bytes() for f in (out / "chunks").glob("*.csv")}
    assert len(files) == 2 * 4  # one chunk per (learner, adversary, d) group
    for name, content in done_before.items():
        assert files[name] == content  # finished chunks were not recomputed
    df = pd.read_csv(out / "results.csv")
    assert not df.duplicated(["point", "seed"]).any() and len(df) == 2 * 4 * 4 * 8


def test_config_mismatch_is_refused(tmp_path):
    run_study(_study(), tmp_path, progress=False, plot=False, max_chunks=1)
    with pytest.raises(ValueError, match="holds a different study/config"):
        run_study(_study(seeds=4), tmp_path, progress=False, plot=False)


def test_fit_slopes_recovers_exponent():
    rng = np.random.default_rng(0)
    rows = [{"x": x, "seed": s, "y": 3 * x ** 0.7 * np.exp(rng.normal(0, 0.05))}
            for x in [10, 20, 40, 80, 160, 320] for s in range(50)]
    df = pd.DataFrame(rows)
    f = fit_slopes(df, "x", "y")
    assert f["slope_lo"][0] < 0.7 < f["slope_hi"][0]
    assert abs(f["slope"][0] - 0.7) < 0.02
    s = summarize(df, ["x"], ["y"])
    assert np.all(s["y_lo"] <= s["y_mean"]) and np.all(s["y_mean"] <= s["y_hi"])
    with pytest.raises(ValueError, match="resample='joint' needs a 'seed' column"):
        fit_slopes(df.drop(columns="seed"), "x", "y", resample="joint")


def test_summarize_copies_constants_per_point():
    # a point's constant column (a plan's eta) is copied beside its summary, after the metrics' columns
    df = pd.DataFrame({"x": [2, 1, 2, 1], "seed": [0, 0, 1, 1], "y": [1.0, 2.0, 3.0, 4.0], "eta": [0.5, 0.25] * 2})
    s = summarize(df, ["x"], ["y"], n_boot=10, constants=("eta",))
    assert list(s.columns) == ["x", "n_seeds", "y_mean", "y_lo", "y_hi", "eta"]
    assert s["eta"].tolist() == [0.25, 0.5] and s["y_mean"].tolist() == [3.0, 2.0]


def test_resolve_config_errors():
    with pytest.raises(ValueError, match="unknown parameter 'bogus' for study 'x'; allowed: a, b"):
        resolve_config("x", {"a": 1, "b": [1, 2]}, {}, False, {"bogus": "1"})
    cfg = resolve_config("x", {"a": 1, "b": [1, 2], "c": 0.5, "e": True}, {}, False,
                         {"a": "4", "b": "3,5", "c": "1e-2", "e": "false"})
    assert cfg["a"] == 4 and cfg["b"] == [3, 5] and cfg["c"] == 0.01 and cfg["e"] is False
    with pytest.raises(ValueError, match="bad value for a"):
        resolve_config("x", {"a": 1}, {}, False, {"a": "1.5"})


def test_cli_run_list_plot_and_errors(tmp_path, capsys):
    out = tmp_path / "cli"
    rc = main(["study", "run", "hedge-baseline", "--quick", "--out", str(out), "--no-progress", "--seeds", "4",
               "--set", "T=32,64,128,256", "--set", "d=4", "--set", "learners=hedge,ftpl"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "slopes:" in text and "theory_slope" in text
    assert (out / "results.csv").exists() and (out / "slopes.csv").exists()
    assert list(out.glob("*.png"))
    assert main(["study", "plot", str(out)]) == 0
    assert main(["study", "list"]) == 0
    assert "hedge-baseline" in capsys.readouterr().out
    for argv, msg in [(["study", "run", "nope"], "unknown study 'nope'"),
                      (["study", "run", "hedge-baseline", "--set", "bogus=1"], "unknown parameter 'bogus'"),
                      (["study", "run", "hedge-baseline", "--set", "learners=hedge,zzz"], "unknown value 'zzz'"),
                      (["study", "run", "hedge-baseline", "--seeds", "0"], "--seeds must be a positive integer"),
                      (["study", "plot", str(tmp_path / "none")], "not a study results directory"),
                      (["plan", "no-such-planner", "--eps", "1"], "unknown planner"),
                      (["audit", "no-such-audit"], "unknown audit")]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_cli_plan_and_audit_lists(capsys):
    assert main(["plan", "--list"]) == 0
    assert main(["audit", "--list"]) == 0
