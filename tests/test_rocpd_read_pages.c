/* rocpd dispatch rows read straight from the table's pages (rocpd_btree.c) give exactly what SQLite's
 * statements give (HUBPROF_ROCPD_READ_PAGES=0): whole tables, parts, column batches; on trees built by the
 * page writer and by SQLite; with reals, texts in integer columns, extdata on overflow pages and NULLs put in
 * by another SQLite client (the reader falls back to SQLite from such a row, or reads it as SQLite would);
 * and damaged files: the same rows, or a failure both ways. */
/* SPDX-License-Identifier: MIT */
#include "hubprof/hub.h"

#include "check.h"

#include <dirent.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NDISP 30000

static char dir[512];
static int quiet; /* damaged files: a failed read is an answer, not a test failure */
static char last_error[512];

static const char *path_in(const char *name) {
  static char p[4][1024];
  static int i;
  i = (i + 1) % 4;
  snprintf(p[i], sizeof p[i], "%s/%s", dir, name);
  return p[i];
}

/* NDISP dispatches of varied values (ids with gaps, negative and large numbers, extdata keys set and not) */
static int make_store(const char *path, int pages) {
  if (!pages) setenv("HUBPROF_ROCPD_PAGES", "0", 1);
  hp_store *s = NULL;
  int bad = hp_store_open(path, "rocpd", HP_CREATE, &s) != HP_OK;
  uint64_t x = 88172645463325252ull, id = 0;
  for (uint64_t i = 0; i < NDISP && !bad; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    id += 1 + (x % 97 == 0 ? 1000 : 0);
    hp_dispatch d = {.size = sizeof d,
                     .id = id,
                     .dispatch_id = x % 5 == 0 ? id + 7 : id,
                     .process_id = 1 + x % 3,
                     .thread_id = 1 + (x >> 8) % 4,
                     .agent_id = 1 + (x >> 12) % 2,
                     .queue_id = (x >> 14) % 3,
                     .kernel_id = (x >> 16) % 9,
                     .grid = {(uint32_t)(x >> 20), 1 + (uint32_t)(x % 7), 1},
                     .workgroup = {64, (uint32_t)(x >> 40) % 3, 1},
                     .private_size = (int64_t)(x % 1000) - 500,
                     .group_size = (int64_t)(x >> 33),
                     .start_ns = (int64_t)(x >> 2),
                     .end_ns = x % 11 == 0 ? 0 : (int64_t)(x >> 2) + (int64_t)(x % 100000),
                     .enqueue_ns = x % 3 ? (int64_t)(x >> 3) : 0,
                     .passes = (uint32_t)(x % 4),
                     .bytes_accessible = x % 13 == 0 ? x >> 1 : 0,
                     .bytes_restored = x % 17 == 0 ? 12345 : 0,
                     .cold = x % 19 == 0,
                     .region_id = x % 23 == 0 ? x % 1000 : 0,
                     .correlation_id = x % 29 == 0 ? x >> 5 : 0,
                     .graph_id = x % 31 == 0 ? 9 : 0};
    bad |= hp_write_dispatch(s, &d) != HP_OK;
  }
  bad |= hp_store_close(s) != HP_OK;
  unsetenv("HUBPROF_ROCPD_PAGES");
  return bad ? -1 : 0;
}

/* Every dispatch row of `path` (read from the pages unless pages is 0), parts of nparts read in turn and
 * joined; *n the rows. NULL on failure. */
static hp_dispatch *read_all(const char *path, int pages, unsigned nparts, size_t *n) {
  if (!pages) setenv("HUBPROF_ROCPD_READ_PAGES", "0", 1);
  hp_store *s = NULL;
  hp_dispatch *rows = malloc((NDISP + 8) * sizeof *rows);
  *n = 0;
  hp_status st = rows ? hp_store_open(path, "rocpd", HP_READ, &s) : HP_ERR_NOMEM;
  for (unsigned p = 0; st == HP_OK && p < nparts; p++) {
    hp_cursor *c = NULL;
    st = nparts > 1 ? hp_cursor_open_part(s, HP_TABLE_DISPATCH, p, nparts, &c)
                    : hp_cursor_open(s, HP_TABLE_DISPATCH, &c);
    while (st == HP_OK && *n < NDISP + 8) {
      hp_dispatch *d = &rows[*n];
      memset(d, 0, sizeof *d);
      d->size = sizeof *d;
      if ((st = hp_cursor_next(c, d)) == HP_OK) ++*n;
    }
    if (st == HP_END) st = HP_OK;
    if (!quiet) CHECK_MSG(st == HP_OK, "%s: %s", path, hp_store_error(s));
    hp_cursor_close(c);
  }
  snprintf(last_error, sizeof last_error, "%s", s ? hp_store_error(s) : "");
  hp_store_close(s);
  unsetenv("HUBPROF_ROCPD_READ_PAGES");
  if (st != HP_OK) {
    free(rows);
    return NULL;
  }
  return rows;
}

