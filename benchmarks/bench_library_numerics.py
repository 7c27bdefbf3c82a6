"""Should three hand-written numerics of jaxdp be replaced by a library? One process, one run, measured side by side.

    python benchmarks/bench_library_numerics.py [--quick] [--out benchmarks/LIBRARY_NUMERICS.md]
                                                [--jp-site /tmp/jp_site]

1. **Gamma sampler** (Thompson sampling's Beta draws): ``jaxdp.bandits.thompson.gamma_mt`` / ``log_gamma_mt``
   (Marsaglia & Tsang, one batched rejection loop, series form of the log acceptance bound for ``d > 64``) vs
   ``jax.random.gamma`` / ``jax.random.loggamma`` (Marsaglia & Tsang per element, literal acceptance bound).
   Speed: ``vmap`` over seeds of a ``lax.scan`` over rounds, ``2K = 18`` shapes a round (Thompson draws
   ``G_a, G_b`` for each of ``K = 9`` arms), shapes ``alpha = 1 + (t * 2^18 / T) u`` with a fixed ``u ~ U(0, 1)``
   per seed and shape, i.e. from 1 to ~2.6e5 (the range a Thompson sampler reaches at ``T = 2^18``); each round
   reduces the draws to Thompson's arm choice (``argmax G_a/(G_a+G_b)``, or ``argmax ln G_a - ln G_b`` for the
   log samplers) so nothing is dead code. Accuracy (float32): Kolmogorov-Smirnov p-values against
   ``scipy.stats.gamma``, draws beyond the ``1e-13`` quantiles, bit-equality of vmapped and unbatched draws, exact
   zeros at shape 0.01, and the consistency of ``gamma`` with ``loggamma``.
2. **Logistic fit** of the learned-event auditor (``jaxdp.privacy.audit.fit_classifier(Logistic(), f0, f1, key)``: pooled
   standardisation, ``steps = 8`` Newton steps, ridge ``l2 * n`` on the weights, not the bias) vs scikit-learn
   ``LogisticRegression`` (``lbfgs`` and ``newton-cholesky``, ``C = 1 / (l2 * n)``, ``n`` = all rows of both
   classes) and ``optax.lbfgs`` (float32, jitted ``while_loop``), all on the same standardised features. Every fit
   is scored by the same float64 objective ``sum_i CE_i + (l2 n / 2) |w|^2``, against a float64 Newton solution
   run to convergence (the reference).
3. **Continual-counting factorizations**: ``jax_privacy`` 2.0.0 (installed with ``pip install --target
   /tmp/jp_site jax-privacy --no-deps``, put on ``sys.path`` by this script only if it imports) vs
   ``jaxdp.privacy.mechanisms.matrix_factorization``: the square-root Toeplitz factorization's sensitivity, max and mean
   squared error at n = 1024, 4096; BLTs optimised for the max error at n = 4096 (same buffer counts, and
   jax_privacy's own buffer-count search) and banded Toeplitz strategies optimised for the mean error, each
   evaluated by both libraries' formulas.

Timing: ``time.perf_counter`` (wall) and ``time.process_time`` (CPU of the whole process, all threads) around
each call, outputs ``block_until_ready``'d. "first" is the first call (trace + compile + run); "run" the median of
the later calls; "compile" the XLA compile events (``jax.monitoring``: jaxpr trace, lowering, backend compile)
recorded during the first call. The optimisers of part 3 build their jitted step inside each call (both
libraries), so they recompile on every call: their "run" is the repeated call's wall time minus the compile
events recorded during it.

Nothing here writes outside ``--out``. ``--quick`` shrinks every size (for a smoke test; the table says so).
"""
from __future__ import annotations

import argparse
import datetime
import importlib
import math
import os
import pathlib
import platform
import re
import statistics
import sys
import time
import traceback

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

HERE = pathlib.Path(__file__).resolve()
ROOT = HERE.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# ----------------------------------------------------------------------------- timing
_COMPILE_EVENTS = ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/jaxpr_to_mlir_module_duration",
                   "/jax/core/compile/backend_compile_duration")
_compile_s = [0.0]


def _listener(event, duration, **_):
    if event in _COMPILE_EVENTS:
        _compile_s[0] += duration


jax.monitoring.register_event_duration_secs_listener(_listener)


def _call(fn, *args, **kw):
    c0, t0, k0 = time.process_time(), time.perf_counter(), _compile_s[0]
    out = jax.block_until_ready(fn(*args, **kw))
    return out, time.perf_counter() - t0, time.process_time() - c0, _compile_s[0] - k0


def timed(fn, *args, repeats=3, **kw):
    """``(out, info)``: first call and the median of ``repeats`` later calls (wall, CPU, compile events)."""
    out, w, c, k = _call(fn, *args, **kw)
    info = {"first_wall": w, "first_cpu": c, "compile": k}
    walls, cpus, comps = [], [], []
    for _ in range(repeats):
        out, w, c, k = _call(fn, *args, **kw)
        walls.append(w)
        cpus.append(c)
        comps.append(k)
    info.update(run_wall=statistics.median(walls) if walls else info["first_wall"],
                run_cpu=statistics.median(cpus) if cpus else info["first_cpu"],
                run_compile=statistics.median(comps) if comps else info["compile"], repeats=repeats)
    return out, info


def fmt_t(s):
    if s is None or (isinstance(s, float) and math.isnan(s)):
        return "–"
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"


def fmt_g(x, d=4):
    if x is None:
        return "–"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if x == 0:
        return "0"
    if not math.isfinite(x):
        return str(x)
    return f"{x:.{d}g}"


# ----------------------------------------------------------------------------- locating jaxdp's functions
_located: dict = {}


def locate(name, candidates):
    """``name`` from the first importable candidate module, else from the jaxdp module that defines it (files move
    while this runs: grep the package)."""
    for m in candidates:
        try:
            mod = importlib.import_module(m)
        except Exception:  # noqa: BLE001
            continue
        if hasattr(mod, name):
            _located[name] = m
            return getattr(mod, name)
    import jaxdp

    pkg = pathlib.Path(jaxdp.__file__).parent
    for p in sorted(pkg.rglob("*.py")):
        try:
            text = p.read_text()
        except OSError:
            continue
        if re.search(rf"^(def|class) {re.escape(name)}\b", text, re.M) or re.search(
                rf"^{re.escape(name)}\s*=", text, re.M):
            m = "jaxdp." + ".".join(p.relative_to(pkg).with_suffix("").parts)
            mod = importlib.import_module(m)
            _located[name] = m
            return getattr(mod, name)
    raise ImportError(f"{name} not found in jaxdp")


# ============================================================================= 1. gamma sampler
K_ARMS = 9
GAMMA_SHAPES = (0.5, 1.0, 3.0, 30.0, 3e4, 1.2e5, 2.4e5)
BIG_SHAPES = (3e4, 1.2e5, 2.4e5)


