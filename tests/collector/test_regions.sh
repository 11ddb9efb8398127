#!/usr/bin/env bash
# End-to-end tests of regions from inside the application (include/hubprof/api.h from C and C++, NVTX
# injection, start/stop) under PoCL: the programs' output unchanged, nothing of hubprof loaded without it,
# every region and marker recorded exactly, in rocpd, log and Parquet, unbalanced calls and odd names.
# usage: test_regions.sh [HUBPROF]   (from the repository root)
# SPDX-License-Identifier: MIT
set -u
ROOT=$PWD
HP=$(realpath "${1:-build/hubprof}")
EX=$ROOT/build/examples/ocl
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ulimit -c 0
unset HUBPROF_OUTPUT_DIR HUBPROF_MODE HUBPROF_START_PAUSED HUBPROF_INJECTION_PATH NVTX_INJECTION64_PATH \
  OPENCL_LAYERS LD_PRELOAD
export HUBPROF_COLLECTOR=$ROOT/build/libhubprof_collector.so # the ASan CLI must not put its runtime in apps
export PYTHONPATH=$ROOT/python
. "$ROOT/tests/lib.sh"
need_built test_regions "$HP" "$EX/regions" "$EX/regions_cxx"
need_opencl test_regions
cd "$T"

# check STORE PYTHON-ASSERTIONS: r = the region table as a DataFrame, names = its name counts
check() {
  local store=$1 what=$2
  shift 2
  if python3 - "$store" "$@" >"$T/py.err" 2>&1 <<PY; then ok; else bad "$what: $(tail -3 "$T/py.err")"; fi
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    r = s.table("region")
    d = s.table("dispatch")
    names = r["name"].value_counts().to_dict()
    $what
PY
}

# same NAME CMD...: the program prints the same and exits the same with and without hubprof, and without it
# no hubprof library is loaded
same() {
  local name=$1
  shift
  LD_DEBUG=files "$@" >"$name.plain.out" 2>"$name.plain.err"
  local prc=$?
  "$HP" trace -q -o "$name.db" -- "$@" >"$name.out" 2>"$name.err"
  local rc=$?
  [ $rc -eq $prc ] && ok || bad "$name: exit $rc under trace vs $prc alone"
  cmp -s "$name.plain.out" "$name.out" && ok || bad "$name: output changed: $(diff "$name.plain.out" "$name.out")"
  grep -q "libhubprof" "$name.plain.err" && bad "$name: hubprof loaded without hubprof" || ok
}

# 1. C: nested regions on 3 threads, the same in every format
same c "$EX/regions" 3 5
nest='w = r[r.name == "step"]; e = r[r.name == "enqueue"]
    assert all(((w.thread_id == x.thread_id) & (w.start_ns <= x.start_ns) & (w.end_ns >= x.end_ns)).any() for x in e.itertuples()), "enqueue outside step"'
# each dispatch names the innermost region it was enqueued in (dispatch.region_id): its thread's "enqueue"
inner='
    x = r.set_index("id").loc[d.region_id.values]
    assert (d.region_id > 0).all() and (x["name"].values == "enqueue").all(), "region_id not the innermost"
    assert (x.thread_id.values == d.thread_id.values).all(), "region_id of another thread"
    assert ((x.start_ns.values <= d.enqueue_ns.values) & (d.enqueue_ns.values <= x.end_ns.values)).all()'
for fmt in rocpd log parquet; do
  "$HP" trace -q -F $fmt -o "c.$fmt" -- "$EX/regions" 3 5 >/dev/null 2>"c.$fmt.err" || bad "trace -F $fmt: $(cat "c.$fmt.err")"
  check "c.$fmt" 'assert names == {"worker": 3, "step": 15, "enqueue": 15, "setup": 1, "worker done": 3}, names
    assert set(r.category) == {"hubprof"}, set(r.category)
    m = r[r.name == "worker done"]; assert (m.start_ns == m.end_ns).all()
    x = r[r.name != "worker done"]; assert (x.end_ns > x.start_ns).all()
    assert r[r.name == "worker"].thread_id.nunique() == 3 and r.id.is_unique and len(d) == 15
    '"$nest$inner"
done
[ "$(sqlite3 c.rocpd "select count(*) from regions where category = 'hubprof'")" = 37 ] && ok || bad "rocpd regions view"
[ "$(sqlite3 c.rocpd "select count(*) from regions where name = 'step' and duration > 0")" = 15 ] && ok ||
  bad "rocpd regions view: steps"

