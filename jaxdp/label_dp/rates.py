"""LABEL Table 1: minimax rates of the excess risk (logs omitted; docs/algorithms/label-dp.md#planners).

``label_rate_exponent(task, setting, ...)`` gives the exponents; ``label_rates(task, setting, N, eps, ...)``
evaluates the theory curve with all constants 1 (for plotting against empirical curves).

Tasks: ``"classification"``, ``"regression"`` (bounded labels), ``"heavy"`` (p-th moment);
settings: ``"local"``, ``"central"``, ``"nonprivate"``, ``"local_full"`` (prior work; rates only).
"""
from __future__ import annotations

import math
from typing import Mapping, Optional, Sequence

import numpy as np

from ..core.validation import check_choice, check_positive, check_positive_int

__all__ = ["label_rate_exponent", "label_rates", "minimax_h0", "bump_slope", "setting_of", "central_crossover", "TASKS",
           "SETTINGS", "minimax_cells", "slope_theory", "central_crossovers",
           "smoothness_pairs", "smoothness_pairs_error", "claimed_slope",
           "effective_sample_fit"]

TASKS = ("classification", "regression", "heavy")
SETTINGS = ("local", "central", "nonprivate", "local_full")


def label_rate_exponent(task: str, setting: str, *, beta: float = 1.0, gamma: float = 1.0, d: int = 1,
                        p: float = 2.0) -> dict[str, float]:
    """Exponents of LABEL Table 1 as positive numbers: ``{"stat": a, "priv": b}`` where the rate is

    * local: ``(N(ε²∧1))^{-b}`` (heavy: ``(Nε²)^{-b} ∨ N^{-a}``),
    * central: ``N^{-a} + (εN)^{-b}``,
    * nonprivate: ``N^{-a}`` (``b = a``).

    Args:
        task: ``"classification"`` or ``"regression"``.
        setting: ``"local"``, ``"central"`` or ``"nonprivate"`` (and the heavy-tailed variants).
        beta: the Hölder exponent β.
        gamma: the margin exponent γ.
        d: the dimension.
        p: the moment order p.

    Returns:
        ``{"stat": a, "priv": b}``.
    """
    check_choice("task", task, TASKS)
    check_choice("setting", setting, SETTINGS)
    check_positive("beta", beta)
    check_positive("gamma", gamma)
    d = check_positive_int("d", d)
    check_positive("p", p, allow_inf=True)
    if task == "classification":
        a = beta * (gamma + 1) / (2 * beta + d)
        b = {"local": a, "central": beta * (gamma + 1) / (beta + d), "nonprivate": a,
             "local_full": beta * (gamma + 1) / (2 * beta + 2 * d)}[setting]
    else:
        a = 2 * beta / (2 * beta + d)
        if task == "regression" or np.isinf(p):
            b = {"local": a, "central": 2 * beta / (beta + d), "nonprivate": a,
                 "local_full": beta / (beta + d)}[setting]
        else:
            b = {"local": 2 * beta * (p - 1) / (2 * p * beta + d * (p - 1)),
                 "central": 2 * beta * (p - 1) / (p * beta + d * (p - 1)), "nonprivate": a,
                 "local_full": beta * (p - 1) / (p * beta + d * (p - 1))}[setting]
    return {"stat": float(a), "priv": float(b)}


def label_rates(task: str, setting: str, N, eps=np.inf, **kw) -> np.ndarray:
    """Theory curve of LABEL Table 1 at sample sizes ``N`` (constants 1, logs omitted).

    Args:
        task: ``"classification"`` or ``"regression"``.
        setting: ``"local"``, ``"central"`` or ``"nonprivate"`` (and the heavy-tailed variants).
        N: sample sizes.
        eps: the privacy parameter ε (``inf``: non-private).

    Returns:
        The rate at each ``N``.
    """
    e = label_rate_exponent(task, setting, **kw)
    N = np.asarray(N, dtype=np.float64)
    eps = float(eps)
    a, b = e["stat"], e["priv"]
    if setting == "nonprivate" or np.isinf(eps):
        return N ** -a
    if setting in ("local", "local_full"):
        if task == "heavy":
            return np.maximum((N * eps ** 2) ** -b, N ** -a)
        return (N * min(eps ** 2, 1.0)) ** -b
    return N ** -a + (eps * N) ** -b


def minimax_h0(setting: str, N, eps: float, beta: float, d: int = 1):
    """Lower-bound bandwidth of LABEL App. B/F (docs/algorithms/label-dp.md#lower-bounds): the bump width of the
    minimax-hard constructions.

    Args:
        setting: ``"local"`` gives ``(N(ε²∧1))^{-1/(2β+d)}``; any other value the central ``(εN)^{-1/(β+d)}``.
        N: the sample size(s), a number or an array.
        eps: the privacy level ε.
        beta: the smoothness β of the regression function.
        d: the feature dimension.

    Returns:
        ``h0``, float64 of the shape of ``N``.
    """
    N = np.asarray(N, dtype=np.float64)
    if setting == "local":
        return (N * min(eps ** 2, 1.0)) ** (-1.0 / (2 * beta + d))
    return (eps * N) ** (-1.0 / (beta + d))


