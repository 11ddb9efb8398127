/* rocpd format, writer: a hub store created as one rocpd SQLite file: rows mapped to rocpd tables through
 * prepared INSERTs (or the page writer), placeholder rows, region events, views; the temporary file and the
 * atomic commit. Mapping: docs/formats/rocpd.md. */
/* SPDX-License-Identifier: MIT */
#include "rocpd_internal.h"

#include "../common/hu_hash.h"
#include "../common/hu_io.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
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
  case HP_TABLE_DISPATCH: {
    const hp_dispatch *d = row; /* its missing references were noted in write_mapped */
    sqlite3_bind_int64(st, p++, rp_proc_node(r, d->process_id));
    sqlite3_bind_int64(st, p++, 0);            /* stream_id */
    sqlite3_bind_int64(st, p++, r->str_empty); /* region_name_id */
    break;
  }
  case HP_TABLE_COUNTER_VALUE: sqlite3_bind_int64(st, p++, ++r->next_pmc); break;
  case HP_TABLE_REGION: {
    const hp_region *g = row;
    if (!g->process_id) r->need0 |= NEED0(HP_TABLE_PROCESS);
    if (!g->thread_id) r->need0 |= NEED0(HP_TABLE_THREAD);
    sqlite3_bind_int64(st, p++, rp_proc_node(r, g->process_id));
    break;
  }
  case HP_TABLE_MEMORY_COPY: {
    const hp_memory_copy *mc = row;
    if (!mc->process_id) r->need0 |= NEED0(HP_TABLE_PROCESS);
    sqlite3_bind_int64(st, p++, rp_proc_node(r, mc->process_id));
    sqlite3_bind_int64(st, p++, 0); /* stream_id */
    break;
  }
  default: break;
  }
  return p;
oom:
  hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  return -1;
}

/* ---- rows generated from the schema description (rp_write_map), compiled once ---- */

typedef struct wop {
  uint32_t off;  /* of the value in the row */
  uint8_t type;  /* hp_col_type */
  char kind;     /* 'b' bound, 'n' bound with 0 as NULL, 's' bound as a rocpd_string id, 'r' a real (exact
                    bits of -0.0 and NaN in extdata too), 'e' extdata, 0 none */
  int def_col;   /* 'e': the column whose value is the default, -1 for def */
  int64_t def;   /* 'e': the default, left out */
  char key[48];  /* 'e', 'r': the key */
  char qkey[52]; /* the key as JSON writes it before a value: "key": */
  uint8_t qlen;
} wop;

static wop g_wops[HP_TABLE_COUNT][RP_MAX_COLS];
static int g_wext[HP_TABLE_COUNT];                   /* extdata keys of the table ('e' and 'r' columns) */
static uint8_t g_wexti[HP_TABLE_COUNT][RP_MAX_COLS]; /* ... their columns, in order */
/* Every extdata key of the table is an integer and bind_extra adds none: ext_fast makes its text. */
static int g_wfast[HP_TABLE_COUNT];
static pthread_once_t g_wops_once = PTHREAD_ONCE_INIT;
/* ext_fast's copy of a g_wfast table's extdata keys, in order: what it reads per key, side by side */
typedef struct xop {
  uint32_t off;    /* of the value in the row */
  int32_t def_off; /* of the column holding the default, or -1: def */
  uint8_t width;   /* of the value: 4 (signed: I32) or 8 */
  uint8_t sgn;
  uint8_t def_width, def_sgn;
  uint8_t real; /* 'r': written only for -0.0 and NaN */
  uint8_t zero; /* 8 bytes, left out when 0 (most keys): ext_fast's short way */
  uint8_t qlen;
  int64_t def;
  const char *qkey;
} xop;
static xop g_xops[HP_TABLE_COUNT][RP_MAX_COLS];

/* The key's "key": text, written once (keys are plain names: nothing to escape). */
static void quote_key(wop *o) {
  int n = snprintf(o->qkey, sizeof o->qkey, "\"%s\":", o->key);
  assert(n > 0 && (size_t)n < sizeof o->qkey && !strpbrk(o->key, "\"\\"));
  o->qlen = (uint8_t)n;
}

