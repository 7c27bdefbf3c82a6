r"""Empirical privacy audits of the private bandit learners (docs/algorithms/bandits.md#compare-and-audit).

Neighbouring inputs are loss sequences that differ in one round's loss vector (replace-one); the
output audited is the sequence of played arms ``x_1, ..., x_{T+1}`` (everything the learner
releases). Each audit runs at a small size (``K = 2`` arms, a few rounds) where the learner's
certificate is as tight as its structure allows, so that a broken variant has nowhere to hide:

* ``dp-exp3`` (claimed ε = 1): DP-EXP3 (``τ = 1``) with the planner's noise ``b = 1/ε`` and clip
  ``B``, ``T = 2``, on all-zero losses vs round 1's loss vector set to ``1``. Privacy does not depend
  on ``η`` or ``γ``; with ``η = 20``, ``γ = 10^{-3}`` the next arm reveals the sign of the noisy
  loss (it stays iff ``ℓ + Lap(b) < 0``, up to a sigmoid of width ``1/(4η)``), so the event "stay"
  has probability ``1/2`` vs ``e^{-ε}/2``: the privacy loss is ``ε`` itself (tight).
* ``dp-exp3-quarter-scale`` (BROKEN): the same with Laplace scale ``b/4``: ``4ε``-DP. Flagged.
* ``ldp-ucb`` (claimed ε = 2): LDP-UCB with ``b = 1/ε``, ``T = 2``. Both arms are pulled once; the
  third action is ``argmax(r_a + Z_a)`` (equal bonuses). Arm 1 loses every round but round 1, whose
  loss vector is ``(1, 0)`` vs ``(0, 1)`` (whichever arm is pulled first, the change moves
  ``r_0 - r_1`` by 1 in the same direction). The event "third action = arm 1" has probability
  ``1/2`` vs ``P(Z_0 - Z_1 < -1) = (1 + ε/2) e^{-ε}/2``: privacy loss ``ε - ln(1 + ε/2) = 1.31``,
  the most an event on this output can show (the comparison with the other arm's noise costs the
  ``ln(1 + ε/2)``).
* ``dp-ucb-tree`` (claimed ε = 4): DP-UCB with per-arm trees for ``T_max = T = 2`` (``H = 2``
  levels, node scale ``b = H/ε``), the pairs and event of ``ldp-ucb``. In two rounds only the leaf
  holding the changed reward is ever released (the ledger also pays for its parent), so the loss on
  this output is at most ``ε/2 - ln(1 + ε/4) = 1.31``: the H-fold composition of the tree is loose
  on short runs.
* ``dp-ucb-tree-no-noise`` (BROKEN): the same learner with node scale 0 (no tree noise): its
  third action is a deterministic function of the rewards. Flagged.
* ``dp-se`` (claimed ε = 1): DP-SE with ``β = 0.9`` (first epoch ``R = 93`` pulls per arm),
  ``T = 2R + 1``. Arm 0 always pays reward 1 (loss 0), arm 1 reward ``1 - c`` with
  ``c = 1/2 - 2/(εR)``, so that arm 1's elimination at the end of epoch 1,
  ``Z_0 - Z_1 > 1/2 - (μ̄_0 - μ̄_1)`` with ``Z ~ Lap(1/(εR))``, sits two noise scales out in the
  tail; round 1's loss vector is ``(1, 0)`` vs ``(0, 1)`` (either pull moves ``μ̄_0 - μ̄_1`` by
  ``1/R``, one sensitivity). The event "arm 1 eliminated" (the two actions after epoch 1 are arm 0)
  has privacy loss ``ln 2.14 = 0.76``: with ``P(Z_0 - Z_1 > ks) = e^{-k}(1 + k/2)/2`` and
  ``s = 1/(εR)`` (a changed reward moves a mean by ``1/R``, one scale at ε = 1), its thresholds
  are ``2s`` or ``1.48s`` vs ``3s`` or ``2.48s``, depending on which arm round 1 pulls.

Exact laws (``jaxdp.privacy.audit.exact`` style, docs/guide/auditing.md#exact): :func:`index_policy_law` (LDP-UCB and
DP-UCB at ``K = 2``, ``T = 2``: the third action is the argmax of two rewards plus independent Laplace noise) and
:func:`dp_se_law` (DP-SE's first epoch at ``K = 2``: the round-robin order and the elimination outcome) and
:func:`dp_exp3_law` (DP-EXP3 at ``K = 2``, ``T = 2``, by nested quadrature over the two released noises) give the
law of the audited output on any losses, and :func:`exact_audit_eps` the exact privacy loss on an audit's own
pairs, i.e. the most ANY valid audit of those pairs can show.

Also here: :func:`bandit_events`, the events ``jaxdp compare --problem bandits`` adds to its audit
of a learner of yours (the replays of the arm played in a changed round, and whether the next
round stays on it: what bandit feedback reveals).
"""
from __future__ import annotations

