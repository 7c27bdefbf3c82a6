"""The benchmark harness runs at tiny size (it must not rot); timings are never asserted."""
import hashlib
import pathlib

from _helpers import ROOT
from benchmarks.harness import bench_hedge, numpy_hedge_per_seed, numpy_hedge_vectorized, rows_to_markdown
from jaxdp.cli import main


def _tree_digest(d: pathlib.Path) -> dict:
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def test_bench_hedge_tiny():
    rows = bench_hedge(seeds_list=(2,), d_list=(4,), T=20, numpy_max_seed_rounds=100, loop_budget=0.01)
    assert rows and rows[0]["jax_seed_rounds/s"] > 0 and rows[0]["numpy_vec_seed_rounds/s"] > 0
    md = rows_to_markdown(rows, "t")
    assert "jax_expert_updates/s" in md


def test_cli_bench_quick_writes_to_cwd_not_source_tree(tmp_path, monkeypatch, capsys):
    """`jaxdp bench --quick` from another directory writes ./jaxdp-bench.md and leaves benchmarks/ untouched."""
    before = _tree_digest(ROOT / "benchmarks")
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "--quick"]) == 0
    out = tmp_path / "jaxdp-bench.md"
    assert out.exists() and "simulate(hedge)" in out.read_text()
    assert f"wrote {out}" in capsys.readouterr().out
    assert _tree_digest(ROOT / "benchmarks") == before
    # a directory given as --out is refused with a one-line error, before anything runs
    assert main(["bench", "--quick", "--out", str(tmp_path)]) == 2
    assert "--out must be a file path" in capsys.readouterr().err
    assert _tree_digest(ROOT / "benchmarks") == before


def test_bench_package_has_no_import_cycle():
    """Each benchmarks.harness module imports only benchmarks.harness modules listed before it (common ... report)."""
    import ast

    order = ["common", "xla_env", "numpy_refs", "accuracy", "hedge", "lazy", "oco", "realizable", "samplers", "sco", "label_dp", "hlo",
             "roofline", "suite", "export", "report", "_dpsniper_primitives", "_dpsniper_report", "dpsniper"]
    pkg = ROOT / "benchmarks" / "harness"
    assert sorted(order) == sorted(p.stem for p in pkg.glob("*.py") if p.stem != "__init__")
    for i, name in enumerate(order):
        tree = ast.parse((pkg / f"{name}.py").read_text())
        deps = {n.module.split(".")[0] for n in ast.walk(tree)
                if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module}
        assert deps <= set(order[:i]), (name, deps - set(order[:i]))


def test_numpy_references_agree_in_distribution():
    """Both NumPy references simulate the same process (mean regret within MC error of each other)."""
    a = numpy_hedge_per_seed(64, 5, 60, 0.3, rng_seed=1)
    b = numpy_hedge_vectorized(256, 5, 60, 0.3, rng_seed=2)
    assert abs(a - b) < 3.0
