"""Empirical privacy audits of the label-DP mechanisms (docs/guide/auditing.md), registered as ``jaxdp audit NAME``.

* ``label-rr-vector``: the per-coordinate randomized response of LABEL eq. (11) on neighbouring
  labels ``y = 0`` vs ``y = 1`` (K = 3), histogram over the ``2^K`` output vectors; claim ε.
* ``label-exp-bins``: the central exponential mechanism per bin (eq. (17), via the library's
  ``central_exp_bins`` learner), searched over three pairs of label vectors of one bin differing
  in one label (``EXP_BINS_PAIRS``); claim ε.
* ``*-broken`` twins (must be flagged): vector RR with ``e^{ε}`` instead of ``e^{ε/2}`` per
  coordinate (true ε is 2ε), and the exponential mechanism with logits ``ε n_lj`` (no ``/2``).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ..privacy.accounting.floating import delta_float
from ..privacy.audit import HistogramEvents, audit, audit_mechanism
from ..registry import register_audit
from ..privacy.mechanisms.randomized_response import rr_vector
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


#: label vectors of one bin differing in one label; the first changes a minority label into the
#: majority one, the second adds a minority label to a unanimous bin (the largest loss of the three)
EXP_BINS_PAIRS = {
    "Y0 vs Y1": (Y0, Y1),
    "00000 vs 00001": (jnp.zeros(5, jnp.int32), jnp.array([0, 0, 0, 0, 1], jnp.int32)),
    "00002 vs 00001": (jnp.array([0, 0, 0, 0, 2], jnp.int32), jnp.array([0, 0, 0, 0, 1], jnp.int32)),
}


def audit_rr_vector(*, quick: bool = False, seed: int = 0, broken: bool = False, claim_factor: float = 1.0):
    """Audit eq. (11) on neighbouring labels 0 / 1 (every pair of labels is equivalent by symmetry).

    The output vector (``K = 3`` coins) is coded as an integer and histogrammed over its ``2^K`` values;
    the float floor is :func:`jaxdp.privacy.accounting.floating.delta_float` ``("rr_vector", d=K)``.

    Args:
        quick: 200,000 samples per neighbour instead of 1,000,000.
        seed: the seed of the audit's PRNG key.
        broken: audit the deliberately broken twin (``e^ε`` per coordinate instead of ``e^{ε/2}``: true ε is 2ε), which the audit must flag.
        claim_factor: divide the claimed ε (``EPS = 1``) by this factor; ``> 1`` claims less than the truth, so a
            powerful audit refutes the claim.

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`: the lower bound ``eps_lower`` on ε and ``violation`` (above the claim).
    """
    mech = _rr_vector_broken_code if broken else _rr_vector_code
    eps = EPS / claim_factor
    return audit(mech, jnp.int32(0), jnp.int32(1), claimed_eps=eps, events=HistogramEvents(2 ** K), n=_n(quick),
                 key=jax.random.key(seed), name="label-rr-vector" + ("-broken" if broken else ""),
                 delta_float=delta_float("rr_vector", eps=eps, d=K))


def audit_exp_bins(*, quick: bool = False, seed: int = 0, broken: bool = False, claim_factor: float = 1.0):
    """Audit the per-bin exponential mechanism (eq. (17)) over the label-vector pairs of ``EXP_BINS_PAIRS``.

    The released class of the one bin (``K = 3``, five labels) is histogrammed; the float floor is the
    Gumbel-max one, :func:`jaxdp.privacy.accounting.floating.delta_float` ``("gumbel", d=K)``.

    Args:
        quick, seed, claim_factor: as in :func:`audit_rr_vector`.
        broken: audit the deliberately broken twin (logits ``ε n_lj`` without the ``/2``: true ε is 2ε), which the audit must flag.

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`: the lower bound ``eps_lower`` on ε and ``violation`` (above the claim).
    """
    mech = _exp_bins_broken if broken else _exp_bins
    eps = EPS / claim_factor
    return audit_mechanism(mech, EXP_BINS_PAIRS, HistogramEvents(K), claimed_eps=eps, n=_n(quick),
                           key=jax.random.key(seed), name="label-exp-bins" + ("-broken" if broken else ""),
                           search=0.0, delta_float=delta_float("gumbel", eps=eps, d=K))


def _entry(fn, broken):
    def run(*, quick: bool = False, seed: int = 0, claim_factor: float = 1.0):
        return fn(quick=quick, seed=seed, broken=broken, claim_factor=claim_factor)
    return run


for _name, _fn, _broken, _what in (
        ("label-rr-vector", audit_rr_vector, False, "LABEL eq. (11) vector randomized response, K=3 (correct)"),
        ("label-rr-vector-broken", audit_rr_vector, True, "vector RR with e^eps per coordinate (broken: true eps = 2 eps)"),
        ("label-exp-bins", audit_exp_bins, False, "LABEL eq. (17) exponential mechanism per bin (correct)"),
        ("label-exp-bins-broken", audit_exp_bins, True, "per-bin exponential mechanism without the /2 (broken: 2 eps)")):
    register_audit(_name, _what, claimed_eps=EPS, broken=_broken)(_entry(_fn, _broken))
