#!/usr/bin/env bash
# End-to-end tests of selective collection (hubprof trace|profile --kernel, --kernel-exclude, --dispatch-range,
# --region) under PoCL: exactly the selected dispatches stored (checked against the rules computed apart, by
# check_select.py), replay done only for them in every replay mode, the application's output unchanged, the
# count of the others in the store's metadata (summed over processes), bad filters refused before the
# application starts, and a malformed selection given to the collector directly ignored with one line.
# usage: test_select.sh [HUBPROF]   (from the repository root)
# SPDX-License-Identifier: MIT
set -u
ROOT=$PWD
HP=$(realpath "${1:-build/hubprof}")
EX=$ROOT/build/examples/ocl
. "$ROOT/tests/lib.sh"
hp_test_env
need_built test_select "$HP" "$EX/select_mix" "$EX/regions" "$EX/forking"
need_opencl test_select
CHECK=$ROOT/tests/collector/check_select.py
N=30
cd "$T"
"$EX/select_mix" $N >plain.out 2>plain.err || bad "select_mix alone: $(cat plain.err)"

# sel NAME MODE-ARGS... -- FILTER-ARGS...: run select_mix under hubprof with the filters; the output is the
# plain run's, the summary counts what was not selected, the store holds exactly the selected dispatches
sel() {
  local name=$1 mode=() filt=() extra=()
  shift
  while [ "$1" != "--" ]; do mode+=("$1"); shift; done
  shift
  filt=("$@")
  case " ${mode[*]} " in *" --counters "*) extra=(--passes 2) ;; esac
  case " ${mode[*]} " in *" multiplex "*) extra=() ;; esac
  HUBPROF_DEBUG=1 "$HP" "${mode[@]}" -o "$name.db" "${filt[@]}" -- "$EX/select_mix" $N >"$name.out" 2>"$name.err"
  local rc=$?
  [ $rc -eq 0 ] && ok || bad "$name: exit $rc: $(grep -v 'pid [0-9]*:' "$name.err" | head -3)"
  cmp -s plain.out "$name.out" && ok || bad "$name: output changed: $(cat "$name.out")"
  python3 "$CHECK" "$name.db" $N "${filt[@]}" "${extra[@]}" >"$name.py" 2>&1 && ok || bad "$name: $(tail -3 "$name.py")"
  grep -q "hubprof: [0-9]* dispatch\(es\)\? not selected" "$name.err" && ok || bad "$name: no 'not selected' line"
}
# nsel NAME: the number of dispatches selected, as check_select.py computes it
nsel() {
  python3 - "$@" <<'PY'
import sys
sys.path.insert(0, sys.argv[1]); import check_select as c
ap = __import__("argparse").ArgumentParser()
for o in ("--kernel", "--kernel-exclude", "--dispatch-range", "--region"): ap.add_argument(o, action="append", default=[])
print(len(c.selected(c.program(int(sys.argv[2])), ap.parse_args(sys.argv[3:]))))
PY
}

# 1. trace: each filter alone and together
sel t_kernel trace -- --kernel 'sm_(add|mix)'
sel t_anchor trace -- --kernel '^sm_mu' --kernel 'x$'
sel t_excl trace -- --kernel-exclude add --kernel-exclude '^sm_mi'
sel t_both trace -- --kernel 'sm_' --kernel-exclude mul
sel t_range trace -- --dispatch-range 5-12
sel t_open trace -- --dispatch-range 70- --dispatch-range -2 --dispatch-range 40
sel t_kr trace -- --kernel sm_add --dispatch-range 3-7
sel t_perk trace -- --dispatch-range kernel:2-4
sel t_mixr trace -- --dispatch-range 10-60 --dispatch-range kernel:5-
sel t_region trace -- --region hot
sel t_region2 trace -- --region iter --kernel-exclude mix --dispatch-range kernel:-6
sel t_none trace -- --kernel nothing_matches
for fmt in log parquet; do
  "$HP" trace -q -F $fmt -o "t.$fmt" --kernel sm_mul -- "$EX/select_mix" $N >/dev/null 2>"t.$fmt.err" || bad "-F $fmt: $(cat "t.$fmt.err")"
  python3 "$CHECK" "t.$fmt" $N --kernel sm_mul >t.py 2>&1 && ok || bad "-F $fmt: $(tail -3 t.py)"
