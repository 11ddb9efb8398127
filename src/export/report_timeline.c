/* hubprof report: the timeline's data (every dispatch, memory copy and region, one row per queue or thread,
 * grouped by process, node and rank) as one gzip'd, base64'd block of varints the page's script draws. */
/* SPDX-License-Identifier: MIT */
#include "report_internal.h"

#include "../common/hu_bytes.h"
#include "../common/hu_search.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define TL_LOD_BINS 2048     /* bins of a row's precomputed overview (level of detail) */
#define TL_LOD_MIN 20000     /* rows with more items than this get one */
#define TL_BINNED_BINS 8192  /* bins of a row whose dispatches are binned (past rp.tl_items) */
#define TL_MAX_VALUES 400000 /* counter values carried for the tooltips at most (else none) */
#define TL_MAX_DEPTH 8       /* region rows: nesting levels drawn */
#define TL_COPY_LABELS 5     /* labels after the kernels': memory copies by direction */
#define TL_MAX_LEGEND 2000   /* kernels in the legend */

typedef struct tl_item {
  int64_t start, dur, enq; /* ns from the run's start (enq: the host enqueue, INT64_MIN unknown) */
  uint64_t rowid;          /* the dispatch's store row id (0: not a dispatch) */
  uint32_t label;          /* index in the label table */
  uint32_t shape;          /* dispatches: index of (grid, work-group) in the shape table */
  uint32_t trow;           /* dispatches: row + 1 of the enqueuing thread (0: none) */
  uint32_t depth;          /* regions: nesting on the thread */
} tl_item;

/* A row's bins: how much of each bin its items fill, and the label of the one that fills most. */
typedef struct tl_bins {
  double *busy, *best;
  uint32_t *lab; /* label + 1, 0: empty */
  size_t nb;
  double width; /* ns */
} tl_bins;

typedef struct tl_row {
  int kind;     /* 0: a queue (dispatches, copies), 1: a thread (regions, API calls) */
  size_t proc;  /* model process index (SIZE_MAX: none) */
  uint64_t key; /* the queue's or thread's id (0: dispatches of no known queue) */
  const char *label;
  tl_item *it;
  size_t n, cap;
  uint64_t total; /* items of the row, binned ones included */
  tl_bins *bins;  /* binned rows (rp.disp_binned): their dispatches and copies */
} tl_row;

typedef struct tl_val {
  uint64_t rowid;
  uint32_t counter; /* model counter index */
  float value;
} tl_val;

typedef struct tl {
  rp *p;
  tl_row *rows;
  size_t nrows, caprows;
  hu_idmap queue_row, thread_row; /* id -> row + 1 */
  hu_strmap rnames, owned;        /* region names (labels after the copies'), thread labels */
  int64_t t0;                     /* absolute ns of the run's start (the earliest item) */
  int have_t0;
  tl_val *vals;
  size_t nvals;
  int vals_dropped; /* more counter values than TL_MAX_VALUES: none carried */
} tl;

static void bins_free(tl_bins *bn) {
  if (!bn) return;
  free(bn->busy), free(bn->best), free(bn->lab);
  free(bn);
}
static tl_bins *bins_new(size_t nb, int64_t span) {
  tl_bins *bn = calloc(1, sizeof *bn);
  if (!bn) return NULL;
  bn->busy = calloc(nb, sizeof *bn->busy), bn->best = calloc(nb, sizeof *bn->best);
  bn->lab = calloc(nb, sizeof *bn->lab);
  bn->nb = nb, bn->width = span > 0 ? (double)span / (double)nb : 1;
  if (!bn->busy || !bn->best || !bn->lab) {
    bins_free(bn);
    return NULL;
  }
  return bn;
}
/* An item [start, start + dur) (ns from the run's start) into the bins it covers. */
static void bins_add(tl_bins *bn, int64_t start, int64_t dur, uint32_t label) {
  double a = (double)start, e = a + (double)dur, w = bn->width;
  size_t x0 = a > 0 ? (size_t)(a / w) : 0, x1 = e > 0 ? (size_t)(e / w) : 0;
  if (x0 >= bn->nb) x0 = bn->nb - 1;
  if (x1 >= bn->nb) x1 = bn->nb - 1;
  for (size_t x = x0; x <= x1; x++) {
    double lo = (double)x * w, hi = lo + w;
    double part = (e < hi ? e : hi) - (a > lo ? a : lo);
    if (part < 0) part = 0;
    bn->busy[x] += part;
    if (part >= bn->best[x] || !bn->lab[x]) bn->best[x] = part, bn->lab[x] = label + 1;
  }
}
/* The bins as the block holds them: their count, how busy each is (0 empty, 1-255), each one's label + 1. */
static void bins_put(hu_buf *b, const tl_bins *bn) {
  hu_buf_varint(b, bn->nb);
  for (size_t x = 0; x < bn->nb; x++) {
    double f = bn->busy[x] / bn->width;
    hu_buf_byte(b, bn->lab[x] ? (unsigned)(f >= 1 ? 255 : f * 254 + 1) : 0);
  }
  for (size_t x = 0; x < bn->nb; x++)
    hu_buf_varint(b, bn->lab[x]);
}

