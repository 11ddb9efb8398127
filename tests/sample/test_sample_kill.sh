#!/usr/bin/env bash
# A sampled process killed by SIGKILL while a kernel runs (a real crash, under PoCL): the samples of the
# dispatch it was running reach the store through convert, merge and `hubprof sample` itself, attached to an
# incomplete dispatch (no end time, never invented), counted against the log's own sample records; the
# complete blocks of the dispatch before it are intact; analyze says the dispatch is incomplete.
# usage: test_sample_kill.sh [HUBPROF]   (from the repository root)
# SPDX-License-Identifier: MIT
set -u
ROOT=$PWD
HP=$(realpath "${1:-build/hubprof}")
EX=$ROOT/build/examples/ocl
. "$ROOT/tests/lib.sh"
hp_test_env # the build's collector: the ASan CLI must not put its runtime in apps
export POCL_CACHE_DIR=$T/kcache
need_built test_sample_kill "$HP" "$EX/hot_spot" "$HUBPROF_COLLECTOR"
need_opencl test_sample_kill
cd "$T"
ITERS=800000000 # `hot` then `ratio`, several seconds each on the CPU device

# py WHAT STORE PYTHON: assertions on the store `s` (hubprof.open)
py() {
  local what=$1 store=$2
  if python3 - "$store" >"$T/py.err" 2>&1 <<PY; then ok; else bad "$what: $(tail -3 "$T/py.err")"; fi
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
$3
PY
}

# The state wanted at the kill, on an open log `s`: dispatch 1 (hot) complete with samples, dispatch 2
# (ratio) running: its "dispatch begun" row (no device times, passes 0) and no row of its own, 20+ samples.
RUNNING='(lambda d, p: len(d[(d.id == 1) & (d.end_ns > 0)]) == 1 and (p.dispatch_id == 1).sum() > 0
  and len(d[d.id == 2]) == 1 and (d[d.id == 2].passes == 0).all() and (d[d.id == 2].end_ns == 0).all()
  and (p.dispatch_id == 2).sum() > 20)(s.table("dispatch"), s.table("pc_sample"))'

