/* Benchmark: merging many per-process profiles into one rocpd file, like with like. Same rocpd inputs:
 * SQLite's own INSERT … SELECT transfer (the way ROCm's tools merge: ATTACH each file, CREATE its tables,
 * INSERT … SELECT, UNION ALL views) against hubprof's merge (hp_merge) writing through prepared INSERTs in
 * one transaction (HUBPROF_ROCPD_PAGES=0) and through its page writer. Same log inputs: hubprof's merge into
 * rocpd through prepared INSERTs against the page writer (and into Parquet and one log). Interleaved runs;
 * prints median, min and max per variant and the ratios within each group. usage: bench_merge LOGDIR ROCPDDIR
 * OUTDIR [REPEATS]   (inputs made by examples/gen_logs) */
/* SPDX-License-Identifier: MIT */
#include "hubprof/hub.h"

#include <dirent.h>
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

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted paths of the files in dir ending with suffix. */
static char **list_dir(const char *dir, const char *suffix, size_t *n) {
  DIR *d = opendir(dir);
  if (!d) {
    perror(dir);
    exit(1);
  }
  char **v = NULL;
  size_t cap = 0;
  *n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name), sl = strlen(suffix);
    if (l <= sl || strcmp(e->d_name + l - sl, suffix) != 0) continue;
    if (*n == cap) v = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof *v);
    size_t pl = strlen(dir) + l + 2;
    v[*n] = malloc(pl);
    snprintf(v[(*n)++], pl, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  qsort(v, *n, sizeof *v, cmp_str);
  return v;
}

static long long file_size(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 ? (long long)st.st_size : -1;
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) { return remove(p); }
/* Remove a file or a directory store (parquet). */
static void remove_store(const char *p) { nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* hubprof: hp_merge of all inputs into one store of `format`. Returns seconds, fills dispatch rows. */
static double hub_merge(char **in_paths, size_t n, const char *out, const char *format, int pages,
                        unsigned long long *rows) {
  remove_store(out);
  setenv("HUBPROF_ROCPD_PAGES", pages ? "1" : "0", 1);
  double t0 = now();
  hp_store **in = calloc(n, sizeof *in), *o;
  for (size_t i = 0; i < n; i++)
    if (hp_store_open(in_paths[i], NULL, HP_READ, &in[i]) != HP_OK) {
      fprintf(stderr, "bench_merge: %s\n", hp_store_error(in[i]));
      exit(1);
    }
  if (hp_store_open(out, format, HP_CREATE, &o) != HP_OK) {
    fprintf(stderr, "bench_merge: %s\n", hp_store_error(o));
    exit(1);
  }
  hp_merge_stats st = {.size = sizeof st};
  if (hp_merge(o, in, n, &st) != HP_OK || hp_store_commit(o) != HP_OK) {
    fprintf(stderr, "bench_merge: %s\n", hp_store_error(o));
    exit(1);
  }
  hp_store_close(o);
  for (size_t i = 0; i < n; i++)
    hp_store_close(in[i]);
  free(in);
  *rows = st.rows_out[HP_TABLE_DISPATCH] + st.rows_out[HP_TABLE_COUNTER_VALUE];
  return now() - t0;
}

static void exec_sql(sqlite3 *db, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
    fprintf(stderr, "bench_merge: sql error: %s\n  in: %.200s\n", err, sql);
    exit(1);
  }
}

/* ROCm's way (rocpd merge): ATTACH each file, create its uniquely named tables in the destination,
 * copy every table with INSERT … SELECT, DETACH; at the end one UNION ALL view per base name.
 * Pragmas as ROCm's merge sets them: synchronous NORMAL, foreign keys off, and the journal mode `journal`:
 * WAL (rocpd merge.py as first released) or DELETE (its current version, which is faster here). Both
 * leave out what the current version does besides (indexes per file, foreign_key_check, quick_check). */
