"""L2P-RMW: DP-OCO by the L2P transformation of regularized multiplicative weights.

Source: LAZY Theorem 3.12 (with Thm 3.2, Lemma 3.11); docs/algorithms/lazy.md#l2p-rmw. The learner is ``jaxdp.experts.l2p`` applied to
``jaxdp.oco.rmw.rmw_measure``: the played model is resampled from
``μ^rmw`` only at batch boundaries (``block_size = B``: once per batch, in the
engine's nested scan), with the shadow model ``y`` normalizing the acceptance
ratio ``exp(-β Σ_{i in batch} (ℓ_i(x) - ℓ_i(y)) - 2Bη)``.

**Paper settings (Thm 3.12)**, ``D`` the diameter (ball of radius ``D/2``)::

    B = 1/(2 ε log(1/δ)),   η = ε^{2/3} / (T^{1/3} log(T/δ)),   p = η/ε,
    λ = (L/D) max(√T, √(d log T)/η),   β = η² λ / (20 L²).

Claimed regret ``LD·O(√T + T^{1/3} √(d log T) log(T/δ) / ε^{2/3})``.

Planner modes (LAZY Thm 3.12; docs/guide/planning.md#modes; docs/algorithms/lazy.md#l2p-rmw):

* ``"paper"``: as printed; the algorithm's ``eta`` (in ``e^{2Bη}``) is the
  printed ``η``. ``eps_certified`` is Thm 3.2 evaluated at Lemma 3.11's
  ``η_div = η²/10 + η sqrt(0.4 log(2/δ0))`` (CORRECTED, LAZY Thm 3.12; docs/algorithms/lazy.md#l2p-rmw),
  ``δ0 = δ / (4 e T B (2/η + log(1/δ1)/p))``, ``δ1 = δ/(4T)``.
* ``"rate"``: logs dropped: ``B = 1/ε``, ``η = ε^{2/3}/T^{1/3}``,
  ``λ = (L/D) max(√T, √d/η)``, ``p = max(η/ε, B/T)``.
* ``"certified"``: ``jaxdp.privacy.accounting.l2p.l2p_calibrate`` over ``(η_div, p, B)``
  with the RMW proxy ``λD² + L²T/λ + d log T/β + LD T (B-1) η_div``
  (corrected batching term), ``λ, β`` from Thm 3.12's formulas at the
  printed-``η`` equivalent of ``η_div``, ``δ0`` iterated once; both the
  printed and the conservative accountant must certify ``(ε, δ)``, else
  ``ValueError``. The algorithm uses ``η_div``.
* ``"retuned"``: the same search in rate form (``log(1/δ1) -> 1``).

Every plan reports ``sampler`` exactness: only ``sampler="exact"`` (linear
losses on the ball) matches the exact-sampling assumption of Thm 3.2.

**Losses.** Lemma 3.11 holds for any convex ``L``-Lipschitz loss, so the planner takes ``loss`` in
``RMW_LOSSES`` with the matching ``L`` (``g_max``; ``a_max`` for absolute and logistic; ``a_max(a_max R +
b_max)`` for squared); only linear losses have an exact sampler, and MALA plans certify nothing
(docs/algorithms/lazy.md#rmw-nonsmooth).
"""
from __future__ import annotations

import functools
import math
from typing import Any, Optional

import jax.numpy as jnp
import numpy as np

from ..privacy.accounting.l2p import calibrate_trusted, l2p_conditions, l2p_ledger, printed_eps
from ..privacy.accounting.plan import make_plan
from ..core.types import Learner
from ..core.validation import check_choice, check_in_range, check_positive, check_positive_int
from ..experts.l2p import L2PParams, l2p
from ..privacy.accounting.plan import Plan
from ..registry import ConformanceCase, register_learner, register_planner
from .rmw import RMW_BUFFER_LOSSES, RMW_LOSSES, rmw_measure, rmw_params

__all__ = ["l2p_rmw", "l2p_rmw_params", "plan_l2p_rmw", "L2P_RMW_MODES", "l2p_rmw_paper_settings",
           "l2p_rmw_regret_bound", "rmw_alternating_lag", "l2p_rmw_from_plan", "FIGURE1_OCO_LEARNERS",
           "figure1_dimension", "figure1_oco_exponent", "figure1_oco_setup", "figure1_oco_point"]

