"""One family of convex domains: ``Ball``, ``Box``, ``Simplex`` and ``Unconstrained`` (docs/guide/concepts.md#notation).

The OCO learners and problems (``jaxdp.oco``) project onto a domain, take its linear minimizer (the exact
comparator of linear losses), its radius and its diameter. The samplers (``jaxdp.samplers``) run a Markov chain in
*chart coordinates* ``y`` of the same objects and need membership, projection and reflection there and the chart
``x = from_chart(y)``. Every domain is a pytree: a ball's radius and a box's bounds are its leaves (they may be
traced and vmapped), its dimension is static. Built from Python numbers (``Ball(1.0)``, ``Box(-1.0, 1.0, d=3)``,
``Simplex(3)``) a domain is hashable, so problems and learners built on it can be cached with
``functools.lru_cache``; the samplers' factories (``ball``, ``box``, ``simplex``, ``unconstrained``) hold the
parameters as arrays of the default float dtype. Each public constructor checks its arguments once (a
``ValueError`` or ``TypeError`` naming the parameter; a traced value is not checked).

* ``Ball(radius, d=None)``: ``{||x||_2 <= radius}``; projection ``x min(1, R/||x||)``, reflection ``r -> 2R - r``.
* ``Box(lo, hi, d=None)``: ``prod_j [lo_j, hi_j]``; projection by clipping, reflection by folding.
* ``Simplex(d)``: ``{x >= 0, sum_j x_j = 1} ⊂ R^d``, which is (d-1)-dimensional. Its chart ``y = x[:d-1]`` ranges
  over the corner simplex ``{y >= 0, sum y <= 1}``, ``x = (y, 1 - sum y)``; the chart is affine, so a density of
  ``x`` w.r.t. the surface measure is, up to a constant, the density of ``y`` w.r.t. Lebesgue measure (no bias).
  Projection: sort-based (Duchi, Shalev-Shwartz, Singer and Chandra, "Efficient Projections onto the l1-Ball for
  Learning in High Dimensions", Fig. 1); reflection through the d facets has no simple closed form and projects.
* ``Unconstrained()``: all of ``R^d``; the chart is the identity for every domain but the simplex.

Projections are post-processing and cost no privacy.
"""
from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, Optional

import jax
import jax.numpy as jnp
import numpy as np

from .validation import check_positive, check_positive_int, is_concrete

__all__ = ["Domain", "Ball", "Box", "Simplex", "Unconstrained", "ball", "box", "simplex", "unconstrained",
           "check_domain", "as_domain", "project_simplex", "ball_grid"]

_TINY = 1e-30
_NUMBER = (int, float, np.integer, np.floating)


def _f(v):
    """``v`` as an array of the default float dtype (the dtype the learners and samplers compute in)."""
    return jnp.asarray(v, jnp.result_type(float))


def _host(v):
    """A Python float when ``v`` is concrete, else ``v`` (traced)."""
    return float(v) if is_concrete(v) else v


def _new(cls, **fields):
    """An instance without the constructor's checks (pytree unflattening; a factory after its own checks)."""
    obj = object.__new__(cls)
    for k, v in fields.items():
        object.__setattr__(obj, k, v)
    return obj


def _pytree(leaves: tuple[str, ...], static: tuple[str, ...]):
    def register(cls):
        jax.tree_util.register_pytree_node(
            cls, lambda o: (tuple(getattr(o, n) for n in leaves), tuple(getattr(o, n) for n in static)),
            lambda aux, ch: _new(cls, **dict(zip(leaves, ch)), **dict(zip(static, aux))))
        return cls
    return register


def project_simplex(x: jax.Array) -> jax.Array:
    """Euclidean projection onto ``{x >= 0, sum x = 1}`` (sort-based; Duchi et al. 2008, Fig. 1).

    Args:
        x: the point(s), the coordinates along the last axis.

    Returns:
        The projection.
    """
    d = x.shape[-1]
    u = jnp.sort(x)[::-1]
    css = jnp.cumsum(u) - 1.0
    ind = jnp.arange(1, d + 1, dtype=x.dtype)
    cond = u - css / ind > 0
    rho = jnp.sum(cond)  # >= 1 always
    theta = css[rho - 1] / rho.astype(x.dtype)
    return jnp.maximum(x - theta, 0.0)


