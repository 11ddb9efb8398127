/* Benchmark: write rate (rows/s) and bytes per row of dispatch and counter-value rows through the hub,
 * for every format, against the baseline of plain SQLite from C (one transaction, one prepared statement,
 * a 4-column row) measured in the same run. usage: bench_write DIR [ROWS] */
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

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_write DIR [ROWS]\n");
    return 2;
  }
  long rows = argc > 2 ? atol(argv[2]) : 2000000;
  result base = sqlite_baseline(argv[1], rows);
  double base_rate = rows / base.secs;
  printf("%-34s %12s %10s %10s\n", "what", "rows/s", "bytes/row", "vs sqlite");
  printf("%-34s %12.0f %10.1f %9.2fx\n", "plain SQLite, 4-column row", base_rate, (double)base.bytes / rows,
         1.0);
  for (const char *const *f = hp_formats(); *f; f++) {
    hp_table tabs[2] = {HP_TABLE_COUNTER_VALUE, HP_TABLE_DISPATCH};
    for (int i = 0; i < 2; i++) {
      result r = write_rows(argv[1], *f, tabs[i], rows);
      char what[64];
      snprintf(what, sizeof what, "%s: %s rows", *f, hp_table_describe(tabs[i])->name);
      printf("%-34s %12.0f %10.1f %9.2fx\n", what, rows / r.secs, (double)r.bytes / rows,
             (rows / r.secs) / base_rate);
    }
  }
  return 0;
}
