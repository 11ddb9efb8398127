#!/usr/bin/env bash
# `make demo`: the main job on a bundled example. Writes per-process logs as an instrumented
# multi-process run would, merges them into ONE rocpd file, shows `hubprof info`, and asks ROCm's
# own `top_kernels` view for the top kernels with sqlite3.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${DEMO_OUT:-build/demo}
rm -rf "$out" && mkdir -p "$out/logs"
echo "== 4 processes write their logs (examples/gen_logs.c, 2000 dispatches, 4 counters in 2 passes each)"
build/examples/gen_logs "$out/logs" 4 2000 4 2
ls -l "$out/logs"
echo
echo "== hubprof merge -o $out/profile.db $out/logs/*.log"
build/hubprof merge -o "$out/profile.db" "$out"/logs/*.log
echo
echo "== hubprof info $out/profile.db"
build/hubprof info "$out/profile.db"
echo
echo "== sqlite3 $out/profile.db 'select * from top_kernels'   (ROCm's rocpd view)"
sqlite3 -header -column "$out/profile.db" "select name, total_calls, total_duration, average, round(percentage, 2) as percentage from top_kernels;"
