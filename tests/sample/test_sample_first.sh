#!/usr/bin/env bash
# `hubprof sample` as a new user meets it (issue 28): the program run the ordinary way first (PoCL caches its
# kernels without their IR), then sampled: the source lines of a -g build are there on the first try, and
# nothing but the application's own output and hubprof's lines reaches the terminal (sample or analyze: no
# LLVM messages). The store seen through ROCm's views: every sample in `samples` (each has its rocpd_event),
# every code object in `code_objects` (each with a real agent).
# usage: test_sample_first.sh [HUBPROF]   (from the repository root)
# SPDX-License-Identifier: MIT
set -u
ROOT=$PWD
HP=$(realpath "${1:-build/hubprof}")
EX=$ROOT/build/examples/ocl
. "$ROOT/tests/lib.sh"
hp_test_env
unset POCL_CACHE_DIR POCL_LEAVE_KERNEL_COMPILER_TEMP_FILES
export XDG_CACHE_HOME=$T/cache # PoCL's own kernel cache and hubprof's, both in the scratch folder
need_built test_sample_first "$HP" "$EX/hot_spot" "$HUBPROF_COLLECTOR" "$ROOT/build/libhubprof_llvm.so"
need_opencl test_sample_first
cd "$T"
ITERS=4000000

# 1. the ordinary run: PoCL caches the kernels, without their IR. Run twice: on a warm cache PoCL itself
# (its LLVM) prints the verifier's complaint about the -g bitcode ("function definition may only have a
# distinct !dbg attachment"), without hubprof: the application's own stderr, which hubprof leaves alone
"$EX/hot_spot" -g $ITERS 1 >plain.out 2>plain.err || bad "hot_spot alone failed: $(cat plain.err)"
"$EX/hot_spot" -g $ITERS 1 >/dev/null 2>plain2.err
sort -u plain.err plain2.err >own.err
if [ -n "$(find "$T/cache" -name hot.so)" ] && [ -z "$(find "$T/cache" -name parallel.bc)" ]; then ok; else
  bad "the ordinary run did not cache hot.so without its IR under $T/cache"
fi

# 2. then sample, as one would: the application's output as before, and on stderr only what it printed
# itself and hubprof's own lines
expect 0 "$HP" sample -o s.db -- "$EX/hot_spot" -g $ITERS 1
if cmp -s plain.out out; then ok; else bad "output differs under sample: $(head -3 out)"; fi
tr '\r' '\n' <err | grep -v '^hubprof' | grep -v '^\s*$' | grep -vxFf own.err >noise
if [ ! -s noise ]; then ok; else bad "tool noise on the terminal: $(head -5 noise)"; fi

# 3. the source lines of -g alone on the first try: the loop line of `hot`; analyze's stderr has its own notes only
expect 0 "$HP" analyze --by line --kernel hot --format csv s.db
if awk -F, 'NR==2 && $3 ~ /:3$/ && $2 > 60 {f=1} END {exit !f}' out; then ok; else
  bad "no loop line on the first sample after an ordinary run: $(head -4 out) $(cat err)"
fi
if ! grep -qv '^hubprof' err; then ok; else bad "analyze --by line: not hubprof's on stderr: $(head -3 err)"; fi
# a second sample reuses the kernels hubprof's cache keeps (built with their IR once): lines again
expect 0 "$HP" sample -q -o s2.db -- "$EX/hot_spot" -g $ITERS 1
tr '\r' '\n' <err | grep -v '^hubprof' | grep -v '^\s*$' | grep -vxFf own.err >noise
if [ ! -s noise ]; then ok; else bad "tool noise on the second sample: $(head -5 noise)"; fi
expect 0 "$HP" analyze --by line --kernel hot --format csv s2.db
if awk -F, 'NR==2 && $3 ~ /:3$/ && $2 > 60 {f=1} END {exit !f}' out && ! grep -qv '^hubprof' err; then ok; else
  bad "second sample: $(head -3 out) $(cat err)"
fi
# the user's own POCL_CACHE_DIR is left alone (a cache without the IR: the reason, no lines)
POCL_CACHE_DIR=$T/cache/pocl/kcache expect 0 "$HP" sample -q -o own.db -- "$EX/hot_spot" -g $ITERS 1
expect 0 "$HP" analyze --by line --kernel hot --format csv own.db
if grep -q "IR was not kept" out; then ok; else bad "own POCL_CACHE_DIR: $(head -3 out)"; fi

# 4. ROCm's views (the joins of rocprofv3's own `samples` and `code_objects` views, written out here, and
# hubprof's views of those names): complete
n=$(sqlite3 s.db "select count(*) from rocpd_sample")
rocm=$(sqlite3 s.db "select count(*) from rocpd_sample R join rocpd_track T on T.id = R.track_id and T.guid =
  R.guid join rocpd_event E on E.id = R.event_id and E.guid = R.guid join rocpd_info_process P on P.id = T.pid
  and P.guid = T.guid join rocpd_info_thread TH on TH.id = T.tid and TH.guid = T.guid")
view=$(sqlite3 s.db "select count(*) from samples")
cat=$(sqlite3 s.db "select distinct category from samples")
if [ "$n" -gt 0 ] && [ "$rocm" = "$n" ] && [ "$view" = "$n" ] && [ "$cat" = PC_SAMPLE ]; then ok; else
  bad "samples view: $view (ROCm's join $rocm) of $n rocpd_sample rows, category '$cat'"
fi
nco=$(sqlite3 s.db "select count(*) from rocpd_info_code_object where id <> 0")
rocm=$(sqlite3 s.db "select count(*) from rocpd_info_code_object C join rocpd_info_agent A on C.agent_id = A.id
  and C.guid = A.guid join rocpd_info_process P on C.pid = P.id and C.guid = P.guid where C.id <> 0")
view=$(sqlite3 s.db "select count(*) from code_objects where id <> 0")
so=$(sqlite3 s.db "select count(*) from code_objects where uri like '%/hot.so' and agent_abs_index is not null")
if [ "$nco" -ge 2 ] && [ "$rocm" = "$nco" ] && [ "$view" = "$nco" ] && [ "$so" -ge 1 ]; then ok; else
  bad "code_objects view: $view (ROCm's join $rocm) of $nco code objects, $so of hot.so"
fi
# the samples of the store are those analyze counts, through every view
if python3 - s.db >py.err 2>&1 <<'PY'; then ok; else bad "python: $(tail -3 py.err)"; fi
import sqlite3, sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    n = len(s.table("pc_sample"))
    co = s.table("code_object")
    agents = set(s.table("agent")["id"])
assert n == sqlite3.connect(sys.argv[1]).execute("select count(*) from samples").fetchone()[0], n
assert set(co["agent_id"]) <= agents and 0 not in set(co["agent_id"]), (co[["uri", "agent_id"]], agents)
PY

echo "test_sample_first: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
