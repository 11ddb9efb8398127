#!/usr/bin/env bash
# The GPU section "why a kernel is slow" (issue 26), for an H100/H200 run of the device script (at most 3
# minutes): a kernel whose time is a chain of dependent global loads on one source line, sampled with
# `hubprof sample` through CUPTI's PC sampling, must put most of its samples on that line with the stall
# reason long_scoreboard, SASS from nvdisasm naming a global load; a PM-sampling timeline of the kernel must
# span its duration with increasing times. Needs the CUDA runtime provider (prov_cuda*.c) calling
# src/collector/sample_cupti_pc.c; not run without a GPU.
# usage: bash tests/device/cuda_why.sh [HUBPROF]   (from the repository root, after make all)
# SPDX-License-Identifier: MIT
set -u
HP=$(realpath "${1:-build/hubprof}")
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
pass=0 fail=0
ok() { pass=$((pass + 1)); }
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
[ -x "$NVCC" ] || {
  echo "cuda_why: skipped: nvcc not found"
  exit 0
}
T=$(mktemp -d /tmp/hubprof-why-XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

# line 9 holds the chain: each load's address is the previous load's value (a pointer chase), so every warp
# waits on global memory there (long scoreboard) almost all the time
cat >chase.cu <<'CU'
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
__global__ void chase(const unsigned *next, unsigned *out, int n)
{
  unsigned p = (blockIdx.x * blockDim.x + threadIdx.x) * 977u;
  p &= (1u << 24) - 1;
  for (int i = 0; i < n; i++)
    p = next[p];
  out[blockIdx.x * blockDim.x + threadIdx.x] = p;
}
int main(int argc, char **argv)
{
  const unsigned N = 1u << 24; /* 64 MiB of links: beyond L2 */
  int iters = argc > 1 ? atoi(argv[1]) : 20000;
  unsigned *h = (unsigned *)malloc(N * sizeof *h), *next, *out;
  for (unsigned i = 0; i < N; i++)
    h[i] = (unsigned)(((unsigned long long)i * 2654435761ull + 12345) % N);
  cudaMalloc(&next, N * sizeof *h);
  cudaMalloc(&out, 132 * 4 * 256 * sizeof *h);
  cudaMemcpy(next, h, N * sizeof *h, cudaMemcpyHostToDevice);
  chase<<<132 * 4, 256>>>(next, out, iters);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
CU
CHASE_LINE=9
sed -n "${CHASE_LINE}p" chase.cu | grep -q 'p = next\[p\];' || bad "the chase is not on line $CHASE_LINE"
"$NVCC" -O3 -lineinfo -arch=native -o chase chase.cu 2>nvcc.err || {
  bad "nvcc: $(tail -2 nvcc.err)"
  finish
}

# 1. PC sampling with stall reasons: most samples on the chase line, long_scoreboard first
timeout 120 "$HP" sample -q -f -o why.db -- ./chase 20000 >run.out 2>run.err || bad "sample: $(tail -3 run.err)"
if [ -s why.db ]; then
  "$HP" analyze --by line --kernel '*chase*' --format csv why.db >lines.csv 2>lines.err || bad "analyze --by line"
  python3 - "$CHASE_LINE" lines.csv <<'PY' && ok || bad "by line: $(head -4 lines.csv)"
import csv, sys
want = f"chase.cu:{sys.argv[1]}"
rows = list(csv.DictReader(open(sys.argv[2])))
total = sum(int(r["samples"]) for r in rows)
top = rows[0]
assert total > 100, total
assert top["line"] == want, top
assert int(top["samples"]) > 0.5 * total, (top, total)
assert top["stall"] == "long_scoreboard", top
PY
  "$HP" analyze --by instruction -n 3 --kernel '*chase*' --format csv why.db >insn.csv 2>insn.err
  python3 - insn.csv <<'PY' && ok || bad "by instruction: $(head -4 insn.csv) $(cat insn.err)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert any(r["instruction"].startswith("LDG") and r["stall"] == "long_scoreboard" for r in rows), rows
PY
fi

# 2. PM sampling: a counter timeline inside the kernel, spanning it, times increasing
timeout 120 "$HP" sample -q -f -c sm__cycles_active.sum -o pm.db -- ./chase 20000 >pm.out 2>pm.err ||
  bad "sample -c: $(tail -3 pm.err)"
if [ -s pm.db ]; then
  "$HP" analyze --timeline --dispatch 1 --format csv pm.db >tl.csv 2>tl.err || bad "timeline: $(cat tl.err)"
  "$HP" analyze --by dispatch --format csv pm.db >d.csv 2>/dev/null
  python3 - tl.csv d.csv <<'PY' && ok || bad "timeline: $(head -5 tl.csv)"
import csv, sys
t = [int(r["time_ns"]) for r in csv.DictReader(open(sys.argv[1]))]
d = next(csv.DictReader(open(sys.argv[2])))
dur = int(d["duration_ns"])
assert len(t) >= 10, len(t)
assert all(b > a for a, b in zip(t, t[1:])), "times do not increase"
assert t[0] < 0.2 * dur and t[-1] > 0.8 * dur, (t[0], t[-1], dur)
PY
fi
finish
