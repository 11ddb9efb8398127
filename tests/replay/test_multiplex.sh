#!/usr/bin/env bash
# Iteration multiplexing (`hubprof profile --replay multiplex`) on real OpenCL programs under PoCL: one run,
# each dispatch measuring one pass, rotating per kernel (or per launch); the imputed values are recomputed
# from the store (build/tests/replay/check_profile, and SQL over the rocpd store) and compared; keys with
# too few dispatches are reported and get no imputed value; the application's output and exit status are
# kept; conflicting options are refused before the application starts.
# usage: test_multiplex.sh [HUBPROF]   (needs `make all collector`; runs in a temporary directory)
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
HP=$(realpath "${1:-build/hubprof}")
EX=$PWD/build/examples/ocl
CHECK=$PWD/build/tests/replay/check_profile
LIB=$PWD/build/libhubprof_collector.so
. tests/lib.sh
hp_test_env
need_built test_multiplex "$HP" "$CHECK" "$LIB" "$EX/iterations" "$EX/user_event"
need_opencl test_multiplex
cd "$T"
C3=(--counters task-clock,page-faults,context-switches --max-counters-per-pass 1)
C5=(--counters task-clock,page-faults,context-switches,cpu-migrations,minor-faults --max-counters-per-pass 1)
HAVE_SQL=0
command -v sqlite3 >/dev/null && HAVE_SQL=1

facts() { sed -nE "s/.*[ ^]?$2=([^ ]+).*/\1/p" "$1.report" | tail -n 1; }
expect_eq() { # WHAT GOT WANT
  if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi
}
has() { # WHAT FILE FIXED-STRING
  if grep -qF -- "$3" "$2"; then ok; else bad "$1: '$3' not in $2: $(cat "$2")"; fi
}
q() { sqlite3 "$1" "$2"; }
meta() { q "$1" "select value from rocpd_metadata where tag='$2'"; }
# median_check KEYCOLS: SQL counting the imputed values that are not the median of their counter's measured
# values over the key's warm dispatches (KEYCOLS: the key's columns; the key's first dispatch is cold)
median_check() {
  local k=$1
  echo "with cold as (select min(dispatch_id) id from counters_collection group by $k),
    m as (select $k, counter_name, value, row_number() over (partition by $k, counter_name order by value) r,
      count(*) over (partition by $k, counter_name) n from counters_collection
      where imputed = 0 and dispatch_id not in (select id from cold)),
    med as (select $k, counter_name, avg(value) v from m where r in ((n + 1) / 2, (n + 2) / 2)
      group by $k, counter_name)
    select count(*) from counters_collection i left join med using ($k, counter_name)
    where i.imputed = 1 and (med.v is null or abs(i.value - med.v) > 1e-9 * max(1.0, abs(i.value)))"
}
# muxed NAME [hubprof options...] -- APP ARGS: profile with iteration multiplexing into NAME.db, check it
muxed() {
  local name=$1
  shift
  local opts=()
  while [ "$1" != -- ]; do
    opts+=("$1")
    shift
  done
  shift
  local out=$name.db # the output's name says its format (-F parquet: .parquet, -F log: .hplog)
  case " ${opts[*]} " in
  *" parquet "*) out=$name.parquet ;;
  *" log "*) out=$name.hplog ;;
  esac
  "$HP" profile "${opts[@]}" -o "$out" -- "$@" >"$name.out" 2>"$name.err"
  echo $? >"$name.rc"
  "$CHECK" "$out" >"$name.report" 2>&1
  echo $? >"$name.check"
}
checked() { # NAME: check_profile found nothing wrong
  [ "$(cat "$1.check")" = 0 ] && ok || bad "$1: $(grep -m5 bad "$1.report")"
}
# cold_check NAME [launch]: in NAME's store (any format, read through Python) the first dispatch of each key
# (kernel, or kernel + sizes with policy launch) in its process, by the collector's dispatch id, is marked
# cold, and no other is
cold_check() {
  PYTHONPATH=$ROOT/python python3 - "$1" "${2:-kernel}" <<'EOF2' && ok || bad "$1: cold marks wrong"
import glob, sys, hubprof
name, policy = sys.argv[1:]
path = (glob.glob(name + ".db") + glob.glob(name + ".parquet") + glob.glob(name + ".hplog") + glob.glob(name))[0]
with hubprof.open(path) as s:
    d = s.table("dispatch")
cols = ["process_id", "kernel_id"] + (["grid_x", "grid_y", "grid_z", "workgroup_x", "workgroup_y", "workgroup_z"]
                                      if policy == "launch" else [])
first = d.groupby(cols)["dispatch_id"].transform("min")
want = (d["dispatch_id"] == first).astype(int)
bad = d[d["cold"] != want]
assert len(d) and not len(bad), bad
print("cold:", int(d["cold"].sum()), "of", len(d), file=sys.stderr)
EOF2
}
same_as_plain() { # NAME PLAIN: output and exit status as without hubprof
  cmp -s "$1.out" "$2.out" && ok || bad "$1: output differs: $(cat "$1.out") vs $(cat "$2.out")"
  cmp -s "$1.rc" "$2.rc" && ok || bad "$1: exit $(cat "$1.rc"), unprofiled $(cat "$2.rc")"
}

