/* The "log" format: the crash-safe, append-only file an instrumented process writes while it runs
 * (layout in docs/formats/log.md). This file: the ops table; the writer is fmt_log_write.c (the collector's
 * hot path), the reader fmt_log_read.c, the column programs both follow fmt_log_cols.c. */
/* SPDX-License-Identifier: MIT */
#include "fmt_log_internal.h"

/* ---- ops table ---- */
const hp_format_ops hp_fmt_log = {
    HP_FORMAT(hp_log, "log", HP_FMT_THREADSAFE_WRITE | HP_FMT_LIVE),
    .park = hp_log_park,
    .resume = hp_log_resume,
    .write_errno = hp_log_write_errno,
};
