"""Langevin samplers on convex domains: MALA (exact invariant measure) and ULA.

Target: a density ``pi(x) ∝ exp(f(x))`` on a convex domain ``K`` (ball, box,
simplex), ``f`` given as ``logdensity_fn`` (and optionally its gradient).
Both samplers run a fixed number of steps in a ``lax.scan`` (static
``n_steps``), so they compile once and run under ``vmap`` over chains / seeds.

Proposal (Euler step of the Langevin diffusion ``dX = ∇f(X) dt + √2 dW``, the
``blackjax`` convention, ``h = step_size``)::

    x' = x + h ∇f(x) + √(2h) ξ,        ξ ~ N(0, I)

* **MALA** (Roberts–Tweedie 1996): accept ``x'`` with probability
  ``min(1, π(x') q(x | x') / (π(x) q(x' | x)))``, ``q(·|x) = N(x + h∇f(x), 2h I)``.
  Constraint handling: a proposal outside ``K`` has ``π(x') = 0`` and is
  **rejected** (``f`` and its gradient are never evaluated outside ``K``). This
  is the Metropolis–Hastings kernel of ``π`` restricted to ``K``, so ``π|_K``
  is exactly invariant: the only error is from a finite number of steps
  (non-stationarity), never a discretization bias. Exact-sampling privacy
  claims are still not certified by MALA output (docs/algorithms/primitives.md#samplers): record
  ``sampler="mala"`` with results.
* **ULA** (unadjusted): every proposal is taken, then mapped back into ``K`` by
  ``boundary="reflect"`` (mirror image at the boundary; ball: ``r -> 2R - r``;
  box: coordinate folding; simplex: projection) or ``boundary="project"``
  (Euclidean projection, Bubeck–Eldan–Lehec 2018). ULA is **biased**: its
  stationary law differs from ``π`` by ``O(h)`` in the interior (Euler
  discretization; for Gaussians the stationary variance is ``s²/(1 - h/(2s²))``)
  plus a boundary layer of width ``O(√h)`` (projection piles mass on the
  boundary; reflection removes the leading-order boundary bias). Use it only
  where speed matters more than exactness; tests measure the bias.
* **Simplex**: the chain runs in the affine chart ``y = x[:d-1]`` (constant
  Jacobian, no correction needed); see ``jaxdp.core.domains``.

Step size from the target's geometry (``mala_schedule`` / ``ula_schedule``):
with ``-f`` ``M``-smooth and ``m``-strongly convex (``κ = M/m``) on a domain of
diameter ``D_K``,

* MALA: ``h = min(1 / (M d^{1/3}), D_K² / (32 d))`` — the optimal-scaling order
  ``d^{-1/3}`` of Roberts–Rosenthal (1998) with a conservative constant (the
  acceptance rate on Gaussians is ≈ 0.85 rather than the asymptotically optimal
  0.574), capped so that a proposal (length ≈ ``√(2hd)``) is at most a quarter of
  the domain
* ULA: ``h = min(1/M, tol² / (M κ d))`` (keeps the Euler bias, of order
  ``√(M h d κ)`` relative to the target's scale, below ``tol``).
* steps: ``n = ceil(log(1/tol) / (a · h · m_eff))`` with ``a`` the expected
  acceptance (0.5 for MALA, 1 for ULA) and ``m_eff = m + π²/D_K²`` (strong
  convexity plus the Payne–Weinberger spectral gap of a convex body): the
  number of contraction times needed from a warm start.

Docs: docs/algorithms/primitives.md#samplers (``sample_mala``), docs/guide/concepts.md#control-flow-under-vmap.
"""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from ..core.validation import check_choice, check_in_range, check_positive, check_positive_int, is_concrete
from ..core.domains import check_domain

__all__ = [
    "LangevinState", "MALAInfo", "ULAInfo", "mala", "ula", "mala_kernel", "ula_kernel", "langevin_init",
    "mala_schedule", "ula_schedule",
]


