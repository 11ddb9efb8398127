#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Collector overhead: host time per dispatch of a launch-bound loop (examples/ocl/launch_loop, PoCL's
# POCL_DEVICES=basic: a launch costs ~0.4-1 us) without the collector, with the no-op collector (every wrapper
# forwards: the floor), with the collector of the base commit BEFORE (built from git into a temporary folder)
# and with this tree's collector, strictly interleaved in many short rounds: median and min-max over rounds.
# The noise is between rounds and processes (a launch varies 0.8-1.4 us from one process to the next even on
# an idle machine), so: the headline "ADDED" figure is PAIRED, in each round the collector's ns per dispatch
# minus the no-op floor's of the same round (they run back to back), median and min..max over the rounds;
# the launching thread is pinned alone to the last CPU (LAUNCH_LOOP_CPU; the collector's background harvester,
# started before, may use the others); and next to wall time, the launching thread's own CPU time
# (CLOCK_THREAD_CPUTIME_ID: not counting time it waited for a core; the harvester's CPU is not in it) and
# the whole process's (CLOCK_PROCESS_CPUTIME_ID: the harvester's too).
# The runtime's share: the same loop without a collector doing by hand what an event-based tracer makes the
# runtime do (LAUNCH_LOOP_EVENTS): a profiling queue; + an event per dispatch released after each clFinish;
# + its start and end read before the release. "collector minus that" is what the collector adds beyond the
# least any OpenCL event-based tracer costs (its stamp, ring, row encoding and log).
# Within one process (LAUNCH_LOOP_AB): blocks of 1000 dispatches collecting and paused in turn, so the noise
# between processes cancels; a component only (a paused collector keeps the queue's profiling on). The
# runtime's share the same way, without a collector: blocks on a profiling queue (LAUNCH_LOOP_AB=queue) or
# done as the minimal tracer (=times), against blocks on the plain queue. Together they give the added cost
# within one process: profiling queue + (collecting - paused), and the collector's own: (collecting - paused)
# - (minimal tracer - profiling queue).
# Next to it, the exit work `hubprof trace` adds after the application ends: merging a log of MERGE_N
# (200000) dispatches into a rocpd store (`hubprof merge`, the same log every round), in ms per million
# dispatches (a 1-dispatch log's merge subtracted: the fixed cost of a merge, shown apart).
# The price of a second thread (issue 33): the loop with one idle thread preloaded (bench/idle_thread.c, no
# collector: glibc's single-thread fast paths end in the runtime's locks and allocations), and the collector
# with HUBPROF_HARVESTER=thread (its harvester thread started even in this one-thread process).
# usage: bench_trace.sh [N [ROUNDS [BEFORE]]]   (default 20000 31 none) BEFORE: a git commit, "none" to skip
. "$(dirname "$0")/lib.sh"
bench_start
n=${1:-20000}
rounds=${2:-31}
before=${3:-none}
app=$LAUNCH_LOOP
export POCL_DEVICES=basic
unset LAUNCH_LOOP_EVENTS
export LAUNCH_LOOP_CPU=$(($(nproc) - 1)) # the launching thread alone, on the last CPU
old=$(bench_old_collector bench_trace "$before")
lib=$PWD/$B/libhubprof_collector.so
# one run: "WALL THREAD-CPU PROCESS-CPU" ns per dispatch as launch_loop prints them
one() { "$@" "$app" "$n" 1000 |
  sed -nE 's/.* ns_per_dispatch=([0-9.]+) cpu_per_dispatch_ns=([0-9.]+) proc_cpu_per_dispatch_ns=([0-9.]+).*/\1 \2 \3/p'; }
traced() { # LIB [VAR=VALUE...]
  rm -rf "$dir/logs" && mkdir -p "$dir/logs"
  one env OPENCL_LAYERS="$1" HUBPROF_OUTPUT_DIR="$dir/logs" HUBPROF_MODE=trace "${@:2}"
}
mtime() { # LOG...: ns to merge into rocpd
  local s e
  s=$(date +%s%N)
  "$B/hubprof" merge -q -f -o "$dir/merged.db" "$@" >/dev/null
  e=$(date +%s%N)
  echo $((e - s))
}
mkdir -p "$dir/tiny" "$dir/big" # a 1-dispatch log (the merge's fixed cost) and one of MERGE_N dispatches
mn=${MERGE_N:-200000}
OPENCL_LAYERS="$lib" HUBPROF_OUTPUT_DIR="$dir/tiny" HUBPROF_MODE=trace "$app" 1 1 >/dev/null
OPENCL_LAYERS="$lib" HUBPROF_OUTPUT_DIR="$dir/big" HUBPROF_MODE=trace "$app" "$mn" 1000 >/dev/null
echo "load at the start: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min), $(nproc) CPUs; launching thread on CPU" \
  "$LAUNCH_LOOP_CPU; launch_loop $n dispatches, clFinish every 1000, $rounds rounds"
