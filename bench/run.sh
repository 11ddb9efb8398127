#!/usr/bin/env bash
# `make bench`: runs every benchmark side by side with its baseline and prints the figures that go into
# docs/benchmarks.md. Scratch data goes to BENCH_DIR (default: a temporary folder, removed after).
# BENCH_FILES / BENCH_DISPATCHES size the merge benchmark (default 64 × 100000, the issue's figure).
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start "${BENCH_DIR:-}"
files=${BENCH_FILES:-64}
disp=${BENCH_DISPATCHES:-100000}
echo "== machine: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%d)"
echo
echo "== write rate and bytes per row (bench/bench_write.c, 2M rows each, interleaved rounds)"
"$B/bench/bench_write" "$dir" "${BENCH_ROWS:-2000000}" "${BENCH_REPEATS:-3}"
echo
echo "== collector overhead per dispatch (bench/bench_trace.sh)"
bash bench/bench_trace.sh "${BENCH_TRACE_LAUNCHES:-20000}" "${BENCH_TRACE_ROUNDS:-31}"
echo "== cost of --api per dispatch (bench/bench_api.sh)"
bash bench/bench_api.sh "${BENCH_LAUNCHES:-200000}" "${BENCH_ROUNDS:-7}"
echo
echo "== trace fast path, load-independent: the host stamp, pre-faulted log pages, instructions per dispatch"
"$B/bench/bench_stamp" 2000000 "${BENCH_ROUNDS:-7}"
"$B/bench/bench_prefault" "$dir" 4 "${BENCH_ROUNDS:-7}"
bash bench/bench_trace_instr.sh
echo
echo "== sampling overhead at 3 periods against trace (bench/bench_sample.sh)"
bash bench/bench_sample.sh "${BENCH_SAMPLE_LAUNCHES:-50000}" "${BENCH_ROUNDS:-7}"
echo "   what a thread's perf events cost per context switch (bench/bench_switch_events.c)"
"$B/bench/bench_switch_events" 20000 "${BENCH_ROUNDS:-7}"
echo
echo "== region begin+end pair: hubprof absent, under trace, api.h and NVTX (bench/bench_regions.sh)"
bash bench/bench_regions.sh "${BENCH_REGION_PAIRS:-1000000}" "${BENCH_ROUNDS:-7}"
echo
echo "== dispatch selection on the trace fast path (bench/bench_select.sh)"
bash bench/bench_select.sh "${BENCH_LAUNCHES:-200000}" "${BENCH_ROUNDS:-7}"
echo
echo "== merge: $files per-process profiles x $disp dispatches (bench/bench_merge.c)"
mkdir -p "$dir/logs" "$dir/rocpd" "$dir/out"
"$B/examples/gen_logs" "$dir/logs" "$files" "$disp" 4 1
"$B/examples/gen_logs" "$dir/rocpd" "$files" "$disp" 4 1 rocpd
"$B/bench/bench_merge" "$dir/logs" "$dir/rocpd" "$dir/out" "${BENCH_REPEATS:-3}"
echo
echo "== kernel replay's counting window: kernel against enqueue (bench/bench_window.sh)"
BENCH_WINDOW_RUNS=${BENCH_ROUNDS:-7} bash bench/bench_window.sh

echo "== cluster: merge DIR of 16, 32 and 64 rank stores x $disp dispatches into a dataset (bench/bench_cluster.sh)"
bash bench/bench_cluster.sh "$dir/cluster" "$disp" "${BENCH_REPEATS:-3}"
echo
echo "== kernel replay (bench/bench_replay.sh)"
bash bench/bench_replay.sh "$dir/replay"
echo
echo "== formats: one 1 M-dispatch store with 8 counter values per dispatch as rocpd and Parquet (bench/bench_formats.c)"
"$B/examples/gen_logs" "$dir/fmt" 1 "${BENCH_FORMAT_DISPATCHES:-1000000}" 8 2
"$B/bench/bench_formats" "$dir/fmt"/*.log "$dir/fmt" "${BENCH_REPEATS:-3}"
echo
echo "== analyze on a large Parquet store vs DuckDB (bench/bench_analyze.sh)"
bash bench/bench_analyze.sh "$dir/analyze" "${BENCH_ANALYZE_PROCS:-10}" "${BENCH_ANALYZE_DISPATCHES:-1000000}" 3
echo
echo "== top kernels over the same dataset: hubprof analyze, DuckDB and Spark side by side (bench/bench_dataset.py)"
echo "   (dataset: ${BENCH_DATASET_PROCS:-10} processes x ${BENCH_DATASET_DISPATCHES:-1000000} dispatches, written by bench/gen_dataset)"
"$B/bench/gen_dataset" "$dir/dataset.parquet" "${BENCH_DATASET_PROCS:-10}" "${BENCH_DATASET_DISPATCHES:-1000000}"
python3 bench/bench_dataset.py "$dir/dataset.parquet" "${BENCH_ROUNDS:-5}"
echo
echo "== export and report: timelines and the HTML page of a 1 M-dispatch store next to analyze (bench/bench_export.sh)"
bash bench/bench_export.sh "$dir/export" "${BENCH_EXPORT_DISPATCHES:-1000000}" "${BENCH_REPEATS:-3}"
echo "== export and report at 10 M dispatches: memory stays bounded (bench/bench_export.sh)"
BENCH_EXPORT_RUNS="analyze perfetto otf2 report" \
  bash bench/bench_export.sh "$dir/export10m" "${BENCH_EXPORT_LARGE_DISPATCHES:-10000000}" "${BENCH_EXPORT_LARGE_ROUNDS:-2}"
rm -rf "$dir/export10m"
echo
echo "== Python bindings: read rate of store.table(\"dispatch\") (bench/bench_python.py)"
python3 bench/bench_python.py "$dir/python" "${BENCH_PYTHON_DISPATCHES:-1000000}" 3
echo
echo "== analyze on a 1 M-dispatch store with counters, every format (bench/bench_analyze1m.sh)"
bash bench/bench_analyze1m.sh "$dir/analyze1m" 1000000 3
echo
echo "== pass planner: gfx942 full profile vs a first-fit baseline (bench/bench_plan.sh)"
bash bench/bench_plan.sh "${BENCH_PLAN_ROUNDS:-11}"
