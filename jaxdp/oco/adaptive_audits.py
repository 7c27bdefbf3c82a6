"""Privacy audit of DP-FTRL in the adaptive game (docs/guide/auditing.md#adaptive-game; ``jaxdp audit dp-ftrl-adaptive``).

"Near-Optimal Algorithms for Private Online Optimization in the Realizable Regime" (Sec. 2) claims privacy against
adaptive adversaries. DP-FTRL (REAL Alg. 3) releases tree-aggregated prefix sums of the clipped gradients; the binary tree is a lower-triangular
factorization, the condition under which a linear-noise mechanism stays private on adaptive streams ("Improved
Differential Privacy for SGD via Optimal Private Linear Operators on Adaptive Streams", Denisov, McMahan, Rush, Smith,
Thakurta). The audit plays the game of :mod:`jaxdp.privacy.audit.adaptive` on linear losses ``<g_t, x>``
(``||g_t|| <= 1 = clip``) with three strategies that watch the iterate ``x_t``:

* ``toward iterate``: the first round with ``||x_t|| > 1/2`` is the challenge, ``g = x_t/||x_t||`` in world 0 and
  ``-x_t/||x_t||`` in world 1 (the largest change, ``2L``);
* ``first coordinate positive``: the first round with ``x_t[0] > 0``, ``e_1`` vs ``-e_1``;
* ``punish iterate``: ``g_t = x_t/||x_t||`` (a linear loss pointing at the current iterate) in every round, the
  challenge at ``T/2`` with the pair of ``toward iterate``.

Size: ``d = 2``, ``T = T_max = 8``, the unit ball, :func:`jaxdp.oco.plan_dp_ftrl` at ``(ε, δ) = (1, 10⁻⁵)``
(``setting="general"``, ``L = D = 1``); the claim is that (ε, δ).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..privacy.accounting.floating import delta_float
from ..privacy.audit.adaptive import (
    GameView, NeighbourStrategy, audit_learner_adaptive, challenge_strategy, oblivious_strategy,
)
from ..registry import register_audit
from .dp_ftrl import dp_ftrl, plan_dp_ftrl
from .problems import linear_problem

__all__ = ["toward_iterate_strategy", "coordinate_strategy", "punish_iterate_strategy", "oco_strategies",
           "oblivious_reference",
           "DPFTRL_T", "DPFTRL_D", "DPFTRL_EPS", "DPFTRL_DELTA", "audit_dp_ftrl_adaptive"]

#: the size and claim of ``dp-ftrl-adaptive``
DPFTRL_T, DPFTRL_D, DPFTRL_EPS, DPFTRL_DELTA = 8, 2, 1.0, 1e-5


def _direction(view: GameView):
    x = view.actions[view.t]
    n = jnp.linalg.norm(x)
    e1 = jnp.zeros_like(x).at[0].set(1.0)
    return jnp.where(n > 1e-12, x / jnp.maximum(n, 1e-12), e1)


def _pm_direction(view: GameView):
    u = _direction(view)
    return u, -u


def toward_iterate_strategy(T: int, radius: float = 0.5) -> NeighbourStrategy:
    """Challenge the first round with ``||x_t|| > radius`` (or round ``T - 1``): ``x_t/||x_t||`` vs ``-x_t/||x_t||``.

    Args:
        T: the horizon.
        radius: the trigger's norm.

    Returns:
        The :class:`jaxdp.privacy.audit.adaptive.NeighbourStrategy` ``"toward iterate"``.
    """
    return challenge_strategy("toward iterate", T, trigger=lambda v: jnp.linalg.norm(v.actions[v.t]) > radius,
                              pair=_pm_direction)


def coordinate_strategy(T: int, d: int) -> NeighbourStrategy:
    """Challenge the first round with ``x_t[0] > 0`` (or round ``T - 1``): ``e_1`` vs ``-e_1``.

    Args:
        T: the horizon.
        d: the dimension.

    Returns:
        The :class:`jaxdp.privacy.audit.adaptive.NeighbourStrategy` ``"first coordinate positive"``.
    """
    e1 = jnp.zeros((d,), jnp.float32).at[0].set(1.0)
    return challenge_strategy("first coordinate positive", T, trigger=lambda v: v.actions[v.t][0] > 0,
                              pair=lambda v: (e1, -e1))


def punish_iterate_strategy(T: int, t0: int) -> NeighbourStrategy:
    """``g_t = x_t/||x_t||`` in every round (``e_1`` at ``x_t = 0``); the challenge at ``t0``: ``g`` vs ``-g``.

    Args:
        T: the horizon.
        t0: the challenge round.

    Returns:
        The :class:`jaxdp.privacy.audit.adaptive.NeighbourStrategy` ``"punish iterate"``.
    """
    return challenge_strategy("punish iterate", T, trigger=lambda v: v.t == t0, pair=_pm_direction, base=_direction)


def oco_strategies(T: int, d: int) -> list:
    """The three strategies of ``dp-ftrl-adaptive`` (module docstring).

    Args:
        T: the horizon.
        d: the dimension.

    Returns:
        ``[toward iterate, first coordinate positive, punish iterate (t0 = T // 2)]``.
    """
    return [toward_iterate_strategy(T), coordinate_strategy(T, d), punish_iterate_strategy(T, T // 2)]


def oblivious_reference(T: int, d: int) -> list:
    """The oblivious reference of ``dp-ftrl-adaptive`` (``oblivious=True``): zero losses except ``e_1`` vs ``-e_1`` in
    round 1, ``T // 2`` or ``T - 1``.

    Args:
        T: the horizon.
        d: the dimension.

    Returns:
        Three :func:`jaxdp.privacy.audit.adaptive.oblivious_strategy` objects.
    """
    e1 = np.eye(d, dtype=np.float32)[0]
    return [oblivious_strategy(t0, e1, -e1, name=f"oblivious l{t0 + 1}: e1 vs -e1") for t0 in (1, T // 2, T - 1)]


@register_audit("dp-ftrl-adaptive", "DP-FTRL (linear losses, d=2, T=8) in the adaptive game (strategies watching "
                                    "the iterate); claimed (eps, delta) = (1, 1e-5)", claimed_eps=DPFTRL_EPS)
def audit_dp_ftrl_adaptive(*, quick: bool = True, seed: int = 0, n: int | None = None, claim_factor: float = 1.0,
                           oblivious: bool = False):
    """Registered audit ``dp-ftrl-adaptive``: DP-FTRL against adaptive adversaries (module docstring).

    Events: each coordinate's mean over the ``T + 1`` iterates and its final value (thresholds searched).

    Args:
        quick: with ``n`` unset, 200 000 runs per world and strategy instead of 1 000 000.
        seed: the seed of the audit's key.
        n: runs per world and strategy (``None``: by ``quick``).
        claim_factor: audit the over-claim ``eps / claim_factor`` (δ unchanged).
        oblivious: audit the oblivious reference instead (:func:`oblivious_reference`: the same learner, size, runs
            and events on three fixed pairs).

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    T, d = DPFTRL_T, DPFTRL_D
    eps = DPFTRL_EPS / claim_factor
    prob = linear_problem(d, 1.0)
    plan = plan_dp_ftrl(eps=DPFTRL_EPS, delta=DPFTRL_DELTA, T=T, d=d, L=1.0, D=1.0, setting="general")
    dfl = delta_float("gaussian", eps=eps, d=d, draws=T)
    return audit_learner_adaptive(dp_ftrl(prob, T), plan.to_params(),
                                  oblivious_reference(T, d) if oblivious else oco_strategies(T, d), T=T, d=d,
                                  claimed_eps=eps, claimed_delta=DPFTRL_DELTA, n=n or (200_000 if quick else 1_000_000),
                                  key=jax.random.key(seed), delta_float=dfl, name="dp_ftrl (adaptive)")