static int tl_oom(tl *t) { return ex_set_err(t->p->w, "out of memory"); }

static int64_t proc_shift(const ex_model *m, uint64_t process_id) {
  const ex_proc *pr = ex_find_proc(m, process_id);
  return pr ? pr->shift_ns : 0;
}
static size_t proc_index(const ex_model *m, uint64_t process_id) {
  const ex_proc *pr = ex_find_proc(m, process_id);
  return pr ? (size_t)(pr - m->procs) : SIZE_MAX;
}

/* The row of queue (kind 0) or thread (kind 1) id, made when new. NULL when out of memory. */
static tl_row *row_of(tl *t, int kind, uint64_t id, uint64_t process_id, const char *label) {
  hu_idmap *map = kind ? &t->thread_row : &t->queue_row;
  uint64_t r;
  uint64_t key = id ? id : UINT64_MAX; /* dispatches of no known queue */
  if (hu_idmap_get(map, key, &r)) return &t->rows[r - 1];
  if (hu_grow((void **)&t->rows, &t->caprows, t->nrows + 1, sizeof *t->rows) ||
      hu_idmap_put(map, key, t->nrows + 1))
    return NULL;
  tl_row *row = &t->rows[t->nrows++];
  *row = (tl_row){.kind = kind, .proc = proc_index(t->p->w->m, process_id), .key = id, .label = label};
  return row;
}

static tl_item *add_item(tl_row *row) {
  if (hu_grow((void **)&row->it, &row->cap, row->n + 1, sizeof *row->it)) return NULL;
  tl_item *it = &row->it[row->n++];
  memset(it, 0, sizeof *it);
  return it;
}

static void see_t0(tl *t, int64_t start) {
  if (!t->have_t0 || start < t->t0) t->t0 = start, t->have_t0 = 1;
}

/* A thread's row label: "thread TID" (and its name). */
static const char *thread_label(tl *t, uint64_t thread_id, hu_buf *tmp) {
  const ex_thread *th = ex_find_thread(t->p->w->m, thread_id);
  tmp->n = 0;
  if (th)
    hu_buf_printf(tmp, "thread %" PRId64 "%s%s", th->tid, th->name && *th->name ? " " : "",
                  th->name ? th->name : "");
  else
    hu_buf_str(tmp, "thread (unknown)");
  const char *s = hu_buf_cstr(tmp);
  long i = s ? hu_strmap_intern(&t->owned, s, NULL) : -1;
  return i < 0 ? NULL : hu_strmap_str(&t->owned, (size_t)i);
}

static int cursor_open(tl *t, hp_table table, hp_cursor **c) {
  hp_status st = hp_cursor_open(t->p->s, table, c);
  if (st == HP_OK) return 0;
  return ex_set_err(t->p->w, "%s", hp_store_error(t->p->s)[0] ? hp_store_error(t->p->s) : hp_status_str(st));
}

/* Regions (API calls among them) on their threads' rows. */
static int read_regions(tl *t, hu_buf *tmp) {
  hp_cursor *c;
  if (cursor_open(t, HP_TABLE_REGION, &c)) return -1;
  hp_region r = {.size = sizeof r};
  hp_status st;
  while ((st = hp_cursor_next(c, &r)) == HP_OK) {
    if (!r.start_ns || r.end_ns < r.start_ns) continue;
    const char *lab = thread_label(t, r.thread_id, tmp);
    tl_row *row = lab ? row_of(t, 1, r.thread_id, r.process_id, lab) : NULL;
    tl_item *it = row ? add_item(row) : NULL;
    long li = it ? hu_strmap_intern(&t->rnames, r.name ? r.name : "", NULL) : -1;
    if (li < 0) {
      hp_cursor_close(c);
      return tl_oom(t);
    }
    int64_t sh = proc_shift(t->p->w->m, r.process_id);
    it->start = r.start_ns + sh, it->dur = r.end_ns - r.start_ns;
    it->label = (uint32_t)(t->p->nnames + TL_COPY_LABELS + (size_t)li);
    it->enq = INT64_MIN;
    see_t0(t, it->start);
  }
  hp_cursor_close(c);
  if (st != HP_END) ex_note_damage(t->p->w, t->p->s);
  return 0;
}

