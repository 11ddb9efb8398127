# Checks a profile of examples/ocl/region_work (tests/replay/test_region_counters.sh): the region each dispatch
# names, each region call's host part stored with it (counter_value rows naming the region), each region's
# counters in `analyze --by region` (CSV) against the sum of its dispatches' values read from the store plus
# its host parts, the same figures from Python, and the known work within stated tolerances (the kernel part
# of "op" and "touch"; the host-only region "host": task-clock ~ its measured CPU time, page-faults ~ PAGES).
# Prints "bad: ..." per violation and one line of facts; exits 1 on any violation.
# usage: check_region_counters.py STORE ANALYZE.csv PAGES REPS SPIN_HOST_NS MODE HOST_CPU_NS HOST_ONCPU_NS
# SPDX-License-Identifier: MIT
import csv
import math
import sys

import hubprof

# Tolerances (docs/api-regions.md, "Counters per region"):
SUM_REL = 1e-9  # a region's value against the sum of its dispatches' values (the same numbers, summed again)
SMALL_FAULTS = 8  # page faults of a dispatch that touches no new memory
SPIN_LO, SPIN_HI = 0.6, 1.6  # spin's task-clock / the host's CPU time for the same recurrence
SPIN_SLACK_NS = 500_000  # per dispatch
# "host" task-clock between its CPU time and its time on the CPU (steal included, as task-clock counts it):
# 10 % + 1 ms per call either side
HOST_REL, HOST_SLACK_NS = 0.10, 1_000_000
COUNTERS = ("page-faults", "task-clock")


