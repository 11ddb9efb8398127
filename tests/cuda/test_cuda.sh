#!/usr/bin/env bash
# The CUDA provider without a GPU: the record conversion's test (release and sanitizer builds), the driver's
# injection done by hand with OpenCL in the same process (one line about CUDA, OpenCL still recorded, with
# and without libcupti), and a CUDA program built here with nvcc run plain and under `hubprof trace`: its
# output and exit status unchanged and exactly one line about CUDA from hubprof. The nvcc part is skipped,
# with the reason, where nvcc is absent; `sample -c` passing NVIDIA metrics to the CUDA provider's PM
# sampling. The GPU half is tests/device/cuda.sh and tests/device/cuda_why.sh.
# usage: test_cuda.sh [HUBPROF]
# SPDX-License-Identifier: MIT
set -u
HP=${1:-build/hubprof}
. "$(dirname "$0")/../lib.sh"
hp_test_env
B=${B:-build}
need_built test_cuda "$HP" "$B/tests/cuda/test_cuda_conv" "$B/tests/cuda/test_cuda_range" "$B/tests/cuda/inject_ocl" \
  "$B/libhubprof_collector.so"

# ---- the record conversion ----
for t in "$B/tests/cuda/test_cuda_conv" "$B/san/tests/cuda/test_cuda_conv"; do
  [ -x "$t" ] || continue
  if "$t" >"$T/out" 2>&1 && grep -q " 0 failed" "$T/out"; then ok; else bad "$t: $(tail -5 "$T/out")"; fi
done

# cuda_lines FILE: the lines of hubprof's that speak of CUDA
cuda_lines() { grep -c '^hubprof: .*CUDA' "$1"; }

# ---- the driver's injection by hand, then OpenCL (needs an OpenCL device) ----
if clinfo -l 2>/dev/null | grep -q Device; then
  # no libcupti: one line saying where it was looked for; OpenCL recorded; the program's output unchanged
  "$B/tests/cuda/inject_ocl" >"$T/plain.out" 2>"$T/plain.err"
  plain_rc=$?
  HUBPROF_CUPTI=/nonexistent expect 0 "$HP" trace -o "$T/a.db" -- "$B/tests/cuda/inject_ocl"
  grep -q "^inject_ocl: injection 1, 4 dispatches, ok$" "$T/out" && ok || bad "inject_ocl output: $(cat "$T/out")"
  [ "$plain_rc" -eq 0 ] && sed 's/injection 0/injection 1/' "$T/plain.out" | cmp -s - "$T/out" && ok ||
    bad "output differs from plain: $(cat "$T/plain.out") / $(cat "$T/out")"
  [ "$(cuda_lines "$T/err")" -eq 1 ] &&
    grep -q "^hubprof: CUDA work is not recorded: libcupti not found: HUBPROF_CUPTI=/nonexistent: no such file$" "$T/err" &&
    ok || bad "no-libcupti line: $(cat "$T/err")"
  "$HP" info "$T/a.db" >"$T/info" 2>&1
  grep -qE '^  dispatch +4$' "$T/info" && ok || bad "OpenCL dispatches not recorded beside CUDA: $(cat "$T/info")"
  # libcupti found (the toolkit's), but no driver in the process: one line, OpenCL recorded
  expect 0 "$HP" trace -o "$T/b.db" -- "$B/tests/cuda/inject_ocl"
  [ "$(cuda_lines "$T/err")" -eq 1 ] && grep -qE "^hubprof: CUDA work is not recorded: (no CUDA driver in this process|libcupti not found)" "$T/err" &&
    ok || bad "no-driver line: $(cat "$T/err")"
  "$HP" info "$T/b.db" >"$T/info" 2>&1
  grep -qE '^  dispatch +4$' "$T/info" && ok || bad "OpenCL dispatches (b): $(cat "$T/info")"
  # without hubprof, the injection variable unset: nothing is loaded, nothing said
  expect 0 "$B/tests/cuda/inject_ocl"
  grep -q "injection 0" "$T/out" && [ ! -s "$T/err" ] && ok || bad "plain run: $(cat "$T/out" "$T/err")"
else
  echo "test_cuda: injection part skipped: no OpenCL device (install pocl-opencl-icd)"
fi

