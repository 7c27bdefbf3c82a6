"""Pieces the study modules share: their configuration checks and their generated docs pages.

Each study module with a results page keeps that page at ``docs/results/<study>.md`` and its kept run at
``results/<study>`` (:func:`page_paths`); the generated blocks open with :func:`generated_from`. Fits over the
upper half of a grid name that half with :func:`upper_half`, the one ``fit_slopes`` fits.
"""
from __future__ import annotations

import pathlib
from typing import Any, Callable, Iterable, Sequence

import numpy as np

#: the repository root (the folder holding ``docs`` and ``results``)
ROOT = pathlib.Path(__file__).resolve().parents[2]


def page_paths(study: str) -> tuple[pathlib.Path, pathlib.Path]:
    """The docs page and the kept-results directory of a study.

    Args:
        study: the study's name (``"lazy-batching"``).

    Returns:
        ``(ROOT/docs/results/<study>.md, ROOT/results/<study>)``.
    """
    return ROOT / "docs" / "results" / f"{study}.md", ROOT / "results" / study


def check_each(values: Iterable[Any], ok: Callable[[Any], bool], message: str) -> None:
    """Refuse the first of ``values`` that ``ok`` rejects.

    Args:
        values: the values of one configuration entry.
        ok: the test one value must pass.
        message: the error, with ``{!r}`` where the rejected value goes.

    Raises:
        ValueError: ``message`` with the first rejected value.
    """
    for v in values:
        if not ok(v):
            raise ValueError(message.format(v))


def generated_from(module: str, *files: str) -> str:
    """The opening sentence of a generated block: the kept files it is made from and the function that writes it.

    Args:
        module: the study module (``"lazy_batching"``), whose ``publish`` writes the block.
        *files: the files, as the block names them (``"results/lazy-batching/results.csv"``).

    Returns:
        ``*Generated from `<file>` [and `<file>` ...] by `jaxdp.studies.<module>.publish`; do not edit by hand.*``
    """
    return (f"*Generated from {' and '.join(f'`{f}`' for f in files)} by `jaxdp.studies.{module}.publish`; "
            "do not edit by hand.*")


def upper_half(xs: Sequence) -> Sequence:
    """The part of a sorted grid that ``fit_slopes(..., upper_half=True)`` fits.

    Args:
        xs: the sorted grid.

    Returns:
        Its upper half (from the middle value on) when it has at least 4 values, else the whole grid.
    """
    return xs[(len(xs) - 1) // 2:] if len(xs) >= 4 else xs


def equal_expected_regret(df, a: str, b: str, by: Sequence[str], tol: float) -> set:
    """The groups where learners ``a`` and ``b`` have the same expected regret at every seed and ``T``.

    Args:
        df: the per-seed results (``learner``, ``T``, ``seed``, ``expected_regret`` and the ``by`` columns).
        a, b: the two learners; the difference is taken relative to ``b``'s expected regret (at least 1).
        by: the columns that name a group.
        tol: the largest relative difference that counts as the same.

    Returns:
        The set of ``by`` tuples whose largest relative difference is below ``tol``.
    """
    k = [*by, "T", "seed"]
    x = df[df["learner"] == a].set_index(k)["expected_regret"]
    y = df[df["learner"] == b].set_index(k)["expected_regret"]
    both = x.index.intersection(y.index)
    rel = ((x[both] - y[both]).abs() / np.maximum(1.0, y[both].abs())).groupby(level=list(range(len(by)))).max()
    return {key for key, v in rel.items() if v < tol}
