#!/usr/bin/env bash
# Room for the output checked before the application starts (issue 30 point 4): a folder where no file can be
# made (/proc, even as root: permissions alone said yes) and a folder with less free space than
# HUBPROF_MIN_FREE_MB are refused with one line and exit 1 before the application runs (its output absent);
# merge and convert the same. On a real 3 MiB file system that fills up while the application runs (tmpfs,
# as root; skipped where mounting is not allowed), the application's output and exit status do not change,
# the lost records and the full disk are said on stderr, and the logs are kept and named.
# usage: test_room.sh [HUBPROF]   (default build/hubprof)
# SPDX-License-Identifier: MIT
set -u
HP=$(realpath "${1:-build/hubprof}")
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
APP=$PWD/build/examples/ocl/vector_add
LOOP=$PWD/build/examples/ocl/launch_loop
GEN=$PWD/build/examples/gen_logs
need_built test_room "$HP" "$APP" "$LOOP" "$GEN"
need_opencl test_room
hp_test_env
cd "$T" || exit 1

# no file can be made in /proc: refused before the application runs
expect 1 "$HP" trace -o /proc/hubprof-x.db -- "$APP"
one_line_error "/proc/hubprof-x.db: cannot write here: no file can be made in folder /proc"
[ ! -s out ] && ok || bad "the application ran: $(cat out)"
# less room than asked: refused before the application runs, the folder and the figures named
expect 1 env HUBPROF_MIN_FREE_MB=1000000000 "$HP" trace -o "$T/big.db" -- "$APP"
one_line_error "MiB free, less than the 1000000000 MiB hubprof wants before it starts"
grep -qF "$T/big.db: folder $T has" err && ok || bad "the folder not named: $(cat err)"
[ ! -s out ] && [ ! -e big.db ] && ok || bad "the application ran or a store was left: $(cat out)"
"$GEN" logs 1 100 1 1 >/dev/null
for cmd in merge convert; do
  input=logs
  [ $cmd = convert ] && input=$(ls logs/*.log | head -1)
  expect 1 env HUBPROF_MIN_FREE_MB=1000000000 "$HP" $cmd -o "$T/$cmd.db" "$input"
  one_line_error "$T/$cmd.db: folder $T has"
done
# the default margin is met here: the same run goes through
expect 0 "$HP" trace -q -o "$T/ok.db" -- "$APP"
grep -q ' ok$' out && [ -f ok.db ] && ok || bad "a plain run failed: $(cat out err)"

# a real file system that fills up while the application runs
mnt=$T/mnt
mkdir -p "$mnt"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=3m tmpfs "$mnt" 2>/dev/null; then
  trap 'umount "$mnt" 2>/dev/null; rm -rf "$T"' EXIT
  "$LOOP" 300000 1000 >plain.out 2>&1
  plain_rc=$?
  HUBPROF_MIN_FREE_MB=1 "$HP" trace -o "$mnt/full.db" -- "$LOOP" 300000 1000 >full.out 2>full.err
  rc=$?
  [ $rc = $plain_rc ] && ok || bad "exit $rc under a full disk, $plain_rc alone"
  sed -E 's/ns_per_dispatch=[0-9.]+ cpu_per_dispatch_ns=[0-9.]+ proc_cpu_per_dispatch_ns=[0-9.]+//' full.out >a
  sed -E 's/ns_per_dispatch=[0-9.]+ cpu_per_dispatch_ns=[0-9.]+ proc_cpu_per_dispatch_ns=[0-9.]+//' plain.out >b
  cmp -s a b && ok || bad "the application's output changed: $(cat full.out) vs $(cat plain.out)"
  grep -q "disk full" full.err && grep -q "records are counted as lost" full.err && ok ||
    bad "the full disk not said: $(cat full.err)"
  # nothing claimed written: either no store and the logs kept and named, or a store whose lost records say it
  if [ -e "$mnt/full.db" ]; then
    "$HP" info "$mnt/full.db" 2>&1 | grep -qiE "lost" && ok || bad "a store without its losses: $("$HP" info "$mnt/full.db" 2>&1)"
  else
    kept=$(grep -oE "logs are kept in [^ ]+" full.err | awk '{print $NF}')
    [ -n "$kept" ] && [ -d "$kept" ] && ok || bad "no store and no kept logs named: $(cat full.err)"
    # merged where there is room: the store's metadata says where and why the log stopped (collector_stopped.PID)
    "$HP" merge -q -o "$T/kept.db" "$kept" 2>merge.err && ok || bad "merge of the kept logs: $(cat merge.err)"
    sqlite3 "$T/kept.db" "select value from rocpd_metadata where tag like 'collector_stopped.%'" 2>/dev/null |
      grep -q "cannot write (.*disk full?); records are counted as lost" && ok ||
      bad "the kept logs' store does not say why they stopped: $("$HP" info "$T/kept.db" 2>&1 | head -20)"
  fi
  umount "$mnt"
else
  echo "test_room: the full-disk part skipped: cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN)"
fi

echo "test_room: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
