"""Privacy audits of the experts learners in the adaptive game (docs/guide/auditing.md#adaptive-game;
``jaxdp audit NAME``), and a learner that is private against oblivious adversaries only.

Both online papers claim privacy against adaptive adversaries ("Private Online Learning via Lazy Algorithms",
footnote 3; "Near-Optimal Algorithms for Private Online Optimization in the Realizable Regime", Sec. 2). The audits
below play the adaptive game of :mod:`jaxdp.privacy.audit.adaptive` (the adversary sees the actions played, chooses
every loss and the one challenge round from them) with three strategies over ``d`` experts, each at the size and claim of the learner's
oblivious audit (:mod:`jaxdp.experts.audits`):

* ``first switch``: challenge the first round after the learner's first switch, with loss on the expert just
  played (``e_x``) in world 0 and on the next one (``e_{x+1 mod d}``) in world 1;
* ``after action 1``: challenge the first round in which the learner plays expert 1, same pair;
* ``punish played``: loss 1 on the expert being played in every round, challenge at round ``T/2``, same pair.

Registered: ``l2p-mw-adaptive`` (LAZY Thm 3.2's certified (ε, δ), ``T = 64``, ``d = 2``, ``B = 8``),
``sparse-vector-experts-adaptive`` (REAL Alg. 1, ``T = 4``, claimed 2), ``tree-ftrl-experts-adaptive`` (binary-tree
noisy Hedge with Laplace nodes, ``T = 8``, claimed ε = 1, pure); correct, must be consistent with their claims.

**The oblivious-only learner** (:func:`prefetch_noise_experts`, audits ``prefetch-noise-oblivious``, which must
pass, and ``prefetch-noise-adaptive``, BROKEN, which must flag it): noisy follow-the-leader that prefetches the
noise of the next round, releases its noisy cumulative losses and, with probability ``q``, a "prefetch missing"
flag announcing that the next round's loss goes in without noise. It is (ε, q)-DP for every fixed pair and not
(ε', δ)-DP for any ε' and ``δ < 1 - (1 - q)^(T-1)`` in the adaptive game (proofs on
:func:`prefetch_noise_experts`).
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core.types import Learner
from ..core.validation import check_epsilon, check_positive_int, check_probability
from ..privacy.accounting.floating import delta_float
from ..privacy.audit import SearchEvents, ThresholdEvents
from ..privacy.audit.adaptive import (
    GameView, NeighbourStrategy, audit_learner_adaptive, challenge_strategy, oblivious_strategy,
)
from ..registry import register_audit
from .audits import AUDIT_SETTING, CLAIMED_EPS, _float_floor
from .l2p_mw import l2p_mw, l2p_mw_params
from .sparse_vector import SVExpertsParams, sparse_vector_experts
from .tree_ftrl import tree_ftrl_experts, tree_ftrl_params

__all__ = [
    "first_switch_strategy", "after_action_strategy", "punish_played_strategy", "expert_strategies",
    "oblivious_reference",
    "PrefetchParams", "PrefetchState", "prefetch_noise_experts", "prefetch_noise_params", "announced_exact_strategy",
    "PREFETCH", "audit_l2p_mw_adaptive", "audit_sparse_vector_experts_adaptive", "audit_tree_ftrl_experts_adaptive",
    "audit_prefetch_noise_oblivious", "audit_prefetch_noise_adaptive",
]


# ----------------------------------------------------------------------------- strategies over d experts
def _played_pair(d: int):
    def pair(view: GameView):
        x = view.actions[view.t].astype(jnp.int32)
        return jax.nn.one_hot(x, d, dtype=jnp.float32), jax.nn.one_hot((x + 1) % d, d, dtype=jnp.float32)
    return pair


def first_switch_strategy(T: int, d: int) -> NeighbourStrategy:
    """Challenge the first round ``t >= 1`` with ``x_t ≠ x_{t-1}`` (just after the learner's first switch), or
    round ``T - 1``; loss ``e_{x_t}`` (the expert just played) in world 0, ``e_{x_t + 1 mod d}`` in world 1; 0 elsewhere.

    Args:
        T: the horizon.
        d: the number of experts.

    Returns:
        The :class:`jaxdp.privacy.audit.adaptive.NeighbourStrategy` ``"first switch"``.
    """
    def trigger(view):
        return (view.t >= 1) & (view.actions[view.t] != view.actions[jnp.maximum(view.t - 1, 0)])
    return challenge_strategy("first switch", T, trigger=trigger, pair=_played_pair(d))


def after_action_strategy(T: int, d: int, j: int = 1) -> NeighbourStrategy:
    """Challenge the first round in which the learner plays expert ``j`` (or round ``T - 1``); the pair of
    :func:`first_switch_strategy`.

    Args:
        T: the horizon.
        d: the number of experts.
        j: the watched expert.

    Returns:
        The :class:`jaxdp.privacy.audit.adaptive.NeighbourStrategy` ``"after action j"``.
    """
    return challenge_strategy(f"after action {j}", T, trigger=lambda v: v.actions[v.t] == j, pair=_played_pair(d))


def punish_played_strategy(T: int, d: int, t0: int) -> NeighbourStrategy:
    """Loss 1 on the expert being played in every round (``e_{x_t}``); the challenge at round ``t0``: ``e_{x_t}``
    in world 0, ``e_{x_t + 1 mod d}`` in world 1.

    Args:
        T: the horizon.
        d: the number of experts.
        t0: the challenge round.

    Returns:
        The :class:`jaxdp.privacy.audit.adaptive.NeighbourStrategy` ``"punish played"``.
    """
    pair = _played_pair(d)
    return challenge_strategy("punish played", T, trigger=lambda v: v.t == t0, pair=pair,
                              base=lambda v: pair(v)[0])


def expert_strategies(T: int, d: int) -> list:
    """The three adaptive strategies of the registered experts audits (module docstring).

    Args:
        T: the horizon.
        d: the number of experts.

    Returns:
        ``[first switch, after action 1, punish played (t0 = T // 2)]``.
    """
    return [first_switch_strategy(T, d), after_action_strategy(T, d, 1), punish_played_strategy(T, d, T // 2)]


def oblivious_reference(T: int, d: int) -> list:
    """The oblivious reference of the registered audits (``oblivious=True``): three fixed pairs, zero losses except
    ``e_1`` vs ``e_2`` in round 1, ``T // 2`` or ``T - 1`` (the challenge pair of :func:`expert_strategies` without the
    adaptivity).

    Args:
        T: the horizon.
        d: the number of experts.

    Returns:
        Three :func:`jaxdp.privacy.audit.adaptive.oblivious_strategy` objects.
    """
    e1, e2 = np.eye(d, dtype=np.float32)[:2]
    return [oblivious_strategy(t0, e1, e2, name=f"oblivious l{t0 + 1}: e1 vs e2") for t0 in (1, T // 2, T - 1)]


def _strategies(T: int, d: int, oblivious: bool) -> list:
    return oblivious_reference(T, d) if oblivious else expert_strategies(T, d)


# ----------------------------------------------------------------------------- the audits of the correct learners
_L2P = l2p_mw(AUDIT_SETTING.d, AUDIT_SETTING.B)
_L2P_PARAMS = l2p_mw_params(AUDIT_SETTING.eta, AUDIT_SETTING.p, AUDIT_SETTING.B)


@register_audit("l2p-mw-adaptive", "L2P-MW (T=64, d=2, B=8) in the adaptive game (first-switch, after-action, "
                                   "punish-played strategies) against its Thm 3.2 (eps, delta)",
                claimed_eps=AUDIT_SETTING.eps)
def audit_l2p_mw_adaptive(*, quick: bool = False, seed: int = 0, n: int | None = None, claim_factor: float = 1.0, oblivious: bool = False):
    """Registered audit ``l2p-mw-adaptive``: L2P-MW against adaptive adversaries, at the size of ``l2p-mw``.

    ``T = 64``, ``d = 2``, ``B = 8`` and the (ε, δ) LAZY Thm 3.2 certifies (:data:`jaxdp.experts.audits.AUDIT_SETTING`),
    the three strategies of :func:`expert_strategies`; events: the rounds playing each expert (searched).

    Args:
        quick: with ``n`` unset, 100 000 runs per world and strategy instead of 400 000.
        seed: the seed of the audit's key.
        n: runs per world and strategy (``None``: by ``quick``).
        claim_factor: audit the over-claim ``eps / claim_factor`` (δ unchanged).
        oblivious: audit the oblivious reference instead (:func:`oblivious_reference`: the same learner, size, runs and
            events on three fixed pairs).

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    s = AUDIT_SETTING
    eps = s.eps / claim_factor
    return audit_learner_adaptive(_L2P, _L2P_PARAMS, _strategies(s.T, s.d, oblivious), T=s.T, d=s.d, claimed_eps=eps,
                                  claimed_delta=s.delta, n=n or (100_000 if quick else 400_000),
                                  key=jax.random.key(seed), delta_float=_float_floor(eps), name="l2p-mw (adaptive)")


_SV_T, _SV_D = 4, 2
_SV_PARAMS = SVExpertsParams(eps_svt=jnp.float32(1.0), eta=jnp.float32(1.0), K=jnp.int32(1), L=jnp.float32(0.5),
                             Lstar=jnp.float32(0.0))


@register_audit("sparse-vector-experts-adaptive", "REAL Alg. 1 (d=2, T=4, K=1) in the adaptive game; claimed eps = 2",
                claimed_eps=CLAIMED_EPS)
def audit_sparse_vector_experts_adaptive(*, quick: bool = True, seed: int = 0, n: int | None = None,
                                         claim_factor: float = 1.0, oblivious: bool = False):
    """Registered audit ``sparse-vector-experts-adaptive``: REAL Alg. 1 against adaptive adversaries.

    The size and claim of ``sparse-vector-experts`` (``d = 2``, ``T = 4``, ``K = 1``, ``eps_svt = η = 1``, ``L = 1/2``,
    claimed ``eps_svt + Kη = 2``, pure), the three strategies of :func:`expert_strategies`; events: the action sequence
    ``x_1..x_5`` as a cell (unions searched) and the rounds playing each expert.

    Args:
        quick: with ``n`` unset, 200 000 runs per world and strategy instead of 2 000 000.
        seed, n, claim_factor, oblivious: as in :func:`audit_l2p_mw_adaptive` (claim ``2 / claim_factor``).

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    eps = CLAIMED_EPS / claim_factor
    dfl = (delta_float("categorical", eps=eps, d=_SV_D, draws=_SV_T + 1)
           + delta_float("laplace", eps=eps, d=2 * (_SV_T + 1)))
    return audit_learner_adaptive(sparse_vector_experts(_SV_D), _SV_PARAMS, _strategies(_SV_T, _SV_D, oblivious), T=_SV_T,
                                  d=_SV_D, claimed_eps=eps, n=n or (200_000 if quick else 2_000_000),
                                  key=jax.random.key(seed), delta_float=dfl, name="sparse_vector_experts (adaptive)")


#: the size of ``tree-ftrl-experts-adaptive``: T rounds (= T_max), d experts, claimed pure eps (Laplace nodes)
TREE_T, TREE_D, TREE_EPS = 8, 2, 1.0


@register_audit("tree-ftrl-experts-adaptive", "binary-tree noisy Hedge, Laplace nodes (d=2, T=8) in the adaptive "
                                              "game; claimed eps = 1 (pure)", claimed_eps=TREE_EPS)
def audit_tree_ftrl_experts_adaptive(*, quick: bool = True, seed: int = 0, n: int | None = None,
                                     claim_factor: float = 1.0, oblivious: bool = False):
    """Registered audit ``tree-ftrl-experts-adaptive``: :func:`jaxdp.experts.tree_ftrl_experts` against adaptive
    adversaries.

    ``d = 2``, ``T = T_max = 8``, Laplace node noise ``d H / ε`` (:func:`jaxdp.experts.tree_ftrl_params`, ε = 1,
    ``η = sqrt(8 ln d / T)``), the three strategies of :func:`expert_strategies`; events: the action sequence as a cell
    (``2^9``) and the rounds playing each expert. The tree is a causal release (a node's noise does not depend on
    later inputs: a lower-triangular factorization in the terms of "Improved Differential Privacy for SGD via Optimal
    Private Linear Operators on Adaptive Streams", Denisov, McMahan, Rush, Smith, Thakurta), the kind whose oblivious
    guarantee carries over to adaptive streams.

    Args:
        quick: with ``n`` unset, 200 000 runs per world and strategy instead of 1 000 000.
        seed, n, claim_factor, oblivious: as in :func:`audit_l2p_mw_adaptive` (claim ``1 / claim_factor``).

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    eps = TREE_EPS / claim_factor
    lrn = tree_ftrl_experts(TREE_D, TREE_T, noise="laplace")
    params = tree_ftrl_params(TREE_D, TREE_T, TREE_EPS)
    dfl = (delta_float("laplace", eps=eps, d=TREE_D, draws=TREE_T)
           + delta_float("categorical", eps=eps, d=TREE_D, draws=TREE_T + 1))
    return audit_learner_adaptive(lrn, params, _strategies(TREE_T, TREE_D, oblivious), T=TREE_T, d=TREE_D,
                                  claimed_eps=eps, n=n or (200_000 if quick else 1_000_000), key=jax.random.key(seed),
                                  delta_float=dfl, name="tree_ftrl_experts (adaptive)")


# ----------------------------------------------------------------------------- the oblivious-only learner
class PrefetchParams(NamedTuple):
    """Parameters of :func:`prefetch_noise_experts`.

    Attributes:
        scale: the Laplace scale ``b`` of every coordinate of a round's noise.
        q: the probability that the prefetched noise of a round is missing.
    """
    scale: jax.Array
    q: jax.Array


class PrefetchState(NamedTuple):
    """State of :func:`prefetch_noise_experts`.

    Attributes:
        x: the expert played (``argmin`` of ``S``, ties to the lowest index).
        S: the ``(d,)`` noisy cumulative losses (released every round).
        missing: the prefetched noise of the coming round is missing (released one round ahead).
    """
    x: jax.Array
    S: jax.Array
    missing: jax.Array


def prefetch_noise_params(d: int, eps: float, q: float) -> PrefetchParams:
    """``scale = d / eps`` (a loss vector in ``[0, 1]^d`` has l1-sensitivity ``d``) and the missing rate ``q``.

    Args:
        d: the number of experts.
        eps: the ε of the noisy rounds.
        q: the probability that a round's noise is missing.

    Returns:
        :class:`PrefetchParams`.
    """
    d = check_positive_int("d", d, minimum=2)
    check_probability("q", q)
    check_epsilon(eps, "eps", allow_inf=False)
    return PrefetchParams(scale=jnp.float32(d / float(eps)), q=jnp.float32(q))


@functools.lru_cache(maxsize=None)
def prefetch_noise_experts(d: int) -> Learner:
    """BROKEN on purpose: noisy follow-the-leader with prefetched noise, private against oblivious adversaries only.

    Round ``t`` (0-indexed) adds ``y_t = l_t + m_t Z_t`` to its noisy cumulative losses ``S_t`` and plays
    ``x_{t+1} = argmin_j S_t[j]``, with ``Z_t ~ Lap(b)^d`` (``b = params.scale``) and ``m_t = 0`` when the noise of
    round ``t`` is *missing*: the noise of round ``t + 1`` is prefetched in round ``t`` and is missing with probability
    ``q`` (``m_0 = 1``), independently of everything else. It releases after round ``t`` (``Learner.release``) ``S_t``
    (``"noisy_cum"``, a noisy counter) and ``M_{t+1} = 1 - m_{t+1}`` (``"prefetch_missing"``): the flag announcing
    that the next round's loss goes in without noise.

    **Oblivious claim: (d/b, q)-DP** for every fixed pair of loss sequences in ``[0,1]^{T×d}`` differing in one round
    ``t*``. The flags are independent of the losses. Given ``M_{t*} = 0`` the two views are the same function of the
    flags, the noises of the other rounds and ``y_{t*} = l_{t*} + Z_{t*}``, a Laplace mechanism with l1-sensitivity
    ``d``: densities within ``e^{d/b}``. Given ``M_{t*} = 1`` bound the probability by 1. So for every event ``E``,
    ``P0(E) = (1-q) P0(E | M=0) + q P0(E | M=1) <= e^{d/b} P1(E) + q``.

    **Adaptive failure.** The strategy :func:`announced_exact_strategy` (losses 0; challenge the first round ``t``
    announced missing by ``M_t`` in round ``t - 1``, with ``0`` in world 0 and ``e_1`` in world 1) and the event
    ``E = {an announced round exists and its released increment y_t[0] = S_t[0] - S_{t-1}[0] >= 1/2}``: in world 1
    ``y_t = e_1`` exactly on that round, in world 0 ``y_t = 0``, so ``P1(E) = 1 - (1 - q)^{T-1}`` and ``P0(E) = 0``.
    No (ε', δ)-DP claim with ``δ < 1 - (1 - q)^{T-1}`` holds in the adaptive game, whatever ε' (at ``T = 32``,
    ``q = 0.02``: ``δ >= 0.466`` against the oblivious ``δ = q = 0.02``). An oblivious pair cannot do this: its
    changed round is fixed, and missing with probability ``q`` only.

    Args:
        d: the number of experts.

    Returns:
        The :class:`jaxdp.Learner` (params :class:`PrefetchParams`).
    """
    d = check_positive_int("d", d, minimum=2)

    def init(key, params):
        return PrefetchState(x=jnp.int32(0), S=jnp.zeros((d,), jnp.float32), missing=jnp.bool_(False))

    def step(key, state, loss, params):
        k_z, k_m = jax.random.split(key)
        z = params.scale * jax.random.laplace(k_z, (d,), jnp.float32)
        S = state.S + jnp.asarray(loss, jnp.float32) + jnp.where(state.missing, 0.0, z)
        missing = jax.random.uniform(k_m) < params.q
        x = jnp.argmin(S).astype(jnp.int32)
        return PrefetchState(x=x, S=S, missing=missing), {"switched": x != state.x}

    def release(state, params):
        return {"noisy_cum": state.S, "prefetch_missing": state.missing}

    return Learner(init=init, step=step, release=release)


def announced_exact_strategy(T: int, d: int) -> NeighbourStrategy:
    """The adaptive strategy that breaks :func:`prefetch_noise_experts`: losses 0; the challenge in the first round
    ``t >= 1`` whose noise was announced missing (``outputs["prefetch_missing"][t-1]``), or round ``T - 1``:
    ``0`` in world 0, ``e_1`` in world 1. It sees the learner's released outputs.

    Args:
        T: the horizon.
        d: the number of experts.

    Returns:
        The :class:`jaxdp.privacy.audit.adaptive.NeighbourStrategy` ``"announced missing noise"``.
    """
    e1 = jnp.zeros((d,), jnp.float32).at[0].set(1.0)

    def trigger(view):
        return (view.t >= 1) & view.outputs["prefetch_missing"][jnp.maximum(view.t - 1, 0)]

    return challenge_strategy("announced missing noise", T, trigger=trigger,
                              pair=lambda v: (jnp.zeros_like(e1), e1), sees_outputs=True)


class _Prefetch(NamedTuple):
    T: int
    d: int
    eps: float
    q: float


#: the size of the prefetch-noise audits: T rounds, d experts, the noisy rounds' eps and the missing rate q (the
#: oblivious claim is (eps, q))
PREFETCH = _Prefetch(T=32, d=2, eps=1.0, q=0.02)


def _first_announced_increment(out):
    """``y_t[0]`` at the first round ``t >= 1`` announced missing, ``-1`` if none (the adaptive test's statistic)."""
    _, outs = out
    S, flags = outs["noisy_cum"], outs["prefetch_missing"][:-1]
    t = jnp.argmax(flags) + 1
    return jnp.where(jnp.any(flags), S[t, 0] - S[t - 1, 0], -1.0).astype(jnp.float32)


def _increment_at(t0: int):
    """The released increment ``y_{t0}`` summed over experts, plus 10 if round ``t0`` was announced missing."""
    def stat(out):
        _, outs = out
        S, flags = outs["noisy_cum"], outs["prefetch_missing"]
        y = S[t0] - (S[t0 - 1] if t0 > 0 else 0.0)
        return (jnp.sum(y) + 10.0 * (flags[t0 - 1] if t0 > 0 else False)).astype(jnp.float32)
    return stat


_OBLIVIOUS_ROUNDS = (1, PREFETCH.T // 2, PREFETCH.T - 1)


def _prefetch_audit(strategies, events, *, n, seed, claim_factor, name):
    P = PREFETCH
    eps = P.eps / claim_factor
    dfl = delta_float("laplace", eps=eps, d=P.d, draws=P.T)
    return audit_learner_adaptive(prefetch_noise_experts(P.d), prefetch_noise_params(P.d, P.eps, P.q), strategies,
                                  T=P.T, d=P.d, claimed_eps=eps, claimed_delta=P.q, n=n, key=jax.random.key(seed),
                                  events=events, sees_outputs=True, delta_float=dfl, name=name)


@register_audit("prefetch-noise-oblivious", "noisy FTL with prefetched noise (T=32, d=2) on fixed neighbouring pairs: "
                                            "(1, 0.02)-DP against oblivious adversaries, must pass",
                claimed_eps=PREFETCH.eps)
def audit_prefetch_noise_oblivious(*, quick: bool = True, seed: int = 0, n: int | None = None,
                                   claim_factor: float = 1.0):
    """Registered audit ``prefetch-noise-oblivious``: :func:`prefetch_noise_experts` on fixed pairs must pass.

    ``T = 32``, ``d = 2``, ``eps = 1`` (``b = 2``), ``q = 0.02``, claimed ``(1, 0.02)``. Six oblivious pairs
    (:func:`jaxdp.privacy.audit.adaptive.oblivious_strategy`): zero losses except round ``t0 ∈ {1, 16, 31}``, ``0`` vs
    ``e_1`` and ``0`` vs ``(1, 1)``; the view includes the released outputs. Events (searched): the adaptive audit's
    statistic (:func:`audit_prefetch_noise_adaptive`) and, per ``t0``, the released increment of round ``t0`` (plus 10
    when it was announced missing).

    Args:
        quick: with ``n`` unset, 100 000 runs per world and pair instead of 1 000 000.
        seed: the seed of the audit's key.
        n: runs per world and pair (``None``: by ``quick``).
        claim_factor: audit the claim ``eps / claim_factor`` (δ = q unchanged).

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    P = PREFETCH
    zero, one = np.zeros(P.d, np.float32), np.ones(P.d, np.float32)
    e1 = np.eye(P.d, dtype=np.float32)[0]
    strategies = [oblivious_strategy(t0, zero, v, name=f"l{t0 + 1}: 0 vs {lab}")
                  for t0 in _OBLIVIOUS_ROUNDS for v, lab in ((e1, "e1"), (one, "1"))]
    events = [SearchEvents(statistic=_first_announced_increment)] + \
             [SearchEvents(statistic=_increment_at(t0)) for t0 in _OBLIVIOUS_ROUNDS]
    return _prefetch_audit(strategies, events, n=n or (100_000 if quick else 1_000_000), seed=seed,
                           claim_factor=claim_factor, name="prefetch-noise (oblivious pairs)")


@register_audit("prefetch-noise-adaptive", "BROKEN: noisy FTL with prefetched noise (T=32, d=2) in the adaptive game: "
                                           "the announced noise-free round is challenged (must be flagged)",
                claimed_eps=PREFETCH.eps, broken=True)
def audit_prefetch_noise_adaptive(*, quick: bool = True, seed: int = 0, n: int | None = None,
                                  claim_factor: float = 1.0):
    """Registered audit ``prefetch-noise-adaptive`` (BROKEN): :func:`prefetch_noise_experts` in the adaptive game.

    The claim of ``prefetch-noise-oblivious``, ``(1, 0.02)``, against :func:`announced_exact_strategy`; one event
    fixed before any run: ``{y_t[0] >= 1/2}`` at the first announced round (probability ``1 - 0.98^31 = 0.466`` in
    world 1, 0 in world 0), so the audit must flag it.

    Args:
        quick: with ``n`` unset, 20 000 runs per world instead of 200 000.
        seed, n, claim_factor: as in :func:`audit_prefetch_noise_oblivious`.

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    P = PREFETCH
    events = ThresholdEvents(statistic=_first_announced_increment, thresholds=(0.5,))
    return _prefetch_audit([announced_exact_strategy(P.T, P.d)], events, n=n or (20_000 if quick else 200_000),
                           seed=seed, claim_factor=claim_factor, name="prefetch-noise (adaptive)")
