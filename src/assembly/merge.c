/* Merge of N stores into one through the public row API: ids remapped, small tables de-duplicated,
 * big tables (dispatch, counter_value, region) streamed without a map per row so memory stays bounded
 * (dispatches renumbered in read order, regions shifted by an offset). This thread reads and remaps while
 * a writer thread writes the output, batches of rows in between.
 * Sections: hash maps · per-table merge rules · the write pipeline · the merge loop. Knows no format. */
/* SPDX-License-Identifier: MIT */
#include "merge_internal.h"

#include "../common/hu_hash.h"
#include "../common/hu_map.h"

#include <assert.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- hash maps: u64 → u64 (ids of one input) and bytes → u64 (de-duplication keys) ---- */
/* A failed write to the output without a message of its own (a log being written sets none on its append
 * path) gets one naming the file, the table and the reason; st returned. */
static hp_status named(hp_store *out, hp_table t, hp_status st) {
  if (st != HP_OK && !hp_store_error(out)[0]) {
    int e = hp_store_write_errno(out);
    hp_set_error(out, st, "cannot write %s rows: %s", hp_table_describe(t)->name,
                 e ? strerror(e) : hp_status_str(st));
  }
  return st;
}
/* Write one row to the output (named on failure). */
static hp_status write_named(hp_store *out, hp_table t, const void *row) {
  return named(out, t, hp_write(out, t, row));
}

/* id -> id maps of the merge (key 0 is never stored: ids are never 0; 0 answers "absent") */
typedef hu_idmap idmap;
static int idmap_put(idmap *m, uint64_t k, uint64_t v) { return hu_idmap_put(m, k, v); }
static uint64_t idmap_get(const idmap *m, uint64_t k) {
  uint64_t v = 0;
  return hu_idmap_get(m, k, &v) ? v : 0;
}
static void idmap_clear(idmap *m) { hu_idmap_free(m); }

typedef struct keymap {
  char **keys; /* each: 8-byte length then bytes */
  uint64_t *vals;
  size_t cap, n;
} keymap;

static size_t key_len(const char *k) {
  size_t n;
  memcpy(&n, k, sizeof n);
  return n;
}

/* Find key (bytes k, n); returns its slot (empty or matching). */
static size_t keymap_slot(const keymap *m, const char *k, size_t n) {
  size_t j = hu_hash_bytes(k, n) & (m->cap - 1);
  while (m->keys[j] && !(key_len(m->keys[j]) == n && memcmp(m->keys[j] + sizeof n, k, n) == 0))
    j = (j + 1) & (m->cap - 1);
  return j;
}

static uint64_t keymap_get(const keymap *m, const char *k, size_t n) {
  if (!m->cap) return 0;
  size_t j = keymap_slot(m, k, n);
  return m->keys[j] ? m->vals[j] : 0;
}

static int keymap_put(keymap *m, const char *k, size_t n, uint64_t v) {
  if (2 * (m->n + 1) > m->cap) {
    size_t nc = m->cap ? m->cap * 2 : 64;
    keymap g = {calloc(nc, sizeof(char *)), calloc(nc, sizeof(uint64_t)), nc, 0};
    if (!g.keys || !g.vals) {
      free(g.keys);
      free(g.vals);
      return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->keys[i]) continue;
      size_t j = keymap_slot(&g, m->keys[i] + sizeof(size_t), key_len(m->keys[i]));
      g.keys[j] = m->keys[i];
      g.vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    g.n = m->n;
    *m = g;
  }
  size_t j = keymap_slot(m, k, n);
  if (!m->keys[j]) {
    char *copy = malloc(sizeof n + n);
    if (!copy) return -1;
    memcpy(copy, &n, sizeof n);
    memcpy(copy + sizeof n, k, n);
    m->keys[j] = copy;
    m->n++;
  }
  m->vals[j] = v;
  return 0;
}