done
# no filter: every dispatch, no count line, no metadata
"$HP" trace -o all.db -- "$EX/select_mix" $N >all.out 2>all.err
[ "$(sqlite3 all.db 'select count(*) from rocpd_kernel_dispatch')" = 81 ] && ok || bad "unfiltered trace"
grep -q "not selected" all.err && bad "unfiltered trace printed a selection line" || ok

# 2. profile, kernel replay: replayed only the selected (the collector's own summary), each in 2 passes
C2=(--counters task-clock,page-faults --max-counters-per-pass 1)
for f in "--kernel sm_mul" "--region iter --dispatch-range 10-20" "--dispatch-range kernel:3-4 --kernel-exclude add"; do
  # shellcheck disable=SC2086
  sel p_kernel profile "${C2[@]}" -- $f
  # shellcheck disable=SC2086
  k=$(nsel "$ROOT/tests/collector" $N $f)
  grep -q "pid [0-9]*: $k dispatches replayed in $((2 * k)) passes" p_kernel.err && ok ||
    bad "kernel replay with $f: not $k dispatches replayed: $(grep replayed p_kernel.err)"
  rm -f p_kernel.db
done
# 3. application replay (one run per pass): every run collects the same selection
sel p_app profile "${C2[@]}" --replay application -- --kernel sm_add --dispatch-range 2-9
[ "$(grep -c "pid [0-9]*: 8 dispatches replayed in 8 passes" p_app.err)" = 2 ] && ok ||
  bad "application replay: $(grep replayed p_app.err)"
# 4. iteration multiplexing: only the selected measure a pass
sel p_mux profile "${C2[@]}" --replay multiplex -- --region hot --kernel-exclude add
grep -q "pid [0-9]*: 20 dispatches measured one pass each" p_mux.err && ok ||
  bad "multiplexing: $(grep measured p_mux.err)"

# 5. --region on several threads (examples/ocl/regions.c: every dispatch inside worker > step > enqueue)
"$HP" trace -q -o rw.db --region step -- "$EX/regions" 3 5 >/dev/null 2>rw.err || bad "regions --region step"
[ "$(sqlite3 rw.db 'select count(*) from rocpd_kernel_dispatch')" = 15 ] && ok || bad "--region step: not 15"
"$HP" trace -o rn.db --region nowhere -- "$EX/regions" 3 5 >/dev/null 2>rn.err || bad "regions --region nowhere"
[ "$(sqlite3 rn.db 'select count(*) from rocpd_kernel_dispatch')" = 0 ] && ok || bad "--region nowhere: dispatches"
grep -q "hubprof: 15 dispatches not selected" rn.err && ok || bad "--region nowhere: $(cat rn.err)"
[ "$(sqlite3 rn.db "select count(*) from regions where name = 'step'")" = 15 ] && ok || bad "--region nowhere: regions"

# 6. processes: the count is summed over the forked children's logs
POCL_DEVICES=basic "$HP" trace -q -o fk.db --kernel-exclude parent -- "$EX/forking" 3 late >/dev/null 2>fk.err ||
  bad "forking: $(cat fk.err)"
python3 - fk.db >fk.py 2>&1 <<'PY' && ok || bad "forking: $(tail -2 fk.py)"
import sys, hubprof
with hubprof.open(sys.argv[1]) as s:
    n = dict(zip(s.table("kernel_symbol")["id"], s.table("kernel_symbol")["name"]))
    k = sorted(n[i] for i in s.table("dispatch")["kernel_id"])
    assert k == ["child_inc"] * 3 + ["late_inc"] * 3, k
    assert s.metadata()["dispatches_not_selected"] == "3", s.metadata()
    assert s.metadata()["select_kernel_exclude"] == "parent", s.metadata()