static const char *queue_label(const ex_model *m, uint64_t queue_id) {
  const ex_queue *q = ex_find_queue(m, queue_id);
  return q ? q->name : "dispatches of no known queue";
}

/* A new item on queue_id's row: its times (shifted onto the first node's clock), its enqueue and the row of
 * its enqueuing thread. NULL when out of memory. */
static tl_item *queue_item(tl *t, uint64_t queue_id, uint64_t process_id, uint64_t thread_id, int64_t start,
                           int64_t end, int64_t enq) {
  const ex_model *m = t->p->w->m;
  tl_row *row = row_of(t, 0, queue_id, process_id, queue_label(m, queue_id));
  tl_item *it = row ? add_item(row) : NULL;
  if (!it) return NULL;
  int64_t shift = proc_shift(m, process_id);
  it->start = start + shift, it->dur = end - start;
  it->enq = enq ? enq + shift : INT64_MIN;
  uint64_t tr;
  it->trow = thread_id && hu_idmap_get(&t->thread_row, thread_id, &tr) ? (uint32_t)tr : 0;
  see_t0(t, it->start);
  return it;
}

/* Binned: the dispatches and memory copies in their queues' rows' bins (the run's span known: t->t0, span).
 */
static int bin_queues(tl *t, int64_t span) {
  const ex_model *m = t->p->w->m;
  for (int table = 0; table < 2; table++) {
    hp_cursor *c;
    if (cursor_open(t, table ? HP_TABLE_MEMORY_COPY : HP_TABLE_DISPATCH, &c)) return -1;
    hp_dispatch d = {.size = sizeof d};
    hp_memory_copy mc = {.size = sizeof mc};
    hp_status st;
    while ((st = hp_cursor_next(c, table ? (void *)&mc : (void *)&d)) == HP_OK) {
      int64_t s = table ? mc.start_ns : d.start_ns, e = table ? mc.end_ns : d.end_ns;
      uint64_t q = table ? mc.queue_id : d.queue_id, pr = table ? mc.process_id : d.process_id;
      if (!s || e < s) continue;
      const ex_named *k = table ? NULL : ex_find_named(m->kernels, m->nkernels, d.kernel_id);
      uint32_t label = table ? (uint32_t)(t->p->nnames + (mc.direction < TL_COPY_LABELS ? mc.direction : 0))
                       : k   ? (uint32_t)t->p->kname[k - m->kernels]
                             : 0;
      tl_row *row = row_of(t, 0, q, pr, queue_label(m, q));
      if (row && !row->bins) row->bins = bins_new(TL_BINNED_BINS, span);
      if (!row || !row->bins) {
        hp_cursor_close(c);
        return tl_oom(t);
      }
      row->total++;
      bins_add(row->bins, s + proc_shift(m, pr) - t->t0, e - s, label);
    }
    hp_cursor_close(c);
    if (st != HP_END) ex_note_damage(t->p->w, t->p->s);
  }
  return 0;
}

/* Binned: the run's span before binning: the regions', the copies' and the dispatches' (p->span). */
static int binned_span(tl *t, int64_t *end) {
  const ex_model *m = t->p->w->m;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t i = 0; i < m->nprocs; i++) {
    if (m->procs[i].shift_ns < lo) lo = m->procs[i].shift_ns;
    if (m->procs[i].shift_ns > hi) hi = m->procs[i].shift_ns;
  }
  if (!m->nprocs) lo = hi = 0;
  see_t0(t, t->p->span.tmin + lo);
  *end = t->p->span.tmax + hi;
  for (size_t r = 0; r < t->nrows; r++)
    for (size_t i = 0; i < t->rows[r].n; i++)
      if (t->rows[r].it[i].start + t->rows[r].it[i].dur > *end)
        *end = t->rows[r].it[i].start + t->rows[r].it[i].dur;
  hp_cursor *c;
  if (cursor_open(t, HP_TABLE_MEMORY_COPY, &c)) return -1;
  hp_memory_copy mc = {.size = sizeof mc};
  hp_status st;
  while ((st = hp_cursor_next(c, &mc)) == HP_OK) {
    if (!mc.start_ns || mc.end_ns < mc.start_ns) continue;
    int64_t sh = proc_shift(m, mc.process_id);
    see_t0(t, mc.start_ns + sh);
    if (mc.end_ns + sh > *end) *end = mc.end_ns + sh;
  }
  hp_cursor_close(c);
  return 0;
}

