"""jaxdp bandits vs SMPyBandits 0.9.7 and a seed-vectorized NumPy UCB1: K = 9 Bernoulli arms, means
linspace(0.1, 0.9, 9), T = 10^4.

    python benchmarks/bench_bandits.py [--quick] [--out benchmarks/BANDITS.md]
                                       [--smpy-python /tmp/smpy-venv/bin/python] [--seeds 4096]

SMPyBandits lives in its own virtual environment (it is never a dependency of jaxdp; 0.9.7 imports
only with scipy < 1.14, numpy < 2, pandas < 2.3)::

    python -m venv /tmp/smpy-venv
    /tmp/smpy-venv/bin/pip install SMPyBandits==0.9.7 "scipy<1.14" "numpy<2" "pandas<2.3"

Every measurement runs in its own worker process pinned to CPU 0 (one core) or CPUs 0-1 (two cores),
one after the other in this one run:

* **jaxdp** ``simulate`` of ``ucb1(9)`` (``UCB1Params(2)``) and ``exp3(9)`` (``Exp3Params(0.01, 0.01/9,
  explore_first=1)``: SMPyBandits' ``Exp3(9, gamma=0.01)``) on ``bernoulli_arms(9, coupling)``, pseudo-regret
  problem. One core: one XLA CPU device, ``--xla_cpu_multi_thread_eigen=false``; two cores: two XLA CPU
  devices (``--xla_force_host_platform_device_count=2``), ``simulate`` shards the seeds over them. The flags
  come from ``benchmarks.harness.xla_env.cpu_xla_env`` and each worker asserts the device count it asked for
  (before that, a bare ``intra_op_parallelism_threads=1`` in ``XLA_FLAGS`` made XLA drop the device-count flag:
  the "two-core" rows ran on one device). The first call's time minus the best of three later calls is
  reported as compile time; seed-rounds/s are from the best later call; CPU seconds are reported beside. ``coupling="common"`` (one uniform per round shared by the arms, one Threefry hash) is the
  headline; ``"independent"`` (16-bit uniforms per arm, 3 hashes) is shown too. A bandit learner sees one arm
  per round, so both have the same pseudo-regret law (jaxdp.bandits.adversaries).
* **NumPy**: UCB1 over all seeds at once (``(S, K)`` float64 arrays, one ``Generator.random(S)`` per round
  for the played arms' rewards, ties broken by a random order per seed as in jaxdp), at S = 1024 and 4096.
* **SMPyBandits**: ``Policies.UCB(9)`` and ``Policies.Exp3(9, gamma=0.01, unbiased=True)`` driven by the plain
  loop ``startGame(); choice(); getReward(arm, reward)`` with ``Arms.Bernoulli(mu).draw()``, one repetition
  after another for a fixed time budget; pseudo-regret = sum over arms of pulls x gap. Two cores: two such
  processes at once.

Pseudo-regret agreement: ``z = (mean_jaxdp - mean_smpy) / sqrt(se_jaxdp^2 + se_smpy^2)``. If the SMPyBandits
environment is missing, its columns are the reference figures measured on this machine earlier (UCB 18,794
and Exp3 5,494 seed-rounds/s; pseudo-regrets 331.76 +- 1.49 and 1650.7 +- 8.5) and the table says so.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

K = 9
T_DEFAULT = 10_000
GAMMA = 0.01
REFERENCE = {  # SMPyBandits 0.9.7 on this machine, measured earlier (used only without its venv)
    "ucb1": {"seed_rounds_per_s": 18_794.0, "mean": 331.76, "se": 1.49, "reps": 283},
    "exp3": {"seed_rounds_per_s": 5_494.0, "mean": 1650.7, "se": 8.5, "reps": 83},
}
HERE = pathlib.Path(__file__).resolve()


def _means():
    import numpy as np

    return np.linspace(0.1, 0.9, K)


# --------------------------------------------------------------------------------------------- workers


def worker_jaxdp(algo: str, cores: int, seeds: int, T: int, coupling: str) -> dict:
    """One jaxdp measurement (call in a fresh process: the XLA flags are read at import)."""
    import numpy as np
    import jax.numpy as jnp

    from benchmarks.harness.xla_env import Stopwatch, check_xla

    xla = check_xla(cores)   # asserts the device count asked for
    import jaxdp.bandits as BD
    from jaxdp.core import seed_keys, simulate

    if algo == "ucb1":
        learner, params = BD.ucb1(K), BD.UCB1Params(jnp.float32(2.0))
    else:
        learner, params = BD.exp3(K), BD.Exp3Params(jnp.float32(GAMMA), jnp.float32(GAMMA / K), jnp.float32(1.0))
    adv = BD.bernoulli_arms(K, coupling)
    ap = BD.BernoulliArmsParams(jnp.asarray(_means(), jnp.float32))
    prob = BD.bandit_problem("pseudo")

    def call():
        return simulate(learner, adv, prob, params, ap, seed_keys(0, seeds), T, n_checkpoints=1)

    with Stopwatch() as sw:
        out = call()
    first, first_cpu = sw.wall, sw.cpu
    runs, cpus = [], []
    for _ in range(3):
        with Stopwatch() as sw:
            call()
        runs.append(sw.wall)
        cpus.append(sw.cpu)
    best = min(runs)
    r = np.asarray(out["regret"], np.float64)

    return {"impl": "jaxdp", "algo": algo, "cores": cores, "coupling": coupling, "seeds": seeds, "T": T,
            "devices": xla["devices"], "xla_flags": xla["xla_flags"], "single_thread": xla["single_thread"],
            "first_call_s": first, "first_call_cpu_s": first_cpu, "compile_s": max(first - best, 0.0),
            "run_s": best, "run_cpu_s": min(cpus), "seed_rounds_per_s": seeds * T / best, "mean": float(r.mean()),
            "se": float(r.std(ddof=1) / math.sqrt(r.size)), "n": int(r.size)}


def numpy_ucb1(seeds: int, T: int, seed: int = 0):
    """Seed-vectorized UCB1 in NumPy: index S/N + sqrt(2 ln n / N), unpulled arms first, ties to a random
    order per seed; one uniform per seed and round for the played arm's reward. Returns pseudo-regrets."""
    import numpy as np

    mu = _means()
    gaps = mu.max() - mu
    rng = np.random.default_rng(seed)
    prio = rng.random((seeds, K)).argsort(1).astype(np.float64)   # a random strict order per seed
    N = np.zeros((seeds, K))
    S = np.zeros((seeds, K))
    rows = np.arange(seeds)
    pseudo = np.zeros(seeds)
    x = prio.argmax(1)
    idx = np.empty((seeds, K))
    for t in range(T):
        r = rng.random(seeds) < mu[x]
        N[rows, x] += 1.0
        S[rows, x] += r
        pseudo += gaps[x]
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(S, N, out=idx)
            idx += np.sqrt(2.0 * math.log(t + 1) / N)
        idx[N == 0] = np.inf
        top = idx.max(1, keepdims=True)
        x = np.where(idx == top, prio, -1.0).argmax(1)
    return pseudo


