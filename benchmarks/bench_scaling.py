"""Throughput of ``simulate`` against the number of seeds (1 ... 65536), untiled ("before") vs seed tiles ("after").

    python benchmarks/bench_scaling.py [--quick] [--reps N] [--cases hedge100,hedge1000,l2p_mw,dp_ftrl]
                                       [--seeds 1,16,...] [--rounds T] [--dir DIR] [--no-write]
    python benchmarks/bench_scaling.py --tiles 1024,4096,16384 [--seeds 65536] [--cases ...]   # tile sweep

"untiled" runs every seed of a device in one vmapped scan (``tile`` >= seeds: what
``simulate`` did before seed tiles); "tiled" is the default (``tile=None``: tiles sized
from the carried state's bytes, ``jaxdp.core.seed_tile``). Each point is the best of
``--reps`` timed calls after a compiling call; each rep times every seed count (untiled and
tiled) in turn, so the points of a case share the machine's state.

Every seed count of a case runs the same number of rounds (``ROUNDS``, or ``--rounds``).
An earlier version shrank ``T`` as seeds grew (to cap the work per point), down to 8 rounds
at 65536 seeds: there a call's fixed costs (the per-seed init, the host work) and the
checkpoint writes (every round is a checkpoint when ``T <= 24``) are spread over a few rounds,
and the rate drops for reasons that have nothing to do with seeds (DP-FTRL at 4096 seeds:
T = 8 ran at 72% of its T = 256 rate). That made DP-FTRL's 65536-seed point look like 87% of
its peak (NOTES.md, "Throughput at scale").

Writes the "seeds" section of ``DIR/SCALING.md`` (full tables) and of ``DIR/RESULTS.md``
(the before/after curve); ``DIR`` defaults to ``benchmarks/``. With ``--cases`` only those
cases' tables are replaced. ``--quick`` (seeds up to 4096, 64 rounds, 1 rep) writes nothing
unless ``--dir`` is given. Timings are never asserted by tests.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import platform
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))   # the repository root: benchmarks.harness

from _scaling_md import RESULTS_MD, SCALING_MD, table, write_section  # noqa: E402

SEEDS = [1, 16, 256, 4096, 16384, 65536]
# rounds per point, the same for every seed count of a case (multiples of the case's block)
ROUNDS = {"hedge100": 256, "hedge1000": 128, "l2p_mw": 256, "dp_ftrl": 256}
_RESULTS_HEAD = "# jaxdp benchmark results\n"


def _cases():
    import jax.numpy as jnp

    from jaxdp.experts import BernoulliParams, HedgeParams, bernoulli_experts, experts_problem
    from jaxdp.experts import l2p_mw_params
    from jaxdp.oco import adv_linear_oco, linear_oco_params, linear_problem, plan_dp_ftrl
    from jaxdp.registry import get_learner

    # the registered learners (jaxdp.registry): their factories, and params_from_plan where a planner configures them
    hedge, l2p_mw, dp_ftrl = (get_learner(n) for n in ("hedge", "l2p_mw", "dp_ftrl"))
    bern = BernoulliParams(gap=jnp.float32(0.1))
    plan = plan_dp_ftrl(eps=1.0, delta=1e-6, T=1024, d=64, L=1.0, D=1.0, setting="general")
    lin = linear_problem(64, 1.0)
    # name: (label, learner, adversary, problem, params, adv_params, round multiple)
    return {
        "hedge100": ("Hedge, d=100", hedge.factory(100), bernoulli_experts(100), experts_problem(),
                     HedgeParams(jnp.float32(0.1)), bern, 1),
        "hedge1000": ("Hedge, d=1000", hedge.factory(1000), bernoulli_experts(1000), experts_problem(),
                      HedgeParams(jnp.float32(0.1)), bern, 1),
        "l2p_mw": ("L2P-MW, d=64, B=32", l2p_mw.factory(64, 32), bernoulli_experts(64), experts_problem(),
                   l2p_mw_params(0.05, 0.1, 32, block_size=32), bern, 32),
        "dp_ftrl": ("DP-FTRL, d=64, T_max=1024 (tree depth 11)", dp_ftrl.factory(lin, 1024), adv_linear_oco(64), lin,
                    dp_ftrl.params_from_plan(plan), linear_oco_params("rademacher"), 1),
    }


def measure(case, seeds_list: list, T: int, reps: int) -> list:
    """Untiled and tiled rates at every seed count of ``seeds_list`` and ``T`` rounds (best of ``reps`` each).

    Every program is compiled first; then each rep times every (seed count, untiled/tiled) call in turn,
    so that all points of a case see the same machine state. Measured one seed count after another, a
    2-core machine's drift over the minutes a case takes (other tenants, clock) moved single points by
    5-10%, as much as the effect measured (DP-FTRL at 65536 seeds: 89% of the peak measured minutes
    earlier, 104% interleaved).
    """
    from benchmarks.harness.common import interleaved_best_times
    from jaxdp.core import carry_bytes, seed_keys, seed_tile, simulate

    label, learner, adv, prob, params, adv_params, mult = case
    cb = carry_bytes(learner, adv, prob, params, adv_params)
    tile = seed_tile(cb)

    def runner(keys, t):
        # the scan's static length is T: run exactly T rounds (the learner keeps its own T_max)
        return lambda: simulate(learner, adv, prob, params, adv_params, keys, T, tile=t)

    runs = {}
    for seeds in seeds_list:
        keys = seed_keys(0, seeds)
        # with tile >= seeds the tiled program is the untiled one: measured once
        runs[(seeds, "untiled")] = runner(keys, 2 ** 30)
        if tile < seeds:
            runs[(seeds, "tiled")] = runner(keys, None)
    best = interleaved_best_times(runs, reps)
    out = []
    for seeds in seeds_list:
        bu = best[(seeds, "untiled")]
        bt = best.get((seeds, "tiled"), bu)
        out.append({"seeds": seeds, "T": T, "carry_B": cb, "auto_tile": tile, "untiled": seeds * T / bu,
                    "tiled": seeds * T / bt})
    return out


def sweep_tiles(case, seeds: int, T: int, tiles: list, reps: int) -> list:
    """Rates of ``simulate`` at ``seeds`` seeds for each tile size in ``tiles`` (interleaved, best of ``reps``):
    how to find a device's best tile (``jaxdp.core.tile_budget`` is a rule; this is the measurement)."""
    from benchmarks.harness.common import interleaved_best_times
    from jaxdp.core import carry_bytes, seed_keys, simulate

    label, learner, adv, prob, params, adv_params, mult = case
    cb = carry_bytes(learner, adv, prob, params, adv_params)
    keys = seed_keys(0, seeds)
    runs = {t: (lambda t=t: simulate(learner, adv, prob, params, adv_params, keys, T, tile=t)) for t in tiles}
    best = interleaved_best_times(runs, reps)
    return [{"tile": t, "carry MiB per tile": t * cb / 2**20, "seed-rounds/s": seeds * T / best[t]} for t in tiles]


