#!/usr/bin/env bash
# Correctness suite of kernel replay and application replay (`hubprof profile`) on OpenCL programs whose
# kernels are not idempotent: each must print bit-identical results with and without profiling, in both
# modes, and the store must hold each dispatch once with every pass's values tagged with their pass
# (build/tests/replay/check_profile). Also: a negative test (the test hook HUBPROF_TEST_SKIP_RESTORE=1 makes
# the results differ, proving the check works), dispatch matching of application replay, bad input refused
# before the application starts, the lite trace still working beside replay; the one assembly pipeline
# (no intermediate files in any mode), signals passed on to the application, the output checked before the
# application starts, and application replay pairing processes by what they are.
# usage: test_replay.sh [HUBPROF]   (needs `make all`; runs in a temporary directory, leaves nothing)
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/../.."
HP=$(realpath "${1:-build/hubprof}")
EX=$PWD/build/examples/ocl
CHECK=$PWD/build/tests/replay/check_profile
WATCH=$PWD/tests/replay/watch_files.py
LIB=$PWD/build/libhubprof_collector.so
. tests/lib.sh
hp_test_env HUBPROF_WTRACK # tests/run.sh runs it again with write tracking off
need_built test_replay "$HP" "$CHECK" "$LIB" "$EX/inplace_update"
need_opencl test_replay
cd "$T"
C3=(--counters task-clock,page-faults,context-switches --max-counters-per-pass 1)

# facts NAME KEY: the value of KEY= in check_profile's report of NAME.db
facts() { sed -nE "s/.*[ ^]?$2=([^ ]+).*/\1/p" "$1.report" | tail -n 1; }
expect_eq() { # WHAT GOT WANT
  if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi
}
# profiled NAME MODE ARGS... : profile APP with 3 passes in MODE into NAME.db, check the store
profiled() {
  local name=$1 mode=$2
  shift 2
  "$HP" profile "${C3[@]}" --replay "$mode" -o "$name.db" -- "$@" >"$name.out" 2>"$name.err"
  echo $? >"$name.rc"
  "$CHECK" "$name.db" >"$name.report" 2>&1
  echo $? >"$name.check"
}

# ---- 1. every correctness example, both modes: bit-identical output, one row per dispatch, 3 passes ----
# name|args|dispatches
examples=(
  "inplace_update|4096 12|12"
  "atomic_counter|4096 6|6"
  "histogram|65536 5|5"
  "same_buffer|8192 6|6"
  "sub_buffers|4096 4|8"
  "chain|16384 3|9"
  "svm_inc|4096 5|5"
)
for e in "${examples[@]}"; do
  IFS='|' read -r ex args want <<<"$e"
  # shellcheck disable=SC2086
  "$EX/$ex" $args >"$ex.plain.out" 2>"$ex.plain.err"
  echo $? >"$ex.plain.rc"
  grep -q ' ok$' "$ex.plain.out" && ok || bad "$ex: plain run not ok: $(cat "$ex.plain.out" "$ex.plain.err")"
  for mode in kernel application; do
    n="$ex.$mode"
    # shellcheck disable=SC2086
    profiled "$n" "$mode" "$EX/$ex" $args
    # application replay runs the application once per pass, but only the first run's output is shown
    cp "$ex.plain.out" "$n.want"
    if cmp -s "$n.out" "$n.want"; then ok; else
      bad "$ex ($mode replay): output differs: $(cat "$n.out") vs $(cat "$ex.plain.out")"
    fi
    cmp -s "$n.rc" "$ex.plain.rc" && ok || bad "$ex ($mode replay): exit $(cat "$n.rc")"
    [ "$(cat "$n.check")" = 0 ] && ok || bad "$ex ($mode replay): $(grep -m3 bad "$n.report")"
    expect_eq "$ex ($mode) unprofiled" "$(facts "$n" unprofiled)" 0
    expect_eq "$ex ($mode) dispatches" "$(facts "$n" dispatches)" "$want"
    expect_eq "$ex ($mode) passes" "$(facts "$n" passes)" "3:$want"
    expect_eq "$ex ($mode) values" "$(facts "$n" values)" "$((3 * want))"
    expect_eq "$ex ($mode) replay" "$(facts "$n" replay)" "$mode"
    expect_eq "$ex ($mode) plan" "$(facts "$n" plan)" "task-clock;page-faults;context-switches"
    expect_eq "$ex ($mode) bytes_accessible set" "$(facts "$n" accessible)" "$want"
    if [ "$mode" = kernel ]; then # every dispatch here changes its memory: restored before passes 2 and 3
      expect_eq "$ex (kernel) bytes_restored set" "$(facts "$n" restored)" "$want"
    else
      expect_eq "$ex (application) bytes_restored" "$(facts "$n" restored)" 0
    fi
    grep -q "passes" "$n.err" && grep -q "pass 3: context-switches" "$n.err" && ok ||
      bad "$ex ($mode): plan or summary missing on stderr: $(cat "$n.err")"
    if [ "$mode" = application ]; then
      grep -q '^hubprof: \[pass 2/3\] page-faults$' "$n.err" && ok || bad "$ex: no [pass k/N] progress"
    fi
  done
  ls -A | grep -q 'hubprof-logs' && bad "$ex: log directory left behind: $(ls -A)" || ok
