#!/usr/bin/env bash
# `hubprof analyze` (top kernels per device) on a large store against DuckDB (Parquet) and the sqlite3 CLI
# (rocpd) answering the same query on the same files, interleaved in one run (the order alternating); hubprof on
# its default threads (one per CPU) and on one (--threads 1). Per side: wall ms, CPU ms (user + sys), CPU/wall
# (about the cores kept busy) and peak RSS (`/usr/bin/time`), median (min-max) of R rounds, with the load before
# and after; every answer is checked equal to hubprof's.
# usage: bench_analyze.sh DIR [NPROC [NDISP [ROUNDS]]]  (default 10 processes x 1M dispatches = a 10 M-dispatch
#   store, 3 rounds; environment: STORE=PATH a Parquet store or dataset to use instead of making one
#   (bench/gen_dataset); ROCPD=1 also the same store converted to rocpd, against sqlite3; B the build folder)
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start "${1:?usage: bench_analyze.sh DIR [NPROC [NDISP [ROUNDS]]]}"
nproc=${2:-10}
ndisp=${3:-1000000}
rounds=${4:-3}
HP=$BENCH_ROOT/$B/hubprof
store=${STORE:-$dir/big.parquet}
if [ ! -d "$store" ]; then
  rm -rf "$dir/logs"
  "$B/examples/gen_logs" "$dir/logs" "$nproc" "$ndisp"
  "$HP" merge -q --format parquet -o "$store" "$dir"/logs/*.log
  rm -rf "$dir/logs"
fi
db=$dir/big.db
if [ "${ROCPD:-0}" = 1 ]; then
  command -v sqlite3 >/dev/null || { echo "bench_analyze: no sqlite3 CLI" >&2; exit 2; }
  [ -f "$db" ] || "$HP" convert -q -f "$store" -o "$db"
fi
# DuckDB in its own process (the whole process is timed, as hubprof's): the same figures as hubprof's JSON
cat >"$dir/duck.py" <<'EOF'
import json, sys, duckdb
store = sys.argv[1]
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
for t in ("dispatch", "agent", "kernel_symbol"):
    con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{store}/{t}/**/*.parquet', hive_partitioning=false)")
rows = con.execute("""
  SELECT coalesce(a.product_name, a.name), coalesce(k.display_name, k.name), count(*),
         coalesce(sum(d.end_ns - d.start_ns) FILTER (WHERE d.start_ns <> 0 AND d.end_ns >= d.start_ns), 0)
  FROM dispatch d JOIN agent a ON a.id = d.agent_id JOIN kernel_symbol k ON k.id = d.kernel_id
  GROUP BY 1, 2""").fetchall()
