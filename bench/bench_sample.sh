#!/usr/bin/env bash
# Sampling overhead: host time per dispatch of a launch-bound loop (examples/ocl/launch_loop, PoCL's default
# pthread device) without the collector, under trace, and under `hubprof sample`'s collector at three
# periods (HUBPROF_SAMPLE_PERIOD_US 10000, 1000, 100), interleaved in one run: median and min-max of R rounds,
# slowdown against trace in the same round order.
# usage: bench_sample.sh [N [ROUNDS]]
# SPDX-License-Identifier: MIT
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-50000}
rounds=${2:-5}
B=build
app=$B/examples/ocl/launch_loop
lib=$PWD/$B/libhubprof_collector.so
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unset OPENCL_LAYERS LD_PRELOAD HUBPROF_OUTPUT_DIR HUBPROF_MODE HUBPROF_HARVEST_MS HUBPROF_SAMPLE_PERIOD_US \
  HUBPROF_SAMPLE_COUNTERS HUBPROF_SAMPLE_KERNEL
one() { "$@" "$app" "$n" 1000 | grep -oE 'ns_per_dispatch=[0-9.]+' | cut -d= -f2; }
run() { # ENV...: under the collector
  rm -rf "$dir/logs" && mkdir -p "$dir/logs"
  one env OPENCL_LAYERS="$lib" HUBPROF_OUTPUT_DIR="$dir/logs" HUBPROF_MODE=trace "$@"
}
plain=() trace=() s10000=() s1000=() s100=()
for ((r = 0; r < rounds; r++)); do
  plain+=("$(one env)")
  trace+=("$(run)")
  s10000+=("$(run HUBPROF_SAMPLE_PERIOD_US=10000)")
  s1000+=("$(run HUBPROF_SAMPLE_PERIOD_US=1000)")
  s100+=("$(run HUBPROF_SAMPLE_PERIOD_US=100)")
done
. bench/lib.sh # stats
read -r tm _ _ <<<"$(stats "${trace[@]}")"
row() { # LABEL VALUES...
  local label=$1
  shift
  read -r m l h <<<"$(stats "$@")"
  awk -v L="$label" -v m="$m" -v l="$l" -v h="$h" -v t="$tm" \
    'BEGIN { printf "%-40s %9.1f %17s %9.2fx\n", L, m, l "-" h, m / t }'
}
printf '%-40s %9s %17s %10s\n' "launch_loop $n dispatches, $rounds rounds" "ns/disp" "min-max" "vs trace"
row "no collector" "${plain[@]}"
row "trace" "${trace[@]}"
row "sample, period 10000 us" "${s10000[@]}"
row "sample, period 1000 us (default)" "${s1000[@]}"
row "sample, period 100 us" "${s100[@]}"