def _case_rounds(name: str, mult: int, rounds, quick: bool) -> int:
    T = rounds or (64 if quick else ROUNDS[name])
    return max(mult, T - T % mult)


def _scaling_block(case, rows, stamp: str) -> str:
    peak = max(r["tiled seed-rounds/s"] for r in rows)
    peak_u = max(r["untiled seed-rounds/s"] for r in rows)
    for r in rows:
        r["tiled / tiled peak"] = r["tiled seed-rounds/s"] / peak
    last = rows[-1]
    return (f"### {case[0]}\n\ncarried state {rows[-1]['carry_B']} bytes per seed; default tile "
            f"{rows[-1]['auto_tile']} seeds; {rows[-1]['T']} rounds at every seed count; {stamp}.\n\n"
            + table(rows, ["seeds", "T", "tile", "untiled seed-rounds/s", "tiled seed-rounds/s", "tiled / untiled",
                           "tiled / tiled peak"])
            + f"\n\nAt {last['seeds']} seeds: untiled {last['untiled seed-rounds/s'] / peak_u:.0%} of the untiled peak, "
              f"tiled {last['tiled seed-rounds/s'] / peak:.0%} of the tiled peak.\n")


def _results_block(case, rows, stamp: str) -> str:
    peak = max(r["tiled seed-rounds/s"] for r in rows)
    peak_u = max(r["untiled seed-rounds/s"] for r in rows)
    out = [{"seeds": r["seeds"], "before: untiled seed-rounds/s": r["untiled seed-rounds/s"],
            "before / its peak": r["untiled seed-rounds/s"] / peak_u,
            "after: tiled seed-rounds/s": r["tiled seed-rounds/s"], "after / its peak": r["tiled seed-rounds/s"] / peak,
            "after / before": r["tiled / untiled"]} for r in rows]
    return (f"#### {case[0]} ({rows[-1]['T']} rounds, tile {rows[-1]['auto_tile']}; {stamp})\n\n"
            + table(out, ["seeds", "before: untiled seed-rounds/s", "before / its peak", "after: tiled seed-rounds/s",
                          "after / its peak", "after / before"]) + "\n")


