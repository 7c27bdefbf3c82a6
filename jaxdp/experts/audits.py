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

Empirical privacy audits of whole realizable-regime algorithms (docs/guide/auditing.md; ``jaxdp audit NAME``).

``sparse-vector-experts``: REAL Alg. 1 with ``d = 2``, ``T = 4``, ``K = 1``, ``eps_svt = 1``,
``η = 1`` (claimed ``eps_svt + Kη = 2``, pure). Neighbouring loss sequences
(:func:`neighbour_family`): the six pairs of :func:`jaxdp.privacy.audit.learners.loss_neighbours` (all
zeros except ``l_1``, which takes two of ``0, (1,0), (0,1), (1,1)``) and three pairs that change a
late loss from ``e1`` to ``e2`` after expert 1 has taken loss. The output is the whole action sequence
``(x_1, ..., x_5)`` (including the action chosen after the last loss), a cell of ``2^5``; the
auditor searches the best (pair, union of cells) on 30% of the runs and bounds ε with the
best two on the other 70%. The pair ``(1,0)`` vs ``(0,1)`` reveals about twice what ``0`` vs ``(1,0)`` does.

``sparse-vector-experts-mislabelled`` (BROKEN): the same algorithm with sparse-vector noise for
``eps_svt = 1e4`` while still claiming 2: the switch after round 1 then reveals ``l_1`` almost
deterministically, and the audit must flag it.

Shared threshold (docs/algorithms/realizable.md#shared-threshold), ``d = 2``, ``T = 4``, ``K = 2`` (with
``K = 1`` there is nothing to share), ``eps_svt = 1``, ``η = 1/2`` (claimed ``eps_svt + Kη = 2``), the pairs of
:func:`shared_neighbour_family` (the nine above and two where every expert takes the same loss, so the
exponential mechanism is uniform and only the sparse vector can leak):

* ``sparse-vector-experts-shared-threshold``: one threshold noise ``Lap(2/eps_svt)`` for both instances and
  query noise ``Lap(4K/eps_svt)`` (Lyu et al. Alg. 1 with ``c = K``); correct.
* ``sparse-vector-experts-shared-threshold-unscaled`` (BROKEN): one threshold noise, but the fresh
  instances' query noise ``Lap(4/eps_svt)``. Not ``eps_svt``-DP in general, but at ``T = 4``, ``K = 2`` its exact
  sparse-vector loss is at most 0.53 (quadrature, :func:`jaxdp.privacy.audit.exact.shared_svt_common_law`), so it is
  audited where it IS broken: ``T = 64``, ``K = 16``, ``eps_svt = 2 - Kη``, ``η = 10⁻³`` (claimed 2), losses 0
  against a common loss 1 in round 16. Many quick switches pin the shared threshold noise low; the instance
  active in round 16 then holds out long, which the changed loss makes unlikely. The exact law
  (:func:`jaxdp.privacy.audit.exact.shared_svt_window_law`) gives that event a loss of 3.6 at probability 2·10⁻³ (2.8
  on events of probability ≥ 10⁻²), and the audit tests one event fixed from it before any run.
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..privacy.accounting.floating import delta_float
from ..privacy.accounting.l2p import l2p_privacy
from ..privacy.audit import SearchEvents, ThresholdEvents, audit, audit_mechanism
from ..privacy.audit import exact as X
from ..privacy.audit.learned import Histogram, Logistic, audit_learned, trajectory_features
from ..privacy.audit.learners import _count, action_code, loss_neighbours
from ..privacy.audit.catalogue import register_learned_audit
from ..privacy.audit.pairs import loss_flip_pairs
from ..privacy.mechanisms.tree import ctz
from ..core.random import log_uniform, sample_categorical
from .hedge import hedge, hedge_params
from ..registry import register_audit
from .l2p_mw import l2p_mw, l2p_mw_params
from .sparse_vector import SVExpertsParams, shared_threshold_unscaled_experts, sparse_vector_experts

__all__ = ['AUDIT_SETTING', 'audit_setting', 'neighbours', 'play_batches', 'broken_lazy_mw_play', 'audit_l2p_mw', 'audit_l2p_mw_broken', 'audit_hedge', 'sv_experts_mechanism', 'neighbour_family', 'shared_neighbour_family', 'audit_sparse_vector_experts', 'audit_sparse_vector_experts_mislabelled', 'audit_sparse_vector_experts_shared_threshold', 'audit_sparse_vector_experts_shared_threshold_unscaled', 'sv_experts_family', 'tightness_cases']


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
        :func:`jaxdp.privacy.accounting.l2p.l2p_privacy` (whose side conditions must hold).
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
    return loss_neighbours(s.T, s.d, values=[np.zeros(s.d), np.eye(s.d)[0]])["l1: 0 vs e1"]


def play_batches(learner, params, losses, key):
    """Run a block-mode learner over a loss array; return the model played in each batch.

    The learner's ``step`` gets no key (block mode); after every ``block_size`` rounds ``end_block`` gets the
    key ``fold_in(k_block, j)`` for batch ``j``, where ``(k_init, k_block) = split(key)``.

    Args:
        learner: a block-mode learner (with ``block_size`` and ``end_block``, e.g. :func:`jaxdp.experts.l2p_mw`).
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


_L2P = l2p_mw(AUDIT_SETTING.d, AUDIT_SETTING.B)
_L2P_PARAMS = l2p_mw_params(AUDIT_SETTING.eta, AUDIT_SETTING.p, AUDIT_SETTING.B)


def _l2p_mech(key, losses):
    return play_batches(_L2P, _L2P_PARAMS, losses, key)


_broken_mech = functools.partial(broken_lazy_mw_play, eta=AUDIT_SETTING.eta, B=AUDIT_SETTING.B)


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


def _audit_control(mech, events, *, claim_factor: float, n: int, seed: int, name: str, float_floor: bool, pair=None):
    """Audit ``mech`` on ``pair`` (default :func:`neighbours`) against L2P-MW's claim ``eps / claim_factor``
    (δ unchanged); ``float_floor``: credit one L2P-MW run's float δ floor (:func:`_float_floor`)."""
    x0, x1 = pair or neighbours()
    eps = AUDIT_SETTING.eps / claim_factor
    return audit(mech, x0, x1, claimed_eps=eps, claimed_delta=AUDIT_SETTING.delta, events=events, n=n,
                 key=jax.random.key(seed), name=name, delta_float=_float_floor(eps) if float_floor else None)


def _float_floor(eps: float) -> float:
    """Float δ floor of one L2P-MW run: one categorical draw (d outcomes) and one acceptance coin per batch."""
    nb = AUDIT_SETTING.T // AUDIT_SETTING.B
    return (delta_float("categorical", eps=eps, d=AUDIT_SETTING.d, draws=nb + 1)
            + delta_float("bernoulli", eps=eps, draws=nb))


#: the audited pair of ``l2p-mw``: of the six ``l_1`` pairs the exact law (:func:`l2p_exact`) gives this one the
#: largest privacy loss (0.0297; the four pairs with one expert's loss changed: 0.0149, ``0`` vs ``1``: 0)
L2P_PAIR = "l1: e1 vs e2"