def gamma_samplers():
    gamma_mt = locate("gamma_mt", ["jaxdp.bandits.thompson", "jaxdp.bandits", "jaxdp.samplers"])
    log_gamma_mt = locate("log_gamma_mt", ["jaxdp.bandits.thompson", "jaxdp.bandits", "jaxdp.samplers"])
    return {
        "jaxdp gamma_mt": (lambda k, a: gamma_mt(k, a), False),
        "jax.random.gamma": (lambda k, a: jax.random.gamma(k, a, dtype=jnp.float32), False),
        "jaxdp log_gamma_mt": (lambda k, a: log_gamma_mt(k, a), True),
        "jax.random.loggamma": (lambda k, a: jax.random.loggamma(k, a, dtype=jnp.float32), True),
    }


def _thompson_sim(sampler, is_log, S, T, horizon):
    """jit(vmap over S seeds of a scan over T rounds): 2K shapes a round, Thompson's arm choice from the draws."""
    u = jax.random.uniform(jax.random.key(1), (S, 2 * K_ARMS), jnp.float32)
    keys = jax.random.split(jax.random.key(2), S)
    scale = float(horizon) / T

    def per_seed(key, us):
        def body(counts, t):
            alpha = 1.0 + (t.astype(jnp.float32) * scale) * us
            g = sampler(jax.random.fold_in(key, t), alpha)
            score = g[:K_ARMS] - g[K_ARMS:] if is_log else g[:K_ARMS] / (g[:K_ARMS] + g[K_ARMS:])
            return counts + jax.nn.one_hot(jnp.argmax(score), K_ARMS, dtype=jnp.int32), None

        counts, _ = jax.lax.scan(body, jnp.zeros(K_ARMS, jnp.int32), jnp.arange(T))
        return counts

    f = jax.jit(jax.vmap(per_seed))
    return lambda: f(keys, u)


def part_gamma(q):
    from scipy import stats

    S, T, horizon = (64, 256, 1 << 18) if q else (256, 4096, 1 << 18)
    reps = 1 if q else 2
    n_draws = 20_000 if q else 100_000
    n_big = 100_000 if q else 1_000_000
    res = {"S": S, "T": T, "horizon": horizon, "n_draws": n_draws, "n_big": n_big, "speed": {}, "ks": [],
           "ks_big": [], "tails": {}, "vmap_eq": {}, "small": {}}
    samplers = gamma_samplers()
    res["located"] = _located.get("gamma_mt")

    # (a) speed
    for name, (smp, is_log) in samplers.items():
        run = _thompson_sim(smp, is_log, S, T, horizon)
        out, info = timed(run, repeats=reps)
        info["seed_rounds_per_s"] = S * T / info["run_wall"]
        info["choices"] = np.asarray(out).sum(0).tolist()
        res["speed"][name] = info
        print(f"[gamma speed] {name}: {info}", flush=True)

    # (b) accuracy: KS at each shape (n_draws, one key per shape and sampler)
    def draws(name, a, n, seed):
        smp, is_log = samplers[name]
        f = jax.jit(lambda k: smp(k, jnp.full((n,), a, jnp.float32)))
        return np.asarray(f(jax.random.key(seed)), np.float64), is_log

    def ks(x, is_log, a):
        d = stats.gamma(a)
        if is_log:
            r = stats.kstest(x, lambda v: d.cdf(np.exp(v)))
        else:
            r = stats.kstest(x, d.cdf)
        lo, hi = d.ppf(1e-13), d.isf(1e-13)
        if is_log:
            lo, hi = math.log(lo) if lo > 0 else -math.inf, math.log(hi)
        return float(r.pvalue), float(r.statistic), int(np.sum(x < lo) + np.sum(x > hi))

    for i, a in enumerate(GAMMA_SHAPES):
        row = {"shape": a}
        for j, name in enumerate(samplers):
            x, is_log = draws(name, a, n_draws, 100 + 10 * i + j)
            p, D, tails = ks(x, is_log, a)
            row[name] = {"p": p, "D": D, "tails": tails, "mean_z": float((np.mean(np.exp(x) if is_log else x) - a)
                                                                           / math.sqrt(a / n_draws))}
        res["ks"].append(row)
        print(f"[gamma ks] {row}", flush=True)
    for i, a in enumerate(BIG_SHAPES):
        row = {"shape": a}
        for j, name in enumerate(["jaxdp gamma_mt", "jax.random.gamma"]):
            x, is_log = draws(name, a, n_big, 500 + 10 * i + j)
            p, D, tails = ks(x, is_log, a)
            row[name] = {"p": p, "D": D, "tails": tails}
        res["ks_big"].append(row)
        print(f"[gamma ks big] {row}", flush=True)

    # vmapped vs unbatched: 64 seeds x 18 realistic shapes (and shapes < 1)
    alphas = jnp.asarray(np.concatenate([[0.3, 0.9, 1.0, 2.5], np.geomspace(5, 2.5e5, 14)]), jnp.float32)
    keys = jax.random.split(jax.random.key(7), 64)
    for name, (smp, _) in samplers.items():
        f = jax.jit(smp)
        batched = np.asarray(jax.jit(jax.vmap(smp, in_axes=(0, None)))(keys, alphas))
        single = np.stack([np.asarray(f(keys[i], alphas)) for i in range(keys.shape[0])])
        inscan = np.asarray(jax.jit(lambda ks_: jax.lax.map(lambda k: smp(k, alphas), ks_))(keys))
        ulp = np.spacing(np.maximum(np.abs(single), 1.0).astype(np.float32)).astype(np.float64)
        res["vmap_eq"][name] = {"equal": bool(np.array_equal(batched, single)),
                                "max_ulp": float(np.max(np.abs(batched.astype(np.float64) - single) / ulp)),
                                "map_equal": bool(np.array_equal(inscan, single)),
                                "map_max_ulp": float(np.max(np.abs(inscan.astype(np.float64) - single) / ulp))}

    # shapes < 1: underflow and ranking consistency
    a_small = 0.01
    n0 = n_draws
    ks0 = jax.random.key(11)
    g_jax = np.asarray(jax.random.gamma(ks0, a_small, (n0,), jnp.float32))
    lg_jax = np.asarray(jax.random.loggamma(ks0, a_small, (n0,), jnp.float32))
    g_mt = np.asarray(samplers["jaxdp gamma_mt"][0](ks0, jnp.full((n0,), a_small, jnp.float32)))
    lg_mt = np.asarray(samplers["jaxdp log_gamma_mt"][0](ks0, jnp.full((n0,), a_small, jnp.float32)))
    nz = g_jax > 0
    res["small"] = {
        "shape": a_small, "n": n0,
        "zeros_jax_gamma": float(np.mean(g_jax == 0)), "zeros_gamma_mt": float(np.mean(g_mt == 0)),
        "finite_jax_loggamma": float(np.mean(np.isfinite(lg_jax))), "finite_log_gamma_mt": float(np.mean(np.isfinite(lg_mt))),
        "exact_p_below_subnormal": float(stats.gamma(a_small).cdf(2.0 ** -149)),
        "exact_p_below_normal": float(stats.gamma(a_small).cdf(2.0 ** -126)),
        # same key: is log(gamma) the loggamma draw where gamma did not underflow?
        "jax_same_draws_max_abs": float(np.max(np.abs(np.log(g_jax[nz]) - lg_jax[nz]))) if nz.any() else None,
        "mt_same_draws_max_abs": float(np.max(np.abs(np.log(g_mt[g_mt > 0]) - lg_mt[g_mt > 0]))),
    }
    # Thompson's first round under Beta(0.01, 0.01): theta from gamma vs the order of ln G_a - ln G_b
    n_seeds = 2_000 if q else 10_000
    alpha0 = jnp.full((2 * K_ARMS,), a_small, jnp.float32)
    kk = jax.random.split(jax.random.key(12), n_seeds)
    for tag, gname, lname in (("jax", "jax.random.gamma", "jax.random.loggamma"),
                              ("jaxdp", "jaxdp gamma_mt", "jaxdp log_gamma_mt")):
        G = np.asarray(jax.jit(jax.vmap(lambda k: samplers[gname][0](k, alpha0)))(kk))
        LG = np.asarray(jax.jit(jax.vmap(lambda k: samplers[lname][0](k, alpha0)))(kk))
        with np.errstate(invalid="ignore", divide="ignore"):
            th = G[:, :K_ARMS] / (G[:, :K_ARMS] + G[:, K_ARMS:])
        pick_theta = np.asarray(jnp.argmax(jnp.asarray(th), axis=1))
        pick_log = np.argmax(LG[:, :K_ARMS] - LG[:, K_ARMS:], axis=1)
        res["small"][f"{tag}_theta_nan_seed_frac"] = float(np.mean(np.isnan(th).any(1)))
        res["small"][f"{tag}_theta_nan_arm_frac"] = float(np.mean(np.isnan(th)))
        res["small"][f"{tag}_theta_arm0"] = float(np.mean(pick_theta == 0))
        res["small"][f"{tag}_log_arm0"] = float(np.mean(pick_log == 0))
        res["small"][f"{tag}_disagree"] = float(np.mean(pick_theta != pick_log))
    print(f"[gamma small] {res['small']}", flush=True)
    return res