def minimax_cells(N, eps: Mapping[str, float], betas: Sequence[float], d: int = 1) -> int:
    """Cells per axis that the narrowest minimax-hard bump of a grid needs: ``⌈1 / min h0⌉ + 1`` over the settings'
    lower-bound bandwidths :func:`minimax_h0` (LABEL App. B, F), at least 2.

    Args:
        N: the largest sample size of the grid (the narrowest bandwidth).
        eps: ``{setting: ε}``, the privacy level each setting runs at.
        betas: the smoothness values β of the grid.
        d: the feature dimension.

    Returns:
        The number of cells (and the quadrature's bins) per axis.
    """
    h0 = [float(minimax_h0(s, N, float(e), float(b), d)) for s, e in eps.items() for b in betas]
    return max(int(np.ceil(1.0 / min(h0 or [1.0]))) + 1, 2)


def slope_theory(task: str, method: str, p: float = 2.0, beta: float = 1.0, gamma: float = 1.0) -> dict:
    """The exponents LABEL Table 1 gives the slope in ``N`` of one learner's excess risk, as negative numbers.

    Args:
        task: ``"classification"``, ``"regression"``, ``"heavy"`` (β = γ = 1) or a minimax-hard bump task
            (``"bump_cls"``, ``"bump_reg"``; γ plays no role in regression).
        method: the learner (its setting: :func:`setting_of`).
        p: the heavy tail's moment order (``"heavy"`` only).
        beta, gamma: the bumps' smoothness and margin exponent.

    Returns:
        ``{"theory_stat": -a, "theory_priv": -b}`` (:func:`label_rate_exponent`); a smooth task adds ``beta`` and
        ``gamma`` (both 1), a bump task ``theory``, the slope its construction forces (:func:`bump_slope`).
    """
    s = setting_of(method)
    if task.startswith("bump"):
        e = label_rate_exponent("classification" if task == "bump_cls" else "regression", s, beta=beta,
                                gamma=gamma if task == "bump_cls" else 1.0)
        return {"theory_stat": -e["stat"], "theory_priv": -e["priv"], "theory": bump_slope(task, s, beta, gamma)}
    e = label_rate_exponent(task, s, p=p if task == "heavy" else 2.0)
    return {"beta": 1.0, "gamma": 1.0, "theory_stat": -e["stat"], "theory_priv": -e["priv"]}


def bump_slope(task: str, setting: str, beta: float, gamma: float, d: int = 1) -> float:
    """Slope in N of the minimax-hard excess at the bandwidth :func:`minimax_h0`: ``h0^{β(γ+1)}`` for
    ``task == "bump_cls"`` (classification), ``h0^{2β}`` for ``"bump_reg"`` (regression, γ plays no role).

    Args:
        task: ``"bump_cls"`` or ``"bump_reg"``.
        setting: ``"local"`` or ``"central"``.
        beta: the smoothness β.
        gamma: the margin exponent γ (classification only).
        d: the feature dimension.

    Returns:
        ``-β(γ+1)/(2β+d)`` local, ``-β(γ+1)/(β+d)`` central (classification); ``-2β/(2β+d)``, ``-2β/(β+d)``
        (regression).
    """
    e = label_rate_exponent("classification" if task == "bump_cls" else "regression", setting, beta=beta,
                            gamma=gamma if task == "bump_cls" else 1.0, d=d)
    return -e["priv"]


def setting_of(method: str) -> str:
    """The privacy setting of an estimator, from its name's prefix.

    Args:
        method: a method name (``local_*``, ``central_*`` or ``nonprivate_*``).

    Returns:
        ``"local"``, ``"central"`` or ``"nonprivate"``.
    """
    return "local" if method.startswith("local") else ("central" if method.startswith("central") else "nonprivate")


def central_crossover(task: str, eps: float, p: float = 2.0) -> dict:
    """The central rate's crossover ``N_c = ε^{-b/(b-a)}``: below it the privacy term ``(εN)^{-b}`` dominates the
    statistical term ``N^{-a}`` (LABEL Table 1).

    Args:
        task: ``"classification"``, ``"regression"`` or ``"heavy"``.
        eps: the privacy parameter ε.
        p: the heavy-tailed noise's moment order (``heavy``).

    Returns:
        ``{"a", "b", "N_crossover"}``: the two exponents and the crossover (NaN when ``b <= a``).
    """
    e = label_rate_exponent(task, "central", p=p)
    a, b = e["stat"], e["priv"]
    return dict(a=a, b=b, N_crossover=eps ** (-b / (b - a)) if b > a else float("nan"))


def central_crossovers(eps: Sequence[float], heavy_p: Sequence[float]) -> list[dict]:
    """:func:`central_crossover` of every task at every ε: classification and regression, then the heavy tail at
    each moment order.

    Args:
        eps: the privacy levels.
        heavy_p: the heavy tail's moment orders (the other tasks' rows carry ``p = 2``).

    Returns:
        One dict per (task, p, ε): ``task``, ``p``, ``eps``, ``a``, ``b``, ``N_crossover``.
    """
    return [dict(task=task, p=p, eps=e, **central_crossover(task, e, p))
            for task in TASKS for p in (heavy_p if task == "heavy" else [2.0]) for e in eps]