def worker_numpy(seeds: int, T: int) -> dict:
    from benchmarks.harness.xla_env import Stopwatch

    with Stopwatch() as sw:
        r = numpy_ucb1(seeds, T)
    dt = sw.wall
    return {"impl": "numpy", "algo": "ucb1", "cores": 1, "seeds": seeds, "T": T, "run_s": dt, "run_cpu_s": sw.cpu,
            "seed_rounds_per_s": seeds * T / dt, "mean": float(r.mean()),
            "se": float(r.std(ddof=1) / math.sqrt(r.size)), "n": int(r.size)}


def worker_smpy(algo: str, T: int, seconds: float, seed: int) -> dict:
    """SMPyBandits' policies driven by the plain loop, repetitions until ``seconds`` have passed."""
    import numpy as np
    from SMPyBandits.Arms import Bernoulli
    from SMPyBandits.Policies import UCB, Exp3

    np.random.seed(seed)
    mu = _means()
    gaps = mu.max() - mu
    arms = [Bernoulli(float(m)) for m in mu]
    regrets = []
    t_start = time.perf_counter()
    spent = 0.0
    while spent < seconds or len(regrets) < 2:
        t0 = time.perf_counter()
        pol = UCB(K) if algo == "ucb1" else Exp3(K, gamma=GAMMA, unbiased=True)
        pol.startGame()
        pulls = np.zeros(K)
        for _ in range(T):
            a = pol.choice()
            pol.getReward(a, arms[a].draw())
            pulls[a] += 1
        regrets.append(float(pulls @ gaps))
        spent += time.perf_counter() - t0
    r = np.asarray(regrets)
    return {"impl": "smpy", "algo": algo, "T": T, "reps": len(regrets), "run_s": spent,
            "wall_s": time.perf_counter() - t_start, "seed_rounds_per_s": len(regrets) * T / spent,
            "mean": float(r.mean()), "se": float(r.std(ddof=1) / math.sqrt(r.size)), "n": int(r.size),
            "regrets": regrets}


