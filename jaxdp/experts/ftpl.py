"""Follow the perturbed leader for experts (Kalai–Vempala 2005; Abernethy et al. 2014).

Each round plays ``x_t = argmax_i ( -η L_{t-1}(i) + Z_i )`` with fresh i.i.d.
perturbations ``Z`` (fresh noise against an oblivious adversary has the same
expected regret as noise drawn once):

* ``noise="gumbel"``: exactly Hedge with the same η (Gumbel-max trick), a check.
* ``noise="exponential"``: Kalai–Vempala style one-sided perturbation.
* ``noise="uniform"``: ``Z ~ U[0, 1]`` (the original FTPL; η = ε of KV05).
* ``noise="laplace"``: symmetric perturbation.

Draws ``d`` random numbers per round (this is the cost the inverse-CDF
sampler of ``hedge`` avoids).
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..core.types import Learner
from ..core.validation import check_choice, check_positive_int
from .dartboard import _register_hedge_params_learner

__all__ = ["FTPLState", "ftpl", "ftpl_eta", "ftpl_regret_bound"]

_DRAWS = {"gumbel": jax.random.gumbel, "exponential": jax.random.exponential, "uniform": jax.random.uniform,
          "laplace": jax.random.laplace}
_NOISES = tuple(_DRAWS)


class FTPLState(NamedTuple):
    """State of follow the perturbed leader.

    Attributes:
        x: the current action (the expert played).
        cum: the cumulative loss vector.
    """
    x: jax.Array
    cum: jax.Array


def ftpl_eta(d: int, T: int, noise: str = "exponential") -> float:
    """A standard tuning: Hedge's sqrt(8 ln d / T) for Gumbel, sqrt(ln d / T) for exponential
    and Laplace (regret O(sqrt(T ln d))), and sqrt(1/(d T)) for uniform (KV05, regret O(sqrt(d T))).

    Args:
        d: the number of experts.
        T: the horizon.
        noise: the perturbation's distribution.

    Returns:
        η.
    """
    d = check_positive_int("d", d, minimum=2)
    T = check_positive_int("T", T)
    check_choice("noise", noise, _NOISES)
    if noise == "gumbel":
        return math.sqrt(8 * math.log(d) / T)
    if noise == "uniform":
        return math.sqrt(1.0 / (d * T))
    return math.sqrt(math.log(d) / T)


def ftpl_regret_bound(d: int, T, eta: float):
    """FTPL's expected-regret bound with exponential perturbations in the form of Kalai & Vempala's analysis
    (*Efficient algorithms for online decision problems*), constants 1: ``(1 + ln d)/η + η T`` for losses in [0, 1].

    Args:
        d: the number of experts.
        T: the rounds (a number or an array).
        eta: the perturbation's rate η.

    Returns:
        The bound, in the shape of ``T``.
    """
    return (1 + math.log(d)) / eta + eta * T


@functools.lru_cache(maxsize=None)
def ftpl(d: int, noise: str = "exponential") -> Learner:
    """FTPL over ``d`` experts. Params: ``HedgeParams(eta)`` (η = 1 / perturbation scale).

    Args:
        d: the number of experts.
        noise: the perturbation's distribution (``"exponential"``, ``"gumbel"``, ``"laplace"``, ``"uniform"``).

    Returns:
        The :class:`jaxdp.Learner`.
    """
    d = check_positive_int("d", d, minimum=2)
    check_choice("noise", noise, _NOISES)

    def draw(key):
        return _DRAWS[noise](key, (d,))

    def init(key, params):
        z = draw(key)
        cum = jnp.zeros((d,), jnp.result_type(float))
        return FTPLState(x=jnp.argmax(z).astype(jnp.int32), cum=cum)

    def step(key, state, loss, params):
        cum = state.cum + loss
        x = jnp.argmax(-params.eta * cum + draw(key)).astype(jnp.int32)
        return FTPLState(x=x, cum=cum), {"switched": x != state.x}

    return Learner(init=init, step=step)


_register_hedge_params_learner(
    "ftpl", ftpl,
    "follow the perturbed leader: x_t = argmax_i(-η L_{t-1}(i) + Z_i), fresh Z each round "
    "(noise='gumbel' is Hedge; 'exponential', 'uniform', 'laplace')",
    "Kalai, Vempala 2005, Efficient algorithms for online decision problems; Abernethy et al. 2014",
    conformance="jaxdp.experts.conformance:ftpl_case")
