#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make bench-check`, the release guard (docs/development.md, "The release guard"): builds the baseline commit
# (bench/BASELINE: the last release) beside this tree and runs the two interleaved, base and now in turn in
# every round (their order alternating), on the headline figures: trace added per dispatch (launch_loop traced
# minus the same loop plain, paired per round), kernel replay added per dispatch per pass, merge of the
# generated logs into rocpd, convert of that store to Parquet, analyze over each store, and the stores' bytes.
# Prints each figure's median (min-max) for base and now and their ratio; FAIL where now's median is worse
# than base's by more than 10%. Never a test: it judges only on an idle machine (1-minute load under 1 at the
# start and at the end, and other processes using under 1 CPU on average during the run).
# usage: bench_check.sh   (environment, all optional: BENCH_CHECK_BASE commit (default: bench/BASELINE);
#   BENCH_CHECK_SPIN N: build this tree's collector with N pause instructions per dispatch (the slowdown it
#   must catch); BENCH_CHECK_ROUNDS trace and replay rounds (31); BENCH_CHECK_STORE_ROUNDS storage rounds (5);
#   BENCH_CHECK_N dispatches of the storage figures (10000000, a multiple of 10); BENCH_CHECK_ANALYZE_REPEAT
#   analyze runs over Parquet per side in each storage round (5: it takes under a second); BENCH_CHECK_DIR scratch
#   folder (kept; default a temporary one); BENCH_CHECK_IGNORE_LOAD=1 judges at any load: development only)
# exit: 0 no figure worse by more than 10%; 1 at least one is (FAIL); 2 the baseline or this tree does not
#   build, a bad setting, or a step failed; 3 the machine was not idle: figures printed, no verdict.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_start "${BENCH_CHECK_DIR:-}"
refuse() { # MESSAGE: exit 2 with one line
  echo "bench-check: $1" >&2
  exit 2
}
trap 'refuse "a step failed (bench/bench_check.sh line $LINENO): no figures"' ERR # never mistaken for a FAIL (1)
[ $# -eq 0 ] || refuse "takes no arguments: settings come from the environment (BENCH_CHECK_BASE=...; make bench-check BASE=...)"
limit=10 # percent: now's median worse than base's by more than this fails
base=${BENCH_CHECK_BASE:-$(grep -v '^#' bench/BASELINE | grep -m1 . || true)}
spin=${BENCH_CHECK_SPIN:-}
rounds=${BENCH_CHECK_ROUNDS:-31}
srounds=${BENCH_CHECK_STORE_ROUNDS:-5}
total=${BENCH_CHECK_N:-10000000}
tn=20000   # dispatches of a trace run (a clFinish every 1000), as bench/bench_trace.sh
rn=10000   # dispatches of a replay run (a clFinish after each), as bench/bench_replay_ab.sh
passes=3   # replay passes: one software counter each
counters=task-clock,cpu-clock,context-switches
whole() { [[ $2 =~ ^[1-9][0-9]*$ ]] || refuse "$1=$2: not a positive whole number"; } # NAME VALUE
whole ROUNDS "$rounds"
whole STORE_ROUNDS "$srounds"
arep=${BENCH_CHECK_ANALYZE_REPEAT:-5} # Parquet analyze runs per side and storage round
whole BENCH_CHECK_ANALYZE_REPEAT "$arep"
whole BENCH_CHECK_N "$total"
[ $((total % 10)) -eq 0 ] || refuse "BENCH_CHECK_N=$total: not a multiple of 10 (10 processes' logs)"
[ -z "$spin" ] || whole SPIN "$spin"
[ -n "$base" ] || refuse "no baseline commit in bench/BASELINE"
base_full=$(git rev-parse --verify --quiet "$base^{commit}") ||
  refuse "baseline $base: not a commit of this repository (bench/BASELINE, or BASE=)"

load1() { cut -d' ' -f1 /proc/loadavg; }
load_start=$(load1) # before anything of this run adds to it
load_start_all=$(bench_load)

# the builds: base in $dir/base, now in build/ (with SPIN, in $dir/now/build: its own objects, build/ untouched)
echo "bench-check: building the baseline $(git log -1 --format='%h (%cs, %s)' "$base_full")"
bench_tree "$base_full" "$dir/base" all ||
  refuse "cannot build the baseline $base: $(tail -n 3 "$dir/base.build" | tr '\n' ' ')"
BB=$dir/base/build
if [ -n "$spin" ]; then
  NB=$dir/now/build # beside a link to this tree's share/ (device descriptions, metrics), as in the tree itself
  mkdir -p "$dir/now" && ln -sfn "$BENCH_ROOT/share" "$dir/now/share"
  nowmake=(B="$NB" BENCH_SPIN="$spin")
else
  NB=$BENCH_ROOT/build
  nowmake=()
fi
now_name="$(git log -1 --format='%h' HEAD)$(git diff --quiet HEAD -- 2>/dev/null || echo ' + uncommitted changes')"
echo "bench-check: building this tree ($now_name${spin:+, collector slowed by SPIN=$spin pause instructions})"
make -C "$BENCH_ROOT" -j2 "${nowmake[@]}" all >"$dir/now.build" 2>&1 ||
  refuse "cannot build this tree: $(tail -n 3 "$dir/now.build" | tr '\n' ' ')"
LAUNCH_LOOP=$NB/examples/ocl/launch_loop # one application for both sides: only the collector differs
export POCL_DEVICES=basic
export LAUNCH_LOOP_CPU=$(($(nproc) - 1)) # the launching thread alone on the last CPU

# the storage inputs: 10 processes' logs written by now's gen_logs, read by both when base can read them
per=$((total / 10))
"$NB/examples/gen_logs" "$dir/logs-now" 10 "$per"
logs_base=$dir/logs-now
first=("$dir"/logs-now/*.log)
if ! "$BB/hubprof" info "${first[0]}" >/dev/null 2>"$dir/probe.err"; then
  echo "bench-check: the baseline cannot read this tree's logs ($(head -n 1 "$dir/probe.err")): each side merges" \
    "the logs of its own gen_logs (same shape, its own log format)"
  "$BB/examples/gen_logs" "$dir/logs-base" 10 "$per"
  logs_base=$dir/logs-base
fi

busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; } # user nice system irq softirq
own_ticks() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$$/stat"; }       # this shell and its waited children
busy0=$(busy_ticks)
own0=$(own_ticks)
t0=$(date +%s%N)
echo "bench-check: base $(git rev-parse --short "$base_full") against now $now_name; load at the start: $load_start_all"
echo "  trace and replay: $rounds rounds; storage: $srounds rounds of $total dispatches (10 logs), $arep analyze" \
  "runs over Parquet per side and round; launching thread on CPU $LAUNCH_LOOP_CPU, PoCL basic device"

declare -A V # V[FIGURE,SIDE]: the rounds' values, space-separated
add() { V[$1,$2]+="$3 "; }
sides() { # ROUND: the two sides in this round's order (base first in even rounds)
  if [ $(($1 % 2)) -eq 0 ]; then echo base now; else echo now base; fi
}
home() { if [ "$1" = base ]; then echo "$BB"; else echo "$NB"; fi; } # SIDE: its build folder
timed() { # FIGURE SIDE CMD...: the wall ms of one run of CMD added to FIGURE of SIDE
  local t
  t=$(bench_wall_ms "${@:3}") || refuse "$2: $1 failed"
  add "$1" "$2" "$t"
}
ns_of() { sed -nE 's/.*ns_per_dispatch=([0-9.]+).*/\1/p'; }
minus() { awk -v a="$1" -v b="$2" -v d="${3:-1}" 'BEGIN { printf "%.1f\n", (a - b) / d }'; } # A B [DIV]

# shellcheck disable=SC2034 # read by launch_ns and launch_traced (bench/lib.sh)
n=$tn
for ((r = 0; r < rounds; r++)); do # trace added per dispatch: traced minus plain, the same round
  plain=$(launch_ns env)
  for s in $(sides "$r"); do
    t=$(launch_traced "$(home "$s")/libhubprof_collector.so")
    if [ -z "$t" ] || [ -z "$plain" ]; then refuse "$s: launch_loop printed no time"; fi
    add trace "$s" "$(minus "$t" "$plain")"
  done
done
for ((r = 0; r < rounds; r++)); do # kernel replay added per dispatch per pass, each side's own hubprof
  plain=$("$LAUNCH_LOOP" "$rn" 1 | ns_of)
  for s in $(sides "$r"); do
    t=$("$(home "$s")/hubprof" profile -q -f --counters "$counters" --max-counters-per-pass 1 -o "$dir/replay.db" \
      -- "$LAUNCH_LOOP" "$rn" 1 | ns_of)
    [ -n "$t" ] || refuse "$s: hubprof profile of launch_loop printed no time"
    add replay "$s" "$(minus "$t" "$plain" "$passes")"
  done
done
for ((r = 0; r < srounds; r++)); do # storage: each side's own merge, convert and analyze
  for s in $(sides "$r"); do
    H=$(home "$s")
    in=$dir/logs-now
    [ "$s" = base ] && in=$logs_base
    db=$dir/$s.db pq=$dir/$s.parquet
    rm -rf "$db" "$pq"
    timed merge "$s" "$H/hubprof" merge -q -f -o "$db" "$in"/*.log
    timed convert "$s" "$H/hubprof" convert -f "$db" -o "$pq" --format parquet
    if [ "$r" -eq 0 ]; then # deterministic: one measurement
      add bytes_rocpd "$s" "$(stat -c %s "$db")"
      add bytes_parquet "$s" "$(find "$pq" -type f -printf '%s\n' | awk '{ t += $1 } END { print t }')"
    fi
  done
  # analyze: both sides' stores kept until here, so the two sides run back to back (this VM has slow and fast
  # phases of tens of seconds, longer than a convert: an analyze per side far apart in time measured the
  # phase, not the code); Parquet's analyze, under a second, is repeated $arep times in alternating order
  for s in $(sides "$r"); do
    timed an_rocpd "$s" "$(home "$s")/hubprof" analyze --format csv "$dir/$s.db"
  done
  for ((a = 0; a < arep; a++)); do
    for s in $(sides $((r + a))); do
      timed an_parquet "$s" "$(home "$s")/hubprof" analyze --format csv "$dir/$s.parquet"
    done
  done
done
rm -rf "$dir"/base.db "$dir"/now.db "$dir"/base.parquet "$dir"/now.parquet "$dir/replay.db"

# the load at the end: the run's own share of the 1-minute average (a busy CPU adds ~1) fades in a few
# seconds on an idle machine, never on a busy one: wait for it, at most 90 s
t1=$(date +%s%N)
others=$(awk -v b="$(($(busy_ticks) - busy0))" -v o="$(($(own_ticks) - own0))" -v hz="$(getconf CLK_TCK)" \
  -v s="$(((t1 - t0) / 1000000))" 'BEGIN { x = (b - o) / hz / (s / 1000); printf "%.2f", x < 0 ? 0 : x }')
if [ "${BENCH_CHECK_IGNORE_LOAD:-0}" != 1 ] && awk -v l="$load_start" 'BEGIN { exit !(l < 1) }'; then
  for _ in $(seq 18); do
    awk -v l="$(load1)" 'BEGIN { exit !(l < 1) }' && break
    sleep 5
  done
fi
load_end=$(load1)

printf '\n%-46s %28s %28s %9s\n' "figure (lower is better)" "base: median (min-max)" "now: median (min-max)" \
  "now/base"
fails=0
row() { # FIGURE LABEL: one line of the table, FAIL when now's median is worse than base's by more than $limit%
  local bm bl bh nm nl nh verdict
  # shellcheck disable=SC2086 # the values, one word each
  read -r bm bl bh <<<"$(stats ${V[$1,base]})"
  # shellcheck disable=SC2086
  read -r nm nl nh <<<"$(stats ${V[$1,now]})"
  verdict=$(awk -v b="$bm" -v n="$nm" -v l="$limit" 'BEGIN { print (n > b + l / 100 * (b < 0 ? -b : b)) ? "FAIL" : "ok" }')
  [ "$verdict" = ok ] || fails=$((fails + 1))
  awk -v L="$2" -v bm="$bm" -v bl="$bl" -v bh="$bh" -v nm="$nm" -v nl="$nl" -v nh="$nh" -v v="$verdict" '
    function fig(m, l, h) { return l == h ? sprintf("%.0f", m) : sprintf("%.1f (%.1f-%.1f)", m, l, h) }
    BEGIN { printf "%-46s %28s %28s %9s  %s\n", L, fig(bm, bl, bh), fig(nm, nl, nh),
      (bm > 0 ? sprintf("%.3fx", nm / bm) : "-"), v }'
}
row trace "trace: added ns per dispatch (paired)"
row replay "replay: added ns per dispatch per pass"
row merge "merge $total logs -> rocpd, ms"
row convert "convert rocpd -> Parquet, ms"
row an_rocpd "analyze (top kernels) rocpd, ms"
row an_parquet "analyze (top kernels) Parquet, ms"
row bytes_rocpd "rocpd store, bytes"
row bytes_parquet "Parquet store, bytes"
echo "load: $load_start at the start, $load_end at the end (1 min); other processes used $others CPUs on" \
  "average during the run ($(nproc) cores)"

worst=$(printf '%s\n' "$load_start" "$load_end" "$others" | sort -g | tail -n 1)
if awk -v l="$worst" 'BEGIN { exit !(l >= 1) }'; then
  if [ "${BENCH_CHECK_IGNORE_LOAD:-0}" = 1 ]; then
    echo "bench-check: load $worst >= 1 ignored (BENCH_CHECK_IGNORE_LOAD=1: for development only, never a verdict)"
  else
    echo "bench-check: load $worst >= 1: no verdict (re-run on an idle machine)"
    exit 3
  fi
fi
if [ "$fails" -gt 0 ]; then
  echo "bench-check: FAIL: $fails figure(s) of now worse than base $(git rev-parse --short "$base_full") by more than $limit%"
  exit 1
fi
echo "bench-check: pass: no figure of now worse than base $(git rev-parse --short "$base_full") by more than $limit%"
