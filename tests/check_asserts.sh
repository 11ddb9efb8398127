#!/usr/bin/env bash
# Asserts are live where they should be (docs/development.md, "Asserts"): every object of a source file with
# an assert() references __assert_fail in the sanitizer build (build/san) and does not in the release build
# (NDEBUG); and a program that breaks hu_idmap's invariant is stopped by the assert with the sanitizer
# objects and runs through with the release ones. usage: check_asserts.sh [BUILD]
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/lib.sh

# the library's sources that assert something (comments and static asserts do not count)
srcs=$(grep -rlE '^[^/*]*[^_a-z]assert\(' src --include='*.c' | grep -v '^src/collector/' | sort)
[ -n "$srcs" ] && ok || bad "no source file under src/ asserts anything"
nsan=0
for s in $srcs; do
  o=${s%.c}.o
  if [ -f "$B/$o" ]; then
    if nm -u "$B/$o" | grep -q '__assert_fail'; then bad "$B/$o: asserts compiled in a release object (no NDEBUG)"; else ok; fi
  else
    bad "$B/$o missing (make all)"
  fi
  if [ -f "$B/san/$o" ]; then
    nsan=$((nsan + 1))
    if nm -u "$B/san/$o" | grep -q '__assert_fail'; then ok; else bad "$B/san/$o: asserts compiled out of a sanitizer object"; fi
  fi
done
[ "$nsan" -gt 0 ] && ok || bad "no sanitizer object found under $B/san (make san)"

# the invariant check trips in the sanitizer build, and not in the release build
SANF="-fsanitize=address,undefined -fno-omit-frame-pointer"
if [ -f "$B/san/src/common/hu_map.o" ]; then
  cc -std=c11 -g $SANF tests/asserts/trip_idmap.c "$B/san/src/common/hu_map.o" -o "$T/trip_san" 2>"$T/cc" ||
    bad "cannot build the trip program against $B/san: $(head -3 "$T/cc")"
  (ASAN_OPTIONS=detect_leaks=0 "$T/trip_san" >"$T/out" 2>"$T/err") 2>/dev/null # no "Aborted" from the shell
  rc=$?
  [ $rc -ne 0 ] && grep -q "Assertion .*MAP_OK" "$T/err" && ! grep -q returned "$T/out" && ok ||
    bad "sanitizer build: the broken map was not stopped by its assert (exit $rc): $(head -3 "$T/err")"
fi
cc -std=c11 -g tests/asserts/trip_idmap.c "$B/src/common/hu_map.o" -o "$T/trip_rel" 2>"$T/cc" ||
  bad "cannot build the trip program against $B: $(head -3 "$T/cc")"
"$T/trip_rel" >"$T/out" 2>"$T/err" && grep -q "returned 0" "$T/out" && ok ||
  bad "release build: the assert is live (NDEBUG missing): $(head -3 "$T/err")"
echo "check_asserts: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
