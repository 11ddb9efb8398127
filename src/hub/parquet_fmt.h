/* Extras of the "parquet" format beyond hp_format_ops: tuning of the files it writes, for tests and
 * benchmarks. Process-wide; set them before creating a store, not while another thread creates one. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_PARQUET_FMT_H
#define HUBPROF_PARQUET_FMT_H

#include "hub_internal.h"

#include "hubprof/parquet.h"

/* The format's operations (also declared by hub_internal.h once the format table lists it). */
extern const hp_format_ops hp_fmt_parquet;

/* Limits of Parquet stores created from now on in this process; 0 keeps the current value.
 * rg_rows: rows per row group (default 1048576); rg_bytes: buffered bytes per row group and table
 * (default 64 MiB, which bounds the writer's memory per table); file_rgs: row groups per file before a
 * new file starts (default 64); file_bytes: bytes per file before a new file starts (default 512 MiB);
 * zstd_level: 1..19 (default 3). Returns HP_ERR_INVALID for a value out of range. */
hp_status hp_parquet_set_defaults(uint64_t rg_rows, uint64_t rg_bytes, uint32_t file_rgs, uint64_t file_bytes,
                                  int zstd_level);

/* hp_cursor_next_batch for a cursor of a Parquet store, reading only the columns asked for (NULL arrays
 * are neither decoded nor, when a whole page is passed over, decompressed). Same contract as
 * hp_cursor_next_batch; meant to be the format's batch operation. HP_ERR_INVALID for another format. */
hp_status hp_parquet_cursor_next_batch(hp_cursor *c, void *const *cols, size_t max, size_t *n);

/* ---- the dataset schema (parquet_schema.c) ---- */
#define PQ_MAX_COLUMNS 64 /* columns of one hub table at most */

/* How one hub column is stored in Parquet files of store version 2 (dataset layout). */
typedef struct pq_colspec {
  const char *name;        /* column name in the file (e.g. dispatch.dispatch_id is "dispatch_seq") */
  const char *legacy_name; /* its name in store version 1 files (the hub's name) */
  int phys;                /* physical type (PQ_INT64, PQ_BOOLEAN, ...) */
  int legacy_phys;         /* physical type in version 1 files (also accepted when reading) */
  int nullable;            /* OPTIONAL: the hub value null_value (or "" for strings) is written as NULL */
  int64_t null_value;      /* the hub value a NULL reads as (0, -1; strings: "") */
  const char *unit;        /* "ns", "bytes", ... or NULL */
  const char *desc;        /* one-line description */
} pq_colspec;

/* Spec of column `col` of table t (in hp_table_describe order), NULL when out of range. */
const pq_colspec *pq_colspec_of(hp_table t, size_t col);

/* ---- the dataset layout (fmt_parquet.c) ---- */
/* Where a table's files lie: store version 2 writes <root>/<table>/part-NNNNN.parquet (Hive/Spark folder per
 * table, possibly with key=value sub-folders); version 1 wrote <root>/<table>.parquet and
 * <root>/<table>-NNNNN.parquet. pq_layout_find lists, sorted, the .parquet files below <root>/<table>/ (paths
 * relative to root, e.g. "dispatch/part-00000.parquet"); a store without a manifest (a dataset written back
 * by Spark, pandas, DuckDB) is read this way. Returns HP_OK with *n == 0 when the folder is absent; on a
 * problem (a foreign entry, unreadable folder) returns the status, set on the store with a message naming the
 * path (the hub's error convention). <root> is the store's path. The caller frees each name and the array. */
hp_status pq_layout_find(hp_store *s, const char *table, char ***names, size_t *n);

#endif