"$EX/iterations" 4096 60 2 >plain.out 2>plain.err
echo $? >plain.rc
grep -q ' ok$' plain.out && ok || bad "plain run not ok: $(cat plain.out plain.err)"

# ---- 1. policy kernel, 5 passes: relax 60 dispatches (complete), finish 2 dispatches (incomplete) ----
muxed k5 "${C5[@]}" --replay multiplex -- "$EX/iterations" 4096 60 2
same_as_plain k5 plain
checked k5
expect_eq "k5 replay" "$(facts k5 replay)" multiplex
expect_eq "k5 dispatches (the application's 60 + 2)" "$(facts k5 dispatches)" 62
expect_eq "k5 each dispatch ran once, measuring one pass" "$(facts k5 passes)" "1:62"
# relax's cold first dispatch: its reading replaced by the warm median (imputed; raw in multiplex_cold_raw)
expect_eq "k5 measured values" "$(facts k5 measured)" 61
expect_eq "k5 imputed values (60 x 4 + the cold reading)" "$(facts k5 imputed)" 241
expect_eq "k5 cold readings replaced (relax's; finish is incomplete)" "$(facts k5 replaced)" 1
expect_eq "k5 keys" "$(facts k5 keys)" 2
expect_eq "k5 incomplete keys" "$(facts k5 incomplete)" 1
expect_eq "k5 unprofiled" "$(facts k5 unprofiled)" 0
has "k5 plan line" k5.err "5 passes on cpu-perf, at most 1 per pass, iteration multiplexing (policy 'kernel')"
has "k5 incomplete reported" k5.err "hubprof: warning: kernel finish: 2 dispatches cover 2 of 5 passes: left out of metrics"
has "k5 summary" k5.err "hubprof: 62 dispatches of 2 kernels in 1 process, 61 measured and 241 imputed counter values in 5 passes (iteration multiplexing, policy 'kernel': 1 of 2 keys complete) -> k5.db (rocpd)"
[ "$(grep -c warning k5.err)" = 1 ] && ok || bad "k5: want one warning: $(cat k5.err)"
cold_check k5
# analyze: cold_calls per kernel in CSV and JSON, a note under the table
"$HP" analyze --format csv k5.db >k5.csv 2>k5.csv.err
python3 - k5.csv <<'EOF2' && ok || bad "k5 analyze cold_calls: $(cat k5.csv)"
import csv, sys
rows = {r["kernel"]: r for r in csv.DictReader(open(sys.argv[1]))}
assert {k: r["cold_calls"] for k, r in rows.items()} == {"relax": "1", "finish": "1"}, rows
EOF2
"$HP" analyze --format json k5.db 2>/dev/null | python3 -c '
import json, sys
assert sorted(r["cold_calls"] for r in json.load(sys.stdin)) == [1, 1]' && ok || bad "k5 analyze json cold_calls"
"$HP" analyze k5.db >k5.table 2>&1
has "k5 analyze cold note" k5.table "note: 2 of the 62 calls are cold: the first dispatch of their kernel in their process"
[ $HAVE_SQL = 0 ] || expect_eq "k5 cold in rocpd's extdata (relax, finish)" \
  "$(q k5.db "select group_concat(s.kernel_name) from rocpd_kernel_dispatch d join rocpd_info_kernel_symbol s
      on s.id = d.kernel_id where json_extract(d.extdata, '$.cold') = 1")" "relax,finish"
