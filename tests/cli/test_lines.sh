#!/usr/bin/env bash
# What hubprof writes on stderr comes in whole lines and counts in the right number (issue 28): every write(2)
# hubprof makes to stderr (strace, hubprof's own process only) ends with a newline, for a trace's summary, a
# merge's, a profile's plan and an error line, so the hubprof of each MPI rank sharing one stderr never
# interleaves mid-line (tests/cluster/test_cluster.sh checks the 4 ranks' lines); and a run of one dispatch of
# one kernel in one process says so in the singular everywhere (trace, merge, convert, export, report, info).
# usage: test_lines.sh [HUBPROF]   (default build/hubprof)
# SPDX-License-Identifier: MIT
set -u
HP=$(realpath "${1:-build/hubprof}")
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
APP=$PWD/build/examples/ocl/vector_add
need_built test_lines "$HP" "$APP"
need_opencl test_lines
hp_test_env
cd "$T" || exit 1

# whole_writes NAME CMD...: every write to fd 2 by hubprof's own process ends with a newline
whole_writes() {
  local name=$1
  shift
  strace -o st.txt -s 65536 -e trace=write "$@" >out 2>err
  python3 - st.txt "$name" <<'EOF' && ok || bad "$name: writes to stderr that are not whole lines (above)"
import re, sys
calls = [m.group(1) for m in re.finditer(r'^write\(2, "((?:[^"\\]|\\.)*)"', open(sys.argv[1]).read(), re.M)]
part = [c for c in calls if not c.endswith("\\n")]
for c in part:
    print(f"{sys.argv[2]}: write(2, \"{c}\")", file=sys.stderr)
if not calls:
    print(f"{sys.argv[2]}: no write to stderr seen", file=sys.stderr)
sys.exit(1 if part or not calls else 0)
EOF
}
if command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null; then
  whole_writes "trace summary" "$HP" trace -o "$T/w.db" -- "$APP" 1024 1
  whole_writes "merge summary" "$HP" merge -o "$T/w2.db" "$T/w.db"
  whole_writes "profile plan" "$HP" profile --counters task-clock,page-faults --max-counters-per-pass 1 \
    -o "$T/w3.db" -- "$APP" 1024 1
  whole_writes "error line" "$HP" merge --fromat x -o "$T/w4.db" "$T/w.db"
else
  echo "test_lines: no strace here (or ptrace not allowed): the whole-write checks are skipped"
fi

# one_of WHAT: stderr of the last command has no plural after a count of 1 ("1 dispatches")
one_of() {
  if grep -qE '(^|[^0-9.,])1 (dispatches|kernels|processes|records|values|stores|regions|markers|flows|calls|samples|events|rows|runs|passes|counters|keys|logs)\b' err; then
    bad "$1: a plural after 1: $(cat err)"
  else
    ok
  fi
}
expect 0 "$HP" trace -f -o "$T/one.db" -- "$APP" 1024 1
grep -qE "^hubprof: 1 dispatch of 1 kernel in 1 process -> " err && ok || bad "trace summary: $(cat err)"
one_of trace
expect 0 "$HP" merge -o "$T/m.db" "$T/one.db"
one_of merge
grep -q "merged 1 store into" err && ok || bad "merge summary: $(cat err)"
expect 0 "$HP" convert "$T/one.db" -o "$T/c.parquet"
one_of convert
expect 0 "$HP" export "$T/one.db" -o "$T/e.json" --format chrome
one_of export
expect 0 "$HP" report "$T/one.db" -o "$T/r.html"
one_of report
grep -qE '\b1 (calls|dispatches|regions|records)\b' r.html && bad "report page: a plural after 1: $(grep -oE '\b1 (calls|dispatches|regions|records)\b' r.html | sort -u)" || ok

echo "test_lines: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
