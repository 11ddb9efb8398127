/* Benchmark for the trace log's page faults (docs/collector.md, "Trace fast path"): rows of the trace log's
 * size written into a fresh shared file mapping as the log writer does, faulting each page on first write,
 * against the same after madvise(MADV_POPULATE_WRITE) (pre-faulted pages), interleaved; median and min-max of
 * the thread's CPU ns per row (user and kernel: the faults; other jobs do not count), set-up included.
 * usage: bench_prefault DIR [MIB [ROUNDS [ROW]]] */
/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* CPU time: other jobs on the machine do not count */
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* ns per row of one fresh mapping written row by row; < 0 on failure */
static double one(const char *dir, size_t bytes, size_t row, int populate) {
  char p[4096];
  snprintf(p, sizeof p, "%s/bench-prefault-%d", dir, populate);
  unlink(p);
  int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) return -1;
  double t0 = now();
  char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return -1;
  if (populate && madvise(m, bytes, MADV_POPULATE_WRITE) != 0) return -1;
  for (size_t o = 0; o + row <= bytes; o += row)
    for (size_t i = 0; i < row; i += 8)
      m[o + i] = (char)i; /* touches the row as an encoder would */
  double t = (now() - t0) / (double)(bytes / row) * 1e9;
  munmap(m, bytes);
  close(fd);
  unlink(p);
  return t;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_prefault DIR [MIB [ROUNDS [ROW]]]\n");
    return 2;
  }
  size_t bytes = (size_t)(argc > 2 ? atoi(argv[2]) : 4) << 20;
  int rounds = argc > 3 ? atoi(argv[3]) : 9;
  size_t row = argc > 4 ? (size_t)atoi(argv[4]) : 46;
  if (rounds < 1 || rounds > 99 || bytes == 0 || row < 8) return 2;
  double t[2][99];
  for (int r = 0; r < rounds; r++)
    for (int v = 0; v < 2; v++)
      if ((t[v][r] = one(argv[1], bytes, row, v)) < 0) {
        perror("bench_prefault");
        return 1;
      }
  printf("%zu-byte rows into a fresh %zu MiB shared file mapping, CPU ns per row, median (min-max) of %d "
         "interleaved rounds\n",
         row, bytes >> 20, rounds);
  const char *what[2] = {"faulted on first write", "MADV_POPULATE_WRITE first"};
  for (int v = 0; v < 2; v++) {
    qsort(t[v], (size_t)rounds, sizeof(double), cmp);
    double m = rounds % 2 ? t[v][rounds / 2] : (t[v][rounds / 2 - 1] + t[v][rounds / 2]) / 2;
    printf("  %-28s %8.1f (%.1f-%.1f)\n", what[v], m, t[v][0], t[v][rounds - 1]);
  }
  return 0;
}
