#!/usr/bin/env bash
# Call-graph check over the object files: file -> file edges from each object's undefined symbols and the
# object that defines them (`nm`), mapped to modules as tests/check_deps.sh maps includes (tests/modules.py);
# fails on a circle between modules or between files of one module, on a call against the layering (a lower
# module calling an upper one), and on a merge or assembly file that includes a format's own header or a hub
# internal other than src/hub/hub_layer.h (tests/modules.py: HUB_SEAM).
# Prints the module graph and its layers. usage: check_calls.sh [BUILD]
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# graph DIR [--partial]: check the objects under DIR (DIR/src/MODULE/FILE.o); prints "N passed, N failed"
graph() {
  python3 - "$@" <<'PY'
import os, re, subprocess, sys

sys.path.insert(0, "tests")
from modules import FORBIDDEN, HUB_SEAM, Checks, circles, hub_internals_seen, layers, module

root, partial = sys.argv[1], "--partial" in sys.argv[2:]
check = Checks()


objs = {}  # source-like name (src/hub/hub.c) -> object path
for d, dirs, files in os.walk(os.path.join(root, "src")):
    for f in files:
        if f.endswith(".o"):
            src = os.path.relpath(os.path.join(d, f[:-2] + ".c"), root)
            if module(src):
                objs[src] = os.path.join(d, f)
defined, undefined, funcs = {}, {}, set()
for src, o in sorted(objs.items()):
    out = subprocess.run(["nm", "-P", o], capture_output=True, text=True)
    check(out.returncode == 0, f"nm {o}: {out.stderr.strip()}")
    undefined[src] = set()
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        name, kind = f[0], f[1]
        if kind == "U":
            undefined[src].add(name)
        elif kind in "TDBRGSVWi" and kind.isupper():  # a global definition
            defined.setdefault(name, src)
            if kind in "TWi":
                funcs.add(name)
if not partial:
    seen = {module(s) for s in objs}
    want = {"hub", "assembly", "common", "counters", "analysis", "collector", "export", "cli"}
    check(want <= seen, f"{root}: objects missing for modules {sorted(want - seen)}")

fedges, medges = {}, {}  # file -> file -> symbol; module -> module -> "a calls b's f"
for src in sorted(undefined):
    for sym in sorted(undefined[src]):
        dst = defined.get(sym)
        if not dst or dst == src:
            continue
        if sym in funcs:  # calls; a data reference (an ops table registered, shared state) is no call
            fedges.setdefault(src, {}).setdefault(dst, sym)
        a, b = module(src), module(dst)
        if a != b:
            medges.setdefault(a, {}).setdefault(b, f"{src} calls {sym} of {dst}")

# 1. no circle between modules
found = circles(medges)
for c in found:
    check(False, "call circle between modules " + " -> ".join(c) + ": " + "; ".join(medges[a][b] for a, b in zip(c, c[1:])))
# 2. calls follow the layering
for a, bs in sorted(medges.items()):
    for b, why in sorted(bs.items()):
        check(b not in FORBIDDEN.get(a, set()), f"{a} must not call {b}: {why}")
# 3. circles between files: across modules they are module circles (above); inside one module they fail too,
# every module alike (the CLI included: its error reporter calls nothing else of the CLI). Where a lower file
# must reach an upper one (an event the upper one handles), it does so through a table of functions the upper
# side fills (a data reference, no call here), as the collector's core reaches its features (feature_hooks.c).
ff = circles(fedges)
for c in ff:
    why = " -> ".join(c) + ": " + "; ".join(f"{fedges[a][b]}" for a, b in zip(c, c[1:]))
    if len({module(f) for f in c}) > 1:
        check(False, "call circle between files of different modules " + why)
    else:
        check(False, "call circle inside module " + module(c[0]) + ": " + why)
check(not found, "call graph has circles between modules")
check(not ff, "call graph has circles between files")
# 4. the merge and the assembly reach a format only through hp_format_ops, and the hub only through its public
# headers and HUB_SEAM (tests/modules.py): none of their files includes a format's own header or another hub
# internal (from the compiler's dependency file beside each object, headers included directly or not)
FORMAT_HDR = re.compile(r"src/hub/(fmt_[a-z_]+|rocpd_[a-z_]+|parquet_[a-z_]+)\.h$")
MERGERS = re.compile(r"src/(assembly/[a-z_]+|cli/merge_[a-z_]+)\.c$")
for src, o in sorted(objs.items()):
    if not MERGERS.search(src):
        continue
    d = o[:-2] + ".d"
    if not os.path.exists(d):
        check(partial, f"{d}: missing (the build writes it with -MD)")
        continue
    deps = open(d).read().replace("\\\n", " ").split()
    seen = hub_internals_seen(src, {os.path.normpath(x) for x in deps})
    bad = [h for h in seen if FORMAT_HDR.search(h)]
    check(not bad, f"{src} includes a format's own header: {', '.join(bad)} (use hp_format_ops)")
    other = [h for h in seen if not FORMAT_HDR.search(h)]
    check(not other, f"{src} includes the hub's internals: {', '.join(other)} (use {HUB_SEAM})")

print("call graph: " + f"{len(objs)} objects, {sum(len(v) for v in fedges.values())} file edges")
print("module layers by calls (bottom first): " + ", ".join([] if found else layers({module(s) for s in objs}, medges)))
for a in sorted(medges):
    print(f"  {a} -> {', '.join(sorted(medges[a]))}")
sys.exit(check.end("check_calls"))
PY
}