ls -A | grep -q 'hubprof-logs' && bad "log directory left behind: $(ls -A)" || ok
if [ $HAVE_SQL = 1 ]; then
  # recomputed with SQL: every relax dispatch holds 5 values, 1 measured, 4 imputed; the cold first one 5 imputed
  expect_eq "k5 relax: 5 values, 1 measured each (the cold one: 5 imputed)" \
    "$(q k5.db "select group_concat(n) from (select m || ':' || count(*) n from (select dispatch_id, count(*) c,
        sum(imputed = 0) m, sum(imputed = 1) i from counters_collection where kernel_name = 'relax'
        group by dispatch_id) where c = 5 and m + i = 5 group by m order by m)")" "0:1,1:59"
  # ... each imputed value is the median of the measured values of its counter over relax's warm dispatches
  # (all but its first, the cold one)
  expect_eq "k5 imputed = median of warm measured" "$(q k5.db "$(median_check kernel_name)")" 0
  expect_eq "k5 imputed values tested" "$(q k5.db "select count(*) from counters_collection where imputed = 1")" 241
  # the cold reading kept apart: relax's first dispatch, task-clock (pass 1), raw and the estimate it got
  meta k5.db multiplex_cold_raw >k5.raw
  python3 - k5.raw "$(q k5.db "select value from counters_collection where kernel_name = 'relax' and
      counter_name = 'task-clock' order by dispatch_id limit 1")" <<'EOF2' && ok || bad "k5 multiplex_cold_raw: $(cat k5.raw)"
import json, sys
raw = json.load(open(sys.argv[1]))
assert [(r["kernel"], r["counter"]) for r in raw] == [("relax", "task-clock")], raw
assert raw[0]["estimate"] == float(sys.argv[2]) and raw[0]["raw"] > 0, (raw, sys.argv[2])
EOF2
  # ... and carries the pass of its counter (task-clock is pass 1, minor-faults pass 5)
  expect_eq "k5 imputed passes" \
    "$(q k5.db "select group_concat(distinct counter_name || ':' || replay_pass) from (select * from
        counters_collection where imputed = 1 order by replay_pass)")" \
    "task-clock:1,page-faults:2,context-switches:3,cpu-migrations:4,minor-faults:5"
  # the rotation: the i-th dispatch of relax measured pass (i mod 5) + 1 (the first's reading replaced)
  expect_eq "k5 rotation" "$(q k5.db "select group_concat(replay_pass, '') from (select replay_pass from
      counters_collection where kernel_name = 'relax' and imputed = 0 order by dispatch_id)")" \
    "2345$(for i in $(seq 11); do printf 12345; done)"
  # finish: measured values only, never an imputed one, never a zero filled in
  expect_eq "k5 finish: values" \
    "$(q k5.db "select count(*) || '/' || sum(imputed) from counters_collection where kernel_name = 'finish'")" "2/0"
  expect_eq "k5 metadata policy" "$(meta k5.db multiplex_policy)" kernel
  expect_eq "k5 metadata imputation" "$(meta k5.db multiplex_imputation)" median
  expect_eq "k5 metadata min per pass" "$(meta k5.db multiplex_min_per_pass)" 1
  expect_eq "k5 metadata keys" "$(meta k5.db multiplex_keys)" 2
  expect_eq "k5 metadata replay" "$(meta k5.db replay)" multiplex
  pid=$(q k5.db "select distinct pid from counters_collection")
  meta k5.db multiplex_incomplete >k5.inc
  grep -qE "^\[\{\"pid\":$pid,\"process_start_ns\":[0-9]+,\"kernel\":\"finish\",\"program\":\"[0-9a-f]{16}\",\"dispatches\":2,\"passes\":5,\"passes_covered\":2,\"measured_per_pass\":\[1,1,0,0,0\]\}\]$" k5.inc &&
    ok || bad "k5 multiplex_incomplete: $(cat k5.inc)"
