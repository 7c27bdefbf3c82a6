"""Throughput of the continual-counting mechanisms (jaxdp.privacy.mechanisms.matrix_factorization) on CPU.

    python benchmarks/bench_mf.py [--tiny] [--out benchmarks/MF.md]

* noise generation alone: seed-rounds per second of ``mech.step`` (``d = 4`` coordinates, ``T`` rounds, the
  seeds ``vmap``-ed over a ``lax.scan``, as ``jaxdp.core.simulate`` runs a learner) at 4096, 16384 and 65536
  seeds, against the binary tree;
* DP-FTRL with each mechanism (``simulate`` on the realizable instance of the ``mf-ftrl`` study) at 4096 and
  16384 seeds;
* carried bytes per round and seed (``carried_bytes``) and the max error at ``T``;
* the time to optimise a BLT (``optimize_blt``, compile included) and a banded factorization.

Writes a markdown report (default ``benchmarks/MF.md``) and prints it. Timings are the best of 2 after a
warm-up call; the machine's load average is recorded with them.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from benchmarks.harness.common import interleaved_best_times, machine_info, table  # noqa: E402
from jaxdp.privacy.mechanisms.matrix_factorization import (  # noqa: E402
    BinaryTree, HonakerTree, SqrtToeplitz, get_mechanism, optimize_banded, optimize_blt,
)


def mechanisms(T: int):
    return {"tree": BinaryTree(), "honaker": HonakerTree(), "sqrt_toeplitz": SqrtToeplitz(),
            "banded(16)": get_mechanism("banded", max(T, 2), bands=16), "blt": get_mechanism("blt", max(T, 2))}


def noise_runner(mech, S: int, T: int, d: int):
    """A jitted function: S seeds x T rounds of mech.step, returning a checksum (so no (S, T, d) output)."""
    def one(key):
        def body(c, t):
            st, acc = c
            st, w = mech.step(jax.random.fold_in(key, t), st, 1.0)
            return (st, acc + jnp.sum(w)), None
        (_, acc), _ = jax.lax.scan(body, (mech.init(T, (d,)), jnp.zeros(())), jnp.arange(T))
        return acc

    f = jax.jit(jax.vmap(one))
    keys = jax.random.split(jax.random.key(0), S)
    return lambda: f(keys)


def upfront_runner(S: int, T: int, d: int):
    """The square-root noise drawn up front (``SqrtToeplitz.noise_upfront``, the same per-round keys as
    :func:`noise_runner`: ``fold_in(key, t)``), summed into the same checksum."""
    mech = SqrtToeplitz()

    def one(key):
        keys = jax.vmap(lambda t: jax.random.fold_in(key, t))(jnp.arange(T))
        return jnp.sum(mech.noise_upfront(keys, (d,), 1.0))

    f = jax.jit(jax.vmap(one))
    keys = jax.random.split(jax.random.key(0), S)
    return lambda: f(keys)


def sqrt_upfront_rows(S: int, T: int, d: int, reps: int = 3) -> list:
    """Tree, square root streaming and square root up front, interleaved (wall and CPU seconds)."""
    runs = {"tree": noise_runner(BinaryTree(), S, T, d), "sqrt_toeplitz": noise_runner(SqrtToeplitz(), S, T, d),
            "sqrt_toeplitz (up front)": upfront_runner(S, T, d)}
    cpu = {}
    best = interleaved_best_times(runs, reps=reps, cpu=cpu)
    return [{"seeds": S, "mechanism": k, "seconds": best[k], "CPU s": cpu[k], "Mseed-rounds/s": S * T / best[k] / 1e6,
             "vs tree": best["tree"] / best[k], "vs tree (CPU)": cpu["tree"] / cpu[k]} for k in runs]


def ftrl_runner(mech, S: int, T: int, d: int):
    from jaxdp.core import seed_keys, simulate
    from jaxdp.oco import adv_smooth_realizable, dp_ftrl, dp_ftrl_params, smooth_realizable_params, squared_problem

    prob = squared_problem(d, 1.0)
    lrn = dp_ftrl(prob, T, None, None if isinstance(mech, BinaryTree) else mech)
    adv = adv_smooth_realizable(d)
    keys = seed_keys(0, S)
    p, ap = dp_ftrl_params(20.0, 1.0, 2.0), smooth_realizable_params(1.0)
    return lambda: simulate(lrn, adv, prob, p, ap, keys, T)["regret"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiny", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--out", default=str(pathlib.Path(__file__).with_name("MF.md")))
    ap.add_argument("--resume", action="store_true",
                    help="keep the sections already in the JSON next to --out (written after each section)")
    ap.add_argument("--sqrt-upfront", action="store_true",
                    help="only the square-root noise up front vs streaming vs the tree (S = 4096, T = 256; "
                         "--tiny: 256, 64): print the table, write nothing")
    args = ap.parse_args(argv)
    if args.sqrt_upfront:
        S, T = (256, 64) if args.tiny else (4096, 256)
        l0 = os.getloadavg()
        rows = sqrt_upfront_rows(S, T, 4)
        l1 = os.getloadavg()
        print(f"{machine_info()}; load average {l0[0]:.1f} -> {l1[0]:.1f}; d = 4, T = {T}\n")
        print(table(rows, list(rows[0].keys())))
        return
    store = pathlib.Path(args.out).with_suffix(".json")
    done = json.loads(store.read_text()) if args.resume and store.exists() else {}

    def save(**kw):
        done.update(kw)
        store.write_text(json.dumps(done, indent=1, default=str))
    d = 4
    T = 64 if args.tiny else 256
    seeds = [256, 1024] if args.tiny else [4096, 16384, 65536]
    ftrl_seeds = [256] if args.tiny else [4096, 16384]
    mechs = mechanisms(T)
    load0 = os.getloadavg()
    t_start = time.perf_counter()

    rows = list(done.get("noise", []))
    for S in [S for S in seeds if S not in {r["seeds"] for r in rows}]:
        runs = {name: noise_runner(m, S, T, d) for name, m in mechs.items()}
        runs["sqrt_toeplitz (up front)"] = upfront_runner(S, T, d)
        cpu = {}
        best = interleaved_best_times(runs, reps=2, cpu=cpu)
        for name in runs:
            rows.append({"seeds": S, "mechanism": name, "seconds": best[name], "CPU s": cpu[name],
                         "Mseed-rounds/s": S * T / best[name] / 1e6, "vs tree": best["tree"] / best[name]})
        print(f"noise S={S}: " + ", ".join(f"{k} {v:.3f}s" for k, v in best.items()), flush=True)
        save(noise=rows)
    frows = list(done.get("dp_ftrl", []))
    for S in [S for S in ftrl_seeds if S not in {r["seeds"] for r in frows}]:
        runs = {name: ftrl_runner(m, S, T, d) for name, m in mechs.items()}
        cpu = {}
        best = interleaved_best_times(runs, reps=2, cpu=cpu)
        for name in mechs:
            frows.append({"seeds": S, "mechanism": name, "seconds": best[name], "CPU s": cpu[name],
                          "Mseed-rounds/s": S * T / best[name] / 1e6, "vs tree": best["tree"] / best[name]})
        print(f"dp_ftrl S={S}: " + ", ".join(f"{k} {v:.3f}s" for k, v in best.items()), flush=True)
        save(dp_ftrl=frows)
    brows = []
    for name, m in mechs.items():
        brows.append({"mechanism": name, "rows": m.rows(T), f"bytes/round/seed (d={d}, T_max={T})":
                      m.carried_bytes(T, d), "bytes (T_max=65536)": mechanisms(65536)[name].carried_bytes(65536, d),
                      f"max error (n={T})": m.max_error(T), f"rmse (n={T})": m.rmse(T)})
    orows = []
    sizes = [(200, 3, 100)] if args.tiny else [(1000, 3, 300), (10000, 4, 1000), (65536, 5, 1000)]
    for n, k, iters in sizes:
        m, info = optimize_blt(n, k, iters=iters, return_info=True)
        orows.append({"what": f"BLT, {k} buffers, max error", "n": n, "L-BFGS iterations": iters,
                      "seconds (compile included)": info["seconds"], "error": m.max_error(n)})
        print(f"blt n={n} k={k}: {info['seconds']:.1f}s -> {m.max_error(n):.6f}", flush=True)
    for n, b, iters in ([(200, 4, 100)] if args.tiny else [(1000, 16, 300), (10000, 16, 1000)]):
        m, info = optimize_banded(n, b, "mean", iters=iters, return_info=True)
        orows.append({"what": f"banded, {b} bands, mean error", "n": n, "L-BFGS iterations": iters,
                      "seconds (compile included)": info["seconds"], "error": m.rmse(n)})
    load1 = os.getloadavg()
    cols = ["seeds", "mechanism", "seconds", "CPU s", "Mseed-rounds/s", "vs tree"]
    md = [
        "# Continual-counting mechanisms: throughput and state (`benchmarks/bench_mf.py`)",
        "",
        f"`python benchmarks/bench_mf.py{' --tiny' if args.tiny else ''}`; {machine_info()}; "
        f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}. `seconds` is wall time, `CPU s` the process's CPU time "
        "(all threads) in the same best call.",
        f"Load average {load0[0]:.1f} at the start and {load1[0]:.1f} at the end of the last invocation (a shared "
        "2-core machine: "
        "absolute numbers move with the load, the ratios within one table are measured interleaved). "
        f"Last invocation {time.perf_counter() - t_start:.0f} s" + (" (earlier sections kept with --resume)."
                                                                   if args.resume and done else "."),
        "",
        f"## Noise generation alone (d = {d}, T = {T} rounds, float32)",
        "",
        "`mech.step` for every seed and round (one key per round), summed into a checksum. "
        "`vs tree` > 1 is faster than the tree.",
        "",
        table(rows, cols),
        "",
        f"## DP-FTRL with each mechanism (`simulate`, realizable instance, d = {d}, T = {T})",
        "",
        table(frows, cols),
        "",
        "## Carried state",
        "",
        "Bytes carried from one round to the next per seed for `d`-vectors (float32 rows and the int32 round "
        "counter). The square root keeps every past draw (`T_max` rows); the others a few rows.",
        "",
        table(brows, list(brows[0].keys())),
        "",
        "## Optimisation time",
        "",
        "`optimize_blt` / `optimize_banded` (float64, optax L-BFGS inside one compiled `lax.scan`; the loss is "
        "a closed form through finite-horizon Gramians, so its cost does not grow with `n`).",
        "",
        table(orows, list(orows[0].keys())),
        "",
    ]
    text = "\n".join(md)
    pathlib.Path(args.out).write_text(text)
    save(noise=rows, dp_ftrl=frows, state=brows, optimisation=orows, machine=machine_info(),
         load=done.get("load", []) + [load0, load1])
    print(text)


if __name__ == "__main__":
    main()
