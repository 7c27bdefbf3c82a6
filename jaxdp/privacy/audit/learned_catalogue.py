"""Registered audits that use the learned-event and trade-off auditors (``jaxdp audit NAME``).

* ``gaussian-tradeoff``: the catalogue's Gaussian mechanism (σ from the zCDP calibration at
  (ε, δ) = (1, 1e-5), sensitivity 1) on the pair 0/1, audited through simultaneous trade-off-curve
  bounds (:func:`jaxdp.privacy.audit.tradeoff.audit_tradeoff`) with the output itself as the score and the
  μ-GDP fit: the mechanism adds Gaussian noise, so its trade-off curve is ``G_{1/σ}`` and the
  GDP-derived ε(δ) is a valid lower bound on its ε(δ). Its exact ε at δ = 1e-5 is 0.742 (the
  calibration is loose by 1.35x), so no valid auditor can detect an over-claim below 1.35x.
  ``gaussian-quarter-sigma-tradeoff``: the broken twin (σ/4).
* ``sparse-vector-experts-learned`` (registered by :mod:`jaxdp.experts.audits` with this module's ``_register``):
  REAL Alg. 1 (d = 2, T = 4, K = 1, claimed ε = 2, the setting
  of ``sparse-vector-experts``) with learned events over a larger family of neighbouring loss
  sequences (:func:`jaxdp.privacy.audit.pairs.loss_flip_pairs` and the family of ``sparse-vector-experts``):
  a histogram classifier on the whole action sequence and a logistic regression on trajectory
  features, chosen per pair on selection runs, the best candidate bounded on fresh runs.
  ``sparse-vector-experts-mislabelled-learned``: the broken twin (sparse-vector noise for
  ``eps_svt = 1e4``).

Every entry takes ``(quick, seed, claim_factor)`` like the catalogue's and passes the mechanism's
float δ floor.
"""
from __future__ import annotations



from ..accounting.floating import delta_float
from . import catalogue as C
from .tradeoff import audit_tradeoff

__all__ = ["LEARNED_CATALOGUE"]

LEARNED_CATALOGUE: dict[str, dict] = {}


_register = C._registrar(LEARNED_CATALOGUE)


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
