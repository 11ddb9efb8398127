#!/usr/bin/env bash
# `hubprof merge DIR -o run.parquet` over folders of 16, 32 and 64 rank stores of D dispatches each (rocpd, the
# rank stores' default format), made with the hub API (examples/gen_logs): wall time and peak memory (max RSS,
# /usr/bin/time) per size, interleaved rounds, median and min-max (bench/lib.sh). Memory that stays flat as the
# inputs grow is the claim (docs/cluster.md).
# usage: bench_cluster.sh DIR [DISPATCHES [ROUNDS [SIZES]]]   (defaults 100000, 3, "16 32 64")
# CLUSTER_SPLIT=1: DISPATCHES is the total, split evenly over the stores (same rows for every size, so
# what changes with the size is the number of inputs alone).
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start "${1:?usage: bench_cluster.sh DIR [DISPATCHES [ROUNDS [SIZES]]]}"
disp=${2:-100000}
rounds=${3:-3}
sizes=${4:-16 32 64}
split=${CLUSTER_SPLIT:-0}
per() { if [ "$split" = 1 ]; then echo $((disp / $1)); else echo "$disp"; fi; }
for n in $sizes; do
  if [ ! -d "$dir/ranks$n" ]; then
    mkdir -p "$dir/ranks$n"
    "$B/examples/gen_logs" "$dir/ranks$n" "$n" "$(per "$n")" 0 1 rocpd >/dev/null
  fi
done
declare -A secs mem
for r in $(seq "$rounds"); do # interleaved: every size once per round
  for n in $sizes; do
    rm -rf "$dir/out.parquet"
    /usr/bin/time -f "%e %M" -o "$dir/time" "$B/hubprof" merge -q -o "$dir/out.parquet" "$dir/ranks$n"
    read -r s m <"$dir/time"
    secs[$n]="${secs[$n]:-} $s"
    mem[$n]="${mem[$n]:-} $((m / 1024))"
  done
done
echo "inputs  dispatches  time s (median min max)  peak RSS MiB (median min max)"
for n in $sizes; do
  # shellcheck disable=SC2086
  printf "%6d  %10d  %-23s  %s\n" "$n" "$((n * $(per "$n")))" "$(stats ${secs[$n]})" "$(stats ${mem[$n]})"
done
echo "load at the end: $(bench_load)"