class LangevinState(NamedTuple):
    """Chain state in chart coordinates: position, log-density and its gradient there.

    Attributes:
        position: the point, in chart coordinates.
        logdensity: the log-density there.
        grad: its gradient there.
    """

    position: jax.Array
    logdensity: jax.Array
    grad: jax.Array


class MALAInfo(NamedTuple):
    """Statistics of a MALA run (averaged over its steps).

    * ``acceptance_rate``: mean MH acceptance probability ``min(1, ratio)``
      (0 for a proposal outside the domain).
    * ``accepted``: fraction of steps whose proposal was accepted.
    * ``outside``: fraction of proposals that fell outside the domain.

    Attributes:
        acceptance_rate: mean MH acceptance probability.
        accepted: fraction of steps whose proposal was accepted.
        outside: fraction of proposals outside the domain.
    """

    acceptance_rate: jax.Array
    accepted: jax.Array
    outside: jax.Array


class ULAInfo(NamedTuple):
    """Statistics of a ULA run: ``outside`` = fraction of steps whose Euler step left the domain.

    Attributes:
        outside: fraction of steps whose Euler step left the domain.
    """

    outside: jax.Array


def _chart_fns(logdensity_fn, grad_fn, dom):
    """Log-density and gradient in chart coordinates (chain rule through the affine chart)."""
    vg = jax.value_and_grad(logdensity_fn) if grad_fn is None else (lambda x: (logdensity_fn(x), grad_fn(x)))

    def vg_chart(y):
        x = dom.from_chart(y)
        v, g = vg(x)
        _, pullback = jax.vjp(dom.from_chart, y)
        (gy,) = pullback(g)
        return v, gy

    return vg_chart


def _check_common(x0, n_steps, step_size, dom):
    n_steps = check_positive_int("n_steps", n_steps)
    check_positive("step_size", step_size)
    if is_concrete(x0):
        xa = np.asarray(x0)
        if xa.ndim != 1:
            raise ValueError(f"x0 must be a 1-D array (one chain; vmap for many), got shape {xa.shape}")
        if not np.all(np.isfinite(xa)):
            raise ValueError("x0 must be finite")
        dom.check_dim(xa.shape[0], "x0")
    return n_steps


def langevin_init(logdensity_fn: Callable, x0: jax.Array, domain: Any = None, *,
                  grad_fn: Optional[Callable] = None) -> LangevinState:
    """Chain state at ``x0`` (projected into the domain first, so any start is valid).

    Args:
        logdensity_fn: the log-density of the target, ``x -> log π(x)`` (up to a constant).
        x0: the starting point.
        domain: the domain (``None``: unconstrained; ``jaxdp.core.domains``).
        grad_fn: the gradient of ``logdensity_fn`` (default: by autodiff).

    Returns:
        The :class:`LangevinState`.
    """
    dom = check_domain(domain, unbounded=True)
    y0 = dom.chart_project(dom.to_chart(jnp.asarray(x0, jnp.result_type(float))))
    v, g = _chart_fns(logdensity_fn, grad_fn, dom)(y0)
    return LangevinState(y0, jnp.asarray(v, y0.dtype), g)