# ============================================================================= 2. logistic fit
def _make_data(kind, n, D, seed):
    rng = np.random.default_rng(seed)
    if kind == "laplace":       # noisy outputs of a Laplace mechanism on neighbouring inputs, mixed scales
        scales = 10.0 ** (np.arange(D) % 4 - 1)
        f0 = rng.laplace(0.0, 1.0, (n, D)) * scales
        f1 = (rng.laplace(0.0, 1.0, (n, D)) + 1.0 / math.sqrt(D)) * scales
    else:                       # one-hot of a truncated-geometric-like output over D values (eps = 1)
        v = np.arange(D)
        p0 = np.exp(-1.0 * np.abs(v - D / 2 + 0.5))
        p1 = np.exp(-1.0 * np.abs(v - D / 2 - 0.5))
        c0 = rng.choice(D, n, p=p0 / p0.sum())
        c1 = rng.choice(D, n, p=p1 / p1.sum())
        f0, f1 = np.eye(D)[c0], np.eye(D)[c1]
    return f0.astype(np.float32), f1.astype(np.float32)


def _objective(Z, y, w, b, lam):
    s = (Z @ w + b) * (2.0 * y - 1.0)
    return float(np.sum(np.logaddexp(0.0, -s)) + 0.5 * lam * np.dot(w, w))


def _newton64(Z, y, lam, tol=1e-10, max_steps=60):
    n, D = Z.shape
    Zb = np.concatenate([Z, np.ones((n, 1))], axis=1)
    L = np.concatenate([np.full(D, lam), [0.0]])
    w = np.zeros(D + 1)
    steps = 0
    for steps in range(1, max_steps + 1):
        p = 1.0 / (1.0 + np.exp(-(Zb @ w)))
        g = Zb.T @ (y - p) - L * w
        H = (Zb * (p * (1 - p))[:, None]).T @ Zb + np.diag(L)
        dw = np.linalg.solve(H, g)
        w = w + dw
        if np.max(np.abs(dw)) < tol:
            break
    p = 1.0 / (1.0 + np.exp(-(Zb @ w)))
    gnorm = float(np.max(np.abs(Zb.T @ (y - p) - L * w)))
    return w[:D], w[D], steps, gnorm


def _optax_lbfgs_fit(max_iter=200, tol=1e-5):
    import optax
    import optax.tree_utils as otu

    @jax.jit
    def fit(X, y, mu, sd, l2):
        Z = (X - mu) / sd
        D = Z.shape[1]

        def f(theta):
            logits = Z @ theta[:D] + theta[D]
            return jnp.mean(optax.sigmoid_binary_cross_entropy(logits, y)) + 0.5 * l2 * jnp.sum(theta[:D] ** 2)

        opt = optax.lbfgs()
        vg = optax.value_and_grad_from_state(f)

        def step(carry):
            th, st = carry
            v, g = vg(th, state=st)
            upd, st = opt.update(g, st, th, value=v, grad=g, value_fn=f)
            return optax.apply_updates(th, upd), st

        def cont(carry):
            _, st = carry
            it = otu.tree_get(st, "count")
            err = otu.tree_norm(otu.tree_get(st, "grad"))
            return (it == 0) | ((it < max_iter) & (err >= tol))

        th0 = jnp.zeros(D + 1, jnp.float32)
        th, st = jax.lax.while_loop(cont, step, (th0, opt.init(th0)))
        return th, otu.tree_get(st, "count")

    return fit


