"""Label-DP learners on real data: the seed-paired train/test splits of one dataset and each method's test score.

Under label DP the features are public and the labels private (the setting of LABEL = Label DP: theoretical limits), so
a dataset's features are reduced once, without privacy, to :func:`~jaxdp.label_dp.public_features` (two principal
components rank-transformed to ``[0, 1]^2``, the domain of the bin and kNN learners); a regression's labels are
standardized. Each method is fitted with its LABEL planner's hyperparameters
(:func:`~jaxdp.label_dp.plan_fit_predict`).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..core import seed_keys
from .experiment import plan_fit_predict, public_features

__all__ = ["real_data_scores"]


def real_data_scores(data: Any, points: Sequence[tuple], *, seed: int, seeds, train_frac: float) -> list:
    """Every method's test score on one real dataset at every seed, the methods compared seed by seed.

    Seed ``i`` draws one train/test split (a permutation by ``numpy.random.default_rng([seed, i, 7])``, its first
    ``round(train_frac n)`` rows training) shared by every method and ε, and the mechanism's key ``i``
    (:func:`~jaxdp.core.seed_keys`).

    Args:
        data: the dataset (:func:`jaxdp.data.load_dataset`: ``X``, ``y``, ``task``, ``n_classes``).
        points: ``[(method, eps)]``: a method of :func:`~jaxdp.label_dp.plan_fit_predict` and its ε (``inf`` for
            a non-private method).
        seed: the base seed.
        seeds: the seed indices.
        train_frac: the training fraction, in (0, 1).

    Returns:
        One dict per point: for classification ``accuracy`` (test accuracy per seed) then ``mse`` (NaN), for
        regression ``mse`` (test MSE of the standardized labels per seed) then ``accuracy`` (NaN).
    """
    Z = public_features(data.X)
    n = Z.shape[0]
    ntr = int(round(train_frac * n))
    cls, K = data.task == "classification", data.n_classes
    y = data.y if cls else (data.y - data.y.mean()) / data.y.std()
    out = []
    for method, eps in points:
        vals = []
        for s, key in zip(seeds, seed_keys(int(seed), seeds)):
            perm = np.random.default_rng([int(seed), int(s), 7]).permutation(n)
            tr, te = perm[:ntr], perm[ntr:]
            pred = plan_fit_predict(method, key, Z[tr], y[tr], Z[te], eps, K)
            vals.append(float(np.mean(pred == y[te])) if cls else float(np.mean((pred - y[te]) ** 2)))
        out.append({"accuracy" if cls else "mse": np.asarray(vals),
                    "mse" if cls else "accuracy": np.full(len(seeds), np.nan)})
    return out
