"""Throughput of ``simulate`` against the number of seeds (1 ... 65536), untiled vs seed tiles.

    python benchmarks/bench_scaling.py [--quick] [--reps N] [--cases hedge100,hedge1000,l2p_mw,dp_ftrl]

"untiled" runs every seed of a device in one vmapped scan (``tile`` >= seeds: what
``simulate`` did before seed tiles); "tiled" is the default (``tile=None``: tiles sized
from the carried state's bytes, ``jaxdp.core.seed_tile``). Each point is the best of
``--reps`` timed calls after a compiling call (untiled and tiled alternate); the work per point is capped (fewer
rounds for many seeds), which does not change the per-round cost. Writes the
"seeds" section of benchmarks/SCALING.md.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _scaling_md import table, write_section  # noqa: E402


def _cases():
    import jax.numpy as jnp

    from jaxdp.experts import BernoulliParams, HedgeParams, bernoulli_experts, experts_problem, hedge
    from jaxdp.lazy import l2p_mw, l2p_mw_params
    from jaxdp.oco import adv_linear_oco, dp_ftrl, dp_ftrl_params, linear_oco_params, linear_problem, plan_dp_ftrl

    bern = BernoulliParams(gap=jnp.float32(0.1))
    plan = plan_dp_ftrl(eps=1.0, delta=1e-6, T=1024, d=64, L=1.0, D=1.0, setting="general")
    lin = linear_problem(64, 1.0)
    # name: (learner, adversary, problem, params, adv_params, T_max, work per point (seed-rounds), round multiple)
    return {
        "hedge100": ("Hedge, d=100", hedge(100), bernoulli_experts(100), experts_problem(), HedgeParams(jnp.float32(0.1)),
                     bern, 1024, 2 ** 21, 1),
        "hedge1000": ("Hedge, d=1000", hedge(1000), bernoulli_experts(1000), experts_problem(),
                      HedgeParams(jnp.float32(0.1)), bern, 1024, 2 ** 19, 1),
        "l2p_mw": ("L2P-MW, d=64, B=32", l2p_mw(64, 32), bernoulli_experts(64), experts_problem(),
                   l2p_mw_params(0.05, 0.1, 32, block_size=32), bern, 1024, 2 ** 21, 32),
        "dp_ftrl": ("DP-FTRL, d=64, T_max=1024 (tree depth 11)", dp_ftrl(lin, 1024), adv_linear_oco(64), lin,
                    dp_ftrl_params(**plan.params), linear_oco_params("rademacher"), 1024, 2 ** 19, 1),
    }


def measure(case, seeds: int, reps: int) -> dict:
    """Untiled and tiled rates at ``seeds``, timed alternately (best of ``reps`` each, after compiling both)."""
    from jaxdp.core import carry_bytes, seed_keys, seed_tile, simulate

    label, learner, adv, prob, params, adv_params, T_max, work, mult = case
    T = max(2 * mult, min(T_max, work // seeds))
    T -= T % mult
    keys = seed_keys(0, seeds)
    cb = carry_bytes(learner, adv, prob, params, adv_params)
    tile = seed_tile(cb)

    def runner(t):
        # the scan's static length is T_max: run exactly T rounds (the learner keeps its own T_max)
        return lambda: simulate(learner, adv, prob, params, adv_params, keys, T, tile=t)

    # with tile >= seeds the tiled program is the untiled one: measured once
    runs = {"untiled": runner(2 ** 30)} if tile >= seeds else {"untiled": runner(2 ** 30), "tiled": runner(None)}
    for f in runs.values():
        f()
    best = {k: float("inf") for k in runs}
    for _ in range(reps):
        for k, f in runs.items():
            t0 = time.perf_counter()
            f()
            best[k] = min(best[k], time.perf_counter() - t0)
    best.setdefault("tiled", best["untiled"])
    return {"seeds": seeds, "T": T, "carry_B": cb, "auto_tile": tile,
            "untiled": seeds * T / best["untiled"], "tiled": seeds * T / best["tiled"]}


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="seeds up to 4096, 1 rep")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cases", default="hedge100,hedge1000,l2p_mw,dp_ftrl")
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args(argv)
    import jax

    seeds_list = [1, 16, 256, 4096] if a.quick else [1, 16, 256, 4096, 16384, 65536]
    reps = 1 if a.quick else a.reps
    cases = _cases()
    sections = []
    for name in a.cases.split(","):
        case = cases[name]
        rows = []
        for S in seeds_list:
            after = measure(case, S, reps)
            rows.append({"seeds": S, "T": after["T"], "tile": min(after["auto_tile"], S),
                         "untiled seed-rounds/s": after["untiled"], "tiled seed-rounds/s": after["tiled"],
                         "tiled / untiled": after["tiled"] / after["untiled"]})
            print(name, rows[-1], flush=True)
        peak = max(r["tiled seed-rounds/s"] for r in rows)
        peak_u = max(r["untiled seed-rounds/s"] for r in rows)
        last = rows[-1]
        sections.append(
            f"### {case[0]}\n\ncarried state {after['carry_B']} bytes per seed; default tile "
            f"{after['auto_tile']} seeds.\n\n"
            + table(rows, ["seeds", "T", "tile", "untiled seed-rounds/s", "tiled seed-rounds/s", "tiled / untiled"])
            + f"\n\nAt {last['seeds']} seeds: untiled {last['untiled seed-rounds/s'] / peak_u:.0%} of the untiled peak, "
              f"tiled {last['tiled seed-rounds/s'] / peak:.0%} of the tiled peak.\n")
        if not a.no_write and not a.quick:
            write_section("seeds", _head(reps) + "\n" + "\n".join(sections))
    body = _head(reps) + "\n" + "\n".join(sections)
    print(body)
    return body


def _head(reps: int) -> str:
    import jax

    dev = jax.devices()[0]
    return (f"## Throughput against seeds (`benchmarks/bench_scaling.py`)\n\n"
            f"Machine: jax {jax.__version__}, {dev.platform} ({jax.device_count()} device(s)), "
            f"{os.cpu_count()} cores, python {platform.python_version()}; {time.strftime('%Y-%m-%d %H:%M')}. "
            f"Best of {reps} timed calls after a compiling call, untiled and tiled calls alternating; where the tile covers every seed the two are one program, measured once. The machine was shared with other jobs while "
            f"measuring, so absolute rates are low and noisy; untiled and tiled points were measured back to back.\n")


if __name__ == "__main__":
    main()
