"""MALA version of the ρ-smooth gradient inverse-sensitivity mechanism (GROWTH Theorem 1; docs/algorithms/growth.md#inverse-sensitivity).

Target (the same as :func:`jaxdp.sco.grad_inverse_sensitivity`, in the continuum)::

    π(x) ∝ exp(-(ε/2) len^ρ_gr(S; x)),   len^ρ_gr(S; x) = (n/2L) inf_{y ∈ X, ||y - x|| <= ρ} ||∇f_S(y)||,   x ∈ X = B_2^d(0, R)

**Continuous relaxation (PROPOSED).** The grid version's score is piecewise constant (one value per
cell: the infimum of ``dist(0, ∂f_S)`` over the cell, then a window minimum over ``w = floor(ρ/h)``
cells). Here the score is evaluated at the point itself, so the log-density is continuous and
(almost everywhere) differentiable, as MALA needs:

* ``d = 1`` (instances with one-sided derivatives ``grad_lr``): the infimum is **exact** — ``f_S'`` is
  monotone, so ``inf_{y ∈ [x-ρ, x+ρ] ∩ X} dist(0, ∂f_S(y)) = max(0, f'_-(x-ρ), -f'_+(x+ρ))`` (endpoints
  clipped to ``[-R, R]``). The grid version converges to this density as ``M → ∞`` (its cells make the
  window slightly wider, by < 1 cell).
* ``d >= 2``: the infimum over the ρ-ball is replaced by a minimum over the fixed stencil
  ``y ∈ {P_X(x + ρ o) : o ∈ {0, ±e_1, ..., ±e_d}}`` (``2d + 1`` gradient evaluations; ``P_X`` the
  projection onto ``X``, which keeps ``||y - x|| <= ρ``). Each term ``(n/2L)||∇f_S(y)||`` has
  sensitivity <= 1 for a data-independent ``y``, so the stencil score is itself a sensitivity-1
  score (an upper bound on ``len^ρ_gr``, between ``len^0_gr`` and ``len^ρ_gr``): the mechanism with
  it would be ε-DP under exact sampling, with Theorem 1's utility argument holding at ``ρ`` replaced
  by the stencil's coverage (exactly at ``ρ = 0``). ``∇f_S`` is the mean of the per-sample
  minimum-norm subgradients (as in the grid version's 2-D case).

**Sampler.** ``jaxdp.samplers.mala`` on the ball ``X`` (proposals outside ``X`` are rejected, so
``π|_X`` is exactly invariant), ``n_steps`` steps from the data-independent start ``x0`` (default 0).
Default step ``h = min((2R)²/(32 d), 1/(Λ² d^{1/3}))`` with ``Λ = ε n β_s/(4L)`` the Lipschitz
constant of the log-density for ``β_s``-smooth losses (``β_s = inst.smooth``; nonsmooth: the first
term only) — the scale on which the log-density changes by O(1).

**What is approximate / not certified.** The output is the state of a finite chain, not an exact
draw from ``π``: its law differs from ``π`` by the chain's distance to stationarity (no bound is
computed). The ε-DP guarantee of Theorem 1 assumes exact sampling, so **privacy claims for this
mechanism are not certified**; outputs record ``sampler = "mala"`` (``MALAISInfo.sampler``) so that
results are never mistaken for the exact (grid) mechanism's. Use the grid version (``d <= 2``) where
certification matters. ``eps`` must be finite (the ``ε = ∞`` limit is a uniform law on a set the
chain cannot find from the log-density alone).
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from ..core.validation import check_epsilon, check_positive, check_positive_int, is_concrete
from ..samplers import ball, mala
from .instances import SCOInstance
from .localization import check_sco_data

__all__ = ["MALAISInfo", "grad_inverse_sensitivity_mala", "mala_is_logdensity", "mala_is_step"]


class MALAISInfo(NamedTuple):
    """Diagnostics of one MALA inverse-sensitivity draw (``sampler = "mala"``: not an exact sample).

    Attributes:
        acceptance_rate: the mean Metropolis–Hastings acceptance probability over the steps.
        accepted: the fraction of accepted proposals.
        outside: the fraction of proposals outside ``X`` (rejected).
        length: the relaxed length ``len^ρ_gr`` at the returned point.
    """

    acceptance_rate: jax.Array   # mean MH acceptance probability over the steps
    accepted: jax.Array          # fraction of accepted proposals
    outside: jax.Array           # fraction of proposals outside X (rejected)
    length: jax.Array            # len^ρ_gr (relaxed) at the returned point

    sampler = "mala"  # type: ignore[misc]  # class constant, not a pytree leaf


def _safe_norm(v):
    s = jnp.sum(v * v)
    pos = s > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, s, 1.0)), 0.0)


def _project_ball(y, R):
    n = _safe_norm(y)
    return y * jnp.minimum(1.0, R / jnp.maximum(n, 1e-300))


def smoothed_grad_norm(inst: SCOInstance, data, x, rho: float):
    """The relaxed ``inf_{y ∈ X, ||y-x|| <= ρ} ||∇f_S(y)||`` of the module docstring (exact in ``d = 1``).

    Args:
        inst: the SCO instance (``d = 1`` with ``grad_lr``: the exact infimum; otherwise the ``2d + 1``-point
            stencil, or the gradient norm at ``x`` itself when ``rho == 0``).
        data: the ``n`` samples defining ``f_S``.
        x: the point, shape ``(d,)``, inside ``X``.
        rho: the smoothing radius ρ (``>= 0``, a host float: it selects the branch).

    Returns:
        ``G(x)``, a scalar ``>= 0``.
    """
    R = inst.R
    if inst.d == 1 and inst.grad_lr is not None:
        def derivs(y):
            gl, gr = jax.vmap(lambda s: inst.grad_lr(y, s))(data)
            return jnp.mean(gl[:, 0]), jnp.mean(gr[:, 0])

        lo = jnp.maximum(x - rho, -R)
        hi = jnp.minimum(x + rho, R)
        gl_lo, _ = derivs(lo)
        _, gr_hi = derivs(hi)
        return jnp.maximum(jnp.maximum(gl_lo, -gr_hi), 0.0)

    def gnorm(y):
        return _safe_norm(jnp.mean(jax.vmap(lambda s: inst.grad(y, s))(data), axis=0))

    if rho == 0:
        return gnorm(x)
    eye = jnp.eye(inst.d, dtype=x.dtype)
    offs = jnp.concatenate([jnp.zeros((1, inst.d), x.dtype), eye, -eye], axis=0) * rho
    ys = jax.vmap(lambda o: _project_ball(x + o, R))(offs)
    return jnp.min(jax.vmap(gnorm)(ys))


def mala_is_logdensity(inst: SCOInstance, data, eps, rho: float):
    """``x -> -(ε/2) len^ρ_gr(S; x) = -ε n G(x)/(4L)`` with ``G`` the relaxed smoothed gradient norm.

    Args:
        inst: the SCO instance (``inst.L`` is the Lipschitz constant in ``len^ρ_gr``).
        data: the ``n`` samples defining ``f_S``.
        eps: the privacy parameter ε (may be traced).
        rho: the smoothing radius ρ.

    Returns:
        The unnormalised log-density, a function of ``x`` (shape ``(d,)``) returning a scalar.
    """
    n = data.shape[0]
    coef = eps * n / (4.0 * inst.L)
    return lambda x: -coef * smoothed_grad_norm(inst, data, x, rho)


def mala_is_step(inst: SCOInstance, n: int, eps: Any):
    """Default MALA step ``h = min((2R)²/(32d), 1/(Λ² d^{1/3}))``, ``Λ = ε n β_s/(4L)`` (module docstring).

    For a nonsmooth instance (``inst.smooth`` infinite or ``<= 0``) only the domain term ``(2R)²/(32d)`` is used.

    Args:
        inst: the SCO instance (``R``, ``d``, ``L`` and the smoothness ``β_s = inst.smooth``).
        n: the number of samples.
        eps: the privacy parameter ε (may be traced).

    Returns:
        The step size ``h``, a 0-d array.
    """
    d = inst.d
    h_dom = (2.0 * inst.R) ** 2 / (32.0 * d)
    if not math.isfinite(inst.smooth) or inst.smooth <= 0:
        return jnp.asarray(h_dom)
    lam = eps * n * inst.smooth / (4.0 * inst.L)
    return jnp.minimum(h_dom, 1.0 / (lam ** 2 * d ** (1.0 / 3.0)))


def _check(inst, data, eps, rho, n_steps, step_size, x0):
    if not isinstance(inst, SCOInstance):
        raise TypeError(f"inst must be an SCOInstance, got {type(inst).__name__}")
    check_epsilon(eps, allow_inf=False)
    if not (isinstance(rho, (int, float)) and not isinstance(rho, bool) and math.isfinite(rho) and rho >= 0):
        raise ValueError(f"rho must be a finite number >= 0, got {rho!r}")
    n_steps = check_positive_int("n_steps", n_steps)
    if step_size is not None:
        check_positive("step_size", step_size)
    if x0 is not None and is_concrete(x0):
        xa = np.asarray(x0, dtype=float)
        if xa.shape != (inst.d,):
            raise ValueError(f"x0 must have shape ({inst.d},), got {xa.shape}")
        if not np.all(np.isfinite(xa)) or np.linalg.norm(xa) > inst.R * (1 + 1e-9):
            raise ValueError(f"x0 must be a finite point of the ball of radius R={inst.R}, got {x0!r}")
    check_sco_data(inst, data, jnp.zeros(inst.d))
    return float(rho), n_steps


def grad_inverse_sensitivity_mala(key: jax.Array, inst: SCOInstance, data, eps, *, rho: float, n_steps: int = 300,
                                  step_size: Optional[Any] = None, x0: Optional[Any] = None
                                  ) -> tuple[jax.Array, MALAISInfo]:
    """ρ-smooth gradient inverse sensitivity (GROWTH Theorem 1) sampled by MALA on ``X = B(0, R)``; any ``d``.

    **Approximate sampling** (module docstring): ``sampler = "mala"``; the ε-DP guarantee of Theorem 1 assumes an
    exact draw and is not certified for this output.

    Args:
        key: typed PRNG key (the chain's only randomness).
        inst, data: the instance and an ``(n, m)`` dataset.
        eps: ``ε > 0``, finite; may be traced (vmappable).
        rho: host float ``>= 0``, the smoothing radius ``ρ`` (see ``plan_grad_inverse_sensitivity``).
        n_steps: static chain length.
        step_size: ``h`` (may be traced; default ``mala_is_step``).
        x0: data-independent start in ``X`` (default 0).

    Returns:
        ``(x̂, MALAISInfo)``.

    Raises:
        TypeError: ``inst`` is not an :class:`SCOInstance`.
        ValueError: invalid ``rho`` or ``x0``.
    """
    rho, n_steps = _check(inst, data, eps, rho, n_steps, step_size, x0)
    dt = jnp.result_type(float)
    data = jnp.asarray(data, dt)
    eps = jnp.asarray(eps, dt)
    logdens = mala_is_logdensity(inst, data, eps, rho)
    h = mala_is_step(inst, data.shape[0], eps) if step_size is None else step_size
    x0 = jnp.zeros((inst.d,), dt) if x0 is None else jnp.asarray(x0, dt)
    grad_raw = jax.grad(logdens)

    def grad_fn(x):  # a non-finite gradient (a kink hit exactly) would freeze the chain; the MH ratio stays exact
        g = grad_raw(x)
        return jnp.where(jnp.isfinite(g), g, 0.0)

    x, info = mala(key, logdens, x0, n_steps, jnp.asarray(h, dt), ball(inst.R), grad_fn=grad_fn)
    length = data.shape[0] * smoothed_grad_norm(inst, data, x, rho) / (2.0 * inst.L)
    return x, MALAISInfo(info.acceptance_rate, info.accepted, info.outside, length)  # type: ignore[call-arg]
