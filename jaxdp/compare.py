"""``jaxdp compare``: run your learner against every built-in learner of its problem class on the
benchmark instances at matched (ε, δ), audit its privacy claim, and write a leaderboard.

Steps (docs/guide/compare.md):

1. **Import** the factory (``"module:function"``, a module path or a ``.py`` file
   outside the package). A factory takes any of ``d, T, T_max, eps, delta`` and returns a
   :class:`jaxdp.Learner` or a ``(Learner, params)`` pair; optional attributes:
   ``claimed_eps`` (the ε the learner claims whatever ``eps`` it is given),
   ``deterministic = True`` (it ignores its keys), ``name``.
2. **Conformance** (:func:`jaxdp.testing.check_factory`): shapes, key reuse,
   purity, one compilation per grid point. A failure stops the run
   (:class:`jaxdp.testing.ConformanceError`; the CLI exits with status 2).
3. **Audit**: the learner is run on neighbouring loss sequences (all-zero
   losses except the first or the middle round, which takes two different
   loss vectors) and the auditor (:func:`jaxdp.audit.learners.audit_learner`)
   searches events on the actions it plays for a lower bound on its ε. It is
   audited at the ε it claims (``claimed_eps``), else at every ε of the grid
   (a learner compared at ε claims ε-DP). A lower bound above the claim flags it:
   the probability that a learner satisfying its claim is flagged is ≤ α = 1e-7.
4. **Runs**: the learner and every built-in learner of the class
   (:data:`BUILTINS`; each configured by its planner in ``certified`` mode at the
   same (ε, δ), or by its exact calibration where it has no planner; non-private
   references are marked ``ε = ∞``) on every registered benchmark instance
   (:mod:`jaxdp.instances`) with the instances' fixed seeds, at every horizon of
   the ``T`` grid (each learner tuned for its horizon). The runs form a
   :class:`jaxdp.studies.Study`, so they are chunked, saved atomically and resumed.
5. **Leaderboard**: ``leaderboard.csv`` (learner × instance × ε: regret at the
   largest T with a 95% bootstrap CI, the fitted slope of regret in T with its CI,
   switches, the certified ε, the audit's ε lower bound and verdict),
   ``leaderboard.md`` and ``regret_vs_T.png``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import json
import math
import os
import pathlib
import sys
import tempfile
import time
from typing import TYPE_CHECKING, Callable, Optional, Sequence, Union

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["compare", "load_factory", "BUILTINS", "Builtin", "DEFAULTS", "QUICK", "audit_learner",
           "leaderboard_markdown"]

DEFAULTS = dict(eps=(0.1, 1.0), delta=1e-6, T=(1024, 4096, 16384), d=16, seeds=64, audit_n=200_000, audit_T=32)
QUICK = dict(eps=(1.0,), delta=1e-6, T=(256, 1024), d=8, seeds=8, audit_n=20_000, audit_T=16)
SUPPORTED = ("experts", "realizable-experts", "oco-ball", "oco-simplex")


# --------------------------------------------------------------------------- built-in learners


@dataclasses.dataclass(frozen=True)
class Builtin:
    """A built-in learner of a problem class.

    ``make(d, T, T_max, eps, delta, problem) -> (learner, params, eps_certified)``: the learner
    (the same object for every ``T <= T_max`` and ε, so a sweep compiles once) and its parameters
    at horizon ``T`` and privacy ``(eps, delta)``; ``eps_certified = inf`` for a non-private
    reference. Raises ``ValueError`` where the request cannot be certified.
    """

    name: str
    make: Callable[..., tuple]
    private: bool
    how: str


def _plan(name: str, **kw):
    from . import registry

    plan = registry.get_planner(name).fn(mode="certified", **kw)
    if not plan.certified:
        raise ValueError(f"{name}: the planner cannot certify eps={kw.get('eps')}, delta={kw.get('delta')}")
    return plan


def _hedge(d, T, T_max, eps, delta, problem):
    from .experts import hedge, hedge_params

    return hedge(d), hedge_params(d, T), math.inf


def _l2p_mw(d, T, T_max, eps, delta, problem):
    from .lazy import l2p_mw, l2p_mw_params

    plan = _plan("l2p_mw", eps=eps, delta=delta, T=T, d=d)
    p = plan.params
    # traced batch size: one compilation for every (T, eps) of the sweep
    return l2p_mw(d, None), l2p_mw_params(p["eta"], p["p"], int(p["B"])), float(plan.eps_certified)


def _tree_ftrl(d, T, T_max, eps, delta, problem):
    from .lazy import tree_ftrl_experts, tree_ftrl_params

    noise = "gaussian" if delta > 0 else "laplace"
    # the tree is sized (and its noise calibrated) for T_max >= T: certified for every T <= T_max
    return tree_ftrl_experts(d, T_max, noise), tree_ftrl_params(d, T, eps, delta, T_max=T_max), float(eps)


def _sparse_vector(d, T, T_max, eps, delta, problem):
    from .realizable import params_from_plan, sparse_vector_experts

    plan = _plan("sparse_vector_experts", eps=eps, delta=delta, T=T, d=d)
    return sparse_vector_experts(d), params_from_plan(plan), float(plan.eps_certified)


def _potential(d, T, T_max, eps, delta, problem):
    from .realizable import params_from_plan, potential_experts

    plan = _plan("potential_experts", eps=eps, delta=delta if eps < 1 else 0.0, T=T, d=d)
    return potential_experts(d), params_from_plan(plan), float(plan.eps_certified)


def _dp_ftrl(d, T, T_max, eps, delta, problem):
    from .oco.dp_ftrl import dp_ftrl, dp_ftrl_params

    plan = _plan("dp_ftrl", eps=eps, delta=delta, T=T, d=d, setting="general")
    # noise for the T_max tree the learner carries (certified for every T <= T_max); lambda tuned for T
    sigma = _plan("dp_ftrl", eps=eps, delta=delta, T=T_max, d=d, setting="general").params["sigma"]
    p = plan.params
    return dp_ftrl(problem, T_max), dp_ftrl_params(p["lam"], sigma, p["clip"]), float(plan.eps_certified)


def _ftrl_nonprivate(d, T, T_max, eps, delta, problem):
    from .oco.dp_ftrl import dp_ftrl, dp_ftrl_params

    lam = math.sqrt(T)   # lambda D^2 + T L^2 / lambda with D = L = 1
    return dp_ftrl(problem, T_max), dp_ftrl_params(lam, 0.0, 1.0), math.inf


_EXPERTS = (
    Builtin("hedge", _hedge, False, "non-private reference, eta = sqrt(8 ln d / T)"),
    Builtin("l2p_mw", _l2p_mw, True, "planner l2p_mw, mode certified (Lazy private online learning, Thm 3.10)"),
    Builtin("tree_ftrl", _tree_ftrl, True, "binary-tree noisy Hedge, noise calibrated to (eps, delta) for T_max"),
)
_REALIZABLE = _EXPERTS + (
    Builtin("sparse_vector", _sparse_vector, True,
            "planner sparse_vector_experts, mode certified (Realizable private online optimization, Thm 1)"),
    Builtin("potential", _potential, True,
            "planner potential_experts, mode certified (Realizable private online optimization, Thms 6-7)"),
)
_OCO = (
    Builtin("ftrl", _ftrl_nonprivate, False, "non-private reference: FTRL with lambda = sqrt(T)"),
    Builtin("dp_ftrl", _dp_ftrl, True, "planner dp_ftrl (setting general), mode certified; tree noise for T_max"),
)
BUILTINS: dict[str, tuple] = {"experts": _EXPERTS, "realizable-experts": _REALIZABLE, "oco-ball": _OCO,
                              "oco-simplex": _OCO}


# --------------------------------------------------------------------------- factories


def load_factory(spec: Union[str, Callable]) -> Callable:
    """``"module:function"`` (dotted module importable from the current directory, or a path to a
    ``.py`` file) -> the function. A callable is returned unchanged."""
    if callable(spec):
        return spec
    if not isinstance(spec, str) or ":" not in spec:
        raise ValueError(f"factory must be MODULE:FACTORY (e.g. my_learner:make or path/to/file.py:make), got {spec!r}")
    mod_name, _, attr = spec.rpartition(":")
    if not mod_name or not attr:
        raise ValueError(f"factory must be MODULE:FACTORY, got {spec!r}")
    if mod_name.endswith(".py") or os.sep in mod_name or "/" in mod_name:
        path = pathlib.Path(mod_name).expanduser().resolve()
        if not path.is_file():
            raise FileNotFoundError(f"factory module {mod_name!r} not found")
        name = "jaxdp_user_" + hashlib.sha1(str(path).encode()).hexdigest()[:10]
        mspec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(mspec)
        sys.modules[name] = mod
        mspec.loader.exec_module(mod)
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            mod = importlib.import_module(mod_name)
        except ModuleNotFoundError as e:
            raise ValueError(f"cannot import module {mod_name!r} for factory {spec!r}: {e}") from None
    fn = getattr(mod, attr, None)
    if fn is None or not callable(fn):
        raise ValueError(f"module {mod_name!r} has no callable {attr!r}")
    return fn


def _factory_id(factory: Callable) -> dict:
    """Name and source hash of the factory (a changed learner is a different config: never mixed on resume)."""
    mod = inspect.getmodule(factory)
    try:
        src = inspect.getsource(mod) if mod is not None else inspect.getsource(factory)
    except (OSError, TypeError):
        src = ""
    return {"factory": f"{getattr(factory, '__module__', '?')}:{getattr(factory, '__qualname__', '?')}",
            "source_sha1": hashlib.sha1(src.encode()).hexdigest()[:16] if src else None}


def _user_name(factory: Callable, builtin_names) -> str:
    name = str(getattr(factory, "name", None) or getattr(factory, "__name__", "yours"))
    return f"{name} (yours)" if name in builtin_names else name


# --------------------------------------------------------------------------- audit


def _neighbours(problem_class: str, d: int, T: int):
    """Neighbouring loss sequences (replace one loss), ``{label: (x0, x1)}`` as ``(T, d)`` arrays."""
    import jax.numpy as jnp

    z = np.zeros((T, d), np.float32)
    pairs = {}
    if problem_class in ("experts", "realizable-experts"):
        a = z.copy()
        a[0, 0] = 1.0
        pairs["first loss, expert 0 loses"] = (z, a)
        b = z.copy()
        b[T // 2, 0] = 1.0
        pairs["middle loss, expert 0 loses"] = (z, b)
        c = np.ones((T, d), np.float32)
        c[:, 0] = 0.0
        c2 = c.copy()
        c2[0] = 1.0
        c2[0, 1] = 0.0
        pairs["first loss favours expert 1 instead of 0"] = (c, c2)
    else:
        a = z.copy()
        a[0, 0] = 1.0
        pairs["first gradient e_0 vs 0"] = (z, a)
        b = z.copy()
        b[0, 0] = -1.0
        pairs["first gradient e_0 vs -e_0"] = (a, b)
    return {k: (jnp.asarray(x0), jnp.asarray(x1)) for k, (x0, x1) in pairs.items()}


def _play_fn(learner, params, problem_class):
    """``(key, losses) -> actions x_1..x_{T+1}`` of one run (the audited output)."""
    import jax
    import jax.numpy as jnp

    b = max(1, int(learner.block_size)) if learner.end_block is not None else 1

    def play(key, losses):
        k_init, k_step, k_block = jax.random.split(key, 3)
        st = learner.init(k_init, params)

        def body(st, t):
            st2, _ = learner.step(jax.random.fold_in(k_step, t), st, losses[t], params)
            if learner.end_block is not None:
                st2 = jax.lax.cond((t + 1) % b == 0,
                                   lambda s: learner.end_block(jax.random.fold_in(k_block, t), s, params)[0],
                                   lambda s: s, st2)
            return st2, st.x

        last, xs = jax.lax.scan(body, st, jnp.arange(losses.shape[0], dtype=jnp.int32))
        return jnp.concatenate([xs, last.x[None]])

    return play


def audit_learner(learner, params, *, problem_class: str, d: int, T: int, claimed_eps: float,
                  claimed_delta: float, n: int, seed: int = 0, name: str = "learner"):
    """Empirical privacy audit of a learner on neighbouring loss sequences (module docstring, step 3).

    Uses the auditor's learner audit (:func:`jaxdp.audit.learners.audit_learner`: a family of
    replace-one pairs of loss sequences, here changing the first or the middle round, and a search
    over events on the actions ``x_1..x_{T+1}``). Returns an ``AuditReport``.
    """
    import jax

    try:
        from .audit.learners import audit_learner as _audit_learner
    except ImportError:  # pragma: no cover - an auditor without the learner audit
        _audit_learner = None
    rounds = (0, T // 2)
    if _audit_learner is not None:
        return _audit_learner(learner, params, T=T, d=d, claimed_eps=claimed_eps, claimed_delta=claimed_delta,
                              n=n, key=jax.random.key(seed), rounds=rounds, name=name)
    return _audit_fallback(learner, params, problem_class, d, T, claimed_eps, claimed_delta, n, seed, name, rounds)


def _audit_fallback(learner, params, problem_class, d, T, claimed_eps, claimed_delta, n, seed, name,
                    rounds):  # pragma: no cover - used only with an auditor lacking ``audit.learners``
    import jax
    import jax.numpy as jnp

    from .audit import SearchEvents, audit

    play = _play_fn(learner, params, problem_class)
    pairs = _neighbours(problem_class, d, T)
    if problem_class in ("experts", "realizable-experts"):
        events = SearchEvents(statistic=lambda xs: jnp.sum(xs[1:] == 0).astype(jnp.float32),
                              cell=lambda xs: xs[1].astype(jnp.int32), n_cells=d)
    else:
        events = SearchEvents(statistic=lambda xs: jnp.sum(xs[1:, 0]))
    key = jax.random.key(seed)
    best = None
    for i, (x0, x1) in enumerate(pairs.values()):
        rep = audit(play, x0, x1, claimed_eps=claimed_eps, claimed_delta=claimed_delta, events=events, n=n,
                    key=jax.random.fold_in(key, i), confidence=1 - 1e-7 / len(pairs), name=name)
        if best is None or rep.eps_lower > best.eps_lower:
            best = rep
    return best


# --------------------------------------------------------------------------- the comparison


def _as_tuple(v, cast) -> tuple:
    if isinstance(v, str):
        v = [t for t in v.replace(";", ",").split(",") if t.strip()]
    if np.ndim(v) == 0:
        v = [v]
    return tuple(cast(x) for x in v)


def _atomic_write(path: pathlib.Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _validate(problem, eps, delta, T, d, seeds, claimed_eps):
    if problem not in SUPPORTED:
        from .instances import PROBLEM_CLASSES

        other = [c for c in PROBLEM_CLASSES if c not in SUPPORTED]
        raise ValueError(f"problem must be one of {list(SUPPORTED)} (online classes; {other} are one-shot and not "
                         f"compared yet), got {problem!r}")
    for e in eps:
        if not (math.isfinite(e) and e > 0):
            raise ValueError(f"eps must be positive and finite, got {e!r}")
    if not (0 < delta < 1):
        raise ValueError(f"delta must be in (0, 1) (the built-ins are compared at (eps, delta)), got {delta!r}")
    for t in T:
        if t < 16:
            raise ValueError(f"T must be integers >= 16, got {t!r}")
    if d < 2:
        raise ValueError(f"d must be an integer >= 2, got {d!r}")
    if seeds < 2:
        raise ValueError(f"seeds must be an integer >= 2 (confidence intervals), got {seeds!r}")
    if claimed_eps is not None and not (math.isfinite(claimed_eps) and claimed_eps > 0):
        raise ValueError(f"claimed_eps must be positive and finite, got {claimed_eps!r}")


def compare(factory: Union[str, Callable, None] = None, problem: str = "experts", *,
            eps: Union[float, Sequence[float], str, None] = None, delta: Optional[float] = None,
            T: Union[int, Sequence[int], str, None] = None, d: Optional[int] = None, seeds: Optional[int] = None, quick: bool = False,
            out: Union[str, os.PathLike, None] = None, claimed_eps: Optional[float] = None,
            learners: Optional[Sequence[str]] = None, instances: Optional[Sequence[str]] = None,
            audit: bool = True, audit_n: Optional[int] = None, progress: bool = False, plot: bool = True,
            md: Union[str, os.PathLike, None] = None, log: Optional[Callable[[str], None]] = None) -> "pd.DataFrame":
    """Compare a learner with the built-in learners of ``problem`` on the benchmark instances.

    Args:
      factory: ``"module:function"`` or a callable ``(d, T, T_max, eps, delta) -> Learner | (Learner, params)``
        (any subset of the arguments; ``T_max`` is the sweep's largest horizon, for static sizes);
        ``None`` runs the built-ins only (the built-in leaderboard).
      problem: ``experts``, ``realizable-experts``, ``oco-ball`` or ``oco-simplex``.
      eps, delta: the privacy levels every learner is run at (matched); defaults :data:`DEFAULTS`
        (``--quick``: :data:`QUICK`).
      T: the horizons (regret at the largest; the slope in T is fitted over all); d: the dimension.
      seeds: seeds per instance (the first ones of each instance's fixed list).
      out: results directory (resumable; default: a temporary directory).
      claimed_eps: the ε the learner claims (default: the factory's ``claimed_eps`` attribute, else
        each ε it is run at).
      learners, instances: subsets of the built-in learners / registered instances.
      audit: run the privacy audit of the user's learner (``audit_n`` runs per neighbouring input).
      md: also write the Markdown leaderboard to this path (e.g. a docs page).

    Returns the leaderboard as a ``pandas.DataFrame`` (also written to ``out/leaderboard.csv``,
    with ``leaderboard.md`` and ``regret_vs_T.png``). Raises
    :class:`jaxdp.testing.ConformanceError` if the learner fails the conformance checks.
    """
    from . import instances as inst_mod
    from .studies.framework import Study, run_study

    base = QUICK if quick else DEFAULTS
    eps = _as_tuple(base["eps"] if eps is None else eps, float)
    delta = float(base["delta"] if delta is None else delta)
    T = tuple(sorted(set(_as_tuple(base["T"] if T is None else T, int))))
    d = int(base["d"] if d is None else d)
    seeds = int(base["seeds"] if seeds is None else seeds)
    audit_n = int(base["audit_n"] if audit_n is None else audit_n)
    _validate(problem, eps, delta, T, d, seeds, claimed_eps)
    t_start = time.perf_counter()
    _log = log or (lambda s: None)

    def say(msg):
        _log(f"[{time.perf_counter() - t_start:6.1f}s] {msg}")

    builtins = list(BUILTINS[problem])
    if learners is not None:
        known = {b.name for b in builtins}
        for nm in learners:
            if nm not in known:
                raise ValueError(f"unknown built-in learner {nm!r} for {problem}; known: {', '.join(sorted(known))}")
        builtins = [b for b in builtins if b.name in learners]
    insts = inst_mod.instances(problem)
    if instances is None and quick:
        insts = [i for i in insts if i.quick]
    if instances is not None:
        known = {i.name for i in insts}
        for nm in instances:
            if nm not in known:
                raise ValueError(f"unknown instance {nm!r} for {problem}; known: {', '.join(sorted(known))}")
        insts = [i for i in insts if i.name in instances]
    insts = [i for i in insts if d >= i.min_d]
    if not insts:
        raise ValueError(f"no benchmark instance of {problem} allows d={d}")
    n_avail = min(len(i.seeds) for i in insts)
    if seeds > n_avail:
        raise ValueError(f"seeds must be <= {n_avail} (the instances' fixed seed lists), got {seeds}")
    T_max = max(T)

    # 1. the user's learner: import; the configuration; a results directory of another run is refused
    user, user_name, fid, report = None, None, None, None
    if factory is not None:
        user = load_factory(factory)
        user_name = _user_name(user, {b.name for b in builtins})
        fid = _factory_id(user)
        if isinstance(factory, str):
            fid["spec"] = factory
        if claimed_eps is None and getattr(user, "claimed_eps", None) is not None:
            claimed_eps = float(user.claimed_eps)
            _validate(problem, eps, delta, T, d, seeds, claimed_eps)
    config = {"problem": problem, "eps": list(eps), "delta": delta, "T": list(T), "d": d, "seeds": seeds,
              "instances": [i.name for i in insts], "learners": [b.name for b in builtins],
              "benchmark_version": inst_mod.VERSION, "user": fid, "user_name": user_name,
              "claimed_eps": claimed_eps, "quick": bool(quick)}
    if out is None:
        out = tempfile.mkdtemp(prefix="jaxdp-compare-")
    out = pathlib.Path(out)
    manifest = out / "manifest.json"
    if manifest.exists():
        from .studies import framework as _fw

        norm = getattr(_fw, "_normalized", lambda x: x)
        old = json.loads(manifest.read_text())
        new = json.loads(json.dumps(config, default=str))
        if old.get("study") != "compare" or norm(old.get("config")) != norm(new):
            raise ValueError(f"results directory {str(out)!r} holds another run ({old.get('study')!r} with another "
                             "configuration, learner source or benchmark version); use another --out or delete it")

    # 2. conformance: stop with a clear message before any benchmark runs
    if user is not None:
        from .testing import check_factory

        first = insts[0]
        adv, ap = first.build(d, min(T_max, 64), eps[0])
        say(f"conformance checks of {user_name} on {first.name} ...")
        report = check_factory(user, adv, first.problem(d), ap, d=d, T=min(T_max, 64), eps=eps, delta=delta)
        say("conformance: passed (" + ", ".join(report.checks) + ")")
    out.mkdir(parents=True, exist_ok=True)

    # 3. audit (cached in out/audit.json under the same config)
    audits = {}
    if user is not None and audit:
        audits = _run_audits(user, report, problem, d, eps, delta, claimed_eps, audit_n, config, out, say,
                             base["audit_T"])

    # 4. runs as a study
    names = ([user_name] if user is not None else []) + [b.name for b in builtins]
    by_name = {b.name: b for b in builtins}
    by_inst = {i.name: i for i in insts}
    points = [dict(learner=nm, instance=i.name, eps=float(e), T=int(t), d=d)
              for nm in names for i in insts for e in eps for t in T]

    def build(p):
        inst = by_inst[p["instance"]]
        prob = inst.problem(p["d"])
        if p["learner"] == user_name:
            from .testing import call_factory

            lrn, params = call_factory(user, d=p["d"], T=p["T"], T_max=T_max, eps=p["eps"], delta=delta)
            e_cert = float(claimed_eps) if claimed_eps is not None else p["eps"]
        else:
            try:
                lrn, params, e_cert = by_name[p["learner"]].make(p["d"], p["T"], T_max, p["eps"], delta, prob)
            except ValueError as e:   # the planner cannot certify this (eps, delta, T, d)
                raise _NotCertified(str(e)) from None
        adv, ap = inst.build(p["d"], p["T"], p["eps"], T_max=T_max)
        return inst, prob, lrn, params, adv, ap, e_cert

    def run(pts, seed_idx):
        return _run_chunk(pts, seed_idx, build, T_max)

    def analyze(df):
        return {"leaderboard": _leaderboard(df, audits, user_name, builtins, T_max)}

    def plot_fn(df, outdir):
        return [_plot(df, outdir)]

    study = Study(name="compare", points=points, seeds=seeds, run=run, group_by=("learner", "instance", "eps"),
                  analyze=analyze, plot=plot_fn if plot else None, config=config, points_per_chunk=len(T),
                  description=f"jaxdp compare on {problem}")
    say(f"{len(names)} learners x {len(insts)} instances x {len(eps)} eps x {len(T)} horizons x {seeds} seeds "
        f"-> {out}")
    res = run_study(study, out, progress=progress, plot=plot)
    say(f"runs: {res.chunks_run} chunks run, {res.chunks_skipped} already done")
    lb = res.tables.get("leaderboard")
    if lb is None:
        raise RuntimeError(f"compare: the run in {out} is incomplete; rerun to resume")
    text = leaderboard_markdown(lb, config, audits)
    _atomic_write(out / "leaderboard.md", text)
    if md is not None:
        pathlib.Path(md).parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(pathlib.Path(md), text)
    say(f"leaderboard: {out / 'leaderboard.csv'}, {out / 'leaderboard.md'}")
    lb.attrs["out"] = str(out)
    lb.attrs["audits"] = audits
    return lb


def _run_audits(user, report, problem, d, eps, delta, claimed_eps, n, config, out, say, T_a):
    from .testing import call_factory

    path = out / "audit.json"
    key = hashlib.sha1(json.dumps(dict(config, audit_n=n, audit_T=T_a), sort_keys=True,
                                  default=str).encode()).hexdigest()[:16]
    if path.exists():
        old = json.loads(path.read_text())
        if old.get("key") == key:
            say("audit: reusing " + str(path))
            return {float(k): v for k, v in old["audits"].items()}
    levels = [float(claimed_eps)] if claimed_eps is not None else list(eps)
    res = {}
    for e in levels:
        lrn, params = call_factory(user, d=d, T=T_a, T_max=T_a, eps=e, delta=delta)
        say(f"audit at claimed eps={e:g} ({n} runs per input, T={T_a}, d={d}) ...")
        rep = audit_learner(lrn, params, problem_class=problem, d=d, T=T_a, claimed_eps=e, claimed_delta=delta,
                            n=n, name=config["user_name"])
        say(str(rep).splitlines()[0] + f"  (eps lower bound {rep.eps_lower:.3g})")
        res[e] = {"claimed_eps": e, "claimed_delta": delta, "eps_lower": float(rep.eps_lower),
                  "violation": bool(rep.violation), "verdict": rep.verdict, "report": str(rep)}
    _atomic_write(path, json.dumps({"key": key, "audits": {str(k): v for k, v in res.items()}}, indent=2))
    return res


class _NotCertified(Exception):
    pass


def _run_chunk(pts, seed_idx, build, T_max):
    """All horizons of one (learner, instance, eps) in one vmapped call (grid over T). A point whose
    built-in cannot be certified at the requested (eps, delta) gets NaN metrics and ``certified = 0``."""
    import jax
    import jax.numpy as jnp

    from .core import simulate

    n = len(seed_idx)
    built = []
    for p in pts:
        try:
            built.append(build(p))
        except _NotCertified as e:
            print(f"jaxdp compare: {p['learner']} at eps={p['eps']:g}, T={p['T']}: {e}", file=sys.stderr)
            built.append(None)
    ok = [b for b in built if b is not None]
    out_ok = []
    if ok:
        inst, prob, lrn, _, adv, _, _ = ok[0]
        for b in ok[1:]:
            if b[2] != lrn or b[4] != adv:
                raise RuntimeError(f"{pts[0]['learner']}: a different Learner/adversary object for another horizon; "
                                   "the factory must return the same Learner for every grid point")
        keys = inst.keys()[np.asarray(seed_idx)]
        stack = lambda *v: jnp.stack([jnp.asarray(x) for x in v])  # noqa: E731
        params = jax.tree_util.tree_map(stack, *[b[3] for b in ok])
        adv_params = jax.tree_util.tree_map(stack, *[b[5] for b in ok])
        Ts = np.asarray([p["T"] for p, b in zip(pts, built) if b is not None], np.int64)
        grid_keys = jnp.broadcast_to(keys[None], (len(ok),) + keys.shape)
        res = simulate(lrn, adv, prob, params, adv_params, jax.random.clone(grid_keys), Ts, T_max=T_max, grid=True)
        for g, b in enumerate(ok):
            out_ok.append({
                "regret": res["regret"][g].astype(float), "loss": res["loss"][g].astype(float),
                "best_loss": res["best_loss"][g].astype(float),
                "expected_regret": res["expected_regret"][g].astype(float) if "expected_regret" in res
                else np.full(n, np.nan),
                "switches": res["switches"][g].astype(float) if "switches" in res else np.full(n, np.nan),
                "eps_certified": np.full(n, b[6], float), "certified": np.ones(n)})
    nan = {k: np.full(n, np.nan) for k in ("regret", "loss", "best_loss", "expected_regret", "switches",
                                           "eps_certified")}
    it = iter(out_ok)
    return [next(it) if b is not None else dict(nan, certified=np.zeros(n)) for b in built]


# --------------------------------------------------------------------------- leaderboard


def _leaderboard(df, audits, user_name, builtins, T_max):
    import pandas as pd

    from .studies.framework import fit_slopes, summarize

    by = ["learner", "instance", "eps"]
    top = df[df["T"] == T_max]
    s = summarize(top, by, ["regret", "switches"], n_boot=1000)
    sl = fit_slopes(df, "T", "regret", by=by, upper_half=False, n_boot=300)
    lb = s.merge(sl[by + ["slope", "slope_lo", "slope_hi"]], on=by, how="left")
    lb.insert(3, "T", T_max)
    cert = top.groupby(by).agg(eps_certified=("eps_certified", "first"), certified=("certified", "min")).reset_index()
    lb = lb.merge(cert, on=by, how="left")
    lb["certified"] = lb["certified"].fillna(0).astype(bool)
    info = {b.name: b for b in builtins}
    lb["kind"] = [("yours" if nm == user_name else ("private" if info[nm].private else "non-private reference"))
                  for nm in lb["learner"]]
    lb["audit_eps_lower"] = np.nan
    lb["audit"] = ""
    for i, row in lb.iterrows():
        if row["learner"] != user_name or not audits:
            continue
        a = audits.get(float(row["eps"])) or (next(iter(audits.values())) if len(audits) == 1 else None)
        if a is None:
            continue
        lb.at[i, "audit_eps_lower"] = a["eps_lower"]
        lb.at[i, "audit"] = "FLAGGED: not private at the claimed eps" if a["violation"] else "consistent"
    lb["rank"] = lb.groupby(["instance", "eps"])["regret_mean"].rank(method="min").fillna(0).astype(int)
    lb = lb.sort_values(["instance", "eps", "rank", "learner"]).reset_index(drop=True)
    cols = ["instance", "eps", "rank", "learner", "kind", "T", "regret_mean", "regret_lo", "regret_hi", "slope",
            "slope_lo", "slope_hi", "switches_mean", "eps_certified", "certified", "audit_eps_lower", "audit",
            "n_seeds"]
    return pd.DataFrame(lb[cols])


def _command(config: dict) -> str:
    """The ``jaxdp compare`` command line that reproduces a run of this configuration."""
    user = (config.get("user") or {}).get("spec") or (config.get("user") or {}).get("factory")
    parts = ["jaxdp compare"] + ([user] if user else []) + [
        f"--problem {config['problem']}", "--eps " + ",".join(f"{e:g}" for e in config["eps"]),
        f"--delta {config['delta']:g}", "--T " + ",".join(str(t) for t in config["T"]), f"--d {config['d']}",
        f"--seeds {config['seeds']}"]
    if config.get("claimed_eps") is not None:
        parts.append(f"--claimed-eps {config['claimed_eps']:g}")
    return " ".join(parts)


def _fmt(x, nd=3):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "∞" if isinstance(x, float) and x == math.inf else "–"
    return f"{x:.{nd}g}"


def leaderboard_markdown(lb, config: dict, audits: dict) -> str:
    """The leaderboard as Markdown: one table per instance (rows ranked by regret at the largest T)."""
    from .instances import get_instance

    lines = [f"# Leaderboard: {config['problem']}", "",
             f"Benchmark version {config['benchmark_version']}; d = {config['d']}, δ = {config['delta']:g}, "
             f"T ∈ {{{', '.join(str(t) for t in config['T'])}}}, {config['seeds']} seeds per instance "
             f"(the first of each instance's fixed seed list). Regret is the realized regret at "
             f"T = {max(config['T'])} (mean and 95% bootstrap CI over seeds); the slope is the least-squares "
             "slope of log mean regret in log T over the T grid (95% bootstrap CI); ε cert. is the ε its "
             "planner certifies (∞: non-private reference). Built-ins are configured by their planners in "
             "certified mode.", "", "Reproduce (resumable; add `--out DIR`):", "", "```bash", _command(config),
             "```", ""]
    if audits:
        for e, a in sorted(audits.items()):
            lines.append(f"**Privacy audit of {config['user_name']}** at claimed ε = {e:g}, δ = "
                         f"{a['claimed_delta']:g}: ε lower bound {a['eps_lower']:.3g} → "
                         f"**{'FLAGGED (the claim is refuted)' if a['violation'] else 'consistent with the claim'}**.")
        lines.append("")
    for inst_name, g in lb.groupby("instance", sort=False):
        inst = get_instance(inst_name)
        lines += [f"## {inst_name}", "", f"{inst.description}. {inst.reference}.", "",
                  "| ε | rank | learner | regret (95% CI) | slope in T (95% CI) | switches | ε cert. / claimed | "
                  "audit ε ≥ |",
                  "|---|---|---|---|---|---|---|---|"]
        for _, r in g.iterrows():
            name = r["learner"]
            if r["kind"] == "yours":
                name = f"**{name}**"
                if str(r["audit"]).startswith("FLAGGED"):
                    name += " ⚠ NOT PRIVATE (audit)"
            elif r["kind"] == "non-private reference":
                name += " (non-private)"
            if not r["certified"]:
                lines.append(f"| {r['eps']:g} | – | {name} | not run: its planner cannot certify this (ε, δ, T, d) "
                             "| | | | |")
                continue
            lines.append(
                f"| {r['eps']:g} | {int(r['rank'])} | {name} | {_fmt(r['regret_mean'], 4)} "
                f"[{_fmt(r['regret_lo'])}, {_fmt(r['regret_hi'])}] | {_fmt(r['slope'], 2)} "
                f"[{_fmt(r['slope_lo'], 2)}, {_fmt(r['slope_hi'], 2)}] | {_fmt(r['switches_mean'], 4)} | "
                f"{_fmt(r['eps_certified'])} | {_fmt(r['audit_eps_lower'])} |")
        lines.append("")
    return "\n".join(lines)


def _plot(df, outdir):
    from .studies.framework import plot_panels, summarize

    s = summarize(df, ["learner", "instance", "eps", "T"], ["regret"], n_boot=200)
    s = s[s["regret_mean"] > 0]
    s = s.assign(series=[f"{a} eps={e:g}" for a, e in zip(s["learner"], s["eps"])])
    return plot_panels(s, "instance", "T", "regret", pathlib.Path(outdir) / "regret_vs_T.png", hue="series",
                       ylabel="regret at T", title=lambda v: str(v))


class _CallableModule(type(sys)):
    """``jaxdp.compare`` is both this module and the function: ``jaxdp.compare(factory, ...)`` works
    whichever of the two an earlier import left on the package."""

    def __call__(self, *args, **kwargs):
        return compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
