/* rocpd format, writer: a hub store created as one rocpd SQLite file: rows mapped to rocpd tables through
 * prepared INSERTs (or the page writer), placeholder rows, region events, views; the temporary file and the
 * atomic commit. Mapping: docs/formats/rocpd.md. */
/* SPDX-License-Identifier: MIT */
#include "rocpd_internal.h"

#include "../common/hu_hash.h"
#include "../common/hu_io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void rp_free_state(rp_state *r) {
  for (int i = 0; i < WS_COUNT; i++)
    sqlite3_finalize(r->ins[i]);
  if (r->db) sqlite3_close_v2(r->db);
  free(r->tmp);
  rp_bulk_free(&r->bk);
  free(r->rec);
  hu_buf_free(&r->js);
  rp_pairs_free(&r->proc);
  rp_pairs_free(&r->agent);
  rp_pairs_free(&r->code);
  hu_strmap_free(&r->strings);
  for (int i = 0; i < RT_COUNT; i++)
    free(r->obj[i]);
  if (r->rlock_on) pthread_mutex_destroy(&r->rlock);
  free(r);
}

hp_status rp_sql_fail(hp_store *s, int rc, const char *what) {
  rp_state *r = s->impl;
  const char *msg = r && r->db ? sqlite3_errmsg(r->db) : sqlite3_errstr(rc);
  if ((rc & 0xff) == SQLITE_FULL) return hp_set_error(s, HP_ERR_IO, "%s: disk full (%s)", what, msg);
  return hp_set_error(s, rp_rc_status(rc), "%s: %s", what, msg);
}

hp_status rp_exec_sql(hp_store *s, const char *sql, const char *what) {
  rp_state *r = s->impl;
  int rc = sqlite3_exec(r->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? HP_OK : rp_sql_fail(s, rc, what);
}

static hp_status step_reset(hp_store *s, sqlite3_stmt *st, const char *what) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc == SQLITE_DONE) return HP_OK;
  return rp_sql_fail(s, rc, what);
}

/* Id of string `str` in rocpd_string, inserting it when new (0 on failure, message set). */
static int64_t string_id(hp_store *s, const char *str) {
  rp_state *r = s->impl;
  int added;
  long i = hu_strmap_intern(&r->strings, str, &added);
  if (i < 0) {
    hp_set_error(s, HP_ERR_NOMEM, "out of memory");
    return 0;
  }
  int64_t id = (int64_t)i + 1;
  if (!added) return id;
  sqlite3_stmt *st = r->ins[WS_STRING];
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_text(st, 2, str, -1, SQLITE_STATIC);
  return step_reset(s, st, "cannot write a string") == HP_OK ? id : 0;
}

static void bind_u64(sqlite3_stmt *st, int i, uint64_t v) { sqlite3_bind_int64(st, i, (sqlite3_int64)v); }

/* Node of process `pid` (0 when not written yet). */
int64_t rp_proc_node(rp_state *r, uint64_t pid) {
  if (pid == r->last_proc && pid) return r->last_nid;
  const int64_t *p = rp_pairs_get(&r->proc, pid);
  r->last_proc = pid;
  r->last_nid = p ? p[0] : 0;
  return r->last_nid;
}

static const char *agent_type_text(int32_t t) {
  return t == HP_AGENT_CPU ? "CPU" : t == HP_AGENT_GPU ? "GPU" : NULL;
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *t) {
  if (t)
    sqlite3_bind_text(st, i, t, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, i);
}

#define NEED0(t) (1u << (t))

/* A dispatch's extdata, as jw writes it ({"enqueue_ns":…,"passes":…,…}, keys of default values left out),
 * without the general writer: it is made for every dispatch. */
#define DISPATCH_EXT_MAX 192
static char *ext_num(char *p, const char *key, size_t klen, uint64_t v, int neg) {
  if (p[-1] != '{') *p++ = ',';
  *p++ = '"';
  memcpy(p, key, klen);
  p += klen;
  *p++ = '"';
  *p++ = ':';
  if (neg) {
    *p++ = '-';
    v = (uint64_t)0 - v;
  }
  char tmp[20];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n)
    *p++ = tmp[--n];
  return p;
}

static size_t dispatch_ext(char *buf, const hp_dispatch *d) {
  char *p = buf;
  *p++ = '{';
  /* rocpd's dispatch_id is the row id (unique in the file); the collector's id when it differs */
  if (d->dispatch_id != d->id) p = ext_num(p, "dispatch_id", 11, d->dispatch_id, (int64_t)d->dispatch_id < 0);
  if (d->enqueue_ns) p = ext_num(p, "enqueue_ns", 10, (uint64_t)d->enqueue_ns, d->enqueue_ns < 0);
  if (d->passes) p = ext_num(p, "passes", 6, d->passes, 0);
  if (d->bytes_accessible)
    p = ext_num(p, "bytes_accessible", 16, d->bytes_accessible, (int64_t)d->bytes_accessible < 0);
  if (d->bytes_restored)
    p = ext_num(p, "bytes_restored", 14, d->bytes_restored, (int64_t)d->bytes_restored < 0);
  *p++ = '}';
  *p = 0;
  return (size_t)(p - buf);
}

