#!/usr/bin/env bash
# Benchmark of `hubprof export` and `hubprof report`: wall time and peak memory (max RSS, /usr/bin/time) of each
# export format and of the HTML report on one synthetic store of N dispatches (gen_logs, 2 counters per dispatch,
# rocpd), next to `hubprof analyze` on the same store; the runs interleaved round by round; median and min-max
# (bench/lib.sh stats). usage: [BENCH_EXPORT_RUNS="analyze perfetto ..."] bench_export.sh DIR [DISPATCHES [ROUNDS]]
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start "${1:?usage: bench_export.sh DIR [DISPATCHES [ROUNDS]]}"
n=${2:-1000000}
rounds=${3:-3}
HP=$B/hubprof
rm -f "$dir"/*.db
"$B/examples/gen_logs" "$dir" 1 "$n" 2 1 rocpd >/dev/null
store=$(ls "$dir"/*.db | head -1)
echo "store: $n dispatches, 2 counter values each, rocpd, $(du -m "$store" | cut -f1) MB"
have_otf2=1
"$HP" export --help | grep -q otf2 || have_otf2=0
runs=(analyze perfetto chrome)
[ "$have_otf2" = 1 ] && runs+=(otf2)
runs+=(report)
# BENCH_EXPORT_RUNS="analyze otf2 ...": a subset (the 10 M-dispatch run leaves out chrome's 8 GB of JSON)
[ -n "${BENCH_EXPORT_RUNS:-}" ] && read -r -a runs <<<"$BENCH_EXPORT_RUNS"
res=$dir/results.txt
: >"$res"
for r in $(seq "$rounds"); do
  for what in "${runs[@]}"; do
    rm -rf "$dir/out"
    if [ "$what" = analyze ]; then
      /usr/bin/time -f "$what %e %M" -o "$dir/t" "$HP" analyze "$store" >/dev/null
    elif [ "$what" = report ]; then
      /usr/bin/time -f "$what %e %M" -o "$dir/t" "$HP" report -q "$store" -o "$dir/out"
      echo "size $what $(du -sk "$dir/out" | cut -f1)" >>"$res"
    else
      /usr/bin/time -f "$what %e %M" -o "$dir/t" "$HP" export -q "$store" -o "$dir/out" --format "$what"
      echo "size $what $(du -sk "$dir/out" | cut -f1)" >>"$res"
    fi
    tail -1 "$dir/t" >>"$res"
  done
done
rm -rf "$dir/out"
printf '%-10s %28s %13s %28s %10s\n' run "wall s: median (min-max)" dispatches/s "peak RSS MB: median (min-max)" "output MB"
for what in "${runs[@]}"; do
  read -r med lo hi < <(stats $(awk -v w="$what" '$1 == w {print $2}' "$res"))
  read -r mmed mlo mhi < <(stats $(awk -v w="$what" '$1 == w {print $3 / 1024}' "$res"))
  size=$(awk -v w="$what" '$1 == "size" && $2 == w {printf "%.2f", $3 / 1024; exit}' "$res")
  rate=$(awk -v n="$n" -v t="$med" 'BEGIN {printf "%.0f", (t > 0) ? n / t : 0}')
  printf '%-10s %10s (%s-%s) %13s %12s (%s-%s) %10s\n' "$what" "$med" "$lo" "$hi" "$rate" "$mmed" "$mlo" "$mhi" "${size:--}"
done
