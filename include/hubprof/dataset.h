/* hubprof datasets: how each column of the data model is named and typed in Parquet datasets and Python
 * DataFrames (dataset name, NULL rule, flag, unit, description), so every binding follows the files. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_DATASET_H
#define HUBPROF_DATASET_H

#include <stdint.h>

#include "hubprof/export.h"
#include "hubprof/hub.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hp_dataset_column {
  uint32_t size;           /* set by the caller to sizeof(hp_dataset_column) */
  const char *name;        /* the column's name in datasets (e.g. dispatch.dispatch_id is "dispatch_seq") */
  const char *unit;        /* "ns", "bytes", … or NULL */
  const char *description; /* one line */
  int32_t nullable;        /* 1: the hub value null_value (strings: "") means unknown and is stored as NULL */
  int64_t null_value;      /* 0 or -1 (process.rank) */
  int32_t boolean;         /* 1: a flag, BOOLEAN in Parquet, bool in DataFrames */
} hp_dataset_column;

/* Describe column `col` (index into hp_table_describe(t)->columns) as datasets store it. Strings are static.
 * HP_ERR_INVALID for a bad table, column, NULL out or a size smaller than the first fields. */
HP_API hp_status hp_dataset_column_describe(hp_table t, size_t col, hp_dataset_column *out);

#ifdef __cplusplus
}
#endif
#endif /* HUBPROF_DATASET_H */
