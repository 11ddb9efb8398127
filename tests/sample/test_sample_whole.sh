#!/usr/bin/env bash
# Whole-run counter polling (issue 32, `hubprof sample --counters LIST --whole-run`): counter samples with
# no dispatch, polled on the harvester's timer, in every format; `analyze --timeline` without --dispatch
# shows them; samples lie between two dispatches separated by a host sleep. usage: test_sample_whole.sh [HUBPROF]
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/../.." || exit 1
HP=$(realpath "${1:-build/hubprof}")
EX=$PWD/build/examples/ocl
. tests/lib.sh
hp_test_env
need_built test_sample_whole "$HP" "$EX/two_devices" "$HUBPROF_COLLECTOR"
need_opencl test_sample_whole
cd "$T" || exit 1
export POCL_DEVICES=pthread

# between PYTHON-CHECK STORE: samples of no dispatch strictly between dispatch 1's end and dispatch 2's start
between() {
  python3 - "$1" <<'PY'
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    d = s.table("dispatch").sort_values("start_ns")
    assert len(d) == 2, d
    gap0, gap1 = int(d.end_ns.iloc[0]), int(d.start_ns.iloc[1])
    cs = s.table("counter_sample")
    whole = cs[cs.dispatch_id == 0]
    inside = whole[(whole.timestamp_ns > gap0) & (whole.timestamp_ns < gap1)]
    names = dict(zip(s.table("counter_info").id, s.table("counter_info").name))
    assert {names[c] for c in inside.counter_id} == {"task-clock", "context-switches"}, (gap0, gap1, whole)
    tc = whole[whole.counter_id == [k for k, v in names.items() if v == "task-clock"][0]].sort_values("timestamp_ns")
    assert (tc.value.diff().dropna() >= 0).all() and tc.value.iloc[-1] > 0, tc  # process totals only grow
    assert s.metadata()["sample_whole_run"] == "1"
PY
}

for fmt in db parquet log; do
  # a 300 ms host sleep holds ~15 polls of the 20 ms harvester; on a loaded machine, once more with 1 s
  ok_fmt=0
  for ms in 300 1000; do
    expect 0 "$HP" sample -q --counters task-clock,context-switches --whole-run -o "w$ms.$fmt" -- \
      "$EX/two_devices" 20000 2 $ms
    if between "w$ms.$fmt" >py.err 2>&1; then ok_fmt=1; break; fi
    echo "test_sample_whole: $fmt: no poll between the dispatches with a $ms ms sleep (load $(cut -d' ' -f1 /proc/loadavg)): $(tail -2 py.err)" >&2
  done
  [ $ok_fmt = 1 ] && ok || bad "$fmt: no whole-run samples between two dispatches"
  expect 0 "$HP" analyze --timeline "w$ms.$fmt"
  grep -q 'the whole run: [0-9]* counter samples of no dispatch' out && grep -q 'context-switches' out && ok ||
    bad "analyze --timeline $fmt: $(tail -3 out)"
done
# exports: Chrome and Perfetto draw them on the process's "whole run COUNTER" tracks, none skipped
expect 0 "$HP" export --format chrome -o w.json "w$ms.db"
python3 - w.json "w$ms.db" <<'PY' >py.err 2>&1 && ok || bad "chrome export: $(tail -3 py.err) $(cat err)"
import json, sys, hubprof
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
run = [e for e in ev if e.get("ph") == "C" and e["name"].startswith("whole run ")]
with hubprof.open(sys.argv[2]) as s:
    cs = s.table("counter_sample")
    assert len(run) == (cs.dispatch_id == 0).sum() > 0, (len(run), cs)
