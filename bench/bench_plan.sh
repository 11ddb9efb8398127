#!/usr/bin/env bash
# Planner benchmark: `hubprof plan --device gfx942 --metrics all` (time, passes, metrics split across
# passes) next to a simple first-fit baseline over the same request (the gfx942 metrics' counters in metric
# order, each counter into the first pass whose block has room, a LEVEL counter with its accumulator and one
# LEVEL per pass), and the full rocprofiler-compute gfx942 counter list (tests/data) planned by both.
# Runs interleaved; prints median and min-max of the planner's wall time.
# usage: bench_plan.sh [ROUNDS]   (default 11)
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start
HP=${HP:-$B/hubprof}
rounds=${1:-11}
"$HP" list counters --device gfx942 --format csv >"$dir/counters.csv"
"$HP" list metrics --device gfx942 --format csv >"$dir/metrics.csv"
grep -v '^#' tests/data/gfx942_full_profile.counters | paste -sd, - >"$dir/full.txt"
for i in $(seq "$rounds"); do # interleaved: planner, then baseline, same input
  s=$(date +%s%N)
  "$HP" plan --device gfx942 --metrics all --format json >"$dir/plan.json"
  e=$(date +%s%N)
  echo $(((e - s) / 1000)) >>"$dir/t_plan"
  s=$(date +%s%N)
  python3 - "$dir" >"$dir/base.txt" <<'EOF'
import csv, sys
d = sys.argv[1]
LIM = {"SQ": 8, "TA": 2, "TD": 2, "TCP": 4, "TCC": 4, "CPC": 2, "CPF": 2, "SPI": 6, "GRBM": 2, "GDS": 4}
block = {r["counter"]: r["block"] for r in csv.DictReader(open(d + "/counters.csv"))}
metrics = [r for r in csv.DictReader(open(d + "/metrics.csv")) if r["set"] == "gfx942" and r["counters"] not in ("", "(none)")]
def first_fit(names):
    passes, where = [], {}
    for n in names:
        if n in where: continue
        base = n.split("[")[0]
        level = base.endswith("_ACCUM")
        need = {block[base]: 2 if level else 1}
        for i, p in enumerate(passes):
            if level and p.get("LEVEL"): continue
            if all(p.get(b, 0) + k <= LIM[b] for b, k in need.items()): break
        else:
            passes.append({}); i = len(passes) - 1
        for b, k in need.items(): passes[i][b] = passes[i].get(b, 0) + k
        if level: passes[i]["LEVEL"] = 1
        where[n] = i
    return passes, where
order = [c for m in metrics for c in m["counters"].split(",")]
passes, where = first_fit(order)
split = sum(1 for m in metrics if len(m["counters"].split(",")) > 1 and len({where[c] for c in m["counters"].split(",")}) > 1)
multi = sum(1 for m in metrics if len(m["counters"].split(",")) > 1)
full = open(d + "/full.txt").read().strip().split(",")
fp, _ = first_fit([n if not n.split("[")[0] in ("SQ_LEVEL_WAVES", "SQ_INST_LEVEL_VMEM", "SQ_INST_LEVEL_SMEM", "SQ_INST_LEVEL_LDS", "SQ_IFETCH_LEVEL", "SQC_DCACHE_INFLIGHT_LEVEL") else n + "_ACCUM" for n in full])
print(len(passes), split, multi, len(fp))
EOF
  e=$(date +%s%N)
  echo $(((e - s) / 1000)) >>"$dir/t_base"
done
read -r bpasses bsplit multi bfull <"$dir/base.txt"
"$HP" plan --device gfx942 --metrics all --splits --format csv | tail -n +2 | wc -l >"$dir/nsplit"
"$HP" plan --device gfx942 --counters "$(cat "$dir/full.txt")" --format line | tr ';' '\n' | wc -l >"$dir/nfull"
ppasses=$(python3 -c "import json,sys; print(max(r['pass'] for r in json.load(open(sys.argv[1]))))" "$dir/plan.json")
spread() { # FILE of microseconds: "median M ms (min-max L-H, N runs)"
  local m l h
  read -r m l h <<<"$(stats $(awk '{ print $1 / 1000 }' "$1"))"
  echo "median $m ms (min-max $l-$h, $(wc -l <"$1") runs)"
}
echo "gfx942 metric set ($multi metrics with two or more counters), hubprof plan --metrics all:"
echo "  hubprof planner: $ppasses passes, $(cat "$dir/nsplit") metrics split; wall time $(spread "$dir/t_plan") (process start included)"
echo "  first-fit baseline: $bpasses passes, $bsplit metrics split; wall time $(spread "$dir/t_base") (python3 start included)"
echo "full rocprofiler-compute gfx942 counter list: hubprof $(cat "$dir/nfull") passes, first-fit $bfull passes"
