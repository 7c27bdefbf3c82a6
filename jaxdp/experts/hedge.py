"""Hedge / multiplicative weights (Arora–Hazan–Kale 2012; LAZY eq. (2); docs/algorithms/primitives.md#hedge).

The measure at round t is ``p_t(i) ∝ exp(-η Σ_{s<t} l_s(i))``; the learner
plays ``x_t ~ p_t``. For losses in [0, 1],

    E[Reg_T] <= ln(d)/η + η T / 8,     and with η = sqrt(8 ln d / T):  E[Reg_T] <= sqrt(T ln d / 2).

The step draws one uniform (inverse-CDF categorical) and reports the exact
expected loss ``<p_t, l_t>`` so regret curves can use the lower-variance
estimate.

Numerics (``T`` up to 10^7 in float32). The weights depend only on the gaps
``L_i - min_j L_j`` (softmax is shift invariant), so the state keeps the
*gaps*, not the totals: a compensated (Kahan) sum per expert, shifted every
round by the previous round's minimum with an error-free transformation
(``jaxdp.core.accumulate.two_sum``), so the leader's gap stays in [0, 1] and
a near-leader's is small. The logits ``-eta * gap`` are then formed from small
numbers: their error does not grow with ``T`` (forming ``-eta * L_i`` from
totals near 5e6 lost ~1e-4 of each weight at ``T = 10^7``; now ~1e-7). The
shifts are summed in a compensated scalar ``lead``, so the totals
``HedgeState.cum = lead + gap`` stay within a few ulps of float64 too. A plain
float32 gap is *not* enough: an expert that falls far behind and comes back
accumulates the rounding of a large gap every round (a two-phase constant-loss
sequence at ``T = 10^7`` puts its total 9e4 ulps off and its weight wrong by a
factor e^40; tests/core/test_accumulators.py).
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..core.accumulate import complex_dtype, kahan_add, two_sum
from ..core.random import sample_categorical, sample_from_weights
from ..core.types import Learner
from ..core.validation import check_field, check_positive, check_positive_int

__all__ = ["HedgeState", "HedgeParams", "hedge", "hedge_eta", "hedge_params", "hedge_regret_bound",
           "hedge_tuned_regret_bound"]


class HedgeState(NamedTuple):
    """Hedge's state. ``gap`` and ``lead`` are packed compensated sums (``jaxdp.core.accumulate``:
    real part the running sum, imaginary part Kahan's compensation, value ``real - imag``).

    Attributes:
        x: the current action (the expert played).
        gap: ``(d,)`` packed: the cumulative losses minus ``lead``.
        p: ``(d,)`` the distribution ``x`` was drawn from.
        lead: ``()`` packed: the shifts taken out of ``gap`` so far (cumulative losses = ``lead + gap``).
        mu: ``()`` the minimum of ``real(gap)``: the shift the next round takes out.
    """

    x: jax.Array      # int32, the expert played this round
    gap: jax.Array    # (d,) packed: cumulative losses minus ``lead``; min of the real part in [0, 1] after a round
    p: jax.Array      # (d,) the distribution x was drawn from
    lead: jax.Array   # () packed: the shifts taken out of ``gap`` so far (cumulative losses = lead + gap)
    mu: jax.Array     # () min of real(gap): the shift the next round takes out

    @property
    def cum(self) -> jax.Array:
        """The cumulative losses ``lead + gap`` (compensated; within an ulp of the exact sum of the parts)."""
        h, e = two_sum(jnp.real(self.lead), jnp.real(self.gap))
        return h + (e - (jnp.imag(self.lead) + jnp.imag(self.gap)))


class _HedgeParams(NamedTuple):
    eta: jax.Array    # learning rate η > 0


class HedgeParams(_HedgeParams):
    """Learning rate ``eta``: finite and > 0, checked when built on the host from floats or
    arrays (``jaxdp.core.validation.check_field``; tracers and Python ints are not checked).

    Attributes:
        eta: the learning rate η (finite, > 0).
    """

    __slots__ = ()

    def __new__(cls, eta):
        check_field("HedgeParams", "eta", eta, lo=0.0, lo_open=True)
        return super().__new__(cls, eta)


def hedge_eta(d: int, T: int) -> float:
    """The standard tuning η = sqrt(8 ln d / T) (regret <= sqrt(T ln d / 2)).

    Args:
        d: the number of experts.
        T: the horizon.

    Returns:
        η.
    """
    d = check_positive_int("d", d, minimum=2)
    T = check_positive_int("T", T)
    return math.sqrt(8.0 * math.log(d) / T)


def hedge_params(d: int, T: int, eta: float | None = None) -> HedgeParams:
    """Parameters for ``hedge``: a fixed ``eta`` or, if ``None``, the standard tuning.

    Args:
        d: the number of experts.
        T: the horizon.
        eta: a fixed learning rate, or ``None`` for the standard tuning.

    Returns:
        :class:`HedgeParams`.
    """
    if eta is None:
        eta = hedge_eta(d, T)
    check_positive("eta", eta)
    return HedgeParams(eta=jnp.float32(eta))


def hedge_regret_bound(d, T, eta):
    """The expected-regret bound ``ln(d)/η + η T/8`` (NumPy-friendly).

    Args:
        d: the number of experts.
        T: the horizon.
        eta: the learning rate η.

    Returns:
        The bound.
    """
    return math.log(d) / eta + eta * T / 8.0 if isinstance(d, int) else jnp.log(d) / eta + eta * T / 8.0


@functools.lru_cache(maxsize=None)
def hedge(d: int) -> Learner:
    """Hedge over ``d`` experts. Params: ``HedgeParams(eta)``. Keys per step: 1 uniform.

    Example:
        >>> from jaxdp import seed_keys, simulate
        >>> from jaxdp.experts import BernoulliParams, bernoulli_experts, experts_problem, hedge_params
        >>> out = simulate(hedge(10), bernoulli_experts(10), experts_problem(), hedge_params(10, 200),
        ...                BernoulliParams(gap=0.1), seed_keys(0, 8), 200)
        >>> out["regret"].shape          # one regret per seed
        (8,)
        >>> bool((out["expected_regret"] <= hedge_regret_bound(10, 200, hedge_params(10, 200).eta)).all())
        True

    Args:
        d: the number of experts.

    Returns:
        The Hedge :class:`jaxdp.Learner`.
    """
    d = check_positive_int("d", d, minimum=2)

    def init(key, params):
        f = jnp.result_type(float)
        p = jnp.full((d,), 1.0 / d, f)
        x = sample_categorical(key, jnp.zeros((d,)))
        return HedgeState(x=x, gap=jnp.zeros((d,), complex_dtype(f)), p=p, lead=jnp.zeros((), complex_dtype(f)),
                          mu=jnp.zeros((), f))

    def step(key, state, loss, params):
        expected = jnp.dot(state.p, loss)
        s, c = jnp.real(state.gap), jnp.imag(state.gap)
        t, c = kahan_add(s, c, jnp.asarray(loss, s.dtype))     # t - c = gap + loss
        h, e = two_sum(t, -state.mu)                           # t - mu = h + e, exactly
        # one packed output: XLA computes the update in one loop; the barrier stops it from
        # re-deriving h inside the reduction and the exp below (three loops and copies of the state)
        gap = jax.lax.optimization_barrier(jax.lax.complex(h, c - e))
        hi = jnp.real(gap)
        mu = jnp.min(hi)
        logits = -params.eta * hi
        w = jnp.exp(logits - (-params.eta * mu))  # = logits - max(logits): rounding is monotone; one exp pass serves p and the draw
        total = jnp.sum(w)
        x = sample_from_weights(key, w, total)
        lead, lead_c = kahan_add(jnp.real(state.lead), jnp.imag(state.lead), state.mu)
        new = HedgeState(x=x, gap=gap, p=w / total, lead=jax.lax.complex(lead, lead_c), mu=mu)
        return new, {"expected_loss": expected, "switched": x != state.x}

    return Learner(init=init, step=step)


def hedge_tuned_regret_bound(d: int, T: int) -> float:
    """Hedge's expected-regret bound at its standard tuning: ``ln d/η + ηT/8`` at ``η = √(8 ln d/T)``
    (:func:`hedge_eta`), which is ``√(T ln d/2)`` for losses in [0, 1] (LAZY eq. (2); Cesa-Bianchi & Lugosi,
    *Prediction, Learning, and Games*, Thm 2.2).

    Args:
        d: the number of experts (>= 2).
        T: the horizon (>= 1).

    Returns:
        The bound, a float.
    """
    d, T = int(d), int(T)
    return float(hedge_regret_bound(d, T, hedge_eta(d, T)))