done

# per-pass values sit in their own pass; one dispatch id for all passes (sqlite view of the rocpd store)
if command -v sqlite3 >/dev/null; then
  q() { sqlite3 "$1" "$2"; }
  expect_eq "pmc rows per dispatch" \
    "$(q inplace_update.kernel.db "select count(distinct dispatch_id) from rocpd_kernel_dispatch")" 12
  expect_eq "counters_collection per pass" \
    "$(q inplace_update.kernel.db "select count(*) from counters_collection")" 36
  expect_eq "task-clock in pass 1 only" \
    "$(q inplace_update.kernel.db "select group_concat(distinct replay_pass) from counters_collection where counter_name='task-clock'")" \
    "$(q inplace_update.kernel.db "select min(replay_pass) from counters_collection")"
fi

# ---- 2. negative: without restores the in-place increment goes wrong (the check above is meaningful) ----
HUBPROF_TEST_SKIP_RESTORE=1 "$HP" profile "${C3[@]}" -o skip.db -- "$EX/inplace_update" 4096 12 >skip.out 2>skip.err
rc=$?
if ! cmp -s skip.out inplace_update.plain.out && grep -q FAILED skip.out && [ $rc = 1 ]; then ok; else
  bad "skipping restores did not change the result: $(cat skip.out) (exit $rc)"
fi
# more contexts than device shadows are kept for, each released in turn: every dispatch replayed (the
# shadow goes with its context, or its slot is reused), results as unprofiled, no warning
"$EX/many_contexts" 20 2 >mc.plain.out 2>&1
HUBPROF_SHADOW=device "$HP" profile "${C3[@]}" -o mc.db -- "$EX/many_contexts" 20 2 >mc.out 2>mc.err
expect_eq "many contexts: exit" "$?" 0
cmp -s mc.out mc.plain.out && ok || bad "many contexts: output differs: $(cat mc.out)"
grep -q 'cannot save' mc.err && bad "many contexts: $(cat mc.err)" || ok
"$CHECK" mc.db >mc.report 2>&1 && ok || bad "many contexts: $(grep -m3 bad mc.report)"
expect_eq "many contexts: replayed dispatches" "$(facts mc passes)" "3:40"
# a pass after the first that fails after its restore (test hook HUBPROF_TEST_FAIL_PASS=k): the dispatch is
# restored and run once more, so results are as after one run; one line, replay off, exit status kept
for k in 2 3; do
  HUBPROF_TEST_FAIL_PASS=$k "$HP" profile "${C3[@]}" -o fail$k.db -- "$EX/inplace_update" 4096 12 >fail$k.out 2>fail$k.err
  expect_eq "failed pass $k: exit" "$?" 0
  cmp -s fail$k.out inplace_update.plain.out && ok || bad "failed pass $k: output differs: $(cat fail$k.out)"
  [ "$(grep -c 'kernel replay failed' fail$k.err)" = 1 ] && ok || bad "failed pass $k: want one line: $(cat fail$k.err)"
  "$CHECK" fail$k.db >fail$k.report 2>&1 && ok || bad "failed pass $k: $(grep -m3 bad fail$k.report)"
