"""Host-side checks and small helpers shared by the realizable-regime algorithms."""
from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

from ..core.validation import (
    check_choice, check_delta, check_epsilon, check_in_range, check_nonneg, check_positive_int,
)
from ..accounting.plan import PLAN_MODES

__all__ = ["check_d", "check_eps_finite", "check_beta", "check_lstar", "check_mode", "check_delta_for",
           "tree_where", "fdt", "log2_ceil"]


def fdt():
    return jnp.result_type(float)


def tree_where(pred, a, b):
    return jax.tree_util.tree_map(lambda u, v: jnp.where(pred, u, v), a, b)


def check_d(d: Any) -> int:
    """Number of experts: an integer ``>= 2``."""
    return check_positive_int("d", d, minimum=2)


def check_eps_finite(eps: Any, name: str = "eps") -> Any:
    """ε > 0 and finite (planners need a finite privacy level)."""
    return check_epsilon(eps, name, allow_inf=False)


def check_beta(beta: Any) -> Any:
    """Failure probability β in (0, 1/2) (REAL Thms 1–2)."""
    return check_in_range("beta", beta, 0.0, 0.5, lo_closed=False, hi_closed=False)


def check_lstar(Lstar: Any, name: str = "Lstar") -> Any:
    """Loss level L* >= 0, finite."""
    return check_nonneg(name, Lstar)


def check_mode(mode: str, allowed=("paper", "certified", "rate")) -> str:
    if mode not in PLAN_MODES:
        raise ValueError(f"mode must be one of {list(allowed)}, got {mode!r}")
    return check_choice("mode", mode, list(allowed))


def check_delta_for(delta: Any, *, approximate: bool) -> float:
    """δ in [0, 1); with ``approximate=True`` (an (ε, δ) statement) δ must be in (0, 1)."""
    check_delta(delta)
    if approximate and float(delta) <= 0:
        raise ValueError(f"delta must be in (0, 1) for the approximate-DP setting, got {delta!r}")
    return float(delta)


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
