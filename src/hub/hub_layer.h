/* The hub's interface for the layer above its storage (src/assembly/: the merge and the assembly pipeline):
 * what that layer needs beyond include/hubprof/, as functions on an opaque store; no store struct, no format
 * ops, no format. A fast path a format offers reaches the layer only through a function here that asks the
 * format's hp_format_ops (hp_store_row_span, hp_store_write_errno, hp_store_park). hub_internal.h includes
 * this for the hub's own files. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HUB_LAYER_H
#define HUBPROF_HUB_LAYER_H

#include "hubprof/hub.h"

#include <stdint.h>

#define HP_ERRMSG_MAX 512

/* Set s->error to "<path>: <formatted problem>" and return st (also recorded as first_error when
 * the store is being created). */
hp_status hp_set_error(hp_store *s, hp_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A read store without its file while it is not read (hp_format_ops.park): 1 when parked, 0 when its format
 * cannot (the caller closes it instead). No cursor may be open on it. */
int hp_store_park(hp_store *s);
/* errno of the last failure to extend a store being created, 0 when none or its format does not say
 * (hp_format_ops.write_errno): for callers that name the file in their own message, such as the merge. */
int hp_store_write_errno(hp_store *s);
/* A parked store taken again: HP_OK, or an error (message set) after which the caller aborts the store. */
hp_status hp_store_resume(hp_store *s);

/* Zero-fill a row struct of table t and set its size; strings set to "". */
void hp_row_init(hp_table t, void *row);

/* Room for one row of any table (a full, current-size struct): for copies and imports. */
typedef union hp_anyrow {
  hp_node n;
  hp_process p;
  hp_thread th;
  hp_agent a;
  hp_queue q;
  hp_code_object co;
  hp_kernel_symbol k;
  hp_dispatch d;
  hp_counter_info ci;
  hp_counter_value cv;
  hp_region r;
  hp_metadata m;
  hp_pc_sample ps;
  hp_counter_sample cs;
  hp_code_blob cb;
  hp_memory_copy mc;
  hp_ceiling ce;
} hp_anyrow;

/* hp_write of n rows, rows[i] (stride bytes apart) of table tables[i], the store's lock taken once for them
 * all instead of once a row (merge's writer thread writes batches of rows); counts each row written in
 * rows_out[table] when given; stops at the first failure, returned, *done (when given) the rows written
 * before it. */
hp_status hp_write_rows(hp_store *s, const unsigned char *tables, const void *rows, size_t stride, size_t n,
                        uint64_t *rows_out, size_t *done);

/* 1 for the tables whose rows are many (dispatches, counter values, regions, samples, code bytes): streamed
 * by readers and merge, never de-duplicated by key (schema.c). */
int hp_table_streamed(hp_table t);

/* hub_layer.c: */
/* HP_READ for a store opened for reading, else the mode it was created with (HP_CREATE...). */
hp_mode hp_store_mode(const hp_store *s);
/* A failure the layer met on store s, msg its whole message ("<file>: <problem>", NULL: the message stays).
 * A read store takes msg and returns 1. A store being created takes st as its first error, and msg, only when
 * it has no failure yet (then 1; else 0, nothing changed: the first failure stays, as with hp_set_error). */
int hp_store_fail(hp_store *s, hp_status st, const char *msg);
/* The smallest and largest row id of table t, where the format's hp_cursor_open_part cuts the table by id
 * ranges that other read-only opens of the same file can read at once (hp_format_ops.row_span: rocpd), for a
 * read-ahead on several threads: HP_OK, or HP_ERR_UNSUPPORTED where the format offers no such cut. */
hp_status hp_store_row_span(hp_store *s, hp_table t, int64_t *lo, int64_t *hi);

#endif
