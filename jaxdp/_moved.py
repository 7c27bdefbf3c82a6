"""The import paths that jaxdp 1.0 moved, kept working for one release (CHANGELOG.md lists every move).

Importing an old path (``jaxdp.lazy``, ``jaxdp.realizable.planners``, ...) warns with a
:class:`DeprecationWarning` naming the new one and returns a view that looks each name up in the
module (or modules, in turn) that hold it now: the objects are the new modules' own, so classes and
registrations are shared and nothing is loaded twice.

The benchmark harness (``jaxdp.bench``, DP-Sniper's suite ``jaxdp.privacy.audit.dpsniper``) left the package
for ``benchmarks/harness/`` of the source checkout: its old paths work when this ``jaxdp`` is that checkout's
(:func:`import_from_checkout` puts the repository root on ``sys.path``) and raise :class:`ImportError` naming
``benchmarks/`` in an installed package.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import pathlib
import sys
import types
import warnings

#: old module path -> the module (or the modules, searched in order) that hold its names now
MOVED: dict[str, tuple[str, ...]] = {
    "jaxdp.lazy": ("jaxdp.experts",),
    "jaxdp.lazy.l2p": ("jaxdp.experts.l2p",),
    "jaxdp.lazy.l2p_mw": ("jaxdp.experts.l2p_mw",),
    "jaxdp.lazy.measures": ("jaxdp.experts.l2p_mw",),
    "jaxdp.lazy.planner": ("jaxdp.experts.l2p_mw",),
    "jaxdp.lazy.exponents": ("jaxdp.experts.l2p_mw",),
    "jaxdp.lazy.sketch": ("jaxdp.experts.sketch",),
    "jaxdp.lazy.tree_ftrl": ("jaxdp.experts.tree_ftrl",),
    "jaxdp.lazy.audits": ("jaxdp.experts.audits",),
    "jaxdp.realizable": ("jaxdp.experts",),
    "jaxdp.realizable.sparse_vector": ("jaxdp.experts.sparse_vector",),
    "jaxdp.realizable.potential": ("jaxdp.experts.potential",),
    "jaxdp.realizable.binary_tree": ("jaxdp.experts.binary_tree",),
    "jaxdp.realizable.planners": ("jaxdp.experts.sparse_vector", "jaxdp.experts.potential",
                                  "jaxdp.experts.binary_tree", "jaxdp.experts._common"),
    "jaxdp.realizable._common": ("jaxdp.experts._common",),
    "jaxdp.realizable.audits": ("jaxdp.experts.audits",),
    "jaxdp.accounting._ledger_event": ("jaxdp.privacy.accounting.ledger",),
    "jaxdp.accounting.amplification": ("jaxdp.privacy.accounting.amplification", "jaxdp.privacy.accounting.accountant",
                                       "jaxdp.privacy.accounting.events"),
    "jaxdp.audit.learned_catalogue": ("jaxdp.privacy.audit.catalogue",),
    "jaxdp.sco.inverse_sensitivity_exact": ("jaxdp.sco.inverse_sensitivity",),
    "jaxdp.sco.inverse_sensitivity_mala": ("jaxdp.sco.inverse_sensitivity",),
    "jaxdp.compare.config": ("jaxdp.compare",),
    "jaxdp.compare.report": ("jaxdp.compare",),
    "jaxdp.core.geometry": ("jaxdp.core.domains",),
    "jaxdp.oco.domains": ("jaxdp.core.domains",),
    "jaxdp.samplers.domains": ("jaxdp.core.domains",),
    # out of the package: benchmarks/ of the source checkout
    "jaxdp.privacy.audit.dpsniper": ("benchmarks.harness.dpsniper",),
}
#: old package prefix -> new package prefix (every submodule moved with its package)
MOVED_PACKAGES: dict[str, str] = {
    "jaxdp.accounting": "jaxdp.privacy.accounting",
    "jaxdp.mechanisms": "jaxdp.privacy.mechanisms",
    "jaxdp.audit": "jaxdp.privacy.audit",
    "jaxdp.bench": "benchmarks.harness",
}
#: what moved out of the package lives under this prefix, in the source checkout only
OUTSIDE = "benchmarks."


def new_location(name: str) -> tuple[str, ...] | None:
    """The modules that hold the names of the old module path ``name`` now, or ``None`` if it did not move.

    Args:
        name: a dotted module path (``"jaxdp.lazy.l2p"``).

    Returns:
        The new module paths, searched in order, or ``None``.
    """
    if name in MOVED:
        return MOVED[name]
    for old, new in MOVED_PACKAGES.items():
        if name == old or name.startswith(old + "."):
            # a module of a moved package may have moved on (jaxdp.audit.dpsniper -> jaxdp.privacy.audit.dpsniper)
            return new_location(new + name[len(old):]) or (new + name[len(old):],)
    return None


def checkout_root() -> pathlib.Path | None:
    """The source checkout this ``jaxdp`` was imported from, or ``None`` (an installed package).

    Returns:
        The repository root (the directory holding ``jaxdp/`` and ``benchmarks/harness/``), or ``None``.
    """
    root = pathlib.Path(__file__).resolve().parent.parent
    return root if (root / "benchmarks" / "harness" / "__init__.py").is_file() else None


def import_from_checkout(name: str, what: str) -> types.ModuleType:
    """Import ``name`` (``benchmarks.harness...``) from the source checkout, its root put first on ``sys.path``.

    Args:
        name: the module path.
        what: the error's start (``"jaxdp bench runs from a source checkout"``).

    Returns:
        The module.

    Raises:
        ImportError: this ``jaxdp`` is an installed package, not a source checkout's.
    """
    root = checkout_root()
    if root is None:
        raise ImportError(f"{what}: the benchmark harness lives in benchmarks/ of the jaxdp repository, not in the "
                          f"installed package ({pathlib.Path(__file__).parent}); clone the repository and run from there")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return importlib.import_module(name)


class _View(types.ModuleType):
    """An old module path: each attribute is looked up in the modules that hold its names now."""

    def __init__(self, name: str, sources: tuple[str, ...]):
        super().__init__(name, f"Moved in jaxdp 1.0: the names of {name} now live in {', '.join(sources)}.")
        self.__path__: list[str] = []
        self._sources = sources

    def __getattr__(self, attr: str):
        for src in self._sources:
            mod = importlib.import_module(src)
            if hasattr(mod, attr):
                return getattr(mod, attr)
        raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("jaxdp.") or new_location(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        sources = new_location(spec.name)
        assert sources is not None
        if sources[0].startswith(OUTSIDE):
            import_from_checkout(OUTSIDE[:-1], f"{spec.name} moved in jaxdp 1.0 to {' / '.join(sources)}, out of the "
                                 "package")   # raises outside a source checkout
        warnings.warn(f"{spec.name} moved in jaxdp 1.0 to {' / '.join(sources)}; the old path will be removed "
                      "in jaxdp 1.1", DeprecationWarning, stacklevel=2)
        return _View(spec.name, sources)

    def exec_module(self, module):
        pass


def install() -> None:
    """Put the finder of moved paths first on :data:`sys.meta_path` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
