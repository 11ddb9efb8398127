/* Round trip of every table through every format compiled into the hub, driven by the table
 * descriptions: rows with distinctive values are written, the store is closed, reopened with format
 * detection, and every column of every row must come back equal. Also checks atomic creation. */
/* SPDX-License-Identifier: MIT */
#include "check.h"
#include "hubprof/dataset.h"
#include "hubprof/hub.h"

#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROWS 7

static const char *strs[] = {"vector_add",
                             "",
                             "quote ' and \" and \\",
                             "ünïcødé ✓ カーネル",
                             "a,b;c\td",
                             "x",
                             "long-name-"
                             "0123456789abcdef0123456789abcdef0123456789abcdef"};

/* Fill row r of table t: every column gets a value derived from (t, r, column), ids are r+1. */
static void fill(hp_table t, int r, void *row) {
  const hp_table_desc *d = hp_table_describe(t);
  memset(row, 0, d->row_size);
  *(uint32_t *)row = (uint32_t)d->row_size;
  for (size_t i = 0; i < d->ncolumns; i++) {
    const hp_column *c = &d->columns[i];
    char *p = (char *)row + c->offset;
    uint64_t v = (uint64_t)(r + 1) * 1000 + i * 7 + (uint64_t)t;
    if (strcmp(c->name, "id") == 0 || c->ref)
      v = (uint64_t)r + 1; /* ids and references stay small and valid */
    hp_dataset_column dc = {.size = sizeof dc};
    if (hp_dataset_column_describe(t, i, &dc) == HP_OK && dc.boolean) { /* a flag is 0 or 1 */
      *(uint32_t *)p = (uint32_t)(r % 2);
      continue;
    }
    switch (c->type) {
    case HP_COL_U32: *(uint32_t *)p = (uint32_t)(r == 3 ? 0xfffffffeu : v); break;
    case HP_COL_I32: *(int32_t *)p = (int32_t)(r % 2 ? -(int64_t)v : (int64_t)v); break;
    case HP_COL_U64:
      *(uint64_t *)p = (r == 4 && !c->ref && strcmp(c->name, "id")) ? UINT64_C(0xfedcba9876543210) : v;
      break;
    case HP_COL_I64:
      *(int64_t *)p = r == 5 ? INT64_C(-9000000000000000000) : (r % 2 ? -(int64_t)v : (int64_t)v * 1000003);
      break;
    case HP_COL_F64: {
      static const double dv[ROWS] = {0.0, -0.0, 1e300, -2.5, 3.141592653589793, 1e-300, 42.0};
      *(double *)p = dv[r];
      break;
    }
    case HP_COL_STR:
      *(const char **)p = t == HP_TABLE_METADATA && i == 0
                              ? (const char *[]){"k0", "k1", "k2", "k3", "k4", "k5", "k6"}[r]
                              : strs[(r + i) % ROWS];
      break;
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
  case HP_COL_F64: return memcmp(pa, pb, 8) == 0; /* doubles bit-exact, -0.0 included */
  case HP_COL_STR: return strcmp(*(const char *const *)pa, *(const char *const *)pb) == 0;
  }
  return 0;
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) { return remove(p); }
/* Remove a store, a file or (parquet) a directory. */
static void remove_store(const char *path) { nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static void roundtrip(const char *format) {
  char path[256];
  snprintf(path, sizeof path, "%s/hubprof-rt-%d.%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (int)getpid(), format);
  remove_store(path);
  hp_store *s;
  hp_status st = hp_store_open(path, format, HP_CREATE, &s);
  CHECK_OK(st, s);
  if (st != HP_OK) {
    hp_store_abort(s);
    return;
  }
  char row[512];
  for (int t = 0; t < HP_TABLE_COUNT; t++)
    for (int r = 0; r < ROWS; r++) {
      fill((hp_table)t, r, row);
      st = hp_write(s, (hp_table)t, row);
      CHECK_MSG(st == HP_OK, "%s: write %s row %d: %s", format, hp_table_describe((hp_table)t)->name, r,
                hp_store_error(s));
    }
  struct stat sb;
  CHECK_MSG(stat(path, &sb) != 0, "%s: output exists before commit", format);
  st = hp_store_close(s);
  CHECK_MSG(st == HP_OK, "%s: close: %s", format, hp_status_str(st));
  CHECK_MSG(stat(path, &sb) == 0, "%s: output missing after commit", format);

  st = hp_store_open(path, NULL, HP_READ, &s); /* detection */
  CHECK_OK(st, s);
  if (st != HP_OK) {
    hp_store_abort(s);
    return;
  }
  CHECK_STR(hp_store_format(s), format);
  CHECK(hp_store_schema_version(s)[0] != '\0');
  CHECK(hp_store_damage(s, NULL) == HP_OK);
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    uint64_t n = 0;
    CHECK_OK(hp_store_count(s, (hp_table)t, &n), s);
    CHECK_MSG(n == ROWS, "%s: %s has %" PRIu64 " rows, expected %d", format, d->name, n, ROWS);
    hp_cursor *c;
    st = hp_cursor_open(s, (hp_table)t, &c);
    CHECK_OK(st, s);
    if (st != HP_OK) continue;
    char got[512], want[512];
    int r = 0;
    for (;; r++) {
      memset(got, 0, sizeof got);
      *(uint32_t *)got = (uint32_t)d->row_size;
      st = hp_cursor_next(c, got);
      if (st != HP_OK) break;
      if (r >= ROWS) continue;
      fill((hp_table)t, r, want);
      for (size_t i = 0; i < d->ncolumns; i++)
        CHECK_MSG(same_col(&d->columns[i], got, want), "%s: %s row %d column %s differs", format, d->name, r,
                  d->columns[i].name);
    }
    CHECK_MSG(st == HP_END, "%s: cursor %s ended with %d: %s", format, d->name, (int)st, hp_store_error(s));
    CHECK_MSG(r == ROWS, "%s: cursor %s gave %d rows", format, d->name, r);
    hp_cursor_close(c);
  }
  /* An older, smaller struct (size covering only its first fields) reads without overflow. */
  hp_cursor *c;
  if (hp_cursor_open(s, HP_TABLE_DISPATCH, &c) == HP_OK) {
    struct {
      uint32_t size;
      uint64_t id, dispatch_id;
      uint64_t guard;
    } old = {offsetof(hp_dispatch, process_id), 0, 0, 0x5a5a5a5a5a5a5a5aULL};
    CHECK(hp_cursor_next(c, &old) == HP_OK);
    CHECK_EQ_U64(old.id, 1);
    CHECK_EQ_U64(old.guard, 0x5a5a5a5a5a5a5a5aULL);
    hp_cursor_close(c);
  }
  /* columnar batches of 3 give the same rows as the cursor */
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    hp_cursor *bc;
    if (hp_cursor_open(s, (hp_table)t, &bc) != HP_OK) continue;
    void *cols[32] = {0};
    for (size_t i = 0; i < d->ncolumns; i++)
      cols[i] = calloc(3, 8);
    size_t got, total = 0;
    int same = 1;
    while ((st = hp_cursor_next_batch(bc, cols, 3, &got)) == HP_OK) {
      for (size_t r = 0; r < got; r++) {
        char want[512];
        fill((hp_table)t, (int)(total + r), want);
        for (size_t i = 0; i < d->ncolumns; i++) {
          const hp_column *col = &d->columns[i];
          const char *w = want + col->offset;
          if (col->type == HP_COL_STR)
            same &= strcmp(((const char **)cols[i])[r], *(const char *const *)w) == 0;
          else if (col->type == HP_COL_U32 || col->type == HP_COL_I32)
            same &= memcmp((char *)cols[i] + 4 * r, w, 4) == 0;
          else
            same &= memcmp((char *)cols[i] + 8 * r, w, 8) == 0;
        }
      }
      total += got;
    }
    CHECK_MSG(st == HP_END && total == ROWS && same, "%s: batches of %s: %zu rows, same=%d", format, d->name,
              total, same);
    for (size_t i = 0; i < d->ncolumns; i++)
      free(cols[i]);
    hp_cursor_close(bc);
  }
  /* dispatches read by batches of a few columns (a format may read only those: rocpd), then of every column,
   * then a whole row, then a few columns again: every value asked for is the one written */
  if (hp_cursor_open(s, HP_TABLE_DISPATCH, &c) == HP_OK) {
    const hp_table_desc *d = hp_table_describe(HP_TABLE_DISPATCH);
    void *all[32] = {0}, *few[32] = {0};
    for (size_t i = 0; i < d->ncolumns; i++) {
      all[i] = calloc(2, 8);
      const char *n = d->columns[i].name;
      if (!strcmp(n, "agent_id") || !strcmp(n, "end_ns") || !strcmp(n, "passes")) few[i] = all[i];
    }
    size_t total = 0, got;
    int same = 1;
    for (int phase = 0; phase < 4; phase++) {
      do {
        char want[512], row[512];
        if (phase == 2) { /* one whole row */
          memset(row, 0, sizeof row);
          *(uint32_t *)row = (uint32_t)d->row_size;
          st = hp_cursor_next(c, row);
          got = st == HP_OK;
          fill(HP_TABLE_DISPATCH, (int)total, want);
          for (size_t i = 0; got && i < d->ncolumns; i++)
            same &= same_col(&d->columns[i], row, want);
        } else {
          st = hp_cursor_next_batch(c, phase == 1 ? all : few, 2, &got);
          for (size_t r = 0; st == HP_OK && r < got; r++) {
            fill(HP_TABLE_DISPATCH, (int)(total + r), want);
            for (size_t i = 0; i < d->ncolumns; i++) {
              const hp_column *col = &d->columns[i];
              size_t w = col->type == HP_COL_U32 || col->type == HP_COL_I32 ? 4 : 8;
              if ((phase == 1 ? all : few)[i] && col->type != HP_COL_STR)
                same &= memcmp((char *)all[i] + w * r, want + col->offset, w) == 0;
            }
          }
        }
        total += st == HP_OK ? got : 0;
      } while (phase == 3 && st == HP_OK);
    }
    CHECK_MSG(st == HP_END && total == ROWS && same,
              "%s: dispatches by a few columns, then all: %zu rows, same=%d", format, total, same);
    for (size_t i = 0; i < d->ncolumns; i++)
      free(all[i]);
    hp_cursor_close(c);
  }
  CHECK(hp_store_metadata(s, "k3") != NULL);
  CHECK(hp_store_metadata(s, "no-such-key") == NULL);
  hp_store_close(s);

  /* abort leaves nothing behind */
  remove_store(path);
  st = hp_store_open(path, format, HP_CREATE, &s);
  CHECK_OK(st, s);
  fill(HP_TABLE_NODE, 0, row);
  hp_write(s, HP_TABLE_NODE, row);
  hp_store_abort(s);
  CHECK_MSG(stat(path, &sb) != 0, "%s: output exists after abort", format);
}

int main(void) {
  for (const char *const *f = hp_formats(); *f; f++)
    roundtrip(*f);
  /* descriptions are consistent with the structs */
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    CHECK(d && d->table == (hp_table)t && hp_table_from_name(d->name) == (hp_table)t);
    for (size_t i = 0; i < d->ncolumns; i++)
      CHECK(d->columns[i].offset < d->row_size);
  }
  CHECK(hp_table_describe(HP_TABLE_COUNT) == NULL);
  CHECK(hp_table_from_name("nope") == HP_TABLE_COUNT);
  return check_report("test_roundtrip");
}