/* Dispatches (kept by rp_names_load) and memory copies on their queues' rows. */
static int read_dispatches(tl *t) {
  const rp *p = t->p;
  for (size_t i = 0; i < p->ndisp; i++) {
    const rp_disp *d = &p->disp[i];
    tl_item *it = queue_item(t, d->queue_id, d->process_id, d->thread_id, d->start, d->end, d->enq);
    if (!it) return tl_oom(t);
    it->rowid = d->rowid;
    it->label = d->kernel != UINT32_MAX ? (uint32_t)p->kname[d->kernel] : 0;
    it->shape = d->shape;
  }
  hp_cursor *c;
  hp_status st;
  int oom = 0;
  if (cursor_open(t, HP_TABLE_MEMORY_COPY, &c)) return -1;
  hp_memory_copy mc = {.size = sizeof mc};
  while (!oom && (st = hp_cursor_next(c, &mc)) == HP_OK) {
    if (!mc.start_ns || mc.end_ns < mc.start_ns) continue;
    tl_item *it =
        queue_item(t, mc.queue_id, mc.process_id, mc.thread_id, mc.start_ns, mc.end_ns, mc.enqueue_ns);
    if (!it) {
      oom = 1;
      break;
    }
    it->label = (uint32_t)(t->p->nnames + (mc.direction < TL_COPY_LABELS ? mc.direction : 0));
  }
  hp_cursor_close(c);
  if (oom) return tl_oom(t);
  if (st != HP_END) ex_note_damage(t->p->w, t->p->s);
  return 0;
}

static int cmp_val(const void *a, const void *b) {
  const tl_val *x = a, *y = b;
  return x->rowid < y->rowid ? -1 : x->rowid > y->rowid;
}

/* The dispatches' counter values for the tooltips, by row id (none past TL_MAX_VALUES). */
static int read_values(tl *t) {
  const ex_model *m = t->p->w->m;
  if (!m->nvalues) return 0;
  if (m->nvalues > TL_MAX_VALUES) {
    t->vals_dropped = 1;
    return 0;
  }
  hp_cursor *c;
  if (cursor_open(t, HP_TABLE_COUNTER_VALUE, &c)) return -1;
  hp_counter_value v = {.size = sizeof v};
  hp_status st;
  size_t cap = 0;
  while ((st = hp_cursor_next(c, &v)) == HP_OK) {
    if (hp_counter_value_is_host_part(&v) || !v.dispatch_id) continue;
    const ex_named *cn = ex_find_named(m->counters, m->ncounters, v.counter_id);
    if (!cn) continue;
    if (t->nvals == TL_MAX_VALUES || hu_grow((void **)&t->vals, &cap, t->nvals + 1, sizeof *t->vals)) {
      hp_cursor_close(c);
      if (t->nvals == TL_MAX_VALUES) {
        t->vals_dropped = 1, t->nvals = 0;
        return 0;
      }
      return tl_oom(t);
    }
    t->vals[t->nvals++] = (tl_val){v.dispatch_id, (uint32_t)(cn - m->counters), (float)v.value};
  }
  hp_cursor_close(c);
  if (st != HP_END) ex_note_damage(t->p->w, t->p->s);
  qsort(t->vals, t->nvals, sizeof *t->vals, cmp_val);
  return 0;
}

/* The first counter value of rowid in t->vals (t->nvals when none). */
static size_t first_val(const tl *t, uint64_t rowid) {
  size_t lo;
  HU_PARTITION(lo, t->nvals, mid, t->vals[mid].rowid < rowid);
  return lo < t->nvals && t->vals[lo].rowid == rowid ? lo : t->nvals;
}

static int cmp_item(const void *a, const void *b) {
  const tl_item *x = a, *y = b;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return x->dur > y->dur ? -1 : x->dur < y->dur; /* the outer of two regions first */
}