L2P_RMW_MODES = ("paper", "certified", "rate", "retuned")
REFERENCE = "Lazy private online learning, Thm 3.12 (+ Thm 3.2, Lemma 3.11)"


@functools.lru_cache(maxsize=None)
def l2p_rmw(d: int, B: int, *, loss: str = "linear", sampler: str = "exact", domain: Any = None,
            mala_steps: int = 100, Mgrid: int = 256, capacity: Optional[int] = None) -> Learner:
    """L2P-RMW over ``R^d`` with batch size ``B`` (static; fresh samples once per batch via ``end_block``).

    ``loss``/``sampler``/``domain``/``mala_steps``/``Mgrid``/``capacity``: see
    :func:`jaxdp.oco.rmw.rmw_measure` (``sampler="exact"``: linear losses on
    the centred ball of radius ``params.measure.radius``; ``"mala"``: any
    supported loss / domain, approximate). ``loss="absolute"``/``"logistic"``
    (``ABLoss`` losses, e.g. ``jaxdp.oco.absolute_problem``) keep a buffer of
    ``capacity >= T_max`` rows: ``O(d)`` per round, ``O(mala_steps · capacity ·
    d)`` per fresh sample (two per batch). Params: :func:`l2p_rmw_params`.
    Info: ``switches``, ``n_real``, ``n_fake``, ``n_yres``, ``n_batches``.

    Example::

        plan = plan_l2p_rmw(eps=1.0, delta=1e-6, T=4096, d=8)
        learner, params = l2p_rmw_from_plan(plan, d=8)
        out = simulate(learner, adv_linear_oco(8), linear_problem(8, plan.params["radius"]),
                       params, linear_oco_params("biased"), seed_keys(0, 64), 4096)

    Args:
        d: the dimension.
        B: the batch size (static).
        loss, sampler, domain, mala_steps, Mgrid, capacity: as for :func:`jaxdp.oco.rmw.rmw_measure`.

    Returns:
        The :class:`jaxdp.Learner`.

    Raises:
        ValueError: an invalid argument.
    """
    d = check_positive_int("d", d)
    B = check_positive_int("B", B)
    measure = rmw_measure(d, loss, sampler, domain=domain, mala_steps=mala_steps, Mgrid=Mgrid, capacity=capacity)
    # B = 1: every round is a boundary; the engine only calls end_block when block_size > 1, so use the
    # per-round path of l2p (traced params.B = 1)
    return l2p(measure, block_size=B if B > 1 else None)


def l2p_rmw_params(*, beta: float, lam: float, radius: float, eta: float, p: float, B: int) -> L2PParams:
    """Validated :class:`jaxdp.experts.L2PParams` for :func:`l2p_rmw` (``measure = RMWParams(beta, lam, radius)``).

    Args:
        beta: the inverse temperature β.
        lam: the regularization λ.
        radius: the radius of the ball.
        eta: the η of the acceptance ratio ``e^{2Bη}``.
        p: the probability of a real (not fake) sample.
        B: the batch size.

    Returns:
        :class:`jaxdp.experts.L2PParams`.

    Raises:
        ValueError: invalid values.
    """
    mp = rmw_params(beta, lam, radius)
    check_positive("eta", eta)
    check_in_range("p", p, 0.0, 1.0)
    B = check_positive_int("B", B)
    f = jnp.result_type(float)
    return L2PParams(measure=mp, eta=jnp.asarray(eta, f), p=jnp.asarray(p, f), B=jnp.int32(B))


def l2p_rmw_from_plan(plan: Plan, d: int, **kw) -> tuple[Learner, L2PParams]:
    """``(learner, params)`` from a :func:`plan_l2p_rmw` plan (``kw`` go to :func:`l2p_rmw`).

    ``B``, ``loss`` and ``sampler`` come from the plan; buffered losses need ``capacity=T_max`` in ``kw``.
    The registered learner's :meth:`~jaxdp.registry.LearnerEntry.learner_from_plan`.

    Args:
        plan: a :func:`plan_l2p_rmw` plan.
        d: the dimension.

    Returns:
        ``(learner, params)``.
    """
    return _ENTRY.learner_from_plan(plan, d, **kw)


