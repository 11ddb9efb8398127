#!/usr/bin/env bash
# End-to-end tests of `hubprof list` and `hubprof plan`: counters and devices listed as table, CSV and
# JSON (parsed), pass plans parsed and counted under gfx9 and --max-counters-per-pass, and every kind
# of bad input answered with one line and the right exit status before anything runs.
# usage: test_counters.sh [HUBPROF]   (default build/hubprof)
# SPDX-License-Identifier: MIT
set -u
HP=${1:-build/hubprof}
. "$(dirname "$0")/../lib.sh"
hp_test_env
# py CODE: run python over $T/out (as `out`), passing when it exits 0
py() { python3 -c "import csv,json,os,sys; out=open(sys.argv[1]).read(); $1" "$T/out"; }

# ---- help ----
expect 0 "$HP" --help
grep -q "^  list " "$T/out" && grep -q "^  plan " "$T/out" && ok || bad "--help lists no list/plan"
expect 0 "$HP" list --help
grep -q -- "--device" "$T/out" && grep -q -- "--format" "$T/out" && ! grep -q -- "--max-counters-per-pass" "$T/out" &&
  ok || bad "list --help: $(cat "$T/out")"
expect 0 "$HP" plan --help
grep -q -- "--max-counters-per-pass" "$T/out" && grep -q -- "--group" "$T/out" && ! grep -q -- "--output" "$T/out" &&
  ok || bad "plan --help: $(cat "$T/out")"
expect 0 "$HP" help plan

# ---- list counters (the perf provider on this machine) ----
expect 0 "$HP" list counters
head -1 "$T/out" | grep -q "^cpu-perf.*counters, [0-9]* available here" && ok || bad "no summary line: $(head -1 "$T/out")"
grep -qE '^task-clock +sw +ns +yes' "$T/out" && ok || bad "task-clock not listed available"
grep -qE '^page-faults +sw +count +yes' "$T/out" && ok || bad "page-faults not listed available"
# cycles: available where a PMU exists, otherwise "no [n]" with the footnote saying why
if grep -qE '^cycles +core +cycles +yes' "$T/out"; then ok; else
  n=$(grep -E '^cycles ' "$T/out" | sed -nE 's/.* no \[([0-9]+)\].*/\1/p')
  [ -n "$n" ] && grep -qE "^\[$n\] .{10,}" "$T/out" && ok || bad "cycles unavailable without a reason: $(cat "$T/out")"
fi
expect 0 "$HP" list counters --format csv
py '
rows = list(csv.DictReader(out.splitlines()))
names = {r["counter"]: r for r in rows}
assert list(rows[0].keys()) == ["device", "counter", "block", "unit", "available", "reason", "description"], rows[0].keys()
assert names["task-clock"]["available"] == "1" and names["task-clock"]["reason"] == ""
assert names["task-clock"]["unit"] == "ns" and names["task-clock"]["block"] == "sw"
c = names["cycles"]
assert c["block"] == "core" and (c["available"] == "1" or len(c["reason"]) > 10), c
assert all(r["device"] == "cpu-perf" for r in rows) and len(rows) >= 27
' && ok || bad "list counters --format csv"
expect 0 "$HP" list counters --format json
py '
rows = json.loads(out)
names = {r["counter"]: r for r in rows}
assert names["task-clock"]["available"] == 1 and names["minor-faults"]["available"] == 1
c = names["cycles"]
assert c["available"] == 1 or ("PMU" in c["reason"] or "paranoid" in c["reason"] or len(c["reason"]) > 10), c
assert sum(1 for r in rows if r["block"] == "sw") >= 9
' && ok || bad "list counters --format json"
# a device description: gfx9, for planning only
expect 0 "$HP" list counters --device gfx9 --format json
py '
rows = json.loads(out)
names = {r["counter"]: r for r in rows}
for c in ["SQ_WAVES", "SQ_INSTS_VALU", "GRBM_GUI_ACTIVE", "TCC_HIT", "TA_TA_BUSY", "TD_TD_BUSY", "SPI_CSN_BUSY"]:
    assert c in names, c
