#!/usr/bin/env bash
# Collector overhead: host time per dispatch of a launch-bound loop (examples/ocl/launch_loop, PoCL's
# POCL_DEVICES=basic: a launch costs ~0.4 us) without the collector, with the no-op collector (every wrapper
# forwards: the floor), with the collector of the base commit BEFORE (harvest at the launching thread's own
# sync points only; built from git into a temporary folder) and with this tree's collector (background
# harvester, every sync point harvests every thread), interleaved in one run: median and min-max of R rounds.
# Next to it, the exit work `hubprof trace` adds after the application ends: merging the round's log into a
# rocpd store (`hubprof merge` of the same log), in seconds per million dispatches.
# The headline "added" figure is PAIRED: in each round, the collector's ns per dispatch minus the no-op
# floor's of the same round (the two run back to back), median and min-max over the rounds. On a shared
# machine the spread between rounds is larger than the effect, so the difference of the two medians (the
# "added" column, kept) is a poor estimator of it.
# usage: bench_trace.sh [N [ROUNDS [BEFORE]]]   BEFORE: a git commit (default 3d6ced1), "none" to skip it
# SPDX-License-Identifier: MIT
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200000}
rounds=${2:-7}
before=${3:-3d6ced1}
B=build
app=$B/examples/ocl/launch_loop
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export POCL_DEVICES=basic
unset OPENCL_LAYERS LD_PRELOAD HUBPROF_OUTPUT_DIR HUBPROF_MODE HUBPROF_HARVEST_MS
old=""
if [ "$before" != none ]; then # the "before" collector, built from its commit with the same compiler flags
  mkdir -p "$dir/old"
  if git archive "$before" | tar -x -C "$dir/old" && make -C "$dir/old" -j2 build/libhubprof_collector.so \
    >"$dir/old.build" 2>&1; then
    old=$dir/old/build/libhubprof_collector.so
  else
    echo "bench_trace: cannot build the collector of $before (skipped): $(tail -n 3 "$dir/old.build")" >&2
  fi
