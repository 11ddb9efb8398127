#!/usr/bin/env bash
# Hostile inputs through the CLI and Python: a log block header that reads as zeros (damage reported, later
# blocks kept), a FIFO as a store and inside a Parquet store, a device, a 50 GiB sparse log. Each must give a
# clear error or a bounded result within seconds (timeout 20). usage: test_hostile.sh [HUBPROF]
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/../.." || exit 1
HP=$(realpath "${1:-build/hubprof}")
B=${HUBPROF_BUILD:-build}
GEN=$PWD/$B/examples/gen_logs
PY=$PWD/python
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
unset HUBPROF_OUTPUT_DIR HUBPROF_MODE HUBPROF_PLAN HUBPROF_PASS HUBPROF_MULTIPLEX OPENCL_LAYERS LD_PRELOAD COLUMNS
. tests/lib.sh
cd "$T" || exit 1
# t CODE CMD...: expect, under a 20 s limit (124 = it hung)
t() {
  local want=$1
  shift
  expect "$want" timeout 20 "$@"
}
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$T/out" "$1"; }

"$GEN" g 2 500 >/dev/null || {
  echo "test_hostile: gen_logs failed"
  exit 1
}
LOG=$(ls g/*.log | head -n 1)
cp "$LOG" ok.log
t 0 "$HP" info --json ok.log
n_ok=$(field 'd["rows"]["dispatch"]')

# 1. a zeroed block header (a lost write-back): the blocks after it are read, the damage is reported
python3 - ok.log zero.log <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
hs = struct.unpack_from("<I", b, 16)[0]
assert struct.unpack_from("<I", b, hs)[0] == 0x4B4C4248
n = struct.unpack_from("<I", b, hs + 4)[0]
nxt = (hs + 16 + n + 7) & ~7
assert struct.unpack_from("<I", b, nxt)[0] == 0x4B4C4248, "the test log needs two blocks"
b[hs:hs + 16] = bytes(16)
open(sys.argv[2], "wb").write(b)
EOF
t 0 "$HP" info --json zero.log
[ "$(field 'd["damage"]["offset"]')" = 4096 ] && grep -q "zeroed block header" "$T/out" && grep -q "1 damaged place" "$T/out" &&
  ok || bad "zeroed header: damage not reported: $(head -c 300 "$T/out")"
n_zero=$(field 'd["rows"]["dispatch"]')
[ "$n_zero" -gt 0 ] && [ "$n_zero" -lt "$n_ok" ] && ok || bad "zeroed header: $n_zero of $n_ok dispatches (want the later blocks')"
t 0 "$HP" merge -q -o m.db zero.log
grep -q "zero.log: zeroed block header" "$T/err" && ok || bad "merge did not report the damage: $(cat "$T/err")"
t 1 "$HP" merge -q --strict -o m2.db zero.log
[ ! -e m2.db ] && ok || bad "--strict left an output"
t 0 "$HP" analyze zero.log
grep -q "zeroed block header" "$T/err" && ok || bad "analyze did not report the damage: $(cat "$T/err")"
PYTHONPATH=$PY t 0 python3 -c '
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    d = s.damage
    assert d and "zeroed block header" in d.message, d
' zero.log

# a log cut inside its last block (the process row of its close is in it): info says "cut"
last=$(python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read()
pos = last = struct.unpack_from("<I", b, 16)[0]
while struct.unpack_from("<I", b, pos)[0] == 0x4B4C4248:
    last, pos = pos, (pos + 16 + struct.unpack_from("<I", b, pos + 4)[0] + 7) & ~7
print(last)' ok.log)
head -c $((last + 8)) ok.log >cut.log
t 0 "$HP" info --json cut.log
[ "$(field '[(p["state"], p["end_ns"]) for p in d["processes"]]')" = "[('cut', None)]" ] && ok ||
  bad "cut log: $(head -c 400 "$T/out")"

# 2. FIFOs, sockets and devices are refused by name, never opened in a way that blocks
mkfifo fifo
for cmd in "info" "analyze" "convert -F parquet -o c.pq" "merge -o f.db"; do
  # shellcheck disable=SC2086
  t 1 "$HP" $cmd fifo
  one_line_error "fifo: not a regular file or directory (a FIFO)"
done
t 1 "$HP" convert -F rocpd -o c.db fifo
one_line_error "fifo: not a regular file or directory (a FIFO)"
t 1 "$HP" info /dev/zero
one_line_error "/dev/zero: not a regular file or directory (a device)"
PYTHONPATH=$PY t 0 python3 -c '
import sys, hubprof
for p, f in [(p, f) for p in sys.argv[1:] for f in (None, "log", "parquet")]:
    try:
        hubprof.open(p, f)
    except hubprof.Error as e:
        assert isinstance(e, hubprof.FormatError) and "not a" in str(e), e
    else:
        raise SystemExit(p + ": opened")
' fifo /dev/zero

# 3. a FIFO inside a Parquet store: the table is damage, never waited on
t 0 "$HP" convert -q -F parquet -o s.pq ok.log
rm s.pq/dispatch.parquet && mkfifo s.pq/dispatch.parquet
t 0 "$HP" info s.pq
grep -q "dispatch.parquet: not a regular file" "$T/out" && ok || bad "FIFO table not reported: $(head -c 300 "$T/out")"
t 0 "$HP" analyze s.pq
t 0 "$HP" merge -q -o p.db s.pq
t 1 "$HP" merge -q --strict -o p2.db s.pq
PYTHONPATH=$PY t 0 python3 -c '
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    assert s.damage and "not a regular file" in s.damage.message
' s.pq
cp -r s.pq m.pq && rm m.pq/_hubprof.json && mkfifo m.pq/_hubprof.json
t 1 "$HP" info m.pq

# 4. a 50 GiB sparse log: read in time proportional to its data
cp ok.log sparse.log && truncate -s 50G sparse.log
t 0 "$HP" info --json sparse.log
[ "$(field 'd["rows"]["dispatch"]')" = "$n_ok" ] && [ "$(field 'd["damage"]')" = None ] && ok ||
  bad "sparse log: $(head -c 300 "$T/out")"
t 0 "$HP" merge -q -o sp.db sparse.log
rm -f sparse.log

# 5. a log cut by another process while Python reads it: an exception naming the file, not SIGBUS
"$GEN" big 1 100000 >/dev/null
PYTHONPATH=$PY t 0 python3 -c '
import os, sys, hubprof
p = sys.argv[1]
with hubprof.open(p) as s:
    n = s.count("dispatch")
    os.truncate(p, 4096 + (1 << 20))
    try:
        s.table("dispatch")
    except hubprof.Error as e:
        assert "shrank" in str(e) and p in str(e), e
    else:
        raise SystemExit("read all %d rows of a cut log" % n)
' "$(ls big/*.log)"

# 6. stored times at the ends of int64: no wrapped figures (a sanitizer build aborts on overflow)
for fmt in rocpd log parquet; do
  PYTHONPATH=$PY t 0 python3 -c '
import sys, hubprof
lo, hi = -2**63, 2**63 - 1
with hubprof.create(sys.argv[1], format=sys.argv[2]) as w:
    w.write("agent", {"id": 1, "name": "cpu"})
    w.write("kernel_symbol", {"id": 1, "name": "k"})
    w.write("process", {"id": 1, "pid": 42, "start_ns": lo, "end_ns": hi})
    w.write("dispatch", {"id": [1, 2, 3], "process_id": 1, "agent_id": 1, "kernel_id": 1,
                         "start_ns": [lo, 1, lo + 1], "end_ns": [hi, hi, hi]})
' "ext.$fmt" $fmt
  t 0 "$HP" info --json "ext.$fmt"
  [ "$(field 'd["time_span"]["first_ns"], d["time_span"]["last_ns"]')" = "(-9223372036854775808, 9223372036854775807)" ] &&
    ok || bad "info of extreme times ($fmt): $(head -c 400 "$T/out")"
  t 0 "$HP" analyze --format json "ext.$fmt"
  python3 - "$T/out" <<'EOF2' && ok || bad "analyze of extreme times ($fmt): $(head -c 400 "$T/out")"
import json, sys
d = json.load(open(sys.argv[1]))
r = (d["rows"] if isinstance(d, dict) else d)[0]
assert r["calls"] == 3 and r["total_ns"] == 2**63 - 1 and r["min_ns"] > 0 and r["max_ns"] == 2**63 - 1, r
EOF2
done

# 7. text leaves as UTF-8: bytes that are not UTF-8 are stored as \xNN in every format
for fmt in rocpd log parquet; do
  PYTHONPATH=$PY t 0 python3 -c '
import json, os, subprocess, sys, hubprof
p, fmt, hp = sys.argv[1:4]
bad = b"k\xff\xc3(\xe2\x82\xac\xed\xa0\x80".decode("utf-8", "surrogateescape")  # invalid, then a valid euro sign
with hubprof.create(p, format=fmt) as w:
    w.write("agent", {"id": 1, "name": "cpu"})
    w.write("kernel_symbol", {"id": 1, "name": bad})
    w.write("process", {"id": 1, "pid": 42, "start_ns": 1, "end_ns": 2, "command": "/tmp/\udcfe/app"})
    w.write("dispatch", {"id": 1, "process_id": 1, "agent_id": 1, "kernel_id": 1, "start_ns": 10, "end_ns": 20})
want = "k\\xFF\\xC3(\u20ac\\xED\\xA0\\x80"
with hubprof.open(p) as s:
    assert s.table("kernel_symbol").name.tolist() == [want], s.table("kernel_symbol").name.tolist()
    assert s.table("process").command.tolist() == ["/tmp/\\xFE/app"], s.table("process").command.tolist()
out = subprocess.run([hp, "analyze", "--format", "json", p], capture_output=True, check=True).stdout
out.decode("utf-8")  # strict: raises on invalid UTF-8
assert [r["kernel"] for r in json.loads(out)] == [want], out
' "u8.$fmt" $fmt "$HP"
done

# 8. smaller items: a full disk (here a file size limit) names the file in every format; a bad
# schema_version is refused; the analyze table says when calls have no device time
"$GEN" big2 1 100000 >/dev/null
for fmt in log parquet rocpd; do
  (ulimit -f 512 && trap '' XFSZ && exec timeout 20 "$HP" convert -q -F $fmt -o "fz.$fmt" "$(ls big2/*.log)") \
    >"$T/out" 2>"$T/err"
  [ $? = 1 ] && grep -q "fz.$fmt.*File too large" "$T/err" && [ "$(wc -l <"$T/err")" = 1 ] && [ ! -e "fz.$fmt" ] &&
    ok || bad "full disk ($fmt): $(cat "$T/err")"
done
t 0 "$HP" convert -q -F parquet -o sv.pq ok.log
sed -i 's/"schema_version": "[0-9.]*"/"schema_version": "1junk"/' sv.pq/_hubprof.json
t 1 "$HP" info sv.pq
one_line_error "bad schema_version"
t 0 "$HP" convert -q -F rocpd -o sv.db ok.log
python3 - sv.db <<'EOF2'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
(t,) = c.execute("select name from sqlite_master where type='table' and name like 'rocpd_metadata_%'").fetchone()
c.execute(f"update \"{t}\" set value = '3junk' where tag = 'schema_version'")
c.commit()
EOF2
t 1 "$HP" info sv.db
one_line_error "bad rocpd schema_version '3junk'"
PYTHONPATH=$PY t 0 python3 -c '
import sys, hubprof
with hubprof.create(sys.argv[1]) as w:
    w.write("agent", {"id": 1, "name": "cpu"})
    w.write("kernel_symbol", {"id": 1, "name": "k"})
    w.write("dispatch", {"id": list(range(1, 401)), "agent_id": 1, "kernel_id": 1,
                         "start_ns": [10 * (i < 128) for i in range(400)], "end_ns": [20 * (i < 128) for i in range(400)]})
' untimed.db
t 0 "$HP" analyze untimed.db
grep -q "note: 272 of the 400 calls shown have no device time" "$T/out" && ok || bad "untimed note: $(cat "$T/out")"

# 9. honest end of process: one of three OpenCL processes SIGKILLed (and the shell that ran them) is named by
# trace, info and merge with what it kept
export HUBPROF_COLLECTOR=$OLDPWD/$B/libhubprof_collector.so
EX=$OLDPWD/$B/examples/ocl
if clinfo -l 2>/dev/null | grep -q Device; then
  t 137 "$HP" trace -o k.db -- sh -c "'$EX/vector_add' 1024 3 && '$EX/crash' kill 7; '$EX/vector_add' 1024 2; kill -9 \$\$"
  grep -q "process [0-9]* (.*crash kill 7) did not close its log (killed, or its log cut short): 7 dispatches kept" \
    "$T/err" && grep -q "1 process did not finish (killed, or its log cut short): 7 dispatches of it kept" "$T/err" &&
    grep -q "^hubprof: 12 dispatches of 2 kernels in 3 processes" "$T/err" && ok || bad "trace: $(cat "$T/err")"
  t 0 "$HP" info --json k.db
  python3 - "$T/out" <<'EOF2' && ok || bad "info of killed processes: $(cat "$T/out")"
import json, sys
d = json.load(open(sys.argv[1]))
by = {p["command"].split()[0].rsplit("/", 1)[-1]: p for p in d["processes"]}
assert by["crash"]["state"] == "killed" and by["crash"]["end_ns"] is None and by["crash"]["dispatches"] == 7, by
assert by["vector_add"]["state"] == "finished" and by["vector_add"]["end_ns"] > 0, by
assert sorted(p["state"] for p in d["processes"]) == ["finished", "finished", "killed"], d
EOF2
  t 0 "$HP" info k.db
  grep -q "killed .* 7 .*crash kill 7" "$T/out" && grep -q "^unfinished      1 process did not" "$T/out" && ok ||
    bad "info table: $(cat "$T/out")"
  cp "$EX/vector_add" "$T/va"$'\xff' # a program path that is not UTF-8: stored escaped
  t 0 "$HP" trace -q -o u.db -- "$T/va"$'\xff' 64 2
  t 0 "$HP" info --json u.db
  [ "$(field 'd["processes"][0]["command"]')" = "$T/va\xFF 64 2" ] && ok || bad "escaped command: $(cat "$T/out")"
  PYTHONPATH=$PY t 0 python3 -c '
import sys, warnings, hubprof
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    r = hubprof.merge([sys.argv[1]], sys.argv[2])
assert r["unfinished_processes"] == 1 and r["unfinished_dispatches"] == 7, r
assert any("crash kill 7) did not close its log" in str(x.message) for x in w), [str(x.message) for x in w]
' k.db kp.db
  # rocpd: the killed process's end is NULL (unknown), not 0; the finished ones have theirs
  [ "$(sqlite3 k.db 'select count(*) from rocpd_info_process where fini is null and "end" is null')" = 1 ] &&
    [ "$(sqlite3 k.db 'select count(*) from rocpd_info_process where fini > 0')" = 2 ] && ok ||
    bad "rocpd process ends: $(sqlite3 k.db 'select pid, fini, "end" from rocpd_info_process')"
  t 0 "$HP" merge -o k2.db k.db
  grep -q "crash kill 7) did not close its log .*: 7 dispatches kept" "$T/err" && ok || bad "merge: $(cat "$T/err")"
else
  echo "test_hostile: killed-process checks skipped: no OpenCL device (install pocl-opencl-icd)"
fi

echo "test_hostile: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
