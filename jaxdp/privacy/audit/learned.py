"""Learned events: a trained distinguisher turned into the optimal randomized threshold event.

The fixed event families of :mod:`jaxdp.privacy.audit.auditor` (thresholds on one statistic, cells of a
discrete output) need the auditor to guess where a mechanism leaks. Here the event is *learned*,
following DP-Sniper (Bichsel, Steffen, Bogunovic, Vechev, "DP-Sniper: Black-Box Discovery of
Differential Privacy Violations using Classifiers", IEEE S&P 2021):

1. **Train.** Draw ``n_train`` outputs of ``M(x0)`` and of ``M(x1)`` (one vmapped call per input),
   map each output to a feature vector and fit a classifier ``s(o)`` that scores how much more
   likely ``o`` is under ``x0`` than under ``x1`` (logistic regression or a small MLP trained with
   optax on the logistic loss, or the smoothed log-ratio of two histograms for a discrete
   output). The Bayes-optimal score is the log likelihood ratio ``ln p0(o)/p1(o)``.

2. **Select the event** on an independent *selection* sample of ``n_select`` outputs per input.
   DP-Sniper's randomized threshold events are

       S_{t,q}(o) = 1 if s(o) > t,   q if s(o) = t,   0 if s(o) < t

   (``q`` is the probability of counting an output that sits exactly on the threshold, realised
   by a fresh uniform per output, so the event is an honest randomized post-processing of ``M``).
   With ``c = P[S(M(x_b))]`` fixed, the Neyman–Pearson lemma says the event maximising
   ``P[S(M(x_a))]`` is of this form for the true likelihood ratio, and DP-Sniper chooses ``(t, q)``
   to hit a target ``c`` exactly. We score every ``(t, q)`` of the family (``q ∈ {0, 1}`` at every
   distinct score, and DP-Sniper's ``(t, q)`` for a grid of targets ``c``), in both directions
   (``a = 0, b = 1`` with score ``s``; ``a = 1, b = 0`` with ``−s``), by the ε lower bound it
   would give on ``n_eval`` fresh runs, and keep the best.

3. **Bound ε on fresh runs.** The chosen candidates (at most ``n_best``, over all neighbour pairs
   and classifiers) are evaluated on ``n_eval`` NEW runs per input, independent of the training
   and selection samples: with ``k_a`` hits of ``S`` among the runs of ``x_a`` and ``k_b`` among
   those of ``x_b`` (each a Binomial count, because ``S`` is fixed before these runs are drawn),

       ε_lower = max over evaluated candidates of  ln((p_a_lo − δ) / p_b_hi),

   with one-sided Clopper–Pearson bounds at level ``α / (2m)`` each for ``m`` evaluated
   candidates (Bonferroni over the two bounds of each and over the maximum taken on the fresh
   runs). Whatever the classifier learned and whatever was chosen on the training and selection
   samples, a mechanism that is (ε, δ)-DP gets ``ε_lower > ε`` with probability at most α. A bad
   classifier only costs power, never validity.

Features (:func:`flat_features`, :func:`onehot_features`, :func:`flag_features`,
:func:`trajectory_features`) cover vector, categorical and sequence outputs; classifiers are
:class:`Logistic`, :class:`MLP` and :class:`Histogram`. :func:`audit_learned` runs the whole
procedure over a family of neighbour pairs (see :mod:`jaxdp.privacy.audit.pairs` for the input-pair
patterns) and returns an :class:`jaxdp.privacy.audit.AuditReport`.
"""
from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any, Callable, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ..accounting.floating import FLOAT32_DELTA_FLOOR
from ...core.validation import check_positive_int
from .auditor import (
    DEFAULT_ALPHA, AuditReport, _check_claim, _check_key, _distinct_inputs, _evidence, _Features as _Feats,
    _normalise_neighbours, bonferroni_level, draw_features, clopper_pearson_lower, clopper_pearson_upper, eps_lower_bound,
)

__all__ = [
    "Logistic", "MLP", "Histogram", "flat_features", "onehot_features", "flag_features", "trajectory_features",
    "ThresholdEvent", "best_threshold_event", "fit_classifier", "audit_learned", "LearnedCandidate",
]


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
    import optax

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


def _apply_spec(spec, params, F):
    if isinstance(spec, Histogram):
        return params[F.astype(jnp.int32).ravel()]
    if isinstance(spec, Logistic):
        return _logistic_apply(params, F)
    return _mlp_apply(params, F)


_score_chunk = jax.jit(_apply_spec, static_argnums=0)


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


