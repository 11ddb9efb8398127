#!/usr/bin/env bash
# hubprof roofline (issue 26 part 3, docs/cli/roofline.md) on the OpenCL devices here, in quick mode: the CSV
# header and the five rows per device with their units, then one per cache level (a CPU device: each data or
# unified level sysfs lists, its size in the note); fp32 and dram measured (> 0) and fp32 below a physical
# bound (compute units x max clock x 64 FLOP per cycle, and the same from /proc/cpuinfo on a CPU device); the
# cache levels kept are each at least 1.2x the level outside them (dram last), the others say why; a
# ceiling without a value has a note; --format json parses; an unknown --device, and no OpenCL platform, are
# one error line and exit 1; an argument is a usage error. -o STORE and --store STORE (rocpd, Parquet, log
# profiles of vector_add) keep the ceilings on the profile's own device, analyze --roofline reads them back
# and names the counters missing to place the kernel. Skipped when no OpenCL device is there.
# usage: test_roofline.sh [HUBPROF]   (default build/hubprof)
# SPDX-License-Identifier: MIT
set -u
HP=$(realpath "${1:-build/hubprof}")
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
need_built test_roofline "$HP"
need_opencl test_roofline
app=$PWD/${B:-build}/examples/ocl/vector_add # a profile to add ceilings to (the plain build's example)
hp_test_env
cd "$T" || exit 1
export HUBPROF_ROOFLINE_QUICK=1
# PoCL compiles the kernels in this process with LLVM when its cache (~/.cache/pocl) lacks them, as on a fresh
# machine: under a sanitized hubprof, LeakSanitizer then reports LLVM's and PoCL's own allocations (or GCC 12's
# crashes on their dlopened TLS), not hubprof's. The plain build compiles them into the cache first.
plain=$OLDPWD/${B:-build}/hubprof
[ "$HP" != "$(realpath "$plain")" ] && [ -x "$plain" ] && "$plain" roofline -q >/dev/null 2>&1

expect 0 "$HP" roofline --format csv -q
cp out csv
[ "$(head -1 csv)" = "device,ceiling,value,unit,note" ] && ok || bad "CSV header: $(head -1 csv)"
[ ! -s err ] && ok || bad "-q wrote to stderr: $(cat err)"
# five rows per device, then its cache levels innermost first, each ceiling with its unit; a row without a
# value has a note saying why
python3 - csv <<'EOF' && ok || bad "rows: $(cat csv)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
units = {"fp64": "GFLOP/s", "fp32": "GFLOP/s", "fp16": "GFLOP/s", "int32": "GOP/s", "dram": "GB/s",
         "l1": "GB/s", "l2": "GB/s", "l3": "GB/s", "l4": "GB/s"}
devs = {r["device"] for r in rows}
assert devs, rows
for d in devs:
    names = [r["ceiling"] for r in rows if r["device"] == d]
    assert names[:5] == ["fp64", "fp32", "fp16", "int32", "dram"], (d, names)
    assert names[5:] == sorted(set(names[5:])) and set(names[5:]) <= {"l1", "l2", "l3", "l4"}, (d, names)
for r in rows:
    assert r["unit"] == units[r["ceiling"]], r
    assert (r["value"] == "" and r["note"]) or float(r["value"]) > 0, r
