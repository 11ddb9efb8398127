/* The CUDA provider's record conversion (src/collector/prov_cuda_conv.c) on activity records laid out as
 * cupti_activity.h defines them: every field the provider reads sits where the header puts it (checked
 * against the real header where the toolkit is present), every field is mapped, odd values too (zero-byte
 * copies, graph kernels, grids past 2^32 threads), written into a real store of every format and read back.
 */
/* SPDX-License-Identifier: MIT */
#include "check.h"
#include "hubprof/hub.h"
#include "prov_cuda.h"

#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_CUPTI_H
#include <cupti_activity.h>
/* The provider's prefixes against the header: same offset and size for every field it declares. */
#define SAME(ours, theirs, f)                                                                                \
  _Static_assert(offsetof(ours, f) == offsetof(theirs, f) &&                                                 \
                     sizeof(((ours *)0)->f) == sizeof(((theirs *)0)->f),                                     \
                 #theirs "." #f)
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, kind);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, registersPerThread);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, start);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, end);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, deviceId);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, contextId);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, streamId);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, gridX);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, gridY);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, gridZ);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, blockX);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, blockY);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, blockZ);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, staticSharedMemory);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, dynamicSharedMemory);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, localMemoryPerThread);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, correlationId);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, gridId);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, name);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, sharedMemoryExecuted);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, graphNodeId);
SAME(hpc_cu_kernel, CUpti_ActivityKernel10, graphId);
SAME(hpc_cu_memcpy, CUpti_ActivityMemcpy6, copyKind);
SAME(hpc_cu_memcpy, CUpti_ActivityMemcpy6, srcKind);
SAME(hpc_cu_memcpy, CUpti_ActivityMemcpy6, dstKind);
SAME(hpc_cu_memcpy, CUpti_ActivityMemcpy6, bytes);
SAME(hpc_cu_memcpy, CUpti_ActivityMemcpy6, start);
SAME(hpc_cu_memcpy, CUpti_ActivityMemcpy6, end);
SAME(hpc_cu_memcpy, CUpti_ActivityMemcpy6, deviceId);
SAME(hpc_cu_memcpy, CUpti_ActivityMemcpy6, streamId);
SAME(hpc_cu_memcpy, CUpti_ActivityMemcpy6, correlationId);
SAME(hpc_cu_memcpy, CUpti_ActivityMemcpy6, graphNodeId);
SAME(hpc_cu_memcpy, CUpti_ActivityMemcpy6, graphId);
SAME(hpc_cu_memset, CUpti_ActivityMemset4, value);
SAME(hpc_cu_memset, CUpti_ActivityMemset4, bytes);
SAME(hpc_cu_memset, CUpti_ActivityMemset4, start);
SAME(hpc_cu_memset, CUpti_ActivityMemset4, end);
SAME(hpc_cu_memset, CUpti_ActivityMemset4, deviceId);
SAME(hpc_cu_memset, CUpti_ActivityMemset4, streamId);
SAME(hpc_cu_memset, CUpti_ActivityMemset4, correlationId);
SAME(hpc_cu_memset, CUpti_ActivityMemset4, memoryKind);
SAME(hpc_cu_memset, CUpti_ActivityMemset4, graphId);
SAME(hpc_cu_api, CUpti_ActivityAPI, cbid);
SAME(hpc_cu_api, CUpti_ActivityAPI, start);
SAME(hpc_cu_api, CUpti_ActivityAPI, end);
SAME(hpc_cu_api, CUpti_ActivityAPI, threadId);
SAME(hpc_cu_api, CUpti_ActivityAPI, correlationId);
SAME(hpc_cu_sync, CUpti_ActivitySynchronization2, type);
SAME(hpc_cu_sync, CUpti_ActivitySynchronization2, start);
SAME(hpc_cu_sync, CUpti_ActivitySynchronization2, end);
SAME(hpc_cu_sync, CUpti_ActivitySynchronization2, correlationId);
SAME(hpc_cu_sync, CUpti_ActivitySynchronization2, streamId);
_Static_assert((int)CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL == (int)HPC_CU_KIND_CONCURRENT_KERNEL &&
                   (int)CUPTI_ACTIVITY_KIND_MEMCPY == (int)HPC_CU_KIND_MEMCPY &&
                   (int)CUPTI_ACTIVITY_KIND_MEMSET == (int)HPC_CU_KIND_MEMSET &&
                   (int)CUPTI_ACTIVITY_KIND_RUNTIME == (int)HPC_CU_KIND_RUNTIME &&
                   (int)CUPTI_ACTIVITY_KIND_DRIVER == (int)HPC_CU_KIND_DRIVER &&
                   (int)CUPTI_ACTIVITY_KIND_SYNCHRONIZATION == (int)HPC_CU_KIND_SYNCHRONIZATION,
               "activity kinds");
