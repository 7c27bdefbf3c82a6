"""The privacy ledger of a plan: what the configured algorithm releases (docs/guide/privacy-ledger.md).

A :class:`Ledger` lists the mechanisms an algorithm runs, each as an :class:`Event`
(its kind, its own ε, δ or noise parameter, how many times it is invoked), and how they
compose: ``"sequential"`` (adaptive composition on the same data) or ``"parallel"``
(each record enters exactly one child: disjoint data). Sub-ledgers nest, and a ledger
may be repeated ``count`` times (e.g. one *phase* = a sparse-vector instance plus a
Gibbs sample, repeated ``K`` times). ``delta_extra`` is an additive δ outside any
mechanism: the failure probability of a high-probability event the proof conditions
on (LAZY Lemma 3.8's ``2 Σ λ_t``, a quantile of a random number of invocations).

Neighbours are **replace-one** throughout (the library's convention). Each kind's
privacy under replace-one neighbours:

==========================  ==============================================================
kind                        parameters, privacy of one invocation
==========================  ==============================================================
``laplace``                 ``noise_multiplier = b/Δ₁``; ``(Δ₁/b)``-DP (Dwork–Roth Thm 3.6)
``gaussian``                ``noise_multiplier = σ/Δ₂``; exact PLD of the Gaussian shift
``tree_aggregation``        ``noise_multiplier = σ/Δ_node``, ``steps = T``: one Gaussian with
                            ℓ2-sensitivity ``sqrt(H) Δ_node``, ``H = floor(log2 T) + 1``
``exponential``             exponential mechanism / Gibbs sample ``exp(−η S)``, ``eps = 2ηΔ_S``
``above_threshold``         one AboveThreshold / sparse-vector instance (any number of ⊥,
                            one ⊤), ``eps`` (Dwork–Roth Thm 3.23)
``randomized_response``     ``eps``-DP randomized response (binary or k-ary)
``pure``                    generic ``eps``-DP mechanism
``approx``                  generic ``(eps, delta)``-DP mechanism
``poisson_sampled``         Gaussian on a Poisson sample (rate ``sampling_rate``),
                            ``noise_multiplier = σ/C`` (``C`` the per-record ℓ2 bound),
                            ``neighboring`` ``add_remove`` (default) or ``replace_one``
``fixed_size_sampled``      Gaussian on a uniform sample of ``sample_size`` of ``population``
                            records (without replacement), ``noise_multiplier = σ/C``,
                            replace-one neighbours
==========================  ==============================================================

The two sampled kinds (:mod:`jaxdp.privacy.accounting.amplification`) are Gaussian kinds whose privacy is
amplified by the sampling: the accountant certifies them with ``dp_accounting``'s privacy-loss
distributions and RDP (``PoissonSampledDpEvent`` / ``SampledWithoutReplacementDpEvent``), and every
other bound treats them as the un-sampled Gaussian (valid: sampling never hurts).

:meth:`Event.to_dp_event` / :meth:`Ledger.to_dp_event` give the ``dp_accounting``
``DpEvent`` where one exists (built on :mod:`jaxdp.privacy.accounting.events`); the accountant
is :func:`jaxdp.privacy.accounting.certify`.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterator, Optional, Union

import numpy as np

# the event and its kinds (every name importable from here as before)
from ._ledger_event import (EventKind, Event, EVENT_KINDS, PURE_KINDS, GAUSSIAN_KINDS, SAMPLED_KINDS, RELEASES,
                            _check_float_fields, _is_int, _is_num)
from ._ledger_event import NEIGHBORING, _FLOAT_KIND, _RAW_BY_DEFAULT, _validate_event, _validate_sampling  # noqa: F401

__all__ = ["Event", "EventKind", "Ledger", "EVENT_KINDS", "PURE_KINDS", "GAUSSIAN_KINDS", "SAMPLED_KINDS", "RELEASES", "laplace", "gaussian",
           "tree_aggregation", "exponential", "above_threshold", "randomized_response", "pure", "approx",
           "sequential", "parallel"]

#: how a ledger's items compose
COMPOSITIONS = ("sequential", "parallel")


Item = Union[Event, "Ledger"]


@dataclasses.dataclass(frozen=True)
class Ledger:
    """Mechanisms and how they compose (module docstring). ``count`` repeats the whole ledger sequentially.

    Attributes:
        items: the events and sub-ledgers.
        composition: how the items compose (``"sequential"``, ``"parallel"``, ...; module docstring).
        count: repeats the whole ledger sequentially.
        label: a name for reports.
        delta_extra: additive failure probability (e.g. conditional composition's ``2 Σ λ_t``).
    """

    items: tuple = ()
    composition: str = "sequential"
    count: int = 1
    label: str = ""
    delta_extra: float = 0.0

    def __post_init__(self):
        items = self.items
        if isinstance(items, (Event, Ledger)) or not hasattr(items, "__iter__"):
            raise TypeError(f"Ledger items must be a sequence of Event or Ledger, got {type(items).__name__}")
        object.__setattr__(self, "items", tuple(items))
        for i, it in enumerate(self.items):
            if not isinstance(it, (Event, Ledger)):
                raise TypeError(f"Ledger items[{i}] must be an Event or a Ledger, got {type(it).__name__}: {it!r}")
        if self.composition not in COMPOSITIONS:
            raise ValueError(f"Ledger composition must be one of {list(COMPOSITIONS)}, got {self.composition!r}")
        if not _is_int(self.count) or self.count < 0:
            raise ValueError(f"Ledger count must be an integer >= 0, got {self.count!r}")
        object.__setattr__(self, "count", int(self.count))
        d = self.delta_extra
        if not _is_num(d) or not 0 <= d <= 1:
            raise ValueError(f"Ledger delta_extra must be a number in [0, 1], got {d!r}")
        object.__setattr__(self, "delta_extra", float(d))

    def events(self) -> Iterator[tuple[Event, int]]:
        """Every event with its total multiplicity (counts of enclosing ledgers multiplied in)."""
        for it in self.items:
            if isinstance(it, Ledger):
                for e, m in it.events():
                    yield e, m * self.count
            else:
                yield it, self.count

    @property
    def total_delta_extra(self) -> float:
        """``delta_extra`` of this ledger and every sub-ledger (each repetition counts)."""
        tot = self.delta_extra
        for it in self.items:
            if isinstance(it, Ledger):
                tot += it.total_delta_extra
        return self.count * tot

    @property
    def is_pure(self) -> bool:
        return self.total_delta_extra == 0 and all(
            e.kind in PURE_KINDS or (e.kind == "approx" and e.delta == 0) for e, _ in self.events())

    def describe(self, indent: str = "") -> list[str]:
        head = f"{indent}{self.composition}" + (f" x {self.count}" if self.count != 1 else "")
        head += (f"  [{self.label}]" if self.label else "")
        if self.delta_extra:
            head += f"  (+ delta {self.delta_extra:.3g} for failure events)"
        lines = [head]
        for it in self.items:
            if isinstance(it, Ledger):
                lines += it.describe(indent + "  ")
            else:
                lines.append(f"{indent}  {it.describe()}")
        return lines

    def to_dict(self) -> dict:
        return {"composition": self.composition, "count": self.count, "label": self.label,
                "delta_extra": self.delta_extra,
                "items": [it.to_dict() for it in self.items]}

    def to_dp_event(self):
        """A ``dp_accounting`` event: ``ComposedDpEvent`` of the items (sequential ledgers only)."""
        from . import events as E

        if self.composition != "sequential":
            raise ValueError("dp_accounting has no event for parallel composition over disjoint data")
        evs = [it.to_dp_event() for it in self.items]
        one = evs[0] if len(evs) == 1 else E.composed_event(evs)
        return one if self.count == 1 else E.self_composed_event(one, self.count)

    def float_status(self) -> str:
        """``"raw"`` if an event releases a raw float (no valid floor), ``"unknown"`` if a generic event names
        no sampler, else ``"ok"``."""
        status = "ok"
        for e, _ in self.events():
            _check_float_fields(e)
            if e.float_release == "raw":
                return "raw"
            if e.float_sampler is None:
                status = "unknown"
        return status

    def delta_float(self, dtype: Any = None, *, eps: Optional[float] = None) -> Optional[float]:
        """The float sampler δ floor of the ledger (:mod:`jaxdp.privacy.accounting.floating`), ``None`` where none is valid.

        ``None`` when an event releases a raw float (:meth:`float_status` ``"raw"``: no coupling bound holds,
        Mironov 2012) or names no sampler (``"unknown"``). Otherwise each event adds
        ``(1 + e^{ε_i}) τ · n``: ``τ = tv_float(sampler, dtype, d=float_dim)``, ``n`` its coupling terms in the
        whole run (``float_draws`` per invocation times its multiplicity, capped by ``float_draws_total``),
        ``ε_i`` its own ε, or for a Gaussian event ``eps``: the certified ε of the whole ledger (a Gaussian
        has no single ε; required then). Sequential parts add; a parallel ledger costs its worst child, since
        the changed record enters one child and the others' float laws are the same under both neighbours.
        ``dtype`` defaults to float32. Capped at 1.
        """
        from .floating import delta_float as _df

        if self.float_status() != "ok":
            return None
        dtype = np.float32 if dtype is None else dtype
        if eps is not None and not (isinstance(eps, (int, float, np.floating, np.integer)) and not isinstance(eps, bool)
                                    and eps >= 0):
            raise ValueError(f"eps must be a number >= 0 (inf allowed): the certified eps of the ledger, got {eps!r}")

        def walk(led: "Ledger", mult: int) -> float:
            m = mult * int(led.count)
            parts = []
            for it in led.items:
                if isinstance(it, Ledger):
                    parts.append(walk(it, m))
                    continue
                n = m * int(it.count) * int(it.float_draws)
                if it.float_draws_total > 0:
                    n = min(n, int(it.float_draws_total))
                if it.is_gaussian:
                    if eps is None:
                        raise ValueError(f"eps (the certified eps of the ledger) is required for the float floor of "
                                         f"the Gaussian event {it.describe()}")
                    e = float(eps)
                else:
                    e = float(it.eps)
                parts.append(_df(it.float_sampler, dtype, eps=min(e, 1e3), d=int(it.float_dim), draws=n))
            if not parts:
                return 0.0
            return float(min(1.0, max(parts) if led.composition == "parallel" else sum(parts)))

        return walk(self, 1)


# ------------------------------------------------------------------------------------ constructors
def _ev(kind: str, **kw) -> Event:
    e = Event(kind, **kw)
    _check_float_fields(e)
    return e


def laplace(noise_multiplier: float, count: int = 1, label: str = "", dim: int = 1, *, release: str = "raw",
            draws: int = 1, draws_total: int = 0) -> Event:
    """``count`` releases ``h(S) + Lap(b)^dim`` with ``noise_multiplier = b/Δ₁`` (each ``Δ₁/b``-DP).

    Float floor: ``release="raw"`` (default) publishes the noisy value (no valid floor); ``"threshold"`` when the
    algorithm only compares it, with ``draws`` coupling terms per invocation (one per threshold decision each of
    the ``dim`` coordinates enters) and ``draws_total`` a cap over the run (:class:`Event`).

    Args:
        noise_multiplier: the Laplace scale over the ℓ1-sensitivity, ``b/Δ₁``; the event's ε is its inverse.
        count: the number of adaptive invocations (composed sequentially).
        label: a name for reports (``Ledger.describe``, ``jaxdp plan``).
        dim: the number of coordinates of each release (the ``d`` of the float floor).
        release: ``"raw"`` (the noisy value is published) or ``"threshold"`` (only compared).
        draws: float coupling terms per invocation.
        draws_total: if ``> 0``, a cap on the coupling terms of all invocations in one run.

    Returns:
        The :class:`Event` of kind ``"laplace"``.
    """
    return _ev("laplace", eps=1.0 / noise_multiplier, noise_multiplier=float(noise_multiplier), count=int(count),
               label=label, float_dim=int(dim), release=release, float_draws=draws, float_draws_total=draws_total)


def gaussian(noise_multiplier: float, count: int = 1, label: str = "", dim: int = 1, *, release: str = "raw",
             draws: int = 1, draws_total: int = 0) -> Event:
    """``count`` releases ``h(S) + N(0, σ² I)`` with ``noise_multiplier = σ/Δ₂`` (float floor as :func:`laplace`).

    Args:
        noise_multiplier: the standard deviation over the ℓ2-sensitivity, ``σ/Δ₂``.
        count, label, dim, release, draws, draws_total: as in :func:`laplace`.

    Returns:
        The :class:`Event` of kind ``"gaussian"``.
    """
    return _ev("gaussian", noise_multiplier=float(noise_multiplier), count=int(count), label=label,
               float_dim=int(dim), release=release, float_draws=draws, float_draws_total=draws_total)


def tree_aggregation(noise_multiplier: float, steps: int, count: int = 1, label: str = "", dim: int = 1, *,
                     release: str = "raw") -> Event:
    """One pass of tree aggregation over ``steps`` inputs, node noise ``σ`` and ``noise_multiplier = σ/Δ_node``.

    Its noisy prefix sums are released (``release="raw"``: no valid float floor). The whole pass is one
    Gaussian with ℓ2-sensitivity ``sqrt(H) Δ_node``, ``H = floor(log2 steps) + 1``.

    Args:
        noise_multiplier: the node noise's standard deviation over one node's ℓ2-sensitivity, ``σ/Δ_node``.
        steps: the number of inputs ``T`` aggregated (``>= 1``).
        count: the number of passes (composed sequentially).
        label: a name for reports (``Ledger.describe``, ``jaxdp plan``).
        dim: the dimension of each input.
        release: ``"raw"`` (the prefix sums are published) or ``"threshold"``.

    Returns:
        The :class:`Event` of kind ``"tree_aggregation"`` (``2 * steps`` float coupling terms per pass).
    """
    return _ev("tree_aggregation", noise_multiplier=float(noise_multiplier), steps=int(steps), count=int(count),
               label=label, float_dim=int(dim), float_draws=2 * int(steps), release=release)


def exponential(eps: float, count: int = 1, label: str = "", outcomes: int = 1, *, sampler: str = "categorical",
                draws: int = 1) -> Event:
    """``count`` exponential-mechanism / Gibbs samples, each ``eps``-DP (``eps = 2ηΔ_S`` for ``exp(−ηS)``).

    Float floor: ``sampler="categorical"`` (inverse CDF, ``jaxdp.core.sample_categorical``) or ``"gumbel"``
    (Gumbel-max) over ``outcomes``; ``draws`` coupling terms per sample (Gumbel-top-``m``: each coordinate
    enters ``m`` rank comparisons, ``draws = m`` per set, or one per each of its ``m`` draws).

    Args:
        eps: the privacy of one sample, ``2ηΔ_S`` for a score ``S`` of sensitivity ``Δ_S`` and inverse temperature η.
        count: the number of adaptive samples (composed sequentially).
        label: a name for reports (``Ledger.describe``, ``jaxdp plan``).
        outcomes: the number of outcomes sampled from (the ``d`` of the float floor).
        sampler: the float sampler: ``"categorical"`` or ``"gumbel"``.
        draws: float coupling terms per sample.

    Returns:
        The :class:`Event` of kind ``"exponential"``.
    """
    return _ev("exponential", eps=float(eps), count=int(count), label=label, float_dim=int(outcomes),
               float_kind=sampler, float_draws=draws)


def above_threshold(eps: float, count: int = 1, label: str = "", queries: int = 1, *, queries_total: int = 0,
                    terms_per_query: int = 2) -> Event:
    """``count`` AboveThreshold instances (any number of ⊥ and one ⊤), each ``eps``-DP.

    Float floor: ``queries`` per instance (``T`` when an instance can stay active for the whole run),
    ``queries_total`` a cap over all instances of the run (``K`` instances sharing ``T`` rounds: ``T``), and
    ``terms_per_query`` Laplace coupling terms per query: 2 (the fresh query noise, and the threshold noise at
    this query's comparison) or :func:`jaxdp.privacy.accounting.floating.shared_threshold_terms`.

    Args:
        eps: the privacy of one instance (Dwork–Roth Thm 3.23).
        count: the number of instances run one after another (composed sequentially).
        label: a name for reports (``Ledger.describe``, ``jaxdp plan``).
        queries: the most queries one instance answers.
        queries_total: if ``> 0``, a cap on the queries of all instances in one run.
        terms_per_query: Laplace coupling terms per query.

    Returns:
        The :class:`Event` of kind ``"above_threshold"``.
    """
    return _ev("above_threshold", eps=float(eps), count=int(count), label=label, float_draws=queries,
               float_dim=terms_per_query, float_draws_total=queries_total)


def randomized_response(eps: float, count: int = 1, label: str = "", dim: int = 1, *, sampler: str = "") -> Event:
    """``count`` ``eps``-DP randomized-response releases (float sampler: ``bernoulli``, or ``rr_vector`` for
    ``dim > 1`` coins; ``"rr_kary"`` for k-ary randomized response).

    Args:
        eps: the privacy of one release.
        count: the number of releases (composed sequentially).
        label: a name for reports (``Ledger.describe``, ``jaxdp plan``).
        dim: the number of coins flipped per release (``> 1``: the vector mechanism).
        sampler: the float sampler; ``""`` picks ``"bernoulli"`` (``dim == 1``) or ``"rr_vector"``.

    Returns:
        The :class:`Event` of kind ``"randomized_response"``.
    """
    sampler = sampler or ("rr_vector" if int(dim) > 1 else "bernoulli")
    return _ev("randomized_response", eps=float(eps), count=int(count), label=label, float_dim=int(dim),
               float_kind=sampler)


def pure(eps: float, count: int = 1, label: str = "", *, sampler: str = "", dim: int = 1, draws: int = 1,
         release: str = "") -> Event:
    """A generic ``eps``-DP mechanism invoked ``count`` times. Name its float ``sampler`` (with ``dim``, ``draws``
    per invocation) for the float floor; without one the ledger's floor is unknown.

    Args:
        eps: the privacy of one invocation.
        count: the number of adaptive invocations (composed sequentially).
        label: a name for reports (``Ledger.describe``, ``jaxdp plan``).
        sampler: the float sampler (:data:`jaxdp.privacy.accounting.floating.FLOAT_KINDS`), ``""`` if unknown.
        dim: coordinates or outcomes of each float coupling term.
        draws: float coupling terms per invocation.
        release: ``"threshold"``, ``"raw"`` or ``""`` (the kind's default, ``"threshold"``).

    Returns:
        The :class:`Event` of kind ``"pure"``.
    """
    return _ev("pure", eps=float(eps), count=int(count), label=label, float_kind=sampler, float_dim=int(dim),
               float_draws=draws, release=release)


def approx(eps: float, delta: float, count: int = 1, label: str = "", *, sampler: str = "", dim: int = 1,
           draws: int = 1, release: str = "") -> Event:
    """A generic ``(eps, delta)``-DP mechanism invoked ``count`` times (float floor as :func:`pure`).

    Args:
        eps, delta: the privacy of one invocation.
        count, label, sampler, dim, draws, release: as in :func:`pure`.

    Returns:
        The :class:`Event` of kind ``"approx"``.
    """
    return _ev("approx", eps=float(eps), delta=float(delta), count=int(count), label=label, float_kind=sampler,
               float_dim=int(dim), float_draws=draws, release=release)


def sequential(*items: Item, count: int = 1, label: str = "", delta_extra: float = 0.0) -> Ledger:
    """Adaptive (sequential) composition of ``items`` on the same data, repeated ``count`` times.

    Args:
        *items: the events and sub-ledgers, each run on the whole data set.
        count: how many times the whole composition is repeated (sequentially).
        label: a name for reports (``Ledger.describe``, ``jaxdp plan``).
        delta_extra: an additive δ outside any mechanism: the failure probability of an event the proof
            conditions on (per repetition).

    Returns:
        The sequential :class:`Ledger`.
    """
    return Ledger(items=items, composition="sequential", count=int(count), label=label, delta_extra=float(delta_extra))


def parallel(*items: Item, count: int = 1, label: str = "") -> Ledger:
    """``items`` on disjoint parts of the data (parallel composition: the worst child).

    Args:
        *items: the events and sub-ledgers; each record enters exactly one of them.
        count: how many times the whole composition is repeated (sequentially).
        label: a name for reports (``Ledger.describe``, ``jaxdp plan``).

    Returns:
        The parallel :class:`Ledger`.
    """
    return Ledger(items=items, composition="parallel", count=int(count), label=label)
