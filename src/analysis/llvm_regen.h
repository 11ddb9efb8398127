/* The one entry of the LLVM plugin (llvm_regen.c, build/libhubprof_llvm.so), looked up with dlsym by
 * code_lines.c: IR in, an object with line rows out. Internal; prefix hl_. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_ANALYSIS_LLVM_REGEN_H
#define HUBPROF_ANALYSIS_LLVM_REGEN_H

#include <stddef.h>

#define HL_WHY 256 /* bytes of the reason a regeneration failed */
#define HL_EXPORT __attribute__((visibility("default")))

/* Compile the bitcode bc (n bytes) again, giving functions with debug locations but no subprogram one of
 * their own: 0 and the object file in *obj (malloc, *objn bytes); 1 when no function is such (nothing to
 * add); -1 on failure. why (HL_WHY bytes) says why when not 0. */
typedef int hl_regenerate_fn(const void *bc, size_t n, void **obj, size_t *objn, char *why);
HL_EXPORT hl_regenerate_fn hl_regenerate;

#endif