# 1b. regions and dispatches on one time line with the TSC stamp (src/collector/stamp.c): region times and
# enqueue times are both TSC stamps converted by one calibration, regions when they end, dispatches at
# harvest. 1200 dispatches, each enqueued right after its "enqueue" region begins, harvested every 1 ms (so
# calibration points are added while regions are open): every one lies within its region, on every thread.
if [ "$(uname -m)" = x86_64 ]; then
  HUBPROF_TIMESTAMP=tsc HUBPROF_HARVEST_MS=1 HUBPROF_DEBUG=1 "$HP" trace -q -o tsc.db -- "$EX/regions" 4 300 \
    >/dev/null 2>tsc.err || bad "trace with the TSC stamp: $(tail -3 tsc.err)"
  grep -q "enqueue times from rdtsc" tsc.err && ok || bad "the TSC stamp was not used: $(grep -m1 "enqueue times" tsc.err)"
  check tsc.db 'assert len(d) == 1200 and names["enqueue"] == 1200, (len(d), names)
    '"$nest$inner"
fi

# analyze --by region: calls, inclusive/exclusive time, dispatches inside (CLI and Python agree)
"$HP" analyze --by region --format csv c.rocpd >an.csv 2>an.err || bad "analyze --by region: $(cat an.err)"
python3 - an.csv >py.err 2>&1 <<'PY' && ok || bad "analyze --by region: $(tail -3 py.err)"
import csv, sys
rows = {r["region"]: r for r in csv.DictReader(open(sys.argv[1]))}
assert set(rows) == {"worker", "step", "enqueue", "setup", "worker done"}, rows
i = lambda n, k: int(float(rows[n][k]))
assert [i(n, "calls") for n in ("worker", "step", "enqueue", "setup", "worker done")] == [3, 15, 15, 1, 3]
assert [i(n, "dispatches") for n in ("worker", "step", "enqueue", "setup")] == [15, 15, 15, 0]
assert i("worker", "exclusive_ns") == i("worker", "total_ns") - i("step", "total_ns")
assert i("step", "exclusive_ns") == i("step", "total_ns") - i("enqueue", "total_ns")
assert i("enqueue", "kernel_ns") == i("worker", "kernel_ns") > 0 and i("worker done", "total_ns") == 0
PY
"$HP" analyze --by region-tree --format csv c.rocpd >tree.csv 2>tree.err || bad "analyze --by region-tree: $(cat tree.err)"
python3 - tree.csv >py.err 2>&1 <<'PY' && ok || bad "analyze --by region-tree: $(tail -3 py.err)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
got = [(r["path"], int(r["depth"]), int(r["calls"]), r["region"]) for r in rows]
assert got == [("setup", 0, 1, "setup"), ("worker", 0, 3, "worker"), ("worker > step", 1, 15, "  step"),
               ("worker > step > enqueue", 2, 15, "    enqueue"), ("worker > worker done", 1, 3, "  worker done")], got
PY
check c.parquet 'a = s.analyze(by="region").set_index("region")
    assert a.loc["step", "calls"] == 15 and a.loc["worker", "dispatches"] == 15, a'

# 2. C++ (scope guards), 3 threads
same cxx "$EX/regions_cxx" 3 4
check cxx.db 'assert names == {"cxx worker": 3, "cxx step 0": 6, "cxx step 1": 6, "cxx enqueue": 12}, names'

# 3. misuse and odd names: never a crash, each recorded as documented (docs/api-regions.md)
same edge "$EX/regions" edge
check edge.db 'big = [n for n in names if n.startswith("aaaa")]
    assert len(big) == 1 and len(big[0].encode()) == 1023 and big[0].endswith("...") and names[big[0]] == 1, big
    for n in ["hubprof: region end without begin", "(null)", "", "bad \\xff\\xfe utf-8 \\xc3(", "caf\u00e9",
              "open at thread exit", "hubprof: thread exit inside region", "open at process exit",
              "inner open at process exit", "hubprof: process exit inside region", "hubprof_stop", "hubprof_start"]:
        assert names.get(n) == 1, (n, names)
    px = r[r.name.str.contains("at process exit")]
    assert px.end_ns.nunique() == 1 and px.end_ns.iloc[0] == r[r.name == "hubprof: process exit inside region"].start_ns.iloc[0]
    tx = r[r.name.str.contains("thread exit")]
    assert tx.thread_id.nunique() == 1 and tx.thread_id.iloc[0] != px.thread_id.iloc[0]
    assert names.get("b" * 1023) == 1 and names.get("c" * 1020 + "...") == 1, "1023/1024-byte names"
    e = [n for n in names if n.startswith("\u00e9")]
    assert len(e) == 1 and e[0] == "\u00e9" * 510 + "..." and len(e[0].encode()) == 1023, e
    assert len(r) == 16, len(r)'

