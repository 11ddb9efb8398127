#!/usr/bin/env bash
# Kernel replay's counting window (docs/counters.md), its cost per dispatch: the window that leaves the
# launching thread out (per-thread sessions, HUBPROF_WINDOW=kernel, the default) against the window of old
# (inherited sessions, HUBPROF_WINDOW=enqueue), interleaved in one run on the same inputs: launch_loop N 1
# (a clFinish after every dispatch) profiled with 3 passes, on PoCL's pthread and basic devices.
# Prints the median and min-max of the runs of each side. usage: bench_window.sh   (needs `make all`)
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start
HP=$PWD/$B/hubprof
EX=$PWD/$B/examples/ocl
N=${BENCH_WINDOW_N:-2000}
RUNS=${BENCH_WINDOW_RUNS:-7}
cd "$dir"
ns_of() { sed -nE 's/.*ns_per_dispatch=([0-9.]+).*/\1/p'; }
spread() { # FILE: "median M ns, min-max L-H ns (N runs)" of the values in FILE
  local m l h
  read -r m l h <<<"$(stats $(cat "$1"))"
  echo "median $m ns, min-max $l-$h ns ($(wc -l <"$1") runs)"
}
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
  echo "    window enqueue (of old): $(spread enqueue.txt) per dispatch"
  echo "    window kernel (default): $(spread kernel.txt) per dispatch"
done
