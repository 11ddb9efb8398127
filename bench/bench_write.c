/* Benchmark: write rate (rows/s) and bytes per row of dispatch and counter-value rows through the hub,
 * for every format, against the baseline of plain SQLite from C (one transaction, one prepared statement,
 * a 4-column row) measured in the same run; REPEATS interleaved rounds (each writes every case once), the
 * median and min-max of the rates. usage: bench_write DIR [ROWS [REPEATS]] */
/* SPDX-License-Identifier: MIT */
#include "hubprof/hub.h"

#include <ftw.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long long size_of(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 ? (long long)st.st_size : 0;
}

static long long dir_bytes;
static int add_size(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  if (flag == FTW_F) dir_bytes += (long long)sb->st_size;
  return 0;
}
static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) { return remove(p); }

/* Size of a store's payload: a file's size, or for a log the bytes up to its last non-zero byte
 * (a log keeps whole preallocated chunks; the unused tail is not data). */
static long long used_size(const char *p, const char *format) {
  struct stat st;
  if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) { /* a directory store (parquet): all its files */
    dir_bytes = 0;
    nftw(p, add_size, 16, FTW_PHYS);
    return dir_bytes;
  }
  long long n = size_of(p);
  if (strcmp(format, "log") != 0) return n;
  FILE *f = fopen(p, "rb");
  if (!f) return n;
  char *b = malloc((size_t)n);
  long long got = (long long)fread(b, 1, (size_t)n, f);
  fclose(f);
  while (got > 0 && b[got - 1] == 0)
    got--;
  free(b);
  return got;
}

typedef struct result {
  double secs;
  long long bytes;
} result;

/* Write `rows` rows of table t (dispatch or counter_value) into a fresh store; time includes commit. */
static result write_rows(const char *dir, const char *format, hp_table t, long rows) {
  char path[4096];
  snprintf(path, sizeof path, "%s/bench-%s-%s", dir, hp_table_describe(t)->name, format);
  nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  hp_store *s;
  if (hp_store_open(path, format, HP_CREATE, &s) != HP_OK) {
    fprintf(stderr, "bench_write: %s\n", hp_store_error(s));
    exit(1);
  }
  hp_kernel_symbol k = {.size = sizeof k, .id = 1, .name = "vector_add", .display_name = "vector_add"};
  hp_write_kernel_symbol(s, &k);
  hp_counter_info ci = {.size = sizeof ci, .id = 1, .name = "task-clock", .unit = "ns"};
  hp_write_counter_info(s, &ci);
  double t0 = now();
  hp_status st = HP_OK;
  if (t == HP_TABLE_DISPATCH) {
    hp_dispatch d = {.size = sizeof d,
                     .process_id = 1,
                     .thread_id = 1,
                     .agent_id = 1,
                     .queue_id = 1,
                     .kernel_id = 1,
                     .grid = {1048576, 1, 1},
                     .workgroup = {256, 1, 1},
                     .passes = 1};
    int64_t ts = 1700000000000000000LL;
    for (long i = 1; i <= rows && st == HP_OK; i++) {
      d.id = d.dispatch_id = (uint64_t)i;
      d.enqueue_ns = ts;
      d.start_ns = ts + 1200;
      d.end_ns = ts + 1200 + 3000 + (i & 255);
      ts += 5000;
      st = hp_write_dispatch(s, &d);
    }
  } else {
    hp_counter_value v = {.size = sizeof v, .counter_id = 1, .pass = 1};
    for (long i = 1; i <= rows && st == HP_OK; i++) {
      v.dispatch_id = (uint64_t)(i / 8 + 1);
      v.counter_id = (uint64_t)(i % 8 + 1);
      v.pass = (uint32_t)(i % 3 + 1);
      v.value = (double)(i * 37 % 100003);
      st = hp_write_counter_value(s, &v);
    }
  }
  if (st != HP_OK || hp_store_commit(s) != HP_OK) {
    fprintf(stderr, "bench_write: %s\n", hp_store_error(s));
    exit(1);
  }
  result r = {now() - t0, 0};
  hp_store_close(s);
  r.bytes = used_size(path, format);
  nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  return r;
}

