/* The code plugin (build/libhubprof_code.so): reading code objects (code_read.c: capstone, libdw, libelf;
 * code_sass.c: nvdisasm; code_lines.c: source lines from the IR) kept out of libhubprof, which reads every
 * format with SQLite, zstd, snappy and zlib alone and loads this part when a sample view asks for the code
 * (attribution.c). Internal; prefix cp_. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_ANALYSIS_CODE_PLUGIN_H
#define HUBPROF_ANALYSIS_CODE_PLUGIN_H

#include "code_read.h"

#include <stddef.h>

#define CP_VERSION 1 /* raised when cp_api or cr_code changes */
#define CP_FILE "libhubprof_code.so"
#define CP_ENTRY "hubprof_code_api" /* the plugin's one export: a cp_entry_fn */

typedef struct cp_api {
  unsigned version; /* CP_VERSION of the plugin's build */
  size_t code_size; /* sizeof(cr_code) of the plugin's build */
  /* cr_read of code_read.h, cl_lines_from_ir of code_lines.h */
  int (*read)(const void *bytes, size_t n, cr_code *c);
  int (*lines_from_ir)(cr_code *c, const void *so, size_t sn, const void *ir, size_t irn, char *why,
                       size_t whyn);
} cp_api;

typedef const cp_api *cp_entry_fn(void);

/* The plugin's table ($HUBPROF_CODE_PLUGIN, else CP_FILE beside libhubprof or the program holding it),
 * loaded on the first call and kept; NULL when it cannot be loaded or is of another build, with the reason
 * in why (whyn bytes). Thread-safe. */
const cp_api *cp_load(char *why, size_t whyn);

#endif