assert {e["name"] for e in run} == {"whole run task-clock", "whole run context-switches"}
PY
! grep -q "out of order" err && ok || bad "chrome export skipped events: $(cat err)"
expect 0 "$HP" export --format perfetto -o w.pftrace "w$ms.db"
n=$(python3 -c "import hubprof,sys; print(hubprof.open(sys.argv[1]).count('counter_sample'))" "w$ms.db")
grep -q "hubprof: $n counter samples" err && ! grep -q "out of order" err && ok || bad "perfetto export: $(cat err) (want $n)"
# OTF2: metric events on the process's "whole run" location (a metric location), every row in order,
# read back with otf2-print
if command -v otf2-print >/dev/null && "$HP" version 2>/dev/null | grep -q '^export formats: .*otf2'; then
  expect 0 "$HP" export --format otf2 -o w-otf2 "w$ms.db"
  ! grep -q "out of order" err && ok || bad "otf2 export skipped events: $(cat err)"
  otf2-print w-otf2/traces.otf2 >otf2.txt 2>&1 && otf2-print -G w-otf2/traces.otf2 >otf2-defs.txt 2>&1 &&
    python3 - otf2.txt otf2-defs.txt "w$ms.db" <<'PY' >py.err 2>&1 && ok || bad "otf2 whole run: $(tail -3 py.err)"
import re, sys, hubprof
text, defs = open(sys.argv[1]).read(), open(sys.argv[2]).read()
with hubprof.open(sys.argv[3]) as s:
    info = s.table("counter_info").sort_values("id")
    cs = s.table("counter_sample")
nc = len(info)
ev = re.findall(r"^METRIC\s+(\d+)\s+(\d+)\s+Metric: (\d+), 1 Value: \(.*; DOUBLE; ([-0-9.e+]+)\)$", text, re.M)
run = [(int(l), int(t), int(m), float(v)) for l, t, m, v in ev if int(m) >= 2 * nc]
whole = cs[cs.dispatch_id == 0]
assert len(run) == len(whole) > 0, (len(run), len(whole))
assert len({l for l, _, _, _ in run}) == 1, run[:5]  # one location: the process's
loc = run[0][0]
assert all(int(l) != loc for l, _, m, _ in ev if int(m) < 2 * nc)  # dispatches' metrics stay on their lanes
for i, (cid, name) in enumerate(zip(info.id, info.name)):  # class 2 nc + i: counter i's polls, in order
    want = whole[whole.counter_id == cid].sort_values("timestamp_ns").value.tolist()
    got = [v for _, _, m, v in run if m == 2 * nc + i]
    assert len(got) == len(want) and all(abs(a - b) <= 1e-5 * max(1.0, abs(b)) for a, b in zip(got, want)), (name, got[:3], want[:3])
    assert f'Name: "{name} (whole run)"' in defs, name
assert re.search(r'^LOCATION\s+%d\s+Name: "whole run" <\d+>, Type: METRIC' % loc, defs, re.M), defs[:2000]
PY
fi
# the HTML report: a "Whole-run counters" section, one chart per counter
expect 0 "$HP" report -o w.html "w$ms.db"
grep -q '<h2 id="run-counters">Whole-run counters</h2>' w.html && [ "$(grep -o 'class="run-counter"' w.html | wc -l)" = 2 ] &&
  ok || bad "report: $(grep -c run-counter w.html)"
# without --whole-run: no sample of no dispatch
expect 0 "$HP" sample -q --counters task-clock -o n.db -- "$EX/two_devices" 20000 2 100
expect 0 "$HP" analyze --timeline n.db
grep -q 'no counter samples outside dispatches' out && ok || bad "no whole run: $(tail -2 out)"
expect 2 "$HP" sample -q --whole-run -o x.db -- "$EX/two_devices" 10 1
one_line_error "--whole-run polls the counters of --counters LIST"
# Python: the whole-run timeline as a DataFrame
python3 - w$ms.db <<'PY' >py.err 2>&1 && ok || bad "python timeline: $(tail -3 py.err)"
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    tl = s.analyze(by="timeline")
    assert list(tl.columns) == ["time_ns", "counter", "value", "pid"] and len(tl) >= 4, tl
    assert set(tl.counter) == {"task-clock", "context-switches"}, tl
    assert set(tl.pid) == set(s.table("process").pid), tl  # each sample names its process
    cs = s.table("counter_sample")
    assert (cs.process_id == s.table("process").id.iloc[0]).all(), cs
PY

echo "test_sample_whole: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
