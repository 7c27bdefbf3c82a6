"""L2P-MW: L2P applied to multiplicative weights, DP-OPE (LAZY Thm 3.10; docs/algorithms/lazy.md#l2p-mw).

``l2p_mw(d, block_size)`` is ``l2p(mw_measure(d), block_size)`` with
``eta_div = eta_mw`` and ``delta0 = 0`` (LAZY Lemma 3.9). Because
``delta0 = 0`` the marginal of the played expert in batch ``s`` is exactly
``nu_s = softmax(-eta * cum_{(s-1)B})`` (Lemma 3.4), so the expected regret is
that of MW on the batch losses (LAZY Thm 3.2, Prop. 3.3; docs/algorithms/lazy.md#batching-term, CORRECTED):

    E[Reg_T] <= ln(d)/eta + eta T B / 8.

Parameter settings (paper, certified, retuned, ...) come from
:func:`plan_l2p_mw` below.

Measure families for L2P (LAZY Assumption 3.1; docs/algorithms/primitives.md#hedge; docs/algorithms/lazy.md#setting).

``mw_measure(d)``: multiplicative weights, ``mu_t(x) = exp(-eta sum_{i<t} l_i(x))``
on ``[d]`` (LAZY eq. (2), Lemma 3.9): ``mu_{t+1}(x)/mu_t(x) = e^{-eta l_t(x)}``
and ``D_inf(mu_{t+1}, mu_t) <= eta`` for losses in ``[0, 1]``, so Assumption
3.1 holds with ``eta_div = eta`` and ``delta0 = 0``.

Parameter planner for L2P-MW (LAZY Thm 3.10 with Thm 3.2; docs/algorithms/lazy.md).

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
* ``"certified"``: :func:`jaxdp.privacy.accounting.l2p.l2p_calibrate` with the valid
  proxy ``ln d/eta + eta T B/8``, ``eta <= sqrt(8 ln d / T)``, and both the
  printed Thm 3.2 and the accountant on the L2P ledger ``<= eps``; raises ``ValueError``
  if the request cannot be certified.
* ``"rate"``: as ``"paper"`` with ``log(1/delta1) -> 1`` in ``p = max(eta/eps, B/T)``
  (exponents do not see the log factors; L2P-MW's expected regret does not
  depend on ``p`` at all, since the marginal of ``x_s`` is exactly ``nu_s``).
* ``"retuned"``: the same search with ``log(1/delta1) -> 1`` in Thm 3.2's
  constraints (rate form; asymptotically ``eta ~ (eps^3 ln d / T^2)^{1/5}``,
  ``p ~ eta/eps``, ``B ~ T eta^3/eps^3``, regret ``T^{2/5} eps^{-3/5}``).
* ``"composed"``: ``"paper"``'s parameters, certified by
  :func:`jaxdp.privacy.accounting.l2p.l2p_composed_eps` (the ledger's items with each fresh sample as a
  ``2 eta``-bounded-range mechanism, Rényi composition; never above ``"paper"``'s certificate;
  docs/algorithms/lazy.md#composed).

``delta1 = delta / (2T)`` (``delta0 = 0`` for MW, so Thm 3.2's delta is ``2 T delta1``).

``figure1_exponents``: the regret exponents of LAZY Figure 1 and the corrected curves (docs/algorithms/lazy.md#figure-1).

With ``eps = T^{-alpha}`` and regret ``T^{beta}`` (logs ignored, every curve
capped at ``beta <= 1``). Panels ``"a"`` (DP-OCO, d = log T), ``"b"`` (DP-OCO,
d = T^{1/3}), ``"c"`` (DP-OPE, d = T) and ``"c'"`` (corrections of spec
LAZY Thm 3.2, Prop. 3.3, Thm 3.10; docs/algorithms/lazy.md#batching-term, #l2p-mw, not in the paper).
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from ..privacy.accounting.accountant import Certificate
from ..privacy.accounting.l2p import (
    calibrate_trusted, l2p_composed_eps, l2p_conditions, l2p_delta1, l2p_ledger, mw_regret_proxy, printed_eps,
)
from ..privacy.accounting.plan import Plan, make_plan
from ..core.random import sample_categorical
from ..core.types import Learner
from ..core.validation import check_choice, check_in_range, check_positive, check_positive_int
from ..registry import CompareBuiltin, ConformanceCase, register_learner, register_planner
from .l2p import L2PParams, LazyMeasure, l2p

__all__ = ['MWMeasureParams', 'mw_measure', 'l2p_mw', 'l2p_mw_params', 'l2p_mw_regret_bound', 'l2p_mw_paper_regret', 'alternating_prediction', 'alternating_warmup', 'batch_aligned_prediction', 'plan_l2p_mw', 'L2P_MW_MODES', 'l2p_mw_eps0', 'figure1_exponents', 'FIGURE1_PANELS']


class MWMeasureParams(NamedTuple):
    """Parameters of the MW measure.

    Attributes:
        eta: the MW learning rate.
    """
    eta: jax.Array    # MW step size (= eta_div of Assumption 3.1)


@functools.lru_cache(maxsize=None)
def mw_measure(d: int) -> LazyMeasure:
    """The MW measure family over ``d`` experts (stats: the cumulative loss vector).

    ``sample`` is the one-uniform inverse-CDF draw from ``softmax(-eta cum)``;
    ``summary`` is that probability vector (computed once per batch) and
    ``expected_loss`` its inner product with the round's loss.

    Args:
        d: the number of experts.

    Returns:
        The :class:`LazyMeasure`.
    """
    d = check_positive_int("d", d, minimum=2)
    fdt = jnp.result_type(float)

    def stats_init(loss_example):
        del loss_example
        return jnp.zeros((d,), fdt)

    def stats_update(cum, loss, mp):
        return cum + loss

    def log_ratio(loss, x, mp):
        return -mp.eta * loss[x]

    def sample(key, cum, mp):
        return sample_categorical(key, -mp.eta * cum)

    def summary(cum, mp):
        return jax.nn.softmax(-mp.eta * cum)

    def expected_loss(p, loss):
        return jnp.dot(p, loss)

    return LazyMeasure(stats_init=stats_init, stats_update=stats_update, log_ratio=log_ratio, sample=sample,
                       summary=summary, expected_loss=expected_loss)


@functools.lru_cache(maxsize=None)
def l2p_mw(d: int, block_size: Optional[int] = None) -> Learner:
    """L2P-MW over ``d >= 2`` experts. Params: :func:`l2p_mw_params`.

    ``block_size``: static batch size (engine nested scan, fresh samples once
    per batch) or ``None`` (traced ``params.B``; one compilation for every B).
    Info: ``expected_loss`` (= ``<nu_s, l_t>``), ``switches``, ``n_real``,
    ``n_fake``, ``n_yres``, ``n_batches``.

    Args:
        d: the number of experts.
        block_size: static batch size or ``None``.

    Returns:
        The L2P-MW :class:`jaxdp.Learner`.
    """
    d = check_positive_int("d", d, minimum=2)
    return l2p(mw_measure(d), block_size)


def l2p_mw_params(eta: float, p: float, B: int, *, block_size: Optional[int] = None, batch: Optional[int] = None
                  ) -> L2PParams:
    """``L2PParams`` for L2P-MW: MW step ``eta`` (also the D_inf bound), fake-switch
    probability ``p``, batch ``B``. ``batch``: optional leading grid length (values broadcast).

    Args:
        eta: the MW step (also the D_inf bound).
        p: the fake-switch probability.
        B: the batch size.
        block_size: the learner's static batch size, if any (must equal ``B``).
        batch: optional leading grid length.

    Returns:
        :class:`L2PParams`.
    """
    check_positive("eta", eta)
    check_in_range("p", p, 0.0, 1.0)
    B_arr = np.asarray(B)
    if not np.issubdtype(B_arr.dtype, np.integer) or np.any(B_arr < 1):
        raise ValueError(f"B must be a positive integer (or array of them), got {B!r}")
    if block_size is not None and np.any(B_arr != block_size):
        raise ValueError(f"B must equal the learner's block_size={block_size}, got B={B!r}")
    fdt = jnp.result_type(float)
    eta_a = jnp.asarray(eta, fdt)
    p_a = jnp.asarray(p, fdt)
    B_a = jnp.asarray(B_arr, jnp.int32)
    if batch is not None:
        eta_a, p_a, B_a = (jnp.broadcast_to(v, (batch,)) for v in (eta_a, p_a, B_a))
    return L2PParams(measure=MWMeasureParams(eta=eta_a), eta=eta_a, p=p_a, B=B_a)


def l2p_mw_regret_bound(d, T, eta, B):
    """Valid expected-regret bound ``ln d / eta + eta T B / 8`` (LAZY Thm 3.2, Prop. 3.3; docs/algorithms/lazy.md#batching-term, CORRECTED).

    Args:
        d: the number of experts.
        T: the horizon.
        eta: the learning rate η.
        B: the batch size.

    Returns:
        The bound.
    """
    return np.log(d) / np.asarray(eta, float) + np.asarray(eta, float) * np.asarray(T, float) * np.asarray(B, float) / 8.0


def l2p_mw_paper_regret(d, T, eta, B, c_B: float = 1.0):
    """The paper's (claimed) curve ``ln d / eta + eta T / 8 + c_B T B^2 eta^2`` (Prop. 3.3 as printed).

    Args:
        d: the number of experts.
        T: the horizon.
        eta: the learning rate η.
        B: the batch size.
        c_B: the constant of the batching term.

    Returns:
        The curve.
    """
    eta = np.asarray(eta, float)
    T = np.asarray(T, float)
    return np.log(d) / eta + eta * T / 8.0 + c_B * T * np.asarray(B, float) ** 2 * eta ** 2


def alternating_prediction(T, eta, B):
    """Expected regret of L2P-MW on ``adv_alternating_batches(B)``: ``(T/4) tanh(eta B / 2)`` (LAZY Thm 3.2, Prop. 3.3; docs/algorithms/lazy.md#batching-term).

    Args:
        T: the horizon.
        eta: the learning rate η.
        B: the batch size.

    Returns:
        The expected regret.
    """
    return np.asarray(T, float) / 4.0 * np.tanh(np.asarray(eta, float) * np.asarray(B, float) / 2.0)


def alternating_warmup(d, eta):
    """The warm-up term of L2P-MW's regret on ``adv_alternating_batches``: ``ln(d/2)/eta``.

    The model of the alternating-batches regret is ``alternating_warmup + alternating_prediction`` (LAZY Thm 3.2,
    docs/algorithms/lazy.md#batching-term): the multiplicative weights first move the mass off the ``d - 2``
    experts that never lead.

    Args:
        d: the number of experts.
        eta: the learning rate η (a float or an array).

    Returns:
        ``ln(d/2)/eta``, float64.
    """
    return math.log(d / 2) / np.asarray(eta, float)


def batch_aligned_prediction(d, T, B):
    """Regret of any batch-constant algorithm on batch-aligned i.i.d. epochs: ``sqrt(T B ln d / 2)``.

    Args:
        d: the number of experts.
        T: the horizon.
        B: the batch size.

    Returns:
        The regret.
    """
    return np.sqrt(np.asarray(T, float) * np.asarray(B, float) * math.log(d) / 2.0)


# --------------------------------------------------------------------------- registry


def _from_plan(plan) -> L2PParams:
    """``plan_l2p_mw``'s ``{eta, p, B}`` (``delta1`` is the ledger's, not a parameter)."""
    P = plan.params
    return l2p_mw_params(P["eta"], P["p"], int(P["B"]))


def _compare(d, T, T_max, eps, delta, problem):
    plan = _ENTRY.certified_plan(eps=eps, delta=delta, T=T, d=d)
    # traced batch size: one compilation for every (T, eps) of the sweep
    return l2p_mw(d, None), _ENTRY.params_from_plan(plan), float(plan.eps_certified)


_ENTRY = register_learner(
    "l2p_mw", factory=l2p_mw, params_type=L2PParams, problem="experts", private=True, planner="l2p_mw",
    from_plan=_from_plan, conformance=ConformanceCase("jaxdp.experts.conformance:l2p_mw_case"),
    description="L2P on multiplicative weights (DP-OPE): a shadow MW sample per batch of B rounds, switches "
                "by a private coupling; E[Reg_T] <= ln(d)/η + ηTB/8",
    reference="Lazy private online learning, Alg. 1, Thm 3.10 (+ Thm 3.2)",
    compare=CompareBuiltin(_compare, "planner l2p_mw, mode certified (Lazy private online learning, Thm 3.10)"))


L2P_MW_MODES = ("paper", "paper_logs", "certified", "rate", "retuned", "composed")
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
                            "modes paper, paper_logs, certified, rate, retuned, composed")
def plan_l2p_mw(*, eps: float, delta: float, T: int, d: int, mode: str = "paper", B: Optional[int] = None,
                grid: Optional[tuple] = None) -> Plan:
    """Plan ``(eta, p, B)`` for :func:`jaxdp.experts.l2p_mw` and report what Thm 3.2 certifies.

    Args:
      eps, delta: requested privacy (``eps > 0``, ``0 < delta < 1``).
      T: horizon (``T >= B``).
      d: number of experts (``>= 2``).
      mode: one of ``paper, paper_logs, certified, rate, retuned, composed`` (module docstring).
      B: override the batch size (``paper``/``rate``/``paper_logs``/``composed`` only).
      grid: ``(n_B, n_c, n_eta)`` search resolution for ``certified``/``retuned``
        (default ``(120, 80, 400)``).

    Returns a :class:`jaxdp.privacy.accounting.Plan` with ``params = {eta, p, B, delta1}``;
    ``eps_certified`` is what the accountant proves for :func:`jaxdp.privacy.accounting.l2p.l2p_ledger`
    with the MW measure's constants; the ledger argument needs none of Thm 3.2's side conditions
    (the notes say which of them fail, if any).

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan` with ``params = {eta, p, B, delta1}``.

    Raises:
        ValueError: invalid privacy parameters, horizon, ``d``, mode or grid.
    """
    eps, delta, T, d = _validate(eps, delta, T, d)
    check_choice("mode", mode, L2P_MW_MODES)
    delta1 = l2p_delta1(delta, T)
    L1 = math.log(1.0 / delta1)
    eps0 = l2p_mw_eps0(T, d)
    notes = []
    if mode in ("paper", "rate", "paper_logs", "composed"):
        if mode == "paper_logs":
            B_ = max(1, int(math.floor(1.0 / (2.0 * eps * math.log(1.0 / delta))))) if B is None else B
            eta = min(eps0, eps) ** (2 / 3) / (T ** (1 / 3) * math.log(T / delta))
            p = eta / eps
        else:
            B_ = max(1, int(math.floor(1.0 / eps))) if B is None else B
            eta = min(eps0, eps) ** (2 / 3) / T ** (1 / 3)
            # rate: log(1/delta1) -> 1; the certified eps is still reported with the real delta1
            p = max(eta * (L1 if mode in ("paper", "composed") else 1.0) / eps, B_ / T)
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
            raise ValueError(f"B can only be overridden in modes paper, rate, paper_logs, composed; got mode={mode!r}")
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
                 f"{[k for k, v in thm.items() if not v]} fail)") + "; not used: the certificate is the ledger's"
                 + (" (mode composed: the smaller of its accountant and its Renyi composition)" if mode == "composed"
                    else "") + ", which needs none of Thm 3.2's side conditions")
    notes.append(f"valid regret bound ln d/eta + eta T B/8 = {math.log(d) / eta + eta * T * B_ / 8:.4g}")
    cert = None
    if mode == "composed":
        e_c, which = l2p_composed_eps(float(eta), float(p), int(B_), T, delta, delta1)
        if which == "rdp":   # else the ledger's own certificate is smaller: make_plan computes it
            cert = Certificate(e_c, delta, "rdp", "the ledger's items, fresh samples as 2 eta-bounded-range "
                               "mechanisms: Renyi composition (Hoeffding's lemma; Mironov Prop. 1; "
                               "Canonne-Kamath-Steinke Prop. 12), docs/algorithms/lazy.md#composed")
    plan = make_plan(algorithm="l2p_mw", mode=mode, params={"eta": float(eta), "p": float(p), "B": int(B_),
                                                           "delta1": float(delta1)},
                     eps=eps, delta=delta, ledger=ledger, reference=REFERENCE, notes=notes, certificate=cert)
    if mode == "certified" and not plan.certified:  # pragma: no cover - calibrate guarantees it
        raise ValueError(f"l2p_mw: the request eps={eps}, delta={delta}, T={T} cannot be certified")
    return plan


FIGURE1_PANELS = ("a", "b", "c", "c'")


def figure1_exponents(alpha, panel: str = "c") -> dict:
    """``{curve name: beta(alpha)}`` (NumPy arrays broadcast like ``alpha``) for one panel of LAZY Figure 1.

    Args:
        alpha: the exponent α (array-like).
        panel: the panel of Figure 1.

    Returns:
        ``{curve name: beta(alpha)}``.
    """
    check_choice("panel", panel, FIGURE1_PANELS)
    a = np.asarray(alpha, float)
    half = np.full_like(a, 0.5)
    if panel == "a":
        out = {"L2P": np.maximum(0.5, 1 / 3 + 2 * a / 3),
               "AKST23b": np.maximum.reduce([half, 1 / 3 + a, 3 / 8 + 3 * a / 4]),
               "KMS+21 (DP-FTRL)": 0.5 + a / 2, "non-private": half}
    elif panel == "b":
        out = {"L2P": 0.5 + 2 * a / 3, "AKST23b": np.maximum(0.5 + a, 13 / 24 + 3 * a / 4),
               "KMS+21 (DP-FTRL)": 7 / 12 + a / 2, "non-private": half}
    elif panel == "c":
        out = {"L2P": np.maximum(0.5, 1 / 3 + 2 * a / 3),
               "AFKT23b": np.maximum(0.5, np.minimum(1 / 3 + a, 2 / 5 + 4 * a / 5)),
               "non-private": half}
    else:
        out = {"L2P printed, alternating": np.minimum(0.5 + a, 2 / 3 + a / 3),
               "batch-constant B=1/eps, batch-aligned epochs": (1 + a) / 2,
               "L2P retuned": np.maximum(0.5, 2 / 5 + 3 * a / 5)}
    return {k: np.minimum(1.0, v) for k, v in out.items()}