def main():
    store, table, pages, reps, host_ns, mode, host_cpu, host_on = sys.argv[1:9]
    pages, reps, host_ns, host_cpu = int(pages), int(reps), float(host_ns), float(host_cpu)
    host_on = max(host_cpu, float(host_on))
    bad = []
    with hubprof.open(store) as s:
        d = s.table("dispatch")
        r = s.table("region")
        cv = s.table("counter_value")
        ci = s.table("counter_info")
        ks = s.table("kernel_symbol")
        py = s.analyze(by="region", counters=list(COUNTERS), metrics=[])
    kname = dict(zip(ks.id, ks.name))
    rname = dict(zip(r.id, r["name"]))
    # 1. each dispatch names its innermost region: spin in "op", touch in "touch", idle in none
    want = {"spin": "op", "touch": "touch", "idle": None}
    for row in d.itertuples():
        k = kname.get(row.kernel_id, "?")
        got = rname.get(row.region_id) if row.region_id else None
        if k in want and got != want[k]:
            bad.append(f"dispatch {row.dispatch_id} ({k}) names region {got!r}, want {want[k]!r}")
    # 2. per dispatch: the mean of its passes' values per counter; every pass of the plan present
    cname = dict(zip(ci.id, ci["name"]))
    per, host, hcalls = {}, {}, {}

    def ref(x):  # a reference column: 0 or NULL (NaN, None) is none
        return int(x) if x is not None and x == x and x else 0

    for row in cv.itertuples():
        reg = ref(row.region_id)
        if reg:  # a region call's host part: no dispatch
            if ref(row.dispatch_id):
                bad.append(f"a host value names region {reg} and dispatch {row.dispatch_id}")
            key = (rname.get(reg), cname[row.counter_id])
            host[key] = host.get(key, 0.0) + row.value
            hcalls[key] = hcalls.get(key, 0) + 1
            continue
        per.setdefault((row.dispatch_id, cname[row.counter_id]), []).append(row.value)
    for reg in ("op", "touch", "host"):
        for c in COUNTERS:
            if hcalls.get((reg, c)) != reps:
                bad.append(f"region {reg}: {hcalls.get((reg, c), 0)} host values of {c}, want one per call ({reps})")
    passes = set(cv[[not ref(x) for x in cv.region_id]]["pass"])
    if not {1, 2} <= passes:
        bad.append(f"counter values of passes {sorted(passes)}, want both passes of the plan (1, 2)")
    inside = {"op": {"op", "touch"}, "touch": {"touch"}, "host": set()}  # touch is nested in op
    sums, ndisp = {}, {}
    for reg, names in inside.items():
        rows = d[[rname.get(x) in names for x in d.region_id]]
        ndisp[reg] = len(rows)
        for c in COUNTERS:
            vals = [per.get((i, c)) for i in rows.id]
            if any(v is None for v in vals):
                bad.append(f"region {reg}: a dispatch inside has no {c} value")
                continue
            sums[reg, c] = sum(sum(v) / len(v) for v in vals)
    # 3. analyze's rows (CLI CSV and Python) against those sums
    cli = {x["region"]: x for x in csv.DictReader(open(table))}
    pyr = {x["region"]: x for _, x in py.iterrows()}
    for reg in inside:
        if reg not in cli or reg not in pyr:
            bad.append(f"region {reg} missing from analyze --by region")
            continue
        if int(cli[reg]["dispatches"]) != ndisp[reg] or ndisp[reg] != {"op": 2, "touch": 1, "host": 0}[reg] * reps:
            bad.append(f"region {reg}: {cli[reg]['dispatches']} dispatches, store has {ndisp[reg]}")
        for c in COUNTERS:
            if (reg, c) not in sums:
                continue
            want_v, got, gpy = sums[reg, c] + host.get((reg, c), 0.0), float(cli[reg][c]), float(pyr[reg][c])
            if not math.isclose(got, want_v, rel_tol=SUM_REL, abs_tol=1e-6):
                bad.append(f"region {reg} {c}={got:g}: want its dispatches' sum {sums[reg, c]:g} + its host "
                           f"part {host.get((reg, c), 0.0):g}")
            if not math.isclose(gpy, got, rel_tol=1e-12):
                bad.append(f"region {reg} {c}: Python {gpy:g} != CLI {got:g}")
    # 4. the known work: the kernel part (the region's value less its host part) of op and touch
    def kern(reg, c):
        return float(cli.get(reg, {}).get(c, "nan")) - host.get((reg, c), 0.0)

    faults = kern("touch", "page-faults")
    lo, hi = (reps - 1) * pages, reps * (pages + SMALL_FAULTS)
    if not lo <= faults <= hi:
        bad.append(f"region touch page-faults={faults:g}: {reps} x {pages} fresh pages, want {lo}-{hi}")
    if "op" in cli and "touch" in cli:
        spin = kern("op", "task-clock") - kern("touch", "task-clock")
        lo = SPIN_LO * host_ns * reps - SPIN_SLACK_NS * reps
        hi = SPIN_HI * host_ns * reps + SPIN_SLACK_NS * reps
        if not lo <= spin <= hi:
            bad.append(f"region op without touch: task-clock={spin:g}, want {SPIN_LO}-{SPIN_HI} x {reps} x {host_ns:g}")
    # 5. the host-only region: its thread's CPU time (measured by the program) and its fresh pages
    if "host" in cli:
        tc, pf = float(cli["host"]["task-clock"]), float(cli["host"]["page-faults"])
        lo, hi = host_cpu * (1 - HOST_REL) - HOST_SLACK_NS * reps, host_on * (1 + HOST_REL) + HOST_SLACK_NS * reps
        if not lo <= tc <= hi:
            bad.append(f"region host task-clock={tc:g}: its measured CPU time is {host_cpu:g}, its time on the CPU "
                       f"{host_on:g} (want {lo:g}-{hi:g})")
        lo, hi = reps * pages, reps * (pages + SMALL_FAULTS)
        if not lo <= pf <= hi:
            bad.append(f"region host page-faults={pf:g}: {reps} x {pages} fresh pages, want {lo}-{hi}")
    for b in bad:
        print("bad:", b)
    print(f"mode={mode} dispatches={len(d)} regions={len(r)} bad={len(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
