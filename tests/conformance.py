"""The shared conformance check every ``Learner`` in jaxdp must pass; it lives in :mod:`jaxdp.testing`
(public, so users can check their own learners) and is re-exported here for the tests."""
from jaxdp.testing import (  # noqa: F401
    ConformanceError, check_factory, check_key_reuse, check_learner, check_pure, check_shapes, check_traces,
)
