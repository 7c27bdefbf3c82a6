"""The shared conformance check every ``Learner`` in jaxdp must pass (cf. ``pgx.api_test``).

``check_learner`` asserts that a learner is

* jittable and vmappable (runs inside ``simulate``, which jits a vmap of a scan),
* deterministic given its key (two runs, bit-identical outputs),
* sensitive to its key (different seeds give different runs, unless ``deterministic=True``),
* compiled once across grid points (``chex.assert_max_traces``: changing the
  values of ``params`` / ``adv_params`` / ``T`` does not retrace),
* clean under ``jax_debug_key_reuse`` (enabled in ``conftest.py``),
* producing finite metrics, with regret >= the trivial lower bound
  ``-T * (loss range)``.
"""
from __future__ import annotations

from typing import Any, Sequence

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.core import Adversary, Learner, Problem, seed_keys
from jaxdp.core.simulate import _simulate_one


def check_learner(learner: Learner, adversary: Adversary, problem: Problem, params_list: Sequence[Any],
                  adv_params: Any, T: int = 64, seeds: int = 4, deterministic: bool = False,
                  loss_range: float = 1.0) -> dict:
    assert isinstance(learner, Learner)
    assert len(params_list) >= 2, "give at least two parameter settings (grid points)"
    keys = seed_keys(123, seeds)

    @jax.jit
    @chex.assert_max_traces(n=1)
    def run(params, adv_params, keys, T_):
        one = lambda k: _simulate_one(learner, adversary, problem, T, (1, T), params, adv_params, k, T_)  # noqa: E731
        return jax.vmap(one)(keys)

    chex.clear_trace_counter()
    outs = []
    for i, params in enumerate(params_list):
        # a different horizon at each grid point: one trace must serve all T <= T_max
        T_i = T - (i % 2) * (T // 4)
        out = jax.tree_util.tree_map(np.asarray, run(params, adv_params, jax.random.clone(keys), jnp.int32(T_i)))
        outs.append(out)
        for k, v in out.items():
            assert np.all(np.isfinite(v[~np.isnan(v)] if v.dtype.kind == "f" else v)), f"non-finite {k}"
        assert np.all(out["regret"] >= -loss_range * T - 1e-3)
        assert np.all(out["T"] == T_i)
    again = jax.tree_util.tree_map(np.asarray, run(params_list[0], adv_params, jax.random.clone(keys), jnp.int32(T)))
    for k in again:
        np.testing.assert_array_equal(again[k], outs[0][k], err_msg=f"not deterministic: {k}")
    if not deterministic:
        assert np.unique(outs[0]["loss"]).size > 1 or np.unique(outs[0]["regret"]).size > 1 or any(
            np.unique(v).size > 1 for k, v in outs[0].items() if k not in ("T",) and np.ndim(v) == 1
        ), "different seeds gave identical runs: the learner ignores its key?"
    return outs[0]
