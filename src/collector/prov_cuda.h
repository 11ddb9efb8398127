/* The CUDA provider's shared part: CUPTI activity records as cupti_activity.h lays them out (the prefix this
 * provider reads, declared here so hubprof builds without the toolkit; tests/cuda/test_cuda_conv.c checks
 * every offset against the real header where it is present) and their conversion into the hub's rows
 * (prov_cuda_conv.c, no CUPTI call: unit-tested alone). prov_cuda.c loads CUPTI and feeds the conversion. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_PROV_CUDA_H
#define HUBPROF_COLLECTOR_PROV_CUDA_H

#include "hubprof/hub.h"

#include <stddef.h>
#include <stdint.h>

/* CUpti_ActivityKind values this provider enables and reads */
enum {
  HPC_CU_KIND_MEMCPY = 1,
  HPC_CU_KIND_MEMSET = 2,
  HPC_CU_KIND_DRIVER = 4,
  HPC_CU_KIND_RUNTIME = 5,
  HPC_CU_KIND_CONCURRENT_KERNEL = 10,
  HPC_CU_KIND_SYNCHRONIZATION = 38
};

/* Activity records are packed and 8-byte aligned (cupti_common.h: PACKED_ALIGNMENT). Each struct below is
 * the prefix of its record that is read; later record versions only append. */
#define HPC_CU_REC __attribute__((__packed__)) __attribute__((aligned(8)))

/* CUpti_ActivityKernel10 (CUDA 13; Kernel9 of CUDA 12 has the same prefix) */
typedef struct HPC_CU_REC hpc_cu_kernel {
  uint32_t kind;
  uint8_t cacheConfig;
  uint8_t sharedMemoryConfig;
  uint16_t registersPerThread;
  uint32_t partitionedGlobalCacheRequested;
  uint32_t partitionedGlobalCacheExecuted;
  uint64_t start;
  uint64_t end;
  uint64_t completed;
  uint32_t deviceId;
  uint32_t contextId;
  uint32_t streamId;
  int32_t gridX, gridY, gridZ;
  int32_t blockX, blockY, blockZ;
  int32_t staticSharedMemory;
  int32_t dynamicSharedMemory;
  uint32_t localMemoryPerThread;
  uint32_t localMemoryTotal;
  uint32_t correlationId;
  int64_t gridId;
  const char *name;
  void *reserved0;
  uint64_t queued;
  uint64_t submitted;
  uint8_t launchType;
  uint8_t isSharedMemoryCarveoutRequested;
  uint8_t sharedMemoryCarveoutRequested;
  uint8_t padding;
  uint32_t sharedMemoryExecuted;
  uint64_t graphNodeId;
  uint32_t shmemLimitConfig;
  uint32_t graphId;
} hpc_cu_kernel;

/* The fields CUpti_ActivityMemcpy6 and CUpti_ActivityMemset4 share, from bytes to correlationId, at the
 * same offsets in both (8 bytes in; tests/cuda checks every offset against cupti_activity.h) */
#define HPC_CU_MEM_FIELDS                                                                                    \
  uint64_t bytes;                                                                                            \
  uint64_t start;                                                                                            \
  uint64_t end;                                                                                              \
  uint32_t deviceId;                                                                                         \
  uint32_t contextId;                                                                                        \
  uint32_t streamId;                                                                                         \
  uint32_t correlationId

/* CUpti_ActivityMemcpy6 */
typedef struct HPC_CU_REC hpc_cu_memcpy {
  uint32_t kind;
  uint8_t copyKind; /* CUpti_ActivityMemcpyKind */
  uint8_t srcKind;  /* CUpti_ActivityMemoryKind */
  uint8_t dstKind;
  uint8_t flags;
  HPC_CU_MEM_FIELDS;
  uint32_t runtimeCorrelationId;
  uint32_t pad;
  void *reserved0;
  uint64_t graphNodeId;
  uint32_t graphId;
} hpc_cu_memcpy;