def l2p_rmw_paper_settings(eps: float, delta: float, T: int, d: int, L: float = 1.0, D: float = 1.0) -> dict:
    """Thm 3.12 as printed: ``{B, eta, p, lam, beta}`` (``B`` integerized ``>= 1``, ``p`` unclipped).

    Args:
        eps: the privacy parameter ε.
        delta: the privacy parameter δ.
        T: the horizon.
        d: the dimension.
        L: the Lipschitz constant.
        D: the diameter of the domain.

    Returns:
        ``{"B", "eta", "p", "lam", "beta"}``.
    """
    B = max(1, int(math.floor(1.0 / (2.0 * eps * math.log(1.0 / delta)))))
    eta = eps ** (2 / 3) / (T ** (1 / 3) * math.log(T / delta))
    lam = (L / D) * max(math.sqrt(T), math.sqrt(d * math.log(max(T, 2))) / eta)
    beta = eta**2 * lam / (20.0 * L**2)
    return {"B": B, "eta": eta, "p": eta / eps, "lam": lam, "beta": beta}


def _eta_div(eta, delta0):
    """Lemma 3.11 with β = η²λ/(20L²): η_div = η²/10 + η sqrt(0.4 log(2/δ0))."""
    return eta**2 / 10.0 + eta * np.sqrt(0.4 * np.log(2.0 / delta0))


def _eta_from_div(eta_div, delta0):
    c = np.sqrt(0.4 * np.log(2.0 / delta0))
    return 5.0 * (-c + np.sqrt(c * c + 0.4 * eta_div))


def _delta0(delta, T, B, eta, p, delta1):
    return delta / (4.0 * math.e * T * B * (2.0 / eta + math.log(1.0 / delta1) / p))


def l2p_rmw_regret_bound(T, d, beta, lam, L, D, B, eta_div, corrected: bool = True):
    """RMW proxy (constants 1): ``λD² + L²T/λ + d log T/β`` plus the batching term,
    ``LD T (B-1) η_div`` (corrected, LAZY Thm 3.12; docs/algorithms/lazy.md#l2p-rmw) or ``LD T B² η_div²`` (paper's Prop. 3.3).

    Args:
        T, d, beta, lam, L, D: as for :func:`jaxdp.oco.rmw.rmw_regret_bound`.
        B: the batch size.
        eta_div: η_div.
        corrected: use the corrected batching term (``False``: the paper's).

    Returns:
        The bound.
    """
    T = np.asarray(T, float)
    base = lam * D**2 + L**2 * T / lam + d * np.log(np.maximum(T, 2.0)) / beta
    batch = L * D * T * (B - 1) * eta_div if corrected else L * D * T * B**2 * eta_div**2
    return base + batch


def rmw_alternating_lag(T, B, lam, L):
    """Predicted extra regret of batch-lazy RMW on the alternating-sign sequence (LAZY Thm 3.12; docs/algorithms/lazy.md#l2p-rmw): ``L² T (B-1)/(4λ)``.

    Args:
        T: the horizon.
        B: the batch size.
        lam: the regularization λ.
        L: the Lipschitz constant.

    Returns:
        The predicted extra regret.
    """
    return L**2 * np.asarray(T, float) * (np.asarray(B, float) - 1) / (4.0 * np.asarray(lam, float))


def _raw(ledger):
    """The same ledger with every event marked a raw float release (continuous samples are published)."""
    import dataclasses

    return dataclasses.replace(ledger, items=tuple(
        dataclasses.replace(it, release="raw") if not hasattr(it, "items") else _raw(it) for it in ledger.items))


