/* The "log" format: the crash-safe, append-only file an instrumented process writes while it runs
 * (layout in docs/formats/log.md). This file: the ops table; the writer is fmt_log_write.c (the collector's
 * hot path), the reader fmt_log_read.c, the column programs both follow fmt_log_cols.c. */
/* SPDX-License-Identifier: MIT */
#include "fmt_log_internal.h"

/* ---- ops table ---- */
const hp_format_ops hp_fmt_log = {
    .size = sizeof(hp_format_ops),
    .name = "log",
    .flags = HP_FMT_THREADSAFE_WRITE | HP_FMT_LIVE,
    .probe = hp_log_probe,
    .open_read = hp_log_open_read,
    .create = hp_log_create,
    .write = hp_log_write,
    .commit = hp_log_commit,
    .abort = hp_log_abort,
    .close_read = hp_log_close_read,
    .count = hp_log_count,
    .cursor_open = hp_log_cursor_open,
    .cursor_next = hp_log_cursor_next,
    .cursor_close = hp_log_cursor_close,
    .park = hp_log_park,
    .resume = hp_log_resume,
    .write_errno = hp_log_write_errno,
};
