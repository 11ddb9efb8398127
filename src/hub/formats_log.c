/* The format table of the collector's hub subset: the crash-safe log only (no SQLite, no Parquet). */
/* SPDX-License-Identifier: MIT */
#include "hub_internal.h"

const hp_format_ops *const hp_format_table[] = {&hp_fmt_log, NULL};