/* The columns agent_id, start_ns, passes and cold in batches of 1000 (rp_cursor_columns), as one array each;
 * their row count, or -1. */
static long read_batches(const char *path, int pages, uint64_t *agent, int64_t *start, uint32_t *passes,
                         uint32_t *cold) {
  if (!pages) setenv("HUBPROF_ROCPD_READ_PAGES", "0", 1);
  const hp_table_desc *t = hp_table_describe(HP_TABLE_DISPATCH);
  hp_store *s = NULL;
  hp_cursor *c = NULL;
  long total = 0;
  hp_status st = hp_store_open(path, "rocpd", HP_READ, &s);
  if (st == HP_OK) st = hp_cursor_open(s, HP_TABLE_DISPATCH, &c);
  while (st == HP_OK) {
    void *cols[64] = {0};
    for (size_t i = 0; i < t->ncolumns; i++) {
      const char *nm = t->columns[i].name;
      cols[i] = !strcmp(nm, "agent_id")   ? (void *)(agent + total)
                : !strcmp(nm, "start_ns") ? (void *)(start + total)
                : !strcmp(nm, "passes")   ? (void *)(passes + total)
                : !strcmp(nm, "cold")     ? (void *)(cold + total)
                                          : NULL;
    }
    size_t n = 0;
    st = hp_cursor_next_batch(c, cols, total + 1000 <= NDISP ? 1000 : (size_t)(NDISP - total), &n);
    total += (long)n;
    if (st == HP_OK && !n) st = HP_END;
  }
  hp_cursor_close(c);
  hp_store_close(s);
  unsetenv("HUBPROF_ROCPD_READ_PAGES");
  return st == HP_END ? total : -1;
}

static void check_same(const char *what, const char *path, unsigned nparts) {
  size_t na = 0, nb = 0;
  hp_dispatch *a = read_all(path, 1, nparts, &na), *b = read_all(path, 0, nparts, &nb);
  CHECK_MSG(a && b && na == nb && na > 0, "%s: %zu rows from pages, %zu through SQLite", what, na, nb);
  size_t diff = 0;
  for (size_t i = 0; a && b && i < na && i < nb; i++)
    if (memcmp(&a[i], &b[i], sizeof a[i]) != 0 && diff++ < 3)
      fprintf(stderr, "%s, %u parts: row %zu (id %llu / %llu) differs\n", what, nparts, i,
              (unsigned long long)a[i].id, (unsigned long long)b[i].id);
  CHECK_MSG(diff == 0, "%s, %u parts: %zu rows differ", what, nparts, diff);
  free(a);
  free(b);
}

static void check_file(const char *what, const char *path) {
  check_same(what, path, 1);
  check_same(what, path, 3);
  check_same(what, path, 7);
  static uint64_t ag[2][NDISP];
  static int64_t stt[2][NDISP];
  static uint32_t ps[2][NDISP], cl[2][NDISP];
  long na = read_batches(path, 1, ag[0], stt[0], ps[0], cl[0]);
  long nb = read_batches(path, 0, ag[1], stt[1], ps[1], cl[1]);
  CHECK_MSG(na > 0 && na == nb, "%s: batches %ld and %ld rows", what, na, nb);
  if (na > 0 && na == nb)
    CHECK_MSG(!memcmp(ag[0], ag[1], (size_t)na * 8) && !memcmp(stt[0], stt[1], (size_t)na * 8) &&
                  !memcmp(ps[0], ps[1], (size_t)na * 4) && !memcmp(cl[0], cl[1], (size_t)na * 4),
              "%s: batches differ", what);
}

