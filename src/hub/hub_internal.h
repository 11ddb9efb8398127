/* Hub internals: the store object and the table of operations every format implements.
 * Only src/hub/ includes this; each format lives in its own fmt_*.c and is reached only through
 * hp_format_ops. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HUB_INTERNAL_H
#define HUBPROF_HUB_INTERNAL_H

#include "hubprof/hub.h"
#include "hub_layer.h" /* the calls the layer above the storage uses too */

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

typedef struct hp_format_ops hp_format_ops;

/* The store: common part; a format keeps its own state behind `impl`. */
struct hp_store {
  const hp_format_ops *ops;
  char *path; /* path given by the user */
  hp_mode mode;
  hp_status first_error; /* first failure of a created store: close then aborts */
  hp_status damage;      /* HP_OK, or what a reader found (truncated/corrupt) */
  uint64_t damage_offset;
  char error[HP_ERRMSG_MAX];  /* one line: "<path>: <problem>" */
  char *schema_version;       /* owned, set by the format */
  struct hp_meta_cache *meta; /* metadata read lazily by hp_store_metadata */
  pthread_mutex_t lock;       /* serialises writes for formats without HP_FMT_THREADSAFE_WRITE */
  void *impl;                 /* the format's state */
  char
      note[HP_ERRMSG_MAX]; /* hp_store_note: the first thing read that is worth a warning but is not damage */
};

/* A cursor: common part; formats allocate their own and put the table in. */
struct hp_cursor {
  hp_store *store;
  hp_table table;
  void *impl;
  int ended;    /* the format said HP_END (or failed): never ask it again */
  int narrowed; /* cursor_columns was told a batch's columns: tell it every column before a whole row */
  char *arena;  /* strings of the last hp_cursor_next_batch */
  size_t arena_cap;
};

/* Operations of one format. `size` is sizeof(hp_format_ops) of the build that made it (a version
 * of the table, as SQLite's VFS does); every function gets the common store. */
enum {
  HP_FMT_THREADSAFE_WRITE = 1u << 0, /* write may be called from many threads at once (no hub lock) */
  HP_FMT_LIVE = 1u << 1,             /* supports HP_CREATE_LIVE */
};

/* The signature of each operation, written once: hp_format_ops' members and the formats' own declarations
 * (HP_FORMAT_DECLARE) take it from here. */
typedef int hp_fmt_probe_fn(const char *path, const unsigned char *head, size_t n);
typedef hp_status hp_fmt_open_read_fn(hp_store *s);
typedef hp_status hp_fmt_create_fn(hp_store *s);
typedef hp_status hp_fmt_write_fn(hp_store *s, hp_table t, const void *row);
typedef hp_status hp_fmt_commit_fn(hp_store *s);
typedef void hp_fmt_abort_fn(hp_store *s);
typedef void hp_fmt_close_read_fn(hp_store *s);
typedef hp_status hp_fmt_count_fn(hp_store *s, hp_table t, uint64_t *n);
typedef hp_status hp_fmt_cursor_open_fn(hp_cursor *c);
typedef hp_status hp_fmt_cursor_next_fn(hp_cursor *c, void *row);
typedef void hp_fmt_cursor_close_fn(hp_cursor *c);
typedef hp_status hp_fmt_cursor_next_batch_fn(hp_cursor *c, void *const *cols, size_t max, size_t *n);
typedef hp_status hp_fmt_cursor_columns_fn(hp_cursor *c, void *const *cols);
typedef int hp_fmt_park_fn(hp_store *s);
typedef hp_status hp_fmt_resume_fn(hp_store *s);
typedef hp_status hp_fmt_cursor_part_fn(hp_cursor *c, unsigned part, unsigned nparts);
typedef hp_status hp_fmt_cursor_filter_fn(hp_cursor *c, int (*keep)(void *, const hp_col_range *), void *ctx);
typedef int hp_fmt_write_errno_fn(hp_store *s);
typedef hp_status hp_fmt_row_span_fn(hp_store *s, hp_table t, int64_t *lo, int64_t *hi);

