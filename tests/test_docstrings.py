"""Every public function and class carries a Google-style docstring.

The public API is every function or class named in the ``__all__`` of ``jaxdp``, of each package in
``PACKAGES`` and of the modules ``jaxdp.testing`` and ``jaxdp.registry``. For each of them:

* a docstring exists;
* a function with parameters (other than ``self``/``cls`` and ``*args``/``**kwargs``) has an ``Args:``
  section naming each parameter (one entry may name several: ``eps, delta: ...``);
* a function that returns something (its return annotation is not ``None``; without an annotation, its
  body has a ``return`` with a value) has a ``Returns:`` (or ``Yields:``) section;
* a class documents its constructor's parameters under ``Args:`` (in the class docstring or in
  ``__init__``'s); a dataclass or ``NamedTuple`` names each field under ``Attributes:`` or ``Args:``.

Beyond ``__all__``, every public function or class defined at module level in any module of the package
(walked with ``pkgutil.walk_packages``, ``__main__`` excepted) is held to the same rules, in the module that
defines it. Modules and constants in ``__all__`` are not checked here. The sections are the ones mkdocstrings
renders with ``docstring_style: google`` (mkdocs.yml).
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import inspect
import sys
import re
import textwrap

import pytest

PACKAGES = (
    "jaxdp", "jaxdp.core", "jaxdp.privacy.accounting", "jaxdp.privacy.mechanisms", "jaxdp.samplers", "jaxdp.experts", "jaxdp.experts",
    "jaxdp.experts", "jaxdp.oco", "jaxdp.sco", "jaxdp.label_dp", "jaxdp.bandits", "jaxdp.privacy.audit", "jaxdp.data",
    "jaxdp.testing", "jaxdp.registry",
)

#: The packages whose public API is converted (now every package of PACKAGES); the test enforces these.
DONE_PACKAGES = ("jaxdp", "jaxdp.core", "jaxdp.data", "jaxdp.testing", "jaxdp.registry", "jaxdp.privacy.accounting",
                 "jaxdp.privacy.mechanisms", "jaxdp.samplers", "jaxdp.experts", "jaxdp.experts",
                 "jaxdp.experts", "jaxdp.label_dp", "jaxdp.oco",
                 "jaxdp.sco", "jaxdp.bandits", "jaxdp.privacy.audit")

SECTION = re.compile(r"^(\s*)([A-Z][A-Za-z ]*):\s*$")
ARG_SECTIONS = {"Args", "Arguments", "Parameters", "Attributes"}
RETURN_SECTIONS = {"Returns", "Return", "Yields"}
ENTRY = re.compile(r"^\s*(\*{0,2}[A-Za-z_][\w]*(?:\s*,\s*\*{0,2}[A-Za-z_][\w]*)*)\s*(?:\([^)]*\))?\s*:")


def _sections(doc: str) -> dict[str, list[str]]:
    """Google sections of a docstring: section name -> its body lines (dedented)."""
    lines = inspect.cleandoc(doc).splitlines()
    out: dict[str, list[str]] = {}
    i = 0
    while i < len(lines):
        m = SECTION.match(lines[i])
        if m and not m.group(1):
            name, body = m.group(2), []
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                body.append(lines[i])
                i += 1
            out.setdefault(name, []).extend(textwrap.dedent("\n".join(body)).splitlines())
            continue
        i += 1
    return out


def _documented_names(doc: str, kinds=ARG_SECTIONS) -> set[str]:
    """Names given in the entries (``name: ...``, ``name (type): ...``, ``a, b: ...``) of the sections."""
    names: set[str] = set()
    for sec, body in _sections(doc).items():
        if sec not in kinds:
            continue
        for line in body:
            if not line or line[0].isspace():   # continuation line
                continue
            m = ENTRY.match(line)
            if m:
                names.update(n.strip().lstrip("*") for n in m.group(1).split(","))
    return names


def _has_returns(doc: str) -> bool:
    return any(s in RETURN_SECTIONS and any(x.strip() for x in b) for s, b in _sections(doc).items())


def _unwrap(obj):
    while True:
        if isinstance(obj, functools.partial):
            obj = obj.func
        elif hasattr(obj, "__wrapped__"):
            obj = obj.__wrapped__
        else:
            return obj


def _params(fn) -> list[str]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values()
            if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _returns_value(fn) -> bool:
    """True when the function returns something: annotation not None, else a ``return value`` in its body."""
    ann = fn.__annotations__.get("return", inspect.Parameter.empty) if hasattr(fn, "__annotations__") else None
    if ann is not inspect.Parameter.empty:
        return ann not in (None, "None", type(None))
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    top = tree.body[0]

    def walk(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, (ast.Yield, ast.YieldFrom)):
                return True
            if isinstance(child, ast.Return) and child.value is not None and not (
                    isinstance(child.value, ast.Constant) and child.value.value is None):
                return True
            if walk(child):
                return True
        return False

    return walk(top)


def _fields(cls) -> list[str] | None:
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls) if f.init]
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return list(cls._fields)
    return None


def problems_of(name: str, obj) -> list[str]:
    """What the docstring of one public function or class lacks (empty when it is complete)."""
    out = []
    if inspect.isclass(obj):
        doc = obj.__doc__ or ""
        fields = _fields(obj)
        if fields is not None and tuple in obj.__mro__ and re.fullmatch(rf"{obj.__name__}\(.*\)", doc.strip(), re.S):
            doc = ""   # the NamedTuple's generated "Name(a, b)" is no documentation
        if not doc.strip():
            return [f"{name}: no class docstring"]
        if fields is not None:
            missing = [f for f in fields if f not in _documented_names(doc)]
            if missing:
                out.append(f"{name}: fields not under Attributes:/Args: {missing}")
            return out
        init = obj.__dict__.get("__init__")
        if init is not None and inspect.isfunction(init):
            init_doc = init.__doc__ or ""
            missing = [p for p in _params(init) if p not in _documented_names(doc) | _documented_names(init_doc)]
            if missing:
                out.append(f"{name}: constructor parameters not under Args: {missing}")
        return out
    fn = _unwrap(obj)
    doc = inspect.getdoc(obj) or (fn.__doc__ if fn is not obj else None) or ""
    if not doc.strip():
        return [f"{name}: no docstring"]
    sig_fn = obj if callable(obj) else fn
    try:
        params = _params(sig_fn) if not isinstance(obj, functools.partial) else _params(fn)
    except Exception:   # pragma: no cover
        params = _params(fn)
    missing = [p for p in params if p not in _documented_names(doc)]
    if missing:
        out.append(f"{name}: parameters not under Args: {missing}")
    if _returns_value(fn) and not _has_returns(doc):
        out.append(f"{name}: no Returns: section")
    return out


def public_callables(packages=PACKAGES) -> dict[str, object]:
    """``module.name`` -> object for every function or class in the packages' ``__all__`` (first name wins)."""
    seen: dict[int, str] = {}
    out: dict[str, object] = {}
    for mod_name in packages:
        mod = importlib.import_module(mod_name)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or not callable(obj) or id(obj) in seen:
                continue
            seen[id(obj)] = f"{mod_name}.{name}"
            out[f"{mod_name}.{name}"] = obj
    return out


