"""DP-Sniper's published bounds and the suite's table next to them (re-exported by :mod:`benchmarks.harness.dpsniper`)."""
from __future__ import annotations

import math


#: DP-Sniper's published lower bounds (logistic-regression attack, confidence 0.9, 2·10⁸ fresh runs per input
#: after a search training on 1.07·10⁷ per input): Bichsel et al., IEEE S&P 2021, results of its public artifact.
#: name -> (ε_lcb, input pair found, search seconds, final-estimate seconds) on the authors' multi-core machine.
REFERENCE = {
    "laplace": (0.0968, "[1] vs [2]", 19.6, 1.9),
    "truncated-geometric": (0.1156, "[2] vs [1]", 17.9, 1.5),
    "noisy-hist-1": (0.0978, "[0 1 1 1 1] vs [1 1 1 1 1]", 34.8, 2.9),
    "noisy-hist-2": (4.6020, "[0 1 1 1 1] vs [1 1 1 1 1]", 37.8, 2.8),
    "report-noisy-max-1": (0.0923, "[1 1 1 1 1] vs [0 2 2 2 2]", 58.8, 3.0),
    "report-noisy-max-2": (0.0975, "[1 1 1 1 1] vs [0 2 2 2 2]", 55.7, 2.7),
    "report-noisy-max-3": (0.2478, "[0 0 0 0 0] vs [1 1 1 1 1]", 59.4, 3.0),
    "report-noisy-max-4": (0.3463, "[1 1 1 1 1] vs [2 2 2 2 2]", 59.8, 3.1),
    "svt-1": (0.0858, "[0x5 1x5] vs [1x5 0x5]", 118.0, 8.0),
    "svt-2": (0.0859, "[0x5 1x5] vs [1x5 0x5]", 148.1, 11.8),
    "svt-3": (0.1716, "[1x10] vs [2x5 0x5]", 149.8, 10.5),
    "svt-4": (0.1687, "[1x10] vs [2x5 0x5]", 122.7, 7.8),
    "svt-5": (1.7612, "[2x5 0x5] vs [1x10]", 56.3, 2.6),
    "svt-6": (0.2720, "[1x5 0x5] vs [0x5 1x5]", 90.7, 4.8),
    "numerical-svt": (0.0343, "[2x10] vs [1x10]", 142.2, 9.5),
    "rappor": (0.2930, "[1] vs [0]", 130.6, 14.2),
    "one-time-rappor": (0.5978, "[1] vs [0]", 79.9, 9.2),
    "laplace-parallel": (0.0350, "[1] vs [0]", 96.5, 8.0),
    "svt34-parallel": (0.2610, "[1x10] vs [2x5 0x5]", 341.3, 22.7),
    "prefix-sum": (0.5040, "[1x10] vs [0x10]", 92.1, 4.8),
}


def _fmt_eps(e: float) -> str:
    return "∞ (not DP)" if math.isinf(e) else f"{e:.4g}"


def suite_markdown(rows: list) -> str:
    """The suite's table: ours next to DP-Sniper's published bound, with the exact ε where known.

    Args:
        rows: the rows of :func:`run_suite` (or saved copies of them).

    Returns:
        A Markdown table, one line per row after the header, with the ratio of our bound to DP-Sniper's.
    """
    out = ["| mechanism | exact ε | 0.1-DP? | DP-Sniper ε_lcb | ours ε_lower | ours / DP-Sniper | verdict at ε = 0.1 |"
           " our pair (of the candidates) | runs per input: train / select (+ refine) / fresh | wall s |",
           "|---|---:|---|---:|---:|---:|---|---|---|---:|"]
    for r in rows:
        ref = REFERENCE.get(r["name"], (float("nan"), "", float("nan"), float("nan")))[0]
        ratio = r["eps_lower"] / ref if ref and ref == ref else float("nan")
        out.append(f"| {r['name']} | {_fmt_eps(r['true_eps'])} | {'no' if r['broken'] else 'yes'} | {ref:.4f} | "
                   f"{r['eps_lower']:.4f} | {ratio:.2f} | {'VIOLATION' if r['violation'] else 'consistent'} | "
                   f"{r['pair']} (of {r['n_pairs']}) | {r['n_train']:,} / {r['n_select']:,}"
                   f"{' (+ ' + format(r['n_refine'], ',') + ')' if r.get('n_refine') else ''} / {r['n_eval']:,} | "
                   f"{r['seconds']:.1f} |")
    return "\n".join(out)
