"""Registered audits that use the learned-event and trade-off auditors (``jaxdp audit NAME``).

* ``gaussian-tradeoff``: the catalogue's Gaussian mechanism (σ from the zCDP calibration at
  (ε, δ) = (1, 1e-5), sensitivity 1) on the pair 0/1, audited through simultaneous trade-off-curve
  bounds (:func:`jaxdp.audit.tradeoff.audit_tradeoff`) with the output itself as the score and the
  μ-GDP fit: the mechanism adds Gaussian noise, so its trade-off curve is ``G_{1/σ}`` and the
  GDP-derived ε(δ) is a valid lower bound on its ε(δ). Its exact ε at δ = 1e-5 is 0.742 (the
  calibration is loose by 1.35x), so no valid auditor can detect an over-claim below 1.35x.
  ``gaussian-quarter-sigma-tradeoff``: the broken twin (σ/4).
* ``sparse-vector-experts-learned``: REAL Alg. 1 (d = 2, T = 4, K = 1, claimed ε = 2, the setting
  of ``sparse-vector-experts``) with learned events over a larger family of neighbouring loss
  sequences (:func:`jaxdp.audit.pairs.loss_flip_pairs` and the family of ``sparse-vector-experts``):
  a histogram classifier on the whole action sequence and a logistic regression on trajectory
  features, chosen per pair on selection runs, the best candidate bounded on fresh runs.
  ``sparse-vector-experts-mislabelled-learned``: the broken twin (sparse-vector noise for
  ``eps_svt = 1e4``).

Every entry takes ``(quick, seed, claim_factor)`` like the catalogue's and passes the mechanism's
float δ floor.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ..accounting.floating import delta_float
from ..registry import register_audit
from . import catalogue as C
from .auditor import AuditReport
from .learned import Histogram, Logistic, audit_learned, trajectory_features
from .pairs import loss_flip_pairs
from .tradeoff import audit_tradeoff

__all__ = ["LEARNED_CATALOGUE", "sv_experts_family"]

LEARNED_CATALOGUE: dict[str, dict] = {}


def _register(name: str, description: str, claimed_eps: float, broken: bool):
    def deco(fn):
        @functools.wraps(fn)
        def run(*, quick: bool = False, seed: int = 0, claim_factor: float = 1.0) -> AuditReport:
            return fn(quick=quick, key=jax.random.key(seed), name=name, eps=claimed_eps / claim_factor)

        LEARNED_CATALOGUE[name] = dict(fn=run, claimed_eps=claimed_eps, broken=broken, description=description)
        return register_audit(name, description, claimed_eps=claimed_eps, broken=broken)(run)

    return deco


# ----------------------------------------------------------------------------- Gaussian, trade-off curve
def _identity(out):
    return out


#: runs per input (selection, fresh evaluation) at quick and full size
N_GAUSS = {True: (200_000, 2_000_000), False: (1_000_000, 20_000_000)}


def _gauss(mech, *, quick, key, name, eps):
    n_sel, n_eval = N_GAUSS[bool(quick)]
    return audit_tradeoff(mech, 0.0, 1.0, claimed_eps=eps, claimed_delta=C.DELTA_G, key=key, statistic=_identity,
                          n_select=n_sel, n_eval=n_eval, gdp=True, name=name,
                          delta_float=delta_float("gaussian", eps=eps))


@_register("gaussian-tradeoff", "Gaussian mechanism at (1, 1e-5), trade-off-curve bounds with the mu-GDP fit (correct)",
           C.EPS, False)
def _a_gauss(*, quick, key, name, eps):
    return _gauss(C._gaussian, quick=quick, key=key, name=name, eps=eps)


@_register("gaussian-quarter-sigma-tradeoff", "Gaussian with sigma/4 at (1, 1e-5), trade-off-curve bounds (broken)",
           C.EPS, True)
def _a_gauss_bad(*, quick, key, name, eps):
    return _gauss(C._gaussian_small, quick=quick, key=key, name=name, eps=eps)


# ----------------------------------------------------------------------------- sparse-vector experts, learned
_T, _D = 4, 2
_BITS = np.arange(_T + 1, dtype=np.int32)


def _sv_cell(c):
    return jnp.asarray(c).astype(jnp.int32)


def _sv_traj(c):
    """The action sequence x_1..x_5 decoded from the mechanism's cell, as trajectory features."""
    acts = (jnp.asarray(c).astype(jnp.int32) >> _BITS) & 1
    return trajectory_features(_D)(acts)


@functools.lru_cache(maxsize=None)
def sv_experts_family() -> dict:
    """``sparse-vector-experts``' nine pairs and :func:`loss_flip_pairs` on ``T = 4``, ``d = 2`` (one round's
    loss flipped on zero losses, or after expert 1 lost every earlier round)."""
    from ..realizable.audits import neighbour_family

    fam = dict(neighbour_family())
    seen = {(np.asarray(a).tobytes(), np.asarray(b).tobytes()) for a, b in fam.values()}
    for k, (a, b) in loss_flip_pairs(_T, _D).items():
        sig = (np.asarray(a).tobytes(), np.asarray(b).tobytes())
        if sig not in seen and sig[::-1] not in seen:
            seen.add(sig)
            fam[k] = (jnp.asarray(a), jnp.asarray(b))
    return fam


#: runs per input (train, select, fresh evaluation) at quick and full size
N_SV = {True: (50_000, 100_000, 2_000_000), False: (200_000, 400_000, 10_000_000)}
_SV_CLASSIFIERS = (Histogram(2 ** (_T + 1), _sv_cell), Logistic(_sv_traj))


def _sv(eps_svt, *, quick, key, name, eps):
    from ..realizable.audits import sv_experts_mechanism

    mech = sv_experts_mechanism(eps_svt, 1.0, 1, 0.5)
    n_train, n_sel, n_eval = N_SV[bool(quick)]
    dfl = delta_float("categorical", eps=eps, d=_D, draws=_T + 1) + delta_float("laplace", eps=eps, d=2 * (_T + 1))
    return audit_learned(mech, sv_experts_family(), claimed_eps=eps, key=key, classifiers=_SV_CLASSIFIERS,
                         n_train=n_train, n_select=n_sel, n_eval=n_eval, n_best=1, name=name, delta_float=dfl)


@_register("sparse-vector-experts-learned",
           "REAL Alg. 1 (d=2, T=4, K=1), learned events over 30 neighbouring loss sequences; claimed eps = 2",
           2.0, False)
def _a_sv(*, quick, key, name, eps):
    return _sv(1.0, quick=quick, key=key, name=name, eps=eps)


@_register("sparse-vector-experts-mislabelled-learned",
           "BROKEN: REAL Alg. 1 with sparse-vector noise for eps_svt=1e4 claiming eps = 2, learned events", 2.0, True)
def _a_sv_bad(*, quick, key, name, eps):
    return _sv(1e4, quick=quick, key=key, name=name, eps=eps)
