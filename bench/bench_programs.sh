#!/usr/bin/env bash
# Real OpenCL programs nobody here wrote (issue 28's list: a CLBlast tuner, hashcat, clFFT's client, clpeak)
# run plain, under `hubprof trace` and under `hubprof sample`, interleaved, ROUNDS rounds: each mode on an
# emptied PoCL kernel cache (cold: PoCL compiles the program's kernels; hashcat's own kernel cache emptied
# too) and then again on the cache that run filled (warm). Per program and mode: wall time cold and warm,
# compile time (cold minus warm, of the medians; the tuner also reports its own), kernels compiled (shared
# objects PoCL's cache gained), store size, and the program's own figure (clpeak: its kernel launch latency;
# the tuner: its compile times summed); median and min-max.
# usage: bench_programs.sh [ROUNDS [COLD_ROUNDS [PROGRAM...]]]   PROGRAM: tuner hashcat clfft clpeak (default
# all; ROUNDS 3; COLD_ROUNDS: the first rounds that also run cold, default ROUNDS; hashcat's cold compile takes
# minutes: HASHCAT_COLD_ROUNDS, default 1). Installs the programs with apt-get when missing (clblast-utils,
# hashcat, clfft-client, clpeak: as root or through sudo). Short runs: the xdot tuner (6 configurations) at
# -n 4096 with 1 run each, `hashcat -b -m 0` (MD5 only), `clFFT-client -x 1024 -p 10`, `clpeak --kernel-latency`.
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start "${BENCH_DIR:-}"
HP=$PWD/$B/hubprof
rounds=${1:-3}
cold_rounds=${2:-$rounds}
shift 2 2>/dev/null || shift $#
progs=(tuner hashcat clfft clpeak)
[ $# -eq 0 ] || progs=("$@")

# the programs' Debian packages, installed when missing
declare -A pkg=([tuner]=clblast-utils [hashcat]=hashcat [clfft]=clfft-client [clpeak]=clpeak)
declare -A exe=([tuner]=clblast_tuner_xdot [hashcat]=hashcat [clfft]=clFFT-client [clpeak]=clpeak)
missing=()
for p in "${progs[@]}"; do
  [ -n "${pkg[$p]:-}" ] || {
    echo "bench_programs: unknown program '$p' (tuner, hashcat, clfft, clpeak)" >&2
    exit 2
  }
  command -v "${exe[$p]}" >/dev/null || missing+=("${pkg[$p]}")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  echo "bench_programs: installing ${missing[*]}" >&2
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# cmd PROGRAM: its command line (the program's files under $dir/home, hashcat's kernel cache included)
cmd() {
  case $1 in
  tuner) echo clblast_tuner_xdot -n 4096 -runs 1 ;;
  hashcat) echo hashcat -b -m 0 --force ;;
  clfft) echo clFFT-client -x 1024 -p 10 ;;
  clpeak) echo clpeak --kernel-latency ;;
  esac
}
# own PROGRAM FILE: the program's own figure from its output (- when none)
own() {
  case $1 in
  tuner) sed 's/\x1b\[[0-9;]*m//g' "$2" | grep -oE 'OK +[0-9]+ ms' | awk '{s += $2} END {print NR ? s : "-"}' ;;
  clpeak) grep -oE 'Kernel launch latency : [0-9.]+' "$2" | awk '{print $NF} END {if (!NR) print "-"}' | head -1 ;;
  *) echo - ;;
  esac
}
modes=(plain trace sample)
declare -A wall so kb fig
# one PROGRAM MODE TEMP: one run (TEMP cold or warm) on the mode's own caches
one() {
  local p=$1 m=$2 t=$3 c="$dir/$1-$2"
  if [ "$t" = cold ]; then rm -rf "$c" && mkdir -p "$c/kcache" "$c/home"; fi
  rm -f "$dir/out.db"
  local run
  read -ra run <<<"$(cmd "$p")"
  case $m in
  trace) run=("$HP" trace -q -f -o "$dir/out.db" -- "${run[@]}") ;;
  sample) run=("$HP" sample -q -f -o "$dir/out.db" -- "${run[@]}") ;;
  esac
  local before s e rc=0
  before=$(find "$c/kcache" -name '*.so' | wc -l)
  s=$(date +%s%N)
  (cd "$c/home" && HOME=$c/home XDG_CACHE_HOME=$c/home/cache XDG_DATA_HOME=$c/home/data \
    XDG_CONFIG_HOME=$c/home/config POCL_CACHE_DIR=$c/kcache "${run[@]}" >"$dir/run.out" 2>"$dir/run.err") || rc=$?
  e=$(date +%s%N)
  if [ $rc -ne 0 ]; then
    echo "bench_programs: $p $m $t: exit $rc: ${run[*]}: $(tail -n 3 "$dir/run.err")" >&2
    return 1
  fi
  wall[$p.$m.$t]+="$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.0f", (e - s) / 1e6 }') "
  so[$p.$m.$t]+="$(($(find "$c/kcache" -name '*.so' | wc -l) - before)) "
  kb[$p.$m.$t]+="$(if [ -f "$dir/out.db" ]; then echo $(($(stat -c %s "$dir/out.db") / 1024)); else echo 0; fi) "
  fig[$p.$m.$t]+="$(own "$p" "$dir/run.out") "
}
echo "load at the start: $(bench_load)"
for ((r = 1; r <= rounds; r++)); do
  for p in "${progs[@]}"; do
    cr=$cold_rounds
    [ "$p" = hashcat ] && cr=${HASHCAT_COLD_ROUNDS:-1}
    for m in "${modes[@]}"; do # interleaved: every mode once per round, cold (the first rounds) then warm
      if [ "$r" -le "$cr" ]; then one "$p" "$m" cold || exit 1; fi
      [ -d "$dir/$p-$m/kcache" ] || one "$p" "$m" cold || exit 1 # warm needs a filled cache
      one "$p" "$m" warm || exit 1
    done
  done
  echo "round $r done, load $(bench_load)"