_Static_assert(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD == 1 && CUPTI_ACTIVITY_MEMCPY_KIND_DTOH == 2 &&
                   CUPTI_ACTIVITY_MEMCPY_KIND_DTOD == 8 && CUPTI_ACTIVITY_MEMCPY_KIND_PTOP == 10 &&
                   CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE == 1 && CUPTI_ACTIVITY_MEMORY_KIND_DEVICE == 3 &&
                   CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE == 3,
               "copy, memory and synchronisation kinds");
/* Records built through the header's own types */
typedef CUpti_ActivityKernel10 rec_kernel;
typedef CUpti_ActivityMemcpy6 rec_memcpy;
typedef CUpti_ActivityMemset4 rec_memset;
typedef CUpti_ActivityAPI rec_api;
typedef CUpti_ActivitySynchronization2 rec_sync;
#define KIND(k) ((CUpti_ActivityKind)(k))
#define SYNC_TYPE(t) ((CUpti_ActivitySynchronizationType)(t))
#define HEADER "cupti_activity.h"
#else
typedef hpc_cu_kernel rec_kernel;
typedef hpc_cu_memcpy rec_memcpy;
typedef hpc_cu_memset rec_memset;
typedef hpc_cu_api rec_api;
typedef hpc_cu_sync rec_sync;
#define KIND(k) (k)
#define SYNC_TYPE(t) (t)
#define HEADER ""
#endif

static const char *const mangled = "_ZN3hub5saxpyIfEEviT_PKS1_PS1_";
static const char *const demangled = "void hub::saxpy<float>(int, float, float const*, float*)";