EOF
# the cache levels of a CPU device (PoCL here): one row per data or unified level of sysfs, each measured
# with a working set inside it (the note names the level and its size as sysfs gives it), or saying why
# not; the levels kept fall in order, each at least 1.2x the next one kept outside it (dram last): the
# measurement drops a level it cannot tell apart (load only slows a run, so at load 10 a level may be
# dropped, never misordered); l1 (half of L1, read again and again) is apart from dram, and below a
# physical bound (CPUs x fastest clock x 256 bytes a cycle). A measurement whose every l1 run was slowed (the
# runner already measures a level again before dropping it) is retried twice: the checks of the rows and notes
# cannot pass by chance, and l1 kept in one of three measurements is what load cannot take away
cache_check() {
  python3 - "$1" /sys/devices/system/cpu/cpu0/cache "$((ncpu * cmhz * 256 / 1000))" 2>&1 <<'EOF'
import csv, glob, os, sys
rows = list(csv.DictReader(open(sys.argv[1])))
dev = rows[0]["device"]
mine = {r["ceiling"]: r for r in rows if r["device"] == dev}
def read(d, f):
    return open(os.path.join(d, f)).read().strip()
levels = {}
for d in sorted(glob.glob(os.path.join(sys.argv[2], "index*")), key=lambda d: int(d.rsplit("index", 1)[1])):
    if read(d, "type") in ("Data", "Unified") and int(read(d, "level")) <= 4:
        levels.setdefault("l" + read(d, "level"), read(d, "size"))
assert levels and sorted(n for n in mine if n.startswith("l")) == sorted(levels), (levels, mine)
def size_text(s):  # sysfs's 48K, 2048K, 307200K as the notes write them
    b = int(s[:-1]) * {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[s[-1]] if s[-1] in "KMG" else int(s)
    return f"{b >> 20} MiB" if b >= 1 << 20 and b % (1 << 20) == 0 else \
        f"{b / (1 << 20):.1f} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"
outer, outer_v = "dram", float(mine["dram"]["value"])
for name in sorted(levels, reverse=True):
    r = mine[name]
    if r["value"]:
        v = float(r["value"])
        assert f"({name} of {size_text(levels[name])})" in r["note"] and r["note"].startswith("cache_read: "), r
        assert v >= 1.2 * outer_v, (name, v, outer, outer_v)
        outer, outer_v = name, v
    elif "not told apart from " in r["note"]:
        assert f"({name} of {size_text(levels[name])})" in r["note"], r
    else:
        assert "no working set" in r["note"], r
l1 = mine["l1"]
assert l1["value"] and float(l1["value"]) < float(sys.argv[3]), (l1, sys.argv[3])
print("test_roofline: " + ", ".join(f"{n} {mine[n]['value'] or '-'}" for n in sorted(levels)) +
      f", dram {mine['dram']['value']} GB/s")
EOF
}
if head -2 csv | grep -qi 'pthread\|cpu'; then
  ncpu=$(grep -c ^processor /proc/cpuinfo)
  cmhz=$(awk -F: '/cpu MHz/ {if ($2 > m) m = $2} END {printf "%d", m}' /proc/cpuinfo)
  [ "$cmhz" -gt 0 ] 2>/dev/null || cmhz=5000
  cp csv levels.csv
  for try in 1 2 3; do
    cache_check levels.csv >levels.out && break
    echo "test_roofline: cache levels, measurement $try: $(tail -1 levels.out)"
    [ $try -lt 3 ] && "$HP" roofline -q --format csv --device "$(awk -F, 'NR == 2 {print $1}' csv)" >levels.csv
  done && ok || bad "cache levels: $(cat levels.out levels.csv)"
  cat levels.out
fi
# fp32 and dram measured on the first device, with their units
fp32=$(awk -F, '$2 == "fp32" {print $3; exit}' csv)
dram=$(awk -F, '$2 == "dram" {print $3; exit}' csv)
awk -v v="$fp32" 'BEGIN {exit !(v > 0)}' && grep -q ',fp32,[0-9.]*,GFLOP/s,' csv && ok || bad "fp32: '$fp32'"
awk -v v="$dram" 'BEGIN {exit !(v > 0)}' && grep -q ',dram,[0-9.]*,GB/s,' csv && ok || bad "dram: '$dram'"
# a physical bound: compute units x max clock (MHz) x 64 FLOP a cycle (two AVX-512 FMA pipes; far above a GPU
# SM's 256 FLOP at its clock too, for the CPU device here the one that matters); on a CPU device, the same
# bound from /proc/cpuinfo's processors and fastest clock
cu=$(clinfo 2>/dev/null | awk '/Max compute units/ {print $NF; exit}')
mhz=$(clinfo 2>/dev/null | awk '/Max clock frequency/ {gsub(/MHz/, "", $NF); print $NF; exit}')
if [ -n "$cu" ] && [ -n "$mhz" ] && [ "$mhz" -gt 0 ] 2>/dev/null; then
  awk -v v="$fp32" -v b="$((cu * mhz * 64 / 1000))" 'BEGIN {exit !(v < b)}' && ok ||
    bad "fp32 $fp32 GFLOP/s above $cu compute units x $mhz MHz x 64 FLOP/cycle"
fi
if head -2 csv | grep -qi 'pthread\|cpu'; then
  ncpu=$(grep -c ^processor /proc/cpuinfo)
  cmhz=$(awk -F: '/cpu MHz/ {if ($2 > m) m = $2} END {printf "%d", m}' /proc/cpuinfo)
  [ "$cmhz" -gt 0 ] 2>/dev/null || cmhz=5000
  awk -v v="$fp32" -v b="$((ncpu * cmhz * 64 / 1000))" 'BEGIN {exit !(v < b)}' && ok ||
    bad "fp32 $fp32 GFLOP/s above $ncpu CPUs x $cmhz MHz x 64 FLOP/cycle"
fi
# the levels from another folder laid out as sysfs (HUBPROF_ROOFLINE_CACHES): an L2 under 8x L1 has no
# working set well inside it and outside L1, and its row says so
if head -2 csv | grep -qi 'pthread\|cpu'; then
  for c in "0 1 Data 32K" "1 1 Instruction 32K" "2 2 Unified 128K"; do
    set -- $c
    mkdir -p "fakecache/index$1" && echo "$2" >"fakecache/index$1/level" && echo "$3" >"fakecache/index$1/type" &&
      echo "$4" >"fakecache/index$1/size"
  done
  expect 0 env HUBPROF_ROOFLINE_CACHES="$T/fakecache" "$HP" roofline -q --format csv \
    --device "$(awk -F, 'NR == 2 {print $1}' csv)"
  [ "$(cut -d, -f2 out | tail -2 | tr '\n' ' ')" = "l1 l2 " ] &&
    grep -q ',l2,,GB/s,l2 (128 KiB) is under 8x l1 (32 KiB): no working set well inside it and outside l1$' out &&
    grep -q ',l1,.*(l1 of 32 KiB)' out && ok || bad "HUBPROF_ROOFLINE_CACHES: $(cat out err)"
fi

# JSON parses: one object per row, value a number or null
expect 0 "$HP" roofline --format json -q
python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
assert rows and all(set(r) == {"device", "ceiling", "value", "unit", "note"} for r in rows), rows
assert all(r["value"] is None or r["value"] > 0 for r in rows), rows
' out && ok || bad "JSON: $(head -c 300 out)"

# the table, with progress lines on stderr unless -q; --device picks the device by a glob of its name
dev=$(awk -F, 'NR == 2 {print $1}' csv | tr -d '"')
expect 0 "$HP" roofline --device "${dev:0:6}*"
grep -q '^DEVICE  *CEILING  *VALUE  *UNIT  *NOTE' out && grep -q 'fp32' out && ok || bad "table: $(cat out)"
grep -q 'measuring fp32' err && ok || bad "no progress line: $(cat err)"

# an unknown device: one line naming the devices there, exit 1
expect 1 "$HP" roofline --device 'no-such-device*'
one_line_error "roofline: no OpenCL device matches 'no-such-device*' (devices: "
# no OpenCL platform (the ICD loader pointed at an empty folder of vendors): one line, exit 1
mkdir -p novendors
expect 1 env OCL_ICD_VENDORS="$T/novendors" "$HP" roofline
one_line_error "roofline: no OpenCL platform found"
# CUDA devices (--platform cuda): where this machine has no NVIDIA driver (or hubprof was built without
# nvcc), one line saying which, exit 1; --platform opencl measures what the default measures here
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  expect 1 "$HP" roofline --platform cuda
  one_line_error "roofline: CUDA: "
  grep -q "cannot load libcuda.so.1 (no NVIDIA driver on this machine)\|built without nvcc" err && ok ||
    bad "--platform cuda without a driver: $(cat err)"
fi
expect 0 "$HP" roofline -q --platform opencl --format csv --device "$(awk -F, 'NR == 2 {print $1}' csv)"
first=$(awk -F, 'NR == 2 {print $1}' csv)
[ "$(cut -d, -f1,2,4 out)" = "$(awk -F, -v d="$first" 'NR == 1 || $1 == d' csv | cut -d, -f1,2,4)" ] && ok ||
  bad "--platform opencl: $(cat out)"
expect 2 "$HP" roofline --platform metal
# usage errors: an argument, a bad format
expect 2 "$HP" roofline extra
expect 2 "$HP" roofline --format xml

# the ceilings kept in a store (-o: a new store; --store: added to a profile of this machine, in its format,
# on the profile's own device); analyze --roofline reads them back, and says which counters a kernel of the
# CPU device lacks to be placed (none of them here: no figure invented)
expect 0 "$HP" roofline -q --format csv -o ceil.db
cp out csv_o
"$HP" analyze --roofline --format csv ceil.db >an 2>&1 && ok || bad "analyze --roofline ceil.db: $(cat an)"
python3 - csv_o an <<'EOF' && ok || bad "-o store: $(cat an)"
import csv, io, sys
measured = [r for r in csv.DictReader(open(sys.argv[1])) if r["value"]]
ceil, kern = open(sys.argv[2]).read().split("\n\n")
got = list(csv.DictReader(io.StringIO(ceil)))
assert [(r["device"], r["ceiling"], r["unit"]) for r in got] == \
       [(r["device"], r["ceiling"], r["unit"]) for r in measured], (got, measured)
assert all(float(r["value"]) > 0 for r in got), got
assert kern.strip() == "device,kernel,precision,flop,bytes,time_ns,intensity,gflops,bound,missing", kern
EOF
expect 1 "$HP" roofline -q -o ceil.db
one_line_error "ceil.db: already exists"
for f in db parquet log; do
  "$HP" trace -q -o "prof.$f" "$app" >/dev/null 2>&1 || bad "trace -o prof.$f"
  expect 0 "$HP" roofline -q --store "prof.$f"
  "$HP" analyze --roofline --format csv "prof.$f" >an 2>&1 && ok || bad "analyze --roofline prof.$f: $(cat an)"
  python3 - an "prof.$f" csv <<'EOF' && ok || bad "--store prof.$f: $(cat an)"
import csv, io, sys
import hubprof
ceil, kern = open(sys.argv[1]).read().split("\n\n")
c, k = list(csv.DictReader(io.StringIO(ceil))), list(csv.DictReader(io.StringIO(kern)))
assert {r["ceiling"] for r in c} >= {"fp32", "dram"}, c
# the cache levels too: every row of the device (measured or not) stored, the measured ones printed
first = list(csv.DictReader(open(sys.argv[3])))
first = [r for r in first if r["device"] == first[0]["device"]]
levels = [r["ceiling"] for r in first if r["ceiling"].startswith("l")]
assert any(r["ceiling"] in levels and r["unit"] == "GB/s" and float(r["value"]) > 0 for r in c), c
row = [r for r in k if r["kernel"] == "vector_add"]
assert len(row) == 1 and row[0]["precision"] == "" and row[0]["flop"] == "" and row[0]["gflops"] == "", row
assert "smsp__sass_thread_inst_executed_op_" in row[0]["missing"] and "dram__bytes" in row[0]["missing"]
assert "SQ_INSTS_VALU_" in row[0]["missing"], row
s = hubprof.open(sys.argv[2])
assert len(s.table("agent")) == 1, s.table("agent")  # the profile's own device, not a second one
ce = s.ceilings()
assert s.count("dispatch") > 0 and len(ce) == len(first), (ce, first)
assert list(ce["name"]) == [r["ceiling"] for r in first] and list(ce["unit"]) == [r["unit"] for r in first]
lv = ce[ce["name"].isin(levels)]
assert [r.name for r in lv.itertuples() if r.value > 0] == [r["ceiling"] for r in c if r["ceiling"] in levels]
assert set(s.ceilings()["agent_id"]) == set(s.table("dispatch")["agent_id"])
EOF
done
[ -z "$(ls -A | grep '^\.')" ] && ok || bad "hidden files left: $(ls -A)"
# a store that is not there, or not a store: one error line, before anything is measured
expect 1 "$HP" roofline -q --store nothere.db
one_line_error "nothere.db"
echo hello >notastore.db
expect 1 "$HP" roofline -q --store notastore.db
one_line_error "notastore.db"
# a log cut short (a crash, or a collector still writing it) is not rewritten: its tail would be lost
head -c 200000 prof.log >cut.log
cp cut.log cut.orig
expect 1 "$HP" roofline -q --store cut.log
one_line_error "cut.log: damaged or still being written"
cmp -s cut.log cut.orig && ok || bad "cut.log was changed"

echo "test_roofline: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