/* Run SQL on the file with SQLite (another client changing hubprof's rows). */
static int exec_sql(const char *path, const char *sql) {
  sqlite3 *db = NULL;
  int rc = sqlite3_open(path, &db);
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
  if (rc != SQLITE_OK) fprintf(stderr, "%s: %s\n", path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  sqlite3_close(db);
  return rc;
}

static void copy_file(const char *from, const char *to) {
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  char buf[1 << 16];
  size_t n;
  while (a && b && (n = fread(buf, 1, sizeof buf, a)) > 0)
    CHECK(fwrite(buf, 1, n, b) == n);
  if (a) fclose(a);
  if (b) fclose(b);
}

int main(void) {
  snprintf(dir, sizeof dir, "%s/hp_rdpages_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  const char *built = path_in("pages.db"), *plain = path_in("sqlite.db"), *edited = path_in("edited.db");
  CHECK(make_store(built, 1) == 0);
  CHECK(make_store(plain, 0) == 0);
  check_file("page writer's tree", built);
  check_file("SQLite's tree", plain);

  /* rows another client changed: a real, a NULL, a text in integer columns, extdata over several overflow
   * pages, a record longer than the table (a column added) */
  copy_file(built, edited);
  /* the view's table by its uuid name (updates go to the table, not the view) */
  sqlite3 *db = NULL;
  char table[256] = "";
  if (sqlite3_open(edited, &db) == SQLITE_OK) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE "
                           "'rocpd^_kernel^_dispatch^_%' ESCAPE '^'",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      snprintf(table, sizeof table, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  CHECK(table[0] != 0);
  static char pad[30000];
  memset(pad, 'x', sizeof pad - 1);
  char *sql = sqlite3_mprintf(
      "UPDATE \"%w\" SET \"end\" = 1234.75 WHERE id = (SELECT id FROM \"%w\" LIMIT 1 OFFSET 100);"
      "UPDATE \"%w\" SET private_segment_size = NULL, tid = NULL WHERE id = (SELECT id FROM \"%w\" LIMIT 1 "
      "OFFSET 200);"
      "UPDATE \"%w\" SET extdata = '{\"pad\":\"%s\",\"passes\":3,\"cold\":1}' WHERE id = (SELECT id FROM "
      "\"%w\" LIMIT 1 OFFSET 300);"
      "UPDATE \"%w\" SET grid_size_x = '12abc' WHERE id = (SELECT id FROM \"%w\" LIMIT 1 OFFSET 20000);",
      table, table, table, table, table, pad, table, table, table);
  CHECK(sql && exec_sql(edited, sql) == SQLITE_OK);
  sqlite3_free(sql);
  check_file("rows changed by SQLite", edited);

  char *add = sqlite3_mprintf("ALTER TABLE \"%w\" ADD COLUMN extra INTEGER DEFAULT 5;"
                              "UPDATE \"%w\" SET extra = 6 WHERE id %% 2 = 0;",
                              table, table);
  CHECK(exec_sql(edited, add) == SQLITE_OK);
  sqlite3_free(add);
  check_file("a column added", edited);

  /* damage: 16 bytes overwritten at places through the file; the pages and SQLite give the same answer (the
   * same rows, or both a failure) */
  size_t size = 0;
  FILE *fb = fopen(built, "rb");
  unsigned char *orig = NULL;
  if (fb && fseek(fb, 0, SEEK_END) == 0 && (size = (size_t)ftell(fb)) > 0 && (orig = malloc(size)) &&
      fseek(fb, 0, SEEK_SET) == 0 && fread(orig, 1, size, fb) != size)
    size = 0;
  if (fb) fclose(fb);
  CHECK(orig && size > 65536);
  const char *hurt = path_in("damaged.db");
  int same = 0, failed = 0, differ = 0;
  quiet = 1;
  for (size_t at = 4096; orig && at + 16 < size; at += size / 97) {
    FILE *o = fopen(hurt, "wb");
    uint64_t x = at * 0x9E3779B97F4A7C15ull;
    unsigned char bad[16];
    for (int i = 0; i < 16; i++)
      bad[i] = (unsigned char)(x >> (i % 8 * 8)) ^ (unsigned char)i;
    if (o) {
      fwrite(orig, 1, at, o);
      fwrite(bad, 1, sizeof bad, o);
      fwrite(orig + at + 16, 1, size - at - 16, o);
      fclose(o);
    }
    size_t na = 0, nb = 0;
    hp_dispatch *a = read_all(hurt, 1, 1, &na);
    char ea[512];
    snprintf(ea, sizeof ea, "%s", last_error);
    hp_dispatch *b = read_all(hurt, 0, 1, &nb);
    if (!a && !b) {
      failed++;
    } else if (a && b && na == nb && !memcmp(a, b, na * sizeof *a)) {
      same++;
    } else {
      differ++;
      fprintf(stderr, "damage at %zu: pages %s (%zu rows%s%s), SQLite %s (%zu rows%s%s)\n", at,
              a ? "read" : "failed", na, a ? "" : ": ", a ? "" : ea, b ? "read" : "failed", nb, b ? "" : ": ",
              b ? "" : last_error);
    }
    free(a);
    free(b);
  }
  quiet = 0;
  free(orig);
  CHECK_MSG(differ == 0 && same + failed > 50, "damage: %d the same, %d failed both ways, %d differ", same,
            failed, differ);

  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (e->d_name[0] != '.') unlink(path_in(e->d_name));
  if (d) closedir(d);
  rmdir(dir);
  return check_report("test_rocpd_read_pages");
}
