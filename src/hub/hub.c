/* Hub core: opening, detecting and closing stores, errors, the write and cursor entry points.
 * It dispatches every format-specific step through hp_format_ops and never knows a file layout itself.
 * Sections: status texts · errors and temp names · format lookup and detection · open/close · write · read.
 */
/* SPDX-License-Identifier: MIT */
#include "hub_internal.h"

#include "../common/hu_io.h"
#include "../common/hu_text.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static_assert(HP_TABLE_COUNT <= HP_TABLE_SLOTS, "hp_merge_stats' per-table arrays are too small");

#ifndef HUBPROF_VERSION
#define HUBPROF_VERSION HP_VERSION /* from the VERSION file, through the Makefile */
#endif

const char *hp_version(void) { return HUBPROF_VERSION; }

/* ---- status texts ---- */
const char *hp_status_str(hp_status s) {
  switch (s) {
  case HP_OK: return "success";
  case HP_END: return "end of rows";
  case HP_ERR_INVALID: return "invalid argument";
  case HP_ERR_NOMEM: return "out of memory";
  case HP_ERR_IO: return "input/output error";
  case HP_ERR_NOT_FOUND: return "no such file";
  case HP_ERR_FORMAT: return "not a hubprof store";
  case HP_ERR_VERSION: return "unsupported version";
  case HP_ERR_CORRUPT: return "corrupt data";
  case HP_ERR_TRUNCATED: return "truncated";
  case HP_ERR_UNSUPPORTED: return "operation not supported";
  case HP_ERR_CONSTRAINT: return "data breaks a rule of the model";
  case HP_ERR_CANCELLED: return "cancelled";
  }
  return "unknown status";
}

/* ---- errors and temp names ---- */
/* Messages and damage of a store may be set by cursors of several parts read at once (hp_cursor_open_part):
 * one lock for them all (taken only on trouble; never held while anything else is taken). */
static pthread_mutex_t msg_lock = PTHREAD_MUTEX_INITIALIZER;

static void vset_msg(hp_store *s, const char *fmt, va_list ap) {
  pthread_mutex_lock(&msg_lock);
  int n = snprintf(s->error, sizeof s->error, "%s: ", s->path ? s->path : "(store)");
  if (n >= 0 && (size_t)n < sizeof s->error) vsnprintf(s->error + n, sizeof s->error - (size_t)n, fmt, ap);
  pthread_mutex_unlock(&msg_lock);
}

hp_status hp_set_error(hp_store *s, hp_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vset_msg(s, fmt, ap);
  va_end(ap);
  if (s->mode != HP_READ) {
    hp_status expect = HP_OK;
    atomic_compare_exchange_strong((_Atomic hp_status *)&s->first_error, &expect, st);
  }
  return st;
}

void hp_set_note(hp_store *s, const char *fmt, ...) {
  if (s->note[0]) return; /* the first one */
  int n = snprintf(s->note, sizeof s->note, "%s: ", s->path ? s->path : "(store)");
  if (n < 0 || (size_t)n >= sizeof s->note) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->note + n, sizeof s->note - (size_t)n, fmt, ap);
  va_end(ap);
}

const char *hp_store_note(const hp_store *s) { return s ? s->note : ""; }

void hp_set_damage(hp_store *s, hp_status st, uint64_t offset, const char *fmt, ...) {
  pthread_mutex_lock(&msg_lock);
  int first = s->damage == HP_OK; /* the first damage is where it starts */
  if (first) {
    s->damage = st;
    s->damage_offset = offset;
  }
  pthread_mutex_unlock(&msg_lock);
  if (!first) return;
  va_list ap;
  va_start(ap, fmt);
  vset_msg(s, fmt, ap);
  va_end(ap);
}

