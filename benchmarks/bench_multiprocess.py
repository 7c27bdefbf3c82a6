"""Multi-process scaling of ``simulate``: 1 vs 2 processes under ``jax.distributed``, each pinned to
its own core with ``taskset``, and forced host devices, measured in one run.

    python benchmarks/bench_multiprocess.py [--seeds 8192] [--T 256] [--reps 3] [--no-write]

Configurations (CPU): one process on core 0; two processes on cores 0 and 1 (one device each,
``jax.distributed.initialize("127.0.0.1:PORT", 2, i)``, gloo collectives); one process on both
cores with 2 forced devices; two processes with 2 forced devices each. Every configuration runs
Hedge (d = 100) and L2P-MW (d = 64, B = 32) on the same keys; the script checks that every
configuration returns identical results (a hash of every output array) and writes the
"multiprocess" section of benchmarks/SCALING.md. Timings are the best of ``--reps`` calls after a
compiling call, taken by process 0 (its call includes the all-gather of the results); "CPU s per
process" is the CPU time each process spent in its best call, which shows the split of the work
even when the machine is shared.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))


def _worker(pid: int, nproc: int, port: str, seeds: int, T: int, reps: int) -> None:
    import hashlib

    import jax

    if nproc > 1:
        jax.distributed.initialize(f"127.0.0.1:{port}", num_processes=nproc, process_id=pid)
    import jax.numpy as jnp
    import numpy as np

    from jaxdp.core import seed_keys, simulate
    from jaxdp.experts import BernoulliParams, HedgeParams, bernoulli_experts, experts_problem
    from jaxdp.experts import l2p_mw_params
    from jaxdp.registry import get_learner

    bern = BernoulliParams(gap=jnp.float32(0.1))
    hedge, l2p_mw = get_learner("hedge").factory, get_learner("l2p_mw").factory   # the registered learners
    cases = {
        "Hedge d=100": (hedge(100), bernoulli_experts(100), HedgeParams(jnp.float32(0.1))),
        "L2P-MW d=64 B=32": (l2p_mw(64, 32), bernoulli_experts(64), l2p_mw_params(0.05, 0.1, 32, block_size=32)),
    }
    keys = seed_keys(0, seeds)
    from benchmarks.harness.xla_env import EXPECT_VAR

    asked = int(os.environ.get(EXPECT_VAR, "0"))
    if asked and jax.local_device_count() != asked:   # XLA_FLAGS not (all) parsed
        raise RuntimeError(f"asked for {asked} local device(s), got {jax.local_device_count()} "
                           f"(XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r})")
    out = {"devices": jax.device_count(), "local_devices": jax.local_device_count(),
           "xla_flags": os.environ.get("XLA_FLAGS", "")}
    for name, (learner, adv, params) in cases.items():
        def run():
            return simulate(learner, adv, experts_problem(), params, bern, keys, T)

        res = run()
        best = cpu = float("inf")
        for _ in range(reps):
            t0, c0 = time.perf_counter(), time.process_time()
            run()
            best = min(best, time.perf_counter() - t0)
            cpu = min(cpu, time.process_time() - c0)
        h = hashlib.sha256()
        for k in sorted(res):
            h.update(k.encode())
            h.update(np.ascontiguousarray(res[k]).tobytes())
        out[name] = {"best_s": best, "cpu_s": cpu, "rate": seeds * T / best, "hash": h.hexdigest()[:16]}
    print("RESULT " + json.dumps(out), flush=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(nproc: int, n_dev: int, cores: list[str], seeds: int, T: int, reps: int) -> dict:
    from benchmarks.harness.xla_env import cpu_xla_env

    env = dict(os.environ, **cpu_xla_env(n_dev))
    port = str(_free_port())
    procs = [subprocess.Popen(["taskset", "-c", cores[i], sys.executable, os.path.abspath(__file__), "--worker",
                               str(i), str(nproc), port, str(seeds), str(T), str(reps)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(nproc)]
    results = []
    for p in procs:
        o, e = p.communicate(timeout=3600)
        if p.returncode != 0:
            raise RuntimeError(e[-3000:])
        results.append(json.loads([ln for ln in o.splitlines() if ln.startswith("RESULT ")][-1][7:]))
    return results[0] | {"cpu_s": {k: [r[k]["cpu_s"] for r in results] for k, v in results[0].items()
                                   if isinstance(v, dict)},
                         "all_hashes": [{k: v["hash"] for k, v in r.items() if isinstance(v, dict)} for r in results]}


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=8192)
    ap.add_argument("--T", type=int, default=256)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        pid, nproc, port, seeds, T, reps = a.worker
        _worker(int(pid), int(nproc), port, int(seeds), int(T), int(reps))
        return ""
    from _scaling_md import table, write_section

    configs = [
        ("1 process, 1 core", 1, 1, ["0"]),
        ("2 processes, 1 core each", 2, 1, ["0", "1"]),
        ("1 process, 2 cores, 2 forced devices", 1, 2, ["0,1"]),
        ("2 processes, 1 core each, 2 forced devices each", 2, 2, ["0", "1"]),
    ]
    rows, hashes = [], set()
    base = {}
    for label, nproc, n_dev, cores in configs:
        r = _launch(nproc, n_dev, cores, a.seeds, a.T, a.reps)
        for hs in r["all_hashes"]:
            hashes.add(json.dumps(hs, sort_keys=True))
        row = {"configuration": label, "devices": r["devices"]}
        for case in ("Hedge d=100", "L2P-MW d=64 B=32"):
            base.setdefault(case, r[case]["rate"])
            row[f"{case} seed-rounds/s"] = r[case]["rate"]
            row[f"{case} speedup"] = f"{r[case]['rate'] / base[case]:.2f}x"
            row[f"{case} CPU s per process"] = " / ".join(f"{c:.2f}" for c in r["cpu_s"][case])
        rows.append(row)
        print(row, flush=True)
    identical = len(hashes) == 1
    cols = ["configuration", "devices", "Hedge d=100 seed-rounds/s", "Hedge d=100 speedup",
            "Hedge d=100 CPU s per process", "L2P-MW d=64 B=32 seed-rounds/s", "L2P-MW d=64 B=32 speedup",
            "L2P-MW d=64 B=32 CPU s per process"]
    body = (f"## Processes and devices (`benchmarks/bench_multiprocess.py`)\n\n"
            f"{a.seeds} seeds, T = {a.T}, {os.cpu_count()}-core CPU, python {platform.python_version()}, "
            f"{time.strftime('%Y-%m-%d %H:%M')}. Processes are pinned with `taskset`; two processes run under "
            f"`jax.distributed` (gloo), each computing its half of the seeds, and all-gather the results. "
            f"Best of {a.reps} calls after a compiling call. The machine was shared with other jobs, so rates are "
            f"noisy; the CPU seconds per process show how the work is split. Results identical across every process of every configuration: "
            f"**{'yes' if identical else 'NO'}**.\n\n" + table(rows, cols) + "\n")
    if not a.no_write:
        write_section("multiprocess", body)
    print(body)
    if not identical:
        raise SystemExit("results differ between configurations")
    return body


if __name__ == "__main__":
    main()
