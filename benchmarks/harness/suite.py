"""Accelerator benchmark suite: throughput, compile time, peak memory and the two floors.

One function, :func:`run_suite`, runs unchanged on CPU and GPU. For each case

=================  ==========================================================  ====================
case               workload                                                    natural unit
=================  ==========================================================  ====================
``hedge``          ``simulate(hedge(d), bernoulli_experts(d))``                 expert-updates/s
``l2p_mw``         ``simulate(l2p_mw(d, B), bernoulli_experts(d))``             expert-updates/s
``sparse_vector``  ``simulate(sparse_vector_experts(d), adv_realizable_...)``   expert-updates/s
``l2p_rmw_mala``   ``simulate(l2p_rmw(d, B, sampler="mala"), adv_linear_oco)``  MALA steps/s
``dp_ftrl``        ``simulate(dp_ftrl(linear_problem(d), T), adv_linear_oco)``  seed-rounds/s
``label_dp``       ``monte_carlo(central_bins_laplace estimator)``              estimators/s
=================  ==========================================================  ====================

Each ``simulate`` case runs a registered learner (:data:`CASE_LEARNERS`, built by
``jaxdp.registry.get_learner(name)``: its factory and, where a planner configures it, its
``params_from_plan``). It sweeps the batch size (number of seeds) ``1, 4, 16, ...`` up to the largest
size that fits the budget: on a backend that reports memory statistics
(GPU/TPU), the compiled footprint must stay under half the device memory; on
CPU, the predicted warm run time must stay under a few seconds.

Per row it reports the warm run time, the compile time apart (first call minus
warm call), the peak memory (``memory_stats()['peak_bytes_in_use']`` when the
backend reports it, else XLA's ``memory_analysis()`` of the compiled function:
temp + argument + output bytes), and the two floors of the device METHOD
("two floors"):

* **random-number floor**: 32-bit random words the algorithm must draw (counted
  per seed-round from each algorithm's code, see ``_CASES``) over the measured
  ``jax.random.bits`` rate (threefry on every backend by default). Key
  derivations (``split``/``fold_in``) are not counted, so this is a floor.
* **bytes floor**: bytes that must be moved (per seed-round: every state
  array of the scan carry — learner state, comparator statistics, metric
  accumulators — read and written once, from ``jax.eval_shape``; for the
  estimator: dataset written and read once, bins, quadrature grid) over the
  measured copy bandwidth (jitted ``x + 1`` on a 256 MiB array, read + write).

``gap = run_s / max(floor_rng_s, floor_bytes_s)``; ``bound`` names the larger
floor. A scaling measurement runs the Hedge case in subprocesses with
``XLA_FLAGS=--xla_force_host_platform_device_count=N`` (host CPU devices).

CLI: ``jaxdp bench --device-report [--quick]``; ``python benchmarks/bench_suite.py [--quick]``.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
import time
from typing import Optional

import numpy as np

from .common import block as _block
from .common import median_time as _median_time
from .common import root_on_pythonpath
from .hlo import analyze_module

CASE_NAMES = ("hedge", "l2p_mw", "sparse_vector", "l2p_rmw_mala", "dp_ftrl", "label_dp")
#: the registered learner (``jaxdp.registry.get_learner``) each ``simulate`` case runs (``label_dp`` runs an estimator)
CASE_LEARNERS = {"hedge": "hedge", "l2p_mw": "l2p_mw", "sparse_vector": "sparse_vector", "l2p_rmw_mala": "l2p_rmw",
                 "dp_ftrl": "dp_ftrl"}

__all__ = ["CASE_NAMES", "CASE_LEARNERS", "run_suite", "suite_to_markdown", "measure_ceilings", "scaling_rows", "memory_budget"]


# --------------------------------------------------------------------------- ceilings


def measure_ceilings(quick: bool = False) -> dict:
    """The device's measured ceilings: random words per second and copy bandwidth.

    ``jax.random.bits`` on ``2^24`` uint32 words (``2^20`` quick) and a jitted ``x + 1`` on ``2^26`` float32
    (``2^22`` quick; distinct random buffers, never zeros), each the median of several warm calls.

    Args:
        quick: the smaller arrays.

    Returns:
        ``rng_words_per_s`` (uint32 words ``jax.random.bits`` delivers), ``rng_generated_words_per_s`` (the
        threefry words it generates, counted in its module by :func:`benchmarks.harness.hlo.analyze_module`),
        ``bytes_per_s`` (bytes read + written), and the array sizes ``rng_array_words`` and ``bw_array_bytes``.
    """
    import jax
    import jax.numpy as jnp

    n_rng = 1 << (20 if quick else 24)
    n_bw = 1 << (22 if quick else 26)      # 16 MiB / 256 MiB of float32
    bits = jax.jit(lambda k: jax.random.bits(k, (n_rng,), dtype=jnp.uint32))
    ctr = iter(range(10_000))
    _block(bits(jax.random.key(next(ctr))))
    t_rng = _median_time(lambda: bits(jax.random.key(next(ctr))), 5)
    add = jax.jit(lambda x: x + 1.0)
    # distinct buffers, not zeros (METHOD: never time on zeros)
    xs = [jax.random.uniform(jax.random.key(1000 + i), (n_bw,), jnp.float32) for i in range(2)]
    _block(add(xs[0]))
    it = iter(range(10_000))
    t_bw = _median_time(lambda: add(xs[next(it) % 2]), 7)
    # the same generator counted the way every exported module is counted (threefry output words,
    # key derivations included), so that predictions from module counts use matching units

    gen_words = analyze_module(bits.lower(jax.random.key(0)).as_text()).rng_words
    if gen_words <= 0:  # a backend whose generator is not visible in the module: count delivered words
        gen_words = float(n_rng)
    return {"rng_words_per_s": n_rng / t_rng, "bytes_per_s": 2 * 4 * n_bw / t_bw,
            "rng_generated_words_per_s": gen_words / t_rng,
            "rng_array_words": n_rng, "bw_array_bytes": 4 * n_bw}


def memory_budget() -> tuple[Optional[int], str]:
    """The memory a suite case's compiled footprint may use: half the device memory if the backend reports it.

    Returns:
        ``(bytes, "device")``, or ``(None, "time")`` when the backend reports no memory limit (CPU: batch
        sizes are then capped by the predicted run time).
    """
    import jax

    try:
        stats = jax.devices()[0].memory_stats()
    except Exception:  # pragma: no cover
        stats = None
    if stats and stats.get("bytes_limit"):
        return int(0.5 * stats["bytes_limit"]), "device"
    return None, "time"


def _device_peak() -> Optional[int]:
    import jax

    try:
        stats = jax.devices()[0].memory_stats()
    except Exception:  # pragma: no cover
        return None
    if stats and "peak_bytes_in_use" in stats:
        return int(stats["peak_bytes_in_use"])
    return None


def _compiled_bytes(jitted, *args) -> Optional[int]:
    try:
        ma = jitted.lower(*args).compile().memory_analysis()
    except Exception:  # pragma: no cover - backend without the analysis
        return None
    if ma is None:
        return None
    return int(ma.temp_size_in_bytes + ma.argument_size_in_bytes + ma.output_size_in_bytes)


def _tree_bytes(tree) -> int:
    import jax

    return int(sum(np.prod(l.shape, dtype=np.int64) * np.dtype(l.dtype).itemsize
                   for l in jax.tree_util.tree_leaves(tree)))


# --------------------------------------------------------------------------- cases


class _Case:
    """One benchmark case: ``setup(S)`` returns ``(call, jitted, args)``; counts are per seed."""

    def __init__(self, name, unit, per_seed_units, rng_words, bytes_moved, setup, work_desc, size_label="T",
                 size=0, rounds=1):
        self.name, self.unit = name, unit
        self.per_seed_units = per_seed_units   # natural units per seed per call
        self.rng_words = rng_words             # random words per seed per call
        self.bytes_moved = bytes_moved         # bytes per seed per call
        self.setup, self.work_desc = setup, work_desc
        self.size_label, self.size, self.rounds = size_label, size, rounds


def _state_bytes(learner, adversary, problem, params, adv_params) -> int:
    """Bytes of the per-seed scan carry: learner state + comparator stats + metric accumulators."""
    import jax

    def carry():
        k1, k2, k3 = jax.random.split(jax.random.key(0), 3)
        ls = learner.init(k1, params)
        a = adversary.init(k2, adv_params)
        loss0 = adversary.loss(a, jax.numpy.int32(0))
        info = learner.step(k3, ls, loss0, params)[1]
        return ls, problem.stats_init(loss0), info

    ls, stats, info = jax.eval_shape(carry)
    return _tree_bytes(ls) + _tree_bytes(stats) + _tree_bytes(info) + 4 * 8  # + Kahan sums, round counter


def _simulate_case(name, unit, units_per_seed_round, learner, adversary, problem, params, adv_params, T,
                   rng_per_round, rng_per_run, work_desc, extra_units_per_seed=None):
    """A ``simulate`` case; ``rng_per_round`` / ``rng_per_run`` are random words per seed."""
    import jax
    import jax.numpy as jnp

    from jaxdp.core import rollout, seed_keys, simulate

    sb = _state_bytes(learner, adversary, problem, params, adv_params)
    counter = iter(range(1, 1 << 30))
    # what simulate runs per seed, without its tiling and sharding: the public pure rollout, vmapped
    fn = jax.jit(jax.vmap(lambda p, ap, k, T_: rollout(learner, adversary, problem, p, ap, k, T_, T_max=T,
                                                        checkpoints=24), in_axes=(None, None, 0, None)))

    def setup(S):

        def call():
            return simulate(learner, adversary, problem, params, adv_params, seed_keys(next(counter), S), T)

        def lowered_args():
            return (params, adv_params, seed_keys(0, S), jnp.asarray(T, jnp.int32))

        return call, fn, lowered_args

    per_seed_units = units_per_seed_round * T if extra_units_per_seed is None else extra_units_per_seed
    return _Case(name, unit, per_seed_units, rng_per_round * T + rng_per_run, 2 * sb * T, setup, work_desc,
                 "T", T, T)


def _cases(quick: bool) -> list[_Case]:
    import jax
    import jax.numpy as jnp

    from jaxdp import registry
    from jaxdp.experts import (BernoulliParams, RealizableBernoulliParams, adv_realizable_bernoulli, bernoulli_experts,
                          experts_problem, hedge_params)
    from jaxdp.experts import l2p_mw_params
    from jaxdp.oco import adv_linear_oco, linear_oco_params, linear_problem, plan_dp_ftrl, plan_l2p_rmw
    from jaxdp.experts import plan_sparse_vector_experts

    learner = {case: registry.get_learner(name) for case, name in CASE_LEARNERS.items()}
    T = 128 if quick else 1024
    d = 16 if quick else 64
    cases = []

    # Hedge: adversary ceil(d/32)+1 words (coins + planted expert), learner 1 uniform (inverse CDF)
    w_bern = -(-d // 32) + 1
    cases.append(_simulate_case(
        "hedge", "expert-updates/s", d, learner["hedge"].factory(d), bernoulli_experts(d), experts_problem(),
        hedge_params(d, T), BernoulliParams(gap=jnp.float32(0.1)), T, w_bern + 1, 0, f"d={d}, Bernoulli losses"))

    # L2P-MW, block B: adversary words per round + 5 uniforms per boundary (S, S', A, x, y)
    B = 8 if quick else 32
    n_blocks = -(-T // B)
    cases.append(_simulate_case(
        "l2p_mw", "expert-updates/s", d, learner["l2p_mw"].factory(d, block_size=B), bernoulli_experts(d),
        experts_problem(), l2p_mw_params(0.05, 0.1, B, block_size=B), BernoulliParams(gap=jnp.float32(0.1)), T,
        w_bern, 5 * n_blocks + 2, f"d={d}, B={B}, Bernoulli losses"))

    # sparse-vector experts: adversary ceil(d/4)+1 words (8-bit coins + star), learner 3 per round
    # (query Laplace, EM uniform, restart Laplace, all drawn every round)
    plan = plan_sparse_vector_experts(eps=1.0, T=T, d=d, mode="rate")
    lrn, prm = learner["sparse_vector"].learner_from_plan(plan, d)
    cases.append(_simulate_case(
        "sparse_vector", "expert-updates/s", d, lrn, adv_realizable_bernoulli(d), experts_problem(), prm,
        RealizableBernoulliParams(q=jnp.float32(0.5), q_star=jnp.float32(0.0)), T,
        -(-d // 4) + 1 + 3, 2, f"d={d}, realizable Bernoulli(1/2)"))

    # L2P-RMW with MALA: per boundary 2 chains (x, y) x steps x (d normals + 1 uniform) + 3 uniforms;
    # adversary ceil(d/32)+2 words per round. The planned (beta, lam, radius, eta, p) at the case's batch B_o.
    d_o = 8 if quick else 16
    B_o = 16 if quick else 64
    steps = 20 if quick else 100
    plan = plan_l2p_rmw(eps=1.0, delta=1e-6, T=T, d=d_o, mode="rate", sampler="mala")
    lrn, prm = learner["l2p_rmw_mala"].learner_from_plan(
        dataclasses.replace(plan, params=dict(plan.params, B=B_o)), d_o, mala_steps=steps)
    nb = -(-T // B_o)
    mala_per_seed = 2 * steps * (nb + 1)                 # end_block runs every block, + 2 samples at init
    w_lin = -(-d_o // 32) + 2
    cases.append(_simulate_case(
        "l2p_rmw_mala", "MALA steps/s", 0, lrn, adv_linear_oco(d_o), linear_problem(d_o, plan.params["radius"]), prm,
        linear_oco_params("rademacher"), T, w_lin, mala_per_seed * (d_o + 1) + 3 * nb,
        f"d={d_o}, B={B_o}, {steps} MALA steps/sample", extra_units_per_seed=mala_per_seed))

    # DP-FTRL: d Gaussian node noises per round (tree aggregation) + adversary words
    d_f = 16 if quick else 64
    plan = plan_dp_ftrl(eps=1.0, delta=1e-6, T=T, d=d_f, L=1.0, D=1.0, setting="general")
    prob = linear_problem(d_f, 1.0)
    cases.append(_simulate_case(
        "dp_ftrl", "seed-rounds/s", 1, learner["dp_ftrl"].factory(prob, T), adv_linear_oco(d_f), prob,
        learner["dp_ftrl"].params_from_plan(plan), linear_oco_params("rademacher"), T, d_f + -(-d_f // 32) + 2, 0,
        f"d={d_f}, linear losses, unit ball"))

    cases.append(_label_dp_case(quick))
    del jax
    return cases


def _label_dp_case(quick: bool) -> _Case:
    import jax
    import jax.numpy as jnp

    from jaxdp.core import monte_carlo, seed_keys
    from jaxdp.label_dp import LabelParams, gen_smooth_regression, make_estimator
    from jaxdp.label_dp.planners import plan_for

    N = 1000 if quick else 10_000
    M = 100 if quick else 1000
    bins_max = 256
    gen = gen_smooth_regression()
    fn = make_estimator(gen, "central_bins_laplace", N_max=N, M=M, bins_max=bins_max)
    pl = plan_for("central_bins_laplace", N=N, eps=1.0)
    f = jnp.result_type(float)
    prm = LabelParams(jnp.asarray(1.0, f), jnp.int32(pl["bins"]), jnp.int32(pl["k"]), jnp.asarray(pl["clip"], f))
    args = (jnp.int32(N), prm, jnp.asarray(1.0, f))
    counter = iter(range(1, 1 << 30))
    G, dd = bins_max ** gen.d, gen.d

    jitted = jax.jit(jax.vmap(fn, in_axes=(0,) + (None,) * len(args)))  # monte_carlo without sharding

    def setup(S):
        def call():
            return monte_carlo(fn, seed_keys(next(counter), S), *args)

        return call, jitted, lambda: (seed_keys(0, S),) + args

    # words: X (N d uniforms) + labels (N uniforms, Bernoulli) + G Laplace bin noises
    rng = N * dd + N + G
    # bytes: dataset written and read once, two bin tables (sum, count) and the noisy means
    # written and read, predictions and the truth on the M-point grid written and read
    by = 2 * 4 * N * (dd + 1) + 2 * 4 * 3 * G + 2 * 4 * 2 * M
    return _Case("label_dp", "estimators/s", 1, rng, by, setup,
                 f"central_bins_laplace, N={N}, grid M={M}, bins_max={bins_max}", "N", N, 1)


# --------------------------------------------------------------------------- sweep


def _sizes_for(case: _Case, quick: bool, ceil: dict, mem_budget: Optional[int], time_cap: float, s_cap: int):
    """Run sizes 1, 4, 16, ... until the next size would exceed the time cap, memory budget or ``s_cap``."""
    rows = []
    S = 1
    while S <= s_cap:
        call, jitted, largs = case.setup(S)
        t0 = time.perf_counter()
        _block(call())
        first = time.perf_counter() - t0
        warm = _median_time(call, 1 if first > time_cap else (2 if quick or first > 0.5 * time_cap else 3))
        comp = _compiled_bytes(jitted, *largs())
        dev_peak = _device_peak()
        peak, src = (dev_peak, "device peak") if dev_peak is not None else (comp, "XLA memory_analysis")
        units = S * case.per_seed_units
        seed_rounds = S * case.rounds
        f_rng = S * case.rng_words / ceil["rng_words_per_s"]
        f_bw = S * case.bytes_moved / ceil["bytes_per_s"]
        floor = max(f_rng, f_bw)
        rows.append({
            "case": case.name, "config": case.work_desc, "size": f"{case.size_label}={case.size}", "seeds": S,
            "compile_s": max(first - warm, 0.0), "run_s": warm,
            "throughput": units / warm, "unit": case.unit,
            "seed_rounds_per_s": seed_rounds / warm,
            "peak_MiB": (peak / 2**20) if peak is not None else float("nan"), "peak_source": src,
            "compiled_MiB": (comp / 2**20) if comp is not None else float("nan"),
            "rng_words_per_seed": case.rng_words, "bytes_per_seed": case.bytes_moved,
            "floor_rng_s": f_rng, "floor_bytes_s": f_bw,
            "gap": warm / floor if floor > 0 else float("nan"),
            "bound": "rng" if f_rng >= f_bw else "bytes",
        })
        nxt = 4 * S
        # linear extrapolation of time and memory to the next size (fixed overheads make this conservative)
        if warm * nxt / S > time_cap:
            break
        if mem_budget is not None and comp is not None and comp * nxt / S > mem_budget:
            break
        S = nxt
    return rows


def run_suite(quick: bool = False, cases: Optional[list[str]] = None, scaling: bool = True,
              time_cap: Optional[float] = None, max_seeds: Optional[int] = None) -> list[dict]:
    """Run the benchmark suite (module docstring): every case over growing batch sizes, then the scaling rows.

    Args:
        quick: tiny sizes (seconds in all; rates not representative).
        cases: subset of ``hedge, l2p_mw, sparse_vector, l2p_rmw_mala, dp_ftrl, label_dp`` (default all).
        scaling: also run the multi-device scaling measurement (subprocesses, N = 1, 2, 4 host devices).
        time_cap: largest predicted warm-call time in seconds (default 0.3 quick, 2 on CPU, 10 on GPU).
        max_seeds: largest batch size tried (default 256 quick, 65536 on CPU, 4194304 on GPU).

    Returns:
        One row per (case, batch size), then the scaling rows. Row keys: ``case, config, size, seeds,
        compile_s, run_s, throughput, unit, seed_rounds_per_s, peak_MiB, peak_source, compiled_MiB,
        rng_words_per_seed, bytes_per_seed, floor_rng_s, floor_bytes_s, gap, bound, rng_ceiling_words_per_s,
        bw_ceiling_bytes_per_s, rng_generated_ceiling_words_per_s``. Scaling rows (:func:`scaling_rows`) have
        ``case = "scaling"``, ``host_devices`` and ``speedup_vs_1``.

    Raises:
        ValueError: an unknown case name.
    """
    import jax

    if cases is not None:
        bad = [c for c in cases if c not in CASE_NAMES]
        if bad:
            raise ValueError(f"cases must be a subset of {list(CASE_NAMES)}, got unknown {bad}")
    on_cpu = jax.default_backend() == "cpu"
    mem_budget, _ = memory_budget()
    if time_cap is None:
        time_cap = 0.3 if quick else (2.0 if on_cpu else 10.0)
    s_cap = (1 << 8) if quick else ((1 << 16) if on_cpu else (1 << 22))
    if max_seeds is not None:
        s_cap = int(max_seeds)
    ceil = measure_ceilings(quick)
    all_cases = _cases(quick)
    assert tuple(c.name for c in all_cases) == CASE_NAMES
    rows = []
    for c in all_cases:
        if cases is not None and c.name not in cases:
            continue
        rows += _sizes_for(c, quick, ceil, mem_budget, time_cap, s_cap)
    for r in rows:
        r["rng_ceiling_words_per_s"] = ceil["rng_words_per_s"]
        r["bw_ceiling_bytes_per_s"] = ceil["bytes_per_s"]
        r["rng_generated_ceiling_words_per_s"] = ceil["rng_generated_words_per_s"]
    if scaling:
        rows += scaling_rows(quick)
    return rows


# --------------------------------------------------------------------------- multi-device scaling


def _scaling_child(S: int, T: int, d: int) -> dict:
    import jax
    import jax.numpy as jnp

    from jaxdp.core import seed_keys, simulate
    from jaxdp.experts import BernoulliParams, bernoulli_experts, experts_problem, hedge, hedge_params

    L, A, P = hedge(d), bernoulli_experts(d), experts_problem()
    prm, ap = hedge_params(d, T), BernoulliParams(gap=jnp.float32(0.1))
    t0 = time.perf_counter()
    simulate(L, A, P, prm, ap, seed_keys(1, S), T)
    first = time.perf_counter() - t0
    ts, cs = [], []
    for i in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        simulate(L, A, P, prm, ap, seed_keys(2 + i, S), T)
        ts.append(time.perf_counter() - t0)
        cs.append(time.process_time() - c0)
    warm = float(np.median(ts))
    return {"devices": jax.local_device_count(), "S": S, "T": T, "d": d, "warm_s": warm,
            "warm_cpu_s": float(np.median(cs)), "compile_s": max(first - warm, 0.0)}


def scaling_rows(quick: bool = False, device_counts=(1, 2, 4)) -> list[dict]:
    """Hedge throughput with ``N`` forced host (CPU) devices, one subprocess per ``N``.

    Each subprocess runs ``simulate(hedge)`` (``S, T, d = 64, 128, 16`` quick, else ``4096, 1024, 64``) with
    ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` and reports the median of three warm calls. A
    subprocess that fails gives a row with ``error`` instead of failing the suite.

    Args:
        quick: the small size.
        device_counts: the numbers of host devices ``N``.

    Returns:
        One row per ``N``: ``case = "scaling"``, ``config``, ``size``, ``seeds``, ``host_devices``,
        ``compile_s``, ``run_s``, ``throughput`` (expert-updates/s), ``unit``, ``seed_rounds_per_s``,
        ``speedup_vs_1`` (over the first ``N``) and ``cpu_cores``.
    """
    S, T, d = (64, 128, 16) if quick else (4096, 1024, 64)
    rows, base = [], None
    for n in device_counts:
        from .xla_env import cpu_xla_env

        env = root_on_pythonpath(dict(os.environ))
        env.update(cpu_xla_env(n))
        code = (f"import json; from benchmarks.harness.xla_env import check_xla; check_xla({n}); "
                f"from benchmarks.harness.suite import _scaling_child; "
                f"print('RESULT', json.dumps(_scaling_child({S}, {T}, {d})))")
        try:
            p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
            line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
            if p.returncode != 0 or not line:
                raise RuntimeError(p.stderr[-2000:])
            res = json.loads(line[0][len("RESULT "):])
        except Exception as e:  # report, do not fail the suite
            rows.append({"case": "scaling", "config": f"hedge d={d}", "size": f"T={T}", "seeds": S,
                         "host_devices": n, "error": str(e)[-300:]})
            continue
        rate = S * T / res["warm_s"]
        base = base or rate
        rows.append({"case": "scaling", "config": f"hedge d={d}, host CPU devices", "size": f"T={T}", "seeds": S,
                     "host_devices": res["devices"], "compile_s": res["compile_s"], "run_s": res["warm_s"],
                     "run_cpu_s": res.get("warm_cpu_s"),
                     "throughput": rate * d, "unit": "expert-updates/s", "seed_rounds_per_s": rate,
                     "speedup_vs_1": rate / base, "cpu_cores": os.cpu_count()})
    return rows


# --------------------------------------------------------------------------- formatting


def _fmt(v) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "—"
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-2):
            return f"{v:.3g}"
        return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


def _table(rows: list[dict], cols: list[str]) -> str:
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(_fmt(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(out)


def suite_to_markdown(rows: list[dict], title: str = "Accelerator benchmark suite", full: bool = True) -> str:
    """The suite's report: ceilings, the (case, seeds) table, the scaling table and notes on the floors.

    Args:
        rows: the rows of :func:`run_suite`.
        title: the section title.
        full: every (case, seeds) row; ``False``: only the largest size per case.

    Returns:
        The markdown section (it starts with :func:`benchmarks.harness.common.machine_info`).
    """
    import jax

    from .common import machine_info

    main = [r for r in rows if r.get("case") != "scaling"]
    scal = [r for r in rows if r.get("case") == "scaling"]
    parts = [f"### {title}", "", f"Machine: {machine_info()}", ""]
    if main:
        r0 = main[0]
        gen = r0.get("rng_generated_ceiling_words_per_s")
        gen_txt = f", {gen:.3g} threefry words generated/s" if gen else ""
        parts += [f"Ceilings (measured once): random numbers {r0['rng_ceiling_words_per_s']:.3g} words/s delivered "
                  f"(`jax.random.bits`, uint32, threefry{gen_txt}); copy bandwidth "
                  f"{r0['bw_ceiling_bytes_per_s'] / 1e9:.2f} GB/s (jitted `x + 1`, float32, read + write).", ""]
        if not full:
            last = {}
            for r in main:
                last[r["case"]] = r
            main = list(last.values())
        cols = ["case", "config", "size", "seeds", "compile_s", "run_s", "throughput", "unit", "seed_rounds_per_s",
                "peak_MiB", "peak_source", "rng_words_per_seed", "bytes_per_seed", "floor_rng_s", "floor_bytes_s",
                "gap", "bound"]
        parts += [_table(main, cols), ""]
        parts += ["`gap` = run_s / max(floor_rng_s, floor_bytes_s): measured time over the larger floor. "
                  "The floors of this table use each case's hand count of the random words it consumes and "
                  "of its scan-carry bytes (read + write, from `jax.eval_shape`) per seed; key derivations, "
                  "arithmetic and transcendental functions are in neither. The roofline table (device report) "
                  "reads both counts from the exported module instead: generator output, key derivations "
                  "included, and loop-state traffic.", ""]
    if scal:
        cols = ["config", "size", "seeds", "host_devices", "run_s", "seed_rounds_per_s", "speedup_vs_1", "cpu_cores",
                "error"]
        cols = [c for c in cols if any(c in r for r in scal)]
        parts += ["Multi-device scaling (Hedge, `XLA_FLAGS=--xla_force_host_platform_device_count=N`, "
                  "`JAX_PLATFORMS=cpu`, one subprocess each):", "", _table(scal, cols), ""]
        ncores = os.cpu_count() or 1
        parts += [f"This host has {ncores} CPU core(s): forced host devices share them, so no gain is expected "
                  f"beyond {ncores} device(s) (XLA's CPU backend already uses several threads for one device).", ""]
    del jax
    return "\n".join(parts) + "\n"


if __name__ == "__main__":  # pragma: no cover
    q = "--quick" in sys.argv
    print(suite_to_markdown(run_suite(quick=q)))
