#!/usr/bin/env bash
# The GPU half of issue 25, prepared as one short script for a machine with one NVIDIA H100/H200 (driver
# 580, nvcc 13, PyTorch, Nsight Compute): the checks of its "On an H100/H200" list, items 1-5, in at most
# 8 minutes. It builds nothing that needs the network: every binary comes from the machine that prepared it.
# SPDX-License-Identifier: MIT
#
# Prepare (on the build machine, which has the CUDA 13 toolkit but no GPU):
#   make -j2 all cuda-test device-bundle   # hubprof, the collector, build/tests/cuda/{cuda_app,launch_loop,
#                                          # count_store}, and build/device/lib: the shared libraries they need
#                                          # but the C/C++ runtimes (sqlite3, zstd, capstone, ..., libOpenCL.so.1)
# Carry build/hubprof, build/libhubprof_collector.so, build/tests/cuda, build/examples/ocl and build/device
# (about 21 MB) with the working tree (the device tool's `carry`), then run there:
#   bash tests/device/cuda.sh OUT        # OUT: a folder for the figures (created); a summary on stdout
#
# What it checks (PASS / FAIL / SKIP lines, then a summary; the exit status is the number of FAILs, capped):
#   1. cuda_app (streams, a CUDA graph, NVTX ranges, copies, fills): exact kernel counts and copy bytes in
#      hubprof's store against the program's own count, and its results identical plain and traced.
#      The same under CUDA counters (CUPTI's Range Profiler): kernel replay and application replay, results
#      identical, every kernel with its values; per-device lists picked by the GPU's chip (GH100).
#   2. counters beside ncu: 10 metrics on the 3 kernels of stream_copy (a streaming copy past L2, a scale, an
#      FMA loop), hubprof's median per kernel against ncu's; the deterministic ones (instructions executed,
#      DRAM bytes of the copy) within 3 %; the wall times of ncu and hubprof on the same program and list.
#   3. trace cost per launch on launch_loop: plain and traced runs interleaved, median and min-max of the
#      added ns per launch (goal: at most 1000 ns).
#   4. a PyTorch training step: kernel count under `hubprof trace --start-paused` (hubprof_start/stop around
#      one step) against torch.profiler's for a step,
#      `analyze` naming the cuBLAS kernels, and the added step time of each.
#   5. the OpenCL path on the GPU (NVIDIA's OpenCL library): the OpenCL examples under trace and kernel
#      replay, exact counts and identical output; an ICD file is written (in OUT) when the image has none.
set -u
OUT=${1:?usage: tests/device/cuda.sh OUT_FOLDER}
cd "$(dirname "$0")/../.."
B=${B:-build}
HP=$B/hubprof
mkdir -p "$OUT" || {
  echo "cuda.sh: cannot create $OUT" >&2
  exit 2
}
OUT=$(cd "$OUT" && pwd)
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
fails=0
say() { echo "$*" | tee -a "$SUMMARY"; }
pass() { say "PASS $*"; }
fail() {
  say "FAIL $*"
  fails=$((fails + 1))
}
skip() { say "SKIP $*"; }
# die WHY: a part of the machine or the carried build is missing: said loudly, nothing measured
die() {
  say "FAIL cannot run: $*"
  echo "cuda.sh: $*" >&2
  exit 2
}
T0=$(date +%s)

# ---- what must be there (non-GPU parts fail loudly) ----
for f in "$HP" "$B/libhubprof_collector.so" "$B/tests/cuda/cuda_app" "$B/tests/cuda/launch_loop" \
  "$B/tests/cuda/count_store" "$B/tests/cuda/counter_table" "$B/tests/cuda/stream_copy"; do
  [ -x "$f" ] || [ -f "$f" ] || die "$f is missing: build it where the toolkit is (make all cuda-test) and carry $B"
done
command -v nvidia-smi >/dev/null 2>&1 || die "no nvidia-smi: this is not a GPU machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id --format=csv,noheader >"$OUT/gpu.txt" 2>&1 ||
  die "nvidia-smi failed: $(head -c 300 "$OUT/gpu.txt")"