/* Bind the derived columns of a mapped row (rp_write_extra, in that order, from parameter p on) and note
 * what the row needs; derived extdata keys go to w. Returns the next parameter, or -1 (message set). */
static int bind_extra(hp_store *s, hp_table t, const void *row, sqlite3_stmt *st, int p, jw *w) {
  rp_state *r = s->impl;
  switch (t) {
  case HP_TABLE_NODE: {
    const hp_node *n = row;
    uint64_t h = hu_fnv1a(n->hostname, strlen(n->hostname), HU_FNV_BASIS);
    h = hu_fnv1a(n->machine_id, strlen(n->machine_id) + 1, h);
    sqlite3_bind_int64(st, p++, (sqlite3_int64)(h & INT64_MAX));
    break;
  }
  case HP_TABLE_PROCESS: {
    const hp_process *pr = row;
    if (rp_pairs_put(&r->proc, pr->id, (int64_t)pr->node_id, pr->ppid)) goto oom;
    r->last_proc = 0;
    if (!pr->node_id) r->need0 |= NEED0(HP_TABLE_NODE);
    break;
  }
  case HP_TABLE_THREAD: {
    const hp_thread *th = row;
    const int64_t *pr = rp_pairs_get(&r->proc, th->process_id);
    if (!th->process_id) r->need0 |= NEED0(HP_TABLE_PROCESS);
    if (!pr || !pr[0]) r->need0 |= NEED0(HP_TABLE_NODE);
    sqlite3_bind_int64(st, p++, pr ? pr[0] : 0);
    sqlite3_bind_int64(st, p++, pr ? pr[1] : 0);
    break;
  }
  case HP_TABLE_AGENT: {
    const hp_agent *a = row;
    if (rp_pairs_put(&r->agent, a->id, (int64_t)a->node_id, a->type)) goto oom;
    /* rocpd's type is 'CPU', 'GPU' or 'NIC': other hub types are kept in extdata */
    if (a->type != HP_AGENT_UNKNOWN && !agent_type_text(a->type)) rp_jw_i64(w, "type", a->type);
    sqlite3_bind_int64(st, p++, 0);
    bind_text_or_null(st, p++, agent_type_text(a->type));
    break;
  }
  case HP_TABLE_QUEUE: {
    const hp_queue *q = row;
    if (!q->process_id) r->need0 |= NEED0(HP_TABLE_PROCESS);
    sqlite3_bind_int64(st, p++, rp_proc_node(r, q->process_id));
    break;
  }
  case HP_TABLE_CODE_OBJECT: {
    const hp_code_object *c = row;
    if (rp_pairs_put(&r->code, c->id, (int64_t)c->process_id, 0)) goto oom;
    const char *kind = strncmp(c->uri, "file://", 7) == 0     ? "FILE"
                       : strncmp(c->uri, "memory://", 9) == 0 ? "MEMORY"
                                                              : NULL;
    sqlite3_bind_int64(st, p++, rp_proc_node(r, c->process_id));
    sqlite3_bind_int64(st, p++, 0);
    bind_text_or_null(st, p++, kind);
    break;
  }
  case HP_TABLE_KERNEL_SYMBOL: {
    const hp_kernel_symbol *k = row;
    const int64_t *c = rp_pairs_get(&r->code, k->code_object_id);
    uint64_t pid = c ? (uint64_t)c[0] : 0;
    sqlite3_bind_int64(st, p++, rp_proc_node(r, pid));
    bind_u64(st, p++, pid);
    /* ROCm's views show display_name: an empty one is stored as the name, and remembered in extdata */
    sqlite3_bind_text(st, p++, *k->display_name ? k->display_name : k->name, -1, SQLITE_STATIC);
    if (!*k->display_name) rp_jw_str(w, "display_name", "");
    break;
  }
  case HP_TABLE_COUNTER_INFO: {
    const hp_counter_info *ci = row;
    const int64_t *a = rp_pairs_get(&r->agent, ci->agent_id);
    /* pid 0 and agent_id 0 ("no particular agent") get a real process and agent at commit */
    r->counters_no_agent |= ci->agent_id == 0;
    sqlite3_bind_int64(st, p++, a ? a[0] : 0);
    sqlite3_bind_int64(st, p++, 0);
    bind_text_or_null(st, p++, a ? agent_type_text((int32_t)a[1]) : NULL);
    sqlite3_bind_text(st, p++, "ABS", -1, SQLITE_STATIC);
    sqlite3_bind_int(st, p++, 0);
    sqlite3_bind_int(st, p++, *ci->expression != 0);
    sqlite3_bind_int(st, p++, 0);
    break;
  }
  default: break;
  }
  return p;
oom:
  hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  return -1;
}

