"""Binary-tree experts for the realizable regime (REAL Algorithm 4, App. B.1; docs/algorithms/realizable.md#binary-tree-experts).

The paper gives a sketch only; this is the concretization of Realizable private online optimization, Alg. 4; docs/algorithms/realizable.md#binary-tree-experts (PROPOSED/INTERPRETATION).
A phase selects ``m_set`` fresh experts with Gumbel-top-k on the exponential-mechanism logits
``-η_sel cum / 2`` (``m_set`` sequential η_sel-DP draws without replacement, experts of earlier
phases masked), and runs one binary-tree counter per selected expert on its losses (Laplace node
noise ``H / eps_tree``; ``H = floor(log2 T_max) + 1``). Each round it plays the selected expert
with the smallest noisy cumulative loss ``c``; when every ``c > tau`` (all look non-zero) and fewer
than ``P_max`` phases have been used, a new phase starts.

Privacy (basic composition): a loss enters the ``m_set`` trees of the current phase
(``m_set eps_tree``) and every later selection (at most ``P_max m_set`` draws, each η_sel-DP):
``eps = m_set eps_tree + P_max m_set eta_sel``. If fewer than ``m_set`` unused experts remain, the
set is padded with used ones (reported in ``padded``).

``noise=``: any continual-counting mechanism (a ``jaxdp.mechanisms.matrix_factorization.ContinualCounter``
or its name) replaces each expert's tree counter, with Laplace draws of scale ``sens_1(C) / eps_tree``
(``sens_1(C)`` the factorization's largest column l1 norm over ``T_max`` rounds; ``H`` for the tree), so each
counter stays ``eps_tree``-DP (docs/algorithms/matrix-factorization.md). ``None`` is the tree, unchanged.

Keys per step: ``k_tree, k_sel``.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..core.types import Learner
from ..core.validation import check_positive, check_positive_int
from ..mechanisms import TreeState, exp_mech_topk, tree_depth, tree_init, tree_step
from ..mechanisms.matrix_factorization import counter_init, counter_step, resolve_noise
from ..registry import ConformanceCase, register_learner
from ._common import check_d, fdt, tree_where

__all__ = ["BinaryTreeParams", "BinaryTreeState", "binary_tree_experts", "binary_tree_params"]


class BinaryTreeParams(NamedTuple):
    """Parameters of :func:`binary_tree_experts` (REAL Algorithm 4).

    Attributes:
        eps_tree: ε of each counter.
        eta_sel: η of the selection.
        tau: the elimination threshold.
    """
    eps_tree: jax.Array   # ε of each expert's tree counter (node noise Lap(H / eps_tree))
    eta_sel: jax.Array    # exponential-mechanism parameter of each selection draw
    tau: jax.Array        # "looks zero" threshold on the noisy cumulative loss


class BinaryTreeState(NamedTuple):
    """State of :func:`binary_tree_experts`.

    Attributes:
        x: the current action (the expert played).
        cum: the cumulative loss vector.
        used: which experts have been selected.
        set_idx: the current set of experts.
        trees: the counters of the set's losses.
        phase: the current phase.
    """
    x: jax.Array          # int32 expert played
    cum: jax.Array        # (d,) cumulative losses
    used: jax.Array       # (d,) bool, selected in some phase
    set_idx: jax.Array    # (m_set,) int32 experts of the current phase
    trees: TreeState      # alpha, alpha_hat of shape (H, m_set) (a PrefixState with another noise= mechanism)
    phase: jax.Array      # int32 phases started after the first


def binary_tree_params(eps_tree, eta_sel, tau) -> BinaryTreeParams:
    """Validated parameters for :func:`binary_tree_experts` (host values).

    Args:
        eps_tree: ε of each counter.
        eta_sel: η of the selection.
        tau: the elimination threshold.

    Returns:
        :class:`BinaryTreeParams`.

    Raises:
        ValueError: invalid values.
    """
    check_positive("eps_tree", eps_tree)
    check_positive("eta_sel", eta_sel)
    check_positive("tau", tau)
    f = jnp.float32
    return BinaryTreeParams(eps_tree=f(eps_tree), eta_sel=f(eta_sel), tau=f(tau))


@functools.lru_cache(maxsize=None)
def binary_tree_experts(d: int, m_set: int, P_max: int, T_max: int, noise=None) -> Learner:
    """REAL Algorithm 4 (concretized) over ``d`` experts; static ``m_set <= d``, ``P_max``, ``T_max``.

    ``noise``: the counters' continual-counting mechanism (module docstring; ``None``: the binary tree).

    Info: ``switched``, ``phases`` (new phases started), ``em_draws`` (``m_set`` per new phase;
    the data-independent initial selection is not counted), ``padded`` (a selection that had to
    reuse experts).

    Args:
        d: the number of experts.
        m_set: the size of the expert set (static, ``<= d``).
        P_max: the most phases (static).
        T_max: the largest horizon (static).
        noise: the counters' continual-counting mechanism (``None``: the binary tree).

    Returns:
        The :class:`jaxdp.Learner`.
    """
    d = check_d(d)
    m_set = check_positive_int("m_set", m_set)
    if m_set > d:
        raise ValueError(f"m_set must be <= d={d}, got {m_set}")
    P_max = check_positive_int("P_max", P_max)
    H = tree_depth(check_positive_int("T_max", T_max))
    mech = resolve_noise(noise, T_max)
    if mech is None:
        def fresh():
            return tree_init(H, (m_set,))

        def count(key, trees, x, eps_tree):
            return tree_step(key, trees, x, H / eps_tree)
    else:
        sens1 = mech.sensitivity(T_max, "l1")

        def fresh():
            return counter_init(mech, T_max, (m_set,))

        def count(key, trees, x, eps_tree):
            return counter_step(mech, key, trees, x, sens1 / eps_tree, "laplace")

    def select(key, cum, used, eta_sel):
        logits = -eta_sel * cum / 2.0
        idx = exp_mech_topk(key, logits, m_set, mask=~used)
        padded = jnp.sum(~used) < m_set
        return idx, used.at[idx].set(True), padded

    def init(key, params):
        cum = jnp.zeros((d,), fdt())
        idx, used, _ = select(key, cum, jnp.zeros((d,), jnp.bool_), params.eta_sel)
        return BinaryTreeState(x=idx[0], cum=cum, used=used, set_idx=idx, trees=fresh(),
                               phase=jnp.int32(0))

    def step(key, state, loss, params):
        k_tree, k_sel = jax.random.split(key)
        cum = state.cum + loss
        trees, c = count(k_tree, state.trees, loss[state.set_idx], params.eps_tree)
        new = jnp.all(c > params.tau) & (state.phase < P_max - 1)
        idx, used, padded = select(k_sel, cum, state.used, params.eta_sel)
        set_idx = jnp.where(new, idx, state.set_idx)
        used = jnp.where(new, used, state.used)
        trees = tree_where(new, fresh(), trees)
        c = jnp.where(new, 0.0, c)
        x = set_idx[jnp.argmin(c)]
        info = {"switched": x != state.x, "phases": new, "em_draws": new * m_set, "padded": new & padded}
        return BinaryTreeState(x=x, cum=cum, used=used, set_idx=set_idx, trees=trees,
                               phase=state.phase + new.astype(jnp.int32)), info

    return Learner(init=init, step=step)


# --------------------------------------------------------------------------- registry

_STATIC = ("m_set", "P_max", "T_max")   # plan parameters that are constructor arguments


def _conformance(d, T):
    from ..experts.conformance import experts_case
    from .planners import plan_binary_tree_experts

    plans = [plan_binary_tree_experts(eps=e, T=T, d=d, mode="rate") for e in (1.0, 4.0)]
    learner, _ = _ENTRY.learner_from_plan(plans[0], d)
    return experts_case(learner, d, [_ENTRY.params_from_plan(p) for p in plans], realizable=True)


_ENTRY = register_learner(
    "binary_tree", factory=binary_tree_experts, params_type=BinaryTreeParams, problem="realizable-experts",
    private=True, planner="binary_tree_experts",
    from_plan=lambda plan: binary_tree_params(**{k: v for k, v in plan.params.items() if k not in _STATIC}),
    static=lambda plan: {k: int(plan.params[k]) for k in _STATIC},
    conformance=ConformanceCase(_conformance),
    description="binary-tree experts: per phase, m_set experts chosen by the exponential mechanism, each with a "
                "tree counter of its losses; a phase ends when every noisy count leaves tau (pure DP)",
    reference="Realizable private online optimization, Alg. 4 (concretized; docs/algorithms/realizable.md)")
