/* bench_replay: the memcpy baseline of the kernel-replay benchmark (bench/bench_replay.sh): copies BYTES
 * between two buffers faulted in beforehand, REPS times, and prints the best bandwidth — what a restore of
 * the same bytes is measured against in the same benchmark run.
 * usage: bench_replay memcpy BYTES [REPS]   prints "memcpy bytes=B best_ms=T gbps=G" */
/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc < 3 || strcmp(argv[1], "memcpy") != 0) {
    fprintf(stderr, "usage: bench_replay memcpy BYTES [REPS]\n");
    return 2;
  }
  size_t bytes = strtoull(argv[2], NULL, 10);
  int reps = argc > 3 ? atoi(argv[3]) : 10;
  if (!bytes || reps < 1) return 2;
  /* faulted in now, as the collector's shadow pool is (MAP_POPULATE): first touches are not measured */
  char *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  char *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (a == MAP_FAILED || b == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  memset(a, 1, bytes);
  memset(b, 2, bytes);
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t = now_s();
    memcpy(b, a, bytes);
    t = now_s() - t;
    if (t < best) best = t;
    a[r % bytes] = (char)r; /* keep the copies from being merged */
  }
  volatile char sink = b[bytes / 2];
  (void)sink;
  printf("memcpy bytes=%zu best_ms=%.3f gbps=%.2f\n", bytes, best * 1e3, (double)bytes / best / 1e9);
  return 0;
}