def mala_kernel(logdensity_fn: Callable, domain: Any = None, *, grad_fn: Optional[Callable] = None) -> Callable:
    """One MALA transition ``kernel(key, state, step_size) -> (state, (p_accept, accepted, outside))``.

    Randomness: ``k_prop, k_acc = split(key)``; ``ξ = normal(k_prop)``,
    accept iff ``uniform(k_acc) < p_accept`` (the same draws as
    ``blackjax.mala``, so unconstrained chains agree with it step for step).

    Args:
        logdensity_fn: the log-density of the target, ``x -> log π(x)`` (up to a constant).
        domain: the domain (``None``: unconstrained; ``jaxdp.core.domains``).
        grad_fn: the gradient of ``logdensity_fn`` (default: by autodiff).

    Returns:
        ``kernel(key, state, step_size) -> (state, (p_accept, accepted, outside))``.
    """
    dom = check_domain(domain, unbounded=True)
    vg = _chart_fns(logdensity_fn, grad_fn, dom)

    def log_q(y_to, y_from, g_from, h):  # log N(y_to; y_from + h g_from, 2h I) up to a constant
        diff = y_to - y_from - h * g_from
        return -0.25 / h * jnp.sum(diff * diff)

    def kernel(key, state: LangevinState, step_size):
        k_prop, k_acc = jax.random.split(key)
        y, v, g = state
        h = jnp.asarray(step_size, y.dtype)
        xi = jax.random.normal(k_prop, y.shape, y.dtype)
        y_new = y + h * g + jnp.sqrt(2.0 * h) * xi
        inside = dom.chart_contains(y_new)
        # never evaluate f outside the domain: use a valid point and mask
        v_new, g_new = vg(jnp.where(inside, y_new, y))
        log_ratio = v_new - v + log_q(y, y_new, g_new, h) - log_q(y_new, y, g, h)
        log_ratio = jnp.where(inside & ~jnp.isnan(log_ratio), log_ratio, -jnp.inf)
        p_acc = jnp.minimum(jnp.exp(log_ratio), 1.0)
        accept = jax.random.uniform(k_acc, (), y.dtype) < p_acc
        new = LangevinState(jnp.where(accept, y_new, y), jnp.where(accept, v_new, v), jnp.where(accept, g_new, g))
        return new, (p_acc, accept, ~inside)

    return kernel


def ula_kernel(logdensity_fn: Callable, domain: Any = None, *, grad_fn: Optional[Callable] = None,
               boundary: str = "reflect") -> Callable:
    """One ULA transition ``kernel(key, state, step_size) -> (state, outside)``; ``boundary`` in {reflect, project}.

    Args:
        logdensity_fn: the log-density of the target, ``x -> log π(x)`` (up to a constant).
        domain: the domain (``None``: unconstrained; ``jaxdp.core.domains``).
        grad_fn: the gradient of ``logdensity_fn`` (default: by autodiff).
        boundary: ``"reflect"`` or ``"project"``, for steps that leave the domain.

    Returns:
        ``kernel(key, state, step_size) -> (state, outside)``.
    """
    check_choice("boundary", boundary, ("reflect", "project"))
    dom = check_domain(domain, unbounded=True)
    vg = _chart_fns(logdensity_fn, grad_fn, dom)
    back = dom.chart_reflect if boundary == "reflect" else dom.chart_project

    def kernel(key, state: LangevinState, step_size):
        y, _, g = state
        h = jnp.asarray(step_size, y.dtype)
        xi = jax.random.normal(key, y.shape, y.dtype)
        y_new = y + h * g + jnp.sqrt(2.0 * h) * xi
        inside = dom.chart_contains(y_new)
        y_new = jnp.where(inside, y_new, back(y_new))
        v_new, g_new = vg(y_new)
        return LangevinState(y_new, jnp.asarray(v_new, y.dtype), g_new), ~inside

    return kernel