fi

# ---- 2. policy launch, 3 passes: each grid of relax rotates on its own, means per grid ----
muxed l3 "${C3[@]}" --replay multiplex --multiplex-policy launch -- "$EX/iterations" 4096 60 2
same_as_plain l3 plain
checked l3
expect_eq "l3 keys (relax x 2 grids, finish)" "$(facts l3 keys)" 3
expect_eq "l3 incomplete" "$(facts l3 incomplete)" 1
expect_eq "l3 imputed (60 x 2 + 2 cold readings)" "$(facts l3 imputed)" 122
expect_eq "l3 cold readings replaced (one per grid)" "$(facts l3 replaced)" 2
has "l3 plan line" l3.err "iteration multiplexing (policy 'launch')"
has "l3 incomplete reported" l3.err "hubprof: warning: kernel finish grid 1,1,1 wg 0,0,0: 2 dispatches cover 2 of 3 passes: left out of metrics"
has "l3 summary" l3.err "(iteration multiplexing, policy 'launch': 2 of 3 keys complete)"
cold_check l3 launch
if [ $HAVE_SQL = 1 ]; then
  for g in 4096 2048; do
    expect_eq "l3 rotation of grid $g" "$(q l3.db "select group_concat(replay_pass, '') from (select replay_pass
        from counters_collection where kernel_name = 'relax' and grid_size_x = $g and imputed = 0
        order by dispatch_id)")" "23$(for i in $(seq 9); do printf 123; done)"
  done
  expect_eq "l3 imputed = median of the same grid" "$(q l3.db "$(median_check "kernel_name, grid_size_x")")" 0
  expect_eq "l3 metadata policy" "$(meta l3.db multiplex_policy)" launch
  meta l3.db multiplex_incomplete >l3.inc
  has "l3 multiplex_incomplete names the launch" l3.inc '"kernel":"finish","program":"'
  has "l3 multiplex_incomplete names the launch" l3.inc '","grid":[1,1,1],"workgroup":[0,0,0],"dispatches":2,"passes":3,"passes_covered":2,"measured_per_pass":[1,1,0]'
fi
# the same run with policy kernel rotates over both grids: grid 2048 has dispatches 2, 4, 6, ... of relax
muxed k3 "${C3[@]}" --replay multiplex -- "$EX/iterations" 4096 60 2
checked k3
expect_eq "k3 keys" "$(facts k3 keys)" 2
if [ $HAVE_SQL = 1 ]; then
  expect_eq "k3 rotation across grids" "$(q k3.db "select group_concat(replay_pass, '') from (select replay_pass
      from counters_collection where kernel_name = 'relax' and grid_size_x = 2048 and imputed = 0
      order by dispatch_id limit 6)")" 213213
fi

# ---- 3. fewer dispatches than passes: incomplete, no imputed value at all ----
"$EX/iterations" 4096 3 0 >few.plain.out 2>&1
echo $? >few.plain.rc
muxed few "${C5[@]}" --replay multiplex -- "$EX/iterations" 4096 3 0
same_as_plain few few.plain
checked few
expect_eq "few: imputed" "$(facts few imputed)" 0
expect_eq "few: measured" "$(facts few measured)" 3
expect_eq "few: incomplete" "$(facts few incomplete)" 1
has "few: reported" few.err "hubprof: warning: kernel relax: 3 dispatches cover 3 of 5 passes: left out of metrics"
has "few: summary" few.err "3 measured and 0 imputed counter values in 5 passes (iteration multiplexing, policy 'kernel': 0 of 1 key complete)"
# one dispatch: "1 dispatch covers"
muxed one "${C3[@]}" --replay multiplex -- "$EX/iterations" 4096 1 0
has "one: reported" one.err "kernel relax: 1 dispatch covers 1 of 3 passes: left out of metrics"
checked one

