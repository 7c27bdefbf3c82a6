"""``figure1_exponents``: the regret exponents of LAZY Figure 1 and the corrected curves (docs/algorithms/lazy.md#figure-1).

With ``eps = T^{-alpha}`` and regret ``T^{beta}`` (logs ignored, every curve
capped at ``beta <= 1``). Panels ``"a"`` (DP-OCO, d = log T), ``"b"`` (DP-OCO,
d = T^{1/3}), ``"c"`` (DP-OPE, d = T) and ``"c'"`` (corrections of spec
LAZY Thm 3.2, Prop. 3.3, Thm 3.10; docs/algorithms/lazy.md#batching-term, #l2p-mw, not in the paper).
"""
from __future__ import annotations

import numpy as np

from ..core.validation import check_choice

__all__ = ["figure1_exponents", "FIGURE1_PANELS"]

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
