#!/usr/bin/env bash
# End-to-end tests of `hubprof info` and `hubprof merge` on real files: per-process logs written by
# build/examples/gen_logs, merged, inspected, queried with sqlite3; and every kind of bad input.
# usage: test_cli.sh [HUBPROF]   (default build/hubprof)
# SPDX-License-Identifier: MIT
set -u
HP=${1:-build/hubprof}
GEN=build/examples/gen_logs
. "$(dirname "$0")/../lib.sh"
hp_test_env
no_leftovers() { # DIR: no temporary files left behind
  if ls -A "$1" | grep -q '\.tmp\.'; then bad "temporary files left in $1: $(ls -A "$1")"; else ok; fi
}

# help and usage
expect 0 "$HP" --help
grep -q "merge" "$T/out" && grep -q "info" "$T/out" && ok || bad "--help lists no commands"
expect 0 "$HP" merge --help
grep -q -- "-F, --output-format log|rocpd|parquet" "$T/out" && ok || bad "merge --help has no -F/--output-format"
expect 0 "$HP" info --help
# the version and the optional parts built in: every part that can be built here is (a build made before
# `make deps` installed libotf2 rebuilds its export objects: Makefile, FEATURES)
for v in --version -V version; do
  expect 0 "$HP" $v
  head -n 1 "$T/out" | grep -qE '^hubprof [0-9]+\.[0-9]+\.[0-9]+$' && ok || bad "$v: $(head -n 1 "$T/out")"
done
grep -q '^export formats: perfetto chrome otf2' "$T/out" && ok || bad "version: formats: $(cat "$T/out")"
if command -v otf2-config >/dev/null; then
  grep '^export' "$T/out" | grep -q 'not built' && bad "libotf2 is installed but OTF2 export is not built: $(cat "$T/out")" || ok
fi
grep -qE '^roofline platforms: opencl cuda( \(not built: no nvcc\))?$' "$T/out" && ok || bad "version: roofline: $(cat "$T/out")"
if nvcc --version >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  grep '^roofline' "$T/out" | grep -q 'not built' && bad "nvcc is here but the CUDA roofline is not built: $(cat "$T/out")" || ok
fi
expect 2 "$HP" nosuchcommand
one_line_error "unknown command 'nosuchcommand'"
expect 2 "$HP"
expect 2 "$HP" info
expect 2 "$HP" info --bogus x
one_line_error "unknown option '--bogus'"

# bad inputs for info: missing, empty, foreign, truncated, corrupt
expect 1 "$HP" info "$T/missing.db"
one_line_error "$T/missing.db: no such file"
: >"$T/empty"
expect 1 "$HP" info "$T/empty"
one_line_error "$T/empty"
echo "hello, not a profile" >"$T/text.txt"
expect 1 "$HP" info "$T/text.txt"
one_line_error "$T/text.txt: not a hubprof store"
sqlite3 "$T/plain.db" "create table t(x); insert into t values (1);"
expect 1 "$HP" info "$T/plain.db"
one_line_error "$T/plain.db"
expect 1 "$HP" info "$T"
one_line_error "$T"

