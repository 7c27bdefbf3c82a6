"""``tree_ftrl_experts``: binary-tree follow-the-noisy-leader for DP-OPE (AS17-style; Lazy private online learning, Sec. 4; docs/algorithms/lazy.md#baselines, PROPOSED).

Not a lazy algorithm: every round it plays ``x_{t+1} ~ softmax(-eta Lhat_t)``
where ``Lhat_t`` is the tree-aggregated noisy cumulative loss vector
(``jaxdp.mechanisms.tree_step``, docs/algorithms/primitives.md#binary-tree-counter). Each loss vector enters at most
``H = floor(log2 T_max) + 1`` nodes. Calibration (:func:`tree_ftrl_params`):

* pure ε-DP: ``l1``-sensitivity of a loss vector in ``[0,1]^d`` is ``d``, node noise ``Lap(d H / eps)``;
* (ε, δ)-DP: Gaussian nodes with ``sigma = tree_aggregation_sigma(sqrt(d)/2, H, eps, delta)``
  (centered losses ``l - 1/2`` have ``l2`` norm ``<= sqrt(d)/2``; the shift does not change the softmax).

Expected regret ``≈ sqrt(T log d) + sqrt(d) polylog(T) log d / eps`` (Gaussian).
It escapes the low-switching lower bound of LAZY Thm 4.2 for small ``d``.
Keys per round: 2 (node noise, categorical draw).
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp

from ..core.random import sample_categorical
from ..core.types import Learner
from ..core.validation import check_choice, check_in_range, check_positive, check_positive_int
from ..mechanisms import TreeState, tree_aggregation_sigma, tree_depth, tree_init, tree_laplace_scale, tree_step

__all__ = ["TreeFTRLParams", "TreeFTRLState", "tree_ftrl_experts", "tree_ftrl_params"]


class TreeFTRLParams(NamedTuple):
    eta: jax.Array     # Hedge step on the noisy cumulative losses
    scale: jax.Array   # node noise: Laplace scale b or Gaussian sigma (0 = non-private Hedge)


class TreeFTRLState(NamedTuple):
    x: jax.Array
    tree: TreeState
    p: jax.Array


def tree_ftrl_params(d: int, T: int, eps: float, delta: float = 0.0, eta: Optional[float] = None,
                     T_max: Optional[int] = None) -> TreeFTRLParams:
    """Noise calibrated to ``(eps, delta)`` (``delta = 0``: Laplace, else Gaussian); ``eta`` defaults to
    ``sqrt(8 ln d / T)``. Use ``noise="laplace"`` in :func:`tree_ftrl_experts` iff ``delta == 0``."""
    d = check_positive_int("d", d, minimum=2)
    T = check_positive_int("T", T)
    check_positive("eps", eps)
    check_in_range("delta", delta, 0.0, 1.0, hi_closed=False)
    H = tree_depth(T_max or T)
    scale = tree_laplace_scale(H, eps, sensitivity=float(d)) if delta == 0 else \
        tree_aggregation_sigma(math.sqrt(d) / 2.0, H, eps, delta)
    if eta is None:
        eta = math.sqrt(8 * math.log(d) / T)
    fdt = jnp.result_type(float)
    return TreeFTRLParams(eta=jnp.asarray(eta, fdt), scale=jnp.asarray(scale, fdt))


@functools.lru_cache(maxsize=None)
def tree_ftrl_experts(d: int, T_max: int, noise: str = "gaussian") -> Learner:
    """Binary-tree noisy Hedge over ``d`` experts for horizons ``T <= T_max``. Params: :class:`TreeFTRLParams`."""
    d = check_positive_int("d", d, minimum=2)
    H = tree_depth(T_max)
    check_choice("noise", noise, ["laplace", "gaussian"])
    fdt = jnp.result_type(float)

    def init(key, params):
        return TreeFTRLState(x=sample_categorical(key, jnp.zeros((d,))), tree=tree_init(H, (d,), fdt),
                             p=jnp.full((d,), 1.0 / d, fdt))

    def step(key, state, loss, params):
        k_noise, k_x = jax.random.split(key)
        expected = jnp.dot(state.p, loss)
        tree, L_hat = tree_step(k_noise, state.tree, loss - 0.5, params.scale, noise)
        logits = -params.eta * L_hat
        x = sample_categorical(k_x, logits)
        return TreeFTRLState(x=x, tree=tree, p=jax.nn.softmax(logits)), \
            {"expected_loss": expected, "switched": x != state.x}

    return Learner(init=init, step=step)
