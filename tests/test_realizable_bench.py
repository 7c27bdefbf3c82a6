"""The realizable benchmark runs in tiny mode and reports sane numbers."""
import importlib.util
import pathlib


def test_bench_realizable_tiny():
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "bench_realizable.py"
    spec = importlib.util.spec_from_file_location("bench_realizable", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.run(tiny=True)
    assert rows and all(r["jax_seed_rounds_per_s"] > 0 and r["numpy_seed_rounds_per_s"] > 0 for r in rows)
