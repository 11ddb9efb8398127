#!/usr/bin/env bash
# Kernel code unmapped and another object mapped at the same addresses while sampling (issue 28: "mappings
# tracked by identity, not by address range alone"). PoCL 3.1 never unloads a released program's kernel, so
# test_sample_reload.sh cannot show a reuse; examples/ocl/remap.c forces one: each round dlopens another
# stand-in for a kernel's code in PoCL's cache (tests/sample/remap_obj.c built once per round: different files
# of one size, named like PoCL's kernels, .../tune/tune.so), spins in it while a dispatch of the kernel `tune`
# runs, and dlcloses it; the next object lands at the same address. Every sample must go to the object mapped
# when it was taken: each object's samples in one dispatch, the rounds' dispatches in order, none unattributed.
# usage: test_sample_remap.sh [HUBPROF]   (from the repository root)
# SPDX-License-Identifier: MIT
set -u
ROOT=$PWD
HP=$(realpath "${1:-build/hubprof}")
EX=$ROOT/build/examples/ocl
. "$ROOT/tests/lib.sh"
hp_test_env
export POCL_CACHE_DIR=$T/kcache POCL_DEVICES=pthread # the kernel runs on a worker beside the host's spin
need_built test_sample_remap "$HP" "$EX/remap" "$HUBPROF_COLLECTOR"
need_opencl test_sample_remap
cd "$T"
ROUNDS=4
objs=()
for r in $(seq $ROUNDS); do
  mkdir -p "kcache/stand-in/r$r/tune"
  cc -O1 -shared -fPIC -DROUND="$r" "$ROOT/tests/sample/remap_obj.c" -o "kcache/stand-in/r$r/tune/tune.so" ||
    bad "cannot build the stand-in object $r"
  objs+=("$T/kcache/stand-in/r$r/tune/tune.so")
done

# (100 ms of CPU time per round: ~200 samples at 500 us, and the host thread's sampler back at the period
# after its wait for the kernel, src/collector/sample.c SLOW_NS)
expect 0 "$HP" sample -q --period-us 500 -o r.db -- "$EX/remap" 100 "${objs[@]}"
grep -q "^round $((ROUNDS - 1)): spun" out && ok || bad "remap did not run its rounds: $(cat out err)"
# the reuse itself: without it this test would prove nothing
reused=$(sed -n 's/^reused \([0-9]*\) of .*/\1/p' out)
[ "${reused:-0}" -ge 1 ] && ok || bad "no object was mapped where the last one was: $(tail -1 out)"
if python3 - r.db $ROUNDS >py.err 2>&1 <<'PY'; then ok; else bad "$(tail -5 py.err)"; fi
import sys, hubprof
rounds = int(sys.argv[2])
with hubprof.open(sys.argv[1]) as s:
    m = s.metadata()
    ps, d, co = s.table("pc_sample"), s.table("dispatch"), s.table("code_object")
assert m["sample_unattributed"] == "0", {k: v for k, v in m.items() if k.startswith("sample_")}
assert len(d) == rounds, d
stand = co[co.uri.str.contains("/stand-in/r")].copy()
stand["round"] = stand.uri.str.extract(r"/stand-in/r(\d+)/", expand=False).astype(int)
assert sorted(stand["round"]) == list(range(1, rounds + 1)), stand  # one code object per object mapped
assert stand.load_base.duplicated().any(), stand[["uri", "load_base"]]  # the store shows the reuse
order = list(d.sort_values("start_ns").id)  # the rounds' dispatches, in time
for _, c in stand.iterrows():
    got = set(ps[ps.code_object_id == c.id].dispatch_id)
    # every sample of round r's object in round r's dispatch: never the one mapped there before or after
    assert got == {order[c["round"] - 1]}, (c.uri, got, order)
PY
echo "test_sample_remap: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
