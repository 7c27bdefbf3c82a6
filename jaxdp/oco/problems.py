"""OCO problems: how a revealed loss acts on an action, and the comparator.

Each constructor returns a ``jaxdp.core.Problem`` (cached, so ``simulate``'s
compile cache hits) and records its constants — Lipschitz constant ``L`` and
smoothness ``beta`` on the domain, non-negativity, how the comparator is
computed and its error — retrievable with :func:`problem_info`.

Loss families (``x`` in a convex domain ``X``, see ``jaxdp.core.domains``):

=============  ====================================  ===========================  ==================================
family         loss revealed / value                 constants on ``X``           comparator ``min_x sum_t l_t(x)``
=============  ====================================  ===========================  ==================================
linear         ``g``;  ``<g, x>``                     ``L = g_max``, ``beta = 0``  exact: ``min_x <G, x>``, ``G = sum g``
squared        ``(a, b)``; ``(<a,x> - b)^2 / 2``      ``L = a(aR + b)``, ``a^2``   constrained least squares from
                                                                                   ``(sum a a^T, sum a b, sum b^2)``
absolute       ``(a, b)``; ``|<a,x> - b|``            ``L = a_max``, not smooth    buffer + net (below)
hinge          ``(a, y)``; ``max(0, 1 - y<a,x>)``     ``L = a_max``, not smooth    buffer + net
logistic       ``(a, y)``; ``log(1 + e^{-y<a,x>})``   ``L = a_max``, ``a^2/4``     buffer + net
=============  ====================================  ===========================  ==================================

``(a, b)`` losses are :class:`ABLoss` pytrees. Squared loss is non-negative and realizable when some
``x*`` in ``X`` has ``<a_t, x*> = b_t`` for every ``t`` (``adv_smooth_realizable``). The comparator
statistics are compensated (Kahan) sums (``jaxdp.core.accumulate``), accurate to a few ulps at
``T = 10^7`` in float32.

**Squared comparator** (:func:`lstsq_constrained`): ``sum_t l_t(x) = (x^T A x - 2 c^T x + s)/2`` with
``A = sum a a^T``, ``c = sum a b``, ``s = sum b^2``. On a ball the minimizer is ``x(mu) = (A + mu I)^{-1} c``
with ``mu = 0`` if the minimum-norm unconstrained solution lies inside, else the ``mu > 0`` with
``||x(mu)|| = R`` (the secular equation; ``A`` is PSD so there is no "hard case"): exact to floating
point. On a box or simplex: accelerated projected gradient (FISTA), an upper bound on the minimum. The
value is clamped at 0 (in the realizable case the float32 statistics cancel to ``O(1e-7 * s)``).

**Comparator without sufficient statistics (absolute, hinge, logistic).** The smaller of two upper
bounds (values of feasible points, so regret is never over-estimated by more than their error):
(1) while ``t <= n_buffer``, the exact problem over a buffer of the first ``n_buffer`` losses, solved by
``n_iter`` normalized projected subgradient steps of length ``2 rho / sqrt(k+1)`` from the best net point
(best iterate; about 1% optimization error in the tests); (2) cumulative losses at a fixed net of
``M`` points (:func:`net_points`): ``min_j sum_t l_t(z_j) - min_x sum_t l_t(x) <= T * L * rho``, with
``rho`` the covering radius of the net (``net_covering_radius`` in the info).
"""
from __future__ import annotations

import dataclasses
import functools
import math
from typing import Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from ..core.accumulate import kahan_add, packed_add, packed_total, packed_zeros
from ..core.types import fdt, Problem
from ..core.validation import check_positive, check_positive_int, check_nonneg
from ..core.domains import Ball, Box, Domain, check_domain

__all__ = [
    "ABLoss", "SquaredStats", "BufferStats", "ProblemInfo", "problem_info",
    "linear_problem", "squared_problem", "absolute_problem", "hinge_problem", "logistic_problem",
    "lstsq_constrained", "net_points",
]


class ABLoss(NamedTuple):
    """A loss revealed as a feature vector ``a`` (d,) and a target/label ``b`` (scalar).

    Attributes:
        a: the ``(d,)`` feature vector.
        b: the scalar target or label.
    """

    a: jax.Array
    b: jax.Array