def rmw_ledger(*, eta_div: float, eta_alg: float, p: float, B: int, T: int, delta0: float, delta1: float,
               beta: float, L: float, D: float, delta: float):
    """The tighter of two valid L2P ledgers for RMW, and which one it is.

    * **Lipschitz** (pure): on a domain of diameter ``D`` with ``L``-Lipschitz losses, replacing one loss moves
      ``-β Σ ℓ_i(θ)`` by a function of oscillation ``≤ 2βLD``, so each exact sample of ``μ ∝ e^{-β(Σℓ_i + λ||θ||²)}``
      is ``2βLD``-DP (exponential mechanism with score range ``2LD``), and one loss moves the batch log-ratio
      ``-β(ℓ(x) - ℓ(y))`` by at most ``βLD`` pointwise.
    * **General** (Lemma 3.11's ``D_∞^{δ0}`` bound ``η_div``): ``4η_div`` per sample, ``δ0`` term of Thm 3.2.

    Both are valid, so the plan certifies the smaller ``ε``. Every sample is a point of the continuous
    domain (grid cell plus jitter along a data-dependent direction): a raw float release, so the ledger
    reports no valid float floor (docs/guide/privacy-ledger.md#float-floor).

    Args:
        eta_div: Lemma 3.11's η_div, the ``D_∞^{δ0}`` bound between the measures of neighbouring loss sequences
            (LAZY Assumption 3.1's η for RMW).
        eta_alg: the η in the algorithm's acceptance ratio ``e^{-2Bη}``.
        p: the fake-switch probability.
        B: the batch size.
        T: the horizon.
        delta0: Assumption 3.1's δ (the general ledger's ``δ0`` term; the Lipschitz ledger is pure in it).
        delta1: Thm 3.2's free parameter δ₁ (the quantile of the number of fresh samples).
        beta: RMW's inverse temperature β.
        L: the Lipschitz constant of the losses.
        D: the diameter of the domain.
        delta: the δ budget at which the two ledgers' ε are compared (:func:`jaxdp.privacy.accounting.certify`).

    Returns:
        ``(ledger, why)``: the ledger with the smaller certified ε at ``delta``, every event a raw release, and a
        one-line description of the bound it uses.
    """
    from ..privacy.accounting import certify

    general = _raw(l2p_ledger(eta_div, p, B, T, delta0, delta1, "general", eta_accept=eta_alg))
    lip = _raw(l2p_ledger(eta_div, p, B, T, 0.0, delta1, "general", eta_accept=eta_alg,
                          pointwise=(beta * L * D, 2.0 * beta * L * D)))
    if certify(lip, delta).eps <= certify(general, delta).eps:
        return lip, f"exact samples are 2 beta L D = {2 * beta * L * D:.4g}-DP on the ball (pure)"
    return general, f"Lemma 3.11's eta_div = {eta_div:.4g}: 4 eta_div per sample, e^(-4B eta_div) switching"


def _validate(eps, delta, T, d, L, D):
    if isinstance(eps, str) or isinstance(delta, str):
        eps, delta = float(eps), float(delta)
    check_positive("eps", eps)
    check_in_range("delta", delta, 0.0, 1.0, lo_closed=False, hi_closed=False)
    T = check_positive_int("T", int(T) if isinstance(T, str) else T, minimum=2)
    d = check_positive_int("d", int(d) if isinstance(d, str) else d)
    check_positive("L (Lipschitz constant)", L)
    check_positive("D (diameter)", D)
    return float(eps), float(delta), T, d, float(L), float(D)


@register_planner("l2p_rmw", "L2P on regularized multiplicative weights for DP-OCO (LAZY Thm 3.12, Thm 3.2); "
                             "modes paper, certified, rate, retuned")
