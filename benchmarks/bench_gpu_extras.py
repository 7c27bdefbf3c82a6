"""The cases of issue 40's GPU suite that the accelerator suite (bench_suite.py) does not run: UCB1, Hedge at
d = 1000 and DP-FTRL with a BLT, at one batch size each.

    python benchmarks/bench_gpu_extras.py [--tiny] [--seeds 65536] [--T 1024] [--out FILE]

Each case: one compiling call (wall and CPU seconds), then the best of three warm calls; seed-rounds/s and, for
Hedge, expert-updates/s. The device count is recorded (and the platform). ``--tiny``: 64 seeds, T = 64 (a CPU
smoke run for CI: rates not representative). Used by benchmarks/gpu_suite.sh.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))


def _cases(T: int):
    import jax.numpy as jnp

    import jaxdp.bandits as BD
    from jaxdp.experts import BernoulliParams, HedgeParams, bernoulli_experts, experts_problem
    from jaxdp.oco import adv_smooth_realizable, dp_ftrl, dp_ftrl_params, smooth_realizable_params, squared_problem
    from jaxdp.privacy.mechanisms.matrix_factorization import get_mechanism
    from jaxdp.registry import get_learner

    K = 9
    prob_f = squared_problem(4, 1.0)
    return {
        "UCB1 K=9": (BD.ucb1(K), BD.bernoulli_arms(K, "common"), BD.bandit_problem("pseudo"),
                     BD.UCB1Params(jnp.float32(2.0)), BD.BernoulliArmsParams(jnp.linspace(0.1, 0.9, K, dtype=jnp.float32)),
                     0),
        "Hedge d=1000": (get_learner("hedge").factory(1000), bernoulli_experts(1000), experts_problem(),
                         HedgeParams(jnp.float32(0.05)), BernoulliParams(gap=jnp.float32(0.1)), 1000),
        "DP-FTRL BLT d=4": (dp_ftrl(prob_f, T, None, get_mechanism("blt", max(T, 2))), adv_smooth_realizable(4),
                            prob_f, dp_ftrl_params(20.0, 1.0, 2.0), smooth_realizable_params(1.0), 0),
    }


def run(seeds: int, T: int) -> list:
    import jax

    from benchmarks.harness.xla_env import Stopwatch
    from jaxdp.core import seed_keys, simulate

    rows = []
    for name, (lrn, adv, prob, p, ap, d) in _cases(T).items():
        keys = seed_keys(0, seeds)

        def call():
            return jax.block_until_ready(simulate(lrn, adv, prob, p, ap, keys, T))

        with Stopwatch() as first:
            call()
        best = cpu = float("inf")
        for _ in range(3):
            with Stopwatch() as sw:
                call()
            best, cpu = min(best, sw.wall), min(cpu, sw.cpu)
        rows.append({"case": name, "platform": jax.default_backend(), "devices": jax.device_count(), "seeds": seeds,
                     "T": T, "first call (s)": first.wall, "first call (CPU s)": first.cpu, "run (s)": best,
                     "run (CPU s)": cpu, "seed-rounds/s": seeds * T / best,
                     "expert-updates/s": seeds * T * d / best if d else None})
        print(f"{name}: {seeds * T / best:.3g} seed-rounds/s", file=sys.stderr, flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiny", action="store_true", help="64 seeds, T = 64 (CPU smoke run)")
    ap.add_argument("--seeds", type=int, default=None, help="batch size (default 65536; --tiny 64)")
    ap.add_argument("--T", type=int, default=None, help="horizon (default 1024; --tiny 64)")
    ap.add_argument("--out", default=None, help="also write the markdown section to this file")
    a = ap.parse_args(argv)
    seeds = a.seeds or (64 if a.tiny else 65536)
    T = a.T or (64 if a.tiny else 1024)
    if seeds < 1 or T < 2:
        raise ValueError(f"--seeds must be >= 1 and --T >= 2, got {seeds}, {T}")
    from benchmarks.harness.common import emit, machine_info, table

    rows = run(seeds, T)
    load = os.getloadavg()
    md = "\n".join([
        "## Further cases (`benchmarks/bench_gpu_extras.py`)", "",
        f"{machine_info()}; load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}; "
        f"{time.strftime('%Y-%m-%d %H:%M')}. First call = compile + run; run = best of 3 warm calls.", "",
        table(rows, list(rows[0].keys())), ""])
    emit(md, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