char *hp_temp_path(const char *path) {
  static atomic_uint counter;
  const char *slash = strrchr(path, '/');
  size_t dirlen = slash ? (size_t)(slash - path + 1) : 0;
  const char *base = slash ? slash + 1 : path;
  size_t n = strlen(path) + 64;
  char *t = malloc(n);
  if (!t) return NULL;
  snprintf(t, n, "%.*s.%s.tmp.%ld.%u", (int)dirlen, path, base, (long)getpid(),
           atomic_fetch_add(&counter, 1));
  return t;
}

/* ---- format lookup and detection ---- */
const char *const *hp_formats(void) {
  static const char *names[16];
  if (!names[0]) {
    size_t i = 0;
    for (; hp_format_table[i] && i < 15; i++)
      names[i] = hp_format_table[i]->name;
    names[i] = NULL;
  }
  return names;
}

static const hp_format_ops *find_format(const char *name) {
  for (size_t i = 0; hp_format_table[i]; i++)
    if (strcmp(hp_format_table[i]->name, name) == 0) return hp_format_table[i];
  return NULL;
}

static hp_status detect(hp_store *s) {
  struct stat st;
  if (stat(s->path, &st) != 0) {
    if (errno == ENOENT) return hp_set_error(s, HP_ERR_NOT_FOUND, "no such file or directory");
    return hp_set_error(s, HP_ERR_IO, "cannot access: %s", strerror(errno));
  }
  unsigned char head[4096];
  size_t n = 0;
  if (S_ISREG(st.st_mode)) {
    int fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
                               O_NOCTTY); /* replaced by a FIFO since the stat: no wait */
    if (fd < 0) return hp_set_error(s, HP_ERR_IO, "cannot open: %s", strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      close(fd);
      return hp_set_error(s, HP_ERR_FORMAT, "not a regular file or directory");
    }
    ssize_t r = read(fd, head, sizeof head);
    close(fd);
    if (r < 0) return hp_set_error(s, HP_ERR_IO, "cannot read: %s", strerror(errno));
    n = (size_t)r;
    if (n == 0) return hp_set_error(s, HP_ERR_FORMAT, "empty file, not a hubprof store");
  } else if (!S_ISDIR(st.st_mode)) {
    return hp_set_error(s, HP_ERR_FORMAT, "not a regular file or directory (%s)",
                        S_ISFIFO(st.st_mode)                         ? "a FIFO"
                        : S_ISSOCK(st.st_mode)                       ? "a socket"
                        : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                     : "a special file");
  }
  for (size_t i = 0; hp_format_table[i]; i++) {
    if (hp_format_table[i]->probe(s->path, head, n)) {
      s->ops = hp_format_table[i];
      return HP_OK;
    }
  }
  if (S_ISDIR(st.st_mode)) return hp_set_error(s, HP_ERR_FORMAT, "is a directory, not a hubprof store");
  return hp_set_error(s, HP_ERR_FORMAT, "not a hubprof store (unknown format)");
}

/* ---- open / close ---- */
hp_status hp_store_open(const char *path, const char *format, hp_mode mode, hp_store **out) {
  if (out) *out = NULL;
  if (!path || !*path || !out || (mode != HP_READ && mode != HP_CREATE && mode != HP_CREATE_LIVE))
    return HP_ERR_INVALID;
  hp_store *s = calloc(1, sizeof *s);
  if (!s) return HP_ERR_NOMEM;
  s->path = strdup(path);
  if (!s->path) {
    free(s);
    return HP_ERR_NOMEM;
  }
  s->mode = mode;
  pthread_mutex_init(&s->lock, NULL);
  *out = s;
  hp_status st;
  if (format && *format && strcmp(format, "auto") != 0) {
    s->ops = find_format(format);
    if (!s->ops) return hp_set_error(s, HP_ERR_FORMAT, "unknown format '%s'", format);
  } else if (mode != HP_READ) {
    s->ops = find_format("rocpd");
    if (!s->ops) s->ops = hp_format_table[0];
  } else if ((st = detect(s)) != HP_OK) {
    return st;
  }
  if (mode == HP_READ) {
    st = s->ops->open_read(s);
  } else {
    if (mode == HP_CREATE_LIVE && !(s->ops->flags & HP_FMT_LIVE))
      return hp_set_error(s, HP_ERR_UNSUPPORTED, "format '%s' cannot be written live", s->ops->name);
    st = s->ops->create(s);
  }
  if (st != HP_OK && !s->error[0]) hp_set_error(s, st, "%s", hp_status_str(st));
  if (st != HP_OK) s->first_error = st;
  return st;
}

