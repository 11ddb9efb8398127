/* Finding one of hubprof's separately built parts (the collector, the code plugin, the LLVM plugin) beside
 * the program or library that holds the caller: build/, build/san/, an installed PREFIX/bin or PREFIX/lib. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_PART_H
#define HUBPROF_HU_PART_H

#include <stddef.h>

/* The path of part `file` (a file name such as "libhubprof_code.so") in out (n bytes): $env when it is set
 * and not empty (taken as it is), else the first readable one of DIR/file, DIR/hubprof/file,
 * DIR/../lib/hubprof/file, DIR/../lib/file and DIR/../file, DIR the folder of the object holding this code
 * (the executable when linked statically, else the shared library). 0 when out names a readable file (or
 * $env); -1 when none is (out names DIR/file, for an error message). */
int hu_part_path(char *out, size_t n, const char *env, const char *file);

#endif