/* Write a row of a table mapped column by column (rp_write_map), driven by the hub's schema description. */
static hp_status write_mapped(hp_store *s, hp_table t, const void *row) {
  rp_state *r = s->impl;
  sqlite3_stmt *st = r->ins[t];
  const hp_table_desc *d = hp_table_describe(t);
  jw w;
  rp_jw_begin(&w, &r->js);
  int p = 1, ext = 0;
  for (size_t i = 0; i < d->ncolumns; i++) {
    const char *m = rp_write_map[t][i];
    const hp_column *c = &d->columns[i];
    const char *at = (const char *)row + c->offset;
    int64_t v = 0;
    const char *str = NULL;
    switch (c->type) {
    case HP_COL_STR: memcpy(&str, at, sizeof str); break;
    case HP_COL_I32: {
      int32_t x;
      memcpy(&x, at, sizeof x);
      v = x;
      break;
    }
    case HP_COL_U32: {
      uint32_t x;
      memcpy(&x, at, sizeof x);
      v = x;
      break;
    }
    default: memcpy(&v, at, sizeof v); break; /* I64, U64 (its bits) */
    }
    if (*m == '$') { /* an extdata key, left out at its default */
      char key[64];
      size_t kn = strcspn(m + 1, "=");
      snprintf(key, sizeof key, "%.*s", (int)kn, m + 1);
      int64_t def = m[1 + kn] == '=' ? strtoll(m + 2 + kn, NULL, 10) : 0;
      ext = 1;
      if (str) {
        if (*str) rp_jw_str(&w, key, str);
      } else if (v != def) {
        rp_jw_i64(&w, key, v);
      }
    } else if (*m) {
      if (c->type == HP_COL_F64) { /* its bits went to v: a REAL column (NaN reads back as NULL → NaN) */
        double x;
        memcpy(&x, at, sizeof x);
        sqlite3_bind_double(st, p++, x);
        if (x == 0 && signbit(x)) { /* SQLite keeps -0.0 as 0: the sign goes to extdata "<column>_negzero" */
          char key[72];
          snprintf(key, sizeof key, "%s_negzero", c->name);
          rp_jw_i64(&w, key, 1);
        }
        ext = 1; /* as mapped_insert: a table with a REAL column has extdata */
      } else if (str)
        sqlite3_bind_text(st, p++, str, -1, SQLITE_STATIC);
      else if (*m == '?' && v == 0) /* unknown (a process that never closed its log): NULL, not 0 */
        sqlite3_bind_null(st, p++);
      else
        sqlite3_bind_int64(st, p++, v);
    }
  }
  p = bind_extra(s, t, row, st, p, &w);
  if (p < 0) return s->first_error;
  if (ext || t == HP_TABLE_AGENT || t == HP_TABLE_KERNEL_SYMBOL)
    sqlite3_bind_text(st, p, rp_jw_end(&w), -1, SQLITE_STATIC);
  char what[64];
  snprintf(what, sizeof what, "cannot write a %s row", d->name);
  return step_reset(s, st, what);
}

