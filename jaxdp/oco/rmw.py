"""Regularized multiplicative weights (RMW) as an L2P measure (Team SAMPLERS).

# Team OCO-CORE: please re-export from jaxdp/oco/__init__.py (already done by _reexport via __all__):
#   RMWParams, rmw_measure, rmw_params, rmw_eta_div, rmw_regret_bound

Source: Lazy private online learning (docs/algorithms/lazy.md), eq. (3), Lemma 3.11
(Agarwal–Kale–Singh–Thakurta 2023; Gopi–Lee–Liu 2022 Lemma 3.5); Lazy private online learning, Thm 3.12; docs/algorithms/primitives.md#rmw; docs/algorithms/lazy.md#l2p-rmw.

    μ_t(x) ∝ exp(-β (Σ_{i<t} ℓ_i(x) + λ ||x||²)),   x ∈ X (convex).

* ``μ_{t+1}(x)/μ_t(x) = e^{-β ℓ_t(x)}`` (Assumption 3.1(2)): ``log_ratio = -β ℓ_t(x)``.
* Lemma 3.11: for convex ``L``-Lipschitz losses
  ``D_∞^{δ0}(μ_{t+1}, μ_t) <= η_div = 2βL²/λ + sqrt(8βL² log(2/δ0)/λ)`` (``rmw_eta_div``).
* Regret of sampling ``x_t ~ μ_t``: ``O(λD² + L²T/λ + d log T / β)`` (``rmw_regret_bound``).

Loss families with additive sufficient statistics (docs/algorithms/primitives.md#rmw):

* ``"linear"``: ``ℓ(x) = <g, x>``, loss = ``g`` (``jaxdp.oco.linear_problem``),
  stats ``G = Σ g``. On the centred ball of radius ``R`` the measure is
  ``N(-G/(2λ), I/(2βλ))`` restricted to the ball: exact sampler
  ``sample_trunc_gauss_ball`` (``sampler="exact"``), or MALA.
* ``"squared"``: ``ℓ(x) = (<a, x> - b)²/2``, loss = ``ABLoss(a, b)``
  (``jaxdp.oco.squared_problem``), stats ``(Σ aaᵀ, Σ ab, Σ b²)``. Target
  ``exp(-β(xᵀAx/2 - cᵀx + λ||x||²))`` (anisotropic truncated Gaussian): MALA
  only.

MALA (``sampler="mala"``): ``mala_steps`` steps (static) from the mode of the
unconstrained Gaussian projected on the domain, step size from
``jaxdp.samplers.mala_schedule``'s rule with ``M = β(λ_max(A) + 2λ)`` (traced).
MALA output is approximate: privacy statements that assume exact sampling are
then not certified (docs/algorithms/primitives.md#samplers); record ``sampler="mala"`` with results.
"""
from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ..core.validation import check_choice, check_in_range, check_positive, check_positive_int
from ..lazy.l2p import LazyMeasure
from ..samplers import as_domain, ball, mala, sample_trunc_gauss_ball
from .problems import SquaredStats

__all__ = ["RMWParams", "rmw_measure", "rmw_params", "rmw_eta_div", "rmw_regret_bound", "RMW_LOSSES",
           "RMW_SAMPLERS"]

RMW_LOSSES = ("linear", "squared")
RMW_SAMPLERS = ("exact", "mala")


class RMWParams(NamedTuple):
    """Traced parameters of the RMW measure: inverse temperature ``beta``, regularization ``lam``,
    and the radius of the (centred) ball domain ``radius`` (ignored when a static ``domain`` is given)."""

    beta: jax.Array
    lam: jax.Array
    radius: jax.Array


def rmw_params(beta: float, lam: float, radius: float = 1.0) -> RMWParams:
    """Validated :class:`RMWParams` (``beta > 0``, ``lam > 0``, ``radius > 0``)."""
    check_positive("beta", beta)
    check_positive("lam", lam)
    check_positive("radius", radius)
    f = jnp.result_type(float)
    return RMWParams(jnp.asarray(beta, f), jnp.asarray(lam, f), jnp.asarray(radius, f))


def rmw_eta_div(beta: float, lam: float, L: float, delta0: float) -> float:
    """Lemma 3.11: ``η_div = 2βL²/λ + sqrt(8βL² log(2/δ0)/λ)`` (the η of Assumption 3.1)."""
    check_positive("beta", beta)
    check_positive("lam", lam)
    check_positive("L", L)
    check_in_range("delta0", delta0, 0.0, 1.0, lo_closed=False)
    return 2.0 * beta * L**2 / lam + math.sqrt(8.0 * beta * L**2 * math.log(2.0 / delta0) / lam)


def rmw_regret_bound(T: float, d: int, beta: float, lam: float, L: float, D: float) -> float:
    """AKST Thm 4.1 (as used in LAZY Thm 3.12), constants 1: ``λD² + L²T/λ + d log T / β``."""
    return lam * D**2 + L**2 * T / lam + d * math.log(max(T, 2)) / beta


