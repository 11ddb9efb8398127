/* Tests of the "parquet" format: round trip of every table and column (edge values, dictionary and plain
 * pages, several row groups and files, empty tables), replacing and aborting stores, and damaged stores
 * (missing manifest or files, truncation, bad magic, footer and page corruption) giving clear errors.
 * Also a helper for tests/parquet/check_readers.py:
 *   test_parquet --sample DIR EXPECT.json [N]  write a sample store (tables cut to N rows, row groups of
 *                                              16) and what readers must find in it
 *   test_parquet --checksums DIR            print the same figures as read back through the hub */
/* SPDX-License-Identifier: MIT */
#include "check.h"
#include "hubprof/hub.h"
#include "hubprof/parquet.h"
#include "hubprof/dataset.h"
#include "parquet_fmt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- deterministic rows ---- */
static const char *strs[] = {"vector_add", "",      "quote ' and \" and \\", "ünïcødé ✓ カーネル", "a,b;c\td",
                             "x",          "gfx942"};
#define NSTRS (sizeof strs / sizeof strs[0])

static char strbuf[64][400]; /* strings of the last filled row, by column */

/* Value of column i of row r of table t: ids count up, references and every other column repeat (dictionary
 * pages), the rest vary (plain pages); edge values appear at fixed rows. */
static void fill(hp_table t, uint64_t r, void *row) {
  const hp_table_desc *d = hp_table_describe(t);
  memset(row, 0, d->row_size);
  *(uint32_t *)row = (uint32_t)d->row_size;
  for (size_t i = 0; i < d->ncolumns; i++) {
    const hp_column *c = &d->columns[i];
    char *p = (char *)row + c->offset;
    int rep = i % 2 == 1; /* a repetitive column */
    uint64_t v = rep ? r % 5 + (uint64_t)i : r * 1000 + i * 7 + (uint64_t)t;
    hp_dataset_column dc = {.size = sizeof dc};
    if (hp_dataset_column_describe(t, i, &dc) == HP_OK && dc.boolean) { /* a flag: 0 or 1 */
      *(uint32_t *)p = r % 3 == 1;
      continue;
    }
    if (strcmp(c->name, "id") == 0)
      v = r + 1;
    else if (c->ref)
      v = 1 + r % 5;
    switch (c->type) {
    case HP_COL_U32: *(uint32_t *)p = r % 17 == 3 ? 0xffffffffu : (uint32_t)v; break;
    case HP_COL_I32:
      *(int32_t *)p = r % 19 == 2 ? INT32_MIN : (int32_t)(r % 2 ? -(int64_t)v : (int64_t)v);
      break;
    case HP_COL_U64:
      *(uint64_t *)p = r % 11 == 4 && !c->ref && strcmp(c->name, "id") ? UINT64_C(0xfedcba9876543210) : v;
      break;
    case HP_COL_I64: {
      int64_t x = strstr(c->name, "_ns") ? (int64_t)(1000000000 + r * 1000 + i * 17)
                                         : (r % 2 ? -(int64_t)v : (int64_t)v);
      if (r % 23 == 5) x = INT64_MIN;
      if (r % 23 == 6) x = INT64_MAX;
      *(int64_t *)p = x;
      break;
    }
    case HP_COL_F64: {
      static const double dv[] = {0.0,    -0.0, 1e300,    -2.5,      3.141592653589793,
                                  1e-300, 42.0, INFINITY, -INFINITY, NAN};
      double x = r % 3 ? dv[r % 10] : (double)r * 0.5;
      if (r % 29 == 7) {
        uint64_t bits = UINT64_C(0x7ff8000000000123); /* a NaN with a payload */
        memcpy(&x, &bits, 8);
      }
      *(double *)p = x;
      break;
    }
    case HP_COL_STR: {
      char *s = strbuf[i];
      if (t == HP_TABLE_METADATA && i == 0)
        snprintf(s, sizeof strbuf[i], "key-%" PRIu64, r);
      else if (r % 97 == 5) {
        memset(s, 'L', 300); /* longer than the statistics keep */
        snprintf(s + 300, 40, "-%" PRIu64, r);
      } else if (r % 13 == 1)
        s[0] = 0;
      else if (rep)
        snprintf(s, sizeof strbuf[i], "%s", strs[r % NSTRS]);
      else
        snprintf(s, sizeof strbuf[i], "%s-%" PRIu64 "-%zu", strs[(r + i) % NSTRS], r, i);
      *(const char **)p = s;
      break;
    }
    }
  }
}

static int same_col(const hp_column *c, const void *a, const void *b) {
  const char *pa = (const char *)a + c->offset, *pb = (const char *)b + c->offset;
  switch (c->type) {
  case HP_COL_U32:
  case HP_COL_I32: return memcmp(pa, pb, 4) == 0;
  case HP_COL_U64:
  case HP_COL_I64:
  case HP_COL_F64: return memcmp(pa, pb, 8) == 0; /* doubles bit-exact: -0.0 and NaN payloads */
  case HP_COL_STR: return strcmp(*(const char *const *)pa, *(const char *const *)pb) == 0;
  }
  return 0;
}