say "GPU: $(head -1 "$OUT/gpu.txt")"
say "load: $(cut -d' ' -f1-3 /proc/loadavg)"
# the shared libraries: the machine's own, else the carried copies (make device-bundle)
if ldd "$HP" "$B/examples/ocl/vector_add" 2>/dev/null | grep -q "not found"; then
  [ -d "$B/device/lib" ] || die "$(ldd "$HP" | grep "not found" | head -1): carry $B/device (make device-bundle)"
  export LD_LIBRARY_PATH=$PWD/$B/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  say "libraries from $B/device/lib: $(ldd "$HP" "$B/examples/ocl/vector_add" 2>/dev/null | grep -c "$B/device/lib")"
fi
"$HP" --version >/dev/null 2>&1 || die "$HP does not run here: $("$HP" --version 2>&1 | head -1)"
export HUBPROF_COLLECTOR=$PWD/$B/libhubprof_collector.so

# key FILE NAME: the value of "NAME value" in FILE
key() { awk -v k="$2" '$1 == k {print $2; exit}' "$1"; }
# ms since start, for the 8-minute budget
elapsed() { echo $(($(date +%s) - T0)); }

# ---- 1. exact counts and identical results ----
APP=$B/tests/cuda/cuda_app
"$APP" 2 >"$OUT/app_plain.out" 2>"$OUT/app_plain.err"
rc_plain=$?
"$HP" trace -o "$OUT/app.db" -- "$APP" 2 >"$OUT/app_trace.out" 2>"$OUT/app_trace.err"
rc_trace=$?
"$HP" trace --api -o "$OUT/app_api.db" -- "$APP" 2 >"$OUT/app_api.out" 2>"$OUT/app_api.err"
if [ $rc_plain -ne 0 ]; then
  fail "1: cuda_app fails plain (exit $rc_plain): $(cat "$OUT/app_plain.out")"
else
  cmp -s "$OUT/app_plain.out" "$OUT/app_trace.out" && [ $rc_trace -eq 0 ] && pass "1: cuda_app output identical plain and traced" ||
    fail "1: traced output differs (exit $rc_trace): $(cat "$OUT/app_trace.out" "$OUT/app_trace.err")"
  "$B/tests/cuda/count_store" "$OUT/app.db" >"$OUT/app_counts.txt" 2>&1
  # the program's own counts: "kernels K, graph kernels G, h2d bytes H, d2h bytes D, memset bytes M"
  read -r K G H D M < <(sed -nE 's/.*kernels ([0-9]+), graph kernels ([0-9]+), h2d bytes ([0-9]+), d2h bytes ([0-9]+), memset bytes ([0-9]+).*/\1 \2 \3 \4 \5/p' "$OUT/app_plain.out")
  got_k=$(key "$OUT/app_counts.txt" dispatches)
  [ "$got_k" = "$((K + G))" ] && pass "1: kernels: $got_k = $K launched + $G graph nodes" ||
    fail "1: kernels: hubprof $got_k, program $K + $G"
  [ "$(key "$OUT/app_counts.txt" dispatches_timed)" = "$got_k" ] && pass "1: every kernel has device times" ||
    fail "1: kernels without device times: $(key "$OUT/app_counts.txt" dispatches_timed) of $got_k"
  for x in "h2d $H" "d2h $D" "fill $M"; do
    set -- $x
    [ "$(key "$OUT/app_counts.txt" "bytes_$1")" = "$2" ] && pass "1: $1 bytes $2" ||
      fail "1: $1 bytes: hubprof $(key "$OUT/app_counts.txt" "bytes_$1"), program $2"
  done
  grep -q "^region nvtx/graph$\|^region .*/graph$" "$OUT/app_counts.txt" && pass "1: NVTX ranges recorded" ||
    fail "1: no NVTX range 'graph' in the store"
  grep -q "^agent 2 " "$OUT/app_counts.txt" && pass "1: GPU agent: $(grep '^agent 2 ' "$OUT/app_counts.txt" | head -1)" ||
    fail "1: no GPU agent row"
  "$B/tests/cuda/count_store" "$OUT/app_api.db" >"$OUT/app_api_counts.txt" 2>&1
  api=$(key "$OUT/app_api_counts.txt" regions_api_cuda)
  [ "${api:-0}" -gt 0 ] && pass "1: --api: $api CUDA calls, $(key "$OUT/app_api_counts.txt" regions_sync) synchronisations" ||
    fail "1: --api recorded no CUDA calls"
  # --kernel selection: only the graph's add_one
  "$HP" trace --kernel add_one -o "$OUT/app_sel.db" -- "$APP" 2 >/dev/null 2>"$OUT/app_sel.err"
  "$B/tests/cuda/count_store" "$OUT/app_sel.db" >"$OUT/app_sel_counts.txt" 2>&1
  sel=$(key "$OUT/app_sel_counts.txt" dispatches)
  [ "$sel" = "$G" ] && pass "1: --kernel add_one: the $G graph nodes only (launches of saxpy not selected)" ||
    fail "1: --kernel add_one: ${sel:-no} dispatches, $G graph nodes expected (graph nodes are always recorded)"
  "$HP" analyze "$OUT/app.db" >"$OUT/app_analyze.txt" 2>&1
  # nothing lost: SIGKILL 100 ms after the last sync point (HUBPROF_HARVEST_MS 20 ms), every kernel in the store
  "$HP" trace -o "$OUT/app_kill.db" -- "$APP" 2 100 >/dev/null 2>"$OUT/app_kill.err"
  "$B/tests/cuda/count_store" "$OUT/app_kill.db" >"$OUT/app_kill_counts.txt" 2>&1
  [ "$(key "$OUT/app_kill_counts.txt" dispatches)" = "$((K + G))" ] &&
    pass "1: SIGKILL 100 ms after the last sync: all $((K + G)) kernels kept" ||
    fail "1: SIGKILL 100 ms after the last sync: $(key "$OUT/app_kill_counts.txt" dispatches) of $((K + G)) kernels kept ($(tail -1 "$OUT/app_kill.err"))"
