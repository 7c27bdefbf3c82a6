"""The deterministic proximal path of GROWTH Algorithm 2 on 1-D noiseless κ-regression (NumPy, float64).

GROWTH Algorithm 2 (Theorems 2–3); docs/algorithms/growth.md#g1-prox-path.

In one dimension the noiseless regression instance (:func:`jaxdp.sco.inst_kappa_regression` with ``d = 1``)
has ``a = ±1`` and ``b = a x*``, so every sample's loss is ``|x - x*|^κ``: every block's empirical risk *is*
the population risk, and without privacy noise the algorithm's output is a deterministic function of
``n``. Phase ``j`` of epoch ``i`` is then one exact proximal step

    x ← clip( prox_{t f}(x),  B(0, R) ∩ B(x_i, D_i) ∩ B(x, 2Lη_{ij} b) ),   f(x) = |x - x*|^κ,
    t = η_{ij} b,   η_{ij} = η_0 2^{-i} 16^{-(j + offset)},   D_i = 2R·2^{-i},   b = ⌊n_0/k⌋,

(in 1-D the constrained prox of a convex function is the clipped unconstrained one). This module
computes that path with bisection in float64. It is the slow reference that ``epoch_growth_sco`` with
``ε = ∞`` is tested against step by step (tests/sco/test_growth_prox_path.py), and it explains the slow
slopes of the ``growth-rates`` study's G1 regression rows for κ ≥ 3: the total proximal time
``Σ_ij η_{ij} b ≈ (32/15) η_0 n_0/k`` with ``η_0 = D/(2L√n_0)`` grows only like ``√n_0/(k L)``, and on
a flat loss (κ ≥ 3) the gradient flow ``r' = -κ r^{κ-1}`` from ``r_0 = R/4`` needs
``t ≫ r_0^{-(κ-2)}/(κ(κ-2))`` before its asymptotic decay ``r ~ (κ(κ-2)t)^{-1/(κ-2)}`` sets in. With the
global Lipschitz constant ``L = κ(1.5R)^{κ-1}`` in ``η_0`` that takes ``n`` far beyond 10⁶.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..core.validation import check_finite_scalar, check_positive, check_positive_int
from .planners import plan_epoch_growth_sco

__all__ = ["prox_step_1d", "epoch_prox_path_1d", "prox_path_table", "write_prox_path_table"]


def prox_step_1d(x_prev: float, t: float, kappa: float, x_star: float, *, iters: int = 200) -> float:
    """``argmin_x |x - x*|^κ + (x - x_prev)²/(2t)`` by bisection on the derivative (float64).

    The minimizer lies between ``x_prev`` and ``x*``; 200 halvings reach the float64 resolution.

    Args:
        x_prev: the previous point.
        t: the proximal time.
        kappa: the exponent κ.
        x_star: the minimizer ``x*``.
        iters: the bisection steps.

    Returns:
        The minimizer.
    """
    check_finite_scalar("x_prev", x_prev)
    check_finite_scalar("x_star", x_star)
    check_positive("t", t)
    check_positive("kappa", kappa)
    if x_prev == x_star:
        return float(x_prev)
    lo, hi = sorted((float(x_prev), float(x_star)))
    for _ in range(iters):
        m = 0.5 * (lo + hi)
        g = kappa * abs(m - x_star) ** (kappa - 1.0) * math.copysign(1.0, m - x_star) + (m - x_prev) / t
        if g > 0:
            hi = m
        else:
            lo = m
    return 0.5 * (lo + hi)


def epoch_prox_path_1d(n: int, kappa: float, *, kappa_low: float = 1.5, R: float = 1.0, mode: str = "rate",
                       eta_mult: float = 1.0, L: Optional[float] = None) -> dict:
    """Algorithm 2's noiseless output on the 1-D κ-regression instance, started at ``x = 0``.

    The parameters are the planner's (:func:`plan_epoch_growth_sco` with the instance's ``L`` and
    ``D = 2R``; ``L`` overrides the Lipschitz constant the step is computed from, ``eta_mult`` scales
    ``η_0``). Returns ``excess = |x_T - x*|^κ``, the final ``x``, the iterate after each epoch
    (``x_end``, shape ``(T,)``) and after each phase (``x_phase``, ``(T, k)``), the total proximal time
    ``t_total = Σ η_{ij} b``, and the plan's ``n_epochs``, ``k``, ``n0``, ``eta0``.

    Args:
        n: the sample size.
        kappa: the exponent κ > 1 of the instance.
        kappa_low: the planner's lower bound on κ.
        R: the radius of ``X``.
        mode: the planner mode.
        eta_mult: the factor on ``η_0``.
        L: the Lipschitz constant the step is computed from (``None``: the instance's).

    Returns:
        A dict (see above).

    Raises:
        ValueError: invalid values.
    """
    n = check_positive_int("n", n, minimum=2)
    check_positive("eta_mult", eta_mult)
    if not (isinstance(kappa, (int, float)) and math.isfinite(kappa) and kappa > 1):
        raise ValueError(f"kappa must be a finite number > 1, got {kappa!r}")
    L_inst = kappa * (1.5 * R) ** (kappa - 1.0)              # inst_kappa_regression's L
    L_step = L_inst if L is None else float(check_positive("L", L))
    pl = plan_epoch_growth_sco(eps=math.inf, delta=0.0, d=1, n=n, kappa_low=kappa_low, L=L_step, D=2.0 * R,
                               mode=mode).params
    T, k, n0, offset = pl["n_epochs"], pl["k"], pl["n0"], pl["phase_offset"]
    eta0 = pl["eta0"] * eta_mult
    b = n0 // k
    x_star = 0.25 * R
    x = 0.0
    x_end, x_phase, t_total = np.empty(T), np.empty((T, k)), 0.0
    for i in range(T):
        D_i, eta_i, centre = 2.0 * R * 2.0 ** (-i), eta0 * 2.0 ** (-i), x
        for j in range(k):
            eta_ij = eta_i * 16.0 ** (-(j + offset))
            t = eta_ij * b
            t_total += t
            r_ij = 2.0 * L_inst * eta_ij * b                   # the phase's ball uses the instance's L
            lo = max(-R, centre - D_i, x - r_ij)
            hi = min(R, centre + D_i, x + r_ij)
            x = min(max(prox_step_1d(x, t, kappa, x_star), lo), hi)
            x_phase[i, j] = x
        x_end[i] = x
    return {"excess": abs(x - x_star) ** kappa, "x": x, "x_end": x_end, "x_phase": x_phase, "t_total": t_total,
            "n_epochs": T, "k": k, "n0": n0, "eta0": eta0}


def prox_path_table(kappas=(3.0, 4.0), ns=(10**4, 3 * 10**4, 10**5, 3 * 10**5, 10**6, 10**7, 10**8, 10**9),
                    summary_csv: Optional[str] = None) -> list:
    """Rows of ``results/growth-rates/G1_prox_path.csv``: the noiseless path's excess against ``n``, its
    local slope, Theorem 2's leading term ``λ^{-1/(κ-1)} (L/√n)^{κ/(κ-1)}`` (constant 1, no logs; the
    instance's ``λ = κ``, ``L = κ(1.5)^{κ-1}``), the path with ``η_0 × 10``, and the study's measured
    G1 regression means where ``summary_csv`` (a ``growth-rates`` ``summary.csv``) has them.

    Args:
        kappas: the growth exponents κ (each ``> 1``).
        ns: the sample sizes ``n``, increasing (the local slope compares consecutive ones).
        summary_csv: the path of a ``growth-rates`` study's ``summary.csv`` with the measured G1 regression
            excess; ``None``: the measured columns are NaN.

    Returns:
        A list of dicts, one per ``(κ, n)``: ``kappa``, ``n``, ``epochs``, ``phases``, ``n0``, ``prox_time``,
        ``path_excess``, ``measured_mean``/``_lo``/``_hi``, ``local_slope``, ``bound_leading_term``,
        ``path_over_bound`` and ``path_excess_eta_x10``.
    """
    measured = {}
    if summary_csv is not None:
        import csv

        with open(summary_csv, newline="") as fh:
            for r in csv.DictReader(fh):
                if r["exp"] == "G1" and r["inst"] == "regression":
                    measured[(float(r["kappa"]), int(r["n_samples"]))] = r
    rows = []
    for kappa in kappas:
        L, lam, prev = kappa * 1.5 ** (kappa - 1.0), kappa, None
        for n in ns:
            p = epoch_prox_path_1d(n, kappa)
            bound = lam ** (-1.0 / (kappa - 1.0)) * (L / math.sqrt(n)) ** (kappa / (kappa - 1.0))
            m = measured.get((float(kappa), int(n)), {})
            rows.append({
                "kappa": kappa, "n": n, "epochs": p["n_epochs"], "phases": p["k"], "n0": p["n0"],
                "prox_time": p["t_total"], "path_excess": p["excess"],
                "measured_mean": float(m.get("excess_mean", "nan")), "measured_lo": float(m.get("excess_lo", "nan")),
                "measured_hi": float(m.get("excess_hi", "nan")),
                "local_slope": (math.log(p["excess"] / prev[1]) / math.log(n / prev[0])) if prev else float("nan"),
                "bound_leading_term": bound, "path_over_bound": p["excess"] / bound,
                "path_excess_eta_x10": epoch_prox_path_1d(n, kappa, eta_mult=10.0)["excess"]})
            prev = (n, p["excess"])
    return rows


def write_prox_path_table(results_dir: str = ".") -> str:
    """Write ``RESULTS_DIR/G1_prox_path.csv`` from :func:`prox_path_table` (with the measured means of
    ``RESULTS_DIR/summary.csv`` when it exists); returns the path written.

    Args:
        results_dir: the ``growth-rates`` results directory (read for ``summary.csv``, written to).

    Returns:
        The path of the CSV file written (floats to 6 significant digits).
    """
    import csv
    import pathlib

    out = pathlib.Path(results_dir)
    summary = out / "summary.csv"
    rows = prox_path_table(summary_csv=str(summary) if summary.exists() else None)
    path = out / "G1_prox_path.csv"
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()} for r in rows)
    return str(path)
