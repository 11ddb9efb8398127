/* Extras of the "parquet" format beyond hp_format_ops: tuning of the files it writes, for tests and
 * benchmarks. Process-wide; set them before creating a store, not while another thread creates one. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_PARQUET_FMT_H
#define HUBPROF_PARQUET_FMT_H

#include "hub_internal.h"

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

#endif