fi
# under CUDA counters: kernel replay (CUPTI's, one run) and application replay (one run per configuration)
CT=$B/tests/cuda/counter_table
for rp in kernel application; do
  if [ $rc_plain -ne 0 ]; then break; fi
  timeout 120 "$HP" profile --device cuda --replay $rp --counters smsp__inst_executed.sum,dram__bytes_read.sum,sm__cycles_elapsed.avg \
    -o "$OUT/app_$rp.db" -- "$APP" 2 >"$OUT/app_$rp.out" 2>"$OUT/app_$rp.err"
  rc=$?
  cmp -s "$OUT/app_plain.out" "$OUT/app_$rp.out" && [ $rc -eq 0 ] && pass "1: cuda_app output identical plain and under $rp replay" ||
    fail "1: $rp replay: exit $rc, output $(cat "$OUT/app_$rp.out") ($(grep -v '^hubprof:   ' "$OUT/app_$rp.err" | tail -2))"
  "$B/tests/cuda/count_store" "$OUT/app_$rp.db" >"$OUT/app_${rp}_counts.txt" 2>&1
  "$CT" "$OUT/app_$rp.db" >"$OUT/app_${rp}_values.txt" 2>&1
  got=$(key "$OUT/app_${rp}_counts.txt" dispatches)
  [ "$got" = "$((K + G))" ] && pass "1: $rp replay: $got kernels = $K launched + $G graph nodes" ||
    fail "1: $rp replay: $got kernels, program $K + $G"
  wv=$(sed -nE 's/^dispatches [0-9]+ with_values ([0-9]+)/\1/p' "$OUT/app_${rp}_values.txt")
  [ "$wv" = "$((K + G))" ] && pass "1: $rp replay: every kernel has counter values" ||
    fail "1: $rp replay: ${wv:-no} kernels with values of $((K + G)) ($(grep -i 'counters\|CUPTI' "$OUT/app_$rp.err" | head -2))"
