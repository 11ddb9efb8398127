#!/usr/bin/env bash
# The exit-code rule of docs/cli/exit-codes.md, subcommand by subcommand: 2 for a malformed command line
# (found from the option tables, before any input is read), 1 for an input that cannot be used (a file,
# store, device, counter or metric), the application's own status for trace and profile once it ran; each
# error one line on stderr naming the input, nothing on stdout. Also the option tables' shared behaviour:
# "did you mean", --help generated from the table, the old spellings kept as aliases.
# usage: test_exit_codes.sh [HUBPROF]   (default build/hubprof)
# SPDX-License-Identifier: MIT
set -u
HP=${1:-build/hubprof}
HP=$(cd "$(dirname "$HP")" && pwd)/$(basename "$HP") # absolute: the test runs in its scratch directory
GEN=$(pwd)/build/examples/gen_logs
export HUBPROF_COLLECTOR=${HUBPROF_COLLECTOR:-$(pwd)/build/libhubprof_collector.so}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"
cd "$T" || exit 1

mkdir logs
"$GEN" logs 2 50 2 1 || bad "gen_logs failed"
"$HP" merge -q -o s.db logs/*.log || bad "merge failed"
printf 'metric two = task-clock * 2\n' >own.metrics

# ---- 2: usage errors, in every subcommand ----
for c in trace profile analyze diff info merge convert plan list export report roofline; do
  expect 2 "$HP" "$c" --no-such-option
  one_line_error "$c: unknown option '--no-such-option'"
done
expect 2 "$HP" analyze --fromat csv s.db
one_line_error "unknown option '--fromat'; did you mean '--format'?"
expect 2 "$HP" merge --fromat log -o m.db s.db # the store-format option, under its old spelling too
one_line_error "did you mean '--output-format'?"
expect 2 "$HP" profile --conters task-clock -- true
one_line_error "did you mean '--counters'?"
expect 2 "$HP" anlyze s.db
one_line_error "unknown command 'anlyze'; did you mean 'analyze'?"
expect 2 "$HP" help merg
one_line_error "did you mean 'merge'?"
expect 2 "$HP" list countres
one_line_error "did you mean 'counters'?"
expect 2 "$HP" analyze --by kernal s.db
one_line_error "--by must be 'kernel', 'kernel-grid', 'dispatch', 'region', 'region-tree', 'instruction', 'line', 'function', 'basic-block', 'source', 'rank', 'rank-imbalance', 'api' or 'copy', not 'kernal' (did you mean 'kernel'?)"
expect 2 "$HP" analyze --limit
one_line_error "option '--limit' needs a value"
expect 2 "$HP" analyze -n 0 s.db
one_line_error "--limit needs a number from 1"
expect 2 "$HP" analyze --limit=x s.db
one_line_error "--limit needs a number from 1"
expect 2 "$HP" info --quiet=yes s.db
one_line_error "option '--quiet' takes no value"
expect 2 "$HP" analyze --kernel '[' s.db
one_line_error "--kernel '[' has a '[' without its ']'"
expect 2 "$HP" diff --device 'gfx[9' s.db s.db
one_line_error "--device 'gfx[9' has a '['"
expect 2 "$HP" analyze --metrics ipc, s.db
one_line_error "--metrics 'ipc,': an empty name in the list"
expect 2 "$HP" analyze --format csv --format json s.db
one_line_error "--format given twice ('csv' and 'json')"
expect 0 "$HP" analyze --format csv --format csv s.db # the same value twice is harmless
expect 2 "$HP" diff --threshold -1 s.db s.db
one_line_error "--threshold needs a percentage"
expect 2 "$HP" info --json --format table s.db
one_line_error "contradict"
expect 2 "$HP" profile --replay kernel --match all --counters task-clock -- true
one_line_error "--match applies to application replay only"
expect 2 "$HP" profile --replay sideways --counters task-clock -- true
one_line_error "--replay must be 'kernel', 'application' or 'multiplex'"
expect 2 "$HP" profile --counters task-clock
one_line_error "no application given"
expect 2 "$HP" convert s.db -o c.db -F parquet
one_line_error "convert: -o c.db names a rocpd store (.db), but -F parquet was given"
expect 2 "$HP" convert s.db -o c.db -F sqlite
one_line_error "--output-format must be 'log', 'rocpd' or 'parquet', not 'sqlite'"
expect 2 "$HP" trace -F rocpd -F log -- true
one_line_error "--output-format given twice"
expect 2 "$HP" plan --group novalue
one_line_error "group 'novalue' must be NAME=COUNTER"
[ ! -e c.db ] && ok || bad "a usage error wrote output"

# ---- 1: input errors: the command line is well formed, what it names cannot be used ----
expect 1 "$HP" info missing.db
one_line_error "missing.db"
expect 1 "$HP" analyze missing.db
expect 1 "$HP" diff s.db missing.db
expect 1 "$HP" merge -o m.db missing.db
expect 1 "$HP" convert missing.db -o c.hplog -F log
# an unknown counter, metric or device is an input error in every subcommand
expect 1 "$HP" plan --counters task-clok
one_line_error "unknown counter 'task-clok' (did you mean 'task-clock'?)"
expect 1 "$HP" profile --counters task-clok -o p.db -- true
one_line_error "unknown counter 'task-clok' (did you mean 'task-clock'?)"
expect 1 "$HP" analyze --counters task-clok s.db
one_line_error "counter 'task-clok' is not in the store"
expect 1 "$HP" plan --metrics cpu_utl
one_line_error "unknown metric 'cpu_utl' (did you mean 'cpu_util'?)"
expect 1 "$HP" profile --metrics cpu_utl -o p.db -- true
one_line_error "unknown metric 'cpu_utl'"
expect 1 "$HP" analyze --metrics cpu_utl s.db
one_line_error "unknown metric 'cpu_utl'"
expect 1 "$HP" plan --device nosuchdevice --counters task-clock
one_line_error "unknown device 'nosuchdevice'"
expect 1 "$HP" profile --device nosuchdevice --counters task-clock -o p.db -- true
one_line_error "unknown device 'nosuchdevice'"
expect 1 "$HP" list counters --device nosuchdevice
# files that are not regular files are refused by name before they are opened (they would block)
for c in plan profile; do
  expect 1 timeout 20 "$HP" "$c" --counters task-clock --device /dev/zero -o p.db -- true
  one_line_error "$c: --device /dev/zero: not a regular file (a device)"
  expect 1 timeout 20 "$HP" "$c" --metrics cpu_util --metrics-file /dev/zero -o p.db -- true
  one_line_error "$c: --metrics-file /dev/zero: not a regular file (a device)"
done
expect 1 timeout 20 "$HP" list metrics --metrics-file /dev/zero
one_line_error "--metrics-file /dev/zero: not a regular file"
expect 1 timeout 20 "$HP" analyze --metrics-file . s.db
one_line_error "--metrics-file .: not a regular file (a directory)"
mkfifo fifo.metrics
expect 1 timeout 20 "$HP" diff --metrics-file fifo.metrics s.db s.db
one_line_error "--metrics-file fifo.metrics: not a regular file (a FIFO)"
expect 1 "$HP" plan --metrics cpu_util --metrics-file nothere.metrics
one_line_error "--metrics-file nothere.metrics: No such file or directory"
# a metrics file that does not parse: one error, no crash (this freed an uninitialised pointer)
for c in plan list; do
  if [ $c = plan ]; then expect 1 "$HP" plan --metrics cpu_util --metrics-file /etc/hostname; else
    expect 1 "$HP" list metrics --metrics-file /etc/hostname
  fi
  [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "hostname:1:" "$T/err" && ok || bad "$c bad metrics file: $(cat "$T/err")"
done
expect 1 "$HP" profile --metrics cpu_util --metrics-file /etc/hostname -o p.db -- true
grep -q "hostname:1:" "$T/err" && ok || bad "profile bad metrics file: $(cat "$T/err")"
[ ! -e p.db ] && [ ! -e m.db ] && [ ! -e c.db ] && ok || bad "an input error wrote output"

# ---- the application's own status (trace, profile), 127 when it cannot be started ----
expect 3 "$HP" trace -q -o t.db -- sh -c 'exit 3'
expect 4 "$HP" profile -q --counters task-clock -o p.db -- sh -c 'exit 4'
expect 127 "$HP" trace -q -o t.db -- ./no-such-app
one_line_error "no-such-app"
# APP's own options are APP's: the first operand ends hubprof's options
expect 5 "$HP" trace -q -o t.db -- sh -c 'exit 5' --no-such-option
expect 5 "$HP" trace -q -o t.db sh -c 'exit 5' --format x

# ---- 0, and the option tables behind --help ----
for c in trace profile analyze diff info merge convert plan list export report roofline; do
  expect 0 "$HP" "$c" --help
  grep -q "^usage: hubprof $c" "$T/out" && grep -q -- "-h, --help" "$T/out" && ok || bad "$c --help: $(head -3 "$T/out")"
  expect 0 "$HP" help "$c"
done
# every option profile accepts is in its help (the drift this table removed: --metrics, --metrics-file)
expect 0 "$HP" profile --help
for o in --counters --metrics --metrics-file --group --device --max-counters-per-pass --replay \
  --multiplex-policy --match --output --output-format --force --preload --quiet; do
  grep -q -- "$o\b" "$T/out" && ok || bad "profile --help lacks $o"
done
grep -q -- "--replay kernel|application|multiplex" "$T/out" && ok || bad "profile --help: enum choices not shown"
# one name per format: -F/--output-format for stores, --format for reports
for c in trace profile merge convert; do
  "$HP" "$c" --help | grep -q -- "-F, --output-format" && ok || bad "$c: no -F/--output-format"
done
for c in analyze diff info list plan roofline; do
  "$HP" "$c" --help | grep -q -- "--format table|" && ok || bad "$c: no --format table|..."
done
# the old spellings still work: --format for a store format, info --json
expect 0 "$HP" convert -q s.db -o c.log --format log
expect 0 "$HP" info --format json c.log
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["format"] == "log"' "$T/out" && ok || bad "converted format"
expect 0 "$HP" info --json c.log
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out" && ok || bad "info --json"
# forms of options: --name=value, -nVALUE, grouped short flags, "--" ends options
expect 0 "$HP" analyze --format=csv -n1 s.db
[ "$(grep -c . "$T/out")" -eq 2 ] && ok || bad "--format=csv -n1: $(cat "$T/out")"
expect 0 "$HP" convert -qf s.db -o c.log -F log

echo "test_exit_codes: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
