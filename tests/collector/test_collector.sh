#!/usr/bin/env bash
# End-to-end tests of the collector on the OpenCL examples under PoCL: runs each with and without the
# collector (ICD layer, LD_PRELOAD), reads the logs with check_logs and compares what the app saw.
# It never touches anything outside its temporary directory. usage: test_collector.sh (from anywhere)
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/../.."
B=${B:-build}
LIB=$PWD/$B/libhubprof_collector.so
CHECK=$PWD/$B/tests/collector/check_logs
EX=$PWD/$B/examples/ocl
T=$(mktemp -d)
FULL=""
cleanup() {
  [ -n "$FULL" ] && umount "$FULL" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
ulimit -c 0 # the crash tests must not leave core files
unset HUBPROF_OUTPUT_DIR HUBPROF_MODE HUBPROF_DEBUG HUBPROF_PENDING HUBPROF_HARVEST_MS OPENCL_LAYERS LD_PRELOAD
. tests/lib.sh
need_built test_collector "$LIB" "$CHECK" "$EX/vector_add"
need_opencl test_collector

# plain NAME CMD...: run without the collector; keeps $T/NAME.plain.{out,err,rc}
plain() {
  local name=$1
  shift
  ("$@" >"$T/$name.plain.out" 2>"$T/$name.plain.err"; echo $? >"$T/$name.plain.rc") 2>/dev/null
}
# traced NAME MODE CMD...: run with the collector (MODE layer, preload or both) into a fresh $T/NAME/;
# keeps $T/NAME.{out,err,rc} and the checker's report in $T/NAME.report
traced() {
  local name=$1 mode=$2
  shift 2
  mkdir -p "$T/$name"
  local envs=(HUBPROF_OUTPUT_DIR="$T/$name")
  case $mode in
  layer) envs+=(OPENCL_LAYERS="$LIB") ;;
  preload) envs+=(LD_PRELOAD="$LIB") ;;
  both) envs+=(OPENCL_LAYERS="$LIB" LD_PRELOAD="$LIB") ;;
  esac
  (env "${envs[@]}" "$@" >"$T/$name.out" 2>"$T/$name.err"; echo $? >"$T/$name.rc") 2>/dev/null
  "$CHECK" "$T/$name" >"$T/$name.report" 2>&1
  echo $? >"$T/$name.check"
}
# same_as_plain NAME PLAIN: stdout and exit status as without the collector, nothing on stderr
same_as_plain() {
  local name=$1 p=$2
  if cmp -s "$T/$name.out" "$T/$p.plain.out"; then ok; else bad "$name: stdout differs: $(head -c 200 "$T/$name.out")"; fi
  if cmp -s "$T/$name.rc" "$T/$p.plain.rc"; then ok; else bad "$name: exit $(cat "$T/$name.rc") (plain: $(cat "$T/$p.plain.rc"))"; fi
  if [ ! -s "$T/$name.err" ]; then ok; else bad "$name: stderr: $(head -c 300 "$T/$name.err")"; fi
}
checked() { # NAME: the checker found every invariant held
  if [ "$(cat "$T/$1.check")" = 0 ]; then ok; else bad "$1: $(grep -m3 'bad' "$T/$1.report")"; fi
}
field() { # NAME KEY: the value of KEY= on the first log line (or of the total line for logs/dispatches)
  sed -nE "s/.* $2=([^ ]+).*/\1/p" <<<"$(grep -m1 "^log " "$T/$1.report")"
}
harvested() { # NAME: dispatches of the first log that the collector harvested (not read from its launch file)
  echo $(($(field "$1" dispatches) - $(field "$1" launched)))
}
total() { # NAME KEY: logs or dispatches of the total line
  sed -nE "s/^total .*$2=([0-9]+).*/\1/p" "$T/$1.report"
}
expect_eq() { # WHAT GOT WANT
  if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi
}
kernel_line() { # NAME KERNEL: "COUNT GRID WG" summed over logs (one log expected)
  awk -v k="$2" '$1 == "kernel" && $3 == k {print $4, $5, $6}' "$T/$1.report" | head -n 1
}

# ---- each example through the layer: output untouched, exact counts, sizes, times ----
plain vector_add "$EX/vector_add" 1000 7
traced vector_add layer "$EX/vector_add" 1000 7
same_as_plain vector_add vector_add
checked vector_add
expect_eq "vector_add logs" "$(total vector_add logs)" 1
expect_eq "vector_add kernel" "$(kernel_line vector_add vector_add)" "7 1024,1,1 64,1,1"
expect_eq "vector_add untimed" "$(field vector_add untimed)" 0
expect_eq "vector_add ended" "$(field vector_add ended)" 1
expect_eq "vector_add agents/queues/threads" \
  "$(field vector_add agents)/$(field vector_add queues)/$(field vector_add threads)" 1/1/1