# dispatch_rows DIR: the dispatch rows of the log in DIR so far
dispatch_rows() {
  local f
  f=$(ls "$1"/*.log 2>/dev/null | head -1)
  [ -n "$f" ] && "$HP" info --json "$f" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"]["dispatch"])' 2>/dev/null
}

# running_log DIR: hot_spot sampled into log folder DIR, SIGKILLed in that state (up to 3 tries: on a loaded
# machine the kill can come after `ratio` ended); the log's path on stdout
running_log() {
  local dir=$T/$1 try pid
  for try in 1 2 3; do
    rm -rf "$dir"
    mkdir "$dir"
    HUBPROF_OUTPUT_DIR=$dir HUBPROF_SAMPLE_PERIOD_US=1000 LD_PRELOAD=$HUBPROF_COLLECTOR \
      "$EX/hot_spot" $ITERS 1 >/dev/null 2>&1 &
    pid=$!
    # polled with `info` (pandas is too slow to start here): 3 dispatch rows are hot's begun and own rows and
    # ratio's begun row; then a second more of ratio's samples
    for _ in $(seq 1 600); do
      sleep 0.1
      [ "$(dispatch_rows "$dir")" = 3 ] && sleep 1 && break
    done
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    python3 -c 'import glob,sys,hubprof
with hubprof.open(glob.glob(sys.argv[1]+"/*.log")[0]) as s: sys.exit(0 if '"$RUNNING"' else 1)' "$dir" \
      2>/dev/null && {
      ls "$dir"/*.log
      return 0
    }
    echo "test_sample_kill: the kill did not come while ratio ran (try $try)" >&2
  done
  return 1
}

# 1. the killed process's log: the running dispatch's samples and its begun row
LOG=$(running_log k) && ok || bad "no log killed while ratio ran"
# the raw counts, from the log's own records: every sample, and per dispatch
python3 -c 'import sys,hubprof
with hubprof.open(sys.argv[1]) as s:
    p = s.table("pc_sample")
    print(len(p), (p.dispatch_id == 1).sum(), (p.dispatch_id == 2).sum())' "$LOG" >raw 2>py.err || bad "raw counts: $(cat py.err)"
read -r N N1 N2 <raw
expect 0 "$HP" info --json "$LOG"
py "info counts the log's samples" "$LOG" '
    import json
    assert json.load(open("'"$T"'/out"))["rows"]["pc_sample"] == '"$N"''

# 2. convert to every format: every sample kept, those of the running dispatch on an incomplete dispatch row
for f in db parquet log; do
  expect 0 "$HP" convert "$LOG" -o "k.$f"
  grep -q "did not close its log (killed, or its log cut short): 2 dispatches kept (1 running when it died: no end time, samples kept)" err &&
    ok || bad "convert to $f: the warning: $(cat err)"
  py "convert to $f keeps the running dispatch's samples" "k.$f" '
    d = s.table("dispatch"); p = s.table("pc_sample"); k = s.table("kernel_symbol").set_index("id")
    assert len(d) == 2 and len(p) == '"$N"', (len(d), len(p))
    inc = d[d.end_ns.fillna(0) == 0]; done = d[d.end_ns.fillna(0) > 0]
    assert len(inc) == 1 and len(done) == 1, d
    assert k.name[inc.kernel_id.iloc[0]] == "ratio" and k.name[done.kernel_id.iloc[0]] == "hot", d
    assert inc.start_ns.fillna(0).iloc[0] == 0 and inc.passes.fillna(0).iloc[0] == 0, inc  # no time invented
    assert inc.enqueue_ns.iloc[0] > 0 and done.start_ns.iloc[0] > 0, d
    assert (p.dispatch_id == inc.id.iloc[0]).sum() == '"$N2"', (p.dispatch_id == inc.id.iloc[0]).sum()
    assert (p.dispatch_id == done.id.iloc[0]).sum() == '"$N1"'
    assert p.dispatch_id.isin(d.id).all() and p.code_object_id.isin(s.table("code_object").id).all()'
done
# the complete dispatch's row is the log's own (its device times intact)
py "the complete dispatch intact" k.parquet '
    import hubprof
    with hubprof.open("'"$LOG"'") as lg:
        a = lg.table("dispatch"); a = a[(a.id == 1) & (a.end_ns > 0)].iloc[0]
    b = s.table("dispatch"); b = b[b.end_ns.fillna(0) > 0].iloc[0]
    assert (a.start_ns, a.end_ns, a.enqueue_ns, a.grid_x) == (b.start_ns, b.end_ns, b.enqueue_ns, b.grid_x), (a, b)'

# 3. merge: with a complete sampled run, and the converted store again (rocpd + Parquet inputs)
expect 0 "$HP" sample -q -o full.db -- "$EX/hot_spot" 20000000 1
py "a complete run keeps no begun row" full.db '
    d = s.table("dispatch"); p = s.table("pc_sample")
    assert len(d) == 2 and (d.passes == 1).all() and (d.end_ns > 0).all() and p.dispatch_id.isin(d.id).all(), d'
expect 0 "$HP" merge -o m.db full.db k.parquet
py "merge keeps the incomplete dispatch and its samples" m.db '
    d = s.table("dispatch"); p = s.table("pc_sample")
    inc = d[d.end_ns.fillna(0) == 0]
    assert len(d) == 4 and len(inc) == 1, d
    assert (p.dispatch_id == inc.id.iloc[0]).sum() == '"$N2"' and p.dispatch_id.isin(d.id).all()'
expect 0 "$HP" merge -o m2.parquet "$LOG" full.db
py "merge of the log itself" m2.parquet '
    d = s.table("dispatch"); p = s.table("pc_sample"); inc = d[d.end_ns.fillna(0) == 0]
    assert len(d) == 4 and len(inc) == 1 and (p.dispatch_id == inc.id.iloc[0]).sum() == '"$N2"', d'

if python3 - "$LOG" >py.err 2>&1 <<'PY'; then ok; else bad "Python merge of the killed log: $(tail -3 py.err)"; fi
import sys, warnings, hubprof
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    r = hubprof.merge([sys.argv[1]], "py.parquet", format="parquet")
assert r["unfinished_processes"] == 1 and r["unfinished_dispatches"] == 2 and r["incomplete_dispatches"] == 1, r
assert any("1 running when it died" in str(x.message) for x in w), [str(x.message) for x in w]
PY

# 4. analyze counts those samples and says the dispatch is incomplete
expect 0 "$HP" analyze --by instruction --kernel ratio --format csv k.db
awk -F, 'NR > 1 {n += $1} END {print n}' out >sum
[ "$(cat sum)" = "$N2" ] && ok || bad "by instruction counts $(cat sum) samples of ratio, the log has $N2"
grep -q "incomplete: $N2 of these samples are of 1 dispatch without an end time (dispatch 2" err && ok ||
  bad "by instruction: no incomplete note: $(cat err)"
expect 0 "$HP" analyze --by line --kernel ratio k.parquet
grep -q "incomplete: $N2 of these samples" out && ok || bad "by line: $(cat out)"
expect 0 "$HP" analyze k.db
grep -q "1 dispatch is incomplete: launched and not seen to end before its process died" out && ok || bad "analyze: $(cat out)"
expect 0 "$HP" analyze full.db
grep -q "incomplete" out && bad "a complete run called incomplete: $(cat out)" || ok
py "Python analysis counts them" k.db '
    r = s.analyze(by="instruction", kernel="ratio")
    assert int(r.samples.sum()) == '"$N2"', r'

# 5. other readers of the incomplete dispatch agree with analyze: it is one call with no device time. analyze
# counts it in CALLS, not in timed_calls, times or averages; ROCm's views (rocpd has no NULL: start = end = 0)
# list it with duration 0 but leave it out of averages and of busy's wall time; Parquet readers see NULL.
expect 0 "$HP" analyze --format csv k.db
cp out an.csv
py "analyze, rocpd views and Parquet readers agree" k.db '
    import csv, json, math, sqlite3, duckdb, pandas as pd, pyarrow.parquet as pq
    an = {r["kernel"]: r for r in csv.DictReader(open("an.csv"))}
    assert an["ratio"]["calls"] == "1" and an["ratio"]["timed_calls"] == "0" and an["ratio"]["total_ns"] == "0"
    assert an["ratio"]["avg_ns"] == an["ratio"]["min_ns"] == "", an["ratio"]
    assert an["hot"]["calls"] == an["hot"]["timed_calls"] == "1", an["hot"]
    hot_ns = int(an["hot"]["total_ns"])
    db = sqlite3.connect("k.db")
    q = lambda sql: db.execute(sql).fetchall()
    # the column that tells it apart: start = end = 0 (no time is 0) and no passes in extdata
    assert q("SELECT COUNT(*) FROM rocpd_kernel_dispatch WHERE start = 0 AND \"end\" = 0 "
             "AND json_extract(extdata, \"$.passes\") IS NULL") == [(1,)]
    assert q("SELECT start, \"end\", duration FROM kernels WHERE name = \"ratio\"") == [(0, 0, 0)]
    assert q("SELECT duration FROM kernels WHERE name = \"hot\"") == [(hot_ns,)]
    for v in ("top_kernels", "top"):
        got = {n: (c, t, a) for n, c, t, a in q(f"SELECT name, total_calls, total_duration, average FROM {v}")}
        assert got["ratio"] == (1, 0.0, None), (v, got)  # one call, no duration, no average (analyze: -)
        assert got["hot"] == (1, hot_ns / 1000.0, hot_ns / 1000.0), (v, got)
    (gpu, wall, busy), = q("SELECT GpuTime, WallTime, Busy FROM busy")
    assert gpu == hot_ns and wall == hot_ns and busy == 1.0, (gpu, wall, busy)  # wall time not from 0
    # Parquet: NULL start, end and passes, for pandas, pyarrow and DuckDB
    d = pd.read_parquet("k.parquet/dispatch", dtype_backend="numpy_nullable")
    inc = d[d.end_ns.isna()]
    assert len(inc) == 1 and inc.start_ns.isna().all() and inc.passes.isna().all() and inc.enqueue_ns.notna().all()
    t = pq.read_table("k.parquet/dispatch")
    assert t.column("start_ns").null_count == t.column("end_ns").null_count == 1
    dd = duckdb.sql("SELECT count(*), count(end_ns - start_ns), sum(end_ns - start_ns), avg(end_ns - start_ns) "
                    "FROM \"k.parquet/dispatch/**/*.parquet\"").fetchall()
    assert dd == [(2, 1, hot_ns, float(hot_ns))], dd
    # the documented top-kernels query (docs/formats/parquet.md) gives the calls and totals of analyze
    top = duckdb.sql("""SELECT coalesce(k.display_name, k.name) AS kernel, count(*) AS calls,
           coalesce(sum(d.end_ns - d.start_ns) FILTER (WHERE d.end_ns >= d.start_ns), 0) AS total_ns
           FROM "k.parquet/dispatch/**/*.parquet" d JOIN "k.parquet/kernel_symbol/**/*.parquet" k
           ON d.kernel_id = k.id GROUP BY ALL""").fetchall()
    assert sorted(top) == [("hot", 1, hot_ns), ("ratio", 1, 0)], top
    # hubprof Python: the same figures from either store (the hub reads NULL as 0: timed_calls tells)
    import hubprof
    for st in (s, hubprof.open("k.parquet")):
        r = st.analyze().set_index("kernel")
        assert (r.calls["ratio"], r.timed_calls["ratio"], r.total_ns["ratio"]) == (1, 0, 0), r
        assert math.isnan(r.avg_ns["ratio"]) and r.total_ns["hot"] == hot_ns, r
        x = st.table("dispatch", dataset=True)
        assert x.end_ns.isna().sum() == 1, x'

# 6. a damaged store: a read error of the tables behind the sample views fails the call with one line naming
# the damage (never a shorter answer); a damaged log is read as far as it can be, with the warning
cp -r k.parquet bad.parquet
f=$(ls bad.parquet/pc_sample/*.parquet | head -1)
printf 'garbage!garbage!garbage!' | dd of="$f" bs=1 seek=200 conv=notrunc 2>/dev/null
expect 1 "$HP" analyze --by line --kernel ratio bad.parquet
one_line_error "bad.parquet: pc_sample/"
cp -r k.parquet bad2.parquet
f=$(ls bad2.parquet/dispatch/*.parquet | head -1)
printf 'garbage!garbage!garbage!' | dd of="$f" bs=1 seek=200 conv=notrunc 2>/dev/null
expect 1 "$HP" analyze --by instruction --kernel ratio bad2.parquet
one_line_error "bad2.parquet: dispatch/"
expect 1 "$HP" analyze --timeline --dispatch 2 bad2.parquet
one_line_error "bad2.parquet: dispatch/"
# the log: the payload of its last block of pc_sample records (type 13, docs/formats/log.md) damaged
cp "$LOG" bad.log
python3 - bad.log <<'PY' || bad "no pc_sample block in the log"
import struct, sys
def varint(b, i):
    v = s = 0
    while True:
        v |= (b[i] & 0x7F) << s; s += 7; i += 1
        if not b[i - 1] & 0x80: return v, i
with open(sys.argv[1], "r+b") as f:
    b = f.read()
    hs, cs = struct.unpack_from("<I", b, 16)[0], struct.unpack_from("<Q", b, 24)[0]
    last = None
    for c in range(hs, len(b), cs):
        pos = c
        while pos + 16 <= min(c + cs, len(b)):
            magic, n = struct.unpack_from("<II", b, pos)
            if magic != 0x4B4C4248: break
            i, end = pos + 16, pos + 16 + n
            while i < end:
                t, i = varint(b, i); ln, i = varint(b, i)
                if t == 13: last = pos
                i += ln
            pos = (end + 7) & ~7
    assert last is not None
    f.seek(last + 20); f.write(b"\xff\xff\xff\xff")
PY
expect 0 "$HP" analyze --by instruction --kernel ratio --format csv bad.log
awk -F, 'NR > 1 {n += $1} END {print n + 0}' out >sum
grep -q "figures cover the readable part" err && ok || bad "damaged log: no warning: $(cat err)"
py "a damaged log: the readable samples, as Python reads them" bad.log '
    p = s.table("pc_sample")
    assert len(p) < '"$N"', len(p)  # the damaged block is gone
    assert (p.dispatch_id == 2).sum() == int(open("sum").read()), ((p.dispatch_id == 2).sum(), open("sum").read())'

# 7. `hubprof sample` itself, its application SIGKILLed while ratio runs: the store has the incomplete
# dispatch and its samples, and names the killed process
# (up to 3 tries: `ratio` runs under a second on an idle machine, and a loaded one can miss that window)
for try in 1 2 3; do
  "$HP" sample -o s.db -- "$EX/hot_spot" $ITERS 1 >sout 2>serr &
  hp=$!
  app=
  for _ in $(seq 1 600); do
    sleep 0.1
    app=$(pgrep -P $hp | head -1)
    d=$(ls -d .hubprof-logs.* 2>/dev/null | head -1)
    [ -n "$app" ] && [ -n "$d" ] && [ "$(dispatch_rows "$d")" = 3 ] && sleep 0.3 && break
  done
  [ -n "$app" ] && kill -9 "$app"
  wait $hp
  rc=$?
  grep -q "1 running when it died" serr && break
  echo "test_sample_kill: the kill did not come while ratio ran under hubprof sample (try $try)" >&2
done
[ "$rc" -ne 0 ] && grep -q "1 running when it died: no end time, samples kept" serr && ok ||
  bad "sample of a killed app: exit $rc: $(cat serr)"
py "sample of a killed app keeps the running dispatch" s.db '
    d = s.table("dispatch"); p = s.table("pc_sample"); inc = d[d.end_ns.fillna(0) == 0]
    assert len(d) == 2 and len(inc) == 1 and (p.dispatch_id == inc.id.iloc[0]).sum() > 20, (d, len(p))
    assert p.dispatch_id.isin(d.id).all() and (p.dispatch_id != inc.id.iloc[0]).sum() > 0'

echo "test_sample_kill: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
