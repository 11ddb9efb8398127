#!/usr/bin/env bash
# End-to-end tests of NVIDIA chips through CUPTI's Profiler Host API, no GPU: list devices/counters for a
# chip, plan pass counts equal to CUPTI's own count computed independently (cupti_check.py, ctypes), unknown
# metrics and a missing libcupti answered with one line. Skipped, with the reason, where libcupti is absent.
# usage: test_cupti.sh [HUBPROF]   (default build/hubprof: a sanitizer build does not load libcupti)
# SPDX-License-Identifier: MIT
set -u
HP=${1:-build/hubprof}
. "$(dirname "$0")/../lib.sh"
hp_test_env
CHECK="python3 $(dirname "$0")/cupti_check.py"
py() { python3 -c "import csv,json,os,sys; out=open(sys.argv[1]).read(); $1" "$T/out"; }

# ---- no libcupti: one line, and list devices still works (on every machine) ----
HUBPROF_CUPTI=/nonexistent expect 1 "$HP" plan --device GH100 --counters dram__bytes_read.sum
one_line_error "HUBPROF_CUPTI=/nonexistent"
grep -q "unknown device 'GH100'" "$T/err" && ok || bad "no unknown-device line: $(cat "$T/err")"
HUBPROF_CUPTI=/nonexistent expect 0 "$HP" list devices
[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "no NVIDIA chips listed: libcupti not found: HUBPROF_CUPTI=/nonexistent" "$T/err" &&
  ok || bad "list devices without libcupti: $(cat "$T/err")"
grep -qE '^gfx9 +- +[0-9]+ ' "$T/out" && ! grep -q ' cupti ' "$T/out" && ok || bad "list devices rows: $(cat "$T/out")"
HUBPROF_CUPTI=/nonexistent expect 1 "$HP" list counters --device GH100
one_line_error "HUBPROF_CUPTI=/nonexistent"
# a file that is not libcupti: one line naming it
echo "not a library" >"$T/fake.so"
HUBPROF_CUPTI="$T/fake.so" expect 1 "$HP" plan --device GH100 --counters dram__bytes_read.sum
one_line_error "$T/fake.so"
# the existing devices are unchanged
expect 0 "$HP" plan --device gfx9 --counters SQ_WAVES,TA_TA_BUSY
head -1 "$T/out" | grep -qF "gfx9: 2 counters in 1 pass (no total limit per pass; per block: SQ 8, TA 2," && ok ||
  bad "gfx9 plan: $(head -1 "$T/out")"
expect 1 "$HP" plan --device gfx9x --counters SQ_WAVES
one_line_error "unknown device 'gfx9x'"

# ---- with libcupti ----
expect 0 "$HP" list devices --format csv
LIB=$(python3 -c 'import csv,sys; r=[x["path"] for x in csv.DictReader(open(sys.argv[1])) if x["provider"] == "cupti"]; print(r[0] if r else "")' "$T/out")
if [ -z "$LIB" ]; then
  echo "test_cupti: CUPTI part skipped: $(head -1 "$T/err")"
  echo "test_cupti: $pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit
fi
export HUBPROF_CUPTI=$LIB # the same file for hubprof and the independent check
for chip in GH100 GB100; do
  n=0
  for t in 0 1 2; do n=$((n + $($CHECK "$LIB" $chip names $t | wc -l))); done
  expect 0 "$HP" list devices
  grep -qE "^$chip +cupti +$n " "$T/out" && ok || bad "list devices: no $chip row with $n metrics"
  expect 0 "$HP" list counters --device $chip
  head -1 "$T/out" | grep -q "^$chip — .*: $n counters, 0 available here" && ok || bad "list counters $chip: $(head -1 "$T/out")"
  grep -qE '^sm__cycles_elapsed +sm +gpc_cycle +no \[1\] +counter: ' "$T/out" && ok || bad "list counters $chip: no sm__cycles_elapsed"
  grep -qE '^sm__throughput +sm +percent +no \[1\] +throughput: ' "$T/out" && ok || bad "list counters $chip: no sm__throughput"
done
expect 0 "$HP" list counters --device GH100 --format json
py '
rows = {r["counter"]: r for r in json.loads(out)}
r = rows["dram__bytes_read"]
assert r["device"] == "GH100" and r["block"] == "dram" and r["unit"] == "byte" and r["available"] == 0, r
assert r["description"].startswith("counter: ") and "measured on a CUDA GPU" in r["reason"], r
' && ok || bad "list counters --format json"

ONE=dram__bytes_read.sum
FIVE=sm__cycles_elapsed.avg,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,l1tex__t_sectors.sum
FIVE_T=sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active
TWENTY=$FIVE,$FIVE_T,lts__t_sectors.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,gpu__time_duration.sum,sm__inst_executed_pipe_tensor.sum,smsp__warps_launched.sum,sm__cycles_active.avg,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed_op_global_ld.sum
for chip in GH100 GB100; do
  for list in ONE FIVE FIVE_T TWENTY; do
    names=${!list}
    count=$(echo "$names" | tr ',' '\n' | wc -l)
    want=$($CHECK "$LIB" $chip passes "$names")
    expect 0 "$HP" plan --device $chip --counters "$names"
    head -1 "$T/out" | grep -q "^$chip: $count counters\? in $want pass\(es\)\? (CUPTI's own count" && ok ||
      bad "plan $chip $list: '$(head -1 "$T/out")', CUPTI says $want passes"
    echo "test_cupti: $chip, $list ($count metrics): $want passes (CUPTI directly), $(head -1 "$T/out" | sed -E 's/.* in ([0-9]+) pass.*/\1/') (hubprof)"
    grep -q "^note: CUPTI does not say which metric" "$T/out" && ok || bad "plan $chip $list: no note on passes"
  done
  # csv: the configuration's passes on every row, and each metric's passes alone as CUPTI counts it
  expect 0 "$HP" plan --device $chip --counters "$FIVE_T" --format csv
  all=$($CHECK "$LIB" $chip passes "$FIVE_T")
  alone=$(for m in ${FIVE_T//,/ }; do $CHECK "$LIB" $chip passes $m; done | tr '\n' ' ')
  py "
rows = list(csv.DictReader(out.splitlines()))
assert [r['counter'] for r in rows] == '$FIVE_T'.split(','), rows
assert all(r['passes'] == '$all' for r in rows), rows
assert [r['passes_alone'] for r in rows] == '$alone'.split(), ([r['passes_alone'] for r in rows], '$alone')
" && ok || bad "plan $chip --format csv: $(cat "$T/out")"
done
expect 0 "$HP" plan --device gh100 --counters "$FIVE, dram__bytes_read.sum" --format line
[ "$(cat "$T/out")" = "$FIVE" ] && ok || bad "plan --format line: $(cat "$T/out")"
expect 0 "$HP" plan --device GH100 --counters "$ONE" --format json
py 'r = json.loads(out); assert len(r) == 1 and r[0]["counter"] == "dram__bytes_read.sum" and r[0]["block"] == "dram", r' &&
  ok || bad "plan --format json: $(cat "$T/out")"

# ---- unknown metrics: one line naming the metric, exit 1 as for any unknown counter ----
expect 1 "$HP" plan --device GH100 --counters "$FIVE,dram__bytes_reed.sum,sm__cycles_elapsed.avg"
one_line_error "unknown metric 'dram__bytes_reed.sum' on GH100 (did you mean 'dram__bytes_read.sum'"
expect 1 "$HP" plan --device GH100 --counters sm__cycles_elapsed
one_line_error "unknown metric 'sm__cycles_elapsed' on GH100 (a base metric needs a rollup: did you mean 'sm__cycles_elapsed.avg'?)"
expect 1 "$HP" plan --device GB100 --counters dram__bytes_read.summ
one_line_error "unknown metric 'dram__bytes_read.summ' on GB100 (not one of its rollups: did you mean 'dram__bytes_read.sum'?)"
expect 1 "$HP" plan --device GH100 --counters no_such_thing
one_line_error "unknown metric 'no_such_thing' on GH100"
expect 1 "$HP" plan --device GH100 --metrics ipc # perf's (cpu-perf): not a metric of NVIDIA chips
one_line_error "unknown metric 'ipc'"
expect 0 "$HP" plan --device GH100 --metrics sm_ipc # nvidia.metrics: CUPTI's names, one configuration
head -1 "$T/out" | grep -q "^GH100: 2 counters in 1 pass " && ok || bad "plan --metrics sm_ipc: $(head -1 "$T/out")"
expect 2 "$HP" plan --device GH100 --counters "$ONE" --max-counters-per-pass 2
one_line_error "do not apply"
expect 1 "$HP" plan --device GH999 --counters "$ONE"
one_line_error "unknown device 'GH999'"
grep -q "for NVIDIA chips: 'GH999' is not one of CUPTI's chips (GV100, .*GH100, .*GB100" "$T/err" && ok ||
  bad "GH999: no list of CUPTI's chips: $(cat "$T/err")"


# ---- the search path, with the toolkit hidden (a private mount namespace, where unshare can make one) ----
cuda=$(readlink -f /usr/local/cuda)
if [ -d "$cuda" ] && unshare -rm true 2>/dev/null; then
  mkdir -p "$T/empty" "$T/venv/lib/python3.11/site-packages/nvidia/cuda_cupti/lib"
  # copies (36 MB), since the toolkit's folder is hidden: libcupti and the libnvperf_host.so it opens
  src=$(dirname "$(readlink -f "$LIB")")
  cp "$(readlink -f "$LIB")" "$T/venv/lib/python3.11/site-packages/nvidia/cuda_cupti/lib/libcupti.so.13"
  [ -e "$src/libnvperf_host.so" ] && cp "$src/libnvperf_host.so" "$T/venv/lib/python3.11/site-packages/nvidia/cuda_cupti/lib/"
  hidden() { unshare -rm sh -c 'mount --bind "$0" "$1" && shift && exec "$@"' "$T/empty" "$cuda" "$@"; }
  # a pip package's folder (the virtual environment's site-packages) is found when the toolkit is not
  hidden env -u HUBPROF_CUPTI -u CUDA_HOME VIRTUAL_ENV="$T/venv" HOME="$T" "$HP" list devices --format csv >"$T/out" 2>"$T/err"
  grep -q "^GH100,cupti,[0-9]*,.*,$T/venv/lib/python3.11/site-packages/nvidia/cuda_cupti/lib/libcupti.so.13$" "$T/out" &&
    ok || bad "pip folder not found: $(cat "$T/err") $(grep GH100 "$T/out")"
  want=$($CHECK "$T/venv/lib/python3.11/site-packages/nvidia/cuda_cupti/lib/libcupti.so.13" GH100 passes "$FIVE_T")
  hidden env -u HUBPROF_CUPTI -u CUDA_HOME VIRTUAL_ENV="$T/venv" HOME="$T" "$HP" plan --device GH100 --counters "$FIVE_T" >"$T/out" 2>"$T/err"
  head -1 "$T/out" | grep -q "^GH100: 5 counters in $want passes" && ok || bad "plan from the pip folder: $(cat "$T/out" "$T/err")"
  # none found: one note naming where hubprof looked, the descriptions still listed
  hidden env -u HUBPROF_CUPTI -u CUDA_HOME -u VIRTUAL_ENV HOME="$T" "$HP" list devices >"$T/out" 2>"$T/err"
  if grep -q "libcupti not found" "$T/err"; then
    [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q '/usr/local/cuda/lib64, .*$CUDA_HOME (unset), .*nvidia-cuda-cupti' "$T/err" &&
      grep -qE '^gfx9 ' "$T/out" && ok || bad "list devices, no libcupti: $(cat "$T/err")"
  else
    echo "test_cupti: a libcupti outside the toolkit is installed here: the none-found check skipped"
  fi
else
  echo "test_cupti: search-path checks skipped: no private mount namespace here (unshare -rm)"
fi

echo "test_cupti: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
