"""``Plan``: parameters for an algorithm, the ledger of what it releases, and what the accountant proves.

Every planner (``jaxdp plan NAME``) returns a :class:`Plan` built by :func:`make_plan`:
the planner writes the algorithm's :class:`~jaxdp.privacy.accounting.ledger.Ledger` for the
parameters it chose, and :func:`jaxdp.privacy.accounting.certify` turns it into
``(eps_certified, delta_certified)`` and names the bound it used. No planner composes
ε by its own formula. See docs/guide/privacy-ledger.md.
"""
from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Optional

from .accountant import Certificate, certify
from .ledger import Ledger

__all__ = ["Plan", "PLAN_MODES", "make_plan", "NO_FLOAT_FLOOR_RAW", "NO_FLOAT_FLOOR_UNKNOWN"]

PLAN_MODES = ("paper", "certified", "rate", "retuned")
#: what a plan says instead of a float δ floor when its ledger releases a raw float (Mironov 2012)
NO_FLOAT_FLOOR_RAW = "no valid float floor (raw float release)"
#: ... and when a generic event of its ledger names no float sampler
NO_FLOAT_FLOOR_UNKNOWN = "float floor unknown (a generic mechanism names no float sampler)"


@dataclasses.dataclass
class Plan:
    """What a planner returns: parameters for an algorithm and the privacy their ledger proves.

    * ``params``: name -> value (host floats/ints), ready to build the algorithm's ``Params``:
      :meth:`to_params` returns the registered learner's typed ``Params``.
    * ``eps``, ``delta``: the requested (nominal) privacy.
    * ``ledger``: the mechanisms the configured algorithm runs and how they compose.
    * ``eps_certified``, ``delta_certified``, ``bound``: what :func:`jaxdp.privacy.accounting.certify`
      proves for the ledger, and which bound proved it (``inf`` where a privacy condition fails).
    * ``mode``: one of ``paper``, ``certified``, ``rate``, ``retuned``.
    * ``conditions``: the side conditions the *privacy* proof needs -> whether they hold
      (also available as ``privacy_conditions``); they count toward ``certified``.
    * ``utility_conditions``: side conditions of the utility (regret/accuracy) statement; they
      never count toward ``certified``.
    * ``delta_float``: the additive δ floor of the float32 samplers for this ledger
      (:meth:`~jaxdp.privacy.accounting.ledger.Ledger.delta_float`: every coupling term the run makes, per draw).
      Reported, not part of ``delta_certified``. ``None`` where no floor is valid, and then
      ``delta_float_note`` says why: :data:`NO_FLOAT_FLOOR_RAW` (a raw float release) or
      :data:`NO_FLOAT_FLOOR_UNKNOWN` (a generic mechanism that names no sampler).
    * ``reference``: the paper's short title and theorem; ``notes``: anything a user must know.

    Attributes:
        algorithm: the algorithm the plan configures.
        mode: one of ``paper``, ``certified``, ``rate``, ``retuned``.
        params: name -> value (host floats/ints), ready to build the algorithm's ``Params``.
        eps, delta: the requested (nominal) privacy.
        eps_certified, delta_certified: what :func:`certify` proves for the ledger (``inf`` where a privacy condition
            fails).
        conditions: the privacy proof's side conditions -> whether they hold.
        reference: the paper's short tag and theorem.
        notes: anything a user must know.
        ledger: the mechanisms the configured algorithm runs and how they compose.
        bound: which bound proved the certificate.
        utility_conditions: side conditions of the utility statement (never count toward ``certified``).
        delta_float: the additive δ floor of the float32 samplers (``None`` where no floor is valid).
        delta_float_note: why ``delta_float`` is ``None``.
    """

    algorithm: str
    mode: str
    params: dict[str, Any]
    eps: float
    delta: float
    eps_certified: float = math.inf
    delta_certified: float = 1.0
    conditions: dict[str, bool] = dataclasses.field(default_factory=dict)
    reference: str = ""
    notes: list[str] = dataclasses.field(default_factory=list)
    ledger: Optional[Ledger] = None
    bound: str = ""
    utility_conditions: dict[str, bool] = dataclasses.field(default_factory=dict)
    delta_float: Optional[float] = None
    delta_float_note: str = ""

    @property
    def privacy_conditions(self) -> dict[str, bool]:
        return self.conditions

    @property
    def certified(self) -> bool:
        """Every privacy condition holds and the certified (ε, δ) is within the request (utility conditions aside)."""
        return (all(bool(v) for v in self.conditions.values()) and self.eps_certified <= self.eps * (1 + 1e-9)
                and self.delta_certified <= self.delta * (1 + 1e-9) + 1e-300)

    def to_params(self, learner: Optional[str] = None):
        """The typed, validated ``Params`` of the learner this plan configures.

        The registered learner whose planner made the plan (``learner``: a registry name, where
        several learners take the same plans) converts it:
        :meth:`jaxdp.registry.LearnerEntry.params_from_plan`, the one conversion in the package.
        """
        from ... import registry

        entry = registry.get_learner(learner) if learner is not None else registry.learner_for_plan(self)
        return entry.params_from_plan(self)

    def to_dict(self) -> dict:
        """JSON-ready dict (what ``jaxdp plan NAME --json`` prints; its schema: ``docs/guide/plan.schema.json``).

        Types are stable: ``delta_float`` is a number or ``null`` (then ``delta_float_note`` says why); a
        non-finite number is the string ``"inf"``, ``"-inf"`` or ``"nan"``.
        """
        def num(v):
            if isinstance(v, float) and not math.isfinite(v):
                return str(v)
            return v

        return {
            "algorithm": self.algorithm, "mode": self.mode, "reference": self.reference,
            "requested": {"eps": num(self.eps), "delta": num(self.delta)},
            "certified": {"eps": num(self.eps_certified), "delta": num(self.delta_certified), "bound": self.bound,
                          "ok": self.certified},
            "delta_float": self.delta_float, "delta_float_note": self.delta_float_note,
            "params": {k: num(v) if isinstance(v, float) else v for k, v in self.params.items()},
            "ledger": None if self.ledger is None else self.ledger.to_dict(),
            "privacy_conditions": {k: bool(v) for k, v in self.conditions.items()},
            "utility_conditions": {k: bool(v) for k, v in self.utility_conditions.items()},
            "notes": list(self.notes),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=str)

    def format(self) -> str:
        lines = [f"{self.algorithm}  (mode={self.mode})  {self.reference}".rstrip()]
        lines.append(f"  requested   eps={self.eps:.6g}  delta={self.delta:.3g}")
        lines.append(f"  certified   eps={self.eps_certified:.6g}  delta={self.delta_certified:.3g}"
                     f"  -> {'OK' if self.certified else 'NOT certified at the requested level'}")
        if self.bound:
            lines.append(f"  bound       {self.bound}")
        if self.delta_float is not None:
            lines.append(f"  float32 delta floor  {self.delta_float:.3g} (samplers' float quantisation, every draw "
                         "counted; not included above)")
        elif self.delta_float_note:
            lines.append(f"  float32 delta floor  {self.delta_float_note}")
        if self.ledger is not None:
            lines.append("  ledger:")
            lines += ["    " + ln for ln in self.ledger.describe()]
        lines.append("  parameters:")
        for k, v in self.params.items():
            lines.append(f"    {k:<14} {v:.6g}" if isinstance(v, float) else f"    {k:<14} {v}")
        for title, conds in (("privacy conditions", self.conditions), ("utility conditions", self.utility_conditions)):
            if conds:
                lines.append(f"  {title}:")
                for k, v in conds.items():
                    lines.append(f"    [{'x' if v else ' '}] {k}")
        for n in self.notes:
            lines.append(f"  note: {n}")
        return "\n".join(lines)