class SquaredStats(NamedTuple):
    """Sufficient statistics of the squared losses (:func:`squared_problem`).

    Attributes:
        AA: the ``(d, d)`` sum of ``a a^T``.
        Ab: the ``(d,)`` sum of ``a b``.
        bb: the scalar sum of ``b^2``.
    """
    AA: jax.Array   # (d, d) sum a a^T
    Ab: jax.Array   # (d,)   sum a b
    bb: jax.Array   # ()     sum b^2


class BufferStats(NamedTuple):
    """Comparator statistics of the buffer+net problems (absolute, hinge, logistic).

    Attributes:
        a: the ``(n_buffer, d)`` first ``n_buffer`` feature vectors.
        b: the ``(n_buffer,)`` targets.
        count: the number of losses seen (int32).
        net_cum: the ``(M,)`` cumulative loss at the net points.
        net_cum_c: the Kahan compensation of ``net_cum`` (:mod:`jaxdp.core.accumulate`), or ``None``.
    """
    a: jax.Array        # (n_buffer, d) the first n_buffer feature vectors
    b: jax.Array        # (n_buffer,)   their targets
    count: jax.Array    # type: ignore[assignment]  # int32, losses seen (shadows tuple.count)
    net_cum: jax.Array  # (M,) cumulative loss at the net points
    net_cum_c: Optional[jax.Array] = None  # (M,) its Kahan compensation (jaxdp.core.accumulate)


@dataclasses.dataclass(frozen=True)
class ProblemInfo:
    """Constants of an OCO problem (host values).

    Attributes:
        name: the problem's name (``"linear"``, ``"squared"``, ...).
        d: the dimension.
        domain: the domain.
        lipschitz: ``L`` with ``||grad l(x)|| <= L`` on the domain for losses within the stated bounds.
        smoothness: ``beta`` (0 for linear, ``inf`` for non-smooth).
        nonneg: the losses are >= 0 (needed by REAL Thm 4).
        comparator: ``"exact"``, ``"lstsq"`` or ``"buffer+net"``.
        loss_bound: a bound on one loss on the domain.
        net_covering_radius: ``rho`` of the net (buffer+net only).
        n_buffer: the rows kept by the buffer (buffer+net only).
    """

    name: str
    d: int
    domain: Domain
    lipschitz: float
    smoothness: float
    nonneg: bool
    comparator: str
    loss_bound: float = math.inf
    net_covering_radius: float = 0.0
    n_buffer: int = 0


_INFO: dict = {}


def problem_info(problem: Problem) -> ProblemInfo:
    """The :class:`ProblemInfo` of a problem built by this module.

    Args:
        problem: a problem built by this module.

    Returns:
        Its :class:`ProblemInfo`.

    Raises:
        ValueError: the problem was not built by this module.
    """
    try:
        return _INFO[problem]
    except (KeyError, TypeError):
        raise ValueError("problem_info: not an OCO problem built by jaxdp.oco.problems") from None


def _register(problem: Problem, info: ProblemInfo) -> Problem:
    _INFO[problem] = info
    return problem


def _problem(value, grad, stats_init, stats_update, solve) -> Problem:
    """A :class:`Problem` whose comparator action and value are ``solve(stats) -> (x, value)``."""
    return Problem(value=value, grad=grad, stats_init=stats_init, stats_update=stats_update,
                   best=lambda st: solve(st)[1], best_action=lambda st: solve(st)[0])


def _check_d_domain(d, radius, domain):
    """The checked dimension ``d`` and the domain: ``domain``, or the ball of radius ``radius``."""
    d = check_positive_int("d", d)
    return d, check_domain(radius if domain is None else domain, d)


# --------------------------------------------------------------------------- linear


@functools.lru_cache(maxsize=None)
def linear_problem(d: int, radius: float = 1.0, *, domain: Optional[Domain] = None, g_max: float = 1.0) -> Problem:
    """Linear losses ``l_t(x) = <g_t, x>`` on a ball of radius ``radius`` (or any ``domain``).

    Comparator from ``G = sum_t g_t``: ``min_x <G, x>`` by the domain's linear
    oracle, exact (``-radius * ||G||`` on the ball). ``L = g_max`` (the bound
    on ``||g_t||`` the adversary promises), ``beta = 0``.

    Args:
        d: the dimension.
        radius: the radius of the ball domain.
        domain: a domain (:class:`Ball`, :class:`Box` or :class:`Simplex`); ``None``: the ball of radius ``radius``.
        g_max: the bound ``L`` on ``||g_t||``.

    Returns:
        The :class:`jaxdp.core.Problem` (its constants in :func:`problem_info`).
    """
    d, domain = _check_d_domain(d, radius, domain)
    check_positive("g_max", g_max)

    def value(g, x):
        return jnp.dot(g, x)

    def grad(g, x):
        return g

    def stats_init(g):
        return packed_zeros(jnp.zeros(jnp.shape(g)), fdt())

    def solve(G):
        return domain.minimize_linear(packed_total(G)), domain.min_linear_value(packed_total(G))

    p = _problem(value, grad, stats_init, packed_add, solve)
    return _register(p, ProblemInfo("linear", d, domain, float(g_max), 0.0, False, "exact",
                                    loss_bound=float(g_max) * domain.radius))


