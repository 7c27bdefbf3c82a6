"""Matrix-factorization mechanisms for continual counting (docs/algorithms/matrix-factorization.md).

One interface (:class:`ContinualCounter`) for the binary tree, Honaker's variance-reduced tree, the
square-root Toeplitz factorization, banded Toeplitz and buffered linear Toeplitz (BLT) factorizations:
a streaming noise generator (``init``, ``step`` over a carried state), the factorization's
sensitivity, the noise scale for a noise multiplier, the ledger event of the whole stream and the
per-query errors, each computed by the mechanism itself.

References: Kairouz et al. 2021 (tree aggregation for DP-FTRL); Honaker 2015; Denisov et al. 2022
(matrix factorization for single participation); Fichtenberger, Henzinger & Upadhyay 2023 (square
root); McKenna et al. 2024 (banded); Dvijotham et al. 2024 (BLT, "Efficient and near-optimal noise
generation for streaming differential privacy").
"""
from .base import (
    NOISE_KINDS, ContinualCounter, CounterState, PrefixState, counter_init, counter_step, impulse_np, prefix_matrix,
    toeplitz_lower,
)
from .optimize import OBJECTIVES, banded_loss, blt_loss, optimize_banded, optimize_blt
from .stored import (
    MECHANISMS, default_buffers, get_mechanism, optimize_blt_multistart, resolve_noise, stored_banded, stored_blt,
)
from .toeplitz import (
    BLT, BandedToeplitz, SqrtToeplitz, ToeplitzCounter, inverse_series, sqrt_coefficients, sqrt_toeplitz_form,
)
from .trees import BinaryTree, HonakerTree, honaker_variances

__all__ = [
    "ContinualCounter", "CounterState", "PrefixState", "counter_init", "counter_step", "NOISE_KINDS",
    "prefix_matrix", "toeplitz_lower", "impulse_np",
    "BinaryTree", "HonakerTree", "honaker_variances",
    "ToeplitzCounter", "SqrtToeplitz", "BandedToeplitz", "BLT", "sqrt_coefficients", "inverse_series", "sqrt_toeplitz_form",
    "optimize_blt", "optimize_blt_multistart", "optimize_banded", "blt_loss", "banded_loss", "OBJECTIVES",
    "stored_blt", "stored_banded", "get_mechanism", "resolve_noise", "default_buffers", "MECHANISMS",
]
