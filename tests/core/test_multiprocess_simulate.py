"""Multi-process ``simulate`` / ``monte_carlo`` on real processes: 2 processes x 2 forced CPU devices under
``jax.distributed`` (gloo collectives) give bit for bit the results of one process, on every process;
``process_local()`` lets processes run different calls without entering collectives."""
import json
import os
import socket
import subprocess
import sys
import textwrap

_WORKER = textwrap.dedent("""
    import json, sys
    pid, nproc, port = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    import jax
    if nproc > 1:
        jax.distributed.initialize(f"127.0.0.1:{port}", num_processes=nproc, process_id=pid)
    import jax.numpy as jnp, numpy as np
    import jaxdp
    from jaxdp.core import seed_keys, simulate, monte_carlo
    from jaxdp.experts import BernoulliParams, HedgeParams, bernoulli_experts, experts_problem, hedge

    def tolist(tree):
        return {k: np.asarray(v).tolist() for k, v in tree.items()}

    L, A, PR = hedge(7), bernoulli_experts(7), experts_problem()
    res = {"n_global": len(jax.devices()), "n_local": len(jax.local_devices())}
    # 10 seeds over the global mesh: padded to 12, tiles of 2 per device
    res["sim"] = tolist(simulate(L, A, PR, HedgeParams(jnp.float32(0.3)), BernoulliParams(gap=jnp.float32(0.1)),
                                 seed_keys(9, 10), 150, tile=2))
    # a grid: grid points x seeds span the mesh
    G = 3
    res["grid"] = tolist(simulate(L, A, PR, HedgeParams(jnp.asarray([0.1, 0.4, 0.9], jnp.float32)),
                                  BernoulliParams(gap=jnp.full((G,), 0.1, jnp.float32)),
                                  jnp.broadcast_to(seed_keys(3, 5), (G, 5)), np.asarray([50, 120, 80]), grid=True))
    res["mc"] = np.asarray(monte_carlo(lambda k, s: jax.random.normal(k, (3,)).sum() * s, seed_keys(2, 7),
                                       jnp.float32(2.0))).tolist()
    # process_local: each process runs its own chunk of seeds, no collective
    with jaxdp.process_local():
        for i in ([pid] if nproc > 1 else [0, 1]):
            res[f"local{i}"] = tolist(simulate(L, A, PR, HedgeParams(jnp.float32(0.3)),
                                               BernoulliParams(gap=jnp.float32(0.1)), seed_keys(4, np.arange(6) + 6 * i),
                                               60))
    print("RESULT " + json.dumps(res))
""")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(nproc: int, n_dev: int, tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(_WORKER)
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=f"--xla_force_host_platform_device_count={n_dev}")
    port = str(_free_port())
    procs = [subprocess.Popen([sys.executable, str(script), str(i), str(nproc), port], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(nproc)]
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0, err[-3000:]
            line = [ln for ln in out.splitlines() if ln.startswith("RESULT ")][-1]
            outs.append(json.loads(line[len("RESULT "):]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    return outs


def test_two_processes_bit_identical_to_one(tmp_path):
    one = _launch(1, 2, tmp_path)[0]
    two = _launch(2, 2, tmp_path)
    assert one["n_global"] == 2 and one["n_local"] == 2
    for pid, r in enumerate(two):
        assert r["n_global"] == 4 and r["n_local"] == 2
        for k in ("sim", "grid", "mc"):
            # json round-trips float32 values exactly (NaN checkpoints compare as NaN tokens)
            assert json.dumps(r[k]) == json.dumps(one[k]), (pid, k)
    # process-local chunks: process i's chunk equals seeds 6i..6i+5 of a one-process run
    assert json.dumps(two[0]["local0"]) == json.dumps(one["local0"])
    assert json.dumps(two[1]["local1"]) == json.dumps(one["local1"])
    assert json.dumps(one["local0"]) != json.dumps(one["local1"])
