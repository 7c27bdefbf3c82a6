"""Roofline predictions from what an exported module does per call (:mod:`benchmarks.harness.export`).

A run of one seed draws ``R`` random words and moves ``C`` bytes of loop state
(what an iteration changes, read and written once). On a device that generates ``ρ`` random words/s
and moves ``β`` bytes/s, with enough seeds in flight to keep it busy, one
seed's call takes at least

    t = max(R / ρ, C / β)

so the predicted throughput is ``rounds / t`` seed-rounds/s (``1 / t``
estimators/s for a one-shot estimator). It ignores arithmetic,
transcendental functions and data that is not loop state; a measurement
below the prediction says how far the program is from these two floors.

Figures:

* **NVIDIA H100 SXM**: HBM3 bandwidth 3.35 TB/s (NVIDIA H100 datasheet).
* **Google TPU v5e**: HBM bandwidth 819 GB/s (Google Cloud TPU v5e documentation).
* Neither vendor publishes a rate for ``jax.random``'s threefry generator
  (integer arithmetic on the vector units), so for these two devices the
  prediction is the bandwidth bound alone: an upper bound on throughput,
  loose for programs that the random-number floor binds on the device at
  hand. ``jaxdp bench --device-report`` run on the device measures both rates.
* **This device**: ``ρ`` measured with ``jax.random.bits`` (its threefry words
  counted in its own exported module, the same way as every module's) and
  ``β`` with a jitted ``x + 1`` on a 256 MiB array (read + write). On a CPU
  the carry of a small batch stays in cache, so the bandwidth floor is not a
  floor there.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Optional

__all__ = ["Device", "H100", "TPU_V5E", "PUBLISHED", "predict", "measured_device"]


@dataclasses.dataclass(frozen=True)
class Device:
    """A device's two ceilings: bytes/s of memory bandwidth and random words/s.

    Attributes:
        name: the device's name.
        bytes_per_s: the memory bandwidth in bytes per second (read + write).
        rng_words_per_s: 32-bit threefry words generated per second (``None``: not known).
        source: where the figures come from (a datasheet, or ``"measured"``).
    """

    name: str
    bytes_per_s: float
    rng_words_per_s: Optional[float]
    source: str


H100 = Device("NVIDIA H100 SXM", 3.35e12, None, "HBM3 3.35 TB/s (NVIDIA H100 datasheet); threefry rate not published")
TPU_V5E = Device("Google TPU v5e", 8.19e11, None, "HBM 819 GB/s (Google Cloud TPU v5e documentation); "
                 "threefry rate not published")
PUBLISHED = (H100, TPU_V5E)


def measured_device(name: str, bytes_per_s: float, rng_words_per_s: float) -> Device:
    """The device at hand, from measured ceilings (``benchmarks.harness.suite.measure_ceilings``).

    Args:
        name: the device's name (e.g. its ``device_kind``).
        bytes_per_s: the measured bandwidth in bytes per second.
        rng_words_per_s: the measured threefry words per second.

    Returns:
        The :class:`Device`, with source ``"measured"``.
    """
    return Device(name, float(bytes_per_s), float(rng_words_per_s), "measured")


def predict(rng_words: float, carry_bytes: float, rounds: Optional[int], device: Device) -> dict:
    """Predicted time per seed-call and throughput: ``t = max(R/ρ, C/β)`` (module docstring).

    Args:
        rng_words: ``R``, the random words one seed's call draws.
        carry_bytes: ``C``, the loop-state bytes one seed's call moves.
        rounds: rounds per call (``None``: a one-shot estimator, throughput in calls/s).
        device: the device's ceilings ``ρ`` and ``β``.

    Returns:
        ``t_rng_s`` (NaN if the device's random-number rate is unknown), ``t_bytes_s``, ``t_s`` (the larger),
        ``throughput`` (``rounds / t_s``; ``inf`` when ``t_s = 0``) and ``bound`` (``"rng"``, ``"bytes"``, or
        ``"bytes (rng unknown)"``).
    """
    t_rng = rng_words / device.rng_words_per_s if device.rng_words_per_s else float("nan")
    t_bytes = carry_bytes / device.bytes_per_s
    if math.isnan(t_rng):
        t, bound = t_bytes, "bytes (rng unknown)"
    else:
        t, bound = max(t_rng, t_bytes), ("rng" if t_rng >= t_bytes else "bytes")
    n = rounds or 1
    return {"t_rng_s": t_rng, "t_bytes_s": t_bytes, "t_s": t, "throughput": n / t if t > 0 else float("inf"),
            "bound": bound}