# a real merge: 6 per-process logs with counters in 2 passes
mkdir -p "$T/logs"
"$GEN" "$T/logs" 6 500 4 2 || bad "gen_logs failed"
expect 0 "$HP" merge -o "$T/merged.db" "$T"/logs/*.log
grep -q "merged 6 stores" "$T/err" && grep -q "3000 dispatches" "$T/err" && ok || bad "merge summary: $(cat "$T/err")"
[ -f "$T/merged.db" ] && ok || bad "merged.db missing"
expect 0 "$HP" info "$T/merged.db"
grep -qE "^format +rocpd" "$T/out" && ok || bad "info format: $(cat "$T/out")"
grep -qE "dispatch +3000$" "$T/out" && ok || bad "info dispatch rows: $(cat "$T/out")"
grep -qE "counter_value +12000$" "$T/out" && ok || bad "info counter rows"
grep -qE "kernel_symbol +8$" "$T/out" && ok || bad "info kernels de-duplicated"
grep -qE "process +6$" "$T/out" && ok || bad "info processes"
grep -q "time span" "$T/out" && ok || bad "info time span"
expect 0 "$HP" info --format json "$T/merged.db"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["rows"]["dispatch"]==3000 and len(d["processes"])==6 and d["damage"] is None and d["format"]=="rocpd"' "$T/out" && ok || bad "info --format json"
# ROCm's views answer on the merged data
calls=$(sqlite3 "$T/merged.db" "select sum(total_calls) from top_kernels;")
[ "$calls" = "3000" ] && ok || bad "top_kernels total calls $calls"
pct=$(sqlite3 "$T/merged.db" "select round(sum(percentage)) from top_kernels;")
[ "$pct" = "100.0" ] && ok || bad "top_kernels percentages sum to $pct"
ncc=$(sqlite3 "$T/merged.db" "select count(*) from counters_collection;")
[ "$ncc" = "12000" ] && ok || bad "counters_collection rows $ncc"

# a folder of stores holding a log and its launch file (NAME.log.launch, docs/formats/log.md): the launch file is
# not a foreign file; a closed log's is not read; once the log has no closing record (its writer killed), the
# launch file's dispatches the log lacks are merged (ids 9001 and 9002; 7 is the log's own)
mkdir -p "$T/lfold"
cp "$T/logs/$(ls "$T/logs" | head -n 1)" "$T/lfold/hubprof-x.log"
python3 - "$T/lfold/hubprof-x.log.launch" <<'PY'
import struct, sys
b = bytearray(3 * 4096 + 16 * 72)
struct.pack_into("<8sIIQq", b, 0, b"HPLAUNCH", 1, 72, 4096, 0)
# ring at 4096: head 3, tail 0, entries at 8192, 16 of them, thread 1, calibration 1 stamp per ns from 0
struct.pack_into("<QQQQQqqdQ8s", b, 4096, 3, 0, 8192 | 4, 1, 0, 0, 0, 1.0, 0, b"HPLRING\0")
for i, did in enumerate((9001, 7, 9002)):
    struct.pack_into("<8xQIIIIIIIIIIqQ", b, 8192 + 72 * i, did, 1, 1, 1, 0, 64, 1, 1, 64, 1, 1, 5000 + i, 0)
open(sys.argv[1], "wb").write(b)
PY
expect 0 "$HP" merge -o "$T/lf.db" "$T/lfold"
grep -q "merged 1 store" "$T/err" && grep -q " 500 dispatches" "$T/err" && ok || bad "closed log + launch file: $(cat "$T/err")"
dd if=/dev/zero of="$T/lfold/hubprof-x.log" bs=1 seek=512 count=1024 conv=notrunc 2>/dev/null
expect 0 "$HP" merge -f -o "$T/lf.db" "$T/lfold"
[ "$(sqlite3 "$T/lf.db" "select count(*) from rocpd_kernel_dispatch")" = 502 ] && ok || bad "launch file's rows: $(cat "$T/err")"
[ "$(sqlite3 "$T/lf.db" "select count(*) from rocpd_kernel_dispatch where end = 0 or end is null")" = 2 ] && ok ||
  bad "launch file's rows not without end: $(sqlite3 "$T/lf.db" "select * from rocpd_kernel_dispatch order by id desc limit 3")"
expect 0 "$HP" info "$T/lfold/hubprof-x.log"
grep -q "2 dispatches launched and not yet harvested when it stopped are read from its launch file" "$T/out" "$T/err" &&
  ok || bad "info: no note of the launch file: $(cat "$T/out" "$T/err")"

# merge again: refuses to replace without --force; --force replaces; log output format
expect 1 "$HP" merge -o "$T/merged.db" "$T"/logs/*.log
one_line_error "already exists"
expect 0 "$HP" merge -f -q -o "$T/merged.db" "$T"/logs/*.log
[ ! -s "$T/err" ] && ok || bad "--quiet printed: $(cat "$T/err")"
expect 0 "$HP" merge -F log -o "$T/merged.log" "$T/merged.db" "$T/logs/$(ls "$T/logs" | head -n 1)"
expect 0 "$HP" info "$T/merged.log"
grep -qE "dispatch +3000$" "$T/out" && ok || bad "log merge rows (a source of merged.db again: taken once): $(cat "$T/out")"

# the same profile given twice (or a merged store with one of its sources): dispatches taken once
one=$(ls "$T/logs" | head -n 1)
expect 0 "$HP" merge -o "$T/twice.db" "$T/logs/$one" "$T/logs/$one"
grep -q "appeared in more than one input" "$T/err" && ok || bad "no warning for a duplicate input: $(cat "$T/err")"
[ "$(sqlite3 "$T/twice.db" "select count(*) from rocpd_kernel_dispatch")" = 500 ] && ok || bad "duplicate input counted twice"
[ "$(sqlite3 "$T/twice.db" "select count(*) from counters_collection")" = 2000 ] && ok || bad "duplicate input: counter values twice"
expect 0 "$HP" merge -q -o "$T/again.db" "$T/merged.db" "$T/logs/$one"
[ "$(sqlite3 "$T/again.db" "select count(*) from rocpd_kernel_dispatch")" = 3000 ] && ok || bad "merged store + its source counted twice"

# convert: rocpd -> parquet -> rocpd keeps every table's rows; bad input refused
expect 0 "$HP" convert "$T/merged.db" -o "$T/merged.parquet" -F parquet
grep -q "converted $T/merged.db (rocpd) to $T/merged.parquet (parquet): 3000 dispatches, 12000 counter values" "$T/err" && ok || bad "convert summary: $(cat "$T/err")"
expect 0 "$HP" convert -q "$T/merged.parquet" -o "$T/back.db" --output-format rocpd
"$HP" info --format json "$T/merged.db" >"$T/a.json"
"$HP" info --format json "$T/back.db" >"$T/b.json"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["rows"]; b=json.load(open(sys.argv[2]))["rows"]; assert a==b, (a,b)' "$T/a.json" "$T/b.json" && ok || bad "convert round trip changed row counts"
[ "$(sqlite3 "$T/back.db" "select sum(total_calls) from top_kernels")" = 3000 ] && ok || bad "converted rocpd views"
expect 2 "$HP" convert "$T/merged.db" -o "$T/x.parquet" -F rocpd
one_line_error "names a parquet store (.parquet), but -F rocpd was given"
expect 2 "$HP" convert "$T/merged.db" -o "$T/x.db" -F nosuch
one_line_error "--output-format must be 'log', 'rocpd' or 'parquet', not 'nosuch'"
expect 1 "$HP" convert "$T/merged.db" -o "$T/back.db" --output-format rocpd
one_line_error "already exists"
expect 1 "$HP" convert "$T/text.txt" -o "$T/y.db" -F rocpd
one_line_error "$T/text.txt: not a hubprof store"
[ ! -e "$T/y.db" ] && ok || bad "convert left an output after failing"

# bad merges leave no output and no temporaries
expect 1 "$HP" merge -o "$T/out1.db" "$T/logs/"*.log "$T/missing.log"
one_line_error "$T/missing.log: no such file"
[ ! -e "$T/out1.db" ] && ok || bad "output left after failed merge"
no_leftovers "$T"
expect 1 "$HP" merge -o "$T/out2.db" "$T/text.txt"
one_line_error "$T/text.txt: not a hubprof store"
expect 2 "$HP" merge --output-format nosuch -o "$T/out3.db" "$T"/logs/*.log
one_line_error "--output-format must be 'log', 'rocpd' or 'parquet', not 'nosuch'"
expect 2 "$HP" merge "$T"/logs/*.log
one_line_error "no output"
expect 2 "$HP" merge -o "$T/out4.db"
one_line_error "no input"
expect 1 "$HP" merge -o "$T/no/such/dir/out.db" "$T"/logs/*.log
one_line_error "$T/no/such/dir/out.db"
if [ "$(id -u)" -ne 0 ]; then
  mkdir "$T/ro" && chmod 555 "$T/ro"
  expect 1 "$HP" merge -o "$T/ro/out.db" "$T"/logs/*.log
  one_line_error "$T/ro/out.db"
fi

# a log cut short (as by SIGKILL): merged up to its damage with a warning; --strict refuses
first=$(ls "$T/logs" | head -n 1)
cp "$T/logs/$first" "$T/cut.log"
used=$(python3 -c 'import sys; b=open(sys.argv[1],"rb").read(); print(len(b.rstrip(b"\0")))' "$T/cut.log")
truncate -s $((used - 100)) "$T/cut.log"
expect 0 "$HP" info "$T/cut.log"
grep -qE "^damage +.*truncated" "$T/out" && ok || bad "info shows no damage: $(cat "$T/out")"
expect 0 "$HP" merge -o "$T/cut.db" "$T/cut.log"
grep -q "warning: $T/cut.log" "$T/err" && ok || bad "no damage warning: $(cat "$T/err")"
expect 1 "$HP" merge --strict -o "$T/cut2.db" "$T/cut.log"
[ ! -e "$T/cut2.db" ] && ok || bad "--strict left an output"
# truncated and corrupt rocpd files
head -c 8192 "$T/merged.db" >"$T/trunc.db"
"$HP" info "$T/trunc.db" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && ok || bad "truncated rocpd: exit $rc"
one_line_error "$T/trunc.db"
cp "$T/merged.db" "$T/corrupt.db"
printf 'garbage!garbage!garbage!' | dd of="$T/corrupt.db" bs=1 seek=4096 conv=notrunc 2>/dev/null
"$HP" info "$T/corrupt.db" >"$T/out" 2>"$T/err"
rc=$?
{ [ $rc -eq 0 ] || [ $rc -eq 1 ]; } && ok || bad "corrupt rocpd crashed: exit $rc"
[ $rc -eq 0 ] || one_line_error "$T/corrupt.db"

# a closed stdout is reported, not ignored
if [ -w /dev/full ]; then
  : >"$T/out"
  "$HP" info "$T/merged.db" >/dev/full 2>"$T/err"
  rc=$?
  [ $rc -eq 1 ] && ok || bad "write to /dev/full: exit $rc"
  one_line_error "cannot write standard output"
fi

echo "test_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