# ---- a CUDA program built here with nvcc ----
APP="$B/tests/cuda/cuda_app"
if [ ! -x "$APP" ]; then
  if nvcc --version >/dev/null 2>&1; then
    bad "$APP is missing though nvcc is here (make cuda-test builds it)"
  else
    echo "test_cuda: CUDA program part skipped: no working nvcc on PATH (the CUDA toolkit is not installed)"
  fi
else
  for args in "" "2"; do
    "$APP" $args >"$T/plain.out" 2>"$T/plain.err"
    plain_rc=$?
    for mode in "trace" "trace --api"; do
      "$HP" $mode -o "$T/c.db" -- "$APP" $args >"$T/out" 2>"$T/err"
      rc=$?
      [ "$rc" -eq "$plain_rc" ] && ok || bad "$mode: exit $rc, plain $plain_rc"
      cmp -s "$T/plain.out" "$T/out" && ok || bad "$mode: stdout differs: $(cat "$T/plain.out") / $(cat "$T/out")"
      grep -v '^hubprof: ' "$T/err" | cmp -s "$T/plain.err" - && ok || bad "$mode: the program's stderr differs"
      [ "$(cuda_lines "$T/err")" -eq 1 ] && ok || bad "$mode: not one line about CUDA: $(cat "$T/err")"
      rm -rf "$T/c.db"
    done
  done
  if ! ls /dev/nvidia0 >/dev/null 2>&1; then
    grep -q "is a CUDA program and there is no CUDA driver here\|CUDA work is not recorded" "$T/err" && ok ||
      bad "no GPU: the line does not say why: $(cat "$T/err")"
  fi
fi

# ---- hubprof sample's counters: NVIDIA metrics (a '__' in the name) go to the CUDA provider's PM sampling
# (HUBPROF_SAMPLE_CUDA_COUNTERS, prov_cuda_why.c), perf counters to the CPU threads' sampling as before; more
# than 32 metrics are refused before the application runs
expect 0 "$HP" sample -q -o "$T/s.db" -c sm__cycles_active.sum,task-clock,dram__bytes.sum -- \
  sh -c 'echo "$HUBPROF_SAMPLE_CUDA_COUNTERS|$HUBPROF_SAMPLE_COUNTERS"'
grep -qx 'sm__cycles_active.sum,dram__bytes.sum|task-clock' "$T/out" && ok || bad "sample -c split: $(cat "$T/out")"
expect 0 "$HP" sample -q -o "$T/s.db" -c sm__cycles_active.sum -- sh -c 'echo "$HUBPROF_SAMPLE_COUNTERS-"'
grep -qx -- '-' "$T/out" && ok || bad "sample -c NVIDIA only: perf counters set: $(cat "$T/out")"
expect 2 "$HP" sample -q -o "$T/s.db" -c "$(seq -s, -f 'sm__m%g.sum' 33)" -- true
grep -q "at most 32 CUDA metrics" "$T/err" && [ "$(wc -l <"$T/err")" -eq 1 ] && ok || bad "33 metrics: $(cat "$T/err")"

# ---- the sampling path without a GPU: stand-ins for libcupti and libcuda.so.1 (fake_cupti.c) play a context,
# a module (a cubin nvcc builds here with -lineinfo) and two launches to why_driver under `hubprof sample`.
# The provider must enable PC sampling on the context, keep the cubin, place each PC at its kernel's .text
# offset + pcOffset, and give each sample its launch's dispatch: the second launch's samples are read a
# second before its kernel record comes (at exit) and wait for it. analyze then puts all 110 samples of the
# load on its line, long_scoreboard first. Then PM sampling: a counter timeline inside the first kernel.
ND=${HUBPROF_NVDISASM:-$(command -v nvdisasm || ls /usr/local/cuda/bin/nvdisasm \
  "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null)"/nvidia/cu*/bin/nvdisasm \
  2>/dev/null | head -1)}
