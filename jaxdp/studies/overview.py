"""One table over every kept study: seeds per point and how its verdicts split (docs/results/index.md).

Each study page carries generated verdict tables (``holds`` / ``holds by construction`` /
``consistent, unresolved`` / ``misses`` /
``not tested``; :func:`jaxdp.studies.analysis.verdict_table` and the studies' own comparison tables). This module
counts the rows of every table with a ``verdict`` column inside the generated blocks of a page, reads the seeds per
point from the kept run's ``manifest.json`` and writes the overview as a generated block of the results index, so a
study's misses are visible next to its holds at a glance. It reads files only.
"""
from __future__ import annotations

import json
import pathlib
import re

from .specs import ROOT
from .analysis import markdown_table, write_generated

__all__ = ["verdict_counts", "overview_table", "publish_overview", "INDEX_PAGE", "OVERVIEW_BLOCK"]

INDEX_PAGE = ROOT / "docs" / "results" / "index.md"
OVERVIEW_BLOCK = "results overview"
#: verdict classes in the order shown; a cell is classified by its leading words (markup stripped)
CLASSES = ("holds by construction", "holds", "consistent, unresolved", "misses", "not tested")
_BLOCK = re.compile(r"<!-- BEGIN GENERATED: (.+?) -->(.*?)<!-- END GENERATED: \1 -->", re.S)


def _cells(line: str) -> list:
    return [c.strip() for c in line.strip().strip("|").split(" | ")]


def _verdict_class(cell: str) -> str:
    text = cell.replace("**", "").strip()
    for c in CLASSES:
        if text == c or text.startswith(c + ":") or text.startswith(c + " ") or text.startswith(c + "("):
            return c
    raise ValueError(f"verdict cell {cell[:60]!r} does not start with one of {CLASSES}")


def verdict_counts(page) -> dict:
    """How the verdict rows of a page's generated tables split.

    Every Markdown table inside a ``<!-- BEGIN GENERATED: … -->`` block whose header has a column named
    ``verdict`` is read; each of its rows is classified by the leading words of that column.

    Args:
        page: the Markdown page.

    Returns:
        ``{"rows": n, "holds": …, "holds by construction": …, "consistent, unresolved": …, "misses": …,
        "not tested": …}``.

    Raises:
        ValueError: a verdict cell that starts with none of the four classes.
    """
    text = pathlib.Path(page).read_text(encoding="utf-8")
    out = dict.fromkeys(CLASSES, 0)
    for _, body in _BLOCK.findall(text):
        col = None
        for line in body.splitlines():
            if not line.startswith("|"):
                col = None
                continue
            cells = _cells(line)
            if col is None:
                col = cells.index("verdict") if "verdict" in cells else -1
                continue
            if col < 0 or line.startswith("|---") or len(cells) <= col:
                continue
            out[_verdict_class(cells[col])] += 1
    out["rows"] = sum(out[c] for c in CLASSES)
    return out


def overview_table(root=None) -> str:
    """The overview: one row per kept study with a docs page (seeds per point, verdict rows and their split).

    Args:
        root: the repository root (default: this checkout's).

    Returns:
        The Markdown of the generated block.
    """
    root = pathlib.Path(root) if root is not None else ROOT
    rows, elsewhere = [], []
    for d in sorted(p for p in (root / "results").iterdir() if (p / "manifest.json").exists()):
        if json.loads((d / "manifest.json").read_text())["study"] == "compare":
            continue   # a kept `jaxdp compare` run: its page is a leaderboard, not a study's
        page = root / "docs" / "results" / f"{d.name}.md"
        if not page.exists():
            elsewhere.append(f"`{d.name}`")
            continue
        seeds = json.loads((d / "manifest.json").read_text())["seeds"]
        c = verdict_counts(page)
        rows.append([f"[`{d.name}`]({d.name}.md)", seeds, c["rows"], *(c[k] for k in CLASSES)])
    head = ("*Generated from the kept runs' `manifest.json` and the verdict tables of each page by "
            "`jaxdp.studies.overview.publish_overview`; do not edit by hand.* Verdict rows count every row of the "
            "generated tables with a verdict column on the study's page (fitted slopes, seed-paired comparisons, "
            "predicted counts); a miss is explained on its page.\n\n")
    tail = (f"\n\nKept runs without a page of their own (their tables are on a sibling study's page): "
            f"{', '.join(elsewhere)}." if elsewhere else "")
    return head + markdown_table(["study", "seeds per point", "verdict rows", *CLASSES], rows) + tail


def publish_overview(root=None) -> bool:
    """Rewrite the overview block of ``docs/results/index.md``.

    Args:
        root: the repository root (default: this checkout's).

    Returns:
        Whether the block changed.
    """
    root = pathlib.Path(root) if root is not None else ROOT
    return write_generated(root / "docs" / "results" / "index.md", OVERVIEW_BLOCK, overview_table(root))
