"""Every reference in the repository points inside it (issue 14).

Code comments and docstrings cite a paper by its short name and theorem ("Lazy private online
learning, Thm 3.2" or "LAZY Thm 3.2") and the documentation page that explains it
(``docs/algorithms/lazy.md#privacy-ledger``). They must never point at material that is not in the
repository: the working notes the algorithms were specified from, the extracted paper texts, or
their section numbers. This test fails on any occurrence of

* ``shared/`` (a path outside the repository),
* ``spec §…``, ``spec section``, ``spec 5.4``, ``spec Z1``, ``the spec``, ``ALGORITHMS.md`` (section
  references into the specification),
* the file names of the extracted paper texts (``lazy-private-online-learning-v2.txt``, …, with or
  without the extension, and the numbered ``000_<hash>.txt`` form),
* ``DESIGN.md`` / ``STYLE.md`` (design notes that are not in the repository),

in ``jaxdp/``, ``README.md``, ``NOTES.md``, ``notebooks/`` and ``docs/``; and on any
``docs/<page>.md#<anchor>`` reference in those files whose page or anchor does not exist.
Each check is paired with a case showing that it flags a bad line. Runs in well under a second.
"""
from __future__ import annotations

import json
import pathlib
import re
import unicodedata

import pytest

from _helpers import ROOT

SEED_STEMS = (
    "lazy-private-online-learning",
    "realizable-private-online-optimization",
    "growth-conditions-private-optimization",
    "label-dp-theoretical-limits",
)
FORBIDDEN = [
    ("path outside the repository", re.compile(r"(?<![\w.-])(?:\.\./)*shared/")),
    ("specification section", re.compile(
        r"\bspec(?:ification)?\s*(?:§|sections?\b|sec\.|\d+(?:\.\d+)?\b|[ZRGL]\d\b|ALGORITHMS\b|\(§)", re.I)),
    ("specification section", re.compile(r"\bthe spec\b", re.I)),
    ("specification file", re.compile(r"ALGORITHMS\.md")),
    ("design notes outside the repository", re.compile(r"\b(?:DESIGN|STYLE)\.md\b")),
    ("paper text file", re.compile(r"\b\d{3}_[0-9a-f]{16}\.txt\b")),
    ("paper text file", re.compile("|".join(re.escape(s) for s in SEED_STEMS))),
]
DOC_REF = re.compile(r"docs/((?:[\w-]+/)*[\w.-]+\.md)(?:#([\w-]+))?")

SCAN_EXT = {".py", ".md", ".ipynb", ".txt", ".yml", ".yaml", ".toml", ".cfg", ".json", ".js", ".css", ".html"}


def _files() -> list[pathlib.Path]:
    out = [ROOT / "README.md", ROOT / "NOTES.md"]
    for top in ("jaxdp", "notebooks", "docs"):
        base = ROOT / top
        if not base.is_dir():
            continue
        for p in sorted(base.rglob("*")):
            if p.is_symlink() and p.is_dir():
                continue
            rel = p.relative_to(ROOT).parts
            if "__pycache__" in rel or ".ipynb_checkpoints" in rel or any(s.endswith(".egg-info") for s in rel):
                continue
            if top == "docs" and len(rel) > 1 and rel[1] == "notebooks":   # a link to notebooks/, scanned there
                continue
            if p.is_file() and p.suffix in SCAN_EXT:
                out.append(p)
    return [p for p in out if p.is_file()]


