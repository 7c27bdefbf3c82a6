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
import functools
from typing import Any, Optional, Sequence, Union

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

from .types import Adversary, Learner, Problem
from .validation import SEED_LIMIT, check_adversary_params, check_positive_int, check_seed, describe_value
# the pieces of the engine, by topic (public names in the order of the API page)
from ._simulate_rollout import n_index_actions, _rollout_impl
from ._simulate_devices import process_local, shard_seeds, _engine_mesh, _put, _replicate, _to_host
from ._simulate_tiles import cpu_cache_bytes, tile_budget, carry_bytes, seed_tile, _default_tile_carry, _layout, _tiled
# not in __all__, importable from here as before (jaxdp.testing, jaxdp.label_dp and the tests use some of them)
from ._simulate_rollout import INVALID_ACTION_KEYS, _acc_dtype, _salt_key, _tree_where  # noqa: F401
from ._simulate_devices import _PROCESS_LOCAL, _is_global, _mesh, _pad_axis  # noqa: F401
from ._simulate_tiles import (_CARRY_CACHE, _CPU_CACHE_DEFAULT, _TILE_BUDGET, _TILE_MIN, _avals_key,  # noqa: F401
                              _leaf_bytes, _parse_cache_size, _tree_bytes)  # noqa: F401

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
    # public, documented and used by other modules (jaxdp.core re-exports carry_bytes, jaxdp.testing uses
    # n_index_actions); listed so that the API page keeps them now that they live in the engine's pieces
    "n_index_actions",
    "carry_bytes",
    "cpu_cache_bytes",
]


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
    ``seed`` is an integer in ``[0, 2**32)`` (keys are 32-bit: a larger,
    negative or fractional seed would alias another one and is refused).
    ``seeds`` is a positive int ``n`` (indices ``range(n)``) or a non-empty
    1-D array of seed indices in ``[0, 2**32)``.

    Args:
        seed: base seed, an integer in ``[0, 2**32)``.
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
    if not isinstance(adversary, Adversary):
        raise TypeError(f"adversary must be a jaxdp Adversary, got {type(adversary).__name__}")
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


@functools.lru_cache(maxsize=256)
def _compiled(learner: Learner, adversary: Adversary, problem: Problem, T_max: int, ckpts: tuple, grid: bool):
    """``jit(vmap(rollout))`` over seeds (and grid points): no tiles, no sharding (benchmark helper)."""
    one = functools.partial(_rollout_impl, learner, adversary, problem, T_max, ckpts)
    f = jax.vmap(one, in_axes=(None, None, 0, None))  # over seeds
    if grid:
        f = jax.vmap(f, in_axes=(0, 0, 0, 0))  # over grid points
    return jax.jit(f)


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


def _check_tile(tile):
    if tile is None:
        return None
    return check_positive_int("tile", tile)


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
    tile = _check_tile(tile)
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
def _compiled_mc(fn, n_args: int):
    """``jit(vmap(fn))`` over keys: no sharding (benchmark helper)."""
    return jax.jit(jax.vmap(fn, in_axes=(0,) + (None,) * n_args))


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
