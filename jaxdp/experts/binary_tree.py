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

``noise=``: any continual-counting mechanism (a ``jaxdp.privacy.mechanisms.matrix_factorization.ContinualCounter``
or its name) replaces each expert's tree counter, with Laplace draws of scale ``sens_1(C) / eps_tree``
(``sens_1(C)`` the factorization's largest column l1 norm over ``T_max`` rounds; ``H`` for the tree), so each
counter stays ``eps_tree``-DP (docs/algorithms/matrix-factorization.md). ``None`` is the tree, unchanged.

Keys per step: ``k_tree, k_sel``.
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..privacy.accounting import ledger as LG
from ..privacy.accounting.plan import Plan, make_plan
from ..core.types import Learner, fdt, tree_where
from ..core.validation import check_beta, check_d, check_positive, check_positive_int
from ..privacy.mechanisms import TreeState, exp_mech_topk, tree_depth, tree_init, tree_step
from ..privacy.mechanisms.matrix_factorization import counter_init, counter_step, resolve_noise
from ..registry import ConformanceCase, get_learner, register_learner, register_planner
from ._common import REF, log2_ceil, planner_checks

__all__ = ['BinaryTreeParams', 'BinaryTreeState', 'binary_tree_experts', 'binary_tree_params', 'plan_binary_tree_experts', 'binary_tree_static']


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


_ENTRY = register_learner(
    "binary_tree", factory=binary_tree_experts, params_type=BinaryTreeParams, problem="realizable-experts",
    private=True, planner="binary_tree_experts",
    from_plan=lambda plan: binary_tree_params(**{k: v for k, v in plan.params.items() if k not in _STATIC}),
    static=lambda plan: {k: int(plan.params[k]) for k in _STATIC},
    conformance=ConformanceCase("jaxdp.experts.conformance:binary_tree_case"),
    description="binary-tree experts: per phase, m_set experts chosen by the exponential mechanism, each with a "
                "tree counter of its losses; a phase ends when every noisy count leaves tau (pure DP)",
    reference="Realizable private online optimization, Alg. 4 (concretized; docs/algorithms/realizable.md)")


@register_planner("binary_tree_experts", "REAL Alg. 4 (concretized): binary-tree experts, pure DP")
def plan_binary_tree_experts(*, eps: float, delta: float = 0.0, T: int, d: int, mode: str = "paper",
                             beta: float = 0.1, noise=None) -> Plan:
    """PROPOSED defaults (docs/algorithms/realizable.md): ``m_set = min(d, ceil(2 log(dT)))``, ``P_max = ceil(log2 d) + 8``,
    ``eps_tree = ε/(2 m_set)``, ``eta_sel = ε/(2 m_set P_max)``, ``tau = (H^1.5/eps_tree) log(2 m_set T/β)``
    (``rate``: the log factor dropped). ``paper`` and ``certified`` coincide (the defaults certify ε).
    The static ``m_set``, ``P_max``, ``T_max`` go to :func:`binary_tree_experts`.

    Float floor: the counters' noisy sums are only compared (with ``tau``, and with each other for the
    argmin), so every round each of a counter's ``<= H`` live nodes enters two decisions: ``2 T H`` Laplace
    terms per counter (a node's comparisons do not branch on its own earlier ones against an oblivious
    adversary); the selections are Gumbel-top-``m_set`` (each coordinate enters ``m_set`` rank comparisons,
    one Gumbel term per draw).

    ``noise``: the counters' continual-counting mechanism (``None``/``"tree"``: the tree, as above; a name or a
    ``jaxdp.privacy.mechanisms.matrix_factorization.ContinualCounter``): Laplace draws of scale ``sens_1(C)/eps_tree``
    keep each counter ``eps_tree``-DP, so the ledger and ``eps`` are the tree's; ``tau`` takes the
    mechanism's largest noise standard deviation ``sqrt(2 max_t ||B_t||^2) sens_1(C)/eps_tree`` in place of
    the tree's ``H^1.5/eps_tree``. A release depends on up to ``T`` draws, so each decision is charged
    ``T`` float terms per draw in the floor. Pass ``noise`` to ``binary_tree_experts`` too.

    Args:
        eps, delta, T, d, mode, beta: as in :func:`plan_sparse_vector_experts`.
        noise: the counters' continual-counting mechanism (``None``/``"tree"``: the tree).

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan` with params ``eps_tree``, ``eta_sel``, ``tau``, ``m_set``, ``P_max`` and
        ``T_max``.

    Raises:
        ValueError: invalid privacy parameters, horizon, ``d``, mode or noise.
    """
    eps, delta, T, d, mode = planner_checks(eps, delta, T, d, mode)
    check_beta(beta)
    m_set = min(d, int(math.ceil(2 * math.log(d * T))))
    P_max = log2_ceil(d) + 8
    eps_tree, eta_sel = eps / (2 * m_set), eps / (2 * m_set * P_max)
    log_factor = 1.0 if mode == "rate" else math.log(2 * m_set * T / beta)
    mech = resolve_noise(noise, T)
    reference = f"{REF} Alg. 4 (sketch; our concretization, docs/algorithms/realizable.md)"
    if mech is None:
        H = int(T).bit_length()
        tau = H ** 1.5 / eps_tree * log_factor
        counters = LG.laplace(1.0 / eps_tree, count=m_set, label=f"binary-tree counters of the current set (Laplace "
                                                                  f"node noise H/eps_tree, H={H})",
                              release="threshold", draws=2 * T * H)
        notes = [f"m_set, P_max, T_max are static: binary_tree_experts(d, **binary_tree_static(plan)); H={H}"]
    else:
        sens1 = mech.sensitivity(T, "l1")
        tau = math.sqrt(2.0 * mech.max_row_norm_sq(T)) * sens1 / eps_tree * log_factor
        k = mech.draw_count(mech.init(T, ()), "laplace")
        counters = LG.laplace(1.0 / eps_tree, count=m_set, label=f"{mech.describe()} counters of the current set "
                                                                  f"(Laplace draws sens_1(C)/eps_tree, "
                                                                  f"sens_1(C)={sens1:.6g})",
                              release="threshold", draws=2 * T * T * k)
        reference += "; Denisov et al. 2022 (matrix-factorization counters)"
        notes = [f"m_set, P_max, T_max are static: binary_tree_experts(d, **binary_tree_static(plan), noise=...) "
                 f"with the same mechanism ({mech.describe()})"]
    ledger = LG.sequential(
        counters,
        LG.exponential(eta_sel, count=P_max * m_set, label="exponential-mechanism selections of later sets",
                       outcomes=d, sampler="gumbel"))
    return make_plan(algorithm="binary_tree_experts", mode=mode,
                     params=dict(eps_tree=eps_tree, eta_sel=eta_sel, tau=float(tau), m_set=m_set, P_max=P_max, T_max=T),
                     eps=eps, delta=delta, ledger=ledger, delta_budget=0.0, conditions={"m_set <= d": m_set <= d},
                     reference=reference, notes=notes + ["pure DP; delta is not used"])


def binary_tree_static(plan: Plan) -> dict:
    """The static constructor arguments ``m_set, P_max, T_max`` of a binary-tree plan
    (the registered learner's :meth:`~jaxdp.registry.LearnerEntry.static_from_plan`).

    Args:
        plan: a plan of the matching planner.

    Returns:
        ``{"m_set": ..., "P_max": ..., "T_max": ...}``.
    """
    return get_learner("binary_tree").static_from_plan(plan)
