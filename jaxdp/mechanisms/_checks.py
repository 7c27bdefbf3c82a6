"""Host-side checks shared by the mechanisms (skipped for traced values).

Thin wrappers over :mod:`jaxdp.core.validation`; every error names the
parameter, the value received and what is allowed.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.validation import (
    _values, check_delta, check_epsilon, check_finite_array, check_positive, is_concrete,
)

__all__ = ["check_eps", "check_delta_open", "check_sensitivity", "check_finite", "check_scale", "check_noise_kind"]


def check_eps(eps: Any, name: str = "eps", *, allow_inf: bool = True) -> Any:
    """ε > 0 (``inf`` = the non-private limit, allowed unless ``allow_inf=False``)."""
    return check_epsilon(eps, name, allow_inf=allow_inf)


def check_delta_open(delta: Any, name: str = "delta") -> Any:
    """δ in (0, 1) (approximate-DP calibrations need δ > 0)."""
    check_delta(delta, name)
    arr = _values(name, delta)
    if arr is not None and np.any(arr <= 0):
        raise ValueError(f"{name} must be in (0, 1) for an (eps, delta) calibration, got {arr.item() if arr.ndim == 0 else arr}")
    return delta


def check_sensitivity(x: Any, name: str = "sensitivity") -> Any:
    """Sensitivity: finite and > 0."""
    return check_positive(name, x)


def check_scale(x: Any, name: str = "scale") -> Any:
    """Noise scale: finite and >= 0 (0 = exact)."""
    arr = _values(name, x)
    if arr is None:
        return x
    if np.any(np.isnan(arr)) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be a finite number >= 0, got {arr.item() if arr.ndim == 0 else arr}")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0, got {arr.item() if arr.ndim == 0 else arr}")
    return x


def check_finite(x: Any, name: str) -> Any:
    """A finite number or array (no NaN / inf)."""
    if not is_concrete(x):
        return x
    check_finite_array(name, x)
    return x


def check_noise_kind(noise: Any) -> str:
    if noise not in ("laplace", "gaussian"):
        raise ValueError(f"noise must be one of ['laplace', 'gaussian'], got {noise!r}")
    return noise
