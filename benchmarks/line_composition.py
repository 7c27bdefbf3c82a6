"""What the lines of ``jaxdp/`` are: code, docstrings, comments and blank lines, per top-level folder.

Every line of every ``jaxdp/**/*.py`` file (the ``wc -l`` count of the architecture check) falls in exactly one
class, decided with :mod:`ast` and in this order:

* ``module doc``: the module docstring;
* ``public doc``: the docstring of a public function or class (a name without a leading underscore, outside any
  private function or class), with the Args/Returns, math, paper and theorem the standards ask for;
* ``private doc``: every other function or class docstring;
* ``blank``, ``comment`` (a line whose first non-blank character is ``#``) and ``code``: the rest.

Usage::

    python benchmarks/line_composition.py [--rev REV] [--out benchmarks/LINES.md]

``--rev`` reads the files of a git revision instead of the working tree.
"""
from __future__ import annotations

import argparse
import ast
import collections
import pathlib
import subprocess

KINDS = ("code", "public doc", "module doc", "private doc", "comment", "blank")


def _files(rev: str | None) -> dict[str, str]:
    """``{path: source}`` of ``jaxdp/**/*.py`` in the working tree or at ``rev``."""
    if rev is None:
        return {str(p): p.read_text() for p in sorted(pathlib.Path("jaxdp").rglob("*.py"))}
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "jaxdp"], check=True, capture_output=True,
                           text=True).stdout.split()
    return {n: subprocess.run(["git", "show", f"{rev}:{n}"], check=True, capture_output=True, text=True).stdout
            for n in names if n.endswith(".py")}


def _doc_lines(tree: ast.Module) -> dict[int, str]:
    """Line number -> docstring class, for the module's docstring and every function's or class's."""
    kind: dict[int, str] = {}

    def span(node: ast.AST) -> range | None:
        body = getattr(node, "body", None)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            return range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1)
        return None

    def visit(node: ast.AST, private: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                priv = private or child.name.startswith("_")
                for i in span(child) or ():
                    kind[i] = "private doc" if priv else "public doc"
                visit(child, priv)
            else:
                visit(child, private)

    for i in span(tree) or ():
        kind[i] = "module doc"
    visit(tree, False)
    return kind


def composition(rev: str | None = None) -> dict[str, collections.Counter]:
    """``{top-level folder: Counter(kind -> lines)}`` over ``jaxdp/``; the key ``jaxdp/`` holds the total."""
    out: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for path, src in _files(rev).items():
        doc = _doc_lines(ast.parse(src))
        top = "/".join(path.split("/")[:2]) if path.count("/") > 1 else "jaxdp/*.py"
        for i, line in enumerate(src.splitlines(), 1):
            s = line.strip()
            k = doc.get(i) or ("blank" if not s else "comment" if s.startswith("#") else "code")
            out[top][k] += 1
            out["jaxdp/"][k] += 1
    return out


def table(comp: dict[str, collections.Counter]) -> str:
    """A Markdown table, the total first, then the folders by size."""
    rows = ["| folder | " + " | ".join(KINDS) + " | total |", "|---|" + "---:|" * (len(KINDS) + 1)]
    for top in sorted(comp, key=lambda t: (t != "jaxdp/", -sum(comp[t].values()))):
        c = comp[top]
        rows.append(f"| `{top}` | " + " | ".join(f"{c[k]:,}" for k in KINDS) + f" | {sum(c.values()):,} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default=None, help="a git revision (default: the working tree)")
    ap.add_argument("--out", default=None, help="write the table to this Markdown file")
    a = ap.parse_args()
    text = (f"# Line composition of `jaxdp/` ({a.rev or 'working tree'})\n\n"
            f"Made by `python benchmarks/line_composition.py{' --rev ' + a.rev if a.rev else ''}`; its docstring "
            f"says how a line is classed.\n\n{table(composition(a.rev))}\n")
    if a.out:
        pathlib.Path(a.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
