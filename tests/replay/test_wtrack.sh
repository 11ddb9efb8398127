#!/usr/bin/env bash
# Write-tracked kernel replay (docs/replay.md "Write tracking"): a kernel writing part of a buffer through a
# plain, host-pointer, SVM, sub- or aliased buffer gives bit-identical results with tracking on and forced off
# (HUBPROF_WTRACK=off), the store says which way memory was saved (metadata, `info`), tracking restores only
# the pages written; a refused probe falls back with one debug line; a kernel's real crash and the
# program's own SIGSEGV handler behave as without profiling.
# usage: test_wtrack.sh [HUBPROF]   (needs `make all`; runs in a temporary directory, leaves nothing)
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/../.."
HP=$(realpath "${1:-build/hubprof}")
EX=$PWD/build/examples/ocl
PW=$EX/partial_write
CHECK=$PWD/build/tests/replay/check_profile
LIB=$PWD/build/libhubprof_collector.so
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ulimit -c 0
unset HUBPROF_OUTPUT_DIR HUBPROF_MODE HUBPROF_PLAN HUBPROF_PASS HUBPROF_DEBUG HUBPROF_SHADOW \
  HUBPROF_TEST_SKIP_RESTORE HUBPROF_TEST_FAIL_PASS HUBPROF_WTRACK HUBPROF_TEST_WTRACK_REFUSE OPENCL_LAYERS LD_PRELOAD
export HUBPROF_COLLECTOR=$LIB
. tests/lib.sh
need_built test_wtrack "$HP" "$CHECK" "$LIB" "$PW"
need_opencl test_wtrack
command -v sqlite3 >/dev/null || {
  echo "test_wtrack: sqlite3 is missing (scripts/deps.sh)" >&2
  echo "test_wtrack: 0 passed, 1 failed"
  exit 1
}
cd "$T"
C3=(--counters task-clock,page-faults,context-switches --max-counters-per-pass 1)
expect_eq() { # WHAT GOT WANT
  if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi
}
meta() { sqlite3 "$1" "select value from rocpd_metadata where tag='$2'"; }
restored() { sqlite3 "$1" "select sum(json_extract(extdata,'\$.bytes_restored')) from rocpd_kernel_dispatch"; }
result() { sed -E 's/ ns_per_dispatch=[0-9]+//' "$1"; } # the output without its timing

# ---- 1. every way of reaching memory, tracking on and off: results bit-identical to the plain run -------
# name|args
cases=(
  "buffer|65536 4096 4 buffer"
  "host|65536 4096 4 host"
  "svm|65536 4096 4 svm"
  "sub|65536 4096 4 sub"
  "alias|65536 4096 4 alias"
  "whole|65536 65536 3 buffer"
  "big|4194304 4096 3 buffer"
)
for c in "${cases[@]}"; do
  IFS='|' read -r name args <<<"$c"
  # shellcheck disable=SC2086
  "$PW" $args >"$name.plain" 2>&1
  grep -q ' ok$' "$name.plain" && ok || bad "$name: plain run: $(cat "$name.plain")"
  for wt in on off; do
    n=$name.$wt
    # shellcheck disable=SC2086
    HUBPROF_WTRACK=$wt "$HP" profile -q "${C3[@]}" -o "$n.db" -- "$PW" $args >"$n.out" 2>"$n.err"
    expect_eq "$n: exit" "$?" 0
    [ "$(result "$n.out")" = "$(result "$name.plain")" ] && ok ||
      bad "$n: output differs: $(cat "$n.out" "$n.err") vs $(cat "$name.plain")"
    "$CHECK" "$n.db" >"$n.report" 2>&1 && ok || bad "$n: $(grep -m3 bad "$n.report")"
    if [ "$wt" = on ]; then
      expect_eq "$n: memory" "$(meta "$n.db" replay_memory)" write-tracked
      expect_eq "$n: tracking" "$(meta "$n.db" replay_write_tracking)" "on (mprotect)"
    else
      expect_eq "$n: memory" "$(meta "$n.db" replay_memory)" full
      expect_eq "$n: tracking" "$(meta "$n.db" replay_write_tracking)" "turned off (HUBPROF_WTRACK=off)"
    fi
  done
done
# `info` says it, as text and JSON
"$HP" info buffer.on.db >info.txt 2>&1
grep -q '^replay          kernel; memory saved write-tracked; write tracking on (mprotect)$' info.txt && ok ||
  bad "info: no replay line: $(cat info.txt)"
"$HP" info --format json buffer.off.db | python3 -c 'import json,sys; r=json.load(sys.stdin)["replay"]; sys.exit(r != {"mode": "kernel", "memory": "full", "write_tracking": "turned off (HUBPROF_WTRACK=off)"})' &&
  ok || bad "info --format json: replay object wrong"

# ---- 2. only the written pages are restored: 4 KiB of a 4 MiB buffer, 4 dispatches x 2 restores ---------
# (at most 3 pages each: the write straddles two, plus the buffer's unaligned edges), against the whole
# buffer without tracking
r_on=$(restored big.on.db)
r_off=$(restored big.off.db)
[ "$r_on" -gt 0 ] && [ "$r_on" -le $((4 * 2 * 3 * 4096)) ] && ok || bad "4 KiB of 4 MiB: restored $r_on bytes with tracking"
expect_eq "4 KiB of 4 MiB, tracking off: restores the buffer" "$r_off" $((4 * 2 * 4194304))

# ---- 3. a refused probe falls back to the full save, with one line in the debug output --------------------
HUBPROF_TEST_WTRACK_REFUSE=1 HUBPROF_DEBUG=1 "$HP" profile -q "${C3[@]}" -o refused.db -- "$PW" 65536 4096 4 buffer \
  >refused.out 2>refused.err