done
# per-device plans by chip (issue 32): H100 and H200 are GH100; a list for another chip measures nothing here
if [ $rc_plain -eq 0 ] && grep -qE "H100|H200" "$OUT/gpu.txt"; then
  timeout 120 "$HP" profile --device cuda --counters "device=GH100:smsp__inst_executed.sum" \
    --counters "device=GB100:dram__bytes_read.sum" -o "$OUT/app_dev.db" -- "$APP" 2 >"$OUT/app_dev.out" 2>"$OUT/app_dev.err"
  "$CT" "$OUT/app_dev.db" >"$OUT/app_dev_values.txt" 2>&1
  grep -q " smsp__inst_executed.sum " "$OUT/app_dev_values.txt" && ! grep -q " dram__bytes_read.sum " "$OUT/app_dev_values.txt" &&
    pass "1: per-device plans: the GH100 list measured, the GB100 list not" ||
    fail "1: per-device plans: $(head -3 "$OUT/app_dev_values.txt") ($(tail -1 "$OUT/app_dev.err"))"
fi
say "time: $(elapsed) s"

# ---- 2. counters beside ncu: 10 metrics on the 3 kernels of stream_copy ----
SC=$B/tests/cuda/stream_copy
METRICS=smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_elapsed.avg,gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,smsp__warps_launched.sum,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum
"$SC" 128 >"$OUT/sc_plain.out" 2>&1
t0=$(date +%s.%N)
timeout 150 "$HP" profile --device cuda --counters "$METRICS" -o "$OUT/sc.db" -- "$SC" 128 >"$OUT/sc_hp.out" 2>"$OUT/sc_hp.err"
rc=$?
t1=$(date +%s.%N)
hp_s=$(echo "$t1 - $t0" | bc)
cmp -s "$OUT/sc_plain.out" "$OUT/sc_hp.out" && [ $rc -eq 0 ] && pass "2: stream_copy output identical plain and profiled" ||
  fail "2: hubprof profile of stream_copy: exit $rc: $(tail -2 "$OUT/sc_hp.err")"
"$CT" "$OUT/sc.db" >"$OUT/sc_values.txt" 2>&1
if command -v ncu >/dev/null 2>&1; then
  t0=$(date +%s.%N)
  timeout 150 ncu --metrics "$METRICS" --csv --print-units base --print-kernel-base mangled "$SC" 128 >"$OUT/ncu.csv" 2>"$OUT/ncu.err"
  rc=$?
  t1=$(date +%s.%N)
  ncu_s=$(echo "$t1 - $t0" | bc)
  say "2: wall time, stream_copy with 10 metrics: hubprof $hp_s s, ncu $ncu_s s (ncu exit $rc; goal: hubprof at most 0.5x ncu)"
  python3 - "$OUT/sc_values.txt" "$OUT/ncu.csv" <<'PY' | tee -a "$SUMMARY"
import csv, statistics, sys
hub = {}
for l in open(sys.argv[1]):
    f = l.split()
    if f and f[0] == "value":
        hub[(f[1], f[2])] = float(f[3])
rows = [r for r in csv.reader(open(sys.argv[2])) if len(r) > 10]
head = rows[0] if rows else []
ncu = {}
if head:
    ki, mi, vi = head.index("Kernel Name"), head.index("Metric Name"), head.index("Metric Value")
    for r in rows[1:]:
        try:
            ncu.setdefault((r[ki], r[mi]), []).append(float(r[vi].replace(",", "")))
        except ValueError:
            pass
exact = ("smsp__inst_executed.sum", "smsp__warps_launched.sum")
checked = 0
for (k, m), vs in sorted(ncu.items()):
    want = statistics.median(vs)
    got = hub.get((k, m))
    if got is None:
        print("FAIL 2: %s %s: no hubprof value (ncu %g)" % (k[:40], m, want))
        continue
    d = abs(got - want) / want if want else abs(got)
    strict = m in exact or (m.startswith("dram__bytes") and "copy4" in k)
    verdict = "PASS" if d <= 0.03 or not strict else "FAIL"
    checked += strict
    print("%s 2: %s %s: hubprof %g, ncu %g (%.2f%%%s)" % (verdict if strict else "INFO", k[:40], m, got, want, 100 * d,
          ", within 3% required" if strict else ""))
