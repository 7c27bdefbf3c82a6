"""Seed tiles: how many seeds the engine runs at once per device, from the bytes of state a seed carries
and the platform's budget (half the last-level cache on CPU).

Import these from ``jaxdp.core.simulate``."""
from __future__ import annotations

import functools
import math
from typing import Any, Optional

import jax
import jax.numpy as jnp
import numpy as np

from .types import Adversary, Learner, Problem


# Bytes of carried state per device that a tile of seeds may occupy. The scan
# over rounds reads and writes the whole carry every round, plus per-round
# temporaries of about the same size (losses, weights, draws); once a tile's
# working set outgrows the last-level cache, every round streams it from main
# memory and throughput falls (benchmarks/SCALING.md). CPU: half the
# last-level cache (read from sysfs; 32 MiB if unknown). Measured 2026-11-24 on
# this 2-core machine (32 MiB L3), seeds interleaved, tiles of 256 to 32768
# seeds: every case peaked at 11-14 MiB of carry (Hedge d=100 4096 seeds: 4.08e6
# seed-rounds/s against 3.30e6 at 44 MiB; d=1000 512 seeds: 4.5e5 against 3.8e5
# at 27 MiB; L2P-MW 8192 seeds: 1.35e7 against 1.10e7 at 25 MiB; DP-FTRL flat
# within noise from 5 to 38 MiB). GPU: 1 GiB, i.e. tiles only to bound memory.
# XLA:GPU runs a while loop's control on the host and synchronizes every
# iteration (jax-ml/jax#2491), so n tiles cost n x T synchronizations instead
# of T. A tile's round must therefore move far more than (sync time x HBM
# bandwidth), about 30 MB at 10 us and 3.35 TB/s on an H100. The working set
# of a 32 MiB tile (the former guess, a share of the 50 MB L2) does not stay
# in L2 either. TPU: a share of VMEM (loops run on the device). Both are
# unmeasured. Below the minimum tile the per-iteration overhead of the scan
# dominates.
_TILE_BUDGET = {"gpu": 2**30, "cuda": 2**30, "rocm": 2**30, "tpu": 16 * 2**20}
_TILE_MIN = {"cpu": 32, "gpu": 4096, "cuda": 4096, "rocm": 4096, "tpu": 1024}
_CPU_CACHE_DEFAULT = 32 * 2**20


def _parse_cache_size(text: str) -> Optional[int]:
    text = text.strip().upper()
    mult = {"K": 2**10, "M": 2**20, "G": 2**30}
    try:
        if text and text[-1] in mult:
            return int(float(text[:-1]) * mult[text[-1]])
        return int(text)
    except ValueError:
        return None


@functools.lru_cache(maxsize=1)
def cpu_cache_bytes() -> int:
    """Size of the largest CPU cache (the last level), from Linux sysfs; 32 MiB where it cannot be read."""
    import glob

    sizes = []
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            with open(path) as fh:
                v = _parse_cache_size(fh.read())
        except OSError:
            v = None
        if v:
            sizes.append(v)
    return max(sizes) if sizes else _CPU_CACHE_DEFAULT


def tile_budget(platform: Optional[str] = None) -> int:
    """Bytes of carried state one tile of seeds may hold on ``platform`` (see :func:`seed_tile`).

    Args:
        platform: a JAX platform name (``"cpu"``, ``"gpu"``, ``"tpu"``); ``None`` for the default backend.

    Returns:
        The budget in bytes.
    """
    platform = (platform or jax.default_backend()).lower()
    if platform == "cpu":
        return cpu_cache_bytes() // 2
    return _TILE_BUDGET.get(platform, _TILE_BUDGET["gpu"])


def _leaf_bytes(s) -> int:
    if jnp.issubdtype(s.dtype, jax.dtypes.prng_key):
        return math.prod(s.shape) * 8  # a threefry key: two uint32 words
    return math.prod(s.shape) * np.dtype(s.dtype).itemsize


