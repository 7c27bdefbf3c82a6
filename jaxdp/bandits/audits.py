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

Also here: :func:`bandit_events`, the events ``jaxdp compare --problem bandits`` adds to its audit
of a learner of yours (the replays of the arm played in a changed round, and whether the next
round stays on it: what bandit feedback reveals).
"""
from __future__ import annotations

import functools
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ..accounting.floating import delta_float
from ..audit import SearchEvents, audit_mechanism
from ..audit.learners import action_code, learner_mechanism, loss_neighbours
from ..registry import register_audit
from .elimination import DPSEParams, dp_se
from .exp3 import DPExp3Params, dp_exp3
from .planners import plan_dp_exp3, plan_dp_ucb_tree, plan_ldp_ucb
from .ucb import DPUCBParams, LDPUCBParams, dp_ucb_tree, ldp_ucb

__all__ = ["AUDITS", "bandit_events", "replays", "stays", "audit_dp_exp3", "audit_ldp_ucb", "audit_dp_ucb_tree",
           "audit_dp_se"]

f32 = jnp.float32
K = 2
#: name -> (claimed eps, broken)
AUDITS: dict = {}


def replays(t: int):
    """``actions -> float``: how often the arm played in round ``t`` (0-indexed) is played again afterwards."""
    def f(acts):
        return jnp.sum(acts[t + 1:] == acts[t]).astype(f32)
    return f


def stays(t: int):
    """``actions -> float``: 1 if round ``t + 1`` plays the arm of round ``t``, else 0."""
    def f(acts):
        return (acts[t + 1] == acts[t]).astype(f32)
    return f


def bandit_events(K: int, T: int, rounds: Sequence[int]) -> list:
    """The events of a bandit learner's audit: the number of rounds playing each arm (the first 8),
    the replays of the arm played in each changed round and whether the next round stays on it, and
    the whole action sequence as a cell where ``K^(T+1) <= 4096``."""
    ev = [SearchEvents(statistic=_count(j)) for j in range(min(K, 8))]
    for t in rounds:
        ev += [SearchEvents(statistic=replays(int(t))), SearchEvents(statistic=stays(int(t)))]
    if K ** (T + 1) <= 4096:
        ev.append(SearchEvents(cell=action_code(K), n_cells=K ** (T + 1)))
    return ev


def _count(j):
    def f(acts):
        return jnp.sum(acts == j).astype(f32)
    return f


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


def _laplace_floor(eps: float, draws: int) -> float:
    return delta_float("laplace", eps=eps, draws=draws)


# --------------------------------------------------------------------------- DP-EXP3

EPS_EXP3 = 1.0
T_EXP3 = 2


def _exp3_setting(scale_factor: float = 1.0):
    plan = plan_dp_exp3(eps=EPS_EXP3, T=T_EXP3, d=K, tau=1)
    p = plan.params
    # privacy rests on b alone; a large eta makes the next arm reveal the sign of the noisy loss
    return DPExp3Params(f32(20.0), f32(1e-3), f32(p["b"] * scale_factor), f32(max(p["B"], 1.0)), jnp.int32(1))


def _audit_exp3(*, key, n, name, eps, scale_factor):
    mech = learner_mechanism(dp_exp3(K), _exp3_setting(scale_factor))
    pairs = loss_neighbours(T_EXP3, K, rounds=(0,))
    ev = [SearchEvents(statistic=stays(0)), SearchEvents(cell=action_code(K), n_cells=K ** (T_EXP3 + 1))]
    return audit_mechanism(mech, pairs, ev, claimed_eps=eps, n=n, key=key, name=name,
                           delta_float=_laplace_floor(eps, T_EXP3))


@_register("dp-exp3", "DP-EXP3 (K=2, T=2, planner noise b = 1/eps, eta = 20): the stay event is tight; claimed eps = 1",
           EPS_EXP3)
def audit_dp_exp3(*, quick, key, n, name, eps):
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
    b = plan_ldp_ucb(eps=EPS_LDP, T=T_UCB, d=K).params["b"]   # the noise of the registered claim
    mech = learner_mechanism(ldp_ucb(K), LDPUCBParams(f32(b)))
    return audit_mechanism(mech, _ucb_pairs(T_UCB), _ucb_events(T_UCB), claimed_eps=eps, n=n, key=key, name=name,
                           delta_float=_laplace_floor(eps, T_UCB))


EPS_TREE = 4.0


def _audit_tree(*, key, n, name, eps, b=None):
    if b is None:
        b = plan_dp_ucb_tree(eps=EPS_TREE, T=T_UCB, d=K).params["b"]   # the noise of the registered claim
    mech = learner_mechanism(dp_ucb_tree(K, T_UCB), DPUCBParams(f32(b)))
    return audit_mechanism(mech, _ucb_pairs(T_UCB), _ucb_events(T_UCB), claimed_eps=eps, n=n, key=key, name=name,
                           delta_float=_laplace_floor(eps, T_UCB))


@_register("dp-ucb-tree", "DP-UCB with per-arm trees (K=2, T=T_max=2, H=2, b = H/eps); claimed eps = 4", EPS_TREE)
def audit_dp_ucb_tree(*, quick, key, n, name, eps):
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
    params, R, T, pairs = _se_setting()   # the learner of the registered claim; eps: the claim audited
    mech = learner_mechanism(dp_se(K), params)
    ev = [SearchEvents(statistic=lambda a: (a[2 * R] + a[2 * R + 1]).astype(f32))]
    return audit_mechanism(mech, pairs, ev, claimed_eps=eps, n=n, key=key, name=name,
                           delta_float=_laplace_floor(eps, 2))