static double attach_merge(char **in_paths, size_t n, const char *out, const char *journal) {
  unlink(out);
  char wal[4200];
  snprintf(wal, sizeof wal, "%s-wal", out);
  unlink(wal);
  snprintf(wal, sizeof wal, "%s-journal", out);
  unlink(wal);
  double t0 = now();
  sqlite3 *db;
  if (sqlite3_open(out, &db) != SQLITE_OK) exit(1);
  char pragmas[128];
  snprintf(pragmas, sizeof pragmas,
           "PRAGMA journal_mode=%s; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF;", journal);
  exec_sql(db, pragmas);
  char sql[8192];
  for (size_t i = 0; i < n; i++) {
    sqlite3_stmt *st;
    snprintf(sql, sizeof sql, "ATTACH DATABASE '%s' AS src", in_paths[i]);
    exec_sql(db, sql);
    exec_sql(db, "BEGIN");
    if (sqlite3_prepare_v2(
            db, "SELECT name, sql FROM src.sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'", -1,
            &st, NULL) != SQLITE_OK)
      exit(1);
    while (sqlite3_step(st) == SQLITE_ROW) {
      const char *name = (const char *)sqlite3_column_text(st, 0),
                 *create = (const char *)sqlite3_column_text(st, 1);
      if (!create) continue;
      exec_sql(db, create);
      snprintf(sql, sizeof sql, "INSERT INTO main.\"%s\" SELECT * FROM src.\"%s\"", name, name);
      exec_sql(db, sql);
    }
    sqlite3_finalize(st);
    exec_sql(db, "COMMIT");
    exec_sql(db, "DETACH DATABASE src");
  }
  /* UNION ALL views over the per-file tables, as ROCm's merge builds them */
  const char *bases[] = {
      "rocpd_kernel_dispatch",    "rocpd_event",      "rocpd_pmc_event",    "rocpd_string",
      "rocpd_info_kernel_symbol", "rocpd_info_agent", "rocpd_info_process", "rocpd_info_thread"};
  for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++) {
    sqlite3_stmt *st;
    snprintf(sql, sizeof sql,
             "SELECT group_concat('SELECT * FROM \"' || name || '\"', ' UNION ALL ') FROM sqlite_master "
             "WHERE type='table' AND name LIKE '%s^_%%' ESCAPE '^'",
             bases[b]);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) exit(1);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
      char *u = sqlite3_mprintf("CREATE VIEW \"merged_%s\" AS %s", bases[b], sqlite3_column_text(st, 0));
      exec_sql(db, u);
      sqlite3_free(u);
    }
    sqlite3_finalize(st);
  }
  if (strcmp(journal, "WAL") == 0) exec_sql(db, "PRAGMA wal_checkpoint(TRUNCATE)");
  sqlite3_close(db);
  return now() - t0;
}

/* PRAGMA quick_check of an output (b-tree structure, page use, record formats): hubprof writes the pages of
 * its big tables itself, so every run checks what it wrote. Not timed. */
static void check_output(const char *path) {
  sqlite3 *db;
  sqlite3_stmt *st;
  const char *r = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &st, NULL) == SQLITE_OK) {
    if (sqlite3_step(st) == SQLITE_ROW) r = (const char *)sqlite3_column_text(st, 0);
    if (!r || strcmp(r, "ok") != 0) {
      fprintf(stderr, "bench_merge: %s: quick_check: %s\n", path, r ? r : sqlite3_errmsg(db));
      exit(1);
    }
    sqlite3_finalize(st);
  } else {
    fprintf(stderr, "bench_merge: %s: cannot check: %s\n", path, sqlite3_errmsg(db));
    exit(1);
  }
  sqlite3_close(db);
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return v[n / 2];
}

enum {
  V_ATTACH,
  V_ATTACH_DEL,
  V_DB_PLAIN,
  V_DB_PAGES,
  V_LOG_PLAIN,
  V_LOG_PAGES,
  V_LOG_PQ,
  V_LOG_LOG,
  V_COUNT
};