assert names["TCC_HIT"]["block"] == "TCC" and names["SQ_WAVES"]["available"] == 0
assert "planning only" in names["SQ_WAVES"]["reason"]
assert len(rows) >= 100
' && ok || bad "list counters --device gfx9"
expect 0 "$HP" list counters --device share/hubprof/devices/gfx9.device
grep -qE '^SQ_WAVES +SQ ' "$T/out" && ok || bad "list counters by path"

# ---- list devices ----
expect 0 "$HP" list devices
grep -qE '^cpu-perf +perf ' "$T/out" && grep -qE '^gfx9 +- +[0-9]+ ' "$T/out" && ok || bad "list devices: $(cat "$T/out")"
expect 0 "$HP" list devices --format json
py '
rows = {r["device"]: r for r in json.loads(out)}
assert rows["gfx9"]["block_limits"] == "SQ 8, TA 2, TD 2, TCP 4, TCC 4, CPC 2, CPF 2, SPI 6, GRBM 2, GDS 4", rows["gfx9"]
assert rows["cpu-perf"]["provider"] == "perf" and rows["gfx9"]["provider"] == ""
assert rows["gfx9"]["max_per_pass"] is None and rows["gfx9"]["path"].endswith("/gfx9.device")
' && ok || bad "list devices --format json"
# $HUBPROF_DEVICES adds descriptions; a broken one is a warning, the others still listed
mkdir -p "$T/devs"
printf 'description two per pass\nmax-per-pass 2\nblock X 1\ncounter X_A X count\ncounter X_B X count\n' >"$T/devs/tiny.device"
printf 'block X 1\nbogus line\n' >"$T/devs/broken.device"
HUBPROF_DEVICES="$T/devs" expect 0 "$HP" list devices --format csv
py '
rows = {r["device"]: r for r in csv.DictReader(out.splitlines())}
assert rows["tiny"]["max_per_pass"] == "2" and "gfx9" in rows and "broken" not in rows
' && ok || bad "list devices with HUBPROF_DEVICES: $(cat "$T/out")"
grep -q "broken.device:2: unknown keyword 'bogus'" "$T/err" && ok || bad "no warning for a broken description: $(cat "$T/err")"

# ---- plan ----
# 3 software counters, at most 2 per pass: 2 passes
expect 0 "$HP" plan --counters task-clock,page-faults,context-switches --max-counters-per-pass 2
head -1 "$T/out" | grep -q "^cpu-perf: 3 counters in 2 passes (at most 2 per pass by --max-counters-per-pass" &&
  ok || bad "plan summary: $(head -1 "$T/out")"
expect 0 "$HP" plan --counters task-clock,page-faults,context-switches,minor-faults,major-faults --max-counters-per-pass 2 --format json
py '
rows = json.loads(out)
assert len(rows) == 5 and max(r["pass"] for r in rows) == 3
for p in (1, 2, 3):
    assert 1 <= sum(1 for r in rows if r["pass"] == p) <= 2
' && ok || bad "plan --max-counters-per-pass json: $(cat "$T/out")"
# without a limit: one pass; a counter named twice is measured once
expect 0 "$HP" plan --counters task-clock,page-faults --counters task-clock --format csv
py '
rows = list(csv.DictReader(out.splitlines()))
assert [r["counter"] for r in rows] == ["task-clock", "page-faults"] and {r["pass"] for r in rows} == {"1"}
' && ok || bad "plan, duplicate counter: $(cat "$T/out")"
# gfx9: 9 SQ counters (SQ 8 per pass) and 3 TA counters (TA 2 per pass) → 2 passes
SQ9=SQ_WAVES,SQ_INSTS_VALU,SQ_INSTS_SALU,SQ_INSTS_SMEM,SQ_INSTS_LDS,SQ_INSTS_FLAT,SQ_CYCLES,SQ_BUSY_CYCLES,SQ_ACTIVE_INST_ANY
expect 0 "$HP" plan --device gfx9 --counters $SQ9,TA_TA_BUSY,TA_FLAT_WAVEFRONTS,TA_BUFFER_WAVEFRONTS --format json
py '
rows = json.loads(out)
assert len(rows) == 12 and max(r["pass"] for r in rows) == 2
for p in (1, 2):
    sq = sum(1 for r in rows if r["pass"] == p and r["block"] == "SQ")
    ta = sum(1 for r in rows if r["pass"] == p and r["block"] == "TA")
    assert sq <= 8 and ta <= 2, (p, sq, ta)
