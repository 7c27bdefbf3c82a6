"""Test session settings: reused PRNG keys are errors (a reused key is a privacy bug), and the shared test
modules of this folder (``_helpers``, ``conformance``) import from test modules in its subfolders."""
import os
import pathlib
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# no persistent compilation cache in the user's home from tests (the CLI turns it on by default): tests that
# exercise it point JAXDP_CACHE_DIR at a temporary directory themselves
os.environ["JAXDP_CACHE_DIR"] = ""

_TESTS = str(pathlib.Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
# the repository root, for the benchmark harness (``benchmarks.harness``: not part of the installed package)
if str(pathlib.Path(_TESTS).parent) not in sys.path:
    sys.path.append(str(pathlib.Path(_TESTS).parent))

import jax  # noqa: E402

jax.config.update("jax_debug_key_reuse", True)

import pytest  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's caches after each test module. XLA:CPU maps memory for every program it compiles, and a pytest
    worker that runs half the suite keeps thousands of them: it reached the kernel's ``vm.max_map_count`` (65,530
    mappings) and crashed in the compiler with a segmentation fault."""
    yield
    jax.clear_caches()