struct hp_meta_cache {
  size_t n;
  char **kv; /* key0, value0, key1, value1, … */
};

static void free_meta(hp_store *s) {
  if (!s->meta) return;
  for (size_t i = 0; i < 2 * s->meta->n; i++)
    free(s->meta->kv[i]);
  free(s->meta->kv);
  free(s->meta);
  s->meta = NULL;
}

static void free_store(hp_store *s) {
  free_meta(s);
  pthread_mutex_destroy(&s->lock);
  free(s->schema_version);
  free(s->path);
  free(s);
}

/* After the format's commit put a created store (HP_CREATE) at its path: its folder synced, so the new name
 * survives a system crash. The store is complete and in place whatever this gives, so a failure is a note
 * (hp_store_note), not an error: removing a finished store (and, with --force, the one it replaced) because
 * durability could not be confirmed would lose more than it saves, as SQLite ignores a directory's failed
 * sync too. The contract: docs/cli/exit-codes.md#a-store-whose-folder-cannot-be-synced. */
static void sync_folder(hp_store *s) {
  size_t l = strlen(s->path);
  while (l > 1 && s->path[l - 1] == '/') /* a Parquet folder named "x.parquet/" */
    l--;
  size_t d = l;
  while (d > 0 && s->path[d - 1] != '/')
    d--;
  char *dir = d == 0 ? strdup(".") : strndup(s->path, d == 1 ? 1 : d - 1);
  if (!dir || hu_fsync_dir(dir) != 0)
    hp_set_note(s,
                "written and complete, but its folder could not be synced (%s): its name may not survive a "
                "system crash",
                dir ? strerror(errno) : "out of memory");
  free(dir);
}

hp_status hp_store_commit(hp_store *s) {
  if (!s) return HP_ERR_INVALID;
  if (s->mode == HP_READ) return HP_ERR_UNSUPPORTED;
  if (!s->impl || !s->ops) return s->first_error != HP_OK ? s->first_error : HP_ERR_INVALID;
  hp_status st;
  if (s->first_error != HP_OK) {
    s->ops->abort(s);
    st = s->first_error;
  } else {
    st = s->ops->commit(s);
    if (st == HP_OK && s->mode == HP_CREATE) sync_folder(s);
    if (st != HP_OK) {
      if (!s->error[0]) hp_set_error(s, st, "cannot commit: %s", hp_status_str(st));
      s->first_error = st;
      s->ops->abort(s);
    }
  }
  s->impl = NULL; /* commit and abort release the format's state */
  return st;
}

hp_status hp_store_close(hp_store *s) {
  if (!s) return HP_OK;
  hp_status st = HP_OK;
  if (s->mode == HP_READ) {
    if (s->impl && s->ops) s->ops->close_read(s);
  } else if (s->impl) {
    st = hp_store_commit(s);
  } else {
    st = s->first_error;
  }
  free_store(s);
  return st;
}

int hp_store_park(hp_store *s) {
  if (!s || s->mode != HP_READ || !s->impl || !s->ops ||
      s->ops->size < offsetof(hp_format_ops, resume) + sizeof(void *) || !s->ops->park || !s->ops->resume)
    return 0;
  return s->ops->park(s);
}

int hp_store_write_errno(hp_store *s) {
  if (!s || !s->impl || !s->ops || s->ops->size < offsetof(hp_format_ops, write_errno) + sizeof(void *) ||
      !s->ops->write_errno)
    return 0;
  return s->ops->write_errno(s);
}

