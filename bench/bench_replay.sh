#!/usr/bin/env bash
# Kernel replay benchmarks (docs/benchmarks.md), each figure printed with the command that produced it:
#  (a) per-dispatch cost of kernel replay beyond the passes themselves (a loop of tiny dispatches profiled
#      with 1, 3 and 9 passes against the same loop unprofiled; per dispatch per pass on the basic device is
#      issue 15's "<= 3 us" figure), and restore bandwidth against memcpy of the same bytes measured in the
#      same rounds, for both kinds of shadow storage;
#  (b) wall time of a many-pass profile of a program whose start-up dominates (slow_start: 0.5 s of
#      initialisation, then a few kernels): kernel replay against application replay.
# This machine has 9 software perf events, so 9 passes is the most a plan can have here (one counter per
# pass); 13-pass figures are extrapolated linearly from the measured 1/3/9-pass ones and marked as such.
# Every figure is the median (min-max) of REPEATS interleaved rounds (BENCH_REPLAY_REPEATS, default 5), the
# machine's load printed with them.
# usage: bench_replay.sh [DIR]   (needs `make all` and build/bench/bench_replay; DIR: scratch, default a temp dir)
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start "${1:-}"
B=$PWD/$B
HP=$B/hubprof
EX=$B/examples/ocl
N=${BENCH_REPLAY_N:-2000}      # dispatches of the launch loop
MB=${BENCH_REPLAY_MB:-64}      # buffer of the restore-bandwidth run
REPEATS=${BENCH_REPLAY_REPEATS:-5}
ALL=task-clock,cpu-clock,context-switches,cpu-migrations,page-faults,minor-faults,major-faults,alignment-faults,emulation-faults
counters() { echo "$ALL" | cut -d, -f1-"$1"; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.${2:-1}f\", $1 }"; } # EXPR [DECIMALS]
echo "machine load at the start: $(bench_load)"
cd "$dir"

# cost_per_dispatch LABEL N ENV...: launch_loop N 1 unprofiled and profiled with 1, 3, 9 passes, one run of
# each per round, REPEATS interleaved rounds; every figure is the median (min-max) over the rounds.
ns_of() { sed -nE 's/.*ns_per_dispatch=([0-9.]+).*/\1/p'; }
med() { stats "$@" | awk '{ printf "%s (%s-%s)", $1, $2, $3 }'; } # VALUES...: "median (min-max)"
cost_per_dispatch() {
  local label=$1 n=$2 r p t
  shift 2
  echo "== (a) kernel replay cost per dispatch, $label: launch_loop $n 1 (clFinish after every dispatch, as replay does)," \
    "$REPEATS interleaved rounds, median (min-max) in ns"
  local -a plain=() t1=() t3=() t9=() per1=() per3=() per9=() slope=() fixed=()
  for r in $(seq "$REPEATS"); do
    local -A tp=()
    tp[0]=$(env "$@" "$EX/launch_loop" "$n" 1 | ns_of)
    for p in 1 3 9; do
      tp[$p]=$(env "$@" "$HP" profile -q -f --counters "$(counters $p)" --max-counters-per-pass 1 -o loop.db -- \
        "$EX/launch_loop" "$n" 1 | ns_of)
    done
    plain+=("${tp[0]}")
    t1+=("${tp[1]}")
    t3+=("${tp[3]}")
    t9+=("${tp[9]}")
    for p in 1 3 9; do
      t=$(calc "(${tp[$p]} - ${tp[0]}) / $p" 0)
      eval "per$p+=($t)"
    done
    slope+=("$(calc "(${tp[9]} - ${tp[3]}) / 6" 0)")
    fixed+=("$(calc "${tp[3]} - 3 * (${tp[9]} - ${tp[3]}) / 6" 0)")
  done
  echo "$ ${*:+$* }build/examples/ocl/launch_loop $n 1"
  echo "    unprofiled: $(med "${plain[@]}") ns per dispatch"
  for p in 1 3 9; do
    local -n tt=t$p pp=per$p
    echo "$ ${*:+$* }hubprof profile --counters $(counters $p) --max-counters-per-pass 1 -- launch_loop $n 1"
    echo "    $p pass(es): $(med "${tt[@]}") ns per dispatch; added per dispatch per pass: $(med "${pp[@]}") ns"
  done
  echo "    per extra pass (slope 3 -> 9 passes, the kernel's own run included): $(med "${slope[@]}") ns;" \
    "fixed cost per dispatch: $(med "${fixed[@]}") ns"
  for p in 1 3 9; do # the collector's own split, one run each (HUBPROF_DEBUG=1)
    own=$(env "$@" HUBPROF_DEBUG=1 "$HP" profile -q -f --counters "$(counters $p)" --max-counters-per-pass 1 \
      -o loop.db -- "$EX/launch_loop" "$n" 1 2>&1 >/dev/null | grep -E 'beyond the passes|per dispatch:' |
      sed -nE 's/.*beyond the passes ([0-9.]+) us per dispatch.*/outside the passes \1 us/p; s/.*per dispatch: (.*)/\1/p' |
      paste -sd ';' -)
    echo "    collector's own split, $p pass(es), one run (HUBPROF_DEBUG=1): $own"
  done
  echo
}
cost_per_dispatch "PoCL pthread device (default)" "$N"
cost_per_dispatch "PoCL basic device (synchronous, launch ~0.4 us)" "$((N * 10))" POCL_DEVICES=basic

echo "== (a) counting alone, no kernel: the calling thread's CPU time per dispatch of 3 passes, four ways" \
  "interleaved in each of $REPEATS rounds (bench/bench_replay.c: scan = the thread list re-read at every" \
  "start, as before; check = an fstat at every start; cached = the check at pass 1 only, as replay does;" \
  "group = the 3 counters in one pass), median min max in ns"
