"""Checks a store of examples/ocl/select_mix against selective collection's documented rules, computed here
independently of the collector: exactly the selected dispatches stored (kernel and global size, in order),
the metadata count of those not selected, and (with --passes P) every stored dispatch replayed P times with
its counter values.
usage: check_select.py STORE N [--kernel RE]... [--kernel-exclude RE]... [--dispatch-range R]...
                       [--region NAME]... [--passes P] [--processes K]"""
# SPDX-License-Identifier: MIT
import argparse
import re
import sys

import hubprof


def program(n):
    """select_mix's dispatches in order: (kernel, global size, open regions)."""
    seq = [("sm_add", 1, set())]
    for i in range(n):
        seq.append(("sm_add", 64 + i, {"iter"}))
        if i % 3 == 0:
            seq += [("sm_mul", 64 + i, {"iter", "hot"})] * 2
        seq.append(("sm_mix", 64 + i, {"iter"}))
    return seq


def parse_range(text):
    per_kernel = text.startswith("kernel:")
    body = text[len("kernel:"):] if per_kernel else text
    a, dash, b = body.partition("-")
    first = int(a) if a else 1
    last = (int(b) if b else float("inf")) if dash else first
    return per_kernel, first, last


def selected(seq, o):
    out, glob, perk = [], 0, {}
    ranges = [parse_range(r) for r in o.dispatch_range]
    g = [(a, b) for k, a, b in ranges if not k]
    p = [(a, b) for k, a, b in ranges if k]
    for name, grid, regions in seq:
        if o.kernel and not any(re.search(r, name) for r in o.kernel):
            continue
        if any(re.search(r, name) for r in o.kernel_exclude):
            continue
        if o.region and not regions & set(o.region):
            continue
        glob += 1
        perk[name] = perk.get(name, 0) + 1
        if g and not any(a <= glob <= b for a, b in g):
            continue
        if p and not any(a <= perk[name] <= b for a, b in p):
            continue
        out.append((name, grid))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("n", type=int)
    for opt in ("--kernel", "--kernel-exclude", "--dispatch-range", "--region"):
        ap.add_argument(opt, action="append", default=[])
    ap.add_argument("--passes", type=int, default=0)
    ap.add_argument("--processes", type=int, default=1)
    o = ap.parse_args()
    seq = program(o.n)
    want = selected(seq, o)
    with hubprof.open(o.store) as s:
        d = s.table("dispatch").sort_values(["process_id", "dispatch_id"])
        names = dict(zip(s.table("kernel_symbol")["id"], s.table("kernel_symbol")["name"]))
        meta = s.metadata()
        cv = s.table("counter_value") if o.passes else None
    got = [(names[k], int(g)) for k, g in zip(d["kernel_id"], d["grid_x"])]
    errors = []
    if got != want * o.processes if o.processes == 1 else sorted(got) != sorted(want * o.processes):
        errors.append(f"stored {len(got)} dispatches {got[:8]}..., want {len(want)} {want[:8]}...")
    not_sel = (len(seq) - len(want)) * o.processes
    if meta.get("dispatches_not_selected") != str(not_sel):
        errors.append(f"metadata dispatches_not_selected = {meta.get('dispatches_not_selected')}, want {not_sel}")
    if o.passes:
        if len(d) and set(d["passes"]) != {o.passes}:
            errors.append(f"passes per dispatch {sorted(set(d['passes']))}, want {o.passes}")
        if "region_id" in cv:  # a region's host part (docs/api-regions.md) is no dispatch's value
            cv = cv[cv["region_id"].fillna(0) == 0]
        if set(cv["dispatch_id"]) != set(d["id"]):
            errors.append("counter values not on exactly the stored dispatches")
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