/* Rows grouped by process (node, rank, pid order), threads before queues; stable otherwise. */
static const ex_model *sort_model;
static int64_t proc_key(const tl_row *r, int which) {
  if (r->proc == SIZE_MAX) return INT64_MAX;
  const ex_proc *pr = &sort_model->procs[r->proc];
  return which == 0 ? (int64_t)pr->node_id : which == 1 ? pr->pid : (int64_t)r->proc;
}
static int cmp_row(const void *a, const void *b) {
  const tl_row *x = a, *y = b;
  for (int w = 0; w < 3; w++) {
    int64_t p = proc_key(x, w), q = proc_key(y, w);
    if (p != q) return p < q ? -1 : 1;
  }
  if (x->kind != y->kind) return x->kind ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

static void put_str(hu_buf *b, const char *s) {
  size_t n = s ? strlen(s) : 0;
  hu_buf_varint(b, n);
  hu_buf_put(b, s, n);
}
static void put_zz(hu_buf *b, int64_t v) { hu_buf_varint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }

/* The group label of a process: "node HOST · rank R · pid P: COMMAND" (node and rank when known). */
static void group_label(hu_buf *b, rp *p, size_t proc, const char *const *hosts, const int64_t *ranks) {
  const ex_model *m = p->w->m;
  if (proc == SIZE_MAX) {
    hu_buf_str(b, "unknown process");
    return;
  }
  const ex_proc *pr = &m->procs[proc];
  if (hosts[proc] && *hosts[proc]) hu_buf_printf(b, "node %s \xC2\xB7 ", hosts[proc]);
  if (ranks[proc] >= 0) hu_buf_printf(b, "rank %" PRId64 " \xC2\xB7 ", ranks[proc]);
  hu_buf_printf(b, "pid %" PRId64 ": %s", pr->pid, pr->name ? pr->name : "");
}

/* Each process's host name and rank (from the process and node tables), by model index. */
static int proc_places(tl *t, char ***hosts_out, int64_t **ranks_out) {
  const ex_model *m = t->p->w->m;
  char **hosts = calloc(m->nprocs + 1, sizeof *hosts);
  int64_t *ranks = malloc((m->nprocs + 1) * sizeof *ranks);
  hu_idmap node_host = {0}; /* node id -> index in names + 1 */
  hu_strmap names = {0};
  *hosts_out = hosts, *ranks_out = ranks;
  if (!hosts || !ranks) return tl_oom(t);
  for (size_t i = 0; i <= m->nprocs; i++)
    ranks[i] = -1;
  hp_cursor *c;
  hp_status st;
  uint64_t nnodes = 0;
  (void)hp_store_count(t->p->s, HP_TABLE_NODE, &nnodes);
  if (nnodes > 1 && !cursor_open(t, HP_TABLE_NODE, &c)) {
    hp_node n = {.size = sizeof n};
    while ((st = hp_cursor_next(c, &n)) == HP_OK) {
      long i = hu_strmap_intern(&names, n.hostname ? n.hostname : "?", NULL);
      if (i >= 0) hu_idmap_put(&node_host, n.id, (uint64_t)i + 1);
    }
    hp_cursor_close(c);
  }
  if (!cursor_open(t, HP_TABLE_PROCESS, &c)) {
    hp_process pr = {.size = sizeof pr};
    while ((st = hp_cursor_next(c, &pr)) == HP_OK) {
      size_t i = proc_index(m, pr.id);
      uint64_t h;
      if (i == SIZE_MAX) continue;
      ranks[i] = pr.rank;
      if (hu_idmap_get(&node_host, pr.node_id, &h)) hosts[i] = strdup(hu_strmap_str(&names, h - 1));
    }
    hp_cursor_close(c);
  }
  hu_idmap_free(&node_host);
  hu_strmap_free(&names);
  return 0;
}

/* Nesting of a thread's regions (sorted by start): each one's depth under the ones still open. */
static void region_depths(tl_row *row) {
  int64_t open[TL_MAX_DEPTH];
  size_t n = 0;
  for (size_t i = 0; i < row->n; i++) {
    tl_item *it = &row->it[i];
    while (n && open[n - 1] <= it->start)
      n--;
    it->depth = (uint32_t)(n < TL_MAX_DEPTH ? n : TL_MAX_DEPTH - 1);
    if (n < TL_MAX_DEPTH) open[n++] = it->start + it->dur;
  }
}

/* A row's overview (level of detail): its items in TL_LOD_BINS bins. */
static int row_lod(hu_buf *b, const tl_row *row, int64_t span) {
  tl_bins *bn = bins_new(TL_LOD_BINS, span);
  if (!bn) return -1;
  for (size_t i = 0; i < row->n; i++)
    bins_add(bn, row->it[i].start, row->it[i].dur, row->it[i].label);
  bins_put(b, bn);
  bins_free(bn);
  return 0;
}

/* The block: see docs/cli/report.md ("The timeline's data") for the layout. */
static int encode(tl *t, hu_buf *b, int64_t span) {
  rp *p = t->p;
  const ex_model *m = p->w->m;
  hu_buf_str(b, "HPT1");
  put_zz(b, t->t0);
  hu_buf_varint(b, (uint64_t)span);
  static const char *const copy_names[TL_COPY_LABELS] = {"copy (unknown direction)", "copy H2D", "copy D2H",
                                                         "copy D2D", "fill"};
  hu_buf_varint(b, p->nnames + TL_COPY_LABELS + t->rnames.n);
  hu_buf_varint(b, p->nnames);
  for (size_t i = 0; i < p->nnames; i++)
    put_str(b, p->names[i].name);
  for (size_t i = 0; i < TL_COPY_LABELS; i++)
    put_str(b, copy_names[i]);
  for (size_t i = 0; i < t->rnames.n; i++)
    put_str(b, hu_strmap_str(&t->rnames, i));
  hu_buf_varint(b, m->ncounters);
  for (size_t i = 0; i < m->ncounters; i++) {
    put_str(b, m->counters[i].name);
    put_str(b, m->counters[i].unit);
  }
  hu_buf_varint(b, p->shapes.n);
  for (size_t i = 0; i < p->shapes.n; i++) {
    unsigned g[6] = {0};
    sscanf(hu_strmap_str(&p->shapes, i), "%u,%u,%u,%u,%u,%u", &g[0], &g[1], &g[2], &g[3], &g[4], &g[5]);
    for (int k = 0; k < 6; k++)
      hu_buf_varint(b, g[k]);
  }
  char **hosts = NULL;
  int64_t *ranks = NULL;
  int rc = proc_places(t, &hosts, &ranks);
  /* groups: one per process in row order */
  size_t ngroups = 0;
  for (size_t r = 0; r < t->nrows; r++)
    if (!r || t->rows[r].proc != t->rows[r - 1].proc) ngroups++;
  hu_buf_varint(b, ngroups);
  hu_buf tmp = {0};
  for (size_t r = 0; !rc && r < t->nrows; r++)
    if (!r || t->rows[r].proc != t->rows[r - 1].proc) {
      tmp.n = 0;
      group_label(&tmp, p, t->rows[r].proc, (const char *const *)hosts, ranks);
      hu_buf_varint(b, tmp.n);
      hu_buf_put(b, tmp.p, tmp.n);
    }
  hu_buf_free(&tmp);
  for (size_t i = 0; hosts && i <= m->nprocs; i++)
    free(hosts[i]);
  free(hosts), free(ranks);
  hu_buf_varint(b, t->nrows);
  size_t group = 0;
  for (size_t r = 0; !rc && r < t->nrows; r++) {
    const tl_row *row = &t->rows[r];
    if (r && row->proc != t->rows[r - 1].proc) group++;
    hu_buf_varint(b, group);
    put_str(b, row->label);
    hu_buf_varint(b, (uint64_t)row->kind);
    hu_buf_varint(b, row->n);
    hu_buf_varint(b, row->total > row->n ? row->total : row->n);
    int64_t prev = 0;
    uint64_t prev_id = 0;
    for (size_t i = 0; i < row->n; i++) {
      const tl_item *it = &row->it[i];
      put_zz(b, it->start - prev);
      prev = it->start;
      hu_buf_varint(b, (uint64_t)it->dur);
      hu_buf_varint(b, it->label);
      if (row->kind) {
        hu_buf_varint(b, it->depth);
        continue;
      }
      hu_buf_varint(b, it->shape);
      put_zz(b, (int64_t)(it->rowid - prev_id));
      prev_id = it->rowid;
      hu_buf_varint(b, it->trow);
      put_zz(b, it->enq == INT64_MIN ? 0 : it->start - it->enq);
      size_t v = it->rowid ? first_val(t, it->rowid) : t->nvals, nv = 0;
      while (v + nv < t->nvals && t->vals[v + nv].rowid == it->rowid)
        nv++;
      hu_buf_varint(b, nv);
      for (size_t j = 0; j < nv; j++) {
        uint32_t bits;
        memcpy(&bits, &t->vals[v + j].value, sizeof bits);
        hu_buf_varint(b, t->vals[v + j].counter);
        hu_buf_le32(b, bits);
      }
    }
    if (row->bins)
      bins_put(b, row->bins);
    else if (row->n > TL_LOD_MIN) {
      if (row_lod(b, row, span)) rc = tl_oom(t);
    } else
      hu_buf_varint(b, 0);
  }
  return rc ? rc : b->oom ? tl_oom(t) : 0;
}

/* gzip (RFC 1952) of in into out, which the browser's DecompressionStream("gzip") reads back. */
static int gzip_buf(const hu_buf *in, hu_buf *out) {
  z_stream z = {0};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
  size_t bound = deflateBound(&z, (uLong)in->n) + 64;
  if (hu_buf_reserve(out, bound)) {
    deflateEnd(&z);
    return -1;
  }
  z.next_in = in->p, z.avail_in = (uInt)in->n;
  z.next_out = out->p + out->n, z.avail_out = (uInt)bound;
  int r = deflate(&z, Z_FINISH);
  out->n += bound - z.avail_out;
  deflateEnd(&z);
  return r == Z_STREAM_END ? 0 : -1;
}

static void legend(rp *p) {
  hu_buf *b = p->b;
  hu_buf_str(b, "<div class=\"legend\" id=\"legend\">");
  for (size_t i = 0; i < p->nnames && i < TL_MAX_LEGEND; i++) {
    hu_buf_printf(
        b,
        "<a href=\"#kernel-%zu\" data-kernel=\"%zu\"><svg width=\"12\" height=\"12\" aria-hidden=\"true\">"
        "<rect width=\"12\" height=\"12\" fill=\"",
        i, i);
    rp_color(b, i);
    hu_buf_str(b, "\"/></svg>");
    rp_text_n(b, p->names[i].name, 80);
    hu_buf_printf(b, " <span class=\"note\">%" PRIu64 "</span></a>\n", p->names[i].calls);
  }
  hu_buf_str(b, "</div>\n");
  if (p->nnames > TL_MAX_LEGEND)
    hu_buf_printf(b,
                  "<p class=\"note\">%zu more kernels, each with its own colour, not listed here (see "
                  "the kernel sections).</p>\n",
                  p->nnames - TL_MAX_LEGEND);
}

static void tl_free(tl *t) {
  for (size_t r = 0; r < t->nrows; r++) {
    free(t->rows[r].it);
    bins_free(t->rows[r].bins);
  }
  free(t->rows);
  free(t->vals);
  hu_idmap_free(&t->queue_row);
  hu_idmap_free(&t->thread_row);
  hu_strmap_free(&t->rnames);
  hu_strmap_free(&t->owned);
}

int rp_timeline(rp *p) {
  hu_buf *b = p->b;
  hu_buf_str(b, "<h2 id=\"timeline-h\">Timeline</h2>\n");
  tl t = {.p = p};
  hu_buf tmp = {0}, raw = {0}, gz = {0};
  int rc = 0;
  int64_t end = 0;
  if (!rc) rc = read_regions(&t, &tmp);
  if (!rc && p->disp_binned) { /* the span first: bins need it */
    rc = binned_span(&t, &end);
    if (!rc) rc = bin_queues(&t, end - t.t0);
  } else if (!rc)
    rc = read_dispatches(&t);
  if (!rc && !p->disp_binned) rc = read_values(&t);
  hu_buf_free(&tmp);
  if (!rc && !t.nrows) {
    hu_buf_str(b, "<p>No timed dispatches, copies or regions.</p>\n");
    tl_free(&t);
    return 0;
  }
  if (!p->disp_binned) end = t.t0;
  for (size_t r = 0; !rc && r < t.nrows; r++) {
    tl_row *row = &t.rows[r];
    for (size_t i = 0; i < row->n; i++) {
      row->it[i].start -= t.t0;
      if (row->it[i].enq != INT64_MIN) row->it[i].enq -= t.t0;
      if (row->it[i].start + t.t0 + row->it[i].dur > end) end = row->it[i].start + t.t0 + row->it[i].dur;
    }
    qsort(row->it, row->n, sizeof *row->it, cmp_item);
    if (row->kind) region_depths(row);
  }
  /* rows sorted: the enqueuing thread's row numbers (trow) follow */
  uint64_t *order = NULL;
  if (!rc) {
    size_t nr = t.nrows;
    uint64_t *keys = malloc(nr * sizeof *keys);
    order = malloc((nr + 1) * sizeof *order);
    if (!keys || !order) {
      free(keys);
      rc = tl_oom(&t);
    } else {
      for (size_t r = 0; r < nr; r++)
        keys[r] = t.rows[r].kind ? t.rows[r].key : 0; /* threads, by id */
      sort_model = p->w->m;
      qsort(t.rows, nr, sizeof *t.rows, cmp_row);
      hu_idmap_free(&t.thread_row);
      for (size_t r = 0; r < nr && !rc; r++)
        if (t.rows[r].kind && hu_idmap_put(&t.thread_row, t.rows[r].key, r + 1)) rc = tl_oom(&t);
      /* old row index (before sorting) of each thread: keys[r] is its id; new index from thread_row */
      for (size_t r = 0; r < nr; r++) {
        uint64_t nw = 0;
        order[r + 1] = keys[r] && hu_idmap_get(&t.thread_row, keys[r], &nw) ? nw : 0;
      }
      order[0] = 0;
      free(keys);
      for (size_t r = 0; r < nr; r++)
        for (size_t i = 0; !t.rows[r].kind && i < t.rows[r].n; i++) {
          uint32_t *tr = &t.rows[r].it[i].trow;
          *tr = *tr <= nr ? (uint32_t)order[*tr] : 0;
        }
    }
  }
  free(order);
  int64_t span = end - t.t0;
  if (!rc) rc = encode(&t, &raw, span);
  if (!rc && gzip_buf(&raw, &gz)) rc = ex_set_err(p->w, "report: cannot compress the timeline's data");
  hu_buf_free(&raw);
  if (!rc) {
    hu_buf_str(b,
               "<p>Every dispatch, memory copy and region of the run, one row per queue or thread, "
               "grouped by process (node and rank first when known). Wheel: zoom around the pointer; drag: "
               "pan; double-click: the whole run; keys (click the timeline first): + and \xE2\x88\x92 zoom, "
               "\xE2\x86\x90 and \xE2\x86\x92 pan, 0 resets. Hover for details; click a dispatch to select "
               "it (its enqueue call is linked to it) and open its kernel below.</p>\n");
    if (p->disp_binned)
      hu_buf_printf(
          b,
          "<p class=\"warn\" id=\"tl-binned\">This run has %" PRIu64 " timed dispatches, more than "
          "the %zu the timeline holds one by one: its queues show them binned, %d bins a row (how busy "
          "each bin is, in the colour of its longest dispatch); hover a bin for its figures. The "
          "kernel sections and tables count every dispatch.</p>\n",
          p->span.timed, p->tl_items, TL_BINNED_BINS);
    else if (t.vals_dropped)
      hu_buf_printf(b,
                    "<p class=\"note\">The tooltips leave out the counter values (more than %d in the "
                    "store): the kernel sections list them.</p>\n",
                    TL_MAX_VALUES);
    hu_buf_printf(
        b,
        "<div id=\"timeline\" class=\"tl\" data-t0-ns=\"%" PRId64 "\" data-t1-ns=\"%" PRId64
        "\" data-start-ns=\"%" PRId64 "\" data-span-ns=\"%" PRId64 "\">"
        "<canvas id=\"tl-canvas\" tabindex=\"0\" aria-label=\"timeline\"></canvas>"
        "<div id=\"tl-tip\" class=\"tip\" hidden></div></div>\n"
        "<p id=\"tl-status\" class=\"note\">Loading the timeline\xE2\x80\xA6 (it needs JavaScript)</p>\n"
        "<div id=\"tl-sel\" class=\"sel\"></div>\n",
        t.t0, t.t0 + span, t.t0, span);
    legend(p);
    size_t n64 = hu_base64_len(gz.n);
    hu_buf_printf(b, "<div id=\"timeline-data\" hidden data-bytes=\"%zu\">", gz.n);
    if (!hu_buf_reserve(b, n64 + 1)) {
      hu_base64_encode(gz.p, gz.n, (char *)b->p + b->n);
      b->n += n64;
    }
    hu_buf_str(b, "</div>\n");
  }
  hu_buf_free(&gz);
  tl_free(&t);
  return rc;
}
