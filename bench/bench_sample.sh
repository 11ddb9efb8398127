#!/usr/bin/env bash
# Sampling overhead: host time per dispatch of a launch-bound loop (examples/ocl/launch_loop, PoCL's default
# pthread device) without the collector, under trace, and under `hubprof sample`'s collector at three
# periods (HUBPROF_SAMPLE_PERIOD_US 10000, 1000, 100), interleaved in one run: median and min-max of R rounds,
# slowdown against trace in the same round order; in wall time (the app's own figure) and in the process's CPU
# time.
# SYNC (default 1000) is launch_loop's clFinish interval: 1 waits after every dispatch (a synchronous program,
# as clpeak's latency test: issue 28's "sample cost on synchronous dispatches"). The last configuration is the
# default period with HUBPROF_SAMPLE_ADAPT=0: every thread sampled at the period even when it switches more
# than it runs (src/collector/sample.c, SLOW_NS: what sampling cost such programs before).
# usage: bench_sample.sh [N [ROUNDS [SYNC]]]
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start
n=${1:-50000}
rounds=${2:-5}
sync=${3:-1000}
# one ENV...: "wall cpu" of one run: the app's own host ns per dispatch, and the CPU time of the whole process
# (every thread: the application, PoCL's workers, the harvester, the sampling interrupts) per dispatch,
# which a loaded machine disturbs less than wall time
one() {
  python3 -c '
import os, re, resource, subprocess, sys
n, app, sync = sys.argv[1], sys.argv[2], sys.argv[3]
env = dict(os.environ)
for kv in sys.argv[4:]:
    k, v = kv.split("=", 1)
    env[k] = v
out = subprocess.run([app, n, sync], env=env, capture_output=True, text=True, check=True).stdout
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(re.search(r"ns_per_dispatch=([0-9.]+)", out).group(1), (r.ru_utime + r.ru_stime) * 1e9 / int(n))' "$n" "$LAUNCH_LOOP" "$sync" "$@"
}
run() { # ENV...: under the collector
  rm -rf "$dir/logs" && mkdir -p "$dir/logs"
  one OPENCL_LAYERS="$COLLECTOR" HUBPROF_OUTPUT_DIR="$dir/logs" HUBPROF_MODE=trace "$@"
}
names=("no collector" "trace" "sample, period 10000 us" "sample, period 1000 us (default)" "sample, period 100 us"
  "sample, 1000 us, HUBPROF_SAMPLE_ADAPT=0")
declare -A wall cpu
for ((r = 0; r < rounds; r++)); do
  for c in 0 1 2 3 4 5; do # interleaved: every configuration once per round
    case $c in
    0) v=$(one) ;;
    1) v=$(run) ;;
    2) v=$(run HUBPROF_SAMPLE_PERIOD_US=10000) ;;
    3) v=$(run HUBPROF_SAMPLE_PERIOD_US=1000) ;;
    4) v=$(run HUBPROF_SAMPLE_PERIOD_US=100) ;;
    5) v=$(run HUBPROF_SAMPLE_PERIOD_US=1000 HUBPROF_SAMPLE_ADAPT=0) ;;
    esac
    wall[$c]+="${v% *} "
    cpu[$c]+="${v#* } "
  done
done
table() { # TITLE ARRAY-NAME
  local -n a=$2
  local tm
  read -r tm _ _ <<<"$(stats ${a[1]})"
  printf '%-40s %9s %17s %10s\n' "$1" "ns/disp" "min-max" "vs trace"
  for c in 0 1 2 3 4 5; do
    read -r m l h <<<"$(stats ${a[$c]})"
    awk -v L="${names[$c]}" -v m="$m" -v l="$l" -v h="$h" -v t="$tm" \
      'BEGIN { printf "%-40s %9.1f %17s %9.2fx\n", L, m, l "-" h, m / t }'
  done
}
table "launch_loop $n dispatches (clFinish every $sync), $rounds rounds: wall" wall
table "process CPU time per dispatch" cpu
echo "load at the end: $(bench_load)"