/* ---- conversion alone ----------------------------------------------------------------------------- */
static void kernels(hp_dispatch *d, hp_dispatch *g, hp_kernel_symbol *ks) {
  rec_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = KIND(HPC_CU_KIND_CONCURRENT_KERNEL);
  k.registersPerThread = 40;
  k.start = 1000000123;
  k.end = 1000004567;
  k.deviceId = 1;
  k.streamId = 13;
  k.gridX = 256, k.gridY = 3, k.gridZ = 2;
  k.blockX = 128, k.blockY = 2, k.blockZ = 1;
  k.staticSharedMemory = 4096;
  k.dynamicSharedMemory = 512;
  k.localMemoryPerThread = 24;
  k.correlationId = 77;
  k.name = mangled;
  hpc_cu_ids ids = {.row_id = 5,
                    .agent_id = 2,
                    .queue_id = 3,
                    .kernel_id = 4,
                    .thread_id = 6,
                    .region_id = 7,
                    .enqueue_ns = 999999000,
                    .cold = 1};
  const hpc_cu_kernel *kr = (const hpc_cu_kernel *)&k;
  hpc_cu_dispatch_row(kr, &ids, d);
  CHECK(d->size == sizeof *d && d->id == 5 && d->dispatch_id == 5 && d->process_id == 1);
  CHECK(d->thread_id == 6 && d->agent_id == 2 && d->queue_id == 3 && d->kernel_id == 4 && d->region_id == 7);
  CHECK(d->grid[0] == 256 * 128 && d->grid[1] == 3 * 2 && d->grid[2] == 2 * 1);
  CHECK(d->workgroup[0] == 128 && d->workgroup[1] == 2 && d->workgroup[2] == 1);
  CHECK(d->group_size == 512 && d->private_size == 0);
  CHECK(d->start_ns == 1000000123 && d->end_ns == 1000004567 && d->enqueue_ns == 999999000);
  CHECK(d->passes == 1 && d->cold == 1 && d->bytes_accessible == 0);
  CHECK(d->correlation_id == 77 && d->graph_id == 0); /* a launch, not a graph's */
  hpc_cu_kernel_symbol_row(kr, 4, demangled, ks);
  CHECK(ks->id == 4 && strcmp(ks->name, mangled) == 0 && strcmp(ks->display_name, demangled) == 0);
  CHECK(ks->private_size == 24 && ks->group_size == 4096 && ks->registers == 40);
  hp_kernel_symbol plain;
  hpc_cu_kernel_symbol_row(kr, 4, NULL, &plain); /* no demangler: the mangled name is shown */
  CHECK(strcmp(plain.display_name, mangled) == 0);

  /* a graph kernel node past 2^32 threads in all (2^22 * 2^10 in x alone is 2^32: saturated; y * z fit) */
  rec_kernel gk;
  memset(&gk, 0, sizeof gk);
  gk.kind = KIND(HPC_CU_KIND_CONCURRENT_KERNEL);
  gk.start = 2000000000;
  gk.end = 2000000000; /* an empty kernel: start == end */
  gk.gridX = 1 << 22, gk.gridY = 65535, gk.gridZ = 4;
  gk.blockX = 1024, gk.blockY = 1, gk.blockZ = 1;
  gk.graphId = 9;
  gk.graphNodeId = 0x100000002ull;
  gk.correlationId = 78;
  gk.name = "add_one";
  hpc_cu_ids gids = {.row_id = 8, .agent_id = 2, .queue_id = 3, .kernel_id = 5};
  hpc_cu_dispatch_row((const hpc_cu_kernel *)&gk, &gids, g);
  CHECK(g->grid[0] == UINT32_MAX && g->grid[1] == 65535 && g->grid[2] == 4);
  CHECK(g->workgroup[0] == 1024 && g->start_ns == g->end_ns && g->enqueue_ns == 0 && g->thread_id == 0);
  CHECK(g->correlation_id == 78 && g->graph_id == 9);
  CHECK(hpc_cu_items(1 << 21, 1024) == 1u << 31 && hpc_cu_items(-1, 4) == 0 && hpc_cu_items(5, 0) == 0);
}

