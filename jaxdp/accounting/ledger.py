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
==========================  ==============================================================

:meth:`Event.to_dp_event` / :meth:`Ledger.to_dp_event` give the ``dp_accounting``
``DpEvent`` where one exists (built on :mod:`jaxdp.accounting.events`); the accountant
is :func:`jaxdp.accounting.certify`.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterator, Optional, Union

__all__ = ["Event", "Ledger", "EVENT_KINDS", "PURE_KINDS", "GAUSSIAN_KINDS", "laplace", "gaussian",
           "tree_aggregation", "exponential", "above_threshold", "randomized_response", "pure", "approx",
           "sequential", "parallel"]

PURE_KINDS = ("laplace", "exponential", "above_threshold", "randomized_response", "pure")
GAUSSIAN_KINDS = ("gaussian", "tree_aggregation")
EVENT_KINDS = PURE_KINDS + GAUSSIAN_KINDS + ("approx",)

# float sampler behind each kind, for the float δ floor (jaxdp.accounting.floating)
_FLOAT_KIND = {"laplace": "laplace", "gaussian": "gaussian", "tree_aggregation": "gaussian",
               "exponential": "categorical", "above_threshold": "laplace", "randomized_response": "bernoulli"}


@dataclasses.dataclass(frozen=True)
class Event:
    """One mechanism invoked ``count`` times adaptively (see the module docstring for the kinds).

    ``eps``/``delta``: privacy of one invocation (pure and approximate kinds; for ``laplace`` it is
    ``1/noise_multiplier``). ``noise_multiplier``: noise scale over sensitivity (Laplace, Gaussian,
    tree). ``steps``: tree aggregation's ``T``. ``float_draws``/``float_dim``: how many float draws
    of how many coordinates/outcomes one invocation makes (for the float δ floor only).
    """

    kind: str
    eps: float = 0.0
    delta: float = 0.0
    noise_multiplier: float = 0.0
    count: int = 1
    steps: int = 0
    label: str = ""
    float_draws: int = 1
    float_dim: int = 1

    # --------------------------------------------------------------- privacy of one invocation
    @property
    def is_gaussian(self) -> bool:
        return self.kind in GAUSSIAN_KINDS

    @property
    def tree_levels(self) -> int:
        return int(self.steps).bit_length()

    @property
    def gaussian_multiplier(self) -> float:
        """σ over the ℓ2-sensitivity of the whole release (tree: ``σ/(sqrt(H) Δ_node)``)."""
        if self.kind == "tree_aggregation":
            return self.noise_multiplier / math.sqrt(self.tree_levels)
        return self.noise_multiplier

    @property
    def rho(self) -> float:
        """zCDP ρ of one invocation: ``1/(2 m²)`` (Gaussian), ``ε²/2`` (pure; Bun–Steinke Prop. 1.4); inf for approx."""
        if self.is_gaussian:
            return 0.5 / self.gaussian_multiplier ** 2
        if self.kind == "approx" and self.delta > 0:
            return math.inf
        return 0.5 * self.eps ** 2

    def dp(self) -> tuple[float, float]:
        """(ε, δ) of one invocation (pure and approximate kinds; Gaussian kinds raise)."""
        if self.is_gaussian:
            raise ValueError(f"a {self.kind} event has no single (eps, delta); use the accountant")
        return self.eps, self.delta

    def describe(self) -> str:
        if self.is_gaussian:
            p = f"sigma/sensitivity={self.noise_multiplier:.6g}"
            if self.kind == "tree_aggregation":
                p += f", T={self.steps} (H={self.tree_levels})"
        elif self.kind == "laplace":
            p = f"b/sensitivity={self.noise_multiplier:.6g} (eps={self.eps:.6g})"
        elif self.kind == "approx":
            p = f"eps={self.eps:.6g}, delta={self.delta:.3g}"
        else:
            p = f"eps={self.eps:.6g}"
        return f"{self.kind}({p}) x {self.count}" + (f"  [{self.label}]" if self.label else "")

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "count": self.count, "label": self.label}
        if self.is_gaussian:
            out["noise_multiplier"] = self.noise_multiplier
            if self.kind == "tree_aggregation":
                out["steps"] = self.steps
        else:
            out["eps"] = self.eps
            if self.kind == "laplace":
                out["noise_multiplier"] = self.noise_multiplier
            if self.kind == "approx":
                out["delta"] = self.delta
        return out

    def to_dp_event(self):
        """The ``dp_accounting`` event of ``count`` invocations (sensitivity-normalised, :mod:`.events`)."""
        from . import events as E

        if self.kind == "gaussian":
            one = E.gaussian_event(self.noise_multiplier)
        elif self.kind == "tree_aggregation":
            # replace-one: the node sensitivity Δ_node is already in the multiplier
            one = E.tree_aggregation_event(self.noise_multiplier, self.steps)
        elif self.kind == "laplace":
            one = E.laplace_event(self.noise_multiplier)
        elif self.kind == "randomized_response" or (self.kind != "approx" and self.eps > 0):
            one = E.pure_dp_event(self.eps)
        else:
            raise ValueError(f"no dp_accounting event for {self.describe()}")
        return one if self.count == 1 else E.self_composed_event(one, self.count)

    def scaled(self, count: int) -> "Event":
        return dataclasses.replace(self, count=int(count))