struct hp_format_ops {
  size_t size;
  const char *name;
  unsigned flags; /* HP_FMT_* */
  /* Detection: given the path and its first bytes (head, n may be 0 for a directory or empty file),
   * return 1 when the path is certainly this format. */
  hp_fmt_probe_fn *probe;
  /* Open for reading / create for writing; fill s->impl and s->schema_version. On error set the message
   * with hp_set_error and return the status (the hub then calls close_read/abort as fitting). */
  hp_fmt_open_read_fn *open_read;
  hp_fmt_create_fn *create;
  /* Append one row (row is a full struct of this build, already normalised by the hub: size set to
   * this build's size, NULL strings replaced by ""). */
  hp_fmt_write_fn *write;
  /* Commit a created store: make it appear at s->path atomically. Commit and abort both release
   * everything in s->impl (the hub sets it to NULL after either). */
  hp_fmt_commit_fn *commit;
  /* Drop a created store: remove every temporary. */
  hp_fmt_abort_fn *abort;
  /* Release a read store. */
  hp_fmt_close_read_fn *close_read;
  hp_fmt_count_fn *count;
  /* Cursor: open fills c->impl; next fills a full row struct of this build (strings valid until the
   * next call); close releases c->impl. */
  hp_fmt_cursor_open_fn *cursor_open;
  hp_fmt_cursor_next_fn *cursor_next;
  hp_fmt_cursor_close_fn *cursor_close;
  /* Optional columnar read with the contract of hp_cursor_next_batch (NULL arrays: columns not wanted,
   * which a columnar format need not decode); NULL = the hub builds batches from cursor_next. */
  hp_fmt_cursor_next_batch_fn *cursor_next_batch;
  /* Optional, for a row format without cursor_next_batch: the columns the reads that follow need (cols as
   * hp_cursor_next_batch's, NULL: every column), told before each batch the hub builds and before a row read
   * by hp_cursor_next after one. cursor_next may then leave the other columns at their hp_row_init value. */
  hp_fmt_cursor_columns_fn *cursor_columns;
  /* Optional, for a read store: park releases the file (descriptor, mapping) and keeps what was read from it,
   * returning 1, or returns 0 when it cannot (the store is then as before); resume takes the file again:
   * HP_OK, or an error set with hp_set_error (the caller then aborts the store). */
  hp_fmt_park_fn *park;
  hp_fmt_resume_fn *resume;
  /* Optional: open c (as cursor_open) on part `part` of `nparts` (2 or more) of its table, with the contract
   * of hp_cursor_open_part; NULL = the format cannot split (part 0 gets every row). */
  hp_fmt_cursor_part_fn *cursor_part;
  /* Optional: hp_cursor_filter's contract; NULL = every row is read. */
  hp_fmt_cursor_filter_fn *cursor_filter;
  /* Optional, for a store being created: errno of the last failure to extend it (ENOSPC), 0 when none, for
   * a format whose append path sets no message (the log's runs inside the application). */
  hp_fmt_write_errno_fn *write_errno;
  /* Optional: the smallest and largest row id of table t, where cursor_part cuts a table by id ranges that
   * other read-only opens of the same file can read at once (merge_read.c's read-ahead); NULL = none. */
  hp_fmt_row_span_fn *row_span;
};

/* The operations every format has, in one list: a format whose functions are named PREFIX_<operation>
 * declares them with HP_FORMAT_DECLARE(PREFIX) (prototypes from the typedefs above) and starts its table
 * with HP_FORMAT(PREFIX, "name", flags) (size, name, flags and these operations), then its optional ones. */
#define HP_FORMAT_CORE_OPS(X, P)                                                                             \
  X(P, probe)                                                                                                \
  X(P, open_read)                                                                                            \
  X(P, create)                                                                                               \
  X(P, write)                                                                                                \
  X(P, commit)                                                                                               \
  X(P, abort)                                                                                                \
  X(P, close_read)                                                                                           \
  X(P, count)                                                                                                \
  X(P, cursor_open)                                                                                          \
  X(P, cursor_next)                                                                                          \
  X(P, cursor_close)
#define HP_FORMAT_DECL_(P, op) hp_fmt_##op##_fn P##_##op;
#define HP_FORMAT_INIT_(P, op) , .op = P##_##op
#define HP_FORMAT_DECLARE(P) HP_FORMAT_CORE_OPS(HP_FORMAT_DECL_, P)
#define HP_FORMAT(P, NAME, FLAGS)                                                                            \
  .size = sizeof(hp_format_ops), .name = NAME, .flags = FLAGS HP_FORMAT_CORE_OPS(HP_FORMAT_INIT_, P)

extern const hp_format_ops hp_fmt_rocpd;
extern const hp_format_ops hp_fmt_log;
extern const hp_format_ops hp_fmt_parquet;

/* The formats of this build, NULL-terminated (formats.c: all; formats_log.c: log only, for the collector). */
extern const hp_format_ops *const hp_format_table[];

/* Record a note (hp_store_note): "<path>: <what>"; the first one is kept, later ones are counted in it. */
void hp_set_note(hp_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Record damage found while reading: status, offset and message (the store stays usable). */
void hp_set_damage(hp_store *s, hp_status st, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Temporary name beside `path` for a store being created ("<dir>/.<base>.tmp.<pid>.<n>"); malloc'd. */
char *hp_temp_path(const char *path);

/* Copy the caller's row (which may be an older, smaller struct) into a full struct of this build. */
hp_status hp_row_import(hp_table t, const void *in, void *full);
/* 1 when a caller's row can be passed to a format as it is: it has this build's size and no NULL string. */
int hp_row_is_complete(hp_table t, const void *row);
/* Copy a full row of this build into the caller's struct, as much as its `size` allows. */
hp_status hp_row_export(hp_table t, const void *full, void *out);

/* CRC-32C (Castagnoli) over data, continuing from crc (start with 0). */
uint32_t hp_crc32c(uint32_t crc, const void *data, size_t n);

#endif