static void keymap_clear(keymap *m) {
  for (size_t i = 0; i < m->cap; i++)
    free(m->keys[i]);
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

/* A growable byte buffer for building keys. */
typedef struct buf {
  char *p;
  size_t n, cap;
} buf;

static int buf_add(buf *b, const void *d, size_t n) {
  if (b->n + n > b->cap) {
    size_t nc = b->cap ? b->cap * 2 : 256;
    while (nc < b->n + n)
      nc *= 2;
    char *np = realloc(b->p, nc);
    if (!np) return -1;
    b->p = np;
    b->cap = nc;
  }
  memcpy(b->p + b->n, d, n);
  b->n += n;
  return 0;
}

/* ---- per-table merge rules ---- */
/* Columns that identify a row for de-duplication, NULL-terminated; empty = never de-duplicated.
 * Processes stay apart unless node, pid and start time are all equal (the same process seen twice). */
static const char *const dedup_node[] = {"hostname", "machine_id", NULL};
static const char *const dedup_process[] = {"node_id", "pid", "start_ns", NULL};
static const char *const dedup_thread[] = {"process_id", "tid", NULL};
static const char *const dedup_agent[] = {"node_id", "type", "device_index", "vendor", "name", NULL};
static const char *const dedup_code_object[] = {"process_id", "agent_id", "uri", "load_base", NULL};
static const char *const dedup_kernel[] = {"name",       "display_name", "private_size",
                                           "group_size", "program_hash", NULL};
static const char *const dedup_counter[] = {"agent_id", "name", NULL};
static const char *const dedup_metadata[] = {"key", NULL};
/* a ceiling merged twice (the same measurement in two inputs) is kept once */
static const char *const dedup_ceiling[] = {"agent_id", "name", "measured_ns", "method", NULL};
static const char *const no_dedup[] = {NULL};

static const char *const *const dedup_cols[HP_TABLE_COUNT] = {
    [HP_TABLE_NODE] = dedup_node,
    [HP_TABLE_PROCESS] = dedup_process,
    [HP_TABLE_THREAD] = dedup_thread,
    [HP_TABLE_AGENT] = dedup_agent,
    [HP_TABLE_QUEUE] = no_dedup,
    [HP_TABLE_CODE_OBJECT] = dedup_code_object,
    [HP_TABLE_KERNEL_SYMBOL] = dedup_kernel,
    [HP_TABLE_DISPATCH] = no_dedup,
    [HP_TABLE_COUNTER_INFO] = dedup_counter,
    [HP_TABLE_COUNTER_VALUE] = no_dedup,
    [HP_TABLE_REGION] = no_dedup,
    [HP_TABLE_METADATA] = dedup_metadata,
    [HP_TABLE_PC_SAMPLE] = no_dedup,
    [HP_TABLE_COUNTER_SAMPLE] = no_dedup,
    [HP_TABLE_CODE_BLOB] = no_dedup, /* streamed; chunks of a hash already written are dropped (merge_row) */
    [HP_TABLE_MEMORY_COPY] = no_dedup,
    [HP_TABLE_CEILING] = dedup_ceiling,
};

/* Big tables: no map per row, so memory does not grow with them. Region ids are shifted by an offset per
 * input; dispatch ids are renumbered (below). */
static int is_streamed(hp_table t) { return hp_table_streamed(t); }

/* Dispatch ids are renumbered in the order rows are read, so the output gets its dispatches in increasing
 * id order whatever the order of an input (a collector's threads take ids in blocks of 64 and their rows
 * interleave in the log): formats that build tables in id order (rocpd) keep their fast path. An input's
 * ids map to output ids through runs of consecutive ids, few in practice (one per block of rows); an input
 * with more than DRUN_MAX runs has the rest of its ids shifted by an offset instead, so memory stays
 * bounded whatever the order. */
#define DRUN_MAX (1u << 20)
typedef struct drun {
  uint64_t in_lo, in_hi, out_lo;
} drun;

typedef struct dmap {
  drun *r;
  size_t n, cap, hint;
  int sorted;
  int shifting; /* past DRUN_MAX runs: output id = input id + shift */
  uint64_t shift;
} dmap;

static int drun_cmp(const void *a, const void *b) {
  const drun *x = a, *y = b;
  return x->in_lo < y->in_lo ? -1 : x->in_lo > y->in_lo;
}

/* Output id of the next dispatch row of this input, whose input id is `in`; 0 when out of memory. */
static uint64_t dmap_add(dmap *d, uint64_t in, uint64_t *max_id) {
  if (d->shifting) {
    uint64_t out = in + d->shift;
    if (out > *max_id) *max_id = out;
    return out;
  }
  uint64_t out = ++*max_id;
  drun *last = d->n ? &d->r[d->n - 1] : NULL;
  if (last && in == last->in_hi + 1 && out == last->out_lo + (last->in_hi - last->in_lo) + 1) {
    last->in_hi = in;
    return out;
  }
  if (d->n == DRUN_MAX) { /* too many runs: shift the rest, above every id given so far */
    d->shifting = 1;
    d->shift = *max_id; /* the id just taken, so every shifted id is above the ids given so far */
    --*max_id;
    return dmap_add(d, in, max_id);
  }
  if (d->n == d->cap) {
    size_t cap = d->cap ? 2 * d->cap : 64;
    drun *r = realloc(d->r, cap * sizeof *r);
    if (!r) return 0;
    d->r = r;
    d->cap = cap;
  }
  assert(d->n < d->cap && d->n < DRUN_MAX);
  d->r[d->n++] = (drun){in, in, out};
  d->sorted = 0;
  return out;
}

/* Output id of input dispatch `in`; 0 when the input has no such dispatch. */
static uint64_t dmap_get(dmap *d, uint64_t in) {
  if (!in) return 0;
  if (!d->sorted) {
    qsort(d->r, d->n, sizeof *d->r, drun_cmp);
    d->sorted = 1;
    d->hint = 0;
  }
  const drun *r = d->r;
  size_t lo = 0, hi = d->n;
  if (d->hint < d->n && r[d->hint].in_lo <= in) lo = d->hint; /* rows mostly ask in order */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r[mid].in_hi < in)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < d->n && r[lo].in_lo <= in && in <= r[lo].in_hi) {
    d->hint = lo;
    return r[lo].out_lo + (in - r[lo].in_lo);
  }
  return d->shifting ? in + d->shift : 0;
}

