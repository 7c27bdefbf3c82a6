"""A new private experts learner in about 30 lines, compared with every built-in one.

Follow the noisy leader: the cumulative losses are released by the binary-tree mechanism
(each loss vector enters H = floor(log2 T_max) + 1 nodes; its l1 norm is at most d, so Laplace
noise of scale d H / eps per node makes the whole stream eps-DP), and the learner plays the
argmin of the noisy release (post-processing: no further privacy cost).

    jaxdp compare examples/my_learner.py:make --problem experts --quick --out my-results

See docs/guide/compare.md.
"""
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxdp import Learner
from jaxdp.privacy.mechanisms import TreeState, tree_depth, tree_init, tree_laplace_scale, tree_step


class State(NamedTuple):
    x: jax.Array       # the expert played this round (int32)
    tree: TreeState    # binary-tree counter of the cumulative loss vector


class Params(NamedTuple):
    scale: jax.Array   # Laplace scale of every tree node


@functools.lru_cache(maxsize=None)  # one Learner object per (d, T_max): one compilation per sweep
def noisy_leader(d: int, T_max: int) -> Learner:
    H = tree_depth(T_max)

    def init(key, params):
        return State(x=jax.random.randint(key, (), 0, d, jnp.int32), tree=tree_init(H, (d,), jnp.float32))

    def step(key, state, loss, params):
        tree, noisy_cum = tree_step(key, state.tree, loss, params.scale, "laplace")
        x = jnp.argmin(noisy_cum).astype(jnp.int32)
        return State(x=x, tree=tree), {"switched": x != state.x}

    return Learner(init, step)


def make(d: int, T_max: int, eps: float):
    """The factory ``jaxdp compare`` calls: ``(Learner, params)`` at privacy level ``eps``."""
    scale = tree_laplace_scale(tree_depth(T_max), eps, sensitivity=float(d))
    return noisy_leader(d, T_max), Params(scale=jnp.float32(scale))


make.name = "noisy_leader"
