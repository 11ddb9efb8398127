#!/usr/bin/env bash
# Cluster-scale analysis (issue 31): a 64-rank dataset of 10^8 dispatches asked three questions by hubprof,
# DuckDB and Spark side by side, interleaved; wall, CPU, peak RSS and the answers checked equal.
# SPDX-License-Identifier: MIT
# Cluster-scale analysis (issue 31): a 64-rank dataset of 10^8 dispatches (bench/gen_dataset, partitioned by
# node and process as a merge of >= 1 GiB of rank stores is) asked three questions by `hubprof analyze`, by
# DuckDB (python duckdb) and by Spark (pyspark, local[2]), each in a process of its own, interleaved (every
# side of every question once per round, the order alternating): top kernels (the default view), per rank
# (`--by rank`) and the rank imbalance (`--by rank-imbalance`); DuckDB and Spark run bench/scale_query.py (the
# top-kernels SQL of bench_analyze.sh, the rank views' SQL of examples/cluster/ranks.py). Per side: the whole
# process's wall ms, CPU ms (user + sys; Spark's JVM is waited for, so it counts), CPU/wall and peak RSS
# (/usr/bin/time; Spark: its largest process, the JVM), and for DuckDB and Spark the query alone (query_ms:
# after the engine, for Spark its JVM and session, started); median (min-max) of the rounds, the load before
# and after. Every answer is checked equal to hubprof's (sorted rows; the median with one decimal).
# MERGE="parquet rocpd" (either or both) also times `hubprof merge` of the whole dataset into a new store of
# that format once after the rounds (wall, CPU, peak RSS; the output deleted after; rocpd at 10^8 is ~20 GB).
# usage: bench_scale.sh DIR [NPROC [NDISP [ROUNDS]]]   (defaults 64 ranks x 1562500 = 10^8 dispatches, 7 rounds)
#   DIR keeps the dataset (DIR/scale-NPROCxNDISP.parquet, about 1 GB at 10^8; made once, reused; CLEAN=1
#   deletes it at the end). Environment: STORE=PATH another dataset; VIEWS (default "top ranks imbalance");
#   SIDES (default "hubprof duckdb spark"; hubprof-1: hubprof on one thread, --threads 1); MASTER (Spark's, default local[2]); SPARK_ROUNDS=N Spark in the
#   first N rounds only (default all: a Spark run of 10^8 takes minutes on a loaded 2-core machine); B the
#   build folder.
#   When missing, the script installs what it runs (never the tests): python duckdb and pyspark with pip, a
#   Java runtime (openjdk-17-jre-headless) with apt-get.
. "$(dirname "$0")/lib.sh"
bench_start "${1:?usage: bench_scale.sh DIR [NPROC [NDISP [ROUNDS]]]}"
nproc=${2:-64}
ndisp=${3:-1562500}
rounds=${4:-7}
read -r -a views <<<"${VIEWS:-top ranks imbalance}"
read -r -a sides <<<"${SIDES:-hubprof duckdb spark}"
master=${MASTER:-local[2]}
HP=$BENCH_ROOT/$B/hubprof
Q=$BENCH_ROOT/bench/scale_query.py
has() { [[ " ${sides[*]} " == *" $1 "* ]]; }
# what the sides need, installed when missing
if has duckdb && ! python3 -c 'import duckdb' 2>/dev/null; then python3 -m pip install -q duckdb; fi
if has spark; then
  python3 -c 'import pyspark' 2>/dev/null || python3 -m pip install -q pyspark
  if ! command -v java >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
  fi
fi
[ -x "$B/bench/gen_dataset" ] || make --no-print-directory "$B/bench/gen_dataset" >/dev/null
store=${STORE:-$dir/scale-${nproc}x$ndisp.parquet}
if [ ! -d "$store/dispatch" ]; then
  rm -rf "$store"
  echo "bench_scale: making $store ($nproc ranks x $ndisp dispatches)"
  /usr/bin/time -f '%e s, peak RSS %M KB' -o "$dir/gen.time" "$B/bench/gen_dataset" "$store" "$nproc" "$ndisp" \
    node,process ranks
  echo "bench_scale: made in $(cat "$dir/gen.time")"
