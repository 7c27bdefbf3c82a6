"""Empirical privacy audits of L2P-MW and two non-private controls (docs/guide/auditing.md; ``jaxdp audit NAME``).

Neighbouring inputs: ``T = 64`` rounds of zero losses over ``d = 2`` experts, with
``l_1`` replaced (``l2p-mw`` uses ``l_1 = (1,0)`` vs ``(0,1)``, the pair of largest exact loss among the six
``l_1 ∈ {0, (1,0), (0,1), (1,1)}``; the broken controls use ``0`` vs ``l_1 = (1, 0)``). All
three audits use one parameter set for which LAZY Thm 3.2's side conditions
hold (``B = 8``, ``p = 0.9``, ``delta1 = 1e-10``, ``eta = p / (B log(1/delta1))``)
and claim the (eps, delta) that Thm 3.2 certifies for it (eps ≈ 0.75):

* ``l2p-mw``: L2P-MW itself; output: the expert played in each batch. Must be
  consistent with the claim. Its exact privacy loss at this size is 0.0297 (:func:`l2p_exact`), so the audit
  tests one event fixed from the exact law on 10⁷ runs per input.
* ``l2p-mw-broken``: the batched lazy MW with the history-dependent
  *normalized* acceptance ratio ``min(1, nu_s(x)/nu_{s-1}(x))``, no shadow
  sequence and no fake switches. On ``x0`` it never switches, on ``x1`` it
  switches with probability ≈ eta/8 > delta: the event "some switch" has
  probability 0 under one neighbour and not under the other. Flagged.
* ``hedge-not-private``: per-round Hedge with the standard step
  ``sqrt(8 ln d / T)``; the changed loss shifts every later round's
  distribution, statistic = number of rounds playing expert 1. Flagged.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..accounting.l2p import l2p_privacy
from ..audit import ThresholdEvents, audit
from ..core.random import log_uniform, sample_categorical
from ..experts import hedge, hedge_params
from ..registry import register_audit
from .l2p_mw import l2p_mw, l2p_mw_params

__all__ = ["AUDIT_SETTING", "audit_setting", "neighbours", "play_batches", "broken_lazy_mw_play",
           "audit_l2p_mw", "audit_l2p_mw_broken", "audit_hedge"]


class AuditSetting(NamedTuple):
    """The size and parameters shared by the L2P-MW audits, and the ``(eps, delta)`` LAZY Thm 3.2 certifies for them.

    Attributes:
        d: the number of experts.
        T: the number of rounds.
        B: the batch length in rounds.
        p: the probability of a fresh draw at each batch boundary.
        delta1: the ``δ₁`` of Thm 3.2's conditions.
        eta: the learning rate, the largest allowed by ``eta B log(1/delta1)/p <= 1``.
        eps: the certified ε (the audits' claim).
        delta: the certified δ.
    """
    d: int
    T: int
    B: int
    p: float
    delta1: float
    eta: float
    eps: float
    delta: float


def audit_setting(d: int = 2, T: int = 64, B: int = 8, p: float = 0.9, delta1: float = 1e-10) -> AuditSetting:
    """The largest ``eta`` allowed by LAZY Thm 3.2's condition ``eta B log(1/delta1)/p <= 1``, and what it certifies.

    Args:
        d: the number of experts.
        T: the number of rounds.
        B: the batch length in rounds.
        p: the probability of a fresh draw at each batch boundary.
        delta1: the ``δ₁`` of Thm 3.2.

    Returns:
        The :class:`AuditSetting` with ``eta = p/(B log(1/delta1))`` and the ``(eps, delta)`` of
        :func:`jaxdp.accounting.l2p.l2p_privacy` (whose side conditions must hold).
    """
    eta = p / (B * math.log(1.0 / delta1))
    eps, delta, ok = l2p_privacy(eta, p, B, T, 0.0, delta1)
    assert ok
    return AuditSetting(d, T, B, p, delta1, eta, float(eps), float(delta))


AUDIT_SETTING = audit_setting()


def neighbours(s: AuditSetting = AUDIT_SETTING):
    """The neighbouring inputs of the broken controls: zero losses vs ``l_1 = (1, 0, ...)``.

    Args:
        s: the audit size (``T`` rounds, ``d`` experts).

    Returns:
        ``(x0, x1)``, float32 ``(T, d)`` loss arrays: all zeros, and the same with expert 0's loss 1 in round 1.
    """
    x0 = np.zeros((s.T, s.d), np.float32)
    x1 = x0.copy()
    x1[0, 0] = 1.0
    return jnp.asarray(x0), jnp.asarray(x1)


def play_batches(learner, params, losses, key):
    """Run a block-mode learner over a loss array; return the model played in each batch.

    The learner's ``step`` gets no key (block mode); after every ``block_size`` rounds ``end_block`` gets the
    key ``fold_in(k_block, j)`` for batch ``j``, where ``(k_init, k_block) = split(key)``.

    Args:
        learner: a block-mode learner (with ``block_size`` and ``end_block``, e.g. :func:`jaxdp.lazy.l2p_mw`).
        params: its parameters.
        losses: the ``(T, d)`` loss array (rounds past the last full batch are not played).
        key: JAX PRNG key.

    Returns:
        The ``(T // block_size,)`` models ``state.x`` at the start of each batch.
    """
    b = learner.block_size
    nb = losses.shape[0] // b
    k_init, k_block = jax.random.split(key)
    s = learner.init(k_init, params)

    def blk(s, j):
        x = s.x
        s, _ = jax.lax.scan(lambda s, t: (learner.step(None, s, losses[t], params)[0], None), s,
                            j * b + jnp.arange(b))
        s, _ = learner.end_block(jax.random.fold_in(k_block, j), s, params)
        return s, x

    _, xs = jax.lax.scan(blk, s, jnp.arange(nb))
    return xs


def broken_lazy_mw_play(key, losses, eta, B: int):
    """The broken lazy MW of the ``l2p-mw-broken`` audit (module docstring) over a loss array.

    Batched lazy MW: at the start of batch ``s`` it keeps the expert ``x`` with probability the
    history-dependent normalized ratio ``min(1, ν_s(x)/ν_{s-1}(x))``, ``ν_s ∝ exp(-η L_s)`` with ``L_s`` the
    losses of the batches before ``s``, and otherwise draws from ``ν_s``: no shadow sequence and no fake
    switches. The first expert is uniform.

    Args:
        key: JAX PRNG key.
        losses: the ``(T, d)`` loss array.
        eta: the learning rate ``η``.
        B: the batch length in rounds (static).

    Returns:
        The ``(T // B,)`` experts played in the batches.
    """
    T, d = losses.shape
    nb = T // B
    sums = losses[: nb * B].reshape(nb, B, d).sum(1)
    k0, kr = jax.random.split(key)
    x0 = sample_categorical(k0, jnp.zeros((d,)))

    def body(carry, s):
        x, cum = carry
        new = cum + sums[s - 1]
        lr = -eta * sums[s - 1, x] - (jax.nn.logsumexp(-eta * new) - jax.nn.logsumexp(-eta * cum))
        ku, kx = jax.random.split(jax.random.fold_in(kr, s))
        keep = log_uniform(ku) < jnp.minimum(0.0, lr)
        x_new = jnp.where(keep, x, sample_categorical(kx, -eta * new))
        return (x_new, new), x

    (_, _), xs = jax.lax.scan(body, (x0, jnp.zeros((d,))), jnp.arange(1, nb + 1))
    return xs


def _n_switches(xs):
    return jnp.sum(xs[1:] != xs[:-1])


def _code(xs):
    return jnp.sum(xs.astype(jnp.int32) * (2 ** jnp.arange(xs.shape[0], dtype=jnp.int32)))


_L2P = l2p_mw(AUDIT_SETTING.d, AUDIT_SETTING.B)
_L2P_PARAMS = l2p_mw_params(AUDIT_SETTING.eta, AUDIT_SETTING.p, AUDIT_SETTING.B)


def _l2p_mech(key, losses):
    return play_batches(_L2P, _L2P_PARAMS, losses, key)


def _broken_mech(key, losses):
    return broken_lazy_mw_play(key, losses, AUDIT_SETTING.eta, AUDIT_SETTING.B)


_HEDGE = hedge(AUDIT_SETTING.d)
_HEDGE_PARAMS = hedge_params(AUDIT_SETTING.d, AUDIT_SETTING.T)


def _hedge_mech(key, losses):
    k0, kr = jax.random.split(key)
    s = _HEDGE.init(k0, _HEDGE_PARAMS)

    def body(s, t):
        s2, _ = _HEDGE.step(jax.random.fold_in(kr, t), s, losses[t], _HEDGE_PARAMS)
        return s2, s.x

    _, xs = jax.lax.scan(body, s, jnp.arange(losses.shape[0]))
    return xs


def _count_ones(xs):
    return jnp.sum(xs == 1)


def _claim(claim_factor: float) -> float:
    return AUDIT_SETTING.eps / claim_factor


def _audit_control(mech, events, *, claim_factor: float, n: int, seed: int, name: str, float_floor: bool):
    """Audit a control ``mech`` on the pair of :func:`neighbours` against L2P-MW's claim ``eps / claim_factor``
    (δ unchanged); ``float_floor``: credit one L2P-MW run's float δ floor (:func:`_float_floor`)."""
    x0, x1 = neighbours()
    eps = _claim(claim_factor)
    return audit(mech, x0, x1, claimed_eps=eps, claimed_delta=AUDIT_SETTING.delta, events=events, n=n,
                 key=jax.random.key(seed), name=name, delta_float=_float_floor(eps) if float_floor else None)


def _float_floor(eps: float) -> float:
    """Float δ floor of one L2P-MW run: one categorical draw (d outcomes) and one acceptance coin per batch."""
    from ..accounting.floating import delta_float

    nb = AUDIT_SETTING.T // AUDIT_SETTING.B
    return (delta_float("categorical", eps=eps, d=AUDIT_SETTING.d, draws=nb + 1)
            + delta_float("bernoulli", eps=eps, draws=nb))


#: the audited pair of ``l2p-mw``: of the six ``l_1`` pairs the exact law (:func:`l2p_exact`) gives this one the
#: largest privacy loss (0.0297; the four pairs with one expert's loss changed: 0.0149, ``0`` vs ``1``: 0)
L2P_PAIR = "l1: e1 vs e2"


def l2p_exact(label: str = L2P_PAIR):
    """The exact laws of L2P-MW's batch-expert sequence on one audited pair (:func:`jaxdp.audit.exact.l2p_mw_law`).

    At :data:`AUDIT_SETTING` (``T = 64``, ``d = 2``, ``B = 8``: ``2^8`` sequences).

    Args:
        label: the pair's label in :func:`jaxdp.audit.learners.loss_neighbours` (``T`` rounds, ``d`` experts).

    Returns:
        ``(P, P')``: the probabilities of the ``2^8`` sequences, indexed by the code ``Σ_s x_s 2^s``, under
        the pair's two inputs.
    """
    from ..audit import exact as X
    from ..audit.learners import loss_neighbours

    s = AUDIT_SETTING
    x0, x1 = loss_neighbours(s.T, s.d)[label]
    return (X.l2p_mw_law(np.asarray(x0), eta=s.eta, p=s.p, B=s.B)[1],
            X.l2p_mw_law(np.asarray(x1), eta=s.eta, p=s.p, B=s.B)[1])


@register_audit("l2p-mw", "L2P-MW (T=64, d=2, B=8) against its Thm 3.2 certified (eps, delta); one event fixed "
                          "from the exact law (exact eps at this size 0.0297)", claimed_eps=AUDIT_SETTING.eps)
def audit_l2p_mw(*, quick: bool = False, seed: int = 0, n: int | None = None, claim_factor: float = 1.0):
    """Registered audit ``l2p-mw``: L2P-MW must be consistent with the (eps, delta) LAZY Thm 3.2 certifies.

    At this size L2P-MW leaks far less than it certifies: the exact law of its batch-expert sequence
    (:func:`l2p_exact`, enumeration of the lazy-switching chain) gives privacy loss at most 0.0297 on the six
    ``l_1`` pairs of :func:`jaxdp.audit.learners.loss_neighbours`, 26x below the claim, so no valid audit of
    this size can flag an over-claim below 25x. The audit tests the one event ``{log P/P' > thr}`` of the exact
    law on the best pair (``l_1 = e1`` vs ``e2``), with ``thr`` chosen from the exact law for ``n`` before any
    run (:func:`jaxdp.audit.exact.best_fixed_event`); it needs millions of runs to see a loss of 0.02.

    Args:
        quick: with ``n`` unset, 4 000 000 runs per input instead of 10 000 000.
        seed: the seed of the audit's key.
        n: runs per input (``None``: by ``quick``).
        claim_factor: audit the over-claim ``eps / claim_factor`` (δ unchanged; power measurements).

    Returns:
        The :class:`jaxdp.audit.AuditReport`.
    """
    from ..audit import exact as X
    from ..audit.learners import loss_neighbours

    n = n or (4_000_000 if quick else 10_000_000)
    eps = _claim(claim_factor)
    P, Q = l2p_exact()
    dl = AUDIT_SETTING.delta + _float_floor(eps)
    thr = X.best_fixed_event(P, Q, n, delta=dl)[0]
    with np.errstate(divide="ignore"):
        table = jnp.asarray(np.log(P) - np.log(Q), jnp.float32)
    x0, x1 = loss_neighbours(AUDIT_SETTING.T, AUDIT_SETTING.d)[L2P_PAIR]
    ev = ThresholdEvents(statistic=lambda xs: table[_code(xs)], thresholds=(thr,))
    return audit(_l2p_mech, x0, x1, claimed_eps=eps, claimed_delta=AUDIT_SETTING.delta, events=ev, n=n,
                 key=jax.random.key(seed), name="l2p-mw", delta_float=_float_floor(eps))


@register_audit("l2p-mw-broken", "lazy MW with the normalized ratio, no shadow sequence, no fake switches "
                                 "(must be flagged)", claimed_eps=AUDIT_SETTING.eps, broken=True)
def audit_l2p_mw_broken(*, quick: bool = False, seed: int = 0, n: int | None = None, claim_factor: float = 1.0):
    """Registered audit ``l2p-mw-broken``: the broken lazy MW claims L2P-MW's (eps, delta) and must be flagged.

    The event "some switch" on the pair 0 vs ``l_1 = (1, 0)`` (:func:`neighbours`) refutes the claim: it has
    probability 0 on zero losses and about ``η/8 > δ`` on the other input. A single fixed event and pair, so
    no search is needed.

    Args:
        quick: with ``n`` unset, 500 000 runs per input instead of 2 000 000.
        seed: the seed of the audit's key.
        n: runs per input (``None``: by ``quick``).
        claim_factor: audit the claim ``eps / claim_factor`` (δ unchanged).

    Returns:
        The :class:`jaxdp.audit.AuditReport`.
    """
    ev = ThresholdEvents(statistic=_n_switches, thresholds=(0.5,))
    return _audit_control(_broken_mech, ev, claim_factor=claim_factor, n=n or (500_000 if quick else 2_000_000),
                          seed=seed, name="l2p-mw-broken", float_floor=True)


@register_audit("hedge-not-private", "per-round Hedge (eta = sqrt(8 ln d / T)) claiming L2P-MW's (eps, delta) "
                                     "(must be flagged)", claimed_eps=AUDIT_SETTING.eps, broken=True)
def audit_hedge(*, quick: bool = False, seed: int = 0, n: int | None = None, claim_factor: float = 1.0):
    """Registered audit ``hedge-not-private``: per-round Hedge claiming L2P-MW's (eps, delta) must be flagged.

    Hedge with the standard step ``η = sqrt(8 ln d / T)`` on the pair of :func:`neighbours`: the changed loss
    shifts every later round's distribution; the statistic is the number of rounds playing expert 1, its
    thresholds quantiles of a pilot run (:class:`jaxdp.audit.ThresholdEvents`).

    Args:
        quick: with ``n`` unset, 100 000 runs per input instead of 400 000.
        seed, n, claim_factor: as in :func:`audit_l2p_mw_broken`.

    Returns:
        The :class:`jaxdp.audit.AuditReport`.
    """
    ev = ThresholdEvents(statistic=_count_ones)
    return _audit_control(_hedge_mech, ev, claim_factor=claim_factor, n=n or (100_000 if quick else 400_000),
                          seed=seed, name="hedge-not-private", float_floor=False)