' && ok || bad "plan gfx9: $(cat "$T/out")"
# the same under --max-counters-per-pass 4: 12 counters → 3 passes
expect 0 "$HP" plan --device gfx9 --counters $SQ9,TA_TA_BUSY,TA_FLAT_WAVEFRONTS,TA_BUFFER_WAVEFRONTS --max-counters-per-pass 4 --format json
py 'rows = json.loads(out); assert max(r["pass"] for r in rows) == 3 and all(sum(1 for r in rows if r["pass"] == p) <= 4 for p in (1, 2, 3))' &&
  ok || bad "plan gfx9 --max-counters-per-pass 4: $(cat "$T/out")"
# groups: kept in one pass where they fit; a group that cannot fit is split and said so
expect 0 "$HP" plan --device gfx9 --group valu=SQ_ACTIVE_INST_VALU,GRBM_GUI_ACTIVE,SQ_WAVES --group ta3=TA_TA_BUSY,TA_FLAT_WAVEFRONTS,TA_BUFFER_WAVEFRONTS --counters TCC_HIT --format json
py '
rows = {r["counter"]: r for r in json.loads(out)}
assert rows["SQ_WAVES"]["pass"] == rows["GRBM_GUI_ACTIVE"]["pass"] == rows["SQ_ACTIVE_INST_VALU"]["pass"]
assert rows["SQ_WAVES"]["group"] == "valu" and rows["SQ_WAVES"]["group_split"] == 0
assert rows["TA_TA_BUSY"]["group_split"] == 1 and rows["TCC_HIT"]["group"] == ""
assert max(r["pass"] for r in rows.values()) == 2
' && ok || bad "plan groups json: $(cat "$T/out")"
expect 0 "$HP" plan --device gfx9 --group ta3=TA_TA_BUSY,TA_FLAT_WAVEFRONTS,TA_BUFFER_WAVEFRONTS
grep -q "^note: group 'ta3' is split over passes 1, 2" "$T/out" && ok || bad "no split note: $(cat "$T/out")"
grep -q '^pass 1: 2 counters (registers: TA 2)$' "$T/out" && grep -q '^pass 2: 1 counter (registers: TA 1)$' "$T/out" && ok ||
  bad "plan pass lines: $(cat "$T/out")"
grep -qE '^ +2 +TA_BUFFER_WAVEFRONTS +TA +ta3 \(split\)$' "$T/out" && ok || bad "plan table row: $(cat "$T/out")"
# the plan string (what the collector gets)
expect 0 "$HP" plan --counters task-clock,page-faults,context-switches --max-counters-per-pass 2 --format line
[ "$(cat "$T/out")" = "task-clock,page-faults;context-switches" ] && ok || bad "plan --format line: $(cat "$T/out")"
# a device by path
HUBPROF_DEVICES="$T/devs" expect 0 "$HP" plan --device tiny --counters X_A,X_B --format line
[ "$(cat "$T/out")" = "X_A;X_B" ] && ok || bad "plan on a custom device: $(cat "$T/out")"

# ---- bad input: one line, exit 1 (bad content) or 2 (usage), nothing on stdout ----
expect 1 "$HP" plan --counters task-clok
one_line_error "unknown counter 'task-clok' (did you mean 'task-clock'?)"
expect 1 "$HP" plan --device gfx9 --counters sq_waves
one_line_error "unknown counter 'sq_waves' (did you mean 'SQ_WAVES'"
expect 1 "$HP" plan --counters task-clock,zzzzzzzzzz
one_line_error "unknown counter 'zzzzzzzzzz' on cpu-perf"
# a counter this machine cannot measure, with the reason (skipped where a PMU exists)
if "$HP" list counters --format csv | grep -q '^cpu-perf,cycles,core,cycles,0,'; then
  expect 1 "$HP" plan --counters task-clock,cycles
  one_line_error "counter 'cycles' is not available on cpu-perf: "
else
  ok
  ok