hp_status rp_write(hp_store *s, hp_table t, const void *row) {
  rp_state *r = s->impl;
  if ((unsigned)t < HP_TABLE_COUNT && rp_write_map[t][0]) return write_mapped(s, t, row);
  sqlite3_stmt *st = r->ins[t];
  jw w;
  switch (t) {
  case HP_TABLE_DISPATCH: {
    const hp_dispatch *d = row;
    if (!d->process_id) r->need0 |= NEED0(HP_TABLE_PROCESS);
    if (!d->thread_id) r->need0 |= NEED0(HP_TABLE_THREAD);
    if (!d->agent_id) r->need0 |= NEED0(HP_TABLE_AGENT);
    if (!d->queue_id) r->need0 |= NEED0(HP_TABLE_QUEUE);
    if (!d->kernel_id) r->need0 |= NEED0(HP_TABLE_KERNEL_SYMBOL);
    char ext[DISPATCH_EXT_MAX];
    size_t extlen = dispatch_ext(ext, d);
    if (r->bulk_on) {
      const btb *kd = &r->bk.t[BT_DISPATCH];
      if (!kd->rows || (int64_t)d->id > kd->last) return rp_bulk_dispatch(s, d, ext, extlen);
      /* out of id order: the pages built so far go in, this and later rows through SQLite */
      hp_status e = rp_bulk_flush(s);
      if (e != HP_OK) return e;
      st = r->ins[t];
    }
    r->dispatches++; /* its rocpd_event row is written at commit, in one statement */
    bind_u64(st, 1, d->id);
    sqlite3_bind_int64(st, 2, rp_proc_node(r, d->process_id));
    bind_u64(st, 3, d->process_id);
    bind_u64(st, 4, d->thread_id);
    bind_u64(st, 5, d->agent_id);
    bind_u64(st, 6, d->kernel_id);
    bind_u64(st, 7, d->id); /* rocpd dispatch_id: unique in the file (extdata keeps the collector's) */
    bind_u64(st, 8, d->queue_id);
    sqlite3_bind_int64(st, 9, d->start_ns);
    sqlite3_bind_int64(st, 10, d->end_ns);
    sqlite3_bind_int64(st, 11, d->private_size);
    sqlite3_bind_int64(st, 12, d->group_size);
    for (int i = 0; i < 3; i++) {
      sqlite3_bind_int64(st, 13 + i, d->workgroup[i]);
      sqlite3_bind_int64(st, 16 + i, d->grid[i]);
    }
    sqlite3_bind_int64(st, 19, r->str_empty);
    sqlite3_bind_text(st, 20, ext, -1, SQLITE_STATIC);
    return step_reset(s, st, "cannot write a dispatch");
  }
  case HP_TABLE_COUNTER_VALUE: {
    const hp_counter_value *v = row;
    /* SQLite stores -0.0 as 0 and NaN as NULL: those keep their exact bits in extdata */
    int special = isnan(v->value) || (v->value == 0 && signbit(v->value));
    const char *ext = "{}";
    if (special) {
      uint64_t bits;
      memcpy(&bits, &v->value, sizeof bits);
      rp_jw_begin(&w, &r->js);
      if (v->pass) rp_jw_u64(&w, "pass", v->pass);
      if (v->imputed) rp_jw_u64(&w, "imputed", v->imputed);
      rp_jw_u64(&w, "value_bits", bits);
      ext = rp_jw_end(&w);
    } else if (v->pass || v->imputed) {
      if (v->pass != r->last_pass || v->imputed != r->last_imputed || !r->last_ext[0]) {
        rp_jw_begin(&w, &r->js);
        if (v->pass) rp_jw_u64(&w, "pass", v->pass);
        if (v->imputed) rp_jw_u64(&w, "imputed", v->imputed);
        snprintf(r->last_ext, sizeof r->last_ext, "%s", rp_jw_end(&w));
        r->last_pass = v->pass;
        r->last_imputed = v->imputed;
      }
      ext = r->last_ext;
    }
    if (r->bulk_on) return rp_bulk_counter_value(s, v, ext);
    sqlite3_bind_int64(st, 1, ++r->next_pmc);
    bind_u64(st, 2, v->dispatch_id);
    bind_u64(st, 3, v->counter_id);
    if (isnan(v->value))
      sqlite3_bind_null(st, 4);
    else
      sqlite3_bind_double(st, 4, v->value == 0 ? 0.0 : v->value);
    sqlite3_bind_text(st, 5, ext, -1, SQLITE_STATIC);
    return step_reset(s, st, "cannot write a counter value");
  }
  case HP_TABLE_REGION: {
    const hp_region *g = row;
    if (!g->process_id) r->need0 |= NEED0(HP_TABLE_PROCESS);
    if (!g->thread_id) r->need0 |= NEED0(HP_TABLE_THREAD);
    int64_t name = string_id(s, g->name), cat = name ? string_id(s, g->category) : 0;
    if (!name || !cat) return s->first_error;
    bind_u64(st, 1, g->id);
    sqlite3_bind_int64(st, 2, rp_proc_node(r, g->process_id));
    bind_u64(st, 3, g->process_id);
    bind_u64(st, 4, g->thread_id);
    sqlite3_bind_int64(st, 5, g->start_ns);
    sqlite3_bind_int64(st, 6, g->end_ns);
    sqlite3_bind_int64(st, 7, name);
    sqlite3_bind_int64(st, 8, cat); /* the category's string id until commit gives the region its event */
    hp_status e = step_reset(s, st, "cannot write a region");
    if (e == HP_OK) r->regions++;
    return e;
  }
  case HP_TABLE_METADATA: {
    const hp_metadata *m = row;
    hu_buf key = {0};
    const char *tag = m->key;
    if (rp_reserved_tag(m->key) || strncmp(m->key, RP_KEY_ESCAPE, strlen(RP_KEY_ESCAPE)) == 0) {
      hu_buf_str(&key, RP_KEY_ESCAPE);
      hu_buf_str(&key, m->key);
      tag = hu_buf_cstr(&key);
      if (!tag) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
    }
    /* a key written again replaces its value, in place */
    sqlite3_stmt *up = r->ins[WS_META_UPDATE];
    sqlite3_bind_text(up, 1, tag, -1, SQLITE_STATIC);
    sqlite3_bind_text(up, 2, m->value, -1, SQLITE_STATIC);
    hp_status e = step_reset(s, up, "cannot write metadata");
    if (e == HP_OK && sqlite3_changes(r->db) == 0) {
      sqlite3_bind_text(st, 1, tag, -1, SQLITE_STATIC);
      sqlite3_bind_text(st, 2, m->value, -1, SQLITE_STATIC);
      e = step_reset(s, st, "cannot write metadata");
    }
    hu_buf_free(&key);
    return e;
  }
  default: break;
  }
  return hp_set_error(s, HP_ERR_INVALID, "unknown table %d", (int)t);
}

