"""Convex domains for online convex optimization (docs/guide/concepts.md#notation).

A domain is an immutable, hashable description (so problems and learners
built on it can be cached with ``functools.lru_cache``) with jittable methods:

* ``project(x)``: the Euclidean projection onto the domain,
* ``contains(x, tol)``: membership,
* ``minimize_linear(g)``: ``argmin_{x in X} <g, x>`` (the linear minimization
  oracle; gives the exact comparator of linear losses),
* ``diameter``: ``max_{x, y in X} ||x - y||_2``; ``radius``: ``max_{x in X} ||x||_2``.

``Ball(D)`` (radius ``D``, any dimension; REAL §4.1 INTERPRETATION: radius
``D``), ``Box(lo, hi, d)`` (``[lo, hi]^d`` or per-coordinate bounds) and
``Simplex(d)`` (the probability simplex). Projections are post-processing
and cost no privacy.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Optional, Union

import jax
import jax.numpy as jnp
import numpy as np

from ..core.types import fdt
from ..core.validation import check_positive, check_positive_int
from ..core.geometry import project_simplex

__all__ = ["Ball", "Box", "Simplex", "Domain", "check_domain", "project_simplex", "ball_grid"]

_TINY = 1e-30


@dataclasses.dataclass(frozen=True)
class Ball:
    """The Euclidean ball ``{x : ||x||_2 <= D}`` (centred at 0, any dimension).

    Projection: ``x * min(1, D / ||x||)``. Linear oracle: ``-D g / ||g||``
    (any point of the sphere when ``g = 0``; returns 0 then).

    Attributes:
        D: the radius.
        d: the dimension (``None``: any).
    """

    D: float
    d: Optional[int] = None     # optional: fixes the dimension when known

    def __post_init__(self):
        if isinstance(self.D, (bool, np.bool_)) or not isinstance(self.D, (int, float, np.integer, np.floating)):
            raise TypeError(f"Ball radius D must be a number, got {self.D!r} ({type(self.D).__name__})")
        check_positive("D (ball radius)", self.D)
        object.__setattr__(self, "D", float(self.D))
        if self.d is not None:
            object.__setattr__(self, "d", check_positive_int("d", self.d))

    @property
    def diameter(self) -> float:
        return 2.0 * self.D

    @property
    def radius(self) -> float:
        return self.D

    def project(self, x: jax.Array) -> jax.Array:
        n = jnp.linalg.norm(x)
        return x * jnp.minimum(1.0, self.D / jnp.maximum(n, _TINY))

    def contains(self, x: jax.Array, tol: float = 1e-5) -> jax.Array:
        return jnp.linalg.norm(x) <= self.D * (1.0 + tol)

    def minimize_linear(self, g: jax.Array) -> jax.Array:
        n = jnp.linalg.norm(g)
        return jnp.where(n > 0, -self.D * g / jnp.maximum(n, _TINY), jnp.zeros_like(g))

    def min_linear_value(self, g: jax.Array) -> jax.Array:
        """``min_{||x|| <= D} <g, x> = -D ||g||``."""
        return -self.D * jnp.linalg.norm(g)

    def check_dim(self, d: int) -> None:
        if self.d is not None and self.d != d:
            raise ValueError(f"domain dimension mismatch: Ball has d={self.d}, the problem has d={d}")


@dataclasses.dataclass(frozen=True)
class Box:
    """The box ``{x : lo_j <= x_j <= hi_j}``; ``lo``/``hi`` scalars (with ``d``) or length-``d`` tuples.

    Projection: coordinatewise clipping. Linear oracle: ``lo_j`` where
    ``g_j > 0``, else ``hi_j``.

    Attributes:
        lo, hi: the lower and upper bounds (scalars, or length-``d`` sequences).
        d: the dimension (needed when ``lo`` and ``hi`` are scalars).
    """

    lo: Union[float, tuple]
    hi: Union[float, tuple]
    d: Optional[int] = None

    def __post_init__(self):
        lo = np.asarray(self.lo, dtype=np.float64)
        hi = np.asarray(self.hi, dtype=np.float64)
        if lo.ndim > 1 or hi.ndim > 1:
            raise ValueError(f"Box lo and hi must be scalars or 1-D, got shapes {lo.shape}, {hi.shape}")
        d = self.d
        if d is not None:
            d = check_positive_int("d", d)
        for nm, v in (("lo", lo), ("hi", hi)):
            if not np.all(np.isfinite(v)):
                raise ValueError(f"Box {nm} must be finite, got {v.tolist()!r}")
            if v.ndim == 1:
                if d is not None and v.shape[0] != d:
                    raise ValueError(f"Box {nm} has length {v.shape[0]} but d={d}")
                d = v.shape[0]
        if d is None:
            raise ValueError("Box needs the dimension d when lo and hi are scalars")
        lo = np.broadcast_to(lo, (d,))
        hi = np.broadcast_to(hi, (d,))
        if np.any(lo > hi):
            j = int(np.argmax(lo > hi))
            raise ValueError(f"Box needs lo <= hi in every coordinate (an empty set is not a domain), "
                             f"got lo[{j}]={lo[j]!r} > hi[{j}]={hi[j]!r}")
        object.__setattr__(self, "lo", tuple(float(v) for v in lo))
        object.__setattr__(self, "hi", tuple(float(v) for v in hi))
        object.__setattr__(self, "d", int(d))

    @property
    def _lo(self):
        return jnp.asarray(self.lo, fdt())

    @property
    def _hi(self):
        return jnp.asarray(self.hi, fdt())

    @property
    def diameter(self) -> float:
        return float(np.linalg.norm(np.subtract(self.hi, self.lo)))

    @property
    def radius(self) -> float:
        return float(np.linalg.norm(np.maximum(np.abs(self.lo), np.abs(self.hi))))

    def project(self, x: jax.Array) -> jax.Array:
        return jnp.clip(x, self._lo, self._hi)

    def contains(self, x: jax.Array, tol: float = 1e-5) -> jax.Array:
        s = tol * max(1.0, self.radius)
        return jnp.all((x >= self._lo - s) & (x <= self._hi + s))

    def minimize_linear(self, g: jax.Array) -> jax.Array:
        return jnp.where(g > 0, self._lo, self._hi)

    def min_linear_value(self, g: jax.Array) -> jax.Array:
        return jnp.sum(jnp.minimum(g * self._lo, g * self._hi))

    def check_dim(self, d: int) -> None:
        if self.d != d:
            raise ValueError(f"domain dimension mismatch: Box has d={self.d}, the problem has d={d}")


@dataclasses.dataclass(frozen=True)
class Simplex:
    """The probability simplex ``{x in R^d : x >= 0, sum_j x_j = 1}``.

    Projection: sort-based (Duchi–Shalev-Shwartz–Singer–Chandra 2008).
    Linear oracle: the vertex ``e_{argmin g}``.

    Attributes:
        d: the dimension.
    """

    d: int

    def __post_init__(self):
        object.__setattr__(self, "d", check_positive_int("d", self.d))

    @property
    def diameter(self) -> float:
        return math.sqrt(2.0) if self.d > 1 else 0.0

    @property
    def radius(self) -> float:
        return 1.0

    def project(self, x: jax.Array) -> jax.Array:
        return project_simplex(x)

    def contains(self, x: jax.Array, tol: float = 1e-5) -> jax.Array:
        return jnp.all(x >= -tol) & (jnp.abs(jnp.sum(x) - 1.0) <= tol * self.d)

    def minimize_linear(self, g: jax.Array) -> jax.Array:
        return jax.nn.one_hot(jnp.argmin(g), self.d, dtype=g.dtype)

    def min_linear_value(self, g: jax.Array) -> jax.Array:
        return jnp.min(g)

    def check_dim(self, d: int) -> None:
        if self.d != d:
            raise ValueError(f"domain dimension mismatch: Simplex has d={self.d}, the problem has d={d}")


Domain = Union[Ball, Box, Simplex]


def check_domain(domain: Any, d: Optional[int] = None) -> Domain:
    """Validate a domain argument (and its dimension against ``d``); a bare number means ``Ball(number)``.

    Args:
        domain: a :class:`Ball`, :class:`Box` or :class:`Simplex`, or a positive number (the radius of a ball).
        d: the dimension to check the domain against (``None``: not checked).

    Returns:
        The domain.

    Raises:
        TypeError: ``domain`` is not a domain or a number.
        ValueError: the dimensions disagree.
    """
    if isinstance(domain, (int, float, np.integer, np.floating)) and not isinstance(domain, (bool, np.bool_)):
        domain = Ball(float(domain))
    if not isinstance(domain, (Ball, Box, Simplex)):
        raise TypeError(f"domain must be a Ball, Box or Simplex (or a positive radius), got {domain!r}")
    if d is not None:
        domain.check_dim(d)
    return domain


def ball_grid(D: float, d: int, m: int):
    """Cell centres of the regular ``m^d`` grid on ``[-D, D]^d`` that lie in the ball of radius ``D``.

    Returns ``(points (M, d) float32, covering_radius, cell_volume)``: a
    data-independent ρ-net of the ball (REAL Thm 3; docs/algorithms/realizable.md#realizable-oco)
    and the volume of each cell (the points carry equal weight ``1/M`` for
    the uniform measure). The covering radius is ``h/2`` for ``d = 1``
    (``h = 2D/m``) and the bound ``1.5 h sqrt(d)`` otherwise (interior points
    are within ``h sqrt(d)/2``; the factor covers the boundary).

    Args:
        D: the radius of the ball.
        d: the dimension.
        m: the grid points per axis.

    Returns:
        ``(points, covering_radius, cell_volume)``: the ``(M, d)`` float32 cell centres in the ball, the covering radius
        ρ and the volume of one cell.

    Raises:
        ValueError: invalid values, more than ``2^22`` grid points, or no point in the ball.
    """
    check_positive("D", D)
    d = check_positive_int("d", d)
    m = check_positive_int("m (grid points per axis)", m, minimum=1)
    if m ** d > 2 ** 22:
        raise ValueError(f"ball_grid: m^d = {m}^{d} points is too many (at most 2^22)")
    h = 2.0 * D / m
    c = -D + h * (np.arange(m) + 0.5)
    pts = np.stack(np.meshgrid(*([c] * d), indexing="ij"), -1).reshape(-1, d)
    pts = pts[np.linalg.norm(pts, axis=1) <= D * (1 + 1e-12)]
    if pts.shape[0] == 0:
        pts = np.zeros((1, d))
    # d = 1: exact. d >= 2: a ball point y, moved by h sqrt(d) toward 0, lies in a cell whose centre is
    # inside the ball and within h sqrt(d)/2 of it, so every point is within 1.5 h sqrt(d) of the net
    rho = h / 2.0 if d == 1 else 1.5 * h * math.sqrt(d)
    return pts.astype(np.float32), float(rho), float(h ** d)
