"""Small helpers shared by the realizable-regime algorithms (their checks live in jaxdp.core.validation)."""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ..core.validation import (  # noqa: F401  (re-exported: the realizable modules import them from here)
    check_beta, check_d, check_delta_for, check_eps_finite, check_lstar, check_mode,
)

__all__ = ["tree_where", "fdt", "log2_ceil"]


def fdt():
    return jnp.result_type(float)


def tree_where(pred, a, b):
    return jax.tree_util.tree_map(lambda u, v: jnp.where(pred, u, v), a, b)


def log2_ceil(d: int) -> int:
    """``ceil(log2 d)`` (docs/guide/concepts.md#notation: halvings are counted in base 2)."""
    return int(math.ceil(math.log2(d) - 1e-12)) if d > 1 else 0


def advanced_composition(eps0: float, k: int, delta_prime: float) -> float:
    """Dwork–Roth advanced composition (REAL Lemma 2.2): k eps0-DP mechanisms are
    ``(sqrt(2k ln(1/δ')) eps0 + k eps0 (e^eps0 - 1), δ')``-DP."""
    return math.sqrt(2.0 * k * math.log(1.0 / delta_prime)) * eps0 + k * eps0 * math.expm1(eps0)


def solve_increasing(f, target: float, lo: float = 0.0, hi: float = 1.0, iters: int = 200) -> float:
    """Largest x in [lo, hi'] with f(x) <= target for increasing f (hi doubled until it exceeds)."""
    while f(hi) <= target:
        hi *= 2.0
        if hi > 1e12:
            return hi
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if f(mid) <= target:
            lo = mid
        else:
            hi = mid
    return lo