/* The INSERT of a table written column by column (rp_write_map): the mapped columns (a hub column's
 * parameter repeated for each of its rocpd columns), the derived ones (rp_write_extra), then extdata. */
static void mapped_insert(hu_buf *q, hp_table t, const char *suffix) {
  const hp_table_desc *d = hp_table_describe(t);
  hu_buf vals = {0};
  char num[16], col[64];
  int p = 0, ext = 0;
  hu_buf_str(q, "INSERT OR REPLACE INTO \"rocpd_");
  hu_buf_str(q, rp_rt_name[rp_table_base[t]]);
  hu_buf_str(q, suffix);
  hu_buf_str(q, "\"(");
  for (size_t i = 0; i < d->ncolumns; i++) {
    const char *m = rp_write_map[t][i];
    if (*m == '$' || d->columns[i].type == HP_COL_F64) ext = 1; /* F64: "<column>_negzero" (write_mapped) */
    if (!*m || *m == '$') continue;
    m += *m == '?'; /* 0 written as NULL: the columns are the same */
    snprintf(num, sizeof num, "?%d", ++p);
    for (const char *c = m; *c;) { /* "a,b": each column takes the same parameter */
      size_t n = strcspn(c, ",");
      snprintf(col, sizeof col, "\"%.*s\"", (int)n, c);
      if (vals.n) {
        hu_buf_str(q, ", ");
        hu_buf_str(&vals, ", ");
      }
      hu_buf_str(q, col);
      hu_buf_str(&vals, num);
      c += n + (c[n] == ',');
    }
  }
  for (const char *c = rp_write_extra[t]; c && *c;) {
    size_t n = strcspn(c, ",");
    snprintf(col, sizeof col, ", \"%.*s\"", (int)n, c);
    snprintf(num, sizeof num, ", ?%d", ++p);
    hu_buf_str(q, col);
    hu_buf_str(&vals, num);
    c += n + (c[n] == ',');
    c += strspn(c, " ");
  }
  if (ext || t == HP_TABLE_AGENT || t == HP_TABLE_KERNEL_SYMBOL) { /* those two put derived keys there */
    snprintf(num, sizeof num, ", ?%d", ++p);
    hu_buf_str(q, ", \"extdata\"");
    hu_buf_str(&vals, num);
  }
  hu_buf_str(q, ") VALUES (");
  hu_buf_put(q, vals.p, vals.n);
  hu_buf_str(q, ")");
  q->oom |= vals.oom;
  hu_buf_free(&vals);
}

hp_status rp_prepare_inserts(hp_store *s) {
  rp_state *r = s->impl;
  hu_buf sql = {0};
  hp_status st = HP_OK;
  for (int i = 0; st == HP_OK && i < WS_COUNT; i++) {
    rp_buf_reset(&sql);
    if (i < HP_TABLE_COUNT && rp_write_map[i][0])
      mapped_insert(&sql, (hp_table)i, r->suffix);
    else
      rp_buf_expand(&sql, rp_ins_sql[i], r->suffix);
    int rc = !hu_buf_cstr(&sql) ? SQLITE_NOMEM
                                : sqlite3_prepare_v3(r->db, (const char *)sql.p, -1,
                                                     SQLITE_PREPARE_PERSISTENT, &r->ins[i], NULL);
    if (rc != SQLITE_OK) st = rp_sql_fail(s, rc, "cannot prepare an insert");
  }
  hu_buf_free(&sql);
  return st;
}

void rp_finalize_inserts(rp_state *r) {
  for (int i = 0; i < WS_COUNT; i++) {
    sqlite3_finalize(r->ins[i]);
    r->ins[i] = NULL;
  }
}

/* Create the temporary database file beside the output: a name no one can guess (hp_temp_path plus random
 * bits), made with O_CREAT | O_EXCL | O_NOFOLLOW, so a file or link planted there is never followed or
 * replaced (issue #16: a predictable name opened without O_EXCL let a symlink race redirect root's merge).
 * r->tmp is set only once the file is ours: abort removes only what was created here. */
