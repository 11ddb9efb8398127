#!/usr/bin/env bash
# How each process ended, stored per process in every format (issue 28): the exit code and the signal, NULL
# where unknown. A forked child's exit() code comes through the exit shim; _exit is left alone (a vfork child's
# _exit changes nothing in its parent); a process killed by SIGKILL is named with its signal in the warning, in
# `info` (table and JSON, from rocpd, Parquet and the log format) and in the report.
# usage: test_exit_status.sh [HUBPROF]   (default build/hubprof)
# SPDX-License-Identifier: MIT
set -u
HP=$(realpath "${1:-build/hubprof}")
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
FORK=$PWD/build/examples/ocl/forking
CRASH=$PWD/build/examples/ocl/crash
need_built test_exit_status "$HP" "$FORK" "$CRASH" "$PWD/build/libhubprof_exit.so"
need_opencl test_exit_status
hp_test_env
export POCL_DEVICES=basic # forking's children need a fork-safe device
cd "$T" || exit 1

# processes of `info --format json STORE` as "pid state exit_code exit_signal" lines
procs() { "$HP" info --format json "$1" | python3 -c '
import json, sys
for p in json.load(sys.stdin)["processes"]:
    print(p["pid"], p["state"], p["exit_code"], p["exit_signal"])'; }

# a forked child ending with exit(0): its code through the exit shim, the parent's from hubprof's wait
expect 0 "$HP" trace -o q.db -- "$FORK" 3
grep -q 'children=2 ok' out && ok || bad "forking failed: $(cat out err)"
procs q.db >p.txt
[ "$(wc -l <p.txt)" = 2 ] && ok || bad "want 2 processes (parent, OpenCL child): $(cat p.txt)"
[ "$(grep -c ' finished 0 0$' p.txt)" = 2 ] && ok || bad "want both finished with exit code 0: $(cat p.txt)"
"$HP" info q.db | grep -A3 '^processes' | grep -q 'finished  0 ' && ok || bad "info's EXIT column: $("$HP" info q.db)"

# without the shim the child's code is unknown (the parent's still comes from hubprof's wait), so the test
# above can fail
mkdir noshim && cp "$HUBPROF_COLLECTOR" noshim/
expect 0 env HUBPROF_COLLECTOR="$T/noshim/libhubprof_collector.so" "$HP" trace -o ns.db -- "$FORK" 3
[ "$(procs ns.db | grep -c ' finished None None$')" = 1 ] && ok || bad "without the shim: $(procs ns.db)"

# _exit is left alone (async-signal-safe): a child ending with _exit(0) keeps its log unclosed, and a vfork
# child's _exit changes nothing in its parent, whose run completes
expect 0 "$HP" trace -o qk.db -- "$FORK" 3 quick
grep -q 'children=2 ok' out && ok || bad "forking quick failed: $(cat out err)"
grep -q 'did not close its log (killed, or its log cut short)' err && ok || bad "the _exit child: $(cat err)"

# killed by SIGKILL: named everywhere, with no exit code
expect 137 "$HP" trace -o k.db -- "$CRASH" kill 4
grep -q 'did not close its log (killed by SIGKILL)' err && ok || bad "the warning does not name SIGKILL: $(cat err)"
for fmt in rocpd parquet log; do
  store=k.db
  if [ $fmt != rocpd ]; then
    store=k.$fmt
    [ $fmt = log ] && store=k.log
    "$HP" convert -q -F $fmt -o "$store" k.db 2>cerr || bad "convert to $fmt: $(cat cerr)"
  fi
  line=$(procs "$store")
  case "$line" in
  *" killed None 9") ok ;;
  *) bad "$fmt: want state killed, exit_code null, exit_signal 9: $line" ;;
  esac
done
"$HP" info k.db | grep -q ' killed    SIGKILL ' && ok || bad "info's EXIT column: $("$HP" info k.db)"
"$HP" report -q -o k.html k.db 2>/dev/null
grep -q 'killed by SIGKILL' k.html && ok || bad "the report does not say SIGKILL"

echo "test_exit_status: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