class Domain:
    """A convex domain of this family (:class:`Ball`, :class:`Box`, :class:`Simplex`, :class:`Unconstrained`).

    Every domain has ``project(x)``, ``contains(x, tol=0.0)``, ``reflect(x)`` (in the domain's coordinates),
    ``diameter``, ``radius`` (``max ||x||_2``) and ``check_dim(d)``; the bounded ones also ``minimize_linear(g)``
    (``argmin_{x in X} <g, x>``) and ``min_linear_value(g)``. The samplers use the ``chart_*`` methods, which act
    on chart coordinates ``y`` (here: the identity chart; :class:`Simplex` overrides them).
    """

    if TYPE_CHECKING:
        @property
        def radius(self) -> Any: ...
        @property
        def diameter(self) -> Any: ...
        def contains(self, x: jax.Array, tol: float = 0.0) -> jax.Array: ...
        def project(self, x: jax.Array) -> jax.Array: ...
        def reflect(self, x: jax.Array) -> jax.Array: ...

    def to_chart(self, x: jax.Array) -> jax.Array:
        """Chart coordinates ``y`` of the point ``x``."""
        return x

    def from_chart(self, y: jax.Array) -> jax.Array:
        """The point ``x`` with chart coordinates ``y``."""
        return y

    def chart_dim(self, d: int) -> int:
        """The number of chart coordinates of a point of ``R^d``."""
        return d

    def chart_contains(self, y: jax.Array) -> jax.Array:
        """Membership of the chart point ``y`` (exact, no tolerance)."""
        return self.contains(y)

    def chart_project(self, y: jax.Array) -> jax.Array:
        """Euclidean projection in chart coordinates."""
        return self.project(y)

    def chart_reflect(self, y: jax.Array) -> jax.Array:
        """Reflection at the boundary in chart coordinates."""
        return self.reflect(y)

    def check_dim(self, d: int, what: str = "the problem") -> None:
        """Raise ``ValueError`` if the domain's dimension is known and is not ``d`` (of ``what``)."""
        own = getattr(self, "d", None)
        if own is not None and own != d:
            raise ValueError(f"domain dimension mismatch: {type(self).__name__} has d={own}, {what} has d={d}")


@_pytree(("radius",), ("d",))
@dataclasses.dataclass(frozen=True)
class Ball(Domain):
    """The Euclidean ball ``{x : ||x||_2 <= radius}`` centred at 0 (any dimension unless ``d`` is given).

    Projection ``x min(1, R / ||x||)``; reflection at the sphere ``r -> 2R - r`` (then projection, for
    ``r > 3R``); linear oracle ``-R g / ||g||`` (0 when ``g = 0``).

    Attributes:
        radius: the radius ``R > 0``: a number (kept as a Python float), or an array or a tracer.
        d: the dimension (``None``: any).
    """

    radius: Any
    d: Optional[int] = None

    def __post_init__(self):
        r = self.radius
        if isinstance(r, (bool, np.bool_)) or not isinstance(r, (*_NUMBER, np.ndarray, jax.Array)):
            raise TypeError(f"Ball radius D must be a number, got {r!r} ({type(r).__name__})")
        check_positive("radius (D)", r)
        if isinstance(r, _NUMBER):
            object.__setattr__(self, "radius", float(r))
        if self.d is not None:
            object.__setattr__(self, "d", check_positive_int("d", self.d))

    @property
    def D(self) -> Any:
        """The radius (the OCO modules' name for it)."""
        return self.radius

    @property
    def diameter(self) -> Any:
        """``2 R``."""
        return 2.0 * self.radius

    def contains(self, x: jax.Array, tol: float = 0.0) -> jax.Array:
        """``||x|| <= R (1 + tol)``."""
        r = _f(self.radius) * (1.0 + tol) if tol else _f(self.radius)
        return jnp.sum(x * x) <= r**2

    def project(self, x: jax.Array) -> jax.Array:
        """``x min(1, R / ||x||)``."""
        return x * jnp.minimum(1.0, _f(self.radius) / jnp.maximum(jnp.linalg.norm(x), _TINY))

    def reflect(self, x: jax.Array) -> jax.Array:
        """Radial reflection at the sphere: ``r -> 2R - r`` if ``r > R``, then projection (``r > 3R``)."""
        r, n = _f(self.radius), jnp.sqrt(jnp.sum(x * x))
        return self.project(x * jnp.where(n > r, (2.0 * r - n) / jnp.maximum(n, _TINY), 1.0))

    def minimize_linear(self, g: jax.Array) -> jax.Array:
        """``-R g / ||g||`` (0 when ``g = 0``)."""
        n = jnp.linalg.norm(g)
        return jnp.where(n > 0, -_f(self.radius) * g / jnp.maximum(n, _TINY), jnp.zeros_like(g))

    def min_linear_value(self, g: jax.Array) -> jax.Array:
        """``min_{||x|| <= R} <g, x> = -R ||g||``."""
        return -_f(self.radius) * jnp.linalg.norm(g)