def smoothness_pairs(pairs: str) -> list[tuple[float, float]]:
    """The minimax-hard bumps' (β, γ) pairs written ``"BETA:GAMMA,..."`` (``;`` also separates): each pair one
    instance of LABEL App. B (classification, smoothness β and margin exponent γ) and App. F (regression, β only).

    Args:
        pairs: the pairs, e.g. ``"1:1,1:0.5,0.5:1"``.

    Returns:
        ``[(β, γ)]`` in the order written.

    Raises:
        ValueError: a part that is not ``BETA:GAMMA``, or a β or γ that is not finite and > 0.
    """
    out = []
    for part in (x for x in str(pairs).replace(";", ",").split(",") if x.strip()):
        try:
            b, g = (float(v) for v in part.split(":"))
        except ValueError:
            raise ValueError(f"pairs must be BETA:GAMMA, got {part!r}: not BETA:GAMMA") from None
        if not (np.isfinite(b) and np.isfinite(g) and b > 0 and g > 0):
            raise ValueError(f"pairs must be BETA:GAMMA, got {part!r}: BETA and GAMMA must be finite and > 0")
        out.append((b, g))
    return out


def smoothness_pairs_error(pairs: str) -> Optional[str]:
    """Why :func:`smoothness_pairs` refuses ``pairs`` (a configuration check that names the problem).

    Args:
        pairs: the pairs as written, e.g. ``"1:1,1:0.5"``.

    Returns:
        The refusal's text, or ``None`` where every pair is a ``BETA:GAMMA`` of finite positive numbers.
    """
    try:
        smoothness_pairs(pairs)
    except ValueError as e:
        return str(e)
    return None


def claimed_slope(task: str, setting: str, stat: float, priv: float, forced: float = math.nan) -> tuple[float, float]:
    """The slope in ``N`` that LABEL Table 1 claims for a learner's log excess risk, as an interval ``(lo, hi)``.

    Non-private: ``N^{−a}``, the slope ``−a``. Local: ``(N(ε²∧1))^{−b}`` at fixed ε (Thms 2, 6; heavy tails
    ``(Nε²)^{−b}``, Thm 10), the slope ``−b``. Central: ``N^{−a} + (εN)^{−b}`` (Thms 4, 8, 12), whose log-log slope
    over any range of ``N`` lies between ``−max(a, b)`` and ``−min(a, b)`` (``−b`` below the crossover
    :func:`central_crossover`, ``−a`` above it). A minimax-hard bump task (LABEL App. B, F): the slope its
    construction at the lower-bound bandwidth forces (:func:`bump_slope`).

    Args:
        task: a task of :data:`TASKS` or a bump task (``"bump_cls"``, ``"bump_reg"``).
        setting: ``"local"``, ``"central"`` or ``"nonprivate"`` (:func:`setting_of`).
        stat, priv: ``−a`` and ``−b``, the statistical and private exponents as slopes (:func:`slope_theory`).
        forced: a bump task's forced slope (:func:`slope_theory`'s ``theory``).

    Returns:
        ``(lo, hi)``: equal ends except for a central learner.

    Raises:
        ValueError: a ``setting`` other than ``"local"``, ``"central"`` or ``"nonprivate"``.
    """
    if setting not in ("local", "central", "nonprivate"):
        raise ValueError(f"setting must be one of local, central, nonprivate, got {setting!r}")
    if task.startswith("bump"):
        return float(forced), float(forced)
    one = {"nonprivate": stat, "local": priv}.get(setting)
    return (float(one), float(one)) if one is not None else (float(min(stat, priv)), float(max(stat, priv)))


def effective_sample_fit(fit: Mapping) -> dict:
    """A fitted slope of the log excess in ε at a fixed ``N``, read as the slope in the effective sample size ``Nε²``
    (LABEL Table 1, local setting: the rate ``(Nε²)^{−a}`` depends on ``N`` and ε ≤ 1 only through ``Nε²``, Thms 2, 6).

    Since ``log(Nε²) = log N + 2 log ε``, the slope in ``Nε²`` is half the slope in ε, over the square of ε's range
    (twice its decades).

    Args:
        fit: a fit row with ``slope``, ``slope_lo``, ``slope_hi``, ``x_min``, ``x_max`` (ε's range) and optionally
            ``theory`` (the claimed slope in ε); other fields are kept.

    Returns:
        The fit in ``Nε²``: the slopes (and ``theory``) halved, ``x_min`` and ``x_max`` squared.
    """
    half = ("slope", "slope_lo", "slope_hi") + (("theory",) if "theory" in fit else ())
    return dict(fit, **{k: fit[k] / 2 for k in half}, x_min=fit["x_min"] ** 2, x_max=fit["x_max"] ** 2)