hp_status hp_store_resume(hp_store *s) {
  free_meta(s); /* read again when asked, as from a store opened anew (the file may have been scanned anew) */
  hp_status st = s->ops->resume(s);
  if (st != HP_OK && !s->error[0]) hp_set_error(s, st, "%s", hp_status_str(st));
  return st;
}

void hp_store_abort(hp_store *s) {
  if (!s) return;
  if (s->impl && s->ops) {
    if (s->mode == HP_READ)
      s->ops->close_read(s);
    else
      s->ops->abort(s);
    s->impl = NULL;
  }
  free_store(s);
}

const char *hp_store_error(const hp_store *s) { return s ? s->error : "no store"; }
const char *hp_store_format(const hp_store *s) { return s && s->ops ? s->ops->name : ""; }
const char *hp_store_path(const hp_store *s) { return s ? s->path : ""; }
const char *hp_store_schema_version(const hp_store *s) {
  return s && s->schema_version ? s->schema_version : "";
}

hp_status hp_store_damage(const hp_store *s, uint64_t *offset) {
  if (!s) return HP_ERR_INVALID;
  if (offset) *offset = s->damage_offset;
  return s->damage;
}

/* ---- text leaves as UTF-8 ----
 * Every string a writer stores is valid UTF-8: a byte that is not part of a valid UTF-8 sequence (a program
 * path or kernel name in another encoding) is stored as the four characters \xNN (NN: its value, two
 * upper-case hex digits; hu_utf8_escape, src/common/hu_text.c); valid text is stored as given. One place for
 * every format: hp_write. */
#define MAX_STR_COLS 16
static size_t g_nstr[HP_TABLE_COUNT], g_stroff[HP_TABLE_COUNT][MAX_STR_COLS];
static pthread_once_t g_str_once = PTHREAD_ONCE_INIT;

static void find_str_cols(void) {
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    for (size_t i = 0; i < d->ncolumns && g_nstr[t] < MAX_STR_COLS; i++)
      if (d->columns[i].type == HP_COL_STR) g_stroff[t][g_nstr[t]++] = d->columns[i].offset;
  }
}

/* ---- write ---- */
static __thread hp_store *g_held; /* the store whose lock this thread holds for hp_write_rows */

static hp_status write_row(hp_store *s, hp_table t, const void *r) {
  if ((s->ops->flags & HP_FMT_THREADSAFE_WRITE) || g_held == s) return s->ops->write(s, t, r);
  pthread_mutex_lock(&s->lock);
  hp_status st = s->ops->write(s, t, r);
  pthread_mutex_unlock(&s->lock);
  return st;
}

hp_status hp_write_rows(hp_store *s, const unsigned char *tables, const void *rows, size_t stride, size_t n,
                        uint64_t *rows_out, size_t *done) {
  if (!s || (n && (!tables || !rows))) return HP_ERR_INVALID;
  int lock = !(s->ops && (s->ops->flags & HP_FMT_THREADSAFE_WRITE)) && g_held != s;
  if (lock) {
    pthread_mutex_lock(&s->lock);
    g_held = s;
  }
  hp_status st = HP_OK;
  size_t i = 0;
  for (; i < n; i++) {
    if ((st = hp_write(s, (hp_table)tables[i], (const char *)rows + i * stride)) != HP_OK) break;
    if (rows_out) rows_out[tables[i]]++;
  }
  if (done) *done = i;
  if (lock) {
    g_held = NULL;
    pthread_mutex_unlock(&s->lock);
  }
  return st;
}

