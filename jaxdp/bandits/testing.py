"""Conformance for bandit learners: the engine's checks plus bandit feedback (docs/algorithms/bandits.md#feedback).

* :func:`check_bandit_feedback` — the learner's actions and state depend on the played arm's
  loss only: rerun with every other arm's loss (and every mean) replaced by junk (NaN, and the
  flipped loss ``1 - l``) must give bit-identical actions and states. Works for any
  :class:`~jaxdp.core.Learner` against a bandit environment, not only those built with
  :func:`jaxdp.bandits.bandit_learner`.
* :func:`check_bandit_learner` — :func:`jaxdp.testing.check_learner` (jit, vmap, key use,
  purity, one trace across grid points and horizons, finite metrics, arms in range) on a bandit
  environment with the pseudo-regret problem, then :func:`check_bandit_feedback`.
* :func:`trajectory` — one run's actions, losses and learner states, with the engine's key
  schedule (the same run as ``simulate`` with that key): for reference implementations.
"""
from __future__ import annotations

import functools
from typing import Any, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ..core import Adversary, Learner, seed_keys
from ..testing import ConformanceError, check_learner
from .adversaries import BernoulliArmsParams, bernoulli_arms
from .problem import BanditLoss, bandit_problem

__all__ = ["check_bandit_learner", "check_bandit_feedback", "trajectory"]


def _default_env(K: int):
    return bernoulli_arms(K), BernoulliArmsParams(jnp.linspace(0.2, 0.8, K, dtype=jnp.float32))


_JUNK = {None: 0, "nan": 1, "flip": 2}


@functools.lru_cache(maxsize=64)
def _trajectory_fn(learner: Learner, adversary: Adversary, T: int):
    def run(params, adv_params, keys, modes):
        def one(key, mode):
            k_learn, k_adv, k_init, _ = jax.random.split(key, 4)
            s0 = learner.init(k_init, params)
            a = adversary.init(k_adv, adv_params)

            def body(s, t):
                lt = adversary.loss(a, t)
                if not isinstance(lt, BanditLoss):
                    lt = BanditLoss(loss=lt, mean=lt)
                oh = jnp.arange(lt.loss.shape[0]) == s.x
                bad = jnp.where(mode == 1, jnp.nan, 1.0 - lt.loss)
                seen = BanditLoss(loss=jnp.where(oh | (mode == 0), lt.loss, bad), mean=jnp.where(mode == 0, lt.mean, bad))
                s2, _ = learner.step(jax.random.fold_in(k_learn, t), s, seen, params)
                return s2, (s2, lt.loss, lt.mean)

            _, (states, losses, means) = jax.lax.scan(body, s0, jnp.arange(T, dtype=jnp.int32))
            states = jax.tree_util.tree_map(lambda a0, a1: jnp.concatenate([a0[None], a1]), s0, states)
            return states, losses, means

        return jax.vmap(one)(keys, modes)

    return jax.jit(run)


def trajectory(learner: Learner, adversary: Adversary, params: Any, adv_params: Any, keys: jax.Array, T: int,
               junk: Any = None) -> dict:
    """Runs of ``T`` rounds for a batch of keys, with the engine's key schedule, for reference implementations.

    The key schedule is the engine's (``split(key, 4)``: learner, adversary, init, block; step ``t`` gets
    ``fold_in(learner key, t)``), so each run is the one ``simulate`` makes with that key.

    Args:
        learner: the bandit learner.
        adversary: the bandit environment; a plain loss vector from it is used as both loss and mean.
        params: the learner's parameters.
        adv_params: the environment's parameters.
        keys: the ``(S,)`` run keys, one run each.
        T: the number of rounds.
        junk: ``None``, ``"nan"`` or ``"flip"``: replace every unplayed arm's loss and every mean by NaN or by
            ``1 - loss`` before the learner sees it (``None``: no change); or an ``(S,)`` int array of modes
            0, 1, 2 for these three, one per key.

    Returns:
        NumPy arrays with a leading seed axis: ``actions`` ``(S, T + 1)`` (``x_1 .. x_{T+1}``), ``loss`` and
        ``mean`` ``(S, T, K)`` (the true ones, before any junk), and ``states``: the learner's state pytree after
        ``init`` and after every round (``(S, T + 1, ...)``).
    """
    modes = junk if isinstance(junk, np.ndarray) else np.full(keys.shape[0], _JUNK[junk], np.int32)
    states, losses, means = _trajectory_fn(learner, adversary, int(T))(params, adv_params, keys, modes)
    states = jax.tree_util.tree_map(np.asarray, states)
    return {"actions": np.asarray(states.x), "loss": np.asarray(losses), "mean": np.asarray(means), "states": states}


