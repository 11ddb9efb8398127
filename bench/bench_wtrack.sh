#!/usr/bin/env bash
# Write-tracked kernel replay benchmark (docs/replay.md "Write tracking", docs/benchmarks.md), part (c) of
# bench/bench_replay.sh: added cost per dispatch of kernel replay with and without write tracking.
# usage: bench_wtrack.sh [DIR]   (needs `make all`; DIR: scratch, default a temp dir)
# BENCH_WTRACK_BEFORE=COLLECTOR.so: a collector built from an earlier commit, run in the same rounds as a
# "before" column (tracked path, same mode); BENCH_WTRACK_DEVICES="pthread basic" (default) picks devices.
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start "${1:-}"
B=$PWD/$B
HP=$B/hubprof
EX=$B/examples/ocl
REPEATS=${BENCH_REPLAY_REPEATS:-3}
ALL=task-clock,cpu-clock,context-switches
counters() { echo "$ALL" | cut -d, -f1-"$1"; }
calc() { awk "BEGIN { printf \"%.${2:-1}f\", $1 }"; } # EXPR [DECIMALS]
cd "$dir"
# A kernel that writes 4 KiB of a buffer of
# 64 KiB, 4 MiB and 64 MiB, and one that writes the whole buffer, profiled with 3 passes. Each round runs the
# program unprofiled, with write tracking (HUBPROF_WTRACK=auto, the default, or =on) and with the full save/compare/restore
# (HUBPROF_WTRACK=off, the path of before), one after the other; the added cost per dispatch is each profiled
# run's time per dispatch minus the same round's unprofiled one. Median and min-max over the rounds.
PW=$EX/partial_write
WK=${BENCH_WTRACK_K:-20}
WT_ON=${BENCH_WTRACK_MODE:-auto} # the tracked column: auto (the default: tracking where cheaper) or on
pw_ns() { sed -nE 's/.*ns_per_dispatch=([0-9.]+).*/\1/p'; }
# wtrack_case BYTES WRITE ENV...: prints one figure line; sets wt_med and full_med (ns added per dispatch)
wtrack_case() {
  local bytes=$1 wr=$2 p on off bef
  bef_med=""
  shift 2
  local -a d_on=() d_off=() base=() d_bef=()
  for _ in $(seq "$REPEATS"); do
    p=$(env "$@" "$PW" "$bytes" "$wr" "$WK" | pw_ns)
    on=$(env "$@" HUBPROF_WTRACK="$WT_ON" "$HP" profile -q -f --counters "$(counters 3)" --max-counters-per-pass 1 \
      -o wt.db -- "$PW" "$bytes" "$wr" "$WK" | pw_ns)
    off=$(env "$@" HUBPROF_WTRACK=off "$HP" profile -q -f --counters "$(counters 3)" --max-counters-per-pass 1 \
      -o wt.db -- "$PW" "$bytes" "$wr" "$WK" | pw_ns)
    if [ -n "${BENCH_WTRACK_BEFORE:-}" ]; then
      bef=$(env "$@" HUBPROF_COLLECTOR="$BENCH_WTRACK_BEFORE" HUBPROF_WTRACK="$WT_ON" "$HP" profile -q -f \
        --counters "$(counters 3)" --max-counters-per-pass 1 -o wt.db -- "$PW" "$bytes" "$wr" "$WK" | pw_ns)
      d_bef+=("$(calc "$bef - $p" 0)")
    fi
    base+=("$p")
    d_on+=("$(calc "$on - $p" 0)")
    d_off+=("$(calc "$off - $p" 0)")
  done
  local s_on s_off s_base
  s_on=$(stats "${d_on[@]}")
  s_off=$(stats "${d_off[@]}")
  s_base=$(stats "${base[@]}")
  wt_med=${s_on%% *}
  full_med=${s_off%% *}
  local before=""
  if [ ${#d_bef[@]} -gt 0 ]; then
    local s_bef
    s_bef=$(stats "${d_bef[@]}")
    bef_med=${s_bef%% *}
    before=$(printf ', before %s ns (min %s, max %s)' "$bef_med" "$(cut -d' ' -f2 <<<"$s_bef")" "$(cut -d' ' -f3 <<<"$s_bef")")
  fi
  printf '    %9d B buffer, %9d B written: unprofiled %s ns; added per dispatch: tracked %s ns (min %s, max %s), full %s ns (min %s, max %s)%s\n' \
    "$bytes" "$wr" "${s_base%% *}" "$wt_med" "$(cut -d' ' -f2 <<<"$s_on")" "$(cut -d' ' -f3 <<<"$s_on")" \
    "$full_med" "$(cut -d' ' -f2 <<<"$s_off")" "$(cut -d' ' -f3 <<<"$s_off")" "$before"
}
wtrack_device() { # LABEL ENV...
  local label=$1
  shift
  echo "== (c) write-tracked kernel replay, $label: partial_write BYTES WRITE $WK, 3 passes; $REPEATS interleaved rounds (unprofiled, HUBPROF_WTRACK=$WT_ON, =off), median (min-max)"
  echo "$ ${*:+$* }[HUBPROF_WTRACK=$WT_ON|off hubprof profile --counters $(counters 3) --max-counters-per-pass 1 --] build/examples/ocl/partial_write BYTES WRITE $WK"
  local small big wbig fbig bbig
  wtrack_case 65536 4096 "$@"
  small=$wt_med
  wtrack_case 4194304 4096 "$@"
  wtrack_case 67108864 4096 "$@"
  big=$wt_med
  wtrack_case 65536 65536 "$@"
  wtrack_case 4194304 4194304 "$@"
  wtrack_case 67108864 67108864 "$@"
  wbig=$wt_med
  fbig=$full_med
  bbig=${bef_med:-}
  echo "    4 KiB written, 64 KiB -> 64 MiB buffer: tracked cost grows $(calc "$big / ($small > 0 ? $small : 1)" 2) x (goal <= 2)"
  echo "    whole 64 MiB written: tracked / full $(calc "$wbig / ($fbig > 0 ? $fbig : 1)" 2) x"
  [ -n "$bbig" ] && echo "    whole 64 MiB written: tracked / before $(calc "$wbig / ($bbig > 0 ? $bbig : 1)" 2) x (goal <= 1.5)"
  echo
}
if [ -x "$B/bench/bench_wtrack_mprotect" ]; then # what page protection itself costs here, by size
  "$B/bench/bench_wtrack_mprotect" 11
else
  echo "(build/bench/bench_wtrack_mprotect is not built: make bench)"
fi
echo
for dev in ${BENCH_WTRACK_DEVICES:-pthread basic}; do
  if [ "$dev" = basic ]; then wtrack_device "PoCL basic device" POCL_DEVICES=basic; else wtrack_device "PoCL pthread device (default)"; fi
done
if [ -n "${BENCH_WTRACK_NO_LOOP:-}" ]; then
  echo "machine load when done: $(cut -d" " -f1-3 /proc/loadavg) (1, 5, 15 min)"
  exit 0
fi
# Launch-bound loop on the basic device: kernel replay's cost per dispatch per pass, the replay with 3 passes
# against the same loop unprofiled, and the slope from 1 to 3 passes, tracking on and off, interleaved.
LN=${BENCH_WTRACK_LOOP:-20000}
ll_ns() { sed -nE 's/.*ns_per_dispatch=([0-9.]+).*/\1/p'; }
echo "== (c) launch-bound loop, PoCL basic device: launch_loop $LN 1, $REPEATS interleaved rounds, median (min-max)"
for wt in on off; do
  declare -a per=() slope=()
  for _ in $(seq "$REPEATS"); do
    p=$(POCL_DEVICES=basic "$EX/launch_loop" "$LN" 1 | ll_ns)
    t1=$(POCL_DEVICES=basic HUBPROF_WTRACK=$wt "$HP" profile -q -f --counters "$(counters 1)" --max-counters-per-pass 1 \
      -o ll.db -- "$EX/launch_loop" "$LN" 1 | ll_ns)
    t3=$(POCL_DEVICES=basic HUBPROF_WTRACK=$wt "$HP" profile -q -f --counters "$(counters 3)" --max-counters-per-pass 1 \
      -o ll.db -- "$EX/launch_loop" "$LN" 1 | ll_ns)
    per+=("$(calc "($t3 - $p) / 3" 0)")
    slope+=("$(calc "($t3 - $t1) / 2" 0)")
  done
  echo "$ POCL_DEVICES=basic HUBPROF_WTRACK=$wt hubprof profile --counters $(counters 3) --max-counters-per-pass 1 -- launch_loop $LN 1"
  echo "    tracking $wt: added per dispatch per pass (3 passes) $(stats "${per[@]}") ns (median min max); per extra pass (1 -> 3) $(stats "${slope[@]}") ns (goal <= 3000)"
done
echo
echo "machine load when done: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
