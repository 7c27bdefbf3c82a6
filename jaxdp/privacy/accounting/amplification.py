r"""Privacy amplification by subsampling in the ledger: Poisson and fixed-size sampled Gaussians.

Two ledger event kinds (:mod:`jaxdp.privacy.accounting.ledger`) describe a Gaussian mechanism run on a random
sample of the records, ``sum_{i in sample} g_i + N(0, sigma^2 I)`` with ``||g_i||_2 <= C``, and carry
``noise_multiplier = sigma / C`` (the DP-SGD convention: per-record bound, whatever the relation):

* :func:`poisson_sampled` — each record enters independently with probability ``q``
  (``dp_accounting.PoissonSampledDpEvent``). Stated for add/remove neighbours (default; the
  dominating pair is ``N(0, m^2)`` against ``(1-q) N(0, m^2) + q N(1, m^2)``, ``m = sigma/C``:
  Mironov, Talwar & Zhang 2019 for RDP; Zhu, Dong & Wang 2022 and Koskela et al. 2020 for the PLD) or
  replace-one (``(1-q) N(0) + q N(-1)`` against ``(1-q) N(0) + q N(1)``; PLD only: ``dp_accounting``
  has no RDP bound for it).
* :func:`fixed_size_sampled` — a uniform sample of ``sample_size`` out of ``population`` records
  without replacement (``dp_accounting.SampledWithoutReplacementDpEvent``), replace-one neighbours
  (the population size is public). RDP: Wang, Balle & Kasiviswanathan 2019 (Thm 27) at the
  replace-one sensitivity ``2C``. PLD: subsampling without replacement under replace-one is
  dominated by ``((1-g) Q + g P, Q)``, ``g = sample_size/population``, when ``(P, Q)`` dominates the
  mechanism (Balle, Barthe & Gaboardi 2018; Zhu, Dong & Wang 2022): for the Gaussian of sensitivity
  ``2C`` that is the add/remove Poisson pair with rate ``g`` and shift ``2C``.

:func:`jaxdp.privacy.accounting.certify` takes these events in any sequential ledger with Gaussian, tree and
Laplace events (pure-DP events besides them fall back to the un-sampled bounds): it adds the
``dp_accounting`` PLD (pessimistic, discretisation ``1e-4``) and RDP epsilons of the whole ledger
(:func:`jaxdp.privacy.accounting.accountant.sampled_candidates`) to its other bounds, which count a sampled event as the un-sampled
Gaussian under its relation (``sigma/C`` add/remove, ``sigma/(2C)`` replace-one): valid, since sampling
never hurts. A ledger's certificate is for the relation of its sampled events (the other events'
multipliers are taken relative to the sensitivity under that relation); mixing add/remove and
replace-one sampled events is refused.

Example (the figures of the tests): Poisson rate 0.1, noise multiplier 3, 512 steps, ``delta = 1e-6``,
add/remove: PLD ``eps = 3.7697``, RDP ``eps = 4.0510``; the multiplier for ``eps = 1`` is 9.6618 (PLD)
and 10.3641 (RDP) (:func:`calibrate_noise_multiplier`).
"""
from __future__ import annotations

import math
from typing import Any, Optional

from ...core import validation as C
from .events import _dpa, sampled_dp_event
from .ledger import GAUSSIAN_KINDS, SAMPLED_KINDS, Event, Ledger

__all__ = ["poisson_sampled", "fixed_size_sampled", "amplified_epsilon", "calibrate_noise_multiplier",
           "PLD_DISCRETIZATION", "sampling_relation", "amplification_supported", "amplified_pld_eps",
           "amplified_rdp_eps"]

#: value discretisation interval of the PLD accountant for ledgers with sampled events
PLD_DISCRETIZATION = 1e-4