# --------------------------------------------------------------------------- squared


def lstsq_constrained(AA, Ab, bb, domain: Domain, n_iter: int = 100):
    """``argmin_{x in X} (x^T A x - 2 c^T x + s)/2`` and its value (jittable; see module docstring).

    Ball: eigendecomposition + ``n_iter`` bisection steps on the secular
    equation (exact to round-off). Box/simplex: ``n_iter`` FISTA steps.

    Args:
        AA, Ab, bb: the sufficient statistics ``A``, ``c`` and ``s`` (:class:`SquaredStats`).
        domain: the domain ``X``.
        n_iter: the bisection or FISTA steps.

    Returns:
        ``(x, value)``: the minimizer and the minimum.
    """
    dt = AA.dtype
    w, V = jnp.linalg.eigh(0.5 * (AA + AA.T))
    w = jnp.maximum(w, 0.0)
    cp = V.T @ Ab
    wmax = jnp.max(w)
    tol = jnp.maximum(wmax, 1e-30) * (32 * jnp.finfo(dt).eps)
    pos = w > tol
    x0p = jnp.where(pos, cp / jnp.where(pos, w, 1.0), 0.0)       # minimum-norm LS solution (eigenbasis)

    def fval_p(xp):
        return 0.5 * (jnp.sum(w * xp * xp) - 2.0 * jnp.dot(cp, xp) + bb)

    if isinstance(domain, Ball):
        R = domain.D
        inside = jnp.sum(x0p * x0p) <= R * R

        def norm2(mu):
            return jnp.sum((cp / (w + mu)) ** 2)

        hi = jnp.linalg.norm(cp) / R + 1e-30

        def bis(_, lohi):
            lo, hi_ = lohi
            mid = 0.5 * (lo + hi_)
            big = norm2(mid) > R * R
            return jnp.where(big, mid, lo), jnp.where(big, hi_, mid)

        lo, hi = jax.lax.fori_loop(0, n_iter, bis, (jnp.zeros((), dt), hi))
        xp_b = cp / (w + hi)                      # hi side: ||x|| <= R (feasible)
        xp = jnp.where(inside, x0p, xp_b)
        x = V @ xp
        x = domain.project(x)
        return x, jnp.maximum(fval_p(V.T @ x), 0.0)

    # box / simplex: FISTA from the projected least-squares point
    step = 1.0 / jnp.maximum(wmax, 1e-30)

    def gradf(x):
        return AA @ x - Ab

    x_init = domain.project(V @ x0p)

    def body(k, carry):
        x, y, tk = carry
        xn = domain.project(y - step * gradf(y))
        tn = 0.5 * (1.0 + jnp.sqrt(1.0 + 4.0 * tk * tk))
        yn = xn + ((tk - 1.0) / tn) * (xn - x)
        return xn, yn, tn

    x, _, _ = jax.lax.fori_loop(0, n_iter, body, (x_init, x_init, jnp.ones((), dt)))
    return x, jnp.maximum(fval_p(V.T @ x), 0.0)