static void dmap_reset(dmap *d) {
  d->n = 0;
  d->hint = 0;
  d->sorted = 1;
  d->shifting = 0;
  d->shift = 0;
}

/* ---- the write pipeline: this thread reads and remaps, a writer thread writes, batches in between ---- */
#define MQ_ROWS 1024 /* rows per batch */
#define MQ_N 4       /* batches: the writer writes one while this thread fills another */

typedef hp_anyrow anyrow;

typedef struct mbatch {
  size_t n;
  unsigned char table[MQ_ROWS];
  anyrow rows[MQ_ROWS]; /* strings as offsets into `strings` until the writer takes the batch */
  buf strings;
} mbatch;

typedef struct mpipe {
  pthread_t thr;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  mbatch *b[MQ_N];
  int full[MQ_N]; /* handed to the writer */
  int fill, take; /* batch being filled; next batch the writer takes */
  int quit;
  hp_status werr; /* the writer's first failure: later batches are dropped */
  hp_store *out;
  hp_merge_stats *stats;
} mpipe;

typedef struct merger {
  hp_store *out;
  hp_merge_stats *stats;
  mpipe *pipe;              /* NULL: rows are written here */
  char perr[HP_ERRMSG_MAX]; /* this thread's error message, given to the output once the writer stopped */
  hp_status perr_st;
  idmap ids[HP_TABLE_COUNT];        /* this input's id → output id (small tables) */
  keymap dedup[HP_TABLE_COUNT];     /* identity key → output id (all inputs) */
  uint64_t next_id[HP_TABLE_COUNT]; /* next output id for small tables */
  uint64_t base[HP_TABLE_COUNT];    /* id offset of this input for streamed tables */
  uint64_t max_id[HP_TABLE_COUNT];  /* highest output id written for streamed tables */
  dmap disp;                        /* this input's dispatch ids → output ids */
  buf key;
  idmap dup_proc; /* this input's processes already merged from an earlier input (the same profile twice) */
  uint64_t proc_base;   /* output processes that existed before this input */
  char *mux_incomplete; /* multiplex_incomplete so far: the lists of every input are joined */
  char **meta;          /* key, value, key, value … of the metadata written (few rows) */
  size_t nmeta;
  hp_merge_hooks *hooks; /* the assembly's transforms and progress, or NULL */
  uint64_t done, total;  /* rows read, rows of every input (progress) */
  /* this input's regions of the processes in dup_proc (read_dup_regions): dropped with their host parts */
  idmap dup_region;
  /* per referenced table, the last input id remapped through ids[] and its output id (0: none): the rows of
   * one input mostly name the same process, thread, agent and queue */
  uint64_t last_in[HP_TABLE_COUNT], last_out[HP_TABLE_COUNT];
  uint8_t streamed[HP_TABLE_COUNT]; /* is_streamed of each table, asked once per reference otherwise */
} merger;

static uint64_t *u64_at(void *row, const hp_column *c) { return (uint64_t *)((char *)row + c->offset); }

/* Output id for a reference to table `ref` holding input id v; 0 when the input has no such row. */
static uint64_t remap_ref(merger *m, hp_table ref, uint64_t v) {
  if (!v) return 0;
  if (ref == HP_TABLE_DISPATCH) return dmap_get(&m->disp, v);
  if (m->streamed[ref]) return v + m->base[ref];
  if (v == m->last_in[ref]) return m->last_out[ref];
  uint64_t out = idmap_get(&m->ids[ref], v);
  if (out) m->last_in[ref] = v, m->last_out[ref] = out;
  return out;
}

/* ids[t] changes (an input id given its output id, or the map emptied): its last remap is forgotten */
static int ids_put(merger *m, hp_table t, uint64_t in_id, uint64_t out_id) {
  m->last_in[t] = 0;
  return idmap_put(&m->ids[t], in_id, out_id);
}
static void ids_clear(merger *m, hp_table t) {
  m->last_in[t] = 0;
  idmap_clear(&m->ids[t]);
}