# ---- 4. other formats, exit status, the same mode twice, a dispatch run unprofiled ----
muxed pq "${C3[@]}" --replay multiplex --format parquet -- "$EX/iterations" 4096 12 1
checked pq
expect_eq "parquet: imputed" "$(facts pq imputed)" 25
expect_eq "parquet: incomplete" "$(facts pq incomplete)" 1
cold_check pq
muxed lg "${C3[@]}" --replay multiplex --format log -- "$EX/iterations" 4096 12 1
checked lg
expect_eq "log: imputed" "$(facts lg imputed)" 25
cold_check lg
"$EX/iterations" 4096 9 1 3 >rc.plain.out 2>&1
echo $? >rc.plain.rc
muxed rc "${C3[@]}" --replay multiplex --replay multiplex -- "$EX/iterations" 4096 9 1 3
same_as_plain rc rc.plain
expect_eq "exit status 3 kept" "$(cat rc.rc)" 3
checked rc
expect_eq "exit status: dispatches" "$(facts rc dispatches)" 10
# a crash: its exit status, and what it committed before
{ "$EX/crash" segv 5 >/dev/null; } 2>/dev/null
want_rc=$?
muxed crash "${C3[@]}" --replay multiplex -- "$EX/crash" segv 5
expect_eq "crash: exit status" "$(cat crash.rc)" "$want_rc"
checked crash
expect_eq "crash: dispatches kept (5, then 3 in flight)" "$(facts crash dispatches)" 8
# a dispatch gated by a user event runs once, unprofiled (never hangs); its kernel's rotation goes on
"$EX/user_event" 4096 10 >ue.plain.out 2>&1
echo $? >ue.plain.rc
timeout 60 "$HP" profile "${C3[@]}" --replay multiplex -o ue.db -- "$EX/user_event" 4096 10 >ue.out 2>ue.err
echo $? >ue.rc
same_as_plain ue ue.plain
"$CHECK" ue.db >ue.report 2>&1 && ok || bad "user event: $(grep -m3 bad ue.report)"
expect_eq "user event: unprofiled" "$(facts ue unprofiled)" 1
# HUBPROF_MULTIPLEX in the user's environment does not turn kernel replay into multiplexing
HUBPROF_MULTIPLEX=launch "$HP" profile "${C3[@]}" -o kr.db -- "$EX/iterations" 4096 6 1 >/dev/null 2>kr.err
"$CHECK" kr.db >kr.report 2>&1 && ok || bad "kernel replay: $(grep -m3 bad kr.report)"
expect_eq "kernel replay stays kernel replay" "$(facts kr replay)/$(facts kr passes)" "kernel/3:7"

# ---- 5. conflicting options: one line, exit 2, before the application starts, nothing written ----
refused() { # WANT-IN-MESSAGE ARGS...
  local want=$1
  shift
  rm -f started
  "$HP" profile "$@" -o never.db -- sh -c "touch $T/started" >ref.out 2>ref.err
  local rc=$?
  if [ $rc = 2 ] && [ "$(wc -l <ref.err)" = 1 ] && [ ! -s ref.out ] && [ ! -e never.db ] && [ ! -e started ] &&
    grep -qF -- "$want" ref.err; then ok; else
    bad "profile $*: exit $rc, stderr: $(cat ref.err), stdout: $(cat ref.out), started: $([ -e started ] && echo yes)"
  fi
}
refused "('kernel' and 'multiplex')" --counters task-clock --replay kernel --replay multiplex
refused "('multiplex' and 'application')" --counters task-clock --replay multiplex --replay application
refused "('multiplex' and 'kernel')" --counters task-clock --replay multiplex --multiplex-policy launch --replay kernel
refused "--multiplex-policy applies to iteration multiplexing only" --counters task-clock --multiplex-policy launch
refused "--multiplex-policy applies to iteration multiplexing only" --counters task-clock --replay kernel --multiplex-policy kernel
refused "--multiplex-policy applies to iteration multiplexing only" --counters task-clock --replay application --multiplex-policy launch
refused "--match applies to application replay only" --counters task-clock --replay multiplex --match grid
refused "'kernel' or 'launch', not 'grid'" --counters task-clock --replay multiplex --multiplex-policy grid
refused "('kernel' and 'launch')" --counters task-clock --replay multiplex --multiplex-policy kernel --multiplex-policy launch
refused "'kernel', 'application' or 'multiplex'" --counters task-clock --replay multiplexing

