"""The engine: ``rollout`` (one seed, pure), ``simulate`` (many seeds, a host-side
driver) and ``monte_carlo`` (the same for one-shot estimators).

Structure (docs/guide/concepts.md)::

    simulate / monte_carlo (host: validate, pad, shard, gather to NumPy)
      shard_map over the devices of every process (the seed axis; grid points x seeds when batched)
        scan over tiles of seeds (sized so a tile's carried state stays in cache)
          vmap over the seeds of a tile
            rollout: scan over blocks (only if learner.block_size > 1)
              scan over rounds t < T_max, masked by the traced horizon T

* :func:`rollout` is the library's pure entry point: a jittable, vmappable,
  exportable function of one key. ``simulate`` is built on it and returns
  the same numbers bit for bit.
* The horizon ``T`` is traced: one compilation serves every ``T <= T_max``.
* Nothing of size ``T x d`` is stored: losses come from the adversary's
  counter-based key, the comparator from sufficient statistics, and the
  regret trace only at ``n_checkpoints`` log-spaced rounds. Peak memory does
  not depend on ``T``.
* Scalar accumulators use Kahan summation (``jaxdp.core.accumulate``), so
  float32 totals stay accurate to a few ulps at ``T = 10^7``.
* Multi-process: under ``jax.distributed`` the seed axis spans
  ``jax.devices()`` (every process's devices); each process computes only
  its share and the results are all-gathered, so every process gets the same
  arrays, bit-identical to a one-process run. :func:`process_local` restricts
  a block of code to this process's devices (no collectives).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import math
from typing import Any, Iterator, Optional, Sequence, Union

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from .accumulate import kahan_add
from .types import AdaptiveAdversary, Adversary, Learner, Problem, released, tree_where
from .validation import SEED_LIMIT, check_adversary_params, check_positive_int, check_seed, describe_value

__all__ = [
    "rollout",
    "simulate",
    "monte_carlo",
    "checkpoint_rounds",
    "seed_keys",
    "shard_seeds",
    "process_local",
    "seed_tile",
    "tile_budget",
    "n_index_actions",
    "carry_bytes",
    "cpu_cache_bytes",
]


# --------------------------------------------------------------------------- devices and processes


_PROCESS_LOCAL: contextvars.ContextVar[bool] = contextvars.ContextVar("jaxdp_process_local", default=False)


@contextlib.contextmanager
def process_local() -> Iterator[None]:
    """Within this block, ``simulate`` and ``monte_carlo`` use this process's devices only.

    Under ``jax.distributed`` they otherwise spread the seeds over every
    process's devices and all-gather the results, which is a collective: every
    process must make the same call. Code that gives different processes
    different work (a study's chunks, say) runs its calls under
    ``process_local()``: each process then computes all the seeds of its own
    call on its own devices and never waits for the others. Results are the
    same either way, bit for bit. Outside ``jax.distributed`` this changes nothing.

    Returns:
        A context manager; the body runs with this process's devices only.
    """
    token = _PROCESS_LOCAL.set(True)
    try:
        yield
    finally:
        _PROCESS_LOCAL.reset(token)


def _engine_mesh(local: bool = False) -> Optional[Mesh]:
    """The seed mesh: every process's devices under ``jax.distributed`` (unless ``local`` or
    :func:`process_local`), else the local ones; ``None`` on one device."""
    glob = not local and jax.process_count() > 1 and not _PROCESS_LOCAL.get()
    devs = jax.devices() if glob else jax.local_devices()
    if len(devs) <= 1:
        return None
    return Mesh(np.asarray(devs), ("seeds",))


def shard_seeds(x, axis: int = 0):
    """Place ``x`` (a pytree) with its ``axis`` split over this process's local devices.

    No-op on one device. The axis length must be a multiple of the local
    device count (``_pad_axis`` pads to ensure it). For custom drivers;
    ``simulate`` and ``monte_carlo`` shard over the global mesh themselves.

    Args:
        x: a pytree of arrays.
        axis: the axis to split over the local devices (its length a multiple of the device count).

    Returns:
        ``x`` placed on the local devices, sharded along ``axis``.
    """
    mesh = _engine_mesh(local=True)
    if mesh is None:
        return x

    def put(a):
        spec = [None] * a.ndim
        spec[axis] = "seeds"
        return jax.device_put(a, NamedSharding(mesh, P(*spec)))

    return jax.tree_util.tree_map(put, x)


def _pad_axis(keys, axis: int):
    n_dev = jax.local_device_count()
    n = keys.shape[axis]
    pad = (-n) % n_dev
    if pad:
        idx = np.concatenate([np.arange(n), np.zeros(pad, dtype=np.int64)])
        keys = jnp.take(keys, jnp.asarray(idx), axis=axis)
    return keys, n


def _put(x, mesh: Optional[Mesh], spec) -> Any:
    """Place one array on ``mesh`` with ``spec`` (a no-op without a mesh)."""
    if mesh is None:
        return x
    sharding = NamedSharding(mesh, spec)
    if mesh.is_multi_process:
        # every process holds the same host value; each contributes its devices' slices
        host = np.asarray(x)
        return jax.make_array_from_callback(host.shape, sharding, lambda idx: host[idx])
    return jax.device_put(x, sharding)


def _replicate(tree, mesh: Optional[Mesh]):
    if mesh is None:
        return tree
    return jax.tree_util.tree_map(lambda a: _put(jnp.asarray(a), mesh, P()), tree)


def _to_host(tree, mesh: Optional[Mesh]):
    if mesh is not None and mesh.is_multi_process:
        from jax.experimental import multihost_utils

        return multihost_utils.process_allgather(tree, tiled=True)
    return jax.tree_util.tree_map(np.asarray, tree)


# --------------------------------------------------------------------------- seed tiles


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


# --------------------------------------------------------------------------- the pure core


def _acc_dtype(x):
    return jnp.int32 if (x.dtype == jnp.bool_ or jnp.issubdtype(x.dtype, jnp.integer)) else jnp.result_type(float)

def n_index_actions(problem: Problem, x: Any, loss: Any) -> Optional[int]:
    """``d`` when actions are expert indices (a finite action set, ``problem.grad is None``, an integer
    scalar ``x`` and a loss vector of shape ``(d,)``): valid actions are ``0 <= x < d``. ``None`` otherwise.

    Args:
        problem: the online problem; a problem with a ``grad`` has continuous actions.
        x: one action of the learner (a value or an abstract array with ``shape`` and ``dtype``).
        loss: one round's loss (a vector of shape ``(d,)`` for experts).

    Returns:
        The number of experts ``d``, or ``None`` when the actions are not expert indices.
    """
    if problem.grad is not None or tuple(np.shape(x)) != () or not jnp.issubdtype(jnp.result_type(x), jnp.integer):
        return None
    shape = getattr(loss, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) == 1 else None


#: the keys ``_rollout_impl(..., flag_actions=True)`` adds: the first active round whose action is out of
#: range (-1 if none) and that action
INVALID_ACTION_KEYS = ("invalid_action_round", "invalid_action")


def _salt_key(key, salt):
    """``key`` if ``salt == 0``, else ``fold_in(key, salt)`` (``salt`` may be traced and vmapped)."""
    impl = jax.random.key_impl(key)
    kd = jax.random.key_data(key)
    # through the key data: a select between `key` and a key derived from it would count as a reuse
    other = jax.random.key_data(jax.random.fold_in(jax.random.wrap_key_data(kd, impl=impl), salt))
    return jax.random.wrap_key_data(jnp.where(salt == 0, kd, other), impl=impl)


def _rollout_impl(learner: Learner, adversary: Adversary, problem: Problem, T_max: int, ckpts: tuple,
                  params, adv_params, key, T, *, flag_actions: bool = False, learner_salt=None):
    """One seed, unvalidated (:func:`rollout`); ``flag_actions`` adds :data:`INVALID_ACTION_KEYS`,
    ``learner_salt`` (for ``jaxdp.testing``) another learner key against the same adversary."""
    k_learn, k_adv, k_init, k_block = jax.random.split(key, 4)
    if learner_salt is not None:
        k_learn, k_init, k_block = (_salt_key(k, learner_salt) for k in (k_learn, k_init, k_block))
    ls = learner.init(k_init, params)
    adaptive = isinstance(adversary, AdaptiveAdversary)   # decided at trace time: the oblivious trace is unchanged
    a_state = adversary.init(k_adv, adv_params)
    loss0 = adversary.loss(a_state, jnp.int32(0))
    stats0 = problem.stats_init(loss0)
    n_act = n_index_actions(problem, ls.x, loss0)

    info_struct = jax.eval_shape(lambda: learner.step(k_learn, ls, loss0, params)[1])
    info0 = jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, _acc_dtype(s)), info_struct)
    has_exp = "expected_loss" in info_struct
    block_info0 = {}
    end_block = learner.end_block
    if end_block is not None:
        bstruct = jax.eval_shape(lambda: end_block(k_block, ls, params)[1])
        block_info0 = jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, _acc_dtype(s)), bstruct)

    fdt = jnp.result_type(float)
    K = len(ckpts)
    ck = np.asarray(ckpts, dtype=np.int64)
    ck_rounds = jnp.asarray(ck, jnp.int32)

    def slot_of(t):
        """Slot of round t+1 among the checkpoints, K if it is not one (O(K), no O(T_max) table)."""
        i = jnp.minimum(jnp.sum(ck_rounds < t + 1), K - 1)
        return jnp.where(ck_rounds[i] == t + 1, i, K).astype(jnp.int32)

    T = jnp.asarray(T, jnp.int32)

    zero = jnp.zeros((), fdt)
    m0 = dict(
        loss=(zero, zero),
        exp=(zero, zero),
        info=info0,
        binfo=block_info0,
        stats=stats0,
        ck=jnp.full((K + 1,), jnp.nan, fdt),
        ck_exp=jnp.full((K + 1,), jnp.nan, fdt),
    )
    if n_act is not None:
        m0["bad"] = (jnp.int32(-1), jnp.zeros((), jnp.result_type(ls.x)))
    if adaptive:
        m0["adv"] = a_state

    def round_body(carry, t):
        ls, m = carry
        a_t = m["adv"] if adaptive else a_state
        loss_t = adversary.loss(a_t, t)
        incurred = jnp.asarray(problem.value(loss_t, ls.x), fdt)
        ls_new, info = learner.step(jax.random.fold_in(k_learn, t), ls, loss_t, params)
        if adaptive:   # it sees x_t (ls.x, played this round) only after loss_t is fixed
            m = dict(m, adv=adversary.observe(a_t, t, ls.x, released(learner, ls_new, info, params)
                                                                 if adversary.sees_outputs else {}))
        active = t < T
        if n_act is not None:
            # an index outside [0, d): loss[x] would be clamped to a finite value; make it NaN instead
            bad = (ls.x < 0) | (ls.x >= n_act)
            incurred = jnp.where(bad, jnp.nan, incurred)
            first = bad & active & (m["bad"][0] < 0)
            m = dict(m, bad=(jnp.where(first, t, m["bad"][0]), jnp.where(first, ls.x, m["bad"][1])))
        # the learner's state past T is never read (only masked metrics are
        # returned), so it is not masked: that saves a pass over the state
        ls = ls_new
        loss_acc = kahan_add(*m["loss"], jnp.where(active, incurred, 0.0))
        if has_exp:
            e = jnp.asarray(info["expected_loss"], fdt)
            exp_acc = kahan_add(*m["exp"], jnp.where(active, e, 0.0))
        else:
            exp_acc = m["exp"]
        info_acc = jax.tree_util.tree_map(
            lambda a, v: a + jnp.where(active, v, 0).astype(a.dtype), m["info"], info)
        stats = tree_where(active, problem.stats_update(m["stats"], loss_t), m["stats"])
        slot = slot_of(t)

        def write(args):
            ckv, cke = args
            best = jnp.asarray(problem.best(stats), fdt)
            ckv = ckv.at[slot].set(jnp.where(active, loss_acc[0] - best, jnp.nan))
            cke = cke.at[slot].set(jnp.where(active, exp_acc[0] - best, jnp.nan))
            return ckv, cke

        # `slot` depends only on the scan index, never on a vmapped value, so
        # this cond stays a real branch under vmap: the O(d) comparator is
        # evaluated at the K checkpoints only.
        ckv, cke = jax.lax.cond(slot < K, write, lambda a: a, (m["ck"], m["ck_exp"]))
        m = dict(m, loss=loss_acc, exp=exp_acc, info=info_acc, stats=stats, ck=ckv, ck_exp=cke)
        return (ls, m), None

    b = max(1, int(learner.block_size))
    if learner.end_block is None:
        # the round index is carried, not scanned over: an arange(T_max) input
        # would make memory grow with T_max
        def counted(carry, _):
            c, t = carry
            c, _ = round_body(c, t)
            return (c, t + 1), None

        ((ls, m), _), _ = jax.lax.scan(counted, ((ls, m0), jnp.int32(0)), None, length=T_max)
    else:
        n_blocks = -(-T_max // b)
        inner_T = n_blocks * b

        def block_body(carry, _):
            (ls, m), j = carry

            ts = j * b + jnp.arange(b, dtype=jnp.int32)
            if inner_T > T_max:
                (ls2, m2), _ = jax.lax.scan(
                    lambda c, t: jax.lax.cond(t < T_max, lambda cc: round_body(cc, t), lambda cc: (cc, None), c),
                    (ls, m), ts)
            else:
                (ls2, m2), _ = jax.lax.scan(round_body, (ls, m), ts)
            ls_b, binfo = learner.end_block(jax.random.fold_in(k_block, j), ls2, params)
            active_b = (j + 1) * b < T
            binfo_acc = jax.tree_util.tree_map(
                lambda a, v: a + jnp.where(active_b, v, 0).astype(a.dtype), m2["binfo"], binfo)
            return ((ls_b, dict(m2, binfo=binfo_acc)), j + 1), None

        ((ls, m), _), _ = jax.lax.scan(block_body, ((ls, m0), jnp.int32(0)), None, length=n_blocks)

    best = jnp.asarray(problem.best(m["stats"]), fdt)
    out = {
        "T": T,
        "loss": m["loss"][0],
        "best_loss": best,
        "regret": m["loss"][0] - best,
        "regret_ckpt": m["ck"][:K],
    }
    if has_exp:
        out["expected_loss"] = m["exp"][0]
        out["expected_regret"] = m["exp"][0] - best
        out["expected_regret_ckpt"] = m["ck_exp"][:K]
        if adaptive:   # not unbiased against an adaptive adversary (AdaptiveAdversary's docstring)
            out["expected_regret"] = jnp.full_like(out["expected_regret"], jnp.nan)
            out["expected_regret_ckpt"] = jnp.full_like(out["expected_regret_ckpt"], jnp.nan)
    for name, v in list(m["info"].items()) + list(m["binfo"].items()):
        if name == "expected_loss":
            continue
        out["switches" if name == "switched" else name] = v
    if flag_actions:
        out["invalid_action_round"] = m["bad"][0] if n_act is not None else jnp.int32(-1)
        out["invalid_action"] = (m["bad"][1] if n_act is not None else jnp.int32(0)).astype(jnp.int32)
    return out


# --------------------------------------------------------------------------- helpers


def checkpoint_rounds(T_max: int, n: int = 24) -> np.ndarray:
    """Log-spaced distinct rounds in ``[1, T_max]`` (1-indexed), ending at ``T_max``.

    Args:
        T_max: the last round (>= 1).
        n: the most rounds to return.

    Returns:
        Sorted distinct 1-indexed rounds, ending at ``T_max``.
    """
    T_max = check_positive_int("T_max", T_max)
    n = check_positive_int("n_checkpoints", n)
    r = np.unique(np.round(np.logspace(0, np.log10(T_max), n)).astype(np.int64))
    r = r[(r >= 1) & (r <= T_max)]
    if r[-1] != T_max:
        r = np.append(r, T_max)
    return r


def seed_keys(seed: int, seeds: Any) -> jax.Array:
    """Keys for seed indices: ``fold_in(key(seed), i)``.

    A seed index always gets the same key, however seeds are chunked, and
    every learner run at that index faces the same adversary sequence.

    Args:
        seed: base seed, an integer in ``[0, 2**32)`` (keys are 32-bit: a larger, negative or fractional seed
            would alias another one and is refused).
        seeds: a positive int ``n`` (indices ``range(n)``) or a non-empty 1-D array of seed indices in ``[0, 2**32)``.

    Returns:
        The keys ``fold_in(key(seed), i)``, one per seed index.

    Raises:
        ValueError: if ``seed`` or a seed index is negative, fractional or at least ``2**32``.
    """
    seed = check_seed("seed", seed)
    if np.ndim(seeds) == 0:
        if isinstance(seeds, (bool, np.bool_)) or not np.issubdtype(np.asarray(seeds).dtype, np.integer):
            raise TypeError(f"seeds must be a positive integer (the number of seeds) or a 1-D array of seed "
                            f"indices, got {describe_value(seeds)}")
        if int(seeds) < 1:
            raise ValueError(f"seeds must be a positive integer (the number of seeds, at least 1) or a non-empty "
                             f"array of seed indices, got {int(seeds)}")
        idx = np.arange(int(seeds))
    else:
        idx = np.asarray(seeds)
        if idx.ndim != 1 or idx.size == 0:
            raise ValueError(f"seeds must be a positive integer or a non-empty 1-D array of seed indices, got "
                             f"{describe_value(seeds)}")
        if not np.issubdtype(idx.dtype, np.integer):
            raise TypeError(f"seeds must be integer seed indices, got dtype {idx.dtype}")
    if idx.min() < 0 or idx.max() >= SEED_LIMIT:
        raise ValueError(f"seed indices must be integers in [0, 2**32), got values in [{idx.min()}, {idx.max()}]")
    base = jax.random.key(seed)
    return jax.vmap(lambda i: jax.random.fold_in(base, i))(jnp.asarray(idx, dtype=jnp.uint32))



def _check_engine_objects(learner, adversary, problem):
    if not isinstance(learner, Learner):
        raise TypeError(f"learner must be a jaxdp Learner, got {type(learner).__name__}")
    if not isinstance(adversary, (Adversary, AdaptiveAdversary)):
        raise TypeError(f"adversary must be a jaxdp Adversary or AdaptiveAdversary, got {type(adversary).__name__}")
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a jaxdp Problem, got {type(problem).__name__}")


def _check_T_max(T_max) -> int:
    T_max = check_positive_int("T_max", T_max)
    if T_max >= 2**31 - 1:
        raise ValueError(f"T_max must be < 2**31 - 1, got {T_max}")
    return T_max


def _resolve_checkpoints(T_max: int, checkpoints) -> tuple:
    """``checkpoints``: an int (that many log-spaced rounds) or a sequence of rounds in ``[1, T_max]``."""
    if isinstance(checkpoints, (int, np.integer)) and not isinstance(checkpoints, bool):
        return tuple(int(r) for r in checkpoint_rounds(T_max, int(checkpoints)))
    try:
        r = np.asarray(checkpoints)
    except Exception:  # noqa: BLE001
        r = np.asarray([None])
    if r.ndim != 1 or r.size == 0 or not np.issubdtype(r.dtype, np.integer) or r.min() < 1 or r.max() > T_max:
        raise ValueError(f"checkpoints must be a positive int (a number of log-spaced rounds) or a non-empty "
                         f"sequence of rounds in [1, T_max={T_max}], got {checkpoints!r}")
    return tuple(int(v) for v in np.unique(r))


# --------------------------------------------------------------------------- one run


def rollout(
    learner: Learner,
    adversary: Adversary,
    problem: Problem,
    params: Any,
    adv_params: Any,
    key: jax.Array,
    T: Any,
    *,
    T_max: Optional[int] = None,
    checkpoints: Union[int, Sequence[int]] = 24,
) -> dict[str, jax.Array]:
    """One run of ``learner`` against ``adversary``: the engine's pure core.

    A pure function of its arguments, with no host work: it can be wrapped in
    ``jax.jit``, ``jax.vmap`` (over keys, parameters or horizons),
    ``jax.export`` or, for a learner that is smooth in a hyperparameter,
    ``jax.grad``. :func:`simulate` is ``rollout`` vmapped over seeds, tiled
    and sharded, and returns the same numbers bit for bit::

        run = jax.jit(jax.vmap(lambda k: rollout(learner, adv, prob, params, adv_params, k, T, T_max=T_max)))
        out = run(seed_keys(0, 1024))

    Args:
      learner, adversary, problem: the engine objects (``jaxdp.core.types``).
      params, adv_params: the learner's and the adversary's parameter pytrees (may be traced).
      key: one typed PRNG key (``jax.random.key``; consumed). The adversary's
        stream is split from it, so equal keys give equal loss sequences
        across learners.
      T: the horizon, ``1 <= T <= T_max`` (may be traced; rounds ``t >= T`` are masked).
      T_max: static scan length (default: ``T``, which must then be a concrete int).
      checkpoints: static; an int (that many log-spaced rounds,
        :func:`checkpoint_rounds`) or a sequence of rounds in ``[1, T_max]``.

    Returns:
      dict of arrays: ``T``; ``loss`` (realized, ``sum_t l_t(x_t)``);
      ``best_loss`` (``min_x sum_t l_t(x)``); ``regret`` (their difference);
      ``regret_ckpt`` (regret after each checkpoint round, NaN beyond ``T``;
      an expert index outside ``[0, d)`` incurs a NaN loss, so a learner
      that plays one gets NaN ``loss`` and ``regret``, never a clamped value);
      with a learner reporting ``expected_loss``: ``expected_loss``,
      ``expected_regret`` and ``expected_regret_ckpt``; every other counter the
      learner reports, summed over the active rounds (``switched`` is
      reported as ``switches``).
    """
    _check_engine_objects(learner, adversary, problem)
    if not (isinstance(key, jax.Array) and jnp.issubdtype(key.dtype, jax.dtypes.prng_key)):
        raise TypeError("key must be one typed PRNG key (jax.random.key), "
                        f"got {type(key).__name__} with dtype {getattr(key, 'dtype', None)}")
    if key.ndim != 0:
        raise ValueError(f"key must be a single key (shape ()); vmap rollout over a batch of keys, got shape {key.shape}")
    concrete_T = None
    if not isinstance(T, jax.core.Tracer):
        T_np = np.asarray(T)
        if T_np.ndim != 0 or not np.issubdtype(T_np.dtype, np.integer) or int(T_np) < 1:
            raise ValueError(f"T must be a positive integer, got {T!r}")
        concrete_T = int(T_np)
    if T_max is None:
        if concrete_T is None:
            raise ValueError("T_max is required when T is traced (the static scan length)")
        T_max = concrete_T
    T_max = _check_T_max(T_max)
    if concrete_T is not None and concrete_T > T_max:
        raise ValueError(f"T must be <= T_max={T_max}, got {concrete_T}")
    check_adversary_params(adversary, adv_params, concrete_T)
    ckpts = _resolve_checkpoints(T_max, checkpoints)
    return _rollout_impl(learner, adversary, problem, T_max, ckpts, params, adv_params, key, T)


# --------------------------------------------------------------------------- compiled engines


def _shard(local, mesh: Optional[Mesh], n_replicated: int):
    """``jit(local)``; with a mesh, ``local`` runs per device on its slice of the last argument."""
    if mesh is None:
        return jax.jit(local)
    specs = (P(),) * n_replicated + (P("seeds"),)
    return jax.jit(jax.shard_map(local, mesh=mesh, in_specs=specs, out_specs=P("seeds"), check_vma=False))


@functools.lru_cache(maxsize=256)
def _engine(learner: Learner, adversary: Adversary, problem: Problem, T_max: int, ckpts: tuple, grid: bool,
            tile: int, mesh: Optional[Mesh], impl):
    """The compiled simulate: ``f(params, adv_params, T, (key_data, grid_index))`` over flat items."""

    def local(params, adv_params, T, xs):
        kd, gidx = xs
        keys = jax.random.wrap_key_data(kd, impl=impl)
        if grid:
            def one(k, g):
                pick = functools.partial(jax.tree_util.tree_map, lambda a: a[g])
                return _rollout_impl(learner, adversary, problem, T_max, ckpts, pick(params), pick(adv_params), k,
                                     T[g], flag_actions=True)
            return _tiled(jax.vmap(one), (keys, gidx), tile)

        def one(k):
            return _rollout_impl(learner, adversary, problem, T_max, ckpts, params, adv_params, k, T,
                                 flag_actions=True)
        return _tiled(jax.vmap(one), (keys,), tile)

    return _shard(local, mesh, 3)


def _check_keys(keys, grid: bool):
    if not (isinstance(keys, jax.Array) and jnp.issubdtype(keys.dtype, jax.dtypes.prng_key)):
        raise TypeError(
            "keys must be a typed PRNG key array (jax.random.key / jaxdp.seed_keys), "
            f"got {type(keys).__name__} with dtype {getattr(keys, 'dtype', None)}")
    want = 2 if grid else 1
    if keys.ndim != want:
        raise ValueError(f"keys must have {want} dimension(s) ({'grid x seeds' if grid else 'seeds'}), got shape {keys.shape}")
    if keys.size == 0:
        raise ValueError(f"keys must hold at least one seed, got shape {keys.shape}; make them with "
                         f"seed_keys(seed, n) with n >= 1")


def simulate(
    learner: Learner,
    adversary: Adversary,
    problem: Problem,
    params: Any,
    adv_params: Any,
    keys: jax.Array,
    T: Any,
    *,
    T_max: Optional[int] = None,
    n_checkpoints: int = 24,
    grid: bool = False,
    tile: Optional[int] = None,
) -> dict[str, np.ndarray]:
    """Run ``learner`` against ``adversary`` for many seeds in one compiled call.

    ``simulate`` is the convenient host-side driver around :func:`rollout`
    (the pure core, for use inside your own ``jit``/``vmap``/``export``):
    it validates, pads, tiles and shards the seeds, and returns NumPy arrays
    equal bit for bit to ``jax.vmap(rollout)``.

    Args:
      learner, adversary, problem: the engine objects (``jaxdp.core.types``).
      params: the learner's hyperparameter pytree (leading grid axis if ``grid``).
      adv_params: the adversary's parameter pytree (leading grid axis if ``grid``).
      keys: typed keys, shape ``(S,)`` or ``(G, S)`` with ``grid=True``
        (``seed_keys`` makes them). Each key drives one independent run; the
        adversary's stream is split from it, so equal keys mean equal loss
        sequences across learners. The keys are not consumed: passing the same
        keys again reproduces the runs (common random numbers).
      T: horizon, a positive int (or ``(G,)`` ints), traced: ``T <= T_max``.
      T_max: static scan length (default ``max(T)``); one compilation serves
        every ``T <= T_max``.
      n_checkpoints: number of log-spaced rounds at which regret is recorded.
      grid: vmap over a leading grid axis of ``params``, ``adv_params``, ``T``
        and ``keys``.
      tile: seeds per tile (per device). Each device runs its seeds in
        sequential tiles of at most ``tile`` seeds, so that the state a tile
        carries from round to round stays in cache. Default: from the carried
        state's bytes (:func:`carry_bytes`, :func:`seed_tile`). Results do not
        depend on it.

    Returns:
      dict of NumPy arrays with leading axes ``(S,)`` or ``(G, S)``:
      ``regret`` (realized), ``loss``, ``best_loss``, ``expected_regret`` (if
      the learner reports ``expected_loss``), ``switches`` and every other
      counter the learner reports (summed over rounds), ``regret_ckpt`` at
      rounds ``checkpoint_rounds`` (also returned), NaN beyond ``T``.

    Regret is ``sum_t l_t(x_t) - min_x sum_t l_t(x)``.
    A learner that plays an expert index outside ``[0, d)`` (which ``loss[x]``
    would silently clamp) gets a NaN loss for that round, and ``simulate``
    raises a ``ValueError`` after the run naming the seed, the round and the
    action (:func:`rollout` returns the NaN regret; it cannot raise under ``jit``).
    Seeds (grid points x seeds with ``grid=True``) are sharded over all
    devices: under ``jax.distributed`` those of every process (each process
    computes its share; every process gets all results), unless inside
    :func:`process_local`. Results are bit-identical to a single-device run.
    """
    _check_engine_objects(learner, adversary, problem)
    _check_keys(keys, grid)
    tile = None if tile is None else check_positive_int("tile", tile)
    T_arr = np.asarray(T)
    if grid:
        if T_arr.ndim != 1 or T_arr.shape[0] != keys.shape[0]:
            raise ValueError(f"T must have shape ({keys.shape[0]},) (one horizon per grid point), got {T_arr.shape}")
    elif T_arr.ndim != 0:
        raise ValueError(f"T must be a single integer (use grid=True for one T per grid point), got shape {T_arr.shape}")
    if not np.issubdtype(T_arr.dtype, np.integer):
        raise TypeError(f"T must be a positive integer, got {T!r}")
    if T_arr.size and T_arr.min() < 1:
        raise ValueError(f"T must be a positive integer, got {T!r}")
    if T_max is None:
        T_max = int(T_arr.max())
    T_max = _check_T_max(T_max)
    if T_arr.max() > T_max:
        raise ValueError(f"T must be <= T_max={T_max}, got {int(T_arr.max())}")
    check_adversary_params(adversary, adv_params, T_arr)   # e.g. replayed data: columns vs d, T vs its length
    ckpts = tuple(int(r) for r in checkpoint_rounds(T_max, n_checkpoints))
    if grid:
        G = keys.shape[0]
        for name, tree in (("params", params), ("adv_params", adv_params)):
            for leaf in jax.tree_util.tree_leaves(tree):
                if np.ndim(leaf) == 0 or np.shape(leaf)[0] != G:
                    raise ValueError(f"with grid=True every leaf of {name} needs a leading axis of length {G}, "
                                     f"got shape {np.shape(leaf)}")

    mesh = _engine_mesh()
    n_dev = 1 if mesh is None else mesh.size
    if tile is None:
        one_p = jax.tree_util.tree_map(lambda a: a[0], (params, adv_params)) if grid else (params, adv_params)
        platform = (mesh.devices.flat[0] if mesh is not None else jax.local_devices()[0]).platform
        with _misfit_names_its_cause():
            tile = seed_tile(_default_tile_carry(learner, adversary, problem, *one_p), platform)
    S = keys.shape[-1]
    n_items = keys.size
    tile_eff, n_pad = _layout(n_items, n_dev, tile)
    # keys are not consumed: their data is copied, so the same keys reproduce the same runs
    kd = np.asarray(jax.random.key_data(keys)).reshape((n_items,) + tuple(jax.random.key_data(keys).shape[keys.ndim:]))
    gidx = np.repeat(np.arange(keys.shape[0], dtype=np.int32), S) if grid else np.zeros(n_items, np.int32)
    idx = np.concatenate([np.arange(n_items), np.zeros(n_pad - n_items, np.int64)])
    xs = (_put(kd[idx], mesh, P("seeds")), _put(gidx[idx], mesh, P("seeds")))
    fn = _engine(learner, adversary, problem, T_max, ckpts, grid, tile_eff, mesh, jax.random.key_impl(keys))
    p_rep, a_rep, T_rep = _replicate((params, adv_params, jnp.asarray(T_arr, jnp.int32)), mesh)
    with _misfit_names_its_cause():
        out = _to_host(fn(p_rep, a_rep, T_rep, xs), mesh)
    res = {}
    for k, v in out.items():
        v = np.asarray(v)[:n_items]
        res[k] = v.reshape(keys.shape + v.shape[1:])
    res["checkpoint_rounds"] = np.asarray(ckpts)
    _raise_invalid_actions(res.pop("invalid_action_round"), res.pop("invalid_action"), learner, adversary,
                           problem, params, adv_params, grid)
    return res


@contextlib.contextmanager
def _misfit_names_its_cause():
    """A shape or type error raised while tracing (before anything is compiled) says what does not fit."""
    try:
        yield
    except jax.errors.KeyReuseError:
        raise
    except (TypeError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(
            f"the learner, the adversary and their parameters do not fit together ({first}). Check that the learner "
            "and the adversary were built for the same size (d, K or the dimension) and that every parameter leaf "
            "is a scalar, or has a leading axis of one value per grid point with grid=True") from e


def _raise_invalid_actions(rounds: np.ndarray, actions: np.ndarray, learner, adversary, problem, params,
                           adv_params, grid: bool) -> None:
    """After a run: a ``ValueError`` naming the first seed whose learner played an expert index out of
    ``[0, d)`` (its loss and regret are NaN)."""
    if not np.any(rounds >= 0):
        return
    where = tuple(int(i) for i in np.argwhere(rounds >= 0)[0])
    n_bad = int(np.sum(rounds >= 0))
    one_p = jax.tree_util.tree_map(lambda a: a[0], (params, adv_params)) if grid else (params, adv_params)

    def shapes(key):
        k1, k2 = jax.random.split(key)
        ls = learner.init(k1, one_p[0])
        return ls.x, adversary.loss(adversary.init(k2, one_p[1]), jnp.int32(0))

    try:
        d = n_index_actions(problem, *jax.eval_shape(shapes, jax.random.key(0)))
    except Exception:  # noqa: BLE001 - only for the message
        d = None
    pos = (f"grid point {where[0]}, seed {where[1]}" if grid else f"seed {where[0]}")
    raise ValueError(
        f"simulate: the learner played action {int(actions[where])} in round {int(rounds[where])} (counting from 0) "
        f"of {pos}, outside the experts [0, {d if d is not None else 'd'}) ({n_bad} run(s) affected; their loss "
        f"and regret would be NaN). state.x must be an expert index in [0, d): fix the learner's sampler, and "
        f"check it with jaxdp.testing.check_learner")


@functools.lru_cache(maxsize=256)
def _engine_mc(fn, n_args: int, mesh: Optional[Mesh], impl):
    def local(*a):
        args, kd = a[:-1], a[-1]
        keys = jax.random.wrap_key_data(kd, impl=impl)
        return jax.vmap(fn, in_axes=(0,) + (None,) * n_args)(keys, *args)

    return _shard(local, mesh, n_args)


def monte_carlo(fn, keys: jax.Array, *args: Any) -> Any:
    """Evaluate a one-shot estimator ``fn(key, *args)`` for every key, in one call.

    ``fn`` must be a pure function of the key and ``args`` (e.g. sample a
    dataset, fit a private estimator, evaluate its excess loss). The keys
    (``(S,)``) are sharded over all devices — under ``jax.distributed`` those
    of every process, each computing its share, unless inside
    :func:`process_local` — and ``args`` are shared by all seeds. Returns
    ``fn``'s output pytree with a leading axis of length S, as NumPy arrays,
    the same on every process and bit-identical to a one-device run. ``fn``
    is compiled once per argument shapes (cached by the identity of ``fn``:
    pass the same function object to reuse it). The keys are not consumed.

    Args:
        fn: the estimator ``fn(key, *args)``, a pure function of the key and ``args``.
        keys: the seeds' keys, shape ``(S,)``; not consumed.

    Returns:
        ``fn``'s output pytree with a leading axis of length S, as NumPy arrays (the same on every process).
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    _check_keys(keys, False)
    mesh = _engine_mesh()
    n_dev = 1 if mesh is None else mesh.size
    n = keys.shape[0]
    n_pad = -(-n // n_dev) * n_dev
    kd = np.asarray(jax.random.key_data(keys))
    idx = np.concatenate([np.arange(n), np.zeros(n_pad - n, np.int64)])
    f = _engine_mc(fn, len(args), mesh, jax.random.key_impl(keys))
    out = f(*_replicate(tuple(args), mesh), _put(kd[idx], mesh, P("seeds")))
    return jax.tree_util.tree_map(lambda v: np.asarray(v)[:n], _to_host(out, mesh))
