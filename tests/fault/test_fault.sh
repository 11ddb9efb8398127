#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The I/O fault sweep (issue 30): fault_io.c, preloaded into hubprof and the traced application, makes the Nth
# write/pwrite/fsync/fdatasync/rename/ftruncate/posix_fallocate/msync on a file under the test folder (not
# the OpenCL runtime's kernel cache) fail with ENOSPC or EIO (alternately). Swept over the calls of a trace
# (hubprof trace of multithread 4 500: the collector's and hubprof's calls, counted together), of a merge of
# its log into rocpd and of a convert into Parquet, the last two also with the ASan build. The calls are
# counted first (N=0); a sweep takes every N when they are few, else the first, the last and an even spread
# (FAULT_SAMPLES, default 32). Each run must not crash (no signal, no sanitizer report); exit 0 means a store
# holding every dispatch and no lost record, or a warning on stderr saying what was lost (trace: or
# that the store could not be written, naming the logs it kept); a non-zero exit means a message (trace: also
# when the collector could not create its log, said with where and why), and at the output path no store or
# the complete one. Then the folder's sync after the output took its name fails (FAULT_DIRSYNC: the last
# folder sync of a trace, a merge, a convert to Parquet and to a log): the store is complete and in place, one
# warning says its name may not survive a system crash, exit 0 (docs/cli/exit-codes.md).
# Prints the sweep sizes. usage: test_fault.sh [HUBPROF [SAN_HUBPROF]]
set -u
HP=${1:-build/hubprof}
SAN=${2:-build/san/hubprof}
LIB=$PWD/build/libhubprof_collector.so
APP=$PWD/build/examples/ocl/multithread
. "$(dirname "$0")/../lib.sh"
hp_test_env
need_built test_fault "$HP" "$LIB" "$APP"
need_opencl test_fault
SAMPLES=${FAULT_SAMPLES:-32}
cc -O1 -shared -fPIC "$(dirname "$0")/fault_io.c" -o "$T/fault.so" -ldl || bad "cannot build the preload"
export POCL_DEVICES=basic ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
WANT=2000 # multithread 4 500

