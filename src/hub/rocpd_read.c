/* rocpd format, reader: a rocpd file (hubprof's or rocprofv3's) read as hub tables, through SQLite,
 * read-only, with the checks that keep a damaged or hostile file from crashing or hanging the reader. */
#include "rocpd_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const unsigned char sqlite_magic[16] = "SQLite format 3";

/* 1 when the schema names a rocpd_* object, 0 when it does not, -1 when the schema cannot be read. */
static int has_rocpd_tables(sqlite3 *db) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE name LIKE 'rocpd^_%' ESCAPE '^' LIMIT 1", -1,
                         &st, NULL) != SQLITE_OK)
    return -1;
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

/* An SQLite file with rocpd tables; also a damaged SQLite file whose schema cannot be read, so that the
 * rocpd reader (hubprof's only SQLite format) explains the damage instead of "unknown format". */
int rp_probe(const char *path, const unsigned char *head, size_t n) {
  if (n < 16 || memcmp(head, sqlite_magic, 16) != 0) return 0;
  if (n < 100) return 1;
  sqlite3 *db = NULL;
  int found = -1;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) found = has_rocpd_tables(db);
  sqlite3_close(db);
  return found != 0;
}

/* Progress handler: interrupts a statement that does far more work than the file's size allows
 * (a hostile or looping schema must not hang a reader). */
static int work_guard(void *arg) {
  rp_state *r = arg;
  return atomic_fetch_add_explicit(&r->ops, 1000, memory_order_relaxed) + 1000 > r->budget;
}

static void guard_reset(rp_state *r) { atomic_store_explicit(&r->ops, 0, memory_order_relaxed); }

static hp_status read_fail(hp_store *s, int rc, const char *what) {
  rp_state *r = s->impl;
  if ((rc & 0xff) == SQLITE_INTERRUPT)
    return hp_set_error(s, HP_ERR_CORRUPT,
                        "%s: gave up after too much work for the file's size (damaged schema?)", what);
  return hp_set_error(s, rp_rc_status(rc), "%s: %s", what,
                      r->db ? sqlite3_errmsg(r->db) : sqlite3_errstr(rc));
}

/* Is `name` rocpd_<base>_<uuid with underscores>? */
static int is_uuid_table(const char *name, const char *base) {
  size_t bl = strlen(base);
  if (strncmp(name, "rocpd_", 6) != 0 || strncmp(name + 6, base, bl) != 0) return 0;
  const char *u = name + 6 + bl;
  if (strlen(u) != RP_SUFFIX_LEN || u[0] != '_') return 0;
  for (int i = 1; i < RP_SUFFIX_LEN; i++) {
    int sep = i == 9 || i == 14 || i == 19 || i == 24;
    if (sep ? u[i] != '_' : rp_hexval(u[i]) < 0) return 0;
  }
  return 1;
}

/* Find the object to read for each base table: the base-name view (or table) when present, else the
 * first uuid-suffixed table. Returns how many were found, or -1 with the message set. */
static int resolve_tables(hp_store *s) {
  rp_state *r = s->impl;
  sqlite3_stmt *st;
  guard_reset(r);
  int rc = sqlite3_prepare_v2(
      r->db, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name", -1, &st, NULL);
  if (rc != SQLITE_OK) {
    read_fail(s, rc, "cannot read the schema");
    return -1;
  }
  int found = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 0);
    if (!name) continue;
    for (int i = 0; i < RT_COUNT; i++) {
      int exact = strncmp(name, "rocpd_", 6) == 0 && strcmp(name + 6, rp_rt_name[i]) == 0;
      if (!exact && (r->obj[i] || !is_uuid_table(name, rp_rt_name[i]))) continue;
      if (!r->obj[i]) found++;
      free(r->obj[i]);
      r->obj[i] = strdup(name);
      if (!r->obj[i]) {
        sqlite3_finalize(st);
        hp_set_error(s, HP_ERR_NOMEM, "out of memory");
        return -1;
      }
    }
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    read_fail(s, rc, "cannot read the schema");
    return -1;
  }
  return found;
}