def plan_l2p_rmw(*, eps: float, delta: float, T: int, d: int, mode: str = "paper", L: float = 1.0,
                 D: float = 1.0, sampler: str = "exact", grid: Optional[tuple] = None, loss: str = "linear") -> Plan:
    """Plan ``(beta, lam, radius, eta, p, B)`` for :func:`l2p_rmw` and report what Thm 3.2 certifies.

    Args:
        eps, delta: requested privacy (``eps > 0``, ``0 < delta < 1``).
        T: horizon (``>= 2``).
        d: dimension.
        mode: ``paper``, ``certified``, ``rate`` or ``retuned`` (module docstring).
        L: Lipschitz constant (``||g_t|| <= L``; ``a_max`` for absolute/logistic losses).
        D: diameter (the ball has radius ``D/2``).
        sampler: ``"exact"`` or ``"mala"`` (MALA output is not certified: ``eps_certified = inf``).
        grid: ``(n_B, n_c, n_eta)`` search resolution for ``certified``/``retuned``.
        loss: one of ``RMW_LOSSES`` (module docstring); anything but ``"linear"``
            needs ``sampler="mala"``. Recorded in ``params["loss"]``.

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan`; ``params`` holds ``beta, lam, radius, eta`` (what the algorithm uses
        in ``e^{2Bη}``), ``p, B`` and the accounting quantities ``eta_paper, eta_div, delta0, delta1``.

    Raises:
        ValueError: invalid values, ``sampler="exact"`` with a loss other than ``"linear"``, or (``certified``,
            ``retuned``) a request that cannot be certified.
    """
    eps, delta, T, d, L, D = _validate(eps, delta, T, d, L, D)
    check_choice("mode", mode, L2P_RMW_MODES)
    check_choice("sampler", sampler, ("exact", "mala"))
    check_choice("loss", loss, RMW_LOSSES)
    if loss != "linear" and sampler == "exact":
        raise ValueError(f"sampler='exact' exists only for loss='linear'; loss={loss!r} needs sampler='mala' "
                         f"(allowed samplers for loss={loss!r}: ['mala'])")
    delta1 = delta / (4.0 * T)
    logT = math.log(T)
    notes = []
    if mode in ("paper", "rate"):
        if mode == "paper":
            s = l2p_rmw_paper_settings(eps, delta, T, d, L, D)
            B, eta, lam, beta = s["B"], s["eta"], s["lam"], s["beta"]
            p_raw = eta / eps
        else:
            B = max(1, int(math.floor(1.0 / eps)))
            eta = eps ** (2 / 3) / T ** (1 / 3)
            lam = (L / D) * max(math.sqrt(T), math.sqrt(d) / eta)
            beta = eta**2 * lam / (20.0 * L**2)
            p_raw = eta / eps
        if B > T:
            notes.append(f"B={B} > T={T}: clipped to T (a single batch)")
            B = T
        p_raw = max(p_raw, B / T)
        p = min(p_raw, 1.0 - 1e-9)
        if p_raw >= 1.0:
            notes.append(f"degenerate regime: p={p_raw:.3g} >= 1 (switch every batch); clipped below 1")
        delta0 = _delta0(delta, T, B, eta, p, delta1)
        eta_div = float(_eta_div(eta, delta0))
        eta_alg = eta
    else:
        n_B, n_c, n_eta = grid if grid is not None else (60, 40, 200)
        log_factor = "exact" if mode == "certified" else "rate"

        def make_proxy(delta0):
            def R(eta_div, B):
                e = _eta_from_div(eta_div, delta0)
                lam_ = (L / D) * np.maximum(math.sqrt(T), math.sqrt(d * logT) / e)
                beta_ = e**2 * lam_ / (20.0 * L**2)
                return l2p_rmw_regret_bound(T, d, beta_, lam_, L, D, B, eta_div)
            return R

        delta0 = delta * 1e-3 / float(T) ** 2
        r: dict = {}
        for _ in range(2):  # δ0 depends on (η, p, B): iterate once (LAZY Thm 3.12; docs/algorithms/lazy.md#l2p-rmw)
            r = calibrate_trusted(T=T, eps=eps, delta=delta, regret=make_proxy(delta0), delta0=delta0,
                                  log_factor=log_factor, conservative=(mode == "certified"), n_B=n_B, n_c=n_c,
                                  n_eta=n_eta)
            delta0_new = _delta0(delta, T, r["B"], r["eta"], r["p"], delta1)
            if delta0_new >= delta0:
                break
            delta0 = delta0_new
        eta_div, p, B = r["eta"], r["p"], int(r["B"])
        eta = float(_eta_from_div(eta_div, delta0))
        lam = (L / D) * max(math.sqrt(T), math.sqrt(d * logT) / eta)
        beta = eta**2 * lam / (20.0 * L**2)
        eta_alg = eta_div
        if mode == "retuned":
            notes.append("retuned: Thm 3.2 constraints with log(1/delta1) -> 1 (rate form); see eps_certified")
    thm = {k: bool(v) for k, v in l2p_conditions(eta_div, p, B, T, delta1).items()}
    conds = {"exact sampler": sampler == "exact"}
    if not all(thm.values()):
        notes.append(f"Thm 3.2's side conditions {[k for k, v in thm.items() if not v]} fail; the ledger does not "
                     "need them")
    e_pr = printed_eps(float(eta_div), float(p), int(B), T, float(delta0), float(delta1))
    if sampler != "exact":
        notes.append("sampler='mala' is approximate: Thm 3.2 assumes exact samples, nothing is certified")
    if loss in RMW_BUFFER_LOSSES:
        notes.append(f"loss={loss!r}: Lemma 3.11 with L = a_max (convex, a_max-Lipschitz); the RMW statistics are "
                     f"a buffer of T rows (pass capacity=T to l2p_rmw)")
    ledger, which = rmw_ledger(eta_div=float(eta_div), eta_alg=float(eta_alg), p=float(p), B=int(B), T=T,
                               delta0=float(delta0), delta1=float(delta1), beta=float(beta), L=L, D=D, delta=delta)
    notes.append(f"Thm 3.2 at eta_div (Lemma 3.11) as printed: eps={e_pr:.4g} (the certificate is the ledger's: "
                 f"{which})")
    bound = float(l2p_rmw_regret_bound(T, d, beta, lam, L, D, B, eta_div))
    notes.append(f"regret proxy (corrected batching term) = {bound:.4g}; alternating-sign lag "
                 f"L^2 T (B-1)/(4 lam) = {float(rmw_alternating_lag(T, B, lam, L)):.4g}")
    plan = make_plan(algorithm="l2p_rmw", mode=mode,
                     params={"beta": float(beta), "lam": float(lam), "radius": D / 2.0, "eta": float(eta_alg),
                             "p": float(p), "B": int(B), "eta_paper": float(eta), "eta_div": float(eta_div),
                             "delta0": float(delta0), "delta1": float(delta1), "sampler": sampler,
                             "loss": loss, "L": L},
                     eps=eps, delta=delta, ledger=ledger,
                     conditions=conds, reference=REFERENCE, notes=notes)
    if mode == "certified" and not plan.certified:
        fix = "use sampler='exact' or a larger eps/T" if loss == "linear" else \
            f"loss={loss!r} has no exact sampler: use mode='paper' or 'rate' (uncertified)"
        raise ValueError(f"l2p_rmw: the request eps={eps}, delta={delta}, T={T} cannot be certified "
                         f"(sampler={sampler!r}, loss={loss!r}); {fix}")
    return plan