@functools.lru_cache(maxsize=None)
def rmw_measure(d: int, loss: str = "linear", sampler: str = "exact", *, domain: Any = None,
                mala_steps: int = 100, Mgrid: int = 256) -> LazyMeasure:
    """The RMW measure family on ``R^d`` as a :class:`jaxdp.lazy.LazyMeasure`.

    Args:
      d: dimension (static).
      loss: ``"linear"`` (loss = ``g``) or ``"squared"`` (loss = ``ABLoss(a, b)``).
      sampler: ``"exact"`` (linear losses on a centred ball:
        ``sample_trunc_gauss_ball``) or ``"mala"``.
      domain: ``None`` — the centred ball of radius ``mparams.radius`` (traced)
        — or a static domain (``jaxdp.oco.domains`` Ball/Box/Simplex; MALA
        only, except a ``Ball`` whose radius then overrides ``mparams.radius``).
      mala_steps: MALA steps per fresh sample (static).
      Mgrid: grid size of the exact sampler.

    mparams: :class:`RMWParams` ``(beta, lam, radius)``.
    """
    d = check_positive_int("d", d)
    check_choice("loss", loss, RMW_LOSSES)
    check_choice("sampler", sampler, RMW_SAMPLERS)
    mala_steps = check_positive_int("mala_steps", mala_steps)
    Mgrid = check_positive_int("Mgrid", Mgrid, minimum=8)
    static_dom = None if domain is None else as_domain(domain)
    if sampler == "exact":
        if loss != "linear":
            raise ValueError(f"sampler='exact' exists only for loss='linear' (a truncated isotropic Gaussian); "
                             f"use sampler='mala' for loss={loss!r}")
        if static_dom is not None and type(static_dom).__name__ != "Ball":
            raise ValueError(f"sampler='exact' needs a centred ball domain, got {type(domain).__name__}; "
                             f"use sampler='mala'")
    if static_dom is not None and type(static_dom).__name__ == "Simplex" and static_dom.d != d:
        raise ValueError(f"domain dimension mismatch: simplex({static_dom.d}) for d={d}")
    f = jnp.result_type(float)

    def dom_of(mp):
        return ball(mp.radius) if static_dom is None else static_dom

    def radius_of(mp):
        if static_dom is None:
            return mp.radius
        return static_dom.radius if type(static_dom).__name__ == "Ball" else None

    def stats_init(loss_example):
        del loss_example
        if loss == "linear":
            return jnp.zeros((d,), f)
        return SquaredStats(AA=jnp.zeros((d, d), f), Ab=jnp.zeros((d,), f), bb=jnp.zeros((), f))

    def check_shape(l):
        shape = jnp.shape(l) if loss == "linear" else jnp.shape(l.a)
        if tuple(shape) != (d,):
            raise ValueError(f"rmw_measure(d={d}): loss {'g' if loss == 'linear' else 'a'} must have shape ({d},), "
                             f"got {tuple(shape)} (dimension mismatch between the learner and the adversary)")

    def stats_update(st, l, mp):
        check_shape(l)
        if loss == "linear":
            return st + jnp.asarray(l, f)
        a = jnp.asarray(l.a, f)
        b = jnp.asarray(l.b, f)
        return SquaredStats(AA=st.AA + jnp.outer(a, a), Ab=st.Ab + a * b, bb=st.bb + b * b)

    def loss_value(l, x):
        if loss == "linear":
            return jnp.dot(l, x)
        r = jnp.dot(l.a, x) - l.b
        return 0.5 * r * r

    def log_ratio(l, x, mp):
        check_shape(l)
        return -mp.beta * loss_value(l, x)

    def _quad(st, mp):
        """(A, c): -log μ = β(xᵀ A x / 2 - cᵀ x) + const, A = AA + 2λI."""
        if loss == "linear":
            return None, -st
        return st.AA + 2.0 * mp.lam * jnp.eye(d, dtype=f), st.Ab

    def sample(key, st, mp):
        A, c = _quad(st, mp)
        if sampler == "exact":
            m = c / (2.0 * mp.lam)
            s = jax.lax.rsqrt(2.0 * mp.beta * mp.lam)
            return sample_trunc_gauss_ball(key, m, s, radius_of(mp), Mgrid)
        dom = dom_of(mp)
        if loss == "linear":
            x0 = c / (2.0 * mp.lam)
            M = 2.0 * mp.beta * mp.lam

            def logdensity(x):
                return mp.beta * (jnp.dot(c, x) - mp.lam * jnp.dot(x, x))

            def grad(x):
                return mp.beta * (c - 2.0 * mp.lam * x)
        else:
            x0 = jnp.linalg.solve(A, c)
            M = mp.beta * jnp.linalg.eigvalsh(A)[-1]

            def logdensity(x):
                return mp.beta * (jnp.dot(c, x) - 0.5 * jnp.dot(x, A @ x))

            def grad(x):
                return mp.beta * (c - A @ x)

        diam = dom.diameter()
        h = jnp.minimum(1.0 / (M * d ** (1.0 / 3.0)), jnp.square(diam) / (32.0 * d))
        x, _ = mala(key, logdensity, dom.from_chart(dom.project(dom.to_chart(x0))), mala_steps, h, dom,
                    grad_fn=grad)
        return x

    return LazyMeasure(stats_init=stats_init, stats_update=stats_update, log_ratio=log_ratio, sample=sample)
