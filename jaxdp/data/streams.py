"""Expert loss streams from real data: the prequential losses of a pool of online predictors.

``expert_pool_losses(name, T, n_experts, order_seed)`` shuffles the dataset (a fresh permutation
per pass until ``T`` rows; ``order_seed`` picks the order) and runs ``n_experts`` online predictors
on the stream. Expert ``j`` sees only a random subset of the features (random-subspace pool; the
subsets and learning rates are drawn once from ``pool_seed`` and do not depend on the order) and
is updated after it predicts, so its loss at round ``t`` is the prequential loss

* classification: ``1[prediction != y_t]`` (softmax regression by SGD; expert 0 predicts the
  majority class seen so far);
* regression: ``min(1, |prediction - y_t| / (2 sd(y)))`` (linear regression by SGD; expert 0
  predicts the running mean).

Losses are in ``[0, 1]``, as the experts problem requires; the matrix plays through
``jaxdp.experts.adv_replay``.
"""
from __future__ import annotations

import functools

import numpy as np

from ..core.validation import check_positive_int
from .datasets import load_dataset

__all__ = ["expert_pool_losses", "stream_order"]


def stream_order(n: int, T: int, order_seed: int) -> np.ndarray:
    """Row indices of a length-``T`` stream: concatenated independent permutations of ``range(n)``.

    Args:
        n: the number of rows of the dataset.
        T: the length of the stream.
        order_seed: seed of the permutations.

    Returns:
        ``T`` row indices.
    """
    rng = np.random.default_rng([int(order_seed), 0x5EED])
    reps = -(-T // n)
    return np.concatenate([rng.permutation(n) for _ in range(reps)])[:T]


def expert_pool_losses(name: str, T: int, n_experts: int = 32, order_seed: int = 0, pool_seed: int = 0) -> np.ndarray:
    """``(T, n_experts)`` float32 losses in ``[0, 1]`` (see the module docstring). Cached per process.

    Args:
        name: the dataset the experts are trained on.
        T: the number of rounds.
        n_experts: the number of experts in the pool.
        order_seed: seed of the stream order (:func:`stream_order`).
        pool_seed: seed of the expert pool.

    Returns:
        ``(T, n_experts)`` float32 losses in ``[0, 1]``.
    """
    T = check_positive_int("T", T)
    d = check_positive_int("n_experts", n_experts, minimum=2)
    return _pool_losses(str(name), T, d, int(order_seed), int(pool_seed)).copy()


@functools.lru_cache(maxsize=256)
def _pool_losses(name: str, T: int, d: int, order_seed: int, pool_seed: int) -> np.ndarray:
    ds = load_dataset(name)
    X, y = ds.X, ds.y
    n, p = X.shape
    prng = np.random.default_rng([int(pool_seed), 0xE0])
    mask = np.zeros((d, p + 1))
    for j in range(d):
        k = int(prng.integers(1, p + 1))
        mask[j, prng.choice(p, size=k, replace=False)] = 1.0
    mask[:, p] = 1.0                                   # intercept
    lr = np.geomspace(0.003, 1.0, d)[prng.permutation(d)]
    idx = stream_order(n, T, order_seed)
    out = np.empty((T, d), np.float32)
    Xb = np.concatenate([X, np.ones((n, 1))], axis=1)
    if ds.task == "classification":
        K = ds.n_classes
        W = np.zeros((d, K, p + 1))
        counts = np.zeros(K)
        for t, i in enumerate(idx):
            xm = mask * Xb[i]                          # (d, p+1)
            s = np.einsum("dkp,dp->dk", W, xm)
            pred = s.argmax(axis=1)
            pred[0] = int(np.argmax(counts))           # expert 0: majority class so far
            yt = int(y[i])
            out[t] = pred != yt
            s -= s.max(axis=1, keepdims=True)
            pr = np.exp(s)
            pr /= pr.sum(axis=1, keepdims=True)
            pr[:, yt] -= 1.0                           # softmax gradient
            W -= lr[:, None, None] * pr[:, :, None] * xm[:, None, :]
            counts[yt] += 1
    else:
        mu, sd = float(y.mean()), float(y.std()) or 1.0
        ys = (y - mu) / sd
        w = np.zeros((d, p + 1))
        run_sum = 0.0
        for t, i in enumerate(idx):
            xm = mask * Xb[i]
            pred = np.einsum("dp,dp->d", w, xm)
            pred[0] = run_sum / t if t else 0.0        # expert 0: running mean
            out[t] = np.minimum(1.0, np.abs(pred - ys[i]) / 2.0)
            w -= (0.1 * lr)[:, None] * np.clip(pred - ys[i], -3, 3)[:, None] * xm
            run_sum += ys[i]
    return out
