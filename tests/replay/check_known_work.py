# Checks a profile of examples/ocl/known_work (tests/replay/test_known_work.sh) against the counts its kernels
# have by construction; prints "bad: ..." per violation and one line of facts, exits 1 on any violation.
# usage: check_known_work.py STORE.db PAGES SPIN_HOST_NS MODE   (MODE: kernel, application or multiplex)
# SPDX-License-Identifier: MIT
import sqlite3
import sys

# Tolerances (docs/counters.md, "Known-work validation"):
IDLE_TASK_NS = 1_000_000  # a kernel that does nothing: at most 1 ms of task-clock (JIT alone is 10-50 ms)
SMALL_FAULTS = 8  # page faults of a kernel that touches no new memory
SPIN_LO, SPIN_HI = 0.6, 1.6  # spin's task-clock / the host's CPU time for the same recurrence
SPIN_SLACK_NS = 500_000
PEAK_SLACK = 1.05  # task-clock <= device duration x work-items (one per compute unit) x 1.05 + slack


def main():
    db, pages, host_ns, mode = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    con = sqlite3.connect(db)
    rows = con.execute(
        "select dispatch_id, kernel_name, grid_size, end - start, counter_name, value, imputed "
        "from counters_collection order by dispatch_id"
    ).fetchall()
    bad = []
    disp = {}
    for did, k, grid, dur, c, v, imp in rows:
        d = disp.setdefault(did, {"kernel": k, "grid": grid, "dur": dur, "vals": {}})
        d["vals"][c] = (v, imp)
    first = {}  # each kernel's first dispatch: the cold one
    for did in sorted(disp):
        first.setdefault(disp[did]["kernel"], did)
    checked = 0
    for did in sorted(disp):
        d = disp[did]
        k, cold = d["kernel"], first[d["kernel"]] == did
        for c, (v, imp) in sorted(d["vals"].items()):
            if mode == "multiplex" and cold and not imp:
                continue  # multiplexing saves nothing, so nothing runs before a cold dispatch: not checked
            what = f"dispatch {did} ({k}{', first' if cold else ''}) {c}={v:g}{' (imputed)' if imp else ''}"
            checked += 1
            if c == "task-clock":
                if k == "idle" and v > IDLE_TASK_NS:
                    bad.append(f"{what}: a kernel that does nothing, want <= {IDLE_TASK_NS}")
                if k == "spin":
                    if not (SPIN_LO * host_ns - SPIN_SLACK_NS <= v <= SPIN_HI * host_ns + SPIN_SLACK_NS):
                        bad.append(f"{what}: want {SPIN_LO}-{SPIN_HI} x the host's {host_ns:g} ns")
                    peak = d["dur"] * d["grid"] * PEAK_SLACK + SPIN_SLACK_NS
                    if not imp and v > peak:
                        bad.append(f"{what}: above its peak {peak:g} (duration x {d['grid']} work-items)")
            elif c == "page-faults":
                if k in ("idle", "spin") and v > SMALL_FAULTS:
                    bad.append(f"{what}: touches no new page, want <= {SMALL_FAULTS}")
                if k == "touch":
                    if cold and mode != "multiplex" and not imp:
                        # its fresh pages were first touched by the warm-up run (docs/counters.md)
                        if v > SMALL_FAULTS:
                            bad.append(f"{what}: after the warm-up run, want <= {SMALL_FAULTS}")
                    elif not (pages <= v <= pages + SMALL_FAULTS):
                        bad.append(f"{what}: touches {pages} fresh pages, want {pages}-{pages + SMALL_FAULTS}")
    for b in bad:
        print("bad:", b)
    print(f"dispatches={len(disp)} kernels={len(first)} checked={checked} bad={len(bad)}")
    return 1 if bad or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
