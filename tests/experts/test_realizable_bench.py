"""The realizable benchmark runs in tiny mode and reports sane numbers."""
from _helpers import load_benchmark


def test_bench_realizable_tiny():
    mod = load_benchmark("bench_realizable")
    rows = mod.run(tiny=True)
    assert rows and all(r["jax_seed_rounds_per_s"] > 0 and r["numpy_seed_rounds_per_s"] > 0 for r in rows)
