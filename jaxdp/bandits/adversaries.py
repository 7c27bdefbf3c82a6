r"""Bandit environments: stochastic Bernoulli arms and oblivious adversaries (docs/algorithms/bandits.md#environments).

Every environment is an oblivious :class:`~jaxdp.core.Adversary`: ``loss(state, t)`` is a pure
function of its own key and the 0-indexed round ``t`` and returns a
:class:`~jaxdp.bandits.BanditLoss` (realized losses and their means). Arms are described by
their **reward** means ``μ_i`` (the bandit literature's convention, and SMPyBandits');
the loss of arm ``i`` is ``1 - r_t(i)``.

Random numbers. A round's rewards come from the Threefry-2x32 hash of the adversary's key and
the counter ``(t, j)``, ``j = 0, 1, ...`` (``jax.extend.random.threefry_2x32``, the function
behind ``jax.random.bits``), two 32-bit words per hash, without the ``fold_in`` hash per round:

* ``coupling="independent"``: arm ``i`` draws its own 16-bit uniform ``U_{t,i}`` and
  ``r_t(i) = 1[U_{t,i} < round(2^{16} μ_i)]``: ``ceil(K/4)`` hashes per round.
  The law's means are ``round(2^{16}μ_i)/2^{16}`` (within 7.7e-6 of ``means``), and
  ``BanditLoss.mean`` reports these exact means.
* ``coupling="common"``: one 24-bit uniform ``U_t`` per round shared by the arms,
  ``r_t(i) = 1[U_t < round(2^{24}μ_i)]``: one hash per round. Each arm's rewards
  are i.i.d. Bernoulli over rounds with the same marginal law as above (means exact to 3e-8), but
  the arms are coupled within a round. A bandit learner observes one arm per round, so its
  trajectory and its pseudo-regret have exactly the same law under both couplings; only the
  realized regret's comparator ``min_i Σ_t ℓ_t(i)`` depends on the coupling.
"""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.extend.random import threefry_2x32

from ..core.types import AdaptiveAdversary, Adversary, fdt
from ..core.validation import check_choice, check_positive_int
from ._common import checked_params
from .problem import BanditLoss

__all__ = [
    "BernoulliArmsParams", "bernoulli_arms", "SwitchingArmsParams", "switching_arms", "as_bandit", "COUPLINGS",
    "quantized_means",
]

COUPLINGS = ("independent", "common")


