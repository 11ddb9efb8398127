#!/usr/bin/env bash
# Cost of --api on the launch-bound loop (examples/ocl/launch_loop, PoCL's POCL_DEVICES=basic): host time per
# dispatch without the collector, with the collector of the base commit BASE (before --api existed; built from
# git into a temporary folder), with this tree's collector without --api, and with HUBPROF_API=1 (every
# clEnqueueNDRangeKernel also written as an "api" region), interleaved in one run: median and min-max of R
# rounds, and "without --api minus base" paired per round (the claim: unchanged).
# usage: bench_api.sh [N [ROUNDS [BASE]]]   BASE: a git commit (default 41274aa), "none" to skip it
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start
n=${1:-200000}
rounds=${2:-7}
base=${3:-41274aa}
export POCL_DEVICES=basic
old=$(bench_old_collector bench_api "$base")
traced() { launch_traced "$1" HUBPROF_API="$2"; } # LIB API
plain=() prev=() now=() api=()
for ((r = 0; r < rounds; r++)); do
  plain+=("$(launch_ns env)")
  [ -n "$old" ] && prev+=("$(traced "$old" 0)")
  now+=("$(traced "$COLLECTOR" 0)")
  api+=("$(traced "$COLLECTOR" 1)")
done
read -r pm pl ph <<<"$(stats "${plain[@]}")"
row() { stats_row 40 "$pm" "$@"; } # LABEL VALUES...: against the plain runs' median pm
printf '%-40s %9s %17s %9s %8s\n' "launch_loop $n dispatches, $rounds rounds" "median" "min-max" "added" "slowdown"
row "no collector" "${plain[@]}"
[ -n "$old" ] && row "collector of $base (before --api)" "${prev[@]}"
row "collector now, without --api" "${now[@]}"
row "collector now, --api" "${api[@]}"
if [ -n "$old" ]; then # paired: now (no --api) minus base within each round
  diffs=()
  for ((r = 0; r < rounds; r++)); do diffs+=("$(awk -v a="${now[r]}" -v b="${prev[r]}" 'BEGIN { print a - b }')"); done
  read -r m l h <<<"$(stats "${diffs[@]}")"
  printf '%-40s %9.1f %17s\n' "without --api minus base, per round" "$m" "$l..$h"
fi
echo "machine load: $(bench_load)"
