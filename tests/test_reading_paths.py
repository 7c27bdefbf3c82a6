"""benchmarks/reading_paths.py follows what a reader must open, on a tiny synthetic package (issue 41).

The package ``pkgx`` in ``tmp_path``: ``algo.py`` defines the algorithm and imports a name through a re-exporting
``__init__`` (to the module that defines it, which imports further), a name inside a function, a module read
through its attributes, a name an ``__init__`` defines itself, and the shared base (not counted). Each module that
must be reached is checked by name, each that must not be by name too, so the tool cannot silently count nothing;
lines are checked against ``wc -l``'s rule (a last line without a newline is not a line).
"""
from __future__ import annotations

import pathlib
import shutil
import subprocess

import pytest

from _helpers import ROOT
from benchmarks import reading_paths as R

FILES = {
    "pkgx/__init__.py": "",
    "pkgx/core/__init__.py": "from .types import Learner\n",
    "pkgx/core/types.py": "class Learner:\n    pass\n",
    "pkgx/algo.py": (
        "from .core import Learner\n"
        "from .lib import helper, local_fn\n"
        "from . import modmod as M\n"
        "\n"
        "\n"
        "def algo(d: int) -> Learner:\n"
        "    from .late import g\n"
        "    return helper(M.thing(g(d)), local_fn)\n"
    ),
    "pkgx/lib/__init__.py": "from .impl import *  # noqa\n\n\ndef local_fn():\n    return 1\n",
    "pkgx/lib/impl.py": "from ..deep import d_value\n\n__all__ = ['helper']\n\n\ndef helper(x, f):\n    return x + d_value",
    "pkgx/deep.py": "from .core.types import Learner\n\nd_value = 3\n",
    "pkgx/late.py": "def g(d):\n    return d\n",
    "pkgx/modmod.py": "def thing(x):\n    return x\n\n\ndef other(x):\n    from .unused import never\n    return never(x)\n",
    "pkgx/unused.py": "def never(x):\n    return x\n",
}
BASE = ("pkgx/core/types.py",)


def _write(root: pathlib.Path, files: dict) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _path(root: pathlib.Path, rev=None) -> R.ReadingPath:
    return R.reading_path(R.Package(R.Tree(root, rev, "pkgx")), ("algo",), BASE)


def test_follows_reexports_function_imports_and_module_attributes(tmp_path):
    _write(tmp_path, FILES)
    p = _path(tmp_path)
    got = dict(p.files)
    assert p.entries == [("pkgx/algo.py", 8)]
    assert p.files[0][0] == "pkgx/algo.py"           # the entry module first
    # through pkgx/lib/__init__ (a star re-export) to the defining module, and on from there
    assert "pkgx/lib/impl.py" in got and "pkgx/deep.py" in got
    assert got["pkgx/lib/impl.py"] == 6                # wc -l: the unterminated last line does not count
    assert "pkgx/late.py" in got                       # imported inside a function
    assert "pkgx/modmod.py" in got                     # ``from . import modmod as M`` read as ``M.thing``
    assert "pkgx/unused.py" in got                     # modmod is counted whole, its function-level import too
    assert "pkgx/lib/__init__.py" in got               # it defines ``local_fn`` itself
    assert p.via["pkgx/lib/impl.py"] == "pkgx/algo.py: helper"
    # the base is reached but neither counted nor followed; a pure re-export __init__ is not counted
    assert "pkgx/core/types.py" not in got and "pkgx/core/types.py" in p.base_reached
    assert "pkgx/core/__init__.py" not in got and "pkgx/__init__.py" not in got
    assert set(got) == {"pkgx/algo.py", "pkgx/lib/impl.py", "pkgx/deep.py", "pkgx/late.py", "pkgx/modmod.py",
                        "pkgx/unused.py", "pkgx/lib/__init__.py"}
    assert p.lines == sum(got.values()) and p.entry_lines == 8
    assert p.unresolved == []
    # without ``from . import modmod`` the path loses modmod.py (7 lines) and unused.py, reached only through it (2)
    pkg = R.Package(R.Tree(tmp_path, None, "pkgx"))
    assert R.heaviest_imports(pkg, ("algo",), top=1, base=BASE) == [(9, 2, "pkgx/algo.py", "pkgx/modmod.py")]


def test_a_module_never_imported_is_not_counted_and_base_stops_the_walk(tmp_path):
    files = dict(FILES)
    files["pkgx/modmod.py"] = "def thing(x):\n    return x\n"          # no longer reaches unused.py
    files["pkgx/core/types.py"] = "from ..unused import never\n\n\nclass Learner:\n    pass\n"   # base: not followed
    _write(tmp_path, files)
    got = dict(_path(tmp_path).files)
    assert "pkgx/unused.py" not in got
    assert "pkgx/modmod.py" in got


def test_reads_a_git_revision_not_the_working_tree(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    _write(tmp_path, FILES)
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "one"], check=True)
    (tmp_path / "pkgx/late.py").write_text("def g(d):\n    return d\n\n\n# more\n")
    rev = subprocess.run(git + ["rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    assert dict(_path(tmp_path, rev).files)["pkgx/late.py"] == 2
    assert dict(_path(tmp_path).files)["pkgx/late.py"] == 5


def test_a_name_defined_twice_is_refused(tmp_path):
    files = dict(FILES)
    files["pkgx/late.py"] = "def algo(d):\n    return d\n"
    _write(tmp_path, files)
    with pytest.raises(ValueError, match="'algo' is defined in 2 modules"):
        _path(tmp_path)


def test_the_six_algorithms_resolve_in_this_checkout():
    plain, with_planner = R.measure(ROOT, None, R.ALGORITHMS, "jaxdp", R.PLANNERS)
    for alg, p in plain.items():
        assert p.entries and p.lines >= p.entry_lines > 0, alg
        assert not any(R.is_base(path) for path, _ in p.files), alg
    assert len(plain["DP-FTRL with BLT noise"].entries) == 2      # the learner and the BLT counter
    assert set(with_planner) == set(R.PLANNERS)
