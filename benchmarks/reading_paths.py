"""The files and lines a reader must open to read one algorithm top to bottom, at a git revision or the working tree.

    python benchmarks/reading_paths.py                               # the six algorithms, working tree
    python benchmarks/reading_paths.py --before 145bc02 --out benchmarks/READING_PATHS.md
    python benchmarks/reading_paths.py --rev 145bc02 --algorithm L2P-MW

**What is counted.** An algorithm is named by the names that define it (``hedge``; DP-FTRL with BLT noise is
``dp_ftrl`` plus the ``BLT`` counter). Its *entry modules* are the modules that define those names at top level,
found by scanning every module of the package at that revision (names moved between revisions: L2P-MW lived in
``jaxdp/lazy/`` before, sparse-vector experts in ``jaxdp/realizable/``). From the entry modules the path follows
every import of a name from the package -- top-level imports and imports inside functions alike (``TYPE_CHECKING``
blocks included) -- to the module that *defines* the name: through re-exporting ``__init__`` files, star imports and
``from pkg import module`` (then each ``module.attr`` the importing file reads is resolved the same way; a module
imported but never read through an attribute counts whole). Each module reached is counted whole, and its own
imports are followed, recursively. Imports from outside the package (jax, numpy, dp_accounting) are not followed.
Sources are read with ``git show REV:path`` (``git cat-file``) and parsed with ``ast``: the old revision is never
imported. Lines are counted as ``wc -l`` counts them (newline characters).

**The shared base** (not counted, not followed: every algorithm uses it and a reader already knows it), one list
applied identically to every revision:

* ``jaxdp/core/types.py`` (``Learner``, ``Problem``, dtypes);
* ``jaxdp/core/validation.py`` and ``jaxdp/core/validation/*.py`` (the input checks; a package before);
* ``jaxdp/core/random.py`` (PRNG helpers, categorical sampling);
* ``jaxdp/core/simulate.py`` and ``jaxdp/core/_simulate_*.py`` (the engine; split in parts before);
* ``jaxdp/registry.py`` (registration);
* every ``__init__.py`` used as a re-export file. An ``__init__.py`` that itself *defines* a name an algorithm
  imports is counted like any module.

The figure printed per algorithm: files, total lines, the entry modules' lines alone, and the list
(path, lines), entry modules first; the base modules reached are listed apart, uncounted.
"""
from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import pathlib
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

ROOT = pathlib.Path(__file__).resolve().parents[1]

BASE: Tuple[str, ...] = (
    "jaxdp/core/types.py",
    "jaxdp/core/validation.py",
    "jaxdp/core/validation/*.py",
    "jaxdp/core/random.py",
    "jaxdp/core/simulate.py",
    "jaxdp/core/_simulate_*.py",
    "jaxdp/registry.py",
)

# name -> the top-level names that define the algorithm (their modules are the entry modules)
ALGORITHMS: Dict[str, Tuple[str, ...]] = {
    "Hedge": ("hedge",),
    "L2P-MW": ("l2p_mw",),
    "sparse-vector experts": ("sparse_vector_experts",),
    "DP-FTRL with BLT noise": ("dp_ftrl", "BLT"),
    "DP-UCB": ("dp_ucb_tree",),
    "inverse-sensitivity mechanism": ("grad_inverse_sensitivity",),
}

# the same algorithms with their planner (the function returning params and a ledger) as a second entry name: the
# planner lived in its own module in some revisions (L2P-MW's in ``jaxdp/lazy/planner.py``) and beside the learner
# in others, so the first figure alone would not compare like with like. Hedge is not private: no planner.
PLANNERS: Dict[str, Tuple[str, ...]] = {
    "L2P-MW": ("plan_l2p_mw",),
    "sparse-vector experts": ("plan_sparse_vector_experts",),
    "DP-FTRL with BLT noise": ("plan_dp_ftrl",),
    "DP-UCB": ("plan_dp_ucb_tree",),
    "inverse-sensitivity mechanism": ("plan_grad_inverse_sensitivity",),
}

