"""The benchmark registry: fixed, versioned problem instances per problem class.

An :class:`Instance` is an adversary (online classes) or a data generator
(label DP) with fixed parameters, a fixed base seed and a fixed list of seed
indices: ``seed_keys(instance.base_seed, instance.seeds)`` gives the same loss
sequences on every machine and in every version of jaxdp that reports the same
:data:`VERSION`, so a number computed on benchmark ``VERSION`` can be cited and
reproduced. Any change of an instance's parameters, seeds or loss stream bumps
:data:`VERSION`; the tests pin the first losses of every instance.

Problem classes (:data:`PROBLEM_CLASSES`):

* ``experts`` — prediction from expert advice, losses in ``[0, 1]^d``:
  i.i.d. noise (``Δ = 0``, the √T regime), a planted expert (``Δ = 0.1``),
  alternating batches (the worst case of batch-constant lazy learners,
  LAZY §4), the lazy lower bound (LAZY Thm 4.2, epochs built for the run's T
  and ε), and replayed real-data streams where ``jaxdp.data`` provides them.
* ``realizable-experts`` — some expert has zero loss: realizable i.i.d.
  (``q = 1/2``, ``x*`` never loses), halving (an adversary that forces ≈ log₂ d
  eliminations), and the lower bound of REAL Thm 5 (``Ω(log d / ε)``).
* ``oco-ball`` — linear losses on the unit ball (planted direction, Rademacher,
  alternating signs) and the smooth realizable squared losses of REAL §4.
* ``oco-simplex`` — linear losses on the probability simplex.
* ``bandits`` — ``K = d`` arms, bandit feedback, pseudo-regret: Bernoulli arms with reward means
  ``linspace(0.1, 0.9, K)`` (SMPyBandits' standard instance at ``K = 9``), one arm ``0.2`` ahead
  of the rest (``gap``), and the oblivious "late arm" (arm 0 pays 0 for ``T/3`` rounds and 1 after,
  built for the run's ``T``): ``docs/algorithms/bandits.md#environments``.
* ``label-dp`` — one-shot estimation: smooth, margin-hard and minimax-hard
  classification, bounded and heavy-tailed regression (LABEL Thms 2–12).

Instances whose construction depends on the horizon or the privacy level of
the run (the lower bounds) take ``T`` and ``eps`` in ``build``.

Adaptive instances (``Instance.adaptive``): their adversary is a
:class:`jaxdp.core.types.AdaptiveAdversary` that watches the actions played (docs/guide/concepts.md#adaptive):
``experts`` has ``adaptive-lazy-epochs`` (the epochs of ``lazy-lower-bound``, the same draws for the same
seeds, with loss 1 moved onto the expert played in the previous round: the adaptive version of LAZY Thm 4.2)
and ``punish-last-action`` (loss 1 on the previous round's expert only); ``oco-ball`` and ``oco-simplex``
have ``toward-last-iterate`` (a linear loss pointing at the previous iterate). Their losses are pure
functions of the seed's key and of the actions seen; regret is against the best fixed action on the
realised sequence, and ``expected_regret`` is NaN there (not unbiased against an adaptive adversary), so
compare ranks on realised regret (as it does on every instance). ``realizable-experts`` has no adaptive
instance (no adaptive adversary keeps an expert at zero loss yet) and ``bandits`` none
(:func:`jaxdp.bandits.as_bandit` refuses an adaptive adversary: one that sees the actions would have to
be restricted to the pulled arm's loss).

Versions:

* ``"1"`` — the oblivious instances.
* ``"2"`` — adds the adaptive instances ``adaptive-lazy-epochs``, ``punish-last-action``,
  ``toward-last-iterate`` and ``toward-last-iterate-simplex`` (and the ``adaptive`` field); every instance
  of version 1 is unchanged (same parameters, seeds and loss streams; pinned by the tests).

Real data: ``real-phishing``, ``real-digits`` and ``real-diabetes`` (experts) replay
the prequential losses of a pool of online predictors on bundled public data sets
(``jaxdp.data``, optional extra ``jaxdp[data]``); they are registered when that
package and its dependencies import (:func:`instances` loads them lazily).

See docs/guide/compare.md.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp

__all__ = [
    "VERSION", "PROBLEM_CLASSES", "ONLINE_CLASSES", "BANDIT_CLASSES", "Instance", "register_instance", "instances",
    "get_instance", "instance_keys",
]

VERSION = "2"
PROBLEM_CLASSES = ("experts", "realizable-experts", "oco-ball", "oco-simplex", "bandits", "label-dp")
#: the full-information online classes (a learner sees the whole loss vector)
ONLINE_CLASSES = ("experts", "realizable-experts", "oco-ball", "oco-simplex")
#: the online classes with bandit feedback (a learner sees the played arm's loss only)
BANDIT_CLASSES = ("bandits",)

N_SEEDS = 64          # the full seed list of every instance: indices 0..63
N_SEEDS_QUICK = 8     # --quick uses the first 8


@dataclasses.dataclass(frozen=True)
class Instance:
    """One benchmark instance.

    Attributes:
        name: the instance's unique name.
        problem_class: one of :data:`PROBLEM_CLASSES` (``"experts"``, ``"realizable-experts"``, ``"oco-ball"``,
            ``"oco-simplex"``, ``"bandits"``, ``"label-dp"``).
        description: what the instance is, in one or two sentences.
        build: ``build(d, T, eps, T_max=None)``: the adversary and its parameters (``(generator, info)`` for
            ``label-dp``); ``d`` fixes the dimension, ``T`` and ``eps`` matter only for the lower-bound
            constructions, ``T_max`` (the largest horizon of a sweep) for replayed streams (one length for all T).
        problem: ``problem(d) -> Problem`` (how losses act on actions) for the online classes, ``None`` otherwise.
        base_seed: the base of the instance's seed keys (:func:`instance_keys`).
        seeds: the fixed seed indices (``0..63``); ``--quick`` uses the first :data:`N_SEEDS_QUICK`.
        reference: the paper section or documentation page the construction comes from.
        min_d: the smallest dimension the construction allows.
        params: the construction's parameters as ``(name, value)`` pairs (with ``problem_class`` and
            ``base_seed``, what makes two registrations of one name the same instance).
        quick: part of ``--quick`` runs (the real-data replays are not: building their streams runs a pool of
            online predictors in Python).
        data: a real-data replay (needs the optional ``jaxdp[data]`` extra).
        adaptive: the adversary is a :class:`jaxdp.core.types.AdaptiveAdversary` (it watches the actions
            played; ``expected_regret`` is NaN there and only the realised regret is reported).
    """

    name: str
    problem_class: str
    description: str
    build: Callable[..., tuple]
    problem: Optional[Callable[[int], Any]] = None
    base_seed: int = 0
    seeds: tuple = tuple(range(N_SEEDS))
    reference: str = ""
    min_d: int = 2
    params: tuple = ()
    quick: bool = True
    data: bool = False
    adaptive: bool = False

    def keys(self, n: Optional[int] = None) -> jax.Array:
        """Keys of the first ``n`` seeds of the list (all of them by default)."""
        idx = self.seeds if n is None else self.seeds[:n]
        from .core import seed_keys

        return seed_keys(self.base_seed, list(idx))


_REGISTRY: dict[str, Instance] = {}


def register_instance(inst: Instance) -> Instance:
    """Add an instance (names are unique; re-registering the same name with another definition is an error).

    Args:
        inst: the instance.

    Returns:
        ``inst`` itself.

    Raises:
        ValueError: an unknown ``problem_class``, or the name is taken by an instance with other
            ``problem_class``, ``params`` or ``base_seed``.
    """
    if inst.problem_class not in PROBLEM_CLASSES:
        raise ValueError(f"problem_class must be one of {list(PROBLEM_CLASSES)}, got {inst.problem_class!r}")
    old = _REGISTRY.get(inst.name)
    if old is not None and (old.problem_class, old.params, old.base_seed) != (inst.problem_class, inst.params,
                                                                               inst.base_seed):
        raise ValueError(f"instance {inst.name!r} registered twice with different definitions")
    _REGISTRY[inst.name] = inst
    return inst


_DATA_LOADED = False


def _load_data_instances() -> None:
    """Real-data loss streams come from ``jaxdp.data`` (optional extra ``jaxdp[data]``: scikit-learn and
    river). Their instances (:data:`REAL_DATA`) are registered only when that package and its
    dependencies import; ``jaxdp.data`` may also expose ``benchmark_instances() -> list[Instance]``."""
    global _DATA_LOADED
    if _DATA_LOADED:
        return
    _DATA_LOADED = True
    try:
        mod = importlib.import_module("jaxdp.data")
        available = set(mod.available_datasets())
    except Exception:   # the optional extra is not installed
        return
    for i, (name, dataset, desc) in enumerate(REAL_DATA):
        if dataset in available:
            register_instance(Instance(
                name, "experts", f"{desc}: the prequential 0-1 / absolute losses of d online predictors on "
                f"random feature subsets (jaxdp.data.expert_pool_losses, order_seed 0); deterministic, so seeds "
                f"vary only the learner's randomness", _replay(dataset), _experts_problem, base_seed=6001 + i,
                params=(("dataset", dataset), ("order_seed", 0), ("pool_seed", 0)),
                reference="docs/guide/your-data.md#real-data", quick=False, data=True))
    fn = getattr(mod, "benchmark_instances", None)
    if callable(fn):
        for inst in fn():
            register_instance(inst)


REAL_DATA = (("real-phishing", "phishing", "river Phishing (binary classification)"),
             ("real-digits", "digits", "scikit-learn digits (10 classes)"),
             ("real-diabetes", "diabetes", "scikit-learn diabetes (regression)"))


def _replay(dataset: str):
    def build(d, T, eps, T_max=None):
        from .data import expert_pool_losses
        from .experts import ReplayParams, adv_replay

        # one stream of length T_max for every T <= T_max (a prefix of the longer stream), so the
        # horizons of a sweep share one parameter shape
        L = int(T_max or T)
        return adv_replay(d), ReplayParams(losses=jnp.asarray(expert_pool_losses(dataset, L, d, order_seed=0)))

    return build


def instances(problem_class: Optional[str] = None, *, include_data: bool = True) -> list[Instance]:
    """Registered instances (of one problem class), in registration order; ``include_data=False`` leaves out
    the real-data replays.

    Args:
        problem_class: one of :data:`PROBLEM_CLASSES`, or ``None`` for every class.
        include_data: include the real-data replays (registered on first use when ``jaxdp.data`` and its
            dependencies import).

    Returns:
        The list of :class:`Instance`.

    Raises:
        ValueError: an unknown ``problem_class``.
    """
    if problem_class is not None and problem_class not in PROBLEM_CLASSES:
        raise ValueError(f"problem must be one of {list(PROBLEM_CLASSES)}, got {problem_class!r}")
    if include_data:
        _load_data_instances()
    return [i for i in _REGISTRY.values() if (problem_class is None or i.problem_class == problem_class)
            and (include_data or not i.data)]


def get_instance(name: str) -> Instance:
    """The registered instance called ``name`` (the real-data instances are registered first if available).

    Args:
        name: the instance's name.

    Returns:
        The :class:`Instance`: its construction (``build``, ``problem``) and its fixed seeds.

    Raises:
        ValueError: no instance has that name (the message lists the known ones).
    """
    _load_data_instances()
    if name not in _REGISTRY:
        raise ValueError(f"unknown instance {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def instance_keys(name: str, n: Optional[int] = None) -> jax.Array:
    """The PRNG keys of the first ``n`` seeds of a registered instance (all of them by default).

    Args:
        name: the instance's name.
        n: how many seeds, from the start of its seed list; ``None`` for all.

    Returns:
        The batch of keys (:meth:`Instance.keys`).
    """
    return get_instance(name).keys(n)


# --------------------------------------------------------------------------- experts


def _experts_problem(d):
    from .experts import experts_problem

    return experts_problem()


def _bernoulli(gap):
    def build(d, T, eps, T_max=None):
        from .experts import BernoulliParams, bernoulli_experts

        return bernoulli_experts(d), BernoulliParams(gap=jnp.float32(gap))

    return build


ALTERNATING_B = 16


def _alternating(d, T, eps, T_max=None):
    from .experts import AlternatingParams, adv_alternating_batches

    return adv_alternating_batches(d), AlternatingParams(B=jnp.int32(ALTERNATING_B))


def _lazy_epochs(d, T, eps, T_max=None):
    from .experts import LazyEpochsParams, adv_lazy_epochs

    return adv_lazy_epochs(d), LazyEpochsParams(T=jnp.int32(T), eps=jnp.float32(eps), epoch_len=jnp.int32(0))


register_instance(Instance(
    "iid-noise", "experts", "i.i.d. fair-coin losses, no planted expert (gap 0): the sqrt(T) regime",
    _bernoulli(0.0), _experts_problem, base_seed=1001, params=(("gap", 0.0),),
    reference="standard experts lower bound; docs/algorithms/lazy.md"))
register_instance(Instance(
    "planted-expert", "experts", "i.i.d. Bernoulli losses, one random expert with loss Ber(1/2 - 0.1)",
    _bernoulli(0.1), _experts_problem, base_seed=1002, params=(("gap", 0.1),),
    reference="docs/algorithms/lazy.md"))
register_instance(Instance(
    "alternating-batches", "experts",
    f"experts 0 and 1 alternate losing in batches of {ALTERNATING_B} rounds, others always lose: the worst case "
    "of batch-constant lazy learners", _alternating, _experts_problem, base_seed=1003,
    params=(("B", ALTERNATING_B),), reference="Lazy private online learning, Sec. 4; docs/algorithms/lazy.md"))
register_instance(Instance(
    "lazy-lower-bound", "experts",
    "LAZY lower-bound adversary: fair-coin loss vectors constant on E = (T eps)^(4/3) epochs (built for the run's "
    "T and eps)", _lazy_epochs, _experts_problem, base_seed=1004, params=(("epoch_len", 0),),
    reference="Lazy private online learning, Thm 4.2 / App. C; docs/algorithms/lazy.md"))


@functools.lru_cache(maxsize=None)
def _adaptive_adversary(module: str, name: str, d: int):
    """One adversary object per constructor and ``d`` (the adaptive constructors build new closures on every
    call; compare needs the same object for every horizon of a sweep, so it compiles once)."""
    return getattr(importlib.import_module(module, __package__), name)(d)


def _adaptive_lazy_epochs(d, T, eps, T_max=None):
    from .experts import LazyEpochsParams

    return _adaptive_adversary(".experts.adaptive", "adaptive_lazy_epochs", d), LazyEpochsParams(
        T=jnp.int32(T), eps=jnp.float32(eps), epoch_len=jnp.int32(0))


def _punish_last_action(d, T, eps, T_max=None):
    return _adaptive_adversary(".experts.adaptive", "punish_last_action", d), None


register_instance(Instance(
    "adaptive-lazy-epochs", "experts",
    "adaptive: the epochs of lazy-lower-bound (the same draws for the same seeds), with loss 1 moved onto the "
    "expert played in the previous round; a learner that holds its expert pays 1 per round",
    _adaptive_lazy_epochs, _experts_problem, base_seed=1004, params=(("epoch_len", 0), ("adaptive", True)),
    reference="Lazy private online learning, Thm 4.2 and footnote 3; docs/guide/concepts.md#adaptive",
    adaptive=True))
register_instance(Instance(
    "punish-last-action", "experts",
    "adaptive: loss 1 on the expert played in the previous round, 0 elsewhere (deterministic given the actions)",
    _punish_last_action, _experts_problem, base_seed=1005, params=(("adaptive", True),),
    reference="docs/guide/concepts.md#adaptive", adaptive=True))


# --------------------------------------------------------------------------- realizable experts


def _realizable_bernoulli(d, T, eps, T_max=None):
    from .experts import RealizableBernoulliParams, adv_realizable_bernoulli

    return adv_realizable_bernoulli(d), RealizableBernoulliParams(q=jnp.float32(0.5), q_star=jnp.float32(0.0))


HALVING_R = 64


def _halving(d, T, eps, T_max=None):
    from .experts import HalvingParams, adv_realizable_halving

    return adv_realizable_halving(d), HalvingParams(r=jnp.int32(HALVING_R))


def _realizable_lb(d, T, eps, T_max=None):
    from .experts import RealizableLBParams, adv_realizable_lb

    return adv_realizable_lb(d), RealizableLBParams(T=jnp.int32(T), eps=jnp.float32(eps))


register_instance(Instance(
    "realizable-iid", "realizable-experts",
    "one random expert never loses, every other loses w.p. 1/2 each round (L* = 0)", _realizable_bernoulli,
    _experts_problem, base_seed=2001, params=(("q", 0.5), ("q_star", 0.0)),
    reference="Realizable private online optimization, Sec. 3; docs/algorithms/realizable.md"))
register_instance(Instance(
    "halving", "realizable-experts",
    f"half of the surviving experts die every {HALVING_R} rounds until only x* is left (L* = 0, ~log2 d "
    "eliminations)", _halving, _experts_problem, base_seed=2002, params=(("r", HALVING_R),),
    reference="Realizable private online optimization, Sec. 3; docs/algorithms/realizable.md"))
register_instance(Instance(
    "realizable-lower-bound", "realizable-experts",
    "zero losses, then k = ceil(ln d / (2 eps)) rounds where only a random expert j is safe: every DP algorithm "
    "pays Omega(log d / eps)", _realizable_lb, _experts_problem, base_seed=2003,
    reference="Realizable private online optimization, Thm 5; docs/algorithms/realizable.md#lower-bound"))


# --------------------------------------------------------------------------- OCO


def _ball_problem(d):
    from .oco.problems import linear_problem

    return linear_problem(d, 1.0)


def _simplex_problem(d):
    from .oco import Simplex
    from .oco.problems import linear_problem

    return linear_problem(d, domain=Simplex(d))


def _squared_ball_problem(d):
    from .oco.problems import squared_problem

    return squared_problem(d, 1.0)


def _linear(mode, bias=0.2, B=16):
    def build(d, T, eps, T_max=None):
        from .oco.adversaries import adv_linear_oco, linear_oco_params

        return adv_linear_oco(d), linear_oco_params(mode, L=1.0, bias=bias, B=B)

    return build


def _smooth_realizable(d, T, eps, T_max=None):
    from .oco.adversaries import adv_smooth_realizable, smooth_realizable_params

    return adv_smooth_realizable(d), smooth_realizable_params(D=1.0, sigma=0.0)


for _cls, _prob, _off in (("oco-ball", _ball_problem, 3000), ("oco-simplex", _simplex_problem, 4000)):
    _sfx = "" if _cls == "oco-ball" else "-simplex"
    register_instance(Instance(
        f"linear-planted{_sfx}", _cls, "linear losses g_t = +-e_j, a planted coordinate and sign w.p. 0.2, else a "
        "random one", _linear("biased", 0.2), _prob, base_seed=_off + 1, params=(("mode", "biased"), ("bias", 0.2)),
        reference="docs/algorithms/realizable.md"))
    register_instance(Instance(
        f"linear-rademacher{_sfx}", _cls, "linear losses with i.i.d. Rademacher coordinates / sqrt(d) (no signal)",
        _linear("rademacher"), _prob, base_seed=_off + 2, params=(("mode", "rademacher"),),
        reference="docs/algorithms/lazy.md"))
    register_instance(Instance(
        f"linear-alternating{_sfx}", _cls, "a fixed random direction whose sign flips every 16 rounds (worst case "
        "of batch-constant lazy learners)", _linear("alternating", B=16), _prob, base_seed=_off + 3,
        params=(("mode", "alternating"), ("B", 16)), reference="Lazy private online learning, Sec. 4"))
register_instance(Instance(
    "smooth-realizable", "oco-ball", "squared losses (<a_t, x> - <a_t, x*>)^2 / 2, a_t uniform on the sphere, "
    "||x*|| = 1/2 (L* = 0)", _smooth_realizable, _squared_ball_problem, base_seed=3004, min_d=1,
    params=(("D", 1.0), ("sigma", 0.0)),
    reference="Realizable private online optimization, Thm 4; docs/algorithms/realizable.md"))


def _toward_last_iterate(d, T, eps, T_max=None):
    from .oco.adaptive import toward_iterate_params

    return _adaptive_adversary(".oco.adaptive", "toward_last_iterate", d), toward_iterate_params(1.0)


for _cls, _prob, _off in (("oco-ball", _ball_problem, 3000), ("oco-simplex", _simplex_problem, 4000)):
    _sfx = "" if _cls == "oco-ball" else "-simplex"
    register_instance(Instance(
        f"toward-last-iterate{_sfx}", _cls, "adaptive: the linear loss g_t = x_{t-1} / ||x_{t-1}|| pointing at the "
        "previous iterate (e_0 while it is 0): a learner that stays where it was pays ||x|| per round",
        _toward_last_iterate, _prob, base_seed=_off + 5, min_d=1, params=(("L", 1.0), ("adaptive", True)),
        reference="Near-optimal algorithms for private online optimization in the realizable regime, Sec. 2; "
                  "docs/guide/concepts.md#adaptive", adaptive=True))


# --------------------------------------------------------------------------- bandits


def _bandit_problem(d):
    from .bandits import bandit_problem

    return bandit_problem("pseudo")


def _bandit_means(kind: str, K: int):
    import numpy as np

    if kind == "linspace":
        return np.linspace(0.1, 0.9, K)
    m = np.full(K, 0.5)
    m[-1] = 0.5 + BANDIT_GAP
    return m


BANDIT_GAP = 0.2


def _bernoulli_arms(kind: str):
    def build(d, T, eps, T_max=None):
        from .bandits import BernoulliArmsParams, bernoulli_arms

        return bernoulli_arms(d), BernoulliArmsParams(jnp.asarray(_bandit_means(kind, d), jnp.float32))

    return build


def _late_arm(d, T, eps, T_max=None):
    import numpy as np

    from .bandits import SwitchingArmsParams, switching_arms

    a, b = np.full(d, 0.5), np.full(d, 0.5)
    a[0], b[0] = 0.0, 1.0
    return switching_arms(d), SwitchingArmsParams(jnp.asarray(a, jnp.float32), jnp.asarray(b, jnp.float32),
                                                  jnp.int32(int(T) // 3))


register_instance(Instance(
    "bernoulli-linspace", "bandits", "K = d Bernoulli arms with reward means linspace(0.1, 0.9, K) (K = 9: "
    "SMPyBandits' standard instance)", _bernoulli_arms("linspace"), _bandit_problem, base_seed=7001,
    params=(("means", "linspace(0.1, 0.9, K)"),),
    reference="Auer, Cesa-Bianchi, Fischer 2002, Finite-time analysis of the multiarmed bandit problem; "
              "docs/algorithms/bandits.md#environments"))
register_instance(Instance(
    "bernoulli-gap", "bandits", f"K = d Bernoulli arms of reward mean 0.5, the last one 0.5 + {BANDIT_GAP}: "
    "K - 1 arms with the same gap", _bernoulli_arms("gap"), _bandit_problem, base_seed=7002,
    params=(("gap", BANDIT_GAP),), reference="docs/algorithms/bandits.md#study"))
register_instance(Instance(
    "late-arm", "bandits", "oblivious: arm 0 pays reward 0 for the first T/3 rounds and 1 after, the others Ber(1/2); "
    "arm 0 is the best fixed arm (built for the run's T); pseudo-regret can be negative",
    _late_arm, _bandit_problem, base_seed=7003, params=(("switch", "T // 3"),),
    reference="Auer, Cesa-Bianchi, Freund, Schapire 2002, The nonstochastic multiarmed bandit problem; "
              "docs/algorithms/bandits.md#environments"))


# --------------------------------------------------------------------------- label DP (one-shot)


def _label(ctor, **kw):
    def build(d, n, eps, T_max=None):
        from .label_dp import generators as g

        return getattr(g, ctor)(**kw), dict(kw)

    return build


for _i, (_name, _ctor, _kw, _desc, _ref) in enumerate((
        ("label-smooth-cls", "gen_smooth_classification", dict(d=1), "smooth binary classification, beta = gamma = 1",
         "Thms 2, 4"),
        ("label-margin-cls", "gen_margin_classification", dict(a=0.5), "binary classification with margin "
         "exponent gamma = 2 (Hoelder 1/2)", "Thms 2, 4"),
        ("label-bump-cls", "gen_bump_classification", dict(d=1, beta=1.0, gamma=1.0), "minimax-hard bump "
         "classification (random signs on a grid of bumps)", "App. B"),
        ("label-smooth-reg", "gen_smooth_regression", dict(d=1), "bounded regression, binary noise", "Thms 6, 8"),
        ("label-heavy-reg", "gen_heavy_tail_regression", dict(d=1, p=2.0), "heavy-tailed regression "
         "(Student t, p = 2 moments)", "Thms 10, 12"))):
    register_instance(Instance(_name, "label-dp", _desc, _label(_ctor, **_kw), None, base_seed=5001 + _i,  # type: ignore[arg-type]
                               params=tuple(sorted(_kw.items())), min_d=1,  # type: ignore[attr-defined]
                               reference=f"Label DP: theoretical limits, {_ref}; docs/algorithms/label-dp.md"))
