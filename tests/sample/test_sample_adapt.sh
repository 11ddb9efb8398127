#!/usr/bin/env bash
# Threads that switch more than they run are sampled at 50 ms (issue 28: `sample` on synchronous dispatches;
# src/collector/sample.c SLOW_NS): a program that waits after every tiny dispatch (examples/ocl/launch_loop
# N 1) has its threads slowed (metadata sample_threads_slowed) and every sample's weight is its period (the
# period or 50 ms); --fixed-period (HUBPROF_SAMPLE_ADAPT=0) keeps every thread at the period; a thread that
# computes (hot_spot's long kernels) stays at the period. What slowing saves is bench/bench_sample.sh's to
# measure (no timed checks in tests).
# usage: test_sample_adapt.sh [HUBPROF]   (from the repository root)
# SPDX-License-Identifier: MIT
set -u
ROOT=$PWD
HP=$(realpath "${1:-build/hubprof}")
EX=$ROOT/build/examples/ocl
. "$ROOT/tests/lib.sh"
hp_test_env
export POCL_CACHE_DIR=$T/kcache POCL_DEVICES=pthread
need_built test_sample_adapt "$HP" "$EX/launch_loop" "$EX/hot_spot" "$HUBPROF_COLLECTOR"
need_opencl test_sample_adapt
cd "$T"

# meta STORE: "slowed weights..." of a store
meta() {
  python3 - "$1" <<'PY'
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    m = s.metadata()
    w = sorted(set(int(x) for x in s.table("pc_sample").weight))
print(m.get("sample_threads_slowed", "none"), *w)
PY
}

# 1. a synchronous tiny-dispatch loop: its threads slowed, the samples weighted by their period
expect 0 "$HP" sample -q -o a.db -- "$EX/launch_loop" 20000 1
read -r slowed weights <<<"$(meta a.db)"
[ "${slowed:-0}" -ge 1 ] 2>/dev/null && ok || bad "launch_loop: no thread slowed ($slowed)"
for w in $weights; do
  [ "$w" = 1000000 ] || [ "$w" = 50000000 ] || bad "a sample weighs $w ns (want 1000000 or 50000000)"
done
ok
# 2. --fixed-period (HUBPROF_SAMPLE_ADAPT=0): none slowed
expect 0 "$HP" sample -q --fixed-period -o f.db -- "$EX/launch_loop" 20000 1
read -r slowed weights <<<"$(meta f.db)"
# (weights: none, or the period only; a tiny kernel may get no sample)
[ "$slowed" = 0 ] && case "$weights" in "" | 1000000) true ;; *) false ;; esac && ok ||
  bad "--fixed-period: slowed $slowed, weights $weights"
# 3. a computing thread keeps the period: hot_spot's kernels get their samples at 1 ms
expect 0 "$HP" sample -q -o h.db -- "$EX/hot_spot" 4000000 1
read -r slowed weights <<<"$(meta h.db)"
case " $weights " in *" 1000000 "*) ok ;; *) bad "hot_spot: no sample at the period ($weights)" ;; esac
# (what it saves is measured by bench/bench_sample.sh, not here: a timed check is no test)
echo "test_sample_adapt: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