# --------------------------------------------------------------------------- LAZY Figure 1(a),(b): the DP-OCO setups

#: the learners of :func:`figure1_oco_setup`: L2P-RMW, tree-aggregated DP-FTRL and non-private FTRL
FIGURE1_OCO_LEARNERS = ("l2p_rmw", "dp_ftrl", "nonprivate")
_FIGURE1_CURVE = {"l2p_rmw": "L2P", "dp_ftrl": "KMS+21 (DP-FTRL)", "nonprivate": "non-private"}


def figure1_dimension(panel: str, T: int) -> int:
    """The dimension of a DP-OCO panel of LAZY Figure 1 at horizon ``T`` (*Lazy private online learning*, Fig. 1).

    Args:
        panel: ``"a"`` (``d = ⌈ln T⌉``) or ``"b"`` (``d = ⌈T^{1/3}⌉``).
        T: the horizon.

    Returns:
        The dimension, at least 2.
    """
    check_choice("panel", panel, ("a", "b"))
    return max(2, int(math.ceil(math.log(T)))) if panel == "a" else max(2, int(math.ceil(T ** (1 / 3))))


def figure1_oco_exponent(learner: str, panel: str, alpha: float) -> float:
    """A learner's regret exponent in LAZY Figure 1(a),(b) (logs and constants ignored): regret ``≲ T^e`` at
    ``ε = T^{-α}`` (:func:`jaxdp.experts.figure1_exponents`; L2P-RMW: Thm 3.12).

    Args:
        learner: one of :data:`FIGURE1_OCO_LEARNERS`.
        panel: ``"a"`` or ``"b"``.
        alpha: the privacy exponent α.

    Returns:
        The exponent ``e``.
    """
    from ..experts.l2p_mw import figure1_exponents

    check_choice("learner", learner, FIGURE1_OCO_LEARNERS)
    check_choice("panel", panel, ("a", "b"))
    return float(figure1_exponents(alpha, panel)[_FIGURE1_CURVE[learner]])


