#!/usr/bin/env bash
# Cost of one region begin+end pair (bench/bench_regions.c): hubprof absent, and under the collector as
# `hubprof trace` runs it (its environment set directly, so the merge afterwards is not timed), through
# include/hubprof/api.h and through NVTX push/pop. Rounds interleave the cases; prints median and min-max
# ns per pair. usage: bench_regions.sh [PAIRS [ROUNDS]]
# SPDX-License-Identifier: MIT
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
rounds=${2:-7}
B=build
LIB=$PWD/$B/libhubprof_collector.so
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unset HUBPROF_OUTPUT_DIR HUBPROF_INJECTION_PATH NVTX_INJECTION64_PATH OPENCL_LAYERS LD_PRELOAD
cases=("loop absent" "clock absent" "api absent" "api trace")
"$B/bench/bench_regions" nvtx 1 >/dev/null 2>&1 && cases+=("nvtx absent" "nvtx trace")
declare -A res
for ((r = 0; r < rounds; r++)); do
  for c in "${cases[@]}"; do
    set -- $c
    if [ "$2" = trace ]; then
      rm -rf "$dir/logs"
      v=$(HUBPROF_OUTPUT_DIR=$dir/logs HUBPROF_INJECTION_PATH=$LIB NVTX_INJECTION64_PATH=$LIB \
        "$B/bench/bench_regions" "$1" "$n")
    else
      v=$("$B/bench/bench_regions" "$1" "$n")
    fi
    res[$c]="${res[$c]:-} $v"
  done
done
printf '| %-28s | %10s | %16s |\n' "case ($n pairs, $rounds rounds)" "median ns" "min-max ns"
for c in "${cases[@]}"; do
  python3 -c 'import sys,statistics as s; v=[float(x) for x in sys.argv[2:]]; print("| %-28s | %10.2f | %7.2f-%-8.2f |" % (sys.argv[1], s.median(v), min(v), max(v)))' "$c" ${res[$c]}
done
