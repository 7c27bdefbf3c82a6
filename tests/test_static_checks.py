"""Static checks of the package, run with the tests (so `.ci/run` runs them): ruff (pyflakes and the
pycodestyle errors, configured in pyproject.toml) on all of ``jaxdp/``, and mypy on the packages its
configuration lists."""
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    exe = pathlib.Path(sys.executable).parent / name
    found = str(exe) if exe.exists() else shutil.which(name)
    assert found, f"{name} is not installed: pip install -e '.[test]'"
    return found


def test_ruff_clean():
    r = subprocess.run([_tool("ruff"), "check", "jaxdp"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_mypy_clean():
    r = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
