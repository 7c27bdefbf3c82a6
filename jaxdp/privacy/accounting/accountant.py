"""The accountant: a ledger in, the tightest valid ``(ε, δ)`` out (docs/guide/privacy-ledger.md#the-accountant).

:func:`certify` evaluates every bound that is valid for the ledger at the δ budget and
returns the smallest ε, naming the bound it used:

* ``basic`` — basic composition ``(Σ ε_i, Σ δ_i)`` (Dwork–Roth Thm 3.16); the only bound
  with δ = 0 for a pure ledger, and the one reported whenever nothing else is smaller;
* ``optimal`` — the exact optimal composition of ``k`` identical ``(ε, δ)`` mechanisms
  (Kairouz–Oh–Viswanath 2015 Thm 3.3), for ``k <= OPTIMAL_AUTO_MAX_K``; a ledger whose
  top-level items repeat (``Ledger(count=K)`` of a phase) is also tried with each phase
  collapsed to its basic ``(ε, δ)``;
* ``advanced`` — Dwork–Roth Thm 3.20 with its full ``kε(e^ε − 1)`` term (homogeneous);
* ``kov15`` — Kairouz–Oh–Viswanath Thm 3.5 (heterogeneous, the corrected form);
* ``zcdp`` — ρ-zCDP (Bun–Steinke; ε-DP ⇒ ε²/2-zCDP, Gaussian ``1/(2m²)``) with the
  Canonne–Kamath–Steinke conversion, for ledgers of Gaussian and pure events;
* ``gaussian`` — a ledger of Gaussian events only is one Gaussian with the summed ρ: its exact
  privacy profile (analytic Gaussian mechanism, Balle–Wang 2018, via ``dp_accounting``);
* ``pld`` — ``dp_accounting``'s privacy-loss distributions (pessimistic discretisation,
  an upper bound) for ledgers mixing Gaussian and pure events, heterogeneous pure events,
  or more than ``OPTIMAL_AUTO_MAX_K`` identical ones;
* ``parallel`` — parallel composition over disjoint data: the worst child;
* ``pld`` / ``rdp`` with amplification — ledgers holding subsampled Gaussians (``poisson_sampled``,
  ``fixed_size_sampled``): ``dp_accounting``'s PLD (pessimistic, discretisation ``1e-4``) and RDP
  accountants of the whole ledger with the sampling (:mod:`jaxdp.privacy.accounting.amplification`); the
  other bounds count those events as un-sampled Gaussians.

``delta_extra`` of the ledger (failure events) is charged first: the composition bounds
get ``δ_budget − Σ delta_extra``. Every :class:`~jaxdp.privacy.accounting.ledger.Event` and
:class:`~jaxdp.privacy.accounting.ledger.Ledger` validates its fields when it is built (an unknown kind, a
parameter that its kind does not have, a negative count or a δ outside ``[0, 1]`` raises), and
:func:`certify` checks the budget, so nothing reaches the bounds that they cannot account.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from typing import Optional

import numpy as np

from .composition import OPTIMAL_AUTO_MAX_K, _eps_opt
from .amplification import (
    PLD_DISCRETIZATION, amplification_supported, amplified_pld_eps, amplified_rdp_eps, sampling_relation,
)
from .ledger import Event, Ledger, PURE_KINDS, SAMPLED_KINDS
from .zcdp import _eps_cks, gaussian_eps_exact

__all__ = ["Certificate", "certify", "BOUNDS", "PLD_MAX_SUPPORT"]

BOUNDS = ("basic", "optimal", "advanced", "kov15", "zcdp", "gaussian", "pld", "rdp", "parallel", "none")
#: PLD is skipped when the composed support would exceed this many discretisation points.
PLD_MAX_SUPPORT = 3.0e4
PLD_ROUNDING = 0.005
_REL = 1e-12


@dataclasses.dataclass(frozen=True)
class Certificate:
    """``(eps, delta)`` proved for a ledger, and the name of the bound that proved it (``BOUNDS``).

    Attributes:
        eps, delta: the privacy proved.
        bound: the name of the bound that proved it (``BOUNDS``).
        detail: per-bound values, for reports.
    """

    eps: float
    delta: float
    bound: str
    detail: str = ""

    def to_dict(self) -> dict:
        return {"eps": self.eps, "delta": self.delta, "bound": self.bound, "detail": self.detail}


def certify(ledger: Ledger | Event, delta: float = 0.0, *, use_pld: bool = True) -> Certificate:
    """The smallest ε that a valid bound proves for ``ledger`` with total δ at most ``delta``.

    ``delta = 0`` asks for pure DP (basic composition of pure events). Returns ``eps = inf``
    (bound ``"none"``) when nothing certifies the budget (e.g. its failure events alone exceed it).

    Args:
        ledger: a :class:`Ledger` or a single :class:`Event`.
        delta: the total δ budget (0: pure DP).
        use_pld: also try ``dp_accounting``'s PLD accountant.

    Returns:
        A :class:`Certificate` (``eps = inf``, bound ``"none"``, when nothing certifies the budget).

    Example:
        >>> from jaxdp.privacy.accounting import ledger as LG
        >>> certify(LG.sequential(LG.laplace(10.0, count=5)), 0.0)    # five Lap(10) releases, sensitivity 1
        Certificate(eps=0.5, delta=0.0, bound='basic', detail='basic composition (Dwork-Roth Thm 3.16)')
    """
    if isinstance(ledger, Event):
        ledger = Ledger(items=(ledger,))
    if not isinstance(ledger, Ledger):
        raise TypeError(f"certify: ledger must be a jaxdp.privacy.accounting.ledger.Ledger or Event, got "
                        f"{type(ledger).__name__}")
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.integer, np.floating)) \
            or not 0 <= float(delta) < 1:
        raise ValueError(f"certify: delta (the total delta budget) must be a number in [0, 1), got {delta!r}")
    return _certify(ledger, float(delta), bool(use_pld))


NONE = Certificate(math.inf, 1.0, "none", "nothing certifies this delta budget")


@functools.lru_cache(maxsize=4096)
def _certify(L: Ledger, budget: float, use_pld: bool) -> Certificate:
    if L.composition == "parallel":
        return _certify_parallel(L, budget, use_pld)
    atoms, extra = _atoms(L, budget, use_pld)
    if atoms is None:
        return NONE
    avail = budget - extra
    if avail < -_REL * max(budget, 1e-300):
        return NONE
    avail = max(avail, 0.0)
    cands: list[Certificate] = []
    gauss = [(e, m) for e, m in atoms if e.is_gaussian]
    dps = [(e, m) for e, m in atoms if not e.is_gaussian]
    groups = _groups(dps)
    sum_d = sum(m * d for (_, d), m in groups.items())
    if not gauss:
        eps_b = sum(m * e for (e, _), m in groups.items())
        if sum_d <= avail * (1 + _REL) + 1e-300:
            cands.append(Certificate(eps_b, min(1.0, sum_d + extra), "basic", "basic composition (Dwork-Roth Thm 3.16)"))
        if avail > sum_d:
            cands += _approx_bounds(groups, avail, extra, "")
            coll = _collapsed(L, budget, use_pld)
            if coll is not None and coll != groups:
                cands += _approx_bounds(coll, avail, extra, " (phases collapsed)")
    if avail > 0:
        if all(e.kind in PURE_KINDS or e.is_gaussian or (e.kind == "approx" and e.delta == 0) for e, _ in atoms):
            rho = sum(m * e.rho for e, m in atoms)
            if rho > 0:
                v = float(_eps_cks(np.float64(rho), np.float64(math.log(1.0 / avail))))
                bs = rho + 2.0 * math.sqrt(rho * math.log(1.0 / avail))
                cands.append(Certificate(min(v, bs), budget, "zcdp",
                                         f"zCDP rho={rho:.6g} (Bun-Steinke; Canonne-Kamath-Steinke conversion)"))
        if gauss and not groups:
            c = _gaussian_exact(gauss, avail, budget)
            if c is not None:
                cands.append(c)
        big = sum(groups.values()) > OPTIMAL_AUTO_MAX_K
        if use_pld and groups and (gauss or len(groups) > 1 or big):
            c = _pld(gauss, groups, avail, budget)
            if c is not None:
                cands.append(c)
    if 0 < avail < 1 and any(e.kind in SAMPLED_KINDS for e, _ in atoms):
        cands += sampled_candidates(atoms, avail, budget, use_pld)
    if not cands:
        return NONE
    best = min(cands, key=lambda c: (c.eps, c.delta))
    basic = next((c for c in cands if c.bound == "basic"), None)
    if basic is not None and basic.eps <= best.eps * (1 + 1e-9):
        return basic
    return best


def _certify_parallel(L: Ledger, budget: float, use_pld: bool) -> Certificate:
    certs = [_certify(it if isinstance(it, Ledger) else Ledger(items=(it,)), budget, use_pld) for it in L.items]
    if any(math.isinf(c.eps) for c in certs):
        return NONE
    worst = max(certs, key=lambda c: (c.eps, c.delta))
    eps, dl = worst.eps, max(c.delta for c in certs)
    if L.count == 1:
        return Certificate(eps, dl, "parallel", f"parallel composition over disjoint data: worst child by {worst.bound}")
    inner = Ledger(items=(Event("approx", eps=eps, delta=dl, count=L.count),))
    c = _certify(inner, budget, use_pld)
    return dataclasses.replace(c, detail=f"{L.count} repetitions of a parallel block; " + c.detail)


def _atoms(L: Ledger, budget: float, use_pld: bool):
    """Flatten sequential sub-ledgers; collapse parallel ones to an (ε, δ) event. Returns (atoms, delta_extra)."""
    atoms: list[tuple[Event, int]] = []
    extra = L.delta_extra
    for it in L.items:
        if isinstance(it, Ledger):
            if it.composition == "parallel":
                share = 0.0 if it.is_pure else budget / 2.0
                c = _certify(dataclasses.replace(it, count=1), share, use_pld)
                if math.isinf(c.eps):
                    return None, 0.0
                atoms.append((Event("approx", eps=c.eps, delta=c.delta), it.count))
            else:
                sub, sub_extra = _atoms(dataclasses.replace(it, count=1), budget, use_pld)
                if sub is None:
                    return None, 0.0
                atoms += [(e, m * it.count) for e, m in sub]
                extra += it.count * sub_extra
        else:
            atoms.append((it, it.count))
    return [(e, m * L.count) for e, m in atoms], L.count * extra


def _groups(dps) -> dict:
    g: dict = {}
    for e, m in dps:
        key = e.dp()
        if key[0] == 0 and key[1] == 0:
            continue
        g[key] = g.get(key, 0) + int(m)
    return g


def _collapsed(L: Ledger, budget: float, use_pld: bool) -> Optional[dict]:
    """Each top-level sequential sub-ledger as one event with its basic (ε, δ) per repetition."""
    if not any(isinstance(it, Ledger) and it.composition == "sequential" for it in L.items):
        return None
    out: dict = {}
    for it in L.items:
        if isinstance(it, Ledger) and it.composition == "sequential":
            sub, sub_extra = _atoms(dataclasses.replace(it, count=1), budget, use_pld)
            if sub is None or sub_extra or any(e.is_gaussian for e, _ in sub):
                return None
            e1 = sum(m * e.eps for e, m in sub)
            d1 = min(1.0, sum(m * e.delta for e, m in sub))
            key, m = (e1, d1), it.count * L.count
        elif isinstance(it, Ledger) or it.is_gaussian:
            return None
        else:
            key, m = it.dp(), it.count * L.count
        out[key] = out.get(key, 0) + m
    return out


def _homogeneous(e: float, d: float, k: int, avail: float) -> list[tuple[float, str, str]]:
    """(ε, name, detail) of the homogeneous bounds for ``k`` x ``(e, d)`` at total δ ``avail``."""
    out: list[tuple[float, str, str]] = []
    if e <= 0 or k < 1:
        return out
    floor = -math.expm1(k * math.log1p(-d)) if d > 0 else 0.0
    if k <= OPTIMAL_AUTO_MAX_K and avail >= floor:
        out.append((_eps_opt(e, k, avail, d), "optimal",
                    f"exact optimal composition of {k} x ({e:.6g}, {d:.3g}) (Kairouz-Oh-Viswanath Thm 3.3)"))
    slack = avail - k * d
    if 0 < slack < 1:
        v = math.sqrt(2.0 * k * math.log(1.0 / slack)) * e + k * e * math.expm1(min(e, 700.0))
        out.append((v, "advanced", f"advanced composition of {k} x ({e:.6g}, {d:.3g}) with k eps (e^eps - 1) "
                                   f"(Dwork-Roth Thm 3.20)"))
    one_minus = (1.0 - avail) / math.exp(k * math.log1p(-d))
    dtil = 1.0 - one_minus
    if 0 < dtil < 1:
        out.append((_kov(k * e * math.tanh(e / 2.0), k * e * e, dtil), "kov15",
                    f"composition of {k} x ({e:.6g}, {d:.3g}) (Kairouz-Oh-Viswanath Thm 3.5)"))
    return out


def _kov(s1: float, s2: float, dtil: float) -> float:
    a = s1 + math.sqrt(2.0 * s2 * math.log(math.e + math.sqrt(s2) / dtil))
    b = s1 + math.sqrt(2.0 * s2 * math.log(1.0 / dtil))
    return min(a, b)


def _approx_bounds(groups: dict, avail: float, extra: float, tag: str) -> list[Certificate]:
    out: list[Certificate] = []
    budget = avail + extra
    if not groups:
        return out
    if len(groups) == 1:
        (e, d), k = next(iter(groups.items()))
        out += [Certificate(v, budget, n, det + tag) for v, n, det in _homogeneous(e, d, k, avail)]
    else:
        # the most frequent (ε, δ) by a homogeneous bound, every other event by basic composition
        (e, d), k = max(groups.items(), key=lambda kv: kv[1])
        rest_e = sum(m * ee for (ee, _), m in groups.items() if (ee, _) != (e, d))
        rest_d = sum(m * dd for (_, dd), m in groups.items() if (_, dd) != (e, d))
        if avail - rest_d > 0:
            out += [Certificate(v + rest_e, budget, n, det + f" + {rest_e:.6g} for the other events by basic "
                                                              f"composition{tag}")
                    for v, n, det in _homogeneous(e, d, k, avail - rest_d)]
    # KOV15 Thm 3.5 (heterogeneous, corrected): δ_tot = 1 − (1 − δ̃) Π (1 − δ_i)^{m_i}
    log_keep = sum(m * math.log1p(-d) for (_, d), m in groups.items())
    one_minus = (1.0 - avail) / math.exp(log_keep)
    dtil = 1.0 - one_minus
    if 0 < dtil < 1 and len(groups) > 1:
        s1 = sum(m * e * math.tanh(e / 2.0) for (e, _), m in groups.items())
        s2 = sum(m * e * e for (e, _), m in groups.items())
        out.append(Certificate(_kov(s1, s2, dtil), budget, "kov15",
                               f"heterogeneous composition (Kairouz-Oh-Viswanath Thm 3.5){tag}"))
    return out


def _gaussian_exact(gauss, avail: float, budget: float) -> Optional[Certificate]:
    """Composed Gaussians are one Gaussian with the summed ρ: its exact ε (analytic Gaussian mechanism)."""
    if not 0 < avail < 1:
        return None
    rho = sum(m * 0.5 / e.gaussian_multiplier ** 2 for e, m in gauss)
    m_eff = 1.0 / math.sqrt(2.0 * rho)
    eps = gaussian_eps_exact(1.0, m_eff, avail)
    return Certificate(eps, budget, "gaussian", f"exact privacy profile of the composed Gaussian, noise multiplier "
                                                f"{m_eff:.6g} (analytic Gaussian mechanism, Balle-Wang 2018)")


def _rounding(groups: dict, vdi: float) -> float:
    """Total upward rounding of the pure ε's onto a grid of step ``vdi``."""
    return sum(m * (math.ceil(e / vdi - 1e-12) * vdi - e) for (e, _), m in groups.items())


