"""Parameter planner for L2P-MW (LAZY Thm 3.10 with Thm 3.2; docs/algorithms/lazy.md).

Modes:

* ``"paper"``: ``B = max(1, floor(1/eps))``, ``eta = min(eps0, eps)^{2/3} / T^{1/3}``
  with ``eps0 = T^{-1/4} log^{3/4} d`` (as printed), and — Thm 3.10 does not
  state ``p`` (INTERPRETATION/CORRECTED) — the smallest ``p`` meeting Thm 3.2's
  conditions, ``p = min(1, max(eta log(1/delta1)/eps, B/T))``. The certified
  eps (Thm 3.2) is larger than the nominal by about ``(1.8 log(1/delta1))^{3/2}``
  when the privacy term dominates.
* ``"paper_logs"``: Thm 3.12's pattern: ``B = max(1, floor(1/(2 eps log(1/delta))))``,
  ``eta = min(eps0, eps)^{2/3} / (T^{1/3} log(T/delta))``, ``p = eta/eps``
  (certifies about ``2 eps``).
* ``"certified"``: :func:`jaxdp.accounting.l2p.l2p_calibrate` with the valid
  proxy ``ln d/eta + eta T B/8``, ``eta <= sqrt(8 ln d / T)``, and both the
  printed Thm 3.2 and the accountant on the L2P ledger ``<= eps``; raises ``ValueError``
  if the request cannot be certified.
* ``"rate"``: as ``"paper"`` with ``log(1/delta1) -> 1`` in ``p = max(eta/eps, B/T)``
  (exponents do not see the log factors; L2P-MW's expected regret does not
  depend on ``p`` at all, since the marginal of ``x_s`` is exactly ``nu_s``).
* ``"retuned"``: the same search with ``log(1/delta1) -> 1`` in Thm 3.2's
  constraints (rate form; asymptotically ``eta ~ (eps^3 ln d / T^2)^{1/5}``,
  ``p ~ eta/eps``, ``B ~ T eta^3/eps^3``, regret ``T^{2/5} eps^{-3/5}``).

``delta1 = delta / (2T)`` (``delta0 = 0`` for MW, so Thm 3.2's delta is ``2 T delta1``).
"""
from __future__ import annotations

import math
from typing import Optional


from ..accounting.l2p import calibrate_trusted, l2p_conditions, l2p_delta1, l2p_ledger, mw_regret_proxy, printed_eps
from ..accounting.plan import Plan, make_plan
from ..core.validation import check_choice, check_in_range, check_positive, check_positive_int
from ..registry import register_planner

__all__ = ["plan_l2p_mw", "L2P_MW_MODES", "l2p_mw_eps0"]

L2P_MW_MODES = ("paper", "paper_logs", "certified", "rate", "retuned")
REFERENCE = "Lazy private online learning, Thm 3.10 (+ Thm 3.2); docs/algorithms/lazy.md"


def l2p_mw_eps0(T: float, d: int) -> float:
    """``eps0 = T^{-1/4} log^{3/4} d`` of Thm 3.10.

    Args:
        T: the horizon.
        d: the number of experts.

    Returns:
        eps0.
    """
    return float(T) ** -0.25 * math.log(d) ** 0.75


def _validate(eps, delta, T, d):
    if isinstance(eps, str) or isinstance(delta, str):
        eps, delta = float(eps), float(delta)
    check_positive("eps", eps)
    check_in_range("delta", delta, 0.0, 1.0, lo_closed=False, hi_closed=False)
    T = check_positive_int("T", int(T) if isinstance(T, str) else T)
    d = check_positive_int("d", int(d) if isinstance(d, str) else d, minimum=2)
    return float(eps), float(delta), T, d


@register_planner("l2p_mw", "L2P on multiplicative weights for DP-OPE (LAZY Thm 3.10, Thm 3.2); "
                            "modes paper, paper_logs, certified, rate, retuned")
