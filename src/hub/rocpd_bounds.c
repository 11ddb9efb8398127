/* rocpd format, reader's bounds: a private SQLite VFS per store that counts temporary files' bytes, and the
 * progress handler that stops a statement past its work or time budget (rocpd_bounds.h). */
/* SPDX-License-Identifier: MIT */
#include "rocpd_bounds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tfile {
  sqlite3_file base;
  rp_bounds *b;
  sqlite3_file *real;
} tfile;

#define REAL(f) (((tfile *)(f))->real)
#define REALM(f) (REAL(f)->pMethods)
static int tf_close(sqlite3_file *f) { return REALM(f)->xClose(REAL(f)); }
static int tf_read(sqlite3_file *f, void *p, int n, sqlite3_int64 off) {
  return REALM(f)->xRead(REAL(f), p, n, off);
}
static int tf_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 off) {
  rp_bounds *b = ((tfile *)f)->b;
  uint64_t add = n > 0 ? (uint64_t)n : 0;
  if (atomic_fetch_add_explicit(&b->temp_bytes, add, memory_order_relaxed) + add > b->temp_budget) {
    b->why = RB_TEMP;
    return SQLITE_FULL;
  }
  return REALM(f)->xWrite(REAL(f), p, n, off);
}
static int tf_truncate(sqlite3_file *f, sqlite3_int64 n) { return REALM(f)->xTruncate(REAL(f), n); }
static int tf_sync(sqlite3_file *f, int fl) { return REALM(f)->xSync(REAL(f), fl); }
static int tf_size(sqlite3_file *f, sqlite3_int64 *n) { return REALM(f)->xFileSize(REAL(f), n); }
static int tf_lock(sqlite3_file *f, int l) { return REALM(f)->xLock(REAL(f), l); }
static int tf_unlock(sqlite3_file *f, int l) { return REALM(f)->xUnlock(REAL(f), l); }
static int tf_reserved(sqlite3_file *f, int *out) { return REALM(f)->xCheckReservedLock(REAL(f), out); }
static int tf_control(sqlite3_file *f, int op, void *arg) {
  if (op == SQLITE_FCNTL_SIZE_HINT) return SQLITE_NOTFOUND; /* growth comes through counted writes only */
  return REALM(f)->xFileControl(REAL(f), op, arg);
}
static int tf_sector(sqlite3_file *f) { return REALM(f)->xSectorSize(REAL(f)); }
static int tf_dev(sqlite3_file *f) { return REALM(f)->xDeviceCharacteristics(REAL(f)); }
static int tf_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp) {
  if (REALM(f)->iVersion < 3 || !REALM(f)->xFetch) {
    *pp = NULL;
    return SQLITE_OK;
  }
  return REALM(f)->xFetch(REAL(f), off, n, pp);
}
static int tf_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p) {
  if (REALM(f)->iVersion < 3 || !REALM(f)->xUnfetch) return SQLITE_OK;
  return REALM(f)->xUnfetch(REAL(f), off, p);
}
#undef REALM
#undef REAL

static const sqlite3_io_methods tf_methods = {.iVersion = 3,
                                              .xClose = tf_close,
                                              .xRead = tf_read,
                                              .xWrite = tf_write,
                                              .xTruncate = tf_truncate,
                                              .xSync = tf_sync,
                                              .xFileSize = tf_size,
                                              .xLock = tf_lock,
                                              .xUnlock = tf_unlock,
                                              .xCheckReservedLock = tf_reserved,
                                              .xFileControl = tf_control,
                                              .xSectorSize = tf_sector,
                                              .xDeviceCharacteristics = tf_dev,
                                              .xFetch = tf_fetch,
                                              .xUnfetch = tf_unfetch};

