"""Local and central label-DP learners for classification and regression (LABEL §4–6; docs/algorithms/label-dp.md#estimators).

Every learner is a pure ``fit(key, X, Y, mask, params) -> fitted`` plus a
``predict(fitted, x)``. Datasets are padded to a static ``N_max`` rows with a
boolean ``mask`` (rows with ``mask == False`` are ignored), and every
size-like hyperparameter is traced (:class:`LabelParams`), so one compilation
serves every ``N``, ``ε``, bin count and ``k`` — vmap over seeds, over ``N``
and over parameter grids freely.

===============================  =====================================================  ==========================
method                           mechanism                                               reference
===============================  =====================================================  ==========================
``local_rr_vector``              per-coordinate RR of each label (eq. (11)), bin argmax  LABEL eqs. (11)–(13), Thm 2
``local_rr_kary``                K-ary RR of each label, bin argmax of counts            LABEL Remark 1.3 (baseline)
``central_exp_bins``             exponential mechanism per bin on counts (eq. (17))      LABEL eq. (17), Thm 4
``nonprivate_bins_cls``          bin majority vote                                       —
``local_laplace_knn``            ``Z = Y + Lap(2T/ε)`` (``|Y| ≤ T``), kNN average         LABEL §5.1, Thm 6
``local_laplace_knn_clipped``    ``Z = clip(Y, T) + Lap(2T/ε)``, kNN average              LABEL §6.1, Thm 10
``nonprivate_knn``               kNN average of ``clip(Y, T)`` (``T = inf``: raw labels)  —
``central_bins_laplace``         bin mean ``+ Lap(2T/(n_l ε))`` (``|Y| ≤ T``)             LABEL eq. (23), Thm 8 (CORRECTED scale)
``central_bins_laplace_clipped`` mean of ``clip(Y, T)`` ``+ Lap(2T/(n_l ε))``             LABEL eq. (28), Thm 12
``nonprivate_bins_reg``          bin mean of ``clip(Y, T)``                              —
===============================  =====================================================  ==========================

Privacy. Local methods privatize each label independently (ε-local-label-DP,
hence ε-central by LABEL Prop. 1). Central bin methods touch each bin's labels
with an ε-DP mechanism; bins are disjoint and the features (hence the bin
counts ``n_l``) are public, so the whole table is ε-label-DP (parallel
composition). A label change moves a bin's count vector by ±1 in two classes
(count utility sensitivity 1, hence the ``ε/2`` in (17)) and a bin mean of
labels in ``[-T, T]`` by at most ``2T/n_l``.

Empty bins (``n_l = 0``, docs/guide/concepts.md#notation; LABEL after eq. (23)): a uniformly random
class (classification) or ``0`` (regression). Ties in count argmaxes are broken
uniformly at random (``+ 0.5·U`` jitter on integer counts).

Non-private limit: at ``ε = inf`` every private method returns exactly its
non-private version on the same data and key (the tie-breaking uniforms come
from the same sub-key; the exponential mechanism's Gumbel noise is a monotone
transform of the same uniforms).

Bounded-label methods require ``|Y| ≤ T``: host inputs outside raise
ValueError; traced inputs are clipped to ``[-T, T]`` (which keeps the privacy
guarantee). ``k`` must be in ``[1, N]`` (host check; traced values are clipped).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core.types import fdt
from ..core.validation import check_choice, check_epsilon, check_positive, check_positive_int, is_concrete
from ..privacy.mechanisms.randomized_response import rr_kary, rr_vector

__all__ = [
    "LabelParams", "BinFit", "KnnFit", "METHODS", "CLS_METHODS", "REG_METHODS", "NONPRIVATE_OF",
    "bin_index", "bin_counts", "fit", "predict", "knn_predict", "fit_predict",
    "validate_inputs", "make_params",
]

CLS_METHODS = ("local_rr_vector", "local_rr_kary", "central_exp_bins", "nonprivate_bins_cls")
REG_METHODS = ("local_laplace_knn", "local_laplace_knn_clipped", "nonprivate_knn",
               "central_bins_laplace", "central_bins_laplace_clipped", "nonprivate_bins_reg")
METHODS = CLS_METHODS + REG_METHODS
KNN_METHODS = ("local_laplace_knn", "local_laplace_knn_clipped", "nonprivate_knn")
BOUNDED_METHODS = ("local_laplace_knn", "central_bins_laplace")
NONPRIVATE_OF = {
    "local_rr_vector": "nonprivate_bins_cls", "local_rr_kary": "nonprivate_bins_cls",
    "central_exp_bins": "nonprivate_bins_cls",
    "local_laplace_knn": "nonprivate_knn", "local_laplace_knn_clipped": "nonprivate_knn",
    "central_bins_laplace": "nonprivate_bins_reg", "central_bins_laplace_clipped": "nonprivate_bins_reg",
}


class LabelParams(NamedTuple):
    """Traced hyperparameters (a vmappable pytree).

    Attributes:
        eps: privacy ε (``inf``: non-private limit; ignored by non-private methods).
        bins: bins per axis ``M_b`` (int32; bin methods), ``G = M_b^d`` cubes of side ``1/M_b``.
        k: neighbours (int32; kNN methods).
        clip: label bound / clipping level ``T`` (regression; ``inf``: no clipping for non-private).
    """

    eps: Any = float("inf")
    bins: Any = 1
    k: Any = 1
    clip: Any = float("inf")


def make_params(eps=float("inf"), bins=1, k=1, clip=float("inf")) -> LabelParams:
    """:class:`LabelParams` as arrays with the library dtypes (float / int32).

    Args:
        eps: privacy ε.
        bins: bins per axis.
        k: neighbours.
        clip: clipping level.

    Returns:
        :class:`LabelParams`.
    """
    f = jnp.result_type(float)
    return LabelParams(jnp.asarray(eps, f), jnp.asarray(bins, jnp.int32), jnp.asarray(k, jnp.int32),
                       jnp.asarray(clip, f))


class BinFit(NamedTuple):
    """A bin predictor: ``table[bin(x)]`` (class or value), ``bins`` per axis.

    Attributes:
        table: the class or value of each bin.
        bins: bins per axis.
    """

    table: jax.Array
    bins: jax.Array


class KnnFit(NamedTuple):
    """A kNN predictor. ``d = 1``: ``xs`` sorted features (padding at ``+inf``) and ``csum`` the prefix
    sums of the (privatized) labels in that order (length ``N_max + 1``); ``d > 1``: raw ``X``, ``Z``.

    Attributes:
        xs: sorted features (``d = 1``) or raw ``X``.
        csum: prefix sums of the privatized labels (``d = 1``) or raw ``Z``.
        n: the number of samples.
        k: the number of neighbours.
    """

    xs: jax.Array
    csum: jax.Array
    n: jax.Array
    k: jax.Array


# --------------------------------------------------------------------------- binning


def bin_index(x: jax.Array, bins) -> jax.Array:
    """Linear index of the cube of side ``1/bins`` containing each row of ``x`` (``(..., d)``).

    Args:
        x: points, shape ``(..., d)``.
        bins: bins per axis.

    Returns:
        The linear bin index of each point.
    """
    d = x.shape[-1]
    bins = jnp.asarray(bins, jnp.int32)
    idx = jnp.clip(jnp.floor(x * bins).astype(jnp.int32), 0, bins - 1)
    return jnp.sum(idx * (bins ** jnp.arange(d, dtype=jnp.int32)), axis=-1)


def bin_counts(b: jax.Array, values: jax.Array, mask: jax.Array, G: int) -> jax.Array:
    """``segment_sum`` of ``values`` (``(N,)`` or ``(N, K)``) over bin indices ``b`` with masked rows dropped.

    Args:
        b: bin indices.
        values: ``(N,)`` or ``(N, K)`` values.
        mask: rows to keep.
        G: the number of bins.

    Returns:
        The per-bin sums.
    """
    m = mask.reshape(mask.shape + (1,) * (values.ndim - 1)).astype(values.dtype)
    return jax.ops.segment_sum(values * m, jnp.where(mask, b, G), num_segments=G + 1)[:G]


# --------------------------------------------------------------------------- classification fits


def _fit_cls(method, K, G, key, X, Y, mask, prm: LabelParams) -> BinFit:
    k_priv, k_tie = jax.random.split(key)
    b = bin_index(X, prm.bins)
    if method == "local_rr_vector":
        Z = rr_vector(k_priv, Y, K, prm.eps).astype(fdt())
    elif method == "local_rr_kary":
        Z = jax.nn.one_hot(rr_kary(k_priv, Y, K, prm.eps), K, dtype=fdt())
    else:
        Z = jax.nn.one_hot(Y, K, dtype=fdt())
    S = bin_counts(b, Z, mask, G)                                  # (G, K)
    u = jax.random.uniform(k_tie, S.shape, fdt(), minval=jnp.finfo(fdt()).tiny, maxval=1.0)
    score = S + 0.5 * u
    if method == "central_exp_bins":
        # Gumbel-max exponential mechanism with logits ε n_lj / 2 (eq. (17)); the Gumbel noise is
        # -log(-log U) of the tie-breaking uniforms, so ε = inf is the uniform-tie argmax exactly.
        finite = jnp.isfinite(prm.eps)
        score = jnp.where(finite, jnp.where(finite, prm.eps, 0.0) * S / 2 - jnp.log(-jnp.log(u)), score)
    c = jnp.argmax(score, axis=-1).astype(jnp.int32)
    # empty bins: every count is 0, so the jitter makes the class uniform (docs/guide/concepts.md#notation)
    return BinFit(c, jnp.asarray(prm.bins, jnp.int32))


# --------------------------------------------------------------------------- regression fits


def _privatize_reg(method, key, Y, prm: LabelParams):
    T = prm.clip
    Yc = jnp.clip(Y, -T, T)
    if method in ("local_laplace_knn", "local_laplace_knn_clipped"):
        scale = 2.0 * T / prm.eps                                   # sensitivity 2T (|Y| ≤ T)
        scale = jnp.where(jnp.isfinite(prm.eps), scale, 0.0)
        return Yc + scale * jax.random.laplace(key, Y.shape, fdt())
    return Yc


def _fit_bins_reg(method, G, key, X, Y, mask, prm: LabelParams) -> BinFit:
    b = bin_index(X, prm.bins)
    Yc = jnp.clip(Y, -prm.clip, prm.clip)
    s = bin_counts(b, Yc, mask, G)
    n = bin_counts(b, jnp.ones_like(Yc), mask, G)
    mean = s / jnp.maximum(n, 1.0)
    if method != "nonprivate_bins_reg":
        scale = 2.0 * prm.clip / (jnp.maximum(n, 1.0) * prm.eps)   # eq. (23)/(28), CORRECTED 2T/(n_l ε)
        scale = jnp.where(jnp.isfinite(prm.eps), scale, 0.0)
        mean = mean + scale * jax.random.laplace(key, (G,), fdt())
    return BinFit(jnp.where(n > 0, mean, 0.0), jnp.asarray(prm.bins, jnp.int32))


def _fit_knn(method, key, X, Y, mask, prm: LabelParams) -> KnnFit:
    Z = _privatize_reg(method, key, Y, prm)
    Z = jnp.where(mask, Z, 0.0)
    n = jnp.sum(mask).astype(jnp.int32)
    k = jnp.clip(jnp.asarray(prm.k, jnp.int32), 1, jnp.maximum(n, 1))
    if X.shape[-1] == 1:
        x = jnp.where(mask, X[:, 0], jnp.inf)
        xs, zs = jax.lax.sort((x, Z), num_keys=1)
        csum = jnp.concatenate([jnp.zeros((1,), Z.dtype), jnp.cumsum(zs)])
        return KnnFit(xs, csum, n, k)
    Xm = jnp.where(mask[:, None], X, jnp.inf)
    return KnnFit(Xm, Z, n, k)


def knn_predict(fitted: KnnFit, q: jax.Array, chunk: int = 256) -> jax.Array:
    """kNN average at query points ``q`` (``(M, d)``), traced ``k`` and ``n``.

    ``d = 1``: the ``k`` nearest neighbours of ``q`` are a window ``[l, l+k)`` of the sorted
    features; ``l`` = the smallest index with ``q - x_l <= x_{l+k} - q`` (binary search with a fixed
    number of steps), and the average is a difference of prefix sums — ``O(M log N)``.
    ``d > 1``: brute force per chunk of queries (sort distances, cumulative sum, dynamic read of
    entry ``k - 1``; LABEL Thm 6; docs/algorithms/label-dp.md#estimators), ``O(M N log N)``.

    Args:
        fitted: the :class:`KnnFit`.
        q: query points, shape ``(M, d)``.
        chunk: queries per chunk (``d > 1``).

    Returns:
        The kNN averages.
    """
    n, k = fitted.n, fitted.k
    if q.shape[-1] == 1 and fitted.xs.ndim == 1:
        xs, csum = fitted.xs, fitted.csum
        N_max = xs.shape[0]
        qq = q[:, 0]
        hi0 = jnp.maximum(n - k, 0)

        def f_le0(l):
            right_idx = l + k
            right = jnp.where(right_idx < n, xs[jnp.minimum(right_idx, N_max - 1)], jnp.inf)
            return (qq - xs[l]) <= (right - qq)

        lo = jnp.zeros_like(qq, dtype=jnp.int32)
        hi = jnp.full_like(lo, hi0)
        steps = int(np.ceil(np.log2(N_max + 1))) + 1
        def body(_, lh):
            lo, hi = lh
            mid = (lo + hi) // 2
            ok = f_le0(mid)
            return jnp.where(ok, lo, mid + 1), jnp.where(ok, mid, hi)
        lo, hi = jax.lax.fori_loop(0, steps, body, (lo, hi))
        return (csum[lo + k] - csum[lo]) / k.astype(csum.dtype)

    Xf, Z = fitted.xs, fitted.csum
    M = q.shape[0]
    pad = (-M) % chunk
    qp = jnp.concatenate([q, jnp.zeros((pad, q.shape[1]), q.dtype)]) if pad else q

    def one_chunk(qc):
        d2 = jnp.sum((qc[:, None, :] - Xf[None, :, :]) ** 2, axis=-1)
        d2 = jnp.where(jnp.isfinite(d2), d2, jnp.inf)
        _, zs = jax.lax.sort((d2, jnp.broadcast_to(Z, d2.shape)), dimension=1, num_keys=1)
        cs = jnp.cumsum(zs, axis=1)
        return cs[:, k - 1] / k.astype(cs.dtype)

    out = jax.lax.map(one_chunk, qp.reshape(-1, chunk, q.shape[1]))
    return out.reshape(-1)[:M]


# --------------------------------------------------------------------------- public API


def _check_int(name: str, x, minimum: int = 1) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.integer)
                                     or (np.issubdtype(arr.dtype, np.floating) and np.all(arr == np.round(arr)))):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {x!r}")
    if np.any(arr < minimum):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {arr.min().item()!r}")
    return arr


def validate_inputs(method: str, X, Y, mask, params: LabelParams, K: int = 2) -> None:
    """Host-side checks (skipped for traced values); ValueError/TypeError naming the parameter.

    Args:
        method: the learner's name (:data:`METHODS`).
        X: the features, shape ``(N, d)`` (its length bounds ``k`` when ``mask`` is not given).
        Y: the labels: integer classes in ``{0..K-1}`` (classification), or reals with ``|Y| <= clip`` for the
            bounded-label regression methods.
        mask: the rows to use (bool, shape ``(N,)``), or ``None`` for all; the masked count bounds ``k``.
        params: the :class:`LabelParams` (``eps``, ``bins``, ``k``, ``clip``).
        K: the number of classes (classification methods).

    Raises:
        ValueError: an unknown method or an invalid value (ε, labels out of range or above the bound, ``bins``,
            ``clip``, ``k > N``).
        TypeError: non-integer class labels, ``bins`` or ``k``.
    """
    check_choice("method", method, METHODS)
    if is_concrete(params.eps):
        check_epsilon(np.asarray(params.eps), "eps")
    if method in CLS_METHODS:
        check_positive_int("K", K, minimum=2)
        if is_concrete(Y):
            y = np.asarray(Y)
            if not np.issubdtype(y.dtype, np.integer):
                raise TypeError(f"Y must be integer class labels in {{0..{K - 1}}}, got dtype {y.dtype}")
            if y.size and (y.min() < 0 or y.max() > K - 1):
                raise ValueError(f"Y must be class labels in {{0..{K - 1}}} (K={K}), got a label {int(y[(y < 0) | (y > K - 1)][0])}")
    if method not in KNN_METHODS and is_concrete(params.bins):
        _check_int("bins", params.bins)
    if method in REG_METHODS:
        if is_concrete(params.clip):
            check_positive("clip", np.asarray(params.clip), allow_inf=method.startswith("nonprivate"))
        if method in BOUNDED_METHODS and is_concrete(Y) and is_concrete(params.clip):
            y, T = np.asarray(Y), np.asarray(params.clip)
            m = np.ones(y.shape, bool) if mask is None or not is_concrete(mask) else np.asarray(mask)
            if np.any(np.abs(y[m]) > T):
                raise ValueError(f"Y must satisfy |Y| <= clip={float(T)} for the bounded-label method {method!r} "
                                 f"(LABEL Assumption 2), got max |Y| = {float(np.abs(y[m]).max())}; use "
                                 f"{method}_clipped for unbounded labels")
    if method in KNN_METHODS and is_concrete(params.k):
        kk = _check_int("k", params.k)
        n = None
        if mask is not None and is_concrete(mask):
            n = int(np.sum(np.asarray(mask)))
        elif is_concrete(X):
            n = int(np.shape(X)[0])
        if n is not None and np.any(kk > n):
            raise ValueError(f"k must be <= N (the number of samples), got k={int(np.max(kk))} > N={n}")


def fit(method: str, key: jax.Array, X, Y, mask=None, params: LabelParams = LabelParams(), *,
        K: int = 2, bins_max: int | None = None):
    """Fit one learner (see the module table). Validates host inputs; jittable given static
    ``method``, ``K``, ``bins_max`` (the static cap on bins per axis; default ``params.bins``).

    Args:
        method: the learner's name (:data:`METHODS`).
        key: JAX PRNG key.
        X: features.
        Y: labels.
        mask: rows to use (default all).
        params: :class:`LabelParams`.
        K: the number of classes (static).
        bins_max: the static cap on bins per axis (default ``params.bins``).

    Returns:
        The fitted predictor (:class:`BinFit` or :class:`KnnFit`).

    Raises:
        ValueError: invalid host inputs or method.
    """
    validate_inputs(method, X, Y, mask, params, K)
    X = jnp.asarray(X, fdt())
    if X.ndim == 1:
        X = X[:, None]
    mask = jnp.ones(X.shape[0], bool) if mask is None else jnp.asarray(mask, bool)
    if bins_max is None:
        bins_max = int(np.max(np.asarray(params.bins))) if is_concrete(params.bins) else None
        if bins_max is None:
            raise ValueError("bins_max must be given when params.bins is traced")
    return _fit_jit(method, int(K), int(bins_max) ** X.shape[1], key, X, jnp.asarray(Y), mask, params)


def _fit_impl(method, K, G, key, X, Y, mask, prm):
    prm = LabelParams(*[jnp.asarray(v) for v in prm])
    if method in CLS_METHODS:
        return _fit_cls(method, K, G, key, X, Y.astype(jnp.int32), mask, prm)
    Y = Y.astype(fdt())
    if method in KNN_METHODS:
        return _fit_knn(method, key, X, Y, mask, prm)
    return _fit_bins_reg(method, G, key, X, Y, mask, prm)


_fit_jit = jax.jit(lambda *a: _fit_impl(*a), static_argnums=(0, 1, 2))


def predict(fitted, x: jax.Array) -> jax.Array:
    """Predictions of a fitted learner at ``x`` (``(M, d)``).

    Args:
        fitted: a fitted predictor.
        x: query points, shape ``(M, d)``.

    Returns:
        The predictions.
    """
    x = jnp.asarray(x, fdt())
    if x.ndim == 1:
        x = x[:, None]
    return _predict_jit(fitted, x)


def _predict(fitted, x):
    if isinstance(fitted, BinFit):
        return fitted.table[bin_index(x, fitted.bins)]
    return knn_predict(fitted, x)


_predict_jit = jax.jit(_predict)


def fit_predict(method: str, K: int, G: int, key, X, Y, mask, prm: LabelParams, grid):
    """``predict(fit(...), grid)`` without host checks (for use inside jit/vmap).

    Args:
        method: the learner's name.
        K: the number of classes.
        G: the number of bins (static).
        key: JAX PRNG key.
        X, Y, mask: the data.
        prm: :class:`LabelParams`.
        grid: query points.

    Returns:
        The predictions at ``grid``.
    """
    return _predict(_fit_impl(method, K, G, key, X, Y, mask, prm), grid)
