#!/usr/bin/env bash
# A collector that keeps no log is never "no OpenCL activity" (issue 30, seen after point 4), and -q never
# hides a loss (docs/cli/exit-codes.md): the log's creation failing inside the application (its first write
# fails with ENOSPC, tests/fault/fault_io.c; a real tmpfs the application fills before its first OpenCL call
# and empties after, as root), and a bad setting, each say where and why and exit 1 although the application
# exited 0; one process of two without a log is a warning beside the store. With -q: the warnings of a
# process that kept no log, of one that did not finish (killed), of a cut log (trace, merge, convert,
# analyze, info) all stay; only the summary goes; --strict makes the cut log an error for merge, convert and
# analyze.
# usage: test_no_log.sh [HUBPROF]   (default build/hubprof)
# SPDX-License-Identifier: MIT
set -u
HP=$(realpath "${1:-build/hubprof}")
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
APP=$PWD/build/examples/ocl/vector_add
CRASH=$PWD/build/examples/ocl/crash
GEN=$PWD/build/examples/gen_logs
need_built test_no_log "$HP" "$APP" "$CRASH" "$GEN"
need_opencl test_no_log
hp_test_env
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
T=$(realpath "$T")
cd "$T" || exit 1
cc -O1 -shared -fPIC "$OLDPWD/tests/fault/fault_io.c" -o "$T/fault.so" -ldl || bad "cannot build the preload"

# no_log_said OUT: stderr says OUT was not written because the collector kept no log, names the log's folder
# and the reason, and never blames the application
no_log_said() {
  grep -qF "$1 not written: the collector could not keep a log in 1 process, so nothing was recorded" err &&
    ! grep -q "did the application use" err && ok || bad "not said: $(cat err)"
  [ ! -e "$1" ] && [ -z "$(ls -A "$(dirname "$1")" | grep hubprof-logs)" ] && ok ||
    bad "a store or the log folder left: $(ls -A "$(dirname "$1")")"
}

# 1. the log's first write fails inside the application (ENOSPC): where and why, exit 1
mkdir -p o1
env LD_PRELOAD="$T/fault.so" FAULT_PATH="$T/o1/.hubprof-logs" FAULT_STATE="$T/state" FAULT_N=1 \
  "$HP" trace -o "$T/o1/x.db" -- "$APP" >out 2>err
rc=$?
[ $rc = 1 ] && ok || bad "exit $rc (want 1) when the log could not be created: $(cat err)"
grep -q "ok$" out && ok || bad "the application did not run: $(cat out)"
no_log_said "$T/o1/x.db"
grep -qE "\(process [0-9]+: $T/o1/\.hubprof-logs\.[^/]+/hubprof-[^ ]+\.log: cannot create: No space left on device; tracing disabled\)" err &&
  ok || bad "where and why not said: $(cat err)"
# -q does not hide it
env LD_PRELOAD="$T/fault.so" FAULT_PATH="$T/o1/.hubprof-logs" FAULT_STATE="$T/state2" FAULT_N=1 \
  "$HP" trace -q -o "$T/o1/x.db" -- "$APP" >out 2>err
rc=$?
[ $rc = 1 ] && grep -q "cannot create: No space left on device" err && ok || bad "-q: exit $rc, $(cat err)"

# 2. a bad setting turns the collector off: said, exit 1; the application's own failure status stays its own
expect 1 env HUBPROF_TIMESTAMP=bogus "$HP" trace -o "$T/x2.db" -- "$APP"
no_log_said "$T/x2.db"
grep -qF "HUBPROF_TIMESTAMP must be 'auto', 'tsc' or 'clock'; tracing disabled)" err && ok || bad "why: $(cat err)"
expect 3 env HUBPROF_TIMESTAMP=bogus "$HP" trace -o "$T/x3.db" -- sh -c '"$1" >/dev/null; exit 3' sh "$APP"
grep -q "x3.db not written: the collector could not keep a log" err && ok || bad "exit 3 case: $(cat err)"

# 3. one process of two kept no log: the store has the other, and a warning says one is missing, -q or not
for q in "" -q; do
  expect 0 "$HP" trace $q -f -o "$T/x4.db" -- sh -c '"$1" >/dev/null && HUBPROF_TIMESTAMP=bogus "$1"' sh "$APP"
  grep -qE "warning: 1 process kept no log, so what it did is not in $T/x4.db \(process [0-9]+: HUBPROF_TIMESTAMP" err &&
    ok || bad "partial ($q): $(cat err)"
  [ -z "$q" ] || ! grep -q " -> " err && ok || bad "-q printed the summary: $(cat err)"
done

# 4. a real folder that is full when the collector creates its log and has room again when hubprof looks
mnt=$T/mnt
mkdir -p "$mnt"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=2m tmpfs "$mnt" 2>/dev/null; then
  trap 'umount "$mnt" 2>/dev/null; rm -rf "$T"' EXIT
  HUBPROF_MIN_FREE_MB=1 "$HP" trace -o "$mnt/full.db" -- sh -c \
    'dd if=/dev/zero of="$2/fill" bs=64k 2>/dev/null; "$1"; rc=$?; rm -f "$2/fill"; exit $rc' sh "$APP" "$mnt" \
    >out 2>err
  rc=$?
  [ $rc = 1 ] && ok || bad "full folder: exit $rc (want 1): $(cat err)"
  no_log_said "$mnt/full.db"
  grep -q "cannot create: No space left on device" err && ok || bad "full folder: why not said: $(cat err)"
  umount "$mnt"
else
  echo "test_no_log: no tmpfs mount here (not root?): the full-folder case is skipped"
fi

# 5. -q hides the summary, never a loss: a killed process (trace), a cut log (merge, convert, analyze, info)
expect 137 "$HP" trace -q -o "$T/k.db" -- "$CRASH" kill 5
grep -q "warning: 1 process did not finish" err && ok || bad "trace -q hid the unfinished process: $(cat err)"
mkdir -p logs
"$GEN" logs 1 20000 >/dev/null || bad "gen_logs failed"
log=$(ls logs/*.log | head -1)
head -c $(($(stat -c %s "$log") * 2 / 3)) "$log" >cut.log
"$HP" info -q cut.log >out 2>err
grep -qE "^damage +[^n ]" out && ! grep -qE "^damage +none" out && ok || bad "info -q: damage not shown: $(cat out err)"
for cmd in "merge -q -o $T/m.db cut.log" "convert -q cut.log -o $T/c.parquet" "analyze -q cut.log"; do
  # shellcheck disable=SC2086
  "$HP" $cmd >out 2>err
  rc=$?
  [ $rc = 0 ] && grep -qiE "warning: .*(cut|damag|missing|lost)" err && ok || bad "$cmd: exit $rc, no warning: $(cat err)"
done
# --strict: the same cut log is an error for merge, convert and analyze (issue 30), nothing written
for cmd in "merge --strict -o $T/ms.db cut.log" "convert --strict cut.log -o $T/cs.db" "analyze --strict cut.log"; do
  # shellcheck disable=SC2086
  "$HP" $cmd >out 2>err
  rc=$?
  [ $rc = 1 ] && [ ! -e "$T/ms.db" ] && [ ! -e "$T/cs.db" ] && [ ! -s out ] && ok || bad "$cmd: exit $rc: $(cat err)"
done

echo "test_no_log: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
