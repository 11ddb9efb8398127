#!/usr/bin/env bash
# The GPU section "why a kernel is slow" (issue 26), for an H100/H200 (at most 3 minutes):
#   1. a chain of dependent global loads on one source line (tests/cuda/why_chase.cu) under `hubprof sample`
#      (CUPTI's PC sampling) puts most samples on that line with long_scoreboard, an LDG among the top;
#   2. its PM-sampling timeline (`sample -c sm__cycles_active.sum`) spans it with increasing times;
#   3. `hubprof roofline --platform cuda` gives fp32 and dram within 15% of the datasheet (H100 SXM: 67
#      TFLOP/s fp32 without tensor cores, 3.35 TB/s; H200: 4.8 TB/s), its cache ceilings l1 (shared memory
#      or L1) and l2 printed and in order, l1 > l2 > dram (no datasheet figure), and a profile of
#      tests/cuda/why_axpy.cu with NVIDIA's FLOP and DRAM counters places its kernel under them.
# Prepare as for tests/device/cuda.sh (make -j2 all cuda-test device-bundle: the programs prebuilt in
# build/tests/cuda, nvdisasm in build/device/bin); carry build/hubprof, build/libhubprof_collector.so,
# build/tests/cuda and build/device; missing programs are built with the machine's nvcc.
# usage: bash tests/device/cuda_why.sh [HUBPROF]   (from the repository root)
# SPDX-License-Identifier: MIT
set -u
ROOT=$(pwd)
B=${B:-build}
HP=$(realpath "${1:-$B/hubprof}")
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
pass=0 fail=0
ok() {
  pass=$((pass + 1))
  echo "cuda_why: PASS: $*"
}
bad() {
  fail=$((fail + 1))
  echo "cuda_why: FAIL: $*" >&2
}
finish() {
  echo "cuda_why: $pass passed, $fail failed"
  exit $((fail != 0))
}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "cuda_why: skipped: no NVIDIA GPU"
  exit 0
fi
# the carried shared libraries and disassembler where the machine lacks its own (make device-bundle)
if ldd "$HP" 2>/dev/null | grep -q "not found" && [ -d "$B/device/lib" ]; then
  export LD_LIBRARY_PATH=$ROOT/$B/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
if ! command -v nvdisasm >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvdisasm ] && [ -x "$B/device/bin/nvdisasm" ]; then
  export HUBPROF_NVDISASM=$ROOT/$B/device/bin/nvdisasm
fi
export HUBPROF_COLLECTOR=$ROOT/$B/libhubprof_collector.so
T=$(mktemp -d /tmp/hubprof-why-XXXXXX)
trap 'rm -rf "$T"' EXIT
# program NAME: the prebuilt build/tests/cuda/NAME, else built here from tests/cuda/NAME.cu (-lineinfo)
program() {
  if [ -x "$ROOT/$B/tests/cuda/$1" ]; then
    echo "$ROOT/$B/tests/cuda/$1"
  elif [ -x "$NVCC" ] && "$NVCC" -O3 -lineinfo -arch=native -o "$T/$1" "$ROOT/tests/cuda/$1.cu" 2>"$T/$1.err"; then
    echo "$T/$1"
  fi
}
CHASE=$(program why_chase)
AXPY=$(program why_axpy)
for p in why_chase why_axpy; do
  [ -x "$ROOT/$B/tests/cuda/$p" ] || [ -x "$T/$p" ] ||
    bad "$p: not built (make cuda-test) and nvcc could not build it: $(tail -2 "$T/$p.err" 2>/dev/null)"
done
CHASE_LINE=$(grep -n 'p = next\[p\];' "$ROOT/tests/cuda/why_chase.cu" | cut -d: -f1)
cd "$T" || exit 1

# 1. PC sampling with stall reasons: most samples on the chase line, long_scoreboard first
if [ -n "$CHASE" ]; then
  timeout 120 "$HP" sample -q -f -o why.db -- "$CHASE" 20000 >run.out 2>run.err || bad "sample: $(tail -3 run.err)"
  if [ -s why.db ]; then
    "$HP" analyze --by line --kernel '*chase*' --format csv why.db >lines.csv 2>lines.err || bad "analyze --by line"
    python3 - "$CHASE_LINE" lines.csv <<'PY' && ok "samples on the chase line, long_scoreboard" || bad "by line: $(head -4 lines.csv) $(cat lines.err)"
import csv, sys
want = f"why_chase.cu:{sys.argv[1]}"
rows = list(csv.DictReader(open(sys.argv[2])))
total = sum(int(r["samples"]) for r in rows)
top = rows[0]
assert total > 100, total
assert top["line"].endswith(want), top
assert int(top["samples"]) > 0.5 * total, (top, total)
assert top["stall"] == "long_scoreboard", top
print(f"cuda_why: {top['line']}: {top['samples']} of {total} samples, {top['stall_reasons']}")
PY
    "$HP" analyze --by instruction -n 3 --kernel '*chase*' --format csv why.db >insn.csv 2>insn.err
    python3 - insn.csv <<'PY' && ok "an LDG among the top instructions" || bad "by instruction: $(head -4 insn.csv) $(cat insn.err)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert any(r["instruction"].startswith("LDG") and r["stall"] == "long_scoreboard" for r in rows), rows
