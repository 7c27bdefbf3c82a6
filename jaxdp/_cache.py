"""JAX's persistent compilation cache for jaxdp: :func:`enable_compilation_cache`.

A new process otherwise compiles every program again (2.3-3.9 CPU-seconds for a first ``simulate`` call of
UCB1, EXP3, Hedge, DP-FTRL or L2P-MW on a 2-core machine, benchmarks/FIRST_CALL.md); with the cache, a later
process loads the compiled executable from disk. This module does not import JAX at import time.
"""
from __future__ import annotations

import os
import pathlib
import sys
from typing import Optional, Union

__all__ = ["enable_compilation_cache", "default_cache_dir", "CACHE_ENV"]

#: the environment variable that moves the cache directory (empty: no cache)
CACHE_ENV = "JAXDP_CACHE_DIR"


def default_cache_dir() -> Optional[pathlib.Path]:
    """The directory :func:`enable_compilation_cache` uses when given no path.

    Returns:
        ``$JAXDP_CACHE_DIR`` when set (``None`` when set but empty: the cache is off), else
        ``$XDG_CACHE_HOME/jaxdp/jax``, else ``~/.cache/jaxdp/jax``.
    """
    if CACHE_ENV in os.environ:
        v = os.environ[CACHE_ENV].strip()
        return pathlib.Path(v).expanduser() if v else None
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    root = pathlib.Path(base).expanduser() if base else pathlib.Path.home() / ".cache"
    return root / "jaxdp" / "jax"


def enable_compilation_cache(path: Union[str, os.PathLike, None] = None) -> Optional[pathlib.Path]:
    """Turn on JAX's persistent compilation cache, so that a new process reuses compiled programs.

    Every program is cached, however short its compilation (``jax_persistent_cache_min_compile_time_secs = 0``,
    ``jax_persistent_cache_min_entry_size_bytes = 0``): jaxdp's programs compile in 0.2-4 s each. Several
    processes may share one directory (JAX writes each entry atomically). The ``jaxdp`` command line calls this
    for every command except ``bench`` (whose compile times it would hide); ``jaxdp --no-cache ...`` or
    ``JAXDP_CACHE_DIR=`` (empty) turns it off.

    Call it before the first compilation. When JAX is not imported yet, the settings go into the environment
    (``JAX_COMPILATION_CACHE_DIR`` and the two thresholds), where JAX reads them at import and child processes
    inherit them; otherwise into ``jax.config``.

    Args:
        path: the cache directory (created if missing). ``None``: ``$JAXDP_CACHE_DIR`` if set (empty: do
            nothing and return ``None``), else ``$XDG_CACHE_HOME/jaxdp/jax`` or ``~/.cache/jaxdp/jax``.

    Returns:
        The cache directory, or ``None`` when ``JAXDP_CACHE_DIR`` is set and empty (cache off).

    Raises:
        TypeError: ``path`` is not a string or path.
        ValueError: ``path`` is an empty string.
        OSError: the directory cannot be created.
    """
    if path is None:
        d = default_cache_dir()
        if d is None:
            return None
    else:
        if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        if not str(os.fspath(path)).strip():
            raise ValueError("path must not be empty (to turn the cache off, do not call enable_compilation_cache)")
        d = pathlib.Path(os.fspath(path)).expanduser()
    d = d.resolve()
    d.mkdir(parents=True, exist_ok=True)
    settings = {"jax_compilation_cache_dir": str(d), "jax_persistent_cache_min_compile_time_secs": 0.0,
                "jax_persistent_cache_min_entry_size_bytes": 0}
    if "jax" not in sys.modules:
        for k, v in settings.items():
            os.environ[k.upper()] = str(v)
        return d
    import jax

    for k, v in settings.items():
        jax.config.update(k, v)
    try:   # a cache already initialised in this process (with another directory, or none) starts again
        from jax._src import compilation_cache as _cc

        _cc.reset_cache()
    except (ImportError, AttributeError):   # pragma: no cover - a JAX without it
        pass
    return d
