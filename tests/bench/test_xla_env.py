"""benchmarks/harness/xla_env.py: the XLA flags a benchmark worker asks for are all parsed (the device count it
asked for is the one it gets, checked in a fresh process), bad flags and arguments are refused by name."""
import os
import subprocess
import sys

import pytest

from benchmarks.harness.common import ROOT, root_on_pythonpath
from benchmarks.harness.xla_env import EXPECT_VAR, Stopwatch, check_xla, cpu_xla_env


def test_cpu_xla_env_flags_are_all_dashed_and_replace_old_ones():
    env = cpu_xla_env(2, single_thread=True, base="--xla_force_host_platform_device_count=8 --xla_dump_to=/tmp/x")
    words = env["XLA_FLAGS"].split()
    assert all(w.startswith("--") for w in words)
    assert words.count("--xla_force_host_platform_device_count=2") == 1
    assert "--xla_force_host_platform_device_count=8" not in words and "--xla_dump_to=/tmp/x" in words
    assert "--xla_cpu_multi_thread_eigen=false" in words
    assert env["JAX_PLATFORMS"] == "cpu" and env[EXPECT_VAR] == "2"


def test_cpu_xla_env_refuses_bad_input():
    with pytest.raises(ValueError, match="intra_op_parallelism_threads"):
        cpu_xla_env(2, base="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    with pytest.raises(ValueError, match="devices"):
        cpu_xla_env(0)
    with pytest.raises(TypeError, match="devices"):
        cpu_xla_env(2.0)


def test_worker_gets_the_devices_it_asked_for_and_the_old_flags_did_not():
    """The fixed flags give 2 devices in a fresh process; the old bench_bandits string gave 1, and check_xla
    says so."""
    code = "from benchmarks.harness.xla_env import check_xla; import json; print(json.dumps(check_xla()))"
    env = root_on_pythonpath(dict(os.environ, **cpu_xla_env(2, single_thread=True)))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert '"devices": 2' in out.stdout and '"single_thread": true' in out.stdout
    env["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1 "
                        "--xla_force_host_platform_device_count=2")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode != 0 and "asked for 2 device(s) but jax.device_count() = 1" in out.stderr


def test_check_xla_in_this_process_and_stopwatch():
    info = check_xla(None)
    assert info["devices"] >= 1
    with pytest.raises(RuntimeError, match="asked for"):
        check_xla(info["devices"] + 1)
    with Stopwatch() as sw:
        sum(range(10000))
    assert sw.wall >= 0 and sw.cpu >= 0