static void compile_wops(void) {
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    if (!rp_write_map[t][0]) continue;
    assert(d->ncolumns <= RP_MAX_COLS);
    for (size_t i = 0; i < d->ncolumns; i++) {
      const char *m = rp_write_map[t][i];
      wop *o = &g_wops[t][i];
      assert(m); /* every column of a mapped table has its place (schema.c and rp_write_map in step) */
      o->off = (uint32_t)d->columns[i].offset;
      o->type = (uint8_t)d->columns[i].type;
      o->def_col = -1;
      o->kind = *m == '$' ? 'e' : *m == '?' ? 'n' : *m == '#' ? 's' : *m == '%' ? 'r' : *m ? 'b' : 0;
      if (o->kind == 'r') {
        assert(o->type == HP_COL_F64);
        snprintf(o->key, sizeof o->key, "%.*s_bits", (int)(sizeof o->key - 6), m + 1);
        quote_key(o);
        g_wexti[t][g_wext[t]++] = (uint8_t)i;
      }
      if (o->kind != 'e') continue;
      g_wexti[t][g_wext[t]++] = (uint8_t)i;
      size_t kn = strcspn(m + 1, "=");
      assert(kn < sizeof o->key);
      snprintf(o->key, sizeof o->key, "%.*s", (int)kn, m + 1);
      quote_key(o);
      const char *dv = m[1 + kn] == '=' ? m + 2 + kn : NULL;
      if (dv && *dv == '@') {
        for (size_t j = 0; j < d->ncolumns; j++)
          if (strcmp(d->columns[j].name, dv + 1) == 0) o->def_col = (int)j;
        assert(o->def_col >= 0);
      } else if (dv) {
        o->def = strtoll(dv, NULL, 10);
      }
    }
    g_wfast[t] = t != HP_TABLE_AGENT && t != HP_TABLE_KERNEL_SYMBOL; /* their derived keys go to extdata */
    for (int k = 0; k < g_wext[t]; k++)
      g_wfast[t] &= g_wops[t][g_wexti[t][k]].type != HP_COL_STR;
    for (int k = 0; g_wfast[t] && k < g_wext[t]; k++) {
      const wop *o = &g_wops[t][g_wexti[t][k]];
      const wop *dc = o->def_col >= 0 ? &g_wops[t][o->def_col] : NULL;
      g_xops[t][k] =
          (xop){.off = o->off,
                .def_off = dc ? (int32_t)dc->off : -1,
                .width = o->type == HP_COL_U32 || o->type == HP_COL_I32 ? 4 : 8,
                .sgn = o->type == HP_COL_I32,
                .def_width = dc && (dc->type == HP_COL_U32 || dc->type == HP_COL_I32) ? 4 : 8,
                .def_sgn = dc && dc->type == HP_COL_I32,
                .real = o->kind == 'r',
                .zero = o->kind != 'r' && !dc && !o->def && o->type != HP_COL_U32 && o->type != HP_COL_I32,
                .qlen = o->qlen,
                .def = o->def,
                .qkey = o->qkey};
    }
  }
}

/* A column's value: a string in *str, else the number (U64: its bits) in *v. */
static inline void col_value(const wop *o, const void *row, int64_t *v, const char **str) {
  const char *at = (const char *)row + o->off;
  *str = NULL;
  *v = 0;
  switch (o->type) {
  case HP_COL_STR: memcpy(str, at, sizeof *str); break;
  case HP_COL_I32: {
    int32_t x;
    memcpy(&x, at, sizeof x);
    *v = x;
    break;
  }
  case HP_COL_U32: {
    uint32_t x;
    memcpy(&x, at, sizeof x);
    *v = x;
    break;
  }
  default: memcpy(v, at, sizeof *v); break; /* I64, U64 (its bits) */
  }
}

/* A value of width 4 (zero- or sign-extended) or 8 (its bits) at row + off. */
static inline int64_t load_at(const void *row, uint32_t off, uint8_t width, uint8_t sgn) {
  const char *at = (const char *)row + off;
  if (width == 8) {
    int64_t v;
    memcpy(&v, at, sizeof v);
    return v;
  }
  uint32_t u;
  memcpy(&u, at, sizeof u);
  return sgn ? (int64_t)(int32_t)u : (int64_t)u;
}

#define EXT_FAST_MAX (2 + RP_MAX_COLS * (1 + 52 + 20))

/* The extdata of a row of a g_wfast table into buf (EXT_FAST_MAX bytes), byte for byte as mapped_ext would
 * write it through rp_jw, without the general writer: dispatches and counter values make one per row.
 * Returns its length. */
static size_t ext_fast(hp_table t, const void *row, char *buf) {
  char *p = buf;
  *p++ = '{';
  const xop *x = g_xops[t];
  for (int k = 0; k < g_wext[t]; k++, x++) {
    int64_t v;
    if (x->zero) { /* the common key: 8 bytes, 0 by default */
      memcpy(&v, (const char *)row + x->off, sizeof v);
      if (!v) continue;
    } else {
      v = load_at(row, x->off, x->width, x->sgn);
      if (x->real) { /* -0.0 and NaN keep their exact bits */
        double f;
        memcpy(&f, &v, sizeof f);
        if (!isnan(f) && !(f == 0 && signbit(f))) continue;
      } else if (v ==
                 (x->def_off >= 0 ? load_at(row, (uint32_t)x->def_off, x->def_width, x->def_sgn) : x->def)) {
        continue;
      }
    }
    if (p[-1] != '{') *p++ = ',';
    /* the whole key buffer, a fixed size (a few vector moves; a copy of qlen bytes became `rep movsq`, half
     * of this function's time): each key has 1 + 52 + 20 bytes of buf, the bytes past qlen are written over
     */
    memcpy(p, x->qkey, sizeof((wop *)0)->qkey);
    p += x->qlen;
    p += rp_i64_dec(p, v);
  }
  *p++ = '}'; /* "{}" when every key is at its default, as rp_jw_end */
  *p = 0;
  return (size_t)(p - buf);
}