if not ncu:
    print("FAIL 2: no ncu values in ncu.csv")
elif not checked:
    print("FAIL 2: no deterministic counter compared")
PY
  grep -q "^FAIL 2" "$SUMMARY" && fails=$((fails + $(grep -c "^FAIL 2" "$SUMMARY")))
else
  skip "2: no ncu on PATH (hubprof alone: $hp_s s; values in sc_values.txt)"
fi
say "time: $(elapsed) s"

# ---- 3. trace cost per launch, interleaved ----
LL=$B/tests/cuda/launch_loop
N=200000
: >"$OUT/launch.txt"
for r in 1 2 3 4 5; do
  p=$("$LL" $N 2>/dev/null | sed -nE 's/.*, ([0-9.]+) ns per launch/\1/p')
  t=$("$HP" trace -o "$OUT/ll_$r.db" -- "$LL" $N 2>/dev/null | sed -nE 's/.*, ([0-9.]+) ns per launch/\1/p')
  echo "$r ${p:-nan} ${t:-nan}" >>"$OUT/launch.txt"
  rm -rf "$OUT/ll_$r.db"
done
python3 - "$OUT/launch.txt" <<'PY' | tee -a "$SUMMARY"
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
p = [float(r[1]) for r in rows if r[1] != "nan"]
t = [float(r[2]) for r in rows if r[2] != "nan"]
if not p or not t:
    print("FAIL 3: launch_loop did not run (plain %d, traced %d runs)" % (len(p), len(t)))
else:
    d = [b - a for a, b in zip(p, t)]
    verdict = "PASS" if statistics.median(d) <= 1000 else "FAIL"
    print("%s 3: added per launch: median %.0f ns (min %.0f, max %.0f) over %d interleaved pairs; plain %.0f ns, traced %.0f ns per launch (goal <= 1000 ns)"
          % (verdict, statistics.median(d), min(d), max(d), len(d), statistics.median(p), statistics.median(t)))
PY
grep -q "^FAIL 3" "$SUMMARY" && fails=$((fails + 1))
say "time: $(elapsed) s"

# ---- 4. a PyTorch training step ----
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  S=tests/device/torch_step.py
  timeout 120 python3 "$S" --profile >"$OUT/torch_plain.txt" 2>"$OUT/torch_plain.err"
  timeout 120 "$HP" trace --start-paused -o "$OUT/torch_step.db" -- python3 "$S" --one-step >"$OUT/torch_sel.txt" 2>"$OUT/torch_sel.err"
  timeout 120 "$HP" trace -o "$OUT/torch_all.db" -- python3 "$S" >"$OUT/torch_trace.txt" 2>"$OUT/torch_trace.err"
  "$B/tests/cuda/count_store" "$OUT/torch_step.db" >"$OUT/torch_counts.txt" 2>&1
  tk=$(key "$OUT/torch_plain.txt" torch_kernels)
  hk=$(key "$OUT/torch_counts.txt" dispatches)
  [ -n "$tk" ] && [ "$tk" = "$hk" ] && pass "4: kernels of one step: hubprof $hk = torch.profiler $tk" ||
    fail "4: kernels of one step: hubprof ${hk:-none}, torch.profiler ${tk:-none} ($(tail -2 "$OUT/torch_sel.err"))"
  "$HP" analyze "$OUT/torch_step.db" >"$OUT/torch_analyze.txt" 2>&1
  grep -qiE "gemm|cublas|cutlass|xmma" "$OUT/torch_analyze.txt" && pass "4: analyze names the cuBLAS kernels: $(grep -oiE '[a-z0-9_]*(gemm|cutlass|xmma)[a-z0-9_]*' "$OUT/torch_analyze.txt" | head -2 | tr '\n' ' ')" ||
    fail "4: no cuBLAS kernel named by analyze"
  pm=$(key "$OUT/torch_plain.txt" plain_ms)
  prof=$(key "$OUT/torch_plain.txt" profiled_ms)
  tr_ms=$(key "$OUT/torch_trace.txt" plain_ms)
  say "4: step time: plain ${pm:-?} ms, under torch.profiler ${prof:-?} ms, under hubprof trace ${tr_ms:-?} ms (medians of 20 steps; goal: hubprof adds less than torch.profiler)"
  cmp -s <(key "$OUT/torch_plain.txt" loss) <(key "$OUT/torch_trace.txt" loss) && pass "4: loss identical plain and traced" ||
    fail "4: loss differs: $(key "$OUT/torch_plain.txt" loss) / $(key "$OUT/torch_trace.txt" loss)"
