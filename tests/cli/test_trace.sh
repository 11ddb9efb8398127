#!/usr/bin/env bash
# End-to-end tests of `hubprof trace` and `hubprof analyze` on the OpenCL examples under PoCL: output
# store contents, exit status and output of the application unchanged, children followed, crashes,
# refused counters, bad input, analyze in table/CSV/JSON. usage: test_trace.sh [HUBPROF]
# SPDX-License-Identifier: MIT
set -u
HP=$(realpath "${1:-build/hubprof}")
EX=$PWD/build/examples/ocl
. tests/lib.sh
hp_test_env
need_opencl test_trace
q() { sqlite3 "$1" "$2"; }
cd "$T"

# 1. vector_add: output, exit status, stdout identical, store contents, intermediates removed
"$EX/vector_add" 4096 25 >plain.out 2>plain.err
plain_rc=$?
"$HP" trace -o va.db -- "$EX/vector_add" 4096 25 >va.out 2>va.err
rc=$?
[ $rc -eq $plain_rc ] && ok || bad "vector_add exit $rc vs $plain_rc"
cmp -s plain.out va.out && ok || bad "vector_add stdout changed"
grep -q "hubprof: 25 dispatches of 1 kernel in 1 process -> va.db (rocpd)" va.err && ok || bad "summary: $(cat va.err)"
[ "$(q va.db 'select count(*) from rocpd_kernel_dispatch')" = 25 ] && ok || bad "dispatch rows"
[ "$(q va.db "select count(*) from kernels where name='vector_add' and grid_x=4096 and start < \"end\"")" = 25 ] && ok || bad "kernels view"
[ "$(q va.db 'select total_calls from top_kernels')" = 25 ] && ok || bad "top_kernels"
ls -A | grep -q hubprof-logs && bad "log directory left behind: $(ls -A)" || ok
"$HP" info --format json va.db >info.json && python3 -c '
import json,sys; d=json.load(open("info.json"))
assert d["rows"]["dispatch"]==25 and d["rows"]["kernel_symbol"]==1 and len(d["processes"])==1, d
assert d["processes"][0]["command"].endswith("vector_add 4096 25"), d["processes"][0]' && ok || bad "info json"

# 1b. the collector's own log (dispatch batch records): info reads its 25 rows; merged into Parquet and back
# into rocpd, the rows are those of the traced store
mkdir -p lg && HUBPROF_OUTPUT_DIR="$T/lg" OPENCL_LAYERS="$HUBPROF_COLLECTOR" \
  "$EX/vector_add" 4096 25 >/dev/null 2>&1
