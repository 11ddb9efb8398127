# Checks a profile of examples/ocl/region_work (tests/replay/test_region_counters.sh): the region each dispatch
# names, each region's counters in `analyze --by region` (CSV) against the sum of its dispatches' values read
# from the store, the same figures from Python, and the known work within stated tolerances. Prints "bad: ..."
# per violation and one line of facts; exits 1 on any violation.
# usage: check_region_counters.py STORE ANALYZE.csv PAGES REPS SPIN_HOST_NS MODE
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
COUNTERS = ("page-faults", "task-clock")


def main():
    store, table, pages, reps, host_ns, mode = sys.argv[1:7]
    pages, reps, host_ns = int(pages), int(reps), float(host_ns)
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
    per = {}
    for row in cv.itertuples():
        per.setdefault((row.dispatch_id, cname[row.counter_id]), []).append(row.value)
    passes = set(cv["pass"])
    if not {1, 2} <= passes:
        bad.append(f"counter values of passes {sorted(passes)}, want both passes of the plan (1, 2)")
    inside = {"op": {"op", "touch"}, "touch": {"touch"}}  # touch is nested in op
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
        if int(cli[reg]["dispatches"]) != ndisp[reg] or ndisp[reg] != (2 if reg == "op" else 1) * reps:
            bad.append(f"region {reg}: {cli[reg]['dispatches']} dispatches, store has {ndisp[reg]}")
        for c in COUNTERS:
            if (reg, c) not in sums:
                continue
            want_v, got, gpy = sums[reg, c], float(cli[reg][c]), float(pyr[reg][c])
            if not math.isclose(got, want_v, rel_tol=SUM_REL, abs_tol=1e-6):
                bad.append(f"region {reg} {c}={got:g}: want the sum of its dispatches {want_v:g}")
            if not math.isclose(gpy, got, rel_tol=1e-12):
                bad.append(f"region {reg} {c}: Python {gpy:g} != CLI {got:g}")
    # 4. the known work
    faults = float(cli.get("touch", {}).get("page-faults", "nan"))
    lo, hi = (reps - 1) * pages, reps * (pages + SMALL_FAULTS)
    if not lo <= faults <= hi:
        bad.append(f"region touch page-faults={faults:g}: {reps} x {pages} fresh pages, want {lo}-{hi}")
    if "op" in cli and "touch" in cli:
        spin = float(cli["op"]["task-clock"]) - float(cli["touch"]["task-clock"])
        lo = SPIN_LO * host_ns * reps - SPIN_SLACK_NS * reps
        hi = SPIN_HI * host_ns * reps + SPIN_SLACK_NS * reps
        if not lo <= spin <= hi:
            bad.append(f"region op without touch: task-clock={spin:g}, want {SPIN_LO}-{SPIN_HI} x {reps} x {host_ns:g}")
    for b in bad:
        print("bad:", b)
    print(f"mode={mode} dispatches={len(d)} regions={len(r)} bad={len(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
