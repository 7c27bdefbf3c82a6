"""Devices and processes of the engine: the seed mesh (every process's devices under ``jax.distributed``,
unless :func:`process_local`), placing arrays on it and gathering them back.

Import these from ``jaxdp.core.simulate``."""
from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Iterator, Optional

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


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


def _is_global() -> bool:
    return jax.process_count() > 1 and not _PROCESS_LOCAL.get()


def _engine_mesh() -> Optional[Mesh]:
    """The mesh the engine shards seeds over: every process's devices under
    ``jax.distributed`` (unless :func:`process_local`), else the local ones."""
    devs = jax.devices() if _is_global() else jax.local_devices()
    if len(devs) <= 1:
        return None
    return Mesh(np.asarray(devs), ("seeds",))


def _mesh() -> Optional[Mesh]:
    devs = jax.local_devices()
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
