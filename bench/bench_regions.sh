#!/usr/bin/env bash
# Cost of one region begin+end pair (bench/bench_regions.c): hubprof absent, and under the collector as
# `hubprof trace` runs it (its environment set directly, so the merge afterwards is not timed), through
# include/hubprof/api.h and through NVTX push/pop; with BEFORE, also under the collector of that git commit
# (built from git into a temporary folder). Rounds interleave the cases; prints median and min-max ns per
# pair of wall-clock time and of the calling thread's CPU time (the collector's background thread, which
# faults in the log's next chunks, is in neither: its CPU time is the per-pair cost of the whole process
# minus the thread's, shown by `perf stat` in docs/benchmarks.md). Each timed run of PAIRS follows an untimed one
# (steady state); "trace-cold" times from the first pair (the log's first chunks made by the thread).
# usage: bench_regions.sh [PAIRS [ROUNDS [BEFORE]]]   (BEFORE: a commit, default none)
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start
n=${1:-1000000}
rounds=${2:-7}
before=${3:-none}
LIB=$COLLECTOR
OLD=$(bench_old_collector bench_regions "$before")
cases=("loop absent" "clock absent" "api absent" "api trace" "api trace-cold")
[ -n "$OLD" ] && cases+=("api before")
if "$B/bench/bench_regions" nvtx 1 >/dev/null 2>&1; then
  cases+=("nvtx absent" "nvtx trace")
  [ -n "$OLD" ] && cases+=("nvtx before")
fi
declare -A res cpu
for ((r = 0; r < rounds; r++)); do
  for c in "${cases[@]}"; do
    set -- $c
    if [ "$2" != absent ]; then
      lib=$LIB
      [ "$2" = before ] && lib=$OLD
      cold=()
      [ "$2" = trace-cold ] && cold=(BENCH_REGIONS_COLD=1)
      rm -rf "$dir/logs"
      v=$(env "${cold[@]}" HUBPROF_OUTPUT_DIR=$dir/logs HUBPROF_INJECTION_PATH=$lib NVTX_INJECTION64_PATH=$lib \
        "$B/bench/bench_regions" "$1" "$n")
    else
      v=$("$B/bench/bench_regions" "$1" "$n")
    fi
    set -- $v
    res[$c]="${res[$c]:-} $1"
    cpu[$c]="${cpu[$c]:-} ${2:-$1}"
  done
done
printf '| %-28s | %10s | %16s | %13s | %16s |\n' "case ($n pairs, $rounds rounds)" "median ns" "min-max ns" \
  "thread CPU ns" "min-max CPU ns"
for c in "${cases[@]}"; do
  python3 -c 'import sys,statistics as s
n = int(sys.argv[2]); v = [float(x) for x in sys.argv[3:3 + n]]; u = [float(x) for x in sys.argv[3 + n:]]
print("| %-28s | %10.2f | %7.2f-%-8.2f | %13.2f | %7.2f-%-8.2f |" % (sys.argv[1], s.median(v), min(v), max(v), s.median(u), min(u), max(u)))' \
    "$c" "$rounds" ${res[$c]} ${cpu[$c]}
done