import functools
from typing import Sequence, Tuple

import jax
import jax.numpy as jnp
import numpy as np

from ..privacy.accounting.floating import delta_float
from ..privacy.audit import SearchEvents, audit_mechanism
from ..privacy.audit.learners import _count, action_code, learner_mechanism, loss_neighbours
from ..registry import register_audit
from .elimination import DPSEParams, dp_se
from .exp3 import DPExp3Params, dp_exp3
from .planners import plan_dp_exp3, plan_dp_ucb_tree, plan_ldp_ucb
from .ucb import DPUCBParams, LDPUCBParams, dp_ucb_tree, ldp_ucb

__all__ = ["AUDITS", "bandit_events", "replays", "stays", "audit_dp_exp3", "audit_ldp_ucb", "audit_dp_ucb_tree",
           "audit_dp_se", "laplace_difference_sf", "index_policy_law", "dp_se_law", "dp_exp3_law", "exact_audit_eps",
           "tightness_cases"]

f32 = jnp.float32
K = 2
#: name -> (claimed eps, broken)
AUDITS: dict = {}


def replays(t: int):
    """Audit statistic: how often the arm played in round ``t`` is played again afterwards.

    Args:
        t: the round (0-indexed) whose arm is followed.

    Returns:
        ``actions -> float32``: for an action sequence ``acts``, the number of ``s > t`` with ``acts[s] == acts[t]``.
    """
    def f(acts):
        return jnp.sum(acts[t + 1:] == acts[t]).astype(f32)
    return f


def stays(t: int):
    """Audit statistic: whether the round after ``t`` plays the arm of round ``t``.

    Args:
        t: the round (0-indexed); ``t + 1`` must be a valid index of the action sequence.

    Returns:
        ``actions -> float32``: 1 if ``acts[t + 1] == acts[t]``, else 0.
    """
    def f(acts):
        return (acts[t + 1] == acts[t]).astype(f32)
    return f


def bandit_events(K: int, T: int, rounds: Sequence[int]) -> list:
    """The events of a bandit learner's audit (``jaxdp compare --problem bandits``).

    The number of rounds playing each arm (the first 8 arms), the :func:`replays` of the arm played in each
    changed round and whether the next round :func:`stays` on it, and the whole action sequence as a cell
    where ``K^(T+1) <= 4096``.

    Args:
        K: the number of arms.
        T: the number of rounds (the action sequence has ``T + 1`` entries).
        rounds: the rounds (0-indexed) where the neighbouring loss sequences differ.

    Returns:
        A list of :class:`jaxdp.privacy.audit.SearchEvents`.
    """
    ev = [SearchEvents(statistic=_count(j)) for j in range(min(K, 8))]
    for t in rounds:
        ev += [SearchEvents(statistic=replays(int(t))), SearchEvents(statistic=stays(int(t)))]
    if K ** (T + 1) <= 4096:
        ev.append(SearchEvents(cell=action_code(K), n_cells=K ** (T + 1)))
    return ev


def _n(quick: bool, n) -> int:
    return int(n) if n is not None else (200_000 if quick else 1_000_000)


def _register(name: str, description: str, claimed_eps: float, broken: bool = False):
    def deco(fn):
        @functools.wraps(fn)
        def run(*, quick: bool = False, seed: int = 0, n=None, claim_factor: float = 1.0):
            # claim_factor > 1 audits the over-claim claimed_eps / claim_factor (power measurements)
            return fn(quick=quick, key=jax.random.key(seed), n=_n(quick, n), name=name,
                      eps=claimed_eps / claim_factor)

        AUDITS[name] = (claimed_eps, broken)
        return register_audit(name, description, claimed_eps=claimed_eps, broken=broken)(run)

    return deco


def _audit(learner, params, pairs, events, draws: int, *, key, n, name, eps):
    """Audit ``learner`` on ``pairs`` (float δ floor: ``draws`` Laplace draws)."""
    return audit_mechanism(learner_mechanism(learner, params), pairs, events, claimed_eps=eps, n=n, key=key, name=name,
                           delta_float=delta_float("laplace", eps=eps, draws=draws))


# --------------------------------------------------------------------------- DP-EXP3

EPS_EXP3 = 1.0
T_EXP3 = 2


