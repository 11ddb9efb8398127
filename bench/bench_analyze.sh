#!/usr/bin/env bash
# `hubprof analyze` (top kernels per device) on a large Parquet store against DuckDB answering the same
# query on the same files, interleaved in one run; median and min-max of R rounds. usage: bench_analyze.sh DIR [NPROC [NDISP [R]]]
# (default 10 processes x 1M dispatches = a 10 M-dispatch store).
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start "${1:?usage: bench_analyze.sh DIR [NPROC [NDISP [ROUNDS]]]}"
nproc=${2:-10}
ndisp=${3:-1000000}
rounds=${4:-3}
store="$dir/big.parquet"
if [ ! -d "$store" ]; then
  rm -rf "$dir/logs"
  "$B/examples/gen_logs" "$dir/logs" "$nproc" "$ndisp"
  "$B/hubprof" merge -q --format parquet -o "$store" "$dir"/logs/*.log
  rm -rf "$dir/logs"
fi
t_hub=() t_duck=()
for ((r = 0; r < rounds; r++)); do
  s=$(date +%s.%N)
  "$B/hubprof" analyze --format csv "$store" >"$dir/hub.csv"
  t_hub+=("$(echo "$(date +%s.%N) $s" | awk '{print $1 - $2}')")
  t_duck+=("$(python3 - "$store" <<'EOF'
import sys, time, duckdb
store = sys.argv[1]
t = time.perf_counter()
con = duckdb.connect()
rows = con.execute(f"""
  SELECT a.name AS device, k.name AS kernel, count(*) AS calls, sum(d.end_ns - d.start_ns) AS total_ns,
         avg(d.end_ns - d.start_ns) AS avg_ns, min(d.end_ns - d.start_ns) AS min_ns,
         max(d.end_ns - d.start_ns) AS max_ns
  FROM read_parquet('{store}/dispatch/*.parquet') d
  JOIN read_parquet('{store}/kernel_symbol/*.parquet') k ON k.id = d.kernel_id
  JOIN read_parquet('{store}/agent/*.parquet') a ON a.id = d.agent_id
  GROUP BY 1, 2 ORDER BY total_ns DESC""").fetchall()
print(time.perf_counter() - t + 0 * len(rows))
EOF
)")
done
read -r hm hl hh <<<"$(stats $(printf '%s\n' "${t_hub[@]}" | awk '{ print $1 * 1000 }'))"
read -r dm dl dh <<<"$(stats $(printf '%s\n' "${t_duck[@]}" | awk '{ print $1 * 1000 }'))"
n=$(python3 -c "import json,sys; print(sum(1 for _ in open(sys.argv[1])) - 1)" "$dir/hub.csv")
awk -v hm="$hm" -v hl="$hl" -v hh="$hh" -v dm="$dm" -v dl="$dl" -v dh="$dh" -v n="$n" -v r="$rounds" \
  -v disp="$((nproc * ndisp))" 'BEGIN {
  printf "top kernels of a %d-dispatch Parquet store (%d rows out), %d interleaved rounds, ms:\n", disp, n, r
  printf "  %-34s %9s %17s\n", "", "median", "min-max"
  printf "  %-34s %9.1f %17s\n", "DuckDB (same query, same files)", dm, dl "-" dh
  printf "  %-34s %9.1f %17s  (%.2fx DuckDB)\n", "hubprof analyze", hm, hl "-" hh, hm / dm
}'