PY
  fi

  # 2. PM sampling: a counter timeline inside the kernel, spanning it, times increasing
  timeout 120 "$HP" sample -q -f -c sm__cycles_active.sum -o pm.db -- "$CHASE" 20000 >pm.out 2>pm.err ||
    bad "sample -c: $(tail -3 pm.err)"
  if [ -s pm.db ]; then
    "$HP" analyze --timeline --dispatch 1 --format csv pm.db >tl.csv 2>tl.err || bad "timeline: $(cat tl.err)"
    "$HP" analyze --by dispatch --format csv pm.db >d.csv 2>/dev/null
    python3 - tl.csv d.csv <<'PY' && ok "PM timeline spans the kernel" || bad "timeline: $(head -5 tl.csv) $(cat pm.err)"
import csv, sys
t = [int(r["time_ns"]) for r in csv.DictReader(open(sys.argv[1]))]
d = next(csv.DictReader(open(sys.argv[2])))
dur = int(d["duration_ns"])
assert len(t) >= 10, len(t)
assert all(b > a for a, b in zip(t, t[1:])), "times do not increase"
assert t[0] < 0.2 * dur and t[-1] > 0.8 * dur, (t[0], t[-1], dur)
print(f"cuda_why: {len(t)} PM points over {dur} ns")
PY
  fi
fi

# 3. roofline: the ceilings against the datasheet, then a profile's kernel placed under them
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
timeout 120 "$HP" roofline --platform cuda --format csv -o rl.db >rl.csv 2>rl.err || bad "roofline: $(tail -3 rl.err)"
python3 - "$GPU" rl.csv <<'PY' && ok "ceilings within 15% of the datasheet" || bad "roofline ($GPU): $(cat rl.csv)"
import csv, sys
gpu = sys.argv[1]
pcie = "PCIe" in gpu or "NVL" in gpu
# the datasheet, without tensor cores: fp32 GFLOP/s, dram GB/s
sheet = {"H200": (60000 if pcie else 67000, 4800), "H100": (51200 if pcie else 67000, 2000 if pcie else 3350)}
key = next((k for k in sheet if k in gpu), None)
assert key, f"no datasheet figures for {gpu}"
rows = {r["ceiling"]: r for r in csv.DictReader(open(sys.argv[2]))}
for name, want in zip(("fp32", "dram"), sheet[key]):
    v = float(rows[name]["value"])
    print(f"cuda_why: {gpu} {name} {v:.0f} (datasheet {want}, {v / want:.2f}x): {rows[name]['note']}")
    assert abs(v - want) <= 0.15 * want, (name, v, want)
for name in ("fp64", "fp16", "int32"):
    print(f"cuda_why: {gpu} {name} {rows[name]['value']} {rows[name]['unit']}")
    assert rows[name]["value"], rows[name]
# the caches: no datasheet figure; both measured, each above the level outside it
for name in ("l1", "l2"):
    print(f"cuda_why: {gpu} {name} {rows[name]['value']} {rows[name]['unit']}: {rows[name]['note']}")
l1, l2, dram = (float(rows[n]["value"]) for n in ("l1", "l2", "dram"))
assert l1 > l2 > dram, (l1, l2, dram)
PY
if [ -n "$AXPY" ]; then
  C=smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum
  C=$C,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,dram__bytes.sum
  timeout 120 "$HP" profile -q -f -c "$C" -o prof.db -- "$AXPY" >prof.out 2>prof.err || bad "profile: $(tail -3 prof.err)"
  timeout 60 "$HP" roofline -q --quick --platform cuda --store prof.db >/dev/null 2>rs.err ||
    bad "roofline --store: $(cat rs.err)"
  "$HP" analyze --roofline --format csv prof.db >place.csv 2>place.err || bad "analyze --roofline: $(cat place.err)"
  python3 - place.csv <<'PY' && ok "axpy placed" || bad "placed: $(cat place.csv)"
import csv, io, sys
parts = open(sys.argv[1]).read().split("\n\n")
kern = list(csv.DictReader(io.StringIO(parts[1])))
ax = [r for r in kern if "axpy" in r["kernel"] and r["precision"] == "fp32"]
assert ax, kern
r = ax[0]
# y = a*x + y: one FMA (2 FLOP) per 12 bytes moved
assert float(r["flop"]) > 0 and float(r["bytes"]) > 0 and r["bound"] == "memory", r
assert 0.05 < float(r["intensity"]) < 0.5, r
print(f"cuda_why: axpy placed: {float(r['intensity']):.3f} FLOP/byte, {float(r['gflops']):.1f} GFLOP/s")
PY
fi
finish
