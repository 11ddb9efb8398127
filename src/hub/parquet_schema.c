/* The Parquet dataset schema: for every column of the hub's data model, the name, physical type, nullability
 * (the hub value that is written as NULL), unit and description it has in Parquet files (store version 2),
 * from the model's one list (columns.h). The writer, the reader (names and NULLs of both layouts) and the
 * Python bindings all follow it. */
/* SPDX-License-Identifier: MIT */
#include "columns.h"
#include "parquet_fmt.h"
#include "parquet_internal.h"
#include "hubprof/dataset.h"

#include <pthread.h>
#include <string.h>

/* Each hub column's row, from the one list of tables and columns (columns.h): dataset name, BOOLEAN (else the
 * hub type's own physical type), null rule, unit, description. */
typedef struct spec_row {
  const char *name;
  int boolean;
  int null_rule; /* NR_* */
  const char *unit;
  const char *desc;
} spec_row;

enum { NR_NONE, NR_ZERO, NR_MINUS1, NR_EMPTY };

#define SPEC(S, member, name, type, ref, dataset, boolean, null, unit, desc)                                 \
  {dataset, boolean, NR_##null, unit, desc},
#define SPEC_ROWS(T, nm, S) static const spec_row nm##_s[] = {HP_COLUMNS_##T(SPEC, S)};
HP_TABLES(SPEC_ROWS)

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define SPEC_TABLE(T, nm, S) [HP_TABLE_##T] = {nm##_s, N(nm##_s)},
static const struct {
  const spec_row *rows;
  size_t n;
} tables[HP_TABLE_COUNT] = {HP_TABLES(SPEC_TABLE)};

static pq_colspec g_spec[HP_TABLE_COUNT][PQ_MAX_COLUMNS];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* Fill g_spec in the order of the hub's columns (the rows' order). */
static void build(void) {
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    for (size_t c = 0; c < d->ncolumns && c < PQ_MAX_COLUMNS && c < tables[t].n; c++) {
      const hp_column *col = &d->columns[c];
      const spec_row *r = &tables[t].rows[c];
      pq_colspec *o = &g_spec[t][c];
      o->name = r->name;
      o->phys = r->boolean ? PQ_BOOLEAN : pq_phys_type(col->type);
      o->legacy_phys = pq_phys_type(col->type);
      o->nullable = r->null_rule != NR_NONE;
      o->null_value = r->null_rule == NR_MINUS1 ? -1 : 0;
      o->unit = r->unit;
      o->desc = r->desc;
      o->legacy_name = col->name; /* store version 1 named every column as the hub does */
    }
  }
}

const pq_colspec *pq_colspec_of(hp_table t, size_t col) {
  pthread_once(&g_once, build);
  if ((unsigned)t >= HP_TABLE_COUNT || col >= PQ_MAX_COLUMNS || col >= hp_table_describe(t)->ncolumns)
    return NULL;
  return &g_spec[t][col];
}

hp_status hp_dataset_column_describe(hp_table t, size_t col, hp_dataset_column *out) {
  const pq_colspec *sp = pq_colspec_of(t, col);
  if (!sp || !out || out->size < sizeof(hp_dataset_column)) return HP_ERR_INVALID;
  out->name = sp->name;
  out->unit = sp->unit;
  out->description = sp->desc;
  out->nullable = sp->nullable;
  out->null_value = sp->null_value;
  out->boolean = sp->phys == PQ_BOOLEAN;
  return HP_OK;
}
