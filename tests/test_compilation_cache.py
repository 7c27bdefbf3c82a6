"""The persistent compilation cache (issue 40): ``jaxdp.enable_compilation_cache`` and the CLI's default.

Assertions are on files in the cache directory, never on timings (benchmarks/FIRST_CALL.md has those)."""
import os
import pathlib
import subprocess
import sys

import pytest

import jaxdp
from jaxdp._cache import CACHE_ENV, default_cache_dir

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _entries(d: pathlib.Path) -> set:
    return {p.relative_to(d) for p in d.rglob("*") if p.is_file()} if d.exists() else set()


def _run(args, cache: pathlib.Path, cwd: pathlib.Path):
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT))
    env[CACHE_ENV] = str(cache)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    p = subprocess.run([sys.executable, "-m", "jaxdp", *args], env=env, cwd=cwd, capture_output=True, text=True,
                       timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    return p


def test_cli_study_fills_the_cache_and_no_cache_leaves_it_alone(tmp_path):
    """Three processes of ``jaxdp study run hedge-baseline --quick --set T=64,128`` (one learner and adversary,
    8 seeds, to stay short): the first fills the cache, the second finds every program there (writes nothing new),
    ``--no-cache`` never touches its cache directory; all three give the same results."""
    cache = tmp_path / "cache"
    study = ["study", "run", "hedge-baseline", "--quick", "--set", "T=64,128", "--set", "learners=hedge",
             "--set", "adversaries=noise", "--seeds", "8", "--no-plot", "--no-progress"]
    _run([*study, "--out", str(tmp_path / "X1")], cache, tmp_path)
    first = _entries(cache)
    assert first, "the first run wrote no cache entry"
    _run([*study, "--out", str(tmp_path / "X2")], cache, tmp_path)
    assert _entries(cache) == first                # the second process found every program there
    unused = tmp_path / "unused"
    _run(["--no-cache", *study, "--out", str(tmp_path / "X3")], unused, tmp_path)
    assert not unused.exists()                     # --no-cache: the directory is not even made
    assert (tmp_path / "X1" / "results.csv").read_bytes() == (tmp_path / "X2" / "results.csv").read_bytes() \
        == (tmp_path / "X3" / "results.csv").read_bytes()


def test_default_directory_and_switches(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_ENV, "")
    assert default_cache_dir() is None and jaxdp.enable_compilation_cache() is None
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "jaxdp" / "jax"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == pathlib.Path.home() / ".cache" / "jaxdp" / "jax"
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "moved"))
    assert default_cache_dir() == tmp_path / "moved"


def test_enable_in_process_sets_jax_config_and_refuses_bad_paths(tmp_path):
    import jax

    old = {k: getattr(jax.config, k) for k in ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
                                               "jax_persistent_cache_min_entry_size_bytes")}
    try:
        d = jaxdp.enable_compilation_cache(tmp_path / "c")
        assert d == (tmp_path / "c").resolve() and d.is_dir()
        assert jax.config.jax_compilation_cache_dir == str(d)
        assert jax.config.jax_persistent_cache_min_compile_time_secs == 0
    finally:
        for k, v in old.items():
            jax.config.update(k, v)
        from jax._src import compilation_cache

        compilation_cache.reset_cache()
    with pytest.raises(TypeError, match="path"):
        jaxdp.enable_compilation_cache(3)
    with pytest.raises(ValueError, match="path"):
        jaxdp.enable_compilation_cache("")
