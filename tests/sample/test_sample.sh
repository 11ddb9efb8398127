#!/usr/bin/env bash
# End-to-end tests of `hubprof sample` and the sample views of `hubprof analyze` under PoCL, with kernels
# whose hot spots are known by construction (examples/ocl/hot_spot.c): the loop line gets most samples, two
# loops of work 1:3 get samples in that ratio, debug lines with -g and instructions without, the code found
# again from a store moved elsewhere with the kernel cache gone, counter timelines that only grow and end
# near the dispatch's total, the application's output unchanged, samples surviving SIGKILL, a forked child
# sampled, the same views from Python, code bytes under trace and profile too, bad input.
# usage: test_sample.sh [HUBPROF]   (from the repository root)
# SPDX-License-Identifier: MIT
set -u
ROOT=$PWD
HP=$(realpath "${1:-build/hubprof}")
EX=$ROOT/build/examples/ocl
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ulimit -c 0
unset HUBPROF_OUTPUT_DIR HUBPROF_MODE HUBPROF_SAMPLE_PERIOD_US HUBPROF_SAMPLE_COUNTERS HUBPROF_SAMPLE_KERNEL \
  OPENCL_LAYERS LD_PRELOAD
export HUBPROF_COLLECTOR=$ROOT/build/libhubprof_collector.so # the ASan CLI must not put its runtime in apps
export PYTHONPATH=$ROOT/python
export POCL_CACHE_DIR=$T/kcache # a fresh kernel cache, removed before the store is read again elsewhere
. "$ROOT/tests/lib.sh"
need_built test_sample "$HP" "$EX/hot_spot" "$HUBPROF_COLLECTOR"
need_opencl test_sample
cd "$T"
G=(-o "-g -cl-opt-disable") # PoCL 3 keeps line tables only for unoptimised work-group code (docs/sampling.md)
ITERS=4000000

# py WHAT STORE PYTHON: assertions on the store `s` (hubprof.open), with helpers
py() {
  local what=$1 store=$2
  if python3 - "$store" >"$T/py.err" 2>&1 <<PY; then ok; else bad "$what: $(tail -3 "$T/py.err")"; fi
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
$3
PY
}

# 1. the application's output is the same with and without sampling
"$EX/hot_spot" "${G[@]}" $ITERS 1 >plain.out 2>/dev/null
expect 0 "$HP" sample -q --counters task-clock,page-faults -o g.db -- "$EX/hot_spot" "${G[@]}" $ITERS 1
if cmp -s plain.out out; then ok; else bad "output differs under sample: $(cat plain.out) / $(cat out)"; fi

# 2. known hot spots: the loop line of `hot` has most samples; `ratio`'s loops (work 1:3) in about that ratio
expect 0 "$HP" analyze --by line --kernel hot --format csv g.db
if awk -F, 'NR==2 && $3 ~ /:3$/ && $2 > 60 {f=1} END {exit !f}' out; then ok; else bad "hot line: $(cat out)"; fi
expect 0 "$HP" analyze --by line --kernel ratio --format csv g.db
# (binomial: line 10's share of the two lines' samples within 4 standard deviations of 3/4, whatever the count;
# a fixed band 2..4.5 failed with 19 samples at load 9)
if awk -F, '$3 ~ /:9$/ {a=$1} $3 ~ /:10$/ {b=$1} END {n = a + b; if (n < 8 || a == 0) exit 1;
  exit !((b / n - 0.75) ^ 2 <= 16 * 0.1875 / n)}' out; then
  ok
else bad "ratio lines 9:10 not about 1:3: $(cat out)"; fi
expect 0 "$HP" analyze --by line --kernel hot g.db # annotated source: the loop's own text
if grep -q 'x = x \* 1664525u' out; then ok; else bad "no source text: $(cat out)"; fi
expect 0 "$HP" analyze --by basic-block --kernel ratio --format json g.db
# the two loops' bodies are the two blocks with most samples, about 3:1: the binomial band of the lines above
# (a fixed "at least twice" failed with 10:6 of 20 samples on a fresh machine)
if python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); s=sorted(int(x["samples"]) for x in r); a, b = s[-2:]; n = a + b
assert len(r) >= 2 and n >= 8 and b > 0 and (b / n - 0.75) ** 2 <= 16 * 0.1875 / n, r' out 2>py.err; then
  ok
