# Shared by the benchmark scripts (source it): the figures they print from a list of measurements.
# SPDX-License-Identifier: MIT
# stats VALUES...: "median min max" of the values, one decimal each
stats() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {
  m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f %.1f %.1f\n", m, v[1], v[NR] }'; }
