#!/usr/bin/env bash
# Dispatch batch records (docs/formats/log.md): a log of N collector-like dispatch rows (bench/gen_dispatch_log)
# written by this build and by an older one, its bytes per row, and the time of `hubprof merge` of it into rocpd
# and Parquet, each side with its own hubprof; REPEATS interleaved rounds, median and min-max in ms per million
# rows. usage: bench_dbatch.sh OLD_BUILD_DIR [N [REPEATS]]   (OLD_BUILD_DIR: a build folder of the older tree
# holding hubprof and bench/gen_dispatch_log, e.g. made in a `git worktree add --detach` of the older commit)
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
old=$(cd "$1" && pwd)
bench_start
n=${2:-200000}
reps=${3:-5}
declare -A bin=([old]=$old [new]=$BENCH_ROOT/$B)
for side in old new; do
  "${bin[$side]}/bench/gen_dispatch_log" "$dir/$side.log" "$n"
  bytes=$(du --block-size=1 "$dir/$side.log" | cut -f1) # holes punched at close: the data written
  printf '%-4s log of %d rows: %d bytes allocated, %.1f bytes/row\n' "$side" "$n" "$bytes" \
    "$(awk -v b="$bytes" -v n="$n" 'BEGIN { print (b - 4096) / n }')"
done
declare -A t
for ((r = 0; r < reps; r++)); do
  for side in old new; do
    for fmt in rocpd parquet; do
      rm -rf "$dir/out.$fmt"
      s=$(date +%s%N)
      "${bin[$side]}/hubprof" merge -q -F "$fmt" -o "$dir/out.$fmt" "$dir/$side.log"
      e=$(date +%s%N)
      t[$side.$fmt]+="$(awk -v a="$s" -v b="$e" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / 1e6 / n * 1e6 }') "
    done
  done
done
echo "load at the end: $(bench_load)"
printf '%-26s %8s %8s %8s   (ms per million rows, %d rounds)\n' "hubprof merge" median min max "$reps"
for fmt in rocpd parquet; do
  for side in old new; do
    # shellcheck disable=SC2086
    printf '%-26s %8s %8s %8s\n' "$side log -> $fmt" $(stats ${t[$side.$fmt]})
  done
done