else bad "basic blocks of ratio: $(cat out) $(cat py.err)"; fi
# the same views from Python (the analysis library's ha_run), as DataFrames
py "attribution from Python" g.db '
    import pytest
    ln = s.analyze(by="line", kernel="hot")
    assert ln.line[0].endswith(":3") and ln.percent[0] > 60 and "1664525u" in ln.source[0], ln
    src = s.analyze(by="source", kernel="ratio").set_index("line")
    a, b = src.samples[9], src.samples[10]
    assert len(src) == 12 and a > 0 and (b / (a + b) - 0.75) ** 2 <= 16 * 0.1875 / (a + b), src
    assert 0 < src.samples.sum() <= s.count("pc_sample") and src.percent.sum() <= 100 + 1e-6, src
    ins = s.analyze(by="instruction", kernel="hot", limit=3)
    assert len(ins) == 3 and ins.instruction.str.len().min() > 0 and ins.function.str.contains("hot").all(), ins
    assert any(n.startswith("kernel hot: ") for n in ins.attrs["notes"]), ins.attrs
    tl = s.analyze(by="timeline", dispatch=1)
    assert list(tl.columns) == ["time_ns", "counter", "value"] and (tl.counter == "task-clock").any(), tl
    for bad in (dict(by="line"), dict(by="line", kernel="nope"), dict(by="timeline", dispatch=99)):
        with pytest.raises(ValueError):
            s.analyze(**bad)'
expect 0 "$HP" analyze --by function --kernel hot g.db
if grep -q '_pocl_kernel_hot' out; then ok; else bad "function: $(cat out)"; fi

# 3. every sample on a dispatch of its kernel, inside its window; code objects with bytes; counters
py "samples attributed" g.db '
    d = s.table("dispatch").set_index("id"); p = s.table("pc_sample"); co = s.table("code_object")
    assert len(p) > 20, len(p)
    assert p.dispatch_id.isin(d.index).all()
    w = d.loc[p.dispatch_id]
    assert ((p.timestamp_ns.values >= w.start_ns.values - 1000000) & (p.timestamp_ns.values <= w.end_ns.values + 1000000)).all()
    assert (p.weight == 1000000).all()
    so = co[co.uri.str.endswith(".so")]
    assert p.code_object_id.isin(so.id).all() and (so.hash.str.len() == 64).all()
    prog = co[co.uri.str.startswith("program://")]
    assert len(prog) >= 1 and (prog.build_options == "-g -cl-opt-disable").all() and prog.source.str.contains("__kernel void hot").all()
    k = s.table("kernel_symbol"); assert k.code_object_id.isin(prog.id).all()
    m = dict(zip(s.table("metadata").key, s.table("metadata").value))
    assert int(m["sample_stored"]) == len(p) and int(m["sample_period_ns"]) == 1000000
    assert int(m["sample_outside_kernels"]) >= 0 and int(m["sample_unattributed"]) <= len(p) // 10, m'
py "counter timelines" g.db '
    c = s.table("counter_sample"); ci = s.table("counter_info").set_index("id"); p = s.table("pc_sample")
    tc = ci.index[ci.name == "task-clock"][0]
    d = s.table("dispatch").set_index("id")
    for did, g in c[c.counter_id == tc].groupby("dispatch_id"):
        v = g.sort_values("timestamp_ns").value.values
        assert (v[1:] >= v[:-1]).all(), ("not monotonic", did)
        n = (p.dispatch_id == did).sum(); threads = p[p.dispatch_id == did].thread_id.nunique()
        # about a period per sample in kernel code but the first of each thread (the baseline; a sample may read
        # the counter a little before its period is full: 10% slack); at most the CPU time the sampled threads
        # can have had in the window of the dispatch (slack: one period each side)
        lo = 0.9 * (n - threads) * 1e6; hi = (d.end_ns[did] - d.start_ns[did] + 2e6) * threads
        assert lo <= v[-1] <= hi, (did, v[-1], lo, hi, threads)'
expect 0 "$HP" analyze --timeline --dispatch 1 --format csv g.db
if head -1 out | grep -q 'time_ns,counter,value' && grep -q 'task-clock' out; then ok; else bad "timeline: $(head -3 out)"; fi
# the last task-clock value of `hot` against the same dispatch's total measured by kernel replay
expect 0 "$HP" profile -q --counters task-clock -o prof.db -- "$EX/hot_spot" "${G[@]}" $ITERS 1
py "last timeline value near the dispatch total" g.db '
    import hubprof as h
    c = s.table("counter_sample"); d = s.table("dispatch")
    hot = d[d.dispatch_id == 1].id.iloc[0]; last = c[(c.dispatch_id == hot) & (c.counter_id == 1)].sort_values("timestamp_ns").value.iloc[-1]
    with h.open("prof.db") as q:
        v = q.table("counter_value"); pd_ = q.table("dispatch")
        total = v[v.dispatch_id == pd_[pd_.dispatch_id == 1].id.iloc[0]].value.iloc[0]
    assert 0.5 * total <= last <= 2 * total, (last, total)  # two runs, a loaded machine: docs/sampling.md'