for t in 1 4; do
  echo "$ build/bench/bench_replay session 3 $t $REPEATS 3000"
  "$B/bench/bench_replay" session 3 "$t" "$REPEATS" 3000 |
    sed -E 's/^session passes=3 threads=([0-9]+) way=([a-z]+) cpu_ns_per_dispatch=([0-9]+) cpu_min=([0-9]+) cpu_max=([0-9]+) .*/    \1 thread(s), \2: \3 (\4-\5) ns/'
done
echo

echo "== (a) restore bandwidth vs memcpy: inplace_update on one $MB MiB buffer, 8 dispatches, 3 passes;" \
  "$REPEATS interleaved rounds (shadow host, shadow device, memcpy), median (min-max) in GB/s"
ints=$((MB * 262144))
bytes=$((MB * 1048576))
declare -a r_host=() r_device=() s_host=() s_device=() mc=()
for r in $(seq "$REPEATS"); do
  for kind in host device; do
    out=$(HUBPROF_WTRACK=off HUBPROF_DEBUG=1 HUBPROF_SHADOW=$kind $HP profile -q -f \
      --counters task-clock,page-faults,context-switches --max-counters-per-pass 1 -o bw.db -- \
      "$EX/inplace_update" $ints 8 2>&1 >/dev/null)
    rest=$(sed -nE 's/.*restored [0-9]+ bytes in [0-9]+ copies, [0-9.]+ ms \(([0-9.]+) GB\/s\).*/\1/p' <<<"$out")
    save=$(sed -nE 's/.*saved [0-9]+ bytes in [0-9.]+ ms \(([0-9.]+) GB\/s\).*/\1/p' <<<"$out")
    eval "r_$kind+=(${rest:-0}); s_$kind+=(${save:-0})"
  done
  mc+=("$("$B/bench/bench_replay" memcpy "$bytes" 10 | sed -nE 's/.*gbps=([0-9.]+).*/\1/p')")
done
echo "$ HUBPROF_WTRACK=off HUBPROF_DEBUG=1 HUBPROF_SHADOW=host|device hubprof profile --counters task-clock,page-faults,context-switches --max-counters-per-pass 1 -- inplace_update $ints 8"
echo "$ build/bench/bench_replay memcpy $bytes 10   (the median of its 10 copies, each round)"
for kind in host device; do
  ref_r="r_$kind[@]" ref_s="s_$kind[@]"
  echo "    shadow=$kind: restore $(med "${!ref_r}") GB/s, save $(med "${!ref_s}") GB/s (mean over the run, with the shadow's one-time allocation)"
done
echo "    memcpy: $(med "${mc[@]}") GB/s"
mmc=$(stats "${mc[@]}" | cut -d' ' -f1)
echo "    median restore / median memcpy: host $(calc "100 * $(stats "${r_host[@]}" | cut -d' ' -f1) / $mmc" 0)%," \
  "device $(calc "100 * $(stats "${r_device[@]}" | cut -d' ' -f1) / $mmc" 0)% (goal >= 70%)"

echo
echo "== (b) many passes of a program whose start-up dominates: slow_start 500 4 (0.5 s start-up, 4 kernels);" \
  "$REPEATS interleaved rounds, median (min-max) in ms"
wall() { # CMD...: wall milliseconds of one run
  local t0 t1
  t0=$(now)
  "$@" >/dev/null 2>&1
  t1=$(now)
  calc "($t1 - $t0) * 1000" 0
}
declare -a w_plain=() w_k1=() w_k3=() w_k9=() w_a1=() w_a3=() w_a9=()
for r in $(seq "$REPEATS"); do
  w_plain+=("$(wall "$EX/slow_start" 500 4)")
  for p in 1 3 9; do
    eval "w_k$p+=($(wall "$HP" profile -q -f --counters "$(counters $p)" --max-counters-per-pass 1 -o k.db -- "$EX/slow_start" 500 4))"
    eval "w_a$p+=($(wall "$HP" profile -q -f --replay application --counters "$(counters $p)" --max-counters-per-pass 1 -o a.db -- "$EX/slow_start" 500 4))"
  done
done
echo "$ build/examples/ocl/slow_start 500 4      -> $(med "${w_plain[@]}") ms"
declare -A tk ta
for p in 1 3 9; do
  kk="w_k$p[@]" aa="w_a$p[@]"
  tk[$p]=$(stats "${!kk}" | cut -d' ' -f1)
  ta[$p]=$(stats "${!aa}" | cut -d' ' -f1)
  echo "$ hubprof profile [--replay application] --counters <$p counters> --max-counters-per-pass 1 -- slow_start 500 4"
  echo "    $p pass(es): kernel replay $(med "${!kk}") ms, application replay $(med "${!aa}") ms: medians $(calc "${ta[$p]} / ${tk[$p]}")x"
done
k13=$(calc "${tk[9]} + 4 * (${tk[9]} - ${tk[3]}) / 6" 0)
a13=$(calc "${ta[9]} + 4 * (${ta[9]} - ${ta[3]}) / 6" 0)
echo "    13 passes (extrapolated from the medians at 3 and 9): kernel replay $k13 ms, application replay $a13 ms: $(calc "$a13 / $k13")x (goal >= 5x)"
echo "    machine load: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
echo

# (c) write-tracked kernel replay: bench/bench_wtrack.sh (also run alone; BENCH_REPLAY_WTRACK=0 leaves it out)
[ "${BENCH_REPLAY_WTRACK:-1}" = 0 ] || bash "$(dirname "$B")/bench/bench_wtrack.sh" "$dir/wtrack"
