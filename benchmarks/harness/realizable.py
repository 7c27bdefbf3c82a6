"""Benchmark of sparse-vector experts (REAL Alg. 1, jaxdp.experts) on CPU.

Throughput (seed-rounds per second) of ``simulate(sparse_vector_experts)`` vs the number of seeds
and d on realizable Bernoulli losses, against a NumPy implementation of the same algorithm
(vectorized over seeds, Python loop over rounds; same noise laws, inverse-CDF exponential
mechanism). Compile time is reported apart (first call minus the warm call).

Usage: ``python benchmarks/bench_realizable.py [--tiny]``; ``run(tiny=True)`` is called by a test.
"""
from __future__ import annotations

import argparse
import time

import jax.numpy as jnp
import numpy as np

from .common import best_time as _best

from jaxdp.core import seed_keys, simulate
from jaxdp.experts import RealizableBernoulliParams, adv_realizable_bernoulli, experts_problem
from jaxdp.experts import plan_sparse_vector_experts
from jaxdp.registry import get_learner


def numpy_sparse_vector(T, d, S, eps_svt, eta, K, L, Lstar, q, rng):
    """REAL Alg. 1 (test-then-play) in NumPy, vectorized over ``S`` seeds: the reference timed.

    Realizable Bernoulli losses: every expert loses with probability ``q`` except one planted expert per seed
    that never loses. Sparse vector with threshold noise ``Lap(2/eps_svt)`` and query noise
    ``Lap(4/eps_svt)`` on the played expert's loss since the last switch, a fresh threshold after each of the
    first ``K - 1`` switches; switches draw from ``softmax(-η max(cum, L*)/2)`` by inverse CDF.

    Args:
        T: the number of rounds.
        d: the number of experts.
        S: the number of seeds.
        eps_svt: the ε of the sparse-vector part.
        eta: the exponential mechanism's ``η``.
        K: the largest number of switches.
        L: the sparse-vector threshold.
        Lstar: the floor ``L*`` of the cumulative losses in the exponential mechanism.
        q: the loss probability of the other experts.
        rng: the ``numpy.random.Generator``.

    Returns:
        The ``(S,)`` total loss of the played experts per seed.
    """
    star = rng.integers(0, d, S)
    x = rng.integers(0, d, S)
    cum = np.zeros((S, d))
    acc = np.zeros(S)
    k = np.zeros(S, np.int64)
    tau = L + rng.laplace(0, 2 / eps_svt, S)
    active = np.full(S, K > 0)
    total = np.zeros(S)
    rows = np.arange(S)
    for _ in range(T):
        ell = (rng.random((S, d)) < q).astype(float)
        ell[rows, star] = 0.0
        f = ell[rows, x]
        total += f
        acc += f
        cum += ell
        top = active & (acc + rng.laplace(0, 4 / eps_svt, S) >= tau)
        logits = -eta * np.maximum(cum, Lstar) / 2
        w = np.exp(logits - logits.max(1, keepdims=True))
        c = np.cumsum(w, 1)
        new = np.minimum((c <= rng.random((S, 1)) * c[:, -1:]).sum(1), d - 1)
        x = np.where(top, new, x)
        k += top
        acc = np.where(top, 0.0, acc)
        restart = top & (k < K)
        tau = np.where(restart, L + rng.laplace(0, 2 / eps_svt, S), tau)
        active &= ~(top & ~restart)
    return total




def run(tiny: bool = False) -> list[dict]:
    """Sparse-vector experts throughput (seed-rounds per second) against :func:`numpy_sparse_vector`.

    ``simulate(sparse_vector_experts)`` with the rate-mode plan at ε = 1, on realizable Bernoulli losses
    (``q = 0.5``), for every ``(d, seeds)`` of the grid; compile time is the first call minus the best warm
    one. The NumPy reference runs ``T_np`` rounds (128 tiny, 512 otherwise) on the same number of seeds.

    Args:
        tiny: a test-sized run (``d = 8``, 32 seeds, ``T = 256``).

    Returns:
        One row per ``(d, seeds)``: ``bench``, ``d``, ``seeds``, ``T``, ``jax_seed_rounds_per_s``, ``compile_s``,
        ``numpy_seed_rounds_per_s`` and ``speedup``.
    """
    grid = [(8, 32)] if tiny else [(16, 64), (16, 1024), (256, 64), (256, 1024), (1024, 256)]
    T = 256 if tiny else 4096
    T_np = 128 if tiny else 512
    rows = []
    for d, S in grid:
        plan = plan_sparse_vector_experts(eps=1.0, T=T, d=d, mode="rate")
        (lrn, params), adv = get_learner("sparse_vector").learner_from_plan(plan, d), adv_realizable_bernoulli(d)
        ap = RealizableBernoulliParams(q=jnp.float32(0.5), q_star=jnp.float32(0.0))
        keys = seed_keys(0, S)
        t0 = time.perf_counter()
        simulate(lrn, adv, experts_problem(), params, ap, keys, T)
        first = time.perf_counter() - t0
        warm = _best(lambda: simulate(lrn, adv, experts_problem(), params, ap, keys, T))
        pp = plan.params
        rng = np.random.default_rng(0)
        t_np = _best(lambda: numpy_sparse_vector(T_np, d, S, pp["eps_svt"], pp["eta"], pp["K"], pp["L"], 0.0, 0.5, rng),
                     reps=1)
        jax_rate, np_rate = S * T / warm, S * T_np / t_np
        rows.append(dict(bench="sparse_vector_experts", d=d, seeds=S, T=T, jax_seed_rounds_per_s=jax_rate,
                         compile_s=max(first - warm, 0.0), numpy_seed_rounds_per_s=np_rate,
                         speedup=jax_rate / np_rate))
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny", action="store_true")
    for r in run(tiny=ap.parse_args().tiny):
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))
