"""One-shot label-DP estimators batched over seeds (and over N / parameter grids) — docs/guide/concepts.md#monte-carlo.

``make_estimator(gen, method, N_max=..., M=..., bins_max=...)`` returns a pure
``fn(key, N, params, h0) -> {"excess": ...}``: draw an instance of the
distribution (bump signs for the minimax-hard generators, width ``h0``), draw
``N_max`` samples and keep the first ``N`` (mask), fit ``method`` and return its
exact excess risk by quadrature on the midpoint grid (``M`` points per axis).
``N``, ``params`` and ``h0`` are traced, so one compilation serves every grid
point. Run it with ``jaxdp.core.monte_carlo(fn, keys, N, params, h0)`` or, for a
whole grid at once, :func:`run_grid`.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ..core.simulate import _check_keys, _pad_axis, shard_seeds
from ..core.validation import check_choice, check_positive_int
from .estimators import CLS_METHODS, METHODS, LabelParams, fit, fit_predict, make_params, predict
from .generators import Generator, excess_risk, sample, quad_grid, task_generator
from .planners import plan_for, plan_for_task
from .rates import minimax_h0, setting_of
from .rr_prior import rr_prior_fit_predict

__all__ = ["make_estimator", "run_grid", "run_planned", "public_features", "plan_fit_predict"]


@functools.lru_cache(maxsize=256)
def make_estimator(gen: Generator, method: str, *, N_max: int, M: int = 1000, bins_max: int = 256):
    """Cached: the same arguments return the same function object (so compiled code is reused).

    Args:
        gen: the :class:`Generator`.
        method: the learner's name.
        N_max: the largest sample size.
        M: quadrature points per axis.
        bins_max: the static cap on bins per axis.

    Returns:
        ``fn(key, N, params, h0)``, the excess risk of one fit.
    """
    if not isinstance(gen, Generator):
        raise TypeError(f"gen must be a jaxdp.label_dp Generator, got {type(gen).__name__}")
    check_choice("method", method, METHODS)
    if (method in CLS_METHODS) != (gen.task == "classification"):
        raise ValueError(f"method {method!r} does not apply to the {gen.task} generator {gen.name}")
    N_max = check_positive_int("N_max", N_max)
    M = check_positive_int("M", M)
    bins_max = check_positive_int("bins_max", bins_max)
    G = bins_max ** gen.d
    K = max(gen.K, 2)

    def fn(key, N, params: LabelParams, h0):
        k_inst, k_data, k_fit = jax.random.split(key, 3)
        theta = gen.instance(k_inst, h0)
        X, Y = sample(gen, k_data, theta, N_max)
        mask = jnp.arange(N_max) < N
        grid = quad_grid(gen.d, M)
        prm = params._replace(bins=jnp.minimum(params.bins, bins_max))
        pred = fit_predict(method, K, G, k_fit, X, Y, mask, prm, grid)
        return {"excess": excess_risk(gen, theta, grid, pred)}

    fn.__name__ = f"label_dp_{method}"
    return fn


@functools.lru_cache(maxsize=256)
def _compiled_grid(fn):
    one = jax.vmap(fn, in_axes=(0, None, None, None))          # seeds
    return jax.jit(jax.vmap(one, in_axes=(None, 0, 0, 0)))    # grid points (same keys: common random numbers)


def run_grid(fn, keys: jax.Array, N, params: LabelParams, h0=None) -> dict[str, np.ndarray]:
    """Evaluate ``fn`` for every grid point ``(N[g], params[g], h0[g])`` and every key: one compiled
    call, results ``(G, S)``. Each seed uses the same key at every grid point (nested datasets:
    the size-``N`` dataset is a prefix of the size-``N'`` one).

    Args:
        fn: an estimator from :func:`make_estimator`.
        keys: the seeds' keys.
        N: sample sizes per grid point.
        params: :class:`LabelParams` per grid point.
        h0: bandwidths per grid point (hard instances).

    Returns:
        Name -> ``(G, S)`` array.
    """
    _check_keys(keys, False)
    N = np.atleast_1d(np.asarray(N))
    if not np.issubdtype(N.dtype, np.integer) or N.min() < 1:
        raise ValueError(f"N must be positive integers, got {N!r}")
    G = N.shape[0]
    f = jnp.result_type(float)
    prm = LabelParams(*[jnp.broadcast_to(jnp.asarray(v, dt), (G,)) for v, dt in
                        zip(params, (f, jnp.int32, jnp.int32, f))])
    h0 = jnp.broadcast_to(jnp.asarray(1.0 if h0 is None else h0, f), (G,))
    keys_p, n = _pad_axis(jax.random.clone(keys), 0)
    out = _compiled_grid(fn)(shard_seeds(keys_p, 0), jnp.asarray(N, jnp.int32), prm, h0)
    return {k: np.asarray(v)[:, :n] for k, v in out.items()}


def run_planned(task: str, method: str, keys: jax.Array, N, eps, c=None, *, p: float = 0.0, K: int = 2,
                beta: float = 1.0, gamma: float = 1.0, knob: str = "none", N_max: int, M: int = 1000,
                bins_max: int = 256, C_M: float = 2.0, m0_max: int = 4096, seed_batch: int = 0) -> np.ndarray:
    """The excess risk of one learner on one task at several grid points, each at its rate-mode planner's
    hyperparameters (:func:`~jaxdp.label_dp.planners.plan_for_task`, "Label differential privacy: theoretical limits"
    Table 1's rules). On a minimax-hard bump task (``"bump_cls"``, ``"bump_reg"``) each point draws its instance at
    the lower-bound bandwidth :func:`~jaxdp.label_dp.rates.minimax_h0` of its ``(N, ε)`` (App. B, F).

    Args:
        task: a task of :func:`~jaxdp.label_dp.generators.task_generator`.
        method: the learner.
        keys: the seeds' keys (the same at every point: nested datasets, :func:`run_grid`).
        N, eps: the sample size and the privacy parameter of each point.
        c: the planner constant ``knob`` is set to at each point (default 1: the theory's).
        p, K, beta, gamma: the task's moment order, classes, smoothness and margin.
        knob: the planner constant ``c`` scales (``"c_h"``, ``"c_k"``, ``"c_T"``, or ``"none"``).
        N_max, M, bins_max: :func:`make_estimator`'s largest sample, quadrature points and bins per axis.
        C_M, m0_max: the bump construction's cell constant and its cap on cells per axis.
        seed_batch: evaluate the seeds this many at a time (bounds memory; the result does not depend on it);
            0: all at once.

    Returns:
        ``(points, seeds)`` excess risks.
    """
    gen = task_generator(task, p, K, beta, gamma, C_M=C_M, m0_max=m0_max)
    fn = make_estimator(gen, method, N_max=N_max, M=M, bins_max=bins_max)
    N, eps = np.atleast_1d(np.asarray(N)), np.atleast_1d(np.asarray(eps, float))
    c = np.ones(len(N)) if c is None else np.atleast_1d(np.asarray(c, float))
    plans = [plan_for_task(method, task, N=int(n), eps=float(e), p=p, K=K, beta=beta, knob=knob, c=float(ci))
             for n, e, ci in zip(N, eps, c)]
    h0 = [float(minimax_h0(setting_of(method), int(n), float(e), beta)) if task.startswith("bump") else 1.0
          for n, e in zip(N, eps)]
    prm = LabelParams(*[np.asarray([pl[f] for pl in plans]) for f in ("eps", "bins", "k", "clip")])
    B = (check_positive_int("seed_batch", seed_batch) if seed_batch else 0) or len(keys)
    return np.concatenate([run_grid(fn, keys[i:i + B], N, prm._replace(eps=eps), np.asarray(h0))["excess"]
                           for i in range(0, len(keys), B)], axis=-1)


def public_features(X: np.ndarray, q: int = 2) -> np.ndarray:
    """First ``q`` principal components of the features, each rank-transformed to ``(0, 1)`` (labels unused: under
    label DP the features are public).

    Args:
        X: the ``(n, p)`` features.
        q: the number of components kept.

    Returns:
        ``(n, q)`` features, per component ``(rank + 1/2) / n``.
    """
    Xc = X - X.mean(axis=0)
    _, _, vt = np.linalg.svd(Xc, full_matrices=False)
    Z = Xc @ vt[:q].T
    ranks = np.argsort(np.argsort(Z, axis=0), axis=0)
    return (ranks + 0.5) / Z.shape[0]


def plan_fit_predict(method: str, key: jax.Array, X_train, y_train, X_test, eps: float, K: int = 0) -> np.ndarray:
    """Fit ``method`` with its LABEL planner's hyperparameters (rate mode, the features' dimension) and predict.

    Args:
        method: an estimator of :mod:`jaxdp.label_dp.estimators`, or ``"rr_prior"`` (two-stage RRWithPrior,
            :func:`jaxdp.label_dp.rr_prior.rr_prior_fit_predict`, with the K-ary RR planner's bins).
        key: the mechanism's PRNG key.
        X_train, y_train, X_test: the training features and labels and the test features.
        eps: the privacy parameter (``inf`` for the non-private methods).
        K: the number of classes (classification); 0 for regression (standardized labels: ``label_bound`` 3,
            ``p`` 2).

    Returns:
        The test predictions.
    """
    kw = {"K": K} if K else {"label_bound": 3.0, "p": 2.0}
    base = "local_rr_kary" if method == "rr_prior" else method
    N = len(y_train)
    hp = plan_for(base, N=N, eps=eps if np.isfinite(eps) else 1e300, d=X_train.shape[1], mode="rate", **kw)
    if method == "rr_prior":
        return rr_prior_fit_predict(key, X_train, y_train, X_test, K, eps, int(hp["bins"]))
    prm = make_params(eps=eps, bins=hp["bins"], k=min(hp["k"], N), clip=hp["clip"])
    f = fit(method, key, X_train, jnp.asarray(y_train), params=prm, K=max(K, 2))
    return np.asarray(predict(f, X_test))
