#!/usr/bin/env bash
# Kernel replay's cost per pass, two builds compared (docs/replay.md "Fixed cost per pass"): the launch-bound
# loop on PoCL's basic device, unprofiled and profiled with 1, 3 and 9 passes (one software counter each), by
# build A and build B one after the other in each of R interleaved rounds; per build and pass count, the
# median (min-max) over the rounds of ns per dispatch, ns added per dispatch per pass, and the collector's
# own split (HUBPROF_DEBUG=1: drain, save, restores, log rows, per pass, counters start+stop, in µs).
# usage: bench_replay_ab.sh BUILD_A BUILD_B   (two `make all` build folders, e.g. of two commits;
#        N dispatches (default 10000), R rounds (default 5) from the environment)
# SPDX-License-Identifier: MIT
set -euo pipefail
[ $# -eq 2 ] && [ -x "$1/hubprof" ] && [ -x "$2/hubprof" ] || {
  echo "usage: bench_replay_ab.sh BUILD_A BUILD_B (folders holding hubprof and examples/ocl/launch_loop)" >&2
  exit 2
}
. "$(dirname "$0")/lib.sh" # stats
A=$(cd "$1" && pwd)
B=$(cd "$2" && pwd)
N=${N:-10000}
R=${R:-5}
ALL=task-clock,cpu-clock,context-switches,cpu-migrations,page-faults,minor-faults,major-faults,alignment-faults,emulation-faults
. "$BENCH_ROOT/tests/lib.sh"
hp_clean_env
bench_scratch
cd "$dir"
export POCL_DEVICES=basic
declare -A V
field() { sed -nE "s/.*$1 ([0-9.]+) us.*/\\1/p"; } # NAME: the µs figure after NAME in the split line
echo "load at the start: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min), $(nproc) cores; launch_loop $N 1, $R rounds"
for _ in $(seq "$R"); do
  for b in A B; do
    H=$A
    [ $b = B ] && H=$B
    p0=$("$H/examples/ocl/launch_loop" "$N" 1 | sed -nE 's/.*ns_per_dispatch=([0-9.]+).*/\1/p')
    V[$b, 0]+="$p0 "
    for P in 1 3 9; do
      out=$(HUBPROF_DEBUG=1 "$H/hubprof" profile -q -f --counters "$(echo $ALL | cut -d, -f1-$P)" \
        --max-counters-per-pass 1 -o ab.db -- "$H/examples/ocl/launch_loop" "$N" 1 2>&1)
      t=$(sed -nE 's/.*ns_per_dispatch=([0-9.]+).*/\1/p' <<<"$out")
      line=$(grep 'per dispatch: drain' <<<"$out")
      V[$b, $P]+="$t "
      V[$b, $P, added]+="$(awk -v t="$t" -v p="$p0" -v P=$P 'BEGIN { printf "%.0f", (t - p) / P }') "
      V[$b, $P, drain]+="$(field drain <<<"$line") "
      V[$b, $P, save]+="$(field save <<<"$line") "
      V[$b, $P, restores]+="$(field restores <<<"$line") "
      V[$b, $P, log]+="$(field 'log rows' <<<"$line") "
      V[$b, $P, pass]+="$(field 'per pass' <<<"$line") "
      V[$b, $P, counters]+="$(field 'counters start\+stop' <<<"$line") "
    done
  done
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
for b in A B; do
  H=$A
  [ $b = B ] && H=$B
  echo "== $b: $H"
  echo "    unprofiled: $(stats ${V[$b, 0]}) ns per dispatch (median min max)"
  for P in 1 3 9; do
    echo "    $P pass(es): $(stats ${V[$b, $P]}) ns per dispatch; added per dispatch per pass $(stats ${V[$b, $P, added]}) ns"
    s="      split (us): drain $(stats ${V[$b, $P, drain]}); save $(stats ${V[$b, $P, save]});"
    s+=" restores $(stats ${V[$b, $P, restores]}); log rows $(stats ${V[$b, $P, log]});"
    echo "$s per pass $(stats ${V[$b, $P, pass]}), of which counters $(stats ${V[$b, $P, counters]})"
  done
done
