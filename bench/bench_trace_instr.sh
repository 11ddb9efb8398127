#!/usr/bin/env bash
# Trace fast path in user-space instructions per dispatch (valgrind's callgrind), a measure other jobs on the
# machine cannot disturb: launch_loop at two sizes on PoCL's basic device, without the collector, with the
# collector stamping enqueue times with clock_gettime (HUBPROF_TIMESTAMP=clock) and with the default stamp
# (rdtsc where the kernel's clocksource is the TSC); the difference between the sizes per dispatch, so start-up
# cancels out. Kernel time (page faults, system calls) is not in it: see bench_trace.sh for wall and CPU time.
# The runtime's share, without a collector (launch_loop LAUNCH_LOOP_EVENTS): a profiling queue; + an event per
# dispatch released at each sync; + its start and end read (the least an OpenCL event-based tracer costs).
# usage: bench_trace_instr.sh [SMALL [LARGE]]   (needs valgrind and `make all`)
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start
small=${1:-2000}
large=${2:-6000}
app=$PWD/$LAUNCH_LOOP
lib=$COLLECTOR
export POCL_DEVICES=basic
unset LAUNCH_LOOP_EVENTS LAUNCH_LOOP_CPU
if ! command -v valgrind >/dev/null; then
  echo "bench_trace_instr: valgrind not installed (skipped)"
  exit 0
fi
instr() { # N VAR=VALUE...: instructions of one run
  rm -rf "$dir/logs" && mkdir -p "$dir/logs"
  env "${@:2}" valgrind --tool=callgrind --callgrind-out-file="$dir/cg" "$app" "$1" 1000 2>&1 >/dev/null |
    sed -nE 's/.*Collected : ([0-9]+).*/\1/p'
}
per() { # VAR=VALUE...: instructions per dispatch (large minus small)
  local a b
  a=$(instr "$small" "$@")
  b=$(instr "$large" "$@")
  awk -v a="$a" -v b="$b" -v n=$((large - small)) 'BEGIN { printf "%.1f", (b - a) / n }'
}
trace=(OPENCL_LAYERS="$lib" HUBPROF_OUTPUT_DIR="$dir/logs" HUBPROF_MODE=trace)
p=$(per HUBPROF_NONE=1)
rq=$(per LAUNCH_LOOP_EVENTS=queue)
re=$(per LAUNCH_LOOP_EVENTS=events)
rt=$(per LAUNCH_LOOP_EVENTS=times)
c=$(per "${trace[@]}" HUBPROF_TIMESTAMP=clock)
t=$(per "${trace[@]}")
printf '%-52s %10s %8s\n' "user-space instructions per dispatch ($small vs $large)" "instr" "added"
printf '%-52s %10.1f %8s\n' "no collector" "$p" "-"
add() { awk -v a="$1" -v b="$p" 'BEGIN { print a - b }'; }
printf '%-52s %10.1f %8.1f\n' "no collector, profiling queue" "$rq" "$(add "$rq")"
printf '%-52s %10.1f %8.1f\n' "  + an event per dispatch, released at sync" "$re" "$(add "$re")"
printf '%-52s %10.1f %8.1f\n' "  + its start and end read (a minimal tracer)" "$rt" "$(add "$rt")"
printf '%-52s %10.1f %8.1f\n' "collector, HUBPROF_TIMESTAMP=clock (clock_gettime)" "$c" "$(awk -v a="$c" -v b="$p" 'BEGIN { print a - b }')"
printf '%-52s %10.1f %8.1f\n' "collector, default stamp" "$t" "$(awk -v a="$t" -v b="$p" 'BEGIN { print a - b }')"
printf '%-52s %10s %8.1f\n' "collector's own: collector minus the minimal tracer" "" "$(awk -v a="$t" -v b="$rt" 'BEGIN { print a - b }')"
