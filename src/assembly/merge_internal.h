/* The merge's internals: the per-input transform hooks and progress the assembly pipeline
 * (assemble.c) plugs into hp_merge's single streaming pass. Only src/assembly/ includes this. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_MERGE_INTERNAL_H
#define HUBPROF_MERGE_INTERNAL_H

#include "../hub/hub_layer.h"

#include <stdio.h>

/* Hooks called while merging; rows are full structs of this build, in the input's own ids (before remap).
 * Return values: 1 keep / a row given, 0 drop / no more rows, negative = failure (the hook has set
 * hp_merge_hooks.error and the merge stops with `status`). */
typedef struct hp_merge_hooks {
  void *ctx;
  /* A row read from input `in` of table t; may change it. NULL: every row kept as is. */
  int (*row)(void *ctx, size_t in, hp_table t, void *row);
  /* After table t of input `in`: rows to add, one per call (the row is initialised by the merge);
   * NULL: none. */
  int (*extra)(void *ctx, size_t in, hp_table t, void *row);
  /* Rows read so far (extra rows included) and the rows of every input (0 unknown); NULL: none. */
  void (*progress)(void *ctx, uint64_t done, uint64_t total);
  const volatile int *cancel; /* nonzero: stop within 4096 rows with HP_ERR_CANCELLED; NULL: never */
  hp_status status;           /* what a failing hook returns to the caller */
  char error[HP_ERRMSG_MAX];  /* and its message */
  /* An input given as NULL is opened by `open` just before it is read and handed to `done` right after, so
   * that one input at a time is open (NULL: every input given open). */
  hp_store *(*open)(void *ctx, size_t in);
  void (*done)(void *ctx, size_t in);
  uint64_t total; /* the rows of every input, for progress when inputs are opened by `open` (0: counted) */
} hp_merge_hooks;

/* hp_merge with hooks (NULL: plain hp_merge). */
hp_status hp_merge_with(hp_store *out, hp_store *const *in, size_t n, hp_merge_stats *stats,
                        hp_merge_hooks *hooks);

/* merge_read.c: the dispatch rows of a large rocpd input written by hubprof, read ahead by a thread per CPU
 * (HUBPROF_THREADS), in store order. mread_open: HP_OK, or HP_ERR_UNSUPPORTED (another input or table, a
 * small file, one CPU: read it with a cursor) or HP_ERR_NOMEM; mread_next as hp_cursor_next (a failure's
 * message put on `in`). */
typedef struct mread mread;
hp_status mread_open(hp_store *in, hp_table t, mread **out);
hp_status mread_next(mread *r, hp_store *in, void *row);
void mread_close(mread *r);

#endif
