"""Stored optimised coefficients and mechanisms by name.

``_coefficients.py`` holds BLT and banded coefficients optimised offline by
``python -m jaxdp.privacy.mechanisms.matrix_factorization.precompute`` (the same :func:`optimize_blt` /
:func:`optimize_banded`, more iterations and restarts than a test can afford). :func:`get_mechanism`
returns the stored mechanism for a horizon when there is one and otherwise optimises (cached per
process).
"""
from __future__ import annotations

import functools
import math
from typing import Optional

from ....core.validation import check_choice, check_positive_int
from .base import ContinualCounter
from .optimize import OBJECTIVES, optimize_banded, optimize_blt
from .toeplitz import BLT, BandedToeplitz, SqrtToeplitz
from .trees import BinaryTree, HonakerTree

__all__ = ["stored_blt", "stored_banded", "get_mechanism", "resolve_noise", "MECHANISMS", "default_buffers"]

#: names accepted by :func:`get_mechanism`
MECHANISMS = ("tree", "honaker", "sqrt_toeplitz", "banded", "blt")


def _table() -> dict:
    from ._coefficients import TABLE

    return TABLE


def stored_blt(n: int, buffers: int, objective: str = "max") -> Optional[BLT]:
    """The stored BLT optimised for ``n`` rounds with ``buffers`` buffers, or ``None``.

    Args:
        n: the number of rounds.
        buffers: the number of buffers.
        objective: the objective it was optimised for (``"max"``; the table holds max-error BLTs).

    Returns:
        The :class:`BLT` from the precomputed table, or ``None`` if that entry is not stored.
    """
    v = _table().get(("blt", int(n), int(buffers), objective))
    return None if v is None else BLT(theta=tuple(v[0]), omega=tuple(v[1]))


def stored_banded(n: int, bands: int, objective: str = "mean") -> Optional[BandedToeplitz]:
    """The stored banded Toeplitz optimised for ``n`` rounds with ``bands`` bands, or ``None``.

    Args:
        n: the number of rounds.
        bands: the number of bands.
        objective: the objective it was optimised for (``"mean"``; the table holds mean-squared-error ones).

    Returns:
        The :class:`BandedToeplitz` from the precomputed table, or ``None`` if that entry is not stored.
    """
    v = _table().get(("banded", int(n), int(bands), objective))
    return None if v is None else BandedToeplitz(coeffs=tuple(v))


def default_buffers(n: int) -> int:
    """Buffers of the default BLT for ``n`` rounds: ``max(2, ceil(log10 n))`` (3 at ``10^3``, 4 at ``10^4``).

    Args:
        n: the number of rounds.

    Returns:
        The number of buffers, at least 2.
    """
    return max(2, int(math.ceil(math.log10(max(int(n), 2)) - 1e-9)))


@functools.lru_cache(maxsize=64)
def _optimised(kind: str, n: int, size: int, objective: str) -> ContinualCounter:
    if kind == "blt":
        return stored_blt(n, size, objective) or optimize_blt(n, size, objective)
    return stored_banded(n, size, objective) or optimize_banded(n, size, objective)


def get_mechanism(name: str, n: Optional[int] = None, *, buffers: Optional[int] = None, bands: int = 16,
                  objective: Optional[str] = None) -> ContinualCounter:
    """A mechanism by name (:data:`MECHANISMS`); ``banded`` and ``blt`` are optimised for ``n`` rounds (stored
    coefficients when available). ``buffers`` defaults to :func:`default_buffers` ``(n)``; ``objective`` to
    ``"max"`` for BLT and ``"mean"`` for banded.

    Optimised mechanisms are cached per process (one optimisation per ``(kind, n, size, objective)``).

    Args:
        name: ``"tree"``, ``"honaker"``, ``"sqrt_toeplitz"``, ``"banded"`` or ``"blt"``.
        n: the number of rounds (``>= 2``); required for ``banded`` and ``blt``, ignored otherwise.
        buffers: the BLT's number of buffers.
        bands: the banded factorization's number of bands.
        objective: ``"max"`` or ``"mean"``, the error the factorization minimises.

    Returns:
        The :class:`ContinualCounter`.

    Raises:
        ValueError: unknown name or objective, or ``n`` missing for an optimised mechanism.
    """
    check_choice("mechanism", name, list(MECHANISMS))
    if name == "tree":
        return BinaryTree()
    if name == "honaker":
        return HonakerTree()
    if name == "sqrt_toeplitz":
        return SqrtToeplitz()
    if n is None:
        raise ValueError(f"mechanism {name!r} is optimised for a horizon: pass n (the number of rounds)")
    n = check_positive_int("n", n, minimum=2)
    if name == "blt":
        objective = objective or "max"
        check_choice("objective", objective, list(OBJECTIVES))
        return _optimised("blt", n, check_positive_int("buffers", buffers or default_buffers(n)), objective)
    objective = objective or "mean"
    check_choice("objective", objective, list(OBJECTIVES))
    return _optimised("banded", n, check_positive_int("bands", bands), objective)


def resolve_noise(noise, n: Optional[int] = None) -> Optional[ContinualCounter]:
    """A learner's ``noise=`` argument as a mechanism, or ``None`` for the binary tree (the learners' own
    tree code path): ``None``, ``"tree"`` and :class:`BinaryTree` give ``None``; a name of :data:`MECHANISMS`
    is built by :func:`get_mechanism` ``(name, n)``; a :class:`ContinualCounter` is returned as is.

    Args:
        noise: ``None``, a mechanism name, or a :class:`ContinualCounter`.
        n: the horizon, for the mechanisms optimised per horizon.

    Returns:
        The mechanism, or ``None`` (the binary tree).

    Raises:
        TypeError: ``noise`` is of another type.
    """
    if noise is None or isinstance(noise, BinaryTree) or noise == "tree":
        return None
    if isinstance(noise, ContinualCounter):
        return noise
    if isinstance(noise, str):
        return get_mechanism(noise, n)
    raise TypeError(f"noise must be None, a mechanism name in {list(MECHANISMS)} or a jaxdp.privacy.mechanisms."
                    f"matrix_factorization.ContinualCounter, got {type(noise).__name__}: {noise!r}")