def poisson_sampled(noise_multiplier: float, sampling_rate: float, count: int = 1, *, neighboring: str = "add_remove",
                    label: str = "", dim: int = 1) -> Event:
    """``count`` Gaussian releases on Poisson samples of rate ``sampling_rate`` (``noise_multiplier = sigma/C``).

    Args:
        noise_multiplier: ``sigma/C``, the Gaussian's standard deviation over the per-record ℓ2 bound ``C``.
        sampling_rate: the probability ``q`` in ``(0, 1]`` with which each record enters a sample, independently.
        count: the number of releases (one fresh sample each), composed sequentially.
        neighboring: ``"add_remove"`` (default) or ``"replace_one"``; the relation the guarantee is stated for.
        label: a name for reports (``Ledger.describe``, ``jaxdp plan``).
        dim: the dimension of each release (the ``d`` of the float floor).

    Returns:
        The ledger :class:`~jaxdp.privacy.accounting.ledger.Event` of kind ``"poisson_sampled"``.
    """
    return Event("poisson_sampled", noise_multiplier=float(noise_multiplier), sampling_rate=float(sampling_rate),
               count=int(count), neighboring=neighboring, label=label, float_dim=int(dim))


def fixed_size_sampled(noise_multiplier: float, sample_size: int, population: int, count: int = 1, *,
                       label: str = "", dim: int = 1) -> Event:
    """``count`` Gaussian releases on uniform samples of ``sample_size`` of ``population`` records (replace-one).

    Args:
        noise_multiplier: ``sigma/C``, the Gaussian's standard deviation over the per-record ℓ2 bound ``C``
            (the replace-one sensitivity is ``2C``).
        sample_size: the number of records in each sample, drawn without replacement.
        population: the number of records (public).
        count: the number of releases (one fresh sample each), composed sequentially.
        label: a name for reports (``Ledger.describe``, ``jaxdp plan``).
        dim: the dimension of each release (the ``d`` of the float floor).

    Returns:
        The ledger :class:`~jaxdp.privacy.accounting.ledger.Event` of kind ``"fixed_size_sampled"``.
    """
    return Event("fixed_size_sampled", noise_multiplier=float(noise_multiplier), sample_size=sample_size,
               population=population, count=int(count), neighboring="replace_one", label=label, float_dim=int(dim))


def sampling_relation(atoms) -> str:
    """The neighbouring relation of a ledger's sampled events (``"add_remove"`` if it has none).

    Args:
        atoms: ``(event, multiplicity)`` pairs of a sequential ledger.

    Returns:
        ``"add_remove"`` or ``"replace_one"``.

    Raises:
        ValueError: the atoms mix the two relations.
    """
    rels = {e.neighboring for e, _ in atoms if e.kind in SAMPLED_KINDS}
    if len(rels) > 1:
        raise ValueError("a ledger cannot mix add/remove and replace-one sampled events: their guarantees are for "
                         f"different neighbouring relations ({sorted(rels)})")
    return rels.pop() if rels else "add_remove"


def amplification_supported(atoms) -> bool:
    """Whether every event has a ``dp_accounting`` form with sampling here (Gaussian, tree, sampled or Laplace).

    Args:
        atoms: ``(event, multiplicity)`` pairs of a sequential ledger.

    Returns:
        ``True`` when the amplified accountants apply to the whole ledger.
    """
    return all(e.kind in GAUSSIAN_KINDS or e.kind == "laplace" for e, _ in atoms)