def _lines(path: pathlib.Path):
    """(location, line) pairs; a notebook yields its cells' source and its stored text outputs."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        try:
            nb = json.loads(text)
        except ValueError:
            for i, line in enumerate(text.splitlines(), 1):
                yield i, line
            return
        for i, cell in enumerate(nb.get("cells", [])):
            chunks = [("source", cell.get("source", ""))]
            for out in cell.get("outputs", []):
                chunks.append(("output", out.get("text", "")))
                for mime, data in (out.get("data") or {}).items():
                    if mime.startswith("text/"):
                        chunks.append(("output", data))
            for what, src in chunks:
                src = "".join(src) if isinstance(src, list) else str(src)
                for j, line in enumerate(src.splitlines(), 1):
                    yield f"cell {i} {what} line {j}", line
        return
    for i, line in enumerate(text.splitlines(), 1):
        yield i, line


def offending(line: str) -> list[str]:
    """The kinds of out-of-repository reference found in one line."""
    return [what for what, rx in FORBIDDEN if rx.search(line)]


def test_forbidden_patterns_are_caught():
    bad = [
        "Source: ``shared/seeds/lazy-private-online-learning-v2.txt`` Thm 3.2",
        "see the papers in ../shared/seeds/",
        "(LAZY Thm 3.10; spec §4.5)",
        "as in spec section 4.4",
        "REAL Alg. 4 (concretized, spec 5.4)",
        "claims R1-R6 (spec 9.2)",
        "(spec Z1, Z2, Z6)",
        "CORRECTED where the spec says so",
        "Spec ALGORITHMS.md §6",
        "reference = 'realizable-private-online-optimization.txt Thm 1'",
        "LABEL = seed ``label-dp-theoretical-limits.txt``",
        "000_4e42754a0608c609.txt",
        "Knows nothing about any paper (DESIGN.md layer 1)",
    ]
    for line in bad:
        assert offending(line), line
    good = [
        "Lazy private online learning, Thm 3.2; docs/algorithms/lazy.md#privacy-ledger",
        "spec = json.dumps(points)",
        "mod = importlib.util.module_from_spec(spec)",
        "sharding = NamedSharding(mesh, P('seeds'))  # partition spec",
        "load a ``.csv`` or ``.txt`` file",
        "REAL §4.1 (a section of the paper itself)",
        "inspect.signature(fn)",
        "label-dp-rates",
    ]
    for line in good:
        assert not offending(line), (line, offending(line))


def test_no_reference_outside_the_repository():
    hits = []
    for path in _files():
        if path == pathlib.Path(__file__).resolve():
            continue
        for where, line in _lines(path):
            for what in offending(line):
                hits.append(f"{path.relative_to(ROOT)}:{where}: {what}: {line.strip()[:160]}")
    assert not hits, f"{len(hits)} reference(s) outside the repository:\n" + "\n".join(hits[:200])


# ---------------------------------------------------------------------------------------------- anchors


def _slugify(text: str) -> str:
    """mkdocs' default heading id (Python-Markdown ``toc.slugify``)."""
    try:
        from markdown.extensions.toc import slugify
        return slugify(text, "-")
    except ImportError:  # pragma: no cover - markdown comes with the docs/test extras
        value = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
        value = re.sub(r"[^\w\s-]", "", value).strip().lower()
        return re.sub(r"[-\s]+", "-", value)


_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$")
_ATTR_ID = re.compile(r"\{[^}]*#([\w-]+)[^}]*\}\s*$")
_HTML_ID = re.compile(r"""\b(?:id|name)\s*=\s*["']([\w-]+)["']""")


def anchors(page: pathlib.Path) -> set[str]:
    """Ids a Markdown page defines: ``{#id}`` attributes, heading slugs and HTML ``id=``."""
    out: set[str] = set()
    fence = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        if fence:
            continue
        out.update(_HTML_ID.findall(line))
        m = _HEADING.match(line)
        if m:
            title = m.group(1)
            a = _ATTR_ID.search(title)
            if a:
                out.add(a.group(1))
                title = title[:a.start()]
            out.add(_slugify(re.sub(r"[`*_]", "", title).strip()))
        else:
            a = _ATTR_ID.search(line)
            if a:
                out.add(a.group(1))
    return out


def test_anchor_parser_finds_ids(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# Title {#top}\n\n## The batching term\n\n* item <a id='x-y'></a> text\n"
                    "```text\n# not a heading\n```\n")
    a = anchors(page)
    assert {"top", "the-batching-term", "x-y"} <= a and "not-a-heading" not in a


def test_docs_references_resolve():
    docs = ROOT / "docs"
    if not docs.is_dir():
        pytest.skip("no docs/ directory")
    cache: dict[pathlib.Path, set[str]] = {}
    bad = []
    for path in _files():
        if path.suffix not in (".py", ".md", ".ipynb"):
            continue
        for where, line in _lines(path):
            for m in DOC_REF.finditer(line):
                page = docs / m.group(1)
                if not page.is_file():
                    bad.append(f"{path.relative_to(ROOT)}:{where}: docs/{m.group(1)} does not exist")
                    continue
                if m.group(2):
                    ids = cache.setdefault(page, anchors(page))
                    if m.group(2) not in ids:
                        bad.append(f"{path.relative_to(ROOT)}:{where}: no anchor #{m.group(2)} "
                                   f"in docs/{m.group(1)}")
    assert not bad, f"{len(bad)} broken documentation reference(s):\n" + "\n".join(bad[:200])