static void line(const char *name, double *t, int reps, double rows, double base) {
  double mn = t[0], mx = t[0];
  for (int i = 1; i < reps; i++) {
    mn = t[i] < mn ? t[i] : mn;
    mx = t[i] > mx ? t[i] : mx;
  }
  double m = median(t, reps);
  printf("  %-52s %7.3f s (%.3f-%.3f) %11.0f rows/s  %.2fx\n", name, m, mn, mx, rows / m, base / m);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: bench_merge LOGDIR ROCPDDIR OUTDIR [REPEATS]\n");
    return 2;
  }
  int reps = argc > 4 ? atoi(argv[4]) : 3;
  if (reps < 1 || reps > 15) reps = 3;
  size_t nlog, ndb;
  char **logs = list_dir(argv[1], ".log", &nlog), **dbs = list_dir(argv[2], ".db", &ndb);
  char out[4096];
  double t[V_COUNT][15];
  unsigned long long rows = 0, rows_db = 0;
  for (int r = 0; r < reps; r++) { /* interleaved, so a noisy moment hits every variant alike */
    snprintf(out, sizeof out, "%s/attach.db", argv[3]);
    t[V_ATTACH][r] = attach_merge(dbs, ndb, out, "WAL");
    snprintf(out, sizeof out, "%s/attach-delete.db", argv[3]);
    t[V_ATTACH_DEL][r] = attach_merge(dbs, ndb, out, "DELETE");
    snprintf(out, sizeof out, "%s/hub-from-rocpd-plain.db", argv[3]);
    t[V_DB_PLAIN][r] = hub_merge(dbs, ndb, out, "rocpd", 0, &rows_db);
    snprintf(out, sizeof out, "%s/hub-from-rocpd.db", argv[3]);
    t[V_DB_PAGES][r] = hub_merge(dbs, ndb, out, "rocpd", 1, &rows_db);
    snprintf(out, sizeof out, "%s/hub-from-logs-plain.db", argv[3]);
    t[V_LOG_PLAIN][r] = hub_merge(logs, nlog, out, "rocpd", 0, &rows);
    snprintf(out, sizeof out, "%s/hub-from-logs.db", argv[3]);
    t[V_LOG_PAGES][r] = hub_merge(logs, nlog, out, "rocpd", 1, &rows);
    snprintf(out, sizeof out, "%s/hub-from-logs.parquet", argv[3]);
    t[V_LOG_PQ][r] = hub_merge(logs, nlog, out, "parquet", 1, &rows);
    snprintf(out, sizeof out, "%s/hub-from-logs.log", argv[3]);
    t[V_LOG_LOG][r] = hub_merge(logs, nlog, out, "log", 1, &rows);
  }
  long long in_log = 0, in_db = 0;
  for (size_t i = 0; i < nlog; i++)
    in_log += file_size(logs[i]);
  for (size_t i = 0; i < ndb; i++)
    in_db += file_size(dbs[i]);
  printf("median (min-max) of %d interleaved runs; ratios against the first line of each group\n", reps);
  printf("same input: %zu rocpd files (%.1f MB), %llu dispatch+counter rows\n", ndb, in_db / 1e6, rows_db);
  double base = median(t[V_ATTACH], reps);
  line("SQLite INSERT..SELECT transfer (ROCm's way, WAL)", t[V_ATTACH], reps, (double)rows_db, base);
  line("SQLite INSERT..SELECT transfer, DELETE journal", t[V_ATTACH_DEL], reps, (double)rows_db, base);
  line("hubprof merge -> rocpd, prepared INSERTs", t[V_DB_PLAIN], reps, (double)rows_db, base);
  line("hubprof merge -> rocpd, page writer", t[V_DB_PAGES], reps, (double)rows_db, base);
  printf("same input: %zu logs (%.1f MB), %llu dispatch+counter rows\n", nlog, in_log / 1e6, rows);
  base = median(t[V_LOG_PLAIN], reps);
  line("hubprof merge -> rocpd, prepared INSERTs", t[V_LOG_PLAIN], reps, (double)rows, base);
  line("hubprof merge -> rocpd, page writer", t[V_LOG_PAGES], reps, (double)rows, base);
  line("hubprof merge -> parquet", t[V_LOG_PQ], reps, (double)rows, base);
  line("hubprof merge -> one log", t[V_LOG_LOG], reps, (double)rows, base);
  snprintf(out, sizeof out, "%s/attach.db", argv[3]);
  long long sa = file_size(out);
  snprintf(out, sizeof out, "%s/hub-from-logs.db", argv[3]);
  long long sh = file_size(out);
  printf("output size: ATTACH way %.1f MB, hubprof %.1f MB\n", sa / 1e6, sh / 1e6);
  const char *checked[] = {"hub-from-logs.db", "hub-from-rocpd.db", "hub-from-logs-plain.db",
                           "hub-from-rocpd-plain.db"};
  for (size_t i = 0; i < sizeof checked / sizeof checked[0]; i++) {
    snprintf(out, sizeof out, "%s/%s", argv[3], checked[i]);
    check_output(out);
  }
  printf("hubprof's rocpd outputs pass PRAGMA quick_check\n");
  return 0;
}