# ----------------------------------------------------------------------------- randomized threshold events
@dataclasses.dataclass(frozen=True)
class ThresholdEvent:
    """``S(o) = 1[sign·s(o) > t] + q·1[sign·s(o) = t]``, tested with input ``x_num`` in the numerator (``num = 0``:
    ``P[M(x0) ∈ S] <= e^ε P[M(x1) ∈ S] + δ``; ``num = 1``: the reverse).

    Attributes:
        sign: ``+1`` or ``-1``, the orientation of the score.
        t: the threshold.
        q: the probability of including an output with ``sign·s(o) = t``.
        projected: the ε bound the selection sample predicts at ``n_eval`` fresh runs (the selection criterion only).
        p_num: the selection-sample estimate of ``P[S]`` under the numerator input.
        p_den: the selection-sample estimate of ``P[S]`` under the denominator input.
        num: the numerator input (0: ``x0``, 1: ``x1``).
    """

    sign: int
    t: float
    q: float
    projected: float     # the ε bound the selection sample predicts at n_eval (selection criterion only)
    p_num: float         # selection-sample estimates of P[S] under the numerator / denominator input
    p_den: float
    num: int = 0

    def describe(self, name: str = "s") -> str:
        s = name if self.sign > 0 else f"-{name}"
        if self.q <= 0:
            return f"{s} > {self.t:.6g}"
        if self.q >= 1:
            return f"{s} >= {self.t:.6g}"
        return f"{s} > {self.t:.6g}, or = it w.p. {self.q:.4g}"


#: DP-Sniper's targets c = P[S(M(x_b))] (its default is c = 0.01), as a grid
C_GRID = tuple(np.geomspace(1e-5, 0.5, 49))


