"""``simulate``: many seeds of an online learner against an oblivious adversary
in one compiled call; ``monte_carlo``: the same for one-shot estimators.

Structure (spec §1.3, DESIGN.md)::

    vmap over grid points (params, adv_params, T)          # optional
      vmap over seeds (keys), sharded over local devices
        scan over blocks (only if learner.block_size > 1)
          scan over rounds t < T_max, masked by the traced horizon T

* The horizon ``T`` is traced: one compilation serves every ``T <= T_max``.
* Nothing of size ``T x d`` is stored: losses come from the adversary's
  counter-based key, the comparator from sufficient statistics, and the
  regret trace only at ``n_checkpoints`` log-spaced rounds. Peak memory does
  not depend on ``T``.
* Scalar accumulators use Kahan summation, so float32 totals stay accurate to
  ~1 ulp at ``T = 10^7``.
"""
from __future__ import annotations

import functools
from typing import Any, Optional

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from .types import Adversary, Learner, Problem
from .validation import check_positive_int

__all__ = [
    "simulate",
    "monte_carlo",
    "checkpoint_rounds",
    "seed_keys",
    "shard_seeds",
]


# --------------------------------------------------------------------------- helpers


def checkpoint_rounds(T_max: int, n: int = 24) -> np.ndarray:
    """Log-spaced distinct rounds in ``[1, T_max]`` (1-indexed), ending at ``T_max``."""
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
    ``seeds`` is an int (``range(seeds)``) or an array of indices.
    """
    idx = np.arange(seeds) if np.ndim(seeds) == 0 else np.asarray(seeds)
    if idx.size and (idx.min() < 0 or not np.issubdtype(idx.dtype, np.integer)):
        raise ValueError(f"seeds must be non-negative integers, got {seeds!r}")
    base = jax.random.key(int(seed))
    return jax.vmap(lambda i: jax.random.fold_in(base, i))(jnp.asarray(idx, dtype=jnp.uint32))


def _kahan_add(s, c, x):
    y = x - c
    t = s + y
    c = (t - s) - y
    return t, c


def _tree_where(pred, a, b):
    return jax.tree_util.tree_map(lambda u, v: jnp.where(pred, u, v), a, b)


def _zeros_like_struct(tree):
    return jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), tree)


def _acc_dtype(x):
    return jnp.int32 if (x.dtype == jnp.bool_ or jnp.issubdtype(x.dtype, jnp.integer)) else jnp.result_type(float)


# --------------------------------------------------------------------------- one run


def _simulate_one(learner: Learner, adversary: Adversary, problem: Problem, T_max: int, ckpts: tuple,
                  params, adv_params, key, T):
    k_learn, k_adv, k_init, k_block = jax.random.split(key, 4)
    ls = learner.init(k_init, params)
    a_state = adversary.init(k_adv, adv_params)
    loss0 = adversary.loss(a_state, jnp.int32(0))
    stats0 = problem.stats_init(loss0)

    info_struct = jax.eval_shape(lambda: learner.step(k_learn, ls, loss0, params)[1])
    info0 = jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, _acc_dtype(s)), info_struct)
    has_exp = "expected_loss" in info_struct
    block_info0 = {}
    if learner.end_block is not None:
        bstruct = jax.eval_shape(lambda: learner.end_block(k_block, ls, params)[1])
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

    def round_body(carry, t):
        ls, m = carry
        loss_t = adversary.loss(a_state, t)
        incurred = jnp.asarray(problem.value(loss_t, ls.x), fdt)
        ls_new, info = learner.step(jax.random.fold_in(k_learn, t), ls, loss_t, params)
        active = t < T
        # the learner's state past T is never read (only masked metrics are
        # returned), so it is not masked: that saves a pass over the state
        ls = ls_new
        loss_acc = _kahan_add(*m["loss"], jnp.where(active, incurred, 0.0))
        if has_exp:
            e = jnp.asarray(info["expected_loss"], fdt)
            exp_acc = _kahan_add(*m["exp"], jnp.where(active, e, 0.0))
        else:
            exp_acc = m["exp"]
        info_acc = jax.tree_util.tree_map(
            lambda a, v: a + jnp.where(active, v, 0).astype(a.dtype), m["info"], info)
        stats = _tree_where(active, problem.stats_update(m["stats"], loss_t), m["stats"])
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
            ls3 = ls_b
            binfo_acc = jax.tree_util.tree_map(
                lambda a, v: a + jnp.where(active_b, v, 0).astype(a.dtype), m2["binfo"], binfo)
            return ((ls3, dict(m2, binfo=binfo_acc)), j + 1), None

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
    for name, v in list(m["info"].items()) + list(m["binfo"].items()):
        if name == "expected_loss":
            continue
        out["switches" if name == "switched" else name] = v
    return out


# --------------------------------------------------------------------------- batching & sharding


def _mesh() -> Optional[Mesh]:
    devs = jax.local_devices()
    if len(devs) <= 1:
        return None
    return Mesh(np.asarray(devs), ("seeds",))


def shard_seeds(x, axis: int = 0):
    """Place ``x`` (a pytree) with its ``axis`` split over all local devices.

    No-op on one device. The axis length must be a multiple of the device
    count (``simulate`` and ``monte_carlo`` pad to ensure it).
    """
    mesh = _mesh()
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


@functools.lru_cache(maxsize=256)
def _compiled(learner: Learner, adversary: Adversary, problem: Problem, T_max: int, ckpts: tuple, grid: bool):
    one = functools.partial(_simulate_one, learner, adversary, problem, T_max, ckpts)
    f = jax.vmap(one, in_axes=(None, None, 0, None))  # over seeds
    if grid:
        f = jax.vmap(f, in_axes=(0, 0, 0, 0))  # over grid points
    return jax.jit(f)


def _check_keys(keys, grid: bool):
    if not (isinstance(keys, jax.Array) and jnp.issubdtype(keys.dtype, jax.dtypes.prng_key)):
        raise TypeError(
            "keys must be a typed PRNG key array (jax.random.key / jaxdp.seed_keys), "
            f"got {type(keys).__name__} with dtype {getattr(keys, 'dtype', None)}")
    want = 2 if grid else 1
    if keys.ndim != want:
        raise ValueError(f"keys must have {want} dimension(s) ({'grid x seeds' if grid else 'seeds'}), got shape {keys.shape}")


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
) -> dict[str, np.ndarray]:
    """Run ``learner`` against ``adversary`` for many seeds in one compiled call.

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

    Returns:
      dict of NumPy arrays with leading axes ``(S,)`` or ``(G, S)``:
      ``regret`` (realized), ``loss``, ``best_loss``, ``expected_regret`` (if
      the learner reports ``expected_loss``), ``switches`` and every other
      counter the learner reports (summed over rounds), ``regret_ckpt`` at
      rounds ``checkpoint_rounds`` (also returned), NaN beyond ``T``.

    Regret is ``sum_t l_t(x_t) - min_x sum_t l_t(x)`` (spec §0.3).
    Seeds are sharded over all local devices (``jax.sharding``); the results
    are bit-identical to a single-device run.
    """
    if not isinstance(learner, Learner):
        raise TypeError(f"learner must be a jaxdp Learner, got {type(learner).__name__}")
    if not isinstance(adversary, Adversary):
        raise TypeError(f"adversary must be a jaxdp Adversary, got {type(adversary).__name__}")
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a jaxdp Problem, got {type(problem).__name__}")
    _check_keys(keys, grid)
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
    T_max = check_positive_int("T_max", T_max)
    if T_arr.max() > T_max:
        raise ValueError(f"T must be <= T_max={T_max}, got {int(T_arr.max())}")
    if T_max >= 2**31 - 1:
        raise ValueError(f"T_max must be < 2**31 - 1, got {T_max}")
    ckpts = tuple(int(r) for r in checkpoint_rounds(T_max, n_checkpoints))
    if grid:
        G = keys.shape[0]
        for name, tree in (("params", params), ("adv_params", adv_params)):
            for leaf in jax.tree_util.tree_leaves(tree):
                if np.ndim(leaf) == 0 or np.shape(leaf)[0] != G:
                    raise ValueError(f"with grid=True every leaf of {name} needs a leading axis of length {G}, "
                                     f"got shape {np.shape(leaf)}")

    fn = _compiled(learner, adversary, problem, T_max, ckpts, grid)
    axis = 1 if grid else 0
    # keys are not consumed: the same keys reproduce the same runs (common random numbers)
    keys_p, n = _pad_axis(jax.random.clone(keys), axis)
    keys_p = shard_seeds(keys_p, axis)
    out = fn(params, adv_params, keys_p, jnp.asarray(T_arr, jnp.int32))
    res = {k: np.asarray(v) for k, v in out.items()}
    res = {k: (v[:, :n] if grid else v[:n]) for k, v in res.items()}
    res["checkpoint_rounds"] = np.asarray(ckpts)
    return res


@functools.lru_cache(maxsize=256)
def _compiled_mc(fn, n_args: int):
    return jax.jit(jax.vmap(fn, in_axes=(0,) + (None,) * n_args))


def monte_carlo(fn, keys: jax.Array, *args: Any) -> Any:
    """Evaluate a one-shot estimator ``fn(key, *args)`` for every key, in one call.

    ``fn`` must be a pure function of the key and ``args`` (e.g. sample a
    dataset, fit a private estimator, evaluate its excess loss; spec §1.6).
    The keys (``(S,)``) are sharded over local devices; ``args`` are shared by
    all seeds. Returns ``fn``'s output pytree with a leading axis of length S,
    as NumPy arrays. ``fn`` is compiled once per argument shapes (cached by the
    identity of ``fn``: pass the same function object to reuse it).
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    _check_keys(keys, False)
    f = _compiled_mc(fn, len(args))
    keys_p, n = _pad_axis(jax.random.clone(keys), 0)
    out = f(shard_seeds(keys_p, 0), *args)
    return jax.tree_util.tree_map(lambda v: np.asarray(v)[:n], out)