def part_logistic(q):
    from sklearn.linear_model import LogisticRegression

    cands = ["jaxdp.privacy.audit", "jaxdp.audit", "jaxdp.privacy.audit.learned", "jaxdp.audit.learned"]
    fit_classifier = locate("fit_classifier", cands)
    Logistic = locate("Logistic", cands)
    spec = Logistic()
    l2 = float(spec.l2)
    sizes = (10_000, 100_000) if q else (10_000, 100_000, 1_000_000)
    configs = [("laplace", n, D) for n in sizes for D in (2, 20)] + [("onehot", n, 6) for n in sizes]
    lbfgs_fit = _optax_lbfgs_fit()
    res = {"l2": l2, "steps": spec.steps, "located": _located.get("fit_classifier"), "rows": []}
    key = jax.random.key(0)
    for kind, n, D in configs:
        f0, f1 = _make_data(kind, n, D, seed=n + D)
        reps = 1 if n >= 1_000_000 else 3
        j0, j1 = jax.device_put(f0), jax.device_put(f1)
        params, info_ours = timed(fit_classifier, spec, j0, j1, key, repeats=reps)
        mu, sd = np.asarray(params[0], np.float64), np.asarray(params[1], np.float64)
        X = np.concatenate([f0, f1]).astype(np.float64)
        y = np.concatenate([np.ones(n), np.zeros(n)])
        N = 2 * n
        lam = l2 * N
        Z = (X - mu) / sd
        del X
        row = {"kind": kind, "n": n, "D": D, "fits": {}}
        t0 = time.perf_counter()
        w_ref, b_ref, ref_steps, ref_g = _newton64(Z, y, lam)
        row["ref"] = {"obj": _objective(Z, y, w_ref, b_ref, lam), "steps": ref_steps, "grad_inf": ref_g,
                      "wall": time.perf_counter() - t0}
        ref = np.concatenate([w_ref, [b_ref]])
        ours = np.concatenate([np.asarray(params[2], np.float64), [float(params[3])]])

        logit_ref = Z @ w_ref + b_ref

        def record(name, theta, info, extra=None):
            obj = _objective(Z, y, theta[:D], theta[D], lam)
            row["fits"][name] = dict(info, obj=obj, rel_gap=(obj - row["ref"]["obj"]) / abs(row["ref"]["obj"]),
                                     max_logit_diff=float(np.max(np.abs(Z @ theta[:D] + theta[D] - logit_ref))),
                                     max_diff_ref=float(np.max(np.abs(theta - ref))),
                                     max_diff_ours=float(np.max(np.abs(theta - ours))), **(extra or {}))

        record("jaxdp Newton (8 steps, f32)", ours, info_ours)
        for solver in ("lbfgs", "newton-cholesky"):
            clf = LogisticRegression(C=1.0 / lam, solver=solver, tol=1e-6, max_iter=1000)

            def sk_fit(clf=clf):
                return clf.fit(Z, y)

            m, info = timed(sk_fit, repeats=max(1, reps - 1))
            th = np.concatenate([m.coef_[0], m.intercept_])
            record(f"sklearn {solver} (f64)", th, info, {"iters": int(np.max(m.n_iter_))})
        (th_o, it_o), info = timed(lbfgs_fit, jnp.concatenate([j0, j1]),
                                   jnp.asarray(y, jnp.float32), jnp.asarray(mu, jnp.float32),
                                   jnp.asarray(sd, jnp.float32), jnp.float32(l2), repeats=reps)
        record("optax.lbfgs (f32)", np.asarray(th_o, np.float64), info, {"iters": int(it_o)})
        res["rows"].append(row)
        print(f"[logistic] {kind} n={n} D={D}: ref {row['ref']}", flush=True)
        for k_, v in row["fits"].items():
            print(f"    {k_}: {v}", flush=True)
    return res


# ============================================================================= 3. continual counting
def _import_jax_privacy(site):
    st = {"site": site, "ok": False}
    if not site or not pathlib.Path(site).is_dir():
        st["error"] = f"no directory {site!r} (pip install --target {site} jax-privacy --no-deps)"
        return None, st
    sys.path.append(site)       # appended: it can never shadow what the venv has
    try:
        import jax_privacy
        from jax_privacy.matrix_factorization import buffered_toeplitz, toeplitz  # noqa: F401
    except Exception as e:  # noqa: BLE001
        st["error"] = f"{type(e).__name__}: {e}"
        st["trace"] = traceback.format_exc(limit=3)
        return None, st
    st.update(ok=True, version=getattr(jax_privacy, "__version__", "?"), file=jax_privacy.__file__)
    meta = next(pathlib.Path(site).glob("jax_privacy-*.dist-info/METADATA"), None)
    reqs = []
    if meta is not None:
        reqs = [ln.split(":", 1)[1].strip() for ln in meta.read_text().splitlines()
                if ln.startswith("Requires-Dist:") and "extra ==" not in ln]
    deps = {}
    from importlib import metadata as md
    for r in reqs:
        name = re.split(r"[<>=!~; \[]", r)[0]
        try:
            deps[r] = md.version(name)
        except md.PackageNotFoundError:
            deps[r] = "MISSING"
    st["deps"] = deps
    for sub in ("jax_privacy.experimental.execution_plan", "jax_privacy.keras_api"):
        try:
            importlib.import_module(sub)
            st.setdefault("submodules", {})[sub] = "ok"
        except Exception as e:  # noqa: BLE001
            st.setdefault("submodules", {})[sub] = f"{type(e).__name__}: {e}"
    return jax_privacy, st