/* The extdata keys of a mapped row into w (keys at their default left out). */
static void mapped_ext(hp_table t, const void *row, jw *w) {
  for (int k = 0; k < g_wext[t]; k++) {
    const wop *o = &g_wops[t][g_wexti[t][k]];
    if (o->kind == 'r') { /* SQLite stores -0.0 as 0 and NaN as NULL: those keep their exact bits here */
      double x;
      memcpy(&x, (const char *)row + o->off, sizeof x);
      if (isnan(x) || (x == 0 && signbit(x))) {
        uint64_t bits;
        memcpy(&bits, &x, sizeof bits);
        rp_jw_u64(w, o->key, bits);
      }
      continue;
    }
    if (o->kind != 'e') continue;
    int64_t v, def = o->def;
    const char *str;
    col_value(o, row, &v, &str);
    if (o->def_col >= 0) {
      const char *ds;
      col_value(&g_wops[t][o->def_col], row, &def, &ds);
    }
    if (str) {
      if (*str) rp_jw_str(w, o->key, str);
    } else if (v != def) {
      rp_jw_i64(w, o->key, v);
    }
  }
}

/* Write a row of a table mapped column by column (rp_write_map), driven by the hub's schema description:
 * the columns bound in map order, then the derived ones (bind_extra), then extdata. Dispatches go to the
 * page writer instead when it is on (their extdata made the same way). */
