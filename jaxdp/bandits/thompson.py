r"""Thompson sampling for Bernoulli bandits with Beta priors (Thompson 1933; Agrawal & Goyal 2012, "Analysis of
Thompson sampling for the multi-armed bandit problem", Alg. 2).

Each arm keeps a posterior ``Beta(a_0 + S_i, b_0 + F_i)`` over its reward mean
(``S_i``, ``F_i``: successes and failures). Every round draws
``θ_i ~ Beta(a_0 + S_i, b_0 + F_i)`` and plays ``arg max_i θ_i``.
A reward ``r ∈ [0, 1]`` that is not binary is first replaced by a Bernoulli(``r``)
coin (Agrawal & Goyal's reduction, exact for {0, 1} rewards).

With the uniform prior ``a_0 = b_0 = 1`` the pseudo-regret is
``(1 + c) Σ_i Δ_i ln T / kl(μ_i, μ*) + O(K/c²)`` for every ``c > 0`` (Kaufmann, Korda & Munos
2012; Agrawal & Goyal 2013), i.e. it attains the Lai–Robbins constant; :func:`jaxdp.bandits.theory.lai_robbins` gives the reference curve.

Random numbers per round: one uniform (the coin) and ``K`` Beta draws
``θ = G_a/(G_a + G_b)``, ``G ~ Gamma``, each Gamma by Marsaglia & Tsang's
(2000) exact rejection sampler (:func:`gamma_mt`: a normal and a uniform per proposal, acceptance
above 95% for shape ``≥ 1``; shapes below 1 use ``G_{α} = G_{α+1} U^{1/α}``).
All ``2K`` Gammas of a round share one batched rejection loop, which stops when every one is
accepted (under ``vmap``: when every seed's are). About 1.5e5 seed-rounds/s at ``K = 9`` on one
core, the slowest learner of the package; ``jax.random.beta`` was about 3x slower.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core.types import Learner, fdt
from ._common import arms_factory, checked_params
from .adversaries import round_words
from .problem import bandit_learner

__all__ = ["ThompsonState", "ThompsonParams", "thompson", "gamma_mt", "log_gamma_mt"]


class ThompsonState(NamedTuple):
    """State of :func:`thompson`.

    Attributes:
        x: the arm played this round (int32).
        S: the ``(K,)`` successes.
        F: the ``(K,)`` failures.
    """
    x: jax.Array    # int32: the arm played this round
    S: jax.Array    # (K,) successes
    F: jax.Array    # (K,) failures


@checked_params(scalars=True, a0=dict(lo=0.0, lo_open=True), b0=dict(lo=0.0, lo_open=True))
class ThompsonParams(NamedTuple):
    """The Beta prior ``(a0, b0)``, both ``> 0`` (``(1, 1)``: uniform).

    Attributes:
        a0: the prior's pseudo-successes.
        b0: the prior's pseudo-failures.
    """
    a0: jax.Array = 1.0  # type: ignore[assignment]  # Beta prior: pseudo-successes
    b0: jax.Array = 1.0  # type: ignore[assignment]  # Beta prior: pseudo-failures


def _uniform(words):
    """``(w >> 8 + 1/2) / 2^24``: a uniform in ``(0, 1)`` (never 0 or 1) from each 32-bit word."""
    return ((words >> 8).astype(fdt()) + 0.5) * (1.0 / (1 << 24))


def _log_accept(d: jax.Array, y: jax.Array, z: jax.Array) -> jax.Array:
    """Marsaglia & Tsang's log acceptance bound ``z²/2 + d − d v + d ln v`` at ``v = (1 + y)³``, ``y = cz``,
    ``9 d c² = 1`` (:func:`gamma_mt`): the series ``d Σ_{k=4}^{10} 3 (−1)^{k+1} y^k / k`` for ``d > 64``, the
    literal form otherwise; ``−inf`` where ``v ≤ 0``."""
    ys = jnp.clip(y, -0.25, 0.25)                                # d > 64 gives |y| <= 5.9 c < 0.25
    series = jnp.zeros_like(ys)
    for k in range(10, 3, -1):                                   # Horner
        series = series * ys + 3.0 * (-1.0) ** (k + 1) / k
    v = (1.0 + y) ** 3
    vs = jnp.where(v > 0, v, 1.0)
    literal = 0.5 * z * z + d - d * vs + d * jnp.log(vs)
    return jnp.where(v <= 0, -jnp.inf, jnp.where(d > 64.0, d * series * ys ** 4, literal))


def _gamma_mt_parts(key: jax.Array, alpha: jax.Array) -> tuple:
    """:func:`gamma_mt`'s ``(G ~ Gamma(α + 1[α < 1]), boost uniforms U', mask α < 1)``, each ``(n,)``."""
    f = fdt()
    alpha = jnp.asarray(alpha, f)
    n = alpha.shape[0]
    half = -(-n // 2)
    small = alpha < 1.0
    a = jnp.where(small, alpha + 1.0, alpha)
    d = a - 1.0 / 3.0
    c = 1.0 / jnp.sqrt(9.0 * d)

    def body(carry):
        i, g = carry
        u = _uniform(round_words(key, i, 4 * half))
        r = jnp.sqrt(-2.0 * jnp.log(u[:half]))
        th = (2.0 * jnp.pi) * u[half:2 * half]
        z = jnp.concatenate([r * jnp.cos(th), r * jnp.sin(th)])[:n]
        y = c * z
        v = (1.0 + y) ** 3
        ok = (v > 0) & (jnp.log(u[2 * half:2 * half + n]) < _log_accept(d, y, z))
        # v > 0 and d >= 2/3, so an accepted draw d·v is > 0 and g == 0 means "not yet accepted"
        return i + 1, jnp.where(ok & (g == 0), d * jnp.where(ok, v, 1.0), g)

    # round 0 of the counters is the boost's: the rejection rounds are 1, 2, ...
    _, g = jax.lax.while_loop(lambda c_: jnp.any(c_[1] == 0), body, (jnp.ones((), jnp.int32), jnp.zeros((n,), f)))
    return g, _uniform(round_words(key, jnp.int32(0), n)), small


def gamma_mt(key: jax.Array, alpha: jax.Array) -> jax.Array:
    """Exact ``Gamma(α, 1)`` draws for a vector of shapes ``α > 0`` (Marsaglia & Tsang 2000).

    With ``a = α + 1[α < 1]``, ``d = a - 1/3``, ``c = 1/sqrt(9d)``: propose
    ``v = (1 + cZ)³``, ``Z ~ N(0, 1)`` (Box–Muller), accept when ``v > 0`` and
    ``ln U < Z²/2 + d - dv + d ln v``; return ``dv`` (times ``U'^{1/α}`` when
    ``α < 1``). Proposals for every entry are drawn together, round after round, until every
    entry has accepted one. Round ``i`` uses the Threefry words of the counters ``(i, j)`` under
    ``key`` (:func:`jaxdp.bandits.adversaries.round_words`): two words per entry and round.

    The acceptance bound is evaluated without cancellation. With ``y = cZ`` (so ``9dc² = 1``) it
    equals ``d (3 ℓ(y) − y³)``, ``ℓ(y) = ln(1 + y) − y + y²/2``, i.e. the series
    ``d Σ_{k≥4} 3 (−1)^{k+1} y^k / k``. For ``d > 64`` (then ``|y| < 1/4``, as ``|Z| ≤ 5.9`` from 24-bit
    uniforms) it is summed to ``k = 10`` (absolute error below ``5·10⁻⁶``, under float32's rounding of
    the literal form at ``d = 64``); for ``d ≤ 64`` the literal form is used. The literal form subtracts
    numbers of size ``d`` to get a result near 0: in float32 at the shapes a Thompson sampler reaches
    (``d ≈ 10⁵``) its rounding error is about ``10⁻²``, larger than many bounds it is compared with. An
    entry is marked done exactly when its draw is stored (``g > 0``), so no recomputation of the test can
    disagree with the stored value.

    For ``α < 1`` the draw ``G_{α+1} U^{1/α}`` underflows to 0 in float32 when ``U^{1/α} < 10⁻⁴⁵`` (for example
    with probability 0.42 at ``α = 0.01``); :func:`log_gamma_mt` does not.

    Args:
        key: JAX PRNG key.
        alpha: the ``(n,)`` shapes ``α > 0``.

    Returns:
        The ``(n,)`` draws, independent ``Gamma(α_i, 1)``.

    Raises:
        ValueError: concrete shapes that are not a vector of finite numbers > 0 (checked before compiling).
    """
    _check_shapes(alpha)
    return _draws(alpha, *_gamma_mt_parts(key, alpha))


def log_gamma_mt(key: jax.Array, alpha: jax.Array) -> jax.Array:
    """The logarithms of :func:`gamma_mt`'s draws (same key, same draws), without underflow for small shapes:
    ``ln G_{α+1} + ln(U)/α`` for ``α < 1``.

    Args:
        key: JAX PRNG key.
        alpha: the ``(n,)`` shapes ``α > 0``.

    Returns:
        The ``(n,)`` values ``ln G_i``, ``G_i ~ Gamma(α_i, 1)`` independent.

    Raises:
        ValueError: concrete shapes that are not a vector of finite numbers > 0 (checked before compiling).
    """
    _check_shapes(alpha)
    return _log_draws(alpha, *_gamma_mt_parts(key, alpha))


def _draws(alpha, g, u, small):
    """``G_{α+1} U'^{1/α}`` where ``α < 1``, else ``G_α``: the Gamma(α) draws from :func:`_gamma_mt_parts`."""
    return jnp.where(small, g * u ** (1.0 / jnp.asarray(alpha, g.dtype)), g)


