#!/usr/bin/env bash
# Cost of dispatch selection on the lite trace's fast path: host time per dispatch of the launch-bound loop
# examples/ocl/launch_loop (kernel `tiny`, PoCL's POCL_DEVICES=basic) without the collector, traced with no
# filter (the baseline: one relaxed load added), with every dispatch selected by a kernel regex (the cached
# per-name answer and a range check: HUBPROF_KERNEL=tiny HUBPROF_DISPATCH_RANGE=1-), and with none selected
# (HUBPROF_KERNEL_EXCLUDE=tiny: looked up, counted, forwarded), interleaved: median and min-max of R rounds.
# usage: bench_select.sh [N [ROUNDS]]
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start
n=${1:-200000}
rounds=${2:-7}
export POCL_DEVICES=basic
traced() { launch_traced "$COLLECTOR" "$@"; } # VAR=VALUE...
plain=() all=() sel=() none=()
for ((r = 0; r < rounds; r++)); do
  plain+=("$(launch_ns env)")
  all+=("$(traced)")
  sel+=("$(traced HUBPROF_KERNEL=tiny HUBPROF_DISPATCH_RANGE=1-)")
  none+=("$(traced HUBPROF_KERNEL_EXCLUDE=tiny)")
done
read -r base _ _ <<<"$(stats "${all[@]}")"
row() { # LABEL VALUES...
  local label=$1
  shift
  read -r m l h <<<"$(stats "$@")"
  awk -v L="$label" -v m="$m" -v l="$l" -v h="$h" -v b="$base" \
    'BEGIN { printf "%-52s %9.1f %17s %+10.1f\n", L, m, l "-" h, m - b }'
}
printf '%-52s %9s %17s %10s\n' "launch_loop $n dispatches, $rounds rounds (ns/dispatch)" "median" "min-max" \
  "vs trace"
row "no collector" "${plain[@]}"
row "trace, no filter (baseline)" "${all[@]}"
row "trace, every dispatch selected (--kernel, range 1-)" "${sel[@]}"
row "trace, none selected (--kernel-exclude: forwarded)" "${none[@]}"
echo "machine load: $(bench_load)"