hp_status hp_write(hp_store *s, hp_table t, const void *row) {
  if (!s || !row || (unsigned)t >= HP_TABLE_COUNT) return HP_ERR_INVALID;
  if (s->mode == HP_READ || !s->impl) return HP_ERR_UNSUPPORTED;
  if (s->first_error != HP_OK) return s->first_error;
  hp_anyrow full;
  const void *r = row; /* fast path: the caller's row is already what the format needs */
  if (!hp_row_is_complete(t, row)) {
    hp_status st = hp_row_import(t, row, &full);
    if (st != HP_OK) return st;
    r = &full;
  }
  pthread_once(&g_str_once, find_str_cols);
  size_t need = 0;
  int bad = 0;
  for (size_t i = 0; i < g_nstr[t]; i++) {
    const char *v = *(const char *const *)(const void *)((const char *)r + g_stroff[t][i]);
    int b;
    size_t n = hu_utf8_escaped_size(v, &b);
    if (b) need += n;
    bad |= b;
  }
  if (!bad) return write_row(s, t, r); /* the usual case: nothing copied, nothing allocated */
  char *esc = malloc(need), *e = esc;
  if (!esc) return HP_ERR_NOMEM;
  if (r != (const void *)&full) {
    memcpy(&full, r, hp_table_describe(t)->row_size);
    r = &full;
  }
  for (size_t i = 0; i < g_nstr[t]; i++) {
    char **slot = (char **)(void *)((char *)&full + g_stroff[t][i]);
    int b;
    size_t n = hu_utf8_escaped_size(*slot, &b);
    if (!b) continue;
    hu_utf8_escape(*slot, e);
    *slot = e;
    e += n;
  }
  hp_status st = write_row(s, t, r);
  free(esc);
  return st;
}

#define TYPED(fn, T, tab)                                                                                    \
  hp_status fn(hp_store *s, const T *r) { return hp_write(s, tab, r); }
TYPED(hp_write_node, hp_node, HP_TABLE_NODE)
TYPED(hp_write_process, hp_process, HP_TABLE_PROCESS)
TYPED(hp_write_thread, hp_thread, HP_TABLE_THREAD)
TYPED(hp_write_agent, hp_agent, HP_TABLE_AGENT)
TYPED(hp_write_queue, hp_queue, HP_TABLE_QUEUE)
TYPED(hp_write_code_object, hp_code_object, HP_TABLE_CODE_OBJECT)
TYPED(hp_write_kernel_symbol, hp_kernel_symbol, HP_TABLE_KERNEL_SYMBOL)
TYPED(hp_write_dispatch, hp_dispatch, HP_TABLE_DISPATCH)
TYPED(hp_write_counter_info, hp_counter_info, HP_TABLE_COUNTER_INFO)
TYPED(hp_write_counter_value, hp_counter_value, HP_TABLE_COUNTER_VALUE)
TYPED(hp_write_region, hp_region, HP_TABLE_REGION)
TYPED(hp_write_pc_sample, hp_pc_sample, HP_TABLE_PC_SAMPLE)
TYPED(hp_write_counter_sample, hp_counter_sample, HP_TABLE_COUNTER_SAMPLE)
TYPED(hp_write_memory_copy, hp_memory_copy, HP_TABLE_MEMORY_COPY)
TYPED(hp_write_ceiling, hp_ceiling, HP_TABLE_CEILING)

hp_status hp_write_metadata(hp_store *s, const char *key, const char *value) {
  if (!key || !*key) return HP_ERR_INVALID;
  hp_metadata m = {sizeof m, key, value ? value : ""};
  return hp_write(s, HP_TABLE_METADATA, &m);
}

/* ---- read ---- */
hp_status hp_store_count(hp_store *s, hp_table t, uint64_t *n) {
  if (!s || !n || (unsigned)t >= HP_TABLE_COUNT) return HP_ERR_INVALID;
  if (s->mode != HP_READ || !s->impl) return HP_ERR_UNSUPPORTED;
  return s->ops->count(s, t, n);
}

hp_status hp_cursor_open(hp_store *s, hp_table t, hp_cursor **out) {
  if (out) *out = NULL;
  if (!s || !out || (unsigned)t >= HP_TABLE_COUNT) return HP_ERR_INVALID;
  if (s->mode != HP_READ || !s->impl) return HP_ERR_UNSUPPORTED;
  hp_cursor *c = calloc(1, sizeof *c);
  if (!c) return HP_ERR_NOMEM;
  c->store = s;
  c->table = t;
  hp_status st = s->ops->cursor_open(c);
  if (st != HP_OK) {
    free(c);
    return st;
  }
  *out = c;
  return HP_OK;
}