fi
# a block limited to 0 is a bad description (leave the block out)
printf 'block A 0\nblock B 2\ncounter A_1 A count\ncounter B_1 B count\n' >"$T/zero.device"
expect 1 "$HP" plan --device "$T/zero.device" --counters B_1,A_1
one_line_error "zero.device:1: block 'A' has a limit of 0"
expect 1 "$HP" plan --device nosuchdevice --counters task-clock
one_line_error "unknown device 'nosuchdevice' (devices: "
expect 1 "$HP" list counters --device nosuchdevice
one_line_error "unknown device 'nosuchdevice'"
expect 1 "$HP" plan --device "$T/devs/broken.device" --counters X_A
one_line_error "broken.device:2: unknown keyword 'bogus'"
# usage errors and conflicting options
expect 2 "$HP" plan
one_line_error "nothing to plan"
expect 2 "$HP" plan --counters task-clock,,page-faults
one_line_error "--counters 'task-clock,,page-faults': an empty name in the list"
expect 2 "$HP" plan --group novalue
one_line_error "group 'novalue' must be NAME=COUNTER"
expect 2 "$HP" plan --group g=task-clock --group g=page-faults
one_line_error "group 'g' given twice"
expect 2 "$HP" plan --counters task-clock --max-counters-per-pass 0
one_line_error "--max-counters-per-pass needs a number"
expect 2 "$HP" plan --counters task-clock --max-counters-per-pass 2 --max-counters-per-pass 3
one_line_error "--max-counters-per-pass given twice"
expect 2 "$HP" plan --counters task-clock --device gfx9 --device cpu-perf
one_line_error "--device given twice"
expect 2 "$HP" plan --counters task-clock --format xml
one_line_error "--format must be 'table', 'csv', 'json' or 'line', not 'xml'"
expect 2 "$HP" plan --counters task-clock ./app
one_line_error "unexpected argument './app'"
expect 2 "$HP" plan --counters
one_line_error "needs a value"
expect 2 "$HP" plan --bogus
one_line_error "unknown option '--bogus'"
expect 2 "$HP" list
one_line_error "what to list"
expect 2 "$HP" list widgets
one_line_error "cannot list 'widgets'"
expect 2 "$HP" list devices --device gfx9
one_line_error "--device applies to 'list counters'"
expect 2 "$HP" list counters --format csv --format json
one_line_error "--format given twice"
# ---- AMD devices: gfx942 (MI300X, MI300A) and gfx90a ----
expect 0 "$HP" list devices --format csv
py '
rows = {r["device"]: r for r in csv.DictReader(out.splitlines())}
assert "gfx942" in rows and "gfx90a" in rows, rows.keys()
' && ok || bad "list devices: no gfx942/gfx90a: $(cat "$T/out")"
# the full rocprofiler-compute gfx942 profile: 12 passes, every LEVEL counter followed by its accumulator
full=$(grep -v '^#' "$(dirname "$0")/../data/gfx942_full_profile.counters" | paste -sd, -)
for dev in gfx942 gfx942:mi300a; do
  expect 0 "$HP" plan --device "$dev" --counters "$full" --format json
  py '
rows = json.loads(out)
assert max(r["pass"] for r in rows) == 12, max(r["pass"] for r in rows)
for i, r in enumerate(rows):
    if r["counter"] in ("SQ_LEVEL_WAVES", "SQ_INST_LEVEL_VMEM", "SQ_IFETCH_LEVEL", "SQC_DCACHE_INFLIGHT_LEVEL"):
        assert rows[i + 1]["counter"] == r["counter"] + "_ACCUM" and rows[i + 1]["pass"] == r["pass"], r
