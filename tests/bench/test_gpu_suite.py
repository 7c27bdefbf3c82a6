"""benchmarks/gpu_suite.sh (issue 40): its CPU fallback runs every case at tiny size and writes the report; without
a GPU and without --cpu-tiny it refuses with status 3. Never needs a GPU; timings are not asserted."""
import os
import subprocess
import sys

from benchmarks.harness.common import ROOT

SCRIPT = ROOT / "benchmarks" / "gpu_suite.sh"


def _env(**kw):
    env = dict(os.environ, PYTHON=sys.executable, JAX_PLATFORMS="cpu")
    env.update(kw)
    return env


def test_gpu_suite_cpu_tiny_writes_every_case(tmp_path):
    out = tmp_path / "suite.md"
    p = subprocess.run(["bash", str(SCRIPT), "--cpu-tiny"], env=_env(OUT=str(out), SUITE_TIMEOUT="300"),
                       capture_output=True, text=True, timeout=400)
    assert p.returncode == 0, p.stderr[-3000:]
    md = out.read_text()
    assert md.startswith("# Benchmark suite (cpu, tiny sizes")
    for case in ("hedge", "l2p_mw", "sparse_vector", "l2p_rmw_mala", "dp_ftrl", "label_dp", "UCB1 K=9",
                 "Hedge d=1000", "DP-FTRL BLT d=4"):
        assert f"| {case} |" in md, case
    assert "| devices |" in md or " devices |" in md


def test_gpu_suite_refuses_without_a_gpu_and_bad_arguments(tmp_path):
    p = subprocess.run(["bash", str(SCRIPT)], env=_env(OUT=str(tmp_path / "x.md")), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 3 and "no GPU" in p.stderr and not (tmp_path / "x.md").exists()
    p = subprocess.run(["bash", str(SCRIPT), "--bogus"], env=_env(), capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "usage" in p.stderr
