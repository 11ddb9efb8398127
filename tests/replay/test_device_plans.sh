#!/usr/bin/env bash
# Per-device plans (issue 32): a program that uses both PoCL devices (POCL_DEVICES="basic pthread",
# examples/ocl/two_devices.c) profiled with a different counter list on each device ('device=0:...' by
# index, 'device=pthread*:...' by name): each device's dispatches carry its own counters and no others,
# each device's plan is in the store's metadata and shown by `info`, analyze reports each device on its
# own rows; `plan` prints a plan per device list; malformed or unsupported uses are refused before the run.
# Application replay and iteration multiplexing too, with a device list of two passes (one counter a pass)
# beside one of one pass: each device measures its own passes (its own runs, its own rotation), imputed and
# matched per device, and no device gets the other's counters.
# usage: test_device_plans.sh [HUBPROF]
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/../.." || exit 1
HP=$(realpath "${1:-build/hubprof}")
EX=$PWD/build/examples/ocl
. tests/lib.sh
hp_test_env
need_built test_device_plans "$HP" "$EX/two_devices" "$HUBPROF_COLLECTOR"
need_opencl test_device_plans
cd "$T" || exit 1
export POCL_DEVICES="basic pthread"
printf 'context-switches\n# the pthread device only\n' >pth.txt

"$EX/two_devices" 2000 3 >plain.txt
expect 0 "$HP" profile -q --counters 'device=0:task-clock,page-faults' --counters 'device=pthread*:@pth.txt' \
  -o d.db -- "$EX/two_devices" 2000 3
cmp -s plain.txt out && grep -q '2 devices' out && ok || bad "output: $(cat out) / $(cat plain.txt)"
python3 - d.db <<'PY' >py.err 2>&1 && ok || bad "counters per device: $(tail -3 py.err)"
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    agents = dict(zip(s.table("agent").id, s.table("agent").name))
    info = dict(zip(s.table("counter_info").id, s.table("counter_info").name))
    dev = dict(zip(s.table("dispatch").id, s.table("dispatch").agent_id))
    got = {}
    for d, c in zip(s.table("counter_value").dispatch_id, s.table("counter_value").counter_id):
        got.setdefault(agents[dev[d]].split("-")[0], set()).add(info[c])
    assert got == {"basic": {"task-clock", "page-faults"}, "pthread": {"context-switches"}}, got
    per = {}
    for d, a in dev.items():
        per[agents[a].split("-")[0]] = per.get(agents[a].split("-")[0], 0) + 1
    assert per == {"basic": 3, "pthread": 3}, per
    assert s.metadata()["device_plan.0"].startswith("basic-") and s.metadata()["device_plan.0"].endswith(
        " = task-clock,page-faults"), s.metadata()["device_plan.0"]
    assert s.metadata()["device_plan.1"].startswith("pthread-") and s.metadata()["device_plan.1"].endswith(
        " = context-switches"), s.metadata()["device_plan.1"]
PY
expect 0 "$HP" info d.db
grep -q '^device plan     #0 basic-.*: task-clock,page-faults$' out &&
  grep -q '^device plan     #1 pthread-.*: context-switches$' out && ok || bad "info: $(tail -4 out)"
expect 0 "$HP" info --json d.db
python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["device_plans"]
assert [(x["index"], x["plan"]) for x in p] == [(0, "task-clock,page-faults"), (1, "context-switches")], p
' out && ok || bad "info --json: $(cat out)"
# analyze: a row per device, each with its own counters (the other's shown as not measured)
expect 0 "$HP" analyze --format csv --counters task-clock,context-switches --metrics none d.db
python3 - out <<'PY' && ok || bad "analyze per device: $(cat out)"
import csv, sys
rows = {r["device"].split("-")[0]: r for r in csv.DictReader(open(sys.argv[1]))}
assert float(rows["basic"]["task-clock"]) > 0 and rows["basic"]["context-switches"] == "", rows
assert rows["pthread"]["task-clock"] == "" and rows["pthread"]["context-switches"] != "", rows
PY

# unaddressed lists apply to every device; a device no list names runs unmeasured
expect 0 "$HP" profile -q --counters page-faults --counters 'device=1:context-switches' -o e.db -- \
  "$EX/two_devices" 2000 2
python3 - e.db <<'PY' >py.err 2>&1 && ok || bad "unaddressed list: $(tail -3 py.err)"
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    info = dict(zip(s.table("counter_info").id, s.table("counter_info").name))
    dev = dict(zip(s.table("dispatch").id, s.table("dispatch").agent_id))
    got = {}
    for d, c in zip(s.table("counter_value").dispatch_id, s.table("counter_value").counter_id):
        got.setdefault(dev[d], set()).add(info[c])
    assert sorted(map(sorted, got.values())) == [["context-switches", "page-faults"], ["page-faults"]], got
PY
expect 0 "$HP" profile -q --counters 'device=pthread*:page-faults' -o f.db -- "$EX/two_devices" 2000 2
python3 - f.db <<'PY' >py.err 2>&1 && ok || bad "unnamed device: $(tail -3 py.err)"
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    assert len(s.table("dispatch")) == 4, s.table("dispatch")
    assert len(s.table("counter_value")) == 2, s.table("counter_value")
    assert s.metadata()["device_plan.0"].endswith(" = "), s.metadata()["device_plan.0"]
