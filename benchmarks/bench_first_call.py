"""The first ``simulate`` call of a new process, without and with jaxdp's persistent compilation cache.

    python benchmarks/bench_first_call.py [--reps 3] [--seeds 256] [--T 1024] [--out benchmarks/FIRST_CALL.md]

For each of UCB1, EXP3, Hedge, DP-FTRL (binary tree) and L2P-MW: ``--reps`` fresh processes with no cache
(cold), one process that fills a new cache directory, then ``--reps`` fresh processes that find it there (warm).
Each process times its first ``simulate`` call (compile + run: wall and its own CPU seconds) and one later
call (run only); the parent also records each process's whole CPU time (``getrusage`` of the child: import,
compile, run). Medians over the processes; one XLA CPU device (asserted, benchmarks/harness/xla_env.py); the
load average with every row. Timings only: the cache's correctness is tested in tests/test_compilation_cache.py.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

HERE = pathlib.Path(__file__).resolve()
PROGRAMS = ("ucb1", "exp3", "hedge", "dp_ftrl", "l2p_mw")


def _program(name: str, seeds: int, T: int):
    import jax.numpy as jnp

    from jaxdp.core import seed_keys, simulate

    keys = seed_keys(0, seeds)
    if name in ("ucb1", "exp3"):
        import jaxdp.bandits as BD

        K = 9
        if name == "ucb1":
            learner, params = BD.ucb1(K), BD.UCB1Params(jnp.float32(2.0))
        else:
            learner, params = BD.exp3(K), BD.Exp3Params(jnp.float32(0.01), jnp.float32(0.01 / K), jnp.float32(1.0))
        adv, prob = BD.bernoulli_arms(K, "common"), BD.bandit_problem("pseudo")
        ap = BD.BernoulliArmsParams(jnp.linspace(0.1, 0.9, K, dtype=jnp.float32))
    elif name in ("hedge", "l2p_mw"):
        from jaxdp.experts import BernoulliParams, HedgeParams, bernoulli_experts, experts_problem, l2p_mw_params
        from jaxdp.registry import get_learner

        ap, prob = BernoulliParams(gap=jnp.float32(0.1)), experts_problem()
        if name == "hedge":
            learner, adv, params = get_learner("hedge").factory(100), bernoulli_experts(100), \
                HedgeParams(jnp.float32(0.1))
        else:
            learner, adv, params = get_learner("l2p_mw").factory(64, 32), bernoulli_experts(64), \
                l2p_mw_params(0.05, 0.1, 32, block_size=32)
    else:
        from jaxdp.oco import adv_smooth_realizable, dp_ftrl, dp_ftrl_params, smooth_realizable_params, \
            squared_problem

        prob = squared_problem(4, 1.0)
        learner, adv = dp_ftrl(prob, T), adv_smooth_realizable(4)
        params, ap = dp_ftrl_params(20.0, 1.0, 2.0), smooth_realizable_params(1.0)
    return lambda: simulate(learner, adv, prob, params, ap, keys, T)


def worker(name: str, cache: str, seeds: int, T: int) -> dict:
    """In a fresh process: the first and a second call of one program, with the cache at ``cache`` ("" none)."""
    if cache:
        from jaxdp import enable_compilation_cache

        enable_compilation_cache(cache)
    from benchmarks.harness.xla_env import Stopwatch, check_xla

    xla = check_xla(1)
    import jax

    f = _program(name, seeds, T)
    with Stopwatch() as first:
        jax.block_until_ready(f())
    with Stopwatch() as second:
        jax.block_until_ready(f())
    return {"program": name, "devices": xla["devices"], "xla_flags": xla["xla_flags"], "first_wall": first.wall,
            "first_cpu": first.cpu, "run_wall": second.wall, "run_cpu": second.cpu}


def _spawn(name: str, cache: str, seeds: int, T: int) -> dict:
    from benchmarks.harness.xla_env import cpu_xla_env

    env = dict(os.environ, **cpu_xla_env(1))
    env.pop("JAXDP_CACHE_DIR", None)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, str(HERE), "--worker", name, cache, str(seeds), str(T)], env=env,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        raise RuntimeError(f"worker {name} failed: {p.stderr[-2000:]}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["process_cpu"] = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    out["process_wall"] = wall
    out["load1"] = os.getloadavg()[0]
    return out


def measure(reps: int, seeds: int, T: int, programs=PROGRAMS) -> list:
    rows = []
    for name in programs:
        with tempfile.TemporaryDirectory(prefix="jaxdp-first-call-") as tmp:
            cold = [_spawn(name, "", seeds, T) for _ in range(reps)]
            _spawn(name, tmp, seeds, T)                       # fills the cache
            n_files = sum(1 for p in pathlib.Path(tmp).rglob("*") if p.is_file())
            warm = [_spawn(name, tmp, seeds, T) for _ in range(reps)]
        med = {f"{k}_{w}": statistics.median(r[w] for r in runs) for k, runs in (("cold", cold), ("warm", warm))
               for w in ("first_cpu", "first_wall", "process_cpu", "run_cpu")}
        rows.append({"program": name, "devices": cold[0]["devices"], "cache_files": n_files, **med,
                     "load1": statistics.median(r["load1"] for r in cold + warm)})
        print(f"{name}: cold first call {med['cold_first_cpu']:.2f} CPU s, warm {med['warm_first_cpu']:.2f} CPU s",
              file=sys.stderr, flush=True)
    return rows


def markdown(rows: list, reps: int, seeds: int, T: int, cmd: str) -> str:
    load = os.getloadavg()
    L = ["# First call of a new process: cold vs warm compilation cache (`benchmarks/bench_first_call.py`)", "",
         f"Written by `{cmd}` ({time.strftime('%Y-%m-%d %H:%M')}); {seeds} seeds, T = {T}; one XLA CPU device per "
         f"process (asserted); medians of {reps} fresh processes each way. Load average at the end "
         f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on a 2-core machine shared with other jobs: wall times "
         "move with the load, CPU seconds much less. *first call* = the first `simulate` call (compile + run) in "
         "the process's own CPU seconds; *process* = the whole process (import, compile, run; `getrusage` of the "
         "child); *run* = a second call (no compile). Warm: `jaxdp.enable_compilation_cache(dir)` with `dir` "
         "filled by one earlier process.", "",
         "| program | devices | cold first call (CPU s) | warm first call (CPU s) | cold / warm | cold first call "
         "(wall s) | warm first call (wall s) | cold process (CPU s) | warm process (CPU s) | run (CPU s) | "
         "cache files | load (1 min) |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        L.append(f"| {r['program']} | {r['devices']} | {r['cold_first_cpu']:.2f} | {r['warm_first_cpu']:.2f} | "
                 f"{r['cold_first_cpu'] / max(r['warm_first_cpu'], 1e-9):.1f}× | {r['cold_first_wall']:.2f} | "
                 f"{r['warm_first_wall']:.2f} | {r['cold_process_cpu']:.2f} | {r['warm_process_cpu']:.2f} | "
                 f"{r['warm_run_cpu']:.3f} | {r['cache_files']} | {r['load1']:.1f} |")
    return "\n".join(L) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3, help="fresh processes each way (default 3)")
    ap.add_argument("--seeds", type=int, default=256)
    ap.add_argument("--T", type=int, default=1024)
    ap.add_argument("--only", action="append", choices=PROGRAMS, help="only these programs (repeatable)")
    ap.add_argument("--out", default=None, help="markdown file to write (default: print only)")
    ap.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        name, cache, seeds, T = a.worker
        print(json.dumps(worker(name, cache, int(seeds), int(T))))
        return 0
    for k in ("reps", "seeds", "T"):
        if getattr(a, k) < 1:
            raise ValueError(f"--{k} must be >= 1, got {getattr(a, k)}")
    rows = measure(a.reps, a.seeds, a.T, tuple(a.only or PROGRAMS))
    md = markdown(rows, a.reps, a.seeds, a.T,
                  "python benchmarks/bench_first_call.py" + (" " + " ".join(argv or sys.argv[1:])).rstrip())
    from benchmarks.harness.common import emit

    emit(md, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
