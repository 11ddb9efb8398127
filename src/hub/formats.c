/* The format table of the full hub library: every format compiled in, in detection order.
 * The collector links formats_log.c instead, so it never pulls in SQLite or Parquet. */
/* SPDX-License-Identifier: MIT */
#include "hub_internal.h"

const hp_format_ops *const hp_format_table[] = {&hp_fmt_log, &hp_fmt_rocpd, &hp_fmt_parquet, NULL};
