#!/usr/bin/env bash
# Counters per region (issue #9.2) in kernel replay, application replay and multiplexing: examples/ocl/
# region_work puts known-work kernels in regions ("op" holds spin and the nested "touch"; idle runs outside)
# and known host work in a region of its own ("host": a measured CPU time and PAGES fresh pages).
# Checked (tests/replay/check_region_counters.py): each dispatch names its innermost region
# (dispatch.region_id); each region call's host part is stored with it; `analyze --by region` gives each
# region the sum of its dispatches' per-dispatch values (every pass of the plan: two counters, one per pass)
# plus its host parts, the same from Python; the known work within
# stated tolerances; the application's output unchanged; `diff --by region` of two modes; a region without
# dispatches has its host part alone; in rocpd the host parts (pmc_event rows with event_id 0) give the same
# sums in direct SQL, and ROCm's views leave them out; merged stores keep them, the same profile merged twice
# has them once.
# usage: test_region_counters.sh [HUBPROF]   (needs `make all`; runs in a temporary directory, leaves nothing)
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/../.."
HP=$(realpath "${1:-build/hubprof}")
RW=$PWD/build/examples/ocl/region_work
CHECK=$PWD/tests/replay/check_region_counters.py
. tests/lib.sh
hp_test_env
need_built test_region_counters "$HP" "$RW"
need_opencl test_region_counters
cd "$T"
PAGES=64 REPS=3
ARGS=("$PAGES" 2000000 "$REPS")
C2=(--counters page-faults,task-clock --max-counters-per-pass 1)

"$RW" "${ARGS[@]}" >plain.out 2>&1 || bad "region_work alone failed: $(cat plain.out)"
sed -E 's/spin_host_ns=[0-9]+ host_cpu_ns=[0-9]+ host_oncpu_ns=[0-9]+ //' plain.out >plain.cmp
for fmt in rocpd parquet; do
  for mode in kernel application multiplex; do
    name=$mode.$fmt
    # spin's task-clock in a kernel against the host's CPU time for it can double for one run on a shared
    # 2-core VM (steal time, which task-clock counts and the CPU time does not: seen with this collector and
    # cf24958's alike, 2026-12-06; "host" is measured against its own time on the CPU, steal included): a run
    # whose only violations are task-clock ones is repeated, 5 tries at most (as test_known_work.sh does),
    # the share of the CPUs' time stolen printed; the last counts
    for try in 1 2 3 4 5; do
      steal_mark
      rm -rf "$name"
      "$HP" profile -q "${C2[@]}" --replay $mode -F $fmt -o "$name" -- "$RW" "${ARGS[@]}" >"$name.out" 2>"$name.err" ||
        bad "$name: the run failed: $(cat "$name.err")"
      # the application's results do not change (its host timing aside)
      sed -E 's/spin_host_ns=[0-9]+ host_cpu_ns=[0-9]+ host_oncpu_ns=[0-9]+ //' "$name.out" | cmp -s - plain.cmp && ok ||
        bad "$name: output changed: $(cat "$name.out") vs $(cat plain.out)"
      host=$(sed -nE 's/.*spin_host_ns=([0-9]+).*/\1/p' "$name.out")
      hcpu=$(sed -nE 's/.*host_cpu_ns=([0-9]+).*/\1/p' "$name.out")
      hon=$(sed -nE 's/.*host_oncpu_ns=([0-9]+).*/\1/p' "$name.out")
      "$HP" analyze --by region --counters page-faults,task-clock --metrics none --format csv "$name" \
        >"$name.csv" 2>"$name.aerr" || bad "$name: analyze --by region: $(cat "$name.aerr")"
      python3 "$CHECK" "$name" "$name.csv" "$PAGES" "$REPS" "${host:-0}" $mode "${hcpu:-0}" "${hon:-0}" >"$name.report" 2>&1
      rc=$?
      [ $rc = 0 ] && break
      grep '^bad:' "$name.report" | grep -qv "task-clock" && break # another violation: fails at once
      [ $try -lt 5 ] && echo "test_region_counters: $name: task-clock off the host's CPU time (try $try, $(steal_since) stolen): $(grep -m1 '^bad:' "$name.report")"
    done
    if [ $rc = 0 ]; then ok; else
      bad "$name: $(cat "$name.report")"
    fi
  done
