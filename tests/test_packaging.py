"""What a plain ``pip install jaxdp`` (no extras) must be able to do: every third-party module the package
imports outside its optional features is a declared core dependency, and the accountant certifies a
Poisson-subsampled Gaussian (dp_accounting is a core dependency, not a test extra)."""
import ast
import re
import sys

import pytest

import _helpers

if sys.version_info >= (3, 11):
    import tomllib
else:   # pragma: no cover
    tomllib = pytest.importorskip("tomli")

# import name -> distribution name, where they differ
DIST = {"dp_accounting": "dp-accounting", "jaxlib": "jaxlib", "sklearn": "scikit-learn"}
# optional features: plots and tables (extra ``studies``), bundled real data (extra ``data``)
OPTIONAL = {"matplotlib", "pandas", "tqdm", "sklearn", "river"}


def _requirements(spec) -> set:
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].strip().lower() for r in spec}


def test_every_runtime_import_is_a_core_dependency():
    meta = tomllib.loads((_helpers.ROOT / "pyproject.toml").read_text())["project"]
    core = _requirements(meta["dependencies"])
    stdlib = set(sys.stdlib_module_names)
    missing = {}
    for f in sorted((_helpers.ROOT / "jaxdp").rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else [])
            for n in names:
                top = n.split(".")[0]
                if top in stdlib or top in ("jaxdp", "__future__") or top in OPTIONAL:
                    continue
                if DIST.get(top, top).lower() not in core:
                    missing.setdefault(top, str(f.relative_to(_helpers.ROOT)))
    assert not missing, f"imported by the package but not core dependencies in pyproject.toml: {missing}"


def test_optional_extras_are_declared():
    extras = tomllib.loads((_helpers.ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    declared = set().union(*(_requirements(v) for v in extras.values()))
    assert {DIST.get(m, m) for m in OPTIONAL} <= declared


def test_poisson_subsampled_gaussian_certified_without_extras():
    from jaxdp.privacy.accounting import certify
    from jaxdp.privacy.accounting.amplification import amplified_epsilon, poisson_sampled
    from jaxdp.privacy.accounting.ledger import sequential

    ledger = sequential(poisson_sampled(3.0, 0.1, 512))
    assert amplified_epsilon(ledger, 1e-6) == pytest.approx(3.769687, abs=5e-6)
    assert certify(ledger, 1e-6).eps == pytest.approx(3.769687, abs=5e-6)