done
# ... and with the device-side shadow buffers instead of the host pool, results are right again
HUBPROF_SHADOW=device "$HP" profile "${C3[@]}" -o dev.db -- "$EX/sub_buffers" 4096 4 >dev.out 2>dev.err
cmp -s dev.out sub_buffers.plain.out && ok || bad "HUBPROF_SHADOW=device: $(cat dev.out dev.err)"

# ---- 3. the collector alone, through LD_PRELOAD only (no layer), in profile mode ----
mkdir -p pre
HUBPROF_OUTPUT_DIR=$T/pre HUBPROF_MODE=profile HUBPROF_PLAN='task-clock;page-faults;context-switches' \
  LD_PRELOAD=$LIB "$EX/chain" 16384 3 >pre.out 2>pre.err
cmp -s pre.out chain.plain.out && ok || bad "preload-only kernel replay: $(cat pre.out pre.err)"
"$CHECK" pre/hubprof-*.log >pre.report 2>&1 && ok || bad "preload-only log: $(grep -m3 bad pre.report)"
expect_eq "preload-only passes" "$(facts pre passes)" "3:9"

# an out-of-order queue with event chains, and a dispatch gated by a user event completed after the
# enqueue returns: kernel replay runs that one once, unprofiled, with one warning (and never hangs)
"$EX/user_event" 4096 10 >ue.plain.out 2>&1
timeout 60 "$HP" profile "${C3[@]}" -o ue.db -- "$EX/user_event" 4096 10 >ue.out 2>ue.err
expect_eq "user event: exit" "$?" 0
cmp -s ue.out ue.plain.out && ok || bad "user event: output differs: $(cat ue.out)"
"$CHECK" ue.db >ue.report 2>&1 && ok || bad "user event: $(grep -m3 bad ue.report)"
expect_eq "user event: replayed dispatches" "$(facts ue passes)" "3:10"
expect_eq "user event: unprofiled" "$(facts ue unprofiled)" 1
[ "$(grep -c 'user event' ue.err)" = 1 ] && ok || bad "user event: want one warning: $(cat ue.err)"

# an in-order queue where dispatch B (no wait list) follows A, gated by a user event completed only after
# B's enqueue returns: the drain before B is bounded (B runs once, unprofiled, one warning), never a hang
"$EX/user_gate" 4096 >ug.plain.out 2>&1
timeout 60 "$HP" profile "${C3[@]}" -o ug.db -- "$EX/user_gate" 4096 >ug.out 2>ug.err
expect_eq "user gate: exit" "$?" 0
cmp -s ug.out ug.plain.out && ok || bad "user gate: output differs: $(cat ug.out)"
"$CHECK" ug.db >ug.report 2>&1 && ok || bad "user gate: $(grep -m3 bad ug.report)"
expect_eq "user gate: dispatches" "$(facts ug dispatches)" 3
expect_eq "user gate: unprofiled" "$(facts ug unprofiled)" 2
[ "$(grep -c 'did not finish within' ug.err)" = 1 ] && ok || bad "user gate: want one drain warning: $(cat ug.err)"
timeout 60 "$HP" profile "${C3[@]}" --replay multiplex -o ugm.db -- "$EX/user_gate" 4096 >ugm.out 2>ugm.err
expect_eq "user gate (multiplex): exit" "$?" 0
cmp -s ugm.out ug.plain.out && ok || bad "user gate (multiplex): output differs: $(cat ugm.out)"

# ---- 4. exit status kept; dispatches before a crash are kept ----
{ "$EX/crash" segv 5 >/dev/null; } 2>/dev/null
want_rc=$?
"$HP" profile "${C3[@]}" -o crash.db -- "$EX/crash" segv 5 >crash.out 2>crash.err
expect_eq "crash exit status (kernel replay)" "$?" "$want_rc"
"$CHECK" crash.db >crash.report 2>&1
expect_eq "crash: dispatches kept (5, then 3 in flight)" "$(facts crash dispatches)" 8
"$HP" profile "${C3[@]}" --replay application -o crash_app.db -- "$EX/crash" segv 5 >/dev/null 2>crash_app.err
expect_eq "crash exit status (application replay)" "$?" "$want_rc"