def check_bandit_feedback(learner: Learner, params: Any, K: int, *, adversary: Optional[Adversary] = None,
                          adv_params: Any = None, T: int = 64, seeds: int = 2) -> None:
    """Check that a learner reads no loss but the played arm's.

    Its actions and states must be bit-identical when the other arms' losses and all means are junk (NaN,
    or flipped to ``1 - loss``); the three variants run in one compiled :func:`trajectory` on the same keys.

    Args:
        learner: the learner under test.
        params: its parameters.
        K: the number of arms.
        adversary: the bandit environment (``None``: Bernoulli arms with means ``linspace(0.2, 0.8, K)``).
        adv_params: the environment's parameters (ignored when ``adversary`` is ``None``).
        T: the number of rounds.
        seeds: runs per variant.

    Raises:
        ConformanceError: ``[bandit feedback]`` with the first state leaf, seed and round that differ.
    """
    if adversary is None:
        adversary, adv_params = _default_env(K)
    # one compiled run: the true losses, NaN junk and flipped junk (modes 0, 1, 2), the same keys for each
    modes = np.repeat(np.arange(3, dtype=np.int32), seeds)
    keys = jnp.concatenate([seed_keys(11, seeds) for _ in range(3)])
    states = trajectory(learner, adversary, params, adv_params, keys, T, junk=modes)["states"]
    ref = jax.tree_util.tree_flatten_with_path(jax.tree_util.tree_map(lambda a: a[:seeds], states))[0]
    for j, junk in ((1, "nan"), (2, "flip")):
        got = jax.tree_util.tree_leaves(jax.tree_util.tree_map(lambda a, j=j: a[j * seeds:(j + 1) * seeds], states))
        for (path, a), b in zip(ref, got):
            same = (a == b) | ((a != a) & (b != b)) if a.dtype.kind in "fc" else (a == b)
            differs = ~same.reshape(a.shape[0], a.shape[1], -1).all(-1)           # (seed, round)
            if differs.any():
                i, t = (int(v) for v in np.argwhere(differs)[0])
                raise ConformanceError(
                    f"[bandit feedback] state{jax.tree_util.keystr(path)} of seed {i} differs after round {t} when "
                    f"the unplayed arms' losses are {junk!r}: the step reads more than the played arm's loss. "
                    f"Build it with jaxdp.bandits.bandit_learner, whose step receives l_t(x_t) only")


def check_bandit_learner(learner: Learner, params_list: Sequence[Any], K: int, *, adversary: Optional[Adversary] = None,
                         adv_params: Any = None, T: int = 64, seeds: int = 4, deterministic: bool = False) -> dict:
    """:func:`jaxdp.testing.check_learner` on a bandit environment, then :func:`check_bandit_feedback`.

    The environment defaults to Bernoulli arms with means ``linspace(0.2, 0.8, K)``; the problem is the
    pseudo-regret one (:func:`jaxdp.bandits.bandit_problem` ``"pseudo"``). The feedback check uses the first
    parameter set.

    Args:
        learner: the learner under test.
        params_list: parameter sets, one per grid point (at least one).
        K: the number of arms.
        adversary: the bandit environment (``None``: the Bernoulli default).
        adv_params: the environment's parameters (ignored when ``adversary`` is ``None``).
        T: the horizon.
        seeds: seeds per run.
        deterministic: the learner ignores its key (skips the key-sensitivity check).

    Returns:
        :func:`~jaxdp.testing.check_learner`'s metrics of the first grid point (``(seeds,)`` arrays).

    Raises:
        ConformanceError: a check failed (the message names it in brackets).
    """
    if adversary is None:
        adversary, adv_params = _default_env(K)
    out = check_learner(learner, adversary, bandit_problem("pseudo"), params_list, adv_params, T=T, seeds=seeds,
                        deterministic=deterministic, d=K)
    check_bandit_feedback(learner, params_list[0], K, adversary=adversary, adv_params=adv_params, T=T)
    return out