expect_eq "refused: exit" "$?" 0
[ "$(result refused.out)" = "$(result buffer.plain)" ] && ok || bad "refused: output differs: $(cat refused.out)"
expect_eq "refused: one debug line" "$(grep -c 'write tracking is off' refused.err)" 1
grep -q 'write tracking is off (refused by the test hook HUBPROF_TEST_WTRACK_REFUSE): kernel replay saves, compares and restores whole buffers' refused.err &&
  ok || bad "refused: line wrong: $(grep 'write tracking' refused.err)"
expect_eq "refused: memory" "$(meta refused.db replay_memory)" full
# without HUBPROF_DEBUG the fallback is silent (the run is fine)
HUBPROF_TEST_WTRACK_REFUSE=1 "$HP" profile -q "${C3[@]}" -o quiet.db -- "$PW" 65536 4096 2 buffer >quiet.out 2>quiet.err
grep -q 'write tracking' quiet.err && bad "refused without debug: $(cat quiet.err)" || ok
# a bad value: tracking off, said in the debug output and the metadata
HUBPROF_WTRACK=maybe HUBPROF_DEBUG=1 "$HP" profile -q "${C3[@]}" -o badval.db -- "$PW" 65536 4096 2 buffer >badval.out 2>badval.err
expect_eq "bad HUBPROF_WTRACK: exit" "$?" 0
grep -q "write tracking is off (HUBPROF_WTRACK must be 'auto', 'on' or 'off')" badval.err && ok || bad "bad HUBPROF_WTRACK: $(cat badval.err)"

# ---- 4. signals: a kernel's real crash, and the program's own SIGSEGV handler, as without profiling --------
{ "$PW" 65536 4 2 oob >oob.plain 2>&1; } 2>/dev/null # bash would print "Segmentation fault"
prc=$?
"$HP" profile -q "${C3[@]}" -o oob.db -- "$PW" 65536 4 2 oob >oob.out 2>oob.err
expect_eq "kernel crash: exit as unprofiled" "$?" "$prc"
[ "$prc" -ge 128 ] && ok || bad "kernel crash: the plain run did not crash ($prc)"
for a in "oob trap" "buffer trap"; do
  # shellcheck disable=SC2086
  "$PW" 65536 4 2 $a >trap.plain 2>&1
  prc=$?
  # shellcheck disable=SC2086
  "$HP" profile -q -f "${C3[@]}" -o trap.db -- "$PW" 65536 4 2 $a >trap.out 2>trap.err
  expect_eq "program's handler ($a): exit" "$?" "$prc"
  expect_eq "program's handler ($a): plain exit" "$prc" 3
  [ "$(result trap.out)" = "$(result trap.plain)" ] && ok || bad "program's handler ($a): $(cat trap.out) vs $(cat trap.plain)"
done

# ---- 5. armed buffers: memory the runtime allocated stays read-only between dispatches -------------------
# The next dispatch protects again only the pages written since (4 KiB written: at most 2 whole pages per
# dispatch, 3 dispatches after the first), not the 1024 pages of the buffer.
HUBPROF_WTRACK=on HUBPROF_DEBUG=1 "$HP" profile -q -f "${C3[@]}" -o armed.db -- "$PW" 4194304 4096 3 buffer \
  >armed.out 2>armed.err
expect_eq "armed: exit" "$?" 0
[ "$(result armed.out)" = "$(result big.plain)" ] && ok || bad "armed: output differs: $(cat armed.out)"
rp=$(sed -nE 's/.*, ([0-9]+) armed pages protected again.*/\1/p' armed.err)
[ -n "$rp" ] && [ "$rp" -ge 1 ] && [ "$rp" -le 8 ] && ok || bad "armed: pages protected again: '$rp' (want 1..8)"
# The program changes the buffer itself between dispatches: through a mapped pointer written by read() (a
# system call: EFAULT if the page were still read-only), clEnqueueWriteBuffer and clEnqueueFillBuffer; then
# with its own SIGSEGV handler installed after the first dispatch (it must never see the collector's faults).
for a in "65536 4096 7 buffer between" "4194304 4096 7 sub between" "65536 4096 7 host between" \
  "65536 65536 4 buffer between" "65536 4096 7 buffer between trap"; do
  # shellcheck disable=SC2086
  "$PW" $a >btw.plain 2>&1
  prc=$?
  for wt in on off; do
    # shellcheck disable=SC2086
    HUBPROF_WTRACK=$wt "$HP" profile -q -f "${C3[@]}" -o btw.db -- "$PW" $a >btw.out 2>btw.err
    expect_eq "between ($a, $wt): exit" "$?" "$prc"
    [ "$(result btw.out)" = "$(result btw.plain)" ] && ok || bad "between ($a, $wt): $(cat btw.out btw.err) vs $(cat btw.plain)"
  done
done
expect_eq "between trap: plain exit" "$prc" 3

# ---- 6. auto on a device that runs commands on the caller (PoCL basic): small buffers take the full path ---
# from the first dispatch (no trial of tracking: the copies cost less); a large one is write-tracked.
for c in "small|65536|full" "large|4194304|write-tracked"; do
  IFS='|' read -r name size want <<<"$c"
  POCL_DEVICES=basic "$HP" profile -q -f "${C3[@]}" -o "auto_$name.db" -- "$PW" "$size" 4096 4 buffer \
    >"auto_$name.out" 2>"auto_$name.err"
  expect_eq "auto, basic, $size bytes: exit" "$?" 0
  expect_eq "auto, basic, $size bytes: replay_memory" "$(meta "auto_$name.db" replay_memory)" "$want"
done

echo "test_wtrack: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