# ---- 5. application replay: matching policies; unmatched dispatches reported, never joined ----
# run 1 and later runs differ through HUBPROF_PASS, which the application sees
vary() { echo "[ \"\${HUBPROF_PASS:-1}\" = 1 ] && exec $1 || exec $2"; }
# later runs stop after 5 of 7 dispatches: 5 matched in every run, 2 measured in pass 1 only
"$HP" profile "${C3[@]}" --replay application -o fewer.db -- sh -c "$(vary "$EX/vector_add 1000 7" "$EX/vector_add 1000 5")" \
  >/dev/null 2>fewer.err
"$CHECK" fewer.db >fewer.report 2>&1 && ok || bad "fewer: $(grep -m3 bad fewer.report)"
expect_eq "fewer: passes per dispatch" "$(facts fewer passes)" "1:2,3:5"
grep -q "pass 2: 0 dispatches matched no dispatch of the first run and 2 of the first run's had no match" fewer.err &&
  ok || bad "fewer: unmatched not reported: $(cat fewer.err)"
# later runs use another grid: grid (default) matches nothing, name matches all
for m in grid name; do
  "$HP" profile "${C3[@]}" --replay application --match $m -o "grid_$m.db" -- \
    sh -c "$(vary "$EX/vector_add 1000 4" "$EX/vector_add 3000 4")" >/dev/null 2>"grid_$m.err"
  "$CHECK" "grid_$m.db" >"grid_$m.report" 2>&1 && ok || bad "grid_$m: $(grep -m3 bad "grid_$m.report")"
done
expect_eq "--match grid, other sizes" "$(facts grid_grid passes)" "1:4"
grep -q "4 dispatches matched no dispatch of the first run" grid_grid.err && grep -q "#1 vector_add grid 3008,1,1" grid_grid.err &&
  ok || bad "grid: first unmatched not named: $(cat grid_grid.err)"
expect_eq "--match name, other sizes" "$(facts grid_name passes)" "3:4"
# later runs start each round at another kernel: name matches all, all (position) matches none
for m in name all; do
  "$HP" profile "${C3[@]}" --replay application --match $m -o "order_$m.db" -- \
    sh -c "$(vary "$EX/chain 1024 2 0" "$EX/chain 1024 2 1")" >/dev/null 2>"order_$m.err"
  "$CHECK" "order_$m.db" >"order_$m.report" 2>&1 && ok || bad "order_$m: $(grep -m3 bad "order_$m.report")"
done
expect_eq "--match name, other order" "$(facts order_name passes)" "3:6"
expect_eq "--match all, other order" "$(facts order_all passes)" "1:6"
# a later run's different exit status: a warning, hubprof exits with the first run's
"$HP" profile "${C3[@]}" --replay application -o exits.db -- sh -c "$(vary "$EX/vector_add 100 2" "false")" \
  >/dev/null 2>exits.err
expect_eq "exit status of the first run" "$?" 0
grep -q "pass 2: the application exited with 1, in the first run with 0" exits.err && ok ||
  bad "differing exit status not reported: $(cat exits.err)"

# ---- 6. bad input: one line, before the application starts, nothing written ----
# refused CODE ARGS...: hubprof profile ARGS -o never.db -- inplace_update exits CODE with one line
refused() {
  local code=$1
  shift
  "$HP" profile "$@" -o never.db -- "$EX/inplace_update" 64 1 >ref.out 2>ref.err
  local rc=$?
  if [ $rc = "$code" ] && [ "$(wc -l <ref.err)" = 1 ] && [ ! -s ref.out ] && [ ! -e never.db ]; then ok; else
    bad "profile $*: exit $rc (want $code), stderr: $(cat ref.err), stdout: $(cat ref.out)"
  fi
}
refused 1 --counters task-clok
grep -q "did you mean 'task-clock'" ref.err && ok || bad "no suggestion: $(cat ref.err)"
refused 1 --counters task-clock,cycles
grep -q "not available" ref.err && ok || bad "unavailable counter: $(cat ref.err)"
printf 'device nosw\nprovider perf\nmax-per-pass unlimited\nblock sw 0\n' >nosw.device
refused 1 --counters task-clock --device "$T/nosw.device"
grep -qi "sw" ref.err && ok || bad "impossible plan: $(cat ref.err)"
refused 1 --counters task-clock --device no-such-device
refused 1 --counters task-clock --device gfx9
refused 2 --counters task-clock --replay kernel --replay application
refused 2 --counters task-clock --match grid
refused 2 --counters task-clock --replay kernel --match name
refused 2 --counters task-clock --replay application --match bogus
refused 2 --counters task-clock --replay sideways
refused 2 --counters task-clock --max-counters-per-pass 0
refused 2 --max-counters-per-pass 2
refused 2 --counters ,
: >exists.db
"$HP" profile --counters task-clock -o exists.db -- "$EX/inplace_update" 64 1 >ex.out 2>ex.err
[ $? = 1 ] && [ ! -s ex.out ] && grep -q "already exists" ex.err && ok || bad "existing output: $(cat ex.err)"
"$HP" profile --counters task-clock -o nothere.db -- "$T/no-such-app" >/dev/null 2>nf.err
expect_eq "missing application" "$?" 127
[ ! -e nothere.db ] && ok || bad "store written for a missing application"

