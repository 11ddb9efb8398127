#!/usr/bin/env bash
# The collector's crash matrix: death (SIGKILL, SIGSEGV, abort, exit() from another thread) x sync style
# (clFinish on main, clFinish on another thread, a blocking read only, clWaitForEvents, no sync call) x
# threads (1, 4, 16) on one shared queue (examples/ocl/crash_matrix, through the ICD layer). Each cell checks
# that the log holds every dispatch the program saw complete before its death; that after a kill, SIGSEGV
# or abort it holds every launch that returned, exactly (what the collector could not harvest in time is
# read from the launch file: launched, end unknown); that with exit() every launch that returned is either
# in the log or counted as LOST; and that the exit status is the program's own. A cell whose only sync is a
# blocking read or none waits the stated harvest bound (100 ms) before dying; the others die at once. Four
# more cells run with HUBPROF_HARVESTER=sync (no background harvester: nothing completed reaches the log
# before the death but through the launch file, at any load). usage: test_crash_matrix.sh (from anywhere);
# CRASH_MATRIX_QUICK=1: 4 threads only.
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/../.."
B=${B:-build}
LIB=$PWD/$B/libhubprof_collector.so
CHECK=$PWD/$B/tests/collector/check_logs
APP=$PWD/$B/examples/ocl/crash_matrix
BOUND_MS=100 # docs/collector.md: a completed dispatch is in the log within this, whatever the app does
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ulimit -c 0
unset HUBPROF_OUTPUT_DIR HUBPROF_MODE HUBPROF_DEBUG HUBPROF_PENDING HUBPROF_HARVEST_MS OPENCL_LAYERS LD_PRELOAD
pass=0
fail=0
bad() {
  fail=$((fail + 1))
  echo "FAIL: $*" >&2
}
for f in "$LIB" "$CHECK" "$APP"; do
  [ -e "$f" ] || {
    echo "test_crash_matrix: $f is missing (make collector)" >&2
    echo "test_crash_matrix: 0 passed, 1 failed"
    exit 1
  }
done
if ! clinfo -l 2>/dev/null | grep -q Device; then
  echo "test_crash_matrix: skipped: no OpenCL device (install pocl-opencl-icd)"
  echo "test_crash_matrix: 0 passed, 0 failed"
  exit 0
fi

declare -A want_rc=([kill]=137 [segv]=139 [abort]=134 [exit]=7)
rep() { sed -nE "s/.* $2=([^ ]+).*/\1/p" <<<"$(grep -m1 "^log " "$1")"; }

# cell DEVICE DEATH SYNC THREADS [HARVESTER]: one traced run and its checks
cell() {
  local dev=$1 death=$2 sync=$3 th=$4 harv=${5:-} name="$1-$2-$3-$4${5:+-$5}"
  local delay=0 d=10
  case $sync in read | none) delay=$BOUND_MS ;; esac
  local dir="$T/$name"
  mkdir -p "$dir"
  local envs=(OPENCL_LAYERS="$LIB" HUBPROF_OUTPUT_DIR="$dir")
  [ "$dev" = basic ] && envs+=(POCL_DEVICES=basic)
  [ -n "$harv" ] && envs+=(HUBPROF_HARVESTER="$harv")
  (env "${envs[@]}" timeout 30 "$APP" "$death" "$sync" "$th" "$d" "$delay" "$T/$name.count" \
    >"$T/$name.out" 2>"$T/$name.err"; echo $? >"$T/$name.rc") 2>/dev/null
  "$CHECK" "$dir" >"$T/$name.report" 2>&1
  local rc completed launched logs disp lost
  rc=$(cat "$T/$name.rc")
  completed=$(sed -nE 's/^crash_matrix: completed=([0-9]+) of .*/\1/p' "$T/$name.out")
  launched=$(stat -c %s "$T/$name.count" 2>/dev/null || echo 0)
  logs=$(sed -nE 's/^total logs=([0-9]+).*/\1/p' "$T/$name.report")
  disp=$(rep "$T/$name.report" dispatches)
  lost=$(rep "$T/$name.report" lost)
  local why=""
  [ "$rc" = "${want_rc[$death]}" ] || why+=" exit status $rc (want ${want_rc[$death]})"
  [ -n "$completed" ] || why+=" no completed line"
  [ "$logs" = 1 ] || why+=" logs=$logs"
  grep -q '^bad' "$T/$name.report" && why+=" $(grep -m1 '^bad' "$T/$name.report")"
  grep -q '^hubprof:' "$T/$name.err" && why+=" stderr: $(grep -m1 '^hubprof:' "$T/$name.err")"
  if [ -z "$why" ]; then
    # every dispatch seen complete before the death is in the log (a dispatch written without device times
    # also counts: the log has it); nothing recorded that was never launched
    [ "${disp:-0}" -ge "$completed" ] || why+=" dispatches=$disp < completed=$completed"
    # (exit: a launch may return and be recorded, and the process end before the program counts it)
    local slack=0
    [ "$death" = exit ] && slack=$th
    [ "${disp:-0}" -le $((launched + slack)) ] || why+=" dispatches=$disp > launched=$launched"
    # killed (no exit handler): every launch that returned is on record, from the log or its launch file
    [ "$death" = exit ] || [ "${disp:-0}" -ge "$launched" ] ||
      why+=" dispatches=$disp < launched=$launched (from the launch file: $(rep "$T/$name.report" launched))"
    # exit(): every launch that returned is in the log or counted as LOST, and the process's end is written
    if [ "$death" = exit ]; then
      [ $((disp + lost)) -ge "$launched" ] || why+=" dispatches=$disp + lost=$lost < launched=$launched"
      [ "$(rep "$T/$name.report" ended)" = 1 ] || why+=" process end not written"
    fi
  fi
  if [ -z "$why" ]; then
    pass=$((pass + 1))
  else
    bad "$name:$why"
  fi
}

threads="1 4 16"
[ "${CRASH_MATRIX_QUICK:-0}" = 1 ] && threads=4
start=$SECONDS
for death in kill segv abort exit; do
  for sync in finish_main finish_other read event none; do
    for th in $threads; do
      cell default "$death" "$sync" "$th"
    done
    # PoCL's basic device runs commands on the enqueuing thread (no worker threads of its own); with threads
    # sharing one queue it deadlocks by itself (PoCL 2.10, also untraced), so one thread only
    cell basic "$death" "$sync" 1
  done
done
# no background harvester: what completed is harvested at no point before the death (sync "none" and "read"
# make no sync point the collector harvests at), so the launch file alone keeps it
for death in kill abort; do
  for sync in read none; do
    cell default "$death" "$sync" 4 sync
  done
done
echo "test_crash_matrix: $pass passed, $fail failed ($((SECONDS - start)) s)"
[ "$fail" -eq 0 ]