static int build_key(merger *m, hp_table t, const void *row) {
  const hp_table_desc *d = hp_table_describe(t);
  m->key.n = 0;
  for (const char *const *k = dedup_cols[t]; *k; k++) {
    for (size_t i = 0; i < d->ncolumns; i++) {
      const hp_column *c = &d->columns[i];
      if (strcmp(c->name, *k) != 0) continue;
      const char *p = (const char *)row + c->offset;
      int rc;
      if (c->type == HP_COL_STR) {
        const char *str = *(const char *const *)p;
        rc = buf_add(&m->key, str, strlen(str) + 1);
      } else {
        size_t w = (c->type == HP_COL_U32 || c->type == HP_COL_I32) ? 4 : 8;
        rc = buf_add(&m->key, p, w);
      }
      if (rc) return -1;
    }
  }
  return 0;
}

static hp_status fail_from(merger *m, hp_store *in, hp_status st) {
  hp_store *out = m->out;
  if (in && hp_store_error(in)[0])
    snprintf(m->perr, sizeof m->perr, "%s", hp_store_error(in));
  else
    snprintf(m->perr, sizeof m->perr, "%s: %s", hp_store_path(in ? in : out), hp_status_str(st));
  m->perr_st = st;
  return st;
}

/* Strings of a row as offsets into the batch's arena (+1, so that an offset is never NULL) or back. */
static int strings_out(mbatch *b, hp_table t, anyrow *row) {
  const hp_table_desc *d = hp_table_describe(t);
  for (size_t i = 0; i < d->ncolumns; i++) {
    if (d->columns[i].type != HP_COL_STR) continue;
    const char **p = (const char **)((char *)row + d->columns[i].offset);
    size_t off = b->strings.n + 1;
    if (buf_add(&b->strings, *p, strlen(*p) + 1)) return -1;
    *p = (const char *)(uintptr_t)off;
  }
  return 0;
}

static void strings_in(const mbatch *b, hp_table t, anyrow *row) {
  const hp_table_desc *d = hp_table_describe(t);
  for (size_t i = 0; i < d->ncolumns; i++) {
    if (d->columns[i].type != HP_COL_STR) continue;
    const char **p = (const char **)((char *)row + d->columns[i].offset);
    *p = b->strings.p + ((uintptr_t)*p - 1);
  }
}

static int has_strings(hp_table t) {
  const hp_table_desc *d = hp_table_describe(t);
  for (size_t i = 0; i < d->ncolumns; i++)
    if (d->columns[i].type == HP_COL_STR) return 1;
  return 0;
}

static void *pipe_writer(void *arg) {
  mpipe *q = arg;
  pthread_mutex_lock(&q->mu);
  for (;;) {
    while (!q->full[q->take] && !q->quit)
      pthread_cond_wait(&q->cv, &q->mu);
    if (!q->full[q->take]) break;
    mbatch *b = q->b[q->take];
    hp_status err = q->werr;
    pthread_mutex_unlock(&q->mu);
    for (size_t i = 0; b->strings.n && i < b->n; i++)
      strings_in(b, (hp_table)b->table[i], &b->rows[i]);
    if (err == HP_OK) { /* the whole batch under one take of the output's lock */
      size_t done = 0;
      err = hp_write_rows(q->out, b->table, b->rows, sizeof b->rows[0], b->n,
                          q->stats ? q->stats->rows_out : NULL, &done);
      if (err != HP_OK) named(q->out, (hp_table)b->table[done < b->n ? done : 0], err);
    }
    pthread_mutex_lock(&q->mu);
    if (err != HP_OK && q->werr == HP_OK) q->werr = err;
    b->n = 0;
    b->strings.n = 0;
    q->full[q->take] = 0;
    q->take = (q->take + 1) % MQ_N;
    pthread_cond_broadcast(&q->cv);
  }
  pthread_mutex_unlock(&q->mu);
  return NULL;
}

/* Hand the batch being filled to the writer; wait for the next one to be free. Returns the writer's
 * first failure, if any. */
static hp_status pipe_submit(mpipe *q) {
  pthread_mutex_lock(&q->mu);
  if (q->b[q->fill]->n) {
    q->full[q->fill] = 1;
    q->fill = (q->fill + 1) % MQ_N;
    pthread_cond_broadcast(&q->cv);
  }
  while (q->full[q->fill])
    pthread_cond_wait(&q->cv, &q->mu);
  hp_status e = q->werr;
  pthread_mutex_unlock(&q->mu);
  return e;
}

