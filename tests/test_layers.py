"""The package's layers: every import inside ``jaxdp`` (at module level or inside a function) goes from a
higher layer to a lower one, or stays inside its own subpackage, and no two modules import each other in a
circle (imports inside functions counted). Static: the source is parsed, nothing is imported. ``if
TYPE_CHECKING:`` blocks (annotations only) and the registry's plugin loader (``load_all``, which imports every
subpackage and its public modules by name so that the command line sees their registrations) are the only
exceptions.

Layers, low to high (docs/guide/architecture.md#layers draws them):

0. ``core``: the engine (types, ``simulate``, validation); ``_version``: the version string; ``_moved``: the old
   import paths (it imports by name only, through importlib).
1. ``registry``: the tables of planners, learners, studies and audits (imports nothing from jaxdp).
2. ``samplers``, ``privacy.accounting``: Langevin/MALA kernels; ledgers, certificates, plans (``privacy`` itself
   holds no code).
3. ``privacy.mechanisms``: Laplace, Gaussian, sparse vector, trees, matrix factorizations.
4. ``privacy.audit``: empirical privacy audits of mechanisms and learners.
5. ``testing``, ``data``: conformance checks; bundled real datasets.
6. ``experts``, ``bandits``, ``label_dp``, ``sco``: problem classes, one module per algorithm.
7. ``oco``: online convex optimization (builds on the experts modules: L2P, experts over a net).
8. ``instances``: the benchmark instances of every class.
9. ``studies``; 10. ``compare``; 11. ``cli``; 12. the package root and ``__main__``.
"""
import ast
import collections
import _helpers

ROOT = _helpers.ROOT / "jaxdp"

RANK = {
    "_version": 0, "_moved": 0, "_cache": 0, "core": 0, "registry": 1, "samplers": 2, "privacy": 2, "accounting": 2, "mechanisms": 3, "audit": 4, "testing": 5, "data": 5,
    "experts": 6, "bandits": 6, "label_dp": 6, "sco": 6, "oco": 7, "instances": 8,
    "studies": 9, "compare": 10, "cli": 11, "": 12, "__main__": 12,
}
# (importing module, imported package): imports made by name to load plugins, not dependencies
PLUGIN_LOADERS = {("jaxdp.registry", ""), ("jaxdp.registry", "studies"), ("jaxdp.registry", "privacy")}


def _modules():
    for f in sorted(ROOT.rglob("*.py")):
        parts = list(f.relative_to(ROOT.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        yield ".".join(parts), is_pkg, ast.parse(f.read_text(encoding="utf-8"), filename=str(f))


def _package(module: str) -> str:
    """The layer's name of ``module``: its top-level subpackage, or under ``jaxdp.privacy`` the one below."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "privacy":
        return parts[2]
    return parts[1] if len(parts) > 1 else ""


def _is_type_checking(node) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(module: str, is_pkg: bool, tree):
    """``(target module, at_module_level, function name or None)`` for every jaxdp import of ``module``."""
    out = []
    base = module.split(".") if is_pkg else module.split(".")[:-1]

    def visit(node, func):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, ast.If) and _is_type_checking(ch):
                continue
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(ch, func or ch.name)
                continue
            if isinstance(ch, ast.ImportFrom):
                if ch.level:
                    pkg = base[:len(base) - (ch.level - 1)]
                    if ch.module:
                        out.append((".".join(pkg + [ch.module]), func is None, func))
                    else:
                        out.extend((".".join(pkg + [a.name]), func is None, func) for a in ch.names)
                elif ch.module and (ch.module == "jaxdp" or ch.module.startswith("jaxdp.")):
                    if ch.module == "jaxdp":
                        out.extend((f"jaxdp.{a.name}", func is None, func) for a in ch.names)
                    else:
                        out.append((ch.module, func is None, func))
            elif isinstance(ch, ast.Import):
                out.extend((a.name, func is None, func) for a in ch.names if a.name.split(".")[0] == "jaxdp")
            visit(ch, func)

    visit(tree, None)
    return out


def test_every_package_has_a_layer():
    pkgs = {_package(m) for m, _, _ in _modules()}
    assert not pkgs - set(RANK), f"packages without a layer in tests/test_layers.py: {sorted(pkgs - set(RANK))}"


def test_imports_go_down_the_layers():
    bad = []
    for module, is_pkg, tree in _modules():
        src = _package(module)
        for target, _, func in _imports(module, is_pkg, tree):
            dst = _package(target)
            if dst == src or (module, dst) in PLUGIN_LOADERS and func == "load_all":
                continue
            if dst in RANK and RANK[dst] >= RANK[src]:
                bad.append(f"{module}{'.' + func if func else ''} imports {target} "
                           f"(layer {RANK[src]} -> {RANK[dst]})")
    assert not bad, "imports against the layer order:\n" + "\n".join(sorted(bad))


def test_no_import_circle():
    """No two modules import each other, directly or through others, counting imports inside functions
    (a function-level import hides a circle, it does not remove it); the registry's plugin loader excepted."""
    modules = {m: (p, t) for m, p, t in _modules()}
    graph = collections.defaultdict(set)
    for module, (is_pkg, tree) in modules.items():
        for target, _, func in _imports(module, is_pkg, tree):
            while target and target not in modules:          # ``from .x import name``: the module x
                target = target.rpartition(".")[0]
            if (module, _package(target)) in PLUGIN_LOADERS and func == "load_all":
                continue
            if target and target != module:
                graph[module].add(target)
    # a package's __init__ importing its own submodules is how a package is built, not a circle
    edges = {m: {t for t in graph[m] if not (m == t.rpartition(".")[0] and modules[m][0])} for m in modules}
    cycles = _circles(edges)
    assert not cycles, "import circles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _circles(edges: dict) -> list:
    """The circles a depth-first search meets in the directed graph ``edges`` (node -> set of nodes)."""
    seen, stack, cycles = {}, [], []

    def dfs(m):
        seen[m] = 1
        stack.append(m)
        for t in sorted(edges.get(m, ())):
            if seen.get(t) == 1:
                cycles.append(stack[stack.index(t):] + [t])
            elif t not in seen:
                dfs(t)
        stack.pop()
        seen[m] = 2

    for m in sorted(edges):
        if m not in seen:
            dfs(m)
    return cycles


def test_the_circle_check_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert _circles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_the_layer_check_catches_an_upward_import(tmp_path):
    """The checker itself: an accounting module importing a mechanism is reported."""
    tree = ast.parse("from ..mechanisms import laplace\n")   # jaxdp.privacy.accounting.x -> jaxdp.privacy.mechanisms
    imports = _imports("jaxdp.privacy.accounting.x", False, tree)
    assert imports == [("jaxdp.privacy.mechanisms", True, None)]
    assert RANK[_package(imports[0][0])] > RANK["accounting"]
