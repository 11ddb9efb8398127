#!/usr/bin/env bash
# Kernel replay's counting window (docs/counters.md), its cost per dispatch: the window that leaves the
# launching thread out (per-thread sessions, HUBPROF_WINDOW=kernel, the default) against the window of old
# (inherited sessions, HUBPROF_WINDOW=enqueue), interleaved in one run on the same inputs: launch_loop N 1
# (a clFinish after every dispatch) profiled with 3 passes, on PoCL's pthread and basic devices.
# Prints the median and min-max of the runs of each side. usage: bench_window.sh   (needs `make all`)
# SPDX-License-Identifier: MIT
set -euo pipefail
cd "$(dirname "$0")/.."
HP=$PWD/build/hubprof
EX=$PWD/build/examples/ocl
N=${BENCH_WINDOW_N:-2000}
RUNS=${BENCH_WINDOW_RUNS:-7}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
unset HUBPROF_DEBUG HUBPROF_SHADOW HUBPROF_WINDOW
ns_of() { sed -nE 's/.*ns_per_dispatch=([0-9.]+).*/\1/p'; }
stats() { sort -g | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
  printf "median %.0f ns, min-max %.0f-%.0f ns (%d runs)", m, v[1], v[NR], NR }'; }
for dev in pthread basic; do
  n=$N
  [ $dev = basic ] && n=$((N * 5))
  : >enqueue.txt
  : >kernel.txt
  for _ in $(seq "$RUNS"); do
    for w in enqueue kernel; do
      POCL_DEVICES=$dev HUBPROF_WINDOW=$w "$HP" profile -q -f --counters task-clock,page-faults,context-switches \
        --max-counters-per-pass 1 -o loop.db -- "$EX/launch_loop" "$n" 1 | ns_of >>"$w.txt"
    done
  done
  echo "$ POCL_DEVICES=$dev HUBPROF_WINDOW=W hubprof profile --counters task-clock,page-faults,context-switches --max-counters-per-pass 1 -- launch_loop $n 1"
  echo "    window enqueue (of old): $(stats <enqueue.txt) per dispatch"
  echo "    window kernel (default): $(stats <kernel.txt) per dispatch"
done
