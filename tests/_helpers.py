"""Helpers shared by several test modules: the repository root, loading a benchmark script, and the small
Bernoulli experts problem (with a Hedge-like ``params`` pytree) that hand-written test learners are run on."""
import importlib.util
import pathlib
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxdp.experts import BernoulliParams, bernoulli_experts, experts_problem


ROOT = pathlib.Path(__file__).resolve().parents[1]
"""The repository root (this file is ``tests/_helpers.py``); test modules in subfolders of ``tests/`` find
``benchmarks/``, ``docs/``, ``results/`` and the rest from it."""


def load_benchmark(name: str):
    """``benchmarks/<name>.py`` imported as the module ``name`` (the benchmark scripts are not a package)."""
    path = ROOT / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


D = 4
ADV = bernoulli_experts(D)
AP = BernoulliParams(gap=jnp.float32(0.1))
PROB = experts_problem()


class P(NamedTuple):
    eta: jax.Array


PARAMS = [P(eta=jnp.float32(0.3)), P(eta=jnp.float32(0.1))]