/* ---- paths and files ---- */
static char *path_of(const char *name) {
  static char buf[8][512];
  static int k;
  char *p = buf[k++ % 8];
  snprintf(p, 512, "%s/hubprof-pq-%d-%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(), name);
  return p;
}

/* Remove a store: its files and table folders. */
static void rm_flat(const char *dir) {
  DIR *dp = opendir(dir);
  if (!dp) {
    unlink(dir);
    return;
  }
  struct dirent *e;
  char p[1024];
  while ((e = readdir(dp)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    struct stat sb;
    if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
      rm_flat(p);
    else
      unlink(p);
  }
  closedir(dp);
  rmdir(dir);
}

static void write_text(const char *p, const char *text) {
  FILE *f = fopen(p, "w");
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

/* Copy file `name` of directory `from` into directory `to`. */
static void copy_file(const char *from, const char *to, const char *name) {
  char a[1024], b[1024], buf[65536];
  snprintf(a, sizeof a, "%s/%s", from, name);
  snprintf(b, sizeof b, "%s/%s", to, name);
  int in = open(a, O_RDONLY), out = open(b, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  ssize_t n;
  while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
    if (write(out, buf, (size_t)n) != n) break;
  if (in >= 0) close(in);
  if (out >= 0) close(out);
}

/* Copy a store: its files and table folders. */
static void copy_flat(const char *from, const char *to) {
  rm_flat(to);
  mkdir(to, 0777);
  DIR *dp = opendir(from);
  if (!dp) return;
  struct dirent *e;
  char a[1024], b[1024];
  while ((e = readdir(dp)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    snprintf(a, sizeof a, "%s/%s", from, e->d_name);
    snprintf(b, sizeof b, "%s/%s", to, e->d_name);
    struct stat sb;
    if (stat(a, &sb) == 0 && S_ISDIR(sb.st_mode))
      copy_flat(a, b);
    else
      copy_file(from, to, e->d_name);
  }
  closedir(dp);
}

/* Remove every ', "footer_crc32c": N' from a manifest. */
static void drop_footer_crcs(const char *p) {
  FILE *f = fopen(p, "r");
  if (!f) return;
  static char buf[1 << 16], out[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f), o = 0;
  fclose(f);
  buf[n] = 0;
  const char *key = ", \"footer_crc32c\": ";
  for (char *q = buf; *q;) {
    if (strncmp(q, key, strlen(key)) == 0) {
      q += strlen(key);
      while (*q >= '0' && *q <= '9')
        q++;
      continue;
    }
    out[o++] = *q++;
  }
  out[o] = 0;
  write_text(p, out);
}

/* Replace the first `from` by `to` in a text file. */
static int replace_in_file(const char *p, const char *from, const char *to) {
  FILE *f = fopen(p, "r");
  if (!f) return -1;
  static char buf[1 << 16], out[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  char *hit = strstr(buf, from);
  if (!hit) return -1;
  snprintf(out, sizeof out, "%.*s%s%s", (int)(hit - buf), buf, to, hit + strlen(from));
  write_text(p, out);
  return 0;
}

static long file_size(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 ? (long)sb.st_size : -1;
}

static void poke(const char *p, long off, unsigned char xor_with) {
  int fd = open(p, O_RDWR);
  unsigned char b;
  if (fd < 0) return;
  if (pread(fd, &b, 1, off) == 1) {
    b ^= xor_with;
    if (pwrite(fd, &b, 1, off) != 1) perror("pwrite");
  }
  close(fd);
}

static int leftovers(const char *path) {
  /* temporaries beside the store: "<dir>/.<base>.tmp.*" */
  const char *slash = strrchr(path, '/');
  char dir[512], prefix[256];
  snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  snprintf(prefix, sizeof prefix, ".%s.tmp.", slash + 1);
  DIR *dp = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (dp && (e = readdir(dp)) != NULL)
    n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
  if (dp) closedir(dp);
  return n;
}

/* ---- writing and walking stores ---- */
static hp_status write_store(const char *path, const uint64_t rows[HP_TABLE_COUNT]) {
  rm_flat(path);
  hp_store *s;
  hp_status st = hp_store_open(path, "parquet", HP_CREATE, &s);
  CHECK_OK(st, s);
  if (st != HP_OK) {
    hp_store_abort(s);
    return st;
  }
  char row[512];
  for (int t = 0; t < HP_TABLE_COUNT; t++)
    for (uint64_t r = 0; r < rows[t]; r++) {
      fill((hp_table)t, r, row);
      st = hp_write(s, (hp_table)t, row);
      if (st != HP_OK) {
        CHECK_MSG(0, "write %s row %" PRIu64 ": %s", hp_table_describe((hp_table)t)->name, r,
                  hp_store_error(s));
        hp_store_abort(s);
        return st;
      }
    }
  st = hp_store_close(s);
  CHECK_MSG(st == HP_OK, "close: %s", hp_status_str(st));
  return st;
}

/* Every row of every table must equal what fill() wrote. */
static void verify_store(const char *path, const uint64_t rows[HP_TABLE_COUNT]) {
  hp_store *s;
  hp_status st = hp_store_open(path, NULL, HP_READ, &s);
  CHECK_OK(st, s);
  if (st != HP_OK) {
    hp_store_abort(s);
    return;
  }
  CHECK_STR(hp_store_format(s), "parquet");
  CHECK_STR(hp_store_schema_version(s), "1.1");
  CHECK_MSG(hp_store_damage(s, NULL) == HP_OK, "damage: %s", hp_store_error(s));
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    uint64_t n = 0;
    CHECK_OK(hp_store_count(s, (hp_table)t, &n), s);
    CHECK_MSG(n == rows[t], "%s: count %" PRIu64 ", expected %" PRIu64, d->name, n, rows[t]);
    hp_cursor *c;
    if (hp_cursor_open(s, (hp_table)t, &c) != HP_OK) {
      CHECK_MSG(0, "cursor %s: %s", d->name, hp_store_error(s));
      continue;
    }
    char got[512], want[512];
    uint64_t r = 0;
    int bad = 0;
    for (;; r++) {
      memset(got, 0xa5, sizeof got);
      *(uint32_t *)got = (uint32_t)d->row_size;
      st = hp_cursor_next(c, got);
      if (st != HP_OK) break;
      if (r >= rows[t] || bad > 5) continue;
      fill((hp_table)t, r, want);
      for (size_t i = 0; i < d->ncolumns; i++)
        if (!same_col(&d->columns[i], got, want)) {
          CHECK_MSG(0, "%s row %" PRIu64 " column %s differs", d->name, r, d->columns[i].name);
          bad++;
        }
    }
    CHECK_MSG(st == HP_END, "%s: cursor ended with %d: %s", d->name, (int)st, hp_store_error(s));
    CHECK_MSG(r == rows[t], "%s: cursor gave %" PRIu64 " rows of %" PRIu64, d->name, r, rows[t]);
    hp_cursor_close(c);
  }
  hp_store_close(s);
}

/* Columnar reads (hp_parquet_cursor_next_batch): every table with several column subsets and batch sizes,
 * mixed with row reads on the same cursor; every value must equal what fill() wrote. */
static void verify_batches(const char *path, const uint64_t rows[HP_TABLE_COUNT]) {
  hp_store *s;
  if (hp_store_open(path, NULL, HP_READ, &s) != HP_OK) {
    CHECK_MSG(0, "%s", hp_store_error(s));
    hp_store_close(s);
    return;
  }
  static const size_t sizes[] = {1, 7, 300, 5000};
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    for (int mode = 0; mode < 4; mode++) { /* 0 all columns, 1 odd ones, 2 the last one, 3 with row reads */
      hp_cursor *c;
      if (hp_cursor_open(s, (hp_table)t, &c) != HP_OK) continue;
      size_t max = sizes[mode];
      void *cols[64] = {0};
      for (size_t i = 0; i < d->ncolumns; i++)
        if (mode == 0 || mode == 3 || (mode == 1 && i % 2) || (mode == 2 && i + 1 == d->ncolumns))
          cols[i] = calloc(max, 8);
      uint64_t r = 0;
      int bad = 0;
      char want[512], got[512];
      for (int round = 0;; round++) {
        if (mode == 3 && round % 3 == 2) { /* a row read between batches */
          *(uint32_t *)got = (uint32_t)d->row_size;
          hp_status st = hp_cursor_next(c, got);
          if (st == HP_END) break;
          CHECK_OK(st, s);
          if (st != HP_OK) break;
          fill((hp_table)t, r, want);
          for (size_t i = 0; i < d->ncolumns && bad < 5; i++)
            if (!same_col(&d->columns[i], got, want)) {
              CHECK_MSG(0, "%s row %" PRIu64 " column %s differs (row read)", d->name, r, d->columns[i].name);
              bad++;
            }
          r++;
          continue;
        }
        size_t n = 0;
        hp_status st = hp_parquet_cursor_next_batch(c, cols, max, &n);
        if (st == HP_END) {
          CHECK(n == 0);
          break;
        }
        CHECK_MSG(st == HP_OK, "%s: batch: %s", d->name, hp_store_error(s));
        if (st != HP_OK) break;
        CHECK(n > 0 && n <= max);
        for (size_t k = 0; k < n; k++, r++) {
          fill((hp_table)t, r, want);
          for (size_t i = 0; i < d->ncolumns && bad < 5; i++) {
            const hp_column *col = &d->columns[i];
            if (!cols[i]) continue;
            memset(got, 0, sizeof got);
            size_t w = col->type == HP_COL_U32 || col->type == HP_COL_I32 ? 4 : 8;
            memcpy(got + col->offset, (char *)cols[i] + w * k, w);
            if (!same_col(col, got, want)) {
              CHECK_MSG(0, "%s row %" PRIu64 " column %s differs (batch of %zu, mode %d)", d->name, r,
                        col->name, max, mode);
              bad++;
            }
          }
        }
      }
      CHECK_MSG(r == rows[t], "%s: batches gave %" PRIu64 " rows of %" PRIu64 " (mode %d)", d->name, r,
                rows[t], mode);
      size_t n = 1;
      CHECK(hp_parquet_cursor_next_batch(c, cols, max, &n) == HP_END && n == 0); /* stays finished */
      for (size_t i = 0; i < d->ncolumns; i++)
        free(cols[i]);
      hp_cursor_close(c);
    }
  }
  hp_store_close(s);
}

/* A batch that leaves columns out passes over whole pages of them (1 MiB pages: 131072 int64 values) and
 * parts of pages; the values read later must still be the right ones. */
static void test_skip_pages(void) {
  uint64_t rows[HP_TABLE_COUNT] = {0};
  rows[HP_TABLE_DISPATCH] = 300000; /* one row group of three pages per column */
  const char *p = path_of("skip");
  if (write_store(p, rows) != HP_OK) return;
  hp_store *s;
  CHECK(hp_store_open(p, NULL, HP_READ, &s) == HP_OK);
  const hp_table_desc *d = hp_table_describe(HP_TABLE_DISPATCH);
  hp_cursor *c;
  if (hp_cursor_open(s, HP_TABLE_DISPATCH, &c) == HP_OK) {
    static uint64_t a[200000], b[200000];
    void *cols[64] = {0};
    uint64_t r = 0;
    char want[512];
    static const size_t plan[] = {200000, 50000, 7, 49993}; /* rows per batch */
    for (int round = 0; round < 4; round++) {
      memset(cols, 0, sizeof cols);
      size_t ca = round % 2 ? 1 : 0, cb = round % 2 ? 15 : 16; /* dispatch_id/start_ns, id/end_ns */
      cols[ca] = a;
      cols[cb] = b;
      size_t n = 0;
      CHECK_OK(hp_parquet_cursor_next_batch(c, cols, plan[round], &n), s);
      CHECK_EQ_U64(n, plan[round]);
      for (size_t k = 0; k < n; k++, r++) {
        fill(HP_TABLE_DISPATCH, r, want);
        if (memcmp(&a[k], want + d->columns[ca].offset, 8) ||
            memcmp(&b[k], want + d->columns[cb].offset, 8)) {
          CHECK_MSG(0, "row %" PRIu64 " differs after skipping", r);
          break;
        }
      }
    }
    size_t n = 1;
    CHECK(hp_parquet_cursor_next_batch(c, cols, 10, &n) == HP_END && n == 0);
    hp_cursor_close(c);
  }
  hp_store_close(s);
  rm_flat(p);
}

/* Open, count and walk every table; returns the open status. Checks that a damaged store explains itself
 * with the name of a file, and that a cursor that ends cleanly gave exactly the counted rows. */
static hp_status walk(const char *path, hp_status *damage, char *msg, size_t msglen, hp_status *cursor_err) {
  hp_store *s;
  hp_status st = hp_store_open(path, NULL, HP_READ, &s);
  *damage = HP_OK;
  *cursor_err = HP_OK;
  snprintf(msg, msglen, "%s", hp_store_error(s));
  if (st != HP_OK) {
    hp_store_abort(s);
    return st;
  }
  *damage = hp_store_damage(s, NULL);
  snprintf(msg, msglen, "%s", hp_store_error(s));
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    uint64_t n = 0, k = 0;
    CHECK(hp_store_count(s, (hp_table)t, &n) == HP_OK);
    hp_cursor *c;
    if (hp_cursor_open(s, (hp_table)t, &c) != HP_OK) continue;
    char row[512];
    *(uint32_t *)row = (uint32_t)d->row_size;
    hp_status cs;
    while ((cs = hp_cursor_next(c, row)) == HP_OK)
      k++;
    hp_cursor_close(c);
    if (cs == HP_END) {
      CHECK_MSG(k == n, "%s: cursor %" PRIu64 " rows, count %" PRIu64, d->name, k, n);
    } else {
      CHECK_MSG(k <= n, "%s: cursor %" PRIu64 " rows, count %" PRIu64, d->name, k, n);
      if (*cursor_err == HP_OK) {
        *cursor_err = cs;
        snprintf(msg, msglen, "%s", hp_store_error(s));
      }
    }
  }
  hp_store_close(s);
  return st;
}

/* ---- the tests ---- */
static void test_roundtrip(void) {
  /* small row groups and files, so every table spans several of both */
  CHECK(hp_parquet_set_defaults(300, 0, 4, 0, 0) == HP_OK);
  uint64_t rows[HP_TABLE_COUNT];
  for (int t = 0; t < HP_TABLE_COUNT; t++)
    rows[t] = 2500 + (uint64_t)t * 13;
  rows[HP_TABLE_NODE] = 1;
  rows[HP_TABLE_QUEUE] = 0; /* an empty table */
  const char *p = path_of("rt");
  if (write_store(p, rows) == HP_OK) {
    verify_store(p, rows);
    verify_batches(p, rows);
  }
  char f[600];
  snprintf(f, sizeof f, "%s/dispatch/part-00000.parquet", p);
  CHECK_MSG(file_size(f) > 0, "dispatch spans several files");
  snprintf(f, sizeof f, "%s/dispatch/part-00002.parquet", p);
  CHECK_MSG(file_size(f) > 0, "dispatch spans three files");
  snprintf(f, sizeof f, "%s/node/part-00000.parquet", p);
  CHECK_MSG(file_size(f) > 0, "a table of one file is named <table>.parquet");
  snprintf(f, sizeof f, "%s/queue/part-00000.parquet", p);
  CHECK_MSG(file_size(f) > 0, "an empty table still has its file");
  CHECK(leftovers(p) == 0);

  /* row groups cut by bytes, not rows */
  CHECK(hp_parquet_set_defaults(1u << 20, 8192, 1000, 1u << 30, 1) == HP_OK);
  for (int t = 0; t < HP_TABLE_COUNT; t++)
    rows[t] = 700;
  const char *p2 = path_of("rt-bytes");
  if (write_store(p2, rows) == HP_OK) {
    verify_store(p2, rows);
    verify_batches(p2, rows);
  }
  rm_flat(p2);

  /* a store with nothing in it */
  memset(rows, 0, sizeof rows);
  const char *p3 = path_of("rt-empty");
  if (write_store(p3, rows) == HP_OK) verify_store(p3, rows);
  rm_flat(p3);

  /* bad tuning is refused */
  CHECK(hp_parquet_set_defaults(0, 0, 0, 0, 99) == HP_ERR_INVALID);
  CHECK(hp_parquet_set_defaults((uint64_t)1 << 40, 0, 0, 0, 0) == HP_ERR_INVALID);
  CHECK(hp_parquet_set_defaults(1u << 20, 64u << 20, 64, 512u << 20, 3) == HP_OK);
  rm_flat(p);
}

static void test_create_rules(void) {
  uint64_t rows[HP_TABLE_COUNT] = {0};
  rows[HP_TABLE_NODE] = 2;
  const char *p = path_of("cr");
  write_store(p, rows);
  /* creating over an existing Parquet store replaces it */
  rows[HP_TABLE_NODE] = 3;
  hp_store *s;
  CHECK(hp_store_open(p, "parquet", HP_CREATE, &s) == HP_OK);
  char row[512];
  for (int r = 0; r < 3; r++) {
    fill(HP_TABLE_NODE, (uint64_t)r, row);
    hp_write(s, HP_TABLE_NODE, row);
  }
  CHECK_OK(hp_store_close(s), NULL);
  verify_store(p, rows);
  CHECK(leftovers(p) == 0);

  /* abort leaves nothing, and the old store stays */
  CHECK(hp_store_open(p, "parquet", HP_CREATE, &s) == HP_OK);
  fill(HP_TABLE_NODE, 0, row);
  hp_write(s, HP_TABLE_NODE, row);
  hp_store_abort(s);
  CHECK(leftovers(p) == 0);
  verify_store(p, rows);

  /* a path holding something else is not replaced */
  const char *f = path_of("cr-file");
  write_text(f, "precious\n");
  CHECK(hp_store_open(f, "parquet", HP_CREATE, &s) == HP_OK);
  hp_status st = hp_store_close(s);
  CHECK(st == HP_ERR_IO);
  CHECK(file_size(f) == 9);
  CHECK(leftovers(f) == 0);
  unlink(f);
  const char *d = path_of("cr-dir");
  mkdir(d, 0777);
  char inner[600];
  snprintf(inner, sizeof inner, "%s/keep.txt", d);
  write_text(inner, "keep\n");
  CHECK(hp_store_open(d, "parquet", HP_CREATE, &s) == HP_OK);
  st = hp_store_commit(s);
  CHECK(st == HP_ERR_IO);
  CHECK_MSG(strstr(hp_store_error(s), "not a hubprof Parquet store") != NULL, "%s", hp_store_error(s));
  hp_store_close(s);
  CHECK(file_size(inner) == 5);
  rm_flat(d);
  /* an empty directory is fine */
  mkdir(d, 0777);
  CHECK(hp_store_open(d, "parquet", HP_CREATE, &s) == HP_OK);
  CHECK(hp_store_close(s) == HP_OK);
  rm_flat(d);
  /* a trailing slash names the same directory */
  char slashed[600];
  snprintf(slashed, sizeof slashed, "%s//", d);
  CHECK(hp_store_open(slashed, "parquet", HP_CREATE, &s) == HP_OK);
  fill(HP_TABLE_NODE, 0, row);
  CHECK(hp_write(s, HP_TABLE_NODE, row) == HP_OK);
  CHECK(hp_store_close(s) == HP_OK);
  CHECK(leftovers(d) == 0);
  CHECK(hp_store_open(slashed, NULL, HP_READ, &s) == HP_OK);
  uint64_t n1 = 0;
  hp_store_count(s, HP_TABLE_NODE, &n1);
  CHECK_EQ_U64(n1, 1);
  hp_store_close(s);
  rm_flat(d);
  /* a read store cannot be written; a created one cannot be read */
  CHECK(hp_store_open(p, NULL, HP_READ, &s) == HP_OK);
  fill(HP_TABLE_NODE, 0, row);
  CHECK(hp_write(s, HP_TABLE_NODE, row) == HP_ERR_UNSUPPORTED);
  hp_store_close(s);
  CHECK(hp_store_open(p, "parquet", HP_CREATE_LIVE, &s) == HP_ERR_UNSUPPORTED);
  hp_store_close(s);
  rm_flat(p);
}

/* Small tables: a row written again with the same id (metadata: key) replaces the earlier one in place. */
static void test_replace(void) {
  const char *p = path_of("replace");
  rm_flat(p);
  hp_store *s;
  CHECK(hp_store_open(p, "parquet", HP_CREATE, &s) == HP_OK);
  hp_process pr = {.size = sizeof pr, .id = 1, .node_id = 1, .pid = 100, .command = "first"};
  CHECK(hp_write_process(s, &pr) == HP_OK);
  pr.id = 2;
  pr.pid = 200;
  CHECK(hp_write_process(s, &pr) == HP_OK);
  pr.id = 1;
  pr.pid = 100;
  pr.end_ns = 12345;
  pr.command = "first, at exit";
  CHECK(hp_write_process(s, &pr) == HP_OK);
  CHECK(hp_write_metadata(s, "a", "1") == HP_OK);
  CHECK(hp_write_metadata(s, "b", "2") == HP_OK);
  CHECK(hp_write_metadata(s, "a", "3") == HP_OK);
  for (int i = 1; i <= 3; i++) { /* big tables keep every row */
    hp_region rg = {.size = sizeof rg, .id = 7, .name = "r"};
    CHECK(hp_write_region(s, &rg) == HP_OK);
  }
  for (uint64_t i = 1; i <= 3000; i++) { /* many rows, many replaced, past a row group */
    hp_thread th = {.size = sizeof th, .id = i % 1000 + 1, .tid = (int64_t)i, .name = i % 2 ? "odd" : "even"};
    CHECK(hp_write_thread(s, &th) == HP_OK);
  }
  CHECK_OK(hp_store_close(s), NULL);
  CHECK(hp_store_open(p, NULL, HP_READ, &s) == HP_OK);
  uint64_t n = 0;
  hp_store_count(s, HP_TABLE_PROCESS, &n);
  CHECK_EQ_U64(n, 2);
  hp_cursor *c;
  if (hp_cursor_open(s, HP_TABLE_PROCESS, &c) == HP_OK) {
    hp_process r = {.size = sizeof r};
    CHECK(hp_cursor_next(c, &r) == HP_OK);
    CHECK_EQ_U64(r.id, 1);
    CHECK_EQ_U64(r.end_ns, 12345);
    CHECK_STR(r.command, "first, at exit");
    CHECK(hp_cursor_next(c, &r) == HP_OK);
    CHECK_EQ_U64(r.id, 2);
    CHECK(hp_cursor_next(c, &r) == HP_END);
    hp_cursor_close(c);
  }
  hp_store_count(s, HP_TABLE_METADATA, &n);
  CHECK_EQ_U64(n, 2);
  CHECK_STR(hp_store_metadata(s, "a") ? hp_store_metadata(s, "a") : "(null)", "3");
  hp_store_count(s, HP_TABLE_REGION, &n);
  CHECK_EQ_U64(n, 3);
  hp_store_count(s, HP_TABLE_THREAD, &n);
  CHECK_EQ_U64(n, 1000);
  if (hp_cursor_open(s, HP_TABLE_THREAD, &c) == HP_OK) {
    hp_thread r = {.size = sizeof r};
    uint64_t k = 0;
    while (hp_cursor_next(c, &r) == HP_OK) {
      k++;
      /* row k holds id k % 1000 + 1 (first written at i = k), last written at i = k + 2000 */
      CHECK_EQ_U64(r.id, k % 1000 + 1);
      CHECK_EQ_U64(r.tid, k + 2000);
      CHECK_STR(r.name, (k + 2000) % 2 ? "odd" : "even");
    }
    CHECK_EQ_U64(k, 1000);
    hp_cursor_close(c);
  }
  hp_store_close(s);
  rm_flat(p);
}

static void expect_open_error(const char *path, hp_status want, const char *needle) {
  hp_store *s;
  hp_status st = hp_store_open(path, "parquet", HP_READ, &s); /* detection only says "not a store" */
  CHECK_MSG(st == want, "%s: status %d, expected %d: %s", path, (int)st, (int)want, hp_store_error(s));
  CHECK_MSG(strstr(hp_store_error(s), needle) != NULL, "message '%s' lacks '%s'", hp_store_error(s), needle);
  CHECK_MSG(strncmp(hp_store_error(s), path, strlen(path)) == 0, "message '%s' does not start with the path",
            hp_store_error(s));
  hp_store_close(s);
}

/* Damage in one file: the store opens, reports damage naming the file, and the other tables read. */
static void expect_damage(const char *path, hp_status want, const char *needle) {
  hp_status damage, cerr;
  char msg[600];
  hp_status st = walk(path, &damage, msg, sizeof msg, &cerr);
  CHECK_MSG(st == HP_OK, "%s: open %d: %s", path, (int)st, msg);
  hp_status got = damage != HP_OK ? damage : cerr;
  CHECK_MSG(got == want, "%s: damage %d, expected %d: %s", path, (int)got, (int)want, msg);
  CHECK_MSG(strstr(msg, needle) != NULL, "message '%s' lacks '%s'", msg, needle);
}

static void test_damage(void) {
  CHECK(hp_parquet_set_defaults(400, 0, 2, 0, 0) == HP_OK);
  uint64_t rows[HP_TABLE_COUNT];
  for (int t = 0; t < HP_TABLE_COUNT; t++)
    rows[t] = 50;
  rows[HP_TABLE_DISPATCH] = 2000; /* dispatch/part-00000..00002 */
  const char *base = path_of("dmg-base");
  write_store(base, rows);
  CHECK(hp_parquet_set_defaults(1u << 20, 64u << 20, 64, 512u << 20, 3) == HP_OK);
  const char *p = path_of("dmg");
  char f[600], m[600], g0[600];
  snprintf(m, sizeof m, "%s/_hubprof.json", p);

  /* the manifest */
  copy_flat(base, p);
  unlink(m);
  { /* without its manifest a store reads as a dataset: each table's folder, files found by name */
    hp_store *bs;
    CHECK(hp_store_open(p, NULL, HP_READ, &bs) == HP_OK);
    uint64_t n = 0;
    for (int t = 0; bs && t < HP_TABLE_COUNT; t++) {
      CHECK(hp_store_count(bs, (hp_table)t, &n) == HP_OK);
      CHECK_EQ_U64(n, rows[t]);
    }
    CHECK(bs && hp_store_damage(bs, NULL) == HP_OK);
    hp_store_close(bs);
  }
  snprintf(f, sizeof f, "%s/foreign.parquet", p); /* a foreign file in the root, or in a table's folder */
  copy_file(base, p, "node/part-00000.parquet");
  snprintf(g0, sizeof g0, "%s/node/part-00000.parquet", p);
  CHECK(rename(g0, f) == 0);
  expect_open_error(p, HP_ERR_FORMAT, "foreign.parquet: not a table of the data model");
  CHECK(rename(f, g0) == 0);
  snprintf(f, sizeof f, "%s/dispatch/notes.txt", p);
  write_text(f, "x");
  expect_open_error(p, HP_ERR_FORMAT, "dispatch/notes.txt: a foreign file in a table's folder");
  copy_flat(base, p);
  write_text(m, "{\"format\": \"hubprof-parquet\", \"version\": 1, \"tables\": [");
  expect_open_error(p, HP_ERR_CORRUPT, "bad JSON");
  write_text(m, "{\"format\": \"hubprof-parquet\", \"version\": 99, \"tables\": []}");
  expect_open_error(p, HP_ERR_VERSION, "store version 99");
  write_text(m,
             "{\"format\": \"hubprof-parquet\", \"version\": 1, \"tables\": [{\"name\": \"node\", \"files\": "
             "[{\"path\": \"../../etc/passwd\"}]}]}");
  expect_open_error(p, HP_ERR_CORRUPT, "bad path");
  write_text(m, "{\"format\": \"something-else\", \"version\": 1, \"tables\": []}");
  expect_open_error(p, HP_ERR_FORMAT, "not a hubprof Parquet");

  /* a missing file */
  copy_flat(base, p);
  snprintf(f, sizeof f, "%s/node/part-00000.parquet", p);
  unlink(f);
  expect_damage(p, HP_ERR_CORRUPT, "node/part-00000.parquet: missing");

  /* truncated: the other files of the table still read */
  copy_flat(base, p);
  snprintf(f, sizeof f, "%s/dispatch/part-00001.parquet", p);
  CHECK(truncate(f, file_size(f) / 2) == 0);
  expect_damage(p, HP_ERR_TRUNCATED, "dispatch/part-00001.parquet: truncated");
  hp_store *s;
  if (hp_store_open(p, NULL, HP_READ, &s) == HP_OK) {
    uint64_t n = 0;
    hp_store_count(s, HP_TABLE_DISPATCH, &n);
    CHECK_EQ_U64(n, 1200); /* 800 + 400 in files 1 and 3 */
    uint64_t off = 0;
    CHECK(hp_store_damage(s, &off) == HP_ERR_TRUNCATED);
    CHECK_EQ_U64(off, (uint64_t)file_size(f));
    hp_store_close(s);
  }

  /* bad magic at either end, bad footer length */
  copy_flat(base, p);
  snprintf(f, sizeof f, "%s/region/part-00000.parquet", p);
  poke(f, 0, 0xff);
  expect_damage(p, HP_ERR_CORRUPT, "region/part-00000.parquet: bad magic at the start");
  copy_flat(base, p);
  poke(f, file_size(f) - 1, 0xff);
  expect_damage(p, HP_ERR_CORRUPT, "region/part-00000.parquet: bad magic at the end");
  copy_flat(base, p);
  poke(f, file_size(f) - 6, 0x40);
  expect_damage(p, HP_ERR_CORRUPT, "region/part-00000.parquet: bad footer length");

  /* metadata bytes: a flip of any byte of a footer is caught by the manifest's footer checksum; without
   * checksums (a manifest of another writer) the parser alone never crashes, and damage names the file */
  snprintf(f, sizeof f, "%s/agent/part-00000.parquet", base);
  long size = file_size(f);
  int fd = open(f, O_RDONLY);
  unsigned char tail[8];
  CHECK(fd >= 0 && pread(fd, tail, 8, size - 8) == 8);
  if (fd >= 0) close(fd);
  long flen = (long)(tail[0] | tail[1] << 8 | tail[2] << 16 | (uint32_t)tail[3] << 24);
  snprintf(f, sizeof f, "%s/agent/part-00000.parquet", p);
  for (int with_crc = 1; with_crc >= 0; with_crc--) {
    copy_flat(base, p);
    if (!with_crc) drop_footer_crcs(m);
    int damaged = 0;
    long step = with_crc ? 5 : 1, tried = 0;
    for (long off = size - 8 - flen; off < size - 8; off += step, tried++) {
      copy_file(base, p, "agent/part-00000.parquet");
      poke(f, off, off % 2 ? 0x01 : 0x80);
      hp_status dmg, cerr;
      char msg[600];
      CHECK(walk(p, &dmg, msg, sizeof msg, &cerr) == HP_OK);
      if (dmg != HP_OK || cerr != HP_OK) {
        damaged++;
        CHECK_MSG(strstr(msg, "agent/part-00000.parquet") != NULL, "offset %ld: message '%s' lacks the file",
                  off, msg);
        if (with_crc) CHECK_MSG(strstr(msg, "footer checksum mismatch") != NULL, "%s", msg);
      }
    }
    if (with_crc)
      CHECK_MSG(damaged == tried, "%d of %ld footer flips were caught", damaged, tried);
    else
      CHECK_MSG(damaged > flen / 8, "only %d of %ld footer flips were noticed", /* most of a footer is now the
                  columns' descriptions (key-value text, not checked) */
                damaged, flen);
    if (getenv("PQ_VERBOSE"))
      printf("footer flips noticed (checksums %d): %d of %ld\n", with_crc, damaged, flen);
  }

  /* page bytes: the zstd checksum (or the decoder) catches them while reading */
  copy_flat(base, p);
  snprintf(f, sizeof f, "%s/dispatch/part-00000.parquet", p);
  poke(f, 200, 0x10);
  expect_damage(p, HP_ERR_CORRUPT, "dispatch/part-00000.parquet: row group 0, column ");
  int page_damage = 0;
  snprintf(f, sizeof f, "%s/counter_value/part-00000.parquet", p);
  copy_flat(base, p);
  for (long off = 4; off < file_size(f) - 8; off += 7) {
    copy_file(base, p, "counter_value/part-00000.parquet");
    poke(f, off, 0x04);
    hp_status dmg, cerr;
    char msg[600];
    CHECK(walk(p, &dmg, msg, sizeof msg, &cerr) == HP_OK);
    if (dmg != HP_OK || cerr != HP_OK) {
      page_damage++;
      CHECK_MSG(strstr(msg, "counter_value/part-00000.parquet") != NULL,
                "offset %ld: message '%s' lacks the file", off, msg);
    }
  }
  CHECK(page_damage > 0);

  /* a file whose rows or size disagree with the manifest */
  copy_flat(base, p);
  CHECK(replace_in_file(m, "\"path\": \"process/part-00000.parquet\", \"rows\": 50",
                        "\"path\": \"process/part-00000.parquet\", \"rows\": 51") == 0);
  expect_damage(p, HP_ERR_CORRUPT, "process/part-00000.parquet: 50 rows, the manifest says 51");
  copy_flat(base, p);
  copy_file(base, p, "thread/part-00000.parquet");
  snprintf(f, sizeof f, "%s/thread/part-00000.parquet", p);
  char g[600];
  snprintf(g, sizeof g, "%s/process/part-00000.parquet", p);
  CHECK(rename(f, g) == 0); /* a smaller valid file in its place: changed since the manifest, read by its own
                               footer, with a note and no damage */
  copy_file(base, p, "thread/part-00000.parquet");
  {
    hp_store *s3;
    CHECK(hp_store_open(p, NULL, HP_READ, &s3) == HP_OK);
    CHECK_MSG(hp_store_damage(s3, NULL) == HP_OK, "%s", hp_store_error(s3));
    CHECK_MSG(
        strstr(hp_store_note(s3), "process/part-00000.parquet: changed since the manifest was written") &&
            strstr(hp_store_note(s3), "read by its own footer"),
        "note '%s'", hp_store_note(s3));
    uint64_t nproc = 0, nthread = 0;
    CHECK(hp_store_count(s3, HP_TABLE_PROCESS, &nproc) == HP_OK &&
          hp_store_count(s3, HP_TABLE_THREAD, &nthread) == HP_OK);
    CHECK_MSG(nproc == nthread, "%llu process rows read by the file's own footer, %llu in it",
              (unsigned long long)nproc, (unsigned long long)nthread);
    hp_store_close(s3);
  }
  /* the same file cut short is damage, named as truncation */
  {
    long full = file_size(g);
    CHECK(truncate(g, full / 2) == 0);
    expect_damage(p, HP_ERR_TRUNCATED, "process/part-00000.parquet: truncated");
    copy_file(base, p, "thread/part-00000.parquet");
    CHECK(rename(f, g) == 0);
    copy_file(base, p, "thread/part-00000.parquet");
  }
  /* without sizes and checksums in the manifest, the file's own footer decides: thread's rows read as
   * processes */
  CHECK(replace_in_file(m, "\"path\": \"process/part-00000.parquet\", \"rows\": 50, \"bytes\"",
                        "\"path\": \"process/part-00000.parquet\", \"rows\": 50, \"size\"") == 0);
  drop_footer_crcs(m);
  {
    hp_status dmg, cerr;
    char msg[600];
    CHECK(walk(p, &dmg, msg, sizeof msg, &cerr) == HP_OK);
    CHECK_MSG(dmg == HP_OK && cerr == HP_OK, "%s", msg);
  }

  /* not a directory of ours: detection says so */
  const char *empty = path_of("dmg-empty");
  mkdir(empty, 0777);
  hp_store *s2;
  CHECK(hp_store_open(empty, NULL, HP_READ, &s2) == HP_ERR_FORMAT);
  hp_store_close(s2);
  CHECK(hp_store_open(empty, "parquet", HP_READ, &s2) == HP_ERR_FORMAT);
  CHECK_MSG(strstr(hp_store_error(s2), "_hubprof.json missing") != NULL, "%s", hp_store_error(s2));
  hp_store_close(s2);
  rmdir(empty);
  rm_flat(p);
  rm_flat(base);
}

/* ---- helper mode for check_readers.py ---- */
static uint64_t fnv1a(const char *s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  return h;
}

static void print_i128(FILE *f, __int128 v) {
  char b[64];
  int n = 0, neg = v < 0;
  unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
  do {
    b[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u);
  if (neg) fputc('-', f);
  while (n)
    fputc(b[--n], f);
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static void json_value(FILE *f, const hp_column *c, const void *row) {
  const char *p = (const char *)row + c->offset;
  switch (c->type) {
  case HP_COL_U32: fprintf(f, "%" PRIu32, *(const uint32_t *)p); break;
  case HP_COL_I32: fprintf(f, "%" PRId32, *(const int32_t *)p); break;
  case HP_COL_U64: fprintf(f, "%" PRIu64, *(const uint64_t *)p); break;
  case HP_COL_I64: fprintf(f, "%" PRId64, *(const int64_t *)p); break;
  case HP_COL_F64: {
    uint64_t bits;
    memcpy(&bits, p, 8);
    fprintf(f, "\"0x%016" PRIx64 "\"", bits);
    break;
  }
  case HP_COL_STR: json_string(f, *(const char *const *)p); break;
  }
}

typedef struct colsum {
  uint64_t wsum; /* sum of (row number + 1) * value (bits, fnv1a for strings), mod 2^64 */
  __int128 sum;  /* exact sum of integers; for strings the sum of byte lengths */
  uint64_t nan;  /* doubles: NaNs */
  uint64_t zero; /* doubles: zeros (either sign) */
} colsum;

static void add_row(const hp_table_desc *d, colsum *cs, uint64_t r, const void *row) {
  for (size_t i = 0; i < d->ncolumns; i++) {
    const hp_column *c = &d->columns[i];
    const char *p = (const char *)row + c->offset;
    uint64_t bits = 0;
    switch (c->type) {
    case HP_COL_U32:
      bits = *(const uint32_t *)p;
      cs[i].sum += bits;
      break;
    case HP_COL_I32:
      bits = (uint64_t)(int64_t) * (const int32_t *)p;
      cs[i].sum += *(const int32_t *)p;
      break;
    case HP_COL_U64:
      bits = *(const uint64_t *)p;
      cs[i].sum += bits;
      break;
    case HP_COL_I64:
      memcpy(&bits, p, 8);
      cs[i].sum += *(const int64_t *)p;
      break;
    case HP_COL_F64: {
      double x;
      memcpy(&bits, p, 8);
      memcpy(&x, p, 8);
      cs[i].nan += isnan(x);
      cs[i].zero += x == 0;
      break;
    }
    case HP_COL_STR: {
      const char *s = *(const char *const *)p;
      bits = fnv1a(s);
      cs[i].sum += (__int128)strlen(s);
      break;
    }
    }
    cs[i].wsum += (r + 1) * bits;
  }
}

static const char *type_name(hp_col_type t) {
  static const char *n[] = {"?", "u32", "i32", "u64", "i64", "f64", "str"};
  return (unsigned)t < 7 ? n[t] : "?";
}

/* The figures of one table as JSON: rows, per column type, wsum, sum, nan, zero; then sample rows. */
static void print_table(FILE *f, const hp_table_desc *d, uint64_t n, const colsum *cs, char (*samples)[4096],
                        const uint64_t *sample_rows, size_t nsamples) {
  fprintf(f, "    ");
  json_string(f, d->name);
  fprintf(f, ": {\"rows\": %" PRIu64 ", \"columns\": {", n);
  for (size_t i = 0; i < d->ncolumns; i++) {
    fprintf(f, "%s\n      ", i ? "," : "");
    json_string(f, d->columns[i].name);
    fprintf(f, ": {\"type\": \"%s\", \"wsum\": %" PRIu64 ", \"sum\": ", type_name(d->columns[i].type),
            cs[i].wsum);
    print_i128(f, cs[i].sum);
    fprintf(f, ", \"nan\": %" PRIu64 ", \"zero\": %" PRIu64 "}", cs[i].nan, cs[i].zero);
  }
  fprintf(f, "},\n      \"samples\": [");
  for (size_t k = 0; k < nsamples; k++)
    fprintf(f, "%s\n        {\"row\": %" PRIu64 ", \"values\": %s}", k ? "," : "", sample_rows[k],
            samples[k]);
  fprintf(f, "]}");
}

static void sample_json(char *out, size_t n, const hp_table_desc *d, const void *row) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  fputc('{', m);
  for (size_t i = 0; i < d->ncolumns; i++) {
    fprintf(m, "%s", i ? ", " : "");
    json_string(m, d->columns[i].name);
    fputs(": ", m);
    json_value(m, &d->columns[i], row);
  }
  fputc('}', m);
  fclose(m);
  snprintf(out, n, "%s", buf);
  free(buf);
}

static const uint64_t sample_rows_max = 6;

static void pick_samples(uint64_t n, uint64_t *rows, size_t *k) {
  *k = 0;
  if (!n) return;
  uint64_t c[6] = {0, 1, n / 3, n / 2, n - 2, n - 1};
  for (int i = 0; i < 6; i++) {
    if (c[i] >= n) continue;
    int dup = 0;
    for (size_t j = 0; j < *k; j++)
      dup |= rows[j] == c[i];
    if (!dup) rows[(*k)++] = c[i];
  }
}

static uint64_t sample_count(hp_table t) {
  switch (t) {
  case HP_TABLE_DISPATCH: return 300000;
  case HP_TABLE_COUNTER_VALUE: return 600000;
  case HP_TABLE_REGION: return 20000;
  case HP_TABLE_NODE: return 1;
  case HP_TABLE_QUEUE: return 0;
  default: return 777;
  }
}

static int sample_mode(const char *dir, const char *expect, uint64_t at_most) {
  hp_parquet_set_defaults(at_most ? 16 : 65536, 0, 2, 0, 0); /* dispatch: 5 row groups in 3 files */
  uint64_t rows[HP_TABLE_COUNT];
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    rows[t] = sample_count((hp_table)t);
    if (at_most && rows[t] > at_most) rows[t] = at_most;
  }
  if (write_store(dir, rows) != HP_OK) return 1;
  FILE *f = fopen(expect, "w");
  if (!f) return 1;
  fprintf(f, "{\"tables\": {\n");
  char row[512];
  static char samples[6][4096];
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    colsum cs[64];
    memset(cs, 0, sizeof cs);
    uint64_t sr[6];
    size_t ns;
    pick_samples(rows[t], sr, &ns);
    for (uint64_t r = 0; r < rows[t]; r++) {
      fill((hp_table)t, r, row);
      add_row(d, cs, r, row);
      for (size_t k = 0; k < ns; k++)
        if (sr[k] == r) sample_json(samples[k], sizeof samples[k], d, row);
    }
    print_table(f, d, rows[t], cs, samples, sr, ns);
    fprintf(f, "%s\n", t + 1 < HP_TABLE_COUNT ? "," : "");
  }
  fprintf(f, "}}\n");
  fclose(f);
  (void)sample_rows_max;
  return 0;
}

static int checksum_mode(const char *dir) {
  hp_store *s;
  hp_status st = hp_store_open(dir, NULL, HP_READ, &s);
  if (st != HP_OK) {
    fprintf(stderr, "%s\n", hp_store_error(s));
    hp_store_close(s);
    return 1;
  }
  if (hp_store_damage(s, NULL) != HP_OK) {
    fprintf(stderr, "damage: %s\n", hp_store_error(s));
    hp_store_close(s);
    return 1;
  }
  printf("{\"tables\": {\n");
  static char samples[6][4096];
  int rc = 0;
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    uint64_t n = 0, r = 0;
    hp_store_count(s, (hp_table)t, &n);
    colsum cs[64];
    memset(cs, 0, sizeof cs);
    uint64_t sr[6];
    size_t ns;
    pick_samples(n, sr, &ns);
    hp_cursor *c;
    if (hp_cursor_open(s, (hp_table)t, &c) != HP_OK) {
      rc = 1;
      continue;
    }
    char row[512];
    for (;; r++) {
      *(uint32_t *)row = (uint32_t)d->row_size;
      st = hp_cursor_next(c, row);
      if (st != HP_OK) break;
      add_row(d, cs, r, row);
      for (size_t k = 0; k < ns; k++)
        if (sr[k] == r) sample_json(samples[k], sizeof samples[k], d, row);
    }
    if (st != HP_END || r != n) {
      fprintf(stderr, "%s: %s\n", d->name, hp_store_error(s));
      rc = 1;
    }
    hp_cursor_close(c);
    print_table(stdout, d, n, cs, samples, sr, ns);
    printf("%s\n", t + 1 < HP_TABLE_COUNT ? "," : "");
  }
  printf("}}\n");
  hp_store_close(s);
  return rc;
}

int main(int argc, char **argv) {
  if ((argc == 4 || argc == 5) && strcmp(argv[1], "--sample") == 0)
    return sample_mode(argv[2], argv[3], argc == 5 ? strtoull(argv[4], NULL, 10) : 0);
  if (argc == 3 && strcmp(argv[1], "--checksums") == 0) return checksum_mode(argv[2]);
  test_roundtrip();
  test_skip_pages();
  test_create_rules();
  test_replace();
  test_damage();
  return check_report("test_parquet");
}