static hp_status create_temp(hp_store *s) {
  rp_state *r = s->impl;
  for (int attempt = 0; attempt < 16; attempt++) {
    char *base = hp_temp_path(s->path);
    uint64_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd)
      rnd = hu_mix64((uint64_t)time(NULL) ^ (uintptr_t)base ^ ((uint64_t)attempt << 56));
    char *name = base ? malloc(strlen(base) + 24) : NULL;
    if (!name) {
      free(base);
      return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
    }
    sprintf(name, "%s.%016" PRIx64, base, rnd);
    free(base);
    int fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) {
      struct stat sb;
      int ok = fstat(fd, &sb) == 0;
      close(fd);
      if (!ok) {
        int e = errno;
        unlink(name);
        free(name);
        return hp_set_error(s, HP_ERR_IO, "cannot create a temporary file beside the output: %s",
                            strerror(e));
      }
      r->tmp = name;
      r->tmp_dev = sb.st_dev;
      r->tmp_ino = sb.st_ino;
      return HP_OK;
    }
    int e = errno;
    if (e != EEXIST) {
      hp_status st = hp_set_error(s, HP_ERR_IO, "cannot create %s: %s", name, strerror(e));
      free(name);
      return st;
    }
    free(name);
  }
  return hp_set_error(s, HP_ERR_IO, "cannot create a temporary file beside the output: every name taken");
}

hp_status rp_create(hp_store *s) {
  rp_state *r = calloc(1, sizeof *r);
  if (!r) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  s->impl = r;
  s->schema_version = strdup(RP_SCHEMA_VERSION);
  if (!s->schema_version) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  hp_status st = create_temp(s);
  if (st != HP_OK) return st;
  int rc = sqlite3_open_v2(r->tmp, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
                           NULL);
  struct stat a;
  if (rc == SQLITE_OK && (stat(r->tmp, &a) != 0 || a.st_dev != r->tmp_dev || a.st_ino != r->tmp_ino))
    return hp_set_error(s, HP_ERR_IO, "cannot create %s: the file was replaced while being opened", r->tmp);
  if (rc != SQLITE_OK)
    return hp_set_error(s, HP_ERR_IO, "cannot create %s: %s", r->tmp,
                        r->db ? sqlite3_errmsg(r->db) : sqlite3_errstr(rc));
  rp_make_uuid(r->guid, r->suffix);
  st = rp_exec_sql(s, "PRAGMA auto_vacuum=NONE; PRAGMA page_size=8192; " RP_WRITE_PRAGMAS,
                   "cannot configure the database");
  if (st != HP_OK) return st;
  hu_buf sql = {0};
  hu_buf_str(&sql, "BEGIN;\n");
  for (int i = 0; i < RT_COUNT; i++) {
    hu_buf_str(&sql, "CREATE TABLE \"rocpd_");
    hu_buf_str(&sql, rp_rt_name[i]);
    hu_buf_str(&sql, r->suffix);
    hu_buf_str(&sql, "\" (id INTEGER PRIMARY KEY, ");
    if (i != RT_METADATA) {
      hu_buf_str(&sql, "guid TEXT NOT NULL DEFAULT '");
      hu_buf_str(&sql, r->guid);
      hu_buf_str(&sql, "', ");
    }
    rp_buf_expand(&sql, rp_rt_cols[i], r->suffix);
    hu_buf_str(&sql, ");\n");
  }
  /* the index the views join on (K.event_id = V.event_id), filled with the table */
  hu_buf_str(&sql, "CREATE INDEX \"rocpd_kernel_dispatch");
  hu_buf_str(&sql, r->suffix);
  rp_buf_expand(&sql, "_event_id\" ON @kernel_dispatch(event_id);\n", r->suffix);
  /* the format's own metadata rows come first */
  rp_buf_expand(&sql,
                "INSERT INTO @metadata(tag, value) VALUES ('schema_version', '" RP_SCHEMA_VERSION
                "'), ('uuid', '",
                r->suffix);
  hu_buf_str(&sql, r->suffix);
  hu_buf_str(&sql, "'), ('guid', '");
  hu_buf_str(&sql, r->guid);
  hu_buf_str(&sql, "'), ('" RP_WRITER_TAG "', 'hubprof ");
  hu_buf_str(&sql, hp_version());
  hu_buf_str(&sql, "');\n");
  if (!hu_buf_cstr(&sql)) {
    hu_buf_free(&sql);
    return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  }
  st = rp_exec_sql(s, (const char *)sql.p, "cannot create the rocpd tables");
  hu_buf_free(&sql);
  if (st == HP_OK) st = rp_prepare_inserts(s);
  if (st != HP_OK) return st;
  r->str_empty = string_id(s, "");
  r->str_dispatch_cat = r->str_empty ? string_id(s, "KERNEL_DISPATCH") : 0;
  if (!r->str_dispatch_cat) return s->first_error;
  rp_bulk_start(s);
  return HP_OK;
}

/* Regions get their rocpd_event rows (which carry the category) once every dispatch event id is known:
 * ids after the largest event id, or before the smallest when that would overflow. */