def _pld(gauss, groups: dict, avail: float, budget: float) -> Optional[Certificate]:
    """dp_accounting PLD (pessimistic) of the whole ledger at ``avail``; None where too costly."""
    if avail <= 0 or avail >= 1:
        return None
    from dp_accounting.pld import common, privacy_loss_distribution as P
    rng = sum(2.0 * m * e for (e, _), m in groups.items())
    rho = sum(m * 0.5 / e.gaussian_multiplier ** 2 for e, m in gauss)
    scale = max(rng, 10.0 * math.sqrt(2.0 * rho) + 2.0 * rho, 1e-3)
    vdi = max(1e-4, scale / PLD_MAX_SUPPORT)
    # pessimistic discretisation rounds each pure ε up to the grid; refine the grid (up to 8× the support)
    # until that rounding costs at most PLD_ROUNDING of the composed ε, so the bound moves smoothly with
    # the ledger (more events never certify visibly less)
    total = sum(m * e for (e, _), m in groups.items())
    for _ in range(3):
        if _rounding(groups, vdi) <= PLD_ROUNDING * total:
            break
        vdi /= 2.0
    if groups and min(e for e, _ in groups) < vdi / 4:
        return None   # the pessimistic rounding would dominate: not a useful bound
    pld = None
    if gauss:
        m_eff = 1.0 / math.sqrt(2.0 * rho)   # composed Gaussians are one Gaussian with the summed rho
        pld = P.from_gaussian_mechanism(m_eff, value_discretization_interval=vdi)
    for (e, d), m in groups.items():
        one = P.from_privacy_parameters(common.DifferentialPrivacyParameters(e, d), value_discretization_interval=vdi)
        p = one.self_compose(m) if m > 1 else one
        pld = p if pld is None else pld.compose(p)
    if pld is None:
        return None
    eps = float(pld.get_epsilon_for_delta(avail))
    if not math.isfinite(eps):
        return None
    return Certificate(max(eps, 0.0), budget, "pld", f"dp_accounting PLD, pessimistic, discretisation {vdi:.2g}")