@_pytree(("lo", "hi"), ("d",))
@dataclasses.dataclass(frozen=True)
class Box(Domain):
    """The box ``{x : lo_j <= x_j <= hi_j}``; ``lo``/``hi`` scalars (with ``d``) or length-``d`` sequences.

    Projection: coordinatewise clipping; reflection: every coordinate folded back into ``[lo_j, hi_j]``; linear
    oracle: ``lo_j`` where ``g_j > 0``, else ``hi_j``.

    Attributes:
        lo, hi: the lower and upper bounds (tuples of floats; arrays from :func:`box`).
        d: the dimension (needed when ``lo`` and ``hi`` are scalars; ``None`` only from :func:`box`).
    """

    lo: Any
    hi: Any
    d: Optional[int] = None

    def __post_init__(self):
        lo = np.asarray(self.lo, dtype=np.float64)
        hi = np.asarray(self.hi, dtype=np.float64)
        if lo.ndim > 1 or hi.ndim > 1:
            raise ValueError(f"Box lo and hi must be scalars or 1-D, got shapes {lo.shape}, {hi.shape}")
        d = None if self.d is None else check_positive_int("d", self.d)
        for nm, v in (("lo", lo), ("hi", hi)):
            if not np.all(np.isfinite(v)):
                raise ValueError(f"Box {nm} must be finite, got {v.tolist()!r}")
            if v.ndim == 1:
                if d is not None and v.shape[0] != d:
                    raise ValueError(f"Box {nm} has length {v.shape[0]} but d={d}")
                d = v.shape[0]
        if d is None:
            raise ValueError("Box needs the dimension d when lo and hi are scalars")
        lo, hi = np.broadcast_to(lo, (d,)), np.broadcast_to(hi, (d,))
        if np.any(lo > hi):
            j = int(np.argmax(lo > hi))
            raise ValueError(f"Box needs lo <= hi in every coordinate (an empty set is not a domain), "
                             f"got lo[{j}]={lo[j]!r} > hi[{j}]={hi[j]!r}")
        object.__setattr__(self, "lo", tuple(float(v) for v in lo))
        object.__setattr__(self, "hi", tuple(float(v) for v in hi))
        object.__setattr__(self, "d", int(d))

    def _bounds(self):
        return _f(self.lo), _f(self.hi)

    @property
    def diameter(self) -> Any:
        """``||hi - lo||_2`` (computed in the default float dtype)."""
        lo, hi = self._bounds()
        return _host(jnp.sqrt(jnp.sum((hi - lo) ** 2)))

    @property
    def radius(self) -> Any:
        """``max_{x in X} ||x||_2 = ||max(|lo|, |hi|)||_2`` (a float64 for concrete bounds)."""
        if all(is_concrete(v) for v in jax.tree_util.tree_leaves((self.lo, self.hi))):
            return float(np.linalg.norm(np.maximum(np.abs(np.asarray(self.lo, np.float64)),
                                                   np.abs(np.asarray(self.hi, np.float64)))))
        lo, hi = self._bounds()
        return jnp.linalg.norm(jnp.maximum(jnp.abs(lo), jnp.abs(hi)))

    def contains(self, x: jax.Array, tol: float = 0.0) -> jax.Array:
        """``lo - s <= x <= hi + s`` with ``s = tol max(1, radius)``."""
        lo, hi = self._bounds()
        if tol:
            s = tol * jnp.maximum(1.0, self.radius)
            lo, hi = lo - s, hi + s
        return jnp.all((x >= lo) & (x <= hi))

    def project(self, x: jax.Array) -> jax.Array:
        """Coordinatewise clipping."""
        lo, hi = self._bounds()
        return jnp.clip(x, lo, hi)

    def reflect(self, x: jax.Array) -> jax.Array:
        """Fold every coordinate back into ``[lo, hi]`` (mirror images, any number of reflections)."""
        lo, hi = self._bounds()
        w = hi - lo
        z = jnp.mod(x - lo, 2.0 * w)
        z = jnp.where(z > w, 2.0 * w - z, z)
        return jnp.clip(lo + z, lo, hi)

    def minimize_linear(self, g: jax.Array) -> jax.Array:
        """``lo_j`` where ``g_j > 0``, else ``hi_j``."""
        lo, hi = self._bounds()
        return jnp.where(g > 0, lo, hi)

    def min_linear_value(self, g: jax.Array) -> jax.Array:
        """``sum_j min(g_j lo_j, g_j hi_j)``."""
        lo, hi = self._bounds()
        return jnp.sum(jnp.minimum(g * lo, g * hi))


