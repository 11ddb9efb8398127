#!/usr/bin/env bash
# The live progress line (src/cli/progress.c) under a pseudo-terminal: drawn on stderr when it is a
# terminal (info, analyze, diff, merge, convert, export; trace and every replay mode while the application
# runs, src/cli/watch.c), cleared at the end, never with -q, never when stderr is a
# file; and stdout (the report) never gets any of it.
# usage: test_progress.sh [HUBPROF]   (default build/hubprof)
# SPDX-License-Identifier: MIT
set -u
HP=${1:-build/hubprof}
GEN=build/examples/gen_logs
. "$(dirname "$0")/../lib.sh"
hp_test_env

mkdir -p "$T/logs"
"$GEN" "$T/logs" 2 20000 2 1 || bad "gen_logs failed"
"$HP" merge -q -o "$T/s.db" "$T"/logs/*.log || bad "merge failed"

# ptyrun OUTFILE CMD...: run CMD with stderr on a pseudo-terminal (stdout into OUTFILE); prints what the
# terminal received, and exits with CMD's status. TERM is a real terminal's (xterm) unless the caller sets
# PTY_TERM: the line is never drawn under TERM=dumb, which a bare container or CI shell often has.
ptyrun() {
  TERM=${PTY_TERM:-xterm} python3 - "$@" <<'EOF'
import os, pty, subprocess, sys
out = open(sys.argv[1], "wb")
master, slave = pty.openpty()
p = subprocess.Popen(sys.argv[2:], stdout=out, stderr=slave, stdin=subprocess.DEVNULL)
os.close(slave)
got = b""
while True:
    try:
        b = os.read(master, 65536)
    except OSError:
        break
    if not b:
        break
    got += b
rc = p.wait()
sys.stdout.buffer.write(got)
sys.exit(rc)
EOF
}

# draws at once with HUBPROF_PROGRESS_DELAY_MS=0: a line with done/total, a percentage and a rate, then
# the clearing sequence as the last thing written
export HUBPROF_PROGRESS_DELAY_MS=0
ptyrun "$T/out" "$HP" info "$T/s.db" >"$T/tty"
rc=$?
[ $rc -eq 0 ] && ok || bad "info under a terminal exited $rc"
grep -aqE 'hubprof: reading: [0-9]+/40000 dispatches \([0-9]+%\)' "$T/tty" && ok ||
  bad "info: no progress line: $(od -c "$T/tty" | head -5)"
python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); assert d.endswith(b"\r\x1b[K"), d[-40:]' "$T/tty" && ok ||
  bad "info: progress line not cleared at the end"
grep -qE "dispatch +40000$" "$T/out" && ! grep -aq "reading" "$T/out" && ok || bad "info: stdout changed: $(cat "$T/out")"

ptyrun "$T/out" "$HP" analyze "$T/s.db" >"$T/tty"
[ $? -eq 0 ] && ok || bad "analyze under a terminal failed"
grep -aqE 'hubprof: reading: [0-9]+/120000 rows \([0-9]+%\)' "$T/tty" && ok ||
  bad "analyze: no progress line: $(od -c "$T/tty" | head -5)"
python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); assert d.endswith(b"\r\x1b[K"), d[-40:]' "$T/tty" && ok ||
  bad "analyze: progress line not cleared"
grep -q "vector_add" "$T/out" && ! grep -aq "reading" "$T/out" && ok || bad "analyze: stdout changed"

# diff reads both stores: one line counting the rows of both
ptyrun "$T/out" "$HP" diff "$T/s.db" "$T/s.db" >"$T/tty"
[ $? -eq 0 ] && ok || bad "diff under a terminal failed"
grep -aqE 'hubprof: reading: [0-9]+/240000 rows' "$T/tty" && ok || bad "diff: no progress line: $(od -c "$T/tty" | head -3)"
python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); assert d.endswith(b"\r\x1b[K"), d[-40:]' "$T/tty" && ok ||
  bad "diff: progress line not cleared"
ptyrun "$T/out" "$HP" diff -q "$T/s.db" "$T/s.db" >"$T/tty"
[ ! -s "$T/tty" ] && ok || bad "diff -q drew on the terminal"

# merge and convert: rows read of every input (the assembly pipeline's progress callback)
ptyrun "$T/out" "$HP" merge -o "$T/m.db" "$T"/logs/*.log >"$T/tty"
[ $? -eq 0 ] && ok || bad "merge under a terminal failed"
grep -aqE 'hubprof: merging: [0-9]+(/[0-9]+)? rows' "$T/tty" && ok || bad "merge: no progress line: $(od -c "$T/tty" | head -3)"
ptyrun "$T/out" "$HP" convert -F parquet "$T/s.db" -o "$T/c.parquet" >"$T/tty"
[ $? -eq 0 ] && ok || bad "convert under a terminal failed"
grep -aqE 'hubprof: merging: [0-9]+(/[0-9]+)? rows' "$T/tty" && ok || bad "convert: no progress line: $(od -c "$T/tty" | head -3)"
ptyrun "$T/out" "$HP" merge -q -f -o "$T/m.db" "$T"/logs/*.log >"$T/tty"
[ ! -s "$T/tty" ] && ok || bad "merge -q drew on the terminal"

# -q: nothing on the terminal
ptyrun "$T/out" "$HP" info -q "$T/s.db" >"$T/tty"
[ ! -s "$T/tty" ] && ok || bad "info -q drew on the terminal: $(od -c "$T/tty" | head -3)"
ptyrun "$T/out" "$HP" analyze -q "$T/s.db" >"$T/tty"
[ ! -s "$T/tty" ] && ok || bad "analyze -q drew on the terminal"

# stderr not a terminal: nothing
"$HP" info "$T/s.db" >"$T/out" 2>"$T/err"
[ ! -s "$T/err" ] && ok || bad "info wrote progress to a file: $(od -c "$T/err" | head -3)"
"$HP" analyze "$T/s.db" >"$T/out" 2>"$T/err"
[ ! -s "$T/err" ] && ok || bad "analyze wrote progress to a file"

# work shorter than the delay stays silent even on a terminal
HUBPROF_PROGRESS_DELAY_MS=600000 ptyrun "$T/out" "$HP" info "$T/s.db" >"$T/tty"
[ ! -s "$T/tty" ] && ok || bad "work shorter than the delay drew a progress line"
# a terminal that cannot move the cursor (TERM=dumb): nothing drawn, the report unchanged
PTY_TERM=dumb ptyrun "$T/out" "$HP" info "$T/s.db" >"$T/tty"
[ ! -s "$T/tty" ] && grep -qE "dispatch +40000$" "$T/out" && ok || bad "TERM=dumb drew: $(od -c "$T/tty" | head -3)"

# export: regions and dispatches read, of their total
ptyrun "$T/out" "$HP" export --format chrome "$T/s.db" -o "$T/s.json" >"$T/tty"
[ $? -eq 0 ] && ok || bad "export under a terminal failed"
grep -aqE 'hubprof: exporting: [0-9]+/40000 rows \([0-9]+%\)' "$T/tty" && ok ||
  bad "export: no progress line: $(od -c "$T/tty" | head -3)"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/s.json" && ok || bad "export: output not JSON"
ptyrun "$T/out" "$HP" export -q -f --format chrome "$T/s.db" -o "$T/s.json" >"$T/tty"
[ ! -s "$T/tty" ] && ok || bad "export -q drew on the terminal"

# while the application runs (every replay mode): dispatches its logs hold so far, with the rate; the
# application's own output unchanged; nothing with -q or off a terminal
EX=build/examples/ocl
# the release collector, also for an ASan build of hubprof (its runtime must not go into the application)
export HUBPROF_COLLECTOR=${HUBPROF_COLLECTOR:-$PWD/build/libhubprof_collector.so}
if clinfo -l 2>/dev/null | grep -q Device && [ -x "$EX/launch_loop" ]; then
  C3=(--counters task-clock,page-faults,context-switches --max-counters-per-pass 1)
  run_case() { # LABEL N HUBPROF-ARGS...: one run of N dispatches under a terminal, its line checked
    local want=$1 n=$2
    shift 2
    ptyrun "$T/out" "$HP" "$@" -f -o "$T/r.db" -- "$EX/launch_loop" "$n" >"$T/tty"
    [ $? -eq 0 ] && ok || bad "$*: failed under a terminal: $(tail -c 300 "$T/tty")"
    grep -aqE "hubprof: $want: [1-9][0-9]* dispatches, [0-9.]+k? dispatches/s" "$T/tty" && ok ||
      bad "$*: no live line '$want: N dispatches, R/s': $(tr '\r' '\n' <"$T/tty" | tail -5)"
    grep -q "launch_loop: n=$n .* ok" "$T/out" && ! grep -aq "dispatches/s" "$T/out" && ok ||
      bad "$*: the application's stdout changed: $(cat "$T/out")"
  }
  # long enough that the last pass outlasts the first count (250 ms after the start): 3000 dispatches of an
  # application-replay pass took under 0.3 s, start-up included, once replay got cheaper (CI missed it)
  run_case "tracing" 200000 trace
  run_case "kernel replay" 15000 profile "${C3[@]}" --replay kernel
  run_case "pass 3/3" 15000 profile "${C3[@]}" --replay application
  run_case "multiplexing" 15000 profile "${C3[@]}" --replay multiplex
  # the application writes on the same terminal (stdout and stderr): the live line keeps the last row, below
  # a scrolling region, so the application's line starts its own row and nothing runs onto the live line;
  # at the end the line is gone and the summary is one whole row (issue 28)
  VT_RAW="$T/raw" python3 tests/cli/vt_screen.py 12 250 "$HP" trace -f -o "$T/r.db" -- "$EX/launch_loop" 200000 \
    >"$T/screen"
  [ $? -eq 0 ] && ok || bad "trace on a terminal of 12 rows failed: $(cat "$T/screen")"
  grep -aqE "hubprof: tracing: [1-9][0-9]* dispatches, " "$T/raw" && ok || bad "no live line drawn: $(tail -c 300 "$T/raw" | od -c | head)"
  grep -qE "^launch_loop: n=200000 .* ok$" "$T/screen" && ! grep -q "dispatches/s" "$T/screen" && ok ||
    bad "the application's line ran onto the live line, or the line stayed: $(cat "$T/screen")"
  grep -qE "^hubprof: 20000[01] dispatches of 1 kernel in 1 process -> .*r\.db \(rocpd\); programs: .*\)$" "$T/screen" &&
    ok || bad "the summary is not one whole row: $(cat "$T/screen")"
  ptyrun "$T/out" "$HP" profile -q "${C3[@]}" --replay application -f -o "$T/r.db" -- "$EX/launch_loop" 3000 >"$T/tty"
  ! grep -aq "dispatches" "$T/tty" && ok || bad "profile -q drew a live line: $(tr '\r' '\n' <"$T/tty" | tail -3)"
  "$HP" trace -f -o "$T/r.db" -- "$EX/launch_loop" 3000 >"$T/out" 2>"$T/err"
  ! grep -q "dispatches/s" "$T/err" && ok || bad "trace wrote a live line to a file: $(head -3 "$T/err")"
else
  echo "test_progress: replay part skipped: no OpenCL device or $EX/launch_loop not built"
fi

echo "test_progress: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
