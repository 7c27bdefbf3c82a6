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
import enum
import math
from typing import Any, Iterator, Optional, Union

import numpy as np

__all__ = ['Event', 'EventKind', 'Ledger', 'EVENT_KINDS', 'PURE_KINDS', 'GAUSSIAN_KINDS', 'SAMPLED_KINDS', 'RELEASES', 'laplace', 'gaussian', 'tree_aggregation', 'exponential', 'above_threshold', 'randomized_response', 'pure', 'approx', 'sequential', 'parallel']


PURE_KINDS = ("laplace", "exponential", "above_threshold", "randomized_response", "pure")
#: Gaussian mechanisms on a random sample of the records (jaxdp.privacy.accounting.amplification)
SAMPLED_KINDS = ("poisson_sampled", "fixed_size_sampled")
GAUSSIAN_KINDS = ("gaussian", "tree_aggregation") + SAMPLED_KINDS
EVENT_KINDS = PURE_KINDS + GAUSSIAN_KINDS + ("approx",)
#: neighbouring relations a sampled event can be stated for ("" = the kind's default)
NEIGHBORING = ("add_remove", "replace_one")

# float sampler behind each kind, for the float δ floor (jaxdp.privacy.accounting.floating); generic kinds name none
_FLOAT_KIND = {"laplace": "laplace", "gaussian": "gaussian", "tree_aggregation": "gaussian",
               "poisson_sampled": "gaussian", "fixed_size_sampled": "gaussian",
               "exponential": "categorical", "above_threshold": "laplace", "randomized_response": "bernoulli"}
#: how an event's float output is released: ``"threshold"`` (only through comparisons: a sampled index, an
#: AboveThreshold answer, a noisy value compared with a threshold) or ``"raw"`` (the noisy float itself)
RELEASES = ("threshold", "raw")
# kinds whose output is the noisy value itself unless the planner says otherwise
_RAW_BY_DEFAULT = ("laplace", "gaussian", "tree_aggregation") + SAMPLED_KINDS


