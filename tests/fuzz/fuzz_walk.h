/* Shared by the reader fuzzers (fuzz_log, fuzz_parquet): one walk of a table's rows with a cursor, into a
 * full row (every string read) or into a row struct too small for the table (the size check). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_FUZZ_WALK_H
#define HUBPROF_FUZZ_WALK_H

#include "hub_internal.h"

#include <stdint.h>
#include <string.h>

/* Walk table t of s into row (512 bytes), full (small 0) or small: 0 when no cursor opens, else 1 with *k
 * the rows read and *st the cursor's last status (HP_END when it ended cleanly); string lengths go to *sink.
 */
static inline int fuzz_walk(hp_store *s, hp_table t, int small, unsigned char *row, uint64_t *k,
                            hp_status *st, volatile size_t *sink) {
  const hp_table_desc *d = hp_table_describe(t);
  hp_cursor *c = NULL;
  if (hp_cursor_open(s, t, &c) != HP_OK) return 0;
  uint32_t size = small ? (uint32_t)(sizeof(uint32_t) + 2 * sizeof(uint64_t)) : (uint32_t)d->row_size;
  memcpy(row, &size, sizeof size);
  *k = 0;
  while ((*st = hp_cursor_next(c, row)) == HP_OK) {
    ++*k;
    for (size_t i = 0; !small && i < d->ncolumns; i++) {
      if (d->columns[i].type != HP_COL_STR) continue;
      const char *str;
      memcpy(&str, row + d->columns[i].offset, sizeof str);
      *sink += strlen(str);
    }
  }
  hp_cursor_close(c);
  return 1;
}

#endif