NVCC=${NVCC:-$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)}
if [ -x "$B/tests/cuda/why_driver" ] && [ -n "$NVCC" ] && [ -x "$ND" ]; then
  printf '%s\n' '__global__ void chase(const unsigned *next, unsigned *out, int n)' '{' \
    '  unsigned p = threadIdx.x;' '  for (int i = 0; i < n; i++)' '    p = next[p];' '  out[threadIdx.x] = p;' \
    '}' >"$T/chase.cu"
  "$NVCC" -cubin -arch=sm_90 -O3 -lineinfo -o "$T/c.cubin" "$T/chase.cu" 2>"$T/nvcc.err" || bad "nvcc: $(cat "$T/nvcc.err")"
  ldg=$("$ND" -c "$T/c.cubin" | awk '/LDG/ { if (match($0, /\/\*[0-9a-f]+\*\//)) { print substr($0, RSTART + 2, RLENGTH - 4); exit } }')
  F=$PWD/$B/tests/cuda/fake
  HUBPROF_CUPTI=$F/libcupti.so expect 0 "$HP" sample -o "$T/w.db" -- "$B/tests/cuda/why_driver" \
    "$F/libcuda.so.1" "$F/libcupti.so" "$T/c.cubin" "$ldg"
  grep -qx "why_driver: injection 1, cupti loaded, run 0" "$T/out" && ok || bad "why_driver: $(cat "$T/out" "$T/err")"
  "$HP" info "$T/w.db" >"$T/info" 2>&1
  grep -qE '^  pc_sample +4$' "$T/info" && grep -qE '^  code_object +1$' "$T/info" && ok ||
    bad "rows: $(cat "$T/info")"
  HUBPROF_NVDISASM=$ND expect 0 "$HP" analyze --by line --kernel '*chase*' --format csv "$T/w.db"
  sed -n 2p "$T/out" | grep -qx '110,91.6666667,chase.cu:5,,long_scoreboard,"long_scoreboard 95%, selected 5%"' &&
    sed -n 3p "$T/out" | grep -qx '10,8.33333333,chase.cu:1,,barrier,barrier 100%' && ok ||
    bad "by line: $(cat "$T/out" "$T/err")"
  HUBPROF_NVDISASM=$ND expect 0 "$HP" analyze --by instruction --kernel '*chase*' --format csv "$T/w.db"
  sed -n 2p "$T/out" | grep -q '^110,.*,"LDG[^"]*",chase.cu:5,_Z5chasePKjPji,long_scoreboard,' && ok ||
    bad "by instruction: $(cat "$T/out")"
  # PM sampling instead (sample -c with NVIDIA metrics): the first launch's intervals, on the GPU's clock
  # (CLOCK_REALTIME), moved onto the dispatches' and written as its cumulative timeline; the two before it
  # counted outside (one of them ends inside the kernel: it belongs to it)
  HUBPROF_CUPTI=$F/libcupti.so expect 0 "$HP" sample -o "$T/p.db" -c sm__cycles_active.sum,dram__bytes.sum -- \
    "$B/tests/cuda/why_driver" "$F/libcuda.so.1" "$F/libcupti.so" "$T/c.cubin" "$ldg"
  expect 0 "$HP" analyze --timeline --dispatch 1 --format csv "$T/p.db"
  python3 - "$T/out" <<'EOF' && ok || bad "PM timeline: $(cat "$T/out" "$T/err")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for name, scale in (("sm__cycles_active.sum", 1), ("dram__bytes.sum", 2)):
    t = [int(r["time_ns"]) for r in rows if r["counter"] == name]
    v = [float(r["value"]) for r in rows if r["counter"] == name]
    assert v == [scale * k * (k + 1) / 2 for k in range(11)], (name, v)
    assert all(b - a == 99000 for a, b in zip(t, t[1:])), (name, t)
    assert 0 < t[0] < 20000 and 980000 < t[-1] < 1000000, (name, t)
EOF
  "$HP" info "$T/p.db" >"$T/info" 2>&1
  grep -qE '^  pc_sample +0$' "$T/info" && ok || bad "PM run has PC samples: $(cat "$T/info")"
else
  echo "test_cuda: sampling part skipped: needs $B/tests/cuda/why_driver (make cuda-test), nvcc and nvdisasm"
fi

