#!/usr/bin/env bash
# `@FILE` wherever a list of counters or metrics is taken (issue 32): profile, sample, plan, analyze and list read
# one name per line with '#' comments and blank lines, and a bad line's error names the file and line; the
# same from Python (analyze(counters="@FILE")). Runs vector_add under PoCL. usage: test_list_file.sh [HUBPROF]
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/../.." || exit 1
HP=$(realpath "${1:-build/hubprof}")
EX=$PWD/build/examples/ocl
. tests/lib.sh
hp_test_env
need_built test_list_file "$HP" "$EX/vector_add" "$HUBPROF_COLLECTOR"
need_opencl test_list_file
cd "$T" || exit 1

printf '# the counters of this test\ntask-clock\n\n   page-faults   # trailing comment\n\t\n' >c.txt
printf 'task-clock\npage-faults\nno-such-counter\n' >bad.txt
printf 'task-clock\npage-faults context-switches\n' >two.txt
printf '# nothing\n\n' >empty.txt
printf 'cpu_util\n' >m.txt

# plan: the file's names, in order; the errors name the file and line
expect 0 "$HP" plan --counters @c.txt
grep -q '^ *1  task-clock' out && grep -q '^ *1  page-faults' out && [ "$(grep -c '^ *1  ' out)" = 2 ] && ok ||
  bad "plan @c.txt: $(cat out)"
expect 1 "$HP" plan --counters @bad.txt
one_line_error "plan: bad.txt:3: unknown counter 'no-such-counter'"
expect 1 "$HP" plan --counters @two.txt
one_line_error "two.txt:2: 'page-faults context-switches' is not one name"
expect 1 "$HP" plan --counters @empty.txt
one_line_error "empty.txt: no names in it"
expect 1 "$HP" plan --counters @missing.txt
one_line_error "missing.txt: cannot read"
expect 0 "$HP" plan --counters @c.txt --counters context-switches # a file and a list together
[ "$(grep -c '^ *1  ' out)" = 3 ] && ok || bad "file + list: $(cat out)"

# list: only the counters (metrics) a file or list names, in its order, so a file is checked before a run
expect 0 "$HP" list counters @c.txt --format csv
[ "$(cut -d, -f2 out | tail -n +2 | tr '\n' ' ')" = "task-clock page-faults " ] && ok || bad "list counters @c.txt: $(cat out)"
expect 0 "$HP" list counters @c.txt context-switches
head -1 out | grep -q ': 3 counters named, ' && [ "$(grep -cE '^(task-clock|page-faults|context-switches) ' out)" = 3 ] &&
  ok || bad "list counters @c.txt NAME: $(cat out)"
expect 1 "$HP" list counters @bad.txt
one_line_error "list: bad.txt:3: unknown counter 'no-such-counter'"
[ ! -s out ] && ok || bad "list counters @bad.txt printed: $(cat out)"
expect 1 "$HP" list counters @two.txt
one_line_error "two.txt:2: 'page-faults context-switches' is not one name"
expect 0 "$HP" list metrics @m.txt --format json
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert [x["metric"] for x in m] == ["cpu_util"], m' out &&
  ok || bad "list metrics @m.txt: $(cat out)"
expect 1 "$HP" list metrics @c.txt
one_line_error "list: c.txt:2: unknown metric 'task-clock'"
expect 2 "$HP" list devices @c.txt
one_line_error "follow 'counters' or 'metrics' only"

# profile: the counters measured are the file's; a bad line stops it before the application runs
expect 0 "$HP" profile -q --counters @c.txt -o p.db -- "$EX/vector_add" 256 2
expect 0 "$HP" analyze --format csv --counters @c.txt p.db
head -1 out | grep -q 'task-clock,page-faults' && ok || bad "analyze @c.txt: $(head -2 out)"
expect 1 "$HP" profile -q --counters @bad.txt -o q.db -- "$EX/vector_add" 256 2
one_line_error "profile: bad.txt:3: unknown counter 'no-such-counter'"
[ ! -e q.db ] && ok || bad "profile ran with a bad list"
expect 1 "$HP" profile -q --metrics @m.txt --metrics @bad.txt -o q.db -- "$EX/vector_add" 256 2
one_line_error "bad.txt:1: unknown metric 'task-clock'"
expect 1 "$HP" analyze --counters @bad.txt p.db
one_line_error "analyze: bad.txt:3: counter 'no-such-counter' is not in the store"

# sample: the file's counters in the timeline
expect 0 "$HP" sample -q --counters @c.txt -o s.db -- "$EX/vector_add" 65536 4
python3 - s.db <<'PY' && ok || bad "sample @c.txt: counter_info"
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    names = sorted(s.table("counter_info").name)
    assert names == ["page-faults", "task-clock"], names
PY
expect 1 "$HP" sample -q --counters @bad.txt -o s2.db -- "$EX/vector_add" 256 2
one_line_error "sample: bad.txt:3: --counters: unknown counter 'no-such-counter'"

# Python: "@FILE" as the list or an item of it; errors name the file and line
python3 - p.db <<'PY' >py.err 2>&1 && ok || bad "python: $(tail -3 py.err)"
import sys, pytest, hubprof
with hubprof.open(sys.argv[1]) as s:
    df = s.analyze(counters="@c.txt", metrics=[])
    assert "task-clock" in df.columns and "page-faults" in df.columns, df.columns
    df = s.analyze(counters=["@c.txt"], metrics="@m.txt")
    assert "cpu_util" in df.columns, df.columns
    with pytest.raises(ValueError, match=r"^bad.txt:3: .*'no-such-counter'"):
        s.analyze(counters="@bad.txt")
    with pytest.raises(ValueError, match=r"^two.txt:2: 'page-faults context-switches' is not one name"):
        s.analyze(counters="@two.txt")
assert hubprof.read_list_file("c.txt") == ["task-clock", "page-faults"]
PY

echo "test_list_file: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
