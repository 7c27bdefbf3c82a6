"""Helpers shared by several test modules."""
import importlib.util
import pathlib


def load_benchmark(name: str):
    """``benchmarks/<name>.py`` imported as the module ``name`` (the benchmark scripts are not a package)."""
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
