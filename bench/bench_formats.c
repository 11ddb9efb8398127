/* Benchmark: the same store (a per-process log made by gen_logs) written as rocpd and as Parquet through
 * the hub, side by side in one run: bytes on disk, write rate and full-read rate of each.
 * usage: bench_formats LOG OUTDIR [REPEATS] */
/* SPDX-License-Identifier: MIT */
#include "hubprof/hub.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long long bytes;
static int add_size(const char *p, const struct stat *sb, int flag, struct FTW *f) {
  if (flag == FTW_F) bytes += (long long)sb->st_size;
  return 0;
}
static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *f) { return remove(p); }

static long long store_bytes(const char *p) {
  bytes = 0;
  nftw(p, add_size, 16, FTW_PHYS);
  return bytes;
}

static void die(hp_store *s, const char *what) {
  fprintf(stderr, "bench_formats: %s: %s\n", what, s ? hp_store_error(s) : "?");
  exit(1);
}

/* Convert `in` to `out` in `format`; seconds. */
static double convert(const char *in, const char *out, const char *format) {
  nftw(out, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  double t0 = now();
  hp_store *i, *o;
  if (hp_store_open(in, NULL, HP_READ, &i) != HP_OK) die(i, in);
  if (hp_store_open(out, format, HP_CREATE, &o) != HP_OK) die(o, out);
  if (hp_merge(o, &i, 1, NULL) != HP_OK || hp_store_commit(o) != HP_OK) die(o, out);
  hp_store_close(o);
  hp_store_close(i);
  return now() - t0;
}

/* Read every row of every table through cursors; seconds. *rows gets the rows read. */
static double read_all(const char *path, unsigned long long *rows) {
  double t0 = now();
  hp_store *s;
  if (hp_store_open(path, NULL, HP_READ, &s) != HP_OK) die(s, path);
  char row[512];
  *rows = 0;
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    hp_cursor *c;
    if (hp_cursor_open(s, (hp_table)t, &c) != HP_OK) die(s, path);
    memset(row, 0, sizeof row);
    *(uint32_t *)row = (uint32_t)hp_table_describe((hp_table)t)->row_size;
    while (hp_cursor_next(c, row) == HP_OK)
      (*rows)++;
    hp_cursor_close(c);
  }
  hp_store_close(s);
  return now() - t0;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench_formats LOG OUTDIR [REPEATS]\n");
    return 2;
  }
  int reps = argc > 3 ? atoi(argv[3]) : 3;
  if (reps < 1 || reps > 15) reps = 3;
  const char *formats[2] = {"rocpd", "parquet"};
  char out[2][4096];
  double w[2][15], r[2][15];
  unsigned long long rows = 0;
  for (int f = 0; f < 2; f++)
    snprintf(out[f], sizeof out[f], "%s/store.%s", argv[2], formats[f]);
  for (int k = 0; k < reps; k++) /* interleaved: noise hits both alike */
    for (int f = 0; f < 2; f++) {
      w[f][k] = convert(argv[1], out[f], formats[f]);
      r[f][k] = read_all(out[f], &rows);
    }
  long long size[2] = {store_bytes(out[0]), store_bytes(out[1])};
  printf("store: %llu rows in all tables (from %s); rows/s: median (min-max) of %d interleaved runs\n", rows,
         argv[1], reps);
  printf("%-10s %14s %10s %34s %34s\n", "format", "bytes", "vs rocpd", "write rows/s", "read rows/s");
  for (int f = 0; f < 2; f++) {
    qsort(w[f], (size_t)reps, sizeof(double), cmp_d);
    qsort(r[f], (size_t)reps, sizeof(double), cmp_d);
    double mw = reps % 2 ? w[f][reps / 2] : (w[f][reps / 2 - 1] + w[f][reps / 2]) / 2;
    double mr = reps % 2 ? r[f][reps / 2] : (r[f][reps / 2 - 1] + r[f][reps / 2]) / 2;
    char ws[64], rs[64]; /* the slowest time is the lowest rate */
    snprintf(ws, sizeof ws, "%.0f (%.0f-%.0f)", rows / mw, rows / w[f][reps - 1], rows / w[f][0]);
    snprintf(rs, sizeof rs, "%.0f (%.0f-%.0f)", rows / mr, rows / r[f][reps - 1], rows / r[f][0]);
    printf("%-10s %14lld %9.1f%% %34s %34s\n", formats[f], size[f], 100.0 * (double)size[f] / (double)size[0],
           ws, rs);
  }
  return 0;
}