done

# rocpd: a region's host parts are pmc_event rows with event_id 0 naming the region in extdata (docs/formats/
# rocpd.md). Direct SQL over them, plus the values of the dispatches in the region and in the regions inside it,
# gives analyze's sums; there is one per region call and counter; ROCm's views (pmc_events,
# counters_collection) leave them out
for mode in kernel application multiplex; do
  db=$mode.rocpd
  sqlite3 -csv "$db" >"$db.sql.csv" 2>"$db.sql.err" <<'SQL' || bad "$db: SQL: $(cat "$db.sql.err")"
WITH x(n, p, v) AS (
  SELECT R.name_id, V.pmc_id, V.value FROM rocpd_pmc_event V
  JOIN rocpd_region R ON R.id = json_extract(V.extdata, '$.region_id') WHERE V.event_id = 0
  UNION ALL
  SELECT R.name_id, V.pmc_id, V.value FROM rocpd_region R
  JOIN rocpd_region Q ON Q.pid = R.pid AND Q.tid = R.tid AND Q.start >= R.start AND Q."end" <= R."end"
  JOIN rocpd_kernel_dispatch D ON json_extract(D.extdata, '$.region_id') = Q.id
  JOIN rocpd_pmc_event V ON V.event_id = D.id)
SELECT S.string, I.name, SUM(x.v) FROM x JOIN rocpd_string S ON S.id = x.n JOIN rocpd_info_pmc I ON I.id = x.p
GROUP BY 1, 2;
SQL
  python3 - "$db.csv" "$db.sql.csv" >py.err 2>&1 <<'PY' && ok || bad "$db: host parts in SQL: $(tail -3 py.err)"
import csv, sys
got = {r["region"]: r for r in csv.DictReader(open(sys.argv[1]))}
sql = {(reg, c): float(v) for reg, c, v in csv.reader(open(sys.argv[2]))}
assert {reg for reg, _ in sql} == set(got) == {"op", "touch", "host"}, (sorted(sql), sorted(got))
for (reg, c), want in sql.items():
    assert abs(float(got[reg][c]) - want) <= 1e-9 * abs(want) + 1e-6, (reg, c, got[reg][c], want)