PY
# and over the inputs of hubprof merge
"$HP" merge -q -o m.db t_kernel.db t_excl.db >/dev/null 2>m.err || bad "merge: $(cat m.err)"
a=$(python3 -c 'import sys, hubprof; print(sum(int(hubprof.open(p).metadata()["dispatches_not_selected"]) for p in sys.argv[1:]))' t_kernel.db t_excl.db)
b=$(python3 -c 'import sys, hubprof; print(hubprof.open(sys.argv[1]).metadata().get("dispatches_not_selected"))' m.db)
[ "$a" = "$b" ] && ok || bad "merge: dispatches_not_selected $b, want $a"
c=$(python3 -c 'import sys, hubprof; print(hubprof.merge(sys.argv[1:], "pm.db")["not_selected_dispatches"])' t_kernel.db t_excl.db)
[ "$a" = "$c" ] && ok || bad "Python merge: not_selected_dispatches $c, want $a"

# 7. bad filters: one usage error naming the option, exit 2, the application never started, nothing written
refused() {
  local cmd=$1 msg=$2
  shift 2
  rm -f ran out.db
  local pre=()
  [ "$cmd" = profile ] && pre=(--counters task-clock)
  expect 2 "$HP" "$cmd" "${pre[@]}" -o out.db "$@" -- touch ran
  one_line_error "$msg"
  [ ! -e ran ] && [ ! -e out.db ] && [ -z "$(ls -A . | grep -i 'hubprof-logs')" ] && ok ||
    bad "$cmd $*: the application ran or something was written"
}
for cmd in trace profile; do
  refused $cmd "--kernel '[': not a valid POSIX extended regular expression" --kernel '['
  refused $cmd "--kernel-exclude 'a(': not a valid" --kernel sm --kernel-exclude 'a('
  refused $cmd "option '--kernel' needs a value" --kernel ''
  refused $cmd "option '--region=' needs a value" --region=
  refused $cmd "--kernel 'a...': a pattern cannot hold a newline" --kernel $'a\nb'
  refused $cmd "--dispatch-range '5-3': the start is after the end" --dispatch-range 5-3
  refused $cmd "--dispatch-range 'x-y': not a whole number" --dispatch-range x-y
  refused $cmd "--dispatch-range '-3-5': a negative number" --dispatch-range=-3-5
  refused $cmd "--dispatch-range '3--5': a negative number" --dispatch-range 3--5
  refused $cmd "--dispatch-range '99999999999999999999': a number too large" --dispatch-range 99999999999999999999
  refused $cmd "--dispatch-range '0': dispatches are numbered from 1" --dispatch-range 0
  refused $cmd "--dispatch-range 'kernel:': empty" --dispatch-range kernel:
  refused $cmd "--dispatch-range '-': both ends are missing" --dispatch-range=-
done
many=()
for i in $(seq 65); do many+=(--kernel "k$i"); done
refused trace "--kernel given 65 times: at most 64" "${many[@]}"

# 8. the collector alone, given a malformed selection: one line, every dispatch collected, output unchanged
for v in "HUBPROF_KERNEL=[" "HUBPROF_DISPATCH_RANGE=5-3" "HUBPROF_REGION=" "HUBPROF_KERNEL_EXCLUDE=a
"; do
  rm -rf logs
  env OPENCL_LAYERS="$HUBPROF_COLLECTOR" HUBPROF_OUTPUT_DIR="$T/logs" "$v" "$EX/select_mix" $N >c.out 2>c.err
  rc=$?
  [ $rc -eq 0 ] && cmp -s plain.out c.out && ok || bad "collector with $v: exit $rc, $(cat c.out)"
  if [ "${v#HUBPROF_REGION=}" = "" ]; then # an empty value is "unset": no selection, silent
    [ ! -s c.err ] && ok || bad "collector with $v: $(cat c.err)"
  else
    [ "$(wc -l <c.err)" = 1 ] && grep -q "dispatch selection disabled (every dispatch is collected)" c.err && ok ||
      bad "collector with $v: $(cat c.err)"
  fi
  python3 -c 'import sys, glob, hubprof; s = hubprof.open(glob.glob(sys.argv[1] + "/*.log")[0]); assert len(s.table("dispatch")) == 81; assert "dispatches_not_selected" not in s.metadata()' \
    "$T/logs" 2>c.py && ok || bad "collector with $v: $(tail -2 c.py)"
done

echo "test_select: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