def l2p_exact(label: str = L2P_PAIR):
    """The exact laws of L2P-MW's batch-expert sequence on one audited pair (:func:`jaxdp.privacy.audit.exact.l2p_mw_law`).

    At :data:`AUDIT_SETTING` (``T = 64``, ``d = 2``, ``B = 8``: ``2^8`` sequences).

    Args:
        label: the pair's label in :func:`jaxdp.privacy.audit.learners.loss_neighbours` (``T`` rounds, ``d`` experts).

    Returns:
        ``(P, P')``: the probabilities of the ``2^8`` sequences, indexed by the code ``Σ_s x_s 2^s``, under
        the pair's two inputs.
    """
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
    ``l_1`` pairs of :func:`jaxdp.privacy.audit.learners.loss_neighbours`, 26x below the claim, so no valid audit of
    this size can flag an over-claim below 25x. The audit tests the one event ``{log P/P' > thr}`` of the exact
    law on the best pair (``l_1 = e1`` vs ``e2``), with ``thr`` chosen from the exact law for ``n`` before any
    run (:func:`jaxdp.privacy.audit.exact.best_fixed_event`); it needs millions of runs to see a loss of 0.02.

    Args:
        quick: with ``n`` unset, 4 000 000 runs per input instead of 10 000 000.
        seed: the seed of the audit's key.
        n: runs per input (``None``: by ``quick``).
        claim_factor: audit the over-claim ``eps / claim_factor`` (δ unchanged; power measurements).

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    n = n or (4_000_000 if quick else 10_000_000)
    eps = AUDIT_SETTING.eps / claim_factor
    P, Q = l2p_exact()
    dl = AUDIT_SETTING.delta + _float_floor(eps)
    thr = X.best_fixed_event(P, Q, n, delta=dl)[0]
    with np.errstate(divide="ignore"):
        table = jnp.asarray(np.log(P) - np.log(Q), jnp.float32)
    ev = ThresholdEvents(statistic=lambda xs: table[action_code(AUDIT_SETTING.d)(xs)], thresholds=(thr,))
    return _audit_control(_l2p_mech, ev, claim_factor=claim_factor, n=n, seed=seed, name="l2p-mw", float_floor=True,
                          pair=loss_neighbours(AUDIT_SETTING.T, AUDIT_SETTING.d)[L2P_PAIR])


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
        The :class:`jaxdp.privacy.audit.AuditReport`.
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
    thresholds quantiles of a pilot run (:class:`jaxdp.privacy.audit.ThresholdEvents`).

    Args:
        quick: with ``n`` unset, 100 000 runs per input instead of 400 000.
        seed, n, claim_factor: as in :func:`audit_l2p_mw_broken`.

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    ev = ThresholdEvents(statistic=_count(1))
    return _audit_control(_hedge_mech, ev, claim_factor=claim_factor, n=n or (100_000 if quick else 400_000),
                          seed=seed, name="hedge-not-private", float_floor=False)


_D, _T = 2, 4
CLAIMED_EPS = 2.0
_K_SHARED, _ETA_SHARED = 2, 0.5     # shared-threshold audits: claimed eps_svt + K eta = 1 + 1 = 2


@functools.lru_cache(maxsize=None)
def sv_experts_mechanism(eps_svt: float, eta: float, K: int, L: float, threshold: str = "fresh",
                         unscaled: bool = False, flags: bool = False):
    """``mechanism(key, losses) -> cell`` running REAL Alg. 1 over a ``(T, 2)`` loss array; the cell
    encodes the action sequence ``x_1..x_{T+1}`` in binary. ``threshold="shared"``: one threshold noise for
    all instances (``unscaled=True``: the broken twin with the fresh instances' query noise).

    Args:
        eps_svt, eta, K, L: the sparse vector's ε, the learning rate, the switch budget and the threshold scale.
        threshold: ``"fresh"`` (one threshold noise per instance) or ``"shared"``.
        unscaled: the broken twin (shared threshold only).
        flags: return the sparse-vector answers (the ``(T,)`` ``em_draws`` flags) instead of the cell.

    Returns:
        ``mechanism(key, losses) -> cell`` (or ``-> flags``).
    """
    lrn = shared_threshold_unscaled_experts(_D) if unscaled else sparse_vector_experts(_D, threshold=threshold)
    params = SVExpertsParams(eps_svt=jnp.float32(eps_svt), eta=jnp.float32(eta), K=jnp.int32(K),
                             L=jnp.float32(L), Lstar=jnp.float32(0.0))

    def mech(key, losses):
        k_init, k_learn = jax.random.split(key)
        st = lrn.init(k_init, params)

        def body(st, inp):
            t, loss = inp
            st, info = lrn.step(jax.random.fold_in(k_learn, t), st, loss, params)
            return st, info["em_draws"] if flags else st.x

        _, xs = jax.lax.scan(body, st, (jnp.arange(losses.shape[0]), losses))
        if flags:
            return xs
        xs = jnp.concatenate([st.x[None], xs])
        return jnp.sum(xs * (2 ** jnp.arange(xs.shape[0])))

    return mech


def _run(eps_svt: float, *, quick: bool, seed: int, name: str, n: int | None = None, claim_factor: float = 1.0,
         rounds=(0,), eta: float = 1.0, K: int = 1, threshold: str = "fresh", unscaled: bool = False,
         family=None):
    mech = sv_experts_mechanism(eps_svt, eta, K, 0.5, threshold, unscaled)
    n = n or (200_000 if quick else 2_000_000)
    claimed = CLAIMED_EPS / claim_factor
    # float floor: T+1 categorical draws over d = 2 experts and 2(T+1) sparse-vector Laplace draws
    dfl = delta_float("categorical", eps=claimed, d=_D, draws=_T + 1) + delta_float("laplace", eps=claimed, d=2 * (_T + 1))
    return audit_mechanism(mech, family or neighbour_family(), SearchEvents(cell=_cell, n_cells=2 ** (_T + 1)),
                           claimed_eps=claimed, n=n, key=jax.random.key(seed), name=name, delta_float=dfl,
                           search=0.3, n_best=2)


def neighbour_family() -> dict:
    """The audited neighbour pairs of ``sparse-vector-experts`` (``T = 4`` rounds, ``d = 2`` experts).

    The six ``l_1`` pairs on zero losses (:func:`jaxdp.privacy.audit.learners.loss_neighbours`), and ``e1`` vs ``e2``
    late in the run after expert 1 has taken loss (rounds 3 and 4 after ``l_1 = l_2 = e1``, round 4 after
    ``l_1 = e1``): the strongest pairs found by a wider exploration, on which the action sequence reveals up
    to about 0.98 against 0.66 for the best ``l_1`` pair.

    Returns:
        The nine pairs, ``{label: (x0, x1)}`` with float32 ``(4, 2)`` loss arrays.
    """
    e1, e2 = np.eye(_D, dtype=np.float32)
    fam = dict(loss_neighbours(_T, _D))
    b11 = np.zeros((_T, _D), np.float32)
    b11[:2] = e1
    b1 = np.zeros((_T, _D), np.float32)
    b1[0] = e1
    fam.update(loss_neighbours(_T, _D, rounds=(2, 3), values=[e1, e2], base=b11, prefix="l1=l2=e1, "))
    fam.update(loss_neighbours(_T, _D, rounds=(3,), values=[e1, e2], base=b1, prefix="l1=e1, "))
    return fam


def shared_neighbour_family() -> dict:
    """The audited neighbour pairs of the shared-threshold audits: :func:`neighbour_family` and two common-loss pairs.

    In the two added pairs both experts take the same loss (so the exponential mechanism is uniform):
    ``l_2`` = 0 vs 1 after ``l_1 = 1`` (a quick first switch: evidence that the shared threshold noise is
    low), with ``l_3 = l_4 = 1``, and the same with ``l_1 = 0``. Among all such common-loss pairs these
    maximise the exact sparse-vector privacy loss of the broken twin.

    Returns:
        The eleven pairs, ``{label: (x0, x1)}`` with float32 ``(4, 2)`` loss arrays.
    """
    zero, one = np.zeros(_D, np.float32), np.ones(_D, np.float32)
    fam = neighbour_family()
    for l1 in (1.0, 0.0):
        base = np.ones((_T, _D), np.float32)
        base[0] = l1
        fam.update(loss_neighbours(_T, _D, rounds=(1,), values=[zero, one], base=base,
                                   prefix=f"l1={l1:g}, l3=l4=1, "))
    return fam


def _cell(c):
    return c


@register_audit("sparse-vector-experts", "REAL Alg. 1 (d=2, T=4, K=1) on neighbouring loss sequences; claimed eps = 2",
                claimed_eps=CLAIMED_EPS)
def audit_sparse_vector_experts(*, quick: bool = True, seed: int = 0, n: int | None = None,
                                claim_factor: float = 1.0):
    """Registered audit ``sparse-vector-experts``: REAL Alg. 1 at ``d = 2``, ``T = 4``, ``K = 1``, ``eps_svt = η = 1``.

    Claimed ε = ``eps_svt + Kη = 2`` (pure). Output: the action sequence ``x_1, ..., x_5`` as one of ``2^5``
    cells, on the pairs of :func:`neighbour_family`; the auditor searches the best (pair, union of cells) on
    30% of the runs and bounds ε with the best two on the other 70% (module docstring).

    Args:
        quick: with ``n`` unset, 200 000 runs per input instead of 2 000 000.
        seed: the seed of the audit's key.
        n: runs per input (``None``: by ``quick``).
        claim_factor: audit the over-claim ``2 / claim_factor`` on the same learner (power measurements).

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    return _run(1.0, quick=quick, seed=seed, name="sparse_vector_experts", n=n, claim_factor=claim_factor)


@register_audit("sparse-vector-experts-mislabelled",
                "BROKEN: REAL Alg. 1 with sparse-vector noise for eps_svt=1e4 while claiming eps = 2",
                claimed_eps=CLAIMED_EPS, broken=True)
def audit_sparse_vector_experts_mislabelled(*, quick: bool = True, seed: int = 0, n: int | None = None,
                                            claim_factor: float = 1.0):
    """Registered audit ``sparse-vector-experts-mislabelled`` (BROKEN): sparse-vector noise for ``eps_svt = 1e4``.

    The learner of :func:`audit_sparse_vector_experts` with the noise of ``eps_svt = 1e4`` while still
    claiming ε = 2: the switch after round 1 reveals ``l_1`` almost deterministically, and the audit must
    flag it.

    Args:
        quick, seed, n: as in :func:`audit_sparse_vector_experts`.
        claim_factor: audit the claim ``2 / claim_factor``.

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    return _run(1e4, quick=quick, seed=seed, name="sparse_vector_experts (mislabelled eps_svt)", n=n,
                claim_factor=claim_factor)


@register_audit("sparse-vector-experts-shared-threshold",
                "REAL Alg. 1 with one threshold noise shared by K=2 instances, query noise Lap(4K/eps_svt) "
                "(Lyu et al. Alg. 1; d=2, T=4); claimed eps = 2", claimed_eps=CLAIMED_EPS)
def audit_sparse_vector_experts_shared_threshold(*, quick: bool = True, seed: int = 0, n: int | None = None,
                                                 claim_factor: float = 1.0):
    """Registered audit ``sparse-vector-experts-shared-threshold``: REAL Alg. 1, one threshold noise for all instances.

    ``d = 2``, ``T = 4``, ``K = 2``, ``eps_svt = 1``, ``η = 1/2`` (claimed ``eps_svt + Kη = 2``): one threshold
    noise ``Lap(2/eps_svt)`` shared by both sparse-vector instances and query noise ``Lap(4K/eps_svt)``
    (Lyu et al. Alg. 1 with ``c = K``; correct), on the pairs of :func:`shared_neighbour_family`.

    Args:
        quick, seed, n, claim_factor: as in :func:`audit_sparse_vector_experts`.

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    return _run(1.0, quick=quick, seed=seed, name="sparse_vector_experts (shared threshold)", n=n,
                claim_factor=claim_factor, eta=_ETA_SHARED, K=_K_SHARED, threshold="shared",
                family=shared_neighbour_family())


# --------------------------------------------------------------------------- the broken twin at a size where it is broken
#: the size at which the broken twin is audited: T rounds, K switches, the changed round j, threshold L,
#: eta (so the claim eps_svt + K eta is 2 with eps_svt = 2 - K eta)
UNSCALED_T, UNSCALED_K, UNSCALED_J, UNSCALED_L, UNSCALED_ETA = 64, 16, 16, 0.0, 1e-3
UNSCALED_EPS_SVT = CLAIMED_EPS - UNSCALED_K * UNSCALED_ETA
#: the broken twin's sparse-vector answers (``switch_t``, the ``em_draws`` flags) over a ``(T, 2)`` loss array
_unscaled_mech = sv_experts_mechanism(UNSCALED_EPS_SVT, UNSCALED_ETA, UNSCALED_K, UNSCALED_L, "shared", True, True)


@functools.lru_cache(maxsize=None)
def unscaled_exact():
    """The exact law of the broken twin's switch pattern on its audited pair (:func:`jaxdp.privacy.audit.exact.
    shared_svt_window_law`): ``(classes, P, P', log-ratio table)``.

    Returns:
        ``(classes, P, P', log-ratio table)`` of the broken twin's audited pair.
    """
    e = UNSCALED_EPS_SVT
    cls, P, Q = X.shared_svt_window_law(UNSCALED_T, UNSCALED_K, UNSCALED_J, UNSCALED_L, 2.0 / e, 4.0 / e)
    return cls, P, Q, X.window_log_ratio_table(UNSCALED_T, UNSCALED_K, cls, P, Q)


def unscaled_threshold(n: int, alpha: float = 1e-7) -> float:
    """The log-ratio threshold of the event the broken shared-threshold twin is audited on.

    The event ``{log P/P' > thr}`` with the largest EXPECTED Clopper–Pearson bound at ``n`` runs per input,
    computed from the exact law (:func:`unscaled_exact`, :func:`jaxdp.privacy.audit.exact.best_fixed_event`) before
    any run: the event is fixed, not searched.

    Args:
        n: the runs per input the audit will make.
        alpha: the audit's significance level.

    Returns:
        ``thr``, a threshold on the per-pattern log ratio ``log P/P'``.
    """
    _, P, Q, _ = unscaled_exact()
    return X.best_fixed_event(P, Q, n, alpha=alpha)[0]


def unscaled_pair():
    """The neighbouring inputs of the broken shared-threshold twin's audit (``T = UNSCALED_T`` rounds, ``d = 2``).

    ``D``: every loss 0; ``D'``: both experts take loss 1 in round ``UNSCALED_J`` (common losses: the
    exponential mechanism is uniform on both, only the sparse vector can leak).

    Returns:
        ``(x0, x1)``, float32 ``(UNSCALED_T, 2)`` loss arrays.
    """
    return next(iter(loss_neighbours(UNSCALED_T, _D, rounds=(UNSCALED_J,), values=[np.zeros(_D), np.ones(_D)]).values()))


@register_audit("sparse-vector-experts-shared-threshold-unscaled",
                "BROKEN: REAL Alg. 1 sharing one threshold noise across K=16 instances with the fresh query noise "
                "Lap(4/eps_svt) (T=64, eps_svt=1.984, eta=1e-3); its sparse-vector answers on a common-loss pair; "
                "claimed eps = 2 (exact loss of the audited event 3.64)",
                claimed_eps=CLAIMED_EPS, broken=True)
def audit_sparse_vector_experts_shared_threshold_unscaled(*, quick: bool = True, seed: int = 0, n: int | None = None,
                                                          claim_factor: float = 1.0):
    """Registered audit ``sparse-vector-experts-shared-threshold-unscaled`` (BROKEN), at a size where it is broken.

    ``T = 64``, ``K = 16``, ``eps_svt = 2 - Kη``, ``η = 10⁻³`` (claimed ``eps_svt + Kη = 2``), ``L = 0``, on
    :func:`unscaled_pair`. Output: the sparse-vector answers, which the ledger's composition certifies
    together with the exponential-mechanism draws (the actions are their post-processing). Event:
    ``{log P/P' > thr}`` of the exact law (:func:`unscaled_exact`; many quick switches pin the shared
    threshold noise low, then the instance active in round ``j`` holds out long, which the changed loss makes
    unlikely), with ``thr`` fixed from the exact law before any run (:func:`unscaled_threshold`). Its exact
    privacy loss exceeds the claim by about 1.5x.

    Args:
        quick: with ``n`` unset, 1 000 000 runs per input instead of 4 000 000.
        seed: the seed of the audit's key.
        n: runs per input (``None``: by ``quick``).
        claim_factor: audit the claim ``2 / claim_factor``.

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    n = n or (1_000_000 if quick else 4_000_000)
    claimed = CLAIMED_EPS / claim_factor
    _, _, _, tab = unscaled_exact()
    table = jnp.asarray(np.nan_to_num(tab, nan=0.0), jnp.float32)

    def stat(flags):
        c, b, e, r = X.window_class(flags, UNSCALED_J, UNSCALED_K, xp=jnp)
        return table[c, b, e, r]

    x0, x1 = unscaled_pair()
    dfl = (delta_float("categorical", eps=claimed, d=_D, draws=UNSCALED_T + 1)
           + delta_float("laplace", eps=claimed, d=UNSCALED_T + 1))
    return audit(_unscaled_mech, x0, x1, claimed_eps=claimed, events=ThresholdEvents(
        statistic=stat, thresholds=(unscaled_threshold(n),)), n=n, key=jax.random.key(seed),
        name="sparse_vector_experts (shared threshold, unscaled query noise; T=64, K=16)", delta_float=dfl)


# ----------------------------------------------------------------------------- learned events (jaxdp.privacy.audit.learned)
_T, _D = 4, 2
_BITS = np.arange(_T + 1, dtype=np.int32)


def _sv_traj(c):
    """The action sequence x_1..x_5 decoded from the mechanism's cell, as trajectory features."""
    acts = (jnp.asarray(c).astype(jnp.int32) >> _BITS) & 1
    return trajectory_features(_D)(acts)


@functools.lru_cache(maxsize=None)
def sv_experts_family() -> dict:
    """``sparse-vector-experts``' nine pairs and :func:`loss_flip_pairs` on ``T = 4``, ``d = 2`` (one round's
    loss flipped on zero losses, or after expert 1 lost every earlier round).

    Returns:
        The audit family: the neighbouring pairs and their events.
    """
    fam = dict(neighbour_family())
    seen = {(np.asarray(a).tobytes(), np.asarray(b).tobytes()) for a, b in fam.values()}
    for k, (a, b) in loss_flip_pairs(_T, _D).items():
        sig = (np.asarray(a).tobytes(), np.asarray(b).tobytes())
        if sig not in seen and sig[::-1] not in seen:
            seen.add(sig)
            fam[k] = (jnp.asarray(a), jnp.asarray(b))
    return fam


#: runs per input (train, select, fresh evaluation) at quick and full size
N_SV = {True: (50_000, 100_000, 2_000_000), False: (200_000, 400_000, 10_000_000)}
_SV_CLASSIFIERS = (Histogram(2 ** (_T + 1)), Logistic(_sv_traj))


def _sv(eps_svt, *, quick, key, name, eps):
    mech = sv_experts_mechanism(eps_svt, 1.0, 1, 0.5)
    n_train, n_sel, n_eval = N_SV[bool(quick)]
    dfl = delta_float("categorical", eps=eps, d=_D, draws=_T + 1) + delta_float("laplace", eps=eps, d=2 * (_T + 1))
    return audit_learned(mech, sv_experts_family(), claimed_eps=eps, key=key, classifiers=_SV_CLASSIFIERS,
                         n_train=n_train, n_select=n_sel, n_eval=n_eval, n_best=1, name=name, delta_float=dfl)


@register_learned_audit("sparse-vector-experts-learned",
           "REAL Alg. 1 (d=2, T=4, K=1), learned events over 30 neighbouring loss sequences; claimed eps = 2",
           2.0, False)
def _a_sv(*, quick, key, name, eps):
    return _sv(1.0, quick=quick, key=key, name=name, eps=eps)


@register_learned_audit("sparse-vector-experts-mislabelled-learned",
           "BROKEN: REAL Alg. 1 with sparse-vector noise for eps_svt=1e4 claiming eps = 2, learned events", 2.0, True)
def _a_sv_bad(*, quick, key, name, eps):
    return _sv(1e4, quick=quick, key=key, name=name, eps=eps)


# ----------------------------------------------------------------------------- worst-case pairs (tightness)
def tightness_cases(quick: bool = False, *, uncovered: bool = False) -> list:
    """The expert learners with an exact law, at small sizes, for :func:`jaxdp.privacy.audit.tightness.tightness_row`.

    L2P-MW at ``T = 8``, ``B = 2`` (the parameters of LAZY Thm 3.2 at the same ``p``, ``δ₁`` and largest ``η``,
    certified by their ledger, :func:`jaxdp.privacy.accounting.l2p.l2p_ledger`, what ``plan_l2p_mw`` reports; the
    printed theorem's ε and the ``composed`` certificate shown beside it;
    exhaustive over ``{0,1}^2`` losses), at ``T = 16``, ``B = 4`` and at the audited size ``T = 64``, ``B = 8``
    (coordinate search from the audited pair), and at ``T = 4`` in each mode of its planner (``plan_l2p_mw`` at
    ``ε = 1``, ``δ = 1e-6``, certified by the plan's ledger); REAL Alg. 1 with fresh threshold noise at ``T = 4`` (the
    audited size) and ``T = 6``, with shared threshold noise at ``T = 4`` and ``T = 5``, ``d = 2`` (exhaustive over
    ``{0,1}^2``; the audited pairs padded with zero losses), certified by
    :func:`jaxdp.experts.sparse_vector.sparse_vector_ledger`, and in each mode of its planner at ``T = 4``;
    binary-tree noisy Hedge (``tree_ftrl``, :func:`jaxdp.privacy.audit.exact.tree_ftrl_law`) at ``T = 4``, ``d = 2``
    with Laplace (``δ = 0``) and Gaussian (``δ = 1e-5``) nodes, in each planner mode; the low-switching template
    (``private_lazy_sketch``, :func:`jaxdp.privacy.audit.exact.lazy_sketch_law`, no certificate) at ``T = 6``.

    The L2P-MW and shared-threshold rows attribute their slack: the certificate is recomputed with one ledger term
    replaced by its exact value on the worst pair found (:func:`l2p_slack`, :func:`shared_sv_slack`).

    Args:
        quick: only the smallest size of each learner.
        uncovered: also return a :class:`jaxdp.privacy.audit.tightness.UncoveredCase` for each private expert
            learner without an exact law (why, and what bounds it instead).

    Returns:
        A list of :class:`jaxdp.privacy.audit.tightness.TightnessCase` (and ``UncoveredCase``).
    """
    from ..privacy.accounting import certify
    from ..privacy.audit.tightness import TightnessCase
    from ..privacy.accounting.l2p import l2p_composed_eps, l2p_ledger
    from .l2p_mw import L2P_MW_MODES, plan_l2p_mw
    from .sparse_vector import plan_sparse_vector_experts, sparse_vector_ledger
    from .tree_ftrl import plan_tree_ftrl_experts

    bits = np.array([[a, b] for a in (0.0, 1.0) for b in (0.0, 1.0)])
    full = AUDIT_SETTING
    cases = []
    for T, B, search in ((8, 2, {}), (16, 4, dict(max_pairs=0, restarts=2, max_evals=3000)),
                         (64, 8, dict(max_pairs=0, restarts=1, max_evals=1500))):
        if quick and T > 8:
            continue
        s = audit_setting(T=T, B=B)
        law = _batch_sum_law(functools.partial(X.l2p_mw_law, eta=s.eta, p=s.p, B=s.B), B)
        ledger = l2p_ledger(s.eta, s.p, s.B, s.T, 0.0, s.delta1, "mw", outcomes=s.d)
        led = float(certify(ledger, s.delta).eps)
        comp = float(l2p_composed_eps(s.eta, s.p, s.B, s.T, s.delta, s.delta1)[0])
        cases.append(TightnessCase(
            "l2p-mw", f"T={T}, d=2, B={B}, p={s.p:g}, eta={s.eta:.4g}", law, T, bits, s.delta, led,
            {L2P_PAIR: loss_neighbours(T, s.d)[L2P_PAIR]}, search, slack=_l2p_both_slack(s, ledger, led),
            audit=_l2p_audit_on(full), learner="l2p_mw",
            audit_size=f"T={full.T}, B={full.B}, eta={full.eta:.4g} (the audit's; pair padded with zero losses)",
            certified_by="ledger (l2p_ledger, what plan_l2p_mw certifies)",
            others=(("LAZY Thm 3.2 as printed", s.eps), ("composed", comp))))
    if not quick:
        for mode in L2P_MW_MODES:
            plan = plan_l2p_mw(eps=1.0, delta=1e-6, T=4, d=2, mode=mode)
            eta, p = float(plan.params["eta"]), float(plan.params["p"])
            Bm = int(plan.params["B"])
            law = _batch_sum_law(functools.partial(X.l2p_mw_law, eta=eta, p=p, B=Bm), Bm)
            s = AuditSetting(2, 4, Bm, p, float(plan.params["delta1"]), eta, float(plan.eps_certified),
                             float(plan.delta_certified))
            cases.append(TightnessCase(
                f"l2p-mw [mode {mode}]", f"T=4, d=2, B={Bm}, p={p:.3g}, eta={eta:.4g} (plan eps=1, delta=1e-6"
                + ("" if plan.certified else "; not certified at eps=1") + ")", law, 4, bits,
                float(plan.delta_certified), float(plan.eps_certified), {L2P_PAIR: loss_neighbours(4, 2)[L2P_PAIR]},
                {}, slack=l2p_slack(s, printed=False, plan=plan), learner="l2p_mw",
                certified_by=f"plan_l2p_mw (mode {mode}; bound: {str(plan.bound).split(':')[0]})",
                others=((("ledger", float(certify(plan.ledger, float(plan.delta)).eps)),)
                        if mode == "composed" else ()),
                audit=_learner_audit_on(functools.partial(_from_registry, "l2p_mw", plan), float(plan.eps_certified),
                                        float(plan.delta_certified), batch_experts=True)))
    for name, eta, K, thr, fam, sizes in (
            ("sparse-vector-experts", 1.0, 1, "fresh", neighbour_family(), (4, 6)),
            ("sparse-vector-experts-shared-threshold", _ETA_SHARED, _K_SHARED, "shared", shared_neighbour_family(),
             (4, 5))):
        for T in sizes[:1] if quick else sizes:
            cert = certify(sparse_vector_ledger(1.0, eta, K, _D, thr, T=T)).eps
            law = functools.partial(X.sv_experts_law, eps_svt=1.0, L=0.5, eta=eta, K=K, threshold=thr)
            pad = {k: tuple(np.pad(np.asarray(x), ((0, T - _T), (0, 0))) for x in v) for k, v in fam.items()}
            cases.append(TightnessCase(
                name, f"T={T}, d={_D}, K={K}, eps_svt=1, eta={eta:g}", law, T, bits, 0.0, float(cert), pad, {},
                slack=shared_sv_slack(eta, K, float(cert)) if thr == "shared" else "not attributed yet",
                audit=_sv_audit_on(name, dict(eta=eta, K=K, threshold=thr)) if T == _T else None,
                learner="sparse_vector", audit_size=f"T={_T}" if T == _T else "-"))
    if not quick:
        for mode in ("paper", "certified", "rate"):
            plan = plan_sparse_vector_experts(eps=1.0, T=4, d=2, mode=mode)
            prm = plan.params
            law = functools.partial(X.sv_experts_law, eps_svt=float(prm["eps_svt"]), L=float(prm["L"]),
                                    eta=float(prm["eta"]), K=int(math.ceil(prm["K"])), Lstar=float(prm["Lstar"]))
            cases.append(TightnessCase(
                f"sparse-vector-experts [mode {mode}]", f"T=4, d=2, K={prm['K']:g}, eps_svt={prm['eps_svt']:.3g}, "
                f"eta={prm['eta']:.3g}, L={prm['L']:.4g} (plan eps=1)", law, 4, bits, 0.0, float(plan.eps_certified),
                loss_neighbours(4, 2), {}, learner="sparse_vector",
                audit=_learner_audit_on(functools.partial(_from_registry, "sparse_vector", plan),
                                        float(plan.eps_certified), 0.0)))
    tree_modes = (("laplace", 0.0, "paper"),) if quick else tuple(
        (n, dl, m) for n, dl in (("laplace", 0.0), ("gaussian", 1e-5)) for m in ("paper", "rate"))
    for noise, dl, mode in tree_modes:
        plan = plan_tree_ftrl_experts(eps=1.0, delta=dl, T=4, d=2, mode=mode)
        eta, scale = float(plan.params["eta"]), float(plan.params["scale"])
        cases.append(TightnessCase(
            f"tree-ftrl ({noise}) [mode {mode}]", f"T=4, d=2, eta={eta:.3g}, node scale={scale:.4g} (plan eps=1)",
            _memo(functools.partial(X.tree_ftrl_law, eta=eta, scale=scale, noise=noise)), 4, bits, dl,
            float(plan.eps_certified), loss_neighbours(4, 2), {},
            slack=_tree_ftrl_slack(plan, noise, eta, scale), learner="tree_ftrl",
            audit=_learner_audit_on(functools.partial(_tree_ftrl_learner, noise, eta, scale),
                                    float(plan.eps_certified), dl)))
    if not quick:
        cases += _potential_cases()
        eta_s, p_s = 0.5, 0.5
        cases.append(TightnessCase(
            "private-lazy-sketch", f"T=6, d=2, eta={eta_s:g}, p={p_s:g} (no certificate)",
            functools.partial(X.lazy_sketch_law, eta=eta_s, p=p_s), 6, bits, 0.0, float("nan"),
            loss_neighbours(6, 2), {}, slack="-", learner="private_lazy_sketch",
            audit=_learner_audit_on(lambda: _sketch_learner(eta_s, p_s), 1.0, 0.0)))
    if uncovered:
        cases += _uncovered_experts()
    return cases


def _potential_cases() -> list:
    """REAL Alg. 5 (``potential``) and its guarded variant at ``T = 4``, ``d = 2`` (exhaustive over ``{0,1}^2``,
    :func:`jaxdp.privacy.audit.exact.potential_law`): each planner mode at ``ε = 1`` (whose thresholds are out of
    reach at this size: the loss is carried by rare switches) and one instance that switches
    (``eps0 = 1``, ``η = 0.5``, ``K = 2``, ``α = 1/4``) certified by
    :func:`jaxdp.experts.potential.potential_ledger`."""
    from ..privacy.accounting import certify
    from ..privacy.audit.tightness import TightnessCase
    from .potential import plan_guarded_potential_experts, plan_potential_experts, potential_ledger, potential_params

    bits = np.array([[a, b] for a in (0.0, 1.0) for b in (0.0, 1.0)])
    out = []
    plans = [("potential", False, m, plan_potential_experts(eps=1.0, T=4, d=2, mode=m)) for m in ("paper", "certified")]
    plans.append(("guarded_potential", True, "rate", plan_guarded_potential_experts(eps=1.0, T=4, d=2)))
    for reg, guard, mode, plan in plans:
        prm = {k: float(plan.params[k]) for k in ("eps0", "eta", "alpha", "s_phi")}
        K = int(plan.params["K"])
        name = "guarded-potential-experts" if guard else "potential-experts"
        out.append(TightnessCase(
            f"{name} [mode {mode}]", f"T=4, d=2, K={K}, eps0={prm['eps0']:.3g}, eta={prm['eta']:.3g} (plan eps=1)",
            _memo(functools.partial(X.potential_law, K=K, guard=guard, eps0=prm["eps0"], eta=prm["eta"],
                                    alpha=prm["alpha"], s_phi=prm["s_phi"])), 4, bits, 0.0,
            float(plan.eps_certified), loss_neighbours(4, 2), {}, learner=reg,
            audit=_learner_audit_on(functools.partial(_from_registry, reg, plan), float(plan.eps_certified), 0.0)))
    kw: dict = dict(eps0=1.0, eta=0.5, K=2, alpha=0.25, s_phi=2.0)
    cert = float(certify(potential_ledger(kw["eps0"], kw["eta"], kw["s_phi"], kw["K"], T=4)).eps)
    out.append(TightnessCase(
        "potential-experts", "T=4, d=2, K=2, eps0=1, eta=0.5, alpha=0.25 (switches at this size)",
        _memo(functools.partial(X.potential_law, **kw)), 4, bits, 0.0, cert, loss_neighbours(4, 2), {},
        learner="potential", audit=_learner_audit_on(
            lambda: (_potential_learner(), potential_params(**kw)), cert, 0.0)))
    return out


def _potential_learner():
    from .potential import potential_experts

    return potential_experts(2)


def _memo(law):
    """``law`` memoised on the bytes of its loss array."""
    memo: dict = {}

    def wrapped(losses):
        x = np.asarray(losses, np.float64)
        k = x.tobytes()
        if k not in memo:
            memo[k] = law(x)
        return memo[k]
    return wrapped


def l2p_slack(s: "AuditSetting", *, printed: bool = True, plan=None):
    """The slack attribution of an L2P-MW row: which term of the certificate carries it, on the worst pair found.

    LAZY Thm 3.2's ε is ``2η/p`` (the switching decision at the differing round) ``+ η`` (the sample there) ``+``
    the concentration term ``1.5 (T/B) η² p ln(1/δ₁) + sqrt(6 (T/B) η² p ln²(1/δ₁))`` (advanced composition over the
    fresh samples after the differing round). On a given pair the fresh samples are independent draws from the
    measures ``ν_s`` vs ``ν'_s`` (oblivious losses: the measures do not depend on earlier outputs), at most two per
    boundary (``x`` and the shadow ``y``), so the exact ε(δ₁) of ALL of them (the product of the ``2 (S - s0)``
    two-point laws, enumerated) is at least what they leak: the concentration term's exact value on the pair. The
    decision term's exact counterpart is the two-outcome ε of :func:`jaxdp.privacy.accounting.l2p.l2p_decision_eps`.
    With ``printed=False`` (planner modes) the certificate is the plan's ledger (already the two-outcome decision
    and an exact count of fresh samples composed by the accountant): the composition of its fresh-sample event is
    replaced the same way.

    Args:
        s: the setting (``eta, p, B, T, delta1``; ``eps`` the certified ε).
        printed: the certificate is Thm 3.2 as printed (else the plan's ledger, ``plan``).
        plan: the plan (with ``printed=False``).

    Returns:
        ``slack(worst) -> str`` for :class:`jaxdp.privacy.audit.tightness.TightnessCase`.
    """
    from ..privacy.accounting.l2p import l2p_decision_eps

    def fresh_exact(x0, x1):
        S = s.T // s.B
        j = int(np.flatnonzero(np.any(np.asarray(x0) != np.asarray(x1), axis=1))[0])
        s0 = j // s.B                                   # 0-based batch of the differing round

        def measures(x):
            batch = np.asarray(x, np.float64)[: S * s.B].reshape(S, s.B, -1).sum(1)
            cum = np.concatenate([np.zeros((1, batch.shape[1])), np.cumsum(batch, 0)])
            return [np.exp(-s.eta * c - np.logaddexp.reduce(-s.eta * c)) for c in cum[s0 + 1:S]]
        P, Q = np.ones(1), np.ones(1)
        for a, b in zip(measures(x0), measures(x1)):
            for _ in range(2):                          # x and the shadow y
                P, Q = np.outer(P, a).ravel(), np.outer(Q, b).ravel()
        return float(X.exact_eps(P, Q, delta=s.delta1)[0]), 2 * (S - s0 - 1)

    def slack(wp) -> str:
        comp, k = fresh_exact(wp.x0, wp.x1)
        if printed:
            L1 = math.log(1.0 / s.delta1)
            n = math.ceil(s.T / s.B)
            dec, samp = 2 * s.eta / s.p, s.eta
            conc = 1.5 * n * s.eta ** 2 * s.p * L1 + math.sqrt(6 * n * s.eta ** 2 * s.p * L1 ** 2)
            dec_x = float(l2p_decision_eps(2 * s.eta, s.p, s.B * (s.eta - 2 * s.eta)))
            gap = s.eps - wp.eps
            return (f"Thm 3.2's concentration term (advanced composition of the fresh samples): {conc:.4g} of "
                    f"{s.eps:.4g}; its exact value on this pair (ε(δ₁) of all {k} fresh x, y samples) is {comp:.3g}: "
                    f"recomputed certificate {dec + samp + comp:.3g}, so this term carries "
                    f"{(conc - comp) / gap:.0%} of the slack; the decision term 2η/p = {dec:.3g} (exact two-outcome "
                    f"{dec_x:.3g}) carries {(dec - dec_x) / gap:.0%}; with both replaced: {dec_x + samp + comp:.3g} "
                    f"(certified / that = {s.eps / (dec_x + samp + comp):.3g})")
        from ..privacy.accounting import certify
        from ..privacy.accounting import ledger as LG

        items = [it for it in plan.ledger.items]
        rest = [it for it in items if not str(getattr(it, "label", "")).startswith("fresh")]
        base = float(certify(LG.sequential(*rest)).eps) if rest else 0.0
        return (f"the ledger's fresh-sample composition replaced by its exact value on this pair (ε(δ₁) of all {k} "
                f"fresh x, y samples: {comp:.3g}): recomputed {base + comp:.3g} (decision and t0 sample: {base:.3g}) "
                f"vs certified {s.eps:.4g}: the fresh-sample composition carries "
                f"{(s.eps - base - comp) / max(s.eps - wp.eps, 1e-300):.0%} of the slack")
    return slack


def _l2p_both_slack(s: "AuditSetting", ledger, led: float):
    """The slack attribution of an L2P-MW row certified by its ledger (``led``), also shown for LAZY Thm 3.2 as
    printed (``s.eps``): both texts of :func:`l2p_slack`."""
    from types import SimpleNamespace

    f_led = l2p_slack(s._replace(eps=led), printed=False, plan=SimpleNamespace(ledger=ledger))
    f_thm = l2p_slack(s)

    def slack(wp) -> str:
        return f"ledger: {f_led(wp)}. LAZY Thm 3.2 as printed: {f_thm(wp)}"
    return slack


def shared_sv_slack(eta: float, K: int, certified: float, eps_svt: float = 1.0, L: float = 0.5):
    """The slack attribution of a shared-threshold sparse-vector experts row, on the worst pair found.

    The ledger is the sparse vector's ``eps_svt`` (Lyu, Su, Li, *Understanding the Sparse Vector Technique for
    Differential Privacy*, Alg. 1: one threshold noise, ``K`` positives) plus ``K η`` for the ``K``
    exponential-mechanism draws. Exact values on the pair: the sparse vector's is the exact ε of the same learner
    with ``η = 0`` (uniform draws: they carry no information, so the output's loss is the switch pattern's); the
    draws' is the sum of the ``K`` largest per-round exact losses of one draw ``softmax(-η max(cum, L*)/2)`` on the
    pair (pure composition of ``K`` draws, each at its worst round).

    Args:
        eta: the exponential mechanism's ``η``.
        K: the largest number of switches.
        certified: the certified ε.
        eps_svt: the sparse vector's ε.
        L: the noiseless threshold.

    Returns:
        ``slack(worst) -> str`` for :class:`jaxdp.privacy.audit.tightness.TightnessCase`.
    """
    def slack(wp) -> str:
        from ..privacy.audit.tightness import pair_eps

        law0 = functools.partial(X.sv_experts_law, eps_svt=eps_svt, L=L, eta=0.0, K=K, threshold="shared")
        svt = pair_eps(law0, wp.x0, wp.x1)
        c0, c1 = np.cumsum(wp.x0, 0), np.cumsum(wp.x1, 0)
        lp = [(-eta * c / 2.0) - np.logaddexp.reduce(-eta * c / 2.0) for c in (c0.T, c1.T)]
        per = np.max(np.abs(lp[0] - lp[1]), axis=0)             # per round t: the draw's exact loss
        em = float(np.sum(np.sort(per)[::-1][:K]))
        gap = certified - wp.eps
        return (f"ledger = sparse vector {eps_svt:g} + K η = {K * eta:g}; exact on this pair: sparse vector (η = 0) "
                f"{svt:.3g}, the {K} draws <= {em:.3g}: recomputed {svt + em:.3g}; the sparse-vector term carries "
                f"{(eps_svt - svt) / gap:.0%} of the slack, the draws' {(K * eta - em) / gap:.0%}")
    return slack


def _tree_ftrl_slack(plan, noise: str, eta: float, scale: float):
    """The slack attribution of a tree-FTRL row (``slack(worst) -> str``).

    The ledger charges the noisy cumulative losses: the ``H`` tree nodes holding round ``j``, a Laplace (or
    Gaussian) mechanism on the node vector. Its exact ε on the pair is ``m ‖l_j - l'_j‖₁ / b`` (Laplace: ``m`` nodes
    hold round ``j``) or the Gaussian mechanism's exact ε(δ) with ℓ2 sensitivity ``sqrt(m) ‖l_j - l'_j‖₂``
    (:func:`jaxdp.privacy.audit.exact.gaussian_eps`). What remains between that and the exact ε of the actions is
    post-processing: the draws ``softmax(-η L̂)`` see only the two experts' difference, through a sigmoid.
    """
    T = 4

    def slack(wp) -> str:
        j = wp.round
        m = sum(1 for t in range(j + 1, T + 1) if t - (1 << ctz(t)) <= j)     # nodes created at t covering round j+1
        diff = np.asarray(wp.x0[j]) - np.asarray(wp.x1[j])
        if noise == "laplace":
            tree = m * float(np.abs(diff).sum()) / scale
        else:
            tree = X.gaussian_eps(float(plan.delta_certified), scale, math.sqrt(m) * float(np.linalg.norm(diff)))
        cert = float(plan.eps_certified)
        return (f"the noisy cumulative losses ({m} tree nodes hold the changed round) have exact ε {tree:.3g} on this "
                f"pair (ledger {cert:.3g}): the tree's ledger carries {(cert - tree) / (cert - wp.eps):.0%} of the "
                f"slack; the rest is the softmax draws' post-processing (they see only the experts' difference)")
    return slack


def _from_registry(name: str, plan):
    """``(learner, params)`` of the registered learner ``name`` at ``d = 2`` configured by ``plan``."""
    from ..registry import get_learner

    return get_learner(name).learner_from_plan(plan, 2)


def _tree_ftrl_learner(noise: str, eta: float, scale: float):
    from .tree_ftrl import TreeFTRLParams, tree_ftrl_experts

    return tree_ftrl_experts(2, 4, noise), TreeFTRLParams(eta=jnp.float32(eta), scale=jnp.float32(scale))


def _sketch_learner(eta: float, p: float):
    from .sketch import private_lazy_sketch, sketch_params

    return private_lazy_sketch(2), sketch_params(eta, p)


def _learner_audit_on(build, eps: float, delta: float, n: int = 200_000, batch_experts: bool = False):
    """ε_lower of a generic learner audit on one pair: the whole action sequence as a cell (unions searched on half
    the runs, :func:`jaxdp.privacy.audit.learners.learner_mechanism`), ``n`` runs per input, claim ``eps``.

    ``batch_experts``: the audited output is the actions played in the ``T`` rounds (L2P-MW's batch experts, what
    :func:`jaxdp.privacy.audit.exact.l2p_mw_law` covers), without the action after the last round."""
    def run(x0, x1):
        from ..privacy.audit.learners import learner_mechanism

        learner, params = build()
        T = np.shape(x0)[0]
        code = action_code(2)
        out = (lambda a: code(a[:-1])) if batch_experts else code
        mech = learner_mechanism(learner, params, output=out)
        pair = {"worst": (jnp.asarray(x0, jnp.float32), jnp.asarray(x1, jnp.float32))}
        claim = eps if np.isfinite(eps) else 1.0
        cells = 2 ** (T if batch_experts else T + 1)
        return audit_mechanism(mech, pair, [SearchEvents(cell=lambda c: c, n_cells=cells)],
                               claimed_eps=claim, claimed_delta=delta, n=n, key=jax.random.key(0),
                               name="worst pair").eps_lower
    return run


def _uncovered_experts() -> list:
    """The private expert learners without an exact law (``UncoveredCase``), at ``T = 4``, ``d = 2``, ``ε = 1``."""
    from ..privacy.audit.tightness import UncoveredCase
    from .binary_tree import plan_binary_tree_experts
    from .sparse_vector import plan_adaptive_sparse_vector_experts

    bt = plan_binary_tree_experts(eps=1.0, T=4, d=2, mode="certified")
    ad = plan_adaptive_sparse_vector_experts(eps=1.0, T=4, d=2, mode="certified")
    return [
        UncoveredCase("binary-tree-experts", f"T=4, d=2, m_set={bt.params['m_set']}, P_max={bt.params['P_max']} "
                      "(plan eps=1)", 0.0, float(bt.eps_certified),
                      "discrete output, but a phase restarts when BOTH noisy counters exceed tau (a 2-D integral over "
                      "each node's two noises, not their difference) and re-selects by Gumbel-top-k: law not written",
                      "certified only; at d = 2 with no restart the output is the argmin of two Laplace trees, the "
                      "structure of tree-ftrl's law with indicators for sigmoids", learner="binary_tree"),
        UncoveredCase("adaptive-sparse-vector-experts", f"T=4, d=2, K={ad.params['K']} (plan eps=1)", 0.0,
                      float(ad.eps_certified),
                      "discrete output; the doubling checks (Laplace on cum[x]) restart Alg. 1 phases with new "
                      "thresholds: law not written",
                      "certified only; each phase is an Alg. 1 run (the sparse-vector-experts rows), and the doubling "
                      "checks are Laplace mechanisms on cum[x]",
                      learner="adaptive_sparse_vector"),
    ]


def _batch_sum_law(law, B: int):
    """``law`` memoised on the batch sums of the losses (all L2P-MW's law depends on): each batch's sum is put in
    its first round."""
    memo: dict = {}

    def wrapped(losses):
        x = np.asarray(losses, np.float64)
        canon = np.zeros_like(x)
        canon[::B] = x[: x.shape[0] // B * B].reshape(-1, B, x.shape[1]).sum(1)
        k = canon.tobytes()
        if k not in memo:
            memo[k] = law(canon)
        return memo[k]
    return wrapped


def _l2p_audit_on(s: AuditSetting):
    """ε_lower of the ``l2p-mw`` audit's method (one event fixed from the exact law, 10⁷ runs) on a pair, embedded at
    the audit's size ``s.T`` (a shorter pair is padded with zero losses: same differing round and history)."""
    def run(x0, x1):
        n = 10_000_000
        x0, x1 = (np.pad(np.asarray(x, np.float64), ((0, s.T - np.shape(x)[0]), (0, 0))) for x in (x0, x1))
        P = X.l2p_mw_law(x0, eta=s.eta, p=s.p, B=s.B)[1]
        Q = X.l2p_mw_law(x1, eta=s.eta, p=s.p, B=s.B)[1]
        thr = X.best_fixed_event(P, Q, n, delta=s.delta + _float_floor(s.eps))[0]
        with np.errstate(divide="ignore"):
            table = jnp.asarray(np.log(P) - np.log(Q), jnp.float32)
        ev = ThresholdEvents(statistic=lambda xs: table[action_code(s.d)(xs)], thresholds=(thr,))
        return _audit_control(_l2p_mech, ev, claim_factor=1.0, n=n, seed=0, name="l2p-mw (worst pair)",
                              float_floor=True, pair=(jnp.asarray(x0, jnp.float32), jnp.asarray(x1, jnp.float32))).eps_lower
    return run


def _sv_audit_on(name: str, kw: dict):
    """ε_lower of the sparse-vector audit (``quick`` size, 200 000 runs) on one pair."""
    def run(x0, x1):
        pair = {"worst": (jnp.asarray(x0, jnp.float32), jnp.asarray(x1, jnp.float32))}
        return _run(1.0, quick=True, seed=0, name=name, family=pair, **kw).eps_lower
    return run