# where a name is defined more than once, these folders never hold the algorithm
_NOT_ENTRY = ("studies", "bench", "testing", "compare", "cli")


def line_count(source: bytes) -> int:
    """Lines as ``wc -l`` counts them: the number of newline characters."""
    return source.count(b"\n")


class Tree:
    """The ``*.py`` sources of one package at one revision (``rev=None``: the files on disk under ``root``)."""

    def __init__(self, root: pathlib.Path, rev: Optional[str] = None, package: str = "jaxdp"):
        self.root, self.rev, self.package = pathlib.Path(root), rev, package
        self.sources: Dict[str, bytes] = self._read()

    def _read(self) -> Dict[str, bytes]:
        if self.rev is None:
            base = self.root / self.package
            return {p.relative_to(self.root).as_posix(): p.read_bytes() for p in sorted(base.rglob("*.py"))
                    if "__pycache__" not in p.parts}
        names = subprocess.run(["git", "-C", str(self.root), "ls-tree", "-r", "--name-only", self.rev, "--",
                                self.package], check=True, capture_output=True, text=True).stdout.split()
        names = [n for n in names if n.endswith(".py")]
        request = "".join(f"{self.rev}:{n}\n" for n in names).encode()
        out = subprocess.run(["git", "-C", str(self.root), "cat-file", "--batch"], input=request, check=True,
                             capture_output=True).stdout
        sources, pos = {}, 0
        for n in names:
            header_end = out.index(b"\n", pos)
            size = int(out[pos:header_end].split()[2])
            sources[n] = out[header_end + 1:header_end + 1 + size]
            pos = header_end + 1 + size + 1
        return sources


def module_name(path: str) -> str:
    """``jaxdp/a/b.py`` -> ``jaxdp.a.b``; ``jaxdp/a/__init__.py`` -> ``jaxdp.a``."""
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@dataclass
class Module:
    """What one module defines, binds by import, and imports anywhere in its body."""

    path: str
    name: str
    is_package: bool
    lines: int
    defined: Set[str] = field(default_factory=set)
    bindings: Dict[str, Tuple[str, Optional[str]]] = field(default_factory=dict)   # top level: local -> (mod, name)
    stars: List[str] = field(default_factory=list)                                 # top-level star imports
    imports: List[Tuple[str, Optional[str], str]] = field(default_factory=list)    # anywhere: (mod, name, local)
    attrs: Dict[str, Set[str]] = field(default_factory=dict)                       # local name -> attributes read


