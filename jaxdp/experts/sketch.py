"""``private_lazy_sketch``: the prior low-switching private template (LAZY §3; docs/algorithms/lazy.md#baselines). Baseline only.

Per round ``t`` (normalized MW measures ``mu_bar_t = softmax(-eta cum_{t-1})``):

    S_t  ~ Ber(C mu_bar_t(x_{t-1}) / mu_bar_{t-1}(x_{t-1})),   C = e^{-eta}
    S'_t ~ Ber(1 - p)
    x_t  ~ mu_bar_t if S_t = 0 or S'_t = 0, else x_t = x_{t-1}.

The marginal of ``x_t`` is exactly ``mu_bar_t``:
``P[x_t = x] = (1-p) C mu_bar_t(x) + (1 - (1-p) C) mu_bar_t(x)``. The normalized
ratio ``log mu_bar_{t+1}(x)/mu_bar_t(x) = -eta l_t(x) - (lse(-eta cum_{t+1}) - lse(-eta cum_t))``
depends on the whole history (the normalizer), so each loss influences every
later switching decision: this is what L2P's shadow sequence removes. With
``p = 0`` it is the "broken L2P" of the audits (docs/guide/auditing.md). No theorem settings
in the seeds. Keys per round: 3 (``S``, ``S'``, fresh draw).
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..core.random import log_uniform, sample_categorical
from ..core.types import Learner
from ..core.validation import check_in_range, check_positive, check_positive_int
from ..registry import ConformanceCase, register_learner

__all__ = ["SketchParams", "SketchState", "private_lazy_sketch", "sketch_params"]


class SketchParams(NamedTuple):
    """Parameters of :func:`private_lazy_sketch`.

    Attributes:
        eta: the learning rate η.
        p: the fake-switch probability.
    """
    eta: jax.Array   # MW step
    p: jax.Array     # fake-switch probability


class SketchState(NamedTuple):
    """State of :func:`private_lazy_sketch`.

    Attributes:
        x, cum, p: as in :class:`jaxdp.experts.DartboardState` (``p``: the MW distribution ``x`` is drawn from).
    """
    x: jax.Array     # int32 expert played
    cum: jax.Array   # (d,) cumulative losses
    p: jax.Array     # (d,) the MW distribution x is drawn from (its marginal)


def sketch_params(eta: float, p: float) -> SketchParams:
    """Validated :class:`SketchParams` (host side).

    Args:
        eta: the learning rate η.
        p: the fake-switch probability.

    Returns:
        :class:`SketchParams`.
    """
    check_positive("eta", eta)
    check_in_range("p", p, 0.0, 1.0)
    fdt = jnp.result_type(float)
    return SketchParams(eta=jnp.asarray(eta, fdt), p=jnp.asarray(p, fdt))


@functools.lru_cache(maxsize=None)
def private_lazy_sketch(d: int) -> Learner:
    """The low-switching template of LAZY §3 with MW measures over ``d >= 2`` experts.

    Params: :func:`sketch_params` ``(eta, p)``. Info: ``expected_loss``,
    ``switched``, ``n_real`` (``S_t = 0``), ``n_fake`` (``S_t = 1, S'_t = 0``).

    Args:
        d: the number of experts.

    Returns:
        The :class:`jaxdp.Learner`.
    """
    d = check_positive_int("d", d, minimum=2)
    fdt = jnp.result_type(float)

    def init(key, params):
        return SketchState(x=sample_categorical(key, jnp.zeros((d,))), cum=jnp.zeros((d,), fdt),
                           p=jnp.full((d,), 1.0 / d, fdt))

    def step(key, state, loss, params):
        kS, kSp, kx = jax.random.split(key, 3)
        expected = jnp.dot(state.p, loss)
        cum = state.cum + loss
        old_logits, new_logits = -params.eta * state.cum, -params.eta * cum
        log_norm_ratio = -params.eta * loss[state.x] - (jax.nn.logsumexp(new_logits) - jax.nn.logsumexp(old_logits))
        log_acc = jnp.minimum(0.0, log_norm_ratio - params.eta)
        S = log_uniform(kS) < log_acc
        Sp = jax.random.uniform(kSp, dtype=fdt) >= params.p
        x = jnp.where(S & Sp, state.x, sample_categorical(kx, new_logits))
        info = {"expected_loss": expected, "switched": x != state.x, "n_real": ~S, "n_fake": S & ~Sp}
        return SketchState(x=x, cum=cum, p=jax.nn.softmax(new_logits)), info

    return Learner(init=init, step=step)


register_learner(
    "private_lazy_sketch", factory=private_lazy_sketch, params_type=SketchParams, problem="experts", private=True,
    conformance=ConformanceCase("jaxdp.experts.conformance:private_lazy_sketch_case"),
    description="the prior low-switching template: keep x_{t-1} w.p. (1-p) C μ̄_t(x)/μ̄_{t-1}(x), else redraw "
                "from μ̄_t (baseline; its privacy is not certified: no planner, p = 0 is the audits' broken L2P)",
    reference="Lazy private online learning, Sec. 3 (the earlier template)")
