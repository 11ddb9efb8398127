/* The cubins of a CUDA process (issue 26): each module's cubin as CUPTI hands it over when the module loads,
 * stored once per hash (code_object row + code_blob bytes, as OpenCL code objects are), and the map from a
 * PC sample's cubin CRC and function to that code object and the byte offset in its bytes. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_CUDA_CUBIN_H
#define HUBPROF_COLLECTOR_CUDA_CUBIN_H

#include "cupti_pc.h"

#include <stddef.h>
#include <stdint.h>

#define HPC_CUBINS_MAX 1024 /* modules remembered; later ones are stored but their PCs are not placed */

typedef struct hpc_cubins hpc_cubins;

/* A registry (NULL without memory). Thread-safe: modules load on application threads, PCs are placed on the
 * collector's thread (a mutex; neither is a hot path). */
__attribute__((visibility("hidden"))) hpc_cubins *hpc_cubins_new(void);
__attribute__((visibility("hidden"))) void hpc_cubins_free(hpc_cubins *r);

/* A module loaded: its cubin (copied), CUPTI's CRC of it (cuptiGetCubinCrc; the key of PC samples), the
 * module id. Writes to s (when not NULL) the bytes once per SHA-256 and a code_object row (id from *next_id,
 * uri "cuda://module/<id>", process 1). Returns the code object id, 0 when the bytes are not an ELF cubin
 * or without memory (*why says which). */
__attribute__((visibility("hidden"))) uint64_t hpc_cubins_add(hpc_cubins *r, struct hp_store *s,
                                                              const void *cubin, size_t n, uint64_t crc,
                                                              uint32_t module_id, _Atomic uint64_t *next_id,
                                                              const char **why);

/* Where a sampled PC is: the code object of its cubin CRC and the offset in that cubin's bytes (the
 * function's .text section + pcOffset). 0, or -1 when the CRC or the function is unknown. */
__attribute__((visibility("hidden"))) int hpc_cubins_place(hpc_cubins *r, const hpc_cupti_pc *pc,
                                                           uint64_t *code_object_id, uint64_t *offset);

/* Modules seen, and how many had bytes that are no ELF cubin. */
__attribute__((visibility("hidden"))) void hpc_cubins_stats(hpc_cubins *r, uint64_t *modules,
                                                            uint64_t *refused);

#endif
