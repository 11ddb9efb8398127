#!/usr/bin/env bash
# Include-graph check over the compiler's dependency files (build/**/*.d, from -MD): no circle between modules
# and the layering rules of docs/development.md ("Build, ABI and install"). usage: check_deps.sh [BUILD]
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
# graph BUILD: check the dependency files under BUILD; prints the module graph and "N passed, N failed"
graph() {
  python3 - "$1" <<'PY'
import os, re, subprocess, sys

sys.path.insert(0, "tests")
from modules import FORBIDDEN, HUB_SEAM, Checks, circles, hub_internals_seen, layers, module  # the module map, shared with check_calls.sh

build = sys.argv[1]
check = Checks()


def read_dep(path):
    """(source, [files it includes]) from one dependency file: its first rule, continuation lines joined."""
    text = open(path, encoding="utf-8", errors="replace").read()
    rule = text.split("\n\n")[0].replace("\\\n", " ")
    _, _, prereqs = rule.partition(":")
    files = [os.path.normpath(p) if not p.startswith("/") else p for p in prereqs.split()]
    return (files[0], files[1:]) if files else (None, [])


deps = {}  # source file -> files it includes (directly or not: -MD lists the whole closure)
for root, dirs, files in os.walk(build):
    rel = os.path.relpath(root, build)
    if rel.split(os.sep)[0] in ("san", "fuzz", "tests", "examples", "bench"):
        continue
    for f in files:
        if f.endswith(".d"):
            src, inc = read_dep(os.path.join(root, f))
            if src and module(src):
                deps.setdefault(src, set()).update(inc)
seen = {module(s) for s in deps}
check(deps and {"hub", "assembly", "counters", "analysis", "collector", "cli"} <= seen,
      f"{build}: dependency files missing for modules {sorted({'hub', 'assembly', 'counters', 'analysis', 'collector', 'cli'} - seen)}"
      " (run `make all` first)")

# 1. the module graph, each edge with one example, and its circles
edges = {}
for src, inc in sorted(deps.items()):
    for h in sorted(inc):
        a, b = module(src), module(h)
        if b and a != b:
            edges.setdefault(a, {}).setdefault(b, f"{src} includes {h}")


found = circles(edges)
for c in found:
    why = "; ".join(edges[a][b] for a, b in zip(c, c[1:]))
    check(False, "circle between modules " + " -> ".join(c) + ": " + why)
check(not found, "module graph has circles")

# 2. layering: who may include whom
for a, bs in sorted(edges.items()):
    for b, why in sorted(bs.items()):
        check(b not in FORBIDDEN.get(a, set()), f"{a} must not include {b}: {why}")
# ... and the layer above the storage (merge, assembly) sees the hub's public headers and HUB_SEAM alone
for src in sorted(deps):
    bad = hub_internals_seen(src, deps[src])
    check(not bad, f"{src} includes the hub's internals {', '.join(bad)} (the assembly reaches the hub through {HUB_SEAM} alone)")

# 3. no SQLite and no Parquet in the collector: its own files, the counters and the hub's log subset it links
log_objs = []
try:
    log_objs = subprocess.run(["ar", "t", os.path.join(build, "libhubprof_log.a")], capture_output=True, text=True,
                              check=True).stdout.split()
except (OSError, subprocess.CalledProcessError) as e:
    check(False, f"{build}/libhubprof_log.a: cannot list its members ({e})")
log_srcs = {s for s in deps if os.path.basename(s)[:-2] + ".o" in log_objs and module(s) in ("hub", "common")}
check(len(log_srcs) >= len(set(log_objs)) > 0, f"sources of libhubprof_log.a not found among the dependency files: {log_objs}")
collector_side = sorted(s for s in deps if module(s) in ("collector", "counters") or s in log_srcs)
for src in collector_side:
    bad = sorted(h for h in deps[src] if h.endswith("/sqlite3.h") or re.search(r"(^|/)parquet[^/]*\.h$", h)
                 or os.path.basename(h) == "fmt_rocpd.h")
    check(not bad, f"{src} (linked into the collector) includes {', '.join(bad)}")

# 4. no file includes a .c file (an exemption, should one ever be needed, is listed here; one that no longer
# happens fails too, so it is removed with the include).
KNOWN_C_INCLUDES = set()
c_includes = {(src, h) for src, inc in deps.items() for h in inc if h.endswith(".c")}
for src, h in sorted(c_includes - KNOWN_C_INCLUDES):
    check(False, f"{src} includes the source file {h} (link its module instead)")
for src, h in sorted(KNOWN_C_INCLUDES - c_includes):
    check(False, f"{src} no longer includes {h}: remove it from KNOWN_C_INCLUDES in tests/check_deps.sh")
check(c_includes <= KNOWN_C_INCLUDES, "includes of .c files")

order = [] if found else layers(seen, edges)
print("module layers (bottom first): " + ", ".join(order))
for a in sorted(edges):
    print(f"  {a} -> {', '.join(sorted(edges[a]))}")
sys.exit(check.end("check_deps"))
PY
}