# exit() while 3 threads begin and end regions without pause: the exit handler waits for a thread inside a
# call or the thread sees the exit and leaves (the busy word with membarrier; the lock without it)
for mb in on off; do
  e=()
  [ $mb = off ] && e=(HUBPROF_TEST_REGIONS_NO_MEMBARRIER=1)
  env "${e[@]}" "$HP" trace -q -o race.$mb.db -- "$EX/regions" race >race.$mb.out 2>race.$mb.err
  rc=$?
  [ $rc -eq 0 ] && grep -q "regions race: exit" race.$mb.out && ! grep -q "hubprof:" race.$mb.err && ok ||
    bad "race ($mb): exit $rc: $(tail -3 race.$mb.err)"
  check race.$mb.db 'o = r[r.name == "race outer"]; i = r[r.name == "race inner"]
    assert len(o) > 100 and len(i) >= len(o) - 3, (len(o), len(i))
    assert (r.end_ns >= r.start_ns).all() and r.id.is_unique
    assert names.get("hubprof: process exit inside region", 0) <= 3, names
    assert set(names) <= {"race outer", "race inner", "hubprof: process exit inside region"}, names'
done

# a region open across fork(): parent and child each end their copy, in their own process
same fork "$EX/regions" fork
check fork.db 'assert names == {"across fork": 2, "child": 1}, names
    p = s.table("process"); assert len(p) == 2
    a = r[r.name == "across fork"]; c = r[r.name == "child"].iloc[0]
    assert a.process_id.nunique() == 2 and c.process_id in set(a.process_id)'

# 4. start/stop: 3 dispatches, start, 4, stop, 5
"$HP" trace -q -o p.db -- "$EX/regions" paused >/dev/null 2>p.err || bad "paused: $(cat p.err)"
"$HP" trace -q --start-paused -o sp.db -- "$EX/regions" paused >/dev/null 2>sp.err || bad "start-paused: $(cat sp.err)"
[ "$(sqlite3 p.db 'select count(*) from rocpd_kernel_dispatch')" = 7 ] && ok || bad "not paused: $(sqlite3 p.db 'select count(*) from rocpd_kernel_dispatch') dispatches"
[ "$(sqlite3 sp.db 'select count(*) from rocpd_kernel_dispatch')" = 4 ] && ok || bad "--start-paused: $(sqlite3 sp.db 'select count(*) from rocpd_kernel_dispatch') dispatches"
check sp.db 'assert names == {"hubprof_start": 1, "hubprof_stop": 1}, names
    a = r[r.name == "hubprof_start"].start_ns.iloc[0]; b = r[r.name == "hubprof_stop"].start_ns.iloc[0]
    assert ((d.enqueue_ns > a) & (d.enqueue_ns < b)).all() and len(d) == 4'
C1=(--counters task-clock --max-counters-per-pass 1)
"$HP" profile -q "${C1[@]}" --start-paused -o pp.db -- "$EX/regions" paused >pp.out 2>pp.err || bad "profile --start-paused: $(cat pp.err)"
grep -q "12 dispatches, 0 wrong" pp.out && ok || bad "profile --start-paused changed the results: $(cat pp.out)"
[ "$(sqlite3 pp.db 'select count(*) from rocpd_kernel_dispatch')" = 4 ] && ok || bad "profile --start-paused: $(sqlite3 pp.db 'select count(*) from rocpd_kernel_dispatch') dispatches"
"$HP" trace --start-paused=1 -- true >/dev/null 2>bad.err
[ $? -eq 2 ] && ok || bad "--start-paused takes no value: $(cat bad.err)"

# 5. NVTX (programs built against the CUDA toolkit's NVTX v3 headers)
if [ ! -x "$EX/nvtx_ranges" ]; then
  echo "test_regions: NVTX part skipped: no NVTX v3 headers at build time (CUDA toolkit's include/nvtx3)"
else
  same nvtx "$EX/nvtx_ranges" 3 4
  check nvtx.db 'assert names == {"setup": 1, "cross-thread": 1, "worker": 3, "step": 12, "launch": 12,
                     "finish \u00e9": 12, "worker done": 3, "registered mark": 3,
                     "hubprof: region end without begin": 1}, names
    cat = dict(zip(r.name, r.category))
    assert cat["step"] == "solver" and cat["registered mark"] == "solver" and cat["launch"] == "nvtx", cat
    assert cat["hubprof: region end without begin"] == "hubprof"
    s = r[r.name == "step"]; f = r[r.name == "finish \u00e9"]
    assert all(((s.thread_id == x.thread_id) & (s.start_ns <= x.start_ns) & (s.end_ns >= x.end_ns)).any() for x in f.itertuples())
    c = r[r.name == "cross-thread"].iloc[0]; su = r[r.name == "setup"].iloc[0]
    assert c.thread_id == su.thread_id and c.end_ns > c.start_ns'
  # without hubprof but with an injection path that is not a library: NVTX stays a no-op
  NVTX_INJECTION64_PATH=/nonexistent "$EX/nvtx_ranges" 2 2 >nv2.out 2>&1 && grep -q "0 wrong" nv2.out && ok ||
    bad "NVTX with a missing injection library: $(cat nv2.out)"
fi

echo "test_regions: $pass passed, $fail failed"
[ $fail -eq 0 ]