# configurations, run in this order in every round; results in W[name,round], C[..] and P[..] (wall, thread
# CPU, process CPU)
idle=$PWD/$B/bench/idle_thread.so
[ -e "$idle" ] || make -s "$B/bench/idle_thread.so" >/dev/null
names=(plain idle noop queue events times)
[ -n "$old" ] && names+=(prev)
names+=(full thr clk ab abq abt)
declare -A W C P
merge=() mfix=() abw=() abc=() abqw=() abtw=()
for ((r = 0; r < rounds; r++)); do
  for x in "${names[@]}"; do
    case $x in
      plain) v=$(one env) ;;
      idle) v=$(one env LD_PRELOAD="$idle") ;;
      thr) v=$(traced "$lib" HUBPROF_HARVESTER=thread) ;;
      noop) v=$(one env OPENCL_LAYERS="$PWD/$B/libhubprof_collector_noop.so") ;;
      queue | events | times) v=$(one env LAUNCH_LOOP_EVENTS="$x") ;;
      prev) v=$(traced "$old") ;;
      full)
        v=$(traced "$lib")
        merge+=("$(mtime "$dir"/big/*.log)") # the exit merge, the same log every round
        mfix+=("$(mtime "$dir"/tiny/*.log)")
        ;;
      ab) # one process, blocks of 1000 collecting and paused in turn: "ON OFF ON_CPU OFF_CPU"
        rm -rf "$dir/logs" && mkdir -p "$dir/logs"
        v=$(LAUNCH_LOOP_AB=1 OPENCL_LAYERS="$lib" HUBPROF_INJECTION_PATH="$lib" HUBPROF_OUTPUT_DIR="$dir/logs" \
          HUBPROF_MODE=trace "$app" "$n" 1000 |
          sed -nE 's/.* on_ns=([0-9.]+) off_ns=([0-9.]+) on_cpu_ns=([0-9.]+) off_cpu_ns=([0-9.]+).*/\1 \2 \3 \4/p')
        read -r a b c d <<<"$v"
        abw+=("$(awk -v x="$a" -v y="$b" 'BEGIN { print x - y }')")
        abc+=("$(awk -v x="$c" -v y="$d" 'BEGIN { print x - y }')")
        continue
        ;;
      abq | abt) # one process, blocks on a profiling queue (abq) or as the minimal tracer (abt) and plain ones
        v=$(LAUNCH_LOOP_AB=$([ $x = abq ] && echo queue || echo times) "$app" "$n" 1000 |
          sed -nE 's/.* on_ns=([0-9.]+) off_ns=([0-9.]+) .*/\1 \2/p')
        read -r a b <<<"$v"
        if [ $x = abq ]; then abqw+=("$(awk -v x="$a" -v y="$b" 'BEGIN { print x - y }')"); else
          abtw+=("$(awk -v x="$a" -v y="$b" 'BEGIN { print x - y }')"); fi
        continue
        ;;
      clk) v=$(traced "$lib" HUBPROF_TIMESTAMP=clock) ;; # the enqueue stamp's source
    esac
    read -r W[$x,$r] C[$x,$r] P[$x,$r] <<<"$v"
  done
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
. bench/lib.sh # stats, stats_row
col() { # KIND NAME: the rounds' values of one configuration (KIND W or C)
  local -n m=$1
  local k
  for ((k = 0; k < rounds; k++)); do echo "${m[$2,$k]}"; done
}
paired() { # LABEL KIND A B: per round A minus B, median and min..max
  local d=() k m l h
  local -n t=$2
  for ((k = 0; k < rounds; k++)); do d+=("$(awk -v x="${t[$3,$k]}" -v y="${t[$4,$k]}" 'BEGIN { print x - y }')"); done
  read -r m l h <<<"$(stats "${d[@]}")"
  printf '%-50s %9.1f %17s\n' "$1" "$m" "$l..$h"
}
for kind in W C P; do
  case $kind in
    W) title="wall ns per dispatch" ;;
    C) title="launching thread's CPU ns per dispatch" ;;
    P) title="CPU ns per dispatch, all threads (harvester too)" ;;
  esac
  read -r pm pl ph <<<"$(stats $(col $kind plain))"
  row() { stats_row 50 "$pm" "$1" $(col $kind "$2"); }
  printf '\n%-50s %9s %17s %9s %8s\n' "$title" "median" "min-max" "added" "slowdown"
  row "no collector" plain
  row "no collector, one idle thread (preloaded)" idle
  row "no-op collector (layer, forwards only)" noop
  row "no collector, profiling queue" queue
  row "  + an event per dispatch, released at sync" events
  row "  + its start and end read (a minimal tracer)" times
  [ -n "$old" ] && row "collector before ($before)" prev
  row "collector now" full
  row "collector now, HUBPROF_HARVESTER=thread" thr
  row "collector now, HUBPROF_TIMESTAMP=clock" clk
  echo "paired per round (the two ran back to back):"
  paired "ADDED: collector minus no-op floor" $kind full noop
  paired "ADDED, HUBPROF_TIMESTAMP=clock" $kind clk noop
  paired "ADDED, HUBPROF_HARVESTER=thread" $kind thr noop
  paired "a second thread, no collector: idle minus plain" $kind idle plain
  paired "runtime: profiling queue minus no collector" $kind queue plain
  paired "runtime: events read and released, minus none" $kind times plain
  paired "collector's own: collector minus minimal tracer" $kind full times
  paired "default stamp minus clock_gettime" $kind full clk
  [ -n "$old" ] && paired "now minus before" $kind full prev