@_pytree((), ("d",))
@dataclasses.dataclass(frozen=True)
class Simplex(Domain):
    """The probability simplex ``{x in R^d : x >= 0, sum_j x_j = 1}``; chart ``y = x[:d-1]`` (module docstring).

    Linear oracle: the vertex ``e_{argmin g}``.

    Attributes:
        d: the dimension.
    """

    d: int

    def __post_init__(self):
        object.__setattr__(self, "d", check_positive_int("d", self.d))

    @property
    def diameter(self) -> float:
        """``sqrt 2`` (0 for ``d = 1``)."""
        return math.sqrt(2.0) if self.d > 1 else 0.0

    @property
    def radius(self) -> float:
        """1 (the vertices)."""
        return 1.0

    def contains(self, x: jax.Array, tol: float = 0.0) -> jax.Array:
        """``x >= -tol`` and ``|sum x - 1| <= tol d``."""
        return jnp.all(x >= -tol) & (jnp.abs(jnp.sum(x) - 1.0) <= tol * self.d)

    def project(self, x: jax.Array) -> jax.Array:
        """:func:`project_simplex`."""
        return project_simplex(x)

    def reflect(self, x: jax.Array) -> jax.Array:
        """The projection (no simple closed form for reflection through the d facets: a documented bias)."""
        return project_simplex(x)

    def minimize_linear(self, g: jax.Array) -> jax.Array:
        """The vertex ``e_{argmin g}``."""
        return jax.nn.one_hot(jnp.argmin(g), self.d, dtype=g.dtype)

    def min_linear_value(self, g: jax.Array) -> jax.Array:
        """``min_j g_j``."""
        return jnp.min(g)

    def to_chart(self, x: jax.Array) -> jax.Array:
        """``x[..., :d-1]``."""
        return x[..., : self.d - 1]

    def from_chart(self, y: jax.Array) -> jax.Array:
        """``(y, 1 - sum y)``."""
        # the clip only removes round-off (|1 - sum y| < ulp) after a projection
        return jnp.concatenate([y, jnp.maximum(1.0 - jnp.sum(y, axis=-1, keepdims=True), 0.0)], axis=-1)

    def chart_dim(self, d: int) -> int:
        """``d - 1``."""
        return d - 1

    def chart_contains(self, y: jax.Array) -> jax.Array:
        """``y >= 0`` and ``sum y <= 1`` (the corner simplex)."""
        return jnp.all(y >= 0) & (jnp.sum(y) <= 1.0)

    def chart_project(self, y: jax.Array) -> jax.Array:
        """The chart of the projection of ``(y, 1 - sum y)``."""
        return self.to_chart(project_simplex(jnp.concatenate([y, 1.0 - jnp.sum(y, axis=-1, keepdims=True)], -1)))

    def chart_reflect(self, y: jax.Array) -> jax.Array:
        """:meth:`chart_project` (see :meth:`reflect`)."""
        return self.chart_project(y)


