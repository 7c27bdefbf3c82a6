"""Catalogue of correct and deliberately broken mechanisms, each with a registered audit.

Every entry is ``fn(*, quick: bool = False, seed: int = 0) -> AuditReport``
registered with :func:`jaxdp.registry.register_audit` (``jaxdp audit NAME``,
``jaxdp audit --list``). The correct ones must come out consistent with their
claim; the broken ones must be flagged. Neighbouring inputs are chosen per
mechanism so that the true privacy loss of the broken variant is attained on a
simple event.

Sparse-vector variants follow Lyu, Su, Li 2017, "Understanding the Sparse
Vector Technique for Differential Privacy" (PVLDB 10(6)), Fig. 1, with
``c = 1`` positive answer, sensitivity Δ = 1 and privacy budget ε:

* Alg. 2 = Dwork–Roth Alg. 1 (``svt``): ρ = Lap(2Δ/ε), ν_i = Lap(4Δ/ε), ⊤ and halt. ε-DP.
* ``svt-no-threshold-noise``: ρ = 0 (only query noise Lap(4Δ/ε)). Privacy loss grows
  with the number of ⊥ answers.
* ``svt-small-query-noise`` (Lee–Clifton 2014, Lyu Alg. 4): ε₁ = ε/4, ρ = Lap(Δ/ε₁),
  ν_i = Lap(Δ/ε₂) with ε₂ = 3ε/4. Actually ((1 + 6c)/4)ε-DP.
* ``svt-reports-noisy-value`` (Roth 2011 lecture notes, Lyu Alg. 3): ρ = Lap(2Δ/ε),
  ν_i = Lap(2cΔ/ε); a positive answer is released as the noisy value ``q_i + ν_i``.
  Not ε'-DP for any finite ε'.
* ``svt-no-halt`` (Chen et al. 2015, Lyu Alg. 6): ρ = Lap(2Δ/ε), ν_i = Lap(2Δ/ε),
  answers every query without stopping after the first ⊤. Not ε'-DP for any finite ε'.

The AboveThreshold entries (correct and the two broken twins with the same output) search
the three query-vector pairs of ``SVT_PAIRS``.

Sparse vector with ``c = C_SVT = 4`` positives and ONE threshold noise shared by all of them
(Lyu Alg. 1, Thm 1), claimed ε = ``EPS_SVT``, output the whole answer vector (a cell of ``2^12``):

* ``svt-shared-threshold``: ε₁ = ε₂ = ε/2, ρ = Lap(Δ/ε₁) = Lap(2Δ/ε), ν_i = Lap(2cΔ/ε₂) = Lap(4cΔ/ε). ε-DP.
* ``svt-shared-threshold-unscaled`` (broken): the same shared ρ = Lap(2Δ/ε), but AboveThreshold's
  query noise Lap(4Δ/ε), not scaled with c. Thm 1 with ε₂ = cε/2 gives ((1 + c)ε/2)-DP (5 at
  ε = 2, c = 4), and that is tight: on ``Q0_CSVT = (-1)^8 (+1)^4`` vs ``Q1_CSVT = 0^12`` the answer
  vector ⊥^m ⊤^c has privacy loss → (1 + c)ε/2 as the number m of leading ⊥ grows (the ⊥s pin
  ρ high, where every ⊤ costs the full 2Δ/b_q). At m = 8 (``M_CSVT``) the exact loss of that
  outcome is 3.67 with probability 0.0083 under ``Q0_CSVT`` (quadrature over ρ), a trade-off
  between loss and audit power at 4·10⁵–10⁶ runs; the correct twin's loss on the same outcome is 1.25.
  The second pair ``(0^8, 1^4)`` vs ``(1^8, 0^4)`` is Lyu et al.'s shape for AboveThreshold
  (exact loss 4.51, probability 0.0012).

Other entries: Laplace (correct, and with half the needed scale), the
Gaussian mechanism at (ε, δ) (for a translation-invariant scalar mechanism the pair
``0, 1`` is extremal; audited with one half-line fixed from the exact law and the trade-off curve's μ-GDP
bound, α split between them), the exponential mechanism and report-noisy-max (correct
Lap(2Δ/ε), and with the noise of the monotone case Lap(Δ/(2ε)) four times too small),
both over the ``d = 16`` utility pairs of ``UTILITY_PAIRS``, and the binary-tree counter
(correct, and with node scale 1/ε instead of H/ε).

Every entry passes its mechanism's float δ floor (:func:`jaxdp.privacy.accounting.floating.delta_float`)
to the auditor, so a pure claim is reported as verified only down to that floor.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ..mechanisms import above_threshold, exp_mech, gaussian_mech, gaussian_sigma, laplace_mech, tree_depth
from ..mechanisms.sparse_vector import sparse_vector, sparse_vector_from_scales
from ..mechanisms.tree import tree_init, tree_step
from ...registry import register_audit
from ..accounting.floating import delta_float
from .tradeoff import audit_tradeoff
from .auditor import DEFAULT_ALPHA, AuditReport, HistogramEvents, ThresholdEvents, _identity, audit, audit_mechanism

__all__ = [
    "LEARNED_CATALOGUE", "register_learned_audit",
    "svt_variant", "CATALOGUE", "laplace_half_scale", "noisy_max", "tree_counter_stream", "CSVT_PAIRS",
]

EPS = 1.0          # claimed ε of the Laplace / exponential / tree entries
EPS_SVT = 2.0      # claimed ε of the sparse-vector entries (larger ε: fewer runs to expose the broken ones)
CATALOGUE: dict[str, dict] = {}


def _n(quick: bool, full: int, small: int) -> int:
    return small if quick else full


def _registrar(table: dict):
    """A decorator factory that registers an audit ``fn(quick, key, name, eps)`` in ``table`` and the registry."""

    def register(name: str, description: str, claimed_eps: float, broken: bool):
        def deco(fn):
            @functools.wraps(fn)
            def run(*, quick: bool = False, seed: int = 0, claim_factor: float = 1.0) -> AuditReport:
                # claim_factor > 1 audits the over-claim claimed_eps / claim_factor (power measurements)
                return fn(quick=quick, key=jax.random.key(seed), name=name, eps=claimed_eps / claim_factor)

            table[name] = dict(fn=run, claimed_eps=claimed_eps, broken=broken, description=description)
            return register_audit(name, description, claimed_eps=claimed_eps, broken=broken)(run)

        return deco

    return register


_register = _registrar(CATALOGUE)


def _on_pair(mech, x0, x1, n: tuple, kind: str, d: int = 1, **kw):
    """The audit ``fn(quick, key, name, eps)`` of ``mech`` on one pair, ``n = (full, quick)`` runs per input."""
    def fn(*, quick, key, name, eps):
        return audit(mech, x0, x1, claimed_eps=eps, n=_n(quick, *n), key=key, name=name,
                     delta_float=delta_float(kind, eps=eps, d=d), **kw)
    return fn


def _on_pairs(mech, pairs: dict, events, n: tuple, kind: str, d: int):
    """The audit ``fn(quick, key, name, eps)`` of ``mech`` on every pair of ``pairs``, every event tested (no search)."""
    def fn(*, quick, key, name, eps):
        return audit_mechanism(mech, pairs, events, claimed_eps=eps, n=_n(quick, *n), key=key, name=name, search=0.0,
                               delta_float=delta_float(kind, eps=eps, d=d))
    return fn


# ----------------------------------------------------------------------------- Laplace / Gaussian
_laplace = functools.partial(laplace_mech, sensitivity=1.0, eps=EPS)


def laplace_half_scale(key, x):
    """BROKEN Laplace mechanism: noise of scale ``Δ/(2ε)``, half of what ε-DP needs (it is 2ε-DP).

    Sensitivity ``Δ = 1`` and ``ε = EPS``; the audit ``laplace-half-scale`` must flag it.

    Args:
        key: JAX PRNG key.
        x: the query value (scalar or array; the neighbouring inputs are 0 and 1).

    Returns:
        ``x + Lap(1/(2 EPS))``, elementwise, of the shape of ``x``.
    """
    return x + 0.5 / EPS * jax.random.laplace(key, jnp.shape(x))


DELTA_G = 1e-5
SIGMA_G = gaussian_sigma(1.0, EPS, DELTA_G)


_gaussian = functools.partial(gaussian_mech, sigma=SIGMA_G)
_gaussian_small = functools.partial(gaussian_mech, sigma=SIGMA_G / 4)


def _a_gaussian(*, quick, key, name, eps):
    # Two tests, each at level alpha/2 (a union bound: the reported bound, the larger, holds with probability
    # >= 1 - alpha jointly). (1) the half-line {s < c} with the best expected bound at n
    # (jaxdp.privacy.audit.exact.gaussian_best_threshold), fixed before any run: valid for any implementation, but a single
    # (eps, delta) event needs its probability near delta, ~1e8 runs per input for 1.5x. (2) simultaneous
    # trade-off-curve bounds with the mu-GDP fit on fresh runs (jaxdp.privacy.audit.tradeoff.audit_tradeoff), the
    # instrument for a mechanism that adds Gaussian noise (its trade-off curve is G_{1/sigma}). The mechanism's
    # exact eps(1e-5) is 0.742 (Balle & Wang, Thm 8), so no audit of it can detect an over-claim below 1.35x.
    import dataclasses

    from .exact import gaussian_best_threshold

    half = DEFAULT_ALPHA / 2
    k_event, k_curve = jax.random.split(key)
    n = _n(quick, 10_000_000, 1_000_000)
    dfl = delta_float("gaussian", eps=eps)
    c = gaussian_best_threshold(SIGMA_G, DELTA_G + dfl, n, alpha=half)[0]
    event = audit(_gaussian, 0.0, 1.0, claimed_eps=eps, claimed_delta=DELTA_G, n=n, events=ThresholdEvents(
        thresholds=(c,)), key=k_event, name=name, delta_float=dfl, confidence=1.0 - half)
    n_sel, n_eval = N_GAUSS[bool(quick)]
    curve = audit_tradeoff(_gaussian, 0.0, 1.0, claimed_eps=eps, claimed_delta=DELTA_G, key=k_curve,
                           statistic=lambda s: s, n_select=n_sel, n_eval=n_eval, gdp=True, alpha=half, name=name,
                           delta_float=dfl)
    best, other = (curve, event) if curve.eps_lower > event.eps_lower else (event, curve)
    note = (f"alpha split in two: fixed half-line eps_lower = {event.eps_lower:.4f}, trade-off curve (mu-GDP) "
            f"eps_lower = {curve.eps_lower:.4f}; reported: the larger")
    return dataclasses.replace(best, violation=bool(best.violation or other.violation), confidence=1.0 - DEFAULT_ALPHA,
                               family=f"{event.family} + {curve.family}", notes=tuple(best.notes) + (note,))


# ----------------------------------------------------------------------------- exponential / noisy max
U0 = np.array([1.0, 0.0, 0.0, 0.0], np.float32)
U1 = np.array([0.0, 1.0, 1.0, 1.0], np.float32)
D_UTIL = 16      # utility vectors of the audited selection mechanisms (more items: a larger privacy loss)
_E0 = np.eye(D_UTIL, dtype=np.float32)[0]
#: neighbouring utility vectors (every coordinate moves by at most 1); the auditor searches them all
UTILITY_PAIRS = {
    "e0 vs 1-e0": (_E0, 1.0 - _E0),
    "0 vs e0": (np.zeros(D_UTIL, np.float32), _E0),
    "0 vs 1-e0": (np.zeros(D_UTIL, np.float32), 1.0 - _E0),
}


_exp = functools.partial(exp_mech, sensitivity=1.0, eps=EPS)


def noisy_max(key, u, scale):
    """Report-noisy-max: ``argmax(u + Lap(scale))``.

    ε-DP for sensitivity-1 utilities with ``scale = 2/ε`` (the audit ``noisy-max``); ``scale = 1/(2ε)``, the
    noise of the monotone case four times too small, is the broken ``noisy-max-wrong-scale``.

    Args:
        key: JAX PRNG key.
        u: the ``(d,)`` utilities of the items.
        scale: the scale of the i.i.d. Laplace noise added to each utility.

    Returns:
        The index (int32 scalar) of the item with the largest noisy utility.
    """
    return jnp.argmax(u + scale * jax.random.laplace(key, u.shape)).astype(jnp.int32)


_rnm_good = functools.partial(noisy_max, scale=2.0 / EPS)
_rnm_bad = functools.partial(noisy_max, scale=0.5 / EPS)
# ----------------------------------------------------------------------------- sparse vector
def svt_variant(key, queries, threshold, *, b_thr, b_q, halt=True, report_value=False):
    """AboveThreshold-like mechanism with arbitrary noise scales (for the catalogue).

    Query ``i`` answers ⊤ when ``q_i + ν_i >= threshold + ρ``, with ``ρ ~ Lap(b_thr)`` drawn once and
    ``ν_i ~ Lap(b_q)``.

    Args:
        key: typed PRNG key.
        queries: the ``(k,)`` query values ``q_i``.
        threshold: the threshold.
        b_thr: the Laplace scale of the threshold noise ``ρ``.
        b_q: the Laplace scale of each query's noise ``ν_i``.
        halt: stop at the first ⊤ (else answer every query).
        report_value: with ``halt``, also release the noisy value of that query.

    Returns:
        ``halt=True``: the index of the first ⊤ (``k`` if none); with ``report_value`` also the noisy value
        ``q_i + ν_i`` of that query (``+inf`` if none). ``halt=False``: the whole answer vector as an int code
        ``sum_i [⊤_i] 2^i``.
    """
    k_thr, k_q = jax.random.split(key)
    rho = b_thr * jax.random.laplace(k_thr, ())
    nu = b_q * jax.random.laplace(k_q, queries.shape)
    noisy = queries + nu
    above = noisy >= threshold + rho
    k = queries.shape[0]
    if not halt:
        return jnp.sum(above.astype(jnp.int32) << jnp.arange(k, dtype=jnp.int32))
    idx = jnp.where(jnp.any(above), jnp.argmax(above), k).astype(jnp.int32)
    if report_value:
        return idx, jnp.where(idx < k, noisy[jnp.minimum(idx, k - 1)], jnp.inf)
    return idx


M_SVT = 8                                               # ⊥ queries before the last one
Q0 = np.array([0.0] * M_SVT + [1.0], np.float32)          # neighbours: every query moves by 1
Q1 = np.array([1.0] * M_SVT + [0.0], np.float32)
Q1_VALUE = np.array([1.0] * M_SVT + [0.0], np.float32)
Q0_VALUE = np.array([0.0] * (M_SVT + 1), np.float32)
M_NOHALT = 4
Q0_NOHALT = np.zeros(2 * M_NOHALT, np.float32)          # ⊥ on the first half, ⊤ on the second
Q1_NOHALT = np.array([1.0] * M_NOHALT + [-1.0] * M_NOHALT, np.float32)
N_SVT = (1_000_000, 400_000)


_svt_correct = functools.partial(above_threshold, threshold=0.0, eps=EPS_SVT)


_svt_nothr = functools.partial(svt_variant, threshold=0.0, b_thr=0.0, b_q=4.0 / EPS_SVT)
_svt_small = functools.partial(svt_variant, threshold=0.0, b_thr=4.0 / EPS_SVT, b_q=4.0 / (3.0 * EPS_SVT))
_svt_value = functools.partial(svt_variant, threshold=0.0, b_thr=2.0 / EPS_SVT, b_q=2.0 / EPS_SVT, report_value=True)
_svt_nohalt = functools.partial(svt_variant, threshold=0.0, b_thr=2.0 / EPS_SVT, b_q=2.0 / EPS_SVT, halt=False)


#: neighbouring query vectors for AboveThreshold (every query moves by at most Δ = 1)
SVT_PAIRS = {
    "Q0 vs Q1": (Q0, Q1),
    "0 vs 1": (np.zeros(M_SVT + 1, np.float32), np.ones(M_SVT + 1, np.float32)),
    "0 vs e_last": (np.zeros(M_SVT + 1, np.float32), np.eye(M_SVT + 1, dtype=np.float32)[-1]),
}


def _value_stat(out):
    idx, val = out
    return jnp.where(idx == M_SVT, val, 1e9)


# ----------------------------------------------------------------------------- sparse vector, c positives
C_SVT = 4                                                   # positives of the shared-threshold entries
M_CSVT = 8                                                  # ⊥ queries before the c positives
K_CSVT = M_CSVT + C_SVT
Q0_CSVT = np.array([-1.0] * M_CSVT + [1.0] * C_SVT, np.float32)   # ⊥ queries low, ⊤ queries high
Q1_CSVT = np.zeros(K_CSVT, np.float32)                              # every query moved by Δ = 1 the other way
#: neighbouring query vectors for the shared-threshold sparse vector (every query moves by at most Δ = 1)
CSVT_PAIRS = {
    "(-1)^8 (+1)^4 vs 0^12": (Q0_CSVT, Q1_CSVT),
    "0^8 1^4 vs 1^8 0^4": (np.array([0.0] * M_CSVT + [1.0] * C_SVT, np.float32),
                           np.array([1.0] * M_CSVT + [0.0] * C_SVT, np.float32)),
}
_CSVT_BITS = (2 ** np.arange(K_CSVT)).astype(np.int32)


def _answer_code(answers):
    """The answer vector as an int ``sum_i [⊤_i] 2^i`` (the mechanism's whole output)."""
    return jnp.sum(answers.astype(jnp.int32) * _CSVT_BITS)


def _csvt_correct(key, q):
    return _answer_code(sparse_vector(key, q, 0.0, EPS_SVT, C_SVT))


def _csvt_unscaled(key, q):
    # BROKEN: the threshold noise Lap(2/eps) is shared by the c positives, the query noise stays Lap(4/eps)
    return _answer_code(sparse_vector_from_scales(key, q, 0.0, 2.0 / EPS_SVT, 4.0 / EPS_SVT, C_SVT))


@functools.lru_cache(maxsize=None)
def csvt_exact_event(n: int, eps: float = EPS_SVT):
    """The pair of ``CSVT_PAIRS`` and the event ``{log P/P' > thr}`` of the correct mechanism's EXACT answer-vector law
    (:func:`jaxdp.privacy.audit.exact.csvt_answer_law`, quadrature over the threshold noise) with the best expected
    Clopper–Pearson bound at ``n`` runs per input: ``(label, log-ratio table over the 2^12 codes (the favoured
    input over the other), thr, expected bound, exact loss of the event)``. The largest exact loss over both pairs is 1.35 (pure, on an outcome of
    probability 4e-4), so no audit on these pairs detects an over-claim of ε = 2 below 1.48x.

    Args:
        n: runs per input of the audit the event is chosen for.
        eps: the claimed ε.

    Returns:
        ``(label, log-ratio table, thr, expected bound, exact loss of the event)``.
    """
    from .exact import align, best_fixed_event, csvt_answer_law

    b_thr, b_q = 2.0 / EPS_SVT, 4.0 * C_SVT / EPS_SVT
    dfl = delta_float("laplace", eps=eps, d=K_CSVT + 1)
    best = None
    for label, (q0, q1) in CSVT_PAIRS.items():
        codes, P, Q = align(csvt_answer_law(q0, 0.0, b_thr, b_q, C_SVT), csvt_answer_law(q1, 0.0, b_thr, b_q, C_SVT))
        for sign in (1.0, -1.0):       # the event may favour either input; the auditor tests both directions
            a, b = (P, Q) if sign > 0 else (Q, P)
            thr, bound, _, _, loss = best_fixed_event(a, b, n, delta=dfl, alpha=1e-7 / 2)
            if best is None or bound > best[3]:
                table = np.zeros(2 ** K_CSVT)
                with np.errstate(divide="ignore"):
                    table[codes] = np.log(a) - np.log(b)
                best = (label, table, thr, bound, loss)
    return best


def _a_csvt(*, quick, key, name, eps):
    n = _n(quick, *N_SVT)
    label, table, thr, _, _ = csvt_exact_event(n)
    table = jnp.asarray(table, jnp.float32)
    x0, x1 = CSVT_PAIRS[label]
    return audit(_csvt_correct, jnp.asarray(x0), jnp.asarray(x1), claimed_eps=eps, events=ThresholdEvents(
        statistic=lambda code: table[code], thresholds=(thr,)), n=n, key=key, name=name,
        delta_float=delta_float("laplace", eps=eps, d=K_CSVT + 1))


# ----------------------------------------------------------------------------- binary tree counter
T_TREE = 7
H_TREE = tree_depth(T_TREE)


def tree_counter_stream(key, a, scale):
    """All noisy prefix sums of the binary-tree counter run over a stream.

    Each step releases ``c_t`` from :func:`jaxdp.privacy.mechanisms.tree.tree_step` with Laplace node noise of scale
    ``scale``, on a tree of ``H_TREE`` levels (streams of at most ``T_TREE`` items); step ``t`` uses the key
    ``fold_in(key, t)``. Node scale ``H/ε`` is ε-DP (the audit ``tree-counter``); ``1/ε`` is the broken twin.

    Args:
        key: JAX PRNG key.
        a: the ``(T,)`` stream of items, ``T <= T_TREE``.
        scale: the Laplace scale ``b`` of every tree node.

    Returns:
        The ``(T,)`` released prefix sums ``c_1, ..., c_T``.
    """
    def body(st, xs):
        t, x = xs
        return tree_step(jax.random.fold_in(key, t), st, x, scale)

    _, cs = jax.lax.scan(body, tree_init(H_TREE), (jnp.arange(a.shape[0]), a))
    return cs


def _tree_stat(cs):
    # item 1 sits in the nodes released as c_1, c_2 (= node [1,2]) and c_4 (= node [1..4]);
    # a capped sum of those noisy nodes is a sharp test of the change a_1: 0 -> 1
    return jnp.sum(jnp.clip(cs[jnp.array([0, 1, 3])], 0.0, 1.0))


_tree_good = functools.partial(tree_counter_stream, scale=H_TREE / EPS)
_tree_bad = functools.partial(tree_counter_stream, scale=1.0 / EPS)
A0 = np.zeros(T_TREE, np.float32)
A1 = np.eye(T_TREE, dtype=np.float32)[0]


# ============================================================================= learned-event and trade-off audits
# Registered audits that use the learned-event and trade-off auditors (``jaxdp audit NAME``).
#
# * ``gaussian-tradeoff``: the catalogue's Gaussian mechanism (σ from the zCDP calibration at
#   (ε, δ) = (1, 1e-5), sensitivity 1) on the pair 0/1, audited through simultaneous trade-off-curve
#   bounds (:func:`jaxdp.privacy.audit.tradeoff.audit_tradeoff`) with the output itself as the score and the
#   μ-GDP fit: the mechanism adds Gaussian noise, so its trade-off curve is ``G_{1/σ}`` and the
#   GDP-derived ε(δ) is a valid lower bound on its ε(δ). Its exact ε at δ = 1e-5 is 0.742 (the
#   calibration is loose by 1.35x), so no valid auditor can detect an over-claim below 1.35x.
#   ``gaussian-quarter-sigma-tradeoff``: the broken twin (σ/4).
# * ``sparse-vector-experts-learned`` (registered by :mod:`jaxdp.experts.audits` with this module's ``_register``):
#   REAL Alg. 1 (d = 2, T = 4, K = 1, claimed ε = 2, the setting
#   of ``sparse-vector-experts``) with learned events over a larger family of neighbouring loss
#   sequences (:func:`jaxdp.privacy.audit.pairs.loss_flip_pairs` and the family of ``sparse-vector-experts``):
#   a histogram classifier on the whole action sequence and a logistic regression on trajectory
#   features, chosen per pair on selection runs, the best candidate bounded on fresh runs.
#   ``sparse-vector-experts-mislabelled-learned``: the broken twin (sparse-vector noise for
#   ``eps_svt = 1e4``).
#
# Every entry takes ``(quick, seed, claim_factor)`` like the catalogue's and passes the mechanism's
# float δ floor.

LEARNED_CATALOGUE: dict[str, dict] = {}


def register_learned_audit(name: str, description: str, claimed_eps: float, broken: bool):
    """A decorator registering a learned-event or trade-off audit ``fn(quick, key, name, eps)`` in
    :data:`LEARNED_CATALOGUE` and the registry (``jaxdp audit NAME``).

    Args:
        name: the audit's name.
        description: one line for ``jaxdp audit --list``.
        claimed_eps: the ε the audited mechanism claims.
        broken: whether the mechanism is a broken twin (its audit must refute the claim).

    Returns:
        The decorator.
    """
    return _registrar(LEARNED_CATALOGUE)(name, description, claimed_eps, broken)


# ----------------------------------------------------------------------------- Gaussian, trade-off curve
#: runs per input (selection, fresh evaluation) at quick and full size
N_GAUSS = {True: (200_000, 2_000_000), False: (1_000_000, 20_000_000)}


def _gauss(mech, *, quick, key, name, eps):
    n_sel, n_eval = N_GAUSS[bool(quick)]
    return audit_tradeoff(mech, 0.0, 1.0, claimed_eps=eps, claimed_delta=DELTA_G, key=key, statistic=_identity,
                          n_select=n_sel, n_eval=n_eval, gdp=True, name=name,
                          delta_float=delta_float("gaussian", eps=eps))


_tree: dict = dict(n=(400_000, 100_000), kind="laplace", d=T_TREE, events=ThresholdEvents(statistic=_tree_stat))
_svt: dict = dict(pairs=SVT_PAIRS, events=HistogramEvents(M_SVT + 2), n=N_SVT, kind="laplace", d=M_SVT + 2)
_csvt: dict = dict(n=N_SVT, kind="laplace", d=K_CSVT + 1)

#: the catalogue, in registration order: (name, description, claimed ε, broken, audit fn(quick, key, name, eps))
for _entry in (
    ("laplace", "Laplace mechanism, sensitivity 1, scale 1/eps (correct)", EPS, False,
     _on_pair(_laplace, 0.0, 1.0, (1_000_000, 200_000), "laplace")),
    ("laplace-half-scale", "Laplace with half the needed scale (broken: 2*eps-DP)", EPS, True,
     _on_pair(laplace_half_scale, 0.0, 1.0, (1_000_000, 200_000), "laplace")),
    ("gaussian", "Gaussian mechanism, zCDP calibration at (eps, delta) = (1, 1e-5) (correct); one half-line "
                 "event fixed from the exact law and the trade-off curve's mu-GDP bound, alpha split between "
                 "them (exact eps(1e-5) = 0.742)", EPS, False, _a_gaussian),
    ("gaussian-quarter-sigma", "Gaussian with sigma/4 (broken at (1, 1e-5))", EPS, True,
     _on_pair(_gaussian_small, 0.0, 1.0, (1_000_000, 200_000), "gaussian", claimed_delta=DELTA_G)),
    ("exp-mech", "Exponential mechanism, utility sensitivity 1 (correct)", EPS, False,
     _on_pairs(_exp, UTILITY_PAIRS, HistogramEvents(D_UTIL), (1_000_000, 200_000), "gumbel", D_UTIL)),
    ("noisy-max", "Report-noisy-max with Lap(2/eps) (correct)", EPS, False,
     _on_pairs(_rnm_good, UTILITY_PAIRS, HistogramEvents(D_UTIL), (1_000_000, 200_000), "laplace", D_UTIL)),
    ("noisy-max-wrong-scale", "Report-noisy-max with Lap(1/(2 eps)) (broken: noise 4x too small)", EPS, True,
     _on_pairs(_rnm_bad, UTILITY_PAIRS, HistogramEvents(D_UTIL), (1_000_000, 200_000), "laplace", D_UTIL)),
    ("svt", "AboveThreshold, Dwork-Roth noise Lap(2/eps), Lap(4/eps) (correct; Lyu et al. Alg. 2)", EPS_SVT, False,
     _on_pairs(_svt_correct, **_svt)),
    ("svt-no-threshold-noise", "AboveThreshold without threshold noise (broken)", EPS_SVT, True,
     _on_pairs(_svt_nothr, **_svt)),
    ("svt-small-query-noise",
     "AboveThreshold with query noise too small (Lee-Clifton 2014; Lyu et al. Alg. 4; broken: 1.75 eps)", EPS_SVT, True,
     _on_pairs(_svt_small, **_svt)),
    ("svt-reports-noisy-value",
     "Sparse vector answering with the noisy value q+nu (Roth 2011; Lyu et al. Alg. 3; broken: not DP)", EPS_SVT, True,
     _on_pair(_svt_value, Q0_VALUE, Q1_VALUE, N_SVT, "laplace", M_SVT + 2, events=ThresholdEvents(statistic=_value_stat))),
    ("svt-no-halt",
     "Sparse vector that does not halt after the first positive (Chen et al. 2015; Lyu et al. Alg. 6; broken)",
     EPS_SVT, True, _on_pair(_svt_nohalt, Q0_NOHALT, Q1_NOHALT, N_SVT, "laplace", 2 * M_NOHALT + 1,
                             events=HistogramEvents(2 ** (2 * M_NOHALT)))),
    ("svt-shared-threshold",
     "Sparse vector with c=4 positives sharing one threshold noise Lap(2/eps), query noise Lap(4c/eps) "
     "(correct; Lyu et al. Alg. 1); one event fixed from the exact law", EPS_SVT, False, _a_csvt),
    ("svt-shared-threshold-unscaled",
     "Sparse vector reusing its threshold noise across c=4 positives with query noise Lap(4/eps) not scaled "
     "with c (broken: (1+c) eps/2)", EPS_SVT, True,
     _on_pairs(_csvt_unscaled, CSVT_PAIRS, HistogramEvents(2 ** K_CSVT), **_csvt)),
    ("tree-counter", "Binary-tree counter, Laplace node scale H/eps (correct)", EPS, False,
     _on_pair(_tree_good, A0, A1, **_tree)),
    ("tree-counter-no-depth", "Binary-tree counter with node scale 1/eps instead of H/eps (broken)", EPS, True,
     _on_pair(_tree_bad, A0, A1, **_tree)),
):
    _register(*_entry[:4])(_entry[4])

register_learned_audit("gaussian-tradeoff",
                       "Gaussian mechanism at (1, 1e-5), trade-off-curve bounds with the mu-GDP fit (correct)",
                       EPS, False)(functools.partial(_gauss, _gaussian))
register_learned_audit("gaussian-quarter-sigma-tradeoff",
                       "Gaussian with sigma/4 at (1, 1e-5), trade-off-curve bounds (broken)",
                       EPS, True)(functools.partial(_gauss, _gaussian_small))
