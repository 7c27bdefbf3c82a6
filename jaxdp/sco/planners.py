"""Planners for GROWTH: theorem settings -> parameters + ledger.

For SCO the CLI's ``T`` is read as the sample size ``n`` when ``n`` is not given.

Step sizes (RECONSTRUCTED from Algorithm 2 lines 3–5, which pass exactly these to Algorithm 1)::

    pure:   η = (D/2L) min( 1/sqrt(n log n log(1/β)),  ε/(d log(1/β)) )
    approx: η = (D/2L) min( 1/sqrt(n log n log(1/β)),  ε/(sqrt(d log(1/δ)) log(1/β)) )
    rate:   η = (D/2L) min( 1/sqrt(n), ε/d )   (approx: ε/sqrt(d log(1/δ)); INTERPRETATION), phase steps
            η 16^{-(i-1)} (first phase undamped), T = ceil(log n/(κ_low - 1)) epochs

Noise: Laplace scale ``4Lη_i√d/ε`` (ε-DP for the factor-2-slack ℓ1 sensitivity);
Gaussian ``σ_i = gauss_mult·2Lη_i`` with ``gauss_mult = 2 sqrt(log(1/δ))/ε`` (paper, rate) or the
smallest multiplier the accountant certifies for sensitivity ``4Lη_i`` (certified).

Ledgers (docs/guide/privacy-ledger.md): Algorithms 1 and 2 use each sample in one phase only, so
their ledger is the parallel composition of the phases' Laplace (``noise_multiplier = 1/ε``) or
Gaussian (``gauss_mult/2``) releases; the inverse-sensitivity mechanism is one ε-DP sample;
Proposition 3's reduction runs ``k`` of them on the same data (sequential). The solver-gap condition
and the refusal of ``localization_sco`` are stated in ``_GAP_NOTE`` (docs/algorithms/growth.md#localization).
"""
from __future__ import annotations

import math
from typing import Optional

from ..privacy.accounting import ledger as LG
from ..privacy.accounting.accountant import certify
from ..privacy.accounting.calibrate import calibrate
from ..privacy.accounting.plan import Plan, make_plan
from ..core.validation import check_choice, check_delta, check_epsilon, check_positive, check_positive_int
from ..privacy.mechanisms import gaussian_sigma
from ..registry import register_planner
from .localization import growth_epochs, localization_phases

__all__ = ["plan_localization_sco", "plan_epoch_growth_sco", "plan_grad_inverse_sensitivity", "sco_step",
           "gauss_mult_for", "theorem1_rho",
           "plan_growth_reduction_erm", "reduction_schedule"]

REF = "Growth conditions for private optimization,"


def _common(eps, delta, d, n, T, L, D, mode, modes):
    check_choice("mode", mode, modes)
    check_epsilon(eps)
    check_delta(delta)
    d = check_positive_int("d", d)
    if n is None:
        if T is None:
            raise ValueError("n (the sample size) is required (T is accepted as an alias)")
        n = T
    n = check_positive_int("n", n, minimum=2)
    check_positive("L", L)
    check_positive("D", D)
    return float(eps), float(delta), d, n


def sco_step(n: int, d: int, eps: float, delta: float, L: float, D: float, beta: float, mode: str) -> float:
    """The step η of Propositions 1–2 / Algorithm 2 lines 3–5 (``mode="rate"``: logs dropped).

    Args:
        n: the sample size.
        d: the dimension.
        eps: the privacy parameter ε.
        delta: the privacy parameter δ (0: pure DP).
        L: the Lipschitz constant.
        D: the diameter of ``X`` (``2R``).
        beta: the failure probability β.
        mode: ``"paper"``, ``"certified"`` or ``"rate"``.

    Returns:
        η.
    """
    if mode == "rate":
        stat = 1.0 / math.sqrt(n)
        priv = eps / d if delta == 0 else eps / math.sqrt(d * math.log(1.0 / delta))
    else:
        lb = math.log(1.0 / beta)
        stat = 1.0 / math.sqrt(n * max(math.log(n), 1e-12) * lb)
        priv = eps / (d * lb) if delta == 0 else eps / (math.sqrt(d * math.log(1.0 / delta)) * lb)
    return D / (2.0 * L) * min(stat, priv)


