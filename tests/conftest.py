"""Test session settings: reused PRNG keys are errors (a reused key is a privacy bug)."""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402

jax.config.update("jax_debug_key_reuse", True)
