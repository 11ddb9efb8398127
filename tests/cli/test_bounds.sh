#!/usr/bin/env bash
# Hostile input the user hands the CLI (issue 30, point 5): metric files with a 20 000-term sum, a deep
# chain, 2 GB sparse (also as a device description), 1 MiB of definitions; --kernel patterns of 130 KB or
# with huge repetitions; kernel names with terminal escapes; CSV cells that read as formulas. Each must
# give one clear error line (or its bounded result) within 5 s of CPU time and 256 MB of resident memory
# (measured with /usr/bin/time; CPU time, user and system, not wall time: a loaded machine stretches the
# latter, while the runaway work these bounds catch shows in both). usage: test_bounds.sh [HUBPROF]   (needs `make all`)
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/../.." || exit 1
HP=$(realpath "${1:-build/hubprof}")
. tests/lib.sh
need_built test_bounds "$HP" /usr/bin/time
hp_test_env
export HUBPROF_METRICS=$PWD/share/hubprof/metrics HUBPROF_DEVICES=$PWD/share/hubprof/devices
unset COLUMNS
cd "$T" || exit 1

# b CODE CMD...: expect CODE, within 5 s of CPU time and 256 MB (what it took goes to $T/lim as "KB user sys")
b() {
  local want=$1
  shift
  /usr/bin/time -f '%M %U %S' -o "$T/lim" "$@" >"$T/out" 2>"$T/err"
  local got=$? kb u sy s
  read -r kb u sy < <(tail -n 1 "$T/lim")
  s=$(awk -v u="${u:-99}" -v y="${sy:-0}" 'BEGIN { print u + y }')
  if [ "$got" -eq "$want" ] && [ "${kb:-999999999}" -le 262144 ] && awk -v s="${s:-99}" 'BEGIN { exit !(s <= 5) }'; then
    ok
  else
    bad "exit $got (want $want), $kb KB, $s s of CPU (at most 262144 KB, 5 s): $* :: $(head -c 300 "$T/err")"
  fi
}
# err_line PATTERN: stderr is one line holding PATTERN (no more than 400 bytes: no input echoed whole)
err_line() {
  if [ "$(wc -l <"$T/err")" -eq 1 ] && grep -qF -- "$1" "$T/err" && [ "$(wc -c <"$T/err")" -le 400 ]; then ok; else
    bad "stderr not one short line with '$1': $(head -c 400 "$T/err")"
  fi
}

PYTHONPATH=$OLDPWD/python python3 - <<'EOF' || bad "could not write the stores"
import hubprof
names = ["k\x1b]0;pwned\x07\x1b[2J", "=HYPERLINK(\"http://x\")", "-2+3", "@SUM(1)", "+1", "\tx", "plain", "c1\x9b31m"]
for path, end in (("a.db", 20), ("b.db", 15)):
    with hubprof.create(path) as w:
        w.write("agent", {"id": 1, "name": "cpu"})
        w.write("kernel_symbol", {"id": list(range(1, len(names) + 1)), "name": names})
        w.write("dispatch", {"id": list(range(1, len(names) + 1)), "agent_id": 1,
                             "kernel_id": list(range(1, len(names) + 1)), "start_ns": 10,
                             "end_ns": [end + i for i in range(len(names))]})
EOF

# 1. metric definitions: a 20 000-term sum (a stack overflow in resolve_tree), a chain deeper than the limit,
# chains made deep through the definitions they use, a 2 GB sparse file; each through list, analyze, profile
python3 -c "print('metric big = ' + ' + '.join(['duration'] * 20000))" >sum.metrics
python3 -c "print('metric deep = ' + ' + '.join(['duration'] * 300))" >deep.metrics
python3 -c "
print('metric d0 = ' + ' + '.join(['duration'] * 200))
print('metric d1 = ' + ' - '.join(['d0'] * 100))" >chain.metrics
truncate -s 2G sparse.metrics
for f in "sum.metrics:1: line longer than 4096 bytes" "deep.metrics:1: metric 'deep': expression deeper than 256 levels" \
  "chain.metrics:2: metric 'd1': expression deeper than 256 levels, counting the definitions it uses" \
  "sparse.metrics: larger than 1048576 bytes"; do
  file=${f%%:*}
  b 1 "$HP" list metrics --metrics-file "$file"
  err_line "$f"
  b 1 "$HP" analyze --metrics-file "$file" a.db
  err_line "$f"
  b 1 "$HP" profile -q --metrics-file "$file" --metrics big -o p.db -- true
  err_line "$f"
done
# 1 MiB of definitions (tens of thousands of names and counters): loaded and resolved in bounded time
python3 -c "
import sys
out, n = [], 0
while sum(map(len, out)) < 1000000:
    out.append('metric m%d = ' % n + ' + '.join('(' + '+'.join('x%d_%d' % (n, j) for j in range(i, i + 10)) + ')' for i in range(0, 50, 10)) + '\n')
    n += 1
