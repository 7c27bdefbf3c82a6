"""Benchmark of DP-FTRL (REAL Alg. 3, ``jaxdp.oco.dp_ftrl``) on CPU.

Throughput (seed-rounds per second) of ``simulate(dp_ftrl)`` on linear losses
(``adv_linear_oco``, rademacher mode) on the unit ball, vs the number of
seeds and d, against a NumPy implementation of the same algorithm
(vectorized over seeds, Python loop over rounds; tree aggregation with
Gaussian node noise, clipping, ball projection), and a per-seed NumPy loop.
Compile time is reported apart (first call minus the warm call).

Usage: ``python benchmarks/bench_oco.py [--tiny]``; ``run(tiny=True)`` is called
by a test and ``jaxdp bench --all`` calls ``run(quick=...)``.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from .common import best_time as _best

TITLE = "simulate(dp_ftrl) vs NumPy (linear losses on the unit ball)"


def numpy_dp_ftrl(T: int, d: int, S: int, lam: float, sigma: float, clip: float, rng) -> np.ndarray:
    """DP-FTRL (REAL Alg. 3) in NumPy, vectorized over ``S`` seeds (float32): the reference timed.

    Linear losses with Rademacher gradients ``g ∈ {±1/√d}^d`` on the unit ball: each round pays ``⟨g, x⟩``,
    clips ``g`` to norm ``clip``, adds it to the binary tree (Gaussian node noise ``sigma``) and plays the
    projection of ``-ĝ/λ`` (``ĝ`` the noisy prefix sum) on the unit ball.

    Args:
        T: the number of rounds.
        d: the dimension.
        S: the number of seeds.
        lam: the regularization ``λ``.
        sigma: the standard deviation of each tree node's Gaussian noise.
        clip: the gradient clipping norm.
        rng: the ``numpy.random.Generator``.

    Returns:
        The ``(S,)`` float32 total loss per seed.
    """
    H = int(T).bit_length()
    alpha = np.zeros((S, H, d), np.float32)
    alpha_hat = np.zeros((S, H, d), np.float32)
    x = np.zeros((S, d), np.float32)
    total = np.zeros(S, np.float32)
    levels = np.arange(H)
    for t in range(1, T + 1):
        g = (2.0 * (rng.random((S, d)) < 0.5) - 1.0).astype(np.float32) / np.sqrt(d)
        total += np.einsum("sd,sd->s", g, x)
        n = np.linalg.norm(g, axis=1, keepdims=True)
        g = g * np.minimum(1.0, clip / np.maximum(n, 1e-30))
        i = (t & -t).bit_length() - 1
        node = alpha[:, :i].sum(1) + g
        alpha[:, :i] = 0.0
        alpha_hat[:, :i] = 0.0
        alpha[:, i] = node
        alpha_hat[:, i] = node + sigma * rng.standard_normal((S, d)).astype(np.float32)
        bits = ((t >> levels) & 1).astype(bool)
        gbar = alpha_hat[:, bits].sum(1)
        z = -gbar / lam
        nz = np.linalg.norm(z, axis=1, keepdims=True)
        x = z * np.minimum(1.0, 1.0 / np.maximum(nz, 1e-30))
    return total


def numpy_dp_ftrl_per_seed(T: int, d: int, S: int, lam: float, sigma: float, clip: float, rng) -> np.ndarray:
    """:func:`numpy_dp_ftrl` one seed at a time (a Python loop over seeds), as a per-seed script would run it.

    Args:
        T, d, S, lam, sigma, clip: as in :func:`numpy_dp_ftrl`.
        rng: the ``numpy.random.Generator``, shared by the seeds in turn.

    Returns:
        The ``(S,)`` float32 total loss per seed.
    """
    return np.concatenate([numpy_dp_ftrl(T, d, 1, lam, sigma, clip, rng) for _ in range(S)])




def run(tiny: bool = False, quick: bool = False) -> list[dict]:
    """DP-FTRL throughput (seed-rounds per second) against the NumPy references, for every ``(d, seeds)``.

    ``simulate(dp_ftrl)`` with the paper-mode plan at ``(ε, δ) = (1, 1e-6)`` (general setting, ``L = D = 1``);
    compile time is the first call minus the best warm one. The NumPy references run ``T_np`` rounds on at most 256
    (vectorized) and 4 (per-seed) seeds.

    Args:
        tiny: a test-sized run (``d = 4``, 16 seeds, ``T = 256``, ``T_np = 64``).
        quick: the same small size (``jaxdp bench``'s quick run).

    Returns:
        One row per ``(d, seeds)``: ``jax_seed_rounds_per_s``, ``compile_s``, the two NumPy rates, what NumPy
        timed (``numpy_timed``) and ``speedup_vs_numpy_vec``.
    """

    from jaxdp import registry
    from jaxdp.core import seed_keys, simulate
    from jaxdp.oco import adv_linear_oco, linear_oco_params, linear_problem, plan_dp_ftrl

    dp_ftrl = registry.get_learner("dp_ftrl")

    small = tiny or quick
    grid = [(4, 16)] if small else [(4, 64), (4, 1024), (4, 8192), (64, 64), (64, 1024), (256, 256)]
    T = 256 if small else 4096
    T_np = 64 if small else 512
    rows = []
    for d, S in grid:
        plan = plan_dp_ftrl(eps=1.0, delta=1e-6, T=T, d=d, L=1.0, D=1.0, setting="general")
        params = dp_ftrl.params_from_plan(plan)
        prob = linear_problem(d, 1.0)
        lrn, adv = dp_ftrl.factory(prob, T), adv_linear_oco(d)
        ap = linear_oco_params("rademacher")
        keys = seed_keys(0, S)
        t0 = time.perf_counter()
        simulate(lrn, adv, prob, params, ap, keys, T)
        first = time.perf_counter() - t0
        warm = _best(lambda: simulate(lrn, adv, prob, params, ap, keys, T))
        pp = plan.params
        rng = np.random.default_rng(0)
        S_np = min(S, 256)
        t_np = _best(lambda: numpy_dp_ftrl(T_np, d, S_np, pp["lam"], pp["sigma"], pp["clip"], rng), reps=1)
        S_ps = min(S, 4)
        t_ps = _best(lambda: numpy_dp_ftrl_per_seed(T_np, d, S_ps, pp["lam"], pp["sigma"], pp["clip"], rng), reps=1)
        jax_rate = S * T / warm
        np_rate = S_np * T_np / t_np
        rows.append({"d": d, "seeds": S, "T": T, "jax_seed_rounds_per_s": jax_rate,
                     "compile_s": max(first - warm, 0.0), "numpy_vec_seed_rounds_per_s": np_rate,
                     "numpy_per_seed_seed_rounds_per_s": S_ps * T_np / t_ps,
                     "numpy_timed": f"{S_np}x{T_np}", "speedup_vs_numpy_vec": jax_rate / np_rate})
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiny", action="store_true")
    args = ap.parse_args()
    from .common import machine_info, rows_to_markdown

    print(machine_info())
    print(rows_to_markdown(run(tiny=args.tiny), TITLE))
