/* rocpd format, reader: a rocpd file (hubprof's or rocprofv3's) read as hub tables, through SQLite,
 * read-only, with the checks that keep a damaged or hostile file from crashing or hanging the reader. */
/* SPDX-License-Identifier: MIT */
#include "rocpd_bounds.h"
#include "rocpd_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

static hp_status read_fail(hp_store *s, int rc, const char *what) {
  rp_state *r = s->impl;
  rp_bounds *b = r->bounds;
  if (b && b->why == RB_TEMP)
    return hp_set_error(s, HP_ERR_CORRUPT,
                        "%s: gave up: it needs over %llu MiB of temporary storage, more than a file of this "
                        "size calls for (a hostile view?)",
                        what, (unsigned long long)(b->temp_budget >> 20));
  if (b && b->why == RB_TIME)
    return hp_set_error(
        s, HP_ERR_CORRUPT,
        "%s: gave up after %.1f s of work, more than a file of this size calls for (a hostile "
        "view?)",
        what, (double)b->time_budget / 1e9);
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
  rp_guard_reset(r);
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
  rp_guard_reset(r);
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
  /* Text counts too (a view can build huge strings in one step): no value longer than the file could hold;
   * the text a cursor hands out, temporary storage and time are bounded by rp_bounds_open (rocpd_bounds.c).
   */
  r->max_text = (1ull << 20) + 2 * bytes;
  if (r->max_text > INT_MAX) r->max_text = INT_MAX;
  /* cursors of one store may be used from several threads: every use of the connection after this
   * function holds rlock (recursive: a count prepares its query) */
  pthread_mutexattr_t ma;
  if (pthread_mutexattr_init(&ma) != 0) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
  r->rlock_on = pthread_mutex_init(&r->rlock, &ma) == 0;
  pthread_mutexattr_destroy(&ma);
  if (!r->rlock_on) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  st = rp_bounds_open(s, bytes);
  if (st != HP_OK) return st;
  int rc = sqlite3_open_v2(s->path, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, r->bounds->name);
  if (rc != SQLITE_OK) return read_fail(s, rc, "cannot open");
  sqlite3_db_config(r->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  sqlite3_db_config(r->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_progress_handler(r->db, 1000, rp_work_guard, r);
  sqlite3_limit(r->db, SQLITE_LIMIT_LENGTH, (int)r->max_text);
  sqlite3_limit(r->db, SQLITE_LIMIT_WORKER_THREADS, 0);
  /* memory: temporary data goes to (counted) files, the page cache and a sort's in-memory part stay small */
  sqlite3_exec(r->db, "PRAGMA cell_size_check=ON; PRAGMA temp_store=FILE; PRAGMA cache_size=-8192", NULL,
               NULL, NULL);
  int found = resolve_tables(s);
  if (found < 0) return s->first_error != HP_OK ? s->first_error : HP_ERR_CORRUPT;
  if (found == 0) return hp_set_error(s, HP_ERR_FORMAT, "SQLite database without rocpd tables");
  char *ver = meta_value(r, "schema_version");
  char *writer = meta_value(r, RP_WRITER_TAG);
  r->own = writer != NULL;
  free(writer);
  s->schema_version = ver ? ver : strdup("");
  if (!s->schema_version) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  char *rest = NULL;
  long major = ver ? strtol(ver, &rest, 10) : 3;
  if (ver && *ver && (rest == ver || strspn(rest, "0123456789.") != strlen(rest)))
    return hp_set_error(s, HP_ERR_CORRUPT, "bad rocpd schema_version '%s' (want digits and dots, e.g. 3.0.0)",
                        ver);
  if (ver && *ver && major != 3)
    return hp_set_error(s, HP_ERR_VERSION, "rocpd schema %s is not supported (this build reads 3.x)", ver);
  if (!r->obj[RT_KERNEL_DISPATCH] && !r->obj[RT_PMC] && !r->obj[RT_PROCESS])
    return hp_set_error(s, HP_ERR_VERSION,
                        "rocpd tables of an older layout (rocpd 1/2, rocmProfileData), not 3.x");
  return HP_OK;
}

void rp_close_read(hp_store *s) {
  if (s->impl) rp_bounds_close(s->impl);
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
  rp_guard_reset(r);
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

/* kw "obj" AS alias: a FROM item (kw " FROM") or a joined one (sb_join) */
static void sb_obj(hu_buf *q, const char *kw, const char *obj, const char *alias) {
  char *t = sqlite3_mprintf("%s \"%w\" AS %s", kw, obj, alias);
  if (t)
    hu_buf_str(q, t);
  else
    q->oom = 1;
  sqlite3_free(t);
}

/* " LEFT JOIN \"obj\" AS alias ON on": the joins that bring a row its strings and its dispatch */
static void sb_join(hu_buf *q, const char *obj, const char *alias, const char *on) {
  sb_obj(q, " LEFT JOIN", obj, alias);
  hu_buf_str(q, " ON ");
  hu_buf_str(q, on);
}

static int ident_char(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_'; }

/* ---- extdata keys parsed in C (rp_state.ext_c): hubprof's own dispatch rows ----
 * Each hub column whose read expression is "$key" or "COALESCE($key, …)" takes the key's value when the
 * row's extdata has it (not null), else what the SQL gave (NULL: the column's 0). */
typedef struct ext_key {
  char name[32];
  size_t len; /* of name */
  size_t col;
} ext_key;
static ext_key g_dkeys[RP_MAX_COLS];
static size_t g_ndkeys;
static unsigned char g_dpure[RP_MAX_COLS]; /* column i's expression is "$key" alone: its SQL is NULL */
static pthread_once_t g_dkeys_once = PTHREAD_ONCE_INIT;

static void dkeys_init(void) {
  const hp_table_desc *d = hp_table_describe(HP_TABLE_DISPATCH);
  for (size_t i = 0; i < d->ncolumns && i < RP_MAX_COLS; i++) {
    const char *e = rp_read_expr[HP_TABLE_DISPATCH][i], *k = e ? strchr(e, '$') : NULL;
    if (!k) continue;
    size_t n = 0;
    while (ident_char(k[1 + n]) && n < sizeof g_dkeys[0].name - 1)
      n++;
    g_dpure[i] = k == e && !k[1 + n];
    memcpy(g_dkeys[g_ndkeys].name, k + 1, n);
    g_dkeys[g_ndkeys].name[n] = 0;
    g_dkeys[g_ndkeys].len = n;
    g_dkeys[g_ndkeys++].col = i;
  }
}

/* The dispatch columns whose value may come from an extdata key (the mask of g_dkeys' columns). */
static uint64_t ext_cols(void) {
  pthread_once(&g_dkeys_once, dkeys_init);
  uint64_t m = 0;
  for (size_t i = 0; i < g_ndkeys; i++)
    m |= g_dkeys[i].col < 64 ? 1ull << g_dkeys[i].col : 0;
  return m;
}

/* Whether hub column i of table t has its place in the SELECT list that reads the columns of mask `want`:
 * dispatch rows leave out the columns not read (rp_cursor_columns) and, in hubprof's own files, those whose
 * value is an extdata key alone (ext_keys sets them); every other table lists every column. */
static int sql_col(const rp_state *r, hp_table t, uint64_t want, size_t i) {
  if (t != HP_TABLE_DISPATCH) return 1;
  if (i < 64 && !(want >> i & 1)) return 0;
  if (!r->ext_c) return 1;
  pthread_once(&g_dkeys_once, dkeys_init);
  return i >= RP_MAX_COLS || !g_dpure[i];
}

/* The cursor's columns in the order of its statement (sql_col), and where extdata follows them (-1: not
 * read), once the statement is made: fill_row reads only those. */
static void plan_cols(const rp_state *r, hp_table t, rp_cursor *k) {
  const hp_table_desc *d = hp_table_describe(t);
  k->ncol = 0;
  for (size_t i = 0; i < d->ncolumns && i < RP_MAX_COLS; i++)
    if (sql_col(r, t, k->want, i)) k->col[k->ncol++] = (uint8_t)i;
  k->extpos = t == HP_TABLE_DISPATCH && r->ext_c && (k->want & ext_cols()) ? (int)k->ncol : -1;
}

/* Append a read expression of rp_read_expr, its '@col' and '$key' made SQL over alias `a` of an object
 * with columns c: a missing column is NULL, an extdata key is read with SQLite's JSON functions (NULL when
 * the key is missing; in a foreign file also when extdata is not valid JSON, so it never fails a read, while
 * hubprof's own extdata is JSON and a damaged one is reported as damage). */
static void sb_expr(hu_buf *q, const colset *c, const char *a, const char *e, int own) {
  int ext = colset_has(c, "extdata");
  if (own == 2) { /* rp_state.ext_c: the key is parsed from the raw extdata in C (ext_keys) */
    ext = 0;
    own = 1;
  }
  while (*e) {
    if (*e != '@' && *e != '$') {
      hu_buf_put(q, e++, 1);
      continue;
    }
    char kind = *e++;
    size_t n = 0;
    while (ident_char(e[n]))
      n++;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)n, e);
    e += n;
    char *t = NULL;
    if (kind == '@' && colset_has(c, name))
      t = sqlite3_mprintf("%s.\"%w\"", a, name);
    else if (kind == '$' && ext && own) /* hubprof wrote it: JSON (a damaged one fails the read) */
      t = sqlite3_mprintf("json_extract(%s.\"extdata\", '$.%s')", a, name);
    else if (kind == '$' && ext)
      t = sqlite3_mprintf(
          "json_extract(CASE WHEN json_valid(%s.\"extdata\") THEN %s.\"extdata\" END, '$.%s')", a, a, name);
    else
      t = sqlite3_mprintf("NULL");
    if (!t) q->oom = 1;
    hu_buf_str(q, t ? t : "");
    sqlite3_free(t);
  }
}

/* The SELECT list of table t: one expression per hub column (rp_read_expr), `special` filling the NULL
 * entries, then any extra expressions after the columns. */
static void sb_select(hu_buf *q, const rp_state *r, hp_table t, const colset *c, const char *a,
                      const char *const *special, int own, uint64_t want) {
  const hp_table_desc *d = hp_table_describe(t);
  size_t ns = 0, n = 0;
  for (size_t i = 0; i < RP_MAX_COLS && (i < d->ncolumns || rp_read_expr[t][i]); i++) {
    if (i < d->ncolumns && !sql_col(r, t, want, i)) continue;
    if (n++) hu_buf_str(q, ", ");
    const char *e = rp_read_expr[t][i];
    size_t kl = e && own == 2 && !strncmp(e, "COALESCE($", 10) ? strcspn(e + 10, ",") : 0;
    if (kl && !strncmp(e + 10 + kl, ", @", 3) && !strchr(e + 13 + kl, ',')) {
      /* "COALESCE($key, @col)" with the key read in C (ext_keys): the column alone, not COALESCE(NULL, …) */
      char col[64];
      snprintf(col, sizeof col, "%.*s", (int)strcspn(e + 12 + kl, ")"), e + 12 + kl);
      sb_expr(q, c, a, col, own);
    } else if (e)
      sb_expr(q, c, a, e, own);
    else
      hu_buf_str(q, special && special[ns] ? special[ns++] : "NULL");
  }
  if (!n) hu_buf_str(q, "NULL"); /* no column read */
}

/* Build the SELECT (or COUNT when count != 0) for hub table t, of the columns in mask `want` (bit i: hub
 * column i; the others NULL). Returns 0, or -1 when the table is absent (read as empty), or an SQLite error
 * code. */
/* range: NULL, or the ids [range[0], range[1]] of a part (hp_cursor_open_part; hubprof's dispatch rows). */
static int build_query(rp_state *r, hp_table t, int count, int order, uint64_t want, const int64_t *range,
                       hu_buf *q) {
  const char *obj = r->obj[rp_table_base[t]];
  if (!obj) return -1;
  colset c, k = {0};
  int rc = colset_load(r, obj, &c);
  if (rc != SQLITE_OK) return rc;
  if (!colset_has(&c, "id") && t != HP_TABLE_COUNTER_VALUE) {
    colset_free(&c);
    return -1; /* not a table we can read */
  }
  if (count && r->own && t != HP_TABLE_METADATA && t != HP_TABLE_COUNTER_VALUE) {
    /* hubprof's own tables, every row but the placeholder of id 0: the whole count (SQLite counts the
     * b-tree's cells, reading no row; `WHERE id <> 0` made it read the rowid of every index entry) less that
     * row */
    char *e = sqlite3_mprintf(
        "SELECT (SELECT COUNT(*) FROM \"%w\") - (SELECT COUNT(*) FROM \"%w\" WHERE \"id\" = 0)", obj, obj);
    if (e)
      hu_buf_str(q, e);
    else
      q->oom = 1;
    sqlite3_free(e);
    colset_free(&c);
    return hu_buf_cstr(q) ? SQLITE_OK : SQLITE_NOMEM;
  }
  hu_buf_str(q, "SELECT ");
  if (count) hu_buf_str(q, "COUNT(*)");
  switch (t) {
  case HP_TABLE_METADATA:
    if (!count) sb_select(q, r, t, &c, "M", NULL, r->own, want);
    sb_obj(q, " FROM", obj, "M");
    hu_buf_str(q, " WHERE tag NOT IN ('schema_version', 'uuid', 'guid', '" RP_WRITER_TAG "')");
    if (order) hu_buf_str(q, " ORDER BY id");
    break;
  case HP_TABLE_COUNTER_VALUE: {
    /* own files: the event id is the dispatch id; others: the dispatch whose event_id it is, and
     * rocprofv3's 0-based replay_pass when the value has no pass of its own */
    int join = !r->own && r->obj[RT_KERNEL_DISPATCH];
    if (join && (rc = colset_load(r, r->obj[RT_KERNEL_DISPATCH], &k)) != SQLITE_OK) break;
    join = join && colset_has(&k, "id") && colset_has(&k, "event_id") && colset_has(&c, "event_id");
    if (!count) {
      /* the pass here is rocprofv3's (0-based replay_pass); extdata.pass, when present, wins (fill_row) */
      const char *special[2] = {join                         ? "K.\"id\""
                                : colset_has(&c, "event_id") ? "V.\"event_id\""
                                                             : "NULL",
                                join && colset_has(&k, "replay_pass") ? "COALESCE(K.\"replay_pass\" + 1, 0)"
                                                                      : "0"};
      sb_select(q, r, t, &c, "V", special, r->own, want);
    }
    sb_obj(q, " FROM", obj, "V");
    if (!count && join) {
      sb_join(q, r->obj[RT_KERNEL_DISPATCH], "K", "K.\"event_id\" = V.\"event_id\"");
    }
    if (colset_has(&c, "sample_id")) hu_buf_str(q, " WHERE V.\"sample_id\" IS NULL");
    if (order && colset_has(&c, "id")) hu_buf_str(q, " ORDER BY V.\"id\"");
    break;
  }
  case HP_TABLE_REGION:
    if (!count) {
      /* name and category strings through rocpd_string (category via the region's event) */
      int has_s = r->obj[RT_STRING] != NULL, has_e = r->obj[RT_EVENT] != NULL;
      int name = has_s && colset_has(&c, "name_id"), cat = has_s && has_e && colset_has(&c, "event_id");
      const char *special[2] = {name ? "S.\"string\"" : "NULL", cat ? "C.\"string\"" : "NULL"};
      sb_select(q, r, t, &c, "R", special, r->own, want);
      sb_obj(q, " FROM", obj, "R");
      if (name) sb_join(q, r->obj[RT_STRING], "S", "S.\"id\" = R.\"name_id\"");
      if (cat) {
        sb_join(q, r->obj[RT_EVENT], "E", "E.\"id\" = R.\"event_id\"");
        sb_join(q, r->obj[RT_STRING], "C", "C.\"id\" = E.\"category_id\"");
      }
    } else {
      sb_obj(q, " FROM", obj, "R");
    }
    if (r->own) hu_buf_str(q, " WHERE R.\"id\" <> 0");
    if (order) hu_buf_str(q, " ORDER BY R.\"id\"");
    break;
  case HP_TABLE_MEMORY_COPY: {
    /* the name (the OpenCL call, or ROCm's copy kind) through rocpd_string */
    int name = r->obj[RT_STRING] != NULL && colset_has(&c, "name_id");
    if (!count) {
      const char *special[1] = {name ? "S.\"string\"" : "NULL"};
      sb_select(q, r, t, &c, "M", special, r->own, want);
    }
    sb_obj(q, " FROM", obj, "M");
    if (!count && name) sb_join(q, r->obj[RT_STRING], "S", "S.\"id\" = M.\"name_id\"");
    if (r->own) hu_buf_str(q, " WHERE M.\"id\" <> 0");
    if (order) hu_buf_str(q, " ORDER BY M.\"id\"");
    break;
  }
  default:
    /* hubprof's own dispatch rows: their extdata keys parsed in C from the raw text, one pass per row
     * (json_extract per key and row cost twice the whole read at 10^7 dispatches; issue 33) */
    if (t == HP_TABLE_DISPATCH) r->ext_c = r->own && colset_has(&c, "extdata");
    if (!count) sb_select(q, r, t, &c, "T", NULL, t == HP_TABLE_DISPATCH && r->ext_c ? 2 : r->own, want);
    if (!count && t == HP_TABLE_DISPATCH && r->ext_c && (want & ext_cols())) /* no key read: no text */
      hu_buf_str(q, ", T.\"extdata\"");
    sb_obj(q, " FROM", obj, "T");
    if (r->own) hu_buf_str(q, " WHERE T.\"id\" <> 0"); /* id 0 rows are placeholders for "none" */
    if (r->own && range) {
      char b[96];
      snprintf(b, sizeof b, " AND T.\"id\" BETWEEN %lld AND %lld", (long long)range[0], (long long)range[1]);
      hu_buf_str(q, b);
    }
    if (order) hu_buf_str(q, " ORDER BY T.\"id\"");
    break;
  }
  colset_free(&c);
  colset_free(&k);
  if (rc == SQLITE_OK && !hu_buf_cstr(q)) rc = SQLITE_NOMEM;
  return rc;
}

/* 1 when SQLite would sort query q's rows (a temporary b-tree for its ORDER BY: a view, not a table read in
 * rowid order), else 0; *rc is SQLITE_OK or the error that stopped the check. */
static int needs_sort(rp_state *r, const char *q, int *rc) {
  char *e = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", q);
  sqlite3_stmt *st = NULL;
  int sort = 0;
  rp_guard_reset(r);
  *rc = e ? sqlite3_prepare_v2(r->db, e, -1, &st, NULL) : SQLITE_NOMEM;
  sqlite3_free(e);
  while (*rc == SQLITE_OK && (*rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *d = (const char *)sqlite3_column_text(st, 3);
    if (d && strstr(d, "TEMP B-TREE") && strstr(d, "ORDER BY")) sort = 1;
    *rc = SQLITE_OK;
  }
  if (*rc == SQLITE_DONE) *rc = SQLITE_OK;
  sqlite3_finalize(st);
  return sort;
}

static hp_status prepare_query_locked(hp_store *s, hp_table t, int count, uint64_t want, const int64_t *range,
                                      sqlite3_stmt **out) {
  rp_state *r = s->impl;
  const hp_table_desc *d = hp_table_describe(t);
  hu_buf q = {0};
  *out = NULL;
  int rc = build_query(r, t, count, !count, want, range, &q);
  /* Rows come in id order where that is free (tables, hubprof's views over them). Where SQLite would have
   * to sort them first (a foreign or hostile view: every row with its strings, before the first one comes
   * back), they come in the view's own order instead. */
  if (rc == SQLITE_OK && !count && needs_sort(r, (const char *)q.p, &rc) && rc == SQLITE_OK) {
    rp_buf_reset(&q);
    rc = build_query(r, t, 0, 0, want, range, &q);
  }
  if (rc == -1) {
    hu_buf_free(&q);
    return HP_END; /* absent: no rows */
  }
  char what[96];
  snprintf(what, sizeof what, "cannot read %s rows", d->name);
  if (rc == SQLITE_OK) {
    rp_guard_reset(r);
    rc = sqlite3_prepare_v2(r->db, (const char *)q.p, -1, out, NULL);
  }
  hu_buf_free(&q);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(*out);
    *out = NULL;
    return read_fail(s, rc, what);
  }
  return HP_OK;
}

hp_status rp_count(hp_store *s, hp_table t, uint64_t *n) {
  rp_state *r = s->impl;
  sqlite3_stmt *st;
  *n = 0;
  pthread_mutex_lock(&r->rlock);
  hp_status e = prepare_query_locked(s, t, 1, RP_ALL_COLS, NULL, &st);
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

static void pages_open(hp_cursor *c);

/* The cursor, over the ids of `range` when not NULL. */
static hp_status cursor_open_range(hp_cursor *c, const int64_t *range) {
  rp_cursor *k = calloc(1, sizeof *k);
  if (!k) return hp_set_error(c->store, HP_ERR_NOMEM, "out of memory");
  k->want = RP_ALL_COLS;
  if (range) {
    k->ranged = 1;
    k->range[0] = range[0];
    k->range[1] = range[1];
  }
  rp_state *rs = c->store->impl;
  pthread_mutex_lock(&rs->rlock); /* plan_cols reads what build_query set (cursors of other threads too) */
  c->impl = k;
  k->bt_last = INT64_MIN;
  hp_status e = HP_OK;
  /* a store whose dispatch pages an earlier cursor read: this one reads them too, no statement made (a merge
   * reads a large input in many parts); otherwise the statement, kept for a fallback */
  if (c->table == HP_TABLE_DISPATCH && rs->pg_plan > 0) pages_open(c);
  if (!k->bt) e = prepare_query_locked(c->store, c->table, 0, RP_ALL_COLS, range, &k->st);
  if (e == HP_OK && !k->bt) plan_cols(rs, c->table, k);
  if (e == HP_OK && c->table == HP_TABLE_DISPATCH && !k->bt) pages_open(c);
  c->impl = NULL;
  pthread_mutex_unlock(&rs->rlock);
  if (e == HP_OK && c->table == HP_TABLE_COUNTER_VALUE) {
    rp_state *r = c->store->impl;
    pthread_mutex_lock(&r->rlock);
    int rc = sqlite3_prepare_v2(r->db,
                                "SELECT json_extract(x, '$.pass'), json_extract(x, '$.imputed'), "
                                "json_extract(x, '$.value_bits'), json_extract(x, '$.region_id') FROM "
                                "(SELECT CASE WHEN json_valid(?1) THEN ?1 END AS x)",
                                -1, &k->ext, NULL);
    if (rc != SQLITE_OK) e = read_fail(c->store, rc, "cannot read counter_value rows");
    pthread_mutex_unlock(&r->rlock);
    if (e != HP_OK) sqlite3_finalize(k->st);
  }
  if (e != HP_OK && e != HP_END) {
    sqlite3_finalize(k->ext);
    free(k);
    return e;
  }
  c->impl = k; /* k->st NULL: the table is absent, the cursor has no rows */
  return HP_OK;
}

hp_status rp_cursor_open(hp_cursor *c) { return cursor_open_range(c, NULL); }

hp_status rp_id_span(hp_store *s, hp_table t, int64_t *lo, int64_t *hi) {
  rp_state *r = s->impl;
  const char *obj = r->obj[rp_table_base[t]];
  *lo = 1;
  *hi = 0;
  if (t != HP_TABLE_DISPATCH || !r->own || !obj) return HP_ERR_UNSUPPORTED;
  pthread_mutex_lock(&r->rlock);
  int known = r->span_known;
  *lo = r->span_lo, *hi = r->span_hi;
  pthread_mutex_unlock(&r->rlock);
  if (known) return HP_OK; /* asked before: the file is read-only */
  /* the first and last id in rowid order: two b-tree searches (min() and max() under a WHERE scan the table)
   */
  char *q =
      sqlite3_mprintf("SELECT (SELECT \"id\" FROM \"%w\" WHERE \"id\" <> 0 ORDER BY \"id\" LIMIT 1), (SELECT "
                      "\"id\" FROM \"%w\" WHERE \"id\" <> 0 ORDER BY \"id\" DESC LIMIT 1)",
                      obj, obj);
  sqlite3_stmt *st = NULL;
  pthread_mutex_lock(&r->rlock);
  rp_guard_reset(r);
  int rc = q ? sqlite3_prepare_v2(r->db, q, -1, &st, NULL) : SQLITE_NOMEM;
  sqlite3_free(q);
  if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (sqlite3_column_type(st, 0) != SQLITE_NULL) {
      *lo = sqlite3_column_int64(st, 0);
      *hi = sqlite3_column_int64(st, 1);
    }
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  hp_status e = rc == SQLITE_OK ? HP_OK : read_fail(s, rc, "cannot read dispatch rows");
  if (e == HP_OK) r->span_known = 1, r->span_lo = *lo, r->span_hi = *hi;
  pthread_mutex_unlock(&r->rlock);
  return e;
}

/* Part `part` of nparts: hubprof's own dispatch rows by equal ranges of their ids (from the smallest to the
 * largest, each a b-tree search), part i the i-th; other tables and foreign files (ids that need not be
 * unique or present) every row in part 0. */
hp_status rp_cursor_part(hp_cursor *c, unsigned part, unsigned nparts) {
  int64_t lo, hi;
  hp_status e = rp_id_span(c->store, c->table, &lo, &hi);
  if (e == HP_ERR_UNSUPPORTED) {
    if (part == 0) return rp_cursor_open(c);
    c->impl = calloc(1, sizeof(rp_cursor)); /* no statement: no rows */
    return c->impl ? HP_OK : hp_set_error(c->store, HP_ERR_NOMEM, "out of memory");
  }
  if (e != HP_OK) return e;
  int64_t range[2] = {1, 0}; /* empty */
  if (lo <= hi) {
    __int128 w = (__int128)hi - lo + 1;
    range[0] = (int64_t)(lo + w * part / nparts);
    range[1] = (int64_t)(lo + w * (part + 1) / nparts - 1);
  }
  return cursor_open_range(c, range);
}

void rp_cursor_close(hp_cursor *c) {
  rp_cursor *k = c->impl;
  if (!k) return;
  rp_state *r = c->store->impl;
  pthread_mutex_lock(&r->rlock);
  sqlite3_finalize(k->st);
  sqlite3_finalize(k->ext);
  /* the table is read: give its cached pages back, so that a merge of many inputs (all open at once) holds
   * the cache of the one it reads, not of every one it has read (docs/cluster.md, merge DIR's memory) */
  sqlite3_db_release_memory(r->db);
  pthread_mutex_unlock(&r->rlock);
  for (int i = 0; i < RP_EXT_MEMO; i++)
    free(k->memo[i].text);
  rp_bt_close(k->bt);
  hu_buf_free(&k->bt_ext);
  hu_buf_free(&k->arena);
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
  rp_buf_reset(&k->arena);
}

static void rs_add(rowstr *rs, const char **dst, const char *p, size_t n) {
  hu_buf *a = &rs->k->arena;
  size_t off = a->n;
  hu_buf_put(a, p, n);
  hu_buf_put(a, "", 1);
  if (rs->n < (int)(sizeof rs->fix / sizeof rs->fix[0])) rs->fix[rs->n++] = (strfix){dst, off};
}

static void rs_col(rowstr *rs, const char **dst, sqlite3_stmt *st, int i) {
  const char *t = (const char *)sqlite3_column_text(st, i);
  rs_add(rs, dst, t ? t : "", t ? (size_t)sqlite3_column_bytes(st, i) : 0);
}

static hp_status rs_end(rowstr *rs, hp_store *s) {
  hu_buf *a = &rs->k->arena;
  if (a->oom) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  for (int i = 0; i < rs->n; i++)
    *rs->fix[i].dst = (const char *)a->p + rs->fix[i].off;
  return HP_OK;
}

/* A counter value's extdata (column i) decoded into *out: pass, imputed and the exact value bits, through
 * SQLite's JSON functions once per distinct text. */
static hp_status ext_decode(hp_cursor *c, sqlite3_stmt *st, int i, const rp_ext_memo **out) {
  rp_cursor *k = c->impl;
  static const rp_ext_memo none = {0};
  const char *t = (const char *)sqlite3_column_text(st, i);
  size_t n = t ? (size_t)sqlite3_column_bytes(st, i) : 0;
  *out = &none;
  if (n <= 2) return HP_OK; /* NULL, "" or "{}" */
  for (int m = 0; m < RP_EXT_MEMO; m++)
    if (k->memo[m].text && k->memo[m].n == n && memcmp(k->memo[m].text, t, n) == 0) {
      *out = &k->memo[m];
      return HP_OK;
    }
  rp_ext_memo *m = &k->memo[k->memo_next++ % RP_EXT_MEMO];
  free(m->text);
  memset(m, 0, sizeof *m);
  sqlite3_bind_text(k->ext, 1, t, (int)n, SQLITE_TRANSIENT);
  int rc = sqlite3_step(k->ext);
  if (rc == SQLITE_ROW) {
    m->pass = (uint32_t)col_u64(k->ext, 0);
    m->imputed = (uint32_t)col_u64(k->ext, 1);
    m->has_bits = sqlite3_column_type(k->ext, 2) != SQLITE_NULL;
    m->bits = col_u64(k->ext, 2);
    m->region_id = col_u64(k->ext, 3);
  }
  sqlite3_reset(k->ext);
  if (rc != SQLITE_ROW) return read_fail(c->store, rc, "cannot read counter_value rows");
  m->text = malloc(n);
  if (!m->text) return hp_set_error(c->store, HP_ERR_NOMEM, "out of memory");
  memcpy(m->text, t, n);
  m->n = n;
  *out = m;
  return HP_OK;
}

static const char *json_ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    p++;
  return p;
}

/* Past one JSON value at p (string, number, literal, or a nested object or array by its brackets), or NULL
 * when it is not one. */
static const char *json_skip(const char *p) {
  if (*p == '"') {
    for (p++; *p && *p != '"'; p++)
      if (*p == '\\' && !*++p) return NULL;
    return *p ? p + 1 : NULL;
  }
  if (*p == '{' || *p == '[') {
    int depth = 0;
    for (; *p; p++) {
      if (*p == '"') {
        if (!(p = json_skip(p))) return NULL;
        p--;
      } else if (*p == '{' || *p == '[') {
        depth++;
      } else if ((*p == '}' || *p == ']') && --depth == 0) {
        return p + 1;
      }
    }
    return NULL;
  }
  const char *b = p;
  while (*p && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' && *p != '\t' && *p != '\r')
    p++;
  return p > b ? p : NULL;
}

/* Put the JSON value at v (a number or literal) into column col of row, by its type. 0, or -1 when it is not
 * a value the column can take (text, an object): the column keeps the SQL's. */
static int ext_put(void *row, const hp_column *col, const char *v) {
  void *at = (char *)row + col->offset;
  if (!strncmp(v, "null", 4)) return -1;
  if (!strncmp(v, "true", 4) || !strncmp(v, "false", 5)) {
    int64_t b = v[0] == 't';
    v = b ? "1" : "0";
  }
  char *end;
  if (col->type == HP_COL_F64) {
    double x = strtod(v, &end);
    if (end == v) return -1;
    memcpy(at, &x, sizeof x);
    return 0;
  }
  int integral = 1;
  for (const char *p = v; *p && *p != ',' && *p != '}' && *p != ' '; p++)
    if (*p == '.' || *p == 'e' || *p == 'E') integral = 0;
  int64_t i64;
  uint64_t u64;
  if (!integral) {
    double x = strtod(v, &end);
    if (end == v) return -1;
    i64 = (int64_t)x;
    u64 = x < 0 ? (uint64_t)(int64_t)x : (uint64_t)x;
  } else if (*v == '-') {
    i64 = strtoll(v, &end, 10);
    u64 = (uint64_t)i64;
  } else {
    u64 = strtoull(v, &end, 10);
    i64 = (int64_t)u64;
  }
  if (end == v) return -1;
  switch (col->type) {
  case HP_COL_I32: {
    int32_t x = (int32_t)i64;
    memcpy(at, &x, sizeof x);
    break;
  }
  case HP_COL_U32: {
    uint32_t x = (uint32_t)u64;
    memcpy(at, &x, sizeof x);
    break;
  }
  case HP_COL_I64: memcpy(at, &i64, sizeof i64); break;
  case HP_COL_STR: return -1;
  default: memcpy(at, &u64, sizeof u64); break;
  }
  return 0;
}

/* A dispatch row's extdata keys from its raw text p (n bytes, NUL-terminated at p[n]; a flat JSON object;
 * empty: none). A text that is not a JSON object is damage, as SQLite's JSON functions made it. */
static hp_status ext_keys_text(hp_cursor *c, const char *p, size_t n, void *row) {
  const char *text = p;
  rp_cursor *kc = c->impl;
  if (!*p) return HP_OK;
  const char *end = p + n;
  pthread_once(&g_dkeys_once, dkeys_init);
  const hp_table_desc *d = hp_table_describe(HP_TABLE_DISPATCH);
  p = json_ws(p);
  if (*p++ != '{') goto bad;
  p = json_ws(p);
  if (*p == '}') return HP_OK;
  for (;;) {
    if (*p != '"') goto bad;
    const char *k = p + 1, *ke = memchr(k, '"', (size_t)(end - k)); /* a plain key (hubprof's) ends there */
    ke = ke && ke[-1] != '\\' ? ke + 1 : json_skip(p);              /* an escape: the general way */
    if (!ke) goto bad;
    size_t kn = (size_t)(ke - 1 - k);
    p = json_ws(ke);
    if (*p++ != ':') goto bad;
    p = json_ws(p);
    const char *v = p;
    size_t hit = g_ndkeys, h = kc->bt_key < g_ndkeys ? kc->bt_key : 0; /* the key after the last one first */
    if (g_dkeys[h].len == kn && !memcmp(g_dkeys[h].name, k, kn))
      hit = h;
    else
      for (size_t i = 0; i < g_ndkeys; i++)
        if (g_dkeys[i].len == kn && !memcmp(g_dkeys[i].name, k, kn)) {
          hit = i;
          break;
        }
    kc->bt_key = hit + 1;
    /* the common value, a plain integer into an integer column: read and passed in one step */
    uint64_t u = 0;
    const char *q = v + (*v == '-');
    int digits = 0;
    for (; *q >= '0' && *q <= '9' && digits < 19; q++, digits++)
      u = u * 10 + (uint64_t)(*q - '0');
    const hp_column *col = hit < g_ndkeys ? &d->columns[g_dkeys[hit].col] : NULL;
    if (digits && digits < 19 && (*q == ',' || *q == '}') && col && col->type != HP_COL_F64 &&
        col->type != HP_COL_STR) {
      int64_t i64 = *v == '-' ? -(int64_t)u : (int64_t)u;
      void *at = (char *)row + col->offset;
      if (col->type == HP_COL_I32 || col->type == HP_COL_U32) {
        uint32_t x = (uint32_t)i64;
        memcpy(at, &x, sizeof x);
      } else {
        memcpy(at, &i64, sizeof i64);
      }
      p = q;
    } else {
      if (!(p = json_skip(p))) goto bad;
      if (col) ext_put(row, col, v);
    }
    p = json_ws(p);
    if (*p == '}') return HP_OK;
    if (*p++ != ',') goto bad;
    p = json_ws(p);
  }
bad:
  return hp_set_error(c->store, HP_ERR_CORRUPT, "dispatch rows: extdata is not a JSON object: %.60s", text);
}

/* The same from the raw text in column ci of the statement (NULL: none). */
static hp_status ext_keys(hp_cursor *c, sqlite3_stmt *st, int ci, void *row) {
  const char *p = (const char *)sqlite3_column_text(st, ci);
  return p ? ext_keys_text(c, p, (size_t)sqlite3_column_bytes(st, ci), row) : HP_OK;
}

/* ---- hubprof's own dispatch rows read straight from the table's pages (rocpd_btree.c) ----
 * SQLite's stepping was most of a merge's or a scan's time over rocpd. A file hubprof wrote keeps its
 * dispatches in one rowid table behind a plain view; its pages are read in rowid order and each record's
 * fields go to the hub columns exactly as the statement's columns would (an integer as is, NULL as 0, a real
 * converted as col_i64 and col_u64 do, extdata's keys by ext_keys_text). Anything else (a text in an integer
 * column, a record shorter than the table, damage) ends the page reading: the statement, stepped over the
 * rows already given, reads the rest, and SQLite reports any damage as before.
 * HUBPROF_ROCPD_READ_PAGES=0 reads every row through SQLite. */

/* Column `name` of the table's columns, -1 when absent. */
static int field_of(char *const *names, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (sqlite3_stricmp(names[i], name) == 0) return i;
  return -1;
}

/* The uuid table behind r->obj[RT_KERNEL_DISPATCH] (the view hubprof writes over it, or the table itself),
 * malloc'd, with its root page; NULL when it is anything else. */
static char *pages_table(rp_state *r, uint32_t *root) {
  const char *obj = r->obj[RT_KERNEL_DISPATCH], *base = rp_rt_name[RT_KERNEL_DISPATCH];
  char *name = strdup(obj), *view = NULL;
  sqlite3_stmt *st = NULL;
  rp_guard_reset(r);
  if (!name || sqlite3_prepare_v2(r->db, "SELECT type, sql, rootpage FROM sqlite_master WHERE name = ?1", -1,
                                  &st, NULL))
    goto fail;
  for (int hop = 0; hop < 2; hop++) {
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) != SQLITE_ROW) goto fail;
    const char *type = (const char *)sqlite3_column_text(st, 0),
               *sql = (const char *)sqlite3_column_text(st, 1);
    int64_t rp = sqlite3_column_int64(st, 2);
    if (!type || !sql) goto fail;
    if (!strcmp(type, "view") && hop == 0) { /* CREATE VIEW "rocpd_X" AS SELECT * FROM "rocpd_X_<uuid>" */
      view = sqlite3_mprintf("CREATE VIEW \"%w\" AS SELECT * FROM \"", name);
      size_t vl = view ? strlen(view) : 0, sl = strlen(sql);
      if (!view || strncmp(sql, view, vl) || sl < vl + 2 || sql[sl - 1] != '"') goto fail;
      free(name);
      if (!(name = strndup(sql + vl, sl - vl - 1)) || strchr(name, '"')) goto fail;
      sqlite3_reset(st);
      continue;
    }
    /* a rowid table made by rp_create: CREATE TABLE "rocpd_X_<uuid>" (id INTEGER PRIMARY KEY, ...) */
    char *want = sqlite3_mprintf("CREATE TABLE \"%w\" (id INTEGER PRIMARY KEY, ", name);
    size_t sl = strlen(sql);
    int ok = want && sl && !strcmp(type, "table") && is_uuid_table(name, base) &&
             !strncmp(sql, want, strlen(want)) && sql[sl - 1] == ')' && rp >= 2 && rp <= UINT32_MAX;
    sqlite3_free(want);
    if (!ok) goto fail;
    *root = (uint32_t)rp;
    sqlite3_finalize(st);
    sqlite3_free(view);
    return name;
  }
fail:
  sqlite3_finalize(st);
  sqlite3_free(view);
  free(name);
  return NULL;
}

/* Can this store's dispatch rows be read from the pages? Worked out once (r->pg_*), under rlock. */
static int pages_plan(rp_state *r) {
  if (r->pg_plan) return r->pg_plan > 0;
  r->pg_plan = -1;
  const char *env = getenv("HUBPROF_ROCPD_READ_PAGES");
  const hp_table_desc *d = hp_table_describe(HP_TABLE_DISPATCH);
  if ((env && !strcmp(env, "0")) || !r->own || !r->ext_c || d->ncolumns > RP_MAX_COLS) return 0;
  pthread_once(&g_dkeys_once, dkeys_init);
  uint32_t root = 0;
  char *tbl = pages_table(r, &root), *names[64];
  int n = 0, ok = tbl != NULL;
  char *q = ok ? sqlite3_mprintf("PRAGMA table_xinfo(\"%w\")", tbl) : NULL;
  sqlite3_stmt *st = NULL;
  rp_guard_reset(r);
  ok = ok && q && sqlite3_prepare_v2(r->db, q, -1, &st, NULL) == SQLITE_OK;
  while (ok && sqlite3_step(st) == SQLITE_ROW) { /* plain columns only; the first the rowid's alias */
    const char *name = (const char *)sqlite3_column_text(st, 1);
    ok = n < 64 && name && sqlite3_column_int(st, 6) == 0 && (n > 0 || !strcmp(name, "id")) &&
         (names[n] = strdup(name)) != NULL;
    n += ok;
  }
  sqlite3_finalize(st);
  sqlite3_free(q);
  r->pg_ext = ok ? field_of(names, n, "extdata") : -1;
  ok = ok && r->pg_ext > 0;
  for (size_t i = 0; ok && i < d->ncolumns; i++) { /* each read expression's column (sb_select's shapes) */
    const char *e = rp_read_expr[HP_TABLE_DISPATCH][i], *col = NULL;
    char buf[64];
    size_t kl = e && !strncmp(e, "COALESCE($", 10) ? strcspn(e + 10, ",") : 0;
    if (d->columns[i].type == HP_COL_STR || d->columns[i].type == HP_COL_F64 || !e) {
      ok = 0;
    } else if (e[0] == '@' &&
               strspn(e + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_") == strlen(e + 1)) {
      col = e + 1;
    } else if (kl && !strncmp(e + 10 + kl, ", @", 3) && !strchr(e + 13 + kl, ',') &&
               snprintf(buf, sizeof buf, "%s", e + 13 + kl) < (int)sizeof buf && buf[0] &&
               buf[strlen(buf) - 1] == ')') {
      buf[strlen(buf) - 1] = 0; /* "COALESCE($key, @col)": the column, the key over it (ext_keys_text) */
      col = buf;
    } else if (!g_dpure[i]) {
      ok = 0;
    }
    int f = col ? field_of(names, n, col) : -1;
    r->pg_src[i] = (int8_t)(f == 0 ? -2 : f);
  }
  for (int i = 0; i < n; i++)
    free(names[i]);
  free(tbl);
  if (ok) {
    r->pg_root = root;
    r->pg_plan = 1;
  }
  return ok;
}

/* Read cursor c's dispatch rows from the pages when the store's plan allows (under rlock). */
static void pages_open(hp_cursor *c) {
  rp_cursor *k = c->impl;
  rp_state *r = c->store->impl;
  if (!pages_plan(r) || !(k->bt = rp_bt_open(c->store->path, r->pg_root))) return;
  if (rp_bt_seek(k->bt, k->ranged ? k->range[0] : INT64_MIN) != 0) {
    rp_bt_close(k->bt);
    k->bt = NULL;
  }
}

/* The value of field f of record rec into an integer column of type `type` at `at`, as col_i64 and col_u64
 * read it; -1 for a text or a blob, which the statement would convert (the caller falls back to it). */
static inline int field_value(const unsigned char *rec, const rp_field *f, unsigned type, void *at) {
  if (f->type >= RP_F_BLOB) return -1;
  int64_t i = rp_field_int(rec + f->off, f->type);
  if (f->type == 7) { /* a real */
    double x;
    memcpy(&x, &i, sizeof x);
    i = type == HP_COL_I32 || type == HP_COL_I64 ? rp_d2i64(x) : (int64_t)rp_d2u64(x);
  }
  if (type == HP_COL_I32 || type == HP_COL_U32) {
    uint32_t v = (uint32_t)i;
    memcpy(at, &v, sizeof v);
  } else {
    memcpy(at, &i, sizeof i);
  }
  return 0;
}

/* The columns a row from the pages sets from its record (k->bt_col), for the columns k->want reads. */
static void pages_columns(rp_cursor *k, const rp_state *r) {
  const hp_table_desc *d = hp_table_describe(HP_TABLE_DISPATCH);
  k->bt_ncol = 0;
  for (size_t i = 0; i < d->ncolumns; i++)
    if (r->pg_src[i] != -1 && (i >= 64 || (k->want >> i & 1))) /* else 0, an extdata key's, or not read */
      k->bt_col[k->bt_ncol++] =
          (struct rp_btcol){r->pg_src[i], (uint8_t)d->columns[i].type, (uint16_t)d->columns[i].offset};
  k->bt_want = k->want;
}

/* The next dispatch row from the pages: HP_OK, HP_END, a failure of the row (its message set), or
 * HP_ERR_UNSUPPORTED when the statement must read on past the rows given (pages_fallback). */
static hp_status pages_next(hp_cursor *c, void *row) {
  rp_cursor *k = c->impl;
  rp_state *r = c->store->impl;
  rp_field f[64];
  if (k->bt_want != k->want || !k->bt_ncol) pages_columns(k, r);
  int ext = (k->want & ext_cols()) != 0;
  for (;;) {
    int64_t rowid;
    const unsigned char *rec;
    int nv = 0, got = rp_bt_next(k->bt, &rowid, &rec, f, 64, &nv);
    if (got <= 0) return got < 0 ? HP_ERR_UNSUPPORTED : HP_END;
    if (rowid <= k->bt_last) return HP_ERR_UNSUPPORTED; /* out of order: damage, SQLite's to explain */
    if (k->ranged && rowid > k->range[1]) return HP_END;
    if (rowid == 0 || (k->ranged && rowid < k->range[0])) { /* id 0: a placeholder (WHERE id <> 0) */
      k->bt_last = rowid;
      continue;
    }
    uint32_t size = *(uint32_t *)row;
    memset(row, 0, sizeof(hp_dispatch)); /* hp_row_init: a dispatch has no string */
    *(uint32_t *)row = size;
    for (int i = 0; i < k->bt_ncol; i++) {
      int src = k->bt_col[i].src;
      unsigned type = k->bt_col[i].type;
      void *at = (char *)row + k->bt_col[i].off;
      if (src == -2) { /* the rowid */
        rp_field id = {0, 8, 6};
        uint64_t be = __builtin_bswap64((uint64_t)rowid);
        field_value((const unsigned char *)&be, &id, type, at);
      } else if (src >= nv || field_value(rec, &f[src], type, at)) {
        return HP_ERR_UNSUPPORTED; /* a field the record lacks takes the column's default: SQLite's */
      }
    }
    if (ext) {
      const rp_field *x = r->pg_ext < nv ? &f[r->pg_ext] : NULL;
      if (!x || (x->type != RP_F_TEXT && x->type != 0)) return HP_ERR_UNSUPPORTED;
      if (x->type == RP_F_TEXT) {
        char small[256], *t = small;
        if (x->len < sizeof small) {
          memcpy(small, rec + x->off, x->len);
          small[x->len] = 0;
        } else {
          rp_buf_reset(&k->bt_ext);
          hu_buf_put(&k->bt_ext, rec + x->off, x->len);
          if (!(t = (char *)hu_buf_cstr(&k->bt_ext)))
            return hp_set_error(c->store, HP_ERR_NOMEM, "out of memory");
        }
        hp_status e = ext_keys_text(c, t, x->len, row);
        if (e != HP_OK) return e;
      }
    }
    if (++k->rows > r->bounds->row_budget)
      return hp_set_error(
          c->store, HP_ERR_CORRUPT,
          "%s rows: more than %llu rows, more than a file of this size holds (a hostile view?)",
          hp_table_describe(HP_TABLE_DISPATCH)->name, (unsigned long long)r->bounds->row_budget);
    k->bt_last = rowid;
    return HP_OK;
  }
}

/* The pages are left: the statement is made, and stepped over the rows the pages gave (SQLite reads the same
 * cells in the same order up to there; a seek to the next rowid could pass over a damaged cell that a scan
 * reports). HP_OK, or a failure. */
static hp_status pages_fallback(hp_cursor *c) {
  rp_cursor *k = c->impl;
  rp_state *r = c->store->impl;
  rp_bt_close(k->bt);
  k->bt = NULL;
  pthread_mutex_lock(&r->rlock);
  sqlite3_finalize(k->st);
  hp_status e = prepare_query_locked(c->store, c->table, 0, k->want, k->ranged ? k->range : NULL, &k->st);
  if (e == HP_OK) plan_cols(r, c->table, k);
  rp_work_begin(r);
  for (uint64_t i = 0; e == HP_OK && i < k->rows; i++) {
    int rc = sqlite3_step(k->st);
    if (rc != SQLITE_ROW)
      e = read_fail(c->store, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, "cannot read dispatch rows");
  }
  rp_work_end(r);
  k->stepped = k->rows;
  pthread_mutex_unlock(&r->rlock);
  return e;
}

/* Fill a row of the cursor's table from the statement: column i is the hub column i of the schema
 * description, read by its type (rp_read_expr made every default in SQL). */
static hp_status fill_row(hp_cursor *c, sqlite3_stmt *st, void *row) {
  rp_cursor *k = c->impl;
  rp_state *r = c->store->impl;
  const hp_table_desc *d = hp_table_describe(c->table);
  rowstr rs;
  rs_begin(&rs, k);
  for (size_t j = 0; j < k->ncol; j++) { /* the columns the statement reads (plan_cols); the others stay 0 */
    const hp_column *col = &d->columns[k->col[j]];
    void *at = (char *)row + col->offset;
    int ci = (int)j;
    switch (col->type) {
    case HP_COL_STR: rs_col(&rs, (const char **)at, st, ci); break;
    case HP_COL_F64: {
      double v = sqlite3_column_type(st, ci) == SQLITE_NULL ? NAN : sqlite3_column_double(st, ci);
      memcpy(at, &v, sizeof v);
      break;
    }
    case HP_COL_I32: {
      int32_t v = (int32_t)col_i64(st, ci);
      memcpy(at, &v, sizeof v);
      break;
    }
    case HP_COL_U32: {
      uint32_t v = (uint32_t)col_u64(st, ci);
      memcpy(at, &v, sizeof v);
      break;
    }
    case HP_COL_I64: {
      int64_t v = col_i64(st, ci);
      memcpy(at, &v, sizeof v);
      break;
    }
    default: {
      uint64_t v = col_u64(st, ci);
      memcpy(at, &v, sizeof v);
      break;
    }
    }
  }
  hp_status e = rs_end(&rs, c->store);
  if (e != HP_OK) return e;
  if (k->extpos >= 0 && (e = ext_keys(c, st, k->extpos, row)) != HP_OK) return e;
  k->text += k->arena.n;
  if (++k->rows > r->bounds->row_budget)
    return hp_set_error(c->store, HP_ERR_CORRUPT,
                        "%s rows: more than %llu rows, more than a file of this size holds (a hostile view?)",
                        hp_table_describe(c->table)->name, (unsigned long long)r->bounds->row_budget);
  if (k->text > r->bounds->text_budget)
    return hp_set_error(c->store, HP_ERR_CORRUPT,
                        "%s rows: more than %llu MiB of text, more than a file of this size holds (a hostile "
                        "view?)",
                        hp_table_describe(c->table)->name,
                        (unsigned long long)(r->bounds->text_budget >> 20));
  if (c->table == HP_TABLE_COUNTER_VALUE) {
    hp_counter_value *v = row;
    const rp_ext_memo *m;
    e = ext_decode(c, st, (int)d->ncolumns, &m);
    if (e != HP_OK) return e;
    if (m->pass) v->pass = m->pass;
    v->imputed = m->imputed;
    v->region_id = m->region_id;
    if (m->has_bits) memcpy(&v->value, &m->bits, sizeof m->bits); /* SQLite keeps -0.0 as 0, NaN as NULL */
  } else if (c->table == HP_TABLE_METADATA && r->own) {
    hp_metadata *m = row; /* keys that would collide with the format's tags were stored escaped */
    size_t el = strlen(RP_KEY_ESCAPE);
    if (strlen(m->key) > el && strncmp(m->key, RP_KEY_ESCAPE, el) == 0) m->key += el;
  }
  return HP_OK;
}

hp_status rp_cursor_next(hp_cursor *c, void *row) {
  rp_cursor *k = c->impl;
  if (k && k->bt) {
    hp_status e = pages_next(c, row);
    if (e != HP_ERR_UNSUPPORTED || (e = pages_fallback(c)) != HP_OK) return e;
  }
  if (!k || !k->st) return HP_END;
  uint32_t size = *(uint32_t *)row;
  hp_row_init(c->table, row);
  *(uint32_t *)row = size;
  rp_state *r = c->store->impl;
  pthread_mutex_lock(&r->rlock);
  rp_work_begin(r);
  int rc = sqlite3_step(k->st);
  k->stepped++;
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
  rp_work_end(r);
  pthread_mutex_unlock(&r->rlock);
  return e;
}

/* The columns the reads that follow need (hp_format_ops.cursor_columns). Dispatch rows only (the big table
 * of a query: `analyze` reads 6 of its 23 columns): before the first row, the statement is made again to
 * read those alone (the others NULL, a constant SQLite does not evaluate per row; no extdata text when no
 * key is read); a column needed later that the statement does not read makes it again with every column,
 * stepped past the rows already read. */
hp_status rp_cursor_columns(hp_cursor *c, void *const *cols) {
  rp_cursor *k = c->impl;
  if (!k || (!k->st && !k->bt) || c->table != HP_TABLE_DISPATCH) return HP_OK;
  const hp_table_desc *d = hp_table_describe(c->table);
  uint64_t need = RP_ALL_COLS;
  if (cols && d->ncolumns <= 64) {
    need = 0;
    for (size_t i = 0; i < d->ncolumns; i++)
      need |= cols[i] ? 1ull << i : 0;
    need |= ~0ull << (d->ncolumns - 1) << 1; /* the bits past the columns: as RP_ALL_COLS */
  }
  if (need == k->want || (k->stepped && !(need & ~k->want))) return HP_OK;
  if (k->bt) { /* read from the pages: as the statement would (a fallback prepares it with `want`) */
    k->want = k->bt_last == INT64_MIN ? need : RP_ALL_COLS;
    return HP_OK;
  }
  if (k->stepped) need = RP_ALL_COLS;
  rp_state *r = c->store->impl;
  pthread_mutex_lock(&r->rlock);
  sqlite3_stmt *st = NULL;
  hp_status e = prepare_query_locked(c->store, c->table, 0, need, k->ranged ? k->range : NULL, &st);
  rp_work_begin(r);
  for (uint64_t i = 0; e == HP_OK && i < k->stepped; i++) { /* to where the cursor was */
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW)
      e = read_fail(c->store, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, "cannot read dispatch rows");
  }
  rp_work_end(r);
  if (e == HP_OK) {
    sqlite3_finalize(k->st);
    k->st = st;
    k->want = need;
    plan_cols(r, c->table, k);
  } else {
    sqlite3_finalize(st);
  }
  pthread_mutex_unlock(&r->rlock);
  return e == HP_END ? HP_OK : e;
}