def sampled_candidates(atoms, avail: float, budget: float, use_pld: bool = True) -> list:
    """The accountant's amplified candidates for flattened ``atoms`` (event, multiplicity) at δ ``avail``:
    ``dp_accounting`` PLD (if ``use_pld``) and RDP epsilons of the whole ledger; empty where an event has no
    ``dp_accounting`` form here (pure-DP kinds).

    Args:
        atoms: ``(event, multiplicity)`` pairs of a sequential ledger, enclosing counts multiplied in.
        avail: the δ the mechanisms may use (the ledger's δ budget less its failure-event δ); outside ``(0, 1)``
            nothing is returned.
        budget: the total δ budget, recorded in each certificate.
        use_pld: also compute the PLD epsilon (pessimistic, discretisation :data:`PLD_DISCRETIZATION`).

    Returns:
        A list of :class:`jaxdp.privacy.accounting.Certificate` (methods ``"pld"`` and ``"rdp"``; RDP is omitted for Poisson
        sampling under replace-one), possibly empty.

    Raises:
        ValueError: the atoms mix add/remove and replace-one sampled events.
    """
    if not amplification_supported(atoms) or not 0 < avail < 1:
        return []
    rel = sampling_relation(atoms)
    out = []
    what = "/".join(sorted({e.describe().split("(")[0] for e, _ in atoms if e.kind in SAMPLED_KINDS}))
    if use_pld:
        eps = amplified_pld_eps(atoms, avail, PLD_DISCRETIZATION)
        if math.isfinite(eps):
            out.append(Certificate(max(eps, 0.0), budget, "pld", f"dp_accounting PLD with amplification by "
                                                                 f"sampling ({what}, {rel}), pessimistic, "
                                                                 f"discretisation {PLD_DISCRETIZATION:.2g}"))
    eps_rdp = amplified_rdp_eps(atoms, avail, rel)
    if eps_rdp is not None and math.isfinite(eps_rdp):
        out.append(Certificate(max(eps_rdp, 0.0), budget, "rdp", f"dp_accounting RDP with amplification by sampling "
                                                             f"({what}, {rel})"))
    return out