@_pytree((), ())
@dataclasses.dataclass(frozen=True)
class Unconstrained(Domain):
    """All of ``R^d`` (for the samplers, e.g. the tests against blackjax)."""

    diameter = math.inf
    radius = math.inf

    def contains(self, x: jax.Array, tol: float = 0.0) -> jax.Array:
        """Always true."""
        return jnp.bool_(True)

    def project(self, x: jax.Array) -> jax.Array:
        """``x``."""
        return x

    def reflect(self, x: jax.Array) -> jax.Array:
        """``x``."""
        return x


def ball(radius: Any) -> Ball:
    """The Euclidean ball ``{||x|| <= radius}``, its radius an array of the default float dtype (may be traced).

    Args:
        radius: the radius (> 0; may be traced).

    Returns:
        A :class:`Ball`.
    """
    check_positive("radius", radius)
    return _new(Ball, radius=_f(radius), d=None)


def box(lo: Any, hi: Any) -> Box:
    """The box ``prod_i [lo_i, hi_i]`` (``lo < hi`` elementwise; scalars broadcast; may be traced).

    Args:
        lo, hi: the bounds (``lo < hi`` elementwise; scalars broadcast).

    Returns:
        A :class:`Box` (its ``d`` is ``None`` for scalar bounds).
    """
    if is_concrete(lo) and is_concrete(hi):
        lo_a, hi_a = np.asarray(lo), np.asarray(hi)
        if not (np.all(np.isfinite(lo_a)) and np.all(np.isfinite(hi_a))):
            raise ValueError(f"box bounds must be finite, got lo={lo!r}, hi={hi!r}")
        if np.any(hi_a <= lo_a):
            raise ValueError(f"box needs lo < hi elementwise, got lo={lo!r}, hi={hi!r}")
    lo_f, hi_f = _f(lo), _f(hi)
    shape = jnp.broadcast_shapes(lo_f.shape, hi_f.shape)
    return _new(Box, lo=lo_f, hi=hi_f, d=shape[0] if len(shape) == 1 else None)


def simplex(d: int) -> Simplex:
    """The probability simplex in ``R^d`` (``d >= 2``: the samplers' chart has ``d - 1 >= 1`` coordinates).

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


def check_domain(domain: Any, d: Optional[int] = None, *, unbounded: bool = False) -> Domain:
    """Check a domain argument (and its dimension against ``d``); a bare number means ``Ball(number)``.

    Args:
        domain: a :class:`Ball`, :class:`Box` or :class:`Simplex`, or a positive number (the radius of a ball);
            with ``unbounded``, also :class:`Unconstrained` or ``None`` (meaning ``Unconstrained()``).
        d: the dimension to check the domain against (``None``: not checked).
        unbounded: accept the unconstrained domain (the samplers do; the OCO problems need a bounded one).

    Returns:
        The domain.

    Raises:
        TypeError: ``domain`` is not a domain or a number.
        ValueError: the dimensions disagree.
    """
    if domain is None and unbounded:
        return Unconstrained()
    if isinstance(domain, _NUMBER) and not isinstance(domain, (bool, np.bool_)):
        domain = Ball(float(domain))
    if not isinstance(domain, Domain) or (isinstance(domain, Unconstrained) and not unbounded):
        allowed = "a Ball, Box, Simplex or Unconstrained (or None)" if unbounded else "a Ball, Box or Simplex"
        raise TypeError(f"domain must be {allowed} (or a positive radius), got {domain!r}")
    if d is not None:
        domain.check_dim(d)
    return domain


def as_domain(domain: Any) -> Domain:
    """The samplers' reading of a domain argument: ``check_domain(domain, unbounded=True)`` (``None`` is ``R^d``).

    Args:
        domain: ``None`` or a domain of this module.

    Returns:
        The domain.
    """
    return check_domain(domain, unbounded=True)


def ball_grid(D: float, d: int, m: int) -> tuple[np.ndarray, float, float]:
    """Cell centres of the regular ``m^d`` grid on ``[-D, D]^d`` that lie in the ball of radius ``D``.

    A data-independent ρ-net of the ball (REAL Thm 3; docs/algorithms/realizable.md#realizable-oco); the points
    carry equal weight ``1/M`` for the uniform measure. The covering radius is ``h/2`` for ``d = 1``
    (``h = 2D/m``) and the bound ``1.5 h sqrt(d)`` otherwise (interior points are within ``h sqrt(d)/2``; the
    factor covers the boundary).

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