done
echo
echo "within one process (LAUNCH_LOOP_AB: blocks of 1000 of two kinds in turn, median of each kind per run,"
echo "then median and min..max over the rounds; a paused collector keeps the queue's profiling on):"
read -r m l h <<<"$(stats "${abw[@]}")"
printf '%-50s %9.1f %17s\n' "collecting minus paused, wall" "$m" "$l..$h"
read -r m l h <<<"$(stats "${abc[@]}")"
printf '%-50s %9.1f %17s\n' "collecting minus paused, thread CPU" "$m" "$l..$h"
read -r m l h <<<"$(stats "${abqw[@]}")"
printf '%-50s %9.1f %17s\n' "runtime: profiling queue minus plain queue, wall" "$m" "$l..$h"
read -r m l h <<<"$(stats "${abtw[@]}")"
printf '%-50s %9.1f %17s\n' "runtime: minimal tracer minus plain queue, wall" "$m" "$l..$h"
d=() e=()
for ((r = 0; r < rounds; r++)); do # per round: the ways' sum and difference
  d+=("$(awk -v a="${abw[r]}" -v q="${abqw[r]}" 'BEGIN { print a + q }')")
  e+=("$(awk -v a="${abw[r]}" -v q="${abqw[r]}" -v t="${abtw[r]}" 'BEGIN { print a - (t - q) }')")
done
read -r m l h <<<"$(stats "${d[@]}")"
printf '%-50s %9.1f %17s\n' "ADDED within: profiling queue + collecting-paused" "$m" "$l..$h"
read -r m l h <<<"$(stats "${e[@]}")"
printf '%-50s %9.1f %17s\n' "collector's own within: minus (tracer - queue)" "$m" "$l..$h"
d=() f=()
for ((r = 0; r < rounds; r++)); do
  d+=("$(awk -v a="${merge[r]}" -v b="${mfix[r]}" -v n="$mn" 'BEGIN { printf "%.1f", (a - b) / 1e6 * 1e6 / n }')")
  f+=("$(awk -v b="${mfix[r]}" 'BEGIN { printf "%.1f", b / 1e6 }')")
done
read -r m l h <<<"$(stats "${d[@]}")"
printf '\n%-50s %9.1f %17s\n' "exit merge into rocpd, ms per 1 M dispatches" "$m" "$l-$h"
echo "  (a log of $mn dispatches, the same every round, minus the merge of a 1-dispatch log)"
read -r m l h <<<"$(stats "${f[@]}")"
printf '%-50s %9.1f %17s\n' "  fixed cost of a merge (1-dispatch log), ms" "$m" "$l-$h"
echo "ns per dispatch; added = median minus the no-collector median (for scale: rocprofv3 24.5x, LTTng 3.8x on a HIP launch loop)"
