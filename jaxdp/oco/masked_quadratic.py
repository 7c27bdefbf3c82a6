"""A smooth realizable DP-OCO instance whose difficulty grows with d (docs/algorithms/realizable-findings.md#oco).

``adv_smooth_realizable`` draws ``a_t`` uniform on the sphere, so ``E[a a^T] = I/d``: the
curvature per direction falls like ``1/d`` and the privacy noise ``b_t`` of DP-FTRL costs
``E <a_t, b_t>^2 / (2 lambda^2) = E||b_t||^2 / (2 d lambda^2)``, independent of ``d``. The
``d^{1/3}`` of REAL Thm 4 (docs/algorithms/realizable.md#dp-ftrl)
comes from ``E||b_t||^2 = d H sigma^2``; it can only show on losses with curvature in every
direction. Here

    l_t(x) = 1/2 sum_j m_tj (x_j - c_j)^2,      m_tj ~ Bernoulli(1/2) i.i.d.,   ||c|| = D/2,

non-negative, convex, 1-smooth (Hessian ``diag(m_t) <= I``), ``(3D/2 <= 2D)``-Lipschitz on the
ball of radius ``D``, realizable (``l_t(c) = 0``), with ``E[diag(m_t)] = I/2``: a perturbation
``b/lambda`` of the iterate costs ``||b||^2/(4 lambda^2)``, which grows like ``d``. Balancing
``lambda D^2`` against ``T d H sigma^2 / lambda^2`` gives regret ``~ (T d H sigma^2)^{1/3} D^{4/3}``:
slope 1/3 in ``d``.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..core.types import Adversary, fdt, Problem
from ..core.validation import check_positive, check_positive_int, check_probability
from ..core.domains import check_domain
from .problems import ProblemInfo, _problem, _register

__all__ = ["MaskedLoss", "MaskedStats", "masked_quadratic_problem", "MaskedQuadraticParams",
           "masked_quadratic_params", "adv_masked_quadratic"]


class MaskedLoss(NamedTuple):
    """One round's loss ``l(x) = 1/2 sum_j m_j (x_j - c_j)^2``.

    Attributes:
        m: the ``(d,)`` weights in ``[0, 1]`` (here a ``{0, 1}`` mask of the coordinates that count this round).
        c: the ``(d,)`` centre, the planted minimizer (``l(c) = 0``).
    """
    m: jax.Array   # (d,) weights in [0, 1] (here a {0, 1} mask)
    c: jax.Array   # (d,) centre (the planted minimizer)


class MaskedStats(NamedTuple):
    """Sufficient statistics of the losses so far, from which the comparator's loss is computed exactly.

    The cumulative loss is ``1/2 sum_j M_j x_j^2 - sum_j S_j x_j + Q/2``.

    Attributes:
        M: ``(d,)``, ``sum_t m_t``.
        S: ``(d,)``, ``sum_t m_t c_t`` (elementwise products).
        Q: scalar, ``sum_t sum_j m_tj c_tj^2``.
    """
    M: jax.Array   # (d,) sum_t m_t
    S: jax.Array   # (d,) sum_t m_t c_t
    Q: jax.Array   # () sum_t sum_j m_tj c_tj^2


@functools.lru_cache(maxsize=None)
def masked_quadratic_problem(d: int, radius: float = 1.0, n_iter: int = 60) -> Problem:
    """Losses ``l(x) = 1/2 sum_j m_j (x_j - c_j)^2`` on the ball of radius ``radius``.

    Comparator: ``min_{||x|| <= R} 1/2 sum_j M_j x_j^2 - S_j x_j + Q/2`` from the sufficient
    statistics (diagonal, so the constrained minimizer is ``x_j = S_j/(M_j + mu)`` with ``mu >= 0``
    found by ``n_iter`` bisection steps).

    Args:
        d: the dimension.
        radius: the ball's radius ``R``.
        n_iter: bisection steps for the comparator's multiplier ``mu``.

    Returns:
        The :class:`~jaxdp.core.Problem`.
    """
    d = check_positive_int("d", d)
    domain = check_domain(radius, d)
    R = float(domain.radius)
    n_iter = check_positive_int("n_iter", n_iter)

    def value(loss, x):
        r = x - loss.c
        return 0.5 * jnp.sum(loss.m * r * r)

    def grad(loss, x):
        return loss.m * (x - loss.c)

    def stats_init(loss):
        f = fdt()
        return MaskedStats(M=jnp.zeros((d,), f), S=jnp.zeros((d,), f), Q=jnp.zeros((), f))

    def stats_update(st, loss):
        m = jnp.asarray(loss.m, st.M.dtype)
        c = jnp.asarray(loss.c, st.M.dtype)
        return MaskedStats(M=st.M + m, S=st.S + m * c, Q=st.Q + jnp.sum(m * c * c))

    def _x(st, mu):
        den = st.M + mu
        return jnp.where(den > 0, st.S / jnp.maximum(den, 1e-30), 0.0)

    def solve(st):
        x0 = _x(st, 0.0)
        hi0 = jnp.linalg.norm(st.S) / R + 1.0

        def body(_, lh):
            lo, hi = lh
            mid = 0.5 * (lo + hi)
            inside = jnp.linalg.norm(_x(st, mid)) <= R
            return jnp.where(inside, lo, mid), jnp.where(inside, mid, hi)

        _, hi = jax.lax.fori_loop(0, n_iter, body, (jnp.zeros((), x0.dtype), hi0))
        x = jnp.where(jnp.linalg.norm(x0) <= R, x0, _x(st, hi))
        return x, jnp.maximum(0.5 * jnp.sum(st.M * x * x) - jnp.sum(st.S * x) + 0.5 * st.Q, 0.0)

    p = _problem(value, grad, stats_init, stats_update, solve)
    return _register(p, ProblemInfo("masked_quadratic", d, domain, 2.0 * R, 1.0, True, "exact",
                                    loss_bound=0.5 * (1.5 * R) ** 2 * d))


class MaskedQuadraticParams(NamedTuple):
    """Parameters of :func:`adv_masked_quadratic` (build them with :func:`masked_quadratic_params`).

    Attributes:
        D: the domain radius; the centre ``c`` has norm ``D/2``.
        q: ``P(m_tj = 1)``, the probability that a coordinate counts in a round.
    """
    D: jax.Array     # domain radius; ||c|| = D/2
    q: jax.Array     # P(m_tj = 1)


def masked_quadratic_params(D: float = 1.0, q: float = 0.5) -> MaskedQuadraticParams:
    """Validated parameters for :func:`adv_masked_quadratic`.

    Args:
        D: the domain radius (``> 0``); the planted centre has norm ``D/2``.
        q: the probability ``P(m_tj = 1)`` in ``(0, 1]`` (1/2: ``E[diag(m_t)] = I/2``).

    Returns:
        The :class:`MaskedQuadraticParams` as arrays of the default float dtype.

    Raises:
        ValueError: ``D <= 0`` or ``q`` outside ``(0, 1]``.
    """
    check_positive("D", D)
    check_probability("q", q)
    if not q > 0:
        raise ValueError(f"q must be in (0, 1], got {q!r}")
    return MaskedQuadraticParams(D=jnp.asarray(D, fdt()), q=jnp.asarray(q, fdt()))


class _State(NamedTuple):
    key: jax.Array
    c: jax.Array


@functools.lru_cache(maxsize=None)
def adv_masked_quadratic(d: int) -> Adversary:
    """``c`` uniform on the sphere of radius ``D/2`` (drawn once); each round ``m_tj ~ Ber(q)`` i.i.d.
    Use with :func:`masked_quadratic_problem` ``(d, D)``; ``L* = 0``.

    Args:
        d: the dimension.

    Returns:
        The :class:`~jaxdp.core.Adversary`.
    """
    d = check_positive_int("d", d)

    def init(key, params):
        k_c, k_loss = jax.random.split(key)
        u = jax.random.normal(k_c, (d,), fdt())
        c = 0.5 * params.D * u / jnp.maximum(jnp.linalg.norm(u), 1e-30)
        return (_State(key=k_loss, c=c), params)

    def loss(sp, t):
        st, p = sp
        m = (jax.random.uniform(jax.random.fold_in(st.key, t), (d,), fdt()) < p.q).astype(fdt())
        return MaskedLoss(m=m, c=st.c)

    return Adversary(init=init, loss=loss)