/* First value of metadata tag `tag` (malloc'd), or NULL. */
static char *meta_value(rp_state *r, const char *tag) {
  if (!r->obj[RT_METADATA]) return NULL;
  char *q =
      sqlite3_mprintf("SELECT value FROM \"%w\" WHERE tag = ?1 ORDER BY id LIMIT 1", r->obj[RT_METADATA]);
  sqlite3_stmt *st = NULL;
  char *v = NULL;
  guard_reset(r);
  if (q && sqlite3_prepare_v2(r->db, q, -1, &st, NULL) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, tag, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
      const char *t = (const char *)sqlite3_column_text(st, 0);
      v = strdup(t ? t : "");
    }
  }
  sqlite3_finalize(st);
  sqlite3_free(q);
  return v;
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Checks before SQLite sees the file: it exists, is an SQLite database, and is as long as its header says. */
static hp_status check_file(hp_store *s, uint64_t *bytes) {
  struct stat sb;
  if (stat(s->path, &sb) != 0) {
    if (errno == ENOENT) return hp_set_error(s, HP_ERR_NOT_FOUND, "no such file or directory");
    return hp_set_error(s, HP_ERR_IO, "cannot access: %s", strerror(errno));
  }
  if (S_ISDIR(sb.st_mode)) return hp_set_error(s, HP_ERR_FORMAT, "is a directory, not a rocpd database");
  if (sb.st_size == 0) return hp_set_error(s, HP_ERR_FORMAT, "empty file, not a rocpd database");
  unsigned char h[100];
  int fd = open(s->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return hp_set_error(s, HP_ERR_IO, "cannot open: %s", strerror(errno));
  ssize_t got = read(fd, h, sizeof h);
  close(fd);
  if (got < 0) return hp_set_error(s, HP_ERR_IO, "cannot read: %s", strerror(errno));
  if ((size_t)got < 16 || memcmp(h, sqlite_magic, 16) != 0)
    return hp_set_error(s, HP_ERR_FORMAT, "not an SQLite database, so not a rocpd file");
  if (got < (ssize_t)sizeof h)
    return hp_set_error(s, HP_ERR_TRUNCATED, "truncated SQLite database: %lld bytes, shorter than its header",
                        (long long)sb.st_size);
  uint32_t psz = (uint32_t)h[16] << 8 | h[17];
  if (psz == 1) psz = 65536;
  if (psz < 512 || (psz & (psz - 1)))
    return hp_set_error(s, HP_ERR_CORRUPT, "database disk image is malformed (page size %u)", psz);
  uint32_t npages = be32(h + 28);
  /* the work a reader may do grows with the bytes really stored: a sparse or padded file (or a tiny page
   * size) must not buy a crafted schema hours of work */
  uint64_t stored = (uint64_t)sb.st_blocks * 512;
  if (stored > (uint64_t)sb.st_size) stored = (uint64_t)sb.st_size;
  if (npages && be32(h + 24) == be32(h + 92) && (uint64_t)npages * psz < stored)
    stored = (uint64_t)npages * psz;
  *bytes = stored;
  if (npages && be32(h + 24) == be32(h + 92)) { /* the in-header size is valid */
    uint64_t want = (uint64_t)npages * psz;
    if ((uint64_t)sb.st_size < want)
      return hp_set_error(s, HP_ERR_TRUNCATED, "truncated SQLite database: %lld of %llu bytes",
                          (long long)sb.st_size, (unsigned long long)want);
  }
  return HP_OK;
}

hp_status rp_open_read(hp_store *s) {
  uint64_t bytes = 0;
  hp_status st = check_file(s, &bytes);
  if (st != HP_OK) return st;
  rp_state *r = calloc(1, sizeof *r);
  if (!r) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  s->impl = r;
  r->budget = 20000000ull + bytes * 200ull; /* SQLite steps: ~1.6 M per 8 KiB page of data */
  /* cursors of one store may be used from several threads: every use of the connection after this
   * function holds rlock (recursive: a count prepares its query) */
  pthread_mutexattr_t ma;
  if (pthread_mutexattr_init(&ma) != 0) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
  r->rlock_on = pthread_mutex_init(&r->rlock, &ma) == 0;
  pthread_mutexattr_destroy(&ma);
  if (!r->rlock_on) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  int rc = sqlite3_open_v2(s->path, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK) return read_fail(s, rc, "cannot open");
  sqlite3_db_config(r->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  sqlite3_db_config(r->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_progress_handler(r->db, 1000, work_guard, r);
  sqlite3_exec(r->db, "PRAGMA cell_size_check=ON", NULL, NULL, NULL);
  int found = resolve_tables(s);
  if (found < 0) return s->first_error != HP_OK ? s->first_error : HP_ERR_CORRUPT;
  if (found == 0) return hp_set_error(s, HP_ERR_FORMAT, "SQLite database without rocpd tables");
  char *ver = meta_value(r, "schema_version");
  char *writer = meta_value(r, RP_WRITER_TAG);
  r->own = writer != NULL;
  free(writer);
  s->schema_version = ver ? ver : strdup("");
  if (!s->schema_version) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  long major = ver ? strtol(ver, NULL, 10) : 3;
  if (ver && *ver && major != 3)
    return hp_set_error(s, HP_ERR_VERSION, "rocpd schema %s is not supported (this build reads 3.x)", ver);
  if (!r->obj[RT_KERNEL_DISPATCH] && !r->obj[RT_PMC] && !r->obj[RT_PROCESS])
    return hp_set_error(s, HP_ERR_VERSION,
                        "rocpd tables of an older layout (rocpd 1/2, rocmProfileData), not 3.x");
  return HP_OK;
}

void rp_close_read(hp_store *s) {
  if (s->impl) rp_free_state(s->impl);
  s->impl = NULL;
}

/* Column names of object `obj` (PRAGMA table_info also works for views). */
typedef struct colset {
  char **name;
  size_t n;
} colset;

static void colset_free(colset *c) {
  for (size_t i = 0; i < c->n; i++)
    free(c->name[i]);
  free(c->name);
  memset(c, 0, sizeof *c);
}

static int colset_load(rp_state *r, const char *obj, colset *c) {
  memset(c, 0, sizeof *c);
  if (!obj) return 0;
  char *q = sqlite3_mprintf("PRAGMA table_info(\"%w\")", obj);
  sqlite3_stmt *st = NULL;
  guard_reset(r);
  int rc = q ? sqlite3_prepare_v2(r->db, q, -1, &st, NULL) : SQLITE_NOMEM;
  sqlite3_free(q);
  if (rc != SQLITE_OK) return rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *n = (const char *)sqlite3_column_text(st, 1);
    char **nn = realloc(c->name, (c->n + 1) * sizeof *nn);
    if (!nn) {
      rc = SQLITE_NOMEM;
      break;
    }
    c->name = nn;
    c->name[c->n] = strdup(n ? n : "");
    if (!c->name[c->n]) {
      rc = SQLITE_NOMEM;
      break;
    }
    c->n++;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int colset_has(const colset *c, const char *name) {
  for (size_t i = 0; i < c->n; i++)
    if (sqlite3_stricmp(c->name[i], name) == 0) return 1;
  return 0;
}

/* Append "alias.col" when the column exists, else "NULL" (older or foreign files). */
static void sb_col(sbuf *q, const colset *c, const char *alias, const char *col) {
  if (q->n && q->p[q->n - 1] != '(' && q->p[q->n - 1] != ' ') rp_sb_puts(q, ", ");
  if (!colset_has(c, col)) {
    rp_sb_puts(q, "NULL");
    return;
  }
  rp_sb_puts(q, alias);
  rp_sb_puts(q, ".\"");
  rp_sb_puts(q, col);
  rp_sb_puts(q, "\"");
}

static void sb_obj(sbuf *q, const char *obj, const char *alias) {
  char *t = sqlite3_mprintf(" \"%w\" AS %s", obj, alias);
  if (t)
    rp_sb_puts(q, t);
  else
    q->oom = 1;
  sqlite3_free(t);
}

/* Columns read per hub table, in the order the row fillers take them. */
static const char *const cols_node[] = {"id",      "hostname", "machine_id",    "system_name",
                                        "release", "version",  "hardware_name", NULL};
static const char *const cols_process[] = {"id",      "nid",     "pid",  "ppid", "start", "end",
                                           "command", "extdata", "init", "fini", NULL};
static const char *const cols_thread[] = {"id", "pid", "tid", "start", "end", "name", NULL};
static const char *const cols_agent[] = {
    "id", "nid", "type", "logical_index", "vendor_name", "name", "product_name", "extdata", NULL};
static const char *const cols_queue[] = {"id", "pid", "name", "extdata", NULL};
static const char *const cols_code[] = {"id", "pid", "agent_id", "uri", "load_base", "load_size", NULL};
static const char *const cols_kernel[] = {"id",
                                          "code_object_id",
                                          "kernel_name",
                                          "display_name",
                                          "private_segment_size",
                                          "group_segment_size",
                                          "extdata",
                                          NULL};
static const char *const cols_dispatch[] = {"id",
                                            "dispatch_id",
                                            "pid",
                                            "tid",
                                            "agent_id",
                                            "queue_id",
                                            "kernel_id",
                                            "grid_size_x",
                                            "grid_size_y",
                                            "grid_size_z",
                                            "workgroup_size_x",
                                            "workgroup_size_y",
                                            "workgroup_size_z",
                                            "private_segment_size",
                                            "group_segment_size",
                                            "start",
                                            "end",
                                            "extdata",
                                            NULL};
static const char *const cols_pmc[] = {"id",    "agent_id",   "name",    "description", "block",
                                       "units", "expression", "extdata", NULL};
static const char *const cols_region[] = {"id", "pid", "tid", "start", "end", NULL};

/* Build the SELECT (or COUNT when count != 0) for hub table t. Returns 0, or -1 when the table is absent
 * (read as empty), or an SQLite error code. */
static int build_query(rp_state *r, hp_table t, int count, sbuf *q) {
  static const int base[HP_TABLE_COUNT] = {
      [HP_TABLE_NODE] = RT_NODE,
      [HP_TABLE_PROCESS] = RT_PROCESS,
      [HP_TABLE_THREAD] = RT_THREAD,
      [HP_TABLE_AGENT] = RT_AGENT,
      [HP_TABLE_QUEUE] = RT_QUEUE,
      [HP_TABLE_CODE_OBJECT] = RT_CODE_OBJECT,
      [HP_TABLE_KERNEL_SYMBOL] = RT_KERNEL_SYMBOL,
      [HP_TABLE_DISPATCH] = RT_KERNEL_DISPATCH,
      [HP_TABLE_COUNTER_INFO] = RT_PMC,
      [HP_TABLE_COUNTER_VALUE] = RT_PMC_EVENT,
      [HP_TABLE_REGION] = RT_REGION,
      [HP_TABLE_METADATA] = RT_METADATA,
  };
  static const char *const *const cols[HP_TABLE_COUNT] = {
      [HP_TABLE_NODE] = cols_node,
      [HP_TABLE_PROCESS] = cols_process,
      [HP_TABLE_THREAD] = cols_thread,
      [HP_TABLE_AGENT] = cols_agent,
      [HP_TABLE_QUEUE] = cols_queue,
      [HP_TABLE_CODE_OBJECT] = cols_code,
      [HP_TABLE_KERNEL_SYMBOL] = cols_kernel,
      [HP_TABLE_DISPATCH] = cols_dispatch,
      [HP_TABLE_COUNTER_INFO] = cols_pmc,
      [HP_TABLE_REGION] = cols_region,
  };
  const char *obj = r->obj[base[t]];
  if (!obj) return -1;
  colset c, k = {0};
  int rc = colset_load(r, obj, &c);
  if (rc != SQLITE_OK) return rc;
  if (!colset_has(&c, "id") && t != HP_TABLE_COUNTER_VALUE) {
    colset_free(&c);
    return -1; /* not a table we can read */
  }
  rp_sb_puts(q, "SELECT ");
  if (count) rp_sb_puts(q, "COUNT(*)");
  switch (t) {
  case HP_TABLE_METADATA:
    if (!count) rp_sb_puts(q, "tag, value");
    rp_sb_puts(q, " FROM");
    sb_obj(q, obj, "M");
    rp_sb_puts(q, " WHERE tag NOT IN ('schema_version', 'uuid', 'guid', '" RP_WRITER_TAG "') ORDER BY id");
    break;
  case HP_TABLE_COUNTER_VALUE: {
    /* own files: the event id is the dispatch id; others: the dispatch whose event_id it is */
    int join = !r->own && r->obj[RT_KERNEL_DISPATCH];
    if (join && (rc = colset_load(r, r->obj[RT_KERNEL_DISPATCH], &k)) != SQLITE_OK) break;
    join = join && colset_has(&k, "id") && colset_has(&k, "event_id") && colset_has(&c, "event_id");
    if (!count) {
      if (join)
        rp_sb_puts(q, "K.\"id\"");
      else
        sb_col(q, &c, "V", "event_id");
      sb_col(q, &c, "V", "pmc_id");
      sb_col(q, &c, "V", "value");
      sb_col(q, &c, "V", "extdata");
      if (join)
        sb_col(q, &k, "K", "replay_pass");
      else
        rp_sb_puts(q, ", NULL");
    }
    rp_sb_puts(q, " FROM");
    sb_obj(q, obj, "V");
    if (!count && join) {
      rp_sb_puts(q, " LEFT JOIN");
      sb_obj(q, r->obj[RT_KERNEL_DISPATCH], "K");
      rp_sb_puts(q, " ON K.\"event_id\" = V.\"event_id\"");
    }
    if (colset_has(&c, "sample_id")) rp_sb_puts(q, " WHERE V.\"sample_id\" IS NULL");
    if (!count && colset_has(&c, "id")) rp_sb_puts(q, " ORDER BY V.\"id\"");
    break;
  }
  case HP_TABLE_REGION:
    if (!count) {
      for (const char *const *p = cols[t]; *p; p++)
        sb_col(q, &c, "R", *p);
      /* name and category strings through rocpd_string (category via the region's event) */
      int has_s = r->obj[RT_STRING] != NULL, has_e = r->obj[RT_EVENT] != NULL;
      rp_sb_puts(q, has_s && colset_has(&c, "name_id") ? ", S.\"string\"" : ", NULL");
      rp_sb_puts(q, has_s && has_e && colset_has(&c, "event_id") ? ", C.\"string\"" : ", NULL");
      rp_sb_puts(q, " FROM");
      sb_obj(q, obj, "R");
      if (has_s && colset_has(&c, "name_id")) {
        rp_sb_puts(q, " LEFT JOIN");
        sb_obj(q, r->obj[RT_STRING], "S");
        rp_sb_puts(q, " ON S.\"id\" = R.\"name_id\"");
      }
      if (has_s && has_e && colset_has(&c, "event_id")) {
        rp_sb_puts(q, " LEFT JOIN");
        sb_obj(q, r->obj[RT_EVENT], "E");
        rp_sb_puts(q, " ON E.\"id\" = R.\"event_id\" LEFT JOIN");
        sb_obj(q, r->obj[RT_STRING], "C");
        rp_sb_puts(q, " ON C.\"id\" = E.\"category_id\"");
      }
    } else {
      rp_sb_puts(q, " FROM");
      sb_obj(q, obj, "R");
    }
    if (r->own) rp_sb_puts(q, " WHERE R.\"id\" <> 0");
    if (!count) rp_sb_puts(q, " ORDER BY R.\"id\"");
    break;
  default:
    if (!count)
      for (const char *const *p = cols[t]; *p; p++)
        sb_col(q, &c, "T", *p);
    rp_sb_puts(q, " FROM");
    sb_obj(q, obj, "T");
    if (r->own) rp_sb_puts(q, " WHERE T.\"id\" <> 0"); /* id 0 rows are placeholders for "none" */
    if (!count) rp_sb_puts(q, " ORDER BY T.\"id\"");
    break;
  }
  colset_free(&c);
  colset_free(&k);
  if (rc == SQLITE_OK && q->oom) rc = SQLITE_NOMEM;
  return rc;
}

static hp_status prepare_query_locked(hp_store *s, hp_table t, int count, sqlite3_stmt **out) {
  rp_state *r = s->impl;
  const hp_table_desc *d = hp_table_describe(t);
  sbuf q = {0};
  *out = NULL;
  int rc = build_query(r, t, count, &q);
  if (rc == -1) {
    rp_sb_free(&q);
    return HP_END; /* absent: no rows */
  }
  char what[96];
  snprintf(what, sizeof what, "cannot read %s rows", d->name);
  if (rc == SQLITE_OK) {
    guard_reset(r);
    rc = sqlite3_prepare_v2(r->db, q.p, -1, out, NULL);
  }
  rp_sb_free(&q);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(*out);
    *out = NULL;
    return read_fail(s, rc, what);
  }
  return HP_OK;
}

static hp_status prepare_query(hp_store *s, hp_table t, int count, sqlite3_stmt **out) {
  rp_state *r = s->impl;
  pthread_mutex_lock(&r->rlock);
  hp_status e = prepare_query_locked(s, t, count, out);
  pthread_mutex_unlock(&r->rlock);
  return e;
}

hp_status rp_count(hp_store *s, hp_table t, uint64_t *n) {
  rp_state *r = s->impl;
  sqlite3_stmt *st;
  *n = 0;
  pthread_mutex_lock(&r->rlock);
  hp_status e = prepare_query_locked(s, t, 1, &st);
  if (e == HP_OK) {
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *n = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) {
      char what[96];
      snprintf(what, sizeof what, "cannot count %s rows", hp_table_describe(t)->name);
      e = read_fail(s, rc, what);
    }
  } else if (e == HP_END) {
    e = HP_OK;
  }
  pthread_mutex_unlock(&r->rlock);
  return e;
}

hp_status rp_cursor_open(hp_cursor *c) {
  rp_cursor *k = calloc(1, sizeof *k);
  if (!k) return hp_set_error(c->store, HP_ERR_NOMEM, "out of memory");
  hp_status e = prepare_query(c->store, c->table, 0, &k->st);
  if (e != HP_OK && e != HP_END) {
    free(k);
    return e;
  }
  c->impl = k; /* k->st NULL: the table is absent, the cursor has no rows */
  return HP_OK;
}

void rp_cursor_close(hp_cursor *c) {
  rp_cursor *k = c->impl;
  if (!k) return;
  rp_state *r = c->store->impl;
  pthread_mutex_lock(&r->rlock);
  sqlite3_finalize(k->st);
  pthread_mutex_unlock(&r->rlock);
  rp_sb_free(&k->arena);
  free(k);
  c->impl = NULL;
}

/* ---- column readers tolerant of whatever type a foreign or damaged file holds ---- */
static int64_t col_i64(sqlite3_stmt *st, int i) {
  sqlite3_value *v = sqlite3_column_value(st, i);
  switch (sqlite3_value_type(v)) {
  case SQLITE_INTEGER: return sqlite3_value_int64(v);
  case SQLITE_FLOAT: return rp_d2i64(sqlite3_value_double(v));
  case SQLITE_TEXT: return sqlite3_value_int64(v);
  default: return 0;
  }
}

static uint64_t col_u64(sqlite3_stmt *st, int i) {
  sqlite3_value *v = sqlite3_column_value(st, i);
  switch (sqlite3_value_type(v)) {
  case SQLITE_INTEGER: return (uint64_t)sqlite3_value_int64(v);
  case SQLITE_FLOAT: return rp_d2u64(sqlite3_value_double(v));
  case SQLITE_TEXT: return (uint64_t)sqlite3_value_int64(v);
  default: return 0;
  }
}

/* Strings of the current row live in the cursor's arena; pointers are fixed once the row is complete. */
typedef struct strfix {
  const char **dst;
  size_t off;
} strfix;

typedef struct rowstr {
  rp_cursor *k;
  strfix fix[12];
  int n;
} rowstr;

static void rs_begin(rowstr *rs, rp_cursor *k) {
  rs->k = k;
  rs->n = 0;
  rp_sb_reset(&k->arena);
}

static void rs_add(rowstr *rs, const char **dst, const char *p, size_t n, int unescape) {
  sbuf *a = &rs->k->arena;
  size_t off = a->n;
  if (unescape)
    rp_sb_unescape(a, p, n);
  else
    rp_sb_put(a, p, n);
  rp_sb_put(a, "", 1);
  if (rs->n < (int)(sizeof rs->fix / sizeof rs->fix[0])) rs->fix[rs->n++] = (strfix){dst, off};
}

static void rs_col(rowstr *rs, const char **dst, sqlite3_stmt *st, int i) {
  const char *t = (const char *)sqlite3_column_text(st, i);
  rs_add(rs, dst, t ? t : "", t ? (size_t)sqlite3_column_bytes(st, i) : 0, 0);
}

static hp_status rs_end(rowstr *rs, hp_store *s) {
  sbuf *a = &rs->k->arena;
  if (a->oom) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  for (int i = 0; i < rs->n; i++)
    *rs->fix[i].dst = a->p + rs->fix[i].off;
  return HP_OK;
}

/* The extdata text of column i (never NULL) and its length. */
static const char *col_json(sqlite3_stmt *st, int i, size_t *n) {
  const char *t = (const char *)sqlite3_column_text(st, i);
  *n = t ? (size_t)sqlite3_column_bytes(st, i) : 0;
  return t ? t : "";
}

static int32_t agent_type_from_text(const char *t) {
  if (!t) return HP_AGENT_UNKNOWN;
  if (strcmp(t, "CPU") == 0) return HP_AGENT_CPU;
  if (strcmp(t, "GPU") == 0) return HP_AGENT_GPU;
  if (strcmp(t, "NIC") == 0) return HP_AGENT_ACCEL;
  return HP_AGENT_UNKNOWN;
}

static hp_status fill_row(hp_cursor *c, sqlite3_stmt *st, void *row) {
  rp_cursor *k = c->impl;
  rp_state *r = c->store->impl;
  rowstr rs;
  rs_begin(&rs, k);
  size_t jn;
  const char *js;
  switch (c->table) {
  case HP_TABLE_NODE: {
    hp_node *n = row;
    n->id = col_u64(st, 0);
    rs_col(&rs, &n->hostname, st, 1);
    rs_col(&rs, &n->machine_id, st, 2);
    rs_col(&rs, &n->system_name, st, 3);
    rs_col(&rs, &n->release, st, 4);
    rs_col(&rs, &n->version, st, 5);
    rs_col(&rs, &n->machine, st, 6);
    break;
  }
  case HP_TABLE_PROCESS: {
    hp_process *p = row;
    p->id = col_u64(st, 0);
    p->node_id = col_u64(st, 1);
    p->pid = col_i64(st, 2);
    p->ppid = col_i64(st, 3);
    p->start_ns = sqlite3_column_type(st, 4) == SQLITE_NULL ? col_i64(st, 8) : col_i64(st, 4);
    p->end_ns = sqlite3_column_type(st, 5) == SQLITE_NULL ? col_i64(st, 9) : col_i64(st, 5);
    rs_col(&rs, &p->command, st, 6);
    js = col_json(st, 7, &jn);
    p->rank = rp_json_i64(js, jn, "rank", -1);
    p->lost_records = rp_json_u64(js, jn, "lost_records", 0);
    break;
  }
  case HP_TABLE_THREAD: {
    hp_thread *th = row;
    th->id = col_u64(st, 0);
    th->process_id = col_u64(st, 1);
    th->tid = col_i64(st, 2);
    th->start_ns = col_i64(st, 3);
    th->end_ns = col_i64(st, 4);
    rs_col(&rs, &th->name, st, 5);
    break;
  }
  case HP_TABLE_AGENT: {
    hp_agent *a = row;
    a->id = col_u64(st, 0);
    a->node_id = col_u64(st, 1);
    js = col_json(st, 7, &jn);
    a->type =
        (int32_t)rp_json_i64(js, jn, "type", agent_type_from_text((const char *)sqlite3_column_text(st, 2)));
    a->device_index = (int32_t)col_i64(st, 3);
    rs_col(&rs, &a->vendor, st, 4);
    rs_col(&rs, &a->name, st, 5);
    rs_col(&rs, &a->product_name, st, 6);
    js = col_json(st, 7, &jn); /* again: reading column 2 as text may have moved it */
    jspan v;
    if (rp_json_find(js, jn, "runtime", &v) && v.is_str) rs_add(&rs, &a->runtime, v.p, v.n, 1);
    /* ours, else what rocprofv3 keeps in extdata */
    a->compute_units = rp_json_i64(js, jn, "compute_units", rp_json_i64(js, jn, "cu_count", 0));
    a->max_clock_mhz =
        rp_json_i64(js, jn, "max_clock_mhz", rp_json_i64(js, jn, "max_engine_clk_fcompute", 0));
    a->global_mem_bytes = rp_json_i64(js, jn, "global_mem_bytes", 0);
    a->local_mem_bytes =
        rp_json_i64(js, jn, "local_mem_bytes", rp_json_i64(js, jn, "lds_size_in_kb", 0) * 1024);
    a->wave_size = rp_json_i64(js, jn, "wave_size", rp_json_i64(js, jn, "wave_front_size", 0));
    break;
  }
  case HP_TABLE_QUEUE: {
    hp_queue *q = row;
    q->id = col_u64(st, 0);
    q->process_id = col_u64(st, 1);
    rs_col(&rs, &q->name, st, 2);
    js = col_json(st, 3, &jn);
    q->agent_id = rp_json_u64(js, jn, "agent_id", 0);
    break;
  }
  case HP_TABLE_CODE_OBJECT: {
    hp_code_object *co = row;
    co->id = col_u64(st, 0);
    co->process_id = col_u64(st, 1);
    co->agent_id = col_u64(st, 2);
    rs_col(&rs, &co->uri, st, 3);
    co->load_base = col_u64(st, 4);
    co->load_size = col_u64(st, 5);
    break;
  }
  case HP_TABLE_KERNEL_SYMBOL: {
    hp_kernel_symbol *ks = row;
    ks->id = col_u64(st, 0);
    ks->code_object_id = col_u64(st, 1);
    rs_col(&rs, &ks->name, st, 2);
    ks->private_size = col_i64(st, 4);
    ks->group_size = col_i64(st, 5);
    js = col_json(st, 6, &jn);
    jspan v;
    if (rp_json_find(js, jn, "display_name", &v) && v.is_str)
      rs_add(&rs, &ks->display_name, v.p, v.n, 1);
    else
      rs_col(&rs, &ks->display_name, st, 3);
    break;
  }
  case HP_TABLE_DISPATCH: {
    hp_dispatch *d = row;
    d->id = col_u64(st, 0);
    d->dispatch_id = col_u64(st, 1);
    d->process_id = col_u64(st, 2);
    d->thread_id = col_u64(st, 3);
    d->agent_id = col_u64(st, 4);
    d->queue_id = col_u64(st, 5);
    d->kernel_id = col_u64(st, 6);
    for (int i = 0; i < 3; i++) {
      d->grid[i] = (uint32_t)col_u64(st, 7 + i);
      d->workgroup[i] = (uint32_t)col_u64(st, 10 + i);
    }
    d->private_size = col_i64(st, 13);
    d->group_size = col_i64(st, 14);
    d->start_ns = col_i64(st, 15);
    d->end_ns = col_i64(st, 16);
    js = col_json(st, 17, &jn);
    static const char *const dk[5] = {"enqueue_ns", "passes", "bytes_accessible", "bytes_restored",
                                      "dispatch_id"};
    jspan sp[5] = {{0}};
    unsigned f = jn > 2 ? rp_json_find_n(js, jn, dk, 5, sp) : 0;
    if (r->own) d->dispatch_id = rp_span_u64(&sp[4], f & 16, d->dispatch_id); /* the collector's id */
    d->enqueue_ns = rp_span_i64(&sp[0], f & 1, 0);
    d->passes = (uint32_t)rp_span_u64(&sp[1], f & 2, 0);
    d->bytes_accessible = rp_span_u64(&sp[2], f & 4, 0);
    d->bytes_restored = rp_span_u64(&sp[3], f & 8, 0);
    break;
  }
  case HP_TABLE_COUNTER_INFO: {
    hp_counter_info *ci = row;
    ci->id = col_u64(st, 0);
    ci->agent_id = col_u64(st, 1);
    if (r->own) { /* a counter of no particular agent names one in rocpd: extdata keeps 0 */
      js = col_json(st, 7, &jn);
      ci->agent_id = rp_json_u64(js, jn, "agent_id", ci->agent_id);
    }
    rs_col(&rs, &ci->name, st, 2);
    rs_col(&rs, &ci->description, st, 3);
    rs_col(&rs, &ci->block, st, 4);
    rs_col(&rs, &ci->unit, st, 5);
    rs_col(&rs, &ci->expression, st, 6);
    break;
  }
  case HP_TABLE_COUNTER_VALUE: {
    hp_counter_value *v = row;
    v->dispatch_id = col_u64(st, 0);
    v->counter_id = col_u64(st, 1);
    v->value = sqlite3_column_type(st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 2);
    js = col_json(st, 3, &jn);
    static const char *const vk[3] = {"pass", "imputed", "value_bits"};
    jspan sp[3] = {{0}};
    char tmp[48];
    unsigned f = jn > 2 ? rp_json_find_n(js, jn, vk, 3, sp) : 0;
    uint64_t pass = rp_span_u64(&sp[0], f & 1, 0);
    if (!pass && sqlite3_column_type(st, 4) != SQLITE_NULL)
      pass = col_u64(st, 4) + 1; /* rocprofv3: 0-based */
    v->pass = (uint32_t)pass;
    v->imputed = (uint32_t)rp_span_u64(&sp[1], f & 2, 0);
    if ((f & 4) && rp_span_num(&sp[2], tmp, sizeof tmp)) {
      uint64_t bits = rp_span_u64(&sp[2], 1, 0);
      memcpy(&v->value, &bits, sizeof bits);
    }
    break;
  }
  case HP_TABLE_REGION: {
    hp_region *g = row;
    g->id = col_u64(st, 0);
    g->process_id = col_u64(st, 1);
    g->thread_id = col_u64(st, 2);
    g->start_ns = col_i64(st, 3);
    g->end_ns = col_i64(st, 4);
    rs_col(&rs, &g->name, st, 5);
    rs_col(&rs, &g->category, st, 6);
    break;
  }
  case HP_TABLE_METADATA: {
    hp_metadata *m = row;
    const char *tag = (const char *)sqlite3_column_text(st, 0);
    size_t tl = tag ? (size_t)sqlite3_column_bytes(st, 0) : 0, el = strlen(RP_KEY_ESCAPE);
    if (r->own && tag && tl > el && strncmp(tag, RP_KEY_ESCAPE, el) == 0)
      rs_add(&rs, &m->key, tag + el, tl - el, 0);
    else
      rs_add(&rs, &m->key, tag ? tag : "", tl, 0);
    rs_col(&rs, &m->value, st, 1);
    break;
  }
  case HP_TABLE_COUNT: break;
  }
  return rs_end(&rs, c->store);
}

hp_status rp_cursor_next(hp_cursor *c, void *row) {
  rp_cursor *k = c->impl;
  if (!k || !k->st) return HP_END;
  uint32_t size = *(uint32_t *)row;
  hp_row_init(c->table, row);
  *(uint32_t *)row = size;
  rp_state *r = c->store->impl;
  pthread_mutex_lock(&r->rlock);
  int rc = sqlite3_step(k->st);
  hp_status e;
  if (rc == SQLITE_ROW) {
    e = fill_row(c, k->st, row);
  } else if (rc == SQLITE_DONE) {
    e = HP_END;
  } else {
    char what[96];
    snprintf(what, sizeof what, "cannot read %s rows", hp_table_describe(c->table)->name);
    e = read_fail(c->store, rc, what);
  }
  pthread_mutex_unlock(&r->rlock);
  return e;
}
