"""Regularized multiplicative weights (RMW) as an L2P measure.

Source: LAZY eq. (3), Lemma 3.11 (Agarwal–Kale–Singh–Thakurta 2023; Gopi–Lee–Liu 2022 Lemma 3.5) and
Thm 3.12; docs/algorithms/primitives.md#rmw; docs/algorithms/lazy.md#l2p-rmw, #rmw-nonsmooth.

    μ_t(x) ∝ exp(-β (Σ_{i<t} ℓ_i(x) + λ ||x||²)),   x ∈ X (convex).

* ``μ_{t+1}(x)/μ_t(x) = e^{-β ℓ_t(x)}`` (Assumption 3.1(2)): ``log_ratio = -β ℓ_t(x)``.
* Lemma 3.11: for convex ``L``-Lipschitz losses
  ``D_∞^{δ0}(μ_{t+1}, μ_t) <= η_div = 2βL²/λ + sqrt(8βL² log(2/δ0)/λ)`` (``rmw_eta_div``).
* Regret of sampling ``x_t ~ μ_t``: ``O(λD² + L²T/λ + d log T / β)`` (``rmw_regret_bound``).

Loss families (``RMW_LOSSES``): ``"linear"`` (stats ``G = Σ g``; on the centred ball ``μ`` is
``N(-G/(2λ), I/(2βλ))`` restricted to the ball, sampled exactly by ``sample_trunc_gauss_ball`` or by
MALA) and ``"squared"`` (stats ``(Σ aaᵀ, Σ ab, Σ b²)``, an anisotropic truncated Gaussian: MALA) have
additive sufficient statistics. ``"absolute"`` ``|<a, x> - b|`` and ``"logistic"``
``log(1 + e^{-y<a, x>})`` do not: their statistics are a buffer (:class:`RMWBufferStats`) of the past
rows with a static ``capacity`` (the horizon ``T_max``; a longer run makes every sample NaN), and MALA
uses the subgradient of :func:`rmw_grad_logdensity`; its Metropolis correction keeps ``μ`` exactly
invariant whatever the drift, so the kinks cost acceptance, never bias.

MALA (``sampler="mala"``): ``mala_steps`` steps from the projected mode of the unconstrained Gaussian
(buffered losses: from the centre), step size by ``jaxdp.samplers.mala_schedule``'s rule with
``M = β(λ_max(A) + 2λ)``; buffered losses: ``M = β(a_max² n/4 + 2λ)`` (logistic, a Hessian bound) or the
heuristic ``M = 2βλ + (β a_max n)²`` (absolute: the Laplace analogue of ``h ∝ 1/M``), capped by
``D_K²/(32d)``. MALA output is approximate: privacy statements that assume exact sampling are then not
certified (docs/algorithms/primitives.md#samplers); record ``sampler="mala"`` with results.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp

from ..core.validation import check_choice, check_in_range, check_positive, check_positive_int
from ..experts.l2p import LazyMeasure
from ..core.domains import Ball, check_domain
from ..samplers import MALAInfo, ball, mala, mala_schedule, sample_trunc_gauss_ball
from .problems import SquaredStats

__all__ = ["RMWParams", "rmw_measure", "rmw_params", "rmw_eta_div", "rmw_regret_bound", "RMW_LOSSES",
           "RMW_SAMPLERS", "RMW_BUFFER_LOSSES", "RMWBufferStats", "rmw_logdensity", "rmw_grad_logdensity",
           "rmw_mala_sampler", "rmw_mala_schedule", "rmw_mala_diagnostics"]

RMW_LOSSES = ("linear", "squared", "absolute", "logistic")
RMW_SAMPLERS = ("exact", "mala")
#: losses whose RMW statistics are a buffer of past ``(a, b)`` rows (no additive sufficient statistics)
RMW_BUFFER_LOSSES = ("absolute", "logistic")


class RMWBufferStats(NamedTuple):
    """RMW statistics of the buffered losses: the first ``capacity`` rows and the number of losses seen.

    Attributes:
        a: the ``(capacity, d)`` feature vectors.
        b: the ``(capacity,)`` targets.
        count: the number of losses seen (int32); rows ``i >= count`` are zero.
    """

    a: jax.Array
    b: jax.Array
    count: jax.Array  # type: ignore[assignment]  # shadows tuple.count


class RMWParams(NamedTuple):
    """Traced parameters of the RMW measure.

    Attributes:
        beta: the inverse temperature β.
        lam: the regularization λ.
        radius: the radius of the centred ball domain (ignored when a static ``domain`` is given).
    """

    beta: jax.Array
    lam: jax.Array
    radius: jax.Array


def rmw_params(beta: float, lam: float, radius: float = 1.0) -> RMWParams:
    """Validated :class:`RMWParams` (``beta > 0``, ``lam > 0``, ``radius > 0``).

    Args:
        beta: the inverse temperature β > 0.
        lam: the regularization λ > 0.
        radius: the radius of the ball > 0.

    Returns:
        :class:`RMWParams`.

    Raises:
        ValueError: invalid values.
    """
    check_positive("beta", beta)
    check_positive("lam", lam)
    check_positive("radius", radius)
    f = jnp.result_type(float)
    return RMWParams(jnp.asarray(beta, f), jnp.asarray(lam, f), jnp.asarray(radius, f))


def rmw_eta_div(beta: float, lam: float, L: float, delta0: float) -> float:
    """Lemma 3.11: ``η_div = 2βL²/λ + sqrt(8βL² log(2/δ0)/λ)`` (the η of Assumption 3.1).

    Args:
        beta: the inverse temperature β.
        lam: the regularization λ.
        L: the Lipschitz constant.
        delta0: the slack δ0 of the divergence.

    Returns:
        ``η_div``.
    """
    check_positive("beta", beta)
    check_positive("lam", lam)
    check_positive("L", L)
    check_in_range("delta0", delta0, 0.0, 1.0, lo_closed=False)
    return 2.0 * beta * L**2 / lam + math.sqrt(8.0 * beta * L**2 * math.log(2.0 / delta0) / lam)


def rmw_regret_bound(T: float, d: int, beta: float, lam: float, L: float, D: float) -> float:
    """AKST Thm 4.1 (as used in LAZY Thm 3.12), constants 1: ``λD² + L²T/λ + d log T / β``.

    Args:
        T: the horizon.
        d: the dimension.
        beta: the inverse temperature β.
        lam: the regularization λ.
        L: the Lipschitz constant.
        D: the diameter of the domain.

    Returns:
        The bound.
    """
    return lam * D**2 + L**2 * T / lam + d * math.log(max(T, 2)) / beta


def _row_loss(loss: str, m, b):
    """``ℓ`` and its (sub)derivative in the margin ``m = <a, x>`` (buffered losses)."""
    if loss == "absolute":
        r = m - b
        return jnp.abs(r), jnp.sign(r)
    z = -b * m
    return jax.nn.softplus(z), -b * jax.nn.sigmoid(z)


def _mask(stats: RMWBufferStats):
    cap = stats.b.shape[-1]
    return jnp.arange(cap) < jnp.minimum(stats.count, cap)


def _data_term(loss: str, stats: Any, x: jax.Array):
    """``(Σ_i ℓ_i(x), Σ_i ∇ℓ_i(x))`` over the losses summarized by ``stats``."""
    if loss == "linear":
        return jnp.dot(stats, x), stats
    if loss == "squared":
        Ax = stats.AA @ x
        return 0.5 * jnp.dot(x, Ax) - jnp.dot(stats.Ab, x) + 0.5 * stats.bb, Ax - stats.Ab
    mask = _mask(stats)
    val, der = _row_loss(loss, stats.a @ x, stats.b)
    return jnp.sum(jnp.where(mask, val, 0.0)), jnp.where(mask, der, 0.0) @ stats.a


def rmw_logdensity(loss: str, stats: Any, x: jax.Array, mparams: RMWParams) -> jax.Array:
    """Unnormalized RMW log-density ``f(x) = -β(Σ_{i<t} ℓ_i(x) + λ‖x‖²)`` (LAZY eq. (3)) from ``stats``.

    ``stats``: as kept by :func:`rmw_measure` for ``loss`` (``G`` for linear,
    :class:`jaxdp.oco.SquaredStats` for squared, :class:`RMWBufferStats` for
    absolute/logistic, whose rows ``i >= count`` are masked). Pure, jittable.

    Args:
        loss: the loss family (``"linear"``, ``"squared"``, ``"absolute"`` or ``"logistic"``).
        stats: the statistics of the past losses (see above).
        x: the point.
        mparams: :class:`RMWParams`.

    Returns:
        ``f(x)``.
    """
    check_choice("loss", loss, RMW_LOSSES)
    val, _ = _data_term(loss, stats, x)
    return -mparams.beta * (val + mparams.lam * jnp.dot(x, x))


def rmw_grad_logdensity(loss: str, stats: Any, x: jax.Array, mparams: RMWParams) -> jax.Array:
    """``∇f(x) = -β(Σ_i ∇ℓ_i(x) + 2λx)``; for the absolute loss the subgradient ``sign(<a,x> - b) a``
    (0 at the kink), for the logistic loss ``-y σ(-y<a,x>) a``.

    Args:
        loss: the loss family (``"linear"``, ``"squared"``, ``"absolute"`` or ``"logistic"``).
        stats: the statistics of the past losses (as for :func:`rmw_logdensity`).
        x: the point.
        mparams: :class:`RMWParams`.

    Returns:
        ``∇f(x)``.
    """
    check_choice("loss", loss, RMW_LOSSES)
    _, g = _data_term(loss, stats, x)
    return -mparams.beta * (g + 2.0 * mparams.lam * x)


def _buffer_smoothness(loss: str, stats: RMWBufferStats, mp: RMWParams) -> jax.Array:
    """MALA's ``M`` for the buffered losses (module docstring): logistic ``β(a_max² n/4 + 2λ)``,
    absolute ``2βλ + (β a_max n)²`` (heuristic)."""
    mask = _mask(stats)
    n = jnp.sum(mask).astype(mp.beta.dtype)
    a_max = jnp.max(jnp.where(mask, jnp.sqrt(jnp.sum(stats.a * stats.a, axis=-1)), 0.0), initial=0.0)
    if loss == "logistic":
        return mp.beta * (a_max * a_max * n / 4.0 + 2.0 * mp.lam)
    G = mp.beta * a_max * n
    return 2.0 * mp.beta * mp.lam + G * G


def _check_capacity(loss: str, capacity: Any) -> Optional[int]:
    if loss in RMW_BUFFER_LOSSES:
        if capacity is None:
            raise ValueError(f"capacity is required for loss={loss!r}: the number of past (a, b) rows the RMW "
                             f"measure keeps (the horizon T_max), a positive int")
    elif capacity is not None:
        raise ValueError(f"capacity applies only to loss in {list(RMW_BUFFER_LOSSES)} (loss={loss!r} has additive "
                         f"sufficient statistics); got capacity={capacity!r}")
    if capacity is None:
        return None
    try:
        return check_positive_int("capacity", capacity)
    except TypeError as e:
        raise ValueError(str(e)) from None


@functools.lru_cache(maxsize=None)
def _build(d: int, loss: str, sampler: str, domain: Any, mala_steps: int, Mgrid: int,
           capacity: Optional[int]) -> tuple[LazyMeasure, Callable]:
    """``(measure, sample_info)`` for validated arguments (see :func:`rmw_measure`)."""
    static_dom = None if domain is None else check_domain(domain, unbounded=True)
    f = jnp.result_type(float)
    buffered = loss in RMW_BUFFER_LOSSES

    def dom_of(mp):
        return ball(mp.radius) if static_dom is None else static_dom

    def radius_of(mp):
        if static_dom is None:
            return mp.radius
        return jnp.asarray(static_dom.radius, f) if isinstance(static_dom, Ball) else None

    def stats_init(loss_example):
        del loss_example
        if loss == "linear":
            return jnp.zeros((d,), f)
        if buffered:
            return RMWBufferStats(a=jnp.zeros((capacity, d), f), b=jnp.zeros((capacity,), f),
                                  count=jnp.zeros((), jnp.int32))
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
        if buffered:
            # one O(d) row write; past capacity the write is dropped and count records the overflow
            return RMWBufferStats(a=st.a.at[st.count].set(a, mode="drop"), b=st.b.at[st.count].set(b, mode="drop"),
                                  count=st.count + 1)
        return SquaredStats(AA=st.AA + jnp.outer(a, a), Ab=st.Ab + a * b, bb=st.bb + b * b)

    def loss_value(l, x):
        if loss == "linear":
            return jnp.dot(l, x)
        m = jnp.dot(l.a, x)
        if buffered:
            return _row_loss(loss, m, l.b)[0]
        r = m - l.b
        return 0.5 * r * r

    def log_ratio(l, x, mp):
        check_shape(l)
        return -mp.beta * loss_value(l, x)

    def _quad(st, mp):
        """(A, c): -log μ = β(xᵀ A x / 2 - cᵀ x) + const, A = AA + 2λI."""
        if loss == "linear":
            return None, -st
        return st.AA + 2.0 * mp.lam * jnp.eye(d, dtype=f), st.Ab

    def no_info():
        z = jnp.zeros((), f)
        return MALAInfo(z, z, z)

    def sample_info(key, st, mp):
        if sampler == "exact":
            A, c = _quad(st, mp)
            m = c / (2.0 * mp.lam)
            s = jax.lax.rsqrt(2.0 * mp.beta * mp.lam)
            return sample_trunc_gauss_ball(key, m, s, radius_of(mp), Mgrid), no_info()
        dom = dom_of(mp)
        if buffered:
            M = _buffer_smoothness(loss, st, mp)
            h, _ = mala_schedule(M, 2.0 * mp.beta * mp.lam, dom.chart_dim(d), dom.diameter)
            x0 = jnp.zeros((d,), f)
            x, info = mala(key, lambda x: rmw_logdensity(loss, st, x, mp),
                           dom.from_chart(dom.chart_project(dom.to_chart(x0))), mala_steps, h, dom,
                           grad_fn=lambda x: rmw_grad_logdensity(loss, st, x, mp))
            # more losses than the buffer holds: the target is unknown, say so loudly
            return jnp.where(st.count > capacity, jnp.nan, x), info
        A, c = _quad(st, mp)
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

        diam = dom.diameter
        h = jnp.minimum(1.0 / (M * d ** (1.0 / 3.0)), jnp.square(diam) / (32.0 * d))
        return mala(key, logdensity, dom.from_chart(dom.chart_project(dom.to_chart(x0))), mala_steps, h, dom,
                    grad_fn=grad)

    def sample(key, st, mp):
        return sample_info(key, st, mp)[0]

    measure = LazyMeasure(stats_init=stats_init, stats_update=stats_update, log_ratio=log_ratio, sample=sample)
    return measure, sample_info


def _validated(d, loss, sampler, domain, mala_steps, Mgrid, capacity):
    d = check_positive_int("d", d)
    check_choice("loss", loss, RMW_LOSSES)
    check_choice("sampler", sampler, RMW_SAMPLERS)
    mala_steps = check_positive_int("mala_steps", mala_steps)
    Mgrid = check_positive_int("Mgrid", Mgrid, minimum=8)
    capacity = _check_capacity(loss, capacity)
    static_dom = None if domain is None else check_domain(domain, d, unbounded=True)
    if sampler == "exact":
        if loss != "linear":
            raise ValueError(f"sampler='exact' exists only for loss='linear' (a truncated isotropic Gaussian); "
                             f"use sampler='mala' for loss={loss!r} (allowed samplers for loss={loss!r}: ['mala'])")
        if static_dom is not None and not isinstance(static_dom, Ball):
            raise ValueError(f"sampler='exact' needs a centred ball domain, got {type(domain).__name__}; "
                             f"use sampler='mala'")
    return d, mala_steps, Mgrid, capacity


SampleInfoFn = Callable[[jax.Array, Any, RMWParams], tuple[jax.Array, MALAInfo]]


def rmw_mala_sampler(d: int, loss: str, *, domain: Any = None, mala_steps: int = 100,
                     capacity: Optional[int] = None) -> SampleInfoFn:
    """``sample_info(key, stats, mparams) -> (x, MALAInfo)``: the MALA draw of
    ``rmw_measure(d, loss, "mala", ...)`` (bit-identical ``x``) with its acceptance statistics
    (``acceptance_rate``, ``accepted``, ``outside``; docs/algorithms/lazy.md#rmw-nonsmooth).

    ``stats`` are built with the measure's ``stats_init``/``stats_update``. Pure and vmappable.

    Args:
        d: the dimension.
        loss, domain, mala_steps, capacity: as for :func:`rmw_measure`.

    Returns:
        ``sample_info(key, stats, mparams) -> (x, MALAInfo)``.

    Raises:
        ValueError: an invalid argument.
    """
    d, mala_steps, _, capacity = _validated(d, loss, "mala", domain, mala_steps, 256, capacity)
    return _build(d, loss, "mala", domain, mala_steps, 256, capacity)[1]


@functools.lru_cache(maxsize=None)
def rmw_measure(d: int, loss: str = "linear", sampler: str = "exact", *, domain: Any = None,
                mala_steps: int = 100, Mgrid: int = 256, capacity: Optional[int] = None) -> LazyMeasure:
    """The RMW measure family on ``R^d`` as a :class:`jaxdp.experts.LazyMeasure`.

    ``μ_t(x) ∝ exp(-β(Σ_{i<t} ℓ_i(x) + λ‖x‖²))`` (LAZY eq. (3)).

    The measure's parameters ``mparams`` are :class:`RMWParams` ``(beta, lam, radius)``. Every argument is
    validated here (``ValueError`` naming it) before anything is traced.

    Args:
        d: dimension (static).
        loss: ``"linear"`` (loss = ``g``), ``"squared"``, ``"absolute"`` or
            ``"logistic"`` (loss = ``ABLoss(a, b)``; module docstring).
        sampler: ``"exact"`` (linear losses on a centred ball:
            ``sample_trunc_gauss_ball``) or ``"mala"`` (every loss).
        domain: ``None`` — the centred ball of radius ``mparams.radius`` (traced)
            — or a static domain (``jaxdp.core.domains`` Ball/Box/Simplex; MALA
            only, except a ``Ball`` whose radius then overrides ``mparams.radius``).
        mala_steps: MALA steps per fresh sample (static).
        Mgrid: grid size of the exact sampler.
        capacity: absolute/logistic only (required there): the number of past
            ``(a, b)`` rows kept (static; at least the horizon ``T_max``).

    Returns:
        The :class:`jaxdp.experts.LazyMeasure`.

    Raises:
        ValueError: an invalid argument (named in the message).
    """
    d, mala_steps, Mgrid, capacity = _validated(d, loss, sampler, domain, mala_steps, Mgrid, capacity)
    return _build(d, loss, sampler, domain, mala_steps, Mgrid, capacity)[0]


def rmw_mala_schedule(beta: float, lam: float, T: int, d: int, loss: str, radius: float,
                      tol: float = 1e-2) -> tuple[float, int]:
    """MALA's step size and number of steps for the RMW measure after ``T`` losses.

    ``mala_schedule`` at the smoothness bound of the last batch's measure: ``M = β(T/4 + 2λ)`` for the logistic
    loss, ``2βλ + (βT)²`` for the absolute loss, strong convexity ``2βλ``, on a ball of radius ``radius``.

    Args:
        beta, lam: the measure's ``β`` and ``λ`` (the planner's ``beta``, ``lam``).
        T: the horizon.
        d: the dimension.
        loss: ``"logistic"`` or ``"absolute"``.
        radius: the ball's radius.
        tol: ``mala_schedule``'s tolerance.

    Returns:
        ``(h, n_steps)``.
    """
    M = beta * (T / 4.0 + 2 * lam) if loss == "logistic" else 2 * beta * lam + (beta * T) ** 2
    h, n = mala_schedule(M, 2 * beta * lam, d, 2 * radius, tol=tol)
    return float(h), int(n)


@functools.lru_cache(maxsize=None)
def rmw_mala_diagnostics(d: int, loss: str, T: int, steps: int) -> Callable:
    """MALA's acceptance on each seed's own RMW measure after all ``T`` losses of :func:`~jaxdp.oco.adv_nonsmooth`.

    Args:
        d: the dimension.
        loss: ``"absolute"`` or ``"logistic"``.
        T: the horizon (every loss is buffered).
        steps: MALA's number of steps.

    Returns:
        ``jit((keys, mparams, adv_params) -> (acceptance, outside))``, one entry per seed key: one MALA run with
        the engine's split of each key (a block index no run reaches).
    """
    from .adversaries import adv_nonsmooth

    sample_info = rmw_mala_sampler(d, loss, mala_steps=steps, capacity=T)
    adv = adv_nonsmooth(d, loss)

    def one(key, mp, ap):
        _, k_adv, _, k_block = jax.random.split(key, 4)      # the engine's split of a seed key
        a_state = adv.init(k_adv, ap)
        rows = jax.vmap(lambda t: adv.loss(a_state, t))(jnp.arange(T, dtype=jnp.int32))
        st = RMWBufferStats(a=rows.a, b=rows.b, count=jnp.int32(T))   # = T calls of measure.stats_update
        _, info = sample_info(jax.random.fold_in(k_block, 2**31 - 1), st, mp)   # a block index no run reaches
        return info.acceptance_rate, info.outside

    return jax.jit(jax.vmap(one, in_axes=(0, None, None)))