# 4. the store alone is enough: moved to another folder, the kernel cache deleted
mkdir -p elsewhere && mv g.db elsewhere/ && rm -rf "$POCL_CACHE_DIR"
expect 0 "$HP" analyze --by instruction --kernel hot -n 5 --format csv elsewhere/g.db
if [ "$(grep -c . out)" -ge 2 ] && awk -F, 'NR==2 && $4 ~ /[a-z]/ {f=1} END {exit !f}' out && ! grep -q warning err; then ok; else
  bad "instructions from the moved store: $(cat out) $(cat err)"
fi
# without the code plugin (libhubprof_code.so: capstone, libdw, libelf): addresses, one warning naming it
HUBPROF_CODE_PLUGIN=$T/no-such-plugin.so expect 0 "$HP" analyze --by instruction --kernel hot -n 5 elsewhere/g.db
if [ "$(grep -c warning err)" -eq 1 ] && grep -q 'no code plugin.*no-such-plugin' err && grep -q 0x out; then ok; else
  bad "without the code plugin: $(cat err) / $(head -3 out)"
fi

# 5. without -g: instructions, and the reason lines are missing
expect 0 "$HP" sample -q -o nog.db -- "$EX/hot_spot" $ITERS 1
expect 0 "$HP" analyze --by line --kernel hot nog.db
if grep -q 'debug information\|line table\|no line' err out; then ok; else bad "no reason for missing lines: $(cat err out)"; fi
# -g alone on PoCL 3.1 without the IR kept: the work-group function that runs has no debug locations, and
# the reason says the IR is missing (with it, tests/sample/test_sample_lines.sh: lines)
expect 0 "$HP" sample -q --no-keep-ir -o gonly.db -- "$EX/hot_spot" -g $ITERS 1
expect 0 "$HP" analyze --by line --kernel hot --format csv gonly.db
if grep -q 'work-group function has no debug locations, and its IR was not kept' out; then ok; else
  bad "-g alone: $(cat out)"
fi
expect 0 "$HP" analyze --by instruction --kernel hot -n 3 nog.db
if [ "$(grep -c 0x out)" -ge 1 ]; then ok; else bad "instructions without -g: $(cat out)"; fi

# 6. damaged code bytes: addresses, one warning, no crash
cp elsewhere/g.db dmg.db
python3 - dmg.db <<'PY' # change the first bytes of every chunk (the physical table behind the view)
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
t = db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'rocpd_hubprof_code_blob_%'").fetchone()[0]
db.execute(f"UPDATE {t} SET data = 'AAAA' || substr(data, 5)")
db.commit()
PY
expect 0 "$HP" analyze --by instruction --kernel hot dmg.db
if [ "$(grep -c warning err)" -eq 1 ] && grep -q 'damaged\|not in the store' err && grep -q 0x out; then ok; else
  bad "damaged bytes: $(cat err) / $(head -3 out)"
fi

# kill_sampled DIR WHEN ARGS...: run hot_spot ARGS sampled into the log folder DIR, SIGKILL it once the
# Python condition WHEN holds on its log (s: the open log), or after 20 s
kill_sampled() {
  local dir=$T/$1 when=$2 pid
  shift 2
  mkdir "$dir"
  HUBPROF_OUTPUT_DIR=$dir HUBPROF_SAMPLE_PERIOD_US=1000 LD_PRELOAD=$HUBPROF_COLLECTOR \
    "$EX/hot_spot" "$@" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 200); do
    sleep 0.1
    python3 -c 'import glob,sys,hubprof
for f in glob.glob(sys.argv[1]+"/*.log"):
    with hubprof.open(f) as s: sys.exit(0 if ('"$when"') else 1)
sys.exit(1)' "$dir" 2>/dev/null && break
  done
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
}

# 7. SIGKILL: every complete sample block stays readable (killed once a completed dispatch has samples)
kill_sampled k 's.count("dispatch") > 0 and s.table("pc_sample").dispatch_id.isin(s.table("dispatch").id).any()' \
  2000000 1000
py "samples after SIGKILL" "$(ls k/*.log | head -1)" '
    p = s.table("pc_sample"); d = s.table("dispatch")
    # every sample on a dispatch of the log, but those of the one dispatch running at the kill (no row)
    assert len(p) > 0 and p.dispatch_id[~p.dispatch_id.isin(d.id)].nunique() <= 1, (len(p), len(d))
    assert p.dispatch_id.isin(d.id).sum() > 0, "no sample of a completed dispatch"
    assert s.table("code_blob").shape[0] > 0'