def mala(key: jax.Array, logdensity_fn: Callable, x0: jax.Array, n_steps: int, step_size: Any,
         domain: Any = None, *, grad_fn: Optional[Callable] = None) -> tuple[jax.Array, MALAInfo]:
    """Run ``n_steps`` of MALA for ``π ∝ exp(logdensity_fn)`` restricted to ``domain``; return the last point.

    Args:
      key: typed PRNG key; step ``i`` uses ``fold_in(key, i)``.
      logdensity_fn: ``x -> f(x)`` (unnormalized log-density, jittable), ``x`` in
        domain coordinates (``(d,)``; for the simplex the full ``d``-vector).
      x0: start (``(d,)``); projected into the domain. A warm start (e.g. the
        mode) shortens the burn-in.
      n_steps: number of steps, a static Python int (the ``scan`` length).
      step_size: ``h > 0`` (may be traced), see ``mala_schedule``.
      domain: ``None`` (R^d) or a domain of ``jaxdp.core.domains`` (``Ball``, ``Box``, ``Simplex``;
        ``jaxdp.samplers.ball/box/simplex``). Proposals outside it are rejected.
      grad_fn: optional ``x -> ∇f(x)`` (default: ``jax.grad``).

    Returns:
      ``(x, MALAInfo)``: the final state (inside the domain) and acceptance
      statistics averaged over the steps.

    Under ``vmap`` over keys (and/or ``x0``, ``step_size``) the results are
    identical to separate calls with the same keys.

    Example:
        >>> import jax
        >>> import jax.numpy as jnp
        >>> from jaxdp.samplers import ball
        >>> x, info = mala(jax.random.key(0), lambda x: -0.5 * x @ x, jnp.zeros(3), 200, 0.3, ball(1.0))
        >>> x.shape, bool(jnp.linalg.norm(x) <= 1.0)
        ((3,), True)
    """
    dom = check_domain(domain, unbounded=True)
    n_steps = _check_common(x0, n_steps, step_size, dom)
    kernel = mala_kernel(logdensity_fn, dom, grad_fn=grad_fn)
    state = langevin_init(logdensity_fn, x0, dom, grad_fn=grad_fn)

    # step keys fold_in(key, i) (scanning over a split key array trips the key-reuse checker under vmap)
    state, (p, a, o) = jax.lax.scan(lambda s, i: kernel(jax.random.fold_in(key, i), s, step_size), state,
                                    jnp.arange(n_steps, dtype=jnp.uint32))
    f = state.position.dtype
    info = MALAInfo(jnp.mean(p), jnp.mean(a.astype(f)), jnp.mean(o.astype(f)))
    return dom.from_chart(state.position), info


def ula(key: jax.Array, logdensity_fn: Callable, x0: jax.Array, n_steps: int, step_size: Any,
        domain: Any = None, *, grad_fn: Optional[Callable] = None, boundary: str = "reflect"
        ) -> tuple[jax.Array, ULAInfo]:
    """Run ``n_steps`` of the unadjusted Langevin algorithm on ``domain``; return the last point.

    Same arguments as ``mala``, plus ``boundary`` (``"reflect"`` or
    ``"project"``) for steps that leave the domain. Biased (see module
    docstring); the returned point is always inside the domain.

    Args:
        key: JAX PRNG key.
        logdensity_fn: the log-density of the target, ``x -> log π(x)`` (up to a constant).
        x0: the starting point.
        n_steps: the number of steps.
        step_size: the step size (may be traced).
        domain: the domain (``None``: unconstrained; ``jaxdp.core.domains``).
        grad_fn: the gradient of ``logdensity_fn`` (default: by autodiff).
        boundary: ``"reflect"`` or ``"project"``, for steps that leave the domain.

    Returns:
        ``(x, info)``: the last point and :class:`ULAInfo`.
    """
    dom = check_domain(domain, unbounded=True)
    n_steps = _check_common(x0, n_steps, step_size, dom)
    kernel = ula_kernel(logdensity_fn, dom, grad_fn=grad_fn, boundary=boundary)
    state = langevin_init(logdensity_fn, x0, dom, grad_fn=grad_fn)
    state, o = jax.lax.scan(lambda s, i: kernel(jax.random.fold_in(key, i), s, step_size), state,
                            jnp.arange(n_steps, dtype=jnp.uint32))
    return dom.from_chart(state.position), ULAInfo(jnp.mean(o.astype(state.position.dtype)))


