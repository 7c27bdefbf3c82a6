"""NumPy references: the same workloads as the JAX benchmarks, written the way a paper's script would be.

Both Hedge references draw Bernoulli losses (a planted expert with gap
``gap``) and sample Hedge's play by inverse CDF, as :mod:`jaxdp` does:

* :func:`numpy_hedge_per_seed`: a Python loop over seeds and rounds (float64);
* :func:`numpy_hedge_vectorized`: a loop over rounds, vectorized over seeds (float32).

Each returns the mean expected regret, so the work cannot be optimized away.
"""
from __future__ import annotations

import numpy as np
from typing import Any

__all__ = ["numpy_hedge_per_seed", "numpy_hedge_vectorized"]


def numpy_hedge_per_seed(seeds: int, d: int, T: int, eta: float, gap: float = 0.1, rng_seed: int = 0) -> float:
    """Hedge on Bernoulli experts, a Python loop over seeds and rounds (float64), as a paper's script would.

    Each seed plants a best expert with loss probability ``0.5 - gap`` (the others 0.5), and every round
    updates Hedge's distribution and samples the played expert by inverse CDF (the sample is discarded).

    Args:
        seeds: the number of runs.
        d: the number of experts.
        T: the rounds per run.
        eta: Hedge's learning rate.
        gap: how much less often the planted expert loses.
        rng_seed: the seed of NumPy's generator.

    Returns:
        The mean over runs of the expected regret ``Σ_t p_t·l_t - min_i L_T(i)``.
    """
    rng = np.random.default_rng(rng_seed)
    total = 0.0
    for _ in range(seeds):
        star = rng.integers(d)
        cum = np.zeros(d)
        p = np.full(d, 1.0 / d)
        exp_loss: Any = 0.0
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
    """Hedge on Bernoulli experts, a loop over rounds vectorized over seeds (float32 like jaxdp).

    The workload of :func:`numpy_hedge_per_seed` with all seeds in one array per round.

    Args:
        seeds, d, T, eta, gap, rng_seed: as in :func:`numpy_hedge_per_seed`.

    Returns:
        The mean over runs of the expected regret ``Σ_t p_t·l_t - min_i L_T(i)``.
    """
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
