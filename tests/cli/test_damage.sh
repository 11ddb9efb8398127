#!/usr/bin/env bash
# The damage matrix of the log format (issue 30 point 1): a real 16-thread log (multithread 16 4000 through the
# collector: 64 000 dispatches) cut, zeroed or bit-flipped at every chunk boundary and at block boundaries
# (all of them, or an even sample of DAMAGE_BLOCKS, default 60), its closing record and header damaged, and the
# file shrunk or grown while hubprof reads it. Every case must either read complete and equal to the original
# (every table's row count) or report damage (info's "damage" not null, or a one-line error): 0 silent short
# answers. Damaged cases also make `merge --strict` fail, and plain `merge` warn and name what was lost.
# Prints the matrix size. usage: test_damage.sh [HUBPROF]   (default build/hubprof)
# SPDX-License-Identifier: MIT
set -u
HP=${1:-build/hubprof}
LIB=$PWD/build/libhubprof_collector.so
APP=build/examples/ocl/multithread
. "$(dirname "$0")/../lib.sh"
hp_test_env
need_built test_damage "$HP" "$LIB" "$APP"
need_opencl test_damage
cc -O1 -shared -fPIC "$(dirname "$0")/shrink_on_seek.c" -o "$T/resize.so" -ldl || bad "cannot build the preload"
mkdir -p "$T/src"
POCL_DEVICES=basic HUBPROF_OUTPUT_DIR="$T/src" OPENCL_LAYERS="$LIB" "$APP" 16 4000 >/dev/null ||
  bad "multithread failed"