static mpipe *pipe_start(hp_store *out, hp_merge_stats *stats) {
  mpipe *q = calloc(1, sizeof *q);
  if (!q) return NULL;
  int ok = 1;
  for (int i = 0; ok && i < MQ_N; i++)
    ok = (q->b[i] = calloc(1, sizeof *q->b[i])) != NULL;
  q->out = out;
  q->stats = stats;
  if (ok && pthread_mutex_init(&q->mu, NULL) == 0) {
    if (pthread_cond_init(&q->cv, NULL) == 0) {
      if (pthread_create(&q->thr, NULL, pipe_writer, q) == 0) return q;
      pthread_cond_destroy(&q->cv);
    }
    pthread_mutex_destroy(&q->mu);
  }
  for (int i = 0; i < MQ_N; i++)
    free(q->b[i]);
  free(q);
  return NULL; /* no thread: rows are written by the merging thread */
}

/* Write what is queued, stop the writer; returns its first failure. */
static hp_status pipe_stop(mpipe *q) {
  pipe_submit(q);
  pthread_mutex_lock(&q->mu);
  q->quit = 1;
  pthread_cond_broadcast(&q->cv);
  pthread_mutex_unlock(&q->mu);
  pthread_join(q->thr, NULL);
  hp_status e = q->werr;
  pthread_cond_destroy(&q->cv);
  pthread_mutex_destroy(&q->mu);
  for (int i = 0; i < MQ_N; i++) {
    free(q->b[i]->strings.p);
    free(q->b[i]);
  }
  free(q);
  return e;
}

/* Write one merged row: queued for the writer thread, or written here without one. */
static hp_status emit_row(merger *m, hp_table t, anyrow *row, int strings) {
  mpipe *q = m->pipe;
  if (!q) {
    hp_status st = write_named(m->out, t, row);
    if (st == HP_OK && m->stats) m->stats->rows_out[t]++;
    return st;
  }
  mbatch *b = q->b[q->fill];
  assert(b->n < MQ_ROWS &&
         hp_table_describe(t)->row_size <= sizeof b->rows[0]); /* a full batch was handed on */
  b->table[b->n] = (unsigned char)t;
  memcpy(&b->rows[b->n], row, hp_table_describe(t)->row_size);
  if (strings && strings_out(b, t, &b->rows[b->n])) {
    snprintf(m->perr, sizeof m->perr, "%s: out of memory while merging", hp_store_path(m->out));
    return m->perr_st = HP_ERR_NOMEM;
  }
  if (++b->n == MQ_ROWS) return pipe_submit(q);
  return HP_OK;
}

/* A metadata key seen again: the lists of keys multiplexing left incomplete are joined (every input's
 * incomplete kernels stay out of metrics) and written again (a rewritten key replaces the earlier row);
 * for other keys the first value stays, and a different value is counted as a conflict. */
static hp_status merge_metadata(merger *m, const hp_metadata *r, hp_merge_stats *stats) {
  if (strncmp(r->key, "clock.", 6) == 0) return HP_OK; /* each process's clock anchor: the first one stays */
  if (strcmp(r->key, "multiplex_incomplete") != 0) {   /* the first input's value stays */
    for (size_t i = 0; i < m->nmeta; i++)
      if (!strcmp(m->meta[2 * i], r->key) && strcmp(m->meta[2 * i + 1], r->value) && stats)
        stats->metadata_conflicts++;
    return HP_OK;
  }
  const char *a = m->mux_incomplete ? m->mux_incomplete : "[]", *b = r->value;
  size_t la = strlen(a), lb = strlen(b);
  if (la < 2 || lb < 2 || a[0] != '[' || b[0] != '[' || a[la - 1] != ']' || b[lb - 1] != ']') {
    if (stats) stats->metadata_conflicts++;
    return HP_OK;
  }
  int a_empty = strspn(a + 1, " ") == la - 2, b_empty = strspn(b + 1, " ") == lb - 2;
  if (b_empty) return HP_OK;
  char *j = malloc(la + lb + 2);
  if (!j) return HP_ERR_NOMEM;
  if (a_empty)
    snprintf(j, la + lb + 2, "%s", b);
  else
    snprintf(j, la + lb + 2, "%.*s,%s", (int)(la - 1), a, b + 1);
  free(m->mux_incomplete);
  m->mux_incomplete = j;
  anyrow row;
  hp_row_init(HP_TABLE_METADATA, &row);
  row.m.key = "multiplex_incomplete";
  row.m.value = j;
  return emit_row(m, HP_TABLE_METADATA, &row, 1);
}

/* The reference columns of a table, with the table each refers to, looked up once per table. */
typedef struct tinfo {
  const hp_table_desc *d;
  size_t refcol[64], nref;
  hp_table reft[64];
  int has_id, strings;
} tinfo;

/* Remap, de-duplicate and emit one row of input `in` (in the input's ids). HP_OK also when the row is
 * dropped (a duplicate, or a value whose dispatch is not in the output). */
