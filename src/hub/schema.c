/* Hub data model descriptions: one table of columns per row struct (from columns.h), and the row copy helpers
 * built on it. Generic code (merge, bindings, the log encoder) walks rows through these; nothing here knows a
 * format. */
/* SPDX-License-Identifier: MIT */
#include "columns.h"
#include "hub_internal.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

/* The descriptions, from the one list of tables and columns (columns.h). */
#define HUB_COL(S, member, name, type, ref, dataset, boolean, null, unit, desc)                              \
  {name, HP_COL_##type, offsetof(S, member), ref},
#define HUB_COLS(T, nm, S) static const hp_column nm##_cols[] = {HP_COLUMNS_##T(HUB_COL, S)};
HP_TABLES(HUB_COLS)

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define DESC(T, nm, S) [HP_TABLE_##T] = {#nm, HP_TABLE_##T, sizeof(S), N(nm##_cols), nm##_cols},

static const hp_table_desc descs[HP_TABLE_COUNT] = {HP_TABLES(DESC)};

/* Tables whose rows are many (streamed by readers and merge, never held in memory, never de-duplicated by
 * key); the others are small and keyed. */
int hp_table_streamed(hp_table t) {
  return t == HP_TABLE_DISPATCH || t == HP_TABLE_COUNTER_VALUE || t == HP_TABLE_REGION ||
         t == HP_TABLE_PC_SAMPLE || t == HP_TABLE_COUNTER_SAMPLE || t == HP_TABLE_CODE_BLOB ||
         t == HP_TABLE_MEMORY_COPY;
}

const hp_table_desc *hp_table_describe(hp_table t) {
  if ((unsigned)t >= HP_TABLE_COUNT) return NULL;
  return &descs[t];
}

hp_table hp_table_from_name(const char *name) {
  if (!name) return HP_TABLE_COUNT;
  for (int t = 0; t < HP_TABLE_COUNT; t++)
    if (strcmp(descs[t].name, name) == 0) return (hp_table)t;
  return HP_TABLE_COUNT;
}

static void strings_default(const hp_table_desc *d, void *row, size_t limit) {
  for (size_t i = 0; i < d->ncolumns; i++) {
    const hp_column *c = &d->columns[i];
    if (c->type != HP_COL_STR || c->offset + sizeof(char *) > limit) continue;
    const char **p = (const char **)((char *)row + c->offset);
    if (!*p) *p = "";
  }
}

/* Offsets of each table's string columns, for the no-copy write path and hp_row_init (built once). */
static size_t str_offsets[HP_TABLE_COUNT][16];
static size_t str_count[HP_TABLE_COUNT];
static pthread_once_t str_once = PTHREAD_ONCE_INIT;

static void build_str_offsets(void) {
  for (int t = 0; t < HP_TABLE_COUNT; t++)
    for (size_t i = 0; i < descs[t].ncolumns && str_count[t] < 16; i++)
      if (descs[t].columns[i].type == HP_COL_STR) str_offsets[t][str_count[t]++] = descs[t].columns[i].offset;
}

void hp_row_init(hp_table t, void *row) {
  const hp_table_desc *d = &descs[t];
  memset(row, 0, d->row_size);
  *(uint32_t *)row = (uint32_t)d->row_size;
  pthread_once(&str_once, build_str_offsets);
  if (str_count[t] == 16) { /* a table of more string columns than the list holds (none yet) */
    strings_default(d, row, d->row_size);
    return;
  }
  for (size_t i = 0; i < str_count[t]; i++) /* readers make one per row: the list, not every column */
    *(const char **)((char *)row + str_offsets[t][i]) = "";
}

hp_status hp_row_import(hp_table t, const void *in, void *full) {
  const hp_table_desc *d = hp_table_describe(t);
  if (!d || !in) return HP_ERR_INVALID;
  uint32_t sz = *(const uint32_t *)in;
  if (sz < sizeof(uint32_t) + sizeof(uint64_t))
    return HP_ERR_INVALID; /* must hold at least its first field */
  size_t n = sz < d->row_size ? sz : d->row_size;
  memset(full, 0, d->row_size);
  memcpy(full, in, n);
  *(uint32_t *)full = (uint32_t)d->row_size;
  strings_default(d, full, d->row_size);
  return HP_OK;
}

hp_status hp_row_export(hp_table t, const void *full, void *out) {
  const hp_table_desc *d = hp_table_describe(t);
  if (!d || !out) return HP_ERR_INVALID;
  uint32_t sz = *(const uint32_t *)out;
  if (sz < sizeof(uint32_t) + sizeof(uint64_t)) return HP_ERR_INVALID;
  size_t n = sz < d->row_size ? sz : d->row_size;
  memcpy((char *)out + sizeof(uint32_t), (const char *)full + sizeof(uint32_t), n - sizeof(uint32_t));
  return HP_OK;
}

int hp_row_is_complete(hp_table t, const void *row) {
  if (*(const uint32_t *)row != descs[t].row_size) return 0;
  pthread_once(&str_once, build_str_offsets);
  for (size_t i = 0; i < str_count[t]; i++)
    if (!*(const char *const *)((const char *)row + str_offsets[t][i])) return 0;
  return 1;
}
