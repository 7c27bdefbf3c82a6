"""Empirical privacy audits of the label-DP mechanisms (spec §9.5), registered as ``jaxdp audit NAME``.

* ``label-rr-vector``: the per-coordinate randomized response of LABEL eq. (11) on neighbouring
  labels ``y = 0`` vs ``y = 1`` (K = 3), histogram over the ``2^K`` output vectors; claim ε.
* ``label-exp-bins``: the central exponential mechanism per bin (eq. (17), via the library's
  ``central_exp_bins`` learner) on two label vectors of one bin differing in one label; claim ε.
* ``*-broken`` twins (must be flagged): vector RR with ``e^{ε}`` instead of ``e^{ε/2}`` per
  coordinate (true ε is 2ε), and the exponential mechanism with logits ``ε n_lj`` (no ``/2``).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ..audit import HistogramEvents, audit
from ..registry import register_audit
from ..mechanisms.randomized_response import rr_vector
from .estimators import LabelParams, _fit_cls

__all__ = ["audit_rr_vector", "audit_exp_bins"]

EPS = 1.0
K = 3
Y0 = jnp.array([0, 0, 0, 1, 2], jnp.int32)      # labels of one bin
Y1 = jnp.array([0, 0, 0, 0, 2], jnp.int32)      # one label changed
X_BIN = jnp.full((5, 1), 0.25)


def _code(z):
    return jnp.sum(z.astype(jnp.int32) << jnp.arange(z.shape[-1], dtype=jnp.int32), axis=-1)


def _rr_vector_code(key, y):
    return _code(rr_vector(key, y, K, EPS))


def _rr_vector_broken_code(key, y):
    p = jnp.where(jax.nn.one_hot(y, K, dtype=bool), jax.nn.sigmoid(EPS), jax.nn.sigmoid(-EPS))
    return _code(jax.random.uniform(key, (K,)) < p)


def _exp_bins(key, y):
    prm = LabelParams(jnp.asarray(EPS), jnp.asarray(1, jnp.int32), jnp.asarray(1, jnp.int32), jnp.asarray(jnp.inf))
    return _fit_cls("central_exp_bins", K, 1, key, X_BIN, y, jnp.ones(5, bool), prm).table[0]


def _exp_bins_broken(key, y):
    counts = jnp.sum(jax.nn.one_hot(y, K), axis=0)
    return jax.random.categorical(key, EPS * counts).astype(jnp.int32)


def _n(quick):
    return 200_000 if quick else 1_000_000


def audit_rr_vector(*, quick: bool = False, seed: int = 0, broken: bool = False):
    """Audit eq. (11) on neighbouring labels 0 / 1."""
    mech = _rr_vector_broken_code if broken else _rr_vector_code
    return audit(mech, jnp.int32(0), jnp.int32(1), claimed_eps=EPS, events=HistogramEvents(2 ** K), n=_n(quick),
                 key=jax.random.key(seed), name="label-rr-vector" + ("-broken" if broken else ""))


def audit_exp_bins(*, quick: bool = False, seed: int = 0, broken: bool = False):
    """Audit the per-bin exponential mechanism (eq. (17)) on label vectors differing in one label."""
    mech = _exp_bins_broken if broken else _exp_bins
    return audit(mech, Y0, Y1, claimed_eps=EPS, events=HistogramEvents(K), n=_n(quick),
                 key=jax.random.key(seed), name="label-exp-bins" + ("-broken" if broken else ""))


register_audit("label-rr-vector", "LABEL eq. (11) vector randomized response, K=3 (correct)", claimed_eps=EPS)(
    lambda *, quick=False, seed=0: audit_rr_vector(quick=quick, seed=seed))
register_audit("label-rr-vector-broken", "vector RR with e^eps per coordinate (broken: true eps = 2 eps)",
               claimed_eps=EPS, broken=True)(lambda *, quick=False, seed=0: audit_rr_vector(quick=quick, seed=seed, broken=True))
register_audit("label-exp-bins", "LABEL eq. (17) exponential mechanism per bin (correct)", claimed_eps=EPS)(
    lambda *, quick=False, seed=0: audit_exp_bins(quick=quick, seed=seed))
register_audit("label-exp-bins-broken", "per-bin exponential mechanism without the /2 (broken: 2 eps)",
               claimed_eps=EPS, broken=True)(lambda *, quick=False, seed=0: audit_exp_bins(quick=quick, seed=seed, broken=True))
