#!/usr/bin/env bash
# ABI test of libhubprof: its exports equal src/hub/libhubprof.symbols (a new export is added there on
# purpose), soname and file name follow VERSION, every public declaration is HP_API, headers compile alone;
# the collector's exports equal tests/abi/collector.symbols; libhubprof needs no capstone, libdw, libelf or LLVM.
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
LIST=src/hub/libhubprof.symbols
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/lib.sh
VERSION=$(cat VERSION)
SOVERSION=${VERSION%%.*}
LIB=$B/libhubprof.so.$VERSION
if [ ! -f "$LIB" ]; then
  echo "test_abi: $LIB: missing (run make all first)" >&2
  echo "test_abi: 0 passed, 1 failed"
  exit 1
fi

# 1. the exported symbols are exactly the checked-in list, each in the version node HUBPROF_<SOVERSION>
nm -D --defined-only "$LIB" | awk '{print $3}' | grep -v "^HUBPROF_" >"$T/versioned"
sed 's/@.*//' "$T/versioned" | LC_ALL=C sort >"$T/exported"
grep -v '^#' "$LIST" | LC_ALL=C sort >"$T/listed"
if cmp -s "$T/exported" "$T/listed"; then ok; else
  bad "exports differ from $LIST (add a new export there on purpose; '>' exported only, '<' listed only):
$(diff "$T/listed" "$T/exported" | grep '^[<>]')"
fi
if grep -qv "@@HUBPROF_$SOVERSION\$" "$T/versioned"; then
  bad "exports outside version node HUBPROF_$SOVERSION: $(grep -v "@@HUBPROF_$SOVERSION\$" "$T/versioned" | head -5)"
else ok; fi
[ "$(wc -l <"$T/exported")" -gt 40 ] && ok || bad "only $(wc -l <"$T/exported") exports"

# 2. soname libhubprof.so.<major>; libhubprof.so and libhubprof.so.<major> link to the versioned file
soname=$(readelf -d "$LIB" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
[ "$soname" = "libhubprof.so.$SOVERSION" ] && ok || bad "soname '$soname', want libhubprof.so.$SOVERSION"
for l in libhubprof.so "libhubprof.so.$SOVERSION"; do
  [ -L "$B/$l" ] && [ "$(readlink "$B/$l")" = "libhubprof.so.$VERSION" ] && ok || bad "$B/$l: not a link to libhubprof.so.$VERSION"
done
# the library names every library it needs (-z defs): nothing undefined beyond its DT_NEEDED
if ldd -r "$LIB" 2>&1 | grep -q "undefined symbol"; then bad "undefined symbols: $(ldd -r "$LIB" 2>&1 | grep undefined | head -3)"; else ok; fi

# 3. every function declared in the public headers carries HP_API, and the HP_API ones are the exports
decl='[A-Za-z][A-Za-z0-9_ *]*[ *](hp|ha)_[a-z0-9_]+\('
bare=$(grep -HnE "^$decl" include/hubprof/*.h | grep -vE ':(HP_API |typedef |static inline )') # inline: not exported
[ -z "$bare" ] && ok || bad "public declarations without HP_API: $bare"
grep -hoE "^HP_API $decl" include/hubprof/*.h | grep -oE '(hp|ha)_[a-z0-9_]+\($' | tr -d '(' | LC_ALL=C sort >"$T/declared"
if cmp -s "$T/declared" "$T/exported"; then ok; else
  bad "HP_API declarations differ from exports ('<' declared only, '>' exported only): $(diff "$T/declared" "$T/exported" | grep '^[<>]')"
fi

# 4. each public header compiles alone, as C11 and C99 with -pedantic, and as C++ where a compiler is there
for h in include/hubprof/*.h; do
  for std in c11 c99; do
    if printf '#include "hubprof/%s"\nint main(void) { return 0; }\n' "$(basename "$h")" |
      ${CC:-cc} -std=$std -pedantic -Wall -Wextra -Werror -Iinclude -x c -c - -o "$T/h.o" 2>"$T/err"; then ok; else
      bad "$h does not compile alone as $std: $(head -3 "$T/err")"
    fi
  done
  if command -v c++ >/dev/null; then
    printf '#include "hubprof/%s"\nint main() { return 0; }\n' "$(basename "$h")" |
      c++ -Wall -Wextra -Werror -Iinclude -x c++ -c - -o "$T/h.o" 2>"$T/err" && ok ||
      bad "$h does not compile as C++: $(head -3 "$T/err")"
  fi
done

# 5. the Python bindings call exported functions only
grep -hoE '_proto\("[a-z_0-9]+"' python/hubprof/*.py | sed 's/.*"\(.*\)"/\1/' | LC_ALL=C sort -u >"$T/python"
missing=$(LC_ALL=C comm -23 "$T/python" "$T/exported")
[ -s "$T/python" ] && [ -z "$missing" ] && ok || bad "python/hubprof calls functions libhubprof does not export: $missing"

# 6. the collector exports exactly tests/abi/collector.symbols: its runtime providers' entry points and the
# in-application API; the core, its hub subset and the counters archive it links stay hidden
COLL=$B/libhubprof_collector.so
if [ -f "$COLL" ]; then
  nm -D --defined-only "$COLL" | awk '{print $3}' | LC_ALL=C sort >"$T/coll_exported"
  grep -v '^#' tests/abi/collector.symbols | LC_ALL=C sort >"$T/coll_listed"
  if cmp -s "$T/coll_exported" "$T/coll_listed"; then ok; else
    bad "collector exports differ from tests/abi/collector.symbols ('>' exported only, '<' listed only):
$(diff "$T/coll_listed" "$T/coll_exported" | grep '^[<>]')"
  fi
else
  bad "$COLL: missing (run make all first)"
fi

# 7. a lean reading library: libhubprof needs SQLite, zstd, snappy, zlib and libc alone; disassembly and line
# tables (capstone, libdw, libelf, LLVM) are in the code plugin, which exports its one entry
needed=$(readelf -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
[ -n "$needed" ] && ok || bad "readelf -d $LIB shows no NEEDED library"
heavy=$(printf '%s\n' $needed | grep -iE 'capstone|libdw|libelf|llvm')
[ -z "$heavy" ] && ok || bad "libhubprof needs $(echo $heavy) (the code plugin's, src/analysis/code_plugin.h)"
CODE=$B/libhubprof_code.so
if [ -f "$CODE" ]; then
  readelf -d "$CODE" | grep -q 'NEEDED.*libcapstone' && ok || bad "$CODE: does not need capstone"
  [ "$(nm -D --defined-only "$CODE" | awk '{print $3}' | tr '\n' ' ')" = "hubprof_code_api " ] && ok ||
    bad "$CODE exports $(nm -D --defined-only "$CODE" | awk '{print $3}' | head -5 | tr '\n' ' '), want hubprof_code_api"
else
  bad "$CODE: missing (run make all first)"
fi

echo "test_abi: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