static hp_status write_mapped(hp_store *s, hp_table t, const void *row) {
  rp_state *r = s->impl;
  pthread_once(&g_wops_once, compile_wops);
  sqlite3_stmt *st = r->ins[t];
  const hp_table_desc *d = hp_table_describe(t);
  jw w = {0};
  char fast[EXT_FAST_MAX];
  const char *ext = NULL; /* the row's extdata text, when the table has any */
  size_t extlen = 0;
  if (g_wfast[t]) {
    if (g_wext[t]) ext = fast, extlen = ext_fast(t, row, fast);
  } else {
    rp_jw_begin(&w, &r->js);
    if (g_wext[t]) mapped_ext(t, row, &w);
  }
  if (t == HP_TABLE_DISPATCH) { /* the hot path: the page writer takes the row when it is on */
    const hp_dispatch *dp = row;
    if (!dp->process_id) r->need0 |= NEED0(HP_TABLE_PROCESS);
    if (!dp->thread_id) r->need0 |= NEED0(HP_TABLE_THREAD);
    if (!dp->agent_id) r->need0 |= NEED0(HP_TABLE_AGENT);
    if (!dp->queue_id) r->need0 |= NEED0(HP_TABLE_QUEUE);
    if (!dp->kernel_id) r->need0 |= NEED0(HP_TABLE_KERNEL_SYMBOL);
    if (r->bulk_on) {
      const btb *kd = &r->bk.t[BT_DISPATCH];
      if (!kd->rows || (int64_t)dp->id > kd->last) return rp_bulk_dispatch(s, dp, ext, extlen);
      /* out of id order: the pages built so far go in, this and later rows through SQLite */
      hp_status e = rp_bulk_flush(s);
      if (e != HP_OK) return e;
      st = r->ins[t];
    }
    r->dispatches++; /* its rocpd_event row is written at commit, in one statement */
  } else if (t == HP_TABLE_COUNTER_VALUE && r->bulk_on) {
    return rp_bulk_counter_value(s, row, ext);
  }
  int p = 1;
  for (size_t i = 0; i < d->ncolumns; i++) {
    const wop *o = &g_wops[t][i];
    if (o->kind == 0 || o->kind == 'e') continue;
    int64_t v;
    const char *str;
    col_value(o, row, &v, &str);
    if (o->kind == 'r') {
      double x;
      memcpy(&x, (const char *)row + o->off, sizeof x);
      if (isnan(x))
        sqlite3_bind_null(st, p++);
      else
        sqlite3_bind_double(st, p++, x == 0 ? 0.0 : x);
    } else if (o->kind == 's') { /* a string stored once in rocpd_string, the row holding its id */
      int64_t id = string_id(s, str ? str : "");
      if (!id) return s->first_error;
      sqlite3_bind_int64(st, p++, id);
    } else if (str && o->kind == 'n' && !*str) { /* unknown text: NULL */
      sqlite3_bind_null(st, p++);
    } else if (str) {
      sqlite3_bind_text(st, p++, str, -1, SQLITE_STATIC);
    } else if (o->kind == 'n' && v == 0) { /* unknown (a process that never closed its log): NULL, not 0 */
      sqlite3_bind_null(st, p++);
    } else {
      sqlite3_bind_int64(st, p++, v);
    }
  }
  p = bind_extra(s, t, row, st, p, &w);
  if (p < 0) return s->first_error;
  if (g_wext[t] || t == HP_TABLE_AGENT || t == HP_TABLE_KERNEL_SYMBOL)
    sqlite3_bind_text(st, p, g_wfast[t] ? ext : rp_jw_end(&w), -1, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  hp_status e = HP_OK;
  if (rc != SQLITE_DONE) { /* the message is made only when it is needed: not per row */
    char what[64];
    snprintf(what, sizeof what, "cannot write a %s row", d->name);
    e = rp_sql_fail(s, rc, what);
  }
  if (e == HP_OK && t == HP_TABLE_REGION) r->regions++;
  if (e == HP_OK && t == HP_TABLE_PC_SAMPLE) r->samples++;
  return e;
}

hp_status rp_write(hp_store *s, hp_table t, const void *row) {
  rp_state *r = s->impl;
  if ((unsigned)t < HP_TABLE_COUNT && rp_write_map[t][0]) return write_mapped(s, t, row);
  sqlite3_stmt *st = r->ins[t];
  switch (t) {
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

/* Rows of `table` (@region, @sample) get their rocpd_event rows once every dispatch event id is known: ids
 * after the largest event id, or before the smallest when that would overflow; `cat` is the events'
 * category: a string id, or the name of the table's column that holds it (regions: event_id until now). */
static hp_status give_events(hp_store *s, const char *table, uint64_t n, const char *cat, const char *what) {
  rp_state *r = s->impl;
  if (!n) return HP_OK;
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
  int64_t base;
  if (hi <= 0 || (uint64_t)(INT64_MAX - hi) >= n)
    base = hi > 0 ? hi : 0;
  else if (lo > INT64_MIN + 1 && (uint64_t)lo - (uint64_t)INT64_MIN - 1 > n)
    base = lo - (int64_t)n - 1;
  else {
    hu_buf_free(&q);
    return hp_set_error(s, HP_ERR_CONSTRAINT, "no free rocpd_event ids left for %" PRIu64 " %s", n, what);
  }
  rp_buf_reset(&q);
  char num[32];
  snprintf(num, sizeof num, "%" PRId64, base);
  rp_buf_expand(&q, "INSERT INTO @event(id, category_id) SELECT ", r->suffix);
  hu_buf_str(&q, num);
  hu_buf_str(&q, " + ROW_NUMBER() OVER (ORDER BY id), ");
  hu_buf_str(&q, cat);
  rp_buf_expand(&q, " FROM ", r->suffix);
  rp_buf_expand(&q, table, r->suffix);
  rp_buf_expand(&q, " ORDER BY id;\nUPDATE ", r->suffix);
  rp_buf_expand(&q, table, r->suffix);
  hu_buf_str(&q, " SET event_id = m.eid FROM (SELECT id AS rid, ");
  hu_buf_str(&q, num);
  rp_buf_expand(&q, " + ROW_NUMBER() OVER (ORDER BY id) AS eid FROM ", r->suffix);
  rp_buf_expand(&q, table, r->suffix);
  rp_buf_expand(&q, ") AS m WHERE m.rid = ", r->suffix);
  rp_buf_expand(&q, table, r->suffix);
  hu_buf_str(&q, ".id;\n");
  char err[64];
  snprintf(err, sizeof err, "cannot write %s events", what);
  hp_status e = !hu_buf_cstr(&q) ? hp_set_error(s, HP_ERR_NOMEM, "out of memory")
                                 : rp_exec_sql(s, (const char *)q.p, err);
  hu_buf_free(&q);
  return e;
}

/* Regions: their category waits in event_id. PC samples (rocpd_sample): an event each too, of category
 * "PC_SAMPLE", so that ROCm's `samples` view (which joins rocpd_event on event_id) lists them. */
static hp_status finish_regions(hp_store *s) {
  rp_state *r = s->impl;
  hp_status e = give_events(s, "@region", r->regions, "event_id", "regions");
  if (e != HP_OK || !r->samples) return e;
  int64_t cat = string_id(s, "PC_SAMPLE");
  if (!cat) return s->first_error;
  char num[32];
  snprintf(num, sizeof num, "%" PRId64, cat);
  return give_events(s, "@sample", r->samples, num, "samples");
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
  /* the new name is made durable by the hub (hp_store_commit syncs the folder) */
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
