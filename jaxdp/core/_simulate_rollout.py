"""The engine's pure core: one run of a learner against an adversary (``_rollout_impl``, wrapped by
:func:`jaxdp.core.simulate.rollout` and ``simulate``), and what it reports about expert-index actions.

Import these from ``jaxdp.core.simulate``."""
from __future__ import annotations

from typing import Any, Optional

import jax
import jax.numpy as jnp
import numpy as np

from .accumulate import kahan_add
from .types import Adversary, Learner, Problem


def _tree_where(pred, a, b):
    return jax.tree_util.tree_map(lambda u, v: jnp.where(pred, u, v), a, b)


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
    """The engine's pure core: one seed (unvalidated; see :func:`rollout`).

    An expert index outside ``[0, d)`` (:func:`n_index_actions`) incurs a NaN loss, so ``loss``,
    ``regret`` and the checkpoints after it are NaN (an out-of-bounds ``loss[x]`` would otherwise be
    clamped to a finite value). With ``flag_actions`` the output also holds
    :data:`INVALID_ACTION_KEYS`; :func:`simulate` turns them into a ``ValueError``.
    ``learner_salt`` (a uint32, may be traced; for ``jaxdp.testing``): another learner key, the same
    adversary (salt 0: the run of ``key`` itself).
    """
    k_learn, k_adv, k_init, k_block = jax.random.split(key, 4)
    if learner_salt is not None:
        k_learn, k_init, k_block = (_salt_key(k, learner_salt) for k in (k_learn, k_init, k_block))
    ls = learner.init(k_init, params)
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

    def round_body(carry, t):
        ls, m = carry
        loss_t = adversary.loss(a_state, t)
        incurred = jnp.asarray(problem.value(loss_t, ls.x), fdt)
        ls_new, info = learner.step(jax.random.fold_in(k_learn, t), ls, loss_t, params)
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
    if flag_actions:
        out["invalid_action_round"] = m["bad"][0] if n_act is not None else jnp.int32(-1)
        out["invalid_action"] = (m["bad"][1] if n_act is not None else jnp.int32(0)).astype(jnp.int32)
    return out
