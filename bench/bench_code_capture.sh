#!/usr/bin/env bash
# What tracing costs the application's program builds, and what the store keeps of its code (issue 28): an
# OpenCL program run plain, traced (program identities only) and traced with --code (sources and binaries),
# each on an empty PoCL kernel cache, interleaved: kernels PoCL compiled (shared objects in its cache), wall
# time of the run and store size; median and min-max over ROUNDS.
# usage: bench_code_capture.sh [ROUNDS [APP ARGS...]]   (default: 5 rounds of examples/ocl/same_name 3 5;
# needs `make all`)
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start
rounds=${1:-5}
shift || true
[ $# -gt 0 ] || set -- "$PWD/$B/examples/ocl/same_name" 3 5
HP=$PWD/$B/hubprof
declare -A so ms kb
for r in $(seq "$rounds"); do
  for mode in plain trace code; do
    rm -rf "$dir/cache" "$dir/out.db" && mkdir -p "$dir/cache"
    case $mode in
    plain) cmd=("$@") ;;
    trace) cmd=("$HP" trace -q -o "$dir/out.db" -- "$@") ;;
    code) cmd=("$HP" trace -q --code -o "$dir/out.db" -- "$@") ;;
    esac
    t=$(POCL_CACHE_DIR=$dir/cache bench_wall_ms "${cmd[@]}") || exit 1
    ms[$mode]+="$t "
    so[$mode]+="$(find "$dir/cache" -name '*.so' | wc -l) "
    kb[$mode]+="$(if [ -f "$dir/out.db" ]; then du -k "$dir/out.db" | cut -f1; else echo 0; fi) "
  done
done
echo "app: $* ; $rounds rounds, interleaved; load $(bench_load)"
printf '%-28s %22s %24s %18s\n' "" "kernels compiled" "wall ms" "store KiB"
for mode in plain trace code; do
  label=$mode
  [ $mode = trace ] && label="trace (default)"
  [ $mode = code ] && label="trace --code"
  # shellcheck disable=SC2086
  read -r a al ah <<<"$(stats ${so[$mode]})"
  read -r b bl bh <<<"$(stats ${ms[$mode]})"
  read -r c cl ch <<<"$(stats ${kb[$mode]})"
  printf '%-28s %6.0f (%3.0f-%3.0f) %10.1f (%s-%s) %8.0f (%s-%s)\n' "$label" "$a" "$al" "$ah" "$b" "$bl" "$bh" "$c" "$cl" "$ch"
done