# ---- 7. the lite trace still works, and yields to replay (each dispatch once above, not once per pass) ----
"$HP" trace -o trace.db -- "$EX/inplace_update" 4096 12 >trace.out 2>trace.err
cmp -s trace.out inplace_update.plain.out && ok || bad "trace: output differs"
grep -q "12 dispatches of 1 kernel" trace.err && ok || bad "trace summary: $(cat trace.err)"
if command -v sqlite3 >/dev/null; then
  expect_eq "trace: no counters" "$(sqlite3 trace.db 'select count(*) from rocpd_pmc_event')" 0
  expect_eq "trace: mode" "$(sqlite3 trace.db "select value from rocpd_metadata where tag='mode'")" trace
fi
# a single pass: every dispatch runs once, no memory saved
"$HP" profile --counters task-clock,page-faults -o one.db -- "$EX/inplace_update" 4096 12 >one.out 2>one.err
cmp -s one.out inplace_update.plain.out && ok || bad "one pass: output differs"
"$CHECK" one.db >one.report 2>&1 && ok || bad "one pass: $(grep -m3 bad one.report)"
expect_eq "one pass: passes" "$(facts one passes)" "1:12"
expect_eq "one pass: values" "$(facts one values)" 24
expect_eq "one pass: nothing restored" "$(facts one restored)" 0

# ---- 8. one pipeline: profile (every mode), trace, merge and convert write nothing but the final store ----
# (a watched output folder and TMPDIR; the collector's own per-process logs and their launch files are inputs,
# the log folder's .collector-status is how a collector that keeps no log says why (docs/collector.md#failures),
# and the store's commit temporary ".NAME.tmp.*" is the store itself before its rename)
# only_store NAME LISTING: every created path is the store, its temporary, or a collector log
only_store() {
  local name=$1 listing=$2 extra
  extra=$(grep -vE "^(\.hubprof-logs\.[^/]+(/(\.)?hubprof-[^/]*\.log(\.launch|\.tmp\.[0-9.]+)?|/\.collector-status)?|(\.)?$name(\.tmp\.[0-9.]+(\.[0-9a-f]+)?)?(/.*)?)$" "$listing")
  [ -s "$listing" ] && [ -z "$extra" ] && ok || bad "$name: intermediate files: $(echo $extra) (all: $(cat "$listing"))"
}
mkdir -p w wt
for mode in kernel application multiplex; do
  TMPDIR=$T/wt python3 "$WATCH" w_$mode.list w wt -- "$HP" profile -q "${C3[@]}" --replay $mode -o w/p_$mode.db -- \
    "$EX/inplace_update" 1024 4 >/dev/null 2>w_$mode.err
  expect_eq "watched profile ($mode): exit" "$?" 0
  only_store p_$mode.db w_$mode.list
  [ -z "$(ls -A wt)" ] && [ -z "$(ls -A w | grep -v '^p_')" ] && ok || bad "watched profile ($mode): left behind: $(ls -A w wt)"
