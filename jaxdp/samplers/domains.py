"""Convex domains as seen by the samplers: membership, projection, reflection and a chart.

The samplers run a Markov chain in *chart coordinates* ``y`` of a
full-dimensional convex set ``K ⊂ R^k`` and report points ``x = from_chart(y)``.

* ``ball(R)``: ``{x in R^d : ||x|| <= R}``; chart = identity.
* ``box(lo, hi)``: ``prod_i [lo_i, hi_i]``; chart = identity.
* ``simplex(d)``: the probability simplex ``{x >= 0, sum x = 1} ⊂ R^d``, which is
  (d-1)-dimensional. Chart ``y = x[:d-1]`` ranges over the corner simplex
  ``{y >= 0, sum y <= 1} ⊂ R^{d-1}``, ``x = (y, 1 - sum y)``. The chart is
  affine, so its Jacobian is a constant and a density ``pi(x)`` w.r.t. the
  surface measure is ``pi(from_chart(y))`` w.r.t. Lebesgue measure on ``y`` up
  to that constant: the reparameterization introduces no bias.
* ``unconstrained()``: ``R^d`` (for tests against blackjax).

Every domain is a ``NamedTuple`` of arrays (a pytree), so a radius can be a
traced, vmapped parameter. Objects from ``jaxdp.oco.domains`` (``Ball``,
``Box``, ``Simplex``) are converted by ``as_domain`` (duck-typed on their
attributes, so this low layer never imports the OCO package).

Docs: docs/algorithms/primitives.md#samplers; docs/guide/concepts.md#notation.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core.validation import check_positive, check_positive_int
from ..core.geometry import project_simplex

__all__ = ["Ball", "Box", "Simplex", "Unconstrained", "ball", "box", "simplex", "unconstrained", "as_domain",
           "project_simplex"]

_TINY = 1e-30


class Ball(NamedTuple):
    """Euclidean ball of radius ``radius`` centred at 0.

    Attributes:
        radius: the radius.
    """

    radius: jax.Array

    # the identity chart: the samplers keep the domain by projection and reflection
    def to_chart(self, x): return x
    def from_chart(self, y): return y

    def contains(self, y):
        return jnp.sum(y * y) <= self.radius**2

    def project(self, y):
        n = jnp.sqrt(jnp.sum(y * y))
        return y * jnp.minimum(1.0, self.radius / jnp.maximum(n, _TINY))

    def reflect(self, y):
        """Radial reflection at the sphere: ``r -> 2R - r`` if ``r > R``, then projection (``r > 3R``)."""
        n = jnp.sqrt(jnp.sum(y * y))
        scale = jnp.where(n > self.radius, (2.0 * self.radius - n) / jnp.maximum(n, _TINY), 1.0)
        return self.project(y * scale)

    def diameter(self):
        return 2.0 * self.radius


class Box(NamedTuple):
    """Axis-aligned box ``prod_i [lo_i, hi_i]``.

    Attributes:
        lo, hi: the bounds per coordinate.
    """

    lo: jax.Array
    hi: jax.Array

    # the identity chart: the samplers keep the domain by reflection
    def to_chart(self, x): return x
    def from_chart(self, y): return y

    def contains(self, y):
        return jnp.all((y >= self.lo) & (y <= self.hi))

    def project(self, y):
        return jnp.clip(y, self.lo, self.hi)

    def reflect(self, y):
        """Fold every coordinate back into ``[lo, hi]`` (mirror images, any number of reflections)."""
        w = self.hi - self.lo
        z = jnp.mod(y - self.lo, 2.0 * w)
        z = jnp.where(z > w, 2.0 * w - z, z)
        return jnp.clip(self.lo + z, self.lo, self.hi)

    def diameter(self):
        return jnp.sqrt(jnp.sum((self.hi - self.lo) ** 2))


class Simplex(NamedTuple):
    """Probability simplex in ``R^d``; chart = first ``d - 1`` coordinates (see module docstring).

    Attributes:
        d: the dimension.
    """

    d: int

    def to_chart(self, x):
        return x[..., : self.d - 1]

    def from_chart(self, y):
        # the clip only removes round-off (|1 - sum y| < ulp) after a projection
        return jnp.concatenate([y, jnp.maximum(1.0 - jnp.sum(y, axis=-1, keepdims=True), 0.0)], axis=-1)

    def contains(self, y):
        return jnp.all(y >= 0) & (jnp.sum(y) <= 1.0)

    def project(self, y):
        x = project_simplex(jnp.concatenate([y, 1.0 - jnp.sum(y, axis=-1, keepdims=True)], axis=-1))
        return self.to_chart(x)

    def reflect(self, y):
        # reflection through the d facets of a simplex has no simple closed form: project (documented bias)
        return self.project(y)

    def diameter(self):
        return jnp.sqrt(2.0)


# make Simplex.d static (not a pytree leaf): it sets shapes
jax.tree_util.register_pytree_node(Simplex, lambda s: ((), s.d), lambda d, _: Simplex(d))


class Unconstrained(NamedTuple):
    """All of ``R^d``."""

    def to_chart(self, x):
        return x

    def from_chart(self, y):
        return y

    def contains(self, y):
        return jnp.bool_(True)

    def project(self, y):
        return y

    def reflect(self, y):
        return y

    def diameter(self):
        return jnp.inf


def ball(radius: Any) -> Ball:
    """The Euclidean ball ``{||x|| <= radius}`` (``radius > 0``; may be a traced scalar).

    Args:
        radius: the radius (> 0; may be traced).

    Returns:
        A :class:`Ball`.
    """
    check_positive("radius", radius)
    return Ball(jnp.asarray(radius, jnp.result_type(float)))


def box(lo: Any, hi: Any) -> Box:
    """The box ``prod_i [lo_i, hi_i]`` (``lo < hi`` elementwise; scalars broadcast).

    Args:
        lo, hi: the bounds (``lo < hi`` elementwise; scalars broadcast).

    Returns:
        A :class:`Box`.
    """
    lo_a, hi_a = np.asarray(lo) if not isinstance(lo, jax.core.Tracer) else None, \
        np.asarray(hi) if not isinstance(hi, jax.core.Tracer) else None
    if lo_a is not None and hi_a is not None:
        if not (np.all(np.isfinite(lo_a)) and np.all(np.isfinite(hi_a))):
            raise ValueError(f"box bounds must be finite, got lo={lo!r}, hi={hi!r}")
        if np.any(hi_a <= lo_a):
            raise ValueError(f"box needs lo < hi elementwise, got lo={lo!r}, hi={hi!r}")
    f = jnp.result_type(float)
    return Box(jnp.asarray(lo, f), jnp.asarray(hi, f))


def simplex(d: int) -> Simplex:
    """The probability simplex in ``R^d`` (``d >= 2``).

    Args:
        d: the dimension (>= 2).

    Returns:
        A :class:`Simplex`.
    """
    return Simplex(check_positive_int("d", d, minimum=2))


def unconstrained() -> Unconstrained:
    """The unconstrained domain ``R^d``.

    Returns:
        An :class:`Unconstrained`.
    """
    return Unconstrained()


def as_domain(domain: Any) -> Any:
    """Return a sampler domain for ``domain``.

    Accepts ``None`` (unconstrained), the domains of this module, and objects of
    ``jaxdp.oco.domains`` (recognized by class name ``Ball``/``Box``/``Simplex``
    and their radius / bounds / dimension attributes).

    Args:
        domain: ``None``, a domain of this module or of ``jaxdp.oco.domains``.

    Returns:
        The sampler domain.
    """
    if domain is None:
        return Unconstrained()
    if isinstance(domain, (Ball, Box, Simplex, Unconstrained)):
        return domain
    name = type(domain).__name__
    if name == "Ball" and hasattr(domain, "radius"):
        return Ball(jnp.asarray(domain.radius, jnp.result_type(float)))
    if name == "Box" and hasattr(domain, "lo") and hasattr(domain, "hi"):
        return box(domain.lo, domain.hi)
    if name == "Simplex" and hasattr(domain, "d"):
        return simplex(int(domain.d))
    raise TypeError(
        f"domain must be None, jaxdp.samplers.ball/box/simplex or a jaxdp.oco.domains Ball/Box/Simplex, got {name}")
