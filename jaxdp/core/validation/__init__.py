"""Input validation at the boundary, before anything is traced or compiled: the one module of checks.

Every public entry point calls these on its host-side arguments. Errors are
``ValueError`` / ``TypeError`` whose message names the parameter, the value
received and what is allowed. Values that are JAX tracers (inside ``jit`` or
``vmap``) are skipped: validation belongs to the host boundary.

The checks live in private modules by topic (``_scalars``: signs, intervals, ε, δ, seeds; ``_arrays``:
arrays, losses, shapes, params fields; ``_planners``: planner arguments and noise parameters; ``_accounting``:
the accountant's float64 values; ``_base``: shared helpers). Import them from here, never from those modules.
"""
from __future__ import annotations

__all__ = [
    "check_positive",
    "check_positive_int",
    "check_nonneg",
    "check_in_range",
    "check_probability",
    "check_epsilon",
    "check_delta",
    "check_finite_array",
    "check_losses_in_range",
    "check_choice",
    "check_shape",
    "check_finite_scalar",
    "is_concrete",
    "check_field",
    "check_adversary_params",
    "check_seed",
    "describe_value",
    "first_nonfinite",
    "SEED_LIMIT",
    # common planner arguments
    "check_d", "check_eps_finite", "check_beta", "check_lstar", "check_mode", "check_delta_for",
    # noise parameters of the mechanisms
    "check_delta_open", "check_sensitivity", "check_scale", "check_finite", "check_noise_kind",
    # float64 host values of the accountant
    "as_f64", "pos", "nonneg", "eps_arg", "delta_arg", "delta_open", "prob_open", "count_arg", "coerce_count",
    "eps_delta_lists", "mode_arg", "out", "coerce_number", "is_int",
]

# in the order of the API page (mkdocstrings lists re-exported names in the order they are imported here)
from ._base import is_concrete, describe_value
from ._scalars import (check_positive, check_nonneg, check_positive_int, check_in_range, check_probability,
                       check_epsilon, check_delta, check_choice, check_finite_scalar, SEED_LIMIT, check_seed)
from ._arrays import (check_finite_array, check_losses_in_range, check_shape, check_field, check_adversary_params,
                      first_nonfinite)
from ._planners import (check_d, check_eps_finite, check_beta, check_lstar, check_mode, check_delta_for,
                        check_delta_open, check_sensitivity, check_scale, check_finite, check_noise_kind)
from ._accounting import (coerce_number, as_f64, pos, nonneg, eps_arg, delta_arg, delta_open, prob_open, count_arg,
                          coerce_count, eps_delta_lists, mode_arg, out, is_int)

# not in __all__, importable from here as before (other modules and the tests use some of them)
from ._base import _values, _fmt, _check_finite, _interval  # noqa: F401
from ._arrays import _host_numeric  # noqa: F401
from ._accounting import _from_string, _fmt_f64  # noqa: F401