def _absolute(mod: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = mod.name.split(".") if mod.is_package else mod.name.split(".")[:-1]
    parts = parts[:len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _top_level(body: Iterable[ast.stmt]) -> Iterable[ast.stmt]:
    """Statements at module level, looking into ``if``/``try``/``with`` blocks (not into functions or classes)."""
    for st in body:
        yield st
        if isinstance(st, (ast.If, ast.With)):
            yield from _top_level(st.body)
            yield from _top_level(getattr(st, "orelse", []))
        elif isinstance(st, ast.Try):
            yield from _top_level(st.body)
            for h in st.handlers:
                yield from _top_level(h.body)
            yield from _top_level(st.orelse)
            yield from _top_level(st.finalbody)


def _targets(t: ast.expr) -> Iterable[str]:
    if isinstance(t, ast.Name):
        yield t.id
    elif isinstance(t, (ast.Tuple, ast.List)):
        for e in t.elts:
            yield from _targets(e)
    elif isinstance(t, ast.Starred):
        yield from _targets(t.value)


def parse_module(path: str, source: bytes) -> Module:
    """Read one module's definitions and imports with ``ast``."""
    mod = Module(path, module_name(path), path.endswith("/__init__.py"), line_count(source))
    tree = ast.parse(source, filename=path)
    top = set()
    for st in _top_level(tree.body):
        top.add(id(st))
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            mod.defined.add(st.name)
        elif isinstance(st, ast.Assign):
            for t in st.targets:
                mod.defined.update(_targets(t))
        elif isinstance(st, (ast.AnnAssign, ast.AugAssign)):
            mod.defined.update(_targets(st.target))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            mod.attrs.setdefault(node.value.id, set()).add(node.attr)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    entry: Tuple[str, Optional[str], str] = (a.name, None, a.asname)
                else:   # ``import jaxdp.a.b`` binds ``jaxdp``: count the module itself
                    entry = (a.name, None, "")
                mod.imports.append(entry)
                if id(node) in top and a.asname:
                    mod.bindings[a.asname] = (a.name, None)
        elif isinstance(node, ast.ImportFrom):
            src = _absolute(mod, node)
            for a in node.names:
                if a.name == "*":
                    mod.imports.append((src, "*", ""))
                    if id(node) in top:
                        mod.stars.append(src)
                    continue
                local = a.asname or a.name
                mod.imports.append((src, a.name, local))
                if id(node) in top:
                    mod.bindings[local] = (src, a.name)
    return mod


class Package:
    """All modules of one :class:`Tree`, with name resolution to the defining module."""

    def __init__(self, tree: Tree):
        self.tree = tree
        self.modules: Dict[str, Module] = {}
        for path, src in tree.sources.items():
            m = parse_module(path, src)
            self.modules[m.name] = m

    def lookup(self, mod: str, name: str, seen: Optional[Set[Tuple[str, str]]] = None) -> Optional[Tuple[str, bool]]:
        """Where ``name`` read from module ``mod`` is defined, as Python's ``from mod import name`` finds it.

        Returns:
            ``(module, is_module)``: the module that defines ``name`` (``is_module`` False), or the module that
            ``name`` *is* (``is_module`` True: a submodule, or a module bound by ``import a.b as name``); None
            where ``mod`` has no such name.
        """
        seen = set() if seen is None else seen
        if (mod, name) in seen or mod not in self.modules:
            return None
        seen.add((mod, name))
        m = self.modules[mod]
        if name in m.defined:
            return mod, False
        if name in m.bindings:
            src, orig = m.bindings[name]
            if orig is None:
                return (src, True) if src in self.modules else None
            found = self.lookup(src, orig, seen)
            if found is not None:
                return found
            if f"{src}.{orig}" in self.modules:      # ``from . import sub`` inside the package's own __init__
                return f"{src}.{orig}", True
            return None
        for star in m.stars:
            found = self.lookup(star, name, seen)
            if found is not None:
                return found
        if f"{mod}.{name}" in self.modules:
            return f"{mod}.{name}", True
        return None

    def _module_read(self, mod: str, reader: Module, local: str) -> List[Tuple[str, bool, str]]:
        """A module imported whole: each ``local.attr`` the reader reads, resolved; else the module itself."""
        hits = []
        for a in sorted(reader.attrs.get(local, set()) if local else ()):
            found = self.lookup(mod, a)
            if found is not None:
                hits.append((found[0], found[1], f"{local}.{a}"))
        return hits or [(mod, True, mod)]

    def dependencies(self, mod: str) -> List[Tuple[str, bool, str]]:
        """The modules ``mod`` imports names from: (module, reached as a whole module, the name that led there)."""
        m, out = self.modules[mod], []
        for src, name, local in m.imports:
            if src not in self.modules:
                continue
            if name == "*":
                out.append((src, True, "*"))
            elif name is None:
                out.extend(self._module_read(src, m, local))
            else:
                found = self.lookup(src, name)
                if found is None:
                    out.append((src, False, name))      # cannot be placed: the module imported from counts
                elif found[1]:
                    out.extend(self._module_read(found[0], m, local))
                else:
                    out.append((found[0], False, name))
        return [d for d in out if d[0] != mod]

    def unresolved(self, mod: str) -> List[str]:
        """Names ``mod`` imports from the package that no module of it defines (the parse cannot place them)."""
        m = self.modules[mod]
        return [f"{src}.{name}" for src, name, _ in m.imports
                if src in self.modules and name not in (None, "*") and self.lookup(src, name) is None]

    def defining_modules(self, name: str) -> List[str]:
        """The modules that define ``name`` at top level (algorithm folders preferred over studies, bench, ...)."""
        found = sorted(n for n, m in self.modules.items() if name in m.defined and not m.is_package)
        preferred = [n for n in found if not any(f".{f}." in f"{n}." for f in _NOT_ENTRY)]
        return preferred or found


def is_base(path: str, base: Sequence[str] = BASE) -> bool:
    """Whether ``path`` belongs to the shared base (see the module docstring)."""
    return any(fnmatch.fnmatchcase(path, pat) for pat in base)


@dataclass
class ReadingPath:
    """The files a reader opens for one algorithm at one revision."""

    entries: List[Tuple[str, int]]
    files: List[Tuple[str, int]]          # entry modules first, then by path
    base_reached: List[str]
    via: Dict[str, str] = field(default_factory=dict)   # path -> "importer path: name" that first reached it
    unresolved: List[str] = field(default_factory=list)
    heaviest: List[Tuple[int, int, str, str]] = field(default_factory=list)   # see heaviest_imports

    @property
    def lines(self) -> int:
        """Total lines of the files counted."""
        return sum(n for _, n in self.files)

    @property
    def entry_lines(self) -> int:
        """Lines of the entry modules alone."""
        return sum(n for _, n in self.entries)


def reading_path(pkg: Package, names: Sequence[str], base: Sequence[str] = BASE,
                 drop: Optional[Tuple[str, str]] = None) -> ReadingPath:
    """The reading path of the algorithm defined by ``names`` in ``pkg``.

    Args:
        pkg: the package at one revision.
        names: top-level names whose defining modules are the entry modules.
        base: path patterns of the shared base (not counted, not followed).
        drop: an import (importer module, imported module; dotted names) to leave out, to measure what it costs.

    Returns:
        The entry modules, every module counted (path, lines), the base modules reached, and for each module
        counted the import that first reached it.
    """
    entries: List[str] = []
    for n in names:
        defs = pkg.defining_modules(n)
        if len(defs) != 1:
            raise ValueError(f"name {n!r} is defined in {len(defs)} modules ({defs}); expected exactly one")
        if defs[0] not in entries:
            entries.append(defs[0])
    counted: List[str] = []
    base_hit: Set[str] = set()
    via: Dict[str, str] = {}
    unresolved: List[str] = []
    queue: List[Tuple[str, bool, str]] = [(e, True, "entry") for e in entries]
    visited: Set[str] = set()
    while queue:
        mod, whole, why = queue.pop(0)
        if mod in visited:
            continue
        visited.add(mod)
        m = pkg.modules[mod]
        # a package __init__ reached as a whole module (``from pkg import *`` or never read) is a re-export file
        if is_base(m.path, base) or (m.is_package and whole and mod not in entries):
            base_hit.add(m.path)
            continue
        counted.append(mod)
        via[m.path] = why
        unresolved.extend(pkg.unresolved(mod))
        queue.extend((d, w, f"{m.path}: {name}") for d, w, name in pkg.dependencies(mod) if (mod, d) != drop)
    paths = [pkg.modules[e] for e in entries]
    rest = sorted((pkg.modules[c] for c in counted if c not in entries), key=lambda m: m.path)
    return ReadingPath([(m.path, m.lines) for m in paths], [(m.path, m.lines) for m in paths + rest],
                       sorted(base_hit), via, sorted(set(unresolved)))


def heaviest_imports(pkg: Package, names: Sequence[str], top: int = 3,
                     base: Sequence[str] = BASE) -> List[Tuple[int, int, str, str]]:
    """The imports that lengthen the reading path most.

    Args:
        pkg: the package at one revision.
        names: the algorithm's entry names (as for :func:`reading_path`).
        top: how many to return.
        base: path patterns of the shared base.

    Returns:
        For each import between two modules on the path, the lines and files the path would lose without that one
        import; the ``top`` largest as (lines, files, importer path, imported path).
    """
    path = reading_path(pkg, names, base)
    by_path = {m.path: n for n, m in pkg.modules.items()}
    edges = {(by_path[f], d) for f, _ in path.files for d, _, _ in pkg.dependencies(by_path[f])}
    out = []
    for src, dst in sorted(edges):
        p = reading_path(pkg, names, base, drop=(src, dst))
        if p.lines < path.lines:
            out.append((path.lines - p.lines, len(path.files) - len(p.files), pkg.modules[src].path,
                        pkg.modules[dst].path))
    return sorted(out, key=lambda e: (-e[0], e[2], e[3]))[:top]


def measure(root: pathlib.Path, rev: Optional[str], algorithms: Dict[str, Tuple[str, ...]],
            package: str = "jaxdp", planners: Optional[Dict[str, Tuple[str, ...]]] = None
            ) -> Tuple[Dict[str, ReadingPath], Dict[str, ReadingPath]]:
    """:func:`reading_path` of each algorithm at ``rev`` (None: the working tree under ``root``), and of each
    algorithm named in ``planners`` with its planner's names added to its entry names."""
    pkg = Package(Tree(root, rev, package))
    plain = {a: reading_path(pkg, names) for a, names in algorithms.items()}
    for a, names in algorithms.items():
        plain[a].heaviest = heaviest_imports(pkg, names)
    with_planner = {a: reading_path(pkg, names + (planners or {})[a]) for a, names in algorithms.items()
                    if a in (planners or {})}
    return plain, with_planner


def _label(rev: Optional[str]) -> str:
    return "working tree" if rev is None else rev


def describe(root: pathlib.Path, rev: Optional[str], package: str = "jaxdp") -> str:
    """A column label: the revision as given, or the working tree with the last commit that changed the package."""
    if rev is not None:
        return rev
    try:
        head = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h", "--", package], check=True,
                              capture_output=True, text=True).stdout.strip()   # the package's last commit
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", package], check=True,
                               capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "working tree"
    return f"{head} (working tree{', with changes' if dirty else ''})"


def markdown(results: Dict[str, Dict[str, ReadingPath]], command: str,
             with_planner: Optional[Dict[str, Dict[str, ReadingPath]]] = None) -> str:
    """The table (files, lines, entry lines per revision) and each algorithm's list of files."""
    revs = list(results)
    out = ["# Reading paths: the files and lines a reader opens for one algorithm", "",
           f"Made by `{command}` (`benchmarks/reading_paths.py`; its docstring says what is counted).", "",
           "A reading path is the module that defines the algorithm plus every `jaxdp` module it imports names "
           "from (imports inside functions too), resolved through re-exporting `__init__` files to the module "
           "that defines the name, recursively; lines as `wc -l` counts them. Not counted (the shared base, one "
           "list for every revision): " + ", ".join(f"`{b}`" for b in BASE)
           + ", and `__init__.py` files used as re-exports. *Entry* is the lines of the module(s) defining the "
           "algorithm alone.", ""]
    head = "| algorithm | " + " | ".join(f"{_label(r)}: files | lines | entry" for r in revs) + " |"
    out += [head, "|" + "---|" * (1 + 3 * len(revs))]
    for alg in next(iter(results.values())):
        cells = []
        for r in revs:
            p = results[r][alg]
            cells.append(f"{len(p.files)} | {p.lines:,} | {p.entry_lines:,}")
        out.append(f"| {alg} | " + " | ".join(cells) + " |")
    out.append("")
    if with_planner and any(with_planner.values()):
        out += ["With the planner: the same count with the algorithm's planner (`" + "`, `".join(
            n for names in PLANNERS.values() for n in names) + "`) as a second entry name, since some revisions "
                "kept the planner in a module of its own that the learner does not import.", "",
                "| algorithm | " + " | ".join(f"{_label(r)}: files | lines" for r in revs) + " |",
                "|" + "---|" * (1 + 2 * len(revs))]
        for alg in next(iter(with_planner.values())):
            cells = []
            for r in revs:
                p = with_planner[r][alg]
                extra = [f"`{e}`" for e, _ in p.entries[1:] if e not in dict(results[r][alg].entries)]
                cells.append(f"{len(p.files)} | {p.lines:,}" + (" (planner in " + ", ".join(extra) + ")"
                                                                 if extra else ""))
            out.append(f"| {alg} | " + " | ".join(cells) + " |")
        out.append("")
    for alg in next(iter(results.values())):
        out += [f"## {alg}", ""]
        for r in revs:
            p = results[r][alg]
            out += [f"**{_label(r)}**: {len(p.files)} files, {p.lines:,} lines (entry "
                    + ", ".join(f"`{e}`" for e, _ in p.entries) + f": {p.entry_lines:,})", ""]
            out += [f"- `{path}` {n:,}" + ("" if p.via[path] == "entry" else f" (from `{p.via[path]}`)")
                    for path, n in p.files]
            if p.heaviest:
                out += ["", "Imports that cost most (lines and files the path would lose without that one "
                        "import): " + "; ".join(f"`{a}` → `{b}`: {n:,} lines, {k} file{'s' * (k != 1)}"
                                          for n, k, a, b in p.heaviest)]
            if p.unresolved:
                out += ["", "Imported names no module defines (counted at the module imported from): "
                        + ", ".join(f"`{u}`" for u in p.unresolved)]
            if p.base_reached:
                out += ["", "Base reached (not counted): " + ", ".join(f"`{b}`" for b in p.base_reached)]
            out.append("")
    return "\n".join(out)


def _as_json(results: Dict[str, Dict[str, ReadingPath]]) -> dict:
    return {_label(r): {a: {"files": p.files, "lines": p.lines, "entries": p.entries, "entry_lines": p.entry_lines,
                            "base_reached": p.base_reached, "via": p.via, "unresolved": p.unresolved,
                            "heaviest": p.heaviest}
                        for a, p in res.items()} for r, res in results.items()}


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", help="a git revision to measure alongside --rev")
    ap.add_argument("--rev", help="the git revision to measure (default: the working tree)")
    ap.add_argument("--root", default=str(ROOT), help="the repository root (default: this checkout)")
    ap.add_argument("--package", default="jaxdp")
    ap.add_argument("--algorithm", action="append", choices=sorted(ALGORITHMS), help="repeatable; default all")
    ap.add_argument("--out", help="write the Markdown here (default: print it)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    args = ap.parse_args(argv)
    algs = {a: ALGORITHMS[a] for a in (args.algorithm or ALGORITHMS)}
    revs: List[Optional[str]] = ([args.before] if args.before else []) + [args.rev]
    root = pathlib.Path(args.root)
    both = {describe(root, r, args.package): measure(root, r, algs, args.package, PLANNERS) for r in revs}
    results = {r: b[0] for r, b in both.items()}
    with_planner = {r: b[1] for r, b in both.items()}
    if args.json:
        print(json.dumps({"plain": _as_json(results), "with_planner": _as_json(with_planner)}, indent=1))
        return 0
    command = "python benchmarks/reading_paths.py " + " ".join(sys.argv[1:] if argv is None else argv)
    text = markdown(results, command.strip(), with_planner)
    if args.out:
        pathlib.Path(args.out).write_text(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