def make_plan(*, algorithm: str, mode: str, params: dict, eps: float, delta: float, ledger: Ledger,
              delta_budget: Optional[float] = None, conditions: Optional[dict] = None,
              utility_conditions: Optional[dict] = None, reference: str = "", notes: Optional[list] = None,
              certificate: Optional[Certificate] = None) -> Plan:
    """Build a :class:`Plan` whose certificate comes from ``ledger`` (accountant at ``delta_budget``).

    ``delta_budget`` defaults to the requested ``delta``; pass ``0.0`` for an algorithm meant to be
    pure ε-DP (the plan then reports ``delta_certified = 0``). A failing privacy condition sets
    ``eps_certified = inf``.

    Args:
        algorithm: the algorithm's name (spelt with underscores, as the planner registry does: ``dp-exp3``
            becomes ``dp_exp3``).
        mode: the planner mode.
        params: the parameters (host floats/ints).
        eps, delta: the requested privacy.
        ledger: the configured algorithm's ledger.
        delta_budget: the δ at which the ledger is certified (default ``delta``; 0 for pure DP).
        conditions: privacy side conditions -> whether they hold.
        utility_conditions: utility side conditions -> whether they hold.
        reference: the paper's short tag and theorem.
        notes: notes for the user.
        certificate: a certificate already computed for ``ledger`` (skips the accountant).

    Returns:
        The :class:`Plan`.
    """
    conditions = {k: bool(v) for k, v in (conditions or {}).items()}
    notes = list(notes or [])
    budget = delta if delta_budget is None else delta_budget
    cert = certificate if certificate is not None else certify(ledger, budget)
    eps_c, delta_c, bound = cert.eps, cert.delta, cert.bound
    if cert.detail:
        bound = f"{cert.bound}: {cert.detail}"
    if not all(conditions.values()):
        bad = [k for k, v in conditions.items() if not v]
        notes.append(f"privacy condition(s) fail: {bad}; the ledger's eps={cert.eps:.6g} is not proved")
        eps_c, delta_c, bound = math.inf, 1.0, "none (a privacy condition fails)"
    return Plan(algorithm=algorithm.replace("-", "_"), mode=mode, params=params, eps=float(eps), delta=float(delta),
                eps_certified=float(eps_c), delta_certified=float(delta_c), conditions=conditions,
                reference=reference, notes=notes, ledger=ledger, bound=bound,
                utility_conditions={k: bool(v) for k, v in (utility_conditions or {}).items()},
                delta_float=ledger.delta_float(eps=float(cert.eps)),
                delta_float_note={"raw": NO_FLOAT_FLOOR_RAW, "unknown": NO_FLOAT_FLOOR_UNKNOWN}.get(ledger.float_status(), ""))
