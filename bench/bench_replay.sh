#!/usr/bin/env bash
# Kernel replay benchmarks (docs/benchmarks.md), each figure printed with the command that produced it:
#  (a) per-dispatch cost of kernel replay beyond the passes themselves (a loop of tiny dispatches profiled
#      with 1, 3 and 9 passes against the same loop unprofiled), and restore bandwidth against memcpy of the
#      same bytes measured in the same run, for both kinds of shadow storage;
#  (b) wall time of a many-pass profile of a program whose start-up dominates (slow_start: 0.5 s of
#      initialisation, then a few kernels): kernel replay against application replay.
# This machine has 9 software perf events, so 9 passes is the most a plan can have here (one counter per
# pass); 13-pass figures are extrapolated linearly from the measured 1/3/9-pass ones and marked as such.
# usage: bench_replay.sh [DIR]   (needs `make all` and build/bench/bench_replay; DIR: scratch, default a temp dir)
# SPDX-License-Identifier: MIT
set -euo pipefail
cd "$(dirname "$0")/.."
B=$PWD/build
HP=$B/hubprof
EX=$B/examples/ocl
dir=${1:-$(mktemp -d)}
[ -n "${1:-}" ] && mkdir -p "$dir" || trap 'rm -rf "$dir"' EXIT
N=${BENCH_REPLAY_N:-2000}      # dispatches of the launch loop
MB=${BENCH_REPLAY_MB:-64}      # buffer of the restore-bandwidth run
REPEATS=${BENCH_REPLAY_REPEATS:-3}
ALL=task-clock,cpu-clock,context-switches,cpu-migrations,page-faults,minor-faults,major-faults,alignment-faults,emulation-faults
counters() { echo "$ALL" | cut -d, -f1-"$1"; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.${2:-1}f\", $1 }"; } # EXPR [DECIMALS]
best() { sort -g | head -n 1; }
unset HUBPROF_DEBUG HUBPROF_SHADOW
cd "$dir"

# cost_per_dispatch LABEL N ENV...: launch_loop N 1 plain and profiled with 1, 3, 9 passes
ns_of() { sed -nE 's/.*ns_per_dispatch=([0-9.]+).*/\1/p'; }
cost_per_dispatch() {
  local label=$1 n=$2
  shift 2
  echo "== (a) kernel replay cost per dispatch, $label: launch_loop $n 1 (clFinish after every dispatch, as replay does)"
  local plain p cmd own
  plain=$(for _ in $(seq "$REPEATS"); do env "$@" "$EX/launch_loop" "$n" 1 | ns_of; done | best)
  echo "$ ${*:+$* }build/examples/ocl/launch_loop $n 1"
  echo "    unprofiled: $plain ns per dispatch (best of $REPEATS)"
  declare -A tp
  for p in 1 3 9; do
    cmd=("$HP" profile -q -f --counters "$(counters $p)" --max-counters-per-pass 1 -o loop.db -- "$EX/launch_loop" "$n" 1)
    tp[$p]=$(for _ in $(seq "$REPEATS"); do env "$@" "${cmd[@]}" | ns_of; done | best)
    own=$(env "$@" HUBPROF_DEBUG=1 "${cmd[@]}" 2>&1 >/dev/null | grep -E 'beyond the passes|per dispatch:' |
      sed -nE 's/.*beyond the passes ([0-9.]+) us per dispatch.*/outside the passes \1 us/p; s/.*per dispatch: (.*)/\1/p' |
      paste -sd ';' -)
    echo "$ ${*:+$* }hubprof profile --counters $(counters $p) --max-counters-per-pass 1 -- launch_loop $n 1"
    echo "    $p pass(es): ${tp[$p]} ns per dispatch = $(calc "${tp[$p]} / $plain") x unprofiled; beyond $p x the unprofiled dispatch: $(calc "${tp[$p]} - $p * $plain") ns"
    echo "    collector's own split (HUBPROF_DEBUG=1): $own"
  done
  local slope fixed
  slope=$(calc "(${tp[9]} - ${tp[3]}) / 6")
  fixed=$(calc "${tp[3]} - 3 * $slope")
  echo "    per extra pass: $slope ns (slope 3 -> 9 passes); fixed cost per dispatch: $fixed ns;" \
    "13 passes (extrapolated): $(calc "$fixed + 13 * $slope") ns per dispatch"
  echo
}
cost_per_dispatch "PoCL pthread device (default)" "$N"
cost_per_dispatch "PoCL basic device (synchronous, launch ~0.4 us)" "$((N * 10))" POCL_DEVICES=basic

