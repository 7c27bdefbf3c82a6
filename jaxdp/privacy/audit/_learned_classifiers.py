"""The learned-event auditor's feature maps and classifiers (re-exported by :mod:`jaxdp.privacy.audit.learned`).

Feature maps turn a mechanism's output into a float32 vector (:func:`flat_features`, :func:`onehot_features`,
:func:`flag_features`, :func:`trajectory_features`); the classifiers (:class:`Logistic`, :class:`MLP`,
:class:`Histogram`) are fitted to the features of the runs on two inputs (:func:`fit_classifier`) and score
outputs by how much more likely they are under the first (:func:`classifier_scores`).
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ...core.validation import check_positive_int


# ----------------------------------------------------------------------------- features
def flat_features(out) -> jax.Array:
    """Every leaf of ``out`` flattened and concatenated as float32 (vector and scalar outputs).

    Args:
        out: a mechanism's output (any pytree).

    Returns:
        The float32 feature vector.
    """
    return jnp.concatenate([jnp.ravel(jnp.asarray(v)).astype(jnp.float32) for v in jax.tree.leaves(out)])


@functools.lru_cache(maxsize=None)
def onehot_features(n_values: int, offset: int = 0) -> Callable:
    """``out -> one-hot`` of every entry of the integer output ``out + offset`` over ``n_values`` values, flattened
    (categorical outputs and sequences of categories). Cached: same arguments, same function.

    Args:
        n_values: the number of values (>= 2).
        offset: added to every entry before the one-hot encoding.

    Returns:
        The jittable feature map (float32, ``n_values`` entries per entry of ``out``).
    """
    n_values = check_positive_int("n_values", n_values, minimum=2)

    def f(out):
        v = jnp.ravel(jnp.asarray(out)).astype(jnp.int32) + offset
        return jax.nn.one_hot(v, n_values, dtype=jnp.float32).reshape(-1)

    return f


@functools.lru_cache(maxsize=None)
def flag_features(flags: tuple) -> Callable:
    """``out -> [entry == f for f in flags] + [entry, or 0 where it is a flag]`` per entry, flattened.

    For outputs that mix special markers with numbers (a sparse vector that releases noisy values and writes ``-1000``
    for FALSE, as in DP-Sniper's feature transformer).

    Args:
        flags: the marker values.

    Returns:
        The jittable feature map (float32, ``len(flags) + 1`` entries per entry of ``out``).
    """
    fl = tuple(float(f) for f in flags)

    def f(out):
        v = jnp.ravel(jnp.asarray(out)).astype(jnp.float32)
        ind = [(v == c).astype(jnp.float32) for c in fl]
        special = functools.reduce(jnp.logical_or, [v == c for c in fl]) if fl else jnp.zeros_like(v, bool)
        return jnp.concatenate(ind + [jnp.where(special, 0.0, v)])

    return f


@functools.lru_cache(maxsize=None)
def trajectory_features(d: int) -> Callable:
    """Features of a learner's action sequence (integer actions in ``[0, d)``): the one-hot action of every round, the
    number of rounds on each action and the round of the first change (``T + 1`` if none).

    Args:
        d: the number of actions (>= 2).

    Returns:
        The jittable feature map (float32).
    """
    d = check_positive_int("d", d, minimum=2)

    def f(acts):
        a = jnp.ravel(acts).astype(jnp.int32)
        oh = jax.nn.one_hot(a, d, dtype=jnp.float32)
        changed = a[1:] != a[:-1]
        first = jnp.where(jnp.any(changed), jnp.argmax(changed), a.shape[0]).astype(jnp.float32)
        return jnp.concatenate([oh.reshape(-1), oh.sum(0), first[None]])

    return f


# ----------------------------------------------------------------------------- classifiers
@dataclasses.dataclass(frozen=True)
class Logistic:
    """Logistic regression on standardised ``features(out)``.

    ``solver="newton"`` (default): ``steps`` Newton (iteratively reweighted least squares) steps on the whole training
    sample with ridge penalty ``l2 · N`` (not on the bias): exact and fast for the few dozen features of a mechanism's
    output. ``solver="adam"``: ``steps`` Adam (optax) steps on minibatches of ``batch`` rows, learning rate ``lr``.

    Attributes:
        features: jittable ``out -> (D,)`` float32 features (default :func:`flat_features`).
        steps: the Newton or Adam steps.
        lr: the Adam learning rate (cosine-decayed; ``solver="adam"`` only).
        batch: the rows of an Adam minibatch (``solver="adam"`` only).
        l2: the ridge penalty on the weights.
        solver: ``"newton"`` or ``"adam"``.
        name: the name shown in reports.
    """

    features: Callable = flat_features
    steps: int = 8
    lr: float = 0.05
    batch: int = 4096
    l2: float = 1e-5
    solver: str = "newton"
    name: str = "logistic"


@dataclasses.dataclass(frozen=True)
class MLP:
    """A small multi-layer perceptron (ReLU, ``hidden`` widths) on standardised ``features(out)``; Adam (optax).

    Attributes:
        features: jittable ``out -> (D,)`` float32 features (default :func:`flat_features`).
        hidden: the widths of the hidden layers.
        steps: the Adam steps.
        lr: the learning rate (cosine-decayed).
        batch: the rows of a minibatch.
        l2: the penalty on the squared weights.
        name: the name shown in reports.
    """

    features: Callable = flat_features
    hidden: tuple = (32, 16)
    steps: int = 800
    lr: float = 0.005
    batch: int = 4096
    l2: float = 1e-6
    name: str = "mlp"


@dataclasses.dataclass(frozen=True)
class Histogram:
    """Plug-in likelihood ratio of a discrete output: ``s(o) = ln((h0[c]+½)/(n+½·C)) − ln((h1[c]+½)/(n+½·C))`` for the
    cell ``c = cell(o)`` in ``[0, n_cells)`` and training histograms ``h0, h1`` (Krichevsky–Trofimov smoothing). The
    optimal classifier of a small discrete output; no gradient steps.

    Attributes:
        n_cells: the number of cells ``C``.
        cell: jittable ``out -> int`` in ``[0, n_cells)`` (default: the output as int32).
        name: the name shown in reports.
    """

    n_cells: int
    cell: Optional[Callable] = None
    name: str = "histogram"

    @property
    def features(self):
        return self.cell if self.cell is not None else _as_int


def _as_int(out):
    return jnp.asarray(out).astype(jnp.int32)


_SPECS = (Logistic, MLP, Histogram)


def _standardiser(X):
    mu = X.mean(0)
    sd = X.std(0)
    return mu, jnp.where(sd > 1e-12, sd, 1.0)


def _logistic_apply(params, X):
    mu, sd, w, b = params
    return ((X - mu) / sd) @ w + b


def _mlp_apply(params, X):
    mu, sd, layers = params
    h = (X - mu) / sd
    for i, (W, b) in enumerate(layers):
        h = h @ W + b
        if i < len(layers) - 1:
            h = jax.nn.relu(h)
    return h[:, 0]


def _fit_gradient(spec, apply, reg, init_params, X, y, key):
    """Adam on ``steps`` minibatches of ``batch`` rows of (X, y); returns the trained parameters
    ``frozen + trainable`` (``frozen``: the standardisation, fixed)."""
    opt = optax.adam(optax.cosine_decay_schedule(spec.lr, spec.steps, alpha=0.05))
    trainable, frozen = init_params

    def loss(tr, xb, yb):
        logits = apply(frozen + tr, xb)
        return jnp.mean(optax.sigmoid_binary_cross_entropy(logits, yb)) + spec.l2 * reg(tr)

    def step(carry, k):
        tr, st = carry
        idx = jax.random.randint(k, (spec.batch,), 0, X.shape[0])
        g = jax.grad(loss)(tr, X[idx], y[idx])
        upd, st = opt.update(g, st, tr)
        return (optax.apply_updates(tr, upd), st), None

    (tr, _), _ = jax.lax.scan(step, (trainable, opt.init(trainable)), jax.random.split(key, spec.steps))
    return frozen + tr


#: Newton fits whose design matrix has more entries than this keep the two inputs' runs as separate arrays (no
#: concatenated copy) and sum the gradient and Hessian over row blocks of ``NEWTON_BLOCK_ROWS`` (memory about one
#: copy of the sample instead of four); smaller fits use one pass over the concatenated sample
NEWTON_BLOCK_ENTRIES = 1 << 30
NEWTON_BLOCK_ROWS = 1 << 20


def _newton_logistic(parts, mu, sd, l2, steps, block=None):
    """``steps`` ridge-penalised Newton steps for logistic regression on the standardised rows plus a bias.

    ``parts``: ``(X, y)`` pairs (``y`` an array of labels, or one label for every row of ``X``). With ``block`` rows,
    ``g = Σ_b Z_bᵀ(y_b − p_b)`` and ``H = Σ_b Z_bᵀ diag(p_b(1 − p_b)) Z_b`` are summed over row blocks (and each
    remainder): the same step as one pass up to float summation order."""
    n = sum(X.shape[0] for X, _ in parts)
    D = parts[0][0].shape[1]
    dt = parts[0][0].dtype
    lam = l2 * n * jnp.concatenate([jnp.ones(D), jnp.zeros(1)])

    def part(Xb, yb, w):
        Zb = jnp.concatenate([(Xb - mu) / sd, jnp.ones((Xb.shape[0], 1), dt)], axis=1)
        p = jax.nn.sigmoid(Zb @ w)
        return Zb.T @ (yb - p), (Zb * (p * (1 - p))[:, None]).T @ Zb

    def blocked(X, label, w):
        full, tail = divmod(X.shape[0], block)

        def acc(c, i):          # slices of X itself: no padded copy of the sample
            gb, Hb = part(jax.lax.dynamic_slice_in_dim(X, i * block, block), label, w)
            return (c[0] + gb, c[1] + Hb), None
        g, H = jnp.zeros(D + 1, dt), jnp.zeros((D + 1, D + 1), dt)
        if full:
            (g, H), _ = jax.lax.scan(acc, (g, H), jnp.arange(full))
        if tail:
            gt, Ht = part(X[full * block:], label, w)
            g, H = g + gt, H + Ht
        return g, H

    def grad_hess(w):
        if block is None:
            (X, y), = parts
            return part(X, y, w)
        gh = [blocked(X, label, w) for X, label in parts]
        return sum(g for g, _ in gh), sum(H for _, H in gh)

    def newton(w, _):
        g, H = grad_hess(w)
        return w + jnp.linalg.solve(H + jnp.diag(lam) + 1e-6 * jnp.eye(D + 1), g - lam * w), None

    w, _ = jax.lax.scan(newton, jnp.zeros(D + 1, dt), None, length=steps)
    return w


@functools.partial(jax.jit, static_argnums=0)
def _fit_logistic_blocked(spec, X0, X1):
    """Newton fit of a sample too large for one pass (``NEWTON_BLOCK_ENTRIES``): label 1 for ``X0``'s rows, 0 for
    ``X1``'s, standardised by the pooled mean and deviation."""
    n = X0.shape[0] + X1.shape[0]
    mu = (X0.sum(0) + X1.sum(0)) / n
    sd = jnp.sqrt((jnp.square(X0 - mu).sum(0) + jnp.square(X1 - mu).sum(0)) / n)
    sd = jnp.where(sd > 1e-12, sd, 1.0)
    w = _newton_logistic(((X0, 1.0), (X1, 0.0)), mu, sd, spec.l2, spec.steps, NEWTON_BLOCK_ROWS)
    D = X0.shape[1]
    return (mu, sd, w[:D], w[D])


@functools.partial(jax.jit, static_argnums=0)
def _fit_logistic(spec, X, y, key):
    mu, sd = _standardiser(X)
    D = X.shape[1]
    if spec.solver == "newton":
        w = _newton_logistic(((X, y),), mu, sd, spec.l2, spec.steps)
        return (mu, sd, w[:D], w[D])
    return _fit_gradient(spec, _logistic_apply, lambda tr: jnp.sum(jnp.square(tr[0])),
                         ((jnp.zeros(D), jnp.zeros(())), (mu, sd)), X, y, key)


@functools.partial(jax.jit, static_argnums=0)
def _fit_mlp(spec, X, y, key):
    mu, sd = _standardiser(X)
    sizes = (X.shape[1],) + tuple(spec.hidden) + (1,)
    keys = jax.random.split(key, len(sizes))
    layers = []
    for i in range(len(sizes) - 1):
        lim = jnp.sqrt(6.0 / (sizes[i] + sizes[i + 1]))
        layers.append((jax.random.uniform(keys[i], (sizes[i], sizes[i + 1]), minval=-lim, maxval=lim),
                       jnp.zeros(sizes[i + 1])))
    return _fit_gradient(spec, _mlp_apply, lambda tr: sum(jnp.sum(jnp.square(W)) for W, _ in tr[0]),
                         ((layers,), (mu, sd)), X, y, keys[-1])


def fit_classifier(spec, f0, f1, key) -> Any:
    """Fit the classifier ``spec`` (:class:`Logistic`, :class:`MLP`, :class:`Histogram`) to features ``f0`` (label:
    ``x0``) and ``f1`` (label: ``x1``).

    Args:
        spec: the classifier: a :class:`Logistic`, :class:`MLP` or :class:`Histogram`.
        f0: the features of the runs on ``x0``.
        f1: the features of the runs on ``x1``.
        key: typed PRNG key (initialisation and minibatches).

    Returns:
        The trained parameters for :func:`classifier_scores` (larger: more like ``x0``).

    Raises:
        ValueError: a histogram cell outside ``[0, n_cells)``, features that are not one vector per run, or
            ``f0`` and ``f1`` with different numbers of features.
        TypeError: a classifier of another type.
    """
    if isinstance(spec, Histogram):
        c0, c1 = np.asarray(f0).astype(np.int64).ravel(), np.asarray(f1).astype(np.int64).ravel()
        for c in (c0, c1):
            if c.size and (c.min() < 0 or c.max() >= spec.n_cells):
                raise ValueError(f"cell(out) must lie in [0, {spec.n_cells}), got values in [{c.min()}, {c.max()}]")
        h0 = np.bincount(c0, minlength=spec.n_cells) + 0.5
        h1 = np.bincount(c1, minlength=spec.n_cells) + 0.5
        return jnp.asarray(np.log(h0 / h0.sum()) - np.log(h1 / h1.sum()), jnp.float32)
    if np.ndim(f0) == 2 and np.ndim(f1) == 2 and np.shape(f0)[1] != np.shape(f1)[1]:
        raise ValueError(f"f0 and f1 must have the same number of features per run, got {np.shape(f0)[1]} and "
                         f"{np.shape(f1)[1]}")
    if (isinstance(spec, Logistic) and spec.solver == "newton" and np.ndim(f0) == 2 and np.ndim(f1) == 2
            and (len(f0) + len(f1)) * (np.shape(f0)[1] + 1) > NEWTON_BLOCK_ENTRIES):
        return _fit_logistic_blocked(spec, jax.device_put(np.asarray(f0, np.float32)),
                                     jax.device_put(np.asarray(f1, np.float32)))
    X = jnp.concatenate([jnp.asarray(f0, jnp.float32), jnp.asarray(f1, jnp.float32)])
    if X.ndim != 2:
        raise ValueError(f"features must be a vector per run, got shape {X.shape[1:]}")
    y = jnp.concatenate([jnp.ones(len(f0)), jnp.zeros(len(f1))])
    if isinstance(spec, Logistic):
        return _fit_logistic(spec, X, y, key)
    if isinstance(spec, MLP):
        return _fit_mlp(spec, X, y, key)
    raise TypeError(f"classifier must be Logistic, MLP or Histogram, got {spec!r}")


@functools.partial(jax.jit, static_argnums=0)
def _score_chunk(spec, params, F):
    if isinstance(spec, Histogram):
        return params[F.astype(jnp.int32).ravel()]
    if isinstance(spec, Logistic):
        return _logistic_apply(params, F)
    return _mlp_apply(params, F)


def classifier_scores(spec, params, feats, chunk: int = 1 << 14) -> np.ndarray:
    """Scores of ``feats`` in fixed-size chunks (padded), so a given output gets bit-identical scores in
    every phase of an audit (ties at a threshold are then the same ties on the fresh runs).

    Args:
        spec: the classifier (:class:`Logistic`, :class:`MLP` or :class:`Histogram`).
        params: its trained parameters (:func:`fit_classifier`).
        feats: the features of the runs, one row per run (histogram cells for a :class:`Histogram`).
        chunk: the rows scored per compiled call; the last chunk is padded to this size.

    Returns:
        One float32 score per run (larger: more like ``x0``).
    """
    feats = np.asarray(feats)
    n = feats.shape[0]
    out = []
    for s in range(0, n, chunk):
        F = feats[s:s + chunk]
        m = F.shape[0]
        if m < chunk:
            F = np.concatenate([F, np.repeat(F[:1], chunk - m, axis=0)])
        out.append(np.asarray(_score_chunk(spec, params, jnp.asarray(F)))[:m])
    return np.concatenate(out) if out else np.zeros(0, np.float32)
