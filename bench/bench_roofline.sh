#!/usr/bin/env bash
# Roofline ceilings next to clpeak (issue 26 part 4): `hubprof roofline -o STORE` (the ceilings as stored,
# read back with `hubprof analyze --roofline`) and `clpeak
# --compute-sp --global-bandwidth` run interleaved on the same OpenCL device, ROUNDS rounds; for fp32 (GFLOP/s:
# clpeak's best vector width) and dram (GB/s: clpeak's best global-memory bandwidth) prints the median and
# min-max of each and the ratio of the medians (hubprof over clpeak; the issue asks for at least 0.90). The
# cache levels (l1, l2, l3: clpeak has none) follow: the median and min-max of the rounds that kept the level,
# how many did, and the median over dram's median.
# usage: bench_roofline.sh [ROUNDS] [DEVICE-GLOB]   (default 3 rounds, the first OpenCL device)
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start
HP=${HP:-$B/hubprof}
rounds=${1:-3}
glob=${2:-*}
command -v clpeak >/dev/null || {
  echo "bench_roofline: clpeak is not installed (apt-get install clpeak; scripts/deps.sh)" >&2
  exit 1
}
echo "load before: $(bench_load)"
for i in $(seq "$rounds"); do # interleaved: hubprof, then clpeak
  # the ceilings as stored (-o) and read back by analyze --roofline (its first table), as a profile keeps them
  "$HP" roofline -q --format csv --device "$glob" -f -o "$dir/ceil.db" >"$dir/hp.csv"
  "$HP" analyze --roofline --format csv "$dir/ceil.db" >"$dir/stored.csv"
  awk -F, '$2 == "fp32" {print $3; exit}' "$dir/stored.csv" >>"$dir/hp_fp32"
  awk -F, '$2 == "dram" {print $3; exit}' "$dir/stored.csv" >>"$dir/hp_dram"
  for c in l1 l2 l3 l4; do # a level the run did not keep (not told apart) is no row of the stored ceilings
    grep -q "^[^,]*,$c," "$dir/hp.csv" && touch "$dir/lv_$c"
    awk -F, -v c=$c '$2 == c {print $3; exit}' "$dir/stored.csv" >>"$dir/hp_$c"
  done
  clpeak --compute-sp --global-bandwidth >"$dir/clpeak.txt" 2>&1
  # the best vector width of each section, on the first device clpeak lists
  awk '/Global memory bandwidth/ {s = "dram"; next} /compute \(GFLOPS\)/ {s = "fp32"; next}
       /^ *$/ {if (s) done[s] = 1; s = ""; next}
       s && !done[s] && / : / {v = $NF + 0; if (v > best[s]) best[s] = v}
       END {print best["fp32"] + 0, best["dram"] + 0}' "$dir/clpeak.txt" >"$dir/cp"
  read -r f d <"$dir/cp"
  echo "$f" >>"$dir/cp_fp32"
  echo "$d" >>"$dir/cp_dram"
  echo "round $i: hubprof fp32 $(tail -1 "$dir/hp_fp32") dram $(tail -1 "$dir/hp_dram") (caches:" \
    "$(awk -F, 'NR > 1 && $2 ~ /^l[1-4]$/ {printf "%s %s ", $2, ($3 == "" ? "-" : $3)}' "$dir/hp.csv"));" \
    "clpeak fp32 $f dram $d"
done
echo "load after: $(bench_load)"
echo "device: $(awk -F, 'NR == 2 {print $1}' "$dir/hp.csv")"
printf '%-16s %9s %17s %9s %17s %7s\n' ceiling hubprof min-max clpeak min-max ratio
for c in fp32 dram; do
  unit=GFLOP/s
  [ $c = dram ] && unit=GB/s
  read -r hm hl hh <<<"$(stats $(cat "$dir/hp_$c"))"
  read -r cm cl ch <<<"$(stats $(cat "$dir/cp_$c"))"
  awk -v L="$c ($unit)" -v hm="$hm" -v hr="$hl-$hh" -v cm="$cm" -v cr="$cl-$ch" \
    'BEGIN { printf "%-16s %9.1f %17s %9.1f %17s %6.2fx\n", L, hm, hr, cm, cr, (cm > 0 ? hm / cm : 0) }'
done
read -r dm _ <<<"$(stats $(cat "$dir/hp_dram"))"
for c in l1 l2 l3 l4; do
  [ -e "$dir/lv_$c" ] || continue
  if [ -s "$dir/hp_$c" ]; then
    read -r hm hl hh <<<"$(stats $(cat "$dir/hp_$c"))"
    awk -v L="$c (GB/s)" -v hm="$hm" -v hr="$hl-$hh" -v k="$(wc -l <"$dir/hp_$c")" -v n="$rounds" -v dm="$dm" \
      'BEGIN { printf "%-16s %9.1f %17s %9s %17s %6.2fx of dram, kept in %d of %d rounds\n", L, hm, hr, "-",
               "-", (dm > 0 ? hm / dm : 0), k, n }'
  else
    printf '%-16s %9s %17s %9s %17s   not told apart from the level outside it in any of %d rounds\n' \
      "$c (GB/s)" - - - - "$rounds"
  fi
done