def part_mf(q, site):
    jp, st = _import_jax_privacy(site)
    res = {"import": st, "sqrt": [], "blt": [], "banded": []}
    mfmod = ["jaxdp.privacy.mechanisms.matrix_factorization", "jaxdp.mechanisms.matrix_factorization"]
    SqrtToeplitz = locate("SqrtToeplitz", mfmod)
    BLT = locate("BLT", mfmod)
    BandedToeplitz = locate("BandedToeplitz", mfmod)
    optimize_blt = locate("optimize_blt", mfmod)
    optimize_banded = locate("optimize_banded", mfmod)
    res["located"] = _located.get("optimize_blt")
    if jp is None:
        return res
    from jax_privacy.matrix_factorization import buffered_toeplitz as jbt
    from jax_privacy.matrix_factorization import toeplitz as jtp
    import scipy.linalg as sla

    # --- square-root Toeplitz: sens^2, max and mean squared error (unit noise multiplier)
    for n in ((256, 1024) if q else (1024, 4096)):
        mech = SqrtToeplitz()

        def ours(n=n):
            s = mech.sensitivity(n)
            return s * s, mech.max_error(n) ** 2, mech.rmse(n) ** 2

        (s2, mx2, ms2), ti = timed(ours, repeats=5)
        with jax.enable_x64(True):
            def theirs(n=n):
                c = jtp.optimal_max_error_strategy_coefs(n)
                return (jtp.sensitivity_squared(c), jtp.loss(c, n, jnp.max), jtp.loss(c, n, jnp.mean))

            (js2, jmx2, jms2), tj = timed(theirs, repeats=3)
            js2, jmx2, jms2 = float(js2), float(jmx2), float(jms2)
            pq_j = np.asarray(jtp.per_query_error(noising_coef=jtp.optimal_max_error_noising_coefs(n)))
            cdiff = float(np.max(np.abs(np.asarray(jtp.optimal_max_error_strategy_coefs(n))
                                        - mech.c_coefficients(n))))
        pq_o = mech.row_norms_sq(n)
        row = {"n": n, "ours": (s2, mx2, ms2), "theirs": (js2, jmx2, jms2), "t_ours": ti, "t_theirs": tj,
               "coef_max_diff": cdiff, "per_query_rel": float(np.max(np.abs(pq_o - pq_j) / pq_o))}
        if n <= 1024:           # dense check, independent of both: C = toeplitz(r), C @ C = A
            r = mech.c_coefficients(n)
            C = sla.toeplitz(r, np.zeros(n))
            A = np.tril(np.ones((n, n)))
            row["dense"] = {"CC_minus_A": float(np.max(np.abs(C @ C - A))),
                            "sens2": float(np.max(np.sum(C * C, 0))), "max2": float(
                                np.max(np.sum(C * C, 0)) * np.max(np.sum(C * C, 1))),
                            "mean2": float(np.max(np.sum(C * C, 0)) * np.mean(np.sum(C * C, 1)))}
        res["sqrt"].append(row)
        print(f"[mf sqrt] {row}", flush=True)

    # --- BLT for the max error at n
    n = 1024 if q else 4096
    sqrt_max2 = SqrtToeplitz().max_error(n) ** 2

    def eval_both(theta, omega):
        """Our max error^2 and jax_privacy's closed-form max loss of C^{-1} = BLT(theta, omega)."""
        o = BLT(theta=tuple(np.asarray(theta, np.float64)), omega=tuple(np.asarray(omega, np.float64)))
        ours_v = o.max_error(n) ** 2
        with jax.enable_x64(True):
            inv = jbt.BufferedToeplitz.build(buf_decay=np.asarray(theta), output_scale=np.asarray(omega))
            try:
                strat = inv.inverse()
                jv = float(jbt.max_error(inv, n) * jbt.sensitivity_squared(strat, n))
                # third opinion: materialised Toeplitz coefficients of C (float64) through toeplitz.loss
                tv = float(jtp.loss(strat.toeplitz_coefs(n), n, jnp.max))
            except Exception as e:  # noqa: BLE001
                jv, tv = float("nan"), f"{type(e).__name__}: {e}"
        return ours_v, jv, tv

    bufs = (3,) if q else (3, 5)
    iters_ours = 300
    for k in bufs:
        (m_o, inf_o), t_o = timed(optimize_blt, n, k, "max", iters_ours, None, True, repeats=1)
        with jax.enable_x64(True):
            lf = jbt.LossFn.build_closed_form_single_participation(n)
            (blt_j, loss_j), t_j = timed(jbt.optimize_loss, lf, num_buffers=k, repeats=1)
            inv_j = blt_j.inverse()
            th_j, om_j = np.asarray(inv_j.buf_decay), np.asarray(inv_j.output_scale)
        row = {"n": n, "buffers": k, "t_ours": t_o, "t_theirs": t_j, "sqrt_max2": sqrt_max2,
               "ours_params": (m_o.theta, m_o.omega), "theirs_params": (th_j.tolist(), om_j.tolist()),
               "ours_eval": eval_both(m_o.theta, m_o.omega), "theirs_eval": eval_both(th_j, om_j),
               "theirs_reported": float(loss_j), "ours_reported": inf_o["loss"] ** 2}
        # is a gap between the two optima the optimiser's (iterations / start) or the loss's?
        (m_l, _), t_l = timed(optimize_blt, n, k, "max", 10 * iters_ours, None, True, repeats=0)
        if np.all(th_j > 0):
            (m_i, _), t_i = timed(optimize_blt, n, k, "max", iters_ours,
                                  BLT(theta=tuple(th_j), omega=tuple(om_j)), True, repeats=0)
            row["ours_from_theirs"] = {"t": t_i, "eval": eval_both(m_i.theta, m_i.omega)}
        row["ours_long"] = {"iters": 10 * iters_ours, "t": t_l, "eval": eval_both(m_l.theta, m_l.omega)}
        res["blt"].append(row)
        print(f"[mf blt] {row}", flush=True)
    if not q:                   # jax_privacy's own choice of buffer count (adds buffers while the loss drops > 1%)
        with jax.enable_x64(True):
            blt_a, t_a = timed(jbt.optimize, n=n, repeats=0)
            inv_a = blt_a.inverse()
            th_a, om_a = np.asarray(inv_a.buf_decay), np.asarray(inv_a.output_scale)
        res["blt_auto"] = {"n": n, "buffers": len(th_a), "t": t_a, "eval": eval_both(th_a, om_a),
                           "sqrt_max2": sqrt_max2}
        print(f"[mf blt auto] {res['blt_auto']}", flush=True)

    # --- banded Toeplitz for the mean error at n
    for b in ((4,) if q else (16, 64)):
        (m_o, inf_o), t_o = timed(optimize_banded, n, b, "mean", 300, True, repeats=1)
        with jax.enable_x64(True):
            c_j, t_j = timed(jtp.optimize_banded_toeplitz, n, b, repeats=1)
            c_j = np.asarray(c_j, np.float64)
            c_o = np.asarray(m_o.coeffs, np.float64)
            j_of_o = float(jtp.loss(jnp.asarray(c_o), n, jnp.mean))
            j_of_j = float(jtp.loss(jnp.asarray(c_j), n, jnp.mean))
        o_of_o = m_o.rmse(n) ** 2
        o_of_j = BandedToeplitz(coeffs=tuple(c_j / c_j[0])).rmse(n) ** 2
        row = {"n": n, "bands": b, "t_ours": t_o, "t_theirs": t_j, "ours_eval": (o_of_o, j_of_o),
               "theirs_eval": (o_of_j, j_of_j), "coef_max_diff": float(np.max(np.abs(c_o - c_j / c_j[0]))),
               "sqrt_mean2": SqrtToeplitz().rmse(n) ** 2}
        res["banded"].append(row)
        print(f"[mf banded] {row}", flush=True)
    return res