plain inplace "$EX/inplace_update" 1000 9
traced inplace layer "$EX/inplace_update" 1000 9
same_as_plain inplace inplace
checked inplace
expect_eq "inplace_update kernel" "$(kernel_line inplace inplace_inc)" "9 1000,1,1 0,0,0"
expect_eq "inplace_update untimed" "$(field inplace untimed)" 0

# profile-only variables with invalid values in the user's environment do not disable a plain trace
traced badprof layer env HUBPROF_SHADOW=bogus HUBPROF_PASS=x HUBPROF_MULTIPLEX=y "$EX/vector_add" 1000 7
same_as_plain badprof vector_add
checked badprof
expect_eq "trace beside invalid profile variables: dispatches" "$(total badprof dispatches)" "$(total vector_add dispatches)"

plain mt "$EX/multithread" 16 150
traced mt layer "$EX/multithread" 16 150
same_as_plain mt mt
checked mt
expect_eq "multithread 16x150 dispatches" "$(total mt dispatches)" 2400
expect_eq "multithread threads/queues" "$(field mt threads)/$(field mt queues)" 16/16
expect_eq "multithread untimed" "$(field mt untimed)" 0
expect_eq "multithread kernel" "$(kernel_line mt mt_inc)" "2400 256,1,1 16,1,1"

# more queues and kernels than the lock-free tables hold (all kept): every dispatch has a valid queue, agent
# and kernel id (check_logs), and each queue one row (none registered again per dispatch)
plain mq "$EX/many_queues" 5000 20000
traced mq layer "$EX/many_queues" 5000 20000
same_as_plain mq mq
checked mq
expect_eq "many_queues dispatches/queues/kernels" \
  "$(total mq dispatches)/$(field mq queues)/$(field mq kernels)" 120/5000/1

plain dl "$EX/dlopen_ocl" 100 8
traced dl layer "$EX/dlopen_ocl" 100 8
same_as_plain dl dl
checked dl
expect_eq "dlopen_ocl via the layer" "$(kernel_line dl dl_scale)" "8 100,1,1 0,0,0"

# a tiny pending ring: full rings are harvested inside the enqueue, nothing is lost
HUBPROF_PENDING=16 traced ring layer "$EX/launch_loop" 3000 500
grep -q ' ok$' "$T/ring.out" && ok || bad "tiny ring: app output: $(cat "$T/ring.out")"
[ ! -s "$T/ring.err" ] && ok || bad "tiny ring: stderr: $(cat "$T/ring.err")"
checked ring
expect_eq "tiny ring dispatches" "$(total ring dispatches)" 3001

# ---- fork: a log per process that used OpenCL, none for the child that exec'd /bin/true ----
plain fork "$EX/forking" 5
traced fork layer "$EX/forking" 5
same_as_plain fork fork
checked fork
expect_eq "forking logs" "$(total fork logs)" 2
expect_eq "forking parent" "$(kernel_line fork parent_inc | cut -d' ' -f1)" 5
expect_eq "forking child" "$(kernel_line fork child_inc | cut -d' ' -f1)" 5
expect_eq "forking total" "$(total fork dispatches)" 10
# a child forked after the parent traced (fork-safe runtime: PoCL basic): its own log, its own ids
POCL_DEVICES=basic plain late "$EX/forking" 4 late
POCL_DEVICES=basic traced late layer "$EX/forking" 4 late
same_as_plain late late
checked late
expect_eq "forking late logs" "$(total late logs)" 3
expect_eq "forking late child" "$(awk '$1 == "kernel" && $3 == "late_inc" && $4 > 0 {print $4}' "$T/late.report")" 4
expect_eq "forking late total" "$(total late dispatches)" 12

# ---- LD_PRELOAD instead of the layer: same counts; both at once: not counted twice ----
traced vector_add_pre preload "$EX/vector_add" 1000 7
same_as_plain vector_add_pre vector_add
checked vector_add_pre
expect_eq "preload vector_add" "$(kernel_line vector_add_pre vector_add)" "7 1024,1,1 64,1,1"
traced mt_pre preload "$EX/multithread" 16 150
same_as_plain mt_pre mt
checked mt_pre
expect_eq "preload multithread dispatches" "$(total mt_pre dispatches)" 2400
traced fork_pre preload "$EX/forking" 5
same_as_plain fork_pre fork
checked fork_pre
expect_eq "preload forking logs/dispatches" "$(total fork_pre logs)/$(total fork_pre dispatches)" 2/10
traced both both "$EX/inplace_update" 1000 9
same_as_plain both inplace
checked both
expect_eq "layer+preload counts once" "$(total both dispatches)" 9

