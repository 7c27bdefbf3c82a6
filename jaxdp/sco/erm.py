"""Solver for the regularized, ball-constrained ERM subproblems of GROWTH Algorithms 1–2 (docs/algorithms/growth.md#localization).

Problem (GROWTH Alg. 1 line 5, RECONSTRUCTED objective)::

    min_{x ∈ C}  F(x) = (1/b) Σ_i F(x; s_i) + (λ/2) ||x - c||²,     C = ∩_j B(c_j, r_j)

``F`` is λ-strongly convex. Two fixed-iteration, jittable solvers (shapes and iteration counts static):

* ``d >= 2``: projected Nesterov-accelerated gradient (``optax.sgd`` with momentum
  ``(√q - 1)/(√q + 1)``, ``q = (β + λ)/λ``, step ``1/(β + λ)``; PROPOSED), projection onto the
  intersection of balls by Dykstra's algorithm (``n_dykstra`` sweeps; exact for one ball).
  ``β`` is the instance's smoothness on X; for non-smooth / Hölder losses (κ < 2) the caller's
  ``beta_fallback`` is used (no convergence guarantee; the reported gap tells).
* ``d = 1``: bisection on the right derivative over the constraint interval (exact to float
  precision, valid for non-smooth losses such as ``inst_kappa_1d_twopoint``).

Both report a rigorous optimality-gap certificate ``F(x) - min_C F``:

* strong-convexity bound: for any subgradient ``g`` at ``x`` and all ``y ∈ C``,
  ``F(y) >= F(x) + <g, y-x> + (λ/2)||y-x||²``; minimizing the right side over ``C`` (a projection,
  ``y = P_C(x - g/λ)``) gives ``gap <= -(<g, y-x> + (λ/2)||y-x||²)``;
* in 1-D additionally ``gap <= |g_-(x)|·(hi - lo)`` from the final bisection bracket.

The privacy analysis of Algorithm 1 needs ``gap <= L² η_i / (2 n_0)`` in every phase (GROWTH Alg. 1; docs/algorithms/growth.md#localization; docs/guide/auditing.md):
then ``||x̂_i - x_i*|| <= sqrt(2 gap / λ_i) <= L η_i`` and the factor-2 noise covers it.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from .instances import SCOInstance

__all__ = ["ERMResult", "project_balls", "solve_prox_erm", "strong_convexity_gap"]


class ERMResult(NamedTuple):
    """Result of :func:`solve_prox_erm`.

    Attributes:
        x: the ``(d,)`` approximate minimizer.
        gap: a certified upper bound on ``F(x) - min_C F``.
        value: ``F(x)``.
    """
    x: jax.Array      # (d,) approximate minimizer
    gap: jax.Array    # certified upper bound on F(x) - min_C F
    value: jax.Array  # F(x)


def project_balls(x, centers, radii, n_dykstra: int = 12):
    """Euclidean projection of ``x`` onto ``∩_j B(centers[j], radii[j])`` (Dykstra; exact for one ball).

    ``centers``: ``(m, d)``, ``radii``: ``(m,)`` (``inf`` = no constraint).

    Args:
        x: the point.
        centers, radii: the ``(m, d)`` centres and ``(m,)`` radii of the balls (``inf``: no constraint).
        n_dykstra: the Dykstra iterations.

    Returns:
        The projection.
    """
    m = centers.shape[0]

    def proj1(y, c, r):
        v = y - c
        nv = jnp.sqrt(jnp.sum(v * v))
        return c + v * jnp.minimum(1.0, r / jnp.maximum(nv, 1e-300))

    if m == 1:
        return proj1(x, centers[0], radii[0])

    def sweep(carry, _):
        y, incs = carry
        new_incs = []
        for j in range(m):
            z = y + incs[j]
            y = proj1(z, centers[j], radii[j])
            new_incs.append(z - y)
        return (y, jnp.stack(new_incs)), None

    (y, _), _ = jax.lax.scan(sweep, (x, jnp.zeros((m,) + x.shape, x.dtype)), None, length=n_dykstra)
    return y


def strong_convexity_gap(x, g, lam, centers, radii, n_dykstra: int = 12):
    """Certificate ``F(x) - min_C F <= -min_{y∈C} [<g, y-x> + (λ/2)||y-x||²]`` (λ-strongly convex F).

    Args:
        x: the point.
        g: a subgradient of ``F`` at ``x``.
        lam: the strong-convexity constant λ.
        centers, radii: the ``(m, d)`` centres and ``(m,)`` radii of the balls (``inf``: no constraint).
        n_dykstra: the Dykstra iterations.

    Returns:
        The certified gap.
    """
    y = project_balls(x - g / lam, centers, radii, n_dykstra)
    dy = y - x
    return jnp.maximum(-(jnp.dot(g, dy) + 0.5 * lam * jnp.dot(dy, dy)), 0.0)


def _objective(inst, data, weights, c, lam):
    wsum = jnp.maximum(jnp.sum(weights), 1.0)

    def value(x):
        vals = jax.vmap(lambda s: inst.loss(x, s))(data)
        return jnp.sum(weights * vals) / wsum + 0.5 * lam * jnp.sum((x - c) ** 2)

    def grad(x):
        gs = jax.vmap(lambda s: inst.grad(x, s))(data)
        return jnp.sum(weights[:, None] * gs, axis=0) / wsum + lam * (x - c)

    return value, grad


def _solve_1d(inst, data, weights, c, lam, centers, radii, n_bisect):
    wsum = jnp.maximum(jnp.sum(weights), 1.0)
    lo = jnp.max(centers[:, 0] - radii)
    hi = jnp.min(centers[:, 0] + radii)
    hi = jnp.maximum(hi, lo)

    def derivs(x):
        xv = jnp.reshape(x, (1,))
        gl, gr = jax.vmap(lambda s: inst.grad_lr(xv, s))(data)
        reg = lam * (x - c[0])
        return (jnp.sum(weights * gl[:, 0]) / wsum + reg, jnp.sum(weights * gr[:, 0]) / wsum + reg)

    def body(_, br):
        a, b = br
        mid = 0.5 * (a + b)
        _, gr = derivs(mid)
        return jnp.where(gr < 0, mid, a), jnp.where(gr < 0, b, mid)

    a, b = jax.lax.fori_loop(0, n_bisect, body, (lo, hi))
    x = b
    gl, gr = derivs(x)
    # x* ∈ [a, b]; F(x) - F(x*) <= g (x - x*) for g = gl (x* <= x)
    gap_bracket = jnp.abs(gl) * (b - a)
    value, _ = _objective(inst, data, weights, c, lam)
    xv = jnp.reshape(x, (1,))
    g = jnp.where(gl > 0, gl, jnp.where(gr < 0, gr, 0.0))  # min-norm element of [gl, gr]
    gap_sc = strong_convexity_gap(xv, jnp.reshape(g, (1,)), lam, centers, radii)
    return ERMResult(x=xv, gap=jnp.minimum(gap_bracket, gap_sc), value=value(xv))


def solve_prox_erm(inst: SCOInstance, data, weights, c, lam, centers, radii, x_init, *,
                   n_iter: int = 100, beta_fallback: float = 10.0, n_dykstra: int = 12) -> ERMResult:
    """Minimize ``Σ w_i F(x; s_i)/Σ w_i + (λ/2)||x - c||²`` over ``∩ B(centers_j, radii_j)`` (see module doc).

    ``weights`` (``(b,)``, 0/1) mask padded rows. ``lam > 0`` (traced). ``n_iter`` static: PGD iterations
    (``d >= 2``) or bisection steps (``d = 1``, at least 60 are used).

    Args:
        inst: the instance (:class:`SCOInstance`).
        data: the ``(n, m)`` dataset (one sample per row).
        weights: the ``(b,)`` 0/1 weights (0 masks a padded row).
        c: the centre of the proximal term.
        lam: λ > 0 (traced).
        centers, radii: the ``(m, d)`` centres and ``(m,)`` radii of the balls (``inf``: no constraint).
        x_init: the starting point.
        n_iter: PGD iterations (``d >= 2``) or bisection steps (``d = 1``, at least 60); static.
        beta_fallback: the smoothness used for the step size when the instance has none.
        n_dykstra: the Dykstra iterations.

    Returns:
        :class:`ERMResult`.
    """
    if inst.d == 1 and inst.grad_lr is not None:
        return _solve_1d(inst, data, weights, c, lam, centers, radii, max(int(n_iter), 60))
    value, grad = _objective(inst, data, weights, c, lam)
    beta = inst.smooth if math.isfinite(inst.smooth) else beta_fallback
    step = 1.0 / (beta + lam)
    sq = jnp.sqrt((beta + lam) / lam)
    mom = (sq - 1.0) / (sq + 1.0)
    x0 = project_balls(x_init, centers, radii, n_dykstra)
    # optax's sgd with a traced learning rate / momentum: build the transformation from scalars
    opt = optax.chain(optax.trace(decay=mom, nesterov=True), optax.scale(-step))
    state = opt.init(x0)

    def body(carry, _):
        x, st = carry
        upd, st = opt.update(grad(x), st, x)
        x = project_balls(optax.apply_updates(x, upd), centers, radii, n_dykstra)
        return (x, st), None

    (x, _), _ = jax.lax.scan(body, (x0, state), None, length=int(n_iter))
    g = grad(x)
    gap = strong_convexity_gap(x, g, lam, centers, radii, n_dykstra)
    return ERMResult(x=x, gap=gap, value=value(x))