PY
  n=$(sqlite3 "$db" "SELECT count(*) FROM rocpd_pmc_event WHERE event_id = 0 AND json_extract(extdata, '$.region_id')
    IN (SELECT id FROM rocpd_region WHERE \"end\" > start)")
  [ "$n" = $((3 * REPS * 2)) ] && ok || bad "$db: $n host-part rows, want $((3 * REPS * 2))"
  read -r a b c <<<"$(sqlite3 -separator ' ' "$db" "SELECT (SELECT count(*) FROM pmc_events),
    (SELECT count(*) FROM counters_collection), (SELECT count(*) FROM rocpd_pmc_event WHERE event_id != 0)")"
  [ "${c:-0}" -gt 0 ] && [ "$a" = "$c" ] && [ "$b" = "$c" ] && ok ||
    bad "$db: ROCm's views count host parts: pmc_events $a, counters_collection $b, values of dispatches $c"
done

# diff per region: the same regions in both, counters compared (kernel replay against application replay)
"$HP" diff --by region --counters page-faults,task-clock --metrics none --format csv kernel.rocpd \
  application.parquet >diff.csv 2>diff.err || bad "diff --by region: $(cat diff.err)"
python3 - diff.csv "$REPS" >py.err 2>&1 <<'PY' && ok || bad "diff --by region: $(tail -3 py.err)"
import csv, sys
rows = {r["region"]: r for r in csv.DictReader(open(sys.argv[1]))}
reps = int(sys.argv[2])
assert set(rows) == {"op", "touch", "host"}, rows
for n in ("op", "touch", "host"):
    r = rows[n]
    assert r["status"] == "both" and r["category"] == "hubprof", r
    assert int(r["calls_a"]) == int(r["calls_b"]) == reps, r
    assert abs(float(r["page-faults_a"]) - float(r["page-faults_b"])) <= 8 * reps, r
    assert r["page-faults_dir"] in ("same", "higher", "lower") and r["task-clock_delta"] != "", r
PY
# a region only in B is "new"; Python gives the same table
"$HP" profile -q "${C2[@]}" -o one.db -- "$RW" 8 1000 1 >/dev/null 2>&1 || bad "one.db"
python3 - kernel.rocpd one.db >py.err 2>&1 <<'PY' && ok || bad "Python diff by region: $(tail -3 py.err)"
import sys, hubprof
with hubprof.open(sys.argv[1]) as a, hubprof.open(sys.argv[2]) as b:
    d = hubprof.diff(a, b, by="region", counters=["page-faults"], metrics=[])
    assert list(d.columns[:3]) == ["category", "region", "status"], list(d.columns)
    assert set(d.region) == {"op", "touch", "host"} and set(d.status) == {"both"}, d
    assert (d.calls_a == 3).all() and (d.calls_b == 1).all(), d
    t = hubprof.diff(a, b, by="region-tree", metrics=[])
    assert set(t.path) == {"op", "op > touch", "host"}, t
PY
"$HP" diff --by bogus kernel.rocpd one.db >/dev/null 2>bogus.err
[ $? -eq 2 ] && grep -q "region-tree" bogus.err && ok || bad "diff --by bogus: $(cat bogus.err)"

# merged stores keep each region's host parts (region_id remapped with the regions), and analyze's JSON
# and table forms give the same values as its CSV
"$HP" merge -q -o merged.parquet kernel.rocpd application.parquet >/dev/null 2>merge.err || bad "merge: $(cat merge.err)"
"$HP" analyze --by region --counters page-faults,task-clock --metrics none --format json merged.parquet \
  >merged.json 2>merged.err || bad "analyze merged: $(cat merged.err)"
"$HP" analyze --by region --counters page-faults,task-clock --metrics none kernel.rocpd >table.txt 2>&1 &&
  grep -q "task-clock" table.txt && grep -q "^hubprof  *host " table.txt && ok || bad "analyze table: $(cat table.txt)"
python3 - merged.json kernel.rocpd.csv application.parquet.csv merged.parquet "$REPS" >py.err 2>&1 <<'PY' &&
import csv, json, sys, hubprof
j = json.load(open(sys.argv[1]))
rows = j["rows"] if isinstance(j, dict) else j
got = {r["region"]: r for r in rows}
parts = [{r["region"]: r for r in csv.DictReader(open(f))} for f in sys.argv[2:4]]
for reg in ("op", "touch", "host"):
    assert int(got[reg]["calls"]) == 2 * int(sys.argv[5]), got[reg]
    for c in ("page-faults", "task-clock"):
        want = sum(float(p[reg][c]) for p in parts)
        assert abs(float(got[reg][c]) - want) <= 1e-9 * abs(want) + 1e-6, (reg, c, got[reg][c], want)
with hubprof.open(sys.argv[4]) as s:
    cv, r = s.table("counter_value"), s.table("region")
h = cv[cv.region_id > 0]
assert set(h.region_id) <= set(r.id) and len(h) == 2 * 3 * 2 * int(sys.argv[5]), len(h)
PY
  ok || bad "merged host parts: $(tail -3 py.err)"
# the same profile given twice: its regions' host parts are taken once, never attached to the next input's
# regions (the counter values are merged before the regions)
"$HP" merge -q -o twice.parquet kernel.rocpd kernel.rocpd application.parquet >/dev/null 2>twice.err ||
  bad "merge twice: $(cat twice.err)"
"$HP" analyze --by region --counters page-faults,task-clock --metrics none --format json twice.parquet \
  >twice.json 2>twice.err || bad "analyze twice: $(cat twice.err)"
python3 - merged.json twice.json twice.parquet "$REPS" >py.err 2>&1 <<'PY' && ok || bad "merged twice: $(tail -3 py.err)"
import json, sys, hubprof
rows = [json.load(open(f)) for f in sys.argv[1:3]]
once, twice = [{r["region"]: r for r in (j["rows"] if isinstance(j, dict) else j)} for j in rows]
for reg in ("op", "touch", "host"):
    for c in ("calls", "page-faults", "task-clock"):
        assert float(twice[reg][c]) == float(once[reg][c]), (reg, c, twice[reg][c], once[reg][c])
with hubprof.open(sys.argv[3]) as s:
    cv, r = s.table("counter_value"), s.table("region")
h = cv[cv.region_id > 0]
assert set(h.region_id) <= set(r.id) and len(h) == 2 * 3 * 2 * int(sys.argv[4]), len(h)
PY

# host parts on several threads: every region call of each thread has its own (markers none); with few file
# descriptors allowed, the host counters take at most a quarter of them at a time (threads beyond get no host
# part), and the application runs as without hubprof
RG=$(dirname "$RW")/regions
"$RG" 3 5 >rg.plain 2>&1 || bad "regions alone failed"
"$HP" profile -q --counters task-clock,page-faults -o rg.db -- "$RG" 3 5 >rg.out 2>rg.err && cmp -s rg.out rg.plain &&
  ok || bad "regions under profile: $(cat rg.err)"
"$RG" 12 2 >rg12.plain 2>&1 || bad "regions 12 alone failed"
(ulimit -n 64 && "$HP" profile -q --counters task-clock,page-faults -o rg12.db -- "$RG" 12 2 >rg12.out 2>rg12.err) &&
  cmp -s rg12.out rg12.plain && ok || bad "regions, 12 threads, ulimit -n 64: $(cat rg12.err)"
python3 - rg.db rg12.db >py.err 2>&1 <<'PY' && ok || bad "host parts per thread: $(tail -3 py.err)"
import sys, hubprof
for f, want_threads in ((sys.argv[1], 4), (sys.argv[2], None)):
    with hubprof.open(f) as s:
        cv, r = s.table("counter_value"), s.table("region").set_index("id")
    h = cv[cv.region_id > 0]
    calls = r[r.end_ns > r.start_ns]  # markers (start == end) have no host part
    per = h.groupby("region_id").size()
    threads = set(r.loc[h.region_id].thread_id)
    if want_threads:  # main + 3 workers: every call has both counters
        assert set(per.index) == set(calls.index) and (per == 2).all(), (len(per), len(calls))
        assert len(threads) == want_threads, threads
    else:  # 64 / 4 = 16 descriptors: 8 threads of 2 counters at a time (a thread's go back when it exits,
        # so a later thread may take them: count the threads whose host-part regions overlap in time)
        span = r.loc[h.region_id].groupby("thread_id").agg(lo=("start_ns", "min"), hi=("end_ns", "max"))
        most = max(((span.lo <= t) & (span.hi >= t)).sum() for t in span.lo)
        assert (per == 2).all() and 1 <= most <= 8, (most, span)
    assert (h.dispatch_id.fillna(0) == 0).all() and (h["pass"].fillna(0) == 0).all()
    assert (h[h.counter_id == 1].value >= 0).all()
PY

# a forked child: its own region's host part is its own work only (not hubprof opening the child's log:
# ~1 ms and ~20 page faults when it was counted), the region open across fork has one host part (the
# parent's; the child's copy began in the parent)
"$HP" profile -q --counters task-clock,page-faults -o fork.db -- "$RG" fork >fork.out 2>fork.err || bad "fork: $(cat fork.err)"
"$HP" analyze --by region --counters task-clock,page-faults --metrics none --format csv fork.db >fork.csv 2>&1
python3 - fork.csv fork.db >py.err 2>&1 <<'PY' && ok || bad "host parts across fork: $(tail -3 py.err)"
import csv, sys, hubprof
rows = {r["region"]: r for r in csv.DictReader(open(sys.argv[1]))}
c = rows["child"]
assert float(c["task-clock"]) < 300_000 and float(c["page-faults"]) <= 2, c
with hubprof.open(sys.argv[2]) as s:
    cv, r = s.table("counter_value"), s.table("region").set_index("id")
h = cv[cv.region_id > 0]
names = list(r.loc[h.region_id].name)
assert names.count("across fork") == 2 and names.count("child") == 2, names
PY

echo "test_region_counters: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
