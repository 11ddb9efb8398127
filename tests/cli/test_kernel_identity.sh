#!/usr/bin/env bash
# Kernel identity and code capture (issue 28) on a real OpenCL program under PoCL (examples/ocl/same_name: two
# programs of different sources, each with a kernel `update`, dispatched a different number of times):
# tracing makes PoCL compile nothing more than the program does (kernels counted in an empty PoCL cache),
# sources and binaries are stored only with --code, a trace selecting nothing is small; two programs' kernels
# of one name are two kernels in trace, analyze (disambiguated names), --kernel, merge (the same program in
# two processes is one kernel), multiplexing keys and application-replay matching; the summary counts
# kernels dispatched. usage: test_kernel_identity.sh [HUBPROF]
# SPDX-License-Identifier: MIT
set -u
HP=$(realpath "${1:-build/hubprof}")
EX=$PWD/build/examples/ocl
. tests/lib.sh
hp_test_env
need_built test_kernel_identity "$HP" "$EX/same_name"
need_opencl test_kernel_identity
cd "$T"
q() { sqlite3 "$1" "$2"; }
# compiled CACHE: kernels PoCL compiled into the cache folder CACHE (one shared object each)
compiled() { find "$1" -name '*.so' 2>/dev/null | wc -l; }

# 1. compile count: plain, traced, traced with --code, each on an empty PoCL cache
mkdir c_plain c_trace c_code
POCL_CACHE_DIR=$T/c_plain "$EX/same_name" 3 5 >plain.out 2>&1 || bad "same_name failed: $(cat plain.out)"
POCL_CACHE_DIR=$T/c_trace "$HP" trace -o t.db -- "$EX/same_name" 3 5 >t.out 2>t.err || bad "trace: $(cat t.err)"
POCL_CACHE_DIR=$T/c_code "$HP" trace --code -o code.db -- "$EX/same_name" 3 5 >/dev/null 2>code.err ||
  bad "trace --code: $(cat code.err)"
np=$(compiled c_plain) nt=$(compiled c_trace) nc=$(compiled c_code)
[ "$np" -ge 2 ] && [ "$nt" = "$np" ] && ok || bad "kernels compiled: plain $np, traced $nt (want equal)"
# --code asks for the binaries: PoCL compiles more (proves the count above can tell)
[ "$nc" -gt "$np" ] && ok || bad "--code: $nc kernels compiled, plain $np (want more)"
cmp -s plain.out t.out && ok || bad "output changed: $(cat t.out)"

# 2. what the store keeps: hashes and build options by default, sources and binaries with --code
[ "$(q t.db "select count(*) from rocpd_info_code_object where extdata like '%__kernel%'")" = 0 ] &&
  [ "$(q t.db "select count(*) from rocpd_hubprof_code_blob")" = 0 ] && ok || bad "default store holds code"
[ "$(q code.db "select count(*) from rocpd_info_code_object where extdata like '%__kernel void update%'")" -ge 2 ] &&
  [ "$(q code.db "select count(*) from rocpd_hubprof_code_blob")" -ge 1 ] && ok || bad "--code: no sources or binaries"
grep -q "programs: hashes only (--code keeps sources and binaries)" t.err &&
  grep -q "programs: sources and binaries kept" code.err && ok || bad "summary on code: $(cat t.err code.err)"

# 3. two kernels: summary, kernel_symbol rows (the second object of program A is the same kernel), analyze
grep -q "^hubprof: 8 dispatches of 2 kernels in 1 process" t.err && ok || bad "summary: $(cat t.err)"
[ "$(q t.db "select count(*) from rocpd_info_kernel_symbol where kernel_name='update'")" = 2 ] && ok ||
  bad "kernel_symbol rows: $(q t.db 'select * from rocpd_info_kernel_symbol')"
"$HP" analyze --format csv --by kernel t.db >an.csv 2>an.err || bad "analyze: $(cat an.err)"
ka=$(awk -F, '$0 ~ /update#/ && $0 ~ /,3,/ {for (i = 1; i <= NF; i++) if ($i ~ /^update#/) print $i}' an.csv)
kb=$(awk -F, '$0 ~ /update#/ && $0 ~ /,5,/ {for (i = 1; i <= NF; i++) if ($i ~ /^update#/) print $i}' an.csv)
[ -n "$ka" ] && [ -n "$kb" ] && [ "$ka" != "$kb" ] && [ "$(grep -c 'update#' an.csv)" = 2 ] && ok ||
  bad "analyze: two kernels update#… with 3 and 5 calls: $(cat an.csv)"