hp_status hp_cursor_open_part(hp_store *s, hp_table t, unsigned part, unsigned nparts, hp_cursor **out) {
  if (out) *out = NULL;
  if (!s || !out || (unsigned)t >= HP_TABLE_COUNT || !nparts || part >= nparts) return HP_ERR_INVALID;
  if (s->mode != HP_READ || !s->impl) return HP_ERR_UNSUPPORTED;
  int split = s->ops->size >= offsetof(hp_format_ops, cursor_part) + sizeof(void *) && s->ops->cursor_part;
  if (nparts == 1 || (!split && part == 0)) return hp_cursor_open(s, t, out);
  hp_cursor *c = calloc(1, sizeof *c);
  if (!c) return HP_ERR_NOMEM;
  c->store = s;
  c->table = t;
  hp_status st = split ? s->ops->cursor_part(c, part, nparts) : HP_OK;
  if (st != HP_OK) {
    free(c);
    return st;
  }
  c->ended = !split; /* a format that cannot split: every row is part 0's */
  *out = c;
  return HP_OK;
}

hp_status hp_cursor_filter(hp_cursor *c, int (*keep)(void *ctx, const hp_col_range *cols), void *ctx) {
  if (!c || !keep) return HP_ERR_INVALID;
  if (c->ended || !c->impl) return HP_OK; /* no rows: nothing to pass over */
  if (c->store->ops->size < offsetof(hp_format_ops, cursor_filter) + sizeof(void *) ||
      !c->store->ops->cursor_filter)
    return HP_ERR_UNSUPPORTED;
  return c->store->ops->cursor_filter(c, keep, ctx);
}

hp_status hp_cursor_next(hp_cursor *c, void *row) {
  if (!c || !row) return HP_ERR_INVALID;
  uint32_t sz = *(const uint32_t *)row;
  if (sz < sizeof(uint32_t) + sizeof(uint64_t)) return HP_ERR_INVALID;
  if (c->ended) return HP_END;
  assert(c->store && c->store->ops && (unsigned)c->table < HP_TABLE_COUNT); /* an open cursor's state */
  const hp_table_desc *d = hp_table_describe(c->table);
  if (c->narrowed) { /* a whole row again after batches of fewer columns */
    hp_status st = c->store->ops->cursor_columns(c, NULL);
    if (st != HP_OK) {
      c->ended = 1;
      return st;
    }
    c->narrowed = 0;
  }
  if (sz >= d->row_size) { /* fast path: the caller's struct is ours */
    hp_status st = c->store->ops->cursor_next(c, row);
    if (st != HP_OK) c->ended = 1;
    return st;
  }
  union {
    hp_dispatch d;
    hp_agent a;
    hp_process p;
    char any[256];
  } full;
  assert(d->row_size <= sizeof full); /* every row of this build fits the fallback */
  hp_row_init(c->table, &full);
  hp_status st = c->store->ops->cursor_next(c, &full);
  if (st != HP_OK) {
    c->ended = 1;
    return st;
  }
  return hp_row_export(c->table, &full, row);
}

void hp_cursor_close(hp_cursor *c) {
  if (!c) return;
  if (c->impl) c->store->ops->cursor_close(c);
  free(c->arena);
  free(c);
}

/* Columnar batches, built on cursor_next: numbers copied into the caller's arrays, strings into an arena
 * owned by the cursor (pointers fixed up once the arena stops moving). */