def _merge(path: pathlib.Path, section: str, head: str, blocks: dict, order: list, file_head: str) -> None:
    """Write ``head`` plus one ``<!-- section:name -->`` block per case into the ``section`` block of ``path``,
    keeping the blocks of cases not run this time."""
    old = {}
    if path.exists():
        text = path.read_text()
        for name in order:
            m = re.search(rf"<!-- {section}:{name} -->\n(.*?)\n<!-- /{section}:{name} -->", text, re.S)
            if m:
                old[name] = m.group(1)
    parts = [head]
    for name in order:
        body = blocks.get(name, old.get(name))
        if body is not None:
            parts.append(f"<!-- {section}:{name} -->\n{body.rstrip()}\n<!-- /{section}:{name} -->")
    write_section(section, "\n\n".join(parts), path=path, head=file_head)


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="seeds up to 4096, 64 rounds, 1 rep; writes only with --dir")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cases", default="hedge100,hedge1000,l2p_mw,dp_ftrl")
    ap.add_argument("--seeds", default=None, help="comma-separated seed counts (default 1,16,256,4096,16384,65536)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds per point for every case (default: ROUNDS)")
    ap.add_argument("--dir", default=None, help="where SCALING.md and RESULTS.md are (default: benchmarks/)")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--tiles", default=None,
                    help="comma-separated tile sizes: sweep them at the largest seed count instead (prints a table "
                         "per case, writes nothing); the way to measure a device's best tile")
    a = ap.parse_args(argv)

    if a.seeds:
        seeds_list = [int(s) for s in a.seeds.split(",")]
    else:
        seeds_list = SEEDS[:4] if a.quick else list(SEEDS)
    reps = 1 if a.quick else a.reps
    cases = _cases()
    names = a.cases.split(",")
    unknown = [n for n in names if n not in cases]
    if unknown:
        raise SystemExit(f"unknown cases {unknown}; choose from {sorted(cases)}")
    if a.tiles:
        out = []
        for name in names:
            T = _case_rounds(name, cases[name][-1], a.rounds, a.quick)
            rows = sweep_tiles(cases[name], max(seeds_list), T, [int(t) for t in a.tiles.split(",")], reps)
            out.append(f"### {cases[name][0]}: {max(seeds_list)} seeds, {T} rounds, best of {reps}\n\n"
                       + table(rows, ["tile", "carry MiB per tile", "seed-rounds/s"]))
        body = "\n\n".join(out)
        print(body)
        return body
    load0 = os.getloadavg()
    scaling, results = {}, {}
    for name in names:
        case = cases[name]
        T = _case_rounds(name, case[-1], a.rounds, a.quick)
        rows = []
        l0 = os.getloadavg()
        for m in measure(case, seeds_list, T, reps):
            S = m["seeds"]
            rows.append({"seeds": S, "T": T, "tile": min(m["auto_tile"], S), "carry_B": m["carry_B"],
                         "auto_tile": m["auto_tile"], "untiled seed-rounds/s": m["untiled"],
                         "tiled seed-rounds/s": m["tiled"], "tiled / untiled": m["tiled"] / m["untiled"]})
            print(name, {k: v for k, v in rows[-1].items() if k not in ("carry_B", "auto_tile")}, flush=True)
        l1 = os.getloadavg()
        stamp = f"measured {time.strftime('%Y-%m-%d %H:%M')}, load average {l0[0]:.2f} -> {l1[0]:.2f}, best of {reps}"
        scaling[name] = _scaling_block(case, rows, stamp)
        results[name] = _results_block(case, rows, stamp)
    load1 = os.getloadavg()
    head = _head(reps, load0, load1)
    body = head + "\n" + "\n".join(scaling[n] for n in names)
    print(body)
    write = not a.no_write and (not a.quick or a.dir is not None)
    if write:
        d = pathlib.Path(a.dir) if a.dir else SCALING_MD.parent
        d.mkdir(parents=True, exist_ok=True)
        order = list(cases)
        _merge(d / SCALING_MD.name, "seeds", head, scaling, order,
               "# jaxdp scaling measurements\n\nWritten by `benchmarks/bench_scaling.py` and "
               "`benchmarks/bench_multiprocess.py`.\n")
        _merge(d / RESULTS_MD.name, "seeds", _results_head(reps, load0, load1), results, order, _RESULTS_HEAD)
        print(f"wrote {d / SCALING_MD.name} and {d / RESULTS_MD.name}")
    return body


def _machine(reps: int, load0, load1) -> str:
    import jax

    dev = jax.devices()[0]
    return (f"Machine: jax {jax.__version__}, {dev.platform} ({jax.device_count()} device(s)), "
            f"{os.cpu_count()} cores, python {platform.python_version()}; this run {time.strftime('%Y-%m-%d %H:%M')}, "
            f"load average {load0[0]:.2f} before it, {load1[0]:.2f} after (each table names its own). Best of {reps} timed calls after "
            f"a compiling call; each rep times every seed count's untiled and tiled call in turn, so all points of a "
            f"case see the same machine state; where the tile covers every seed the two are "
            f"one program, measured once. Every seed count of a case runs the same number of rounds.")


def _head(reps: int, load0, load1) -> str:
    return f"## Throughput against seeds (`benchmarks/bench_scaling.py`)\n\n{_machine(reps, load0, load1)}\n"


def _budget_mib() -> str:
    from jaxdp.core import tile_budget

    return f"{tile_budget() / 2**20:g}"


def _results_head(reps: int, load0, load1) -> str:
    return ("### Throughput against seeds, before and after seed tiles (`benchmarks/bench_scaling.py`)\n\n"
            "Before: every seed of the device in one vmapped scan (what `simulate` did before seed tiles). After: "
            "the default seed tiles (`jaxdp.core.seed_tile`: on CPU half the last-level cache of carried state per tile, "
            f"{_budget_mib()} MiB here). "
            f"\"its peak\" is the best point of the same column. Full tables: `benchmarks/SCALING.md`. "
            f"{_machine(reps, load0, load1)}\n")


if __name__ == "__main__":
    main()
