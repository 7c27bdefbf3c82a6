"""``tree_ftrl_experts``: binary-tree follow-the-noisy-leader for DP-OPE (AS17-style; LAZY Sec. 4; docs/algorithms/lazy.md#baselines, PROPOSED).

Not a lazy algorithm: every round it plays ``x_{t+1} ~ softmax(-eta Lhat_t)``
where ``Lhat_t`` is the tree-aggregated noisy cumulative loss vector
(``jaxdp.privacy.mechanisms.tree_step``, docs/algorithms/primitives.md#binary-tree-counter). Each loss vector enters at most
``H = floor(log2 T_max) + 1`` nodes. Calibration (:func:`tree_ftrl_params`):

* pure ε-DP: ``l1``-sensitivity of a loss vector in ``[0,1]^d`` is ``d``, node noise ``Lap(d H / eps)``;
* (ε, δ)-DP: Gaussian nodes with ``sigma = tree_aggregation_sigma(sqrt(d)/2, H, eps, delta)``
  (centered losses ``l - 1/2`` have ``l2`` norm ``<= sqrt(d)/2``; the shift does not change the softmax).

Any continual-counting mechanism can replace the tree (``noise=``, a
:class:`jaxdp.privacy.mechanisms.matrix_factorization.ContinualCounter` or its name): the learner keeps the
cumulative losses exactly and adds the mechanism's correlated noise; :func:`tree_ftrl_params` and
:func:`plan_tree_ftrl_experts` calibrate it with the factorization's sensitivity (``l1``:
``b = d sens_1(C)/eps``; ``l2``: ``sigma = sqrt(d) sens_2(C)/sqrt(2 rho*)``; docs/algorithms/matrix-factorization.md).

Expected regret ``≈ sqrt(T log d) + sqrt(d) polylog(T) log d / eps`` (Gaussian).
It escapes the low-switching lower bound of LAZY Thm 4.2 for small ``d``.
Keys per round: 2 (node noise, categorical draw).
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp

from ..privacy.accounting import ledger as LG
from ..privacy.accounting.plan import Plan, make_plan
from ..privacy.accounting.zcdp import gaussian_sigma_zcdp
from ..core.random import sample_categorical
from ..core.types import Learner
from ..core.validation import check_choice, check_in_range, check_positive, check_positive_int
from ..privacy.mechanisms import TreeState, tree_aggregation_sigma, tree_depth, tree_init, tree_laplace_scale, tree_step
from ..privacy.mechanisms.matrix_factorization import BinaryTree, counter_init, counter_step, resolve_noise
from ..registry import CompareBuiltin, ConformanceCase, register_learner, register_planner

__all__ = ["TreeFTRLParams", "TreeFTRLState", "tree_ftrl_experts", "tree_ftrl_params", "plan_tree_ftrl_experts"]


class TreeFTRLParams(NamedTuple):
    """Parameters of :func:`tree_ftrl_experts`.

    Attributes:
        eta: the learning rate η.
        scale: the node noise scale.
    """
    eta: jax.Array     # Hedge step on the noisy cumulative losses
    scale: jax.Array   # node noise: Laplace scale b or Gaussian sigma (0 = non-private Hedge)


class TreeFTRLState(NamedTuple):
    """State of :func:`tree_ftrl_experts`.

    Attributes:
        x: the current action (the expert played).
        tree: the noisy counter of the losses.
        p: the current distribution over experts.
    """
    x: jax.Array
    tree: TreeState     # a jaxdp.privacy.mechanisms.matrix_factorization.PrefixState with another noise= mechanism
    p: jax.Array


def tree_ftrl_params(d: int, T: int, eps: float, delta: float = 0.0, eta: Optional[float] = None,
                     T_max: Optional[int] = None, noise=None) -> TreeFTRLParams:
    """Noise calibrated to ``(eps, delta)`` (``delta = 0``: Laplace, else Gaussian); ``eta`` defaults to
    ``sqrt(8 ln d / T)``. Use ``noise="laplace"`` in :func:`tree_ftrl_experts` iff ``delta == 0``.

    ``noise``: the mechanism of :func:`tree_ftrl_experts` (``None``: the tree); its scale is calibrated over
    ``T_max or T`` rounds with the factorization's sensitivity (module docstring).

    Args:
        d: the number of experts.
        T: the horizon.
        eps: the privacy parameter ε.
        delta: the privacy parameter δ.
        eta: the learning rate (default ``sqrt(8 ln d / T)``).
        T_max: the largest horizon (default ``T``).
        noise: the mechanism of :func:`tree_ftrl_experts` (``None``: the tree).

    Returns:
        :class:`TreeFTRLParams`.
    """
    d = check_positive_int("d", d, minimum=2)
    T = check_positive_int("T", T)
    check_positive("eps", eps)
    check_in_range("delta", delta, 0.0, 1.0, hi_closed=False)
    mech = resolve_noise(noise, T_max or T)
    if mech is not None:
        n = T_max or T
        scale = (float(d) * mech.sensitivity(n, "l1") / float(eps) if delta == 0 else
                 float(gaussian_sigma_zcdp(math.sqrt(d) * mech.sensitivity(n, "l2"), float(eps), float(delta))))
    else:
        H = tree_depth(T_max or T)
        scale = tree_laplace_scale(H, eps, sensitivity=float(d)) if delta == 0 else \
            tree_aggregation_sigma(math.sqrt(d) / 2.0, H, eps, delta)
    if eta is None:
        eta = math.sqrt(8 * math.log(d) / T)
    fdt = jnp.result_type(float)
    return TreeFTRLParams(eta=jnp.asarray(eta, fdt), scale=jnp.asarray(scale, fdt))


@functools.lru_cache(maxsize=None)
def tree_ftrl_experts(d: int, T_max: int, noise="gaussian", kind: Optional[str] = None) -> Learner:
    """Binary-tree noisy Hedge over ``d`` experts for horizons ``T <= T_max``. Params: :class:`TreeFTRLParams`.

    ``noise``: ``"gaussian"``/``"laplace"`` (the tree with that node noise, as before), or a continual-counting
    mechanism (a ``jaxdp.privacy.mechanisms.matrix_factorization.ContinualCounter`` or its name, optimised for ``T_max``
    where it is optimised) whose draws have distribution ``kind`` (default ``"gaussian"``).

    Args:
        d: the number of experts.
        T_max: the largest horizon.
        noise: ``"gaussian"``, ``"laplace"`` or a continual-counting mechanism (or its name).
        kind: the mechanism's draw distribution (default ``"gaussian"``).

    Returns:
        The :class:`jaxdp.Learner`.
    """
    d = check_positive_int("d", d, minimum=2)
    H = tree_depth(T_max)
    if noise in ("laplace", "gaussian"):
        if kind is not None and kind != noise:
            raise ValueError(f"kind={kind!r} contradicts noise={noise!r} (a noise distribution)")
        mech = None
    else:
        mech = resolve_noise(noise, T_max)
        kind = check_choice("kind", "gaussian" if kind is None else kind, ["laplace", "gaussian"])
        if mech is None:
            noise = kind
    fdt = jnp.result_type(float)
    if mech is None:
        check_choice("noise", noise, ["laplace", "gaussian"])

        def fresh():
            return tree_init(H, (d,), fdt)

        def count(key, tree, x, scale):
            return tree_step(key, tree, x, scale, noise)
    else:
        def fresh():
            return counter_init(mech, int(T_max), (d,), fdt)

        def count(key, tree, x, scale):
            return counter_step(mech, key, tree, x, scale, str(kind))

    def init(key, params):
        return TreeFTRLState(x=sample_categorical(key, jnp.zeros((d,))), tree=fresh(), p=jnp.full((d,), 1.0 / d, fdt))

    def step(key, state, loss, params):
        k_noise, k_x = jax.random.split(key)
        expected = jnp.dot(state.p, loss)
        tree, L_hat = count(k_noise, state.tree, loss - 0.5, params.scale)
        logits = -params.eta * L_hat
        x = sample_categorical(k_x, logits)
        return TreeFTRLState(x=x, tree=tree, p=jax.nn.softmax(logits)), \
            {"expected_loss": expected, "switched": x != state.x}

    return Learner(init=init, step=step)


@register_planner("tree_ftrl_experts", "binary-tree (or any continual-counting mechanism) noisy Hedge for DP-OPE")
def plan_tree_ftrl_experts(*, eps: float, delta: float = 0.0, T: int, d: int, mode: str = "paper", noise=None,
                           T_max: Optional[int] = None) -> Plan:
    """Parameters ``(eta, scale)`` of :func:`tree_ftrl_experts` and the ledger of its noisy cumulative losses.

    ``delta = 0``: Laplace draws, ``b = d sens_1(C)/eps`` (pure); else Gaussian,
    ``sigma = sqrt(d) sens_2(C)/sqrt(2 rho*)`` (replace-one: a centered loss vector moves by ``<= d`` in l1 and
    ``sqrt(d)`` in l2), ``C`` the tree's or ``noise``'s factorization over ``T_max or T`` rounds. The noise is the
    certified one in every mode; ``eta = sqrt(8 ln d / T)`` (``paper``, ``certified``) or ``sqrt(ln d / T)``
    (``rate``: constants dropped). Build the learner with ``tree_ftrl_experts(d, T_max, noise, kind)`` where
    ``kind`` is ``plan.params``' noise distribution (``"laplace"`` iff ``delta == 0``). The cumulative losses
    enter a softmax (a raw release: no float floor).

    Args:
        eps: the privacy parameter ε.
        delta: the privacy parameter δ (0: pure DP with Laplace noise).
        T: the horizon.
        d: the number of experts (``>= 2``).
        mode: ``"paper"``, ``"certified"`` or ``"rate"``.
        noise: a continual-counting mechanism or its name (``None``: the binary tree).
        T_max: the largest horizon the noise is calibrated for (``None``: ``T``; must be ``>= T``).

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan` with params ``{"eta", "scale"}``.

    Raises:
        ValueError: an invalid mode, ``d``, ``T``, ``T_max``, ``eps`` or ``delta``.
    """
    check_choice("mode", mode, ("paper", "certified", "rate"))
    d = check_positive_int("d", d, minimum=2)
    T = check_positive_int("T", T)
    n = check_positive_int("T_max", T_max) if T_max is not None else T
    if n < T:
        raise ValueError(f"T_max must be >= T, got T_max={n}, T={T}")
    check_positive("eps", eps)
    check_in_range("delta", delta, 0.0, 1.0, hi_closed=False)
    mech = resolve_noise(noise, n) or BinaryTree()
    eta = math.sqrt((1.0 if mode == "rate" else 8.0) * math.log(d) / T)
    kind = "laplace" if delta == 0 else "gaussian"
    if kind == "laplace":
        scale = float(d) * mech.sensitivity(n, "l1") / float(eps)
        event = mech.ledger_event(scale, float(d), n, dim=d, kind="laplace",
                                  label=f"{mech.describe()} noisy cumulative losses (l1: d per round)")
    else:
        scale = float(gaussian_sigma_zcdp(math.sqrt(d) * mech.sensitivity(n, "l2"), float(eps), float(delta)))
        event = mech.ledger_event(scale, math.sqrt(d), n, dim=d,
                                  label=f"{mech.describe()} noisy cumulative losses (l2: sqrt(d) per round)")
    return make_plan(algorithm="tree_ftrl_experts", mode=mode, params={"eta": float(eta), "scale": float(scale)},
                     eps=float(eps), delta=float(delta), ledger=LG.sequential(event),
                     delta_budget=0.0 if kind == "laplace" else None,
                     conditions={"T <= T_max": T <= n},
                     reference="Lazy private online learning, Sec. 4 (baseline); Kairouz et al. 2021; "
                               "Denisov et al. 2022",
                     notes=[f"noise={mech.describe()}, kind={kind}: tree_ftrl_experts(d, {n}, noise, kind={kind!r})"])


def _from_plan(plan: Plan) -> TreeFTRLParams:
    """:func:`plan_tree_ftrl_experts`' ``{eta, scale}``."""
    eta, scale = check_positive("eta", plan.params["eta"]), check_positive("scale", plan.params["scale"])
    fdt = jnp.result_type(float)
    return TreeFTRLParams(eta=jnp.asarray(eta, fdt), scale=jnp.asarray(scale, fdt))


def _compare(d, T, T_max, eps, delta, problem):
    noise = "gaussian" if delta > 0 else "laplace"
    # the tree is sized (and its noise calibrated) for T_max >= T: certified for every T <= T_max
    return tree_ftrl_experts(d, T_max, noise), tree_ftrl_params(d, T, eps, delta, T_max=T_max), float(eps)


register_learner(
    "tree_ftrl", factory=tree_ftrl_experts, params_type=TreeFTRLParams, problem="experts", private=True,
    planner="tree_ftrl_experts", from_plan=_from_plan,
    conformance=ConformanceCase("jaxdp.experts.conformance:tree_ftrl_case"),
    description="binary-tree noisy Hedge: x_{t+1} ~ softmax(-η L̂_t), L̂ the tree-aggregated noisy cumulative "
                "losses (Laplace dH/ε per node, or Gaussian for (ε, δ); noise= any continual-counting "
                "mechanism); calibrated by tree_ftrl_params or its planner",
    reference="Lazy private online learning, Sec. 4 (baseline; Agarwal, Singh 2017 style)",
    compare=CompareBuiltin(_compare, "binary-tree noisy Hedge, noise calibrated to (eps, delta) for T_max"))