static hp_status finish_regions(hp_store *s) {
  rp_state *r = s->impl;
  if (!r->regions) return HP_OK;
  hu_buf q = {0};
  rp_buf_expand(&q, "SELECT MIN(id), MAX(id) FROM @event", r->suffix);
  sqlite3_stmt *st = NULL;
  int rc = !hu_buf_cstr(&q) ? SQLITE_NOMEM : sqlite3_prepare_v2(r->db, (const char *)q.p, -1, &st, NULL);
  int64_t lo = 0, hi = 0;
  if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    lo = sqlite3_column_int64(st, 0);
    hi = sqlite3_column_int64(st, 1);
  }
  sqlite3_finalize(st);
  uint64_t n = r->regions;
  int64_t base;
  if (hi <= 0 || (uint64_t)(INT64_MAX - hi) >= n)
    base = hi > 0 ? hi : 0;
  else if (lo > INT64_MIN + 1 && (uint64_t)lo - (uint64_t)INT64_MIN - 1 > n)
    base = lo - (int64_t)n - 1;
  else {
    hu_buf_free(&q);
    return hp_set_error(s, HP_ERR_CONSTRAINT, "no free rocpd_event ids left for %" PRIu64 " regions", n);
  }
  rp_buf_reset(&q);
  char num[32];
  snprintf(num, sizeof num, "%" PRId64, base);
  rp_buf_expand(&q, "INSERT INTO @event(id, category_id) SELECT ", r->suffix);
  hu_buf_str(&q, num);
  rp_buf_expand(&q,
                " + ROW_NUMBER() OVER (ORDER BY id), event_id FROM @region ORDER BY id;\n"
                "UPDATE @region SET event_id = m.eid FROM (SELECT id AS rid, ",
                r->suffix);
  hu_buf_str(&q, num);
  rp_buf_expand(&q,
                " + ROW_NUMBER() OVER (ORDER BY id) AS eid FROM @region) AS m WHERE m.rid = @region.id;\n",
                r->suffix);
  hp_status e = !hu_buf_cstr(&q) ? hp_set_error(s, HP_ERR_NOMEM, "out of memory")
                                 : rp_exec_sql(s, (const char *)q.p, "cannot write region events");
  hu_buf_free(&q);
  return e;
}

