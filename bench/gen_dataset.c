/* Benchmark input: a Parquet dataset of NPROC processes x NDISP dispatches written straight through the hub
 * API (no logs, no merge), so that a 10 M-dispatch dataset takes seconds to make. 8 kernels (of the first
 * process's code object, as a merge de-duplicates them), one agent, per process a thread, a queue and a code
 * object; durations from a fixed pseudo-random sequence.
 * usage: gen_dataset OUT.parquet NPROC NDISP [node,process|none [ranks]]
 *   node,process partitions the dataset (as a merge of >= 1 GiB of rank stores does); ranks makes it a
 * cluster run's: process p is MPI rank p - 1 of NPROC (one job), and rank r's kernels take (100 + r % 16) %
 * of the base durations, so that the rank views (analyze --by rank, --by rank-imbalance) have an imbalance to
 * show */
/* SPDX-License-Identifier: MIT */
#include "hubprof/hub.h"
#include "hubprof/parquet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NKERNELS 8

static int fail(hp_store *s, const char *what) {
  fprintf(stderr, "gen_dataset: %s: %s\n", what, s ? hp_store_error(s) : "cannot open");
  hp_store_abort(s);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: gen_dataset OUT.parquet NPROC NDISP [node,process|none [ranks]]\n");
    return 2;
  }
  long nproc = strtol(argv[2], NULL, 10), ndisp = strtol(argv[3], NULL, 10);
  int ranks = argc > 5 && strcmp(argv[5], "ranks") == 0;
  if (argc > 5 && !ranks) {
    fprintf(stderr, "gen_dataset: %s: not 'ranks'\n", argv[5]);
    return 2;
  }
  hp_store *s = NULL;
  if (hp_store_open(argv[1], "parquet", HP_CREATE, &s) != HP_OK) return fail(s, "create");
  if (argc > 4 && strcmp(argv[4], "node,process") == 0 &&
      hp_parquet_set_partition(s, HP_PARTITION_NODE | HP_PARTITION_PROCESS) != HP_OK)
    return fail(s, "partition");
  static const char *const names[NKERNELS] = {"vector_add", "saxpy",        "matmul_tiled", "reduce_sum",
                                              "transpose",  "histogram256", "softmax_rows", "stencil_5pt"};
  hp_node node = {
      .size = sizeof node, .id = 1, .hostname = "bench", .machine_id = "0", .system_name = "Linux"};
  hp_agent agent = {.size = sizeof agent,
                    .id = 1,
                    .node_id = 1,
                    .type = HP_AGENT_GPU,
                    .name = "gfx942",
                    .product_name = "bench GPU",
                    .vendor = "bench",
                    .compute_units = 304};
  if (hp_write_node(s, &node) != HP_OK || hp_write_agent(s, &agent) != HP_OK) return fail(s, "write");
  for (long p = 1; p <= nproc; p++) {
    hp_process pr = {.size = sizeof pr,
                     .id = (uint64_t)p,
                     .node_id = 1,
                     .pid = 1000 + p,
                     .ppid = 1,
                     .rank = ranks ? p - 1 : -1,
                     .world_size = ranks ? nproc : -1,
                     .local_rank = ranks ? p - 1 : -1,
                     .job_id = ranks ? "4242" : "",
                     .start_ns = 1000,
                     .end_ns = 1000 + 2000 * ndisp + 1000,
                     .command = "./bench"};
    hp_thread th = {.size = sizeof th,
                    .id = (uint64_t)p,
                    .process_id = (uint64_t)p,
                    .tid = 1000 + p,
                    .start_ns = 1000,
                    .end_ns = pr.end_ns,
                    .name = "main"};
    hp_queue q = {.size = sizeof q, .id = (uint64_t)p, .process_id = (uint64_t)p, .agent_id = 1, .name = "q"};
    hp_code_object co = {.size = sizeof co,
                         .id = (uint64_t)p,
                         .process_id = (uint64_t)p,
                         .agent_id = 1,
                         .uri = "memory://bench"};
    if (hp_write_process(s, &pr) != HP_OK || hp_write_thread(s, &th) != HP_OK ||
        hp_write_queue(s, &q) != HP_OK || hp_write_code_object(s, &co) != HP_OK)
      return fail(s, "write");
  }
  for (int k = 0; k < NKERNELS; k++) {
    hp_kernel_symbol ks = {.size = sizeof ks,
                           .id = (uint64_t)k + 1,
                           .code_object_id = 1,
                           .name = names[k],
                           .display_name = names[k]};
    if (hp_write_kernel_symbol(s, &ks) != HP_OK) return fail(s, "write");
  }
  uint64_t x = 88172645463325252ull, id = 0;
  for (long p = 1; p <= nproc; p++)
    for (long i = 0; i < ndisp; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
      int k = (int)(x % NKERNELS);
      int64_t t0 = 2000 + 2000 * (int64_t)i, dur = 500 + (int64_t)(x >> 40) % 1000 * (k + 1);
      if (ranks) dur = dur * (100 + (p - 1) % 16) / 100;
      hp_dispatch d = {.size = sizeof d,
                       .id = ++id,
                       .dispatch_id = (uint64_t)i + 1,
                       .process_id = (uint64_t)p,
                       .thread_id = (uint64_t)p,
                       .agent_id = 1,
                       .queue_id = (uint64_t)p,
                       .kernel_id = (uint64_t)k + 1,
                       .grid = {1u << 20, 1, 1},
                       .workgroup = {256, 1, 1},
                       .start_ns = t0,
                       .end_ns = t0 + dur,
                       .enqueue_ns = t0 - 100,
                       .passes = 1};
      if (hp_write_dispatch(s, &d) != HP_OK) return fail(s, "write");
    }
  if (hp_store_commit(s) != HP_OK) return fail(s, "commit");
  hp_store_close(s);
  return 0;
}