static hp_status merge_row(merger *m, hp_store *in, hp_table t, const tinfo *ti, anyrow *row,
                           hp_merge_stats *stats) {
  const hp_table_desc *d = ti->d;
  hp_status st = HP_OK;
  /* a process already merged from an earlier input: its dispatches and regions are there already */
  if (m->dup_proc.n && (t == HP_TABLE_DISPATCH || t == HP_TABLE_REGION || t == HP_TABLE_MEMORY_COPY) &&
      idmap_get(&m->dup_proc, t == HP_TABLE_DISPATCH ? row->d.process_id
                              : t == HP_TABLE_REGION ? row->r.process_id
                                                     : row->mc.process_id)) {
    if (stats) stats->duplicate_rows++;
    return HP_OK;
  }
  if (t == HP_TABLE_COUNTER_VALUE && m->dup_region.n && hp_counter_value_is_host_part(&row->cv) &&
      idmap_get(&m->dup_region, row->cv.region_id)) { /* its region is there already, with its host part */
    if (stats) stats->duplicate_rows++;
    return HP_OK;
  }
  uint64_t cv_dispatch = t == HP_TABLE_COUNTER_VALUE    ? row->cv.dispatch_id
                         : t == HP_TABLE_PC_SAMPLE      ? row->ps.dispatch_id
                         : t == HP_TABLE_COUNTER_SAMPLE ? row->cs.dispatch_id
                                                        : 0;
  for (size_t i = 0; i < ti->nref; i++) { /* remap every reference column */
    uint64_t *p = (uint64_t *)((char *)row + ti->refcol[i]);
    *p = remap_ref(m, ti->reft[i], *p);
  }
  if (t == HP_TABLE_CODE_BLOB) { /* the bytes of a hash are stored once: later copies are dropped */
    m->key.n = 0;
    if (buf_add(&m->key, row->cb.hash, strlen(row->cb.hash) + 1) ||
        buf_add(&m->key, &row->cb.offset, sizeof row->cb.offset))
      return HP_ERR_NOMEM;
    if (keymap_get(&m->dedup[t], m->key.p, m->key.n)) return HP_OK;
    if (keymap_put(&m->dedup[t], m->key.p, m->key.n, 1)) return HP_ERR_NOMEM;
  }
  if (cv_dispatch && !(t == HP_TABLE_COUNTER_VALUE ? row->cv.dispatch_id
                       : t == HP_TABLE_PC_SAMPLE   ? row->ps.dispatch_id
                                                   : row->cs.dispatch_id)) {
    /* its dispatch is not in the output (a duplicate, or lost to damage): never attach it elsewhere */
    if (stats) stats->duplicate_rows++;
    return HP_OK;
  }
  uint64_t in_id = ti->has_id ? *u64_at(row, &d->columns[0]) : 0;
  if (t == HP_TABLE_DISPATCH) {
    uint64_t out_id = dmap_add(&m->disp, in_id, &m->max_id[t]);
    if (!out_id) return HP_ERR_NOMEM;
    row->d.id = out_id;
  } else if (is_streamed(t)) {
    if (ti->has_id) {
      uint64_t out_id = in_id + m->base[t];
      *u64_at(row, &d->columns[0]) = out_id;
      if (out_id > m->max_id[t]) m->max_id[t] = out_id;
    }
  } else {
    uint64_t found = 0;
    if (dedup_cols[t][0]) {
      if (build_key(m, t, row)) return HP_ERR_NOMEM;
      found = keymap_get(&m->dedup[t], m->key.p, m->key.n);
    }
    if (found) { /* the same row is already in the output: map to it, write nothing */
      if (ti->has_id && ids_put(m, (hp_table)t, in_id, found)) st = HP_ERR_NOMEM;
      if (st == HP_OK && t == HP_TABLE_PROCESS && found <= m->proc_base) {
        if (idmap_put(&m->dup_proc, in_id, 1)) st = HP_ERR_NOMEM;
        if (stats) stats->duplicate_processes++;
      }
      if (st == HP_OK && t == HP_TABLE_METADATA) st = merge_metadata(m, &row->m, stats);
      return st;
    }
    if (t == HP_TABLE_METADATA) { /* remembered: later inputs' values are compared with it */
      char **nm = realloc(m->meta, (m->nmeta + 1) * 2 * sizeof *nm);
      if (nm) m->meta = nm;
      if (!nm || !(m->meta[2 * m->nmeta] = strdup(row->m.key)) ||
          !(m->meta[2 * m->nmeta + 1] = strdup(row->m.value))) {
        if (nm) free(m->meta[2 * m->nmeta]);
        return HP_ERR_NOMEM;
      }
      m->nmeta++;
      if (!strcmp(row->m.key, "multiplex_incomplete") && !(m->mux_incomplete = strdup(row->m.value)))
        return HP_ERR_NOMEM;
    }
    uint64_t out_id = ++m->next_id[t];
    if (ti->has_id) {
      *u64_at(row, &d->columns[0]) = out_id;
      if (ids_put(m, (hp_table)t, in_id, out_id)) return HP_ERR_NOMEM;
    }
    if (dedup_cols[t][0] && keymap_put(&m->dedup[t], m->key.p, m->key.n, out_id)) return HP_ERR_NOMEM;
  }
  return emit_row(m, t, row, ti->strings); /* on failure the output's message is set, or perr */
}