hp_status rp_commit(hp_store *s) {
  rp_state *r = s->impl;
  hu_buf q = {0};
  hp_status st = rp_bulk_flush(s);
  if (st == HP_OK && r->dispatches) { /* one rocpd_event per dispatch, with the dispatch's id (those built
                                       * as pages have theirs) */
    char cat[32];
    snprintf(cat, sizeof cat, "%" PRId64, r->str_dispatch_cat);
    rp_buf_expand(&q, "INSERT OR IGNORE INTO @event(id, category_id) SELECT id, ", r->suffix);
    hu_buf_str(&q, cat);
    rp_buf_expand(&q, " FROM @kernel_dispatch ORDER BY id", r->suffix);
    st = !hu_buf_cstr(&q) ? hp_set_error(s, HP_ERR_NOMEM, "out of memory")
                          : rp_exec_sql(s, (const char *)q.p, "cannot write dispatch events");
    rp_buf_reset(&q);
  }
  if (st == HP_OK) st = finish_regions(s);
  if (st == HP_OK) { /* PC samples lie on their thread's track: one rocpd_track per sampled thread */
    rp_buf_expand(&q,
                  "INSERT OR IGNORE INTO @track(id, nid, pid, tid, extdata) SELECT T.id, T.nid, T.pid, T.id, "
                  "'{\"hubprof\":\"pc_sample\"}' FROM @info_thread T WHERE T.id IN (SELECT DISTINCT track_id "
                  "FROM @sample)",
                  r->suffix);
    st = !hu_buf_cstr(&q) ? hp_set_error(s, HP_ERR_NOMEM, "out of memory")
                          : rp_exec_sql(s, (const char *)q.p, "cannot write sample tracks");
    rp_buf_reset(&q);
  }
  if (st != HP_OK) {
    hu_buf_free(&q);
    return st;
  }
  unsigned need = r->need0;
  /* ROCm's pmc_info joins a counter's agent and process: a counter of no particular agent names the first
   * agent in rocpd (extdata.agent_id = 0 keeps the hub's value) and every counter the first process */
  if (r->counters_no_agent)
    rp_buf_expand(
        &q,
        "UPDATE @info_pmc SET agent_id = a.id, nid = a.nid, target_arch = a.type, extdata = "
        "json_set(extdata, '$.agent_id', 0) FROM (SELECT id, nid, type FROM @info_agent WHERE id <> 0 "
        "ORDER BY id LIMIT 1) AS a WHERE @info_pmc.agent_id = 0;\n",
        r->suffix);
  rp_buf_expand(
      &q,
      "UPDATE @info_pmc SET pid = p.id FROM (SELECT id FROM @info_process WHERE id <> 0 ORDER BY id "
      "LIMIT 1) AS p WHERE @info_pmc.pid = 0;\n",
      r->suffix);
  /* placeholder rows with id 0 so that ROCm's INNER JOIN views show rows whose references are "none" */
  static const struct {
    hp_table t;
    const char *sql;
  } ph[] = {
      {HP_TABLE_NODE, "INSERT OR IGNORE INTO @info_node(id, hash, machine_id) VALUES (0, 0, '')"},
      {HP_TABLE_PROCESS,
       "INSERT OR IGNORE INTO @info_process(id, nid, pid, command, extdata) VALUES (0, 0, 0, '', "
       "'" RP_PLACEHOLDER "')"},
      {HP_TABLE_THREAD,
       "INSERT OR IGNORE INTO @info_thread(id, nid, pid, tid, name, extdata) VALUES (0, 0, 0, 0, "
       "'', '" RP_PLACEHOLDER "')"},
      {HP_TABLE_AGENT,
       "INSERT OR IGNORE INTO @info_agent(id, nid, pid, name, extdata) VALUES (0, 0, 0, '', '" RP_PLACEHOLDER
       "')"},
      {HP_TABLE_QUEUE,
       "INSERT OR IGNORE INTO @info_queue(id, nid, pid, name, extdata) VALUES (0, 0, 0, '', '" RP_PLACEHOLDER
       "')"},
      {HP_TABLE_KERNEL_SYMBOL,
       "INSERT OR IGNORE INTO @info_kernel_symbol(id, nid, pid, code_object_id, kernel_name, "
       "display_name, extdata) VALUES (0, 0, 0, 0, '', '', '" RP_PLACEHOLDER "')"},
  };
  for (size_t i = 0; i < sizeof ph / sizeof ph[0]; i++) {
    if (!(need & NEED0(ph[i].t))) continue;
    rp_buf_expand(&q, ph[i].sql, r->suffix);
    hu_buf_str(&q, ";\n");
  }
  /* base-name views, the data and summary views */
  for (int i = 0; i < RT_COUNT; i++) {
    hu_buf_str(&q, "CREATE VIEW \"rocpd_");
    hu_buf_str(&q, rp_rt_name[i]);
    hu_buf_str(&q, "\" AS SELECT * FROM \"rocpd_");
    hu_buf_str(&q, rp_rt_name[i]);
    hu_buf_str(&q, r->suffix);
    hu_buf_str(&q, "\";\n");
  }
  hu_buf_str(&q, rp_views_sql);
  hu_buf_str(&q, "COMMIT;\n");
  st = !hu_buf_cstr(&q) ? hp_set_error(s, HP_ERR_NOMEM, "out of memory")
                        : rp_exec_sql(s, (const char *)q.p, "cannot finish the database");
  hu_buf_free(&q);
  if (st != HP_OK) return st;
  for (int i = 0; i < WS_COUNT; i++) {
    sqlite3_finalize(r->ins[i]);
    r->ins[i] = NULL;
  }
  int rc = sqlite3_close(r->db);
  if (rc != SQLITE_OK) {
    sqlite3_close_v2(r->db);
    r->db = NULL;
    return hp_set_error(s, HP_ERR_IO, "cannot close %s: %s", r->tmp, sqlite3_errstr(rc));
  }
  r->db = NULL;
  /* synchronous=OFF wrote without syncing: make the file durable before it takes the final name */
  int fd = open(r->tmp, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fsync(fd) != 0) {
    int e = errno;
    if (fd >= 0) close(fd);
    return hp_set_error(s, HP_ERR_IO, "cannot sync %s: %s", r->tmp, strerror(e));
  }
  close(fd);
  if (rename(r->tmp, s->path) != 0)
    return hp_set_error(s, HP_ERR_IO, "cannot rename %s: %s", r->tmp, strerror(errno));
  /* the new name is durable once the folder is synced */
  const char *slash = strrchr(s->path, '/');
  char *dir = slash ? strndup(s->path, slash == s->path ? 1 : (size_t)(slash - s->path)) : strdup(".");
  int synced = dir && hu_fsync_dir(dir) == 0;
  int e = errno;
  free(dir);
  if (!synced) return hp_set_error(s, HP_ERR_IO, "cannot sync the folder of %s: %s", s->path, strerror(e));
  rp_free_state(r);
  s->impl = NULL;
  return HP_OK;
}

void rp_abort(hp_store *s) {
  rp_state *r = s->impl;
  if (!r) return;
  for (int i = 0; i < WS_COUNT; i++) {
    sqlite3_finalize(r->ins[i]);
    r->ins[i] = NULL;
  }
  if (r->db) sqlite3_close_v2(r->db);
  r->db = NULL;
  if (r->tmp) unlink(r->tmp);
  rp_free_state(r);
  s->impl = NULL;
}