static void copies(hp_memory_copy *c, hp_memory_copy *z, hp_memory_copy *f, char *nc, char *nz, char *nf) {
  rec_memcpy m;
  memset(&m, 0, sizeof m);
  m.kind = KIND(HPC_CU_KIND_MEMCPY);
  m.copyKind = 1;
  m.srcKind = 1; /* pageable */
  m.dstKind = 3; /* device */
  m.bytes = 1ull << 33;
  m.start = 3000000000;
  m.end = 3000100000;
  m.deviceId = 0;
  m.streamId = 7;
  m.correlationId = 80;
  hpc_cu_ids ids = {.row_id = (1ull << 48) + 1,
                    .agent_id = 1,
                    .queue_id = 2,
                    .thread_id = 6,
                    .region_id = 7,
                    .enqueue_ns = 2999999000};
  hpc_cu_memcpy_row((const hpc_cu_memcpy *)&m, &ids, nc, 160, c);
  CHECK_STR(c->name, "CUDA memcpy HtoD (pageable -> device)");
  CHECK(c->id == (1ull << 48) + 1 && c->process_id == 1 && c->thread_id == 6 && c->agent_id == 1 &&
        c->queue_id == 2 && c->region_id == 7);
  CHECK(c->direction == HP_COPY_H2D && c->bytes == 1ull << 33 && c->start_ns == 3000000000 &&
        c->end_ns == 3000100000 && c->enqueue_ns == 2999999000);
  /* a zero-byte device-to-device copy of a graph node, in no known memory */
  m.copyKind = 8;
  m.srcKind = 0;
  m.dstKind = 42;
  m.bytes = 0;
  m.graphId = 9;
  m.start = m.end = 0; /* no device times */
  ids.row_id++;
  hpc_cu_memcpy_row((const hpc_cu_memcpy *)&m, &ids, nz, 160, z);
  CHECK_STR(z->name, "CUDA memcpy DtoD (unknown -> unknown)");
  CHECK(z->direction == HP_COPY_D2D && z->bytes == 0 && z->start_ns == 0 && z->end_ns == 0);
  const unsigned kinds[][2] = {{2, HP_COPY_D2H},      {3, HP_COPY_H2D},  {4, HP_COPY_D2H},
                               {5, HP_COPY_D2D},      {6, HP_COPY_D2D},  {7, HP_COPY_D2D},
                               {9, HP_COPY_UNKNOWN},  {10, HP_COPY_D2D}, {0, HP_COPY_UNKNOWN},
                               {200, HP_COPY_UNKNOWN}};
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
    hp_memory_copy x;
    char n[160];
    m.copyKind = (uint8_t)kinds[i][0];
    hpc_cu_memcpy_row((const hpc_cu_memcpy *)&m, &ids, n, sizeof n, &x);
    CHECK_MSG(x.direction == kinds[i][1], "copy kind %u: direction %u", kinds[i][0], x.direction);
  }
  rec_memset s;
  memset(&s, 0, sizeof s);
  s.kind = KIND(HPC_CU_KIND_MEMSET);
  s.value = 0xab;
  s.bytes = 262144;
  s.start = 4000000000;
  s.end = 4000000500;
  s.streamId = 7;
  s.memoryKind = 3;
  s.correlationId = 81;
  ids.row_id++;
  hpc_cu_memset_row((const hpc_cu_memset *)&s, &ids, nf, 160, f);
  CHECK_STR(f->name, "CUDA memset (device, value 0xab)");
  CHECK(f->direction == HP_COPY_FILL && f->bytes == 262144 && f->start_ns == 4000000000 &&
        f->end_ns == 4000000500 && f->queue_id == 2);
}

static void calls(hp_region *a, hp_region *y) {
  rec_api r;
  memset(&r, 0, sizeof r);
  r.kind = KIND(HPC_CU_KIND_RUNTIME);
  r.cbid = 211;
  r.start = 5000000000;
  r.end = 5000001000;
  r.threadId = 4242;
  r.correlationId = 77;
  hpc_cu_ids ids = {.row_id = 20, .thread_id = 6};
  hpc_cu_api_row((const hpc_cu_api *)&r, "cudaLaunchKernel_v7000", &ids, a);
  CHECK_STR(a->name, "cudaLaunchKernel_v7000");
  CHECK_STR(a->category, "api");
  CHECK(a->id == 20 && a->thread_id == 6 && a->process_id == 1 && a->start_ns == 5000000000 &&
        a->end_ns == 5000001000);
  hp_region noname;
  r.kind = KIND(HPC_CU_KIND_DRIVER);
  hpc_cu_api_row((const hpc_cu_api *)&r, NULL, &ids, &noname);
  CHECK_STR(noname.name, "CUDA driver call");
  rec_sync s;
  memset(&s, 0, sizeof s);
  s.kind = KIND(HPC_CU_KIND_SYNCHRONIZATION);
  s.type = SYNC_TYPE(3);
  s.start = 6000000000;
  s.end = 6000200000;
  s.correlationId = 90;
  ids.row_id = 21;
  hpc_cu_sync_row((const hpc_cu_sync *)&s, &ids, y);
  CHECK_STR(y->name, "cudaStreamSynchronize");
  CHECK_STR(y->category, "sync");
  CHECK(y->id == 21 && y->start_ns == 6000000000 && y->end_ns == 6000200000);
  hp_region odd;
  s.type = SYNC_TYPE(77);
  hpc_cu_sync_row((const hpc_cu_sync *)&s, &ids, &odd);
  CHECK_STR(odd.name, "CUDA synchronize");
}

