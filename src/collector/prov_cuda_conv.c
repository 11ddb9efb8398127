/* CUPTI activity records converted into the hub's rows (kernels as dispatches and kernel symbols, copies and
 * fills as memory_copy rows, API calls and synchronisations as regions): no CUPTI call, so the mapping is
 * tested alone on records laid out as cupti_activity.h defines them (tests/cuda/test_cuda_conv.c). */
/* SPDX-License-Identifier: MIT */
#include "prov_cuda.h"

#include <stdio.h>
#include <string.h>

const char hpc_cu_api_cat[] = "api";
const char hpc_cu_sync_cat[] = "sync";

static const char *const copy_kinds[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                         "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
static const char *const mem_kinds[] = {"unknown", "pageable", "pinned",        "device",
                                        "array",   "managed",  "device static", "managed static"};

const char *hpc_cu_copy_kind(unsigned kind) {
  return kind < sizeof copy_kinds / sizeof *copy_kinds ? copy_kinds[kind] : "unknown";
}
const char *hpc_cu_memory_kind(unsigned kind) {
  return kind < sizeof mem_kinds / sizeof *mem_kinds ? mem_kinds[kind] : "unknown";
}

uint32_t hpc_cu_items(int32_t grid, int32_t block) {
  if (grid <= 0 || block <= 0) return 0;
  uint64_t n = (uint64_t)grid * (uint64_t)block;
  return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* CUPTI's times are in the collector's clock (prov_cuda.c registers its timestamp callback); 0 stays 0. */
static int64_t t(uint64_t ns) { return ns > INT64_MAX ? 0 : (int64_t)ns; }

/* The start of every row made from a record (hp_dispatch, hp_memory_copy, hp_region): zeroed, its size, its
 * id, the process (1: the log's own) and the calling thread. */
#define ROW_BEGIN(r, ids)                                                                                    \
  (memset((r), 0, sizeof *(r)), (r)->size = sizeof *(r), (r)->id = (ids)->row_id, (r)->process_id = 1,       \
   (r)->thread_id = (ids)->thread_id)

void hpc_cu_dispatch_row(const hpc_cu_kernel *k, const hpc_cu_ids *ids, hp_dispatch *d) {
  ROW_BEGIN(d, ids);
  d->dispatch_id = ids->row_id;
  d->agent_id = ids->agent_id;
  d->queue_id = ids->queue_id;
  d->kernel_id = ids->kernel_id;
  d->grid[0] = hpc_cu_items(k->gridX, k->blockX);
  d->grid[1] = hpc_cu_items(k->gridY, k->blockY);
  d->grid[2] = hpc_cu_items(k->gridZ, k->blockZ);
  d->workgroup[0] = k->blockX > 0 ? (uint32_t)k->blockX : 0;
  d->workgroup[1] = k->blockY > 0 ? (uint32_t)k->blockY : 0;
  d->workgroup[2] = k->blockZ > 0 ? (uint32_t)k->blockZ : 0;
  d->private_size = 0; /* CUDA has no per-launch private memory: local memory is the function's */
  d->group_size = k->dynamicSharedMemory > 0 ? k->dynamicSharedMemory : 0;
  d->start_ns = t(k->start);
  d->end_ns = t(k->end);
  d->enqueue_ns = ids->enqueue_ns;
  d->passes = 1;
  d->cold = ids->cold;
  d->region_id = ids->region_id;
  d->correlation_id = k->correlationId;
  d->graph_id = k->graphId;
}

void hpc_cu_kernel_symbol_row(const hpc_cu_kernel *k, uint64_t id, const char *display, hp_kernel_symbol *r) {
  memset(r, 0, sizeof *r);
  r->size = sizeof *r;
  r->id = id;
  r->name = k->name ? k->name : "";
  r->display_name = display && *display ? display : r->name;
  r->private_size = k->localMemoryPerThread;
  r->group_size = k->staticSharedMemory > 0 ? k->staticSharedMemory : 0;
  r->registers = k->registersPerThread;
}

/* What a copy and a fill row share: the ids, the bytes and the times (the record's HPC_CU_MEM_FIELDS). */
static void copy_common(const hpc_cu_ids *ids, uint64_t bytes, uint64_t start, uint64_t end,
                        hp_memory_copy *r) {
  ROW_BEGIN(r, ids);
  r->agent_id = ids->agent_id;
  r->queue_id = ids->queue_id;
  r->enqueue_ns = ids->enqueue_ns;
  r->region_id = ids->region_id;
  r->bytes = bytes;
  r->start_ns = t(start);
  r->end_ns = t(end);
}

void hpc_cu_memcpy_row(const hpc_cu_memcpy *m, const hpc_cu_ids *ids, char *buf, size_t len,
                       hp_memory_copy *r) {
  copy_common(ids, m->bytes, m->start, m->end, r);
  snprintf(buf, len, "CUDA memcpy %s (%s -> %s)", hpc_cu_copy_kind(m->copyKind),
           hpc_cu_memory_kind(m->srcKind), hpc_cu_memory_kind(m->dstKind));
  r->name = buf;
  switch (m->copyKind) {
  case 1: /* HtoD */
  case 3: /* HtoA */ r->direction = HP_COPY_H2D; break;
  case 2: /* DtoH */
  case 4: /* AtoH */ r->direction = HP_COPY_D2H; break;
  case 5: /* AtoA */
  case 6: /* AtoD */
  case 7: /* DtoA */
  case 8: /* DtoD */
  case 10: /* PtoP */ r->direction = HP_COPY_D2D; break;
  default: /* HtoH, unknown */ r->direction = HP_COPY_UNKNOWN;
  }
}

void hpc_cu_memset_row(const hpc_cu_memset *m, const hpc_cu_ids *ids, char *buf, size_t len,
                       hp_memory_copy *r) {
  copy_common(ids, m->bytes, m->start, m->end, r);
  snprintf(buf, len, "CUDA memset (%s, value 0x%x)", hpc_cu_memory_kind(m->memoryKind), (unsigned)m->value);
  r->name = buf;
  r->direction = HP_COPY_FILL;
}

/* A region row of the calling thread from start to end (API calls and synchronisations). */
static void region_common(const hpc_cu_ids *ids, const char *name, const char *category, uint64_t start,
                          uint64_t end, hp_region *r) {
  ROW_BEGIN(r, ids);
  r->name = name;
  r->category = category;
  r->start_ns = t(start);
  r->end_ns = t(end);
}

void hpc_cu_api_row(const hpc_cu_api *a, const char *name, const hpc_cu_ids *ids, hp_region *r) {
  region_common(
      ids, name && *name ? name : (a->kind == HPC_CU_KIND_DRIVER ? "CUDA driver call" : "CUDA runtime call"),
      hpc_cu_api_cat, a->start, a->end, r);
}

void hpc_cu_sync_row(const hpc_cu_sync *s, const hpc_cu_ids *ids, hp_region *r) {
  static const char *const names[] = {"CUDA synchronize", "cudaEventSynchronize", "cudaStreamWaitEvent",
                                      "cudaStreamSynchronize", "cudaDeviceSynchronize"};
  region_common(ids, s->type < sizeof names / sizeof *names ? names[s->type] : names[0], hpc_cu_sync_cat,
                s->start, s->end, r);
}
