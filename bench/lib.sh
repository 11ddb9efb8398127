# Shared by the benchmark scripts (source it by its path, from anywhere): the common start of a script (its
# working directory, environment and scratch folder), an older commit's tree or collector built beside this
# one, a run of the launch-bound loop, a command's wall time, the machine's load, and the figures they print
# from a list of measurements.
# SPDX-License-Identifier: MIT
BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_CALLER_DIR=$PWD # where the script was started: a relative DIR argument is relative to it
# bench_env [KEEP...]: the repository root as working directory; B the build folder (default build), COLLECTOR
# its collector and LAUNCH_LOOP the launch-bound loop (examples/ocl/launch_loop); the caller's environment
# cleared the way the tests clear it (tests/lib.sh hp_clean_env: every HUBPROF_* variable but the KEEP names,
# OPENCL_LAYERS, LD_PRELOAD and NVTX_INJECTION64_PATH), so that nothing of the caller's changes what is measured.
bench_env() {
  cd "$BENCH_ROOT" || return 1
  B=${B:-build}
  COLLECTOR=$BENCH_ROOT/$B/libhubprof_collector.so
  LAUNCH_LOOP=$B/examples/ocl/launch_loop
  . "$BENCH_ROOT/tests/lib.sh"
  hp_clean_env "$@"
}
# bench_start [DIR]: the common start of a script: `set -euo pipefail`, bench_env, bench_scratch DIR
bench_start() {
  set -euo pipefail
  bench_env
  bench_scratch "${1:-}"
}
# bench_scratch [DIR]: $dir, the scratch folder (an absolute path): DIR when given (created, kept after), else a
# temporary folder removed at exit
bench_scratch() {
  if [ -n "${1:-}" ]; then
    case $1 in /*) dir=$1 ;; *) dir=$BENCH_CALLER_DIR/$1 ;; esac
    mkdir -p "$dir"
  else
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
  fi
}
# bench_load: the machine's load now, "L1 L5 L15 (1, 5, 15 min), N cores"
bench_load() { echo "$(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min), $(nproc) cores"; }
# bench_tree COMMIT FOLDER [TARGET...]: the tree of git commit COMMIT extracted into FOLDER (emptied first) and
# built there by `make -j2 TARGET...` (default all) with the same compiler flags, make's output in FOLDER.build;
# fails when the commit cannot be extracted or does not build
bench_tree() {
  local commit=$1 folder=$2
  shift 2
  rm -rf "$folder" && mkdir -p "$folder" || return 1
  git -C "$BENCH_ROOT" archive "$commit" | tar -x -C "$folder" &&
    make --no-print-directory -C "$folder" -j2 "${@:-all}" >"$folder.build" 2>&1
}
# bench_old_collector NAME COMMIT: the collector of git commit COMMIT built in $dir/old with the same compiler
# flags, its path on stdout; nothing ("none", or a note on stderr, from NAME, when it does not build)
bench_old_collector() {
  [ "$2" = none ] && return 0
  if bench_tree "$2" "$dir/old" build/libhubprof_collector.so; then
    echo "$dir/old/build/libhubprof_collector.so"
  else
    echo "$1: cannot build the collector of $2 (skipped): $(tail -n 3 "$dir/old.build" 2>/dev/null)" >&2
  fi
}
# bench_wall_ms CMD...: the wall milliseconds of one run of CMD (its output dropped); when CMD fails, its
# exit status and the end of its error output on stderr, and failure
bench_wall_ms() {
  local s e rc=0
  s=$(date +%s%N)
  "$@" >/dev/null 2>"$dir/wall.err" || rc=$?
  e=$(date +%s%N)
  if [ $rc -ne 0 ]; then
    echo "failed (exit $rc): $*: $(tail -n 3 "$dir/wall.err")" >&2
    return 1
  fi
  awk -v s="$s" -v e="$e" 'BEGIN { printf "%.1f\n", (e - s) / 1e6 }'
}
# launch_ns CMD...: host ns per dispatch of one run of LAUNCH_LOOP with $n dispatches, a clFinish every 1000,
# run by CMD (e.g. env VAR=VALUE ...)
launch_ns() { "$@" "$LAUNCH_LOOP" "$n" 1000 | grep -oE 'ns_per_dispatch=[0-9.]+' | cut -d= -f2; }
# launch_traced LIB VAR=VALUE...: the same traced by the collector LIB into a new $dir/logs
launch_traced() {
  local lib=$1
  shift
  rm -rf "$dir/logs" && mkdir -p "$dir/logs"
  launch_ns env OPENCL_LAYERS="$lib" HUBPROF_OUTPUT_DIR="$dir/logs" HUBPROF_MODE=trace "$@"
}
# stats VALUES...: "median min max" of the values, one decimal each
stats() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {
  m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f %.1f %.1f\n", m, v[1], v[NR] }'; }
# stats_row WIDTH BASE LABEL VALUES...: LABEL padded to WIDTH, the values' median, min-max, the median minus
# BASE and the median over BASE (a baseline measured in the same rounds)
stats_row() {
  local width=$1 base=$2 label=$3 m l h
  shift 3
  read -r m l h <<<"$(stats "$@")"
  awk -v w="$width" -v L="$label" -v m="$m" -v l="$l" -v h="$h" -v p="$base" \
    'BEGIN { printf "%-" w "s %9.1f %17s %9.1f %7.2fx\n", L, m, l "-" h, m - p, m / p }'
}