#define PROGRESS_EVERY 65536 /* rows between two progress calls */

/* Count a row; every 4096 rows look at the cancel flag (1: stop, its message set), every PROGRESS_EVERY
 * report. */
static int progress(merger *m) {
  hp_merge_hooks *h = m->hooks;
  if (!h || (!h->progress && !h->cancel) || ++m->done % 4096) return 0;
  if (h->cancel && *h->cancel) {
    m->perr_st = HP_ERR_CANCELLED;
    snprintf(m->perr, sizeof m->perr, "%s: cancelled after %" PRIu64 " rows", hp_store_path(m->out), m->done);
    return 1;
  }
  if (h->progress && m->done % PROGRESS_EVERY == 0)
    h->progress(h->ctx, m->done, m->total > m->done ? m->total : 0);
  return 0;
}

/* A hook's failure: its message becomes this thread's error. */
static hp_status hook_failed(merger *m) {
  hp_merge_hooks *h = m->hooks;
  m->perr_st = h->status != HP_OK ? h->status : HP_ERR_INVALID;
  snprintf(m->perr, sizeof m->perr, "%s", h->error[0] ? h->error : hp_status_str(m->perr_st));
  return m->perr_st;
}

/* This input's regions whose process is in m->dup_proc, read before its counter values: their host parts
 * (hp_counter_value_is_host_part) are dropped with them, never attached to another input's regions. */
static hp_status read_dup_regions(merger *m, hp_store *in) {
  hp_cursor *c;
  hp_status st = hp_cursor_open(in, HP_TABLE_REGION, &c);
  if (st != HP_OK) return fail_from(m, in, st);
  hp_region r = {.size = sizeof r};
  while ((st = hp_cursor_next(c, &r)) == HP_OK)
    if (idmap_get(&m->dup_proc, r.process_id) && idmap_put(&m->dup_region, r.id, 1)) {
      st = HP_ERR_NOMEM;
      break;
    }
  hp_cursor_close(c);
  return st == HP_END ? HP_OK : st == HP_ERR_NOMEM ? st : fail_from(m, in, st);
}

static hp_status merge_table(merger *m, hp_store *in, size_t ix, hp_table t, hp_merge_stats *stats) {
  tinfo ti = {.d = hp_table_describe(t)};
  const hp_table_desc *d = ti.d;
  for (size_t i = 0; i < d->ncolumns && i < 64; i++)
    if (d->columns[i].ref) {
      ti.refcol[ti.nref] = d->columns[i].offset;
      ti.reft[ti.nref++] = hp_table_from_name(d->columns[i].ref);
    }
  ti.has_id = strcmp(d->columns[0].name, "id") == 0;
  ti.strings = has_strings(t);
  hp_merge_hooks *h = m->hooks;
  hp_cursor *c = NULL;
  mread *mr = NULL; /* a large rocpd input's dispatches: read ahead on every CPU */
  hp_status st = mread_open(in, t, &mr) == HP_OK ? HP_OK : hp_cursor_open(in, t, &c);
  if (st != HP_OK) return fail_from(m, in, st);
  anyrow row;
  /* a format's cursor fills every column of a full row: initialised once, not per row */
  hp_row_init(t, &row);
  for (;;) {
    st = mr ? mread_next(mr, in, &row) : hp_cursor_next(c, &row);
    if (st == HP_END) {
      st = HP_OK;
      break;
    }
    if (st != HP_OK) {
      fail_from(m, in, st);
      break;
    }
    if (stats) stats->rows_in[t]++;
    if (progress(m)) {
      st = HP_ERR_CANCELLED;
      break;
    }
    if (h && h->row) {
      int k = h->row(h->ctx, ix, t, &row);
      if (k < 0) {
        st = hook_failed(m);
        break;
      }
      if (!k) continue;
    }
    { st = merge_row(m, in, t, &ti, &row, stats); }
    if (st != HP_OK) break;
  }
  hp_cursor_close(c);
  mread_close(mr);
  while (st == HP_OK && h && h->extra) { /* rows the transforms add after this table */
    anyrow x;
    hp_row_init(t, &x);
    int k = h->extra(h->ctx, ix, t, &x);
    if (k < 0) st = hook_failed(m);
    if (k <= 0) break;
    st = progress(m) ? HP_ERR_CANCELLED : merge_row(m, in, t, &ti, &x, stats);
  }
  if (st == HP_ERR_NOMEM && m->perr_st == HP_OK) {
    snprintf(m->perr, sizeof m->perr, "%s: out of memory while merging %s", hp_store_path(m->out),
             hp_store_path(in));
    m->perr_st = st;
  }
  return st;
}