fi
answer() { # VIEW FILE: hubprof's JSON as the sorted rows scale_query.py prints
  python3 - "$1" "$2" <<'EOF'
import json, sys
sys.path.insert(0, "bench")
from scale_query import rows_of
print(json.dumps(rows_of(sys.argv[1], json.load(open(sys.argv[2])))))
EOF
}
cmd() { # VIEW SIDE: the command line
  local by=
  case $1 in ranks) by="--by rank" ;; imbalance) by="--by rank-imbalance" ;; esac
  case $2 in
  hubprof) echo "$HP analyze -q --format json $by $store" ;;
  hubprof-1) echo "$HP analyze -q --format json --threads 1 $by $store" ;;
  duckdb) echo "python3 $Q duckdb $1 $store" ;;
  spark) echo "python3 $Q spark $1 $store $master" ;;
  esac
}
declare -A W C R QM # per view/side: the rounds' wall ms, CPU ms, peak RSS KB, query ms
run() { # VIEW SIDE: one timed run, its answer checked against hubprof's
  local v=$1 side=$2 key=$1/$2 t u s m
  # shellcheck disable=SC2046 # the command's words
  /usr/bin/time -f '%e %U %S %M' -o "$dir/time.txt" $(cmd "$v" "$side") >"$dir/out.$v.$side" 2>"$dir/run.err" ||
    { echo "bench_scale: $key failed: $(tail -n 3 "$dir/run.err")" >&2; exit 1; }
  read -r t u s m <"$dir/time.txt"
  W[$key]+="$(awk -v t="$t" 'BEGIN { printf "%.0f", t * 1000 }') "
  C[$key]+="$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.0f", (u + s) * 1000 }') "
  R[$key]+="$m "
  local q
  q=$(grep -o 'query_ms=[0-9]*' "$dir/run.err" | cut -d= -f2 || true)
  QM[$key]+="$q "
  # each run's figures as it ends (a run stopped early keeps them), the load beside them
  echo "    $key: wall ${t} s, CPU $(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') s, peak RSS $m KB${q:+, query $q ms}; load $(cut -d' ' -f1 /proc/loadavg)"
  if [[ $side == hubprof* ]]; then answer "$v" "$dir/out.$v.$side" >"$dir/ans.$v.$side"; else cp "$dir/out.$v.$side" "$dir/ans.$v.$side"; fi
  [ "$side" = hubprof ] && [ ! -s "$dir/ans.$v.ref" ] && cp "$dir/ans.$v.hubprof" "$dir/ans.$v.ref"
  if [ -s "$dir/ans.$v.ref" ] && ! cmp -s "$dir/ans.$v.$side" "$dir/ans.$v.ref"; then
    echo "bench_scale: $key gives other figures than hubprof analyze:" >&2
    diff <(tr '[' '\n' <"$dir/ans.$v.ref") <(tr '[' '\n' <"$dir/ans.$v.$side") | head -n 6 >&2
    exit 1
  fi
}
rm -f "$dir"/ans.*.ref
has hubprof || { echo "bench_scale: SIDES must hold hubprof (the reference answer)" >&2; exit 2; }
for v in "${views[@]}"; do run "$v" hubprof; done # the reference answers (not counted; the cache warmed)
W=() C=() R=() QM=()
echo "bench_scale: $store ($(du -sh "$store" | cut -f1), $nproc ranks x $ndisp dispatches), $rounds rounds (Spark ${SPARK_ROUNDS:-$rounds}), $(nproc) CPUs, Spark $master; load at the start: $(bench_load)"
for ((r = 0; r < rounds; r++)); do
  order=("${sides[@]}")
  [ $((r % 2)) -eq 1 ] && mapfile -t order < <(printf '%s\n' "${sides[@]}" | tac) # alternate who goes first
  for v in "${views[@]}"; do
    for s in "${order[@]}"; do
      [ "$s" = spark ] && [ "$r" -ge "${SPARK_ROUNDS:-$rounds}" ] && continue
      run "$v" "$s"
    done
  done
  echo "  round $((r + 1)) done, load $(bench_load)"
done
echo "load at the end: $(bench_load)"
med() { stats "$@" | awk '{ printf "%s (%s-%s)", $1, $2, $3 }'; }
printf '%-18s %24s %24s %9s %24s %24s\n' "view/side" "wall ms median (min-max)" "CPU ms median (min-max)" \
  "CPU/wall" "peak RSS KB median" "query ms median (min-max)"
for v in "${views[@]}"; do
  for s in "${sides[@]}"; do
    k=$v/$s
    # shellcheck disable=SC2086 # the values
    printf '%-18s %24s %24s %9s %24s %24s\n' "$k" "$(med ${W[$k]})" "$(med ${C[$k]})" \
      "$(paste -d' ' <(tr ' ' '\n' <<<"${C[$k]}") <(tr ' ' '\n' <<<"${W[$k]}") | awk 'NF == 2 && $2 > 0 { print $1 / $2 }' | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] }')" \
      "$(med ${R[$k]})" "$([ -n "${QM[$k]// /}" ] && med ${QM[$k]} || echo -)"
  done
done
# shellcheck disable=SC2086 # the values
ratio() { awk -v a="$(stats $1 | cut -d' ' -f1)" -v b="$(stats $2 | cut -d' ' -f1)" 'BEGIN { printf "%.2fx", a / b }'; }
for v in "${views[@]}"; do
  line="$v: hubprof wall"
  for s in duckdb spark; do
    has "$s" && line+=" $(ratio "${W[$v/hubprof]}" "${W[$v/$s]}") of $s's process"
    has "$s" && line+=" ($(ratio "${W[$v/hubprof]}" "${QM[$v/$s]}") of its query)"
  done
  has hubprof-1 && line+="; threads/one: wall $(ratio "${W[$v/hubprof]}" "${W[$v/hubprof-1]}"), CPU $(ratio "${C[$v/hubprof]}" "${C[$v/hubprof-1]}")"
  echo "$line"
done
echo "answers: every side's equal to hubprof's in every round"
for fmt in ${MERGE:-}; do # merge of the whole dataset, once per output format
  out=$dir/merged.parquet
  [ "$fmt" = rocpd ] && out=$dir/merged.db
  rm -rf "$out"
  /usr/bin/time -f '%e %U %S %M' -o "$dir/time.txt" "$HP" merge -q -F "$fmt" -o "$out" "$store"
  read -r t u s m <"$dir/time.txt"
  echo "merge -> $fmt: wall ${t} s, CPU $(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') s, peak RSS $m KB, output $(du -sh "$out" | cut -f1); load $(bench_load)"
  rm -rf "$out"
done
[ "${CLEAN:-0}" = 1 ] && [ -z "${STORE:-}" ] && rm -rf "$store"
exit 0
