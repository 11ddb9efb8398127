#!/usr/bin/env bash
# `make demo`: the main job on a bundled example. Traces an OpenCL program (a parent and a forked child,
# both running kernels on PoCL) with `hubprof trace`, prints the top kernels with `hubprof analyze`,
# shows `hubprof info`, and asks ROCm's own `top_kernels` view the same question with sqlite3.
# SPDX-License-Identifier: MIT
set -euo pipefail
cd "$(dirname "$0")/.."
out=${DEMO_OUT:-build/demo}
rm -rf "$out" && mkdir -p "$out"
app=(build/examples/ocl/forking 200)
echo "== hubprof trace -o $out/trace.db -- ${app[*]}"
build/hubprof trace -o "$out/trace.db" -- "${app[@]}"
echo
echo "== hubprof analyze $out/trace.db"
build/hubprof analyze "$out/trace.db"
echo
echo "== hubprof info $out/trace.db"
build/hubprof info "$out/trace.db"
echo
echo "== sqlite3 $out/trace.db 'select * from top_kernels'   (ROCm's rocpd view on the same file)"
sqlite3 -header -column "$out/trace.db" \
  "select name, total_calls, total_duration, average, round(percentage, 2) as percentage from top_kernels;"
