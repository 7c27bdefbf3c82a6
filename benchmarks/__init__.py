"""The repository's benchmarks: ``benchmarks/bench_*.py`` (scripts) and :mod:`benchmarks.harness` (the harness
``jaxdp bench`` runs). Not part of the installed package: import it with the repository root on ``sys.path``."""
