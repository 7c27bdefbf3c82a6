"""The examples in the public docstrings run (``>>>`` lines, checked with :mod:`doctest`)."""
import doctest
import importlib
import pytest

from _helpers import ROOT


def _modules_with_examples() -> list:
    out = []
    for f in sorted((ROOT / "jaxdp").rglob("*.py")):
        if ">>> " in f.read_text(encoding="utf-8"):
            parts = list(f.relative_to(ROOT).with_suffix("").parts)
            out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


MODULES = _modules_with_examples()


def test_examples_exist():
    assert len(MODULES) >= 5, MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    res = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                          verbose=False)
    assert res.attempted > 0 and res.failed == 0, f"{name}: {res.failed} of {res.attempted} example lines failed"