graph "$B" | tee "${TMPDIR:-/tmp}/check_deps.$$"
rc=${PIPESTATUS[0]}
line=$(grep -E '^check_deps: [0-9]+ passed' "${TMPDIR:-/tmp}/check_deps.$$")
rm -f "${TMPDIR:-/tmp}/check_deps.$$"
pass=$(echo "$line" | sed -nE 's/.* ([0-9]+) passed.*/\1/p')
fail=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
pass=${pass:-0}
fail=${fail:-1}
# The check itself: a copy of these dependency files with a circle, layering breaks (the hub including the CLI
# and the assembly, the assembly including a format's internals) and SQLite in the collector added must fail,
# naming each.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/b"
(cd "$B" && find . -name '*.d' -not -path './san/*' -not -path './fuzz/*' -exec cp --parents {} "$T/b" \;)
cp "$B/libhubprof_log.a" "$T/b/" 2>/dev/null
mkdir -p "$T/b/src/hub" "$T/b/src/assembly" "$T/b/deps/src/collector"
printf 'x.o: src/hub/zz_bad.c src/cli/cli.h src/hub/hub_internal.h src/hub/zz_other.c\n' >"$T/b/src/hub/zz_bad.d"
printf 'x.o: src/counters/zz_bad.c include/hubprof/analysis.h\n' >"$T/b/src/hub/zz_bad2.d"
printf 'x.o: src/assembly/zz_bad.c src/hub/hub_layer.h src/hub/rocpd_internal.h\n' >"$T/b/src/assembly/zz_bad.d"
printf 'x.o: src/hub/zz_bad3.c include/hubprof/assemble.h\n' >"$T/b/src/hub/zz_bad3.d"
printf 'x.o: src/collector/zz_bad.c /usr/include/sqlite3.h\n' >"$T/b/deps/src/collector/zz_bad.d"
graph "$T/b" >"$T/out" 2>&1
selfrc=$?
want_ok=1
for msg in "hub must not include cli" "hub must not include assembly" \
  "src/assembly/zz_bad.c includes the hub's internals src/hub/rocpd_internal.h (the assembly reaches" "src/hub/zz_bad.c includes the source file src/hub/zz_other.c" "circle between modules analysis -> counters -> analysis" \
  "src/collector/zz_bad.c (linked into the collector) includes /usr/include/sqlite3.h"; do
  grep -qF "$msg" "$T/out" || { echo "FAIL: check_deps does not report '$msg' on a broken tree" >&2; want_ok=0; }
done
if [ $selfrc -ne 0 ] && [ $want_ok -eq 1 ]; then pass=$((pass + 1)); else
  sed 's/^/  self-test: /' "$T/out" | tail -n 20 >&2
  fail=$((fail + 1))
fi
echo "check_deps: $pass passed, $fail failed (with the self-test on a broken copy)"
[ "$rc" -eq 0 ] && [ "$fail" -eq 0 ]