# ---- crashes: everything harvested at the clFinish before the death is in the log, with its times; the 3
# launched after it are on record from the launch file (docs/collector.md "What a killed process keeps") ----
for how in segv abort kill; do
  plain "crash_$how" "$EX/crash" "$how" 25
  traced "crash_$how" layer "$EX/crash" "$how" 25
  same_as_plain "crash_$how" "crash_$how"
  checked "crash_$how"
  expect_eq "crash $how dispatches" "$(total "crash_$how" dispatches)" 28
  expect_eq "crash $how harvested" "$(harvested "crash_$how")" 25
  expect_eq "crash $how process end" "$(field "crash_$how" ended)" 0
done

# harvested at clWaitForEvents too, through the layer and through LD_PRELOAD
plain crash_wait "$EX/crash" kill 20 wait
for mode in layer preload; do
  traced "crash_wait_$mode" $mode "$EX/crash" kill 20 wait
  same_as_plain "crash_wait_$mode" crash_wait
  checked "crash_wait_$mode"
  expect_eq "crash after clWaitForEvents ($mode)" "$(harvested "crash_wait_$mode")/$(total "crash_wait_$mode" dispatches)" 20/23
done

# ---- when the background harvester runs (HUBPROF_HARVESTER, docs/collector.md "What the harvester costs") ----
# crash kill 25 finish 150: 25 dispatches and clFinish, 3 more, 150 ms without an OpenCL call, SIGKILL. The 3
# are complete (basic: inside their enqueue) but only a background harvester can write them with their times
# (without it they are on record from the launch file: 28 dispatches in every case).
harv() { # NAME SETTING DEVICE CRASH-ARGS...: a traced crash run with HUBPROF_HARVESTER and POCL_DEVICES
  local name=$1 setting=$2 dev=$3
  shift 3
  HUBPROF_HARVESTER=$setting POCL_DEVICES=$dev HUBPROF_DEBUG=1 traced "$name" layer "$EX/crash" kill "$@"
  checked "$name"
}
harv harv_auto_basic auto basic 25 finish 150
expect_eq "auto, one thread on basic: sync points only" "$(harvested harv_auto_basic)/$(total harv_auto_basic dispatches)" 25/28
grep -q "one thread, commands run on it" "$T/harv_auto_basic.err" && ok || bad "auto on basic: no debug line"
harv harv_thread_basic thread basic 25 finish 150
expect_eq "thread on basic: the bound holds" "$(harvested harv_thread_basic)" 28
harv harv_auto_pthread auto pthread 25 finish 150
expect_eq "auto on the pthread device: the harvester runs" "$(harvested harv_auto_pthread)" 28
harv harv_sync_pthread sync pthread 25 finish 150
expect_eq "sync on the pthread device: sync points only" "$(harvested harv_sync_pthread)/$(total harv_sync_pthread dispatches)" 25/28
# auto with one thread: a loop without sync points harvests its own ring once a period (40 dispatches 10 ms
# apart, SIGKILL right after the last: at most the last period's few are missing); sync: none written
harv harv_auto_due auto basic 5 finish 0 40 10
n=$(harvested harv_auto_due)
[ "${n:-0}" -ge 41 ] && [ "${n:-0}" -le 45 ] && ok || bad "auto, one thread, no sync: $n harvested (want 41..45)"
expect_eq "auto, one thread, no sync: on record" "$(total harv_auto_due dispatches)" 45
harv harv_sync_due sync basic 5 finish 0 40 10
expect_eq "sync, one thread, no sync point: what the clFinish wrote" "$(harvested harv_sync_due)/$(total harv_sync_due dispatches)" 5/45
# auto on basic with a second thread (multithread: 4 threads dispatch): the harvester starts with it
HUBPROF_DEBUG=1 POCL_DEVICES=basic traced harv_mt layer "$EX/multithread" 4 50
checked harv_mt
grep -q "a second thread: background harvester started" "$T/harv_mt.err" && ok ||
  bad "auto, basic, 4 threads: the harvester did not start: $(grep hubprof "$T/harv_mt.err" | head -3)"