def figure1_oco_setup(learner: str, T: int, d: int, alpha: float, *, adversary: str = "biased",
                      loss: str = "linear", mode: str = "rate", radius: float = 0.5, delta: float = 1e-6,
                      noise: float = 0.1, mala_tol: float = 1e-2) -> dict:
    """One point of LAZY Figure 1(a),(b) for DP-OCO (*Lazy private online learning*, Fig. 1, Thm 3.12): the
    learner, problem and adversary at ``ε = T^{-α}`` on the ball of radius ``radius`` (diameter ``D = 2 radius``,
    ``L = 1``), ready for :func:`jaxdp.core.simulate`.

    Linear losses (``loss="linear"``): L2P-RMW planned in ``mode`` with the exact sampler, DP-FTRL planned
    (``setting="general"``) or non-private FTRL (``λ = √T/radius``, ``σ = 0``) against ``adv_linear_oco`` in
    ``adversary`` mode (bias 0.2, batch ``B`` of the L2P-RMW plan); ``lag_prediction`` is the extra regret of a lazy
    learner on alternating signs, :func:`rmw_alternating_lag`. Absolute or logistic losses: L2P-RMW with MALA
    (rate mode, :func:`~jaxdp.oco.rmw.rmw_mala_schedule` at ``mala_tol``) against ``adv_nonsmooth`` with label noise
    ``noise`` (docs/algorithms/lazy.md#rmw-nonsmooth).

    Args:
        learner: one of :data:`FIGURE1_OCO_LEARNERS` (only ``"l2p_rmw"`` for a non-linear loss).
        T: the horizon.
        d: the dimension (:func:`figure1_dimension`).
        alpha: the privacy exponent: ``ε = T^{-α}``.
        adversary: ``"biased"`` or ``"alternating"`` (linear losses).
        loss: ``"linear"``, ``"absolute"`` or ``"logistic"``.
        mode: the L2P-RMW planner's mode on linear losses.
        radius, delta, noise, mala_tol: the ball's radius, δ, the non-smooth labels' noise and MALA's tolerance.

    Returns:
        ``{"learner", "params", "problem", "adversary", "adversary_params", "extras", "diagnostics"}``: ``extras``
        the per-point values ``B``, ``lag_prediction``, ``mala_steps``, ``mala_step_size`` (NaN where they do not
        apply); ``diagnostics`` :func:`~jaxdp.oco.rmw.rmw_mala_diagnostics` for MALA, else ``None``.
    """
    from .adversaries import adv_linear_oco, adv_nonsmooth, linear_oco_params, smooth_realizable_params
    from .dp_ftrl import dp_ftrl, dp_ftrl_params, plan_dp_ftrl
    from .problems import absolute_problem, linear_problem, logistic_problem
    from .rmw import rmw_mala_diagnostics, rmw_mala_schedule

    check_choice("loss", loss, ("linear", "absolute", "logistic"))
    check_choice("learner", learner, FIGURE1_OCO_LEARNERS if loss == "linear" else ("l2p_rmw",))
    eps, nan = float(T) ** -alpha, math.nan
    params: Any
    if loss != "linear":
        plan = plan_l2p_rmw(eps=eps, delta=delta, T=T, d=d, mode="rate", L=1.0, D=2 * radius, sampler="mala",
                            loss=loss)
        h, steps = rmw_mala_schedule(plan.params["beta"], plan.params["lam"], T, d, loss, radius, tol=mala_tol)
        L, params = l2p_rmw_from_plan(plan, d, capacity=T, mala_steps=steps)
        return {"learner": L, "params": params,
                "problem": (absolute_problem if loss == "absolute" else logistic_problem)(d, radius, n_buffer=T),
                "adversary": adv_nonsmooth(d, loss),
                "adversary_params": smooth_realizable_params(radius if loss == "absolute" else 2 * radius,
                                                             sigma=noise),
                "extras": {"B": float(plan.params["B"]), "lag_prediction": nan, "mala_steps": float(steps),
                           "mala_step_size": h},
                "diagnostics": rmw_mala_diagnostics(d, loss, T, steps)}
    plan = plan_l2p_rmw(eps=eps, delta=delta, T=T, d=d, mode=mode, L=1.0, D=2 * radius)
    B, prob = int(plan.params["B"]), linear_problem(d, radius)
    if learner == "l2p_rmw":
        L, params = l2p_rmw_from_plan(plan, d)
    else:
        L = dp_ftrl(prob, T)
        params = (dp_ftrl_params(**plan_dp_ftrl(eps=eps, delta=delta, T=T, d=d, L=1.0, D=radius,
                                                setting="general").params) if learner == "dp_ftrl" else
                  dp_ftrl_params(lam=math.sqrt(T) / radius, sigma=0.0))
    return {"learner": L, "params": params, "problem": prob, "adversary": adv_linear_oco(d),
            "adversary_params": linear_oco_params(adversary, L=1.0, bias=0.2, B=B),
            "extras": {"B": float(B), "lag_prediction": float(rmw_alternating_lag(T, B, plan.params["lam"], 1.0)),
                       "mala_steps": nan, "mala_step_size": nan},
            "diagnostics": None}



