#!/usr/bin/env bash
# A log cut by another process while hubprof opens it (issue 30 point 2): the cut comes at the first look
# for data past a hole (a preload, shrink_on_seek.c, truncates the file at its first lseek(SEEK_DATA), as
# another process would in the middle of the scan). info, convert and merge fail with one line naming the
# file; before the fix they read the log as complete, with about half its dispatches and exit 0.
# usage: test_shrink.sh [HUBPROF]   (default build/hubprof)
# SPDX-License-Identifier: MIT
set -u
HP=${1:-build/hubprof}
LIB=$PWD/build/libhubprof_collector.so
APP=build/examples/ocl/launch_loop
. "$(dirname "$0")/../lib.sh"
hp_test_env
need_built test_shrink "$HP" "$LIB" "$APP"
if ! clinfo -l 2>/dev/null | grep -q Device; then
  echo "test_shrink: skipped: no OpenCL device (install pocl-opencl-icd)"
  echo "test_shrink: 0 passed, 0 failed"
  exit 0
fi
cc -O1 -shared -fPIC "$(dirname "$0")/shrink_on_seek.c" -o "$T/shrink.so" -ldl || bad "cannot build the preload"
# a collector's own log (its chunks end in holes, as a real one's do), of 300 000 dispatches
mkdir -p "$T/src"
POCL_DEVICES=basic HUBPROF_OUTPUT_DIR="$T/src" OPENCL_LAYERS="$LIB" "$APP" 300000 1000 >/dev/null ||
  bad "launch_loop failed"
log=$(ls "$T"/src/*.log)
size=$(stat -c %s "$log")
# the untouched log, through the same preload (no SHRINK_PATH): read whole
expect 0 env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD="$T/shrink.so" "$HP" info "$log"
grep -qE "^damage +none" "$T/out" && ok || bad "untouched log: $(cat "$T/out")"
for cmd in info convert merge; do
  cp "$log" "$T/in.log"
  rm -rf "$T/o.db"
  case $cmd in
    info) args=(info "$T/in.log") ;;
    convert) args=(convert -o "$T/o.db" "$T/in.log") ;;
    merge) args=(merge -o "$T/o.db" "$T/in.log") ;;
  esac
  expect 1 env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD="$T/shrink.so" SHRINK_PATH="$T/in.log" SHRINK_TO=$((size / 2)) "$HP" "${args[@]}"
  [ "$(stat -c %s "$T/in.log")" -lt "$size" ] && ok || bad "$cmd: the preload did not cut the log"
  one_line_error "shrank while being read"
  [ ! -e "$T/o.db" ] && ok || bad "$cmd: a store was written from the cut log"
done
echo "test_shrink: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
