"""Bridges to ``dp_accounting`` events and accountants (a core dependency, imported on first use).

Our closed-form bounds are what the papers certify; ``dp_accounting``'s RDP and
PLD accountants give tighter (PLD: numerically exact) numbers for the same
mechanisms. Events are sensitivity-normalised: ``noise_multiplier = scale / Δ``.

Neighbouring relations: Gaussian and Laplace events with sensitivity Δ under
*any* relation in which neighbouring outputs move by at most Δ are handled by
``dp_accounting``'s ``ADD_OR_REMOVE_ONE`` relation (a shift by one
noise-multiplier unit in both directions). ``pure_dp_event(ε)`` — binary
randomized response, the worst case among all ε-DP mechanisms
(Kairouz–Oh–Viswanath 2015, Thm 2.1) — needs ``REPLACE_ONE``; ``pld_epsilon``
picks the relation from the event.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from ...core import validation as C

__all__ = [
    "gaussian_event", "laplace_event", "zcdp_event", "pure_dp_event", "composed_event", "self_composed_event",
    "tree_aggregation_event", "pld_epsilon", "rdp_epsilon", "sampled_dp_event",
]


def _dpa():
    import dp_accounting     # imported on first use: it is slow to import

    return dp_accounting


def gaussian_event(sigma_over_sensitivity: float):
    """``GaussianDpEvent(noise_multiplier = σ/Δ₂)``: ``h(S) + N(0, σ²I)`` with ℓ2-sensitivity Δ₂.

    Args:
        sigma_over_sensitivity: σ/Δ₂.

    Returns:
        The ``dp_accounting`` event.
    """
    return _dpa().GaussianDpEvent(noise_multiplier=float(C.pos("sigma_over_sensitivity", sigma_over_sensitivity)))


def laplace_event(scale_over_sensitivity: float):
    """``LaplaceDpEvent(noise_multiplier = b/Δ₁)``: ``h(S) + Lap(b)^d`` with ℓ1-sensitivity Δ₁.

    Args:
        scale_over_sensitivity: b/Δ₁; the event is (Δ₁/b)-DP.

    Returns:
        The ``dp_accounting`` event.
    """
    return _dpa().LaplaceDpEvent(noise_multiplier=float(C.pos("scale_over_sensitivity", scale_over_sensitivity)))


def zcdp_event(rho: float):
    """``ZCDpEvent(rho)``: a ρ-zCDP mechanism (RDP accountant only).

    Args:
        rho: the zCDP level ρ.

    Returns:
        The ``dp_accounting`` event.
    """
    r = float(C.nonneg("rho", rho))
    return _dpa().ZCDpEvent(rho=r)


def pure_dp_event(eps: float):
    """A generic ε-DP mechanism as its dominating pair: binary randomized response.

    ``RandomizedResponseDpEvent(noise_parameter = 2/(1 + e^ε), num_buckets = 2)``
    reports the true bit with probability ``e^ε/(1 + e^ε)``; every ε-DP mechanism
    is a post-processing of it (KOV15 Thm 2.1), so composing these gives the
    exact optimal composition (KOV15 Thm 3.3). Use with ``REPLACE_ONE`` (``pld_epsilon`` does).

    Args:
        eps: the mechanism's ε.

    Returns:
        The ``dp_accounting`` event.
    """
    e = float(C.eps_arg(eps))
    return _dpa().RandomizedResponseDpEvent(noise_parameter=2.0 / (1.0 + math.exp(e)), num_buckets=2)


def composed_event(events: Sequence[Any]):
    """``ComposedDpEvent(events)``: adaptive composition of a list of events.

    Args:
        events: the ``dp_accounting`` events.

    Returns:
        The composed event.
    """
    events = list(events)
    if not events:
        raise ValueError("events must be a non-empty sequence of dp_accounting events")
    dpa = _dpa()
    for i, e in enumerate(events):
        if not isinstance(e, dpa.DpEvent):
            raise TypeError(f"events[{i}] must be a dp_accounting.DpEvent, got {type(e).__name__}")
    return dpa.ComposedDpEvent(events=events)


def self_composed_event(event: Any, count: int):
    """``SelfComposedDpEvent(event, count)``: ``count`` adaptive repetitions of one event.

    Args:
        event: a ``dp_accounting`` event.
        count: the number of repetitions.

    Returns:
        The composed event.
    """
    dpa = _dpa()
    if not isinstance(event, dpa.DpEvent):
        raise TypeError(f"event must be a dp_accounting.DpEvent, got {type(event).__name__}")
    return dpa.SelfComposedDpEvent(event=event, count=C.count_arg(count, "count"))


def tree_aggregation_event(sigma_over_sensitivity: float, T: int):
    """``SingleEpochTreeAggregationDpEvent``: one pass of tree aggregation over ``T`` steps (add/remove adjacency).

    For replace-one neighbours pass ``σ/(2L)``: replacing a gradient moves each node by ``<= 2L``.

    Args:
        sigma_over_sensitivity: node noise σ over the per-step sensitivity.
        T: the number of steps.

    Returns:
        The ``dp_accounting`` event.
    """
    nm = float(C.pos("sigma_over_sensitivity", sigma_over_sensitivity))
    return _dpa().SingleEpochTreeAggregationDpEvent(noise_multiplier=nm, step_counts=C.count_arg(T, "T"))


def _contains(event: Any, cls: type) -> bool:
    dpa = _dpa()
    if isinstance(event, cls):
        return True
    if isinstance(event, dpa.SelfComposedDpEvent):
        return _contains(event.event, cls)
    if isinstance(event, dpa.ComposedDpEvent):
        return any(_contains(e, cls) for e in event.events)
    return False


def _pld(event: Any, count: int, rel: Any, vdi: float):
    """PLD of ``count`` repetitions of ``event``; Gaussian / Laplace / randomized response built directly."""
    dpa = _dpa()
    P = dpa.pld.privacy_loss_distribution
    if isinstance(event, dpa.SelfComposedDpEvent):
        return _pld(event.event, count * event.count, rel, vdi)
    if isinstance(event, dpa.ComposedDpEvent):
        out = None
        for e in event.events:
            p = _pld(e, count, rel, vdi)
            out = p if out is None else out.compose(p)
        return out
    if isinstance(event, dpa.GaussianDpEvent):
        return P.from_gaussian_mechanism(event.noise_multiplier / math.sqrt(count),
                                         value_discretization_interval=vdi, neighboring_relation=rel)
    if isinstance(event, dpa.LaplaceDpEvent):
        return P.from_laplace_mechanism(event.noise_multiplier, value_discretization_interval=vdi).self_compose(count)
    if isinstance(event, dpa.RandomizedResponseDpEvent):
        # built here because PLDAccountant (dp_accounting 0.6.0) ignores the count of a
        # SelfComposedDpEvent wrapping a RandomizedResponseDpEvent
        return P.from_randomized_response(event.noise_parameter, event.num_buckets, value_discretization_interval=vdi,
                                          neighboring_relation=rel).self_compose(count)
    acc = dpa.pld.PLDAccountant(neighboring_relation=rel, value_discretization_interval=vdi)
    acc.compose(event, count)
    return acc._pld  # noqa: SLF001 - other event kinds: let the accountant build the PLD


def pld_epsilon(event: Any, delta: float, *, value_discretization_interval: float = 1e-4,
                neighboring_relation: Any = None) -> float:
    """ε of ``event`` at ``δ`` from ``dp_accounting``'s privacy-loss distributions (pessimistic discretisation:
    an upper bound on the exact ε, tight to about ``value_discretization_interval`` per composed mechanism).

    Gaussian, Laplace and randomized-response events (also nested in composed / self-composed events)
    are converted to PLDs directly; other events go through ``PLDAccountant``.

    Args:
        event: a ``dp_accounting`` event.
        delta: the target δ.
        value_discretization_interval: the PLD discretisation.
        neighboring_relation: a ``dp_accounting.NeighboringRelation`` (default as described above).

    Returns:
        ε, an upper bound on the exact one.
    """
    dpa = _dpa()
    d = float(C.delta_open(delta))
    rel = neighboring_relation
    if rel is None:
        has_rr = _contains(event, dpa.RandomizedResponseDpEvent)
        has_lap = _contains(event, dpa.LaplaceDpEvent)
        if has_rr and has_lap:
            raise ValueError("pld_epsilon cannot mix pure_dp_event (needs REPLACE_ONE) with Laplace events "
                             "(need ADD_OR_REMOVE_ONE); pass neighboring_relation explicitly")
        rel = (dpa.NeighboringRelation.REPLACE_ONE if has_rr else dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    pld = _pld(event, 1, rel, float(value_discretization_interval))
    return float(pld.get_epsilon_for_delta(d))


def rdp_epsilon(event: Any, delta: float, *, orders: Sequence[float] | None = None,
                neighboring_relation: Any = None) -> float:
    """ε of ``event`` at ``δ`` from ``dp_accounting``'s RDP accountant (CKS20 conversion, best order on a grid).

    The relation defaults to ``REPLACE_SPECIAL`` when the event contains tree aggregation (the only one
    ``dp_accounting`` supports for it; a replace-one neighbour is covered by doubling the sensitivity),
    else ``ADD_OR_REMOVE_ONE``.

    Args:
        event: a ``dp_accounting`` event.
        delta: the target δ.
        orders: the Rényi orders (default: a grid).
        neighboring_relation: a ``dp_accounting.NeighboringRelation`` (default as described above).

    Returns:
        ε.
    """
    dpa = _dpa()
    d = float(C.delta_open(delta))
    rel = neighboring_relation
    if rel is None:
        rel = (dpa.NeighboringRelation.REPLACE_SPECIAL
               if _contains(event, dpa.SingleEpochTreeAggregationDpEvent) else dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    kw = {} if orders is None else {"orders": orders}
    acc = dpa.rdp.RdpAccountant(neighboring_relation=rel, **kw)
    acc.compose(event)
    return float(acc.get_epsilon(d))


def sampled_dp_event(e: Any):
    """The ``dp_accounting`` event of one invocation of a sampled event (its ``count`` is applied by the caller).

    Args:
        e: an event of kind ``"poisson_sampled"`` or ``"fixed_size_sampled"``.

    Returns:
        ``PoissonSampledDpEvent(q, GaussianDpEvent(sigma/C))``, or
        ``SampledWithoutReplacementDpEvent(population, sample_size, GaussianDpEvent(sigma/(2C)))`` (``dp_accounting``
        takes the multiplier relative to the replace-one distance ``2C``).

    Raises:
        ValueError: ``e`` is not a sampled event.
    """
    dpa = _dpa()
    if e.kind == "poisson_sampled":
        return dpa.PoissonSampledDpEvent(e.sampling_rate, dpa.GaussianDpEvent(e.noise_multiplier))
    if e.kind == "fixed_size_sampled":
        # dp_accounting's noise multiplier is relative to the replace-one distance 2C
        return dpa.SampledWithoutReplacementDpEvent(e.population, e.sample_size,
                                                    dpa.GaussianDpEvent(e.noise_multiplier / 2.0))
    raise ValueError(f"not a sampled event: {e.describe()}")