def test_section_parser_reads_google_entries():
    def f(eps, delta, key, *args, n=1, **kw):
        """Do it.

        Args:
            eps, delta: the privacy parameters,
                over two lines.
            key (jax.Array): a key.
            n: a count.

        Returns:
            Something.
        """
        return 1

    assert problems_of("f", f) == []
    assert _documented_names(f.__doc__) == {"eps", "delta", "key", "n"}


def test_checker_flags_what_is_missing():
    def g(a, b):
        """Only prose about a and b."""
        return a + b

    def h(a) -> None:
        """Nothing back.

        Args:
            a: documented.
        """

    class P(tuple):
        _fields = ("x", "y")

    P.__doc__ = "P(x, y)"
    got = problems_of("g", g)
    assert any("parameters" in p for p in got) and any("Returns" in p for p in got)
    assert problems_of("h", h) == []
    assert problems_of("P", P) == ["P: no class docstring"]


@pytest.mark.parametrize("package", DONE_PACKAGES)
def test_public_api_documented(package):
    objs = public_callables((package,))
    all_objs = public_callables(PACKAGES[: PACKAGES.index(package)])
    ids = {id(o) for o in all_objs.values()}
    bad = [p for name, obj in objs.items() if id(obj) not in ids for p in problems_of(name, obj)]
    assert not bad, f"{len(bad)} incomplete docstrings in {package}:\n" + "\n".join(bad)


def _module_level_callables() -> dict[str, object]:
    """``module.name`` -> object for every public function or class defined at module level in a ``jaxdp`` module
    (every module of the package, ``__main__`` excepted; re-exports are checked where they are defined)."""
    import pkgutil

    import jaxdp

    names = ["jaxdp"] + [m.name for m in pkgutil.walk_packages(jaxdp.__path__, "jaxdp.")
                         if m.name.rsplit(".", 1)[-1] != "__main__"]
    out: dict[str, object] = {}
    for mod_name in names:
        mod = importlib.import_module(mod_name)
        for name, obj in vars(mod).items():
            if name.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if getattr(obj, "__module__", None) != mod.__name__:
                continue
            out[f"{mod_name}.{name}"] = obj
    return out


def _study_hook(name: str) -> bool:
    """A function of a study module (one with a ``StudySpec``): the study's public face is its spec and results
    page (``jaxdp study show NAME``), so its hooks need a docstring, not the Args/Returns sections of the API."""
    from jaxdp.studies.specs import StudySpec

    return isinstance(getattr(sys.modules.get(name.rsplit(".", 1)[0]), "S", None), StudySpec)


def test_every_module_level_public_callable_documented():
    objs = _module_level_callables()
    assert "jaxdp.privacy.audit.catalogue.laplace_half_scale" in objs and "jaxdp.cli.main" in objs   # the walk reaches every module
    bad = [p for name, obj in sorted(objs.items())
           for p in ((([] if (obj.__doc__ or "").strip() else [f"{name}: no docstring"]) if _study_hook(name)
                      else problems_of(name, obj)))]
    assert not bad, f"{len(bad)} incomplete docstrings:\n" + "\n".join(bad)
