"""Candidate neighbouring inputs for an audit's input-pair search.

A privacy violation shows only on the right pair of neighbouring inputs. Two generators of
candidate families, both returning ``{label: (x0, x1)}`` for :func:`jaxdp.privacy.audit.audit_learned`
(or :func:`jaxdp.privacy.audit.audit_mechanism`):

* :func:`pattern_pairs` — the input patterns of StatDP (Ding, Wang, Wang, Zhang, Kifer,
  "Detecting Violations of Differential Privacy", CCS 2018), also used by DP-Sniper's DD-Search
  (Bichsel et al., IEEE S&P 2021): around the base vector ``1^d``, *one above* (``0 1^{d-1}``),
  *one below* (``2 1^{d-1}``) and, when every coordinate may move (``componentwise=True``, the
  ℓ∞ neighbourhood of sensitivity-1 query vectors), *one above rest below*, *one below rest above*,
  *half-half*, *all above*, *all below* and the *X shape* ``1^{d/2} 0^{d/2}`` vs ``0^{d/2} 1^{d/2}``.
  The learned auditor tests both directions of each pair, so swapped copies are not listed.
* :func:`loss_flip_pairs` — for online learners (replace-one neighbouring loss sequences): the
  loss of one round flipped between two vectors (``e_j`` vs ``e_k``, ``0`` vs ``1``, ...) on a few
  base sequences, e.g. after expert 1 has taken loss, where a later change is most visible.

The search over a family is paid for in the auditor, never here: the pair and event are chosen
on training and selection runs, and the final bound uses fresh runs with the family-wise error α
split (Bonferroni) over the candidates that are evaluated.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ...core.validation import check_positive_int

__all__ = ["pattern_pairs", "loss_flip_pairs", "PATTERNS"]

PATTERNS = ("one above", "one below", "one above rest below", "one below rest above", "half half", "all above",
            "all below", "x shape")


def pattern_pairs(d: int, *, componentwise: bool = True, dtype=np.float32, lo: Optional[float] = None,
                  hi: Optional[float] = None, scalar: bool = False) -> dict:
    """StatDP/DP-Sniper input patterns for a mechanism on length-``d`` query vectors (sensitivity 1).

    Args:
        d: the length of the query vectors.
        componentwise: all eight patterns; ``False``: only *one above* and *one below* (neighbours differ in one entry,
            e.g. a histogram or a single query).
        dtype: the dtype of the inputs.
        lo, hi: clip every entry to the input domain (``None``: no bound).
        scalar: ``d = 1`` inputs as 0-d arrays.

    Returns:
        ``{label: (x0, x1)}`` of NumPy arrays. Duplicate pairs (possible for small ``d``) are dropped.
    """
    d = check_positive_int("d", d)
    h = d // 2
    pats = {
        "one above": ([1] * d, [0] + [1] * (d - 1)),
        "one below": ([1] * d, [2] + [1] * (d - 1)),
    }
    if componentwise:
        pats.update({
            "one above rest below": ([1] * d, [2] + [0] * (d - 1)),
            "one below rest above": ([1] * d, [0] + [2] * (d - 1)),
            "half half": ([1] * d, [2] * h + [0] * (d - h)),
            "all above": ([1] * d, [2] * d),
            "all below": ([1] * d, [0] * d),
            "x shape": ([1] * h + [0] * (d - h), [0] * h + [1] * (d - h)),
        })
    out, seen = {}, set()
    for label, (a_list, b_list) in pats.items():
        a, b = np.asarray(a_list, float), np.asarray(b_list, float)
        if lo is not None or hi is not None:
            a = np.clip(a, lo, hi)
            b = np.clip(b, lo, hi)
        if np.array_equal(a, b):
            continue
        sig = frozenset((a.tobytes(), b.tobytes()))
        if sig in seen:
            continue
        seen.add(sig)
        a, b = a.astype(dtype), b.astype(dtype)
        if scalar and d == 1:
            a, b = a.reshape(()), b.reshape(())
        out[f"{label}: {_fmt(a)} vs {_fmt(b)}"] = (a, b)
    return out


def _fmt(v) -> str:
    v = np.ravel(v)
    parts, i = [], 0
    while i < v.size:
        j = i
        while j + 1 < v.size and v[j + 1] == v[i]:
            j += 1
        parts.append(f"{v[i]:g}" + (f"x{j - i + 1}" if j > i else ""))
        i = j + 1
    return "[" + " ".join(parts) + "]"


def loss_flip_pairs(T: int, d: int, *, rounds: Optional[Sequence[int]] = None, bases: Optional[dict] = None,
                    flips: Optional[Sequence[tuple]] = None) -> dict:
    """Replace-one neighbouring loss sequences: round ``t``'s loss flipped between two vectors.

    Args:
        T: the horizon.
        d: the dimension of a loss vector.
        rounds: the flipped rounds (0-indexed; default every round).
        bases: ``{name: (T, d) array}`` (default: all zeros; and, for every flipped round but the first, expert 1 losing
            in the rounds before the flipped one).
        flips: pairs of loss vectors (default ``e_1`` vs ``e_2``, ``0`` vs ``e_1``, ``0`` vs ``1``).

    Returns:
        ``{label: (x0, x1)}`` with float32 ``(T, d)`` arrays.

    Raises:
        ValueError: a round outside ``[0, T)`` or a base of the wrong shape.
    """
    T = check_positive_int("T", T)
    d = check_positive_int("d", d)
    eye = np.eye(d, dtype=np.float32)
    zero, one = np.zeros(d, np.float32), np.ones(d, np.float32)
    if flips is None:
        flips = [(eye[0], eye[1] if d > 1 else zero), (zero, eye[0]), (zero, one)]
    rounds = list(range(T)) if rounds is None else list(rounds)
    for t in rounds:
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not 0 <= t < T:
            raise ValueError(f"rounds must be integers in [0, {T}), got {t!r}")
    out = {}
    for t in rounds:
        bs = dict(bases) if bases is not None else {"0": np.zeros((T, d), np.float32)}
        if bases is None and t >= 1:
            b = np.zeros((T, d), np.float32)
            b[:t] = eye[0]
            bs[f"e1 before l{t + 1}"] = b
        for bname, base in bs.items():
            base = np.asarray(base, np.float32)
            if base.shape != (T, d):
                raise ValueError(f"a base must have shape (T, d) = {(T, d)}, got {base.shape}")
            for u, v in flips:
                u, v = np.asarray(u, np.float32), np.asarray(v, np.float32)
                if np.array_equal(u, v):
                    continue
                x0, x1 = base.copy(), base.copy()
                x0[t], x1[t] = u, v
                if np.array_equal(x0, x1):
                    continue
                out[f"base {bname}, l{t + 1}: {_vec(u)} vs {_vec(v)}"] = (x0, x1)
    return out


def _vec(v) -> str:
    if not v.any():
        return "0"
    if np.all(v == 1):
        return "1"
    if np.count_nonzero(v) == 1 and v.max() == 1:
        return f"e{int(np.argmax(v)) + 1}"
    return "(" + ",".join(f"{a:g}" for a in v) + ")"