# ... and mid-kernel: the samples of a dispatch still running are in the log as they are taken, after its
# "dispatch begun" row without times (its own row never comes; test_sample_kill.sh checks their assembly)
# (a kernel of ~9 s here: on a loaded machine the kill can come after it ended; up to 3 tries to kill it running)
for try in 1 2 3; do
  rm -rf "$T/k2"
  kill_sampled k2 's.count("pc_sample") > 20 and (s.table("dispatch").end_ns == 0).all()' 4000000000 1
  python3 -c 'import glob,sys,hubprof
with hubprof.open(glob.glob(sys.argv[1]+"/*.log")[0]) as s: sys.exit(0 if (s.table("dispatch").end_ns == 0).all() else 1)' \
    "$T/k2" 2>/dev/null && break
  echo "test_sample: the kill came after the kernel ended (try $try)"
done
py "samples of a running dispatch after SIGKILL" "$(ls k2/*.log | head -1)" '
    p = s.table("pc_sample"); co = s.table("code_object").set_index("id")
    assert len(p) > 20 and (s.table("dispatch").end_ns == 0).all() and (p.dispatch_id == 1).all(), (len(p), p.dispatch_id.unique())
    assert co.uri[p.code_object_id].str.endswith("hot.so").all() and s.table("code_blob").shape[0] > 0'

# 8. a child the application forks samples its own kernel threads into its own process's rows
expect 0 "$HP" sample -q -o fork.db -- "$EX/hot_spot" -f "${G[@]}" 2000000 1
py "forked child sampled" fork.db '
    p = s.table("pc_sample"); d = s.table("dispatch"); co = s.table("code_object").set_index("id")
    assert s.count("process") == 2, s.table("process")
    m = p.merge(d[["id", "process_id"]], left_on="dispatch_id", right_on="id")
    n = m.groupby("process_id").size()
    assert len(n) == 2 and n.min() > 10, n
    assert (co.process_id[m.code_object_id].values == m.process_id.values).all()  # each its own code objects
    ln = s.analyze(by="line", kernel="hot"); ks = s.table("kernel_symbol")
    assert ln.line[0].endswith(":3") and ln.samples.sum() == m.dispatch_id.isin(d.id[d.kernel_id.isin(ks.id[ks.name == "hot"])]).sum(), ln'

# 9. trace and profile store the bytes of what ran too with --code (a kernel's first dispatch; the store alone
# is enough), and none without (issue 28: no code in a trace unless asked)
expect 0 "$HP" trace -q --code -o tr.db -- "$EX/hot_spot" -g 200000 2
expect 0 "$HP" profile -q --code --counters task-clock -o pr.db -- "$EX/hot_spot" -g 200000 2
expect 0 "$HP" trace -q -o tr0.db -- "$EX/hot_spot" -g 200000 2
py "no code bytes under trace without --code" tr0.db '
    co = s.table("code_object"); assert not co.uri.str.endswith(".so").any() and s.count("code_blob") == 0, co.uri.tolist()
    assert (co.source == "").all() and (co.hash == "").all() and (s.table("kernel_symbol").program_hash.str.len() == 16).all()'
for st in tr.db pr.db; do
  py "code bytes under ${st%.db}" $st '
    co = s.table("code_object"); so = co[co.uri.str.endswith(".so")]
    assert so.uri.str.contains("/hot/").any() and so.uri.str.contains("/ratio/").any(), co.uri.tolist()
    assert (so.hash.str.len() == 64).all() and set(so.hash) <= set(s.table("code_blob").hash), "bytes missing"'
done

# 10. bad input: one line, the right exit code, nothing written
expect 2 "$HP" sample --period-us 0 -o x.db -- "$EX/hot_spot" 10 1
expect 1 "$HP" sample --counters no-such-counter -o x.db -- "$EX/hot_spot" 10 1
one_line_error "no-such-counter"
expect 2 "$HP" sample --kernel '(' -o x.db -- "$EX/hot_spot" 10 1
one_line_error "regular expression"
if [ ! -e x.db ]; then ok; else bad "a store was written for bad input"; fi
expect 0 "$HP" analyze --timeline elsewhere/g.db # no --dispatch: the whole run's samples (none without --whole-run)
grep -q "no counter samples outside dispatches" out && ok || bad "whole-run timeline: $(cat out)"
expect 2 "$HP" analyze --timeline --dispatch 1-2 elsewhere/g.db
one_line_error "--dispatch N (one dispatch id)"
expect 2 "$HP" analyze --by line elsewhere/g.db
one_line_error "--kernel"
expect 1 "$HP" analyze --timeline --dispatch 99 elsewhere/g.db
one_line_error "no dispatch 99"

echo "test_sample: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