# --------------------------------------------------------------------------------------------- driver


def _spawn(args: list, cpus: str, python: str = sys.executable, env_extra: dict | None = None,
           wait: bool = True):
    env = dict(os.environ)
    env.update(env_extra or {})
    cmd = ["taskset", "-c", cpus, python, str(HERE), "--worker"] + args
    if not wait:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
    for attempt in range(3):   # a worker killed from outside (SIGKILL on a shared machine) is run again
        out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
        if out.returncode not in (-9, 137):
            break
        print(f"  worker killed (attempt {attempt + 1}); running it again", file=sys.stderr, flush=True)
    if out.returncode:
        raise RuntimeError(f"worker {args} failed with status {out.returncode}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _collect(p) -> dict:
    out, _ = p.communicate()
    if p.returncode:
        raise RuntimeError(f"worker failed with status {p.returncode}")
    return json.loads(out.strip().splitlines()[-1])


def _jax_env(cores: int) -> dict:
    """One XLA CPU device per core, Eigen single-threaded (every word a ``--flag``: see harness/xla_env.py)."""
    from benchmarks.harness.xla_env import cpu_xla_env

    return cpu_xla_env(cores, single_thread=True)


def _merge(parts: list) -> dict:
    """Two SMPyBandits processes that ran at once: their repetitions pooled, throughput over the longer wall."""
    import numpy as np

    r = np.asarray(sum((p["regrets"] for p in parts), []))
    wall = max(p["run_s"] for p in parts)
    return {"impl": "smpy", "algo": parts[0]["algo"], "reps": int(r.size),
            "seed_rounds_per_s": sum(p["reps"] for p in parts) * parts[0]["T"] / wall, "mean": float(r.mean()),
            "se": float(r.std(ddof=1) / math.sqrt(r.size)), "n": int(r.size), "regrets": r.tolist()}


def run(quick: bool, seeds: int, smpy_python: str, smpy_seconds: float, T: int) -> dict:
    res = {"jaxdp": {}, "numpy": {}, "smpy": {}, "smpy_source": "measured"}
    have_smpy = bool(smpy_python) and pathlib.Path(smpy_python).exists()
    if have_smpy:
        try:
            subprocess.run([smpy_python, "-c", "import SMPyBandits.Policies"], check=True, capture_output=True)
        except (subprocess.CalledProcessError, OSError):
            have_smpy = False
    if not have_smpy:
        res["smpy_source"] = "reference"
    for algo in ("ucb1", "exp3"):
        for cores, cpus in ((1, "0"), (2, "0,1")):
            for coupling in ("common", "independent"):
                if quick and coupling == "independent":
                    continue
                print(f"jaxdp {algo} cores={cores} coupling={coupling} ...", file=sys.stderr, flush=True)
                res["jaxdp"][(algo, cores, coupling)] = _spawn(
                    ["jaxdp", algo, str(cores), str(seeds), str(T), coupling], cpus, env_extra=_jax_env(cores))
        if algo == "ucb1":
            for s in ((256,) if quick else (1024, 4096)):
                print(f"numpy ucb1 seeds={s} ...", file=sys.stderr, flush=True)
                res["numpy"][s] = _spawn(["numpy", str(s), str(T)], "0")
            if not quick:   # two cores: two processes at once, half the seeds each (1024 x 2)
                ps = [_spawn(["numpy", "1024", str(T)], c, wait=False) for c in ("0", "1")]
                parts = [_collect(p) for p in ps]
                res["numpy"]["2cores"] = {"seed_rounds_per_s": sum(p["seeds"] for p in parts) * T /
                                          max(p["run_s"] for p in parts), "seeds": 2048}
        if have_smpy:
            print(f"smpy {algo} ({smpy_seconds:.0f} s, then 2 processes) ...", file=sys.stderr, flush=True)
            res["smpy"][(algo, 1)] = _spawn(["smpy", algo, str(T), str(smpy_seconds), "1"], "0", python=smpy_python)
            ps = [_spawn(["smpy", algo, str(T), str(smpy_seconds / 2), str(2 + i)], c, python=smpy_python, wait=False)
                  for i, c in enumerate(("0", "1"))]
            res["smpy"][(algo, 2)] = _merge([_collect(p) for p in ps])
        else:
            ref = dict(REFERENCE[algo], n=REFERENCE[algo]["reps"])
            res["smpy"][(algo, 1)] = ref
            res["smpy"][(algo, 2)] = None
    return res


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def markdown(res: dict, T: int, seeds: int, cmdline: str) -> str:
    j, n, s = res["jaxdp"], res["numpy"], res["smpy"]
    load = os.getloadavg()
    L = ["# Bandits: jaxdp vs SMPyBandits 0.9.7 and NumPy", "",
         f"K = {K} Bernoulli arms, means linspace(0.1, 0.9, 9), T = {T:,} rounds; jaxdp with {seeds:,} seeds. "
         f"Written by `{cmdline}` ({time.strftime('%Y-%m-%d %H:%M')}; load average at the end "
         f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on this 2-core machine"
         + (" shared with other jobs, so absolute rates are rough" if load[0] >= 2 else ", otherwise idle")
         + "; every column was measured in the same run, one after the other).", ""]
    if res["smpy_source"] != "measured":
        L += ["**SMPyBandits could not be run here**: its columns are the reference figures measured earlier on "
              "this machine (UCB 18,794 and Exp3(0.01) 5,494 seed-rounds/s; pseudo-regrets 331.76 ± 1.49 and "
              "1650.7 ± 8.5), not this run's.", ""]
    ref_ucb = s.get(("ucb1", 1))
    if res["smpy_source"] == "measured" and ref_ucb:
        slow = REFERENCE["ucb1"]["seed_rounds_per_s"] / ref_ucb["seed_rounds_per_s"]
        L += [f"SMPyBandits' UCB ran at {_fmt(ref_ucb['seed_rounds_per_s'])} seed-rounds/s in this run against "
              f"{_fmt(REFERENCE['ucb1']['seed_rounds_per_s'])} in an earlier measurement on this machine at load 3–5: "
              + (f"the machine was about {slow:.1f}× slower during this run. " if slow >= 1.05 else
                 f"that earlier figure was taken at about {1 / slow:.1f}× lower speed (a loaded machine). " if slow <= 0.95
                 else "the same speed. ")
              + "Ratios between columns of one run are the "
              "meaningful numbers.", ""]
    L += ["## Throughput (seed-rounds per second)", "",
          "| learner | cores | jaxdp (common) | jaxdp (independent) | NumPy vectorized | SMPyBandits | "
          "jaxdp / SMPyBandits | jaxdp / NumPy |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for algo, name in (("ucb1", "UCB1"), ("exp3", "EXP3 γ=0.01")):
        for cores in (1, 2):
            jc = j.get((algo, cores, "common"))
            ji = j.get((algo, cores, "independent"))
            sm = s.get((algo, cores))
            if algo == "ucb1":
                np_rate = max(v["seed_rounds_per_s"] for k, v in n.items() if k != "2cores") if cores == 1 else \
                    n.get("2cores", {}).get("seed_rounds_per_s")
            else:
                np_rate = None
            row = [name, str(cores), _fmt(jc["seed_rounds_per_s"]) if jc else "–",
                   _fmt(ji["seed_rounds_per_s"]) if ji else "–", _fmt(np_rate) if np_rate else "–",
                   _fmt(sm["seed_rounds_per_s"]) if sm else "–",
                   f"{jc['seed_rounds_per_s'] / sm['seed_rounds_per_s']:,.0f}×" if jc and sm else "–",
                   f"{jc['seed_rounds_per_s'] / np_rate:.1f}×" if jc and np_rate else "–"]
            L.append("| " + " | ".join(row) + " |")
    jc, sm1 = j.get(("ucb1", 1, "common")), s.get(("ucb1", 1))
    np1 = max((v["seed_rounds_per_s"] for k, v in n.items() if k != "2cores"), default=None)
    if jc and sm1 and np1:
        r1, r2 = jc["seed_rounds_per_s"] / sm1["seed_rounds_per_s"], jc["seed_rounds_per_s"] / np1
        L += ["", f"**Goals (UCB1, one core):** jaxdp / SMPyBandits = {r1:,.0f}× (goal ≥ 100×: "
              f"{'met' if r1 >= 100 else 'NOT met'}); jaxdp / NumPy = {r2:.1f}× (goal > 1: "
              f"{'met' if r2 > 1 else 'NOT met'})."]
    L += ["", "NumPy (one core) at each seed count: " + ", ".join(
        f"S = {k}: {_fmt(v['seed_rounds_per_s'])}" for k, v in n.items() if k != "2cores") +
        "; the table's one-core column is the best of them. SMPyBandits and NumPy on two cores: two processes at "
        "once (pooled repetitions; rate over the longer of the two).", "",
        "## Compile time vs run time (jaxdp)", "",
        "Each worker asserted `jax.device_count()` = the devices column (the `XLA_FLAGS` it ran with: "
        f"`{next(iter(j.values())).get('xla_flags', '?') if j else ''}` for the first row). CPU seconds are the worker's "
        "own (`time.process_time`).", "",
        "| learner | cores | devices | coupling | first call (s) | first call (CPU s) | compile (s) | "
        "run (s, best of 3) | run (CPU s) |", "|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    for (algo, cores, coupling), v in sorted(j.items()):
        L.append(f"| {algo} | {cores} | {v.get('devices', '?')} | {coupling} | {v['first_call_s']:.2f} | "
                 f"{v.get('first_call_cpu_s', float('nan')):.2f} | {v['compile_s']:.2f} | "
                 f"{v['run_s']:.2f} | {v.get('run_cpu_s', float('nan')):.2f} |")
    L += ["", "## Pseudo-regret agreement with SMPyBandits", "",
          "z = (mean_jaxdp − mean_SMPyBandits) / sqrt(se_jaxdp² + se_SMPyBandits²); |z| ≤ 4 is agreement.", "",
          "| learner | jaxdp mean ± se (seeds) | SMPyBandits mean ± se (repetitions) | z |",
          "|---|---:|---:|---:|"]
    for algo, name in (("ucb1", "UCB1"), ("exp3", "EXP3 γ=0.01")):
        sm = s.get((algo, 1))
        if res["smpy_source"] == "measured" and s.get((algo, 2)):
            import numpy as np

            r = np.asarray(s[(algo, 1)]["regrets"] + s[(algo, 2)]["regrets"])   # every repetition of this run
            sm = {"mean": float(r.mean()), "se": float(r.std(ddof=1) / math.sqrt(r.size)), "n": int(r.size)}
        for coupling in ("common", "independent"):
            jc = j.get((algo, 1, coupling))
            if not jc or not sm:
                continue
            z = (jc["mean"] - sm["mean"]) / math.sqrt(jc["se"] ** 2 + sm["se"] ** 2)
            L.append(f"| {name} ({coupling}) | {jc['mean']:.2f} ± {jc['se']:.2f} ({jc['n']:,}) | "
                     f"{sm['mean']:.2f} ± {sm['se']:.2f} ({sm['n']}) | {z:+.2f} |")
    L += ["", "jaxdp's UCB1 breaks ties by a random order of the arms drawn once per run; SMPyBandits draws a "
          "fresh uniform tie-break at every tie. Both play the first K rounds in a uniformly random order.", ""]
    return "\n".join(L) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    ap.add_argument("--out", default=None, help="markdown file to write (default: print only)")
    ap.add_argument("--seeds", type=int, default=None, help="jaxdp seeds (default 4096; --quick 64)")
    ap.add_argument("--T", type=int, default=None, help=f"horizon (default {T_DEFAULT}; --quick 500)")
    ap.add_argument("--smpy-python", default="/tmp/smpy-venv/bin/python", help="the SMPyBandits venv's python")
    ap.add_argument("--smpy-seconds", type=float, default=None, help="SMPyBandits time budget per learner "
                                                                      "(default 90; --quick 3)")
    ap.add_argument("--worker", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        kind, rest = a.worker[0], a.worker[1:]
        if kind == "jaxdp":
            out = worker_jaxdp(rest[0], int(rest[1]), int(rest[2]), int(rest[3]), rest[4])
        elif kind == "numpy":
            out = worker_numpy(int(rest[0]), int(rest[1]))
        else:
            out = worker_smpy(rest[0], int(rest[1]), float(rest[2]), int(rest[3]))
        print(json.dumps(out))
        return 0
    seeds = a.seeds or (64 if a.quick else 4096)
    T = a.T or (500 if a.quick else T_DEFAULT)
    secs = a.smpy_seconds if a.smpy_seconds is not None else (3.0 if a.quick else 90.0)
    res = run(a.quick, seeds, a.smpy_python, secs, T)
    md = markdown(res, T, seeds, "python benchmarks/bench_bandits.py" + (" " + " ".join(argv or sys.argv[1:])).rstrip())
    from benchmarks.harness.common import emit

    emit(md, a.out)
    if a.out:
        print(f"wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