def _log_draws(alpha, g, u, small):
    """The logarithms of :func:`_draws`, ``ln G_{α+1} + ln(U')/α`` where ``α < 1``: no underflow."""
    return jnp.log(g) + jnp.where(small, jnp.log(u) / jnp.asarray(alpha, g.dtype), 0.0)


def _check_shapes(alpha) -> None:
    """Concrete shapes must be a vector of finite numbers > 0 (a shape ≤ 0 would never be accepted and the
    rejection loop would not end); traced shapes are the caller's to guarantee."""
    if isinstance(alpha, jax.core.Tracer):
        return
    a = np.asarray(alpha)
    if a.ndim != 1:
        raise ValueError(f"alpha must be a vector of shapes, got shape {a.shape}")
    if not np.issubdtype(a.dtype, np.number) or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"alpha must hold finite shapes > 0, got {a!r}")


@arms_factory
def thompson(K: int) -> Learner:
    """Beta–Bernoulli Thompson sampling over ``K`` arms. Params: :class:`ThompsonParams` ``(a0, b0)``.

    Per round: one uniform (the reward's Bernoulli coin) and ``2K`` Gamma draws (:func:`gamma_mt`).

    Args:
        K: the number of arms (static).

    Returns:
        The :class:`jaxdp.Learner`.
    """
    def draw(key, S, F, params):
        alpha = jnp.concatenate([params.a0 + S, params.b0 + F])
        parts = _gamma_mt_parts(key, alpha)
        G = _draws(alpha, *parts)
        theta = G[:K] / (G[:K] + G[K:])
        # a shape below 1 (a prior below 1 on an arm not yet pulled) can underflow G to 0 and θ to 0/0: rank by
        # ln θ_i − ln(1 − θ_i) = ln G_a − ln G_b instead, the same order without underflow
        lg = _log_draws(alpha, *parts)
        score = jnp.where(jnp.any(parts[2]), lg[:K] - lg[K:], theta)
        return jnp.argmax(score).astype(jnp.int32)

    def init(key, params):
        z = jnp.zeros((K,), fdt())
        return ThompsonState(x=draw(key, z, z, params), S=z, F=z)

    def step(key, s, observed, params):
        k_coin, k_beta = jax.random.split(key)
        success = jax.random.uniform(k_coin, (), fdt()) < 1.0 - observed
        oh = jnp.arange(K) == s.x
        S = s.S + (oh & success)
        F = s.F + (oh & ~success)
        return ThompsonState(x=draw(k_beta, S, F, params), S=S, F=F), {}

    return bandit_learner(init, step)
