"""Hedge / multiplicative weights (Arora–Hazan–Kale 2012; LAZY eq. (2); docs/algorithms/primitives.md#hedge).

The measure at round t is ``p_t(i) ∝ exp(-η Σ_{s<t} l_s(i))``; the learner
plays ``x_t ~ p_t``. For losses in [0, 1],

    E[Reg_T] <= ln(d)/η + η T / 8,     and with η = sqrt(8 ln d / T):  E[Reg_T] <= sqrt(T ln d / 2).

The step draws one uniform (inverse-CDF categorical) and reports the exact
expected loss ``<p_t, l_t>`` so regret curves can use the lower-variance
estimate.
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..core.accumulate import kahan_add
from ..core.random import sample_categorical, sample_from_weights
from ..core.types import Learner
from ..core.validation import check_field, check_positive, check_positive_int

__all__ = ["HedgeState", "HedgeParams", "hedge", "hedge_eta", "hedge_params", "hedge_regret_bound"]


class HedgeState(NamedTuple):
    x: jax.Array      # int32, the expert played this round
    cum: jax.Array    # (d,) cumulative losses of the rounds seen so far
    p: jax.Array      # (d,) the distribution x was drawn from
    cum_c: jax.Array  # (d,) Kahan compensation of ``cum`` (jaxdp.core.accumulate): accurate at T ~ 10^7


class _HedgeParams(NamedTuple):
    eta: jax.Array    # learning rate η > 0


class HedgeParams(_HedgeParams):
    """Learning rate ``eta``: finite and > 0, checked when built on the host from floats or
    arrays (``jaxdp.core.validation.check_field``; tracers and Python ints are not checked)."""

    __slots__ = ()

    def __new__(cls, eta):
        check_field("HedgeParams", "eta", eta, lo=0.0, lo_open=True)
        return super().__new__(cls, eta)


def hedge_eta(d: int, T: int) -> float:
    """The standard tuning η = sqrt(8 ln d / T) (regret <= sqrt(T ln d / 2))."""
    d = check_positive_int("d", d, minimum=2)
    T = check_positive_int("T", T)
    return math.sqrt(8.0 * math.log(d) / T)


def hedge_params(d: int, T: int, eta: float | None = None) -> HedgeParams:
    """Parameters for ``hedge``: a fixed ``eta`` or, if ``None``, the standard tuning."""
    if eta is None:
        eta = hedge_eta(d, T)
    check_positive("eta", eta)
    return HedgeParams(eta=jnp.float32(eta))


def hedge_regret_bound(d, T, eta):
    """The expected-regret bound ``ln(d)/η + η T/8`` (NumPy-friendly)."""
    return math.log(d) / eta + eta * T / 8.0 if isinstance(d, int) else jnp.log(d) / eta + eta * T / 8.0


@functools.lru_cache(maxsize=None)
def hedge(d: int) -> Learner:
    """Hedge over ``d`` experts. Params: ``HedgeParams(eta)``. Keys per step: 1 uniform.

    Example::

        learner = hedge(10)
        out = simulate(learner, bernoulli_experts(10), experts_problem(),
                       hedge_params(10, 1000), BernoulliParams(gap=0.1), seed_keys(0, 64), 1000)
    """
    d = check_positive_int("d", d)

    def init(key, params):
        p = jnp.full((d,), 1.0 / d, jnp.result_type(float))
        cum = jnp.zeros((d,), jnp.result_type(float))
        x = sample_categorical(key, jnp.zeros((d,)))
        return HedgeState(x=x, cum=cum, p=p, cum_c=jnp.zeros_like(cum))

    def step(key, state, loss, params):
        expected = jnp.dot(state.p, loss)
        cum, cum_c = kahan_add(state.cum, state.cum_c, jnp.asarray(loss, state.cum.dtype))
        logits = -params.eta * cum
        w = jnp.exp(logits - jnp.max(logits))  # one exp pass serves p and the draw
        total = jnp.sum(w)
        x = sample_from_weights(key, w, total)
        return HedgeState(x=x, cum=cum, p=w / total, cum_c=cum_c), {"expected_loss": expected, "switched": x != state.x}

    return Learner(init=init, step=step)