def round_words(key: jax.Array, t: jax.Array, n: int) -> jax.Array:
    """``n`` uint32 words of round ``t``: Threefry-2x32 of ``key`` at the counters ``(t, 0), (t, 1), ...``.

    Keys of another implementation (``rbg``) fall back to ``jax.random.bits(fold_in(key, t))``.

    Args:
        key: JAX PRNG key.
        t: the round (int scalar, may be traced); it is the first half of every counter.
        n: the number of words (static).

    Returns:
        The ``(n,)`` uint32 words.
    """
    kd = jax.random.key_data(key)
    if kd.shape != (2,) or kd.dtype != jnp.uint32:
        return jax.random.bits(jax.random.fold_in(key, t), (n,), jnp.uint32)
    blocks = -(-n // 2)
    t32 = jnp.asarray(t).astype(jnp.uint32)
    cnt = jnp.concatenate([jnp.broadcast_to(t32, (blocks,)), jnp.arange(blocks, dtype=jnp.uint32)])
    return threefry_2x32(kd, cnt)[:n]


def _thresholds(means: jax.Array, bits: int) -> jax.Array:
    return jnp.round(jnp.clip(jnp.asarray(means, fdt()), 0.0, 1.0) * float(1 << bits)).astype(jnp.uint32)


def quantized_means(means: Any, coupling: str = "independent") -> Any:
    """The exact reward means of the law :func:`bernoulli_arms` draws (``round(2^b mu) / 2^b``, ``b = 16`` or 24).

    Args:
        means: the requested reward means.
        coupling: ``"independent"`` or ``"common"``.

    Returns:
        The quantized means (same shape).

    Raises:
        ValueError: an unknown ``coupling``.
    """
    import numpy as np

    b = 16 if check_choice("coupling", coupling, COUPLINGS) == "independent" else 24
    return np.round(np.clip(np.asarray(means, np.float64), 0.0, 1.0) * 2.0 ** b) / 2.0 ** b


def _key_and_params(key, params):
    return (key, params)


def _bernoulli_rewards(key, t, means, K: int, coupling: str):
    """``(rewards (K,) bool, exact means (K,) float)`` of round ``t``."""
    if coupling == "independent":
        w = round_words(key, t, -(-K // 2))
        u = jnp.stack([w & 0xFFFF, w >> 16], axis=-1).reshape(-1)[:K]
        thr = _thresholds(means, 16)
        return u < thr, thr.astype(fdt()) * (1.0 / (1 << 16))
    w = round_words(key, t, 1)
    u = w[0] >> 8
    thr = _thresholds(means, 24)
    return u < thr, thr.astype(fdt()) * (1.0 / (1 << 24))


# --------------------------------------------------------------------------- stochastic Bernoulli arms


@checked_params(means=dict(lo=0.0, hi=1.0))
class BernoulliArmsParams(NamedTuple):
    """``means``: the ``(K,)`` reward means, each in ``[0, 1]`` (checked on the host).

    Attributes:
        means: the ``(K,)`` reward means in ``[0, 1]``.
    """
    means: jax.Array   # (K,) reward means in [0, 1]


@functools.lru_cache(maxsize=None)
def bernoulli_arms(K: int, coupling: str = "independent") -> Adversary:
    r"""Stationary stochastic bandit: arm ``i`` pays reward ``r_t(i) ~ Ber(μ_i)``, i.i.d. over rounds.

    Params: :class:`BernoulliArmsParams` ``(means,)``. Losses ``ℓ_t(i) = 1 - r_t(i)``,
    means ``m(i) = 1 - μ_i`` (quantized, module docstring). ``coupling`` (static):
    ``"independent"`` arms or one ``"common"`` uniform per round (module docstring).

    Example (the K = 9 instance of benchmarks/bench_bandits.py)::

        adv = bernoulli_arms(9)
        ap = BernoulliArmsParams(means=jnp.linspace(0.1, 0.9, 9))

    Args:
        K: the number of arms (static).
        coupling: ``"independent"`` or ``"common"`` (static).

    Returns:
        The :class:`jaxdp.Adversary`.

    Raises:
        ValueError: an unknown ``coupling``.
    """
    K = check_positive_int("K", K)
    coupling = check_choice("coupling", coupling, COUPLINGS)

    def loss(state, t):
        key, params = state
        r, mu = _bernoulli_rewards(key, t, params.means, K, coupling)
        return BanditLoss(loss=1.0 - r.astype(fdt()), mean=1.0 - mu)

    return Adversary(init=_key_and_params, loss=loss)


# --------------------------------------------------------------------------- oblivious: a switch of the best arm


@checked_params(means_a=dict(lo=0.0, hi=1.0), means_b=dict(lo=0.0, hi=1.0), switch=dict(lo=0))
class SwitchingArmsParams(NamedTuple):
    """``means_a``, ``means_b`` in ``[0, 1]``, ``switch >= 0`` (checked on the host).

    Attributes:
        means_a: the ``(K,)`` reward means before round ``switch``.
        means_b: the ``(K,)`` reward means from round ``switch`` on.
        switch: the first round (0-indexed, int32) of the second phase.
    """
    means_a: jax.Array   # (K,) reward means before the switch
    means_b: jax.Array   # (K,) reward means from round `switch` on
    switch: jax.Array    # int32: the first round (0-indexed) of the second phase


@functools.lru_cache(maxsize=None)
def switching_arms(K: int) -> Adversary:
    r"""Oblivious adversary whose reward means jump once: ``μ_t = μ^a`` for ``t < switch``, ``μ^b`` after.

    Rewards are independent Bernoulli draws (deterministic where a mean is 0 or 1). The losses are
    fixed in advance (a function of the key and ``t``), so it is an oblivious adversary; the
    pseudo-regret compares with ``min_i Σ_t (1 - μ_t(i))``. The "late arm" instance
    ``means_a = (0, 1/2, ..., 1/2)``, ``means_b = (1, 1/2, ..., 1/2)``, ``switch = T/3`` has best fixed
    arm 0 (reward ``2T/3`` against ``T/2``). Successive elimination (DP-SE) drops arm 0 in its first
    epoch and never returns to it: regret about ``T/6``. UCB1 and Thompson sampling keep pulling arm
    0 at a logarithmic rate (its index stays at the margin), pick it up right after the switch and
    end below the best fixed arm (negative regret); EXP3's regret is ``O(sqrt(TK ln K))`` on any
    oblivious sequence
    (docs/algorithms/bandits.md#environments).

    Args:
        K: the number of arms (static).

    Returns:
        The :class:`jaxdp.Adversary`.
    """
    K = check_positive_int("K", K)

    def loss(state, t):
        key, params = state
        means = jnp.where(t < params.switch, params.means_a, params.means_b)
        r, mu = _bernoulli_rewards(key, t, means, K, "independent")
        return BanditLoss(loss=1.0 - r.astype(fdt()), mean=1.0 - mu)

    return Adversary(init=_key_and_params, loss=loss)


# --------------------------------------------------------------------------- any experts adversary


@functools.lru_cache(maxsize=None)
def as_bandit(adversary: Adversary) -> Adversary:
    """An experts adversary (``(K,)`` loss vectors) as a bandit environment whose means are its losses.

    For such a sequence, fixed in advance, the pseudo-regret of :func:`bandit_problem` equals the
    realized regret.

    Args:
        adversary: an experts adversary (``(K,)`` loss vectors).

    Returns:
        The bandit :class:`jaxdp.Adversary`.

    Raises:
        TypeError: ``adversary`` is not an oblivious :class:`jaxdp.Adversary` (an adaptive one included: its
            losses depend on the actions played, so they are no environment fixed in advance, and the
            pseudo-regret would not equal the realized regret).
    """
    if isinstance(adversary, AdaptiveAdversary):
        raise TypeError("as_bandit takes an oblivious experts Adversary, got an AdaptiveAdversary: its losses "
                        "depend on the actions played, so they are no bandit environment fixed in advance "
                        "(pass it to simulate with experts_problem() instead)")
    if not isinstance(adversary, Adversary):
        raise TypeError(f"adversary must be a jaxdp Adversary, got {type(adversary).__name__}")

    def loss(state, t):
        l = adversary.loss(state, t)
        return BanditLoss(loss=l, mean=l)

    return Adversary(init=adversary.init, loss=loss)
