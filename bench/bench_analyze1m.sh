#!/usr/bin/env bash
# `hubprof analyze` on a 1 M-dispatch store with 4 counters per dispatch in each format (default view:
# top kernels with counters and the metrics computable from them; and --by dispatch as CSV), against
# DuckDB computing calls, mean time and mean counters per kernel on the same Parquet files; ROUNDS interleaved
# rounds (each runs every case once), median and min-max in ms.
# usage: bench_analyze1m.sh DIR [NDISP [ROUNDS]]
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start "${1:?usage: bench_analyze1m.sh DIR [NDISP [ROUNDS]]}"
n=${2:-1000000}
rounds=${3:-3}
if [ ! -e "$dir/s.parquet" ]; then
  rm -rf "$dir/logs"
  "$B/examples/gen_logs" "$dir/logs" 1 "$n" 4 2
  cp "$dir"/logs/*.log "$dir/s.log"
  "$B/hubprof" convert -q -f "$dir/s.log" -o "$dir/s.db" --format rocpd
  "$B/hubprof" convert -q -f "$dir/s.log" -o "$dir/s.parquet" --format parquet
fi
cat >"$dir/duck.py" <<'PY'
import sys, duckdb
s = sys.argv[1]
duckdb.connect().execute(f"""
  SELECT k.name, count(*), avg(d.end_ns - d.start_ns), avg(v.value)
  FROM read_parquet('{s}/dispatch/*.parquet') d
  JOIN read_parquet('{s}/kernel_symbol/*.parquet') k ON k.id = d.kernel_id
  JOIN read_parquet('{s}/counter_value/*.parquet') v ON v.dispatch_id = d.id
  GROUP BY k.name, v.counter_id""").fetchall()
PY
ms() { # CMD...: wall milliseconds of one run
  local s e
  s=$(date +%s%N)
  "$@" >/dev/null 2>&1
  e=$(date +%s%N)
  echo $(((e - s) / 1000000))
}
cases=(duck log db parquet dlog ddb dparquet)
declare -A t
for ((r = 0; r < rounds; r++)); do
  t[duck]+=" $(ms python3 "$dir/duck.py" "$dir/s.parquet")"
  for f in log db parquet; do
    t[$f]+=" $(ms "$B/hubprof" analyze "$dir/s.$f")"
    t[d$f]+=" $(ms "$B/hubprof" analyze --by dispatch --format csv "$dir/s.$f")"
  done
done
read -r dm _ _ <<<"$(stats ${t[duck]})"
printf '%-52s %9s %15s\n' "$rounds interleaved rounds, ms" median min-max
row() { # LABEL CASE [vs DuckDB]
  local m l h
  read -r m l h <<<"$(stats ${t[$2]})"
  printf '%-52s %9.1f %15s' "$1" "$m" "$l-$h"
  [ -n "${3:-}" ] && awk -v a="$m" -v b="$dm" 'BEGIN { printf "  %.2fx DuckDB", a / b }'
  echo
}
row "DuckDB per kernel+counter on Parquet (baseline)" duck
for f in log db parquet; do row "hubprof analyze (counters, metrics), $f" "$f" vs; done
for f in log db parquet; do row "hubprof analyze --by dispatch --format csv, $f" "d$f"; done