#define BASE(v) (((rp_bounds *)(v)->pAppData)->base)
static int bv_open(sqlite3_vfs *v, sqlite3_filename name, sqlite3_file *f, int flags, int *out) {
  const int temp =
      SQLITE_OPEN_TEMP_DB | SQLITE_OPEN_TEMP_JOURNAL | SQLITE_OPEN_TRANSIENT_DB | SQLITE_OPEN_SUBJOURNAL;
  if (!(flags & temp)) return BASE(v)->xOpen(BASE(v), name, f, flags, out);
  tfile *t = (tfile *)f;
  t->b = v->pAppData;
  t->real = (sqlite3_file *)(t + 1);
  t->real->pMethods = NULL;
  int rc = BASE(v)->xOpen(BASE(v), name, t->real, flags, out);
  t->base.pMethods = t->real->pMethods ? &tf_methods : NULL;
  return rc;
}
static int bv_delete(sqlite3_vfs *v, const char *p, int sync) { return BASE(v)->xDelete(BASE(v), p, sync); }
static int bv_access(sqlite3_vfs *v, const char *p, int fl, int *out) {
  return BASE(v)->xAccess(BASE(v), p, fl, out);
}
static int bv_full(sqlite3_vfs *v, const char *p, int n, char *out) {
  return BASE(v)->xFullPathname(BASE(v), p, n, out);
}
static int bv_random(sqlite3_vfs *v, int n, char *out) { return BASE(v)->xRandomness(BASE(v), n, out); }
static int bv_sleep(sqlite3_vfs *v, int us) { return BASE(v)->xSleep(BASE(v), us); }
static int bv_time(sqlite3_vfs *v, double *out) { return BASE(v)->xCurrentTime(BASE(v), out); }
static int bv_error(sqlite3_vfs *v, int n, char *out) { return BASE(v)->xGetLastError(BASE(v), n, out); }
static int bv_time64(sqlite3_vfs *v, sqlite3_int64 *out) {
  if (BASE(v)->iVersion >= 2 && BASE(v)->xCurrentTimeInt64) return BASE(v)->xCurrentTimeInt64(BASE(v), out);
  double d = 0;
  int rc = BASE(v)->xCurrentTime(BASE(v), &d);
  *out = (sqlite3_int64)(d * 86400000.0);
  return rc;
}
#undef BASE

/* Make r's bounds and register its VFS (named after the state's address, unique while it lives). */
hp_status rp_bounds_open(hp_store *s, uint64_t bytes) {
  rp_state *r = s->impl;
  sqlite3_initialize();
  rp_bounds *b = calloc(1, sizeof *b);
  if (!b) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  r->bounds = b;
  b->base = sqlite3_vfs_find(NULL);
  if (!b->base) return hp_set_error(s, HP_ERR_IO, "cannot open: SQLite has no default VFS");
  /* temporary storage: a plain read of a table or of hubprof's views needs none; a foreign view may */
  b->temp_budget = (64ull << 20) + 4 * bytes;
  /* row text: strings are stored once and joined into rows, but not 64 times over */
  b->text_budget = (128ull << 20) + 64 * bytes;
  /* rows: a stored row takes at least 6 bytes (cell pointer, sizes, rowid, record header); a view can make
   * rows out of nothing */
  b->row_budget = 4096 + bytes / 2;
  /* time inside SQLite per statement: 2 s, and 1 s more per MiB of stored data (hundreds of times what
   * reading a MiB takes) */
  b->time_budget = 2000000000ull + (bytes >> 20) * 1000000000ull;
  snprintf(b->name, sizeof b->name, "hubprof-read-%p", (void *)b);
  b->vfs = (sqlite3_vfs){.iVersion = 2,
                         .szOsFile = (int)sizeof(tfile) + b->base->szOsFile,
                         .mxPathname = b->base->mxPathname,
                         .zName = b->name,
                         .pAppData = b,
                         .xOpen = bv_open,
                         .xDelete = bv_delete,
                         .xAccess = bv_access,
                         .xFullPathname = bv_full,
                         .xRandomness = bv_random,
                         .xSleep = bv_sleep,
                         .xCurrentTime = bv_time,
                         .xGetLastError = bv_error,
                         .xCurrentTimeInt64 = bv_time64};
  if (sqlite3_vfs_register(&b->vfs, 0) != SQLITE_OK) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  b->registered = 1;
  return HP_OK;
}

/* Close the connection, then retire the VFS it used (a connection SQLite could not close yet keeps it). */
void rp_bounds_close(rp_state *r) {
  rp_bounds *b = r->bounds;
  if (r->db && sqlite3_close(r->db) != SQLITE_OK) {
    sqlite3_close_v2(r->db); /* statements still open: it closes with the last; the VFS must stay */
    r->db = NULL;
    return;
  }
  r->db = NULL;
  if (b && b->registered) sqlite3_vfs_unregister(&b->vfs);
  free(b);
  r->bounds = NULL;
}

/* Progress handler: interrupts a statement that does far more work than the file's size allows, in SQLite
 * steps or in time spent inside SQLite (a hostile or looping schema must not hang a reader). */
int rp_work_guard(void *arg) {
  rp_state *r = arg;
  rp_bounds *b = r->bounds;
  if (atomic_fetch_add_explicit(&r->ops, 1000, memory_order_relaxed) + 1000 > r->budget) {
    b->why = RB_WORK;
    return 1;
  }
  if (b->used + (rp_coarse_ns() - b->t0) > b->time_budget) {
    b->why = RB_TIME;
    return 1;
  }
  return 0;
}

/* A new statement: its work, temporary bytes and time count from zero. */
void rp_guard_reset(rp_state *r) {
  rp_bounds *b = r->bounds;
  atomic_store_explicit(&r->ops, 0, memory_order_relaxed);
  atomic_store_explicit(&b->temp_bytes, 0, memory_order_relaxed);
  b->used = 0;
  b->t0 = rp_coarse_ns();
  b->why = RB_NONE;
}
