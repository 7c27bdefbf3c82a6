"""Euclidean projections shared by the samplers and the OCO domains (post-processing: privacy-free)."""
from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = ["project_simplex"]


def project_simplex(x: jax.Array) -> jax.Array:
    """Euclidean projection onto ``{x >= 0, sum x = 1}`` (sort-based; Duchi et al. 2008).

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
