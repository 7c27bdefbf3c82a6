"""The benchmark harness runs at tiny size (it must not rot); timings are never asserted."""
from jaxdp.bench import bench_hedge, numpy_hedge_per_seed, numpy_hedge_vectorized, rows_to_markdown, run_benchmarks


def test_bench_hedge_tiny(tmp_path):
    rows = bench_hedge(seeds_list=(2,), d_list=(4,), T=20, numpy_max_seed_rounds=100, loop_budget=0.01)
    assert rows and rows[0]["jax_seed_rounds/s"] > 0 and rows[0]["numpy_vec_seed_rounds/s"] > 0
    md = rows_to_markdown(rows, "t")
    assert "jax_expert_updates/s" in md
    path = run_benchmarks(quick=True, out=str(tmp_path / "R.md"))
    assert "simulate(hedge)" in path.read_text()


def test_numpy_references_agree_in_distribution():
    """Both NumPy references simulate the same process (mean regret within MC error of each other)."""
    a = numpy_hedge_per_seed(64, 5, 60, 0.3, rng_seed=1)
    b = numpy_hedge_vectorized(256, 5, 60, 0.3, rng_seed=2)
    assert abs(a - b) < 3.0