def _phase_event(eps: float, delta: float, gm: float, d: int) -> LG.Event:
    """One phase's release: Laplace ``4Lη_i√d/ε`` for ℓ1 sensitivity ``4Lη_i√d`` (multiplier ``1/ε``) or
    Gaussian ``gm·2Lη_i`` for ℓ2 sensitivity ``4Lη_i`` (multiplier ``gm/2``). The noisy point is released
    as a float (raw release: no valid float δ floor)."""
    if math.isinf(eps):
        return LG.pure(math.inf, label="no noise (eps = inf)", release="raw")
    if delta == 0:
        return LG.laplace(1.0 / eps, label="phase release x_hat + Laplace", dim=d)
    return LG.gaussian(gm / 2.0, label="phase release x_hat + Gaussian", dim=d)


def gauss_mult_for(eps: float, delta: float, mode: str) -> tuple[float, float]:
    """(gauss_mult, certified ε) of the Gaussian phases; ``(0, inf)`` for ε = inf, ``(0, ε)`` for δ = 0.

    ``certified``: the smallest multiplier whose release (sensitivity ``4Lη_i``, i.e. noise multiplier
    ``gauss_mult/2``) the accountant certifies at ``(eps, delta)``; otherwise the paper's
    ``2 sqrt(log(1/δ))/ε``. The certified ε is the accountant's.

    Args:
        eps: the privacy parameter ε.
        delta: the privacy parameter δ (0: pure DP).
        mode: ``"paper"``, ``"certified"`` or ``"rate"``.

    Returns:
        ``(gauss_mult, certified ε)``.

    Raises:
        ValueError: ``certified`` and the request cannot be certified.
    """
    if delta == 0:
        return 0.0, eps
    if math.isinf(eps):
        return 0.0, math.inf
    if mode == "certified":
        hi = gaussian_sigma(2.0, eps, delta, method="zcdp")
        gm = calibrate(lambda g: certify(LG.gaussian(g / 2.0), delta).eps, eps, lo=hi / 50.0, hi=hi,
                       increasing=False, rtol=1e-9, name="gauss_mult", what="the certified eps")
    else:
        gm = 2.0 * math.sqrt(math.log(1.0 / delta)) / eps
    return gm, certify(LG.gaussian(gm / 2.0), delta).eps


def _finish(name, mode, eps, delta, params, ledger, conditions, utility, ref, notes, delta_budget=None):
    plan = make_plan(algorithm=name, mode=mode, params=params, eps=eps, delta=delta, ledger=ledger,
                     delta_budget=delta_budget, conditions=conditions, utility_conditions=utility,
                     reference=ref, notes=notes)
    if mode == "certified" and not plan.certified:
        bad = [k for k, v in conditions.items() if not v]
        raise ValueError(f"{name}: the request (eps={eps}, delta={delta}) cannot be certified"
                         + (f"; failing conditions: {bad}" if bad else f"; certified eps={plan.eps_certified:.4g}"))
    return plan


_GAP_NOTE = ("the phase sensitivity 4 L eta_i + 2 floor needs solver accuracy L eta_i + floor, i.e. gap <= "
             "(L eta_i + floor)^2/(2 eta_i n_0), floor = 8 u R sqrt(d) (jaxdp.sco.accuracy_floor). The solver is "
             "rerun until its gap certificate meets it, at most max_solver_rounds times; a run in which a phase "
             "still misses it releases NaN (info['certified'] False). Every released value is one of the mechanism "
             "with exact phase minimizers where the solver failed, which is (eps, delta)-DP; the refusal itself "
             "depends on the data: with gamma = max over datasets of the refusal probability the run is "
             "(eps, delta + e^eps gamma)-DP. gamma has no a-priori bound; it is measured (info['certified'], "
             "the studies' solver table)")
# structural (always true): what the implementation guarantees, not an assumption about the solver
_GAP_COND = ("a value is released only if every phase's solver gap <= (L eta_i + floor)^2/(2 eta_i n_0), else NaN "
             "(covers released values; the data-dependent refusal adds e^eps * P[refusal] to delta, not bounded)")