Item = Union[Event, "Ledger"]


@dataclasses.dataclass(frozen=True)
class Ledger:
    """Mechanisms and how they compose (module docstring). ``count`` repeats the whole ledger sequentially."""

    items: tuple = ()
    composition: str = "sequential"
    count: int = 1
    label: str = ""
    delta_extra: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "items", tuple(self.items))

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

    def delta_float(self, dtype: Any = None) -> Optional[float]:
        """The float sampler δ floor of every invocation (``jaxdp.accounting.floating``), ``None`` if unavailable.

        Parallel children: the largest child's floor (a record enters one child)."""
        try:
            from .floating import delta_float
        except ImportError:  # pragma: no cover - the floating-point module is optional
            return None
        import numpy as np

        dtype = np.float32 if dtype is None else dtype
        parts = []
        for it in self.items:
            if isinstance(it, Ledger):
                v = it.delta_float(dtype)
                if v is None:
                    return None
            else:
                fk = _FLOAT_KIND.get(it.kind)
                if fk is None:
                    continue
                e = it.eps if not it.is_gaussian else 0.0
                v = delta_float(fk, dtype, eps=min(e, 1e3), d=max(1, int(it.float_dim)),
                                draws=int(it.count) * max(1, int(it.float_draws)))
            parts.append(v)
        if not parts:
            return 0.0
        tot = max(parts) if self.composition == "parallel" else sum(parts)
        return float(min(1.0, self.count * tot))


# ------------------------------------------------------------------------------------ constructors
def laplace(noise_multiplier: float, count: int = 1, label: str = "", dim: int = 1) -> Event:
    """``count`` releases ``h(S) + Lap(b)^dim`` with ``noise_multiplier = b/Δ₁`` (each ``Δ₁/b``-DP)."""
    return Event("laplace", eps=1.0 / noise_multiplier, noise_multiplier=float(noise_multiplier), count=int(count),
                 label=label, float_dim=int(dim))


def gaussian(noise_multiplier: float, count: int = 1, label: str = "", dim: int = 1) -> Event:
    """``count`` releases ``h(S) + N(0, σ² I)`` with ``noise_multiplier = σ/Δ₂``."""
    return Event("gaussian", noise_multiplier=float(noise_multiplier), count=int(count), label=label,
                 float_dim=int(dim))


def tree_aggregation(noise_multiplier: float, steps: int, count: int = 1, label: str = "", dim: int = 1) -> Event:
    """One pass of tree aggregation over ``steps`` inputs, node noise ``σ`` and ``noise_multiplier = σ/Δ_node``."""
    return Event("tree_aggregation", noise_multiplier=float(noise_multiplier), steps=int(steps), count=int(count),
                 label=label, float_dim=int(dim), float_draws=2 * int(steps))


def exponential(eps: float, count: int = 1, label: str = "", outcomes: int = 1) -> Event:
    """``count`` exponential-mechanism / Gibbs samples, each ``eps``-DP (``eps = 2ηΔ_S`` for ``exp(−ηS)``)."""
    return Event("exponential", eps=float(eps), count=int(count), label=label, float_dim=int(outcomes))


def above_threshold(eps: float, count: int = 1, label: str = "", queries: int = 1) -> Event:
    """``count`` AboveThreshold instances (any number of ⊥ and one ⊤), each ``eps``-DP; ``queries`` per instance."""
    return Event("above_threshold", eps=float(eps), count=int(count), label=label, float_draws=int(queries),
                 float_dim=2)


def randomized_response(eps: float, count: int = 1, label: str = "", dim: int = 1) -> Event:
    """``count`` ``eps``-DP randomized-response releases."""
    return Event("randomized_response", eps=float(eps), count=int(count), label=label, float_dim=int(dim))


def pure(eps: float, count: int = 1, label: str = "") -> Event:
    """A generic ``eps``-DP mechanism invoked ``count`` times."""
    return Event("pure", eps=float(eps), count=int(count), label=label)


def approx(eps: float, delta: float, count: int = 1, label: str = "") -> Event:
    """A generic ``(eps, delta)``-DP mechanism invoked ``count`` times."""
    return Event("approx", eps=float(eps), delta=float(delta), count=int(count), label=label)


def sequential(*items: Item, count: int = 1, label: str = "", delta_extra: float = 0.0) -> Ledger:
    """Adaptive (sequential) composition of ``items`` on the same data, repeated ``count`` times."""
    return Ledger(items=items, composition="sequential", count=int(count), label=label, delta_extra=float(delta_extra))


def parallel(*items: Item, count: int = 1, label: str = "") -> Ledger:
    """``items`` on disjoint parts of the data (parallel composition: the worst child)."""
    return Ledger(items=items, composition="parallel", count=int(count), label=label)
