#!/usr/bin/env bash
# The output format follows the output's name (trace, profile, sample, merge, convert): each suffix, a folder, -F
# agreeing or contradicting (one error, exit 2, the application never started, no output); the one suffix rule
# (docs/cli/output-names.md: a format's default suffix gives it back on -o, rank stores too); and reading
# subcommands on a store whose table cannot be read exit 1 naming the file. usage: test_output_format.sh [HUBPROF]
# SPDX-License-Identifier: MIT
set -u
HP=$(realpath "${1:-build/hubprof}")
EX=$PWD/build/examples/ocl
. tests/lib.sh
hp_test_env
need_built test_output_format "$HP" "$EX/vector_add" "$HUBPROF_COLLECTOR"
need_opencl test_output_format
cd "$T"
fmt() { "$HP" info --json "$1" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["format"])'; }

# 1. trace: each suffix gives its format; no suffix gives rocpd; -F agreeing is fine
for pair in run.parquet:parquet run.db:rocpd run.sqlite:rocpd run.sqlite3:rocpd run.rocpd:rocpd \
  run.hplog:log run.log:log plain:rocpd dir.d/:parquet; do
  out=${pair%:*} want=${pair##*:}
  expect 0 "$HP" trace -q -o "$out" -- "$EX/vector_add" 1024 2
  [ "$(fmt "${out%/}")" = "$want" ] && ok || bad "trace -o $out: format $(fmt "${out%/}"), want $want"
done
expect 0 "$HP" trace -q -o agree.parquet -F parquet -- "$EX/vector_add" 1024 2
[ "$(fmt agree.parquet)" = parquet ] && ok || bad "-F parquet with .parquet"
expect 0 "$HP" trace -q -o other.out -F log -- "$EX/vector_add" 1024 2
[ "$(fmt other.out)" = log ] && ok || bad "-F log with a name that says nothing"
# an existing folder (a Parquet store without the suffix) is replaced as Parquet with --force
expect 0 "$HP" trace -q -F parquet -o store -- "$EX/vector_add" 1024 2
expect 0 "$HP" trace -q -f -o store -- "$EX/vector_add" 1024 3
[ "$(fmt store)" = parquet ] && ok || bad "existing folder: $(fmt store)"

# 2. contradictions: one line, exit 2, before the application starts, nothing written
for pair in x.db:parquet x.sqlite:log x.parquet:rocpd x.hplog:rocpd x.log:rocpd x.log:parquet x.rocpd:parquet y/:rocpd \
  store:log; do
  out=${pair%:*} f=${pair##*:}
  rm -f ran
  expect 2 "$HP" trace -q -o "$out" -F "$f" -- sh -c "touch $T/ran"
  one_line_error "trace: -o $out names a"
  [ ! -e ran ] && ok || bad "trace -o $out -F $f started the application"
  [ "$out" = store ] || { [ ! -e "${out%/}" ] && ok || bad "trace -o $out -F $f left an output"; }
done
expect 2 "$HP" profile --counters task-clock -o p.db -F parquet -- sh -c "touch $T/ran"
one_line_error "profile: -o p.db names a rocpd store (.db), but -F parquet was given"
[ ! -e ran ] && [ ! -e p.db ] && ok || bad "profile contradiction ran or wrote"
expect 2 "$HP" sample -o s.db -F parquet -- sh -c "touch $T/ran"
one_line_error "sample: -o s.db names a rocpd store (.db), but -F parquet was given"
[ ! -e ran ] && [ ! -e s.db ] && ok || bad "sample contradiction ran or wrote"

# 3. profile, merge and convert follow the name too
expect 0 "$HP" profile -q --counters task-clock -o p.parquet -- "$EX/vector_add" 1024 2
[ "$(fmt p.parquet)" = parquet ] && ok || bad "profile -o p.parquet: $(fmt p.parquet)"
expect 0 "$HP" sample -q -o s.parquet -- "$EX/vector_add" 1024 2
[ "$(fmt s.parquet)" = parquet ] && ok || bad "sample -o s.parquet: $(fmt s.parquet)"
expect 0 "$HP" merge -q -o m.parquet run.db run.hplog
[ "$(fmt m.parquet)" = parquet ] && ok || bad "merge -o m.parquet: $(fmt m.parquet)"
expect 0 "$HP" merge -q -o m.sqlite run.parquet
[ "$(fmt m.sqlite)" = rocpd ] && ok || bad "merge -o m.sqlite: $(fmt m.sqlite)"
expect 0 "$HP" convert -q run.parquet -o c.hplog
[ "$(fmt c.hplog)" = log ] && ok || bad "convert -o c.hplog: $(fmt c.hplog)"
expect 0 "$HP" convert -q run.db -o c2/
[ "$(fmt c2)" = parquet ] && ok || bad "convert -o c2/: $(fmt c2)"
expect 2 "$HP" merge -q -o m2.db -F log run.db
one_line_error "merge: -o m2.db names a rocpd store (.db), but -F log was given"
expect 2 "$HP" convert -q run.db -o c3.parquet -F rocpd
one_line_error "convert: -o c3.parquet names a parquet store (.parquet), but -F rocpd was given"
[ ! -e m2.db ] && [ ! -e c3.parquet ] && ok || bad "a refused merge/convert wrote its output"

# 4. a table that cannot be read: analyze, diff, export and info exit 1 naming the file
cp -r run.parquet bad.parquet
# the dispatch table's file, in either layout (dispatch.parquet, or dispatch/part-*.parquet)
f=$(ls bad.parquet/dispatch.parquet bad.parquet/dispatch/*.parquet 2>/dev/null | head -n 1)
printf 'not parquet at all' >"$f"
expect 1 "$HP" analyze bad.parquet
one_line_error "analyze: bad.parquet: a table cannot be read: ${f#bad.parquet/}:"
expect 1 "$HP" diff run.parquet bad.parquet
grep -q "diff: bad.parquet: a table cannot be read: ${f#bad.parquet/}" "$T/err" && ok || bad "diff: $(cat "$T/err")"
expect 1 "$HP" export bad.parquet -o bad.json
grep -q "export: bad.parquet: a table cannot be read" "$T/err" && [ ! -e bad.json ] && ok || bad "export: $(cat "$T/err")"
expect 1 "$HP" info bad.parquet
grep -q "${f#bad.parquet/}" "$T/out" && grep -q "info: bad.parquet: a table cannot be read" "$T/err" && ok ||
  bad "info: $(cat "$T/out" "$T/err")"
# a log cut by a crash still analyzes its complete part
head -c 8192 run.hplog >cut.hplog
expect 0 "$HP" analyze cut.hplog
grep -q "cannot be read" "$T/err" && bad "a cut log is refused: $(cat "$T/err")" || ok

# 5. one suffix rule (docs/cli/output-names.md): the suffix a command names a format's output with is the
# suffix that gives that format back on -o, for trace, profile, sample, merge, convert and the rank stores
mkdir rule && cd rule
for pair in rocpd:.db log:.log parquet:.parquet; do
  f=${pair%:*} suf=${pair##*:}
  expect 0 "$HP" trace -q -F "$f" -- "$EX/vector_add" 1024 2
  [ -e "vector_add.hubprof$suf" ] && [ "$(fmt "vector_add.hubprof$suf")" = "$f" ] && ok ||
    bad "trace -F $f: wrote $(ls) ($(fmt "vector_add.hubprof$suf")), want vector_add.hubprof$suf"
  expect 0 "$HP" trace -q -F "$f" -- "$EX/vector_add" 1024 2 # the next free name keeps the suffix
  [ "$(fmt "vector_add.hubprof-2$suf")" = "$f" ] && ok || bad "trace -F $f again: $(ls)"
  expect 0 "$HP" merge -q -o "merged$suf" "vector_add.hubprof$suf" "vector_add.hubprof-2$suf"
  [ "$(fmt "merged$suf")" = "$f" ] && ok || bad "merge -o merged$suf: $(fmt "merged$suf"), want $f"
  expect 0 "$HP" convert -q ../run.db -o "conv$suf"
  [ "$(fmt "conv$suf")" = "$f" ] && ok || bad "convert -o conv$suf: $(fmt "conv$suf"), want $f"
  expect 0 "$HP" sample -q -F "$f" -o "s$suf" -- "$EX/vector_add" 1024 2
  [ "$(fmt "s$suf")" = "$f" ] && ok || bad "sample -F $f -o s$suf: $(fmt "s$suf")"
  expect 0 "$HP" profile -q --counters task-clock -F "$f" -- "$EX/vector_add" 1024 2
  [ "$(fmt "vector_add.hubprof-3$suf")" = "$f" ] && ok || bad "profile -F $f: $(ls)"
  # under an MPI launcher (2 ranks): this rank's store in the folder, named with the same suffix
  expect 0 env OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 HUBPROF_HOSTNAME=nodeA "$HP" trace -q -F "$f" \
    -o "ranks-$f" -- "$EX/vector_add" 1024 2
  r=$(ls "ranks-$f")
  case $r in hubprof-nodeA-*-r1"$suf") [ "$(fmt "ranks-$f/$r")" = "$f" ] && ok || bad "rank store $r: $(fmt "ranks-$f/$r")" ;;
  *) bad "rank store of -F $f: '$r', want hubprof-nodeA-PID-r1$suf" ;;
  esac
done
# .log says log on -o for every command (before: rocpd unless -F log), and with -F rocpd it is a contradiction
expect 0 "$HP" trace -q -o t.log -- "$EX/vector_add" 1024 2
[ "$(fmt t.log)" = log ] && ok || bad "trace -o t.log: $(fmt t.log)"
expect 2 "$HP" merge -q -o m.log -F rocpd t.log
one_line_error "merge: -o m.log names a log store (.log), but -F rocpd was given"
[ ! -e m.log ] && ok || bad "a refused merge -o m.log wrote it"
expect 0 "$HP" convert -q t.log -o c.hplog # the older suffix still says log
[ "$(fmt c.hplog)" = log ] && ok || bad "convert -o c.hplog: $(fmt c.hplog)"
cd ..

echo "test_output_format: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