sys.stdout.write(''.join(out))" >many.metrics
b 0 "$HP" analyze --metrics-file many.metrics a.db
python3 -c "
print('metric d0 = ' + ' + '.join('(' + '+'.join('x%d' % j for j in range(i, i + 100)) + ')' for i in range(0, 600, 100)))
for n in range(50000): print('metric y%d = d0' % n)" >fan.metrics
b 1 "$HP" analyze --metrics-file fan.metrics a.db
err_line "counters and aggregates in all"
# a device description of 2 GB (sparse) and one of 30 000 counters (under 1 MiB)
truncate -s 2G sparse.device
b 1 "$HP" list counters --device ./sparse.device
err_line "./sparse.device: larger than 1048576 bytes"
python3 -c "
print('device hostile\nmax-per-pass 4\nblock SQ 8')
for n in range(30000): print('counter C%d SQ cycles d' % n)" >many.device
b 1 "$HP" plan --device ./many.device -c C1
err_line "many.device:8196: more than 8192 counters"
# @FILE lists of counters and metrics (list_file.c): 2 GB sparse, a 20 000-byte line, 10 000 names
truncate -s 2G sparse.txt
python3 -c "print('x' * 20000)" >long.txt
python3 -c "print('\n'.join('c%d' % i for i in range(10000)))" >many.txt
for f in "sparse.txt: larger than 1 MiB" "long.txt:1: line longer than 4096 bytes" "many.txt:8193: more than 8192 names"; do
  file=${f%%:*}
  b 1 "$HP" plan --counters "@$file"
  err_line "$f"
  b 1 "$HP" profile -q --counters "@$file" -o p.db -- true
  err_line "$f"
  b 1 "$HP" analyze --metrics "@$file" a.db
  err_line "$f"
done

# 2. --kernel patterns: 130 KB (GBs and seconds in regcomp), repetitions that multiply, a back-reference;
# a glob too long for analyze; the limit itself is fine
big=$(python3 -c "print('(a|b)*' * 21700)")
b 2 "$HP" trace --kernel "$big" -o t.db -- true
err_line "(130200 bytes): longer than 1024 bytes, the limit of a pattern"
b 2 "$HP" profile --kernel-exclude "$big" -c task-clock -o t.db -- true
err_line "longer than 1024 bytes"
b 2 "$HP" sample --kernel "$big" -o t.db -- true
err_line "longer than 1024 bytes"
b 2 "$HP" trace --kernel '((a{255}){255}){255}' -o t.db -- true
err_line "larger than 4096 atoms once its repetitions are written out"
b 2 "$HP" trace --kernel '(a)\1' -o t.db -- true
err_line "a back-reference"
b 2 "$HP" analyze --kernel "$(python3 -c "print('*' * 1025)")" a.db
err_line "(1025 bytes): longer than 1024 bytes"
b 0 "$HP" analyze --kernel "$(python3 -c "print('*' * 1024)")" a.db
# the collector bounds HUBPROF_KERNEL set by hand the same way (checked where an OpenCL device is)
if clinfo -l 2>/dev/null | grep -q Device; then
  OPENCL_LAYERS=$HUBPROF_COLLECTOR HUBPROF_OUTPUT_DIR=$T/logs HUBPROF_KERNEL=$big \
    b 0 "$OLDPWD/${HUBPROF_BUILD:-build}/examples/ocl/vector_add" 64 1
  grep -q "HUBPROF_KERNEL: '(a|b)\*(a|b).*longer than 1024 bytes" "$T/err" && [ "$(wc -l <"$T/err")" = 1 ] && ok ||
    bad "collector: $(head -c 300 "$T/err")"
fi

# 3. terminal: control characters of kernel names (ESC, BEL, a C1 CSI) shown as \xNN in the table, its
# notes and messages; JSON keeps the names exactly (its own escaping)
b 0 "$HP" analyze a.db
! grep -qP '[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$T/out" && grep -qF 'k\x1B]0;pwned\x07\x1B[2J' "$T/out" &&
  grep -qF 'c1\x9B31m' "$T/out" && grep -qF '\x09x' "$T/out" && ok || bad "analyze table: $(od -c "$T/out" | head -20)"
b 0 "$HP" diff a.db b.db
! grep -qP '[\x00-\x09\x0b-\x1f\x7f]' "$T/out" && grep -qF 'k\x1B]0;' "$T/out" && ok || bad "diff table: $(cat -v "$T/out")"
b 0 "$HP" analyze --format json a.db
python3 -c '
import json, sys
names = sorted(r["kernel"] for r in json.load(open(sys.argv[1])))
assert "k\x1b]0;pwned\x07\x1b[2J" in names and "c1\x9b31m" in names and "\tx" in names, names
' "$T/out" && ok || bad "json: $(head -c 300 "$T/out")"
b 1 "$HP" analyze --kernel 'zz' --metrics "$(printf 'x\033[2J')" a.db
! grep -qP '\x1b' "$T/err" && grep -qF 'x\x1B[2J' "$T/err" && ok || bad "message: $(cat -v "$T/err")"

# 4. CSV: text cells starting with = + - @ tab CR get a leading ' (quoted); numbers, negative ones too, stay
# numbers (diff's deltas here are negative)
for cmd in "analyze --format csv a.db" "diff --format csv a.db b.db"; do
  # shellcheck disable=SC2086
  b 0 "$HP" $cmd
  python3 - "$T/out" "$cmd" <<'EOF' && ok || bad "$cmd: $(head -c 600 "$T/out")"
import csv, sys
text = open(sys.argv[1], newline="").read()
rows = list(csv.DictReader(text.splitlines(keepends=True)))
kernels = {r["kernel"] for r in rows}
for k in ('=HYPERLINK("http://x")', "-2+3", "@SUM(1)", "+1", "\tx"):
    assert "'" + k in kernels, (k, kernels)
assert "plain" in kernels and len(kernels) == 8, kernels
if "diff" in sys.argv[2]:
    assert all(float(r["total_ns_delta"]) < 0 for r in rows), rows
    assert ",-5," in text, text  # a negative number unquoted
EOF
done

echo "test_bounds: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