def amplified_pld_eps(atoms, delta: float, vdi: float) -> float:
    """The ``dp_accounting`` PLD ε (pessimistic) of the composed ledger, sampled Gaussians amplified.

    Args:
        atoms: ``(event, multiplicity)`` pairs of a sequential ledger (:func:`amplification_supported`).
        delta: the δ in ``(0, 1)``.
        vdi: the PLD's value discretisation interval.

    Returns:
        ε at ``delta``.
    """
    from dp_accounting.pld import privacy_loss_distribution as P

    dpa = _dpa()
    ADD_REMOVE, REPLACE = dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, dpa.NeighboringRelation.REPLACE_ONE
    rho = sum(m * 0.5 / e.gaussian_multiplier ** 2 for e, m in atoms if e.kind in ("gaussian", "tree_aggregation"))
    pld: Any = None

    def add(p):
        nonlocal pld
        pld = p if pld is None else pld.compose(p)

    if rho > 0:    # composed plain Gaussians are one Gaussian with the summed rho
        add(P.from_gaussian_mechanism(1.0 / math.sqrt(2.0 * rho), value_discretization_interval=vdi))
    for e, m in atoms:
        if e.kind == "laplace":
            add(P.from_laplace_mechanism(e.noise_multiplier, value_discretization_interval=vdi).self_compose(m))
        elif e.kind == "poisson_sampled":
            rel = ADD_REMOVE if e.neighboring == "add_remove" else REPLACE
            one = P.from_gaussian_mechanism(e.noise_multiplier, sampling_prob=e.sampling_rate,
                                            value_discretization_interval=vdi, neighboring_relation=rel)
            add(one.self_compose(m) if m > 1 else one)
        elif e.kind == "fixed_size_sampled":
            one = P.from_gaussian_mechanism(e.noise_multiplier, sensitivity=2.0, sampling_prob=e.sampling_rate,
                                            value_discretization_interval=vdi, neighboring_relation=ADD_REMOVE)
            add(one.self_compose(m) if m > 1 else one)
    return float(pld.get_epsilon_for_delta(delta))


def amplified_rdp_eps(atoms, delta: float, relation: str) -> Optional[float]:
    """The ``dp_accounting`` RDP ε of the composed ledger, sampled Gaussians amplified.

    Args:
        atoms: ``(event, multiplicity)`` pairs of a sequential ledger (:func:`amplification_supported`).
        delta: the δ in ``(0, 1)``.
        relation: the ledger's :func:`sampling_relation`.

    Returns:
        ε at ``delta``, or ``None`` for Poisson sampling under replace-one (``dp_accounting`` has no RDP bound).
    """
    dpa = _dpa()
    if relation == "replace_one" and any(e.kind == "poisson_sampled" for e, _ in atoms):
        return None      # dp_accounting has no RDP bound for Poisson sampling under replace-one
    rel = (dpa.NeighboringRelation.ADD_OR_REMOVE_ONE if relation == "add_remove"
           else dpa.NeighboringRelation.REPLACE_ONE)
    acc = dpa.rdp.RdpAccountant(neighboring_relation=rel)
    for e, m in atoms:
        if e.kind in SAMPLED_KINDS:
            one = sampled_dp_event(e)
        elif e.kind == "laplace":
            one = dpa.LaplaceDpEvent(e.noise_multiplier)
        else:
            one = dpa.GaussianDpEvent(e.gaussian_multiplier)
        acc.compose(one, int(m))
    return float(acc.get_epsilon(delta))


def _atoms(ledger) -> list:
    if isinstance(ledger, Event):
        ledger = Ledger(items=(ledger,))
    if not isinstance(ledger, Ledger) or ledger.composition != "sequential":
        raise ValueError("amplified_epsilon needs an Event or a sequential Ledger")
    if ledger.total_delta_extra:
        raise ValueError("amplified_epsilon: the ledger has failure-event delta; use jaxdp.privacy.accounting.certify")
    atoms = [(e, m * e.count) for e, m in ledger.events()]
    if not amplification_supported(atoms):
        raise ValueError("amplified_epsilon supports Gaussian, tree, Laplace and sampled events only")
    return atoms