/* Baseline: plain SQLite, one transaction, one prepared statement, a 4-column integer/real row. */
static result sqlite_baseline(const char *dir, long rows) {
  char path[4096];
  snprintf(path, sizeof path, "%s/bench-sqlite-baseline.db", dir);
  unlink(path);
  sqlite3 *db;
  sqlite3_stmt *st;
  double t0 = now();
  if (sqlite3_open(path, &db) != SQLITE_OK) {
    fprintf(stderr, "bench_write: %s: %s\n", path, sqlite3_errmsg(db));
    exit(1);
  }
  sqlite3_exec(
      db,
      "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; CREATE TABLE v(d INTEGER, c INTEGER, p INTEGER, "
      "value REAL); BEGIN;",
      NULL, NULL, NULL);
  sqlite3_prepare_v2(db, "INSERT INTO v VALUES (?,?,?,?)", -1, &st, NULL);
  for (long i = 1; i <= rows; i++) {
    sqlite3_bind_int64(st, 1, i / 8 + 1);
    sqlite3_bind_int64(st, 2, i % 8 + 1);
    sqlite3_bind_int64(st, 3, i % 3 + 1);
    sqlite3_bind_double(st, 4, (double)(i * 37 % 100003));
    if (sqlite3_step(st) != SQLITE_DONE) {
      fprintf(stderr, "bench_write: %s: %s\n", path, sqlite3_errmsg(db));
      exit(1);
    }
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
  sqlite3_close(db);
  result r = {now() - t0, size_of(path)};
  unlink(path);
  return r;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorted in place). */
static double median_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_dbl);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MAX_CASES 16
#define MAX_REPS 15

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_write DIR [ROWS [REPEATS]]\n");
    return 2;
  }
  long rows = argc > 2 ? atol(argv[2]) : 2000000;
  int reps = argc > 3 ? atoi(argv[3]) : 3;
  if (reps < 1 || reps > MAX_REPS) reps = 3;
  static double rate[MAX_CASES][MAX_REPS];
  double bytes[MAX_CASES] = {0};
  char what[MAX_CASES][64];
  int ncases = 0;
  for (int r = 0; r < reps; r++) { /* interleaved: a noisy moment hits every case alike */
    int c = 0;
    result base = sqlite_baseline(argv[1], rows);
    snprintf(what[c], sizeof what[c], "plain SQLite, 4-column row");
    rate[c][r] = rows / base.secs;
    bytes[c++] = (double)base.bytes / rows;
    for (const char *const *f = hp_formats(); *f && c < MAX_CASES; f++) {
      hp_table tabs[2] = {HP_TABLE_COUNTER_VALUE, HP_TABLE_DISPATCH};
      for (int i = 0; i < 2 && c < MAX_CASES; i++, c++) {
        result w = write_rows(argv[1], *f, tabs[i], rows);
        snprintf(what[c], sizeof what[c], "%s: %s rows", *f, hp_table_describe(tabs[i])->name);
        rate[c][r] = rows / w.secs;
        bytes[c] = (double)w.bytes / rows;
      }
    }
    ncases = c;
  }
  printf("rows/s: median (min-max) of %d interleaved rounds\n", reps);
  printf("%-34s %12s %25s %10s %10s\n", "what", "rows/s", "min-max", "bytes/row", "vs sqlite");
  double base_rate = 0;
  for (int c = 0; c < ncases; c++) {
    double m = median_of(rate[c], reps);
    if (c == 0) base_rate = m;
    char range[64];
    snprintf(range, sizeof range, "%.0f-%.0f", rate[c][0], rate[c][reps - 1]);
    printf("%-34s %12.0f %25s %10.1f %9.2fx\n", what[c], m, range, bytes[c], m / base_rate);
  }
  return 0;
}