done
echo "load at the end: $(bench_load)"
# med VALUES...: "median (min-max)", or - when none
med() {
  [ $# -gt 0 ] || {
    echo -
    return
  }
  case $1 in -) echo - && return ;; esac
  read -r m l h <<<"$(stats "$@")"
  printf '%s (%s-%s)' "$m" "$l" "$h"
}
for p in "${progs[@]}"; do
  echo
  echo "$p: $(cmd "$p")"
  printf '%-7s %-5s %5s %26s %22s %9s %8s %24s %14s\n' mode temp runs "wall ms median (min-max)" "vs plain" \
    "compile" "kernels" "store KiB" "own figure"
  for t in cold warm; do
    for m in "${modes[@]}"; do
      k=$p.$m.$t
      [ -n "${wall[$k]:-}" ] || continue
      # shellcheck disable=SC2086
      read -r wm _ _ <<<"$(stats ${wall[$k]})"
      # shellcheck disable=SC2086
      read -r pm _ _ <<<"$(stats ${wall[$p.plain.$t]})"
      comp=-
      if [ "$t" = cold ] && [ -n "${wall[$p.$m.warm]:-}" ]; then
        # shellcheck disable=SC2086
        read -r w2 _ _ <<<"$(stats ${wall[$p.$m.warm]})"
        comp=$(awk -v a="$wm" -v b="$w2" 'BEGIN { printf "%.0f ms", a - b }')
      fi
      # shellcheck disable=SC2086
      printf '%-7s %-5s %5s %26s %22s %9s %8s %24s %14s\n' "$m" "$t" "$(wc -w <<<"${wall[$k]}")" \
        "$(med ${wall[$k]})" "$(awk -v a="$wm" -v b="$pm" 'BEGIN { printf "%.2fx", a / b }')" "$comp" \
        "$(med ${so[$k]})" "$(med ${kb[$k]})" "$(med ${fig[$k]})"
    done
  done
done