def _tree_bytes(tree) -> int:
    return int(sum(_leaf_bytes(s) for s in jax.tree_util.tree_leaves(tree)))


def carry_bytes(learner: Learner, adversary: Adversary, problem: Problem, params: Any, adv_params: Any) -> int:
    """Bytes of state one seed carries from round to round (learner, adversary, comparator statistics).

    Args:
        learner: the learner.
        adversary: the adversary.
        problem: the problem (its comparator statistics are carried too).
        params: the learner's params.
        adv_params: the adversary's params.

    Returns:
        Bytes of carried state per seed.
    """
    def init(key):
        k1, k2 = jax.random.split(key)
        ls = learner.init(k1, params)
        a = adversary.init(k2, adv_params)
        loss0 = adversary.loss(a, jnp.int32(0))
        return ls, a, problem.stats_init(loss0), loss0

    shapes = jax.eval_shape(init, jax.random.key(0))
    return _tree_bytes(shapes)


def _avals_key(tree) -> tuple:
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return treedef, tuple((tuple(np.shape(a)), str(jnp.result_type(a))) for a in leaves)


_CARRY_CACHE: dict = {}


def _default_tile_carry(learner, adversary, problem, params, adv_params) -> int:
    """``carry_bytes`` memoized on the engine objects and the parameters' shapes and dtypes (it traces the
    inits with ``eval_shape``, 5-15 ms that the default tile used to add to every ``simulate`` call). The
    cache holds no arrays; a stale entry could only change the tile, never a result."""
    try:
        k = (learner, adversary, problem, _avals_key((params, adv_params)))
        hit = _CARRY_CACHE.get(k)
    except TypeError:   # unhashable pieces: no memo
        return carry_bytes(learner, adversary, problem, params, adv_params)
    if hit is None:
        if len(_CARRY_CACHE) >= 256:
            _CARRY_CACHE.clear()
        hit = _CARRY_CACHE[k] = carry_bytes(learner, adversary, problem, params, adv_params)
    return hit


def seed_tile(carry: int, platform: Optional[str] = None) -> int:
    """The tile size ``simulate`` uses for seeds that carry ``carry`` bytes each on ``platform``
    (default: the default backend): the largest power of two whose tile's carry fits the
    platform's budget (:func:`tile_budget`: half the last-level cache on CPU), at least the
    platform's minimum tile.

    Args:
        carry: bytes of state one seed carries (:func:`carry_bytes`).
        platform: a JAX platform name (``"cpu"``, ``"gpu"``, ``"tpu"``); ``None`` for the default backend.

    Returns:
        The number of seeds per tile, a power of two.
    """
    platform = (platform or jax.default_backend()).lower()
    budget = tile_budget(platform)
    lo = _TILE_MIN.get(platform, _TILE_MIN["gpu"])
    n = max(1, budget // max(1, int(carry)))
    return max(lo, 1 << (n.bit_length() - 1))


def _tiled(vf, xs, tile: int):
    """``vf`` (vmapped) over the leading axis of ``xs`` in ``len / tile`` sequential tiles."""
    n = jax.tree_util.tree_leaves(xs)[0].shape[0]
    if tile >= n:
        return vf(*xs)
    n_tiles = n // tile
    xs_t = jax.tree_util.tree_map(lambda a: a.reshape((n_tiles, tile) + a.shape[1:]), xs)
    out = jax.lax.map(lambda x: vf(*x), xs_t)
    return jax.tree_util.tree_map(lambda a: a.reshape((n,) + a.shape[2:]), out)


def _layout(n_items: int, n_dev: int, tile: int) -> tuple[int, int]:
    """``(tile, padded item count)``: each device gets ``n_tiles`` equal tiles of at most ``tile`` items."""
    per_dev = -(-n_items // n_dev)
    n_tiles = -(-per_dev // tile)
    t = -(-per_dev // n_tiles)
    return t, n_dev * n_tiles * t
