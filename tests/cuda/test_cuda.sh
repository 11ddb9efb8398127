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
need_built test_cuda "$HP" "$B/tests/cuda/test_cuda_conv" "$B/tests/cuda/inject_ocl" "$B/libhubprof_collector.so"

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
# time their work takes at 30/60/120/30 T op/s and 3 TB/s): each ceiling is the stand-in's rate, so the
# launches carry the work the runner counts; the device named as the provider names its agent (CUPTI's chip);
# kept with -o and read back by analyze --roofline
if [ -x "$B/tests/cuda/fake/libcuda.so.1" ]; then
  F=$PWD/$B/tests/cuda/fake
  LD_LIBRARY_PATH=$F HUBPROF_CUPTI=$F/libcupti.so expect 0 "$HP" roofline -q --platform cuda --format csv -o "$T/r.db"
  python3 - "$T/out" <<'EOF' && ok || bad "roofline on the stand-in: $(cat "$T/out" "$T/err")"
import csv, sys
rows = {r["ceiling"]: r for r in csv.DictReader(open(sys.argv[1]))}
want = {"fp64": 30000, "fp32": 60000, "fp16": 120000, "int32": 30000, "dram": 3000}
for name, v in want.items():
    r = rows[name]
    assert r["device"] == "GH100" and abs(float(r["value"]) - v) < 0.01 * v, r
EOF
  expect 0 "$HP" analyze --roofline --format csv "$T/r.db"
  grep -q '^GH100,fp32,60000' "$T/out" && grep -q '^GH100,dram,3000' "$T/out" && ok ||
    bad "analyze --roofline: $(cat "$T/out")"
fi

echo "test_cuda: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
