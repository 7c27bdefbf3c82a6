"""The tightness cases of the private OCO learners (docs/results/tightness.md, ``jaxdp audit NAME --exact``).

None of them has an exact law: their outputs are points of a ball, or of a net too large to enumerate. Each case
states what bounds the learner instead.
"""
from __future__ import annotations

import math

from ..privacy.audit.exact import gaussian_eps
from ..privacy.audit.tightness import UncoveredCase
from ..privacy.mechanisms import tree_depth
from .dp_ftrl import plan_dp_ftrl
from .l2p_rmw import plan_l2p_rmw
from .realizable import plan_experts_oco_net, plan_potential_oco

__all__ = ["tightness_cases"]


def tightness_cases() -> list:
    """The private OCO learners of the registry for the tightness table (docs/results/tightness.md) and
    ``jaxdp audit NAME --exact``: none has an exact law (their outputs are points of a ball, or of a net too large to
    enumerate); at ``T = 4``, ``d = 2``, ``ε = 1``, with what bounds them instead (DP-FTRL: the Gaussian mechanism's
    exact ε(δ) of the released tree nodes, Balle & Wang, *Improving the Gaussian Mechanism for Differential
    Privacy*, Thm 8).

    Returns:
        A list of :class:`jaxdp.privacy.audit.tightness.UncoveredCase`.
    """
    ft = plan_dp_ftrl(eps=1.0, delta=1e-6, T=4, d=2, mode="certified")
    z = float(ft.ledger.items[0].noise_multiplier)
    H = tree_depth(4)
    g = gaussian_eps(float(ft.delta_certified), z, math.sqrt(H))
    rm = plan_l2p_rmw(eps=1.0, delta=1e-6, T=4, d=2, mode="certified")
    net = plan_experts_oco_net(eps=1.0, T=4, d=2, mode="certified")
    po = plan_potential_oco(eps=1.0, T=4, d=2, mode="certified")
    return [
        UncoveredCase("dp-ftrl", f"T=4, d=2, noise multiplier {z:.4g} (plan eps=1, delta=1e-6)",
                      float(ft.delta_certified), float(ft.eps_certified),
                      "continuous output (the iterates, points of the ball)",
                      f"the Gaussian mechanism's exact ε(δ) of the released tree nodes (ℓ2 sensitivity sqrt(H) = "
                      f"sqrt({H}) noise multipliers): {g:.4g}, equal to the certificate, so the certificate is exact "
                      "for the noisy sums; the iterates are their post-processing", g, learner="dp_ftrl"),
        UncoveredCase("l2p-rmw", f"T=4, d=2, B={rm.params['B']}, p={rm.params['p']:.3g} (plan eps=1, delta=1e-6)",
                      float(rm.delta_certified), float(rm.eps_certified),
                      "continuous output (samples of the regularized MW density on the ball)",
                      "certified only (its ledger has the structure of L2P-MW's, whose rows attribute the slack)",
                      learner="l2p_rmw"),
        UncoveredCase("experts-oco-net", f"T=4, d=2, net of M points, m={net.params['m']} per axis (plan eps=1)", 0.0,
                      float(net.eps_certified),
                      "discrete output (a net point), but M^(T+1) action sequences with M in the tens: too many "
                      "to enumerate",
                      "the learner is sparse-vector experts (REAL Alg. 1) unchanged on the net's normalised losses: "
                      "the sparse-vector-experts rows", learner="experts_oco_net"),
        UncoveredCase("potential-oco", f"T=4, d=2, m={po.params['m']} per axis, K={po.params['K']} (plan eps=1)", 0.0,
                      float(po.eps_certified),
                      "discrete output (a grid point of the ball), but M^(T+1) action sequences: too many to "
                      "enumerate", "certified only (potential-experts' structure on the grid)",
                      learner="potential_oco"),
    ]