/* CUpti_ActivityMemset4 */
typedef struct HPC_CU_REC hpc_cu_memset {
  uint32_t kind;
  uint32_t value;
  HPC_CU_MEM_FIELDS;
  uint16_t flags;
  uint16_t memoryKind;
  uint32_t pad;
  void *reserved0;
  uint64_t graphNodeId;
  uint32_t graphId;
} hpc_cu_memset;

/* CUpti_ActivityAPI (kinds RUNTIME and DRIVER) */
typedef struct HPC_CU_REC hpc_cu_api {
  uint32_t kind;
  uint32_t cbid;
  uint64_t start;
  uint64_t end;
  uint32_t processId;
  uint32_t threadId;
  uint32_t correlationId;
  uint32_t returnValue;
} hpc_cu_api;

/* CUpti_ActivitySynchronization2 */
typedef struct HPC_CU_REC hpc_cu_sync {
  uint32_t kind;
  uint32_t type; /* CUpti_ActivitySynchronizationType */
  uint64_t start;
  uint64_t end;
  uint32_t correlationId;
  uint32_t contextId;
  uint32_t streamId;
  uint32_t cudaEventId;
} hpc_cu_sync;

/* What the caller resolved for one record (the collector's registries; a test's own numbers): row ids and
 * the host facts of the API call that launched it, found by correlation id (0 when unknown). */
typedef struct hpc_cu_ids {
  uint64_t row_id;    /* the row's id (dispatch: also its dispatch_id) */
  uint64_t agent_id;  /* agent of the record's device */
  uint64_t queue_id;  /* queue of the record's (device, stream) */
  uint64_t kernel_id; /* kernel_symbol of the record's name */
  uint64_t thread_id; /* the launching thread's row */
  uint64_t region_id; /* innermost region open on it at the launch */
  int64_t enqueue_ns; /* host time of the launch call */
  uint32_t cold;      /* the kernel's first dispatch in the process */
} hpc_cu_ids;

/* Work-items of one dimension: grid * block, UINT32_MAX when that does not fit (hp_dispatch.grid is 32-bit;
 * the grid's blocks are then grid_blocks). Negative or zero inputs give 0. */
uint32_t hpc_cu_items(int32_t grid, int32_t block);
/* A kernel record as a dispatch row (passes 1: traced, not replayed). */
void hpc_cu_dispatch_row(const hpc_cu_kernel *k, const hpc_cu_ids *ids, hp_dispatch *d);
/* The kernel_symbol row of a kernel record's function: its mangled name, the display name given (demangled;
 * NULL: the mangled one), local memory per thread and static shared memory per block. */
void hpc_cu_kernel_symbol_row(const hpc_cu_kernel *k, uint64_t id, const char *display, hp_kernel_symbol *r);
/* A copy or fill as a memory_copy row; name: buf (len bytes), e.g. "CUDA memcpy HtoD (pageable -> device)",
 * "CUDA memset (device, value 0x0)". */
void hpc_cu_memcpy_row(const hpc_cu_memcpy *m, const hpc_cu_ids *ids, char *buf, size_t len,
                       hp_memory_copy *r);
void hpc_cu_memset_row(const hpc_cu_memset *m, const hpc_cu_ids *ids, char *buf, size_t len,
                       hp_memory_copy *r);
/* An API call (name: the function's, from cuptiGetCallbackName) or a synchronisation as a region row of
 * category hpc_cu_api_cat / hpc_cu_sync_cat (ids: row_id, thread_id). A synchronisation's name is its type's
 * ("cudaStreamSynchronize"). */
void hpc_cu_api_row(const hpc_cu_api *a, const char *name, const hpc_cu_ids *ids, hp_region *r);
void hpc_cu_sync_row(const hpc_cu_sync *s, const hpc_cu_ids *ids, hp_region *r);
extern const char hpc_cu_api_cat[];  /* "api": the category of OpenCL's API regions too */
extern const char hpc_cu_sync_cat[]; /* "sync" */
/* The names of a CUpti_ActivityMemcpyKind ("HtoD") and a CUpti_ActivityMemoryKind ("pageable"). */
const char *hpc_cu_copy_kind(unsigned kind);
const char *hpc_cu_memory_kind(unsigned kind);

#endif