pa=${ka#update#}
[ ${#pa} = 8 ] && q t.db "select extdata from rocpd_info_kernel_symbol" | grep -q "\"program_hash\":\"$pa" && ok ||
  bad "shown digits not the program hash's: $ka / $(q t.db 'select extdata from rocpd_info_kernel_symbol')"
# analyze --kernel picks one (the shown name, a glob); the bare name picks both
"$HP" analyze --format csv --by kernel --kernel "update#$pa*" t.db >one.csv 2>&1
[ "$(grep -c 'update#' one.csv)" = 1 ] && grep -q "$ka" one.csv && ok || bad "analyze --kernel $ka: $(cat one.csv)"
"$HP" analyze --format csv --by kernel --kernel update t.db >both.csv 2>&1
[ "$(grep -c 'update#' both.csv)" = 2 ] && ok || bad "analyze --kernel update: $(cat both.csv)"
# trace --kernel picks one program's kernel by "name#hash"
"$HP" trace -o sel.db --kernel "^update#$pa" -- "$EX/same_name" 3 5 >/dev/null 2>sel.err
[ "$(q sel.db 'select count(*) from rocpd_kernel_dispatch')" = 3 ] && ok || bad "trace --kernel ^update#$pa: $(cat sel.err)"
# one pattern syntax accepted everywhere with a prefix: trace takes 'glob:' (default regex), analyze 're:'
"$HP" trace -o gsel.db --kernel "glob:update#$pa*" -- "$EX/same_name" 3 5 >/dev/null 2>gsel.err
[ "$(q gsel.db 'select count(*) from rocpd_kernel_dispatch')" = 3 ] && ok || bad "trace --kernel glob:update#$pa*: $(cat gsel.err)"
"$HP" trace -o gall.db --kernel "glob:upd" -- "$EX/same_name" 3 5 >/dev/null 2>&1 # a glob matches the whole name
[ "$(q gall.db 'select count(*) from rocpd_kernel_dispatch')" = 0 ] && ok || bad "trace --kernel glob:upd selected some"
"$HP" analyze --format csv --by kernel --kernel "re:^update#$pa" t.db >re.csv 2>&1
[ "$(grep -c 'update#' re.csv)" = 1 ] && grep -q "$ka" re.csv && ok || bad "analyze --kernel re:: $(cat re.csv)"
"$HP" analyze --kernel "re:(" t.db >out 2>err
[ $? = 2 ] && grep -q "regular expression" err && ok || bad "analyze --kernel 're:(': $(cat err)"
# export (Perfetto JSON) names them apart too
"$HP" export -o t.json t.db >/dev/null 2>&1 && grep -q "$ka" t.json && grep -q "$kb" t.json && ok ||
  bad "export: kernel names not disambiguated"

# 4. merge: the same program in two processes is one kernel; calls add up
"$HP" trace -q -o t2.db -- "$EX/same_name" 3 5 >/dev/null 2>&1
"$HP" merge -q -o m.db t.db t2.db 2>merr || bad "merge: $(cat merr)"
[ "$(q m.db "select count(*) from rocpd_info_kernel_symbol where kernel_name='update'")" = 2 ] && ok ||
  bad "merge: kernel rows $(q m.db 'select id, kernel_name, extdata from rocpd_info_kernel_symbol')"
"$HP" analyze --format csv --by kernel m.db >m.csv 2>&1
grep "$ka" m.csv | grep -q ',6,' && grep "$kb" m.csv | grep -q ',10,' && ok || bad "merged calls: $(cat m.csv)"

# 5. --kernel nomatch: nothing selected, a small store without code
"$HP" trace -o none.db --kernel nomatch -- "$EX/same_name" 3 5 >/dev/null 2>none.err
sz=$(stat -c %s none.db)
[ "$(q none.db 'select count(*) from rocpd_hubprof_code_blob')" = 0 ] && [ "$sz" -lt 400000 ] && ok ||
  bad "--kernel nomatch: $sz bytes"

# 6. iteration multiplexing: one key per kernel (name and program)
C2=(--counters task-clock,page-faults --max-counters-per-pass 1)
"$HP" profile "${C2[@]}" --replay multiplex -o mux.db -- "$EX/same_name" 6 10 >/dev/null 2>mux.err
grep -q "policy 'kernel': 2 of 2 keys complete" mux.err && ok || bad "multiplex keys: $(cat mux.err)"

# 7. application replay: runs that dispatch the two programs' kernels in other numbers (3+5, then 5+3):
# matched per program, so 2 of each kernel are left unmatched (by name alone all 8 would pair up wrongly)
vary() { echo "[ \"\${HUBPROF_PASS:-1}\" = 1 ] && exec $1 || exec $2"; }
"$HP" profile "${C2[@]}" --replay application --match name -o app.db -- \
  sh -c "$(vary "$EX/same_name 3 5" "$EX/same_name 5 3")" >/dev/null 2>app.err
grep -q "pass 2: 2 dispatches matched no dispatch of the first run and 2 of the first run's had no match" app.err &&
  grep -q "of 2 kernels" app.err && ok || bad "application replay matching: $(cat app.err)"

echo "test_kernel_identity: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
