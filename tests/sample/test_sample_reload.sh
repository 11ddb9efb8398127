#!/usr/bin/env bash
# Samples of programs built, run and released one after the other (issue 28, an auto-tuner's pattern:
# examples/ocl/reload.c, one kernel name, a new program each round): PoCL unloads each kernel's code at the
# release and maps the next one, often where the last one was. Every sample must go to the code object that
# was mapped when it was taken (mappings tracked by identity and time, not by address range alone): none
# unattributed, each dispatch's samples in its own code object, never one of another round.
# usage: test_sample_reload.sh [HUBPROF]   (from the repository root)
# SPDX-License-Identifier: MIT
set -u
ROOT=$PWD
HP=$(realpath "${1:-build/hubprof}")
EX=$ROOT/build/examples/ocl
. "$ROOT/tests/lib.sh"
hp_test_env
export POCL_CACHE_DIR=$T/kcache
need_built test_sample_reload "$HP" "$EX/reload" "$HUBPROF_COLLECTOR"
need_opencl test_sample_reload
cd "$T"
ROUNDS=8

"$EX/reload" $ROUNDS 2000000 >plain.out 2>/dev/null
expect 0 "$HP" sample -q --period-us 200 -o r.db -- "$EX/reload" $ROUNDS 2000000
if cmp -s plain.out out; then ok; else bad "output differs under sample"; fi
for f in r.db; do
  if python3 - "$f" $ROUNDS >py.err 2>&1 <<'PY'; then ok; else bad "$f: $(tail -5 py.err)"; fi
import sys, hubprof
rounds = int(sys.argv[2])
with hubprof.open(sys.argv[1]) as s:
    m = s.metadata()
    ps, d, co = s.table("pc_sample"), s.table("dispatch"), s.table("code_object")
assert m["sample_unattributed"] == "0", {k: v for k, v in m.items() if k.startswith("sample_")}
assert len(d) == rounds, len(d)
so = co[co.uri.str.endswith("/tune.so")].set_index("id")
per = ps.groupby("dispatch_id")["code_object_id"].unique()
assert len(per) >= rounds - 1, per  # (a round may get no sample on a loaded machine; most get many)
for did, ids in per.items():
    assert len(ids) == 1 and ids[0] in so.index, (did, ids)  # one code object, a tune.so
owner = {ids[0]: did for did, ids in per.items()}
assert len(owner) == len(per), ("two dispatches in one code object", per)  # never another round's
assert so.loc[list(owner), "hash"].is_unique, so
PY
done
echo "test_sample_reload: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
