/* gen_logs: writes per-process hubprof logs shaped like a multi-process, multi-pass profile (kernels,
 * dispatches, counters per pass), as the collector would; used by the demo, the CLI tests and the benchmarks.
 * usage: gen_logs DIR NPROC NDISPATCH [NCOUNTERS [NPASSES [FORMAT]]] */
/* SPDX-License-Identifier: MIT */
#include "hubprof/hub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kernel_names[] = {"vector_add", "saxpy",     "histogram256", "matmul_tiled",
                                     "reduce_sum", "transpose", "stencil_5pt",  "softmax_rows"};
#define NKERNELS (sizeof kernel_names / sizeof kernel_names[0])
static const char *counter_names[] = {"task-clock", "context-switches", "cpu-migrations", "page-faults",
                                      "cycles",     "instructions",     "cache-misses",   "branch-misses"};
#define NCOUNTER_NAMES (sizeof counter_names / sizeof counter_names[0])

static int fail(hp_store *s, hp_status st) {
  fprintf(stderr, "gen_logs: %s\n", s && hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st));
  hp_store_abort(s);
  return 1;
}

static int write_one(const char *path, const char *format, int pid, long ndisp, int ncounters, int npasses) {
  hp_store *s;
  hp_status st = hp_store_open(path, format, HP_CREATE, &s);
  if (st != HP_OK) return fail(s, st);
  char host[64] = "localhost";
  gethostname(host, sizeof host - 1);
  hp_node node = {
      .size = sizeof node, .id = 1, .hostname = host, .system_name = "Linux", .machine = "x86_64"};
  hp_process proc = {.size = sizeof proc,
                     .id = 1,
                     .node_id = 1,
                     .pid = pid,
                     .ppid = 1,
                     .rank = -1,
                     .start_ns = 1000000,
                     .command = "./app --iterations 100"};
  hp_thread th = {.size = sizeof th, .id = 1, .process_id = 1, .tid = pid, .name = "main"};
  hp_agent ag = {.size = sizeof ag,
                 .id = 1,
                 .node_id = 1,
                 .type = HP_AGENT_CPU,
                 .vendor = "GenuineIntel",
                 .name = "cpu",
                 .product_name = "pthread-cpu",
                 .runtime = "OpenCL 3.0 PoCL",
                 .compute_units = 2};
  hp_queue q = {.size = sizeof q, .id = 1, .process_id = 1, .agent_id = 1, .name = "queue 0"};
  hp_code_object co = {.size = sizeof co, .id = 1, .process_id = 1, .agent_id = 1, .uri = "program://demo"};
  if ((st = hp_write_node(s, &node)) || (st = hp_write_process(s, &proc)) || (st = hp_write_thread(s, &th)) ||
      (st = hp_write_agent(s, &ag)) || (st = hp_write_queue(s, &q)) || (st = hp_write_code_object(s, &co)))
    return fail(s, st);
  for (size_t k = 0; k < NKERNELS; k++) {
    hp_kernel_symbol ks = {.size = sizeof ks,
                           .id = k + 1,
                           .code_object_id = 1,
                           .name = kernel_names[k],
                           .display_name = kernel_names[k]};
    if ((st = hp_write_kernel_symbol(s, &ks))) return fail(s, st);
  }
  for (int c = 0; c < ncounters; c++) {
    hp_counter_info ci = {.size = sizeof ci,
                          .id = (uint64_t)c + 1,
                          .agent_id = 1,
                          .name = counter_names[c % NCOUNTER_NAMES],
                          .block = "sw",
                          .unit = "count"};
    if ((st = hp_write_counter_info(s, &ci))) return fail(s, st);
  }
  int64_t t = 2000000;
  unsigned seed = (unsigned)pid;
  for (long d = 1; d <= ndisp; d++) {
    seed = seed * 1103515245u + 12345u;
    size_t k = (seed >> 16) % NKERNELS;
    int64_t dur = 2000 + (int64_t)(k * 1500) + (int64_t)((seed >> 8) % 500);
    hp_dispatch di = {.size = sizeof di,
                      .id = (uint64_t)d,
                      .dispatch_id = (uint64_t)d,
                      .process_id = 1,
                      .thread_id = 1,
                      .agent_id = 1,
                      .queue_id = 1,
                      .kernel_id = k + 1,
                      .grid = {1u << (10 + k % 6), 1, 1},
                      .workgroup = {64, 1, 1},
                      .enqueue_ns = t,
                      .start_ns = t + 800,
                      .end_ns = t + 800 + dur,
                      .passes = (uint32_t)npasses};
    t += dur + 1500;
    if ((st = hp_write_dispatch(s, &di))) return fail(s, st);
    for (int c = 0; c < ncounters; c++) {
      hp_counter_value v = {.size = sizeof v,
                            .dispatch_id = (uint64_t)d,
                            .counter_id = (uint64_t)c + 1,
                            .pass = (uint32_t)(npasses > 0 ? c % npasses + 1 : 0),
                            .value = (double)(dur * (c + 1))};
      if ((st = hp_write_counter_value(s, &v))) return fail(s, st);
    }
  }
  proc.end_ns = t + 1000000;
  if ((st = hp_write_process(s, &proc)) ||
      (st = hp_write_metadata(s, "mode", ncounters ? "profile" : "trace")))
    return fail(s, st);
  st = hp_store_close(s);
  if (st != HP_OK) {
    fprintf(stderr, "gen_logs: %s: %s\n", path, hp_status_str(st));
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: gen_logs DIR NPROC NDISPATCH [NCOUNTERS [NPASSES [FORMAT]]]\n");
    return 2;
  }
  const char *dir = argv[1];
  int nproc = atoi(argv[2]);
  long ndisp = atol(argv[3]);
  int ncounters = argc > 4 ? atoi(argv[4]) : 0;
  int npasses = argc > 5 ? atoi(argv[5]) : 1;
  const char *format = argc > 6 ? argv[6] : "log";
  if (nproc < 1 || ndisp < 0 || ncounters < 0 || npasses < 0) {
    fprintf(stderr, "gen_logs: bad numbers\n");
    return 2;
  }
  char host[64] = "localhost";
  gethostname(host, sizeof host - 1);
  mkdir(dir, 0755); /* an existing directory is fine */
  for (int p = 0; p < nproc; p++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/hubprof-%s-%d.%s", dir, host, 10000 + p,
             strcmp(format, "log") ? "db" : "log");
    if (write_one(path, format, 10000 + p, ndisp, ncounters, npasses)) return 1;
  }
  return 0;
}