echo "== (a) restore bandwidth vs memcpy: inplace_update on one $MB MiB buffer, 8 dispatches, 3 passes"
ints=$((MB * 262144))
bytes=$((MB * 1048576))
for kind in host device; do
  out=$(HUBPROF_DEBUG=1 HUBPROF_SHADOW=$kind $HP profile -q -f --counters task-clock,page-faults,context-switches \
    --max-counters-per-pass 1 -o bw.db -- "$EX/inplace_update" $ints 8 2>&1 >/dev/null)
  save=$(sed -nE 's/.*saved [0-9]+ bytes in [0-9.]+ ms \(([0-9.]+) GB\/s\).*/\1/p' <<<"$out")
  rest=$(sed -nE 's/.*restored [0-9]+ bytes in [0-9]+ copies, [0-9.]+ ms \(([0-9.]+) GB\/s\).*/\1/p' <<<"$out")
  sbest=$(sed -nE 's/.*best of 1 MiB or more: save ([0-9.]+) GB\/s.*/\1/p' <<<"$out")
  rbest=$(sed -nE 's/.*best of 1 MiB or more: .*restore ([0-9.]+) GB\/s.*/\1/p' <<<"$out")
  echo "$ HUBPROF_DEBUG=1 HUBPROF_SHADOW=$kind hubprof profile --counters task-clock,page-faults,context-switches --max-counters-per-pass 1 -- inplace_update $ints 8"
  echo "    shadow=$kind: restore best $rbest GB/s, mean $rest GB/s; save best $sbest GB/s, mean $save GB/s (with the shadow's one-time allocation)"
  eval "rest_$kind=$rbest"
done
mc=$("$B/bench/bench_replay" memcpy "$bytes" 10)
gb=$(sed -nE 's/.*gbps=([0-9.]+).*/\1/p' <<<"$mc")
echo "$ build/bench/bench_replay memcpy $bytes 10"
echo "    $mc (best of 10)"
echo "    best restore / best memcpy: host $(calc "100 * $rest_host / $gb" 0)%, device $(calc "100 * $rest_device / $gb" 0)% (goal >= 70%)"

echo
echo "== (b) many passes of a program whose start-up dominates: slow_start 500 4 (0.5 s start-up, 4 kernels)"
wall() { # CMD...: best wall seconds of REPEATS runs
  for _ in $(seq "$REPEATS"); do
    local t0 t1
    t0=$(now)
    "$@" >/dev/null 2>&1
    t1=$(now)
    calc "$t1 - $t0" 3
    echo
  done | best
}
t_plain=$(wall "$EX/slow_start" 500 4)
echo "$ build/examples/ocl/slow_start 500 4      -> $t_plain s"
declare -A tk ta
for p in 1 3 9; do
  tk[$p]=$(wall "$HP" profile -q -f --counters "$(counters $p)" --max-counters-per-pass 1 -o k.db -- "$EX/slow_start" 500 4)
  ta[$p]=$(wall "$HP" profile -q -f --replay application --counters "$(counters $p)" --max-counters-per-pass 1 -o a.db -- "$EX/slow_start" 500 4)
  echo "$ hubprof profile [--replay application] --counters <$p counters> --max-counters-per-pass 1 -- slow_start 500 4"
  echo "    $p pass(es): kernel replay ${tk[$p]} s, application replay ${ta[$p]} s: $(calc "${ta[$p]} / ${tk[$p]}")x"
done
k13=$(calc "${tk[9]} + 4 * (${tk[9]} - ${tk[3]}) / 6" 3)
a13=$(calc "${ta[9]} + 4 * (${ta[9]} - ${ta[3]}) / 6" 3)
echo "    13 passes (extrapolated from 3 and 9): kernel replay $k13 s, application replay $a13 s: $(calc "$a13 / $k13")x (goal >= 5x)"

# (c) write-tracked kernel replay: bench/bench_wtrack.sh (also run alone)
bash "$(dirname "$B")/bench/bench_wtrack.sh" "$dir/wtrack"