class EventKind(str, enum.Enum):
    """The mechanisms the accountant can account (module docstring). ``Event(kind=...)`` takes a member or its
    value; anything else raises ``ValueError``."""

    LAPLACE = "laplace"
    GAUSSIAN = "gaussian"
    TREE_AGGREGATION = "tree_aggregation"
    POISSON_SAMPLED = "poisson_sampled"
    FIXED_SIZE_SAMPLED = "fixed_size_sampled"
    EXPONENTIAL = "exponential"
    ABOVE_THRESHOLD = "above_threshold"
    RANDOMIZED_RESPONSE = "randomized_response"
    PURE = "pure"
    APPROX = "approx"


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_num(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _validate_event(e: "Event") -> None:
    """Every field of an :class:`Event` the accountant relies on; raises naming the field, value and what is allowed."""
    kind = e.kind.value if isinstance(e.kind, EventKind) else e.kind
    if not isinstance(kind, str) or kind not in EVENT_KINDS:
        raise ValueError(f"Event kind must be one of {list(EVENT_KINDS)} (or a jaxdp.privacy.accounting.ledger.EventKind), "
                         f"got {e.kind!r}")
    object.__setattr__(e, "kind", kind)
    for name in ("eps", "delta", "noise_multiplier"):
        v = getattr(e, name)
        if not _is_num(v) or math.isnan(v) or v < 0:
            raise ValueError(f"Event({kind!r}): {name} must be a number >= 0, got {v!r}")
        object.__setattr__(e, name, float(v))
    for name in ("count", "steps"):
        v = getattr(e, name)
        if not _is_int(v) or v < 0:
            raise ValueError(f"Event({kind!r}): {name} must be an integer >= 0, got {v!r}")
        object.__setattr__(e, name, int(v))
    if e.delta > 1:
        raise ValueError(f"Event({kind!r}): delta must be in [0, 1], got {e.delta!r}")
    if kind in GAUSSIAN_KINDS or kind == "laplace":
        if not e.noise_multiplier > 0:
            raise ValueError(f"Event({kind!r}): noise_multiplier (noise scale / sensitivity) must be > 0, got "
                             f"{e.noise_multiplier!r}")
    elif e.noise_multiplier != 0:
        raise ValueError(f"Event({kind!r}): noise_multiplier is not a parameter of this kind (it is accounted by "
                         f"eps); got noise_multiplier={e.noise_multiplier!r}")
    if kind in GAUSSIAN_KINDS and (e.eps != 0 or e.delta != 0):
        raise ValueError(f"Event({kind!r}): a Gaussian event is described by noise_multiplier alone; got "
                         f"eps={e.eps!r}, delta={e.delta!r} (the accountant derives its privacy)")
    if kind == "laplace":
        if e.eps == 0:
            object.__setattr__(e, "eps", 1.0 / e.noise_multiplier)
        elif not math.isclose(e.eps, 1.0 / e.noise_multiplier, rel_tol=1e-9):
            raise ValueError(f"Event('laplace'): eps must be 1/noise_multiplier = {1.0 / e.noise_multiplier!r}, got "
                             f"eps={e.eps!r}")
    if kind == "tree_aggregation" and e.steps < 1:
        raise ValueError(f"Event('tree_aggregation'): steps (the number of inputs T) must be >= 1, got {e.steps!r}")
    if kind != "tree_aggregation" and e.steps != 0:
        raise ValueError(f"Event({kind!r}): steps is a parameter of tree_aggregation only, got steps={e.steps!r}")
    _validate_sampling(e, kind)
    from .floating import FLOAT_KINDS

    if e.float_kind and e.float_kind not in FLOAT_KINDS:
        raise ValueError(f"float_kind must be '' or one of {list(FLOAT_KINDS)}, got {e.float_kind!r}")
    if e.release and e.release not in RELEASES:
        raise ValueError(f"release must be '' or one of {list(RELEASES)}, got {e.release!r}")
    for name, lo in (("float_draws", 0), ("float_dim", 1), ("float_draws_total", 0)):
        v = getattr(e, name)
        if not _is_int(v) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    if kind != "approx" and kind not in GAUSSIAN_KINDS and e.delta != 0:
        raise ValueError(f"Event({kind!r}) is pure: delta must be 0 (use kind='approx' for an (eps, delta) "
                         f"mechanism), got delta={e.delta!r}")


def _validate_sampling(e: "Event", kind: str) -> None:
    """The sampling fields: set for the sampled kinds only (see :mod:`jaxdp.privacy.accounting.amplification`)."""
    q, m, n, rel = e.sampling_rate, e.sample_size, e.population, e.neighboring
    if not _is_num(q) or math.isnan(q) or not 0 <= q <= 1:
        raise ValueError(f"Event({kind!r}): sampling_rate must be a number in [0, 1], got {q!r}")
    object.__setattr__(e, "sampling_rate", float(q))
    for name, v in (("sample_size", m), ("population", n)):
        if not _is_int(v) or v < 0:
            raise ValueError(f"Event({kind!r}): {name} must be an integer >= 0, got {v!r}")
        object.__setattr__(e, name, int(v))
    if rel not in ("",) + NEIGHBORING:
        raise ValueError(f"Event({kind!r}): neighboring must be '' or one of {list(NEIGHBORING)}, got {rel!r}")
    if kind == "poisson_sampled":
        if not 0 < e.sampling_rate <= 1:
            raise ValueError(f"Event('poisson_sampled'): sampling_rate must be in (0, 1], got {q!r}")
        if e.sample_size or e.population:
            raise ValueError("Event('poisson_sampled'): sample_size and population belong to fixed_size_sampled")
        if not rel:
            object.__setattr__(e, "neighboring", "add_remove")
    elif kind == "fixed_size_sampled":
        if not 1 <= e.sample_size <= e.population:
            raise ValueError(f"Event('fixed_size_sampled'): need 1 <= sample_size <= population, got "
                             f"sample_size={m!r}, population={n!r}")
        if rel == "add_remove":
            raise ValueError("Event('fixed_size_sampled'): a fixed-size sample is stated for replace-one neighbours "
                             "(the population size is public); use poisson_sampled for add/remove")
        object.__setattr__(e, "neighboring", "replace_one")
        object.__setattr__(e, "sampling_rate", e.sample_size / e.population)
    elif q or m or n or rel:
        raise ValueError(f"Event({kind!r}): sampling_rate, sample_size, population and neighboring are parameters "
                         f"of the sampled kinds {list(SAMPLED_KINDS)} only")


@dataclasses.dataclass(frozen=True)
class Event:
    """One mechanism invoked ``count`` times adaptively (see the module docstring for the kinds).

    ``eps``/``delta``: privacy of one invocation (pure and approximate kinds; for ``laplace`` it is
    ``1/noise_multiplier``). ``noise_multiplier``: noise scale over sensitivity (Laplace, Gaussian,
    tree). ``steps``: tree aggregation's ``T``.

    Float δ floor only (:meth:`Ledger.delta_float`, docs/guide/privacy-ledger.md#float-floor):

    * ``float_kind``: the sampler (:data:`jaxdp.privacy.accounting.floating.FLOAT_KINDS`); ``""`` = the kind's own
      (``laplace``, ``gaussian``, ``categorical`` for ``exponential``, ``bernoulli`` for randomized response);
      ``pure``/``approx`` name none, and a ledger holding one has an unknown floor.
    * ``release``: ``"threshold"`` or ``"raw"`` (:data:`RELEASES`); ``""`` = the kind's default (``raw`` for
      ``laplace``, ``gaussian``, ``tree_aggregation``: they publish the noisy value; ``threshold`` otherwise).
      A raw release has no valid floor.
    * ``float_draws``: coupling terms of **one invocation**: one per float draw and per threshold decision it
      enters (an AboveThreshold instance over ``k`` queries: ``k``, each comparing a fresh query noise with
      the threshold noise).
    * ``float_dim``: coordinates (``laplace``, ``gaussian``, ``rr_vector``) or outcomes (``categorical``,
      ``gumbel``) of each term, the ``d`` of :func:`jaxdp.privacy.accounting.floating.tv_float`.
    * ``float_draws_total``: if ``> 0``, a cap on the terms of **all** invocations of this event in one run,
      enclosing repetitions included (``K`` AboveThreshold instances that share ``T`` rounds: ``T``).

    Attributes:
        kind: the mechanism kind (module docstring).
        eps, delta: privacy of one invocation (pure and approximate kinds; for ``laplace``, ``1/noise_multiplier``).
        noise_multiplier: noise scale over sensitivity (Laplace, Gaussian, tree).
        count: the number of adaptive invocations.
        steps: tree aggregation's ``T``.
        label: a name for reports.
        float_draws: coupling terms of one invocation (float δ floor only).
        float_dim: coordinates or outcomes of each term (float δ floor only).
        float_kind: the sampler (:data:`jaxdp.privacy.accounting.floating.FLOAT_KINDS`); ``""``: the kind's own.
        release: ``"threshold"`` or ``"raw"`` (:data:`RELEASES`); ``""``: the kind's default.
        float_draws_total: if ``> 0``, a cap on the terms of all invocations of this event in one run.
        sampling_rate: Poisson subsampling rate of the event (amplification), if any.
        sample_size: sample size of sampling without replacement (amplification), if any.
        population: population size for sampling without replacement, if any.
        neighboring: the neighbouring relation of the amplification bound.
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
    float_kind: str = ""
    release: str = ""
    float_draws_total: int = 0
    sampling_rate: float = 0.0
    sample_size: int = 0
    population: int = 0
    neighboring: str = ""

    def __post_init__(self):
        _validate_event(self)

    # --------------------------------------------------------------- privacy of one invocation
    @property
    def is_gaussian(self) -> bool:
        return self.kind in GAUSSIAN_KINDS

    @property
    def tree_levels(self) -> int:
        return int(self.steps).bit_length()

    @property
    def gaussian_multiplier(self) -> float:
        """σ over the ℓ2-sensitivity of the whole release (tree: ``σ/(sqrt(H) Δ_node)``; a sampled event: of the
        un-sampled Gaussian under its relation, ``σ/C`` for add/remove and ``σ/(2C)`` for replace-one)."""
        if self.kind == "tree_aggregation":
            return self.noise_multiplier / math.sqrt(self.tree_levels)
        if self.kind in SAMPLED_KINDS and self.neighboring == "replace_one":
            return self.noise_multiplier / 2.0
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
            if self.kind == "poisson_sampled":
                p += f", Poisson rate q={self.sampling_rate:.6g}, {self.neighboring}"
            if self.kind == "fixed_size_sampled":
                p += f", sample {self.sample_size} of {self.population}, {self.neighboring}"
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
            if self.kind in SAMPLED_KINDS:
                out["sampling_rate"] = self.sampling_rate
                out["neighboring"] = self.neighboring
                if self.kind == "fixed_size_sampled":
                    out["sample_size"], out["population"] = self.sample_size, self.population
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
        elif self.kind in SAMPLED_KINDS:
            one = E.sampled_dp_event(self)
        elif self.kind == "laplace":
            one = E.laplace_event(self.noise_multiplier)
        elif self.kind == "randomized_response" or (self.kind != "approx" and self.eps > 0):
            one = E.pure_dp_event(self.eps)
        else:
            raise ValueError(f"no dp_accounting event for {self.describe()}")
        return one if self.count == 1 else E.self_composed_event(one, self.count)

    # --------------------------------------------------------------- float δ floor
    @property
    def float_sampler(self) -> Optional[str]:
        """The float sampler behind the event (``float_kind`` or the kind's own); ``None`` if none is named."""
        return self.float_kind or _FLOAT_KIND.get(self.kind)

    @property
    def float_release(self) -> str:
        """``"threshold"`` or ``"raw"``: ``release`` or the kind's default."""
        return self.release or ("raw" if self.kind in _RAW_BY_DEFAULT else "threshold")


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
    return Event("laplace", eps=1.0 / noise_multiplier, noise_multiplier=float(noise_multiplier), count=int(count),
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
    return Event("gaussian", noise_multiplier=float(noise_multiplier), count=int(count), label=label,
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
    return Event("tree_aggregation", noise_multiplier=float(noise_multiplier), steps=int(steps), count=int(count),
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
    return Event("exponential", eps=float(eps), count=int(count), label=label, float_dim=int(outcomes),
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
    return Event("above_threshold", eps=float(eps), count=int(count), label=label, float_draws=queries,
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
    return Event("randomized_response", eps=float(eps), count=int(count), label=label, float_dim=int(dim),
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
    return Event("pure", eps=float(eps), count=int(count), label=label, float_kind=sampler, float_dim=int(dim),
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
    return Event("approx", eps=float(eps), delta=float(delta), count=int(count), label=label, float_kind=sampler,
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
