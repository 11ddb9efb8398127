/* Code objects of the programs the application builds: one code_object row per program and device (hash
 * and size of the program binary, build options, source when created from source), its bytes once per hash,
 * and kernel_symbol.code_object_id. Filled from the intercepted program calls (slow paths, never a dispatch).
 */
/* SPDX-License-Identifier: MIT */
#include "collector.h"

_Atomic uint64_t hpc_code_object_ids; /* code_object row ids of the process (here and sample.c) */
