#!/usr/bin/env bash
# The benchmark suite at GPU sizes in one command (issue 40): writes benchmarks/SUITE_GPU.md.
#
#   benchmarks/gpu_suite.sh                 # on a machine with a GPU (under 8 minutes on one GPU)
#   benchmarks/gpu_suite.sh --cpu-tiny      # CPU fallback at tiny sizes (CI, under a minute); writes
#                                           # $OUT (default: a temporary file), never benchmarks/SUITE_GPU.md
#
# Runs benchmarks/bench_suite.py (Hedge, L2P-MW, sparse vector, L2P-RMW with MALA, DP-FTRL with the tree,
# label-DP: batch sizes up to the device-memory budget, the RNG and bandwidth floors and the roofline) and
# benchmarks/bench_gpu_extras.py (UCB1, Hedge at d = 1000, DP-FTRL with a BLT, at 65536 seeds).
# Environment: PYTHON (default: .venv/bin/python if present, else python3), OUT (the markdown file),
# SUITE_TIMEOUT (seconds for the whole run; default 470 on GPU, 55 with --cpu-tiny).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
mode=gpu
if [ "${1:-}" = "--cpu-tiny" ]; then mode=cpu; elif [ -n "${1:-}" ]; then echo "usage: $0 [--cpu-tiny]" >&2; exit 2; fi

if [ "$mode" = cpu ]; then
  export JAX_PLATFORMS=cpu
  OUT="${OUT:-$(mktemp -t suite_cpu_tiny.XXXXXX.md)}"
  budget="${SUITE_TIMEOUT:-55}"
  suite_args=()
  extra_args=(--tiny --seeds 8 --T 32)
else
  backend="$("$PYTHON" -c 'import jax; print(jax.default_backend())')"
  if [ "$backend" != gpu ]; then
    echo "gpu_suite.sh: JAX sees no GPU (backend: $backend); use --cpu-tiny for the CPU smoke run" >&2
    exit 3
  fi
  OUT="${OUT:-benchmarks/SUITE_GPU.md}"
  budget="${SUITE_TIMEOUT:-470}"
  suite_args=()
  extra_args=()
fi

start=$(date +%s)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# the suite first (its own time caps keep it within a few minutes), then the extra cases in what is left
if [ "$mode" = cpu ]; then   # every suite case at one seed, no scaling subprocesses, no roofline export
  timeout "$budget" "$PYTHON" -c "
import pathlib, sys
from benchmarks.harness.suite import run_suite, suite_to_markdown
pathlib.Path(sys.argv[1]).write_text(suite_to_markdown(run_suite(quick=True, scaling=False, max_seeds=1)))
" "$tmp/suite.md" > "$tmp/suite.log"
else
  timeout "$budget" "$PYTHON" benchmarks/bench_suite.py "${suite_args[@]}" --out "$tmp/suite.md" > "$tmp/suite.log"
fi
left=$(( budget - ($(date +%s) - start) ))
if [ "$left" -lt 5 ]; then echo "gpu_suite.sh: no time left for the extra cases" >&2; exit 124; fi
timeout "$left" "$PYTHON" benchmarks/bench_gpu_extras.py "${extra_args[@]}" --out "$tmp/extra.md" > "$tmp/extra.log"
{
  echo "# Benchmark suite ($mode$( [ "$mode" = cpu ] && echo ', tiny sizes: rates not representative'))"
  echo
  echo "Written by \`benchmarks/gpu_suite.sh${1:+ $1}\` in $(( $(date +%s) - start )) s; load average $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  cat "$tmp/suite.md"
  echo
  cat "$tmp/extra.md"
} > "$OUT"
echo "wrote $OUT ($(( $(date +%s) - start )) s)"