# two processes with the same pid (PID namespaces, as containers and MPI launchers make them) sharing one
# log folder: each keeps its own log (issue 30 point 7: the second replaced the first)
if unshare -p -f --mount-proc true 2>/dev/null; then
  mkdir -p "$T/pidns"
  for i in 1 2; do
    HUBPROF_OUTPUT_DIR="$T/pidns" OPENCL_LAYERS="$LIB" unshare -p -f --mount-proc "$EX/vector_add" 1000 $((i * 5)) \
      >/dev/null 2>"$T/pidns.$i.err"
  done
  "$CHECK" "$T/pidns" >"$T/pidns.report" 2>&1
  expect_eq "same pid in two PID namespaces: logs/dispatches" "$(total pidns logs)/$(total pidns dispatches)" 2/15
  [ ! -s "$T/pidns.1.err" ] && [ ! -s "$T/pidns.2.err" ] && ok || bad "PID namespaces: $(cat "$T"/pidns.*.err)"
else
  echo "test_collector: PID-namespace case skipped: unshare -p refused here"
fi

# ---- failures of our own: one line, the application unaffected ----
: >"$T/afile"
HUBPROF_OUTPUT_DIR="$T/afile/sub" OPENCL_LAYERS="$LIB" "$EX/vector_add" 1000 7 >"$T/unw.out" 2>"$T/unw.err"
echo $? >"$T/unw.rc"
cmp -s "$T/unw.out" "$T/vector_add.plain.out" && ok || bad "unwritable dir: stdout differs"
cmp -s "$T/unw.rc" "$T/vector_add.plain.rc" && ok || bad "unwritable dir: exit status differs"
if [ "$(wc -l <"$T/unw.err")" = 1 ] && grep -q '^hubprof: .*; tracing disabled$' "$T/unw.err"; then ok; else
  bad "unwritable dir: want one warning line, got: $(cat "$T/unw.err")"
fi
mkdir -p "$T/cwd"
(cd "$T/cwd" && OPENCL_LAYERS="$LIB" LD_PRELOAD="$LIB" "$EX/forking" 5 >"$T/unset.out" 2>"$T/unset.err")
cmp -s "$T/unset.out" "$T/fork.plain.out" && ok || bad "HUBPROF_OUTPUT_DIR unset: stdout differs"
[ ! -s "$T/unset.err" ] && ok || bad "HUBPROF_OUTPUT_DIR unset: stderr: $(cat "$T/unset.err")"
[ -z "$(ls -A "$T/cwd")" ] && ok || bad "HUBPROF_OUTPUT_DIR unset: files appeared: $(ls -A "$T/cwd")"
# bad_env NAME VAR=VALUE PATTERN: a bad setting gives one line matching PATTERN, the app's output unchanged,
# no file
bad_env() {
  local name=$1 setting=$2 pat=$3
  mkdir -p "$T/$name"
  env HUBPROF_OUTPUT_DIR="$T/$name" "$setting" OPENCL_LAYERS="$LIB" "$EX/vector_add" 1000 7 >"$T/$name.out" 2>"$T/$name.err"
  cmp -s "$T/$name.out" "$T/vector_add.plain.out" && ok || bad "$setting: stdout differs"
  if [ "$(wc -l <"$T/$name.err")" = 1 ] && grep -q -- "$pat" "$T/$name.err"; then ok; else
    bad "$setting: want one line, got: $(cat "$T/$name.err")"
  fi
  [ -z "$(ls -A "$T/$name")" ] && ok || bad "$setting: files appeared"
}
bad_env mode HUBPROF_MODE=bogus 'HUBPROF_MODE'
bad_env hms HUBPROF_HARVEST_MS=0 'HUBPROF_HARVEST_MS.*; tracing disabled$'
bad_env harvester HUBPROF_HARVESTER=bogus 'HUBPROF_HARVESTER.*; tracing disabled$'
# enqueue stamps from either source (HUBPROF_TIMESTAMP, stamp.c): every invariant holds (enqueue before start);
# a bad value: one line, tracing off
for ts in clock tsc; do
  HUBPROF_TIMESTAMP=$ts traced "ts_$ts" layer "$EX/vector_add" 1000 7
  same_as_plain "ts_$ts" vector_add
  checked "ts_$ts"
