#!/usr/bin/env bash
# Merge of two rocpd files (issue 31): `hubprof merge` against the sqlite3 CLI's ATTACH + INSERT…SELECT (the way
# ROCm's rocpd merge copies each file's tables), the same inputs, interleaved (hubprof reading each input on a
# thread per CPU, and on one: hubprof-1); and, with a log directory, the
# merge of logs into rocpd by this tree and by a baseline build. Prints wall ms, CPU ms (user + sys) and peak RSS
# (`/usr/bin/time`) as median (min-max) per side, the ratio of medians, and the load before and after.
# SPDX-License-Identifier: MIT
# usage: bench_merge_rocpd.sh DISPATCHES [ROUNDS] [DIR]   (environment: BASE=FOLDER a baseline tree already built
#   (FOLDER/build/hubprof, FOLDER/build/examples/gen_logs), adding the log merge of both builds and the
#   baseline's merge of the rocpd inputs (rocpd-base); ROCPD=0 leaves
#   out the rocpd inputs (the log merge alone); B the build folder)
# The two rocpd inputs are made by this tree from gen_logs' logs, DISPATCHES/2 each (2 processes each, 4 in all).
. "$(dirname "$0")/lib.sh"
bench_start "${3:-}"
total=${1:?usage: bench_merge_rocpd.sh DISPATCHES [ROUNDS] [DIR]}
rounds=${2:-5}
HP=$BENCH_ROOT/$B/hubprof
GEN=$BENCH_ROOT/$B/examples/gen_logs
command -v sqlite3 >/dev/null || { echo "bench_merge_rocpd: no sqlite3 CLI" >&2; exit 2; }
per=$((total / 4))
# two stores of two processes each, four different processes (gen_logs gives each run the same pids: two runs
# would make the same profile twice, whose second copy the merge drops as duplicates)
rm -rf "$dir/L" && "$GEN" "$dir/L" 4 "$per" >/dev/null
logs=("$dir"/L/*.log)
[ "${ROCPD:-1}" = 0 ] || "$HP" merge -q -f -o "$dir/a.db" "${logs[0]}" "${logs[1]}"
[ "${ROCPD:-1}" = 0 ] || "$HP" merge -q -f -o "$dir/b.db" "${logs[2]}" "${logs[3]}"
if [ -n "${BASE:-}" ]; then
  rm -rf "$dir/Lbase" && "$BASE/build/examples/gen_logs" "$dir/Lbase" 4 "$per" >/dev/null
  rm -rf "$dir/Lnow" && "$GEN" "$dir/Lnow" 4 "$per" >/dev/null
fi

# sqlite3: ATTACH each input, create its tables (rocpd's names are unique per file) and copy them, one
# transaction per input, synchronous off as ROCm's merge sets it for speed
attach_sql() {
  echo "PRAGMA synchronous=OFF; PRAGMA journal_mode=OFF;"
  for f in "$dir/a.db" "$dir/b.db"; do
    echo "ATTACH DATABASE '$f' AS src; BEGIN;"
    sqlite3 "$f" "SELECT sql || ';' FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    sqlite3 "$f" "SELECT 'INSERT INTO main.\"' || name || '\" SELECT * FROM src.\"' || name || '\";' FROM sqlite_master
      WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    echo "COMMIT; DETACH DATABASE src;"
  done
}
[ "${ROCPD:-1}" = 0 ] || attach_sql >"$dir/attach.sql"

declare -A W C R # per side: the rounds' wall ms, CPU ms, peak RSS KB
run() { # SIDE CMD...: one timed run
  local side=$1 t u s m
  shift
  rm -f "$dir/out.db"
  /usr/bin/time -f '%e %U %S %M' -o "$dir/time.txt" "$@" >/dev/null 2>"$dir/run.err" ||
    { echo "bench_merge_rocpd: $side failed: $(tail -n 3 "$dir/run.err")" >&2; exit 1; }
  read -r t u s m <"$dir/time.txt"
  W[$side]+="$(awk -v t="$t" 'BEGIN { printf "%.0f", t * 1000 }') "
  C[$side]+="$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.0f", (u + s) * 1000 }') "
  R[$side]+="$m "
}
sides=()
[ "${ROCPD:-1}" = 0 ] || sides+=(hubprof hubprof-1 sqlite3)
[ -n "${BASE:-}" ] && sides+=(logs-now logs-base)
[ -n "${BASE:-}" ] && [ "${ROCPD:-1}" != 0 ] && sides+=(rocpd-base) # the baseline's merge of the rocpd inputs
cmd() {
  case $1 in
  hubprof) echo "$HP merge -q -f -o $dir/out.db $dir/a.db $dir/b.db" ;;
  hubprof-1) echo "env HUBPROF_THREADS=1 $HP merge -q -f -o $dir/out.db $dir/a.db $dir/b.db" ;;
  sqlite3) echo "sqlite3 $dir/out.db -init $dir/attach.sql .quit" ;;
  logs-now) echo "$HP merge -q -f -o $dir/out.db $(echo "$dir"/Lnow/*.log)" ;;
  logs-base) echo "$BASE/build/hubprof merge -q -f -o $dir/out.db $(echo "$dir"/Lbase/*.log)" ;;
  rocpd-base) echo "$BASE/build/hubprof merge -q -f -o $dir/out.db $dir/a.db $dir/b.db" ;;
  esac
}
sizes=$([ "${ROCPD:-1}" = 0 ] || echo " ($(du -sh "$dir/a.db" | cut -f1) + $(du -sh "$dir/b.db" | cut -f1) of rocpd)")
echo "bench_merge_rocpd: $total dispatches$sizes, $rounds rounds; load at the start: $(bench_load)"
for ((r = 0; r < rounds; r++)); do
  order=("${sides[@]}")
  [ $((r % 2)) -eq 1 ] && mapfile -t order < <(printf '%s\n' "${sides[@]}" | tac) # alternate who goes first
  for s in "${order[@]}"; do
    # shellcheck disable=SC2046 # the command's words
    run "$s" $(cmd "$s")
  done
done
echo "load at the end: $(bench_load)"
printf '%-10s %26s %26s %26s\n' side "wall ms median (min-max)" "CPU ms median (min-max)" "peak RSS KB median (min-max)"
for s in "${sides[@]}"; do
  # shellcheck disable=SC2086 # the values
  printf '%-10s %26s %26s %26s\n' "$s" "$(stats ${W[$s]} | awk '{ printf "%s (%s-%s)", $1, $2, $3 }')" \
    "$(stats ${C[$s]} | awk '{ printf "%s (%s-%s)", $1, $2, $3 }')" "$(stats ${R[$s]} | awk '{ printf "%s (%s-%s)", $1, $2, $3 }')"
done
# shellcheck disable=SC2086 # the values
ratio() { awk -v a="$(stats $1 | cut -d' ' -f1)" -v b="$(stats $2 | cut -d' ' -f1)" 'BEGIN { printf "%.2fx", a / b }'; }
# shellcheck disable=SC2086
[ "${ROCPD:-1}" = 0 ] || echo "hubprof/sqlite3 (rocpd inputs): wall $(ratio "${W[hubprof]}" "${W[sqlite3]}"), CPU $(ratio "${C[hubprof]}" "${C[sqlite3]}"); one thread: wall $(ratio "${W[hubprof-1]}" "${W[sqlite3]}")"
[ -z "${BASE:-}" ] ||
  echo "logs-now/logs-base: wall $(ratio "${W[logs-now]}" "${W[logs-base]}"), CPU $(ratio "${C[logs-now]}" "${C[logs-base]}")"
# shellcheck disable=SC2086
[ -z "${BASE:-}" ] || [ "${ROCPD:-1}" = 0 ] ||
  echo "hubprof/rocpd-base (rocpd inputs): wall $(ratio "${W[hubprof]}" "${W[rocpd-base]}"), CPU $(ratio "${C[hubprof]}" "${C[rocpd-base]}")"