log=$(ls "$T"/src/*.log | head -1)
expect 0 "$HP" info --json "$log"
grep -q '"damage": null' "$T/out" && ok || bad "the original log is damaged: $(head -c 300 "$T/out")"
HP="$HP" T="$T" LOG="$log" RESIZE="$T/resize.so" BLOCKS="${DAMAGE_BLOCKS:-60}" python3 - <<'PY'
import json, os, shutil, struct, subprocess, sys

hp, T, log, blocks_wanted = os.environ["HP"], os.environ["T"], os.environ["LOG"], int(os.environ["BLOCKS"])
data = open(log, "rb").read()
hs, cs = struct.unpack_from("<I", data, 16)[0], struct.unpack_from("<Q", data, 24)[0]
ver = struct.unpack_from("<I", data, 8)[0]


def info(path, env=None):
    r = subprocess.run([hp, "info", "--json", path], capture_output=True, text=True,
                       env=dict(os.environ, **(env or {})))
    j = None
    if r.returncode == 0:
        try:
            j = json.loads(r.stdout)
        except ValueError:
            pass
    return r, j


r0, j0 = info(log)
want = j0["rows"]
if want["dispatch"] != 64000:
    print(f"FAIL: the original log holds {want['dispatch']} dispatches, not 64000", file=sys.stderr)
# the blocks: every chunk walked as the format says (docs/formats/log.md)
chunks, blocks = [], []
k = 0
while hs + k * cs < len(data):
    c0, pos = hs + k * cs, hs + k * cs
    chunks.append(c0)
    while pos + 16 <= min(c0 + cs, len(data)):
        magic, ln = struct.unpack_from("<II", data, pos)
        if magic != 0x4B4C4248:
            break
        blocks.append((pos, ln))
        pos = (pos + 16 + ln + 7) & ~7
    k += 1
step = max(1, len(blocks) // blocks_wanted) if blocks_wanted else 1
sample = blocks[::step]

cases = []  # (name, mutate(bytes) -> bytes, env or None)
for i, c in enumerate(chunks):
    cases.append((f"cut at chunk {i}", lambda b, c=c: b[:c], None))
    cases.append((f"chunk {i} zeroed", lambda b, c=c: b[:c] + bytes(min(cs, len(b) - c)) + b[c + cs:], None))
    cases.append((f"chunk {i} first byte flipped", lambda b, c=c: b[:c] + bytes([b[c] ^ 0x10]) + b[c + 1:], None))
    cases.append((f"cut 1 byte into chunk {i}", lambda b, c=c: b[:c + 1], None))
    cases.append((f"shrunk to chunk {i} while read", lambda b: b, {"SHRINK_TO": str(c)}))
for pos, ln in sample:
    end = pos + 16 + ln
    cases.append((f"cut at block {pos}", lambda b, p=pos: b[:p], None))
    cases.append((f"cut inside block {pos}", lambda b, p=pos: b[:p + 24], None))
    cases.append((f"cut at the end of block {pos}", lambda b, e=end: b[:e], None))
    cases.append((f"block header {pos} zeroed", lambda b, p=pos: b[:p] + bytes(16) + b[p + 16:], None))
    cases.append((f"block {pos} payload bit flipped",
                  lambda b, p=pos + 16 + ln // 2: b[:p] + bytes([b[p] ^ 1]) + b[p + 1:], None))
    cases.append((f"block {pos} length bit flipped", lambda b, p=pos + 4: b[:p] + bytes([b[p] ^ 2]) + b[p + 1:], None))
cases.append(("closing record bit flipped", lambda b: b[:530] + bytes([b[530] ^ 4]) + b[531:], None))
cases.append(("closing record zeroed", lambda b: b[:512] + bytes(1024) + b[1536:], None))
cases.append(("header bit flipped", lambda b: b[:40] + bytes([b[40] ^ 1]) + b[41:], None))
cases.append(("grown by a chunk while read", lambda b: b, {"SHRINK_TO": str(len(data) + cs)}))
cases.append(("grown by a byte while read", lambda b: b, {"SHRINK_TO": str(len(data) + 1)}))
cases.append(("untouched", lambda b: b, None))

ZERO = bytes(65536)


def write_sparse(path, b):
    """b as a sparse file: its all-zero 64 KiB pieces left as holes (a log's chunks are mostly holes; writing
    them would cost 33 MB per case)"""
    with open(path, "wb") as f:
        f.truncate(len(b))
        mv = memoryview(b)
        for o in range(0, len(b), 65536):
            piece = mv[o:o + 65536]
            if piece != ZERO[:len(piece)]:
                f.seek(o)
                f.write(piece)


npass = nfail = complete = reported = 0
bad_lines = []
path = os.path.join(T, "case.log")
strict_checked = 0
for name, mut, env in cases:
    write_sparse(path, mut(data))
    e = None
    if env:
        e = dict(env, LD_PRELOAD=os.environ["RESIZE"], SHRINK_PATH=path,
                 ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
    r, j = info(path, e)
    if r.returncode >= 128 or "Sanitizer" in r.stderr:
        nfail += 1
        bad_lines.append(f"{name}: crashed (exit {r.returncode}) {r.stderr[:200]}")
        continue
    if j is None:  # an error: one line, naming the file
        if r.returncode != 0 and r.stderr.count("\n") == 1 and path in r.stderr:
            reported += 1
            npass += 1
        else:
            nfail += 1
            bad_lines.append(f"{name}: exit {r.returncode} without one error line: {r.stderr[:200]}")
        continue
    if j["damage"] is None:
        if j["rows"] == want:
            complete += 1
            npass += 1
        else:
            nfail += 1
            lost = {t: want[t] - j["rows"][t] for t in want if want[t] != j["rows"][t]}
            bad_lines.append(f"{name}: SILENT short answer, damage none, rows differ {lost}")
        continue
    reported += 1
    npass += 1
    # a damaged log: merge --strict fails, plain merge warns (a sample: every chunk case is cheap enough)
    if env is None and strict_checked < 12 and j["rows"]["dispatch"] < want["dispatch"]:
        strict_checked += 1
        out = os.path.join(T, "m.db")
        shutil.rmtree(out, ignore_errors=True)
        m = subprocess.run([hp, "merge", "--strict", "-f", "-o", out, path], capture_output=True, text=True)
        if m.returncode == 0 or os.path.exists(out):
            nfail += 1
            bad_lines.append(f"{name}: merge --strict exit {m.returncode} on a damaged log")
        m = subprocess.run([hp, "merge", "-f", "-o", out, path], capture_output=True, text=True)
        if "damage" not in m.stderr and "lost" not in m.stderr and "incomplete" not in m.stderr:
            nfail += 1
            bad_lines.append(f"{name}: merge said nothing of the damage: {m.stderr[:200]}")
        if os.path.exists(out):
            os.unlink(out)
for l in bad_lines:
    print("FAIL: " + l, file=sys.stderr)
print(f"test_damage: matrix of {len(cases)} cases on a log of {len(chunks)} chunks and {len(blocks)} blocks "
      f"({len(sample)} blocks sampled): {complete} read complete and equal, {reported} reported as damaged, "
      f"{nfail} silent or wrong; merge --strict checked on {strict_checked}")
open(os.path.join(T, "py.count"), "w").write(f"{npass} {nfail}\n")
PY
read -r p f <"$T/py.count" || { p=0; f=1; }
pass=$((pass + p))
fail=$((fail + f))
echo "test_damage: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