levels = [r["pass"] for r in rows if r["counter"].endswith("_ACCUM")]
assert len(levels) == len(set(levels)) == 6, levels
' && ok || bad "full gfx942 profile on $dev: $(head -c 300 "$T/out")"
done
full90=$(grep -v '^#' "$(dirname "$0")/../data/gfx90a_full_profile.counters" | paste -sd, -)
expect 0 "$HP" plan --device gfx90a --counters "$full90"
head -1 "$T/out" | grep -q "^gfx90a: .* in 12 passes" && ok || bad "gfx90a full profile: $(head -1 "$T/out")"
# what rocprofiler-compute's full profile asks for since 2025 that the January 2025 descriptions lacked:
# each plannable on its device, TCP_TCP_LATENCY (no gfx942 definition) refused on gfx942, and each
# device file naming the source commit its tests/data profile list came from
new_gfx942=SQ_INSTS_VALU_MFMA_F8,SQ_INSTS_VALU_MFMA_MOPS_F8,SQ_VMEM_TA_ADDR_FIFO_FULL,SQ_VMEM_TA_CMD_FIFO_FULL,SQ_VMEM_WR_TA_DATA_FIFO_FULL
new_gfx90a='SQ_VMEM_TA_ADDR_FIFO_FULL,SQ_VMEM_TA_CMD_FIFO_FULL,SQ_VMEM_WR_TA_DATA_FIFO_FULL,TCC_BUBBLE[*],TCC_EA0_WRREQ_sum,TCC_EA0_WRREQ_64B_sum'
for a in gfx942 gfx90a; do
  var=new_$a
  want=${!var}
  expect 0 "$HP" plan --device $a --counters "$want" --format line
  [ "$(cat "$T/out")" = "$want" ] && ok || bad "$a: counters new in 2025: $(cat "$T/out")"
  missing=
  for n in ${want//,/ }; do
    grep -qxF "$n" "$(dirname "$0")/../data/${a}_full_profile.counters" || missing="$missing $n"
  done
  [ -z "$missing" ] && ok || bad "$a: not in ${a}_full_profile.counters:$missing"
done
expect 1 "$HP" plan --device gfx942 --counters TCP_TCP_LATENCY_sum
one_line_error "unknown counter 'TCP_TCP_LATENCY_sum' on gfx942"
for a in gfx942 gfx90a; do
  dev=$(grep -o 'commit [0-9a-f]\{40\}' "$(dirname "$0")/../../share/hubprof/devices/$a.device")
  list=$(grep '^#' "$(dirname "$0")/../data/${a}_full_profile.counters" | grep -o 'commit [0-9a-f]\{40\}')
  [ -n "$dev" ] && [ "$dev" = "$list" ] && ok || bad "$a.device names '$dev', its profile list '$list'"
done
expect 0 "$HP" plan --device gfx942 --counters "$full"
head -1 "$T/out" | grep -q "in 12 passes" && grep -q "^pass 1: .*registers: .*TCC 4" "$T/out" && ok ||
  bad "plan table: $(head -3 "$T/out")"
# channel counters: one register per channel; beyond the product's channels an error
expect 0 "$HP" plan --device gfx942 --counters 'TCC_HIT[0],TCC_HIT[1..127],TCC_MISS[*],TCC_HIT_sum,TCC_READ[5]'
grep -q '^pass 1: 5 counters (registers: TCC 3)$' "$T/out" && ok || bad "channels: $(cat "$T/out")"
expect 0 "$HP" plan --device gfx942 --counters 'TCC_HIT[100]' --format line
expect 1 "$HP" plan --device gfx942:mi300a --counters 'TCC_HIT[100]'
one_line_error "counter 'TCC_HIT[100]': instance 100 is beyond the device, which has 96 (0..95)"
expect 1 "$HP" plan --device gfx942 --counters 'SQ_WAVES[0]'
one_line_error "block 'SQ' has one instance on gfx942"
expect 1 "$HP" plan --device gfx942:mi250 --counters SQ_WAVES
one_line_error "no variant 'mi250'"
# LEVEL counters: with their accumulator, one per pass; a shared accumulator refused with the reason
expect 0 "$HP" plan --device gfx942 --counters SQ_LEVEL_WAVES,SQ_INST_LEVEL_VMEM,SQ_WAVES --format line
[ "$(cat "$T/out")" = "SQ_LEVEL_WAVES,SQ_LEVEL_WAVES_ACCUM,SQ_WAVES;SQ_INST_LEVEL_VMEM,SQ_INST_LEVEL_VMEM_ACCUM" ] &&
  ok || bad "level plan: $(cat "$T/out")"
expect 1 "$HP" plan --device gfx942 --group 'lat=SQ_ACCUM_PREV_HIRES,SQ_INST_LEVEL_VMEM,SQ_INST_LEVEL_SMEM,SQ_WAVES'
one_line_error "group 'lat': accumulator 'SQ_ACCUM_PREV_HIRES' would be shared by 2 LEVEL counters"
expect 1 "$HP" plan --device gfx9 --group 'occ=SQ_ACCUM_PREV_HIRES,GRBM_GUI_ACTIVE'
one_line_error "accumulator 'SQ_ACCUM_PREV_HIRES' without a LEVEL counter"
# every unknown name at once
expect 1 "$HP" plan --device gfx942 --counters SQ_WAVES,SQ_WAVEZ,NOPE_1,NOPE_2
one_line_error "3 unknown counters: unknown counter 'SQ_WAVEZ' (did you mean 'SQ_WAVES'?)"
grep -q "'NOPE_1'" "$T/err" && grep -q "'NOPE_2'" "$T/err" && ok || bad "not every unknown name: $(cat "$T/err")"
# the gfx942 metric set: listed; a full profile in 12 passes; the split report in table, CSV and JSON
expect 0 "$HP" list metrics --device gfx942 --format csv
py '
rows = [r for r in csv.DictReader(out.splitlines()) if r["set"] == "gfx942"]
assert len(rows) > 200, len(rows)
names = {r["metric"] for r in rows}
assert {"sol_valu_flops", "mem_lds_latency", "l2_hits", "wave_wavefront_occupancy"} <= names, names
' && ok || bad "list metrics gfx942: $(head -c 300 "$T/out")"
expect 0 "$HP" plan --device gfx942 --metrics all
head -1 "$T/out" | grep -q "in 12 passes" && ok || bad "metrics all: $(head -1 "$T/out")"
nnotes=$(grep -c "^note: group '.*' is split over passes" "$T/out")
export NNOTES=$nnotes
grep -q "^note: .* measured in more than one pass" "$T/out" && ok || bad "no note on counters measured again"
expect 0 "$HP" plan --device gfx942 --metrics all --splits --format csv
py '
rows = list(csv.DictReader(out.splitlines()))
assert 0 < len(rows) <= 21 and len(rows) == int(os.environ["NNOTES"]), (len(rows), os.environ["NNOTES"])
for r in rows:
    assert len(r["passes"].split(", ")) >= 2, r
    assert all(":" in c for c in r["counters"].split()), r
' && ok || bad "split report csv: $(head -c 300 "$T/out")"
expect 0 "$HP" plan --device gfx942 --metrics all --splits --format json
py 'rows = json.loads(out); assert len(rows) == int(os.environ["NNOTES"]) and rows[0]["group"] == "sol_valu_flops"' &&
  ok || bad "split report json: $(head -c 300 "$T/out")"
expect 0 "$HP" plan --device gfx942 --metrics all --splits
[ "$(($(wc -l <"$T/out") - 1))" = "$nnotes" ] && ok || bad "split report table: $(head -3 "$T/out")"
expect 2 "$HP" plan --device gfx942 --metrics all --splits --format line
one_line_error "--splits prints a table, csv or json"
# bad AMD descriptions: one line naming file and line
printf 'block SQ 8\nblock TA 2\ncounter A SQ count\ncounter A TA count\n' >"$T/two.device"
expect 1 "$HP" plan --device "$T/two.device" --counters A
one_line_error "two.device:4: counter 'A' in block 'TA' is already in block 'SQ' (line 3)"
printf 'block TCC 4 instances 16\ncounter H TCC count\nsum H_sum H[0..16]\n' >"$T/chan.device"
expect 1 "$HP" plan --device "$T/chan.device" --counters H
one_line_error "chan.device:3: 'sum H_sum': H[0..16]: instance 16 is beyond the device"
printf 'block SQ 8\ncounter L SQ level\n' >"$T/lvl.device"
expect 1 "$HP" plan --device "$T/lvl.device" --counters L
one_line_error "lvl.device:2: LEVEL counter 'L' (unit 'level') has no accumulator"
# a full stdout is a failure, not silence
if [ -w /dev/full ]; then
  "$HP" list counters >/dev/full 2>"$T/err"
  [ $? -eq 1 ] && grep -q "cannot write standard output" "$T/err" && ok || bad "list counters >/dev/full"
fi

echo "test_counters: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
