"""Checks of the planners' common arguments (number of experts, finite ε, β, L*, mode, δ) and of the
mechanisms' noise parameters (sensitivity, scale, noise kind)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._arrays import check_finite_array
from ._base import _values, is_concrete
from ._scalars import (check_choice, check_delta, check_epsilon, check_in_range, check_nonneg, check_positive,
                       check_positive_int)


# ----------------------------------------------------------------------------- planners: common arguments


def check_d(d: Any) -> int:
    """Number of experts: an integer ``>= 2``.

    Args:
        d: the number of experts (actions).

    Returns:
        ``d`` as an ``int``.

    Raises:
        TypeError: ``d`` is not an integer.
        ValueError: ``d < 2``.
    """
    return check_positive_int("d", d, minimum=2)


def check_eps_finite(eps: Any, name: str = "eps") -> Any:
    """ε > 0 and finite (planners need a finite privacy level).

    Args:
        eps: the privacy parameter ε.
        name: the parameter's name, quoted in the error message.

    Returns:
        ``eps`` unchanged.

    Raises:
        ValueError: ε is NaN, infinite or ``<= 0``.
    """
    return check_epsilon(eps, name, allow_inf=False)


def check_beta(beta: Any) -> Any:
    """Failure probability β in (0, 1/2) (REAL Thms 1–2).

    Args:
        beta: the probability that the high-probability regret bound fails.

    Returns:
        ``beta`` unchanged.

    Raises:
        ValueError: β is outside the open interval ``(0, 0.5)``.
    """
    return check_in_range("beta", beta, 0.0, 0.5, lo_closed=False, hi_closed=False)


def check_lstar(Lstar: Any, name: str = "Lstar") -> Any:
    """Loss level L* >= 0, finite.

    Args:
        Lstar: the loss of the best expert in hindsight (the realizable setting's L*; 0 when realizable).
        name: the parameter's name, quoted in the error message.

    Returns:
        ``Lstar`` unchanged.

    Raises:
        ValueError: L* is negative, NaN or infinite.
    """
    return check_nonneg(name, Lstar)


def check_mode(mode: str, allowed=("paper", "certified", "rate")) -> str:
    """A planner's mode, one of ``allowed``.

    Args:
        mode: the mode requested; by default ``"paper"`` (the formulas as printed), ``"certified"``
            (parameters chosen so that the privacy statement certifies the requested (ε, δ)) or ``"rate"``
            (logarithmic factors and constants dropped), see docs/guide/planning.md#modes.
        allowed: the modes that planner accepts.

    Returns:
        ``mode`` unchanged.

    Raises:
        ValueError: ``mode`` is not in ``allowed``.
    """
    return check_choice("mode", mode, list(allowed))


def check_delta_for(delta: Any, *, approximate: bool) -> float:
    """δ in [0, 1); with ``approximate=True`` (an (ε, δ) statement) δ must be in (0, 1).

    Args:
        delta: the privacy parameter δ.
        approximate: whether the guarantee is approximate (ε, δ)-DP, which needs δ > 0.

    Returns:
        ``float(delta)``.

    Raises:
        ValueError: δ is outside ``[0, 1)``, or is 0 when ``approximate``.
    """
    check_delta(delta)
    if approximate and float(delta) <= 0:
        raise ValueError(f"delta must be in (0, 1) for the approximate-DP setting, got {delta!r}")
    return float(delta)


# ----------------------------------------------------------------------------- mechanisms: noise parameters
# (each returns its input unchanged; traced values are skipped)


def check_delta_open(delta: Any, name: str = "delta") -> Any:
    """δ in (0, 1) (approximate-DP calibrations need δ > 0).

    Args:
        delta, name: the privacy parameter δ (number or array) and its name, quoted in the error message.

    Returns:
        ``delta`` unchanged.

    Raises:
        ValueError: δ is outside the open interval ``(0, 1)``.
    """
    check_delta(delta, name)
    arr = _values(name, delta)
    if arr is not None and np.any(arr <= 0):
        raise ValueError(f"{name} must be in (0, 1) for an (eps, delta) calibration, got {arr.item() if arr.ndim == 0 else arr}")
    return delta


def check_sensitivity(x: Any, name: str = "sensitivity") -> Any:
    """Sensitivity: finite and > 0.

    Args:
        x: the query's sensitivity Δ (number or array).
        name: the parameter's name, quoted in the error message.

    Returns:
        ``x`` unchanged.

    Raises:
        ValueError: an entry is NaN, infinite or ``<= 0``.
    """
    return check_positive(name, x)


def check_scale(x: Any, name: str = "scale") -> Any:
    """Noise scale: finite and >= 0 (0 = exact).

    Args:
        x: the noise scale (Laplace ``b`` or Gaussian σ; number or array).
        name: the parameter's name, quoted in the error message.

    Returns:
        ``x`` unchanged.

    Raises:
        ValueError: an entry is NaN, infinite or negative.
    """
    arr = _values(name, x)
    if arr is None:
        return x
    if np.any(np.isnan(arr)) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be a finite number >= 0, got {arr.item() if arr.ndim == 0 else arr}")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0, got {arr.item() if arr.ndim == 0 else arr}")
    return x


def check_finite(x: Any, name: str) -> Any:
    """A finite number or array (no NaN / inf).

    Args:
        x: the value; a tracer is returned unchecked.
        name: the parameter's name, quoted in the error message.

    Returns:
        ``x`` unchanged.

    Raises:
        ValueError: an entry is NaN or infinite.
    """
    if not is_concrete(x):
        return x
    check_finite_array(name, x)
    return x


def check_noise_kind(noise: Any) -> str:
    """``"laplace"`` or ``"gaussian"``.

    Args:
        noise: the noise distribution's name.

    Returns:
        ``noise`` unchanged.

    Raises:
        ValueError: any other value.
    """
    if noise not in ("laplace", "gaussian"):
        raise ValueError(f"noise must be one of ['laplace', 'gaussian'], got {noise!r}")
    return noise
