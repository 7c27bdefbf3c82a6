"""The auditors' shared machinery (re-exported by :mod:`jaxdp.privacy.audit.auditor`): compiled runs of a mechanism on one
input, event counts on the runs (thresholds, histogram cells), the best test and its evidence, and the checks of the
key and of the neighbour pairs.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from typing import Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ...core.validation import check_delta, check_epsilon, check_probability, is_concrete
from ._auditor_bounds import clopper_pearson_lower, clopper_pearson_upper, eps_lower_bound


@dataclasses.dataclass(frozen=True)
class _Features:
    """Hashable tuple of feature functions ``out -> array`` (one compiled runner per mechanism × features)."""

    fns: tuple

    def __call__(self, out):
        return tuple(f(out) for f in self.fns)


@functools.lru_cache(maxsize=128)
def _runner(mechanism, fn):
    """Compiled ``(keys, x) -> fn(mechanism(key, x))`` over a batch of keys (cached per function pair)."""
    return jax.jit(jax.vmap(lambda k, x: fn(mechanism(k, x)), in_axes=(0, None)))


def _draw(mechanism, fn, key, x, n, batch):
    """``n`` runs of ``fn(mechanism(key_i, x))``; a tuple-valued ``fn`` gives a tuple of arrays."""
    run = _runner(mechanism, fn)
    m = min(n, batch)
    chunks = -(-n // m)
    keys = jax.random.split(key, chunks)
    out = [jax.tree.map(np.asarray, run(jax.random.split(kc, m), x)) for kc in keys]
    if isinstance(out[0], tuple):
        return tuple(np.concatenate([o[i] for o in out])[:n] for i in range(len(out[0])))
    return np.concatenate(out)[:n]


def _threshold_counts(s0, s1, thresholds):
    """Counts of ``s >= c`` for each threshold (ties included)."""
    s0, s1 = np.sort(s0), np.sort(s1)
    c = np.asarray(thresholds, float)
    ge0 = s0.size - np.searchsorted(s0, c, side="left")
    ge1 = s1.size - np.searchsorted(s1, c, side="left")
    return ge0, ge1


def _threshold_events(s0, s1, thresholds):
    """Event table for ``{s >= c}`` and ``{s < c}``: (names, k0, k1)."""
    ge0, ge1 = _threshold_counts(s0, s1, thresholds)
    names = [f"s >= {c:.6g}" for c in thresholds] + [f"s < {c:.6g}" for c in thresholds]
    return names, np.concatenate([ge0, s0.size - ge0]), np.concatenate([ge1, s1.size - ge1])


def _cell_counts(c0, c1, n_cells):
    c0, c1 = np.asarray(c0).astype(np.int64), np.asarray(c1).astype(np.int64)
    for c in (c0, c1):
        if c.size and (c.min() < 0 or c.max() >= n_cells):
            raise ValueError(f"cell(out) must lie in [0, {n_cells}), got values in [{c.min()}, {c.max()}]")
    return np.bincount(c0, minlength=n_cells), np.bincount(c1, minlength=n_cells)


def _logit_quantiles(pooled, m):
    levels = 1.0 / (1.0 + np.exp(-np.linspace(-8.0, 8.0, m)))
    return np.unique(np.quantile(pooled, levels))


def _best(names, k0, k1, n0, n1, delta, alpha):
    """Best (event, direction) by the CP ε lower bound (each bound at ``alpha``); returns (eps_lo, index, direction)."""
    e01 = eps_lower_bound(k0, n0, k1, n1, delta, alpha)
    e10 = eps_lower_bound(k1, n1, k0, n0, delta, alpha)
    i01, i10 = int(np.argmax(e01)), int(np.argmax(e10))
    if e01[i01] >= e10[i10]:
        return float(e01[i01]), i01, 0
    return float(e10[i10]), i10, 1


def _evidence(name, direction, ka, na, kb, nb, delta, alpha, claimed_eps, labels=("x0", "x1")):
    """Evidence dict for event ``name`` with ``a`` the numerator input; every bound at level ``alpha``."""
    pa_lo, pa_hi = float(clopper_pearson_lower(ka, na, alpha)), float(clopper_pearson_upper(ka, na, alpha))
    pb_lo, pb_hi = float(clopper_pearson_lower(kb, nb, alpha)), float(clopper_pearson_upper(kb, nb, alpha))
    eps_lo = math.log((pa_lo - delta) / pb_hi) if pa_lo > delta else -math.inf
    eps_hi = math.log((pa_hi - delta) / pb_lo) if pb_lo > 0 and pa_hi > delta else math.inf
    a, b = labels if direction == 0 else labels[::-1]
    return dict(event=name, direction=f"{a} vs {b}", num=a, den=b, k0=int(ka), n0=int(na), k1=int(kb), n1=int(nb),
                p0_lo=pa_lo, p0_hi=pa_hi, p1_lo=pb_lo, p1_hi=pb_hi,
                delta_lower=max(pa_lo - math.exp(min(claimed_eps, 700.0)) * pb_hi, 0.0)), (eps_lo, eps_hi)


def _check_claim(claimed_eps, claimed_delta, alpha, sample_fn=None) -> None:
    """Refuse a bad claim (finite ε > 0, δ in [0, 1)), family-wise ``alpha`` outside (0, 1) or a non-callable mechanism."""
    if sample_fn is not None and not callable(sample_fn):
        raise TypeError(f"sample_fn must be a callable (key, x) -> output, got {type(sample_fn).__name__}")
    check_epsilon(claimed_eps, "claimed_eps", allow_inf=False)
    check_delta(claimed_delta, "claimed_delta")
    check_probability("alpha", alpha, open_left=True, open_right=True)


def _check_key(key):
    if not (isinstance(key, jax.Array) and jnp.issubdtype(key.dtype, jax.dtypes.prng_key) and key.shape == ()):
        raise TypeError(f"key must be a single typed PRNG key (jax.random.key(seed)), got {key!r}")


def _check_pair(x0, x1, ref=None, label="x0/x1"):
    l0, t0 = jax.tree.flatten(x0)
    l1, t1 = jax.tree.flatten(x1)
    if t0 != t1:
        raise ValueError(f"x0 and x1 must have the same structure, got {t0} and {t1}")
    if ref is not None and ref[0] != t0:
        raise ValueError(f"every neighbour pair must have the structure of the first, got {t0} for {label!r}")
    for j, (a, b) in enumerate(zip(l0, l1)):
        if np.shape(a) != np.shape(b):
            raise ValueError(f"x0 and x1 must have the same shapes, got {np.shape(a)} and {np.shape(b)}")
        if ref is not None and np.shape(a) != ref[1][j]:
            raise ValueError(f"every neighbour pair must have the shapes of the first, got {np.shape(a)} for {label!r}")
        for v, nm in ((a, "x0"), (b, "x1")):
            if is_concrete(v):
                arr = np.asarray(v)
                if np.issubdtype(arr.dtype, np.floating) and not np.all(np.isfinite(arr)):
                    raise ValueError(f"{nm} must be finite, got {arr}")
    return t0, [np.shape(a) for a in l0]


def _normalise_neighbours(neighbours) -> list:
    """``[(x0, x1), ...]`` or ``{label: (x0, x1)}`` -> ``[(label, x0, x1), ...]``, validated."""
    if isinstance(neighbours, Mapping):
        items = list(neighbours.items())
    elif isinstance(neighbours, Sequence) and not isinstance(neighbours, (str, bytes)):
        items = [(f"pair {i}", p) for i, p in enumerate(neighbours)]
    else:
        raise TypeError(f"neighbours must be a sequence of (x0, x1) pairs or a dict label -> (x0, x1), got "
                        f"{type(neighbours).__name__}")
    if not items:
        raise ValueError("neighbours must contain at least one (x0, x1) pair, got none")
    out, ref = [], None
    for label, p in items:
        if not (isinstance(p, (tuple, list)) and len(p) == 2):
            raise ValueError(f"each neighbour pair must be a tuple (x0, x1), got {p!r} for {label!r}")
        r = _check_pair(p[0], p[1], ref, str(label))
        ref = ref or r
        out.append((str(label), p[0], p[1]))
    return out


def _input_id(x) -> bytes:
    leaves = jax.tree.leaves(x)
    return b"|".join(np.asarray(v).tobytes() + str(np.asarray(v).dtype).encode() for v in leaves)


def _distinct_inputs(pairs) -> tuple[list, list]:
    """The distinct inputs of ``pairs`` (``(label, x0, x1)`` rows; pairs may share one) and each pair's indices.

    Raises ``ValueError`` when a pair's two inputs are identical.
    """
    ids: dict = {}
    inputs: list = []
    pair_idx: list = []
    for _, x0, x1 in pairs:
        ij = []
        for x in (x0, x1):
            i = ids.setdefault(_input_id(x), len(inputs))
            if i == len(inputs):
                inputs.append(x)
            ij.append(i)
        if ij[0] == ij[1]:
            raise ValueError("a neighbour pair has two identical inputs; nothing to audit")
        pair_idx.append(tuple(ij))
    return inputs, pair_idx
