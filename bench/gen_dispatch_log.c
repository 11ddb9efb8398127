/* Writes a log of N dispatch rows the way the collector does (hp_log_write_dispatches, 32 rows a call), rows
 * like a launch-bound loop's (ids +1, one process/thread/queue, three kernels, times growing by a few us):
 * the input of the dispatch-batch measurements (bench/bench_dbatch.sh). usage: gen_dispatch_log OUT.log N */
/* SPDX-License-Identifier: MIT */
#include "../src/hub/fmt_log.h"
#include "hubprof/hub.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: gen_dispatch_log OUT.log N\n");
    return 2;
  }
  long n = atol(argv[2]);
  hp_store *s = NULL;
  if (hp_store_open(argv[1], "log", HP_CREATE, &s) != HP_OK) {
    fprintf(stderr, "gen_dispatch_log: %s\n", hp_store_error(s));
    return 1;
  }
  hp_process p;
  hp_row_init(HP_TABLE_PROCESS, &p);
  p.id = 1, p.pid = 4242, p.command = "launch_loop";
  hp_write_process(s, &p);
  hp_dispatch rows[32];
  const int64_t t0 = 53000000000000; /* CLOCK_MONOTONIC_RAW of a machine up 15 h */
  uint64_t x = 88172645463325252ull;
  for (long i = 0; i < n;) {
    int k = 0;
    for (; k < 32 && i < n; k++, i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      int64_t start = t0 + i * 4000 + (int64_t)(x % 600);
      rows[k] = (hp_dispatch){.size = sizeof(hp_dispatch),
                              .id = (uint64_t)i + 1,
                              .dispatch_id = (uint64_t)i + 1,
                              .process_id = 1,
                              .thread_id = 1,
                              .agent_id = 1,
                              .queue_id = 1,
                              .kernel_id = 1 + (uint64_t)i % 3,
                              .grid = {1024, 1, 1},
                              .workgroup = {64, 1, 1},
                              .start_ns = start,
                              .end_ns = start + 1800 + (int64_t)(x >> 20) % 400,
                              .enqueue_ns = start - 900 - (int64_t)(x >> 40) % 300,
                              .passes = 1};
    }
    size_t ok = 0;
    hp_log_write_dispatches(s, rows, (size_t)k, &ok);
  }
  p.start_ns = t0 - 1000000,
  p.end_ns = t0 + n * 4000 + 1000000; /* completed at exit, as the collector does */
  hp_write_process(s, &p);
  if (hp_store_close(s) != HP_OK) return 1;
  return 0;
}
