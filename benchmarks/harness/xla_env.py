"""The XLA settings a benchmark process asks for, checked in the process that runs with them, and CPU time.

XLA reads ``XLA_FLAGS`` once, at backend start, and stops parsing at the first word that is not a
``--flag``: ``"--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1
--xla_force_host_platform_device_count=2"`` silently gives **one** device (the bare
``intra_op_parallelism_threads=1`` is no XLA flag, and everything after it is dropped). So a benchmark
builds its environment with :func:`cpu_xla_env` (only ``--`` flags, each checked) and its worker calls
:func:`check_xla` first, which asserts the device count it asked for and returns what it got, for the
benchmark's table.

This module imports nothing from JAX at import time (a worker must set its environment first).
"""
from __future__ import annotations

import os
import resource
import time
from typing import Optional

__all__ = ["cpu_xla_env", "check_xla", "cpu_seconds", "Stopwatch"]

#: the environment variable a worker reads to know how many devices its parent asked for
EXPECT_VAR = "JAXDP_BENCH_DEVICES"


def cpu_xla_env(devices: int = 1, single_thread: bool = False, base: Optional[dict] = None) -> dict:
    """Environment variables for a JAX-on-CPU worker process with ``devices`` host devices.

    Args:
        devices: the number of XLA host (CPU) devices (``--xla_force_host_platform_device_count``), >= 1.
        single_thread: also ``--xla_cpu_multi_thread_eigen=false`` (Eigen's matrix kernels on one thread: a
            one-core measurement).
        base: the ``XLA_FLAGS`` to extend (``None``: this process's, without any device count or Eigen flag).

    Returns:
        ``{"JAX_PLATFORMS": "cpu", "XLA_FLAGS": ..., "JAXDP_BENCH_DEVICES": str(devices)}``.

    Raises:
        ValueError: ``devices`` below 1, or a word of ``base`` that is not a ``--flag`` (XLA would ignore it and
            every flag after it).
        TypeError: ``devices`` not an integer.
    """
    if isinstance(devices, bool) or not isinstance(devices, int):
        raise TypeError(f"devices must be an int, got {type(devices).__name__}")
    if devices < 1:
        raise ValueError(f"devices must be >= 1, got {devices}")
    words = (os.environ.get("XLA_FLAGS", "") if base is None else base).split()
    for w in words:
        if not w.startswith("--"):
            raise ValueError(f"XLA_FLAGS word {w!r} is not a --flag: XLA would stop parsing there")
    words = [w for w in words if not w.startswith(("--xla_force_host_platform_device_count",
                                                    "--xla_cpu_multi_thread_eigen"))]
    if single_thread:
        words.append("--xla_cpu_multi_thread_eigen=false")
    words.append(f"--xla_force_host_platform_device_count={devices}")
    return {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": " ".join(words), EXPECT_VAR: str(devices)}


def check_xla(expected_devices: Optional[int] = None) -> dict:
    """In a worker: assert that JAX has the device count its parent asked for, and describe the settings.

    Args:
        expected_devices: the device count required (``None``: ``$JAXDP_BENCH_DEVICES`` if set, else no check).

    Returns:
        ``{"devices", "platform", "xla_flags", "single_thread"}``: the device count JAX reports, its platform,
        ``XLA_FLAGS`` as this process saw it, and whether Eigen's multi-threading was switched off.

    Raises:
        RuntimeError: the device count differs from the one asked for (the flags were not all parsed).
    """
    import jax

    if expected_devices is None and os.environ.get(EXPECT_VAR):
        expected_devices = int(os.environ[EXPECT_VAR])
    flags = os.environ.get("XLA_FLAGS", "")
    n = jax.device_count()
    if expected_devices is not None and n != expected_devices:
        raise RuntimeError(f"asked for {expected_devices} device(s) but jax.device_count() = {n} "
                           f"(XLA_FLAGS={flags!r})")
    return {"devices": n, "platform": jax.devices()[0].platform, "xla_flags": flags,
            "single_thread": "--xla_cpu_multi_thread_eigen=false" in flags.split()}


def cpu_seconds(children: bool = False) -> float:
    """CPU seconds (user + system) used so far by this process, plus its waited-for children if ``children``.

    Args:
        children: include terminated, waited-for child processes (``RUSAGE_CHILDREN``).

    Returns:
        Seconds of CPU time.
    """
    s = time.process_time()
    if children:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        s += r.ru_utime + r.ru_stime
    return s


class Stopwatch:
    """Wall and CPU seconds of a block: ``with Stopwatch() as sw: ...; sw.wall, sw.cpu``.

    Args:
        children: count the CPU time of child processes waited for inside the block too.
    """

    def __init__(self, children: bool = False) -> None:
        self.children = children
        self.wall = self.cpu = float("nan")

    def __enter__(self) -> "Stopwatch":
        self._w, self._c = time.perf_counter(), cpu_seconds(self.children)
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self._w
        self.cpu = cpu_seconds(self.children) - self._c