# The collector is linked from its sources in one step (src/collector/collector.mk): compile its files alone.
mkdir -p "$T/objs"
(cd "$B" && find src -name '*.[od]' -exec cp --parents {} "$T/objs" \;)
mkdir -p "$T/objs/src/collector"
for c in src/collector/*.c; do
  cc -std=c11 -D_GNU_SOURCE -pthread -fPIC -O0 -w -Iinclude -Isrc/hub -Isrc/counters -Isrc/collector \
    -DHP_VERSION='"0"' -c "$c" -o "$T/objs/${c%.c}.o" 2>"$T/cc" || { echo "FAIL: cannot compile $c: $(head -3 "$T/cc")" >&2; }
done
graph "$T/objs" | tee "$T/graph"
rc=${PIPESTATUS[0]}
line=$(grep -E '^check_calls: [0-9]+ passed' "$T/graph")
pass=$(echo "$line" | sed -nE 's/.* ([0-9]+) passed.*/\1/p')
fail=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
pass=${pass:-0}
fail=${fail:-1}

# The check itself: a small synthetic tree with a module circle (hub -> cli -> hub), calls against the
# layering (hub -> cli, the storage calling the merge), a file circle inside one module and a merge file
# including a format's header and the hub's internals must fail, naming each.
S="$T/synth"
mkdir -p "$S/src/hub" "$S/src/cli" "$S/src/common" "$S/src/assembly"
printf 'int zz_cli_fn(void);\nint zz_hub_fn(void) { return zz_cli_fn(); }\n' >"$T/a.c"
printf 'int zz_hub_fn(void);\nint zz_cli_fn(void) { return zz_hub_fn() + 1; }\n' >"$T/b.c"
printf 'int zz_y(void);\nint zz_x(void) { return zz_y(); }\n' >"$T/x.c"
printf 'int zz_x(void);\nint zz_y(void) { return zz_x(); }\n' >"$T/y.c"
printf 'int zz_asm_fn(void);\nint zz_store_fn(void) { return zz_asm_fn(); }\n' >"$T/c.c"
printf 'int zz_asm_fn(void) { return 2; }\n' >"$T/d.c"
cc -c "$T/a.c" -o "$S/src/hub/zz_a.o" && cc -c "$T/b.c" -o "$S/src/cli/zz_b.o" &&
  cc -c "$T/x.c" -o "$S/src/common/zz_x.o" && cc -c "$T/y.c" -o "$S/src/common/zz_y.o" &&
  cc -c "$T/c.c" -o "$S/src/hub/zz_c.o" && cc -c "$T/d.c" -o "$S/src/assembly/zz_d.o" &&
  cc -c -x c /dev/null -o "$S/src/assembly/merge_zz.o" || fail=$((fail + 1))
printf 'src/assembly/merge_zz.o: src/assembly/merge_zz.c src/hub/hub_internal.h \\\n src/hub/fmt_log.h\n' >"$S/src/assembly/merge_zz.d"
graph "$S" --partial >"$T/self" 2>&1
selfrc=$?
want_ok=1
for msg in "call circle between modules cli -> hub -> cli" "hub must not call cli: src/hub/zz_a.c calls zz_cli_fn of src/cli/zz_b.c" \
  "call circle inside module common: src/common/zz_x.c -> src/common/zz_y.c -> src/common/zz_x.c" \
  "hub must not call assembly: src/hub/zz_c.c calls zz_asm_fn of src/assembly/zz_d.c" \
  "src/assembly/merge_zz.c includes a format's own header: src/hub/fmt_log.h" \
  "src/assembly/merge_zz.c includes the hub's internals: src/hub/hub_internal.h (use src/hub/hub_layer.h)"; do
  grep -qF "$msg" "$T/self" || { echo "FAIL: check_calls does not report '$msg' on a broken tree" >&2; want_ok=0; }
done
if [ $selfrc -ne 0 ] && [ $want_ok -eq 1 ]; then pass=$((pass + 1)); else
  sed 's/^/  self-test: /' "$T/self" | tail -n 20 >&2
  fail=$((fail + 1))
fi
echo "check_calls: $pass passed, $fail failed (with the self-test on a broken tree)"
[ "$rc" -eq 0 ] && [ "$fail" -eq 0 ]