print(json.dumps(sorted([str(r[0]), str(r[1]), int(r[2]), int(r[3])] for r in rows)))
EOF
# the sqlite3 CLI over the rocpd file (the same query on its views: summed per agent and kernel id, then named)
sql_rocpd="SELECT coalesce(nullif(A.product_name, ''), A.name) AS d, coalesce(nullif(S.display_name, ''), S.kernel_name) AS k,
  sum(G.c) AS c, sum(G.t) AS t FROM (SELECT agent_id, kernel_id, count(*) AS c,
  coalesce(sum(CASE WHEN start <> 0 AND \"end\" >= start THEN \"end\" - start END), 0) AS t FROM rocpd_kernel_dispatch
  WHERE id <> 0 GROUP BY agent_id, kernel_id) G JOIN rocpd_info_agent A ON A.id = G.agent_id
  JOIN rocpd_info_kernel_symbol S ON S.id = G.kernel_id GROUP BY 1, 2"
answer() { # SIDE FILE: the side's answer as sorted JSON rows of (device, kernel, calls, total_ns)
  case $1 in
  duckdb) cat "$2" ;;
  sqlite3) python3 -c 'import json,sys; print(json.dumps(sorted([r["d"], r["k"], r["c"], r["t"]] for r in json.load(open(sys.argv[1])))))' "$2" ;;
  *) python3 -c 'import json,sys; print(json.dumps(sorted([r["device"], r["kernel"], r["calls"], r["total_ns"]] for r in json.load(open(sys.argv[1])))))' "$2" ;;
  esac
}
cmd() {
  case $1 in
  hubprof) echo "$HP analyze -q --format json $store" ;;
  hubprof-1) echo "$HP analyze -q --format json --threads 1 $store" ;;
  duckdb) echo "python3 $dir/duck.py $store" ;;
  rocpd) echo "$HP analyze -q --format json $db" ;;
  rocpd-1) echo "$HP analyze -q --format json --threads 1 $db" ;;
  sqlite3) echo "sqlite3 -json $db" ;;
  esac
}
declare -A W C R # per side: the rounds' wall ms, CPU ms, peak RSS KB
run() { # SIDE: one timed run, its answer checked
  local side=$1 t u s m
  # shellcheck disable=SC2046 # the command's words
  if [ "$side" = sqlite3 ]; then
    /usr/bin/time -f '%e %U %S %M' -o "$dir/time.txt" sqlite3 -json "$db" "$sql_rocpd" >"$dir/out.$side" 2>"$dir/run.err"
  else
    /usr/bin/time -f '%e %U %S %M' -o "$dir/time.txt" $(cmd "$side") >"$dir/out.$side" 2>"$dir/run.err"
  fi || { echo "bench_analyze: $side failed: $(tail -n 3 "$dir/run.err")" >&2; exit 1; }
  read -r t u s m <"$dir/time.txt"
  W[$side]+="$(awk -v t="$t" 'BEGIN { printf "%.0f", t * 1000 }') "
  C[$side]+="$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.0f", (u + s) * 1000 }') "
  R[$side]+="$m "
  answer "$side" "$dir/out.$side" >"$dir/ans.$side"
  cmp -s "$dir/ans.$side" "$dir/ans.hubprof" || [ "$side" = hubprof ] ||
    { echo "bench_analyze: $side gives other figures than hubprof analyze" >&2; exit 1; }
}
sides=(hubprof hubprof-1 duckdb)
[ "${ROCPD:-0}" = 1 ] && sides+=(rocpd rocpd-1 sqlite3)
run hubprof # its answer, the reference (not counted)
W=() C=() R=()
echo "bench_analyze: top kernels of $store ($(du -sh "$store" | cut -f1)$([ "${ROCPD:-0}" = 1 ] && echo "; rocpd $(du -sh "$db" | cut -f1)")), $rounds rounds, $(nproc) CPUs; load at the start: $(bench_load)"
for ((r = 0; r < rounds; r++)); do
  order=("${sides[@]}")
  [ $((r % 2)) -eq 1 ] && mapfile -t order < <(printf '%s\n' "${sides[@]}" | tac) # alternate who goes first
  for s in "${order[@]}"; do run "$s"; done
done
echo "load at the end: $(bench_load)"
printf '%-10s %24s %24s %18s %24s\n' side "wall ms median (min-max)" "CPU ms median (min-max)" "CPU/wall median" "peak RSS KB median"
for s in "${sides[@]}"; do
  # shellcheck disable=SC2086 # the values
  printf '%-10s %24s %24s %18s %24s\n' "$s" "$(stats ${W[$s]} | awk '{ printf "%s (%s-%s)", $1, $2, $3 }')" \
    "$(stats ${C[$s]} | awk '{ printf "%s (%s-%s)", $1, $2, $3 }')" \
    "$(paste -d' ' <(tr ' ' '\n' <<<"${C[$s]}") <(tr ' ' '\n' <<<"${W[$s]}") | awk 'NF == 2 && $2 > 0 { print $1 / $2 }' | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] }')" \
    "$(stats ${R[$s]} | awk '{ printf "%s (%s-%s)", $1, $2, $3 }')"
done
# shellcheck disable=SC2086 # the values
ratio() { awk -v a="$(stats $1 | cut -d' ' -f1)" -v b="$(stats $2 | cut -d' ' -f1)" 'BEGIN { printf "%.2fx", a / b }'; }
echo "hubprof/duckdb: wall $(ratio "${W[hubprof]}" "${W[duckdb]}"), CPU $(ratio "${C[hubprof]}" "${C[duckdb]}"); threads/one: wall $(ratio "${W[hubprof]}" "${W[hubprof-1]}")"
[ "${ROCPD:-0}" = 1 ] &&
  echo "rocpd/sqlite3: wall $(ratio "${W[rocpd]}" "${W[sqlite3]}"), CPU $(ratio "${C[rocpd]}" "${C[sqlite3]}"); threads/one: wall $(ratio "${W[rocpd]}" "${W[rocpd-1]}")"
exit 0
