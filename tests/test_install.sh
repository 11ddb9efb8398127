#!/usr/bin/env bash
# `make install` into a scratch DESTDIR: the installed tree is complete, an outside program builds against it
# with `pkg-config --cflags --libs hubprof` alone and writes/reads a store, the installed CLI traces an example.
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/.."
SRC=$PWD
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/lib.sh
VERSION=$(cat VERSION)
SOVERSION=${VERSION%%.*}
ROOT=$T/root
PREFIX=/opt/hubprof-test # a prefix nothing else knows: only what was installed can be found
P=$ROOT$PREFIX
hp_clean_env # nothing of the build or the caller: only what was installed

# 1. the installed tree
if make -s install DESTDIR="$ROOT" PREFIX="$PREFIX" >"$T/make.out" 2>&1; then ok; else
  bad "make install: $(tail -5 "$T/make.out")"
  echo "test_install: $pass passed, $fail failed"
  exit 1
fi
for f in bin/hubprof "lib/libhubprof.so.$VERSION" lib/hubprof/libhubprof_collector.so lib/hubprof/libhubprof_code.so \
  include/hubprof/hub.h include/hubprof/parquet.h \
  include/hubprof/analysis.h include/hubprof/export.h lib/pkgconfig/hubprof.pc share/hubprof/metrics/generic.metrics \
  share/hubprof/devices/cpu-perf.device; do
  [ -f "$P/$f" ] && ok || bad "$P/$f: not installed"
done
[ "$(readlink "$P/lib/libhubprof.so")" = "libhubprof.so.$SOVERSION" ] && ok || bad "libhubprof.so link"
[ "$(readlink "$P/lib/libhubprof.so.$SOVERSION")" = "libhubprof.so.$VERSION" ] && ok || bad "soname link"
# nothing of the source tree or the build folder leaks into the installed files
if grep -rqF "$SRC" "$P/lib/pkgconfig" "$P/include"; then bad "source path in the installed tree"; else ok; fi
[ -z "$(find "$ROOT" -path "$P" -prune -o -type f -print)" ] && ok || bad "files outside the prefix"
for h in "$P"/include/hubprof/*.h; do
  cmp -s "$h" "include/hubprof/$(basename "$h")" && ok || bad "$h differs from the source"
done
[ "$(ls "$P"/include/hubprof | wc -l)" = "$(ls include/hubprof | wc -l)" ] && ok || bad "headers installed"

# 2. an outside program, built with pkg-config alone, from a folder outside the source tree
export PKG_CONFIG_SYSROOT_DIR=$ROOT PKG_CONFIG_LIBDIR=$P/lib/pkgconfig
unset PKG_CONFIG_PATH
[ "$(pkg-config --modversion hubprof)" = "$VERSION" ] && ok || bad "pkg-config --modversion"
flags=$(pkg-config --cflags --libs hubprof | xargs) # (without the trailing blank)
[ "$flags" = "-I$P/include -L$P/lib -lhubprof" ] && ok || bad "pkg-config flags: $flags"
mkdir "$T/app" && cd "$T/app" || exit 1
cat >app.c <<'C'
#include <hubprof/analysis.h>
#include <hubprof/hub.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
  hp_store *s = NULL;
  if (hp_store_open(argv[1], "rocpd", HP_CREATE, &s) != HP_OK) return 1;
  hp_node n = {sizeof n, 1, "host", "m1", "Linux", "6", "#1", "x86_64"};
  if (hp_write_node(s, &n) != HP_OK || hp_write_metadata(s, "app", "outside") != HP_OK) return 2;
  if (hp_store_close(s) != HP_OK) return 3;
  if (hp_store_open(argv[1], NULL, HP_READ, &s) != HP_OK) return 4;
  uint64_t count = 0;
  const char *m = hp_store_metadata(s, "app");
  if (hp_store_count(s, HP_TABLE_NODE, &count) != HP_OK || count != 1 || !m || strcmp(m, "outside")) return 5;
  ha_query q = {.size = sizeof q, .group = HA_BY_KERNEL};
  ha_result *r = NULL;
  if (ha_run(s, &q, &r) != HP_OK) return 6;
  printf("%s %s %zu rows %d\n", hp_version(), hp_store_format(s), ha_result_nrows(r), argc);
  ha_result_free(r);
  return hp_store_close(s) == HP_OK ? 0 : 7;
}
C
if ${CC:-cc} -std=c11 -Wall -Wextra -Werror app.c $flags -o app 2>"$T/err"; then ok; else bad "build: $(head -5 "$T/err")"; fi
readelf -d app 2>/dev/null | grep -q "NEEDED.*\[libhubprof.so.$SOVERSION\]" && ok || bad "app does not need libhubprof.so.$SOVERSION"
export LD_LIBRARY_PATH=$P/lib
out=$(./app t.db 2>&1)
[ "$out" = "$VERSION rocpd 0 rows 2" ] && ok || bad "app run: '$out'"
LD_LIBRARY_PATH=$P/lib ldd ./app | grep -qF "$P/lib/libhubprof.so.$SOVERSION" && ok || bad "app loads another libhubprof"
[ "$(sqlite3 t.db "select count(*) from rocpd_info_node")" = 1 ] 2>/dev/null && ok || bad "the app's store"
# internal functions are not reachable from outside
printf '#include <hubprof/hub.h>\nint hp_set_error(hp_store *, hp_status, const char *, ...);\n%s\n' \
  'int main(void) { return hp_set_error(0, HP_OK, "x") == HP_OK; }' >internal.c
if ${CC:-cc} -std=c11 internal.c $flags -o internal 2>/dev/null; then bad "an internal function links from outside"; else ok; fi
unset LD_LIBRARY_PATH

# 3. the installed CLI traces a bundled example with its installed collector and data files
if ! clinfo -l 2>/dev/null | grep -q Device; then
  echo "test_install: CLI trace skipped: no OpenCL device (install pocl-opencl-icd)"
else
  if "$P/bin/hubprof" trace -q -o va.db -- "$SRC/build/examples/ocl/vector_add" 1024 3 >va.out 2>va.err; then ok; else
    bad "installed hubprof trace: $(head -3 va.err)"
  fi
  [ "$(sqlite3 va.db 'select count(*) from rocpd_kernel_dispatch' 2>/dev/null)" = 3 ] && ok || bad "trace: dispatch rows"
  [ "$(sqlite3 va.db "select value from rocpd_metadata where tag='tool_version'" 2>/dev/null)" = "$VERSION" ] && ok ||
    bad "trace: tool_version"
fi
# the installed CLI finds the installed data files (share/hubprof beside bin/)
"$P/bin/hubprof" list metrics --format csv >metrics.csv 2>metrics.err
grep -qF "$P/share/hubprof/metrics/generic.metrics" metrics.csv && ok ||
  bad "installed hubprof list metrics: not from $P/share: $(head -c 300 metrics.csv metrics.err)"
"$P/bin/hubprof" list devices --format csv >devices.csv 2>&1
grep -qF "$P/share/hubprof/devices/cpu-perf.device" devices.csv && ok ||
  bad "installed hubprof list devices: not from $P/share: $(head -c 300 devices.csv)"

# 4. uninstall leaves nothing behind
cd "$SRC" || exit 1
make -s uninstall DESTDIR="$ROOT" PREFIX="$PREFIX" >/dev/null 2>&1
left=$(find "$ROOT" -type f -o -type l)
[ -z "$left" ] && ok || bad "left after uninstall: $left"

echo "test_install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