def plan_l2p_mw(*, eps: float, delta: float, T: int, d: int, mode: str = "paper", B: Optional[int] = None,
                grid: Optional[tuple] = None) -> Plan:
    """Plan ``(eta, p, B)`` for :func:`jaxdp.lazy.l2p_mw` and report what Thm 3.2 certifies.

    Args:
      eps, delta: requested privacy (``eps > 0``, ``0 < delta < 1``).
      T: horizon (``T >= B``).
      d: number of experts (``>= 2``).
      mode: one of ``paper, paper_logs, certified, rate, retuned`` (module docstring).
      B: override the batch size (``paper``/``rate``/``paper_logs`` only).
      grid: ``(n_B, n_c, n_eta)`` search resolution for ``certified``/``retuned``
        (default ``(120, 80, 400)``).

    Returns a :class:`jaxdp.accounting.Plan` with ``params = {eta, p, B, delta1}``;
    ``eps_certified`` is what the accountant proves for :func:`jaxdp.accounting.l2p.l2p_ledger`
    with the MW measure's constants; the ledger argument needs none of Thm 3.2's side conditions
    (the notes say which of them fail, if any).

    Returns:
        A :class:`jaxdp.accounting.Plan` with ``params = {eta, p, B, delta1}``.

    Raises:
        ValueError: invalid privacy parameters, horizon, ``d``, mode or grid.
    """
    eps, delta, T, d = _validate(eps, delta, T, d)
    check_choice("mode", mode, L2P_MW_MODES)
    delta1 = l2p_delta1(delta, T)
    L1 = math.log(1.0 / delta1)
    eps0 = l2p_mw_eps0(T, d)
    notes = []
    if mode in ("paper", "rate", "paper_logs"):
        if mode == "paper_logs":
            B_ = max(1, int(math.floor(1.0 / (2.0 * eps * math.log(1.0 / delta))))) if B is None else B
            eta = min(eps0, eps) ** (2 / 3) / (T ** (1 / 3) * math.log(T / delta))
            p = eta / eps
        else:
            B_ = max(1, int(math.floor(1.0 / eps))) if B is None else B
            eta = min(eps0, eps) ** (2 / 3) / T ** (1 / 3)
            # rate: log(1/delta1) -> 1; the certified eps is still reported with the real delta1
            p = max(eta * (L1 if mode == "paper" else 1.0) / eps, B_ / T)
        B_ = check_positive_int("B", B_)
        if T < B_:
            raise ValueError(f"T must be >= the batch size B={B_} (mode={mode!r}, eps={eps}); got T={T}")
        p_raw = max(p, B_ / T)
        p = min(1.0, p_raw)
        if p_raw >= 1.0:
            notes.append(f"degenerate regime: the formula wants p={p_raw:.3g} >= 1 (switch every batch); p clipped to 1")
        if eta > 0.1:
            notes.append(f"eta={eta:.3g} > 1/10 violates Assumption 3.1's range")
    else:
        if B is not None:
            raise ValueError(f"B can only be overridden in modes paper, rate, paper_logs; got mode={mode!r}")
        n_B, n_c, n_eta = grid if grid is not None else (120, 80, 400)
        eta_max = math.sqrt(8.0 * math.log(d) / T)
        if mode == "certified":
            r = calibrate_trusted(T=T, eps=eps, delta=delta, regret=mw_regret_proxy(d, T), eta_max=eta_max,
                                  log_factor="exact", conservative=True, n_B=n_B, n_c=n_c, n_eta=n_eta, measure="mw")
        else:
            r = calibrate_trusted(T=T, eps=eps, delta=delta, regret=mw_regret_proxy(d, T), eta_max=eta_max,
                                  log_factor="rate", conservative=False, n_B=n_B, n_c=n_c, n_eta=n_eta)
            notes.append("retuned: Thm 3.2 constraints with log(1/delta1) -> 1 (rate form); see eps_certified")
        eta, p, B_ = r["eta"], r["p"], int(r["B"])
        if T < B_:  # pragma: no cover - the search never proposes B > T
            raise ValueError(f"T must be >= B={B_}, got T={T}")
    thm = {k: bool(v) for k, v in l2p_conditions(eta, p, B_, T, delta1).items()}
    e_pr = printed_eps(float(eta), float(p), int(B_), T, 0.0, delta1)
    ledger = l2p_ledger(float(eta), float(p), int(B_), T, 0.0, delta1, "mw", outcomes=d)
    notes.append(f"Thm 3.2 as printed: eps={e_pr:.4g}" + ("" if all(thm.values()) else " (its side conditions "
                 f"{[k for k, v in thm.items() if not v]} fail)") + "; not used: the certificate is the ledger's, "
                 "which needs none of Thm 3.2's side conditions")
    notes.append(f"valid regret bound ln d/eta + eta T B/8 = {math.log(d) / eta + eta * T * B_ / 8:.4g}")
    plan = make_plan(algorithm="l2p_mw", mode=mode, params={"eta": float(eta), "p": float(p), "B": int(B_),
                                                           "delta1": float(delta1)},
                     eps=eps, delta=delta, ledger=ledger, reference=REFERENCE, notes=notes)
    if mode == "certified" and not plan.certified:  # pragma: no cover - calibrate guarantees it
        raise ValueError(f"l2p_mw: the request eps={eps}, delta={delta}, T={T} cannot be certified")
    return plan