lg=$(ls lg/*.log 2>/dev/null | head -n 1)
"$HP" info --format json "$lg" >lginfo.json 2>&1 && python3 -c '
import json; d=json.load(open("lginfo.json")); assert d["rows"]["dispatch"]==25, d' && ok || bad "info on a log: $(cat lginfo.json)"
"$HP" merge -q -o lg.parquet "$lg" && "$HP" merge -q -o lg.db lg.parquet &&
  [ "$(q lg.db "select count(*) from kernels where name='vector_add' and grid_x=4096 and start < \"end\"")" = 25 ] &&
  ok || bad "log -> parquet -> rocpd"

# 2. default output name; existing output refused before the app runs; --force
(cd "$T" && "$HP" trace -q -- "$EX/vector_add" 1024 3 >/dev/null 2>&1)
[ -f vector_add.hubprof.db ] && ok || bad "default output name: $(ls)"
# a second and a third run without -o take the next free names, and say so (issue 28)
for i in 2 3; do
  "$HP" trace -- "$EX/vector_add" 1024 $i >out 2>err
  [ $? -eq 0 ] && grep -q -- "-> vector_add.hubprof-$i.db" err && [ "$(q vector_add.hubprof-$i.db 'select count(*) from rocpd_kernel_dispatch')" = $i ] &&
    ok || bad "default output name, run $i: $(cat err)"
done
# -f on a link to a Parquet store replaces the link, never what it points to (issue 30 point 6: the target's
# files, a user's own included, were deleted and a hidden link left)
"$HP" trace -q -F parquet -o real.parquet -- "$EX/vector_add" 64 2 >/dev/null 2>&1
echo "my notes" >real.parquet/my_notes.txt
ln -s real.parquet link.parquet
"$HP" trace -q -f -F parquet -o link.parquet -- "$EX/vector_add" 64 3 >/dev/null 2>err
[ -d link.parquet ] && [ ! -L link.parquet ] && [ "$(cat real.parquet/my_notes.txt 2>/dev/null)" = "my notes" ] &&
  [ -f real.parquet/_hubprof.json ] && [ -z "$(ls -A | grep '\.tmp\.')" ] && ok ||
  bad "-f on a link to a store: $(ls -la) $(cat err)"
# one of a kind in the summary: singular (issue 28: "1 dispatches")
"$HP" trace -o one.db -- "$EX/vector_add" 1024 1 >out 2>err
grep -q "^hubprof: 1 dispatch of 1 kernel in 1 process -> one.db" err && ok || bad "singular summary: $(cat err)"
"$HP" merge -o one2.db one.db >out 2>err
grep -q "merged 1 store into one2.db (rocpd): 1 process, 1 dispatch, 0 counter values, 1 kernel$" err && ok ||
  bad "singular merge summary: $(cat err)"
"$HP" trace -o vector_add.hubprof.db -- "$EX/vector_add" 1024 3 >out 2>err
[ $? -eq 1 ] && grep -q "already exists" err && ! grep -q "vector_add: n=" out && ok || bad "existing output not refused before running"
"$HP" trace -f -q -- "$EX/vector_add" 1024 5 >/dev/null 2>&1 && [ "$(q vector_add.hubprof.db 'select count(*) from rocpd_kernel_dispatch')" = 5 ] && ok || bad "--force"

# 3. counters refused, nothing written, app not run
"$HP" trace --counters task-clock -o c.db -- "$EX/vector_add" >out 2>err
[ $? -eq 2 ] && [ ! -e c.db ] && [ ! -s out ] && [ "$(wc -l <err)" -eq 1 ] && grep -q "collects no counters" err && ok || bad "--counters: $(cat err)"

# 4. exit status of the application passes through (a failing app, a missing app, a killed app)
"$HP" trace -q -o f.db -- sh -c 'exit 7' ; [ $? -eq 7 ] && ok || bad "exit 7 not passed through"
[ ! -e f.db ] && ok || bad "an app without OpenCL left an output"
"$HP" trace -q -o m.db -- ./no-such-program 2>err; [ $? -eq 127 ] && grep -q "cannot run './no-such-program'" err && ok || bad "missing app: $(cat err)"

# 4b. started with SIGCHLD ignored (as some launchers do): the application's status still comes through,
# and the application gets the ignored disposition it inherited
python3 -c 'import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])' \
  "$HP" trace -q -o s.db -- sh -c 'exit 3' 2>/dev/null
[ $? -eq 3 ] && ok || bad "SIGCHLD ignored: exit status lost"
# application replay of a program without OpenCL: a warning and the application's own status, as trace
"$HP" profile -q --replay application --counters task-clock -o ar.db -- sh -c 'exit 0' 2>err
[ $? -eq 0 ] && [ ! -e ar.db ] && grep -q "no OpenCL or CUDA activity" err && ok || bad "application replay without OpenCL: $(cat err)"

# 5. crashes: every dispatch finished before the crash is in the output with its times, and the 3 launched after
# the last sync without (from the launch file); exit status 128+signal
for how in segv abort kill; do
  "$HP" trace -q -o crash-$how.db -- "$EX/crash" $how 12 >out 2>err
  rc=$?
  case $how in segv) want=139 ;; abort) want=134 ;; kill) want=137 ;; esac
  [ $rc -eq $want ] && ok || bad "crash $how: exit $rc, want $want"
  n=$(q crash-$how.db 'select count(*) || "/" || sum("end" > 0) from rocpd_kernel_dispatch' 2>/dev/null)
  [ "$n" = 15/12 ] && ok || bad "crash $how: $n dispatches/timed, want 15/12 ($(cat err))"
done

# 6. children: forked processes each write their log, all merged; an exec'd non-OpenCL child leaves nothing
"$HP" trace -o fork.db -- "$EX/forking" 4 >out 2>err
[ $? -eq 0 ] && ok || bad "forking failed: $(cat err)"
np=$(q fork.db 'select count(*) from rocpd_info_process')
[ "$np" = 2 ] && ok || bad "forking: $np processes, want 2 (parent and OpenCL child)"
[ "$(q fork.db 'select count(distinct pid) from rocpd_kernel_dispatch')" = 2 ] && ok || bad "dispatches of both processes"
ls -A | grep -q hubprof-logs && bad "junk left by forking: $(ls -A)" || ok

# 7. many threads, each on its own queue: nothing lost
"$HP" trace -q -o mt.db -- "$EX/multithread" 16 50 >/dev/null 2>err && ok || bad "multithread: $(cat err)"
[ "$(q mt.db 'select count(*) from rocpd_kernel_dispatch')" = 800 ] && ok || bad "multithread rows $(q mt.db 'select count(*) from rocpd_kernel_dispatch')"
[ "$(q mt.db 'select count(*) from rocpd_info_queue')" -ge 16 ] && ok || bad "queues"

# 8. an application that dlopens libOpenCL is traced through the layer; --preload gives the same
"$HP" trace -q -o dl.db -- "$EX/dlopen_ocl" 1024 9 >/dev/null 2>&1
[ "$(q dl.db 'select count(*) from rocpd_kernel_dispatch')" = 9 ] && ok || bad "dlopen app"
"$HP" trace -q --preload -o pre.db -- "$EX/vector_add" 1024 6 >/dev/null 2>&1
[ "$(q pre.db 'select count(*) from rocpd_kernel_dispatch')" = 6 ] && ok || bad "--preload counts"

# 9. unusable output: refused before the application runs (one line naming the output, exit 1, no output)
mkdir ro && chmod 555 ro
if [ "$(id -u)" -ne 0 ] || ! touch ro/x 2>/dev/null; then
  unusable=ro/x.db
else
  rm -f ro/x
  unusable=va.db/x.db # root writes anywhere: use a path under a regular file instead
fi
"$HP" trace -o "$unusable" -f -- "$EX/vector_add" 1024 3 >out 2>err
rc=$?
[ $rc -eq 1 ] && [ ! -s out ] && [ "$(wc -l <err)" -eq 1 ] && grep -q "$unusable" err && ok ||
  bad "unusable output: exit $rc, stdout $(cat out), stderr $(cat err)"

# 10. analyze: table, csv, json on the traced stores
"$HP" analyze va.db >a.txt && grep -q "vector_add" a.txt && head -n 1 a.txt | grep -q "KERNEL" && ok || bad "analyze table"
"$HP" analyze --format csv mt.db >a.csv && python3 -c '
import csv; rows=list(csv.DictReader(open("a.csv")))
assert len(rows)>=1 and sum(int(r["calls"]) for r in rows)==800, rows
assert abs(sum(float(r["percent"]) for r in rows if r["device"]==rows[0]["device"])-100)<0.01' && ok || bad "analyze csv"
"$HP" analyze --format json fork.db >a.json && python3 -c '
import json; rows=json.load(open("a.json"))
assert sum(r["calls"] for r in rows)>0 and all(r["min_ns"]<=r["avg_ns"]<=r["max_ns"] for r in rows), rows' && ok || bad "analyze json"
"$HP" analyze --format xml va.db 2>err; [ $? -eq 2 ] && ok || bad "analyze bad format"
COLUMNS=80 "$HP" analyze va.db >narrow.txt && awk 'length($0) > 80 {exit 1}' narrow.txt && ok || bad "analyze does not fit 80 columns: $(cat narrow.txt)"

# 11a. -F parquet for trace and profile: a directory store every reader takes
"$HP" trace -q -F parquet -o tr.parquet -- "$EX/vector_add" 1024 7 >/dev/null 2>err && ok || bad "trace parquet: $(cat err)"
python3 -c 'import pyarrow.parquet as pq; assert pq.read_table("tr.parquet/dispatch").num_rows == 7' && ok || bad "trace parquet rows"
"$HP" profile -q --output-format parquet --counters task-clock,page-faults --max-counters-per-pass 1 -o pr.parquet -- \
  "$EX/vector_add" 1024 5 >/dev/null 2>err && ok || bad "profile parquet: $(cat err)"
python3 -c '
import pyarrow.parquet as pq
v = pq.read_table("pr.parquet/counter_value").to_pydict()
assert len(v["pass"]) == 10 and sorted(set(v["pass"])) == [1, 2], v["pass"]' && ok || bad "profile parquet passes"
"$HP" analyze --format json pr.parquet >pr.json && python3 -c '
import json; r=json.load(open("pr.json")); assert sum(x["calls"] for x in r) == 5, r' && ok || bad "analyze parquet"

# 11. profile --metrics: the metric's counters are planned and collected; an unknown metric is refused
"$HP" profile --metrics faults_per_us -o pm.db -- "$EX/vector_add" 4096 10 >out 2>err
[ $? -eq 0 ] && grep -q "pass 1: page-faults" err && ok || bad "profile --metrics: $(cat err)"
[ "$(q pm.db 'select count(*) from counters_collection')" = 10 ] && ok || bad "profile --metrics: counter rows"
"$HP" analyze --format csv --metrics faults_per_us pm.db >pm.csv && python3 -c '
import csv; r=list(csv.DictReader(open("pm.csv")))[0]; assert float(r["faults_per_us"]) > 0, r' && ok || bad "analyze metric from profile: $(cat pm.csv)"
"$HP" profile --metrics nosuchmetric -o pm2.db -- "$EX/vector_add" >out 2>err
[ $? -eq 1 ] && [ ! -e pm2.db ] && [ ! -s out ] && grep -q "unknown metric 'nosuchmetric'" err && ok || bad "unknown metric: $(cat err)"

echo "test_trace: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