# dispatches HP STORE: the dispatch rows of a store (read without the preload), or -1
dispatches() {
  "$1" info --format json "$2" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"]["dispatch"])' 2>/dev/null || echo -1
}
# lost HP STORE: the records its processes lost (LOST records), or -1
lost() {
  "$1" info --format json "$2" 2>/dev/null |
    python3 -c 'import json,sys; print(sum(p["lost_records"] for p in json.load(sys.stdin)["processes"]))' 2>/dev/null || echo -1
}
# said: stderr says something went wrong (the summary line alone does not)
said() { grep -qiE "warning|lost|cannot|damag|incomplete|error|fail" "$T/err"; }
# run KIND HP OUT N ERRNO: one run of the workload with the Nth call failing (N=0: none, counted)
run() {
  local kind=$1 hp=$2 out=$3 n=$4 err=$5
  rm -rf "$out" "$T/state"
  local pre=(env LD_PRELOAD="$T/fault.so" FAULT_PATH="$T" FAULT_STATE="$T/state" FAULT_N="$n" FAULT_ERRNO="$err"
    FAULT_DIRSYNC="${DIRSYNC:-0}")
  case $kind in
    trace) "${pre[@]}" "$hp" trace -o "$out" -- "$APP" 4 500 >"$T/out" 2>"$T/err" ;;
    merge) "${pre[@]}" "$hp" merge -o "$out" "$T/src.log" >"$T/out" 2>"$T/err" ;;
    convert) "${pre[@]}" "$hp" convert "$T/src.log" -o "$out" >"$T/out" 2>"$T/err" ;;
  esac
  echo $?
}
count_calls() { python3 -c 'import struct,sys; print(struct.unpack("<Q", open(sys.argv[1],"rb").read(8))[0])' "$T/state"; }
count_dirsyncs() { python3 -c 'import struct,sys; print(struct.unpack("<Q", open(sys.argv[1],"rb").read(16)[8:])[0])' "$T/state"; }
# picks TOTAL: the Ns of a sweep
picks() {
  python3 -c 'import sys
t, s = int(sys.argv[1]), int(sys.argv[2])
p = set(range(1, t + 1)) if t <= s else {1, t} | {1 + (t - 1) * i // (s - 1) for i in range(s)}
print(" ".join(map(str, sorted(p))))' "$1" "$SAMPLES"
}

total_runs=0
silent=0
crashes=0
# sweep KIND HP EXT: count, then fail each picked call
sweep() {
  local kind=$1 hp=$2 ext=$3 out="$T/o.$3" rc
  rc=$(run "$kind" "$hp" "$out" 0 ENOSPC)
  local calls
  calls=$(count_calls)
  if [ "$rc" != 0 ] || [ "$(dispatches "$HP" "$out")" != "$WANT" ] || said; then
    bad "$kind ($hp) without a fault: exit $rc, $(head -c 300 "$T/err")"
    return
  fi
  local ns i=0 n err why
  ns=$(picks "$calls")
  for n in $ns; do
    err=ENOSPC
    [ $((i % 2)) = 1 ] && err=EIO
    i=$((i + 1))
    total_runs=$((total_runs + 1))
    rc=$(run "$kind" "$hp" "$out" "$n" "$err")
    why=""
    if [ "$rc" -ge 128 ] || grep -qE "Sanitizer|runtime error|Segmentation" "$T/err"; then
      crashes=$((crashes + 1))
      why="crashed (exit $rc)"
    elif [ "$rc" = 0 ]; then
      local got
      got=$(dispatches "$HP" "$out")
      local kept
      kept=$(sed -nE 's/.*the per-process logs are kept in ([^ ;]+).*/\1/p' "$T/err" | head -1)
      if [ ! -e "$out" ] && [ -n "$kept" ]; then
        # trace exits with the application's status; the store could not be written: its logs are kept, named
        ls "$kept"/*.log >/dev/null 2>&1 || why="the logs it says it kept are not in $kept"
        rm -rf "$kept"
      elif [ ! -e "$out" ]; then
        why="exit 0 and no store"
      elif { [ "$got" != "$WANT" ] || [ "$(lost "$HP" "$out")" != 0 ]; } && ! said; then
        silent=$((silent + 1))
        why="SILENT: exit 0, $got of $WANT dispatches, $(lost "$HP" "$out") records lost, no warning"
      fi
    else
      said || why="exit $rc without a message"
      # a store left at the output path is the complete one, never a short one
      [ -e "$out" ] && [ "$(dispatches "$HP" "$out")" != "$WANT" ] && why+=" exit $rc and a short store at $out"
    fi
    if [ -n "$why" ]; then
      bad "$kind ($(basename "$(dirname "$hp")")/hubprof) call $n of $calls fails with $err: $why :: $(head -c 300 "$T/err")"
    else
      ok
    fi
  done
  echo "test_fault: $kind ($hp): $calls calls, $(wc -w <<<"$ns") of them failed one at a time"
}

# the log the merge and convert sweeps read: a trace's own log, kept
mkdir -p "$T/logs"
HUBPROF_OUTPUT_DIR="$T/logs" OPENCL_LAYERS="$LIB" "$APP" 4 500 >/dev/null || bad "multithread failed"
cp "$(ls "$T"/logs/*.log | head -1)" "$T/src.log"
sweep trace "$HP" db
sweep merge "$HP" db
sweep convert "$HP" parquet
# the folder's sync after the output took its name fails: complete store in place, one warning, exit 0
for spec in "trace db" "merge db" "convert parquet" "convert log"; do
  set -- $spec
  out="$T/d.$2"
  DIRSYNC=0 run "$1" "$HP" "$out" 0 EIO >/dev/null
  k=$(count_dirsyncs)
  rc=$(DIRSYNC=$k run "$1" "$HP" "$out" 0 EIO)
  if [ "$k" -ge 1 ] && [ "$rc" = 0 ] && [ "$(dispatches "$HP" "$out")" = "$WANT" ] &&
    grep -qF "$out: written and complete, but its folder could not be synced" "$T/err"; then
    ok
  else
    bad "$1 to $2, folder sync $k of $k fails: exit $rc, $(dispatches "$HP" "$out") of $WANT dispatches :: $(head -c 300 "$T/err")"
  fi
done

if [ -x "$SAN" ]; then
  sweep merge "$SAN" db
  sweep convert "$SAN" parquet
else
  echo "test_fault: $SAN not built: the ASan sweeps are skipped (make san)"
fi
echo "test_fault: sweep of $total_runs faulted runs: $silent silent losses, $crashes crashes"
echo "test_fault: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
