/* The log format's column programs (fmt_log_internal.h): per table, derived once from the schema, how the
 * writer (fmt_log_write.c) encodes and the reader (fmt_log_read.c) decodes a row. */
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