def amplified_epsilon(ledger, delta: float, *, accountant: str = "pld",
                      value_discretization_interval: float = PLD_DISCRETIZATION) -> float:
    """ε at ``delta`` of a ledger with sampled events from one ``dp_accounting`` accountant (``"pld"`` or
    ``"rdp"``), without the accountant's other bounds (module docstring).

    Args:
        ledger: an :class:`~jaxdp.privacy.accounting.ledger.Event` or a sequential
            :class:`~jaxdp.privacy.accounting.ledger.Ledger` of Gaussian, tree, Laplace and sampled events, without
            failure-event δ.
        delta: the target δ, in ``(0, 1)``.
        accountant: ``"pld"`` (privacy-loss distributions, pessimistic) or ``"rdp"`` (Rényi DP).
        value_discretization_interval: the PLD's discretisation of the privacy loss (``"pld"`` only).

    Returns:
        ε of the whole ledger at ``delta``.

    Raises:
        ValueError: unsupported events or composition, failure-event δ, mixed neighbouring relations, an
            unknown ``accountant``, or ``"rdp"`` for Poisson sampling under replace-one.
    """
    d = float(C.delta_open(delta))
    atoms = _atoms(ledger)
    if accountant == "pld":
        return amplified_pld_eps(atoms, d, float(C.pos("value_discretization_interval", value_discretization_interval)))
    if accountant == "rdp":
        eps = amplified_rdp_eps(atoms, d, sampling_relation(atoms))
        if eps is None:
            raise ValueError("no RDP bound for Poisson sampling under replace-one (use accountant='pld')")
        return eps
    raise ValueError(f"accountant must be 'pld' or 'rdp', got {accountant!r}")


def calibrate_noise_multiplier(eps: float, delta: float, count: int, *, sampling_rate: Optional[float] = None,
                               sample_size: Optional[int] = None, population: Optional[int] = None,
                               neighboring: str = "add_remove", accountant: str = "pld",
                               rtol: float = 1e-7) -> float:
    """The smallest noise multiplier ``sigma/C`` (to ``rtol``, on the safe side) whose ``count`` sampled
    Gaussian releases are ``(eps, delta)``-DP by :func:`amplified_epsilon`: Poisson sampling (``sampling_rate``)
    or fixed-size sampling (``sample_size`` of ``population``). Brent's method on ``log(multiplier)``.

    Args:
        eps, delta: the target privacy (ε finite and ``> 0``, δ in ``(0, 1)``).
        count: the number of sampled releases (e.g. DP-SGD steps).
        sampling_rate: the Poisson rate ``q``; give it, or ``sample_size`` and ``population``.
        sample_size: the fixed sample size (without replacement).
        population: the number of records, for fixed-size sampling.
        neighboring: ``"add_remove"`` or ``"replace_one"`` (Poisson sampling only; fixed-size is replace-one).
        accountant: ``"pld"`` or ``"rdp"``.
        rtol: the relative tolerance of the returned multiplier.

    Returns:
        The multiplier ``sigma/C``, within about ``rtol`` of the smallest one certified and itself certified
        ``(eps, delta)``-DP (when even ``1e-6`` is certified, a multiplier below ``1e-6`` is returned).

    Raises:
        ValueError: both or neither sampling schemes given, invalid values, or no multiplier below ``1e6`` reaches
            ``eps``.
    """
    from scipy.optimize import brentq

    e = float(C.eps_arg(eps))
    d = float(C.delta_open(delta))
    count = int(C.count_arg(count, "count"))
    if (sampling_rate is None) == (sample_size is None):
        raise ValueError("pass sampling_rate (Poisson) or sample_size and population (fixed size), not both")

    def event(m: float) -> Event:
        if sampling_rate is not None:
            return poisson_sampled(m, sampling_rate, count, neighboring=neighboring)
        return fixed_size_sampled(m, int(sample_size or 0), int(population or 0), count)

    def f(logm: float) -> float:
        return amplified_epsilon(event(math.exp(logm)), d, accountant=accountant) - e

    lo, hi = math.log(0.05), math.log(4.0)
    while f(hi) > 0:
        lo, hi = hi, hi + math.log(4.0)
        if hi > math.log(1e6):
            raise ValueError(f"no noise multiplier below 1e6 reaches eps={e}")
    while f(lo) <= 0:
        lo -= math.log(4.0)
        if lo < math.log(1e-6):
            return math.exp(lo)
    root = brentq(f, lo, hi, xtol=1e-12, rtol=rtol / 4)
    m = math.exp(root)
    while amplified_epsilon(event(m), d, accountant=accountant) > e:     # land on the safe side
        m *= 1.0 + rtol
    return m
