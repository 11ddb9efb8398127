/* rocpd format, reader's bounds: the byte, row and time budgets of one store's read connection, and the
 * private SQLite VFS that counts its temporary files' bytes (rocpd_bounds.c). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_ROCPD_BOUNDS_H
#define HUBPROF_ROCPD_BOUNDS_H
#include "rocpd_internal.h"

#include <stdatomic.h>
#include <time.h>

/* ---- bounds in bytes and time ----
 * SQLite's step count does not see two kinds of work a hostile view can ask for: temporary storage (a sort
 * or a temporary b-tree of rows with huge strings, written to temporary files before the first row comes
 * back) and work inside one step (a function building a huge string whose result is thrown away). Each
 * store's connection therefore runs on its own VFS, the default one with every temporary file's writes
 * counted against a byte budget (a write past it fails with SQLITE_FULL), and the progress handler also
 * stops a statement that has spent more than its time budget inside SQLite. */
enum { RB_NONE, RB_WORK, RB_TEMP, RB_TIME };

typedef struct rp_bounds {
  sqlite3_vfs vfs;   /* this store's VFS: forwards to base, temporary files wrapped */
  sqlite3_vfs *base; /* the default VFS */
  char name[48];
  int registered;
  _Atomic uint64_t temp_bytes; /* written to temporary files by the current statement ... */
  uint64_t temp_budget;        /* ... and the most it may write */
  uint64_t text_budget;        /* bytes of row text one cursor may hand out ... */
  uint64_t row_budget;         /* ... and rows */
  uint64_t time_budget;        /* ns inside SQLite per statement */
  uint64_t used;               /* ns spent inside SQLite by the current statement before t0 */
  uint64_t t0;                 /* start of the current stretch of work (coarse clock) */
  int why;                     /* what stopped the statement (RB_*) */
} rp_bounds;

/* A coarse clock (a few ms resolution, no system call): summed over many steps its deltas average out. */
static inline uint64_t rp_coarse_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A temporary file: SQLite's sqlite3_file of the base VFS follows this struct in the same allocation. */

/* Time between rp_work_begin and rp_work_end counts as the current statement's (not the caller's time between
 * rows). */
static inline void rp_work_begin(rp_state *r) { r->bounds->t0 = rp_coarse_ns(); }
static inline void rp_work_end(rp_state *r) { r->bounds->used += rp_coarse_ns() - r->bounds->t0; }

/* Make the store's bounds and register its VFS (named after the bounds' address, unique while they live). */
hp_status rp_bounds_open(hp_store *s, uint64_t bytes);
/* Close the connection, then retire the VFS it used. */
void rp_bounds_close(rp_state *r);
/* SQLite progress handler: 1 stops a statement past its work or time budget. */
int rp_work_guard(void *arg);
/* A new statement: its work, temporary bytes and time count from zero. */
void rp_guard_reset(rp_state *r);
#endif