def figure1_oco_point(keys, learner: str, T: int, d: int, alpha: float, **setup: Any) -> dict:
    """Run one point of LAZY Figure 1(a),(b) (:func:`figure1_oco_setup`) on the seed keys ``keys``.

    Args:
        keys: the seed keys, one run each (:func:`jaxdp.core.seed_keys`).
        learner, T, d, alpha: the point (:func:`figure1_oco_setup`).
        **setup: further keywords of :func:`figure1_oco_setup` (``adversary``, ``loss``, ``mode``, ...).

    Returns:
        Per-seed arrays: ``regret``, ``B``, ``lag_prediction``, ``switches`` and, for MALA (NaN otherwise),
        ``mala_acceptance`` and ``mala_outside`` (on each seed's own measure after all ``T`` losses,
        :func:`~jaxdp.oco.rmw.rmw_mala_diagnostics`), ``mala_steps`` and ``mala_step_size``.
    """
    from ..core import simulate

    s = figure1_oco_setup(learner, T, d, alpha, **setup)
    out, n, ex = simulate(s["learner"], s["adversary"], s["problem"], s["params"], s["adversary_params"], keys,
                          T), len(keys), s["extras"]
    acc, outside = ((np.full(n, np.nan),) * 2 if s["diagnostics"] is None else
                    s["diagnostics"](keys, s["params"].measure, s["adversary_params"]))
    return {"regret": out["regret"], "B": np.full(n, ex["B"]), "lag_prediction": np.full(n, ex["lag_prediction"]),
            "switches": np.asarray(out.get("switches", np.zeros(n))).astype(float),
            "mala_acceptance": np.asarray(acc, float), "mala_outside": np.asarray(outside, float),
            "mala_steps": np.full(n, ex["mala_steps"]), "mala_step_size": np.full(n, ex["mala_step_size"])}


# --------------------------------------------------------------------------- registry


def _from_plan(plan: Plan) -> L2PParams:
    """``plan_l2p_rmw``'s ``{beta, lam, radius, eta, p, B}``; the others (``eta_paper``, ``eta_div``,
    ``delta0``, ``delta1``, ``L``) are the ledger's and the regret bound's."""
    P = plan.params
    return l2p_rmw_params(beta=P["beta"], lam=P["lam"], radius=P["radius"], eta=P["eta"], p=P["p"], B=int(P["B"]))


def _static(plan: Plan) -> dict:
    P = plan.params
    return {"B": int(P["B"]), "loss": P.get("loss", "linear"), "sampler": P.get("sampler", "exact")}


_ENTRY = register_learner(
    "l2p_rmw", factory=l2p_rmw, params_type=L2PParams, problem="oco", private=True, planner="l2p_rmw",
    from_plan=_from_plan, static=_static,
    conformance=ConformanceCase("jaxdp.oco.conformance:l2p_rmw_case", d=1),
    description="L2P on regularized multiplicative weights (DP-OCO): a fresh sample of μ_t ∝ exp(-η(<g_{1:t}, x> "
                "+ λ||x||²/2)) per batch of B rounds, switches by a private coupling (exact or MALA sampler)",
    reference="Lazy private online learning, Thm 3.12 (+ Thm 3.2, Lemma 3.11)")
