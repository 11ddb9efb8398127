#!/usr/bin/env bash
# Sampling beyond one pass (issue 32): `hubprof sample --counters` with all 9 software counters (one more
# than a perf group, one pass, holds) rotates the planner's sets by time slice: every counter gets a
# timeline, each sample records its set (counter_sample.sample_set), a timeline point holds one set, and
# analyze states the sets' coverage. usage: test_sample_sets.sh [HUBPROF]
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/../.." || exit 1
HP=$(realpath "${1:-build/hubprof}")
EX=$PWD/build/examples/ocl
. tests/lib.sh
hp_test_env
need_built test_sample_sets "$HP" "$EX/two_devices" "$HUBPROF_COLLECTOR"
need_opencl test_sample_sets
cd "$T" || exit 1
export POCL_DEVICES=pthread
ALL=task-clock,cpu-clock,context-switches,cpu-migrations,page-faults,minor-faults,major-faults,alignment-faults,emulation-faults
printf '%s\n' ${ALL//,/ } >all.txt

check() { # STORE: every counter has samples, each with the set its counter was planned in, no set mixed
  python3 - "$1" <<'PY'
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    md = s.metadata()
    assert md["sample_counter_sets"] == "2", md
    names = dict(zip(s.table("counter_info").id, s.table("counter_info").name))
    assert len(names) == 9, names
    cs = s.table("counter_sample")
    sets = cs.groupby("counter_id").sample_set.unique()
    assert set(sets.index) == set(names), ("counters without a timeline", set(names) - set(sets.index))
    assert all(len(v) == 1 for v in sets), sets          # a counter is always read in its own set
    assert sorted({int(v[0]) for v in sets}) == [1, 2], sets
    # a point (dispatch, time) holds the counters of one set only
    per = cs.groupby(["dispatch_id", "timestamp_ns"]).sample_set.nunique()
    assert (per == 1).all(), per[per > 1]
PY
}

# a kernel long enough for several 20 ms slices on its worker threads (CPU time: a loaded machine only
# stretches it); once more with 4x the work when a set got no sample (why is printed)
okrun=0
for it in 3000000 12000000; do
  expect 0 "$HP" sample -q --slice-ms 20 --counters @all.txt -o "s$it.db" -- "$EX/two_devices" $it 2
  if check "s$it.db" >py.err 2>&1; then okrun=1; break; fi
  echo "test_sample_sets: $it iterations: $(tail -1 py.err) (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
[ $okrun = 1 ] && ok || bad "9 counters: $(tail -3 py.err)"
expect 0 "$HP" analyze --timeline --dispatch 1 --format csv "s$it.db"
head -1 out | grep -qx 'time_ns,counter,value,set' && ok || bad "timeline columns: $(head -2 out)"
expect 0 "$HP" analyze --timeline --dispatch 1 "s$it.db"
grep -q 'note: counter sets: 2 rotated by time slice; this dispatch.s samples cover .*kernel spin.s dispatches cover 1, 2' out &&
  ok || bad "coverage note: $(tail -3 out)"
# the same in Parquet and the log (the column at the end of counter_sample)
for fmt in parquet log; do
  expect 0 "$HP" convert -q -o "s.$fmt" "s$it.db"
  check "s.$fmt" >py.err 2>&1 && ok || bad "$fmt: $(tail -2 py.err)"
done
# up to 8 counters: one set, as before (set 1, no rotation metadata)
expect 0 "$HP" sample -q --counters task-clock,page-faults -o one.db -- "$EX/two_devices" 200000 1
python3 -c '
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    assert "sample_counter_sets" not in s.metadata() and set(s.table("counter_sample").sample_set) == {1}
' one.db && ok || bad "one set"
expect 2 "$HP" sample -q --slice-ms 0 --counters @all.txt -o x.db -- "$EX/two_devices" 10 1
one_line_error "--slice-ms needs a number from 1 to 10000"

echo "test_sample_sets: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
