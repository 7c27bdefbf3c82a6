"""``simulate(hedge)`` against two NumPy references in the same process.

Measured quantities (never asserted by tests):

* seed-rounds/s and expert-updates/s (= seed-rounds × d) of the compiled run,
  with compile time reported apart (first call minus a second, warm call);
* the same workload in NumPy (:mod:`benchmarks.harness.numpy_refs`): (i) a per-seed
  Python loop over rounds, what a paper's script does today, and (ii) a loop
  over rounds vectorized over seeds. Large NumPy cases run on fewer
  seeds/rounds and report the measured rate (the table says how many
  seed-rounds were timed).
"""
from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from .numpy_refs import numpy_hedge_per_seed, numpy_hedge_vectorized

__all__ = ["bench_hedge", "TITLE"]

TITLE = "simulate(hedge) vs NumPy (Bernoulli losses, gap 0.1)"


def _time(fn, *a, **k):
    t0 = time.perf_counter()
    r = fn(*a, **k)
    return time.perf_counter() - t0, r


def bench_hedge(seeds_list: Sequence[int] = (1, 16, 256, 4096, 16384), d_list: Sequence[int] = (10, 100, 1000),
                T: int = 1000, numpy_budget: float = 2.0, loop_budget: float = 1.0,
                numpy_max_seed_rounds: float = 2e6) -> list[dict]:
    """Time ``simulate(hedge(d), bernoulli_experts(d))`` for each (seeds, d) against the NumPy references.

    Hedge runs with ``η = hedge_eta(d, T)`` on Bernoulli losses with gap 0.1; compile time is the first call
    minus a second, warm call (on other keys). NumPy references are timed on at most ``numpy_max_seed_rounds``
    seed-rounds (fewer rounds for big batches); the per-seed loop on at most ~``loop_budget`` seconds' worth
    of seeds (estimated from one seed). Rates are per seed-round.

    Args:
        seeds_list: the numbers of seeds (batch sizes) timed.
        d_list: the numbers of experts timed.
        T: the rounds per seed.
        numpy_budget: not used (the vectorized reference is bounded by ``numpy_max_seed_rounds``).
        loop_budget: seconds the per-seed NumPy loop may take per point (roughly).
        numpy_max_seed_rounds: the most seed-rounds the vectorized NumPy reference runs per point.

    Returns:
        One row per ``(d, seeds)``: ``compile_s``, ``run_s``, ``jax_seed_rounds/s``, ``jax_expert_updates/s``,
        the two NumPy rates, the speedups over them, what NumPy timed (``numpy_timed``) and ``mean_regret``.
    """
    import jax.numpy as jnp

    from jaxdp.core import seed_keys, simulate
    from jaxdp.experts import BernoulliParams, HedgeParams, bernoulli_experts, experts_problem, hedge, hedge_eta

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
