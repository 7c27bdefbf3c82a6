"""One mechanism of a ledger: the event kinds (:class:`EventKind` and the tables of kinds), the
:class:`Event` record and the validation of its fields (the ledger's module docstring describes the kinds).

Import these from ``jaxdp.privacy.accounting.ledger``."""
from __future__ import annotations

import dataclasses
import enum
import math
from typing import Optional

import numpy as np

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
            from .amplification import sampled_dp_event

            one = sampled_dp_event(self)
        elif self.kind == "laplace":
            one = E.laplace_event(self.noise_multiplier)
        elif self.kind == "randomized_response" or (self.kind != "approx" and self.eps > 0):
            one = E.pure_dp_event(self.eps)
        else:
            raise ValueError(f"no dp_accounting event for {self.describe()}")
        return one if self.count == 1 else E.self_composed_event(one, self.count)

    def scaled(self, count: int) -> "Event":
        return dataclasses.replace(self, count=int(count))

    # --------------------------------------------------------------- float δ floor
    @property
    def float_sampler(self) -> Optional[str]:
        """The float sampler behind the event (``float_kind`` or the kind's own); ``None`` if none is named."""
        return self.float_kind or _FLOAT_KIND.get(self.kind)

    @property
    def float_release(self) -> str:
        """``"threshold"`` or ``"raw"``: ``release`` or the kind's default."""
        return self.release or ("raw" if self.kind in _RAW_BY_DEFAULT else "threshold")


def _check_float_fields(e: Event) -> None:
    """Validate the float-floor fields of an event (``ValueError`` naming the field, the value and what is allowed)."""
    from .floating import FLOAT_KINDS

    if e.float_kind and e.float_kind not in FLOAT_KINDS:
        raise ValueError(f"float_kind must be '' or one of {list(FLOAT_KINDS)}, got {e.float_kind!r}")
    if e.release and e.release not in RELEASES:
        raise ValueError(f"release must be '' or one of {list(RELEASES)}, got {e.release!r}")
    for name, lo in (("float_draws", 0), ("float_dim", 1), ("float_draws_total", 0)):
        v = getattr(e, name)
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
