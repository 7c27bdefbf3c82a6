"""Shrinking dartboard: lazy multiplicative weights (Geulen–Vöcking–Winkler 2010; docs/algorithms/primitives.md#dartboard).

Weights ``w_t(i) = exp(-η L_{t-1}(i))`` (``variant="exp"``, the form used by the
private lazy algorithms) or ``(1-η)^{L_{t-1}(i)}`` (``variant="geulen"``, the
original). After round t the learner keeps its expert ``x`` with probability
``w_{t+1}(x)/w_t(x)`` and otherwise draws a fresh ``x ~ p_{t+1}``. The
marginal of ``x_t`` is exactly ``p_t`` (the Hedge distribution with the same
weights):

    P[x_{t+1}=i] = p_t(i) w_{t+1}(i)/w_t(i) + (1 - W_{t+1}/W_t) p_{t+1}(i) = p_{t+1}(i),

and the expected number of switches is at most ``ln d + L* ln(1/(1-η))``
(``= O(sqrt(T ln d))`` at the standard tuning). Two uniforms per round.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..core.random import log_uniform, sample_categorical
from ..core.types import Learner
from ..core.validation import check_choice, check_positive_int
from ..registry import ConformanceCase, register_learner
from .hedge import HedgeParams

__all__ = ["DartboardState", "shrinking_dartboard"]


class DartboardState(NamedTuple):
    """State of the shrinking dartboard.

    Attributes:
        x: the current action (the expert played).
        cum: the cumulative loss vector.
        p: the current distribution over experts.
    """
    x: jax.Array      # int32 expert played
    cum: jax.Array    # (d,) cumulative losses
    p: jax.Array      # (d,) current MW distribution (x's marginal)


@functools.lru_cache(maxsize=None)
def shrinking_dartboard(d: int, variant: str = "exp") -> Learner:
    """Lazy MW over ``d`` experts. Params: ``HedgeParams(eta)`` (``eta < 1`` for ``"geulen"``).

    Info: ``expected_loss`` (= Hedge's, since the marginals agree), ``switched``
    and ``resampled`` (fresh draws, which may pick the same expert).

    Args:
        d: the number of experts.
        variant: ``"exp"`` or ``"geulen"``.

    Returns:
        The :class:`jaxdp.Learner`.
    """
    d = check_positive_int("d", d, minimum=2)
    check_choice("variant", variant, ["exp", "geulen"])

    def log_w_per_loss(eta):
        return -eta if variant == "exp" else jnp.log1p(-eta)

    def init(key, params):
        p = jnp.full((d,), 1.0 / d, jnp.result_type(float))
        x = sample_categorical(key, jnp.zeros((d,)))
        return DartboardState(x=x, cum=jnp.zeros((d,), jnp.result_type(float)), p=p)

    def step(key, state, loss, params):
        k_keep, k_new = jax.random.split(key)
        a = log_w_per_loss(params.eta)
        expected = jnp.dot(state.p, loss)
        cum = state.cum + loss
        logits = a * cum
        keep = log_uniform(k_keep) < a * loss[state.x]
        fresh = sample_categorical(k_new, logits)
        x = jnp.where(keep, state.x, fresh)
        info = {"expected_loss": expected, "switched": x != state.x, "resampled": ~keep}
        return DartboardState(x=x, cum=cum, p=jax.nn.softmax(logits)), info

    return Learner(init=init, step=step)


def _register_hedge_params_learner(name: str, factory, description: str, reference: str, conformance: str,
                                   compare=None) -> None:
    """Register a non-private experts learner ``factory(d)`` that takes :class:`HedgeParams`, with the
    conformance case built by the function ``conformance`` names (``"module:function"``; also used by
    :mod:`jaxdp.experts.ftpl` and for ``hedge``)."""
    register_learner(name, factory=factory, params_type=HedgeParams, problem="experts", private=False,
                     conformance=ConformanceCase(conformance), description=description, reference=reference,
                     compare=compare)


_register_hedge_params_learner(
    "shrinking_dartboard", shrinking_dartboard,
    "lazy multiplicative weights: keep x with probability w_{t+1}(x)/w_t(x), else redraw from p_{t+1} "
    "(marginal p_t exactly; variant='geulen': weights (1-η)^L)",
    "Geulen, Vöcking, Winkler 2010, Regret minimization for online buffering problems using the "
    "weighted majority algorithm",
    conformance="jaxdp.experts.conformance:shrinking_dartboard_case")