def _candidates(sa, sb, max_thresholds, c_grid):
    """Candidate events ``(t, q)`` on sorted numerator / denominator scores ``sa``, ``sb``: ``{s > t}`` and
    ``{s >= t}`` at up to ``max_thresholds`` distinct scores, and DP-Sniper's ``(t, q)`` with ``P̂_b[S] = c``."""
    nb = sb.size
    pooled = np.unique(np.concatenate([sa, sb]))
    if pooled.size > max_thresholds:
        lv = np.unique(np.concatenate([np.linspace(0, 1, max_thresholds // 2),
                                       1.0 / (1.0 + np.exp(-np.linspace(-14, 14, max_thresholds // 2)))]))
        allv = np.sort(np.concatenate([sa, sb]))
        pooled = np.unique(allv[np.minimum((lv * allv.size).astype(np.int64), allv.size - 1)])
    ts, qs = [pooled, pooled], [np.zeros(pooled.size), np.ones(pooled.size)]
    # DP-Sniper: for a target c under the denominator, t = the score at rank floor(c nb) from the top, q splits the tie
    target = np.asarray(c_grid, np.float64) * nb
    target = target[target >= 1]
    if target.size:
        tc = sb[::-1][np.minimum(np.floor(target).astype(np.int64), nb - 1)]
        b_hi, b_lo = np.searchsorted(sb, tc, side="right"), np.searchsorted(sb, tc, side="left")
        ts.append(tc)
        qs.append(np.clip((target - (nb - b_hi)) / (b_hi - b_lo), 0.0, 1.0))
    return np.concatenate(ts), np.concatenate(qs)


def _probs(sorted_s, t, q):
    """``P̂[S_{t,q}]`` on sorted scores: ``(#{s > t} + q #{s = t}) / n``."""
    hi, lo = np.searchsorted(sorted_s, t, side="right"), np.searchsorted(sorted_s, t, side="left")
    return (sorted_s.size - hi + q * (hi - lo)) / sorted_s.size


def _one_direction(sa, sb, n_eval, delta, level, max_thresholds, c_grid):
    """Best ``(projected, t, q, p̂_num, p̂_den)`` with numerator sample ``sa`` over ``sb``, each candidate judged by
    pessimistic (``SHRINK``) selection estimates projected to ``n_eval`` fresh runs (Wilson, then CP for ``SHORTLIST``)."""
    na, nb = sa.size, sb.size
    sa, sb = np.sort(sa), np.sort(sb)
    t, q = _candidates(sa, sb, max_thresholds, c_grid)
    pa, pb = _probs(sa, t, q), _probs(sb, t, q)
    pa_s, pb_s = _wilson(pa, na, SHRINK, -1.0), _wilson(pb, nb, SHRINK, 1.0)
    fast = _log_ratio(_wilson(pa_s, n_eval, level, -1.0) - delta, _wilson(pb_s, n_eval, level, 1.0))
    top = np.argsort(-fast, kind="stable")[:SHORTLIST]
    pa_s = clopper_pearson_lower(pa[top] * na, na, SHRINK)
    pb_s = clopper_pearson_upper(pb[top] * nb, nb, SHRINK)
    proj = eps_lower_bound(np.round(pa_s * n_eval), n_eval, np.round(pb_s * n_eval), n_eval, delta, level)
    i = int(top[int(np.argmax(proj))])
    return float(np.max(proj)), float(t[i]), float(q[i]), float(pa[i]), float(pb[i])


#: candidates whose projected bound is computed exactly
SHORTLIST = 16
#: one-sided level of the pessimistic selection-sample estimates (a selection criterion only: it trades the
#: winner's curse of rare events against the ratio; the bound itself always comes from fresh runs)
SHRINK = 0.02


def _wilson(p, n, level, sgn):
    """Wilson score bound (``sgn = -1``: lower, ``+1``: upper) for a proportion ``p`` of ``n`` runs."""
    from scipy.stats import norm

    z = float(norm.isf(level))
    z2 = z * z / n
    c = p + z2 / 2 + sgn * z * np.sqrt(np.maximum(p * (1 - p), 0.0) / n + z2 / (4 * n))
    return np.clip(c / (1 + z2), 0.0, 1.0)


def _log_ratio(num, den):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(num > 0, np.log(np.maximum(num, 1e-300) / den), -np.inf)


def best_threshold_event(s0, s1, *, n_eval: int, delta: float, level: float, max_thresholds: int = 4096,
                         c_grid: Sequence[float] = C_GRID) -> ThresholdEvent:
    """DP-Sniper's optimal randomized threshold event for scores ``s0`` (runs on ``x0``) and ``s1`` (on ``x1``).

    Candidates: ``{s > t}`` and ``{s >= t}`` at every distinct score (or ``max_thresholds`` quantiles), and for each
    target ``c`` in ``c_grid`` the ``(t, q)`` with ``P̂[S(M(x_b))] = c`` exactly; both directions (``x0`` or ``x1`` in
    the numerator) and both orientations of the score (upper and lower sets, so a classifier trained the wrong way round
    costs nothing). Each is scored by the bound it would give with ``n_eval`` fresh runs per input and one-sided bounds
    at ``level``, from pessimistic selection-sample estimates (the selection criterion; the bound itself comes from
    fresh runs).

    Args:
        s0: the scores of the selection runs on ``x0``.
        s1: the scores of the selection runs on ``x1``.
        n_eval: the fresh runs per input the bound will use.
        delta: the δ tested (the float δ floor included).
        level: the level of each one-sided bound of the final test.
        max_thresholds: the most distinct scores tried as thresholds (beyond: that many quantiles).
        c_grid: the targets ``c = P̂[S(M(x_b))]`` (default: 49 values from ``1e-5`` to ``0.5``, geometric).

    Returns:
        The :class:`ThresholdEvent` with the largest projected bound.
    """
    s = (np.asarray(s0, np.float32), np.asarray(s1, np.float32))
    best = None
    for num in (0, 1):
        for sign in (1, -1):
            proj, t, q, pa, pb = _one_direction(sign * s[num], sign * s[1 - num], n_eval, delta, level,
                                                max_thresholds, c_grid)
            if best is None or proj > best.projected:
                best = ThresholdEvent(sign=sign, t=t, q=q, projected=proj, p_num=pa, p_den=pb, num=num)
    assert best is not None
    return best


def _count_event(ev: ThresholdEvent, scores: np.ndarray, u: np.ndarray) -> int:
    s = ev.sign * scores.astype(np.float32)
    t = np.float32(ev.t)
    return int(np.sum(s > t) + np.sum((s == t) & (u < ev.q)))


# ----------------------------------------------------------------------------- sampling

@functools.lru_cache(maxsize=256)
def _event_counter(mechanism, fn, c, spec):
    """Jitted ``(keys, key_u, x, params, sign, t, q) -> count`` of one chunk of fresh runs, on the device."""
    run = jax.vmap(lambda k, x: fn(mechanism(k, x))[c], in_axes=(0, None))

    def count(keys, key_u, x, params, sign, t, q):
        s = sign * _apply_spec(spec, params, run(keys, x)).astype(jnp.float32)
        u = jax.random.uniform(key_u, s.shape)
        return jnp.sum(s > t, dtype=jnp.int32) + jnp.sum((s == t) & (u < q), dtype=jnp.int32)

    return jax.jit(count)


def count_event_on_device(mechanism: Callable, fn: Callable, c: int, spec, params, event: ThresholdEvent,
                          key: jax.Array, x, n: int, batch: int = 1 << 20) -> int:
    """Runs of ``mechanism(·, x)`` (``n`` fresh ones) that fall in ``event``, counted without leaving the device.

    The runs are drawn in chunks of ``batch`` (the last chunk at its own size), scored by the trained classifier
    and tested against the randomized threshold event inside one compiled function, so only one integer per
    chunk returns to the host. This is what lets an audit use DP-Sniper's 2·10⁸ fresh runs per input on an
    accelerator. The event is fixed before the runs are drawn, so the count is Binomial(n, P[M(x) ∈ S])
    whatever rounding the fused scoring applies.

    Args:
        mechanism: jittable ``(key, x) -> output``.
        fn: the feature map of the audit (one entry per classifier); entry ``c`` is the classifier's.
        c: index of the classifier's features in ``fn``'s output.
        spec: the classifier (:class:`Logistic`, :class:`MLP` or :class:`Histogram`).
        params: its trained parameters.
        event: the randomized threshold event, chosen before these runs.
        key: typed PRNG key of these runs (nothing else uses it).
        x: the input.
        n: number of fresh runs.
        batch: runs per compiled chunk.

    Returns:
        The number of the ``n`` runs in the event.

    Raises:
        TypeError: a non-callable mechanism or feature map, a classifier or event of another type, or an untyped
            key.
        ValueError: ``n`` or ``batch`` not a positive integer.
    """
    if not callable(mechanism) or not callable(fn):
        raise TypeError("mechanism and fn must be callables (key, x) -> output and output -> features")
    if not isinstance(spec, _SPECS):
        raise TypeError(f"spec must be a Logistic, MLP or Histogram, got {spec!r}")
    if not isinstance(event, ThresholdEvent):
        raise TypeError(f"event must be a ThresholdEvent, got {type(event).__name__}")
    n = check_positive_int("n", n)
    batch = check_positive_int("batch", batch)
    _check_key(key)
    counter = _event_counter(mechanism, fn, int(c), spec)
    m = int(batch)
    chunks = -(-int(n) // m)
    total = 0
    sign, t, q = jnp.float32(event.sign), jnp.float32(event.t), jnp.float32(event.q)
    for j in range(chunks):
        size = min(m, int(n) - j * m)
        kj = jax.random.fold_in(key, j)
        k_runs, k_u = jax.random.split(kj)
        total += int(counter(jax.random.split(k_runs, size), k_u, x, params, sign, t, q))
    return total


# ----------------------------------------------------------------------------- the audit
@dataclasses.dataclass
class LearnedCandidate:
    """One (pair, classifier) candidate after selection: its trained classifier and chosen event.

    Attributes:
        pair: the index of the neighbour pair.
        label: the pair's label (as in the report's ``pair``).
        spec: the classifier (:class:`Logistic`, :class:`MLP` or :class:`Histogram`).
        params: its trained parameters.
        event: the randomized threshold event chosen on the selection sample (replaced when refined).
        train_acc: the classifier's accuracy on its training sample (:func:`audit_learned` leaves it NaN).
    """

    pair: int
    label: str
    spec: Any
    params: Any
    event: ThresholdEvent
    train_acc: float = float("nan")


def _by_projection(cd) -> float:
    """Sort key: the candidate with the highest projected bound first (a non-finite projection last)."""
    return -cd.event.projected if np.isfinite(cd.event.projected) else np.inf


def audit_learned(sample_fn: Callable, neighbours, *, claimed_eps: float, claimed_delta: float = 0.0,
                  key: jax.Array, classifiers: Sequence = (Logistic(),), n_train: int = 100_000,
                  n_select: int = 100_000, n_eval: int = 400_000, n_best: int = 1, alpha: float = DEFAULT_ALPHA,
                  batch: int = 1 << 16, name: str = "mechanism", delta_float: Optional[float] = None,
                  c_grid: Sequence[float] = C_GRID, n_refine: int = 0, n_rerank: int = 0,
                  device_batch: Optional[int] = None) -> AuditReport:
    """Audit ``sample_fn`` with learned events (DP-Sniper) over a family of neighbour pairs.

    Args:
        sample_fn: jittable ``(key, x) -> output``.
        neighbours: ``[(x0, x1), ...]`` or ``{label: (x0, x1)}`` (e.g. :func:`jaxdp.privacy.audit.pairs.pattern_pairs`).
        claimed_eps, claimed_delta: the claim audited; ``delta_float`` is added to δ.
        key: typed PRNG key.
        classifiers: :class:`Logistic`, :class:`MLP` and/or :class:`Histogram` instances; each is trained on every pair.
        n_train, n_select, n_eval: runs per input for training, for choosing the event, and for the bound (fresh). Every
            input of every pair gets ``n_train + n_select`` runs; only the ``m`` evaluated candidates get ``n_eval``
            more per input.
        n_best: candidates (pair × classifier, ranked by their projected bound on the selection sample) evaluated on
            fresh runs; the family-wise error α is split over them (``α/(2m)`` per bound).
        alpha: family-wise error: an (ε, δ)-DP mechanism is flagged with probability at most α.
        batch: runs per compiled, vectorised chunk (capped by the smallest sample).
        name: the name shown in the report.
        delta_float: float δ floor added to ``claimed_delta`` (default ``2^-23``).
        c_grid: DP-Sniper's targets ``c = P̂[S(M(x_b))]`` (:func:`best_threshold_event`).
        n_refine: if > 0, the event of each of those candidates is chosen again on a larger selection sample of
            ``n_refine`` new runs per input (rare events need more runs to be placed well than to rank pairs;
            DP-Sniper's DD-Search likewise re-estimates its best witness), still before the fresh runs.
        n_rerank: with ``n_refine``: refine the best ``max(n_rerank, n_best)`` candidates of the selection sample and
            keep the ``n_best`` whose refined events project the highest bounds (a selection sample's ranking of
            close candidates is noisy, and its winner is biased upward); the fresh runs stay unseen.
        device_batch: if given, the fresh runs are drawn, scored and counted on the device in chunks of this many
            runs (:func:`count_event_on_device`), so ``n_eval`` is limited by time rather than host memory (the
            default keeps them on the host, scored exactly as in selection).

    Returns:
        :class:`jaxdp.privacy.audit.AuditReport`; ``evidence`` names the pair, classifier and event, with the counts.

    Raises:
        TypeError: ``sample_fn`` is not callable, ``key`` is not a typed PRNG key, or a classifier of another type.
        ValueError: an invalid claim, sample size or ``alpha``, or a pair of identical or mismatched inputs.
    """
    _check_claim(claimed_eps, claimed_delta, alpha, sample_fn)
    n_train = check_positive_int("n_train", n_train, minimum=2)
    n_select = check_positive_int("n_select", n_select, minimum=2)
    n_eval = check_positive_int("n_eval", n_eval, minimum=2)
    n_best = check_positive_int("n_best", n_best)
    n_refine = check_positive_int("n_refine", n_refine, minimum=0)
    n_rerank = check_positive_int("n_rerank", n_rerank, minimum=0)
    if device_batch is not None:
        device_batch = check_positive_int("device_batch", device_batch)
    _check_key(key)
    classifiers = list(classifiers)
    if not classifiers or not all(isinstance(c, _SPECS) for c in classifiers):
        raise TypeError(f"classifiers must be Logistic, MLP or Histogram specs, got {classifiers!r}")
    if delta_float is None:
        delta_float = FLOAT32_DELTA_FLOOR
    delta = float(claimed_delta) + float(delta_float)
    t0 = time.perf_counter()
    pairs = _normalise_neighbours(neighbours)
    inputs, pair_idx = _distinct_inputs(pairs)
    fn = _Feats(tuple(c.features for c in classifiers))
    # one batch shape for every draw (one compilation of the runner), sized to the smallest sample
    batch = min(int(batch), 1 << max(10, (min(n_train, n_select, n_eval) - 1).bit_length()))
    k_train, k_sel, k_eval, k_fit, k_u = jax.random.split(key, 5)
    n_cand = len(pairs) * len(classifiers)
    m = min(n_best, n_cand)
    level = bonferroni_level(alpha, m)

    # each input's runs are drawn when a pair first needs them and dropped after its last pair (the same keys, so
    # the same runs as drawing all up front, with the memory of two or three inputs instead of all of them)
    last = {i: p for p, ij in enumerate(pair_idx) for i in ij}
    train: dict = {}
    sel: dict = {}
    cands = []
    for p, (i0, i1) in enumerate(pair_idx):
        for i in (i0, i1):
            if i not in train:
                train[i] = draw_features(sample_fn, fn, jax.random.fold_in(k_train, i), inputs[i], n_train, batch)
                sel[i] = draw_features(sample_fn, fn, jax.random.fold_in(k_sel, i), inputs[i], n_select, batch)
        for c, spec in enumerate(classifiers):
            params = fit_classifier(spec, train[i0][c], train[i1][c], jax.random.fold_in(k_fit, p * 1000 + c))
            s0 = classifier_scores(spec, params, sel[i0][c])
            s1 = classifier_scores(spec, params, sel[i1][c])
            ev = best_threshold_event(s0, s1, n_eval=n_eval, delta=delta, level=level, c_grid=c_grid)
            cands.append(LearnedCandidate(pair=p, label=pairs[p][0], spec=spec, params=params, event=ev))
        for i in {i0, i1}:
            if last[i] == p:
                del train[i], sel[i]
    cands.sort(key=_by_projection)
    chosen = cands[:max(m, min(n_rerank, n_cand))] if n_refine else cands[:m]
    if n_refine:
        k_ref = jax.random.fold_in(k_sel, 1 << 20)
        batch_r = min(int(batch), n_refine)
        for j, cd in enumerate(chosen):
            c = classifiers.index(cd.spec)
            s = [classifier_scores(cd.spec, cd.params, draw_features(
                sample_fn, fn, jax.random.fold_in(jax.random.fold_in(k_ref, j), side), inputs[i], n_refine,
                batch_r)[c]) for side, i in enumerate(pair_idx[cd.pair])]
            cd.event = best_threshold_event(s[0], s[1], n_eval=n_eval, delta=delta, level=level, c_grid=c_grid)
        if len(chosen) > m:
            chosen = sorted(chosen, key=_by_projection)[:m]
    best = None
    for j, cd in enumerate(chosen):
        i0, i1 = pair_idx[cd.pair]
        c = classifiers.index(cd.spec)
        counts: list = []
        for side, i in enumerate((i0, i1)):
            kk = jax.random.fold_in(jax.random.fold_in(k_eval, j), side)
            if device_batch:
                counts.append(count_event_on_device(sample_fn, fn, c, cd.spec, cd.params, cd.event, kk, inputs[i],
                                                    n_eval, device_batch))
                continue
            f = draw_features(sample_fn, fn, kk, inputs[i], n_eval, batch)[c]      # the compiled runner of training
            scores = classifier_scores(cd.spec, cd.params, f)
            u = np.asarray(jax.random.uniform(jax.random.fold_in(jax.random.fold_in(k_u, j), side), (n_eval,)))
            counts.append(_count_event(cd.event, scores, u))
        ev = cd.event
        d = ev.num
        ka, kb = (counts[0], counts[1]) if d == 0 else (counts[1], counts[0])
        evd, (lo, hi) = _evidence(f"{cd.spec.name}: " + ev.describe(), d, ka, n_eval, kb, n_eval, delta, level,
                                  claimed_eps)
        evd.update(classifier=cd.spec.name, threshold=ev.t, tie_probability=ev.q, projected=ev.projected,
                   n_train=n_train, n_select=n_select, n_refine=n_refine)
        if best is None or lo > best[0]:
            best = (lo, hi, evd, cd.pair)
    assert best is not None
    lo, hi, evd, p = best
    eps_lower = max(lo, 0.0)
    names = ", ".join(sorted({c.name for c in classifiers}))
    refine = (f", refined on {n_refine:,}" + (f" (best {min(n_rerank, n_cand)} re-ranked)" if n_rerank > m else "")
              if n_refine else "")
    family = (f"learned events ({names}; randomized thresholds) on {len(pairs)} pair(s): best {m} of {n_cand}"
              f" candidates evaluated on fresh runs (trained on {n_train:,}, selected on {n_select:,}{refine}"
              f" per input)")
    return AuditReport(name=name, eps_lower=eps_lower, ci=(eps_lower, max(hi, 0.0)), claimed_eps=float(claimed_eps),
                       claimed_delta=float(claimed_delta), violation=eps_lower > claimed_eps, evidence=evd, n=n_eval,
                       confidence=1.0 - alpha, n_events=m, family=family, seconds=time.perf_counter() - t0,
                       delta_float=float(delta_float), alpha_per_bound=level,
                       resolution=float(clopper_pearson_upper(0, n_eval, level)),
                       pair=pairs[p][0] if len(pairs) > 1 else "", n_pairs=len(pairs), n_candidates=n_cand)