@functools.lru_cache(maxsize=None)
def squared_problem(d: int, radius: float = 1.0, *, domain: Optional[Domain] = None, a_max: float = 1.0,
                    b_max: Optional[float] = None, n_iter: int = 100) -> Problem:
    """Squared losses ``l_t(x) = (<a_t, x> - b_t)^2 / 2``, loss ``ABLoss(a, b)``.

    Non-negative, convex, ``beta = a_max^2``-smooth and ``L = a_max (a_max R +
    b_max)``-Lipschitz on a domain of radius ``R`` (``b_max`` defaults to
    ``a_max R``, the realizable case ``b = <a, x*>``; REAL Lemma 4.1 then gives
    ``||grad l||^2 <= 4 beta l``). Comparator: constrained least squares from
    the sufficient statistics ``(sum a a^T, sum a b, sum b^2)``
    (:func:`lstsq_constrained`, ``n_iter`` bisection/FISTA steps).

    Args:
        d, radius, domain: as in :func:`linear_problem`.
        a_max: the bound on ``||a_t||``.
        b_max: the bound on ``|b_t|`` (``None``: ``a_max R``).
        n_iter: the bisection or FISTA steps of :func:`lstsq_constrained`.

    Returns:
        The :class:`jaxdp.core.Problem` (its constants in :func:`problem_info`).
    """
    d, domain = _check_d_domain(d, radius, domain)
    check_positive("a_max", a_max)
    R = domain.radius
    if b_max is None:
        b_max = a_max * R
    check_nonneg("b_max", b_max)
    n_iter = check_positive_int("n_iter", n_iter)

    def value(loss, x):
        r = jnp.dot(loss.a, x) - loss.b
        return 0.5 * r * r

    def grad(loss, x):
        return (jnp.dot(loss.a, x) - loss.b) * loss.a

    def stats_init(loss):
        f = fdt()
        return packed_zeros(SquaredStats(AA=jnp.zeros((d, d), f), Ab=jnp.zeros((d,), f), bb=jnp.zeros((), f)))

    def stats_update(cst, loss):
        a = jnp.asarray(loss.a, fdt())
        b = jnp.asarray(loss.b, fdt())
        return packed_add(cst, SquaredStats(AA=jnp.outer(a, a), Ab=a * b, bb=b * b))

    def solve(cst):
        st = packed_total(cst)
        return lstsq_constrained(st.AA, st.Ab, st.bb, domain, n_iter)

    p = _problem(value, grad, stats_init, stats_update, solve)
    L = float(a_max) * (float(a_max) * R + float(b_max))
    return _register(p, ProblemInfo("squared", d, domain, L, float(a_max) ** 2, True, "lstsq",
                                    loss_bound=0.5 * (float(a_max) * R + float(b_max)) ** 2))


# --------------------------------------------------------------------------- buffer + net comparator


def net_points(domain: Domain, d: int, M: int) -> tuple[np.ndarray, float]:
    """A fixed net of about ``M`` points of ``domain`` (host float32) and its covering radius.

    ``d <= 2``: the regular grid with ``m = round(M^{1/d})`` points per axis on
    the bounding box, projected onto the domain; covering radius
    ``<= (h/2) sqrt(d)`` with ``h`` the grid spacing. ``d > 2``: ``M`` fixed
    pseudo-random points (seed 0) of the bounding box projected onto the
    domain, plus the origin's projection; the covering radius is then only
    estimated (by 4096 random probes) and reported as such.

    Args:
        domain: the domain.
        d: the dimension.
        M: about how many points.

    Returns:
        ``(points, covering_radius)``: the ``(M', d)`` float32 points and the covering radius (estimated for ``d > 2``).
    """
    if isinstance(domain, Ball):
        lo, hi = -np.full(d, domain.D), np.full(d, domain.D)
    elif isinstance(domain, Box):
        lo, hi = np.asarray(domain.lo), np.asarray(domain.hi)
    else:
        lo, hi = np.zeros(d), np.ones(d)
    proj = jax.jit(jax.vmap(domain.project))
    if d <= 2:
        m = max(2, int(round(M ** (1.0 / d))))
        axes = [np.linspace(lo[j], hi[j], m) for j in range(d)]
        pts = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, d)
        h = float(np.max((hi - lo) / (m - 1)))
        rho = 0.5 * h * math.sqrt(d)
        pts = np.asarray(proj(jnp.asarray(pts, jnp.float32)), np.float64)
        # a projected grid covers the domain at least as well as the grid covers the box
        return pts.astype(np.float32), rho
    rng = np.random.default_rng(0)
    pts = lo + (hi - lo) * rng.random((M - 1, d))
    pts = np.concatenate([np.zeros((1, d)), pts])
    pts = np.asarray(proj(jnp.asarray(pts, jnp.float32)), np.float64)
    probes = np.asarray(proj(jnp.asarray(lo + (hi - lo) * rng.random((4096, d)), jnp.float32)), np.float64)
    dist = np.sqrt(((probes[:, None, :] - pts[None, :, :]) ** 2).sum(-1)).min(1)
    return pts.astype(np.float32), float(dist.max())


