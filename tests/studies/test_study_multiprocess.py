"""Studies run by several real processes on one results directory, and chunks that prove their integrity.

* ``--processes 2`` (two ``jax.distributed`` processes, 2 forced CPU devices each) gives a
  ``results.csv`` byte-identical to a one-process run, with every chunk computed exactly once;
* one of the ``--processes 2`` workers killed with SIGKILL mid-chunk: the launcher names it in one
  line, stops the other, keeps jax.distributed's errors in ``OUT/logs/`` (off the terminal) and exits
  1; a rerun completes, byte-identical to a clean run;
* two launcher-style processes (``JAXDP_PROCESS_ID``/``JAXDP_NUM_PROCESSES``, as under SLURM), one
  killed with SIGKILL mid-chunk: the survivor takes over the dead process's claim, a rerun computes
  only what is missing, and the result is again byte-identical;
* damaged ("garbage") and truncated chunk files are named by ``jaxdp study verify`` and by the
  rerun, recomputed, never merged; the final ``results.csv`` is identical to a clean run's.

Tiny configs (4 chunks of 2 x 3 grid points x 6 seeds): seconds per process.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from jaxdp.cli import main

ARGS = ["hedge-baseline", "--quick", "--no-progress", "--no-plot", "--set", "T=16,32,64", "--set", "d=3",
        "--set", "learners=hedge,ftpl", "--set", "adversaries=noise,planted", "--seeds", "6"]
N_CHUNKS = 4   # (learner, adversary) groups


def _env(**kw):
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    for k in ("JAXDP_PROCESS_ID", "JAXDP_NUM_PROCESSES", "JAXDP_COORDINATOR", "SLURM_PROCID", "SLURM_NTASKS",
              "JAXDP_NO_MERGE"):
        env.pop(k, None)
    env.update(kw)
    return env


def _cmd(out, *extra):
    return [sys.executable, "-m", "jaxdp.cli", "study", "run", *ARGS, "--out", str(out), *extra]


def _chunks_run(stderr: str) -> list[int]:
    return [int(m) for m in re.findall(r"\((\d+) chunks run", stderr)]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """A clean one-process run (in this pytest process)."""
    out = tmp_path_factory.mktemp("ref") / "run"
    assert main(["study", "run", *ARGS, "--out", str(out)]) == 0
    assert len(list((out / "chunks").glob("*.csv"))) == N_CHUNKS
    return out


def test_two_processes_two_devices_each_bit_identical(reference, tmp_path):
    out = tmp_path / "two"
    env = _env(XLA_FLAGS="--xla_force_host_platform_device_count=2")
    r = subprocess.run(_cmd(out, "--processes", "2"), env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "[process 0 of 2, jax.distributed]" in r.stderr and "[process 1 of 2, jax.distributed]" in r.stderr
    runs = _chunks_run(r.stderr)
    # two workers split the chunks (each computed exactly once), then the launcher merges (0 run)
    assert sum(runs) == N_CHUNKS and len(runs) == 3 and runs[-1] == 0, r.stderr[-3000:]
    assert (out / "results.csv").read_bytes() == (reference / "results.csv").read_bytes()
    assert main(["study", "verify", str(out)]) == 0
    # the workers' own output is in their logs, not on the terminal
    assert sorted(f.name for f in (out / "logs").glob("*.log")) == ["process-0.log", "process-1.log"]
    assert "jaxdp: worker finished" in (out / "logs" / "process-1.log").read_text()


# what jax.distributed prints when a peer dies (coordination-service errors, a C++ stack trace)
_SPAM = ("coordination_service", "CoordinationService", "Check failure", "heartbeat", "Traceback", "@     0x")


def test_launcher_names_a_killed_worker_stops_the_other_and_rerun_completes(reference, tmp_path):
    out = tmp_path / "launch-killed"
    t0 = time.time()
    launcher = subprocess.Popen(_cmd(out, "--processes", "2"), env=_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    victim = None
    while victim is None and launcher.poll() is None and time.time() < t0 + 120:
        for c in (out / "claims").glob("*") if (out / "claims").exists() else []:
            m = re.search(r'"pid": (\d+)', c.read_text() if c.exists() else "")
            if m:
                victim = int(m.group(1))     # a worker that has started a chunk
        time.sleep(0.01)
    assert victim is not None, "no worker ever claimed a chunk"
    try:   # the victim's rank, as the launcher gave it
        env = open(f"/proc/{victim}/environ", "rb").read().split(b"\0")
        true_rank = next(e.split(b"=")[1].decode() for e in env if e.startswith(b"JAXDP_PROCESS_ID="))
    except OSError:   # pragma: no cover - no /proc
        true_rank = None
    os.kill(victim, signal.SIGKILL)
    _, err = launcher.communicate(timeout=120)
    stopped_s = time.time() - t0
    assert launcher.returncode == 1, err[-3000:]
    m = re.search(rf"process (\d) of 2 \(pid {victim}\) was killed by SIGKILL", err)
    assert m, err[-3000:]
    rank = m.group(1)
    assert true_rank in (None, rank)
    errors = [ln for ln in err.splitlines() if ln.startswith("jaxdp: error:")]
    assert len(errors) == 1, err[-3000:]
    assert (f"process {rank} of 2 was killed by SIGKILL" in errors[0] and "rerun the same command" in errors[0]
            and str(out / "logs") in errors[0]), errors[0]
    assert not [s for s in _SPAM if s in err], err[-3000:]
    assert (out / "logs" / f"process-{rank}.log").exists()
    # the rerun (in this process, whose programs the reference run compiled) takes over the dead
    # claim, computes only what is missing, and equals a clean run byte for byte
    done = len(list((out / "chunks").glob("*.csv")))
    assert main(["study", "run", *ARGS, "--out", str(out)]) == 0
    assert (out / "results.csv").read_bytes() == (reference / "results.csv").read_bytes()
    assert main(["study", "verify", str(out)]) == 0
    assert done < N_CHUNKS and not [c for c in (out / "claims").glob("*") if not c.name.startswith(".")]
    assert stopped_s < 100, f"the launcher took {stopped_s:.0f}s to stop"


def test_killed_process_then_rerun_completes_only_what_is_missing(reference, tmp_path):
    out = tmp_path / "killed"
    procs = [subprocess.Popen(_cmd(out), env=_env(JAXDP_PROCESS_ID=str(i), JAXDP_NUM_PROCESSES="2"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for i in range(2)]
    victim = procs[1]
    deadline = time.time() + 300
    killed_claim = None
    while time.time() < deadline and victim.poll() is None and killed_claim is None:
        for c in (out / "claims").glob("*") if (out / "claims").exists() else []:
            try:
                if f'"pid": {victim.pid}' in c.read_text():
                    killed_claim = c.name
            except OSError:
                pass
        time.sleep(0.01)
    assert killed_claim is not None and victim.poll() is None, "process 1 never held a claim"
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    survivor_rc = procs[0].wait(timeout=300)
    err0 = procs[0].stderr.read()
    assert survivor_rc == 0, err0[-3000:]
    before = {f.name: f.read_bytes() for f in (out / "chunks").glob("*.csv")}
    missing = N_CHUNKS - len(before)
    r = subprocess.run(_cmd(out), env=_env(), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert _chunks_run(r.stderr) == [missing], r.stderr[-2000:]
    after = {f.name: f.read_bytes() for f in (out / "chunks").glob("*.csv")}
    assert len(after) == N_CHUNKS and all(after[k] == v for k, v in before.items())
    assert (out / "results.csv").read_bytes() == (reference / "results.csv").read_bytes()
    assert not [c for c in (out / "claims").glob("*") if not c.name.startswith(".")]


def test_damaged_and_truncated_chunks_are_named_and_recomputed(reference, tmp_path, capsys):
    d = tmp_path / "damaged"
    shutil.copytree(reference, d)
    (d / "results.csv").unlink()
    chunks = sorted((d / "chunks").glob("*.csv"))
    garbage, truncated = chunks[0], chunks[1]
    garbage.write_text("garbage")
    data = truncated.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    capsys.readouterr()

    assert main(["study", "verify", str(d)]) == 1
    rep = capsys.readouterr().out
    assert f"DAMAGED chunks/{garbage.name}" in rep and f"DAMAGED chunks/{truncated.name}" in rep
    assert "2 DAMAGED" in rep

    assert main(["study", "run", *ARGS, "--out", str(d)]) == 0
    err = capsys.readouterr().err
    assert f"chunks/{garbage.name} is damaged" in err and f"chunks/{truncated.name} is damaged" in err
    assert "(2 chunks run, 2 already done, 2 damaged and recomputed)" in err
    assert (d / "results.csv").read_bytes() == (reference / "results.csv").read_bytes()
    assert main(["study", "verify", str(d)]) == 0


def test_damaged_results_csv_and_integrity_records_are_detected(reference, tmp_path, capsys):
    d = tmp_path / "res"
    shutil.copytree(reference, d)
    with open(d / "results.csv", "a") as f:
        f.write("0,0,hedge\n")
    assert main(["study", "verify", str(d)]) == 1
    assert "results.csv: damaged" in capsys.readouterr().out
    # a chunk whose integrity record is lost is not trusted
    side = sorted((d / "chunks").glob("*.json"))[0]
    side.unlink()
    assert main(["study", "run", *ARGS, "--out", str(d)]) == 0
    assert "no integrity record" in capsys.readouterr().err
    assert (d / "results.csv").read_bytes() == (reference / "results.csv").read_bytes()


def test_process_identity_from_launcher_variables(monkeypatch):
    from jaxdp.studies.runner import _order, process_identity

    for k in ("JAXDP_PROCESS_ID", "JAXDP_NUM_PROCESSES", "SLURM_PROCID", "SLURM_NTASKS"):
        monkeypatch.delenv(k, raising=False)
    assert process_identity() == (0, 1, "single")
    monkeypatch.setenv("SLURM_PROCID", "3")
    monkeypatch.setenv("SLURM_NTASKS", "4")
    assert process_identity() == (3, 4, "SLURM")
    monkeypatch.setenv("JAXDP_PROCESS_ID", "1")
    monkeypatch.setenv("JAXDP_NUM_PROCESSES", "2")
    assert process_identity() == (1, 2, "JAXDP")           # the explicit variables win
    monkeypatch.setenv("JAXDP_PROCESS_ID", "2")
    with pytest.raises(ValueError, match="JAXDP_PROCESS_ID=2 must be in"):
        process_identity()
    # process r starts with chunks r, r + n, ... and then takes the others' leftovers
    assert _order(5, 1, 2) == [1, 3, 0, 2, 4]
    assert sorted(_order(7, 2, 3)) == list(range(7))


def test_stale_claims_are_taken_over_live_ones_are_not(tmp_path):
    import json as _json

    from jaxdp.studies.store import _HOST, _claim

    live = tmp_path / "live"
    assert _claim(live, timeout=3600) and _json.loads(live.read_text())["pid"] == os.getpid()
    # a claim held by a live process on this host (pid 1 always exists) is respected
    live.write_text(_json.dumps({"host": _HOST, "pid": 1, "time": 0}))
    assert not _claim(live, timeout=3600)
    # a dead owner on this host: taken over at once
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    dead = tmp_path / "dead"
    dead.write_text(_json.dumps({"host": _HOST, "pid": p.pid, "time": 0}))
    assert _claim(dead, timeout=3600)
    assert _json.loads(dead.read_text())["pid"] == os.getpid()
    # another host's claim: taken over only once older than the timeout
    other = tmp_path / "other"
    other.write_text(_json.dumps({"host": "elsewhere", "pid": 1, "time": 0}))
    assert not _claim(other, timeout=3600)
    os.utime(other, (time.time() - 7200, time.time() - 7200))
    assert _claim(other, timeout=3600)


def test_files_are_created_whole_and_once(tmp_path):
    """A manifest or claim appears with its full text or not at all (written beside it, then hard-linked), a second
    creation of the same name fails, no temporary file is left, and a claim that is not JSON is garbage (never a
    claim being written) and is taken over at once."""
    import json as _json

    from jaxdp.studies.store import _claim, _create

    f = tmp_path / "manifest.json"
    assert _create(f, '{"study": "a"}') and not _create(f, '{"study": "b"}')
    assert _json.loads(f.read_text()) == {"study": "a"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json"]
    garbage = tmp_path / "garbage"
    garbage.write_text("{not json")
    assert _claim(garbage, timeout=3600) and _json.loads(garbage.read_text())["pid"] == os.getpid()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["garbage", "manifest.json"]


def test_files_are_created_once_without_hard_links(tmp_path, monkeypatch):
    """On a file system without hard links (``os.link`` raises ``PermissionError``, as on some FUSE mounts) the
    creation falls back to ``O_EXCL``: still exactly one creator, the text whole, no temporary file left."""
    import json as _json

    from jaxdp.studies import store

    def no_links(src, dst):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(store.os, "link", no_links)
    f = tmp_path / "manifest.json"
    assert store._create(f, '{"study": "a"}') and not store._create(f, '{"study": "b"}')
    assert _json.loads(f.read_text()) == {"study": "a"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json"]


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc to see a zombie")
def test_a_zombie_owner_is_dead():
    """A killed process whose parent has not reaped it yet (a zombie) holds no claim."""
    from jaxdp.studies.store import _pid_alive

    p = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.time() + 30
    while time.time() < deadline:
        with open(f"/proc/{p.pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.01)
    try:
        assert not _pid_alive(p.pid)          # not reaped: os.kill(pid, 0) still succeeds
        assert _pid_alive(os.getpid())
    finally:
        p.wait()
    assert not _pid_alive(p.pid)