else
  skip "4: no PyTorch with CUDA here"
fi
say "time: $(elapsed) s"

# ---- 5. OpenCL on the GPU ----
EX=$B/examples/ocl
NV_OCL=$(ls /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 /usr/lib64/libnvidia-opencl.so.1 2>/dev/null | head -1)
if [ -z "$NV_OCL" ]; then
  skip "5: the driver carries no libnvidia-opencl.so.1"
elif [ ! -x "$EX/vector_add" ]; then
  fail "5: $EX/vector_add is missing (carry $EX)"
else
  if ! ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1; then
    mkdir -p "$OUT/vendors" && echo "$NV_OCL" >"$OUT/vendors/nvidia.icd"
    export OCL_ICD_VENDORS=$OUT/vendors
    say "5: no ICD file in the image: $OUT/vendors/nvidia.icd written"
  fi
  for ex in "vector_add 100000 20" "chain" "histogram"; do
    set -- $ex
    [ -x "$EX/$1" ] || continue
    "$EX/$1" "${@:2}" >"$OUT/ocl_plain.out" 2>&1
    prc=$?
    "$HP" trace -o "$OUT/ocl_$1.db" -- "$EX/$1" "${@:2}" >"$OUT/ocl_trace.out" 2>"$OUT/ocl_trace.err"
    trc=$?
    "$HP" profile --counters task-clock -o "$OUT/ocl_$1_kr.db" -- "$EX/$1" "${@:2}" >"$OUT/ocl_kr.out" 2>"$OUT/ocl_kr.err"
    krc=$?
    if [ $prc -ne 0 ]; then
      fail "5: $1 fails plain on NVIDIA OpenCL: $(head -c 200 "$OUT/ocl_plain.out")"
      continue
    fi
    cmp -s "$OUT/ocl_plain.out" "$OUT/ocl_trace.out" && [ $trc -eq 0 ] && cmp -s "$OUT/ocl_plain.out" "$OUT/ocl_kr.out" &&
      [ $krc -eq 0 ] && pass "5: $1: output identical plain, traced and under kernel replay" ||
      fail "5: $1: outputs differ (trace exit $trc, kernel replay exit $krc): $(tail -1 "$OUT/ocl_kr.err")"
    "$B/tests/cuda/count_store" "$OUT/ocl_$1.db" >"$OUT/ocl_$1_counts.txt" 2>&1
    "$B/tests/cuda/count_store" "$OUT/ocl_$1_kr.db" >"$OUT/ocl_$1_kr_counts.txt" 2>&1
    a=$(key "$OUT/ocl_$1_counts.txt" dispatches)
    k=$(key "$OUT/ocl_$1_kr_counts.txt" dispatches)
    [ -n "$a" ] && [ "$a" = "$k" ] && [ "$a" -gt 0 ] && pass "5: $1: $a dispatches traced and replayed" ||
      fail "5: $1: dispatches traced ${a:-none}, replayed ${k:-none}"
    # NVIDIA's OpenCL runs on the CUDA driver: its kernels must not come twice (once through CUPTI)
    if [ "$1" = vector_add ]; then
      [ "$a" = 20 ] && pass "5: vector_add: exactly its own 20 dispatches" ||
        fail "5: vector_add: $a dispatches, 20 enqueued (CUDA injection counting OpenCL's kernels again?)"
    fi
  done
fi
say "time: $(elapsed) s"

say "summary: $(grep -c '^PASS' "$SUMMARY") passed, $fails failed, $(grep -c '^SKIP' "$SUMMARY") skipped; figures in $OUT"
[ $fails -lt 100 ] || fails=99
exit $fails