def _buffer_problem(name: str, d: int, domain: Domain, lval: Callable, lgrad: Callable, L: float, beta: float,
                    nonneg: bool, n_buffer: int, n_net: int, n_iter: int, loss_bound: float) -> Problem:
    pts_np, rho = net_points(domain, d, n_net)
    pts = jnp.asarray(pts_np)
    M = pts.shape[0]
    r0 = max(float(rho), 1e-3 * domain.radius)

    def value(loss, x):
        return lval(jnp.dot(loss.a, x), loss.b)

    def grad(loss, x):
        return lgrad(jnp.dot(loss.a, x), loss.b) * loss.a

    def stats_init(loss):
        f = fdt()
        return BufferStats(a=jnp.zeros((n_buffer, d), f), b=jnp.zeros((n_buffer,), f),
                           count=jnp.zeros((), jnp.int32), net_cum=jnp.zeros((M,), f), net_cum_c=jnp.zeros((M,), f))

    def stats_update(st, loss):
        a = jnp.asarray(loss.a, st.net_cum.dtype)
        b = jnp.asarray(loss.b, st.net_cum.dtype)
        net_cum, net_cum_c = kahan_add(st.net_cum, st.net_cum_c, lval(pts @ a, b))
        if n_buffer > 0:
            i = jnp.minimum(st.count, n_buffer - 1)
            keep = st.count < n_buffer
            A = jnp.where(keep, st.a.at[i].set(a), st.a)
            B = jnp.where(keep, st.b.at[i].set(b), st.b)
        else:
            A, B = st.a, st.b
        return BufferStats(a=A, b=B, count=st.count + 1, net_cum=net_cum, net_cum_c=net_cum_c)

    def _solve(st):
        mask = (jnp.arange(n_buffer) < st.count).astype(st.net_cum.dtype)

        def total(x):
            return jnp.sum(mask * lval(st.a @ x, st.b))

        def tgrad(x):
            return (mask * lgrad(st.a @ x, st.b)) @ st.a

        j0 = jnp.argmin(st.net_cum)
        x0 = pts[j0]
        f0 = total(x0)

        # normalized subgradient steps of length 2 rho / sqrt(k+1), started at the best net point
        # (within the net's covering radius rho of every point); the best iterate is kept
        def body(k, carry):
            x, bx, bf = carry
            g = tgrad(x)
            g = g / jnp.maximum(jnp.linalg.norm(g), 1e-30)
            x = domain.project(x - (2.0 * r0) / jnp.sqrt(k + 1.0) * g)
            f = total(x)
            better = f < bf
            return x, jnp.where(better, x, bx), jnp.where(better, f, bf)

        _, bx, bf = jax.lax.fori_loop(0, n_iter, body, (x0, x0, f0))
        return bx, bf

    def best_and_action(st):
        net_cum = st.net_cum - st.net_cum_c
        j = jnp.argmin(net_cum)
        net_best, net_x = net_cum[j], pts[j]
        if n_buffer == 0:
            return net_x, net_best
        bx, bf = _solve(st)
        use_buf = (st.count <= n_buffer) & (bf < net_best)
        return jnp.where(use_buf, bx, net_x), jnp.where(use_buf, bf, net_best)

    p = _problem(value, grad, stats_init, stats_update, best_and_action)
    return _register(p, ProblemInfo(name, d, domain, float(L), float(beta), nonneg, "buffer+net",
                                    loss_bound=loss_bound, net_covering_radius=float(rho), n_buffer=n_buffer))


def _check_buffer_args(n_buffer, n_net, n_iter):
    n_buffer = check_positive_int("n_buffer", n_buffer, minimum=0)
    n_net = check_positive_int("n_net", n_net, minimum=2)
    n_iter = check_positive_int("n_iter", n_iter)
    return n_buffer, n_net, n_iter


def _check_label_args(d, radius, domain, a_max, n_buffer, n_net, n_iter):
    """The checks of :func:`hinge_problem` and :func:`logistic_problem`: ``(d, domain, n_buffer, n_net, n_iter)``."""
    d, domain = _check_d_domain(d, radius, domain)
    check_positive("a_max", a_max)
    return (d, domain, *_check_buffer_args(n_buffer, n_net, n_iter))