/* ---- written into a store of each format and read back -------------------------------------------- */
static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(p);
}

static int same_dispatch(const hp_dispatch *a, const hp_dispatch *b) {
  return a->id == b->id && a->dispatch_id == b->dispatch_id && a->thread_id == b->thread_id &&
         a->agent_id == b->agent_id && a->queue_id == b->queue_id && a->kernel_id == b->kernel_id &&
         memcmp(a->grid, b->grid, sizeof a->grid) == 0 &&
         memcmp(a->workgroup, b->workgroup, sizeof a->grid) == 0 && a->group_size == b->group_size &&
         a->start_ns == b->start_ns && a->end_ns == b->end_ns && a->enqueue_ns == b->enqueue_ns &&
         a->passes == b->passes && a->cold == b->cold && a->region_id == b->region_id &&
         a->correlation_id == b->correlation_id && a->graph_id == b->graph_id;
}
static int same_copy(const hp_memory_copy *a, const hp_memory_copy *b) {
  return a->id == b->id && a->thread_id == b->thread_id && a->agent_id == b->agent_id &&
         a->queue_id == b->queue_id && strcmp(a->name, b->name) == 0 && a->direction == b->direction &&
         a->bytes == b->bytes && a->enqueue_ns == b->enqueue_ns && a->start_ns == b->start_ns &&
         a->end_ns == b->end_ns && a->region_id == b->region_id;
}