# ---- hubprof roofline --platform cuda against the stand-in libcuda.so.1 (fake_cupti.c: its kernels take the
# time their work takes at 30/60/120/30 T op/s, 3 TB/s from device memory, 10 from L2, 20 from L1 and 30 from
# shared memory): each ceiling is the stand-in's rate, so the launches carry the work the runner counts (l1 the
# better of shared memory and L1, l2 a quarter of the 50 MiB L2); the device named as the provider names its
# agent (CUPTI's chip); kept with -o and read back by analyze --roofline. A sanitizer build cannot load libcupti (cupti_host.c: its
# RTLD_DEEPBIND): there the device takes its fallback name from the compute capability, sm_90
if ! "$B/hubprof" version | grep -q '^roofline platforms: opencl cuda$'; then
  if [ -n "$NVCC" ]; then
    bad "hubprof has no CUDA micro-benchmarks though nvcc is here ($NVCC): $("$B/hubprof" version | tail -1)"
  else
    echo "test_cuda: roofline part skipped: no nvcc, so hubprof was built without its CUDA micro-benchmarks"
  fi
elif [ -x "$B/tests/cuda/fake/libcuda.so.1" ]; then
  F=$PWD/$B/tests/cuda/fake
  for rl in "$B/hubprof" "$HP"; do
    dev=GH100
    case "$rl" in *san/*) dev=sm_90 ;; esac
    LD_LIBRARY_PATH=$F HUBPROF_CUPTI=$F/libcupti.so expect 0 "$rl" roofline -q --platform cuda --format csv -o "$T/r.db"
    python3 - "$T/out" "$dev" <<'EOF' && ok || bad "roofline on the stand-in ($rl): $(cat "$T/out" "$T/err")"
import csv, sys
rows = {r["ceiling"]: r for r in csv.DictReader(open(sys.argv[1]))}
want = {"fp64": 30000, "fp32": 60000, "fp16": 120000, "int32": 30000, "dram": 3000, "l1": 30000, "l2": 10000}
assert list(rows) == list(want), rows
for name, v in want.items():
    r = rows[name]
    assert r["device"] == sys.argv[2] and abs(float(r["value"]) - v) < 0.01 * v, r
assert rows["l1"]["note"].startswith("hp_shared: 16 KiB") and rows["l1"]["unit"] == "GB/s", rows["l1"]
assert rows["l2"]["note"].startswith("hp_l2: 8 MiB of an L2 of 50 MiB"), rows["l2"]
EOF
    expect 0 "$rl" analyze --roofline --format csv "$T/r.db"
    grep -q "^$dev,fp32,60000" "$T/out" && grep -q "^$dev,dram,3000" "$T/out" &&
      grep -q "^$dev,l1,30000.00,GB/s" "$T/out" && grep -q "^$dev,l2,10000.00,GB/s" "$T/out" && ok ||
      bad "analyze --roofline ($rl): $(cat "$T/out")"
    rm -f "$T/r.db"
    [ "$rl" = "$HP" ] && break
  done
fi

# ---- CUDA counters without a GPU (the Range Profiler's host half; tests/device/cuda.sh runs the rest) ----
# CUPTI's host API cannot be loaded by a sanitizer build (cupti_host.c): this part runs the release CLI
HPC=$HP
case "$HP" in *san/*) HPC=$B/hubprof ;; esac
# the values table and the parameter structs (no libcupti needed)
R="$B/tests/cuda/test_cuda_range"
CHECK="python3 tests/cupti/cupti_check.py"
FIVE=sm__cycles_elapsed.avg,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,l1tex__t_sectors.sum
TEN=$FIVE,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,smsp__warps_launched.sum
for t in "$R" "$B/san/tests/cuda/test_cuda_range"; do # the sanitizer build: values and store (no libcupti)
  [ -x "$t" ] || continue
  "$t" --store "$T/san_prof.db" >"$T/range.out" 2>&1 && grep -q " 0 failed" "$T/range.out" && ok || bad "$t: $(tail -5 "$T/range.out")"
  rm -rf "$T/san_prof.db"
done
# the record-to-row path: values put by correlation id, taken by the converted kernel records, written as the
# collector writes them; the NVIDIA metric set evaluated on them by analyze (2 launches: 2^29 and 2^30 DRAM
# bytes in 1 ms each, 2^20 instructions in 2^21 cycles, 1024 blocks on 132 SMs)
"$R" --store "$T/cuda_prof.db" >"$T/range.out" 2>&1 && grep -q " 0 failed" "$T/range.out" && ok ||
  bad "test_cuda_range --store: $(tail -5 "$T/range.out")"
expect 0 "$HPC" analyze --metrics dram_gbs,sm_ipc,launch_blocks_per_sm --format csv "$T/cuda_prof.db"
python3 -c '
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))
assert len(r) == 1 and r[0]["kernel"] == "copy4" and r[0]["calls"] == "2", r
assert abs(float(r[0]["dram_gbs"]) - (2**29 + 2**30) / 2 / 1e6) < 1e-3, r[0]["dram_gbs"]
assert float(r[0]["sm_ipc"]) == 0.5 and abs(float(r[0]["launch_blocks_per_sm"]) - 1024 / 132) < 1e-6, r
assert r[0]["smsp__inst_executed.sum"] == "1048576", r
' "$T/out" && ok || bad "analyze of a CUDA counter store: $(cat "$T/out" "$T/err")"
# with libcupti: the configuration images the collector builds for GH100 and GB100, their passes as CUPTI counts
LIB=$("$HPC" list devices --format csv 2>/dev/null | python3 -c 'import csv,sys; r=[x["path"] for x in csv.DictReader(sys.stdin) if x["provider"] == "cupti"]; print(r[0] if r else "")')
if [ -z "$LIB" ]; then
  echo "test_cuda: CUDA counters' host part skipped: no libcupti ($("$HPC" list devices 2>&1 >/dev/null | head -1))"
else
  export HUBPROF_CUPTI=$LIB
  "$R" GH100 "$FIVE" GH100 "$TEN" GB100 "$FIVE" GB100 "$TEN" >"$T/range.out" 2>&1
  grep -q " 0 failed" "$T/range.out" && ok || bad "test_cuda_range images: $(tail -5 "$T/range.out")"
  k=0
  for pair in "GH100 $FIVE" "GH100 $TEN" "GB100 $FIVE" "GB100 $TEN"; do
    set -- $pair
    k=$((k + 1))
    want=$($CHECK "$LIB" "$1" passes "$2")
    got=$(grep '^passes ' "$T/range.out" | sed -n "${k}p" | awk '{print $3}')
    [ -n "$want" ] && [ "$got" = "$want" ] && ok || bad "config image $1 list $k: $got passes, CUPTI says $want"
    echo "test_cuda: config image for $1, $(echo "$2" | tr ',' '\n' | wc -l) metrics: $got passes (CUPTI directly: $want)"
  done
  # profile with NVIDIA metric names and no driver: one line, before anything runs, nothing written
  for dev in "" "--device cuda"; do
    expect 1 "$HPC" profile $dev --counters "$FIVE" -o "$T/prof.db" -- touch "$T/ran"
    one_line_error "NVIDIA metrics need a CUDA GPU"
    [ ! -e "$T/ran" ] && [ ! -e "$T/prof.db" ] && ok || bad "profile ${dev:-(no --device)} without a GPU ran the program"
  done
  # a named chip: the plan is CUPTI's (kernel replay: one configuration, CUPTI's pass count), then the run
  # (`true` uses no GPU API: nothing is recorded, which hubprof says; its exit status)
  expect 0 "$HPC" profile --device GH100 --counters "$TEN" -o "$T/prof.db" -- true
  want=$($CHECK "$LIB" GH100 passes "$TEN")
  grep -q "^hubprof: plan: 10 counters in 1 pass on GH100, kernel replay (one configuration)$" "$T/err" &&
    grep -q "^hubprof:   CUPTI replays each kernel $want times for this configuration$" "$T/err" && ok ||
    bad "kernel replay plan: $(cat "$T/err")"
  # application replay: configurations of one CUPTI pass each, every metric in exactly one
  expect 0 "$HPC" profile --device GH100 --replay application --counters "$TEN" -o "$T/prof.db" -- true
  n=0 all=""
  while read -r conf; do
    n=$((n + 1))
    all="$all,$conf"
    p=$($CHECK "$LIB" GH100 passes "$conf")
    [ "$p" = 1 ] || [ "${conf//,/}" = "$conf" ] && ok || bad "application replay configuration '$conf' takes $p passes"
  done < <(sed -nE 's/^hubprof:   pass [0-9]+: //p' "$T/err" | sed 's/, /,/g')
  [ "$(echo "${all#,}" | tr ',' '\n' | sort)" = "$(echo "$TEN" | tr ',' '\n' | sort)" ] && ok ||
    bad "application replay plan does not hold each metric once: $all"
  grep -q "^hubprof: plan: 10 counters in $n passes on GH100, application replay" "$T/err" && [ "$n" -gt 1 ] && ok ||
    bad "application replay plan ($n configurations): $(head -1 "$T/err")"
  echo "test_cuda: GH100, 10 metrics: kernel replay 1 configuration of $want CUPTI passes; application replay $n runs"
  # refused before anything runs: multiplexing, an unknown metric (CUPTI's closest name), per-pass limits
  expect 2 "$HPC" profile --device GH100 --replay multiplex --counters "$FIVE" -- touch "$T/ran"
  one_line_error "not iteration multiplexing"
  expect 1 "$HPC" profile --device GH100 --counters sm__cycles_elapsed.avg,dram__bytes_reed.sum -- touch "$T/ran"
  one_line_error "unknown metric 'dram__bytes_reed.sum' on GH100 (did you mean 'dram__bytes_read.sum'?)"
  [ ! -e "$T/ran" ] && ok || bad "a refused profile ran the program"
  # per-device lists: the chip a selector names plans its own list
  expect 0 "$HPC" profile --device GH100 --counters "device=GB100:$FIVE" --counters "device=1:dram__bytes_read.sum" -o "$T/prof.db" -- true
  grep -A1 "^hubprof: plan for device=GB100:" "$T/err" | grep -q "^hubprof: plan: 5 counters in 1 pass on GB100, kernel" &&
    grep -A1 "^hubprof: plan for device=1:" "$T/err" | grep -q "^hubprof: plan: 1 counter in 1 pass on GH100, kernel" &&
    ! grep -q "every other device" "$T/err" && ok || bad "per-device plans: $(cat "$T/err")"
  # ... and under application replay (issue 32): each list split into its own one-pass configurations
  expect 0 "$HPC" profile --device GH100 --replay application --counters "device=GB100:$TEN" \
    --counters "device=1:dram__bytes_read.sum" -o "$T/prof.db" -- true
  grep -A1 "^hubprof: plan for device=GB100:" "$T/err" | grep -qE "^hubprof: plan: 10 counters in [0-9]+ passes on GB100, application" &&
    grep -A1 "^hubprof: plan for device=1:" "$T/err" | grep -q "^hubprof: plan: 1 counter in 1 pass on GH100, application" &&
    ok || bad "per-device plans, application replay: $(cat "$T/err")"
  # the NVIDIA metric set: planned for a chip without a GPU
  expect 0 "$HPC" plan --device GH100 --metrics all
  head -1 "$T/out" | grep -qE "^GH100: [0-9]+ counters in [0-9]+ passes" && ok || bad "plan --metrics all: $(head -3 "$T/out" "$T/err")"
  expect 0 "$HPC" plan --device GB100 --metrics sol_sm_pct,occupancy_pct,dram_gbs --format line
  [ "$(cat "$T/out")" = "sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum" ] &&
    ok || bad "plan --metrics on GB100: $(cat "$T/out" "$T/err")"
  # the collector asked for CUDA counters in a process with OpenCL and no CUDA driver: the one CUDA line, the
  # program unchanged (OpenCL kernels run unprofiled under a CUDA counter profile)
  if clinfo -l 2>/dev/null | grep -q Device; then
    "$B/tests/cuda/inject_ocl" >"$T/plain.out" 2>/dev/null
    "$HPC" profile --device GH100 --counters "$FIVE" -o "$T/q.db" -- "$B/tests/cuda/inject_ocl" >"$T/out" 2>"$T/err"
    sed 's/injection 0/injection 1/' "$T/plain.out" | cmp -s - "$T/out" && ok || bad "inject_ocl under a CUDA profile: $(cat "$T/out")"
    [ "$(grep -c '^hubprof: CUDA work is not recorded' "$T/err")" -eq 1 ] && ok ||
      bad "inject_ocl under a CUDA profile: not one line about CUDA: $(cat "$T/err")"
  fi
  unset HUBPROF_CUPTI
fi

echo "test_cuda: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