@register_planner("localization_sco", "GROWTH Alg. 1 (Props 1-2): phased private ERM, pure (Laplace) or approximate (Gaussian) DP")
def plan_localization_sco(*, eps: float, delta: float = 0.0, T: Optional[int] = None, d: int = 1,
                          n: Optional[int] = None, L: float = 1.0, D: float = 2.0, beta: Optional[float] = None,
                          mode: str = "paper") -> Plan:
    """Parameters of ``localization_sco`` on ``n`` samples (Propositions 1–2).

    Args:
        eps: the privacy parameter ε.
        delta: the privacy parameter δ (0: pure DP).
        T: accepted as an alias of ``n`` when ``n`` is not given.
        d: the dimension.
        n: the sample size.
        L: the Lipschitz constant.
        D: the diameter of ``X`` (``2R``).
        beta: the failure probability β (``None``: ``1/(n + d)``).
        mode: ``"paper"``, ``"certified"`` or ``"rate"``.

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan` for :class:`LocalizationParams`.

    Raises:
        ValueError: invalid values, or the request cannot be certified (``certified``).
    """
    eps, delta, d, n = _common(eps, delta, d, n, T, L, D, mode, ("paper", "certified", "rate"))
    beta = 1.0 / (n + d) if beta is None else float(beta)
    k = localization_phases(n)
    eta = sco_step(n, d, eps, delta, L, D, beta, mode)
    gm, _ = gauss_mult_for(eps, delta, mode)
    params = dict(eta=eta, eps=eps, delta=delta, gauss_mult=gm, phase_offset=0.0 if mode == "rate" else 1.0,
                  k=k, block=n // k, n_used=k * (n // k))
    utility = {"beta <= 1/(n+d)": beta <= 1.0 / (n + d) + 1e-15, "n >= number of phases k": n >= k}
    ledger = LG.parallel(_phase_event(eps, delta, gm, d), label=f"{k} phases, each on its own block of n/k samples")
    ref = f"{REF} Algorithm 1, Proposition {'1' if delta == 0 else '2'}; docs/algorithms/growth.md"
    return _finish("localization_sco", mode, eps, delta, params, ledger, {_GAP_COND: True}, utility, ref,
                   [_GAP_NOTE])


@register_planner("epoch_growth_sco", "GROWTH Alg. 2 (Thms 2-3): epochs of Alg. 1 with halving radii, adapts to kappa >= kappa_low")
def plan_epoch_growth_sco(*, eps: float, delta: float = 0.0, T: Optional[int] = None, d: int = 1,
                          n: Optional[int] = None, kappa_low: float = 1.5, L: float = 1.0, D: float = 2.0,
                          beta: Optional[float] = None, mode: str = "paper") -> Plan:
    """Parameters of ``epoch_growth_sco`` given only a lower bound ``kappa_low > 1`` on the growth (Thms 2–3).

    Args:
        eps, delta, T, d, n, L, D, beta, mode: as in :func:`plan_localization_sco`.
        kappa_low: the lower bound on κ (> 1).

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan` for :class:`EpochParams`.

    Raises:
        ValueError: invalid values, or fewer samples than phases.
    """
    eps, delta, d, n = _common(eps, delta, d, n, T, L, D, mode, ("paper", "certified", "rate"))
    n_epochs = growth_epochs(n, kappa_low, "rate" if mode == "rate" else "paper")
    n0 = n // n_epochs
    if n0 < 2:
        raise ValueError(f"n={n} is smaller than the number of phases: {n_epochs} epochs (kappa_low={kappa_low}) "
                         f"need n >= {2 * n_epochs}")
    k = localization_phases(n0)
    if n0 < k:
        raise ValueError(f"n={n} is smaller than the number of phases {n_epochs * k} (epochs x phases)")
    beta = 1.0 / (n + d) if beta is None else float(beta)
    eta0 = sco_step(n0, d, eps, delta, L, D, beta, mode)
    gm, _ = gauss_mult_for(eps, delta, mode)
    params = dict(eta0=eta0, eps=eps, delta=delta, gauss_mult=gm, phase_offset=0.0 if mode == "rate" else 1.0,
                  n_epochs=n_epochs, k=k, n0=n0, block=n0 // k, n_used=n_epochs * k * (n0 // k),
                  kappa_low=float(kappa_low))
    utility = {"beta <= 1/(n+d)": beta <= 1.0 / (n + d) + 1e-15, "kappa_low > 1": kappa_low > 1,
               "n >= epochs x phases": n >= n_epochs * k}
    notes = [_GAP_NOTE]
    if mode == "rate":
        notes.append("rate mode: logs dropped, first phase undamped, T = ceil(log n/(kappa_low-1))")
    ledger = LG.parallel(_phase_event(eps, delta, gm, d),
                         label=f"{n_epochs} epochs x {k} phases, each on its own block of samples")
    ref = f"{REF} Algorithm 2, Theorem {'2' if delta == 0 else '3'}; docs/algorithms/growth.md"
    return _finish("epoch_growth_sco", mode, eps, delta, params, ledger, {_GAP_COND: True}, utility, ref, notes)


def theorem1_rho(n: int, d: int, eps: float, L: float, lam: float, kappa: float) -> float:
    """Theorem 1's printed ``ρ = (L/λ)^{1/(κ-1)} (d/(nε))^{κ/(κ-1)}``.

    Args:
        n, d, eps, L: as in :func:`sco_step`.
        lam: the growth constant λ.
        kappa: the growth exponent κ.

    Returns:
        ρ.
    """
    return (L / lam) ** (1.0 / (kappa - 1.0)) * (d / (n * eps)) ** (kappa / (kappa - 1.0))


@register_planner("grad_inverse_sensitivity", "GROWTH Thm 1: rho-smooth gradient inverse-sensitivity mechanism (grid, d<=2)")
def plan_grad_inverse_sensitivity(*, eps: float, delta: float = 0.0, T: Optional[int] = None, d: int = 1,
                                  n: Optional[int] = None, L: float = 1.0, D: float = 1.0, lam: float = 1.0,
                                  kappa: float = 2.0, rho_rule: str = "theorem", M: int = 1024,
                                  mode: str = "paper") -> Plan:
    """``ρ`` from Theorem 1 (``rho_rule="theorem"``, needs κ, λ) or ``ρ = 1/n²`` (``"agnostic"``); pure ε-DP
    (``delta_certified = 0`` whatever ``delta`` is requested).

    Args:
        eps, T, d, n, L, D, mode: as in :func:`plan_localization_sco`.
        delta: ignored (pure DP).
        lam: the growth constant λ.
        kappa: the growth exponent κ > 1.
        rho_rule: ``"theorem"`` or ``"agnostic"``.
        M: the grid cells per axis.

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan` with params ``rho``, ``M``, ``eps`` and ``window_cells``.

    Raises:
        ValueError: invalid values (``eps`` must be finite).
    """
    eps, delta, d, n = _common(eps, delta, d, n, T, L, D, mode, ("paper", "certified", "rate"))
    check_choice("rho_rule", rho_rule, ("theorem", "agnostic"))
    if math.isinf(eps):
        raise ValueError("eps must be finite for grad_inverse_sensitivity planning")
    if not kappa > 1:
        raise ValueError(f"kappa must be > 1, got {kappa!r}")
    rho = theorem1_rho(n, d, eps, L, lam, kappa) if rho_rule == "theorem" else 1.0 / n ** 2
    params = dict(rho=rho, M=int(M), eps=eps, window_cells=int(math.floor(rho / (D / M) + 1e-9)))
    cond = {"d in (1, 2) (grid sampler)": d in (1, 2)}
    ledger = LG.sequential(LG.exponential(eps, label="inverse-sensitivity sample on a data-independent grid",
                                          outcomes=int(M) ** min(d, 2)))
    notes = ["grid restricted to X is data-independent: exactly eps-DP (pure)"]
    if delta > 0:
        notes.append("the mechanism is pure eps-DP: certified delta = 0")
    return _finish("grad_inverse_sensitivity", mode, eps, delta, params, ledger, cond, {},
                   f"{REF} Theorem 1; docs/algorithms/growth.md", notes, delta_budget=0.0)


def _reduction_inner_delta(n: int, d: int, eps_j: float, L_G: float, lam_G: float, kappa: float, D: float,
                           beta: float, mode: str) -> float:
    """ERM guarantee Δ of the inner mechanism (Theorem 1, grid) for a ``2L``-Lipschitz ``(λ_G, κ)``-growth ``G``.

    paper: the Theorem 1 bound with its printed ρ; rate: ``λ_G^{-1/(κ-1)} (L_G d/(n ε_j))^{κ/(κ-1)}``.
    """
    e = kappa / (kappa - 1.0)
    if mode == "rate":
        return (1.0 / lam_G) ** (1.0 / (kappa - 1.0)) * (L_G * d / (n * eps_j)) ** e
    rho = min(theorem1_rho(n, d, eps_j, L_G, lam_G, kappa), D)
    log_term = d * math.log(max(D / rho, 1.0)) + math.log(1.0 / beta)
    return L_G * rho + (kappa / lam_G) ** (1.0 / (kappa - 1.0)) * (4.0 * L_G * log_term / (n * eps_j)) ** e


def reduction_schedule(n: int, d: int, eps: float, L: float, D: float, kappa: float, beta: float, mode: str,
                       lam0: Optional[float] = None, k: Optional[int] = None) -> tuple[float, int, float, float]:
    """``(λ_0, k, Δ, target)`` for ``growth_reduction_erm`` (GROWTH Proposition 3; RECONSTRUCTED/PROPOSED).

    Target accuracy ``E = (LD)^{1/κ} Δ^{(κ-1)/κ}`` (Prop. 3's bound with the prefactor dropped; units
    restored). ``λ_0`` (PROPOSED; not printed) makes the first regularizer cost ``λ_0 D^κ = E``, with
    ``Δ = Δ(n, 2L, ε/k)`` for the growth ``λ_1 2^{2-κ} = 2^{3-κ} λ_0`` of ``G_1`` (fixed point in ``λ_0``).
    ``k``: paper — the printed smallest integer ``k >= log[κ^{1/(κ-1)} L^{κ/(κ-1)} / (2^{2κ-3} Δ(ε/k))]``
    (natural log; a fixed point since Δ depends on ``k``); rate — ``ceil(κ log2(LD/E))``, the number of
    doublings after which the last domain radius ``(L/λ_k)^{1/(κ-1)}`` is ``<= E/L``.

    Args:
        n, d, eps, L, D, beta: as in :func:`sco_step`.
        kappa: the growth exponent κ.
        mode: ``"paper"`` or ``"rate"``.
        lam0: a given λ_0 (``None``: computed).
        k: a given ``k`` (``None``: computed).

    Returns:
        ``(λ_0, k, Δ, target)``.
    """
    def lam0_for(kk):
        eps_j = eps / kk
        lam = 1.0 if lam0 is None else lam0
        if lam0 is None:
            for _ in range(200):  # λ -> C λ^{-1/κ}: a contraction (factor 1/κ in log)
                dl = _reduction_inner_delta(n, d, eps_j, 2 * L, 2.0 ** (3 - kappa) * lam, kappa, D, beta, mode)
                new = (L * D) ** (1 / kappa) * dl ** ((kappa - 1) / kappa) / D ** kappa
                if abs(math.log(new / lam)) < 1e-12:
                    break
                lam = new
        dl = _reduction_inner_delta(n, d, eps_j, 2 * L, 2.0 ** (3 - kappa) * lam, kappa, D, beta, mode)
        return lam, dl

    if k is not None:
        lam, dl = lam0_for(k)
    else:
        k = 1
        for _ in range(10_000):
            lam, dl = lam0_for(k)
            if mode == "rate":
                target = (L * D) ** (1 / kappa) * dl ** ((kappa - 1) / kappa)
                need = math.ceil(kappa * math.log2(max(L * D / target, 1.0)))
            else:
                need = math.ceil(math.log(max(kappa ** (1 / (kappa - 1)) * L ** (kappa / (kappa - 1))
                                              / (2.0 ** (2 * kappa - 3) * dl), 1.0)))
            if k >= max(need, 1):
                break
            k += 1
    target = (L * D) ** (1 / kappa) * dl ** ((kappa - 1) / kappa)
    return lam, int(k), dl, target


@register_planner("growth_reduction_erm", "GROWTH Prop. 3 (reconstructed): convex ERM by k private kappa-growth ERMs with doubling regularization")
def plan_growth_reduction_erm(*, eps: float, delta: float = 0.0, T: Optional[int] = None, d: int = 1,
                              n: Optional[int] = None, kappa: float = 2.0, L: float = 1.0, D: float = 1.0,
                              lam0: Optional[float] = None, k: Optional[int] = None, beta: Optional[float] = None,
                              M: int = 256, mode: str = "paper") -> Plan:
    """Parameters of ``growth_reduction_erm`` (Proposition 3): ``k`` rounds at ``ε/k`` each, ``λ_j = 2^j λ_0``.

    Privacy: each round is the grid gradient inverse-sensitivity mechanism (Theorem 1; exactly
    ``ε/k``-DP, pure) on data-independent-given-the-past grids; ``k``-fold basic composition certifies
    ``(ε, 0)`` — in every mode, since only ``λ_0`` and ``k`` (utility) change between modes. The
    certificate needs the grid sampler (``d <= 2``; condition). ``D`` is the diameter of ``X`` (``2R``).
    Utility constants are RECONSTRUCTED; see ``reduction_schedule``. ``delta_certified = 0``.

    Args:
        eps, T, d, n, L, D, beta, mode: as in :func:`plan_localization_sco`.
        delta: unused (pure DP).
        kappa: the regularization exponent κ >= 2.
        lam0: the first regularization λ_0 (``None``: from :func:`reduction_schedule`).
        k: the number of rounds (``None``: from :func:`reduction_schedule`).
        M: the grid cells per axis.

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan` with params ``kappa``, ``lam0``, ``k``, ``eps``, ``eps_round``, ``M``, ``w``,
        ``inner_delta`` and ``target_excess``.

    Raises:
        ValueError: invalid values (``eps`` must be finite).
    """
    eps, delta, d, n = _common(eps, delta, d, n, T, L, D, mode, ("paper", "certified", "rate"))
    if math.isinf(eps):
        raise ValueError("eps must be finite for growth_reduction_erm planning (run the algorithm with eps=inf "
                         "for the non-private limit)")
    if not (isinstance(kappa, (int, float)) and math.isfinite(kappa) and kappa >= 2):
        raise ValueError(f"kappa must be a finite number >= 2 for Proposition 3, got {kappa!r}")
    if lam0 is not None:
        check_positive("lam0", lam0)
        if math.isinf(lam0):
            raise ValueError(f"lam0 must be finite, got {lam0!r}")
    if k is not None:
        k = check_positive_int("k", k)
    M = check_positive_int("M", M, minimum=2)
    beta = 1.0 / (n + d) if beta is None else float(beta)
    if not 0 < beta < 1:
        raise ValueError(f"beta must be in (0, 1), got {beta!r}")
    sched_mode = "rate" if mode == "rate" else "paper"
    lam, k, dl, target = reduction_schedule(n, d, eps, L, D, float(kappa), beta, sched_mode, lam0, k)
    params = dict(kappa=float(kappa), lam0=lam, k=k, eps=eps, eps_round=eps / k, M=M, w=1,
                  inner_delta=dl, target_excess=target)
    cond = {"d in (1, 2) (grid inner mechanism, exact sampling)": d in (1, 2)}
    notes = ["RECONSTRUCTED: lam0 and the utility constants are not printed in the paper",
             f"privacy: {k} pure eps/k = {eps / k:.4g} inverse-sensitivity rounds on the same data"]
    if delta > 0:
        notes.append("every round is pure eps/k-DP: certified delta = 0")
    ledger = LG.sequential(LG.exponential(eps / k, count=k, label="inverse-sensitivity round (Theorem 1, grid)",
                                          outcomes=int(M) ** min(d, 2)))
    return _finish("growth_reduction_erm", mode, eps, delta, params, ledger, cond, {"kappa >= 2": kappa >= 2},
                   f"{REF} Proposition 3; docs/algorithms/growth.md", notes, delta_budget=0.0)