PY

# application replay and multiplexing: one counter a pass, so device 0 has two passes and pthread one
# per_device STORE MODE: each device's counters (measured, and imputed under multiplexing) and passes
per_device() {
  python3 - "$1" "$2" <<'PY'
import sys, hubprof
mode = sys.argv[2]
with hubprof.open(sys.argv[1]) as s:
    md = s.metadata()
    agents = dict(zip(s.table("agent").id, s.table("agent").name))
    info = dict(zip(s.table("counter_info").id, s.table("counter_info").name))
    dev = dict(zip(s.table("dispatch").id, s.table("dispatch").agent_id))
    cv = s.table("counter_value")
    got, passes, per = {}, {}, {}
    for d, c, p, imp in zip(cv.dispatch_id, cv.counter_id, cv["pass"], cv.imputed):
        a = agents[dev[d]].split("-")[0]
        got.setdefault(a, set()).add(info[c])
        passes.setdefault((a, info[c]), set()).add(int(p))
        per.setdefault((a, d), []).append((info[c], bool(imp)))
    assert got == {"basic": {"task-clock", "page-faults"}, "pthread": {"context-switches"}}, got
    # the whole plan's pass numbers: device 0's are 1 and 2, pthread's 3
    assert passes == {("basic", "task-clock"): {1}, ("basic", "page-faults"): {2},
                      ("pthread", "context-switches"): {3}}, passes
    assert md["pass_plan"] == "task-clock;page-faults;context-switches", md["pass_plan"]
    assert md["device_plan.0"].endswith(" = task-clock;page-faults"), md["device_plan.0"]
    assert md["device_plan.1"].endswith(" = context-switches"), md["device_plan.1"]
    assert sorted(a.split("-")[0] for a in map(agents.get, dev.values())) == ["basic"] * 3 + ["pthread"] * 3
    # every dispatch has each of its device's counters once, none of the other device's
    for (a, d), vals in per.items():
        names = sorted(n for n, _ in vals)
        assert names == sorted(got[a]), (a, d, vals)
        if mode == "application":  # every value measured, in its device's own run
            assert not any(i for _, i in vals), (a, d, vals)
        else:  # multiplexing: one counter measured a dispatch at most (a cold first one's: its warm estimate)
            assert sum(not i for _, i in vals) <= 1, (a, d, vals)
    assert len(per) == 6, per
    measured = {(a, n) for (a, d), vals in per.items() for n, i in vals if not i}
    assert measured == {(a, n) for a in got for n in got[a]}, measured  # each counter measured somewhere
    if mode == "multiplex":
        assert md["multiplex_incomplete"] == "[]", md["multiplex_incomplete"]
        assert md["replay"] == "multiplex"
    else:
        assert md["replay"] == "application" and md["replay_match"] == "grid"
PY
}
for mode in application multiplex; do
  expect 0 "$HP" profile --replay $mode --max-counters-per-pass 1 --counters 'device=0:task-clock,page-faults' \
    --counters 'device=pthread*:@pth.txt' -o "$mode.db" -- "$EX/two_devices" 2000 3
  [ "$(sort -u out)" = "$(cat plain.txt)" ] && ok || bad "$mode: output: $(cat out) / $(cat plain.txt)" # each run's
  per_device "$mode.db" $mode >py.err 2>&1 && ok || bad "$mode: counters per device: $(tail -3 py.err)"
  [ $mode = multiplex ] && continue
  # application replay: two runs (device 0's two passes), the second measuring nothing on pthread
  grep -q '^hubprof: \[pass 1/2\] device=0: task-clock; device=pthread\*: context-switches; every other device: -$' err &&
    grep -q '^hubprof: \[pass 2/2\] device=0: page-faults; device=pthread\*: -; every other device: -$' err && ok ||
    bad "application replay: runs: $(grep pass err)"
done
expect 0 "$HP" info application.db
grep -q '^device plan     #0 basic-.*: task-clock;page-faults$' out && ok || bad "info application: $(tail -4 out)"

# plan: one plan per device list
expect 0 "$HP" plan --format line --counters cpu-clock --counters 'device=1:page-faults' --counters 'device=gpu*:task-clock'
[ "$(cat out)" = "device=1: cpu-clock,page-faults
device=gpu*: cpu-clock,task-clock
device=*: cpu-clock" ] && ok || bad "plan per device: $(cat out)"
# refused before the run: a malformed selector, other replay modes, csv
expect 2 "$HP" profile -q --counters 'device=:page-faults' -o g.db -- "$EX/two_devices" 10 1
one_line_error "a list for some devices is 'device=SEL:LIST'"
expect 1 "$HP" profile -q --counters 'device=0:nope' -o g.db -- "$EX/two_devices" 10 1
one_line_error "unknown counter 'nope'"
[ ! -e g.db ] && ok || bad "a refused profile wrote g.db"
expect 2 "$HP" plan --format json --counters 'device=0:page-faults'
one_line_error "not --format csv or json"

echo "test_device_plans: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
