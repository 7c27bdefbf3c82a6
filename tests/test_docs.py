"""The documentation site builds offline with ``mkdocs build --strict`` (issue 14).

Runs the same command a user runs (`mkdocs build --strict`, see README) into a temporary
directory, so the CI's plain ``pytest`` builds the docs too: a broken link, a missing anchor, a
docstring that mkdocstrings cannot parse or a nav entry that points nowhere fails this test.
About 5-10 s on the 2-core CI machine.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from _helpers import ROOT

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings")
pytest.importorskip("mkdocs_jupyter")
pytest.importorskip("material")


def _build(tmp_path: pathlib.Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", JUPYTER_PLATFORM_DIRS="1")
    # offline: nothing may be fetched while building (theme fonts are off in mkdocs.yml)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        env[var] = "http://127.0.0.1:9"
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )


def test_mkdocs_build_strict(tmp_path):
    res = _build(tmp_path)
    assert res.returncode == 0, f"mkdocs build --strict failed:\n{res.stdout[-4000:]}\n{res.stderr[-8000:]}"
    site = tmp_path / "site"
    for page in ("index.html", "guide/concepts/index.html", "algorithms/lazy/index.html",
                 "algorithms/realizable/index.html", "algorithms/growth/index.html",
                 "algorithms/label-dp/index.html", "api/core/index.html",
                 "notebooks/quickstart/index.html"):
        assert (site / page).is_file(), f"{page} missing from the built site"
    # the API pages were generated from the docstrings, not left empty
    core = (site / "api/core/index.html").read_text(encoding="utf-8")
    assert "simulate" in core and "monte_carlo" in core
    # no web fonts requested by the theme
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis.com" not in index and "fonts.gstatic.com" not in index


def _load_hooks():
    import importlib.util

    spec = importlib.util.spec_from_file_location("jaxdp_docs_hooks", ROOT / "docs" / "_hooks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_nav_hook_drops_missing_pages_and_expands_globs(tmp_path):
    hooks = _load_hooks()
    (tmp_path / "guide").mkdir()
    (tmp_path / "results").mkdir()
    (tmp_path / "index.md").write_text("# Home\n")
    (tmp_path / "guide" / "here.md").write_text("# Here\n")
    (tmp_path / "results" / "b.md").write_text("# Second\n")
    (tmp_path / "results" / "a.md").write_text("# First {#first}\n")
    nav = [{"Home": "index.md"}, {"Guide": [{"Here": "guide/here.md"}, {"Gone": "guide/gone.md"}]},
           {"Missing": [{"X": "nope.md"}]}, {"Results": "results/*.md"}]
    out = hooks.on_config({"docs_dir": str(tmp_path), "nav": nav})["nav"]
    assert out == [{"Home": "index.md"}, {"Guide": [{"Here": "guide/here.md"}]},
                   {"Results": [{"First": "results/a.md"}, {"Second": "results/b.md"}]}]


def test_strict_build_fails_on_a_broken_anchor(tmp_path):
    """The paired negative case: the same validation settings and hooks reject a broken anchor."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_hooks.py").write_text((ROOT / "docs" / "_hooks.py").read_text())
    (docs / "index.md").write_text("# Home\n\n[ok](other.md#real) and [bad](other.md#not-there)\n")
    (docs / "other.md").write_text("# Other\n\n## Real {#real}\n")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nhooks: [docs/_hooks.py]\nexclude_docs: _hooks.py\n"
        "markdown_extensions: [attr_list, toc]\n"
        "validation: {anchors: warn, unrecognized_links: warn}\n"
        "nav: [{Home: index.md}, {Other: other.md}]\n")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                          str(tmp_path / "site")], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode != 0 and "not-there" in (res.stdout + res.stderr)
    (docs / "index.md").write_text("# Home\n\n[ok](other.md#real)\n")
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                          str(tmp_path / "site")], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
