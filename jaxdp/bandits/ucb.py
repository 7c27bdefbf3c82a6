r"""Index policies: UCB1, LDP-UCB (local DP, Laplace-noised rewards) and DP-UCB (tree-based private sums).

Notation: after ``n`` rounds, arm ``i`` was pulled ``N_i`` times with reward sum
``S_i`` (reward ``r = 1 - ℓ``). Each policy plays the arm of largest index; ties go
to a random order of the arms drawn at ``init`` (so the first ``K`` rounds play every arm
once, in a uniformly random order), unpulled arms have index ``+∞``.

* **UCB1** (Auer, Cesa-Bianchi & Fischer 2002, "Finite-time analysis of the multiarmed bandit
  problem", Fig. 1), the index of SMPyBandits 0.9.7 ``Policies.UCB``:

  ::

      I_i = S_i/N_i + sqrt(c ln n / N_i),   c = 2,

  with pseudo-regret ``≤ Σ_{Δ_i > 0}  8 ln T/Δ_i + (1 + π²/3)Σ_i Δ_i``
  (their Thm 1).

* **LDP-UCB** (local DP; Ren, Zhou, Lui & Zhang 2020, "Multi-armed bandits with local differential
  privacy", the Laplace variant): every reward is privatised before the learner sees it,
  ``r̃_t = r_t + Lap(b)`` with ``b = 1/ε`` (each user's reward is
  ``ε``-LDP; the whole transcript ``ε``-DP). Index

  ::

      I_i = S̃_i/N_i + sqrt(2 ln n/N_i) + u(N_i, 4 ln n)/N_i,

  ``u(m, L) = b max(sqrt(8mL), 2√2 L)`` the Laplace-sum radius of
  :func:`jaxdp.bandits._common.laplace_sum_radius` (failure ``n⁻⁴``, as UCB1's
  Hoeffding term). Pseudo-regret ``O(Σ_i (1 + b²) ln T/Δ_i)``.

* **DP-UCB** with tree-based private counts (Tossou & Dimitrakakis 2016, "Algorithms for
  differentially private multi-armed bandits", AAAI; the continual-release UCB of Mishra &
  Thakurta 2015): each arm's reward stream feeds its own binary-tree counter
  (:func:`jaxdp.privacy.mechanisms.tree_step`, Chan–Shi–Song 2011) with ``H = floor(log2 T_max) + 1``
  levels and node noise ``Lap(b)``. The released sum ``S̃_i`` after
  ``N_i`` items carries ``m = popcount(N_i)`` node noises, and the index is

  ::

      I_i = S̃_i/N_i + sqrt(2 ln n/N_i) + u(popcount(N_i), 4 ln n)/N_i.

  Privacy: a round's reward enters the tree of the arm played, at ``<= H`` nodes, each with
  sensitivity 1 (rewards in ``[0, 1]``, replace-one); the other trees' inputs are unchanged
  given the released view, so ``b = H/ε`` gives ε-DP of the action sequence
  (``jaxdp plan dp-ucb-tree``). On the event that every confidence radius holds, a suboptimal arm
  is pulled at most ``min{n: 2(sqrt(2 ln T/n) + u(H, 4 ln T)/n) < Δ_i}`` times:
  pseudo-regret ``O(Σ_i ln T/Δ_i + K H ln T/ε)``, i.e.
  ``O(Klog² T/ε)`` for the privacy part (:mod:`jaxdp.bandits.theory`).

All three use no random number per round except the noise they add (one Laplace draw).
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..core.types import Learner, fdt
from ..core.validation import check_positive_int
from ..privacy.mechanisms.tree import TreeState, tree_depth, tree_step
from ._common import argmax_priority, arms_factory, checked_params, laplace_sum_radius, random_priority
from .problem import bandit_learner

__all__ = [
    "UCBState", "UCB1Params", "ucb1", "LDPUCBParams", "ldp_ucb", "DPUCBState", "DPUCBParams", "dp_ucb_tree",
]


class UCBState(NamedTuple):
    """UCB1 / LDP-UCB state.

    Attributes:
        x: the arm played this round (int32).
        n: the rounds observed so far (float).
        N: the ``(K,)`` pulls per arm.
        S: the ``(K,)`` reward sums (LDP-UCB: sums of privatised rewards).
        prio: the ``(K,)`` random tie-break order.
    """

    x: jax.Array       # int32: the arm played this round
    n: jax.Array       # rounds observed so far (float)
    N: jax.Array       # (K,) pulls per arm
    S: jax.Array       # (K,) reward sums (LDP-UCB: sums of privatised rewards)
    prio: jax.Array    # (K,) random tie-break order


@checked_params(scalars=True, c=dict(lo=0.0, lo_open=True))
class UCB1Params(NamedTuple):
    """``c > 0``: the index is ``S/N + sqrt(c ln n / N)`` (``c = 2``: UCB1).

    Attributes:
        c: the exploration coefficient (2: Auer et al. / SMPyBandits).
    """
    c: jax.Array = 2.0  # type: ignore[assignment]  # exploration coefficient (2: Auer et al. / SMPyBandits)


def _ucb_init(K: int):
    def init(key, params):
        prio = random_priority(key, K)
        z = jnp.zeros((K,), fdt())
        return UCBState(x=jnp.argmax(prio).astype(jnp.int32), n=jnp.zeros((), fdt()), N=z, S=z, prio=prio)

    return init


def _absorb(s: UCBState, reward, K: int):
    oh = jnp.arange(K) == s.x
    return s.n + 1.0, s.N + oh, s.S + jnp.where(oh, reward, 0.0)


@arms_factory
def ucb1(K: int) -> Learner:
    r"""UCB1 over ``K`` arms (module docstring). Params: :class:`UCB1Params` ``(c,)``. No random number per round.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxdp import seed_keys, simulate
        >>> from jaxdp.bandits import BernoulliArmsParams, bandit_problem, bernoulli_arms
        >>> out = simulate(ucb1(9), bernoulli_arms(9), bandit_problem("pseudo"), UCB1Params(2.0),
        ...                BernoulliArmsParams(jnp.linspace(0.1, 0.9, 9)), seed_keys(0, 16), 500)
        >>> out["regret"].shape, bool(out["regret"].mean() < 0.8 * 500)   # far below uniform play's 0.4 T
        ((16,), True)

    Args:
        K: the number of arms (static).

    Returns:
        The :class:`jaxdp.Learner`.
    """
    def step(key, s, observed, params):
        del key   # deterministic given the tie-break order drawn at init
        n, N, S = _absorb(s, 1.0 - observed, K)
        safe = jnp.maximum(N, 1.0)
        index = jnp.where(N > 0, S / safe + jnp.sqrt(params.c * jnp.log(n) / safe), jnp.inf)
        return UCBState(x=argmax_priority(index, s.prio), n=n, N=N, S=S, prio=s.prio), {}

    return bandit_learner(_ucb_init(K), step)


@checked_params(b=dict(lo=0.0))
class LDPUCBParams(NamedTuple):
    """``b >= 0``: the Laplace scale of the local randomizer (``1/ε``; ``jaxdp plan ldp-ucb``).

    Attributes:
        b: the Laplace scale added to each reward (``1/ε`` for ε-LDP).
    """
    b: jax.Array      # Laplace scale added to each reward (1/eps for eps-LDP)


@arms_factory
def ldp_ucb(K: int) -> Learner:
    r"""LDP-UCB over ``K`` arms (module docstring). Params: :class:`LDPUCBParams` ``(b,)``. One Laplace draw per round.

    Args:
        K: the number of arms (static).

    Returns:
        The :class:`jaxdp.Learner`.
    """
    def step(key, s, observed, params):
        private = (1.0 - observed) + params.b * jax.random.laplace(key, (), fdt())   # the local randomizer
        n, N, S = _absorb(s, private, K)
        safe = jnp.maximum(N, 1.0)
        L = 4.0 * jnp.log(n)
        index = S / safe + jnp.sqrt(2.0 * jnp.log(n) / safe) + laplace_sum_radius(N, L, params.b) / safe
        index = jnp.where(N > 0, index, jnp.inf)
        return UCBState(x=argmax_priority(index, s.prio), n=n, N=N, S=S, prio=s.prio), {}

    return bandit_learner(_ucb_init(K), step)


class DPUCBState(NamedTuple):
    """DP-UCB state: one binary-tree counter per arm (rows of ``alpha``/``alpha_hat``).

    Attributes:
        x: the arm played this round (int32).
        n: the rounds observed so far (float).
        N: the ``(K,)`` int32 pulls per arm (the items in the arm's tree).
        S: the ``(K,)`` noisy reward sums the trees release.
        alpha: the ``(K, H)`` exact partial sums of the open nodes.
        alpha_hat: the ``(K, H)`` noisy partial sums of the open nodes.
        prio: the ``(K,)`` random tie-break order.
    """

    x: jax.Array           # int32: the arm played this round
    n: jax.Array           # rounds observed so far (float)
    N: jax.Array           # (K,) int32 pulls per arm (= items in the arm's tree)
    S: jax.Array           # (K,) the trees' released noisy reward sums
    alpha: jax.Array       # (K, H) exact partial sums of the open nodes
    alpha_hat: jax.Array   # (K, H) noisy partial sums of the open nodes
    prio: jax.Array        # (K,) random tie-break order


@checked_params(b=dict(lo=0.0))
class DPUCBParams(NamedTuple):
    """``b >= 0``: the Laplace scale of every tree node (``H/ε``; ``jaxdp plan dp-ucb-tree``).

    Attributes:
        b: the Laplace scale of a node (``H/ε`` for ε-DP).
    """
    b: jax.Array      # node Laplace scale (H/eps for eps-DP)


@functools.lru_cache(maxsize=None)
def dp_ucb_tree(K: int, T_max: int) -> Learner:
    r"""DP-UCB with one binary-tree counter per arm (module docstring), for horizons ``T <= T_max``.

    Params: :class:`DPUCBParams` ``(b,)``. The trees have ``H = floor(log2 T_max) + 1`` levels
    (static). One Laplace draw per round (the new node of the played arm's tree).

    Args:
        K: the number of arms (static).
        T_max: the largest horizon (static).

    Returns:
        The :class:`jaxdp.Learner`.
    """
    K = check_positive_int("K", K)
    H = tree_depth(T_max)

    def init(key, params):
        prio = random_priority(key, K)
        f = fdt()
        return DPUCBState(x=jnp.argmax(prio).astype(jnp.int32), n=jnp.zeros((), f), N=jnp.zeros((K,), jnp.int32),
                          S=jnp.zeros((K,), f), alpha=jnp.zeros((K, H), f), alpha_hat=jnp.zeros((K, H), f),
                          prio=prio)

    def step(key, s, observed, params):
        x = s.x
        tree = TreeState(alpha=s.alpha[x], alpha_hat=s.alpha_hat[x], t=s.N[x])
        tree, c = tree_step(key, tree, 1.0 - observed, params.b)
        alpha = s.alpha.at[x].set(tree.alpha)
        alpha_hat = s.alpha_hat.at[x].set(tree.alpha_hat)
        N = s.N.at[x].set(tree.t)
        S = s.S.at[x].set(c)
        n = s.n + 1.0
        Nf = N.astype(fdt())
        safe = jnp.maximum(Nf, 1.0)
        m = jax.lax.population_count(N).astype(fdt())
        L = 4.0 * jnp.log(n)
        index = S / safe + jnp.sqrt(2.0 * jnp.log(n) / safe) + laplace_sum_radius(m, L, params.b) / safe
        index = jnp.where(N > 0, index, jnp.inf)
        return DPUCBState(x=argmax_priority(index, s.prio), n=n, N=N, S=S, alpha=alpha, alpha_hat=alpha_hat,
                          prio=s.prio), {}

    return bandit_learner(init, step)