done
TMPDIR=$T/wt python3 "$WATCH" w_trace.list w wt -- "$HP" trace -q -o w/t.db -- "$EX/forking" 2 >/dev/null 2>w_trace.err
only_store t.db w_trace.list
TMPDIR=$T/wt python3 "$WATCH" w_merge.list w wt -- "$HP" merge -q -o w/m.db w/p_kernel.db w/t.db 2>w_merge.err
expect_eq "watched merge: exit" "$?" 0
only_store m.db w_merge.list
TMPDIR=$T/wt python3 "$WATCH" w_convert.list w wt -- "$HP" convert -q --format parquet -o w/c.parquet w/p_multiplex.db \
  2>w_convert.err
expect_eq "watched convert: exit" "$?" 0
only_store c.parquet w_convert.list

# ---- 9. SIGTERM, SIGHUP, SIGINT to hubprof: passed on to the application, what it recorded kept, said so ----
# (started through python3 to undo the SIG_IGN a shell gives SIGINT of background jobs)
dfl() { exec python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' "$@"; }
for sig in TERM HUP INT; do
  dfl "$HP" trace -o sig_$sig.db -- sh -c "$EX/vector_add 1024 5 >/dev/null && exec sleep 30" >sig.out 2>sig_$sig.err &
  hp_pid=$!
  for _ in $(seq 100); do [ -n "$(ls -A .hubprof-logs.* 2>/dev/null)" ] && pgrep -P "$hp_pid" sleep >/dev/null && break; sleep 0.1; done
  sleep 0.3
  kill -$sig $hp_pid
  wait $hp_pid
  rc=$?
  want=$((128 + $(kill -l $sig)))
  expect_eq "SIG$sig: exit status of the application" "$rc" "$want"
  "$CHECK" sig_$sig.db >sig_$sig.report 2>&1
  expect_eq "SIG$sig: complete store" "$(facts sig_$sig dispatches)" 5
  grep -q "SIG$sig received: passed on to the application" sig_$sig.err && ok || bad "SIG$sig: not said: $(cat sig_$sig.err)"
  [ -z "$(ls -A | grep hubprof-logs)" ] && ok || bad "SIG$sig: logs left behind"
done
# application replay stopped during pass 1: no further pass runs, pass 1's values are kept
dfl "$HP" profile "${C3[@]}" --replay application -o sigapp.db -- sh -c "$EX/vector_add 1024 3 >/dev/null && exec sleep 30" \
  >/dev/null 2>sigapp.err &
hp_pid=$!
for _ in $(seq 100); do pgrep -P "$hp_pid" sleep >/dev/null && break; sleep 0.1; done
sleep 0.3
kill -TERM $hp_pid
wait $hp_pid
expect_eq "SIGTERM in application replay: exit status" "$?" 143
"$CHECK" sigapp.db >sigapp.report 2>&1
expect_eq "SIGTERM in application replay: pass 1 kept" "$(facts sigapp passes)" "1:3"
grep -q "SIGTERM received: passes 2 to 3 not run" sigapp.err && ok || bad "application replay stop not said: $(cat sigapp.err)"
[ -z "$(ls -A | grep hubprof-logs)" ] && ok || bad "application replay stop: logs left behind"
# a long OpenCL run stopped half-way: the store holds what completed, without damage
"$HP" trace -o sigl.db -- "$EX/launch_loop" 100000000 1000 >/dev/null 2>sigl.err &
hp_pid=$!
sleep 2
kill -TERM $hp_pid
wait $hp_pid
expect_eq "SIGTERM mid-run: exit status" "$?" 143
n=$(sqlite3 sigl.db 'select count(*) from rocpd_kernel_dispatch' 2>/dev/null)
[ "${n:-0}" -gt 0 ] && ok || bad "SIGTERM mid-run: no dispatches kept: $(cat sigl.err)"
"$HP" info sigl.db >sigl.info 2>&1 && ok || bad "SIGTERM mid-run: store unreadable: $(cat sigl.info)"
# a signal once the application has ended, while the logs are merged (issue 30 point 3): the first finishes
# the store, a second stops at once, keeping the logs and naming them; no temporary left, no silent end
merge_signals() { # NAME COUNT: launch_loop's 1.5 M dispatches (and its warm-up one), COUNT SIGTERMs once it ended
  POCL_DEVICES=basic "$HP" trace -o "$1.db" -- "$EX/launch_loop" 1500000 1000 >"$1.out" 2>"$1.err" &
  hp_pid=$!
  for _ in $(seq 600); do grep -q ns_per_dispatch "$1.out" 2>/dev/null && break; sleep 0.05; done
  # the application reaped (its line comes before its own exit): hubprof has no child left
  for _ in $(seq 200); do [ -z "$(cat /proc/$hp_pid/task/$hp_pid/children 2>/dev/null)" ] && break; sleep 0.01; done
  sleep 0.02
  for ((i = 0; i < $2; i++)); do
    kill -TERM $hp_pid
    sleep 0.05
  done
  wait $hp_pid
}
merge_signals sigm1 1
expect_eq "SIGTERM during the merge: the application's exit status" "$?" 0
grep -q "SIGTERM received: finishing sigm1.db from what was recorded" sigm1.err && ok || bad "merge signal: not said: $(cat sigm1.err)"
expect_eq "SIGTERM during the merge: the store is complete" "$(sqlite3 sigm1.db "select count(*) from rocpd_kernel_dispatch")" 1500001
[ -z "$(ls -A | grep -e hubprof-logs -e '\.tmp\.')" ] && ok || bad "SIGTERM during the merge: left behind: $(ls -A)"
merge_signals sigm2 2
expect_eq "two SIGTERMs during the merge: the application's exit status" "$?" 0
[ ! -e sigm2.db ] && ok || bad "two SIGTERMs during the merge: sigm2.db written"
[ -z "$(ls -A | grep '\.tmp\.')" ] && ok || bad "two SIGTERMs during the merge: temporary left: $(ls -A)"
kept=$(sed -nE 's/.*stopped by SIGTERM: sigm2.db not written; the per-process logs are kept in ([^ ]+) \(hubprof merge.*/\1/p' sigm2.err)
[ -n "$kept" ] && [ -d "$kept" ] && ok || bad "two SIGTERMs during the merge: logs not named or not kept: $(cat sigm2.err)"
"$HP" merge -q -o sigm2.db "$kept" && rm -rf "$kept" &&
  expect_eq "the kept logs merged by the named command" "$(sqlite3 sigm2.db "select count(*) from rocpd_kernel_dispatch")" 1500001

# ---- 10. the output checked before the application starts: one line, exit 1, the application not run ----
# unusable CODE OUTPUT [OPTIONS...]
unusable() {
  local code=$1 out=$2
  shift 2
  "$HP" trace "$@" -o "$out" -- "$EX/vector_add" 64 1 >un.out 2>un.err
  local rc=$?
  if [ $rc = "$code" ] && [ "$(wc -l <un.err)" = 1 ] && [ ! -s un.out ]; then ok; else
    bad "trace -o '$out' $*: exit $rc (want $code), stderr: $(cat un.err), stdout: $(cat un.out)"
  fi
}
unusable 2 ""
grep -q "empty" un.err && ok || bad "empty output: $(cat un.err)"
unusable 1 no/such/folder/x.db
grep -q "no/such/folder" un.err && ok || bad "missing folder: $(cat un.err)"
: >plainfile
unusable 1 plainfile/x.db -f
grep -q "not a folder" un.err && ok || bad "parent is a file: $(cat un.err)"
unusable 1 "$(printf 'n%.0s' $(seq 250)).db"
grep -q "too long" un.err && ok || bad "long name: $(cat un.err)"
mkdir -p afolder
unusable 1 afolder # an existing folder names a Parquet store: there already
grep -q "already exists" un.err && ok || bad "folder: $(cat un.err)"
unusable 1 afolder -f
[ -d afolder ] && ok || bad "-f replaced a folder"
unusable 1 afolder --format parquet -f
grep -q "not a hubprof store" un.err && [ -d afolder ] && ok || bad "-f onto a folder that is not a store: $(cat un.err)"
unusable 1 /dev/null -f
grep -q "is a device" un.err && [ -c /dev/null ] && ok || bad "-f onto /dev/null: $(cat un.err)"
mkfifo afifo
unusable 1 afifo -f
[ -p afifo ] && ok || bad "-f replaced a FIFO"
ln -s /dev/null devlink
unusable 1 devlink -f
[ -L devlink ] && ok || bad "-f replaced a link to a device"
"$HP" merge -f -o /dev/null w/t.db >un.out 2>un.err
[ $? = 1 ] && [ "$(wc -l <un.err)" = 1 ] && [ -c /dev/null ] && ok || bad "merge -f -o /dev/null: $(cat un.err)"
"$HP" convert -f --format rocpd -o afolder w/t.db >un.out 2>un.err # a folder is Parquet: -F rocpd contradicts
[ $? = 2 ] && [ "$(wc -l <un.err)" = 1 ] && [ -d afolder ] && ok || bad "convert -f onto a folder: $(cat un.err)"
# the one damage policy in merge: a log with nothing complete is skipped with a warning; only such inputs:
# nothing written, exit 1; --strict refuses it
"$(dirname "$EX")/gen_logs" gl 1 50 2 1 >/dev/null 2>&1
whole=$(ls gl/*.log | head -n 1)
head -c 200 "$whole" >gl/cut.log
"$HP" merge -o cutskip.db "$whole" gl/cut.log >/dev/null 2>un.err
[ $? = 0 ] && grep -q "cut.log.*(skipped: nothing complete in it)" un.err && ok || bad "merge: cut log not skipped: $(cat un.err)"
"$HP" merge -o none.db gl/cut.log >/dev/null 2>un.err
[ $? = 1 ] && [ ! -e none.db ] && grep -q "not written: nothing complete in the input" un.err && ok ||
  bad "merge of nothing complete: $(cat un.err)"
"$HP" merge --strict -o strict.db "$whole" gl/cut.log >/dev/null 2>un.err
[ $? = 1 ] && [ ! -e strict.db ] && [ "$(wc -l <un.err)" = 1 ] && grep -q "cut.log" un.err && ok || bad "merge --strict: $(cat un.err)"
# -f still replaces a store: a file, and a Parquet store (a folder)
"$HP" trace -q -f --format parquet -o w/c.parquet -- "$EX/vector_add" 64 2 >/dev/null 2>un.err && ok || bad "-f onto a parquet store: $(cat un.err)"
"$HP" trace -q -f -o w/t.db -- "$EX/vector_add" 64 2 >/dev/null 2>un.err && ok || bad "-f onto a file: $(cat un.err)"

# ---- 11. application replay pairs processes by what they are: command line, then order among equals ----
# two programs, and one program with two argument sets, started in swapped order in later passes
swap() { echo "if [ \"\${HUBPROF_PASS:-1}\" = 1 ]; then $1; $2; else $2; $1; fi"; }
for pair in "$EX/vector_add 1000 3|$EX/inplace_update 512 4" "$EX/vector_add 1000 3|$EX/vector_add 2000 5"; do
  a=${pair%|*} b=${pair#*|}
  "$HP" profile "${C3[@]}" --replay application -o swap.db -f -- sh -c "$(swap "$a" "$b")" >/dev/null 2>swap.err
  "$CHECK" swap.db >swap.report 2>&1 && ok || bad "swapped ($pair): $(grep -m3 bad swap.report)"
  n=$((${a##* } + ${b##* }))
  expect_eq "swapped ($pair): every dispatch in every pass" "$(facts swap passes)" "3:$n"
  expect_eq "swapped ($pair): every counter" "$(sqlite3 swap.db 'select count(*) from rocpd_pmc_event')" $((3 * n))
  grep -q unmatched swap.err && bad "swapped ($pair): unmatched: $(cat swap.err)" || ok
done
# a process only later passes ran: reported by name, its dispatches never joined to another
"$HP" profile "${C3[@]}" --replay application -o extra.db -- sh -c \
  "$EX/vector_add 1000 2; [ \"\${HUBPROF_PASS:-1}\" = 1 ] || $EX/inplace_update 512 3" >/dev/null 2>extra.err
"$CHECK" extra.db >extra.report 2>&1 && ok || bad "extra process: $(grep -m3 bad extra.report)"
expect_eq "extra process: first run's dispatches keep every pass" "$(facts extra passes)" "3:2"
grep -q "pass 2: process [0-9]* '$EX/inplace_update 512 3' has no process of the same program in the first run" extra.err &&
  ok || bad "extra process not named: $(cat extra.err)"

echo "test_replay: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
