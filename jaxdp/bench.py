"""Throughput benchmarks: ``simulate(hedge)`` against two NumPy references in the same process.

Measured quantities (never asserted by tests):

* seed-rounds/s and expert-updates/s (= seed-rounds × d) of the compiled run,
  with compile time reported apart (first call minus a second, warm call);
* the same workload in NumPy, (i) a per-seed Python loop over rounds — what a
  paper's script does today — and (ii) a loop over rounds vectorized over seeds.
  Both draw Bernoulli losses and sample Hedge by inverse CDF, as jaxdp does.
  Large NumPy cases run on fewer seeds/rounds and report the measured rate
  (the table says how many seed-rounds were timed).

``run_benchmarks`` writes a markdown table (default ``benchmarks/RESULTS.md``)
with the machine it ran on. ``--all`` also runs every ``benchmarks/bench_*.py``
that defines ``run(quick: bool) -> list[dict]``.
"""
from __future__ import annotations

import importlib.util
import math
import os
import pathlib
import platform
import time
from typing import Iterable, Optional, Sequence

import numpy as np

__all__ = ["best_time", "bench_hedge", "numpy_hedge_per_seed", "numpy_hedge_vectorized", "run_benchmarks", "machine_info",
           "rows_to_markdown"]


def machine_info() -> str:
    import jax

    dev = jax.devices()[0]
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"jax {jax.__version__} on {jax.default_backend()} ({dev.device_kind}, {jax.device_count()} device(s)); "
            f"host: {cpu}, {os.cpu_count()} cores; python {platform.python_version()}")


def numpy_hedge_per_seed(seeds: int, d: int, T: int, eta: float, gap: float = 0.1, rng_seed: int = 0) -> float:
    """Per-seed Python loop (float64). Returns the mean expected regret (so the work is not optimized away)."""
    rng = np.random.default_rng(rng_seed)
    total = 0.0
    for _ in range(seeds):
        star = rng.integers(d)
        cum = np.zeros(d)
        p = np.full(d, 1.0 / d)
        exp_loss = 0.0
        for _t in range(T):
            loss = (rng.random(d) < 0.5).astype(np.float64)
            loss[star] = float(rng.random() < 0.5 - gap)
            exp_loss += p @ loss
            cum += loss
            w = -eta * cum
            w = np.exp(w - w.max())
            p = w / w.sum()
            np.searchsorted(np.cumsum(p), rng.random())
        total += exp_loss - cum.min()
    return total / seeds


def numpy_hedge_vectorized(seeds: int, d: int, T: int, eta: float, gap: float = 0.1, rng_seed: int = 0) -> float:
    """Loop over rounds, vectorized over seeds (float32 like jaxdp). Returns the mean expected regret."""
    rng = np.random.default_rng(rng_seed)
    star = rng.integers(d, size=seeds)
    cum = np.zeros((seeds, d), np.float32)
    p = np.full((seeds, d), 1.0 / d, np.float32)
    exp_loss = np.zeros(seeds, np.float32)
    rows = np.arange(seeds)
    for _t in range(T):
        loss = (rng.random((seeds, d), dtype=np.float32) < 0.5).astype(np.float32)
        loss[rows, star] = rng.random(seeds, dtype=np.float32) < 0.5 - gap
        exp_loss += np.einsum("sd,sd->s", p, loss)
        cum += loss
        w = -eta * cum
        w = np.exp(w - w.max(axis=1, keepdims=True))
        p = w / w.sum(axis=1, keepdims=True)
        c = np.cumsum(p, axis=1)
        u = rng.random((seeds, 1), dtype=np.float32) * c[:, -1:]
        (c <= u).sum(axis=1)
    return float((exp_loss - cum.min(axis=1)).mean())


def best_time(f, reps: int = 2) -> float:
    """The fastest of ``reps`` wall-clock timings of ``f()`` (seconds)."""
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def _time(fn, *a, **k):
    t0 = time.perf_counter()
    r = fn(*a, **k)
    return time.perf_counter() - t0, r


