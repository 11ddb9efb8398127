/* The "log" format: the crash-safe, append-only file an instrumented process writes while it runs
 * (layout in docs/formats/log.md). This file: the column programs derived from the schema and the ops table;
 * the writer is fmt_log_write.c (the collector's hot path), the reader fmt_log_read.c. */
/* SPDX-License-Identifier: MIT */
#include "fmt_log_internal.h"

#include <pthread.h>

tinfo hp_log_ti[HP_TABLE_COUNT];
static pthread_once_t g_ti_once = PTHREAD_ONCE_INIT;

static int table_is_small(hp_table t) { return !hp_table_streamed(t); }

static void ti_init(void) {
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    tinfo *ti = &hp_log_ti[t];
    ti->d = hp_table_describe((hp_table)t);
    ti->small = table_is_small((hp_table)t);
    ti->bound = ti->small ? 10 : 0;
    for (size_t i = 0; i < ti->d->ncolumns && i < MAX_COLS; i++) {
      const hp_column *c = &ti->d->columns[i];
      uint8_t kind = K_U64;
      switch (c->type) {
      case HP_COL_U32: kind = K_U32; break;
      case HP_COL_I32: kind = K_I32; break; /* zigzagged as 64 bits */
      case HP_COL_U64: kind = K_U64; break;
      case HP_COL_I64: kind = K_I64; break;
      case HP_COL_F64: kind = K_F64; break;
      case HP_COL_STR:
        kind = K_STR;
        ti->stroff[ti->nstr++] = c->offset;
        break;
      }
      ti->bound += kind == K_F64 ? 8 : 10;
      ti->ops[ti->ncols++] = (col_op){(uint16_t)c->offset, kind};
    }
  }
}

void hp_log_ti_init(void) { pthread_once(&g_ti_once, ti_init); }

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
