#!/usr/bin/env python3
# Checks one rocpd store against the invariants ROCm's views rely on (docs/formats/rocpd.md, "Identity and
# invariants") and compares the numbers of the views hubprof ships with `hubprof analyze` and `hubprof info`.
# usage: check_rocpd_views.py HUBPROF STORE   (prints one "FAIL: …" line per broken invariant; exit 1 if any)
# SPDX-License-Identifier: MIT
import csv
import io
import json
import math
import sqlite3
import subprocess
import sys

hp, path = sys.argv[1], sys.argv[2]
db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
fails = []


def one(sql):
    return db.execute(sql).fetchone()[0]


def check(cond, what):
    if not cond:
        fails.append(what)


info = json.loads(subprocess.run([hp, "info", "--json", path], check=True, capture_output=True).stdout)
rows = info["rows"]

# A dispatch is identified by (guid, dispatch_id): ROCm's counters_collection groups values by them.
dup = one(
    "SELECT COUNT(*) FROM (SELECT 1 FROM rocpd_kernel_dispatch GROUP BY guid, dispatch_id HAVING COUNT(*) > 1)"
)
check(dup == 0, f"{dup} (guid, dispatch_id) pairs name more than one dispatch")
# Every row of every table is identified by (guid, id).
for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'view' AND name LIKE 'rocpd^_%' ESCAPE '^'"):
    cols = [r[1] for r in db.execute(f'PRAGMA table_info("{t}")')]
    if "guid" in cols:
        n = one(f'SELECT COUNT(*) FROM (SELECT 1 FROM "{t}" GROUP BY guid, id HAVING COUNT(*) > 1)')
        check(n == 0, f"{t}: {n} (guid, id) pairs repeat")
# Each dispatch joins exactly one event, kernel symbol, agent, queue, process and thread of its guid, and its
# region-name string: `kernels` has one row per dispatch.
check(one("SELECT COUNT(*) FROM kernels") == rows["dispatch"], "kernels view does not show every dispatch once")
for tab, col in [("rocpd_event", "event_id"), ("rocpd_info_kernel_symbol", "kernel_id"),
                 ("rocpd_info_agent", "agent_id"), ("rocpd_info_queue", "queue_id"),
                 ("rocpd_info_process", "pid"), ("rocpd_info_thread", "tid"), ("rocpd_string", "region_name_id")]:
    n = one(f"SELECT COUNT(*) FROM rocpd_kernel_dispatch K WHERE (SELECT COUNT(*) FROM {tab} X "
            f"WHERE X.id = K.{col} AND X.guid = K.guid) <> 1")
    check(n == 0, f"{n} dispatches do not join exactly one row of {tab}")
# Each counter value joins exactly one dispatch (by event_id), one event and one counter of its guid.
for tab, on in [("rocpd_kernel_dispatch", "X.event_id = V.event_id"), ("rocpd_event", "X.id = V.event_id"),
                ("rocpd_info_pmc", "X.id = V.pmc_id")]:
    n = one(f"SELECT COUNT(*) FROM rocpd_pmc_event V WHERE V.sample_id IS NULL AND (SELECT COUNT(*) FROM {tab} X "
            f"WHERE {on} AND X.guid = V.guid) <> 1")
    check(n == 0, f"{n} counter values do not join exactly one row of {tab}")
# Processes, nodes and agents are real: the views show as many as the store has, no placeholder among them.
check(one("SELECT COUNT(*) FROM processes") == len(info["processes"]),
      f"processes view shows {one('SELECT COUNT(*) FROM processes')} processes, the store has "
      f"{len(info['processes'])}")
check(one("SELECT COUNT(*) FROM threads") == rows["thread"], "threads view does not show every thread once")
for tab in ("rocpd_info_process", "rocpd_info_node", "rocpd_info_agent"):
    n = one(f"SELECT COUNT(*) FROM {tab} WHERE id = 0")
    check(n == 0, f"{tab} has a placeholder row (id 0)")
check(one("SELECT COUNT(*) FROM rocpd_info_agent") == rows["agent"], "rocpd_info_agent is not the store's agents")
check(one("SELECT COUNT(*) FROM rocpd_info_node") == rows["node"], "rocpd_info_node is not the store's nodes")
# Every counter shows in pmc_info (it joins an agent and a process).
check(one("SELECT COUNT(*) FROM pmc_info") == rows["counter_info"], "pmc_info does not show every counter")

# counters_collection as ROCm groups it (guid, dispatch_id, counter; summing what falls together), our own
# query over the tables, against hubprof's view (dispatch row, counter, pass) and the stored values.
upstream = db.execute(
    "SELECT K.guid, K.dispatch_id, S.display_name, I.name, SUM(V.value) FROM rocpd_pmc_event V "
    "JOIN rocpd_info_pmc I ON I.id = V.pmc_id AND I.guid = V.guid "
    "JOIN rocpd_kernel_dispatch K ON K.event_id = V.event_id AND K.guid = V.guid "
    "JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid "
    "WHERE V.sample_id IS NULL GROUP BY K.guid, K.dispatch_id, V.pmc_id").fetchall()
ours = one("SELECT COUNT(*) FROM counters_collection")
check(len(upstream) == ours == rows["counter_value"],
      f"counters_collection: {len(upstream)} rows grouped as ROCm does, {ours} in hubprof's view, "
      f"{rows['counter_value']} values stored")

# The numbers: top_kernels and counters_collection against `hubprof analyze` (per kernel).
out = subprocess.run([hp, "analyze", "--format", "csv", path], check=True, capture_output=True, text=True).stdout
an = {}
for r in csv.DictReader(io.StringIO(out)):
    an.setdefault(r["kernel"], []).append(r)
top = {r[0]: r[1:] for r in db.execute("SELECT name, total_calls, total_duration, average FROM top_kernels")}
check(set(top) == set(an), f"kernels differ: top_kernels {sorted(top)} analyze {sorted(an)}")
for k, (calls, total_us, avg_us) in top.items():
    a = an.get(k, [])
    acalls = sum(int(r["calls"]) for r in a)
    atotal = sum(int(r["total_ns"]) for r in a)
    check(calls == acalls, f"{k}: top_kernels {calls} calls, analyze {acalls}")
    check(abs(total_us * 1000 - atotal) <= 1e-6 * max(1, atotal), f"{k}: top_kernels {total_us} us, analyze {atotal} ns")
mean = {}
for guid, did, kern, counter, v in upstream:
    mean.setdefault((kern, counter), []).append(v)
for (kern, counter), vs in mean.items():
    a = an.get(kern, [])
    if len(a) != 1 or counter not in a[0]:
        fails.append(f"{kern}/{counter}: no single analyze row with this counter")
        continue
    want = float(a[0][counter])
    got = sum(vs) / len(vs)
    check(math.isclose(got, want, rel_tol=1e-5, abs_tol=1e-9),
          f"{kern}/{counter}: mean per dispatch {got} through ROCm's grouping, analyze {want}")

for f in fails:
    print(f"FAIL: {path}: {f}")
print(f"{path}: {len(fails)} broken")
sys.exit(1 if fails else 0)