# ---- 6. the collector alone: bad HUBPROF_MULTIPLEX, or with HUBPROF_PASS: one line, the app unchanged ----
mkdir -p direct
HUBPROF_OUTPUT_DIR=$T/direct HUBPROF_MODE=profile HUBPROF_PLAN='task-clock;page-faults' HUBPROF_MULTIPLEX=sometimes \
  OPENCL_LAYERS=$LIB "$EX/iterations" 4096 60 2 >d1.out 2>d1.err
cmp -s d1.out plain.out && ok || bad "bad HUBPROF_MULTIPLEX: output $(cat d1.out)"
has "bad HUBPROF_MULTIPLEX" d1.err 'HUBPROF_MULTIPLEX must be "kernel" or "launch"'
HUBPROF_OUTPUT_DIR=$T/direct HUBPROF_MODE=profile HUBPROF_PLAN='task-clock' HUBPROF_PASS=2 HUBPROF_MULTIPLEX=kernel \
  OPENCL_LAYERS=$LIB "$EX/iterations" 4096 60 2 >d2.out 2>d2.err
cmp -s d2.out plain.out && ok || bad "HUBPROF_MULTIPLEX with HUBPROF_PASS: output $(cat d2.out)"
has "HUBPROF_MULTIPLEX with HUBPROF_PASS" d2.err "HUBPROF_MULTIPLEX and HUBPROF_PASS exclude each other"
[ -z "$(ls direct)" ] && ok || bad "a disabled collector wrote $(ls direct)"

# ---- 7. threads, forked processes (keys per process), the collector through LD_PRELOAD only ----
"$EX/multithread" 4 30 >mt.plain.out 2>&1
echo $? >mt.plain.rc
muxed mt "${C3[@]}" --replay multiplex -- "$EX/multithread" 4 30
same_as_plain mt mt.plain
checked mt
expect_eq "threads: one kernel, every dispatch complete" "$(facts mt keys)/$(facts mt imputed)" "1/241"
export POCL_DEVICES=basic # PoCL's pthread device does not survive a fork after use
"$EX/forking" 6 late >fk.plain.out 2>&1
echo $? >fk.plain.rc
muxed fk "${C3[@]}" --replay multiplex -- "$EX/forking" 6 late
same_as_plain fk fk.plain
checked fk
expect_eq "fork: keys per process, all complete" "$(facts fk keys)/$(facts fk incomplete)/$(facts fk imputed)" "3/0/39"
muxed fk2 "${C3[@]}" --replay multiplex -- "$EX/forking" 2 late
checked fk2
expect_eq "fork, 2 dispatches each: incomplete" "$(facts fk2 incomplete)/$(facts fk2 imputed)" "3/0"
[ "$(grep -cE '^hubprof: warning: kernel (parent|child|late)_inc \(pid [0-9]+\): 2 dispatches cover 2 of 3 passes' fk2.err)" = 3 ] &&
  ok || bad "fork: incomplete keys not named with their pid: $(cat fk2.err)"
unset POCL_DEVICES
mkdir -p pre
HUBPROF_OUTPUT_DIR=$T/pre HUBPROF_MODE=profile HUBPROF_PLAN='task-clock;page-faults;context-switches' \
  HUBPROF_MULTIPLEX=launch LD_PRELOAD=$LIB "$EX/iterations" 4096 60 2 >pre.out 2>pre.err
cmp -s pre.out plain.out && ok || bad "preload-only multiplexing: $(cat pre.out pre.err)"
"$CHECK" pre/hubprof-*.log >pre.report 2>&1
expect_eq "preload-only log: measured, nothing imputed by the collector" \
  "$(facts pre replay)/$(facts pre measured)/$(facts pre imputed)" "multiplex/62/0"

# no metric above its peak goes unflagged in any store of this test
PYTHONPATH=$ROOT/python python3 "$ROOT/tests/replay/check_peaks.py" $(ls -d ./*.db) >peaks.report 2>&1 && ok ||
  bad "$(cat peaks.report)"

echo "test_multiplex: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
