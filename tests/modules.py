"""The module map of docs/development.md for the graph checks (tests/check_deps.sh: includes;
tests/check_calls.sh: calls): which module a file belongs to, who must never use whom, and circles."""
# SPDX-License-Identifier: MIT
import re
import sys

MODULES = ("hub", "assembly", "common", "counters", "analysis", "collector", "export", "cli")
# Modules a module's files must never use (besides the circle rule): lower layers never see upper ones.
FORBIDDEN = {
    "common": {"hub", "assembly", "counters", "analysis", "collector", "export", "cli"},
    "hub": {"assembly", "cli", "collector", "analysis", "export"},  # storage: formats, never the merge
    "assembly": {"cli", "collector", "analysis", "export"},  # merge and assembly: above the hub, below the CLI
    "counters": {"assembly", "cli", "collector", "analysis", "export"},
    "analysis": {"assembly", "cli", "collector", "export"},
    "collector": {"assembly", "cli", "analysis", "export"},
    "export": {"assembly", "cli", "collector", "counters"},  # analysis through its public API: the HTML report
    "cli": {"collector"},
}
# The layer above the storage (merge and assembly: module "assembly") reaches the hub through its public headers
# and this one internal header alone: functions on an opaque store, a format's fast path behind hp_format_ops.
# A format's own header (fmt_*, rocpd_*, parquet_*), hub_internal.h or any other hub internal is refused, on
# includes (check_deps.sh) and on the dependency files of the merge's objects (check_calls.sh).
HUB_SEAM = "src/hub/hub_layer.h"


def hub_internals_seen(src, headers):
    """The hub's internal headers (src/hub/*.h) a file of the assembly layer includes besides HUB_SEAM, sorted;
    [] for a file of another module."""
    if module(src) != "assembly" and not re.match(r"src/cli/merge_[a-z_]+\.c$", src):
        return []
    return sorted({h for h in headers if re.match(r"src/hub/[^/]+\.h$", h) and h != HUB_SEAM})


def module(path):
    """The module of a project file, None for anything else (system headers, tests, examples)."""
    if path.startswith("include/hubprof/"):
        return {"include/hubprof/analysis.h": "analysis", "include/hubprof/assemble.h": "assembly"}.get(path, "hub")
    m = re.match(r"src/([a-z]+)/", path)
    return m.group(1) if m and m.group(1) in MODULES else None


def circles(edges):
    """Circles of a graph {node: {node: why}}: each a list of nodes whose first and last are the same."""
    out, stack, state = [], [], {}

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(edges.get(m, {})):
            if state.get(n) == 1:
                out.append(stack[stack.index(n):] + [n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)
    return out


def layers(nodes, edges):
    """The nodes bottom first (each after everything it uses), as far as there is no circle."""
    order, done = [], set()
    while len(done) < len(nodes):
        nxt = sorted(m for m in set(nodes) - done if set(edges.get(m, {})) - {m} <= done)
        if not nxt:
            break
        order += nxt
        done |= set(nxt)
    return order


class Checks:
    """Counted checks: check(ok, msg) prints "FAIL: msg" on stderr when not ok; end(name) prints the closing
    "NAME: N passed, N failed" line and returns the exit status."""

    def __init__(self):
        self.passed = self.failed = 0

    def __call__(self, ok, msg):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL: " + msg, file=sys.stderr)

    def end(self, name):
        print(f"{name}: {self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0
