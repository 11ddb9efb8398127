#!/usr/bin/env bash
# The host part of region counters for every kind of region (issue 28): NVTX push/pop and start/end ranges,
# the hubprof API's regions and the OpenCL calls of --api all get one host row per counter (counter_value
# with their region_id, no dispatch) under `hubprof profile --counters`; a start/end range ended by another
# thread gets none (the host part is the starting thread's: docs/api-regions.md), and markers none.
# usage: test_region_host.sh [HUBPROF]   (from the repository root)
# SPDX-License-Identifier: MIT
set -u
ROOT=$PWD
HP=$(realpath "${1:-build/hubprof}")
EX=$ROOT/build/examples/ocl
. "$ROOT/tests/lib.sh"
hp_test_env
export POCL_CACHE_DIR=$T/kcache
need_built test_region_host "$HP" "$HUBPROF_COLLECTOR" "$EX/regions"
need_opencl test_region_host
cd "$T"

# check STORE PYTHON: assertions on regions r, host rows h (per region id: the counters that have one)
check() {
  if python3 - "$1" >py.err 2>&1 <<PY; then ok; else bad "$1: $(tail -4 py.err)"; fi
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    r = s.table("region")
    v = s.table("counter_value")
    names = set(s.table("counter_info")["name"])
h = v[(v.dispatch_id == 0) & (v.region_id != 0)].groupby("region_id")["counter_id"].nunique()
has = r.id.map(h).fillna(0).astype(int)
def every(mask, what):
    assert mask.any(), "no " + what
    assert (has[mask] == 2).all(), (what, r[mask & (has != 2)][["name", "category"]].head())
$2
PY
}

C=(--counters task-clock,page-faults --max-counters-per-pass 1)
expect 0 "$HP" profile -q "${C[@]}" --api -o api.db -- "$EX/regions"
check api.db 'every(r.category == "api", "API call regions")
every(r.name.isin(["worker", "step", "enqueue"]), "hubprof API regions")'
if [ ! -x "$EX/nvtx_ranges" ]; then
  echo "test_region_host: NVTX part skipped: no NVTX v3 headers at build time (CUDA toolkit's include/nvtx3)"
else
  expect 0 "$HP" profile -q "${C[@]}" -o nv.db -- "$EX/nvtx_ranges" 2 3
  check nv.db 'every(r.name == "launch", "NVTX start/end ranges")
every(r.name.isin(["step", "worker", "setup"]), "NVTX push/pop ranges")
assert (has[r.name == "cross-thread"] == 0).all(), "a range ended by another thread has no host part"
assert (has[r.start_ns == r.end_ns] == 0).all(), "markers have no host part"'
fi
echo "test_region_host: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
