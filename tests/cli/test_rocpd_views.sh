#!/usr/bin/env bash
# rocpd identity across processes: single-process, multi-process and merged rocpd stores keep the invariants
# ROCm's views rely on (one dispatch per (guid, dispatch_id), every join finds one row, no placeholder process,
# node or agent), and the views hubprof ships give the numbers of `hubprof analyze` (check_rocpd_views.py).
# Every store is made three times: pages written directly, plain SQLite (HUBPROF_ROCPD_PAGES=0), and pages
# that cannot be spliced in at commit, their rows then inserted through SQLite (HUBPROF_ROCPD_TEST_NO_SPLICE=1).
# usage: test_rocpd_views.sh [HUBPROF]   (needs `make all`; runs in a temporary directory, leaves nothing)
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/../.."
HP=$(realpath "${1:-build/hubprof}")
GEN=$PWD/build/examples/gen_logs
EX=$PWD/build/examples/ocl
CHECK=$PWD/tests/cli/check_rocpd_views.py
. tests/lib.sh
hp_test_env

views() { # views STORE: the invariants and the numbers
  if python3 "$CHECK" "$HP" "$1" >"$T/check" 2>&1; then ok; else bad "$(cat "$T/check")"; fi
}

# a real profile of an OpenCL program whose child process runs kernels too
expect 0 "$HP" profile -c task-clock,page-faults --max-counters-per-pass 1 -o "$T/fork.db" -- "$EX/forking" 3
views "$T/fork.db"
for pages in 1 0 x; do
  export HUBPROF_ROCPD_PAGES=${pages/x/1}
  if [ "$pages" = x ]; then export HUBPROF_ROCPD_TEST_NO_SPLICE=1; else unset HUBPROF_ROCPD_TEST_NO_SPLICE; fi
  D=$T/p$pages
  mkdir -p "$D/one" "$D/three"
  # single process and three processes (logs with counters in 2 passes), merged into rocpd
  "$GEN" "$D/one" 1 300 4 2 || bad "gen_logs failed"
  "$GEN" "$D/three" 3 200 4 2 || bad "gen_logs failed"
  expect 0 "$HP" merge -o "$D/one.db" "$D"/one/*.log
  views "$D/one.db"
  expect 0 "$HP" merge -o "$D/three.db" "$D"/three/*.log
  views "$D/three.db"
  expect 0 "$HP" convert "$T/fork.db" -o "$D/fork.db" --format rocpd
  views "$D/fork.db"
  # merges of merged stores: every process keeps its dispatches apart
  expect 0 "$HP" merge -o "$D/all.db" "$D/three.db" "$D/fork.db" "$D/one.db"
  views "$D/all.db"
  # gen_logs gives its processes the same pids: one.db repeats a process of three.db, taken once
  [ "$(sqlite3 "$D/all.db" "select count(*) from processes")" = 5 ] && ok || bad "merged processes"
done
# both writers give the same rows and the same view results
for db in one three fork all; do
  for q in "select * from counters_collection order by id" "select * from top_kernels" \
    "select dispatch_id, name, grid_x, start, \"end\" from kernels order by id" "select * from pmc_events order by id"; do
    a=$(sqlite3 "$T/p1/$db.db" "$q" | sed 's/[0-9a-f-]\{36\}/GUID/g')
    b=$(sqlite3 "$T/p0/$db.db" "$q" | sed 's/[0-9a-f-]\{36\}/GUID/g')
    c=$(sqlite3 "$T/px/$db.db" "$q" | sed 's/[0-9a-f-]\{36\}/GUID/g')
    [ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "$db: '$q' differs between the page writer and plain SQLite"
    [ "$a" = "$c" ] && ok || bad "$db: '$q' differs between spliced pages and the fallback"
  done
done
unset HUBPROF_ROCPD_PAGES HUBPROF_ROCPD_TEST_NO_SPLICE
# the check fails on the multi-process stores of old (issue #14): dispatch ids restarting at 1 in each process
# under the file's one guid, and a pid-0 placeholder process
G=$(sqlite3 "$T/p1/three.db" "select distinct guid from rocpd_kernel_dispatch" | tr - _)
cp "$T/p1/three.db" "$T/old.db"
sqlite3 "$T/old.db" "update rocpd_kernel_dispatch_$G set dispatch_id = (select count(*) from rocpd_kernel_dispatch_$G
  k where k.pid = rocpd_kernel_dispatch_$G.pid and k.id <= rocpd_kernel_dispatch_$G.id)" || bad "cannot renumber"
if python3 "$CHECK" "$HP" "$T/old.db" >"$T/old.check" 2>&1; then bad "per-process dispatch ids passed the check"; else
  grep -q "(guid, dispatch_id) pairs name more than one dispatch" "$T/old.check" && ok || bad "$(cat "$T/old.check")"
fi
cp "$T/p1/three.db" "$T/ph.db"
sqlite3 "$T/ph.db" "insert into rocpd_info_process_$G (id, guid, nid, ppid, pid, init, fini, start, \"end\", command,
  environment, extdata) select 0, guid, nid, 0, 0, 0, 0, 0, 0, '', '{}', '{}' from rocpd_info_process_$G limit 1" ||
  bad "cannot add a placeholder"
if python3 "$CHECK" "$HP" "$T/ph.db" >"$T/ph.check" 2>&1; then bad "a placeholder process passed the check"; else
  grep -q "rocpd_info_process has a placeholder row (id 0)" "$T/ph.check" && ok || bad "$(cat "$T/ph.check")"
fi
# NULL for unknown where ROCm's schema allows it: a killed process's end and fini, its thread's end; hubprof
# and Python read them back as unknown, and the views still answer
"$HP" trace -q -o "$T/killed.db" -- "$EX/crash" kill 12 >/dev/null 2>&1
[ "$(sqlite3 "$T/killed.db" 'select count(*) from rocpd_info_process where "end" is null and fini is null and start is not null')" = 1 ] &&
  ok || bad "a killed process's end is not NULL"
[ "$(sqlite3 "$T/killed.db" 'select count(*) from rocpd_info_thread where "end" is null')" = 1 ] && ok || bad "thread end not NULL"
# (crash kill 12: 12 dispatches harvested, 3 launched after the last sync kept from the launch file, no end)
[ "$(sqlite3 "$T/killed.db" 'select count(*) from processes where "end" is null; select count(*) from kernels')" = "1
15" ] && ok || bad "views over NULLs"
views "$T/killed.db"
"$HP" info "$T/killed.db" | grep -q "^unfinished *1 process" && ok || bad "info: the NULL end is not read as unknown"
PYTHONPATH=$PWD/python python3 -c '
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    p, t = s.table("process", dataset=True), s.table("thread", dataset=True)
assert p["end_ns"].isna().all() and p["start_ns"].notna().all() and t["end_ns"].isna().all(), (p, t)
' "$T/killed.db" && ok || bad "Python: the NULL end is not <NA>"
echo "test_rocpd_views: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
