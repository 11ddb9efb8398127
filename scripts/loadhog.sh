#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs a command beside a CPU hog that keeps the 1-minute load average at or above a target (issue 28's
# "make test passes at load 10"); logs the load every 30 s. Usage: scripts/loadhog.sh LOAD LOGFILE -- CMD...
set -u
if [ $# -lt 4 ] || [ "$3" != "--" ]; then
    echo "usage: $0 LOAD LOGFILE -- COMMAND [ARG...]" >&2
    exit 2
fi
target=$1 log=$2
shift 3
case $target in '' | *[!0-9]*)
    echo "$0: LOAD must be a whole number, not '$target'" >&2
    exit 2
    ;;
esac
: >"$log" || exit 2

hogs=()
spawn() { (exec bash -c 'while :; do :; done') & hogs+=($!); }
reap() {
    local n=${#hogs[@]}
    [ "$n" -gt 0 ] || return
    kill "${hogs[$((n - 1))]}" 2>/dev/null
    unset "hogs[$((n - 1))]"
}
stop_all() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null; done; }

# The controller: every 5 s compare the 1-minute load with the target and add or remove one busy loop.
# The load average lags by about a minute, so the hog count is capped at 4 × target to keep it from running
# away while the average catches up.
(
    trap 'stop_all; exit 0' TERM INT
    tick=0
    while :; do
        read -r l1 l5 l15 _ </proc/loadavg
        whole=${l1%%.*}
        if [ "$whole" -lt "$target" ] && [ "${#hogs[@]}" -lt $((4 * target)) ]; then
            spawn
        elif [ "$whole" -ge $((target + 3)) ] && [ "${#hogs[@]}" -gt 0 ]; then
            reap
        fi
        if [ $((tick % 6)) -eq 0 ]; then
            echo "$(date +%T) load $l1 $l5 $l15 hogs ${#hogs[@]}" >>"$log"
        fi
        tick=$((tick + 1))
        sleep 5
    done
) &
ctl=$!

"$@"
rc=$?
kill -TERM "$ctl" 2>/dev/null
wait "$ctl" 2>/dev/null
awk -v t="$target" '{ n++; s += $3; if (n == 1 || $3 < lo) lo = $3; if ($3 > hi) hi = $3; if ($3 >= t) k++ }
     END { if (n) printf "loadhog: 1-minute load, %d readings: mean %.1f, min %s, max %s; %d at or above %s\n", n, s / n, lo, hi, k, t }' \
    "$log" >&2
exit $rc
