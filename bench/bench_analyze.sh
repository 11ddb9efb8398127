#!/usr/bin/env bash
# `hubprof analyze` (top kernels per device) on a large Parquet store against DuckDB answering the same
# query on the same files, in one run; best of R each. usage: bench_analyze.sh DIR [NPROC [NDISP [R]]]
# (default 10 processes x 1M dispatches = a 10 M-dispatch store).
# SPDX-License-Identifier: MIT
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: bench_analyze.sh DIR [NPROC [NDISP [ROUNDS]]]}
nproc=${2:-10}
ndisp=${3:-1000000}
rounds=${4:-3}
B=build
mkdir -p "$dir"
store="$dir/big.parquet"
if [ ! -d "$store" ]; then
  rm -rf "$dir/logs"
  "$B/examples/gen_logs" "$dir/logs" "$nproc" "$ndisp"
  "$B/hubprof" merge -q --format parquet -o "$store" "$dir"/logs/*.log
  rm -rf "$dir/logs"
fi
best() { sort -g | head -n 1; }
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
h=$(printf '%s\n' "${t_hub[@]}" | best)
d=$(printf '%s\n' "${t_duck[@]}" | best)
n=$(python3 -c "import json,sys; print(sum(1 for _ in open(sys.argv[1])) - 1)" "$dir/hub.csv")
awk -v h="$h" -v d="$d" -v n="$n" -v disp="$((nproc * ndisp))" 'BEGIN {
  printf "top kernels of a %d-dispatch Parquet store (%d rows out), best of runs:\n", disp, n
  printf "  %-34s %8.3f s\n", "DuckDB (same query, same files)", d
  printf "  %-34s %8.3f s  (%.2fx DuckDB)\n", "hubprof analyze", h, h / d
}'
