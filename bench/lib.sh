# Shared by the benchmark scripts (source it): the figures they print from a list of measurements.
# SPDX-License-Identifier: MIT
# stats VALUES...: "median min max" of the values, one decimal each
stats() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {
  m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f %.1f %.1f\n", m, v[1], v[NR] }'; }
# stats_row WIDTH BASE LABEL VALUES...: LABEL padded to WIDTH, the values' median, min-max, the median minus
# BASE and the median over BASE (a baseline measured in the same rounds)
stats_row() {
  local width=$1 base=$2 label=$3 m l h
  shift 3
  read -r m l h <<<"$(stats "$@")"
  awk -v w="$width" -v L="$label" -v m="$m" -v l="$l" -v h="$h" -v p="$base" \
    'BEGIN { printf "%-" w "s %9.1f %17s %9.1f %7.2fx\n", L, m, l "-" h, m - p, m / p }'
}