hp_status hp_cursor_next_batch(hp_cursor *c, void *const *cols, size_t max, size_t *n) {
  if (n) *n = 0;
  if (!c || !cols || !n) return HP_ERR_INVALID;
  const hp_table_desc *d = hp_table_describe(c->table);
  size_t used = 0;
  union {
    hp_dispatch d;
    hp_agent a;
    char any[256];
  } row;
  hp_status st = HP_OK;
  size_t i = 0;
  assert(d->row_size <= sizeof row);
  if (c->ended) return HP_END;
  if (c->store->ops->size >= offsetof(hp_format_ops, cursor_next_batch) + sizeof(void *) &&
      c->store->ops->cursor_next_batch) { /* the format reads columns itself */
    st = c->store->ops->cursor_next_batch(c, cols, max, n);
    if (st != HP_OK) c->ended = 1;
    return st;
  }
  if (c->store->ops->size >= offsetof(hp_format_ops, cursor_columns) + sizeof(void *) &&
      c->store->ops->cursor_columns) { /* the format reads only the columns wanted */
    st = c->store->ops->cursor_columns(c, cols);
    if (st != HP_OK) {
      c->ended = 1;
      return st;
    }
    c->narrowed = 1;
  }
  for (; i < max; i++) {
    hp_row_init(c->table, &row);
    st = c->store->ops->cursor_next(c, &row);
    if (st != HP_OK) break;
    for (size_t k = 0; k < d->ncolumns; k++) {
      const hp_column *col = &d->columns[k];
      if (!cols[k]) continue;
      const char *p = (const char *)&row + col->offset;
      switch (col->type) {
      case HP_COL_U32:
      case HP_COL_I32: memcpy((char *)cols[k] + 4 * i, p, 4); break;
      case HP_COL_U64:
      case HP_COL_I64:
      case HP_COL_F64: memcpy((char *)cols[k] + 8 * i, p, 8); break;
      case HP_COL_STR: {
        const char *str = *(const char *const *)p;
        size_t len = strlen(str) + 1;
        if (used + len > c->arena_cap) {
          size_t nc = c->arena_cap ? c->arena_cap : 4096;
          while (nc < used + len)
            nc *= 2;
          char *na = realloc(c->arena, nc);
          if (!na) return HP_ERR_NOMEM;
          c->arena = na;
          c->arena_cap = nc;
        }
        memcpy(c->arena + used, str, len);
        ((uintptr_t *)cols[k])[i] = used; /* an offset until the arena is final */
        used += len;
        break;
      }
      }
    }
  }
  for (size_t k = 0; k < d->ncolumns; k++)
    if (cols[k] && d->columns[k].type == HP_COL_STR)
      for (size_t r = 0; r < i; r++)
        ((const char **)cols[k])[r] = c->arena + ((uintptr_t *)cols[k])[r];
  *n = i;
  if (st != HP_OK) c->ended = 1;
  if (st == HP_END) return i ? HP_OK : HP_END;
  return st;
}

const char *hp_store_metadata(hp_store *s, const char *key) {
  if (!s || !key || s->mode != HP_READ || !s->impl) return NULL;
  if (!s->meta) {
    struct hp_meta_cache *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    s->meta = m;
    hp_cursor *c;
    if (hp_cursor_open(s, HP_TABLE_METADATA, &c) == HP_OK) {
      hp_metadata row = {.size = sizeof row};
      size_t cap = 0;
      while (hp_cursor_next(c, &row) == HP_OK) {
        if (m->n == cap) {
          cap = cap ? cap * 2 : 16;
          char **kv = realloc(m->kv, 2 * cap * sizeof *kv);
          if (!kv) break;
          m->kv = kv;
        }
        m->kv[2 * m->n] = strdup(row.key);
        m->kv[2 * m->n + 1] = strdup(row.value);
        if (!m->kv[2 * m->n] || !m->kv[2 * m->n + 1]) {
          free(m->kv[2 * m->n]);
          free(m->kv[2 * m->n + 1]);
          break;
        }
        m->n++;
      }
      hp_cursor_close(c);
    }
  }
  for (size_t i = s->meta->n; i-- > 0;) /* the last value written for a key wins */
    if (strcmp(s->meta->kv[2 * i], key) == 0) return s->meta->kv[2 * i + 1];
  return NULL;
}