@functools.lru_cache(maxsize=None)
def absolute_problem(d: int, radius: float = 1.0, *, domain: Optional[Domain] = None, a_max: float = 1.0,
                     b_max: Optional[float] = None, n_buffer: int = 256, n_net: int = 1024,
                     n_iter: int = 200) -> Problem:
    """Absolute losses ``l_t(x) = |<a_t, x> - b_t|`` (``ABLoss(a, b)``): convex, non-negative,
    ``L = a_max``-Lipschitz, not smooth (subgradient ``sign(r) a``, 0 at the kink).
    Comparator: buffer + net (module docstring).

    Args:
        d, radius, domain, a_max: as in :func:`squared_problem`.
        b_max: the bound on ``|b_t|`` (``None``: ``a_max`` times the radius).
        n_buffer: the number of ``(a, b)`` rows kept for the comparator.
        n_net: about how many net points the comparator evaluates (:func:`net_points`).
        n_iter: the iterations of the comparator's solver.

    Returns:
        The :class:`jaxdp.core.Problem` (its constants in :func:`problem_info`).
    """
    d, domain = _check_d_domain(d, radius, domain)
    check_positive("a_max", a_max)
    b_max = a_max * domain.radius if b_max is None else b_max
    check_nonneg("b_max", b_max)
    n_buffer, n_net, n_iter = _check_buffer_args(n_buffer, n_net, n_iter)
    return _buffer_problem("absolute", d, domain, lambda m, b: jnp.abs(m - b), lambda m, b: jnp.sign(m - b),
                           float(a_max), math.inf, True, n_buffer, n_net, n_iter,
                           float(a_max) * domain.radius + float(b_max))


@functools.lru_cache(maxsize=None)
def hinge_problem(d: int, radius: float = 1.0, *, domain: Optional[Domain] = None, a_max: float = 1.0,
                  n_buffer: int = 256, n_net: int = 1024, n_iter: int = 200) -> Problem:
    """Hinge losses ``l_t(x) = max(0, 1 - y_t <a_t, x>)`` (``ABLoss(a, y)``, ``y in {-1, +1}``):
    convex, non-negative, ``L = a_max``-Lipschitz, not smooth (subgradient ``-y a 1[y<a,x> < 1]``).
    Comparator: buffer + net.

    Args:
        d, radius, domain, a_max, n_buffer, n_net, n_iter: as in :func:`absolute_problem`.

    Returns:
        The :class:`jaxdp.core.Problem` (its constants in :func:`problem_info`).
    """
    d, domain, n_buffer, n_net, n_iter = _check_label_args(d, radius, domain, a_max, n_buffer, n_net, n_iter)
    return _buffer_problem("hinge", d, domain, lambda m, y: jnp.maximum(0.0, 1.0 - y * m),
                           lambda m, y: jnp.where(y * m < 1.0, -y, 0.0),
                           float(a_max), math.inf, True, n_buffer, n_net, n_iter,
                           1.0 + float(a_max) * domain.radius)


@functools.lru_cache(maxsize=None)
def logistic_problem(d: int, radius: float = 1.0, *, domain: Optional[Domain] = None, a_max: float = 1.0,
                     n_buffer: int = 256, n_net: int = 1024, n_iter: int = 200) -> Problem:
    """Logistic losses ``l_t(x) = log(1 + exp(-y_t <a_t, x>))`` (``ABLoss(a, y)``, ``y in {-1, +1}``):
    convex, non-negative, ``L = a_max``, ``beta = a_max^2 / 4``. Never realizable (``l > 0``).
    Comparator: buffer + net (the cumulative loss has no finite sufficient statistics).

    Args:
        d, radius, domain, a_max, n_buffer, n_net, n_iter: as in :func:`absolute_problem`.

    Returns:
        The :class:`jaxdp.core.Problem` (its constants in :func:`problem_info`).
    """
    d, domain, n_buffer, n_net, n_iter = _check_label_args(d, radius, domain, a_max, n_buffer, n_net, n_iter)
    return _buffer_problem("logistic", d, domain, lambda m, y: jax.nn.softplus(-y * m),
                           lambda m, y: -y * jax.nn.sigmoid(-y * m),
                           float(a_max), float(a_max) ** 2 / 4.0, True, n_buffer, n_net, n_iter,
                           math.log1p(math.exp(float(a_max) * domain.radius)))
