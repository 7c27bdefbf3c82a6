"""Empirical privacy audits of whole realizable-regime algorithms (docs/guide/auditing.md; ``jaxdp audit NAME``).

``sparse-vector-experts``: REAL Alg. 1 with ``d = 2``, ``T = 4``, ``K = 1``, ``eps_svt = 1``,
``η = 1`` (claimed ``eps_svt + Kη = 2``, pure). Neighbouring loss sequences
(:func:`neighbour_family`): the six pairs of :func:`jaxdp.audit.learners.loss_neighbours` (all
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
  sparse-vector loss is at most 0.53 (quadrature, :func:`jaxdp.audit.exact.shared_svt_common_law`), so it is
  audited where it IS broken: ``T = 64``, ``K = 16``, ``eps_svt = 2 - Kη``, ``η = 10⁻³`` (claimed 2), losses 0
  against a common loss 1 in round 16. Many quick switches pin the shared threshold noise low; the instance
  active in round 16 then holds out long, which the changed loss makes unlikely. The exact law
  (:func:`jaxdp.audit.exact.shared_svt_window_law`) gives that event a loss of 3.6 at probability 2·10⁻³ (2.8
  on events of probability ≥ 10⁻²), and the audit tests one event fixed from it before any run.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ..accounting.floating import delta_float
from ..audit.learned import Histogram, Logistic, audit_learned, trajectory_features
from ..audit.learned_catalogue import _register as _register_learned
from ..audit.pairs import loss_flip_pairs
from ..registry import register_audit
from .sparse_vector import SVExpertsParams, shared_threshold_unscaled_experts, sparse_vector_experts

__all__ = ["sv_experts_mechanism", "neighbour_family", "shared_neighbour_family", "audit_sparse_vector_experts",
           "audit_sparse_vector_experts_mislabelled", "audit_sparse_vector_experts_shared_threshold",
           "audit_sparse_vector_experts_shared_threshold_unscaled", "sv_experts_family"]

_D, _T = 2, 4
CLAIMED_EPS = 2.0
_K_SHARED, _ETA_SHARED = 2, 0.5     # shared-threshold audits: claimed eps_svt + K eta = 1 + 1 = 2


def _x_pair():
    x0 = np.zeros((_T, _D), np.float32)
    x1 = x0.copy()
    x1[0, 0] = 1.0
    return jnp.asarray(x0), jnp.asarray(x1)


@functools.lru_cache(maxsize=None)
def sv_experts_mechanism(eps_svt: float, eta: float, K: int, L: float, threshold: str = "fresh",
                         unscaled: bool = False):
    """``mechanism(key, losses) -> cell`` running REAL Alg. 1 over a ``(T, 2)`` loss array; the cell
    encodes the action sequence ``x_1..x_{T+1}`` in binary. ``threshold="shared"``: one threshold noise for
    all instances (``unscaled=True``: the broken twin with the fresh instances' query noise)."""
    lrn = shared_threshold_unscaled_experts(_D) if unscaled else sparse_vector_experts(_D, threshold=threshold)
    params = SVExpertsParams(eps_svt=jnp.float32(eps_svt), eta=jnp.float32(eta), K=jnp.int32(K),
                             L=jnp.float32(L), Lstar=jnp.float32(0.0))

    def mech(key, losses):
        k_init, k_learn = jax.random.split(key)
        st = lrn.init(k_init, params)

        def body(st, inp):
            t, loss = inp
            st, _ = lrn.step(jax.random.fold_in(k_learn, t), st, loss, params)
            return st, st.x

        _, xs = jax.lax.scan(body, st, (jnp.arange(losses.shape[0]), losses))
        xs = jnp.concatenate([st.x[None], xs])
        return jnp.sum(xs * (2 ** jnp.arange(xs.shape[0])))

    return mech


def _run(eps_svt: float, *, quick: bool, seed: int, name: str, n: int | None = None, claim_factor: float = 1.0,
         rounds=(0,), eta: float = 1.0, K: int = 1, threshold: str = "fresh", unscaled: bool = False,
         family=None):
    from ..accounting.floating import delta_float
    from ..audit import SearchEvents, audit_mechanism

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

    The six ``l_1`` pairs on zero losses (:func:`jaxdp.audit.learners.loss_neighbours`), and ``e1`` vs ``e2``
    late in the run after expert 1 has taken loss (rounds 3 and 4 after ``l_1 = l_2 = e1``, round 4 after
    ``l_1 = e1``): the strongest pairs found by a wider exploration, on which the action sequence reveals up
    to about 0.98 against 0.66 for the best ``l_1`` pair.

    Returns:
        The nine pairs, ``{label: (x0, x1)}`` with float32 ``(4, 2)`` loss arrays.
    """
    from ..audit.learners import loss_neighbours

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
    from ..audit.learners import loss_neighbours

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
        The :class:`jaxdp.audit.AuditReport`.
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
        The :class:`jaxdp.audit.AuditReport`.
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
        The :class:`jaxdp.audit.AuditReport`.
    """
    return _run(1.0, quick=quick, seed=seed, name="sparse_vector_experts (shared threshold)", n=n,
                claim_factor=claim_factor, eta=_ETA_SHARED, K=_K_SHARED, threshold="shared",
                family=shared_neighbour_family())


# --------------------------------------------------------------------------- the broken twin at a size where it is broken
#: the size at which the broken twin is audited: T rounds, K switches, the changed round j, threshold L,
#: eta (so the claim eps_svt + K eta is 2 with eps_svt = 2 - K eta)
UNSCALED_T, UNSCALED_K, UNSCALED_J, UNSCALED_L, UNSCALED_ETA = 64, 16, 16, 0.0, 1e-3
UNSCALED_EPS_SVT = CLAIMED_EPS - UNSCALED_K * UNSCALED_ETA


@functools.lru_cache(maxsize=None)
def unscaled_exact():
    """The exact law of the broken twin's switch pattern on its audited pair (:func:`jaxdp.audit.exact.
    shared_svt_window_law`): ``(classes, P, P', log-ratio table)``."""
    from ..audit import exact as X

    e = UNSCALED_EPS_SVT
    cls, P, Q = X.shared_svt_window_law(UNSCALED_T, UNSCALED_K, UNSCALED_J, UNSCALED_L, 2.0 / e, 4.0 / e)
    return cls, P, Q, X.window_log_ratio_table(UNSCALED_T, UNSCALED_K, cls, P, Q)


def unscaled_threshold(n: int, alpha: float = 1e-7) -> float:
    """The log-ratio threshold of the event the broken shared-threshold twin is audited on.

    The event ``{log P/P' > thr}`` with the largest EXPECTED Clopper–Pearson bound at ``n`` runs per input,
    computed from the exact law (:func:`unscaled_exact`, :func:`jaxdp.audit.exact.best_fixed_event`) before
    any run: the event is fixed, not searched.

    Args:
        n: the runs per input the audit will make.
        alpha: the audit's significance level.

    Returns:
        ``thr``, a threshold on the per-pattern log ratio ``log P/P'``.
    """
    from ..audit.exact import best_fixed_event

    _, P, Q, _ = unscaled_exact()
    return best_fixed_event(P, Q, n, alpha=alpha)[0]


def _unscaled_mech(key, losses):
    """The broken twin's sparse-vector answers (``switch_t``, the ``em_draws`` flags) over a ``(T, 2)`` loss array."""
    lrn = shared_threshold_unscaled_experts(_D)
    params = SVExpertsParams(eps_svt=jnp.float32(UNSCALED_EPS_SVT), eta=jnp.float32(UNSCALED_ETA),
                             K=jnp.int32(UNSCALED_K), L=jnp.float32(UNSCALED_L), Lstar=jnp.float32(0.0))
    k_init, k_learn = jax.random.split(key)
    st = lrn.init(k_init, params)

    def body(st, inp):
        t, loss = inp
        st, info = lrn.step(jax.random.fold_in(k_learn, t), st, loss, params)
        return st, info["em_draws"]

    return jax.lax.scan(body, st, (jnp.arange(losses.shape[0]), losses))[1]


def unscaled_pair():
    """The neighbouring inputs of the broken shared-threshold twin's audit (``T = UNSCALED_T`` rounds, ``d = 2``).

    ``D``: every loss 0; ``D'``: both experts take loss 1 in round ``UNSCALED_J`` (common losses: the
    exponential mechanism is uniform on both, only the sparse vector can leak).

    Returns:
        ``(x0, x1)``, float32 ``(UNSCALED_T, 2)`` loss arrays.
    """
    x0 = np.zeros((UNSCALED_T, _D), np.float32)
    x1 = x0.copy()
    x1[UNSCALED_J] = 1.0
    return jnp.asarray(x0), jnp.asarray(x1)


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
        The :class:`jaxdp.audit.AuditReport`.
    """
    from ..accounting.floating import delta_float
    from ..audit import ThresholdEvents, audit
    from ..audit.exact import window_class

    n = n or (1_000_000 if quick else 4_000_000)
    claimed = CLAIMED_EPS / claim_factor
    _, _, _, tab = unscaled_exact()
    table = jnp.asarray(np.nan_to_num(tab, nan=0.0), jnp.float32)

    def stat(flags):
        c, b, e, r = window_class(flags, UNSCALED_J, UNSCALED_K, xp=jnp)
        return table[c, b, e, r]

    x0, x1 = unscaled_pair()
    dfl = (delta_float("categorical", eps=claimed, d=_D, draws=UNSCALED_T + 1)
           + delta_float("laplace", eps=claimed, d=UNSCALED_T + 1))
    return audit(_unscaled_mech, x0, x1, claimed_eps=claimed, events=ThresholdEvents(
        statistic=stat, thresholds=(unscaled_threshold(n),)), n=n, key=jax.random.key(seed),
        name="sparse_vector_experts (shared threshold, unscaled query noise; T=64, K=16)", delta_float=dfl)


# ----------------------------------------------------------------------------- learned events (jaxdp.audit.learned)
_T, _D = 4, 2
_BITS = np.arange(_T + 1, dtype=np.int32)


def _sv_cell(c):
    return jnp.asarray(c).astype(jnp.int32)


def _sv_traj(c):
    """The action sequence x_1..x_5 decoded from the mechanism's cell, as trajectory features."""
    acts = (jnp.asarray(c).astype(jnp.int32) >> _BITS) & 1
    return trajectory_features(_D)(acts)


@functools.lru_cache(maxsize=None)
def sv_experts_family() -> dict:
    """``sparse-vector-experts``' nine pairs and :func:`loss_flip_pairs` on ``T = 4``, ``d = 2`` (one round's
    loss flipped on zero losses, or after expert 1 lost every earlier round)."""
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
_SV_CLASSIFIERS = (Histogram(2 ** (_T + 1), _sv_cell), Logistic(_sv_traj))


def _sv(eps_svt, *, quick, key, name, eps):
    mech = sv_experts_mechanism(eps_svt, 1.0, 1, 0.5)
    n_train, n_sel, n_eval = N_SV[bool(quick)]
    dfl = delta_float("categorical", eps=eps, d=_D, draws=_T + 1) + delta_float("laplace", eps=eps, d=2 * (_T + 1))
    return audit_learned(mech, sv_experts_family(), claimed_eps=eps, key=key, classifiers=_SV_CLASSIFIERS,
                         n_train=n_train, n_select=n_sel, n_eval=n_eval, n_best=1, name=name, delta_float=dfl)


@_register_learned("sparse-vector-experts-learned",
           "REAL Alg. 1 (d=2, T=4, K=1), learned events over 30 neighbouring loss sequences; claimed eps = 2",
           2.0, False)
def _a_sv(*, quick, key, name, eps):
    return _sv(1.0, quick=quick, key=key, name=name, eps=eps)


@_register_learned("sparse-vector-experts-mislabelled-learned",
           "BROKEN: REAL Alg. 1 with sparse-vector noise for eps_svt=1e4 claiming eps = 2, learned events", 2.0, True)
def _a_sv_bad(*, quick, key, name, eps):
    return _sv(1e4, quick=quick, key=key, name=name, eps=eps)
