#!/usr/bin/env bash
# Bounded memory in fact (issue 31): merging a log four times larger must not raise the peak RSS by the
# difference in the logs' sizes. The log reader maps its input and drops the pages it has passed (map_release,
# fmt_log.c); before it, every page of the mapped log stayed resident, and peak RSS grew with the input.
# usage: test_merge_rss.sh [HUBPROF]   (default build/hubprof)
# SPDX-License-Identifier: MIT
set -u
HP=${1:-build/hubprof}
GEN=build/examples/gen_logs
. "$(dirname "$0")/../lib.sh"
hp_test_env
need_built test_merge_rss "$HP" "$GEN"
if [ ! -x /usr/bin/time ]; then
  echo "test_merge_rss: skipped: no /usr/bin/time"
  echo "test_merge_rss: 0 passed, 0 failed"
  exit 0
fi
peak() { # N: peak RSS (KB) of merging one log of N dispatches into rocpd; its dispatches checked
  rm -rf "$T/L" "$T/o.db"
  "$GEN" "$T/L" 1 "$1" >/dev/null || bad "gen_logs $1 failed"
  size=$(stat -c %s "$T"/L/*.log)
  /usr/bin/time -f %M -o "$T/rss" "$HP" merge -q -o "$T/o.db" "$T"/L/*.log 2>"$T/err" || bad "merge of $1: $(cat "$T/err")"
  [ "$(sqlite3 "$T/o.db" 'select count(*) from rocpd_kernel_dispatch')" = "$1" ] && ok || bad "merge of $1: dispatches lost"
  rss=$(cat "$T/rss")
}
peak 300000
small=$size rss_small=$rss
peak 1200000
grow=$(((rss - rss_small) * 1024)) more=$((size - small))
[ "$grow" -lt $((more / 2)) ] && ok ||
  bad "peak RSS grew by $grow bytes for a log larger by $more (${rss_small} KB -> ${rss} KB): the mapped log stays resident"
echo "test_merge_rss: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