done
# the overhead benchmark's within-process A/B (bench_trace.sh, launch_loop LAUNCH_LOOP_AB): blocks of 1000
# collecting, paused, paused, collecting: exactly the warm-up and the 2000 collecting dispatches are traced,
# the app's count is right, and the line gives both kinds' figures
if [ -x "$EX/launch_loop" ]; then
  LAUNCH_LOOP_AB=1 HUBPROF_INJECTION_PATH="$LIB" POCL_DEVICES=basic traced ab layer "$EX/launch_loop" 4000 1000
  checked ab
  expect_eq "A/B blocks: dispatches traced" "$(total ab dispatches)" 2001
  grep -q 'launch_loop: n=4000 .* ok$' "$T/ab.out" && grep -qE 'ab blocks=2\+2 on_ns=[0-9.]+ off_ns=[0-9.]+ ' \
    "$T/ab.out" && ok || bad "A/B blocks: output: $(cat "$T/ab.out")"
  # the runtime's share without a collector (LAUNCH_LOOP_EVENTS): each way runs every dispatch; a bad value
  # is one line and exit 2
  # and within one process (LAUNCH_LOOP_AB=WAY): blocks that way and plain blocks in turn (on, off, off), every
  # dispatch run, both kinds' figures printed
  for how in queue events times; do
    out=$(LAUNCH_LOOP_EVENTS=$how POCL_DEVICES=basic "$EX/launch_loop" 2500 1000 2>&1)
    grep -qE '^launch_loop: n=2500 .* cpu_per_dispatch_ns=[0-9.]+ proc_cpu_per_dispatch_ns=[0-9.]+ ok$' <<<"$out" &&
      ok || bad "LAUNCH_LOOP_EVENTS=$how: $out"
    out=$(LAUNCH_LOOP_AB=$how POCL_DEVICES=basic "$EX/launch_loop" 2500 1000 2>&1)
    grep -q '^launch_loop: n=2500 .* ok$' <<<"$out" && grep -qE '^launch_loop: ab blocks=1\+2 on_ns=[0-9.]+ off_ns=' \
      <<<"$out" && ok || bad "LAUNCH_LOOP_AB=$how: $out"
  done
  for bogus in LAUNCH_LOOP_EVENTS=bogus LAUNCH_LOOP_AB=bogus "LAUNCH_LOOP_AB=times LAUNCH_LOOP_EVENTS=queue"; do
    out=$(env $bogus "$EX/launch_loop" 10 2>&1)
    rc=$?
    [ "$rc" = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && ok || bad "$bogus: exit $rc: $out"
  done
fi
bad_env tsb HUBPROF_TIMESTAMP=bogus "HUBPROF_TIMESTAMP must be 'auto', 'tsc' or 'clock'; tracing disabled$"

# a full disk (a small tmpfs; needs root): one warning, the app unaffected, losses counted in the log (200000
# dispatches: batch records take ~15 bytes a row, so 60000 would fit the first 1 MiB chunk)
if [ "$(id -u)" = 0 ] && mkdir -p "$T/full" && mount -t tmpfs -o size=1200k tmpfs "$T/full" 2>/dev/null; then
  FULL="$T/full"
  POCL_DEVICES=basic plain full "$EX/launch_loop" 200000 1000
  POCL_DEVICES=basic HUBPROF_OUTPUT_DIR="$T/full" OPENCL_LAYERS="$LIB" "$EX/launch_loop" 200000 1000 \
    >"$T/full.out" 2>"$T/full.err"
  echo $? >"$T/full.rc"
  cmp -s "$T/full.rc" "$T/full.plain.rc" && ok || bad "full disk: exit status $(cat "$T/full.rc")"
  grep -q ' ok$' "$T/full.out" && ok || bad "full disk: app output: $(cat "$T/full.out")"
  if [ "$(wc -l <"$T/full.err")" = 1 ] && grep -q '^hubprof: ' "$T/full.err"; then ok; else
    bad "full disk: want one warning line, got: $(cat "$T/full.err")"
  fi
  "$CHECK" "$T/full" >"$T/full.report" 2>&1
  d=$(total full dispatches)
  l=$(field full lost)
  if [ "${d:-0}" -gt 0 ] && [ "${l:-0}" -gt 0 ]; then ok; else bad "full disk: dispatches=$d lost=$l"; fi
  umount "$T/full" && FULL=""
else
  echo "test_collector: full-disk test skipped: needs root to mount a small tmpfs"
fi

# ---- the crash matrix (death x sync style x threads): its own script, one result here ----
if bash tests/collector/test_crash_matrix.sh >"$T/matrix.out" 2>&1; then ok; else
  bad "crash matrix: $(grep -m5 FAIL "$T/matrix.out")"
fi
tail -n 1 "$T/matrix.out"

echo "test_collector: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
