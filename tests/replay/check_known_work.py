# Checks a profile of examples/ocl/known_work (tests/replay/test_known_work.sh) against the counts its kernels
# have by construction; prints "bad: ..." per violation and one line of facts; exits 1 on any violation, 3 when
# the only violations are spin's task-clock against the host's CPU time (CPU time of a shared VM: the test
# re-runs the profile then).
# usage: check_known_work.py STORE.db PAGES SPIN_HOST_NS MODE   (MODE: kernel, application or multiplex)
# SPDX-License-Identifier: MIT
import json
import sqlite3
import sys

# Tolerances (docs/counters.md, "Known-work validation"):
IDLE_TASK_NS = 1_000_000  # a kernel that does nothing: at most 1 ms of task-clock (JIT alone is 10-50 ms)
SMALL_FAULTS = 8  # page faults of a kernel that touches no new memory
SPIN_LO, SPIN_HI = 0.6, 1.6  # spin's task-clock / the host's CPU time for the same recurrence
SPIN_SLACK_NS = 500_000
PEAK_SLACK = 1.05  # task-clock <= device duration x work-items (one per compute unit) x 1.05 + slack
# The duration is the application's own run (pass 1): the peak is checked for values measured in pass 1 only,
# a later pass's kernel runs at another time, and for another time


def main():
    db, pages, host_ns, mode = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    con = sqlite3.connect(db)
    rows = con.execute(
        "select dispatch_id, kernel_name, grid_size, end - start, counter_name, value, imputed "
        "from counters_collection order by dispatch_id"
    ).fetchall()
    passes = dict(  # (dispatch, counter) -> the pass that measured it
        ((did, c), p)
        for did, c, p in con.execute(
            "select K.dispatch_id, I.name, json_extract(V.extdata, '$.pass') from rocpd_pmc_event V "
            "join rocpd_kernel_dispatch K on K.event_id = V.event_id and K.guid = V.guid "
            "join rocpd_info_pmc I on I.id = V.pmc_id and I.guid = V.guid"
        )
    )
    bad, noisy = [], []
    disp = {}
    peaks = 0
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
            what = f"dispatch {did} ({k}{', first' if cold else ''}) {c}={v:g}{' (imputed)' if imp else ''}"
            checked += 1
            if mode == "multiplex" and cold and not imp:
                # no warm-up can run before a cold dispatch under multiplexing: its reading holds first use
                # and must be replaced by its warm siblings' estimate (the raw one is in metadata)
                bad.append(f"{what}: a cold dispatch's raw reading, want its warm siblings' estimate")
                continue
            if c == "task-clock":
                if k == "idle" and v > IDLE_TASK_NS:
                    bad.append(f"{what}: a kernel that does nothing, want <= {IDLE_TASK_NS}")
                if k == "spin":
                    if not (SPIN_LO * host_ns - SPIN_SLACK_NS <= v <= SPIN_HI * host_ns + SPIN_SLACK_NS):
                        noisy.append(f"{what}: want {SPIN_LO}-{SPIN_HI} x the host's {host_ns:g} ns")
                    peak = d["dur"] * d["grid"] * PEAK_SLACK + SPIN_SLACK_NS
                    same_run = not imp and passes.get((did, c)) in (None, 1)
                    peaks += same_run
                    if same_run and v > peak:
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
    if mode == "multiplex":  # the raw cold readings, kept apart: one per kernel's first dispatch, as replaced
        raw = con.execute("select value from rocpd_metadata where tag = 'multiplex_cold_raw'").fetchone()
        raw = json.loads(raw[0]) if raw else []
        if {r["kernel"] for r in raw} != set(first):
            bad.append(f"multiplex_cold_raw names {sorted({r['kernel'] for r in raw})}, want {sorted(first)}")
        for r in raw:
            did = first.get(r["kernel"])
            kept = disp.get(did, {"vals": {}})["vals"].get(r["counter"])
            if r["dispatch_id"] != did or not kept or not kept[1] or kept[0] != r["estimate"]:
                bad.append(f"multiplex_cold_raw entry {r} does not match the imputed value {kept}")
        print(f"cold_raw={len(raw)}")
    for b in bad + noisy:
        print("bad:", b)
    print(f"dispatches={len(disp)} kernels={len(first)} checked={checked} peaks={peaks} bad={len(bad) + len(noisy)}")
    return 1 if bad or not checked else 3 if noisy else 0


if __name__ == "__main__":
    sys.exit(main())