static void store_trip(const char *format, const hp_dispatch *d, size_t nd, const hp_kernel_symbol *ks,
                       const hp_memory_copy *c, size_t nc, const hp_region *r, size_t nr) {
  char path[256];
  snprintf(path, sizeof path, "%s/hubprof-cuda-%d.%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (int)getpid(), format);
  nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  hp_store *s = NULL;
  hp_status st = hp_store_open(path, format, HP_CREATE, &s);
  CHECK_OK(st, s);
  if (st != HP_OK) {
    hp_store_abort(s);
    return;
  }
  hp_node node = {.size = sizeof node, .id = 1, .hostname = "h"};
  hp_process proc = {.size = sizeof proc, .id = 1, .node_id = 1, .pid = 1, .rank = -1, .command = "cuda_app"};
  hp_thread th = {.size = sizeof th, .id = 6, .process_id = 1, .tid = 4242, .name = "main"};
  hp_agent ag[2] = {{.size = sizeof(hp_agent), .id = 1, .node_id = 1, .type = HP_AGENT_GPU, .name = "GH100"},
                    {.size = sizeof(hp_agent),
                     .id = 2,
                     .node_id = 1,
                     .type = HP_AGENT_GPU,
                     .device_index = 1,
                     .name = "GH100"}};
  hp_queue q[2] = {{.size = sizeof(hp_queue), .id = 2, .process_id = 1, .agent_id = 1, .name = "queue 2"},
                   {.size = sizeof(hp_queue), .id = 3, .process_id = 1, .agent_id = 2, .name = "queue 3"}};
  hp_kernel_symbol k5 = {.size = sizeof k5, .id = 5, .name = "add_one", .display_name = "add_one"};
  hp_region outer = {.size = sizeof outer,
                     .id = 7,
                     .process_id = 1,
                     .thread_id = 6,
                     .name = "streams",
                     .category = "nvtx",
                     .start_ns = 1,
                     .end_ns = 7000000000};
  CHECK(hp_write_node(s, &node) == HP_OK && hp_write_process(s, &proc) == HP_OK &&
        hp_write_thread(s, &th) == HP_OK);
  CHECK(hp_write_agent(s, &ag[0]) == HP_OK && hp_write_agent(s, &ag[1]) == HP_OK);
  CHECK(hp_write_queue(s, &q[0]) == HP_OK && hp_write_queue(s, &q[1]) == HP_OK);
  CHECK(hp_write_kernel_symbol(s, ks) == HP_OK && hp_write_kernel_symbol(s, &k5) == HP_OK);
  CHECK(hp_write_region(s, &outer) == HP_OK);
  for (size_t i = 0; i < nd; i++)
    CHECK_OK(hp_write_dispatch(s, &d[i]), s);
  for (size_t i = 0; i < nc; i++)
    CHECK_OK(hp_write_memory_copy(s, &c[i]), s);
  for (size_t i = 0; i < nr; i++)
    CHECK_OK(hp_write_region(s, &r[i]), s);
  CHECK_OK(hp_store_close(s), (hp_store *)NULL);

  hp_store *in = NULL;
  st = hp_store_open(path, NULL, HP_READ, &in);
  CHECK_OK(st, in);
  if (st != HP_OK) {
    hp_store_close(in);
    return;
  }
  hp_cursor *cur;
  size_t seen = 0;
  CHECK_OK(hp_cursor_open(in, HP_TABLE_DISPATCH, &cur), in);
  hp_dispatch rd = {.size = sizeof rd};
  while (hp_cursor_next(cur, &rd) == HP_OK)
    for (size_t i = 0; i < nd; i++)
      if (rd.id == d[i].id) seen += same_dispatch(&rd, &d[i]) ? 1 : 100;
  hp_cursor_close(cur);
  CHECK_MSG(seen == nd, "%s: %zu of %zu dispatches read back as written", format, seen, nd);
  seen = 0;
  CHECK_OK(hp_cursor_open(in, HP_TABLE_MEMORY_COPY, &cur), in);
  hp_memory_copy rc = {.size = sizeof rc};
  while (hp_cursor_next(cur, &rc) == HP_OK)
    for (size_t i = 0; i < nc; i++)
      if (rc.id == c[i].id) seen += same_copy(&rc, &c[i]) ? 1 : 100;
  hp_cursor_close(cur);
  CHECK_MSG(seen == nc, "%s: %zu of %zu copies read back as written", format, seen, nc);
  seen = 0;
  CHECK_OK(hp_cursor_open(in, HP_TABLE_KERNEL_SYMBOL, &cur), in);
  hp_kernel_symbol rk = {.size = sizeof rk};
  while (hp_cursor_next(cur, &rk) == HP_OK)
    if (rk.id == ks->id)
      seen += strcmp(rk.name, ks->name) == 0 && strcmp(rk.display_name, ks->display_name) == 0 &&
              rk.private_size == ks->private_size && rk.group_size == ks->group_size &&
              rk.registers == ks->registers;
  hp_cursor_close(cur);
  CHECK_MSG(seen == 1, "%s: kernel symbol with its display name", format);
  seen = 0;
  CHECK_OK(hp_cursor_open(in, HP_TABLE_REGION, &cur), in);
  hp_region rr = {.size = sizeof rr};
  while (hp_cursor_next(cur, &rr) == HP_OK)
    for (size_t i = 0; i < nr; i++)
      if (rr.id == r[i].id)
        seen += strcmp(rr.name, r[i].name) == 0 && strcmp(rr.category, r[i].category) == 0 &&
                rr.thread_id == r[i].thread_id && rr.start_ns == r[i].start_ns && rr.end_ns == r[i].end_ns;
  hp_cursor_close(cur);
  CHECK_MSG(seen == nr, "%s: %zu of %zu regions read back as written", format, seen, nr);
  hp_store_close(in);
  nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void) {
  if (HEADER[0])
    printf("test_cuda_conv: record layouts checked against %s\n", HEADER);
  else
    printf("test_cuda_conv: layouts not checked against cupti_activity.h (no CUDA toolkit headers here)\n");
  hp_dispatch d[2];
  hp_kernel_symbol ks;
  kernels(&d[0], &d[1], &ks);
  hp_memory_copy c[3];
  char names[3][160];
  copies(&c[0], &c[1], &c[2], names[0], names[1], names[2]);
  hp_region r[2];
  calls(&r[0], &r[1]);
  for (const char *const *f = hp_formats(); *f; f++)
    store_trip(*f, d, 2, &ks, c, 3, r, 2);
  return check_report("test_cuda_conv");
}
