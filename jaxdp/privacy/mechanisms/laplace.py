"""Laplace and Gaussian mechanisms (docs/algorithms/primitives.md#laplace, #gaussian).

* Laplace (GROWTH Lemma 2.2; Dwork–Roth Thm 3.6): ``A(S) = h(S) + Lap_d(Δ₁/ε)``
  is ε-DP when ``h`` has ℓ1-sensitivity Δ₁. For ℓ2-sensitivity Δ₂ use Δ₁ <= sqrt(d) Δ₂.
* Gaussian (GROWTH Lemma 2.3; Dwork–Roth Thm A.1): ``A(S) = h(S) + N(0, σ² I)``
  with ℓ2-sensitivity Δ₂. :func:`gaussian_sigma` calibrates σ; each method is the
  ``jaxdp.privacy.accounting`` function named, which holds the only implementation:

  - ``"zcdp"`` (default, valid for every ε; ``gaussian_sigma_zcdp``): ρ = Δ₂²/(2σ²)-zCDP implies
    (ρ + 2 sqrt(ρ ln 1/δ), δ)-DP (Bun–Steinke Props 1.3, 1.6); solving for ρ gives
    ``ρ* = (sqrt(ε + ln 1/δ) - sqrt(ln 1/δ))²`` (``rho_from_eps_delta``, computed without
    cancellation) and ``σ = Δ₂ / sqrt(2ρ*)``.
  - ``"dr"`` (``gaussian_sigma_dr``): ``σ = Δ₂ sqrt(2 ln(1.25/δ)) / ε`` (Dwork–Roth Thm A.1; only for ε < 1).
  - ``"paper"`` (``gaussian_sigma_growth``): ``σ = 2Δ₂ sqrt(log(2/δ)) / ε`` (GROWTH Lemma 2.3,
    CORRECTED: the extraction lost the square root). Only for ε <= 1: above it the formula
    under-noises (at ε = 50, δ = 1e-5 the exact ε of that σ is 55.3), so ``method="paper"`` refuses ε > 1.

Both mechanisms work on scalars and arrays of any shape (one draw per entry)
and are pure functions of the key: usable inside ``scan`` and under ``vmap``.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ..accounting.zcdp import gaussian_sigma_dr, gaussian_sigma_growth, gaussian_sigma_zcdp, rho_from_eps_delta
from ...core.validation import check_delta_open, check_epsilon, check_finite, check_scale, check_sensitivity
from ...core.validation import check_choice

__all__ = ["laplace_scale", "laplace_mech", "gaussian_sigma", "gaussian_mech", "gaussian_rho_star"]


def laplace_scale(sensitivity, eps):
    """The Laplace scale ``b = Δ₁/ε`` (``eps = inf`` gives 0: the non-private limit).

    Args:
        sensitivity: the query's sensitivity Δ.
        eps: the privacy parameter ε.

    Returns:
        ``b = Δ₁/ε``.
    """
    check_sensitivity(sensitivity)
    check_epsilon(eps)
    return sensitivity / eps


def laplace_mech(key: jax.Array, value, sensitivity, eps) -> jax.Array:
    """``value + Lap(Δ₁/ε)`` entrywise; ε-DP for ℓ1-sensitivity ``sensitivity``. One draw per entry.

    Args:
        key: JAX PRNG key.
        value: the exact value (any shape).
        sensitivity: ℓ1-sensitivity Δ₁.
        eps: the privacy parameter ε.

    Returns:
        The noisy value.
    """
    check_finite(value, "value")
    b = laplace_scale(sensitivity, eps)
    value = jnp.asarray(value, jnp.result_type(value, float))
    z = jax.random.laplace(key, value.shape, dtype=value.dtype)
    return value + jnp.asarray(b, value.dtype) * z


def gaussian_rho_star(eps: float, delta: float) -> float:
    """ρ*(ε, δ), the largest ρ with ρ-zCDP ⟹ (ε, δ)-DP via Bun–Steinke Prop. 1.3:
    ``(sqrt(ε + ln 1/δ) - sqrt(ln 1/δ))²``. Host float; calls ``jaxdp.privacy.accounting.rho_from_eps_delta``.

    Args:
        eps: the privacy parameter ε.
        delta: the privacy parameter δ.

    Returns:
        ρ*(ε, δ).
    """
    check_epsilon(eps, allow_inf=False)
    check_delta_open(delta)
    return float(rho_from_eps_delta(float(eps), float(delta)))


def gaussian_sigma(sensitivity, eps, delta, method: str = "zcdp") -> float:
    """σ of the Gaussian mechanism for (ε, δ)-DP with ℓ2-sensitivity ``sensitivity`` (host float).

    ``method`` in ``{"zcdp", "dr", "paper"}`` (see the module docstring): ``jaxdp.privacy.accounting``'s
    ``gaussian_sigma_zcdp``, ``gaussian_sigma_dr`` and ``gaussian_sigma_growth`` respectively
    (``"dr"`` raises for ε >= 1, ``"paper"`` for ε > 1).

    Args:
        sensitivity: ℓ2-sensitivity.
        eps: the privacy parameter ε.
        delta: the privacy parameter δ.
        method: ``"zcdp"``, ``"dr"`` or ``"paper"``.

    Returns:
        σ (host float).

    Raises:
        ValueError: invalid inputs; ``"dr"`` with ε >= 1; ``"paper"`` with ε > 1.
    """
    check_choice("method", method, ("zcdp", "dr", "paper"))
    check_sensitivity(sensitivity)
    check_epsilon(eps, allow_inf=False)
    check_delta_open(delta)
    calibration = {"zcdp": gaussian_sigma_zcdp, "dr": gaussian_sigma_dr, "paper": gaussian_sigma_growth}[method]
    return float(calibration(float(sensitivity), float(eps), float(delta)))


def gaussian_mech(key: jax.Array, value, sigma) -> jax.Array:
    """``value + N(0, σ²)`` entrywise (σ from :func:`gaussian_sigma`). One draw per entry.

    Args:
        key: JAX PRNG key.
        value: the exact value (any shape).
        sigma: the noise standard deviation σ.

    Returns:
        The noisy value.
    """
    check_finite(value, "value")
    check_scale(sigma, "sigma")
    value = jnp.asarray(value, jnp.result_type(value, float))
    z = jax.random.normal(key, value.shape, dtype=value.dtype)
    return value + jnp.asarray(sigma, value.dtype) * z