/* ---- the merge loop ---- */
static hp_status merge_all(hp_store *out, hp_store *const *in, size_t n, hp_merge_stats *stats,
                           hp_merge_hooks *hooks);

/* The caller's stats may be an older, smaller struct: the merge counts into a full one and copies out
 * what the caller's `size` covers. */
hp_status hp_merge(hp_store *out, hp_store *const *in, size_t n, hp_merge_stats *user) {
  return hp_merge_with(out, in, n, user, NULL);
}

hp_status hp_merge_with(hp_store *out, hp_store *const *in, size_t n, hp_merge_stats *user,
                        hp_merge_hooks *hooks) {
  if (!out || (n && !in) || hp_store_mode(out) == HP_READ) return HP_ERR_INVALID;
  if (user && user->size < offsetof(hp_merge_stats, rows_in)) return HP_ERR_INVALID;
  hp_merge_stats full;
  memset(&full, 0, sizeof full);
  full.size = sizeof full;
  hp_status st = merge_all(out, in, n, user ? &full : NULL, hooks);
  if (user) {
    size_t keep = user->size < sizeof full ? user->size : sizeof full;
    memcpy((char *)user + sizeof full.size, (char *)&full + sizeof full.size, keep - sizeof full.size);
  }
  return st;
}

static hp_status merge_all(hp_store *out, hp_store *const *in, size_t n, hp_merge_stats *stats,
                           hp_merge_hooks *hooks) {
  merger *m = calloc(1, sizeof *m);
  if (!m) return HP_ERR_NOMEM;
  m->out = out;
  m->stats = stats;
  m->hooks = hooks;
  m->total = hooks ? hooks->total : 0;
  for (int t = 0; t < HP_TABLE_COUNT; t++)
    m->streamed[t] = (uint8_t)is_streamed((hp_table)t);
  for (size_t i = 0; hooks && hooks->progress && !hooks->total && i < n; i++)
    for (int t = 0; in[i] && t < HP_TABLE_COUNT; t++) {
      uint64_t c = 0;
      if (hp_store_count(in[i], (hp_table)t, &c) == HP_OK) m->total += c;
    }
  m->pipe = n ? pipe_start(out, stats) : NULL;
  hp_status st = HP_OK;
  for (size_t i = 0; i < n && st == HP_OK; i++) {
    hp_store *s = in[i];
    if (!s && !(hooks && hooks->open)) {
      st = HP_ERR_INVALID;
      break;
    }
    if (!s && !(s = hooks->open(hooks->ctx, i))) {
      st = hook_failed(m);
      break;
    }
    if (hp_store_mode(s) != HP_READ) {
      st = HP_ERR_INVALID;
      if (!in[i] && hooks->done) hooks->done(hooks->ctx, i);
      break;
    }
    if (stats) {
      stats->inputs++;
      if (hp_store_damage(s, NULL) != HP_OK) stats->damaged_inputs++;
    }
    for (int t = 0; t < HP_TABLE_COUNT; t++) {
      ids_clear(m, (hp_table)t);
      m->base[t] = m->max_id[t];
    }
    dmap_reset(&m->disp);
    idmap_clear(&m->dup_proc);
    idmap_clear(&m->dup_region);
    m->proc_base = m->next_id[HP_TABLE_PROCESS];
    for (int t = 0; t < HP_TABLE_COUNT && st == HP_OK; t++) {
      if (t == HP_TABLE_COUNTER_VALUE && m->dup_proc.n) st = read_dup_regions(m, s);
      if (st == HP_OK) st = merge_table(m, s, i, (hp_table)t, stats);
    }
    if (!in[i] && hooks->done) hooks->done(hooks->ctx, i);
  }
  if (st == HP_OK && hooks && hooks->progress) hooks->progress(hooks->ctx, m->done, m->done);
  if (m->pipe) { /* the writer's failure, set in the output, comes first; else this thread's */
    hp_status w = pipe_stop(m->pipe);
    if (w != HP_OK) st = w;
  }
  if (st != HP_OK && m->perr_st != HP_OK && hp_store_fail(out, m->perr_st, m->perr)) st = m->perr_st;
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    ids_clear(m, (hp_table)t);
    keymap_clear(&m->dedup[t]);
  }
  idmap_clear(&m->dup_proc);
  idmap_clear(&m->dup_region);
  for (size_t i = 0; i < 2 * m->nmeta; i++)
    free(m->meta[i]);
  free(m->meta);
  free(m->mux_incomplete);
  free(m->key.p);
  free(m->disp.r);
  free(m);
  if (st != HP_OK) hp_store_fail(out, st, NULL);
  return st;
}