fi
# ns per dispatch as launch_loop prints it ("... ns_per_dispatch=NNN ...")
one() { "$@" "$app" "$n" 1000 | grep -oE 'ns_per_dispatch=[0-9.]+' | cut -d= -f2; }
traced() { # LIB [VAR=VALUE...]
  rm -rf "$dir/logs" && mkdir -p "$dir/logs"
  one env OPENCL_LAYERS="$1" HUBPROF_OUTPUT_DIR="$dir/logs" HUBPROF_MODE=trace "${@:2}"
}
merged() { # seconds per million dispatches to merge this round's log into rocpd (trace's exit work)
  local s e
  s=$(date +%s%N)
  "$B/hubprof" merge -q -f -o "$dir/merged.db" "$dir"/logs/*.log >/dev/null
  e=$(date +%s%N)
  awk -v t=$((e - s)) -v n="$n" 'BEGIN { printf "%.3f\n", t / 1e9 * 1e6 / n }'
}
plain=() noop=() prev=() full=() merge=() clk=()
for ((r = 0; r < rounds; r++)); do
  plain+=("$(one env)")
  noop+=("$(one env OPENCL_LAYERS="$PWD/$B/libhubprof_collector_noop.so")")
  [ -n "$old" ] && prev+=("$(traced "$old")")
  full+=("$(traced "$PWD/$B/libhubprof_collector.so")")
  merge+=("$(merged)")
  clk+=("$(traced "$PWD/$B/libhubprof_collector.so" HUBPROF_TIMESTAMP=clock)") # the enqueue stamp's source
done
# median min max of the arguments
. bench/lib.sh # stats
read -r pm pl ph <<<"$(stats "${plain[@]}")"
row() { stats_row 46 "$pm" "$@"; } # LABEL VALUES...: against the plain runs' median pm
printf '%-46s %9s %17s %9s %8s\n' "launch_loop $n dispatches, $rounds rounds" "median" "min-max" "added" "slowdown"
row "no collector" "${plain[@]}"
row "no-op collector (layer, forwards only)" "${noop[@]}"
[ -n "$old" ] && row "collector before ($before, own-thread harvest)" "${prev[@]}"
row "collector now (background harvester)" "${full[@]}"
row "collector now, HUBPROF_TIMESTAMP=clock" "${clk[@]}"
diffs=() # paired: the default stamp (rdtsc where the clocksource is tsc) minus clock_gettime, per round
for ((r = 0; r < rounds; r++)); do diffs+=("$(awk -v a="${full[r]}" -v b="${clk[r]}" 'BEGIN { print a - b }')"); done
read -r m l h <<<"$(stats "${diffs[@]}")"
printf '%-46s %9.1f %17s\n' "default stamp minus clock_gettime, per round" "$m" "$l..$h"
paired() { # LABEL A[] B[] (names): per round A minus B, median and min..max
  local -n a=$2 b=$3
  local d=() k m l h
  for ((k = 0; k < rounds; k++)); do d+=("$(awk -v x="${a[k]}" -v y="${b[k]}" 'BEGIN { print x - y }')"); done
  read -r m l h <<<"$(stats "${d[@]}")"
  printf '%-46s %9.1f %17s\n' "$1" "$m" "$l..$h"
}
paired "ADDED: collector minus no-op, per round" full noop
paired "ADDED, HUBPROF_TIMESTAMP=clock, per round" clk noop
read -r m l h <<<"$(stats $(printf '%s\n' "${merge[@]}" | awk '{ print $1 * 1000 }'))"
printf '%-46s %9.1f %17s   (ms per million dispatches = ns per dispatch)\n' "exit merge into rocpd, ms per 1 M dispatches" "$m" "$l-$h"
if [ -n "$old" ]; then # paired: now minus before within each round (the two ran back to back)
  diffs=()
  for ((r = 0; r < rounds; r++)); do diffs+=("$(awk -v a="${full[r]}" -v b="${prev[r]}" 'BEGIN { print a - b }')"); done
  read -r m l h <<<"$(stats "${diffs[@]}")"
  printf '%-46s %9.1f %17s\n' "now minus before, per round" "$m" "$l..$h"
fi
# CPU time per dispatch, every thread of the process (the harvester's too), from perf's task-clock: the
# difference between a run of N+N/10 and one of N/10 dispatches, so setup cost cancels out. Less sensitive
# than wall time to other processes waiting for the same cores; skipped without perf.
if perf stat -x, -e task-clock true >/dev/null 2>&1; then
  small=$((n / 10))
  cpu() { # ENV...: ns of CPU per dispatch
    local a b
    rm -rf "$dir/logs" && mkdir -p "$dir/logs"
    a=$(env "$@" perf stat -x, -e task-clock "$app" "$small" 1000 2>&1 >/dev/null | grep task-clock | cut -d, -f1)
    rm -rf "$dir/logs" && mkdir -p "$dir/logs"
    b=$(env "$@" perf stat -x, -e task-clock "$app" $((n + small)) 1000 2>&1 >/dev/null | grep task-clock |
      cut -d, -f1)
    awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.1f\n", (b - a) * 1e6 / n }'
  }
  cplain=() cnoop=() cprev=() cfull=() cdiff=()
  lay=(OPENCL_LAYERS="$PWD/$B/libhubprof_collector.so" HUBPROF_OUTPUT_DIR="$dir/logs" HUBPROF_MODE=trace)
  for ((r = 0; r < rounds; r++)); do
    cplain+=("$(cpu)")
    cnoop+=("$(cpu OPENCL_LAYERS="$PWD/$B/libhubprof_collector_noop.so")")
    [ -n "$old" ] && cprev+=("$(cpu OPENCL_LAYERS="$old" HUBPROF_OUTPUT_DIR="$dir/logs" HUBPROF_MODE=trace)")
    cfull+=("$(cpu "${lay[@]}")")
    [ -n "$old" ] && cdiff+=("$(awk -v a="${cfull[r]}" -v b="${cprev[r]}" 'BEGIN { print a - b }')")
  done
  read -r pm pl ph <<<"$(stats "${cplain[@]}")"
  printf '\n%-46s %9s %17s %9s %8s\n' "CPU ns per dispatch (task-clock, all threads)" "median" "min-max" "added" "ratio"
  row "no collector" "${cplain[@]}"
  row "no-op collector (layer, forwards only)" "${cnoop[@]}"
  [ -n "$old" ] && row "collector before ($before, own-thread harvest)" "${cprev[@]}"
  row "collector now (background harvester)" "${cfull[@]}"
  if [ -n "$old" ]; then
    read -r m l h <<<"$(stats "${cdiff[@]}")"
    printf '%-46s %9.1f %17s\n' "now minus before, per round" "$m" "$l..$h"
  fi
fi
echo "ns per dispatch; added = median minus the no-collector median (for scale: rocprofv3 24.5x, LTTng 3.8x on a HIP launch loop)"
