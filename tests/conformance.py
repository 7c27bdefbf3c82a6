"""The shared conformance check every ``Learner`` in jaxdp must pass; it lives in :mod:`jaxdp.testing`
(public, so users can check their own learners) and is re-exported here for the tests."""
from jaxdp.testing import (  # noqa: F401
    ConformanceError, check_factory, check_key_reuse, check_learner, check_pure, check_shapes, check_traces,
)


def instance_digest(insts, d: int, h=None):
    """SHA-1 over the first losses (rounds 0, 1, 17, 63 of a T = 64 run) on the first two seeds of each instance,
    rounded to 4 decimals (robust to float rounding): the pin of the benchmark instances' streams."""
    import hashlib

    import jax
    import jax.numpy as jnp
    import numpy as np

    h = hashlib.sha1() if h is None else h
    for inst in insts:
        adv, ap = inst.build(d, 64, 1.0)

        @jax.jit
        def first(k, adv=adv, ap=ap):
            st = adv.init(k, ap)
            return [adv.loss(st, jnp.int32(t)) for t in (0, 1, 17, 63)]

        for k in inst.keys(2):
            for leaf in jax.tree_util.tree_leaves(first(k)):
                h.update(np.round(np.asarray(leaf, np.float64), 4).tobytes())
    return h.hexdigest()