def _check_geometry(smoothness, strong_convexity, d, diameter, tol):
    check_positive("smoothness", smoothness)
    check_positive_int("d", d)
    if strong_convexity is not None:
        if is_concrete(strong_convexity) and np.any(np.asarray(strong_convexity) < 0):
            raise ValueError(f"strong_convexity must be >= 0, got {strong_convexity!r}")
        if is_concrete(strong_convexity) and is_concrete(smoothness) and np.any(
                np.asarray(strong_convexity) > np.asarray(smoothness) * (1 + 1e-6)):
            raise ValueError(f"strong_convexity must be <= smoothness, got {strong_convexity!r} > {smoothness!r}")
    if diameter is not None:
        check_positive("diameter", diameter, allow_inf=True)
    check_in_range("tol", tol, 0.0, 1.0, lo_closed=False, hi_closed=False)


def _m_eff(strong_convexity, diameter):
    m = 0.0 if strong_convexity is None else strong_convexity
    if diameter is not None:
        m = m + (math.pi**2) / jnp.square(diameter)
    return m


def mala_schedule(smoothness: Any, strong_convexity: Any, d: int, diameter: Any = None, tol: float = 1e-3
                  ) -> tuple[Any, int]:
    """``(step_size, n_steps)`` for MALA from the target's geometry (module docstring).

    ``smoothness`` ``M`` and ``strong_convexity`` ``m`` of ``-log π``
    (``m`` may be 0 if a finite ``diameter`` is given); ``step_size`` may be
    traced (it is an array when ``M`` is), ``n_steps`` is a Python int and so
    needs concrete ``M``, ``m``, ``diameter`` — for traced geometry compute
    ``n_steps`` from host bounds and pass ``step_size`` only.

    Args:
        smoothness: the smoothness ``M`` of ``-log π``.
        strong_convexity: the strong convexity ``m`` of ``-log π`` (may be 0 with a finite ``diameter``).
        d: the dimension.
        diameter: the domain's diameter (``None``: unbounded).
        tol: the target accuracy.

    Returns:
        ``(step_size, n_steps)``.
    """
    _check_geometry(smoothness, strong_convexity, d, diameter, tol)
    h = 1.0 / (smoothness * d ** (1.0 / 3.0))
    if diameter is not None:
        h = jnp.minimum(h, jnp.square(diameter) / (32.0 * d))
    m_eff = _m_eff(strong_convexity, diameter)
    if not (is_concrete(h) and is_concrete(m_eff)):
        return h, None  # type: ignore[return-value]  # traced geometry: no host step count
    if float(np.asarray(m_eff)) <= 0:
        raise ValueError("mala_schedule needs strong_convexity > 0 or a finite diameter to bound the mixing time")
    n = int(math.ceil(math.log(1.0 / tol) / (0.5 * float(np.asarray(h)) * float(np.asarray(m_eff)))))
    return h, max(n, 1)


def ula_schedule(smoothness: Any, strong_convexity: Any, d: int, diameter: Any = None, tol: float = 1e-2
                 ) -> tuple[Any, int]:
    """``(step_size, n_steps)`` for ULA: ``h = min(1/M, tol²/(M κ d))``, ``n = ceil(log(1/tol)/(h m_eff))``.

    Args:
        smoothness, strong_convexity, d, diameter, tol: as in :func:`mala_schedule`.

    Returns:
        ``(step_size, n_steps)``.
    """
    _check_geometry(smoothness, strong_convexity, d, diameter, tol)
    m_eff = _m_eff(strong_convexity, diameter)
    if not (is_concrete(m_eff) and float(np.asarray(m_eff)) > 0):
        raise ValueError("ula_schedule needs strong_convexity > 0 or a finite diameter")
    kappa = smoothness / m_eff
    h = jnp.minimum(1.0 / smoothness, tol**2 / (smoothness * jnp.maximum(kappa, 1.0) * d))
    n = int(math.ceil(math.log(1.0 / tol) / (float(np.asarray(h)) * float(np.asarray(m_eff)))))
    return h, max(n, 1)
