#!/bin/bash
# DP-Sniper's benchmark at DP-Sniper's own sizes, in one configuration for all twenty mechanisms, on an
# accelerator: 1.07e7 training runs per input (DP-Sniper's), 2e6 selection runs, every candidate's event
# re-chosen on 2e7 refinement runs before the single witness is picked (--n-rerank 8), 2e8 fresh runs per
# input counted on the device (whatever device jax uses: on a 2-core CPU the suite takes hours). Rows are appended to $OUT/dpsniper.jsonl as each mechanism finishes, so a
# run stopped by a time limit keeps its finished rows and a rerun skips them; run the two halves in separate calls:
#   bash benchmarks/dpsniper_device.sh 1   # the first ten mechanisms
#   bash benchmarks/dpsniper_device.sh 2   # the other ten
# then keep the rows as benchmarks/data/<name>.jsonl and add that path to DEVICE_RUNS in bench_audit.py.
# (SIZES and ONLY override the sizes and the mechanisms, for a smoke test on a CPU.)
set -euo pipefail
OUT=${OUT:-/tmp}
half=${1:-1}
SIZES=${SIZES:-"10700000 2000000 200000000 20000000"}
names=${ONLY:-$(python3 -c "
from benchmarks.harness.dpsniper import suite_names
n = [s.removeprefix('dpsniper-') for s in suite_names()]
print(' '.join(n[:10] if '$half' == '1' else n[10:]))")}
# mechanisms whose row is already in the JSON-lines file are not run again (a stopped run resumes)
if [ -f "$OUT/dpsniper.jsonl" ]; then
  names=$(python3 -c "
import json, sys
done = {json.loads(l)['name'] for l in open('$OUT/dpsniper.jsonl') if l.strip()}
print(' '.join(n for n in sys.argv[1:] if n not in done))" $names)
fi
[ -n "$names" ] || { echo "every mechanism of this half is done"; exit 0; }
python3 benchmarks/bench_audit.py --dpsniper --device --only $names --n-best 1 --n-rerank 8 \
    --sizes $SIZES --jsonl "$OUT/dpsniper.jsonl" --dpsniper-out "$OUT/AUDIT_DPSNIPER.md"