# ============================================================================= report
def write_md(path, meta, g, lg, mf):
    L = []
    P = L.append
    P("# Library numerics: jaxdp's hand-written numerics vs library replacements")
    P("")
    P(f"Generated by `benchmarks/bench_library_numerics.py{' --quick' if meta['quick'] else ''}` on {meta['date']} "
      f"in one process: jax {meta['jax']} ({meta['platform']}, `jax.device_count()` = {meta['devices']}), numpy "
      f"{meta['numpy']}, scipy {meta['scipy']}, scikit-learn {meta['sklearn']}, optax {meta['optax']}, Python "
      f"{meta['python']}, {meta['cores']} CPU cores (shared with other work while this ran: wall times are noisy). "
      f"Whole run: {fmt_t(meta['total_wall'])} wall, {fmt_t(meta['total_cpu'])} CPU.")
    if meta["quick"]:
        P("")
        P("**`--quick` run: every size is reduced; not the numbers to decide on.**")
    P("")
    P("Times: *first* = first call (trace + compile + run); *compile* = XLA compile events recorded in the first "
      "call (`jax.monitoring`: trace, lowering, backend compile); *run* = median of the later calls after "
      "`block_until_ready` (wall, and process CPU time over all threads beside it).")
    P("")
    # headline numbers, computed from the tables below
    sp = g["speed"]
    pmin = {nm: min(r[nm]["p"] for r in g["ks"]) for nm in sp}
    tails = sum(r[nm]["tails"] for r in g["ks"] for nm in sp) + sum(
        r[nm]["tails"] for r in g["ks_big"] for nm in ("jaxdp gamma_mt", "jax.random.gamma"))
    ours = [f for row in lg["rows"] for nm, f in row["fits"].items() if nm.startswith("jaxdp")]
    P("Headline numbers (from the tables below):")
    P("")
    P(f"* Gamma: `jax.random.gamma` runs at {sp['jax.random.gamma']['seed_rounds_per_s'] / sp['jaxdp gamma_mt']['seed_rounds_per_s']:.2f}x "
      f"and `jax.random.loggamma` at {sp['jax.random.loggamma']['seed_rounds_per_s'] / sp['jaxdp log_gamma_mt']['seed_rounds_per_s']:.2f}x "
      "the speed of jaxdp's samplers in Thompson's loop; smallest KS p-value per sampler over the 7 shapes: "
      + ", ".join(f"`{nm}` {v:.3g}" for nm, v in pmin.items()) + f"; draws beyond the 1e-13 quantiles: {tails} in all.")
    P(f"* Logistic: jaxdp's 8 float32 Newton steps end within a relative objective gap of "
      f"{max(f['rel_gap'] for f in ours):.1e} of the float64 optimum (largest logit difference "
      f"{max(f['max_logit_diff'] for f in ours):.1e}) on every data set.")
    if mf["import"].get("ok"):
        P(f"* Counting: jax_privacy {mf['import']['version']} imports with jax {meta['jax']}; the square-root "
          "factorization's numbers agree to float64 rounding; see the BLT table for the optimisers.")
    else:
        P(f"* Counting: jax_privacy does not import: `{mf['import'].get('error')}`.")
    P("")

    # ---- gamma
    P("## 1. Gamma sampler (Thompson sampling)")
    P("")
    P(f"jaxdp's sampler from `{g.get('located')}`. Speed: `jit(vmap)` over S = {g['S']} seeds of a `lax.scan` over "
      f"T = {g['T']} rounds, 2K = {2 * K_ARMS} float32 shapes a round (K = {K_ARMS} arms, Thompson's `G_a, G_b`), "
      f"`alpha = 1 + (t * {g['horizon']} / T) * u`, `u ~ U(0,1)` fixed per seed and shape (shapes 1 .. "
      f"{1 + g['horizon']:.3g}); each round ends in Thompson's arm choice. Seed-rounds/s from the run time.")
    P("")
    P("| sampler | first | compile | run (wall) | run (CPU) | seed-rounds/s | vs jaxdp |")
    P("|---|---|---|---|---|---|---|")
    base = {False: g["speed"]["jaxdp gamma_mt"]["seed_rounds_per_s"],
            True: g["speed"]["jaxdp log_gamma_mt"]["seed_rounds_per_s"]}
    for name, s in g["speed"].items():
        rel = s["seed_rounds_per_s"] / base["log" in name]
        P(f"| `{name}` | {fmt_t(s['first_wall'])} | {fmt_t(s['compile'])} | {fmt_t(s['run_wall'])} | "
          f"{fmt_t(s['run_cpu'])} | {s['seed_rounds_per_s']:.3g} | {rel:.2f}x |")
    P("")
    P(f"Accuracy, float32, {g['n_draws']:,} draws per shape and sampler (one key each): Kolmogorov-Smirnov p-value "
      "against `scipy.stats.gamma(a)` (log samplers: of `exp`), the count of draws beyond the `1e-13` and "
      "`1 - 1e-13` quantiles (expected count ~2e-8), and the z-score of the sample mean.")
    P("")
    names = list(g["speed"])
    P("| shape | " + " | ".join(f"`{nm}` KS p / tails / mean z" for nm in names) + " |")
    P("|---|" + "---|" * len(names))
    for row in g["ks"]:
        P(f"| {fmt_g(row['shape'])} | " + " | ".join(
            f"{row[nm]['p']:.3g} / {row[nm]['tails']} / {row[nm]['mean_z']:+.2f}" for nm in names) + " |")
    P("")
    P(f"Large shapes, {g['n_big']:,} draws (more power against a distorted acceptance test):")
    P("")
    P("| shape | `jaxdp gamma_mt` KS p (D) / tails | `jax.random.gamma` KS p (D) / tails |")
    P("|---|---|---|")
    for row in g["ks_big"]:
        P(f"| {fmt_g(row['shape'])} | " + " | ".join(
            f"{row[nm]['p']:.3g} ({row[nm]['D']:.2e}) / {row[nm]['tails']}"
            for nm in ("jaxdp gamma_mt", "jax.random.gamma")) + " |")
    P("")
    P("vmapped vs unbatched (64 keys x 18 shapes 0.3 .. 2.5e5): `vmap` over keys vs one jitted call per key, and "
      "`lax.map` vs one call per key.")
    P("")
    P("| sampler | vmap == unbatched (bitwise) | max diff (float32 ulps of max(abs(x), 1)) | lax.map == unbatched "
      "(bitwise) | max diff (ulps) |")
    P("|---|---|---|---|---|")
    for nm, v in g["vmap_eq"].items():
        P(f"| `{nm}` | {v['equal']} | {fmt_g(v['max_ulp'])} | {v['map_equal']} | {fmt_g(v['map_max_ulp'])} |")
    P("")
    s = g["small"]
    P(f"Shapes below 1 (shape {s['shape']}, {s['n']:,} draws, float32). Exact probability that a "
      f"Gamma({s['shape']}) draw is below the smallest float32 normal 2^-126 (XLA on CPU flushes subnormals "
      f"to zero): {s['exact_p_below_normal']:.4f}; below the smallest subnormal 2^-149: "
      f"{s['exact_p_below_subnormal']:.4f}.")
    P("")
    P("| | jax.random | jaxdp |")
    P("|---|---|---|")
    P(f"| fraction of exact zeros from `gamma` | {s['zeros_jax_gamma']:.4f} | {s['zeros_gamma_mt']:.4f} |")
    P(f"| fraction of finite `loggamma` | {s['finite_jax_loggamma']:.4f} | {s['finite_log_gamma_mt']:.4f} |")
    P(f"| same key: max abs(log(gamma) - loggamma) where gamma > 0 | {fmt_g(s['jax_same_draws_max_abs'])} | "
      f"{fmt_g(s['mt_same_draws_max_abs'])} |")
    P(f"| Thompson first round, prior Beta({s['shape']}, {s['shape']}), K = {K_ARMS}: arms with a NaN theta "
      f"(0/0) | {s['jax_theta_nan_arm_frac']:.4f} | {s['jaxdp_theta_nan_arm_frac']:.4f} |")
    P(f"| same: seeds with at least one NaN theta | {s['jax_theta_nan_seed_frac']:.4f} | "
      f"{s['jaxdp_theta_nan_seed_frac']:.4f} |")
    P(f"| P(arm 0 chosen) ranking by theta = G_a/(G_a+G_b) (uniform: {1 / K_ARMS:.3f}) | "
      f"{s['jax_theta_arm0']:.4f} | {s['jaxdp_theta_arm0']:.4f} |")
    P(f"| P(arm 0 chosen) ranking by ln G_a - ln G_b | {s['jax_log_arm0']:.4f} | {s['jaxdp_log_arm0']:.4f} |")
    P(f"| the two rankings choose different arms | {s['jax_disagree']:.4f} | {s['jaxdp_disagree']:.4f} |")
    P("")

    # ---- logistic
    P("## 2. Logistic fit of the learned-event auditor")
    P("")
    P(f"`fit_classifier(Logistic(), f0, f1, key)` from `{lg.get('located')}` (Newton, {lg['steps']} steps, float32, "
      f"ridge `l2 * n` on the standardised weights with `l2` = {lg['l2']:g}, `n` = rows of both classes, bias not "
      "penalised; the Hessian also gets `1e-6 I`, which moves no fixed point). It maximises "
      "`sum_i log p_i - (l2 n / 2)|w|^2`, so scikit-learn's `C sum_i CE_i + |w|^2 / 2` (intercept unpenalised for "
      "`lbfgs` and `newton-cholesky`) is the same problem at **`C = 1 / (l2 n)`**. All solvers see the same "
      "standardised features (jaxdp's pooled mean and deviation); scikit-learn gets them as float64 "
      "(`tol = 1e-6`, `max_iter = 1000`), optax's `lbfgs` (default zoom line search, float32, stops at "
      "gradient norm < 1e-5 of the mean loss or 200 iterations) inside one jitted `while_loop`. Objective: "
      "`sum_i CE_i + (l2 n / 2)|w|^2` in float64; *rel gap* = (objective - reference) / reference, the reference "
      "a float64 Newton run to convergence; *iters* = 200 for optax means it stopped at its cap without reaching "
      "the tolerance. *max diff* = largest coefficient difference (weights and bias, "
      "standardised units). Data: *laplace* = Laplace(0, 1) features vs Laplace shifted by 1/sqrt(D), columns "
      "scaled by 0.1 .. 100; *onehot* = one-hot of a 6-valued two-sided-geometric output (eps = 1) shifted by one. "
      "n = rows per class.")
    P("")
    P("| data | n | D | solver | first | compile | run (wall) | run (CPU) | iters | objective | rel gap | "
      "max coef diff vs ref | max logit diff vs ref | max coef diff vs jaxdp |")
    P("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in lg["rows"]:
        r = row["ref"]
        P(f"| {row['kind']} | {row['n']:.0e} | {row['D']} | float64 Newton (reference) | | | {fmt_t(r['wall'])} | "
          f"| {r['steps']} | {r['obj']:.12g} | 0 | 0 | 0 | |")
        for nm, f in row["fits"].items():
            P(f"| | | | {nm} | {fmt_t(f['first_wall'])} | {fmt_t(f['compile'])} | {fmt_t(f['run_wall'])} | "
              f"{fmt_t(f['run_cpu'])} | {f.get('iters', lg['steps'])} | {f['obj']:.12g} | {f['rel_gap']:.1e} | "
              f"{f['max_diff_ref']:.1e} | {f['max_logit_diff']:.1e} | {f['max_diff_ours']:.1e} |")
    P("")

    # ---- mf
    P("## 3. Continual-counting factorizations vs `jax_privacy`")
    P("")
    st = mf["import"]
    if not st.get("ok"):
        P(f"`jax_privacy` did not import from `{st.get('site')}`: `{st.get('error')}`.")
        if st.get("trace"):
            P("")
            P("```")
            P(st["trace"].rstrip())
            P("```")
        P("")
    else:
        P(f"`jax_privacy` {st['version']} imported from `{st['site']}` (pure-Python wheel installed with "
          "`pip install --target ... --no-deps`, appended to `sys.path` by this script only). Its declared "
          "run-time dependencies and what this venv has:")
        P("")
        P("| requirement | installed |")
        P("|---|---|")
        for r, v in st["deps"].items():
            P(f"| `{r}` | {v} |")
        P("")
        P("Submodules that need more: " + "; ".join(f"`{k}`: {v}" for k, v in st.get("submodules", {}).items()))
        P("")
        P(f"jaxdp's side from `{mf.get('located')}`. Quantities at noise multiplier 1 and unit sensitivity: "
          "`sens^2` = max squared column norm of C; `max^2` = sens^2 x max_i |B_i|^2 (the squared max error; "
          "jax_privacy's `loss(..., jnp.max)`); `mean^2` = sens^2 x mean_i |B_i|^2 (jaxdp's `rmse^2`, "
          "jax_privacy's `loss(..., jnp.mean)`).")
        P("")
        P("**Square-root Toeplitz** (`SqrtToeplitz` vs `toeplitz.optimal_max_error_strategy_coefs` + "
          "`sensitivity_squared` / `loss`, float64):")
        P("")
        P("| n | | sens^2 | max^2 | mean^2 | first | compile | run (wall) | run (CPU) |")
        P("|---|---|---|---|---|---|---|---|---|")
        for row in mf["sqrt"]:
            for who, vals, t in (("jaxdp", row["ours"], row["t_ours"]), ("jax_privacy", row["theirs"], row["t_theirs"])):
                P(f"| {row['n']} | {who} | {vals[0]:.15g} | {vals[1]:.15g} | {vals[2]:.15g} | {fmt_t(t['first_wall'])} "
                  f"| {fmt_t(t['compile'])} | {fmt_t(t['run_wall'])} | {fmt_t(t['run_cpu'])} |")
            if "dense" in row:
                d = row["dense"]
                P(f"| {row['n']} | dense check (scipy toeplitz, max abs(CC - A) = {d['CC_minus_A']:.1e}) | "
                  f"{d['sens2']:.15g} | {d['max2']:.15g} | {d['mean2']:.15g} | | | | |")
        P("")
        P("Coefficients agree to " + ", ".join(f"{r['coef_max_diff']:.1e} (n = {r['n']})" for r in mf["sqrt"])
          + "; per-query variances (jaxdp `row_norms_sq` vs jax_privacy `per_query_error`) to a relative "
          + ", ".join(f"{r['per_query_rel']:.1e}" for r in mf["sqrt"]) + ".")
        P("")
        P("**BLT optimised for the max error** (jaxdp `optimize_blt(n, k, 'max', iters=300)`: sigmoid / free "
          "parameters of C^-1, closed-form Gramian loss, optax L-BFGS in one `lax.scan`; jax_privacy "
          "`buffered_toeplitz.optimize_loss(LossFn.build_closed_form_single_participation(n), num_buffers=k)`: "
          "buf-decay-pair parameterisation with penalties, 600 L-BFGS steps in a Python loop of jitted steps). "
          "Each result is scored by jaxdp's `BLT.max_error(n)^2` (impulse responses, float64), jax_privacy's "
          "closed form `max_error(inv) * sensitivity_squared(C)` and jax_privacy's `toeplitz.loss` of C's "
          "materialised coefficients. Ratio: jaxdp's score over the square-root factorization's max^2.")
        P("")
        P("| n | buffers | optimiser | first (wall) | first (CPU) | compile in first | first minus compile | "
          "repeat call (wall) | compile in repeat | max^2 (jaxdp eval) | max^2 (jax_privacy closed form) | "
          "max^2 (jax_privacy toeplitz.loss) | / sqrt max^2 |")
        P("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for row in mf["blt"]:
            for who, ev, t in (("jaxdp", row["ours_eval"], row["t_ours"]), ("jax_privacy", row["theirs_eval"], row["t_theirs"])):
                tv = ev[2] if isinstance(ev[2], str) else f"{ev[2]:.10g}"
                P(f"| {row['n']} | {row['buffers']} | {who} | {fmt_t(t['first_wall'])} | {fmt_t(t['first_cpu'])} | "
                  f"{fmt_t(t['compile'])} | {fmt_t(t['first_wall'] - t['compile'])} | "
                  f"{fmt_t(t['run_wall'] if t['repeats'] else None)} | "
                  f"{fmt_t(t['run_compile'] if t['repeats'] else None)} | {ev[0]:.10g} | {ev[1]:.10g} | {tv} | "
                  f"{ev[0] / row['sqrt_max2']:.5f} |")
            extra = [(f"jaxdp, iters={row['ours_long']['iters']}", row["ours_long"])]
            if "ours_from_theirs" in row:
                extra.append(("jaxdp, iters=300 from jax_privacy's optimum", row["ours_from_theirs"]))
            for who, e in extra:
                t, ev = e["t"], e["eval"]
                tv = ev[2] if isinstance(ev[2], str) else f"{ev[2]:.10g}"
                P(f"| {row['n']} | {row['buffers']} | {who} | {fmt_t(t['first_wall'])} | {fmt_t(t['first_cpu'])} | "
                  f"{fmt_t(t['compile'])} | {fmt_t(t['first_wall'] - t['compile'])} | – | – | {ev[0]:.10g} | "
                  f"{ev[1]:.10g} | {tv} | {ev[0] / row['sqrt_max2']:.5f} |")
        if "blt_auto" in mf:
            a = mf["blt_auto"]
            ev = a["eval"]
            tv = ev[2] if isinstance(ev[2], str) else f"{ev[2]:.10g}"
            t = a["t"]
            P(f"| {a['n']} | {a['buffers']} (its search) | jax_privacy `optimize(n=n)` | {fmt_t(t['first_wall'])} | "
              f"{fmt_t(t['first_cpu'])} | {fmt_t(t['compile'])} | {fmt_t(t['first_wall'] - t['compile'])} | – | – | "
              f"{ev[0]:.10g} | {ev[1]:.10g} | {tv} | {ev[0] / a['sqrt_max2']:.5f} |")
        P("")
        P("Square-root max^2 at that n: " + ", ".join(f"{r['sqrt_max2']:.10g}" for r in mf["blt"][:1]) + ".")
        P("")
        P("**Banded Toeplitz optimised for the mean error** (jaxdp `optimize_banded(n, b, 'mean', iters=300)`; "
          "jax_privacy `toeplitz.optimize_banded_toeplitz(n, b)`, 250 L-BFGS steps on the materialised loss), "
          "scored as mean^2 by both (jaxdp `rmse(n)^2`; jax_privacy `loss(c, n, jnp.mean)`).")
        P("")
        P("| n | bands | optimiser | first (wall) | first (CPU) | compile in first | first minus compile | "
          "repeat call (wall) | compile in repeat | mean^2 (jaxdp eval) | mean^2 (jax_privacy eval) | "
          "/ sqrt mean^2 |")
        P("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for row in mf["banded"]:
            for who, ev, t in (("jaxdp", row["ours_eval"], row["t_ours"]), ("jax_privacy", row["theirs_eval"], row["t_theirs"])):
                P(f"| {row['n']} | {row['bands']} | {who} | {fmt_t(t['first_wall'])} | {fmt_t(t['first_cpu'])} | "
                  f"{fmt_t(t['compile'])} | {fmt_t(t['first_wall'] - t['compile'])} | {fmt_t(t['run_wall'])} | "
                  f"{fmt_t(t['run_compile'])} | {ev[0]:.10g} | {ev[1]:.10g} | {ev[0] / row['sqrt_mean2']:.5f} |")
        P("")
        P("Largest coefficient difference between the two banded optima (c_0 = 1): " + ", ".join(
            f"{r['coef_max_diff']:.1e} (b = {r['bands']})" for r in mf["banded"]) + ".")
        P("")
    pathlib.Path(path).write_text("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(HERE.parent / "LIBRARY_NUMERICS.md"))
    ap.add_argument("--jp-site", default="/tmp/jp_site")
    ap.add_argument("--parts", default="gamma,logistic,mf")
    a = ap.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    import optax
    import scipy
    import sklearn

    meta = {"quick": a.quick, "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "jax": jax.__version__,
            "platform": jax.devices()[0].platform, "devices": jax.device_count(), "numpy": np.__version__,
            "scipy": scipy.__version__, "sklearn": sklearn.__version__, "optax": optax.__version__,
            "python": platform.python_version(), "cores": os.cpu_count()}
    parts = a.parts.split(",")
    g = part_gamma(a.quick) if "gamma" in parts else None
    lg = part_logistic(a.quick) if "logistic" in parts else None
    mf = part_mf(a.quick, a.jp_site) if "mf" in parts else None
    meta["total_wall"], meta["total_cpu"] = time.perf_counter() - t0, time.process_time() - c0
    if g and lg and mf:
        write_md(a.out, meta, g, lg, mf)
        print(f"wrote {a.out}")
    else:
        import pickle
        p = f"/tmp/lib_numerics_{'_'.join(parts)}.pkl"
        with open(p, "wb") as fh:
            pickle.dump({"meta": meta, "g": g, "lg": lg, "mf": mf}, fh)
        print(f"partial run: results pickled to {p}")


if __name__ == "__main__":
    main()
