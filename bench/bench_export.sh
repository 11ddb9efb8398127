#!/usr/bin/env bash
# Benchmark of `hubprof export`: wall time and peak memory (max RSS, /usr/bin/time) of each export format on one
# synthetic store of N dispatches (gen_logs, 2 counters per dispatch, rocpd), next to `hubprof analyze` on the
# same store; the runs interleaved round by round. usage: bench_export.sh DIR [DISPATCHES [ROUNDS]]
# SPDX-License-Identifier: MIT
set -euo pipefail
dir=${1:?usage: bench_export.sh DIR [DISPATCHES [ROUNDS]]}
n=${2:-1000000}
rounds=${3:-3}
B=${B:-build}
HP=$B/hubprof
mkdir -p "$dir"
rm -f "$dir"/*.db
"$B/examples/gen_logs" "$dir" 1 "$n" 2 1 rocpd >/dev/null
store=$(ls "$dir"/*.db | head -1)
echo "store: $n dispatches, 2 counter values each, rocpd, $(du -m "$store" | cut -f1) MB"
have_otf2=1
"$HP" export --help | grep -q otf2 || have_otf2=0
runs=(analyze perfetto chrome)
[ "$have_otf2" = 1 ] && runs+=(otf2)
res=$dir/results.txt
: >"$res"
for r in $(seq "$rounds"); do
  for what in "${runs[@]}"; do
    rm -rf "$dir/out"
    if [ "$what" = analyze ]; then
      /usr/bin/time -f "$what %e %M" -o "$dir/t" "$HP" analyze "$store" >/dev/null
    else
      /usr/bin/time -f "$what %e %M" -o "$dir/t" "$HP" export -q "$store" -o "$dir/out" --format "$what"
      size=$(du -sm "$dir/out" | cut -f1)
      echo "size $what $size" >>"$res"
    fi
    tail -1 "$dir/t" >>"$res"
  done
done
rm -rf "$dir/out"
python3 - "$res" "$n" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
n = int(sys.argv[2])
print(f"{'run':<10} {'wall s: median (min-max)':>28} {'dispatches/s':>13} {'peak RSS MB':>12} {'output MB':>10}")
for what in dict.fromkeys(r[0] for r in rows if r[0] != "size"):
    t = [float(r[1]) for r in rows if r[0] == what]
    m = [int(r[2]) / 1024 for r in rows if r[0] == what]
    size = [r[2] for r in rows if r[0] == "size" and r[1] == what]
    med = statistics.median(t)
    print(f"{what:<10} {med:>10.2f} ({min(t):.2f}-{max(t):.2f}) {'':>6} {n / med:>13,.0f} {max(m):>12.1f} "
          f"{size[0] if size else '-':>10}")
EOF