def bench_hedge(seeds_list: Sequence[int] = (1, 16, 256, 4096, 16384), d_list: Sequence[int] = (10, 100, 1000),
                T: int = 1000, numpy_budget: float = 2.0, loop_budget: float = 1.0,
                numpy_max_seed_rounds: float = 2e6) -> list[dict]:
    """Time ``simulate(hedge(d), bernoulli_experts(d))`` for each (seeds, d) against the NumPy references.

    NumPy references are timed on at most ``numpy_max_seed_rounds`` seed-rounds
    (fewer rounds for big batches); the per-seed loop on at most ~``loop_budget``
    seconds' worth of seeds (estimated from one seed). Rates are per seed-round.
    """
    import jax.numpy as jnp

    from .core import seed_keys, simulate
    from .experts import BernoulliParams, HedgeParams, bernoulli_experts, experts_problem, hedge, hedge_eta

    rows = []
    for d in d_list:
        eta = hedge_eta(d, T)
        learner, adv, prob = hedge(d), bernoulli_experts(d), experts_problem()
        params, ap = HedgeParams(eta=jnp.float32(eta)), BernoulliParams(gap=jnp.float32(0.1))
        # per-seed loop: time one seed for a few rounds, then as many seeds as the budget allows
        t_probe, _ = _time(numpy_hedge_per_seed, 1, d, min(T, 200), eta)
        loop_rate = min(T, 200) / t_probe
        for S in seeds_list:
            first, _ = _time(simulate, learner, adv, prob, params, ap, seed_keys(1, S), T)
            run_t, out = _time(simulate, learner, adv, prob, params, ap, seed_keys(2, S), T)
            compile_t = max(first - run_t, 0.0)
            sr = S * T / run_t
            # vectorized numpy
            T_np = int(max(10, min(T, numpy_max_seed_rounds // S)))
            t_np, _ = _time(numpy_hedge_vectorized, S, d, T_np, eta)
            np_rate = S * T_np / t_np
            # per-seed loop
            S_loop = int(max(1, min(S, loop_budget * loop_rate / T)))
            T_loop = T if S_loop > 1 or loop_rate > T / loop_budget else int(max(50, loop_budget * loop_rate))
            T_loop = min(T, T_loop)
            t_loop, _ = _time(numpy_hedge_per_seed, S_loop, d, T_loop, eta)
            loop_sr = S_loop * T_loop / t_loop
            rows.append({
                "d": d, "seeds": S, "T": T,
                "compile_s": round(compile_t, 3), "run_s": round(run_t, 4),
                "jax_seed_rounds/s": sr, "jax_expert_updates/s": sr * d,
                "numpy_vec_seed_rounds/s": np_rate, "numpy_loop_seed_rounds/s": loop_sr,
                "speedup_vs_vec": sr / np_rate, "speedup_vs_loop": sr / loop_sr,
                "numpy_timed": f"vec {S}x{T_np}, loop {S_loop}x{T_loop}",
                "mean_regret": float(np.mean(out["expected_regret"])),
            })
    return rows


def rows_to_markdown(rows: list[dict], title: str) -> str:
    if not rows:
        return f"### {title}\n\n(no rows)\n"
    cols = list(rows[0].keys())

    def fmt(v):
        if isinstance(v, float):
            if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-2):
                return f"{v:.3g}"
            return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
        return str(v)

    out = [f"### {title}", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(fmt(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _repo_benchmarks_dir() -> Optional[pathlib.Path]:
    here = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"
    if here.is_dir():
        return here
    cwd = pathlib.Path.cwd() / "benchmarks"
    return cwd if cwd.is_dir() else None


def _discover() -> dict:
    d = _repo_benchmarks_dir()
    mods = {}
    if d is None:
        return mods
    for f in sorted(d.glob("bench_*.py")):
        if f.stem in ("bench_hedge", "bench_suite"):  # run by run_benchmarks itself
            continue
        spec = importlib.util.spec_from_file_location(f"jaxdp_benchmarks_{f.stem}", f)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        if hasattr(mod, "run"):
            mods[f.stem[len("bench_"):]] = mod
    return mods


def _call_bench(name: str, mod, quick: bool) -> list:
    """Call a ``benchmarks/bench_*.py`` module's ``run`` with its own size flag; return [(title, rows)]."""
    import inspect

    params = inspect.signature(mod.run).parameters
    if "tiny" in params:
        kw = {"tiny": quick}
        if "quick" in params:
            kw["quick"] = False if not quick else True
        res = mod.run(**kw)
    elif "quick" in params:
        res = mod.run(quick=quick)
    elif "n" in params:  # audits: runs per side
        res = mod.run(n=10_000 if quick else 1_000_000)
    else:
        res = mod.run()
    title = getattr(mod, "TITLE", name)
    if isinstance(res, dict):
        return [(f"{title}: {k}", v) for k, v in res.items()]
    return [(title, res)]


def run_benchmarks(quick: bool = False, run_all: bool = False, only: Optional[Iterable[str]] = None,
                   out: Optional[str] = None, device_report: bool = False) -> pathlib.Path:
    """Run the hedge benchmark (and, with ``run_all``, every ``benchmarks/bench_*.py``); write markdown."""
    sections = [f"# jaxdp benchmark results\n\nMachine: {machine_info()}\n\nDate: {time.strftime('%Y-%m-%d %H:%M')}"
                f"{'  (quick mode: tiny sizes, rates not representative)' if quick else ''}\n"]
    only = set(only or [])
    if not only or "hedge" in only:
        if quick:
            rows = bench_hedge(seeds_list=(1, 16), d_list=(10,), T=100, numpy_max_seed_rounds=2e3,
                               loop_budget=0.05)
        else:
            rows = bench_hedge()
        print(rows_to_markdown(rows, "simulate(hedge) vs NumPy"))
        sections.append(rows_to_markdown(rows, "simulate(hedge) vs NumPy (Bernoulli losses, gap 0.1)"))
    if run_all or only - {"hedge"}:
        for name, mod in _discover().items():
            if only and name not in only:
                continue
            t0 = time.perf_counter()
            for title, rows in _call_bench(name, mod, quick):
                print(rows_to_markdown(rows, title))
                sections.append(rows_to_markdown(rows, title))
            print(f"(benchmarks/bench_{name}.py: {time.perf_counter() - t0:.1f}s)")
    if device_report:
        from .bench_suite import run_suite, suite_to_markdown

        rows = run_suite(quick=quick)
        md = suite_to_markdown(rows)
        print(md)
        sections.append(md)
        sections.append(device_memory_report())
    path = pathlib.Path(out) if out else ((_repo_benchmarks_dir() or pathlib.Path.cwd()) / "RESULTS.md")
    path.write_text("\n".join(sections))
    return path


def device_memory_report() -> str:
    """Peak device memory as reported by the backend (GPU/TPU; CPU reports none)."""
    import jax

    lines = ["### device memory", ""]
    for dev in jax.local_devices():
        stats = None
        try:
            stats = dev.memory_stats()
        except Exception:  # pragma: no cover
            pass
        if not stats:
            lines.append(f"- {dev}: the backend reports no memory statistics")
        else:
            lines.append(f"- {dev}: peak {stats.get('peak_bytes_in_use', math.nan) / 2**30:.3f} GiB, "
                         f"limit {stats.get('bytes_limit', math.nan) / 2**30:.1f} GiB")
    return "\n".join(lines) + "\n"
