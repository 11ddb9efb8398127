#!/usr/bin/env bash
# `hubprof analyze` on a 1 M-dispatch store with 4 counters per dispatch in each format (default view:
# top kernels with counters and the metrics computable from them; and --by dispatch as CSV), against
# DuckDB computing calls, mean time and mean counters per kernel on the same Parquet files; best of R.
# usage: bench_analyze1m.sh DIR [NDISP [ROUNDS]]
# SPDX-License-Identifier: MIT
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: bench_analyze1m.sh DIR [NDISP [ROUNDS]]}
n=${2:-1000000}
rounds=${3:-3}
B=build
mkdir -p "$dir"
if [ ! -e "$dir/s.parquet" ]; then
  rm -rf "$dir/logs"
  "$B/examples/gen_logs" "$dir/logs" 1 "$n" 4 2
  cp "$dir"/logs/*.log "$dir/s.log"
  "$B/hubprof" convert -q -f "$dir/s.log" -o "$dir/s.db" --format rocpd
  "$B/hubprof" convert -q -f "$dir/s.log" -o "$dir/s.parquet" --format parquet
fi
best() { # best wall time of a command, seconds
  local b=""
  for ((r = 0; r < rounds; r++)); do
    local s e
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s.%N)
    b=$(awk -v b="$b" -v t="$(awk -v s="$s" -v e="$e" 'BEGIN{print e-s}')" 'BEGIN{print (b=="" || t<b) ? t : b}')
  done
  echo "$b"
}
duck=$(best python3 - "$dir/s.parquet" <<'PY'
import sys, duckdb
s = sys.argv[1]
duckdb.connect().execute(f"""
  SELECT k.name, count(*), avg(d.end_ns - d.start_ns), avg(v.value)
  FROM read_parquet('{s}/dispatch/*.parquet') d
  JOIN read_parquet('{s}/kernel_symbol/*.parquet') k ON k.id = d.kernel_id
  JOIN read_parquet('{s}/counter_value/*.parquet') v ON v.dispatch_id = d.id
  GROUP BY k.name, v.counter_id""").fetchall()
PY
)
printf '%-52s %8.3f s\n' "DuckDB per kernel+counter on Parquet (baseline)" "$duck"
for f in log db parquet; do
  t=$(best "$B/hubprof" analyze "$dir/s.$f")
  printf '%-52s %8.3f s  %.2fx DuckDB\n' "hubprof analyze (counters, metrics), $f" "$t" "$(awk -v a="$t" -v b="$duck" 'BEGIN{print a/b}')"
done
for f in log db parquet; do
  t=$(best "$B/hubprof" analyze --by dispatch --format csv "$dir/s.$f")
  printf '%-52s %8.3f s\n' "hubprof analyze --by dispatch --format csv, $f" "$t"
done