def _exp3_setting(scale_factor: float = 1.0):
    plan = plan_dp_exp3(eps=EPS_EXP3, T=T_EXP3, d=K, tau=1)
    p = plan.params
    # privacy rests on b alone; a large eta makes the next arm reveal the sign of the noisy loss
    return DPExp3Params(f32(20.0), f32(1e-3), f32(p["b"] * scale_factor), f32(max(p["B"], 1.0)), jnp.int32(1))


def _audit_exp3(*, key, n, name, eps, scale_factor):
    ev = [SearchEvents(statistic=stays(0)), SearchEvents(cell=action_code(K), n_cells=K ** (T_EXP3 + 1))]
    return _audit(dp_exp3(K), _exp3_setting(scale_factor), loss_neighbours(T_EXP3, K, rounds=(0,)), ev, T_EXP3,
                  key=key, n=n, name=name, eps=eps)


@_register("dp-exp3", "DP-EXP3 (K=2, T=2, planner noise b = 1/eps, eta = 20): the stay event is tight; claimed eps = 1",
           EPS_EXP3)
def audit_dp_exp3(*, quick, key, n, name, eps):
    """Registered audit ``dp-exp3``: DP-EXP3 (``τ = 1``, ``K = 2``, ``T = 2``) with the planner's noise ``b = 1/ε``.

    ``η = 20``, ``γ = 10^{-3}``, so the event "round 2 stays on round 1's arm" has probability ``1/2`` vs
    ``e^{-ε}/2`` on all-zero losses vs round 1's loss vector set to 1: tight at the claim ε = 1 (module docstring).

    Called as registered, ``audit_dp_exp3(quick=..., seed=..., n=..., claim_factor=...)``; the wrapper passes
    the body ``key = jax.random.key(seed)``, the registered ``name`` and ``eps = 1 / claim_factor``.

    Args:
        quick: with ``n`` unset, 200 000 runs per input instead of 1 000 000.
        seed: the seed of the audit's key.
        n: runs per input (``None``: by ``quick``).
        claim_factor: audit the over-claim ``1 / claim_factor`` (power measurements; the noise stays that of ε = 1).
        key, name, eps: what the wrapped body receives: the key, the report's name, the ε audited.

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    return _audit_exp3(key=key, n=n, name=name, eps=eps, scale_factor=1.0)


@_register("dp-exp3-quarter-scale", "DP-EXP3 with its Laplace scale divided by 4 (broken: 4 eps-DP; must be flagged)",
           EPS_EXP3, broken=True)
def _audit_dp_exp3_quarter(*, quick, key, n, name, eps):
    return _audit_exp3(key=key, n=n, name=name, eps=eps, scale_factor=0.25)


# --------------------------------------------------------------------------- UCB-type: LDP-UCB and DP-UCB (tree)

T_UCB = 2


def _ucb_pairs(T: int):
    """Arm 1 loses every round but round 1, whose loss vector is ``(1, 0)`` vs ``(0, 1)``."""
    base = np.zeros((T, K), np.float32)
    base[:, 1] = 1.0
    eye = np.eye(K, dtype=np.float32)
    return loss_neighbours(T, K, rounds=(0,), values=[eye[0], eye[1]], base=base)


def _ucb_events(T: int):
    return [SearchEvents(statistic=lambda a: a[T].astype(f32)),
            SearchEvents(cell=action_code(K), n_cells=K ** (T + 1))]


EPS_LDP = 2.0


@_register("ldp-ucb", "LDP-UCB (K=2, T=2, b = 1/eps): third action = argmax of two noisy rewards; claimed eps = 2",
           EPS_LDP)
def audit_ldp_ucb(*, quick, key, n, name, eps):
    """Registered audit ``ldp-ucb``: LDP-UCB (``K = 2``, ``T = 2``, ``b = 1/ε`` at the claim ε = 2).

    Both arms are pulled once and the third action is the arm of the larger noisy reward; round 1's loss
    vector is ``(1, 0)`` vs ``(0, 1)``, arm 1 losing every other round. The event "third action = arm 1" has
    privacy loss ``ε - ln(1 + ε/2) = 1.31``, the most any event on this output can show (module docstring).

    Called as registered, like :func:`audit_dp_exp3`, with ``eps = 2 / claim_factor``.

    Args:
        quick, seed, n, key, name, eps: as in :func:`audit_dp_exp3`.
        claim_factor: audit the over-claim ``2 / claim_factor`` (the learner's noise stays that of ε = 2).

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    b = plan_ldp_ucb(eps=EPS_LDP, T=T_UCB, d=K).params["b"]   # the noise of the registered claim
    return _audit(ldp_ucb(K), LDPUCBParams(f32(b)), _ucb_pairs(T_UCB), _ucb_events(T_UCB), T_UCB, key=key, n=n,
                  name=name, eps=eps)


EPS_TREE = 4.0


def _audit_tree(*, key, n, name, eps, b=None):
    if b is None:
        b = plan_dp_ucb_tree(eps=EPS_TREE, T=T_UCB, d=K).params["b"]   # the noise of the registered claim
    return _audit(dp_ucb_tree(K, T_UCB), DPUCBParams(f32(b)), _ucb_pairs(T_UCB), _ucb_events(T_UCB), T_UCB, key=key,
                  n=n, name=name, eps=eps)


@_register("dp-ucb-tree", "DP-UCB with per-arm trees (K=2, T=T_max=2, H=2, b = H/eps); claimed eps = 4", EPS_TREE)
def audit_dp_ucb_tree(*, quick, key, n, name, eps):
    """Registered audit ``dp-ucb-tree``: DP-UCB, per-arm trees (``K = 2``, ``T = T_max = 2``, ``H = 2``, ``b = H/ε``).

    The pairs and events of ``ldp-ucb``. In two rounds only the leaf holding the changed reward is ever
    released, so the loss on this output is at most ``ε/2 - ln(1 + ε/4) = 1.31`` at the claim ε = 4: the
    ``H``-fold composition of the tree is loose on short runs (module docstring).

    Called as registered, like :func:`audit_dp_exp3`, with ``eps = 4 / claim_factor``.

    Args:
        quick, seed, n, key, name, eps: as in :func:`audit_dp_exp3`.
        claim_factor: audit the over-claim ``4 / claim_factor`` (the node scale stays that of ε = 4).

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    return _audit_tree(key=key, n=n, name=name, eps=eps)


@_register("dp-ucb-tree-no-noise", "DP-UCB without tree noise (b = 0; broken: not private; must be flagged)",
           EPS_TREE, broken=True)
def _audit_dp_ucb_tree_no_noise(*, quick, key, n, name, eps):
    return _audit_tree(key=key, n=n, name=name, eps=eps, b=0.0)


# --------------------------------------------------------------------------- DP-SE

EPS_SE = 1.0
BETA_SE = 0.9


def _se_setting(eps: float = EPS_SE):
    params = DPSEParams(f32(eps), f32(BETA_SE))
    R = int(dp_se(K).init(jax.random.key(0), params).R)
    T = 2 * R + 1
    c = 0.5 - 2.0 / (eps * R)
    base = np.zeros((T, K), np.float32)
    base[:, 1] = c
    eye = np.eye(K, dtype=np.float32)
    pairs = loss_neighbours(T, K, rounds=(0,), values=[eye[0], eye[1]], base=base)
    return params, R, T, pairs


@_register("dp-se", "DP-SE (K=2, beta=0.9, first epoch R=93): arm 1's elimination two noise scales out; "
                    "claimed eps = 1", EPS_SE)
def audit_dp_se(*, quick, key, n, name, eps):
    """Registered audit ``dp-se``: DP-SE (``K = 2``, ``β = 0.9``, first epoch ``R = 93`` pulls per arm, ``T = 2R + 1``).

    Arm 0 always pays reward 1, arm 1 reward ``1 - c`` with ``c = 1/2 - 2/(εR)``, so arm 1's elimination at the
    end of epoch 1 sits two noise scales out in the tail; round 1's loss vector is ``(1, 0)`` vs ``(0, 1)``. The
    event "arm 1 eliminated" (the two actions after epoch 1 are arm 0) has privacy loss ``ln 2.14 = 0.76`` at the
    claim ε = 1 (module docstring).

    Called as registered, like :func:`audit_dp_exp3`, with ``eps = 1 / claim_factor``.

    Args:
        quick, seed, n, key, name, eps: as in :func:`audit_dp_exp3`.
        claim_factor: audit the over-claim ``1 / claim_factor`` (the learner stays that of ε = 1).

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.
    """
    params, R, T, pairs = _se_setting()   # the learner of the registered claim; eps: the claim audited
    ev = [SearchEvents(statistic=lambda a: (a[2 * R] + a[2 * R + 1]).astype(f32))]
    return _audit(dp_se(K), params, pairs, ev, 2, key=key, n=n, name=name, eps=eps)


# --------------------------------------------------------------------------- exact laws at the audited sizes


def laplace_difference_sf(w, b: float) -> np.ndarray:
    """``P(Z - Z' > w)`` for independent ``Z, Z' ~ Lap(b)`` (float64, vectorised).

    The difference has density ``e^{-|u|/b}(1 + |u|/b)/(4b)``, so for ``k = |w|/b`` the upper tail beyond
    ``|w|`` is ``e^{-k}(1 + k/2)/2`` (and the law is symmetric).

    Args:
        w: the threshold(s).
        b: the Laplace scale (``> 0``).

    Returns:
        The tail probabilities, an array of the shape of ``w``.
    """
    w = np.asarray(w, np.float64)
    k = np.abs(w) / float(b)
    tail = 0.5 * np.exp(-k) * (1.0 + 0.5 * k)
    return np.where(w >= 0, tail, 1.0 - tail)


def index_policy_law(losses, b: float) -> Tuple[np.ndarray, np.ndarray]:
    """Exact law of the played arms ``(x_1, x_2, x_3)`` of LDP-UCB (Laplace scale ``b``) or of DP-UCB with per-arm
    trees for ``T_max = 2`` (node scale ``b``), on ``K = 2`` arms and ``T = 2`` rounds of ``losses``.

    Both policies play the arms once each in the random tie-break order (``x_1`` uniform, ``x_2 = 1 - x_1``); then
    each arm has one pull, its released reward is its reward ``1 - ℓ`` plus one ``Lap(b)`` (the local randomizer,
    resp. the tree's leaf: ``popcount(1) = 1`` node), the confidence bonuses are equal, and ``x_3`` is the arm of the
    larger noisy reward (ties have probability 0): ``P(x_3 = 0) = P(Z_0 - Z_1 > r_1 - r_0)``
    (:func:`laplace_difference_sf`).

    Args:
        losses: the ``(2, 2)`` loss array (rounds × arms).
        b: the Laplace scale of a released reward (``> 0``).

    Returns:
        ``(codes, probs)``: ``codes = x_1 + 2 x_2 + 4 x_3`` over the four possible sequences, ``probs`` summing to 1.
    """
    L = np.asarray(losses, np.float64)
    if L.shape != (2, K):
        raise ValueError(f"losses must have shape (2, {K}), got {L.shape}")
    codes, probs = [], []
    for x1 in range(K):
        x2 = 1 - x1
        r = np.zeros(K)
        r[x1] = 1.0 - L[0, x1]
        r[x2] = 1.0 - L[1, x2]
        p0 = float(laplace_difference_sf(r[1] - r[0], b))
        for x3, p in ((0, p0), (1, 1.0 - p0)):
            codes.append(x1 + 2 * x2 + 4 * x3)
            probs.append(0.5 * p)
    return np.asarray(codes, np.int64), np.asarray(probs)


def dp_se_law(losses, eps: float, R: int) -> Tuple[np.ndarray, np.ndarray]:
    """Exact law of DP-SE's output through its first epoch, ``K = 2`` arms, first epoch of ``R`` pulls per arm.

    The round robin plays the arm first in the random order (``f``, uniform) in rounds ``0, 2, …, 2R - 2`` and the
    other in the odd rounds; at the end of the epoch each arm releases ``μ̃_a = μ̄_a + Lap(1/(εR))`` (``μ̄_a`` its
    mean reward over its ``R`` pulls) and an arm is eliminated iff ``μ̃_a < max μ̃ - 1/2``: arm 1 iff
    ``Z_0 - Z_1 > 1/2 - (μ̄_0 - μ̄_1)``, arm 0 iff ``Z_1 - Z_0 > 1/2 + (μ̄_0 - μ̄_1)``, else neither. The actions up to
    the next two are a function of ``(f, outcome)`` (after an elimination the survivor is played; otherwise the next
    epoch's round robin plays both arms).

    Args:
        losses: the ``(T, 2)`` loss array, ``T >= 2R`` (only the first ``2R`` rounds matter).
        eps: DP-SE's ε.
        R: the first epoch's pulls per arm.

    Returns:
        ``(codes, probs)``: ``codes = f + 2·outcome`` (outcome 0: arm 1 eliminated, 1: arm 0 eliminated, 2: neither),
        ``probs`` summing to 1.
    """
    L = np.asarray(losses, np.float64)
    if L.ndim != 2 or L.shape[1] != K or L.shape[0] < 2 * R:
        raise ValueError(f"losses must have shape (T, {K}) with T >= 2R = {2 * R}, got {L.shape}")
    b = 1.0 / (eps * R)
    codes, probs = [], []
    for f in range(K):
        mean = np.zeros(K)
        mean[f] = np.mean(1.0 - L[0:2 * R:2, f])
        mean[1 - f] = np.mean(1.0 - L[1:2 * R:2, 1 - f])
        m = mean[0] - mean[1]
        p_elim1 = float(laplace_difference_sf(0.5 - m, b))
        p_elim0 = float(laplace_difference_sf(0.5 + m, b))
        for o, p in enumerate((p_elim1, p_elim0, 1.0 - p_elim1 - p_elim0)):
            codes.append(f + 2 * o)
            probs.append(0.5 * p)
    return np.asarray(codes, np.int64), np.asarray(probs)


def exact_audit_eps(name: str, *, p_min: float = 0.0) -> float:
    """The exact privacy loss of a registered bandit audit's learner on the audit's own neighbour pairs.

    The largest ``|log P(E)/P'(E)|`` over events ``E`` of the audited output (of probability ``>= p_min``) and over
    the audit's pairs: no valid audit of those pairs can show a larger ε, so ``claimed ε / exact`` is the smallest
    over-claim any audit of them can detect. For ``ldp-ucb`` and ``dp-ucb-tree`` the law is :func:`index_policy_law`
    (closed form ``ε' - ln(1 + ε'/2)`` with ``ε' = 1/b``: ``2 - ln 2`` for both), for ``dp-se`` :func:`dp_se_law`,
    for ``dp-exp3`` :func:`dp_exp3_law` (its six pairs).

    Args:
        name: ``"ldp-ucb"``, ``"dp-ucb-tree"``, ``"dp-se"`` or ``"dp-exp3"``.
        p_min: only events of at least this probability (under the input they favour).

    Returns:
        The exact ε on the audited pairs.

    Raises:
        ValueError: an audit without an exact law here.
    """
    from ..privacy.audit.exact import align, exact_eps

    if name in ("ldp-ucb", "dp-ucb-tree"):
        b = (plan_ldp_ucb(eps=EPS_LDP, T=T_UCB, d=K) if name == "ldp-ucb" else
             plan_dp_ucb_tree(eps=EPS_TREE, T=T_UCB, d=K)).params["b"]
        pairs, law = _ucb_pairs(T_UCB), (lambda x: index_policy_law(x, b))
    elif name == "dp-se":
        _, R, _, pairs = _se_setting()
        law = (lambda x: dp_se_law(x, EPS_SE, R))
    elif name == "dp-exp3":
        prm = _exp3_setting()
        pairs = loss_neighbours(T_EXP3, K, rounds=(0,))
        law = (lambda x: dp_exp3_law(x, float(prm.eta), float(prm.gamma), float(prm.b), float(prm.B)))
    else:
        raise ValueError(f"no exact law for the audit {name!r}")
    best = 0.0
    for a, c in pairs.values():
        _, p, q = align(law(np.asarray(a)), law(np.asarray(c)))
        best = max(best, exact_eps(p, q, p_min=p_min)[0])
    return best


def _clipped_laplace_rule(centre, b: float, lo: float, hi: float, focus, width, *, nodes: int = 16):
    """Nodes ``u`` and weights integrating ``E g(clip(centre + Lap(b), lo, hi))`` for ``g`` smooth except for a sharp
    transition of width ``width`` at ``focus`` (both arrays: one rule per row): the two clip atoms, Gauss–Legendre on
    pieces of ``[lo, hi]`` cut at the density's kink, on a uniform grid and geometrically around ``focus``."""
    focus = np.atleast_1d(np.asarray(focus, np.float64))
    width = np.broadcast_to(np.asarray(width, np.float64), focus.shape)
    geo = np.concatenate([[0.0], 2.0 ** np.arange(-3, 24)])
    around = focus[:, None] + width[:, None] * np.concatenate([-geo[1:], geo])[None, :]
    grid = np.broadcast_to(np.linspace(lo, hi, 61), (focus.size, 61))
    edges = np.sort(np.clip(np.concatenate([grid, around, np.full((focus.size, 1), centre)], 1), lo, hi), axis=1)
    g, gw = np.polynomial.legendre.leggauss(nodes)
    a, c = edges[:, :-1, None], edges[:, 1:, None]
    u = (0.5 * (c - a) * g + 0.5 * (a + c)).reshape(focus.size, -1)
    w = (0.5 * (c - a) * gw).reshape(focus.size, -1) * np.exp(-np.abs(u - centre) / b) / (2.0 * b)
    atoms_u = np.broadcast_to(np.array([lo, hi]), (focus.size, 2))
    atoms_w = np.broadcast_to(np.array([0.5 * np.exp(-(centre - lo) / b) if centre >= lo else
                                        1.0 - 0.5 * np.exp((centre - lo) / b),
                                        0.5 * np.exp(-(hi - centre) / b) if hi >= centre else
                                        1.0 - 0.5 * np.exp((hi - centre) / b)]), (focus.size, 2))
    return np.concatenate([u, atoms_u], 1), np.concatenate([w, atoms_w], 1)


def dp_exp3_law(losses, eta: float, gamma: float, b: float, B: float) -> Tuple[np.ndarray, np.ndarray]:
    """Exact law of the played arms ``(x_1, x_2, x_3)`` of DP-EXP3 (block length ``τ = 1``) on ``K = 2`` arms and
    ``T = 2`` rounds of ``losses``, by nested quadrature over the two rounds' Laplace noises.

    ``x_1`` is uniform; after round ``t`` the played arm's loss is released as ``u_t = clip(ℓ_t(x_t) + Lap(b), -B,
    1 + B)``, its log-weight moves by ``-η u_t / p_t(x_t)`` and ``x_{t+1} ~ p_{t+1} = (1 - γ) softmax + γ/2``. So with
    ``D_t`` the log-weight difference of arm 0 over arm 1, ``p_{t+1}(0) = (1 - γ) σ(D_t) + γ/2``; the law is
    ``P(x_1, x_2, x_3) = E_{u_1}[p_2(x_2) E_{u_2}[p_3(x_3)]] / 2``, each expectation over a clipped Laplace (two atoms
    and Gauss–Legendre refined geometrically around the logistic's centre, whose width ``p_t(x_t)/η`` can be tiny).

    Args:
        losses: the ``(2, 2)`` loss array (rounds × arms).
        eta: the learning rate ``η``.
        gamma: the uniform mixing ``γ``.
        b: the Laplace scale of a released loss.
        B: the clip margin (released losses lie in ``[-B, 1 + B]``).

    Returns:
        ``(codes, probs)``: ``codes = x_1 + 2 x_2 + 4 x_3`` over the eight sequences, ``probs`` summing to 1 (up to
        quadrature error ~1e-10).
    """
    from scipy.special import expit

    L = np.asarray(losses, np.float64)
    if L.shape != (2, K):
        raise ValueError(f"losses must have shape (2, {K}), got {L.shape}")
    lo, hi = -float(B), 1.0 + float(B)
    sign = np.array([1.0, -1.0])          # how an update of arm a moves D = logw_0 - logw_1 (times -η u/p)
    out = np.zeros(8)
    for x1 in range(K):
        c1 = eta / 0.5
        u1, w1 = _clipped_laplace_rule(L[0, x1], b, lo, hi, np.zeros(1), np.full(1, 1.0 / c1))
        u1, w1 = u1[0], w1[0]
        D1 = -sign[x1] * c1 * u1
        p2_0 = (1.0 - gamma) * expit(D1) + 0.5 * gamma
        for x2 in range(K):
            p2 = p2_0 if x2 == 0 else 1.0 - p2_0
            c2 = eta / p2
            u2, w2 = _clipped_laplace_rule(L[1, x2], b, lo, hi, D1 / (sign[x2] * c2), 1.0 / c2)
            D2 = D1[:, None] - sign[x2] * c2[:, None] * u2
            p3_0 = np.sum(w2 * ((1.0 - gamma) * expit(D2) + 0.5 * gamma), axis=1)
            for x3, p3 in ((0, p3_0), (1, 1.0 - p3_0)):
                out[x1 + 2 * x2 + 4 * x3] += 0.5 * np.sum(w1 * p2 * p3)
    return np.arange(8, dtype=np.int64), out


# --------------------------------------------------------------------------- worst-case pairs (tightness)
def tightness_cases(quick: bool = False, *, uncovered: bool = False) -> list:
    """The bandit learners with an exact law at ``K = 2``, ``T = 2``, for
    :func:`jaxdp.privacy.audit.tightness.tightness_row`: DP-UCB (tree) and LDP-UCB (:func:`index_policy_law`) and
    DP-EXP3 (:func:`dp_exp3_law`), at their audits' parameters, exhaustive over losses in ``{0, 1/2, 1}^2``
    (``{0, 1}^2`` for DP-EXP3); and DP-SE (:func:`dp_se_law`) at its audit's size ``T = 2R + 1`` (the whole released
    output: the actions after epoch 1 are a function of the round-robin order and the elimination outcome),
    by coordinate search from the audited pair over losses in ``{0, c, 1}^2`` (``c`` the audit's arm-1 loss).

    Every private bandit learner of the registry has an exact law here, so ``uncovered`` adds nothing.

    For DP-UCB the slack is attributed to the tree's height: at ``T = 2`` every released index uses one pull per
    arm, i.e. one leaf, so the certificate recomputed with the ``H`` nodes holding a reward replaced by the one
    node ever released (:func:`jaxdp.bandits.planners.dp_ucb_tree_ledger` with ``H = 1``) is ``1/b``.

    Args:
        quick: leave out DP-SE (its search takes a minute).
        uncovered: kept for the signature of ``jaxdp.experts.audits.tightness_cases`` (no bandit learner lacks a law).

    Returns:
        A list of :class:`jaxdp.privacy.audit.tightness.TightnessCase`.
    """
    from ..privacy.accounting import certify
    from ..privacy.audit.tightness import TightnessCase
    from .planners import dp_ucb_tree_ledger

    grid = np.array([[a, c] for a in (0.0, 0.5, 1.0) for c in (0.0, 0.5, 1.0)])
    bits = grid[np.all(grid != 0.5, axis=1)]
    tree = plan_dp_ucb_tree(eps=EPS_TREE, T=T_UCB, d=K)
    b_tree, H = tree.params["b"], tree.params["H"]
    one_leaf = float(certify(dp_ucb_tree_ledger(b_tree, 1, K)).eps)
    b_ldp = plan_ldp_ucb(eps=EPS_LDP, T=T_UCB, d=K).params["b"]
    prm = _exp3_setting()
    size = f"K={K}, T={T_UCB}"
    cases = [
        TightnessCase("dp-ucb-tree", f"{size}, H={H}, b={b_tree:g}", functools.partial(index_policy_law, b=b_tree),
                      T_UCB, grid, 0.0, float(certify(dp_ucb_tree_ledger(b_tree, H, K)).eps), _ucb_pairs(T_UCB), {},
                      slack=f"the tree's height: H = {H} nodes composed, 1 released (ledger with H = 1: {one_leaf:g})",
                      audit=_audit_on(lambda: (dp_ucb_tree(K, T_UCB), DPUCBParams(f32(b_tree))), EPS_TREE),
                      learner="dp_ucb_tree"),
        TightnessCase("ldp-ucb", f"{size}, b={b_ldp:g}", functools.partial(index_policy_law, b=b_ldp), T_UCB, grid,
                      0.0, EPS_LDP, _ucb_pairs(T_UCB), {},
                      audit=_audit_on(lambda: (ldp_ucb(K), LDPUCBParams(f32(b_ldp))), EPS_LDP), learner="ldp_ucb"),
        TightnessCase("dp-exp3", f"{size}, tau=1, eta={float(prm.eta):g}, b={float(prm.b):g}",
                      functools.partial(dp_exp3_law, eta=float(prm.eta), gamma=float(prm.gamma), b=float(prm.b),
                                        B=float(prm.B)), T_EXP3, bits, 0.0, EPS_EXP3,
                      loss_neighbours(T_EXP3, K, rounds=(0,)), {}, learner="dp_exp3",
                      audit=_pair_audit(lambda: (dp_exp3(K), _exp3_setting()), EPS_EXP3, T_EXP3,
                                        [SearchEvents(statistic=stays(0)),
                                         SearchEvents(cell=action_code(K), n_cells=K ** (T_EXP3 + 1))])),
    ]
    if not quick:
        params, R, T_se, pairs = _se_setting()
        c = float(np.asarray(next(iter(pairs.values()))[0])[1, 1])
        vals = np.array([[a, e] for a in (0.0, c, 1.0) for e in (0.0, c, 1.0)])
        cases.append(TightnessCase(
            "dp-se", f"K={K}, T=2R+1={T_se}, R={R}, eps={EPS_SE:g} (the audit's size)",
            functools.partial(dp_se_law, eps=EPS_SE, R=R), T_se, vals, 0.0, EPS_SE,
            {k: (np.asarray(a, np.float64), np.asarray(b, np.float64)) for k, (a, b) in pairs.items()},
            dict(max_pairs=0, restarts=2, max_evals=10_000), learner="dp_se",
            audit=_pair_audit(lambda: (dp_se(K), params), EPS_SE, 2,
                              [SearchEvents(statistic=lambda a: (a[2 * R] + a[2 * R + 1]).astype(f32))])))
    return cases


def _pair_audit(build, eps: float, T_events: int, events):
    """ε_lower of a registered bandit audit's events (200 000 runs per input) on one pair, against the claim ``eps``."""
    def run(x0, x1):
        learner, params = build()
        pair = {"worst": (jnp.asarray(x0, f32), jnp.asarray(x1, f32))}
        return _audit(learner, params, pair, events, T_events, key=jax.random.key(0), n=200_000,
                      name="worst pair", eps=eps).eps_lower
    return run


def _audit_on(build, eps: float):
    """ε_lower of the bandit audit's events (``quick``: 200 000 runs) on one pair, against the claim ``eps``."""
    def run(x0, x1):
        learner, params = build()
        pair = {"worst": (jnp.asarray(x0, f32), jnp.asarray(x1, f32))}
        return _audit(learner, params, pair, _ucb_events(T_UCB), T_UCB, key=jax.random.key(0), n=200_000,
                      name="worst pair", eps=eps).eps_lower
    return run
