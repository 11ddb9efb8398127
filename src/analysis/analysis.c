/* Analysis over any store through the hub's cursors: groupings (kernel, kernel + launch sizes, dispatch)
 * with device-time statistics, counters (passes kept apart; imputed values and incomplete coverage marked)
 * and derived metrics (src/counters/metrics.c), and the per-kernel comparison of two stores, as result
 * tables shared by the CLI and Python. Sections: result table · maps · the small tables · the query ·
 * diff. Knows no format. */
/* SPDX-License-Identifier: MIT */
#include "hubprof/analysis.h"

#include "ha_internal.h"
#include "metrics.h"

#include "../common/hu_buf.h"
#include "../common/hu_hash.h"
#include "../common/hu_json.h"
#include "../common/hu_map.h"
#include "../common/hu_text.h"

#include <assert.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ha_query fields up to `flags` (callers built before the progress hook pass this size). */
#define HA_QUERY_V1 (offsetof(ha_query, flags) + sizeof(uint32_t))

static int is_nan(double x) { return x != x; }

/* ---- result table ---- */

typedef union cell {
  double num;
  int64_t i;
  const char *text; /* interned in the result */
} cell;

typedef struct rcol {
  char *name, *unit;
  ha_col_kind kind;
  ha_col_role role;
} rcol;

struct ha_result {
  size_t ncols, capcols, nrows, cap;
  rcol *cols;
  cell *cells;
  uint8_t *flags;
  uint64_t lost;
  char **notes;
  size_t nnotes;
  hu_strmap strs;   /* interned strings */
  char error[1024]; /* why the call that made it failed (one line), "" when it did not */
};

/* Record why the call failed on its result (the first reason wins); returns st. */
static hp_status res_err(ha_result *r, hp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static hp_status res_verr(ha_result *r, hp_status st, const char *fmt, va_list ap) {
  if (r && !r->error[0]) vsnprintf(r->error, sizeof r->error, fmt, ap);
  return st;
}
static hp_status res_err(ha_result *r, hp_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  res_verr(r, st, fmt, ap);
  va_end(ap);
  return st;
}

/* A failed call's result: no columns or rows, only the reason (THE error convention: the message lives on
 * the handle; *out stays NULL only when even this cannot be allocated). Returns st. */
static hp_status error_out(ha_result **out, hp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static hp_status error_out(ha_result **out, hp_status st, const char *fmt, ...) {
  if (!out) return st;
  *out = calloc(1, sizeof **out);
  if (*out) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf((*out)->error, sizeof(*out)->error, fmt, ap);
    va_end(ap);
  }
  return st;
}

const char *ha_result_error(const ha_result *r) { return r ? r->error : "no result (out of memory)"; }

static const char *intern(ha_result *r, const char *s) {
  long i = hu_strmap_intern(&r->strs, s ? s : "", NULL);
  return i < 0 ? NULL : hu_strmap_str(&r->strs, (size_t)i);
}

static int add_col(ha_result *r, const char *name, ha_col_kind kind, ha_col_role role, const char *unit) {
  assert(r->nrows == 0); /* columns come before rows: a row's cells are ncols wide */
  if (r->ncols == r->capcols) {
    size_t nc = r->capcols ? 2 * r->capcols : 32;
    rcol *n = realloc(r->cols, nc * sizeof *n);
    if (!n) return -1;
    r->cols = n;
    r->capcols = nc;
  }
  rcol *c = &r->cols[r->ncols];
  c->name = strdup(name);
  c->unit = strdup(unit ? unit : "");
  c->kind = kind;
  c->role = role;
  if (!c->name || !c->unit) {
    free(c->name);
    free(c->unit);
    return -1;
  }
  r->ncols++;
  return 0;
}

/* A new row of zeroes (text ""), or NULL when out of memory. */
static cell *add_row(ha_result *r, uint8_t **flags) {
  if (r->nrows == r->cap) {
    size_t nc = r->cap ? 2 * r->cap : 64;
    cell *n = realloc(r->cells, nc * r->ncols * sizeof *n);
    if (!n) return NULL;
    r->cells = n;
    uint8_t *f = realloc(r->flags, nc * r->ncols);
    if (!f) return NULL;
    r->flags = f;
    r->cap = nc;
  }
  assert(r->nrows < r->cap); /* room for the row after growth (columns are fixed before the first row) */
  cell *row = &r->cells[r->nrows * r->ncols];
  memset(row, 0, r->ncols * sizeof *row);
  *flags = &r->flags[r->nrows * r->ncols];
  memset(*flags, 0, r->ncols);
  r->nrows++;
  return row;
}

static int add_note(ha_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add_note(ha_result *r, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char **n = realloc(r->notes, (r->nnotes + 1) * sizeof *n);
  if (!n) return -1;
  r->notes = n;
  if (!(r->notes[r->nnotes] = strdup(buf))) return -1;
  r->nnotes++;
  return 0;
}

/* The builder for the library's other parts (ha_internal.h). */
ha_result *hai_new(void) { return calloc(1, sizeof(ha_result)); }
int hai_col(ha_result *r, const char *name, ha_col_kind kind, ha_col_role role, const char *unit) {
  return add_col(r, name, kind, role, unit);
}
long hai_row(ha_result *r) {
  uint8_t *fl;
  return add_row(r, &fl) ? (long)r->nrows - 1 : -1;
}
int hai_text(ha_result *r, size_t row, size_t col, const char *text) {
  assert(row < r->nrows && col < r->ncols && r->cols[col].kind == HA_TEXT);
  const char *t = intern(r, text);
  r->cells[row * r->ncols + col].text = t;
  return t ? 0 : -1;
}
void hai_int(ha_result *r, size_t row, size_t col, int64_t v) {
  assert(row < r->nrows && col < r->ncols && r->cols[col].kind == HA_INT);
  r->cells[row * r->ncols + col].i = v;
}
void hai_num(ha_result *r, size_t row, size_t col, double v) {
  assert(row < r->nrows && col < r->ncols && r->cols[col].kind == HA_REAL);
  r->cells[row * r->ncols + col].num = v;
}
int hai_note(ha_result *r, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return add_note(r, "%s", buf);
}
hp_status hai_fail(ha_result *r, hp_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  res_verr(r, st, fmt, ap);
  va_end(ap);
  return st;
}

void ha_result_free(ha_result *r) {
  if (!r) return;
  for (size_t i = 0; i < r->ncols; i++) {
    free(r->cols[i].name);
    free(r->cols[i].unit);
  }
  for (size_t i = 0; i < r->nnotes; i++)
    free(r->notes[i]);
  hu_strmap_free(&r->strs);
  free(r->notes);
  free(r->cols);
  free(r->cells);
  free(r->flags);
  free(r);
}

size_t ha_result_ncols(const ha_result *r) { return r ? r->ncols : 0; }
size_t ha_result_nrows(const ha_result *r) { return r ? r->nrows : 0; }
const char *ha_result_col_name(const ha_result *r, size_t c) {
  return r && c < r->ncols ? r->cols[c].name : "";
}
ha_col_kind ha_result_col_kind(const ha_result *r, size_t c) {
  return r && c < r->ncols ? r->cols[c].kind : HA_TEXT;
}
ha_col_role ha_result_col_role(const ha_result *r, size_t c) {
  return r && c < r->ncols ? r->cols[c].role : HA_ROLE_KEY;
}
const char *ha_result_col_unit(const ha_result *r, size_t c) {
  return r && c < r->ncols ? r->cols[c].unit : "";
}
long ha_result_col_find(const ha_result *r, const char *name) {
  for (size_t c = 0; r && name && c < r->ncols; c++)
    if (strcmp(r->cols[c].name, name) == 0) return (long)c;
  return -1;
}
uint64_t ha_result_lost_records(const ha_result *r) { return r ? r->lost : 0; }
size_t ha_result_nnotes(const ha_result *r) { return r ? r->nnotes : 0; }
const char *ha_result_note(const ha_result *r, size_t i) { return r && i < r->nnotes ? r->notes[i] : ""; }

static const cell *at(const ha_result *r, size_t row, size_t col) {
  return r && row < r->nrows && col < r->ncols ? &r->cells[row * r->ncols + col] : NULL;
}
const char *ha_result_text(const ha_result *r, size_t row, size_t col) {
  const cell *c = at(r, row, col);
  return c && r->cols[col].kind == HA_TEXT && c->text ? c->text : "";
}
double ha_result_num(const ha_result *r, size_t row, size_t col) {
  const cell *c = at(r, row, col);
  if (!c || r->cols[col].kind == HA_TEXT) return NAN;
  return r->cols[col].kind == HA_INT ? (double)c->i : c->num;
}
int64_t ha_result_int(const ha_result *r, size_t row, size_t col) {
  const cell *c = at(r, row, col);
  if (!c || r->cols[col].kind == HA_TEXT) return 0;
  if (r->cols[col].kind == HA_INT) return c->i;
  return is_nan(c->num) ? 0 : (int64_t)c->num;
}
unsigned ha_result_flags(const ha_result *r, size_t row, size_t col) {
  return at(r, row, col) ? r->flags[row * r->ncols + col] : 0;
}

/* ---- maps: id -> index ---- */

/* The index stored for k in m, or -1. */
static long ix_get(const hu_idmap *m, uint64_t k) {
  uint64_t v;
  return hu_idmap_get(m, k, &v) ? (long)v : -1;
}

/* ---- the small tables ---- */

#define NCONST 5 /* compute_units, max_clock_mhz, global_mem_bytes, local_mem_bytes, wave_size */

typedef struct agent_rec {
  char *name; /* "product#index" as people see it */
  char *raw, *product;
  double c[NCONST]; /* NaN when unknown (0 in the store) */
  int keep;
} agent_rec;

typedef struct kernel_rec {
  char *name, *mangled;
  int keep;
  int mux; /* an incomplete multiplexing key names it */
} kernel_rec;

typedef struct counter_rec { /* a distinct counter name of the store */
  char *name, *unit;
} counter_rec;

typedef struct tables {
  agent_rec *agents;
  size_t nagents, capagents;
  hu_idmap agent_ix;
  kernel_rec *kernels;
  size_t nkernels, capkernels;
  long none_agent, none_kernel; /* the entries standing for id 0, -1 until needed */
  hu_idmap kernel_ix;
  hu_idmap pid_of;        /* process row id -> index into pids */
  int64_t *pids, *starts; /* per process: pid, start_ns */
  size_t npids, cappids;
  counter_rec *counters;
  size_t ncounters, capcounters;
  hu_idmap counter_ix; /* counter_info id -> distinct name index */
  uint64_t lost;
} tables;

static void tables_free(tables *t) {
  for (size_t i = 0; i < t->nagents; i++) {
    free(t->agents[i].name);
    free(t->agents[i].raw);
    free(t->agents[i].product);
  }
  for (size_t i = 0; i < t->nkernels; i++) {
    free(t->kernels[i].name);
    free(t->kernels[i].mangled);
  }
  for (size_t i = 0; i < t->ncounters; i++) {
    free(t->counters[i].name);
    free(t->counters[i].unit);
  }
  free(t->agents);
  free(t->kernels);
  free(t->counters);
  free(t->pids);
  free(t->starts);
  hu_idmap_free(&t->agent_ix);
  hu_idmap_free(&t->kernel_ix);
  hu_idmap_free(&t->pid_of);
  hu_idmap_free(&t->counter_ix);
}

hp_status hai_each(hp_store *s, hp_table t, void *row, hai_row_fn fn, void *ctx) {
  hp_cursor *c;
  hp_status st = hp_cursor_open(s, t, &c);
  if (st != HP_OK) return st;
  while ((st = hp_cursor_next(c, row)) == HP_OK && (st = fn(row, ctx)) == HP_OK)
    ;
  hp_cursor_close(c);
  return st == HP_END ? HP_OK : st;
}

static double known(int64_t v) { return v > 0 ? (double)v : NAN; }

/* One agent row into t->agents (named "product#index"), with its index by id. */
static hp_status load_agent(const void *row, void *ctx) {
  const hp_agent *a = row;
  tables *t = ctx;
  if (hu_grow((void **)&t->agents, &t->capagents, t->nagents + 1, sizeof *t->agents)) return HP_ERR_NOMEM;
  char buf[512];
  const char *base = a->product_name[0] ? a->product_name : a->name;
  if (a->device_index)
    snprintf(buf, sizeof buf, "%s#%d", base, a->device_index);
  else
    snprintf(buf, sizeof buf, "%s", base);
  agent_rec *r = &t->agents[t->nagents];
  *r =
      (agent_rec){.name = strdup(buf), .raw = strdup(a->name), .product = strdup(a->product_name), .keep = 1};
  r->c[0] = known(a->compute_units);
  r->c[1] = known(a->max_clock_mhz);
  r->c[2] = known(a->global_mem_bytes);
  r->c[3] = known(a->local_mem_bytes);
  r->c[4] = known(a->wave_size);
  t->nagents++;
  if (!r->name || !r->raw || !r->product || hu_idmap_put(&t->agent_ix, a->id, (uint32_t)(t->nagents - 1)))
    return HP_ERR_NOMEM;
  return HP_OK;
}

/* One kernel symbol into t->kernels (its display name when it has one). */
static hp_status load_kernel(const void *row, void *ctx) {
  const hp_kernel_symbol *k = row;
  tables *t = ctx;
  if (hu_grow((void **)&t->kernels, &t->capkernels, t->nkernels + 1, sizeof *t->kernels)) return HP_ERR_NOMEM;
  kernel_rec *r = &t->kernels[t->nkernels++];
  *r = (kernel_rec){
      .name = strdup(k->display_name[0] ? k->display_name : k->name), .mangled = strdup(k->name), .keep = 1};
  if (!r->name || !r->mangled || hu_idmap_put(&t->kernel_ix, k->id, (uint32_t)(t->nkernels - 1)))
    return HP_ERR_NOMEM;
  return HP_OK;
}

/* One process row: its pid, start and lost records. */
static hp_status load_process(const void *row, void *ctx) {
  const hp_process *p = row;
  tables *t = ctx;
  t->lost = t->lost + p->lost_records < t->lost ? UINT64_MAX : t->lost + p->lost_records; /* saturated */
  long have = ix_get(&t->pid_of, p->id);
  if (have >= 0) { /* a process written twice (start, then end): the last row wins */
    t->pids[have] = p->pid;
    t->starts[have] = p->start_ns;
    return HP_OK;
  }
  size_t cap2 = t->cappids;
  if (hu_grow((void **)&t->pids, &t->cappids, t->npids + 1, sizeof *t->pids) ||
      hu_grow((void **)&t->starts, &cap2, t->npids + 1, sizeof *t->starts) ||
      hu_idmap_put(&t->pid_of, p->id, (uint32_t)t->npids))
    return HP_ERR_NOMEM;
  t->starts[t->npids] = p->start_ns;
  t->pids[t->npids++] = p->pid;
  return HP_OK;
}

/* One counter_info row: one entry per distinct name, the row's id mapped to it. */
static hp_status load_counter(const void *row, void *ctx) {
  const hp_counter_info *ci = row;
  tables *t = ctx;
  size_t j = 0;
  while (j < t->ncounters && strcmp(t->counters[j].name, ci->name))
    j++;
  if (j == t->ncounters) {
    if (hu_grow((void **)&t->counters, &t->capcounters, t->ncounters + 1, sizeof *t->counters))
      return HP_ERR_NOMEM;
    counter_rec *r = &t->counters[t->ncounters++];
    *r = (counter_rec){.name = strdup(ci->name), .unit = strdup(ci->unit)};
    if (!r->name || !r->unit) return HP_ERR_NOMEM;
  }
  return hu_idmap_put(&t->counter_ix, ci->id, (uint32_t)j) ? HP_ERR_NOMEM : HP_OK;
}

static hp_status load_tables(hp_store *s, tables *t) {
  t->none_agent = t->none_kernel = -1;
  hp_agent a = {.size = sizeof a};
  hp_kernel_symbol k = {.size = sizeof k};
  hp_process p = {.size = sizeof p};
  hp_counter_info ci = {.size = sizeof ci};
  hp_status st = hai_each(s, HP_TABLE_AGENT, &a, load_agent, t);
  if (st == HP_OK) st = hai_each(s, HP_TABLE_KERNEL_SYMBOL, &k, load_kernel, t);
  if (st == HP_OK) st = hai_each(s, HP_TABLE_PROCESS, &p, load_process, t);
  if (st == HP_OK) st = hai_each(s, HP_TABLE_COUNTER_INFO, &ci, load_counter, t);
  return st;
}

/* ---- the query ---- */

typedef struct drec { /* one kept dispatch */
  uint64_t id, dispatch_id;
  int64_t start, end;
  uint32_t agent, kernel, group, passes;
  uint32_t grid[3], wg[3];
  int64_t pid;
  uint8_t mux_incomplete; /* its multiplexing key missed passes (metadata multiplex_incomplete) */
} drec;

typedef struct cslot { /* one counter on one dispatch */
  double sum;
  uint32_t pass; /* the first pass seen */
  uint16_t n;    /* values added */
  uint8_t imputed;
  uint8_t multi; /* 1: values of several passes, 2: duplicates of one pass */
} cslot;

typedef struct grec { /* one group of dispatches */
  uint32_t agent, kernel;
  uint32_t grid[3], wg[3];
  size_t first; /* its first dispatch (store order) */
  uint64_t calls, timed;
  int64_t total, min, max;
  uint64_t cold; /* its cold dispatches (hp_dispatch.cold: a multiplexed kernel's first) */
} grec;

/* Stored times may be anything (INT64_MIN, INT64_MAX): durations and sums saturate instead of wrapping. */
static inline int64_t dur_ns(int64_t start, int64_t end) {
  int64_t t;
  return __builtin_sub_overflow(end, start, &t) ? INT64_MAX : t;
}
static inline int64_t sat_add(int64_t a, int64_t b) {
  int64_t t;
  return __builtin_add_overflow(a, b, &t) ? (b > 0 ? INT64_MAX : INT64_MIN) : t;
}

/* One dispatch of a group: its call, and its device time when it has one. */
static inline void grec_add(grec *gr, int64_t start, int64_t end) {
  gr->calls++;
  if (start && end >= start) {
    int64_t t = dur_ns(start, end);
    if (!gr->timed || t < gr->min) gr->min = t;
    if (!gr->timed || t > gr->max) gr->max = t;
    gr->total = sat_add(gr->total, t);
    gr->timed++;
  }
}

typedef struct rloc { /* where a kept dispatch ran, for the region groupings */
  uint64_t proc, thread, region;
  int64_t enq;
} rloc;

typedef struct hostv { /* a region's host part of one counter (counter_value with region_id, no dispatch) */
  uint64_t region;
  size_t counter;
  double value;
} hostv;

typedef struct run {
  const ha_query *q;
  int (*prog)(void *, uint64_t); /* q->progress when given */
  uint64_t rows_read;            /* dispatch and counter value rows read so far, for prog */
  int group, sort;
  int keep_records; /* keep a drec per dispatch (rows per dispatch, or counters to combine) */
  size_t nseen;     /* dispatches kept by the filters */
  int64_t *devtot;  /* per agent: device time of the kept dispatches */
  size_t ndevtot;
  int64_t limit;
  tables t;
  drec *d;
  size_t nd, capd;
  grec *g;
  size_t ng, capg;
  size_t *gslot; /* group hash: index + 1, 0 empty */
  size_t capgslot;
  /* counters: every distinct counter of the store (index as tables.counters) */
  int want_counters;      /* scan counter values */
  cslot *slots;           /* nd * ncounters */
  uint64_t *with_values;  /* per counter: dispatches with a value */
  uint64_t *multi, *dups; /* per counter: dispatches with several passes / duplicate rows */
  size_t *sel;            /* counters to report */
  size_t nsel;
  /* metrics */
  hc_metrics *m;
  size_t *msel; /* metrics to report (hc_metrics indices) */
  size_t nmsel;
  long *mc_to_c; /* metric-set counter -> store counter, -1 when the store lacks it */
  size_t nmc;
  size_t *aggs; /* aggregates the selected metrics use */
  size_t naggs;
  int *used;               /* per store counter: reported or used by a selected metric */
  char note_metrics[1100]; /* why default metrics were skipped, "" */
  struct muxkey *mux;      /* multiplexing keys that missed passes */
  size_t nmux;
  int mux_unreadable; /* metadata multiplex_incomplete could not be read */
  ha_result *res;     /* the result being built: res_err puts why the run failed on it */
  int regions;        /* HA_BY_REGION(_TREE): every dispatch kept, with its rloc; no kernel groups */
  rloc *rl;           /* per kept dispatch, beside d */
  size_t caprl;
  hostv *hv; /* regions: the host parts read with the counter values */
  size_t nhv, caphv;
  uint8_t *host_has; /* per counter: some region has a host part of it */
  /* kept dispatches running when their process died ("dispatch begun" rows: no device times, passes 0) */
  uint64_t nincomplete;
} run;

static void mux_free(struct muxkey *k, size_t n);

static void run_free(run *r) {
  free(r->devtot);
  mux_free(r->mux, r->nmux);
  tables_free(&r->t);
  free(r->d);
  free(r->g);
  free(r->gslot);
  free(r->slots);
  free(r->with_values);
  free(r->multi);
  free(r->dups);
  free(r->sel);
  free(r->msel);
  free(r->mc_to_c);
  free(r->aggs);
  free(r->used);
  free(r->rl);
  free(r->hv);
  free(r->host_has);
  hc_metrics_free(r->m);
}

static int glob_any(const char *const *pats, size_t n, const char *a, const char *b, const char *c) {
  for (size_t i = 0; i < n; i++) {
    if (!pats[i]) continue;
    if (fnmatch(pats[i], a, 0) == 0 || (b && fnmatch(pats[i], b, 0) == 0) ||
        (c && fnmatch(pats[i], c, 0) == 0))
      return 1;
  }
  return 0;
}

static uint64_t group_hash(const run *r, const drec *d) {
  uint64_t h = (uint64_t)d->agent * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)d->kernel + 0x632BE59BD9B4E019ULL);
  if (r->group == HA_BY_KERNEL_GRID)
    for (int i = 0; i < 3; i++)
      h = (h ^ d->grid[i]) * 0x100000001B3ULL ^ ((uint64_t)d->wg[i] << 32);
  return h * 0xBF58476D1CE4E5B9ULL;
}

static int same_group(const run *r, const grec *g, const drec *d) {
  if (g->agent != d->agent || g->kernel != d->kernel) return 0;
  if (r->group != HA_BY_KERNEL_GRID) return 1;
  return memcmp(g->grid, d->grid, sizeof g->grid) == 0 && memcmp(g->wg, d->wg, sizeof g->wg) == 0;
}

/* The group of dispatch d (created when new), or -1 when out of memory. */
static long group_of(run *r, const drec *d, size_t di) {
  if (2 * (r->ng + 1) > r->capgslot) {
    size_t nc = r->capgslot ? 2 * r->capgslot : 256;
    size_t *n = calloc(nc, sizeof *n);
    if (!n) return -1;
    for (size_t i = 0; i < r->ng; i++) {
      const grec *g = &r->g[i];
      drec key = {.agent = g->agent, .kernel = g->kernel};
      memcpy(key.grid, g->grid, sizeof key.grid);
      memcpy(key.wg, g->wg, sizeof key.wg);
      size_t j = group_hash(r, &key) & (nc - 1);
      while (n[j])
        j = (j + 1) & (nc - 1);
      n[j] = i + 1;
    }
    free(r->gslot);
    r->gslot = n;
    r->capgslot = nc;
  }
  size_t j = group_hash(r, d) & (r->capgslot - 1);
  while (r->gslot[j]) {
    if (same_group(r, &r->g[r->gslot[j] - 1], d)) return (long)(r->gslot[j] - 1);
    j = (j + 1) & (r->capgslot - 1);
  }
  if (hu_grow((void **)&r->g, &r->capg, r->ng + 1, sizeof *r->g)) return -1;
  grec *g = &r->g[r->ng];
  memset(g, 0, sizeof *g);
  g->agent = d->agent;
  g->kernel = d->kernel;
  memcpy(g->grid, d->grid, sizeof g->grid);
  memcpy(g->wg, d->wg, sizeof g->wg);
  g->first = di;
  r->gslot[j] = ++r->ng;
  return (long)(r->ng - 1);
}

/* ---- keys iteration multiplexing left incomplete (metadata multiplex_incomplete, docs/replay.md) ---- */

typedef struct muxkey {
  int64_t pid, start;
  char *kernel; /* the kernel symbol's name */
  int launch;   /* grid and workgroup given (policy launch) */
  uint32_t grid[3], wg[3];
} muxkey;

static void mux_free(muxkey *k, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(k[i].kernel);
  free(k);
}

/* [a, b, c] of non-negative integers below 2^32 into v: 0, or -1. */
static int mux_triple(const hu_json *a, uint32_t *v) {
  if (!a || a->type != HU_JSON_ARR || a->n != 3) return -1;
  for (int i = 0; i < 3; i++) {
    if (a->kid[i].type != HU_JSON_INT || a->kid[i].u > UINT32_MAX) return -1;
    v[i] = (uint32_t)a->kid[i].u;
  }
  return 0;
}

/* Parse the metadata's array of incomplete keys. 0, or -1 when it is not what docs/replay.md says. */
static int parse_mux(const char *text, muxkey **out, size_t *n) {
  hu_json *j;
  size_t cap = 0;
  *out = NULL;
  *n = 0;
  if (hu_json_parse(text, strlen(text), &j) != HU_OK) {
    hu_json_free(j);
    return -1;
  }
  int bad = j->type != HU_JSON_ARR;
  for (size_t i = 0; !bad && i < j->n; i++) {
    const hu_json *o = &j->kid[i], *kernel = hu_json_get(o, "kernel");
    const hu_json *grid = hu_json_get(o, "grid"), *wg = hu_json_get(o, "workgroup");
    muxkey k = {0};
    bad = o->type != HU_JSON_OBJ || hu_json_int64(hu_json_get(o, "pid"), &k.pid) ||
          hu_json_int64(hu_json_get(o, "process_start_ns"), &k.start) || !kernel ||
          kernel->type != HU_JSON_STR || (grid && mux_triple(grid, k.grid)) || (wg && mux_triple(wg, k.wg));
    k.launch = grid || wg;
    if (!bad && (hu_grow((void **)out, &cap, *n + 1, sizeof **out) || !(k.kernel = strdup(kernel->s))))
      bad = 1;
    if (!bad) (*out)[(*n)++] = k;
  }
  hu_json_free(j);
  if (!bad) return 0;
  mux_free(*out, *n);
  *out = NULL;
  *n = 0;
  return -1;
}

/* Does dispatch x (of process row `process_id`) belong to an incomplete key? */
static int in_incomplete_key(const run *r, const drec *x, uint64_t process_id) {
  long pi = ix_get(&r->t.pid_of, process_id);
  if (pi < 0) return 0;
  const char *kname = r->t.kernels[x->kernel].mangled;
  for (size_t i = 0; i < r->nmux; i++) {
    const muxkey *k = &r->mux[i];
    if (k->pid != r->t.pids[pi] || k->start != r->t.starts[pi] || strcmp(k->kernel, kname)) continue;
    if (k->launch && (memcmp(k->grid, x->grid, sizeof k->grid) || memcmp(k->wg, x->wg, sizeof k->wg)))
      continue;
    return 1;
  }
  return 0;
}

/* An entry for an agent / kernel id the store lacks, made on first use; -1 when out of memory. */
static long placeholder_agent(run *r, uint64_t id) {
  tables *t = &r->t;
  if (!id && t->none_agent >= 0) return t->none_agent;
  if (hu_grow((void **)&t->agents, &t->capagents, t->nagents + 1, sizeof *t->agents)) return -1;
  agent_rec *ar = &t->agents[t->nagents];
  *ar = (agent_rec){.name = strdup(id ? "?" : "(none)"), .raw = strdup(""), .product = strdup("")};
  for (int i = 0; i < NCONST; i++)
    ar->c[i] = NAN;
  t->nagents++;
  const ha_query *q = r->q;
  ar->keep = q->size < HA_QUERY_V1 || !q->ndevices || glob_any(q->devices, q->ndevices, ar->name, NULL, NULL);
  long a = (long)t->nagents - 1;
  if (!ar->name || !ar->raw || !ar->product || (id && hu_idmap_put(&t->agent_ix, id, (uint32_t)a))) return -1;
  if (!id) t->none_agent = a;
  return a;
}

static long placeholder_kernel(run *r, uint64_t id) {
  tables *t = &r->t;
  if (!id && t->none_kernel >= 0) return t->none_kernel;
  if (hu_grow((void **)&t->kernels, &t->capkernels, t->nkernels + 1, sizeof *t->kernels)) return -1;
  kernel_rec *kr = &t->kernels[t->nkernels];
  *kr = (kernel_rec){.name = strdup(id ? "?" : "(none)"), .mangled = strdup("")};
  t->nkernels++;
  const ha_query *q = r->q;
  kr->keep = q->size < HA_QUERY_V1 || !q->nkernels || glob_any(q->kernels, q->nkernels, kr->name, NULL, NULL);
  long k = (long)t->nkernels - 1;
  if (!kr->name || !kr->mangled || (id && hu_idmap_put(&t->kernel_ix, id, (uint32_t)k))) return -1;
  if (!id) t->none_kernel = k;
  return k;
}

/* Dispatch rows are read in columnar batches of only the columns this query needs: a columnar format
 * (Parquet) then decodes nothing else. */
#define SCAN_BATCH 4096
#define SCAN_DIRECT_IDS 256

typedef struct scan_cols {
  void *cols[64]; /* per column of the dispatch table: an array of SCAN_BATCH values, or NULL */
  const hp_table_desc *d;
  size_t n;         /* columns read */
  uint16_t idx[64]; /* their index, offset in hp_dispatch and width */
  uint16_t off[64];
  uint8_t width[64];
  /* the columns every query reads, looked at directly by the scan (the others reach it through scan_row) */
  const uint64_t *agent, *kernel;
  const int64_t *start, *end;
  const uint32_t *passes, *cold;
} scan_cols;

static int want_col(const run *r, const char *name, int filters) {
  const ha_query *q = r->q;
  if (r->regions && (!strcmp(name, "thread_id") || !strcmp(name, "enqueue_ns") || !strcmp(name, "region_id")))
    return 1;
  if (!strcmp(name, "agent_id") || !strcmp(name, "kernel_id") || !strcmp(name, "start_ns") ||
      !strcmp(name, "end_ns"))
    return 1;
  if (!strcmp(name, "dispatch_id"))
    return r->keep_records || (filters && (q->dispatch_first || q->dispatch_last));
  if (!strcmp(name, "process_id")) return r->keep_records || r->nmux;
  if (!strncmp(name, "grid_", 5) || !strncmp(name, "workgroup_", 10))
    return r->keep_records || r->group != HA_BY_KERNEL || r->nmux;
  if (!strcmp(name, "id")) return r->keep_records;
  if (!strcmp(name, "passes")) return 1; /* passes 0 without device times: incomplete (its process died) */
  if (!strcmp(name, "cold")) return 1;
  return 0;
}

static int scan_cols_init(scan_cols *sc, const run *r, int filters) {
  memset(sc, 0, sizeof *sc);
  sc->d = hp_table_describe(HP_TABLE_DISPATCH);
  for (size_t i = 0; i < sc->d->ncolumns && i < 64; i++) {
    const hp_column *c = &sc->d->columns[i];
    if (!want_col(r, c->name, filters)) continue;
    if (!(sc->cols[i] = calloc(SCAN_BATCH, 8))) return -1;
    sc->idx[sc->n] = (uint16_t)i;
    sc->off[sc->n] = (uint16_t)c->offset;
    sc->width[sc->n++] = c->type == HP_COL_U32 || c->type == HP_COL_I32 ? 4 : 8;
    if (!strcmp(c->name, "agent_id")) sc->agent = sc->cols[i];
    if (!strcmp(c->name, "kernel_id")) sc->kernel = sc->cols[i];
    if (!strcmp(c->name, "start_ns")) sc->start = sc->cols[i];
    if (!strcmp(c->name, "end_ns")) sc->end = sc->cols[i];
    if (!strcmp(c->name, "passes")) sc->passes = sc->cols[i];
    if (!strcmp(c->name, "cold")) sc->cold = sc->cols[i];
  }
  return sc->agent && sc->kernel && sc->start && sc->end && sc->passes && sc->cold ? 0 : -1;
}

static void scan_cols_free(scan_cols *sc) {
  for (size_t i = 0; i < 64; i++)
    free(sc->cols[i]);
}

/* Row i of the batch into d: only the columns read (the others stay 0 from the start). */
static inline void scan_row(const scan_cols *sc, size_t i, hp_dispatch *d) {
  for (size_t k = 0; k < sc->n; k++) {
    const char *src = (const char *)sc->cols[sc->idx[k]];
    if (sc->width[k] == 8)
      memcpy((char *)d + sc->off[k], src + 8 * i, 8);
    else
      memcpy((char *)d + sc->off[k], src + 4 * i, 4);
  }
}

static hp_status scan_dispatches(hp_store *s, run *r) {
  const ha_query *q = r->q;
  int filters = q->size >= HA_QUERY_V1;
  hp_cursor *c;
  hp_status st = hp_cursor_open(s, HP_TABLE_DISPATCH, &c);
  if (st != HP_OK) return st;
  scan_cols sc;
  if (scan_cols_init(&sc, r, filters)) {
    scan_cols_free(&sc);
    hp_cursor_close(c);
    return HP_ERR_NOMEM;
  }
  hp_dispatch d = {.size = sizeof d};
  size_t nb = 0, bi = 0;
  /* by kernel: groups found through a direct (agent, kernel) table instead of hashing every row */
  size_t dna = r->t.nagents + 1, dnk = r->t.nkernels + 1;
  long *gdirect = NULL;
  if (r->group == HA_BY_KERNEL && dna * dnk <= (1u << 20) && (gdirect = malloc(dna * dnk * sizeof *gdirect)))
    for (size_t i = 0; i < dna * dnk; i++)
      gdirect[i] = -1;
  int fast = gdirect && !r->keep_records && !r->nmux; /* sums per group only */
  uint64_t last_agent_id = UINT64_MAX, last_kernel_id = UINT64_MAX;
  long last_a = -1, last_k = -1;
  /* kernel rows of ids below SCAN_DIRECT_IDS by an array (the merged stores number kernels from 1): -1 not
   * looked up yet */
  long kdirect[SCAN_DIRECT_IDS];
  for (size_t i = 0; i < SCAN_DIRECT_IDS; i++)
    kdirect[i] = -1;
  for (;;) {
    if (bi == nb) {
      st = hp_cursor_next_batch(c, sc.cols, SCAN_BATCH, &nb);
      bi = 0;
      if (st != HP_OK) break;
      if (!nb) {
        st = HP_END;
        break;
      }
      if (r->prog) r->prog(q->progress_ctx, r->rows_read += nb);
    }
    /* the columns every query reads first, straight from the batch; the row as a whole (scan_row) only when
     * more than its group's sums is needed */
    size_t i = bi++;
    const uint64_t agent_id = sc.agent[i], kernel_id = sc.kernel[i];
    const int64_t start_ns = sc.start[i], end_ns = sc.end[i];
    long a = agent_id == last_agent_id ? last_a : ix_get(&r->t.agent_ix, agent_id);
    long k = kernel_id == last_kernel_id                              ? last_k
             : kernel_id < SCAN_DIRECT_IDS && kdirect[kernel_id] >= 0 ? kdirect[kernel_id]
                                                                      : ix_get(&r->t.kernel_ix, kernel_id);
    if (a >= 0) last_agent_id = agent_id, last_a = a;
    if (k >= 0) last_kernel_id = kernel_id, last_k = k;
    /* rows naming an agent or kernel the store lacks still count, under "?" ("(none)" for id 0) */
    if (a < 0 && (a = placeholder_agent(r, agent_id)) < 0) {
      st = HP_ERR_NOMEM;
      break;
    }
    if (k < 0 && (k = placeholder_kernel(r, kernel_id)) < 0) {
      st = HP_ERR_NOMEM;
      break;
    }
    if (kernel_id < SCAN_DIRECT_IDS)
      kdirect[kernel_id] = k; /* what the map (or placeholder) gives it again */
    if (!r->t.agents[a].keep || !r->t.kernels[k].keep) continue;
    if (filters && (q->dispatch_first || q->dispatch_last)) {
      scan_row(&sc, i, &d);
      if ((q->dispatch_first && d.dispatch_id < q->dispatch_first) ||
          (q->dispatch_last && d.dispatch_id > q->dispatch_last))
        continue;
    }
    r->nincomplete += !start_ns && !end_ns && !sc.passes[i];
    /* the dispatch is kept as a record only when rows or counters need it; groups are summed here */
    drec one, *x = &one;
    if (r->keep_records) {
      if (hu_grow((void **)&r->d, &r->capd, r->nd + 1, sizeof *r->d)) {
        st = HP_ERR_NOMEM;
        break;
      }
      x = &r->d[r->nd];
    }
    if ((size_t)a >= r->ndevtot) {
      size_t old = r->ndevtot, cap = r->ndevtot;
      if (hu_grow((void **)&r->devtot, &cap, (size_t)a + 1, sizeof *r->devtot)) {
        st = HP_ERR_NOMEM;
        break;
      }
      memset(r->devtot + old, 0, (cap - old) * sizeof *r->devtot);
      r->ndevtot = cap;
    }
    if (start_ns && end_ns >= start_ns) r->devtot[a] = sat_add(r->devtot[a], dur_ns(start_ns, end_ns));
    if (fast && (size_t)a < dna && (size_t)k < dnk && gdirect[(size_t)a * dnk + (size_t)k] >= 0) {
      /* by kernel, nothing kept per dispatch, group known: only its sums change */
      grec *g = &r->g[gdirect[(size_t)a * dnk + (size_t)k]];
      grec_add(g, start_ns, end_ns);
      g->cold += sc.cold[i] != 0;
      r->nseen++;
      continue;
    }
    scan_row(&sc, i, &d);
    long pi = ix_get(&r->t.pid_of, d.process_id);
    *x = (drec){.id = d.id,
                .dispatch_id = d.dispatch_id,
                .start = d.start_ns,
                .end = d.end_ns,
                .agent = (uint32_t)a,
                .kernel = (uint32_t)k,
                .passes = d.passes,
                .pid = pi >= 0 ? r->t.pids[pi] : 0};
    memcpy(x->grid, d.grid, sizeof x->grid);
    memcpy(x->wg, d.workgroup, sizeof x->wg);
    if (r->nmux && r->t.kernels[k].mux) x->mux_incomplete = (uint8_t)in_incomplete_key(r, x, d.process_id);
    if (r->regions) {
      if (hu_grow((void **)&r->rl, &r->caprl, r->nd + 1, sizeof *r->rl)) {
        st = HP_ERR_NOMEM;
        break;
      }
      r->rl[r->nd] = (rloc){d.process_id, d.thread_id, d.region_id, d.enqueue_ns};
    } else if (r->group != HA_BY_DISPATCH) {
      long *slot =
          gdirect && (size_t)a < dna && (size_t)k < dnk ? &gdirect[(size_t)a * dnk + (size_t)k] : NULL;
      long g = slot && *slot >= 0 ? *slot : group_of(r, x, r->nseen);
      if (slot && g >= 0) *slot = g;
      if (g < 0) {
        st = HP_ERR_NOMEM;
        break;
      }
      x->group = (uint32_t)g;
      grec_add(&r->g[g], x->start, x->end);
      r->g[g].cold += d.cold != 0;
    }
    r->nseen++;
    if (r->keep_records) r->nd++;
  }
  free(gdirect);
  scan_cols_free(&sc);
  hp_cursor_close(c);
  return st == HP_END ? HP_OK : st;
}

/* Counter values into per-dispatch slots: passes of one dispatch are never summed; several passes (or
 * duplicate rows) of one counter on one dispatch are averaged and counted for a note. */
static hp_status scan_values(hp_store *s, run *r) {
  size_t nc = r->t.ncounters;
  if (!nc || (!r->nd && !r->regions)) return HP_OK; /* regions: host parts without any dispatch too */
  if (!(r->slots = calloc(r->nd * nc + 1, sizeof *r->slots))) return HP_ERR_NOMEM;
  if (r->regions && !(r->host_has = calloc(nc, 1))) return HP_ERR_NOMEM;
  /* dispatch row id -> index: a direct table when ids are dense, else a hash */
  uint64_t maxid = 0;
  for (size_t i = 0; i < r->nd; i++)
    if (r->d[i].id > maxid) maxid = r->d[i].id;
  uint32_t *direct = NULL;
  hu_idmap ix = {0};
  if (maxid <= 4 * (uint64_t)r->nd + 1024) {
    if (!(direct = malloc((maxid + 1) * sizeof *direct))) return HP_ERR_NOMEM;
    memset(direct, 0xff, (maxid + 1) * sizeof *direct);
    for (size_t i = 0; i < r->nd; i++)
      direct[r->d[i].id] = (uint32_t)i;
  } else {
    for (size_t i = 0; i < r->nd; i++)
      if (hu_idmap_put(&ix, r->d[i].id, (uint32_t)i)) {
        hu_idmap_free(&ix);
        return HP_ERR_NOMEM;
      }
  }
  hp_cursor *c;
  hp_status st = hp_cursor_open(s, HP_TABLE_COUNTER_VALUE, &c);
  if (st == HP_OK) {
    hp_counter_value v = {.size = sizeof v};
    long lastc = -1;
    uint64_t last_cid = 0;
    while ((st = hp_cursor_next(c, &v)) == HP_OK) {
      if (r->prog && (++r->rows_read & 4095) == 0) r->prog(r->q->progress_ctx, r->rows_read);
      long ci = v.counter_id == last_cid ? lastc : ix_get(&r->t.counter_ix, v.counter_id);
      last_cid = v.counter_id;
      lastc = ci;
      if (ci < 0) continue;
      if (hp_counter_value_is_host_part(&v)) { /* kept for run_regions */
        if (!r->regions) continue;
        if (r->nhv == r->caphv && hu_grow((void **)&r->hv, &r->caphv, r->nhv + 1, sizeof *r->hv)) {
          st = HP_ERR_NOMEM;
          break;
        }
        r->hv[r->nhv++] = (hostv){v.region_id, (size_t)ci, v.value};
        r->host_has[ci] = 1;
        continue;
      }
      long di;
      if (direct)
        di = v.dispatch_id <= maxid && direct[v.dispatch_id] != UINT32_MAX ? (long)direct[v.dispatch_id] : -1;
      else
        di = ix_get(&ix, v.dispatch_id);
      if (di < 0) continue; /* filtered out, or a value of no dispatch */
      cslot *sl = &r->slots[(size_t)di * nc + (size_t)ci];
      if (sl->n == 0) {
        sl->sum = v.value;
        sl->pass = v.pass;
        sl->n = 1;
      } else {
        if (sl->n < UINT16_MAX) {
          sl->sum += v.value;
          sl->n++;
        }
        sl->multi |= v.pass != sl->pass ? 1 : 2;
      }
      if (v.imputed) sl->imputed = 1;
    }
    hp_cursor_close(c);
    if (st == HP_END) st = HP_OK;
  }
  free(direct);
  hu_idmap_free(&ix);
  if (st != HP_OK) return st;
  if (!(r->with_values = calloc(nc, sizeof *r->with_values)) || !(r->multi = calloc(nc, sizeof *r->multi)) ||
      !(r->dups = calloc(nc, sizeof *r->dups)))
    return HP_ERR_NOMEM;
  for (size_t i = 0; i < r->nd; i++)
    for (size_t j = 0; j < nc; j++) {
      const cslot *sl = &r->slots[i * nc + j];
      r->with_values[j] += sl->n > 0;
      r->multi[j] += (sl->multi & 1) != 0;
      r->dups[j] += sl->multi == 2;
    }
  return HP_OK;
}

static long store_counter(const run *r, const char *name) {
  for (size_t i = 0; i < r->t.ncounters; i++)
    if (strcmp(r->t.counters[i].name, name) == 0) return (long)i;
  return -1;
}

/* The counters to report: a list, or every counter with a value among the kept dispatches. */
static hp_status select_counters(run *r, const char *list) {
  size_t nc = r->t.ncounters;
  if (!(r->sel = malloc((nc + 1) * sizeof *r->sel)) || !(r->used = calloc(nc + 1, sizeof *r->used)))
    return HP_ERR_NOMEM;
  if (!list) {
    for (size_t j = 0; j < nc; j++)
      if ((r->with_values && r->with_values[j]) || (r->host_has && r->host_has[j])) r->sel[r->nsel++] = j;
  } else if (*list) {
    char **names;
    size_t n;
    hu_status hs = hu_split_names(list, &names, &n);
    if (hs == HU_ERR_NOMEM) return HP_ERR_NOMEM;
    if (hs != HU_OK) {
      res_err(r->res, HP_ERR_INVALID, "empty counter name in '%s'", list);
      return HP_ERR_INVALID;
    }
    for (size_t i = 0; i < n; i++) {
      long j = store_counter(r, names[i]);
      if (j < 0) {
        char have[600] = "";
        size_t w = 0;
        for (size_t k = 0; k < nc && w < sizeof have; k++)
          w += (size_t)snprintf(have + w, sizeof have - w, "%s%s", k ? ", " : "", r->t.counters[k].name);
        res_err(r->res, HP_ERR_INVALID, "counter '%s' is not in the store (%s%s)", names[i],
                nc ? "it has: " : "it has no counters", have);
        hu_strv_free(names);
        return HP_ERR_INVALID;
      }
      int dup = 0;
      for (size_t k = 0; k < r->nsel; k++)
        dup |= r->sel[k] == (size_t)j;
      if (!dup) r->sel[r->nsel++] = (size_t)j;
    }
    hu_strv_free(names);
  }
  for (size_t k = 0; k < r->nsel; k++)
    r->used[r->sel[k]] = 1;
  return HP_OK;
}

/* Load the metric definitions and choose the metrics to report. */
static hp_status select_metrics(run *r, const char *list) {
  const ha_query *q = r->q;
  int explicit = list != NULL || q->nmetric_files;
  hc_status hs = hc_metrics_new(&r->m);
  if (hs == HC_OK && !(q->flags & HA_NO_BUILTIN_METRICS)) hs = hc_metrics_add_builtin(r->m, NULL);
  for (size_t i = 0; hs == HC_OK && i < q->nmetric_files; i++)
    hs = hc_metrics_add_file(r->m, q->metric_files[i], NULL);
  if (hs == HC_OK) hs = hc_metrics_resolve(r->m, NULL, 0);
  if (hs != HC_OK) {
    const char *err = hc_metrics_error(r->m);
    if (hs == HC_ERR_NOMEM) return HP_ERR_NOMEM;
    if (explicit) {
      res_err(r->res, HP_ERR_INVALID, "%s", err);
      return HP_ERR_INVALID;
    }
    snprintf(r->note_metrics, sizeof r->note_metrics, "no metrics: %s", err);
    hc_metrics_free(r->m);
    r->m = NULL;
    return HP_OK;
  }
  size_t nm = hc_metrics_count(r->m);
  r->nmc = hc_metrics_ncounters(r->m);
  if (!(r->msel = malloc((nm + 1) * sizeof *r->msel)) ||
      !(r->mc_to_c = malloc((r->nmc + 1) * sizeof *r->mc_to_c)))
    return HP_ERR_NOMEM;
  for (size_t i = 0; i < r->nmc; i++)
    r->mc_to_c[i] = store_counter(r, hc_metrics_counter_name(r->m, i));
  if (!list) { /* every metric that needs counters, all with values here */
    for (size_t i = 0; i < nm; i++) {
      const hc_metric_info *mi = hc_metrics_get(r->m, i);
      int ok = mi->ncounters > 0;
      for (size_t k = 0; ok && k < mi->ncounters; k++) {
        long c = r->mc_to_c[mi->counters[k]];
        ok = c >= 0 && r->with_values && r->with_values[c] > 0;
      }
      if (ok) r->msel[r->nmsel++] = i;
    }
  } else if (*list) {
    char **names;
    size_t n;
    hu_status us = hu_split_names(list, &names, &n);
    if (us == HU_ERR_NOMEM) return HP_ERR_NOMEM;
    if (us != HU_OK) {
      res_err(r->res, HP_ERR_INVALID, "empty metric name in '%s'", list);
      return HP_ERR_INVALID;
    }
    for (size_t i = 0; i < n; i++) {
      long mi = hc_metrics_find(r->m, names[i]);
      if (mi < 0) {
        const char *sug[1];
        if (hc_metrics_suggest(r->m, names[i], sug, 1))
          res_err(r->res, HP_ERR_INVALID, "unknown metric '%s' (did you mean '%s'?)", names[i], sug[0]);
        else
          res_err(r->res, HP_ERR_INVALID, "unknown metric '%s' ('hubprof list metrics' lists them)",
                  names[i]);
        hu_strv_free(names);
        return HP_ERR_INVALID;
      }
      const hc_metric_info *inf = hc_metrics_get(r->m, (size_t)mi);
      char lack[600] = "";
      size_t w = 0;
      for (size_t k = 0; k < inf->ncounters && w < sizeof lack; k++)
        if (r->mc_to_c[inf->counters[k]] < 0)
          w += (size_t)snprintf(lack + w, sizeof lack - w, "%s%s", w ? ", " : "",
                                hc_metrics_counter_name(r->m, inf->counters[k]));
      if (w) {
        res_err(r->res, HP_ERR_INVALID, "metric '%s' needs counters the store does not have: %s", names[i],
                lack);
        hu_strv_free(names);
        return HP_ERR_INVALID;
      }
      int dup = 0;
      for (size_t k = 0; k < r->nmsel; k++)
        dup |= r->msel[k] == (size_t)mi;
      if (!dup) r->msel[r->nmsel++] = (size_t)mi;
    }
    hu_strv_free(names);
  }
  /* the aggregates and counters the chosen metrics use */
  size_t na = hc_metrics_naggs(r->m);
  if (!(r->aggs = malloc((na + 1) * sizeof *r->aggs))) return HP_ERR_NOMEM;
  for (size_t k = 0; k < r->nmsel; k++) {
    const hc_metric_info *inf = hc_metrics_get(r->m, r->msel[k]);
    for (size_t c = 0; c < inf->ncounters; c++)
      if (r->mc_to_c[inf->counters[c]] >= 0) r->used[r->mc_to_c[inf->counters[c]]] = 1;
    size_t ag[256], nag = hc_metric_aggs(r->m, r->msel[k], ag, 256);
    for (size_t i = 0; i < nag && i < 256; i++) {
      int dup = 0;
      for (size_t j = 0; j < r->naggs; j++)
        dup |= r->aggs[j] == ag[i];
      if (!dup) r->aggs[r->naggs++] = ag[i];
    }
  }
  return HP_OK;
}

/* ---- building rows ---- */

typedef struct rowctx { /* per-metric tallies for the notes */
  uint64_t *mixed, *div0, *missing, *incomplete_rows, *over_peak;
  double *worst_pct; /* per metric: the highest % of peak among rows above it */
  unsigned *missing_vars;
  uint64_t incomplete_groups, imputed_groups;
} rowctx;

static void fmt_size(char *buf, size_t len, const uint32_t *v) {
  snprintf(buf, len, "%" PRIu32 "x%" PRIu32 "x%" PRIu32, v[0], v[1], v[2]);
}

/* Environment of one dispatch for the metrics (counter values, passes, variables). */
static void dispatch_env(const run *r, const drec *d, size_t di, double *vals, uint32_t *exec, uint8_t *imp,
                         hc_metric_env *env) {
  size_t nc = r->t.ncounters;
  int replayed = d->passes > 1;
  for (size_t i = 0; i < r->nmc; i++) {
    long c = r->mc_to_c[i];
    const cslot *sl = c >= 0 && r->slots ? &r->slots[di * nc + (size_t)c] : NULL;
    vals[i] = sl && sl->n ? sl->sum / sl->n : NAN;
    exec[i] = sl && sl->n && replayed ? (sl->pass ? sl->pass : 0) : 0;
    imp[i] = sl && sl->imputed;
  }
  const agent_rec *a = &r->t.agents[d->agent];
  memset(env, 0, sizeof *env);
  env->counters = vals;
  env->exec = exec;
  env->imputed = imp;
  env->vars[HC_VAR_DURATION] = d->start && d->end >= d->start ? (double)dur_ns(d->start, d->end) : NAN;
  env->vars[HC_VAR_GRID_SIZE] = (double)d->grid[0] * d->grid[1] * d->grid[2];
  env->vars[HC_VAR_WORKGROUP_SIZE] =
      d->wg[0] ? (double)d->wg[0] * (d->wg[1] ? d->wg[1] : 1) * (d->wg[2] ? d->wg[2] : 1) : NAN;
  for (int k = 0; k < NCONST; k++)
    env->vars[HC_VAR_COMPUTE_UNITS + k] = a->c[k];
  env->duration_exec = replayed ? 1 : 0;
}

static unsigned cell_flags(unsigned mv) {
  return ((mv & HC_MV_IMPUTED) ? HA_CELL_IMPUTED : 0) | ((mv & HC_MV_MISSING) ? HA_CELL_MISSING : 0) |
         ((mv & HC_MV_DIV0) ? HA_CELL_DIV0 : 0) | ((mv & HC_MV_MIXED) ? HA_CELL_MIXED : 0);
}

/* Append names to a space-separated list. */
static void list_add(char *buf, size_t len, const char *name) {
  size_t w = strlen(buf);
  if (w + strlen(name) + 2 < len) snprintf(buf + w, len - w, "%s%s", w ? " " : "", name);
}

/* The outcome of one metric on one row. */
typedef struct mout {
  hc_metric_value v;
  unsigned extra;    /* HA_CELL_* to add: INCOMPLETE (left out), MIXED, IMPUTED */
  unsigned nan_vars; /* variables it needs that had no value (bits of hc_var) */
} mout;

/* Evaluate metric k (of the selection) on env; extra flags given. */
static void eval_metric(const run *r, size_t k, const hc_metric_env *env, unsigned extra, mout *o) {
  const hc_metric_info *inf = hc_metrics_get(r->m, r->msel[k]);
  o->extra = extra;
  o->nan_vars = 0;
  if (extra & HA_CELL_INCOMPLETE) {
    o->v = (hc_metric_value){.value = NAN, .peak = NAN, .pct_peak = NAN, .flags = HC_MV_MISSING};
    return;
  }
  hc_metric_eval(r->m, r->msel[k], env, &o->v);
  for (int vi = 0; vi < HC_VAR_COUNT; vi++)
    if ((inf->vars & (1u << vi)) && is_nan(env->vars[vi])) o->nan_vars |= 1u << vi;
}

/* Fill the counter, metric and flag cells of a row (first counter column `c0`). cval/cimp: per store
 * counter, the row's value (NaN when none) and imputed flag; mo: per selected metric. */
static int fill_measures(run *r, ha_result *res, cell *row, uint8_t *fl, size_t c0, const double *cval,
                         const uint8_t *cimp, const mout *mo, rowctx *rc) {
  size_t col = c0;
  char imputed[2048] = "", incomplete[2048] = "", over[2048] = "";
  for (size_t k = 0; k < r->nsel; k++, col++) {
    size_t j = r->sel[k];
    row[col].num = cval[j];
    if (is_nan(cval[j])) {
      fl[col] = HA_CELL_MISSING;
      list_add(incomplete, sizeof incomplete, r->t.counters[j].name);
    } else if (cimp[j]) {
      fl[col] = HA_CELL_IMPUTED;
      list_add(imputed, sizeof imputed, r->t.counters[j].name);
    }
  }
  /* counters only the metrics use also show in "incomplete" when a row lacks them */
  for (size_t j = 0; j < r->t.ncounters; j++) {
    int reported = 0;
    for (size_t k = 0; k < r->nsel; k++)
      reported |= r->sel[k] == j;
    if (!reported && r->used[j] && is_nan(cval[j]))
      list_add(incomplete, sizeof incomplete, r->t.counters[j].name);
  }
  for (size_t k = 0; k < r->nmsel; k++) {
    const hc_metric_info *inf = hc_metrics_get(r->m, r->msel[k]);
    hc_metric_value v = mo[k].v;
    unsigned f = cell_flags(v.flags) | mo[k].extra;
    if (f & HA_CELL_INCOMPLETE) { /* never computed from a partial set of counters */
      f = HA_CELL_INCOMPLETE | HA_CELL_MISSING;
      v.value = v.pct_peak = NAN;
      rc->incomplete_rows[k]++;
    } else {
      if (f & HA_CELL_MIXED) rc->mixed[k]++;
      if (f & HA_CELL_DIV0) rc->div0[k]++;
      if (f & HA_CELL_MISSING) {
        rc->missing[k]++;
        rc->missing_vars[k] |= mo[k].nan_vars;
      }
    }
    if (f & HA_CELL_IMPUTED) list_add(imputed, sizeof imputed, inf->name);
    if (!(f & HA_CELL_INCOMPLETE) && inf->peak[0] && !is_nan(v.pct_peak) && v.pct_peak > 100) {
      /* above its physical peak: flagged, counted for the note, named with its share in "over_peak" */
      char what[320];
      snprintf(what, sizeof what, "%s=%.0f%%", inf->name, v.pct_peak);
      list_add(over, sizeof over, what);
      f |= HA_CELL_OVER_PEAK;
      rc->over_peak[k]++;
      if (v.pct_peak > rc->worst_pct[k]) rc->worst_pct[k] = v.pct_peak;
    }
    row[col].num = v.value;
    fl[col++] = (uint8_t)f;
    if (inf->peak[0]) {
      row[col].num = v.pct_peak;
      fl[col++] = (uint8_t)(is_nan(v.pct_peak) ? (f | HA_CELL_MISSING) : f);
    }
  }
  if (r->nsel || r->nmsel) {
    if (!(row[col].text = intern(res, imputed)) || !(row[col + 1].text = intern(res, incomplete)) ||
        !(row[col + 2].text = intern(res, over)))
      return -1;
    fl[col] = fl[col + 1] = fl[col + 2] = 0;
  }
  return 0;
}

static int add_measure_cols(run *r, ha_result *res) {
  for (size_t k = 0; k < r->nsel; k++) {
    const counter_rec *c = &r->t.counters[r->sel[k]];
    if (add_col(res, c->name, HA_REAL, HA_ROLE_COUNTER, c->unit)) return -1;
  }
  for (size_t k = 0; k < r->nmsel; k++) {
    const hc_metric_info *inf = hc_metrics_get(r->m, r->msel[k]);
    if (add_col(res, inf->name, HA_REAL, HA_ROLE_METRIC, inf->unit)) return -1;
    if (inf->peak[0]) {
      char name[300];
      snprintf(name, sizeof name, "%s_pct_peak", inf->name);
      if (add_col(res, name, HA_REAL, HA_ROLE_PEAK, "%")) return -1;
    }
  }
  if ((r->nsel || r->nmsel) && (add_col(res, "imputed", HA_TEXT, HA_ROLE_FLAGS, "") ||
                                add_col(res, "incomplete", HA_TEXT, HA_ROLE_FLAGS, "") ||
                                add_col(res, "over_peak", HA_TEXT, HA_ROLE_FLAGS, "")))
    return -1;
  return 0;
}

/* Sorting. */
static _Thread_local const run *sort_run; /* qsort has no context argument */

static int cmp_name_then(const run *r, uint32_t ka, uint32_t kb) {
  return strcmp(r->t.kernels[ka].name, r->t.kernels[kb].name);
}

static int cmp_groups(const void *x, const void *y) {
  const run *r = sort_run;
  const grec *a = &r->g[*(const size_t *)x], *b = &r->g[*(const size_t *)y];
  if (a->agent != b->agent) return a->agent < b->agent ? -1 : 1;
  if (r->sort == HA_SORT_TIME) {
    if (a->total != b->total) return a->total > b->total ? -1 : 1;
    if (a->calls != b->calls) return a->calls > b->calls ? -1 : 1;
  } else if (r->sort == HA_SORT_NAME) {
    int c = cmp_name_then(r, a->kernel, b->kernel);
    if (c) return c;
    for (int i = 0; i < 3; i++) {
      if (a->grid[i] != b->grid[i]) return a->grid[i] < b->grid[i] ? -1 : 1;
      if (a->wg[i] != b->wg[i]) return a->wg[i] < b->wg[i] ? -1 : 1;
    }
  }
  return a->first < b->first ? -1 : a->first > b->first;
}

static int cmp_dispatches(const void *x, const void *y) {
  const run *r = sort_run;
  size_t i = *(const size_t *)x, j = *(const size_t *)y;
  const drec *a = &r->d[i], *b = &r->d[j];
  if (a->agent != b->agent) return a->agent < b->agent ? -1 : 1;
  if (r->sort == HA_SORT_TIME) {
    int64_t ta = a->start && a->end >= a->start ? dur_ns(a->start, a->end) : -1;
    int64_t tb = b->start && b->end >= b->start ? dur_ns(b->start, b->end) : -1;
    if (ta != tb) return ta > tb ? -1 : 1;
  } else if (r->sort == HA_SORT_NAME) {
    int c = cmp_name_then(r, a->kernel, b->kernel);
    if (c) return c;
  }
  return i < j ? -1 : i > j;
}

/* Device totals of the kept dispatches, for the percent column (summed while scanning). */
static int64_t *device_totals(const run *r) {
  int64_t *t = calloc(r->t.nagents + 1, sizeof *t);
  if (!t) return NULL;
  for (size_t i = 0; i < r->ndevtot && i <= r->t.nagents; i++)
    t[i] = r->devtot[i];
  return t;
}

/* Keep the first `limit` entries of each device in `order` (sorted by device first). */
static size_t apply_limit(const run *r, size_t *order, size_t n, int by_dispatch) {
  if (r->limit <= 0) return n;
  size_t out = 0, run_len = 0;
  uint32_t cur = UINT32_MAX;
  for (size_t i = 0; i < n; i++) {
    uint32_t a = by_dispatch ? r->d[order[i]].agent : r->g[order[i]].agent;
    if (a != cur) {
      cur = a;
      run_len = 0;
    }
    if ((int64_t)run_len++ < r->limit) order[out++] = order[i];
  }
  return out;
}

static hp_status build_dispatch_rows(run *r, ha_result *res, rowctx *rc) {
  static const char *const names[] = {"device", "pid",       "dispatch", "row",         "kernel",
                                      "grid",   "workgroup", "start_ns", "duration_ns", "percent"};
  static const ha_col_kind kinds[] = {HA_TEXT, HA_INT,  HA_INT, HA_INT,  HA_TEXT,
                                      HA_TEXT, HA_TEXT, HA_INT, HA_REAL, HA_REAL};
  static const ha_col_role roles[] = {HA_ROLE_KEY, HA_ROLE_KEY, HA_ROLE_KEY,  HA_ROLE_KEY,  HA_ROLE_KEY,
                                      HA_ROLE_KEY, HA_ROLE_KEY, HA_ROLE_STAT, HA_ROLE_STAT, HA_ROLE_STAT};
  static const char *const units[] = {"", "", "", "", "", "", "", "ns", "ns", "%"};
  for (size_t i = 0; i < 10; i++)
    if (add_col(res, names[i], kinds[i], roles[i], units[i])) return HP_ERR_NOMEM;
  if (add_measure_cols(r, res)) return HP_ERR_NOMEM;
  size_t *order = malloc((r->nd + 1) * sizeof *order);
  int64_t *tot = device_totals(r);
  size_t nc = r->t.ncounters, nmc = r->nmc;
  double *cval = malloc((nc + 1) * sizeof *cval), *vals = malloc((nmc + 1) * sizeof *vals);
  uint8_t *cimp = malloc(nc + 1), *imp = malloc(nmc + 1);
  uint32_t *exec = malloc((nmc + 1) * sizeof *exec);
  mout *mo = calloc(r->nmsel + 1, sizeof *mo);
  hp_status st = order && tot && cval && vals && cimp && imp && exec && mo ? HP_OK : HP_ERR_NOMEM;
  size_t n = 0;
  if (st == HP_OK) {
    for (size_t i = 0; i < r->nd; i++)
      order[i] = i;
    sort_run = r;
    qsort(order, r->nd, sizeof *order, cmp_dispatches);
    n = apply_limit(r, order, r->nd, 1);
  }
  for (size_t oi = 0; oi < n && st == HP_OK; oi++) {
    size_t di = order[oi];
    const drec *d = &r->d[di];
    uint8_t *fl;
    cell *row = add_row(res, &fl);
    if (!row) {
      st = HP_ERR_NOMEM;
      break;
    }
    char grid[64], wg[64];
    fmt_size(grid, sizeof grid, d->grid);
    fmt_size(wg, sizeof wg, d->wg);
    row[0].text = intern(res, r->t.agents[d->agent].name);
    row[1].i = d->pid;
    row[2].i = (int64_t)d->dispatch_id;
    row[3].i = (int64_t)d->id;
    row[4].text = intern(res, r->t.kernels[d->kernel].name);
    row[5].text = intern(res, grid);
    row[6].text = intern(res, wg);
    row[7].i = d->start;
    int timed = d->start && d->end >= d->start;
    row[8].num = timed ? (double)dur_ns(d->start, d->end) : NAN;
    row[9].num =
        timed && tot[d->agent] ? 100.0 * (double)dur_ns(d->start, d->end) / (double)tot[d->agent] : NAN;
    if (!timed) fl[8] = fl[9] = HA_CELL_MISSING;
    if (!row[0].text || !row[4].text || !row[5].text || !row[6].text) {
      st = HP_ERR_NOMEM;
      break;
    }
    if (!r->nsel && !r->nmsel) continue;
    for (size_t j = 0; j < nc; j++) {
      const cslot *sl = r->slots ? &r->slots[di * nc + j] : NULL;
      cval[j] = sl && sl->n ? sl->sum / sl->n : NAN;
      cimp[j] = sl && sl->imputed;
    }
    int inc = d->mux_incomplete && r->nmsel, imputed = 0;
    for (size_t j = 0; j < nc; j++)
      if (r->used[j]) {
        inc |= is_nan(cval[j]);
        imputed |= cimp[j];
      }
    rc->incomplete_groups += inc;
    rc->imputed_groups += imputed;
    hc_metric_env env;
    memset(&env, 0, sizeof env);
    if (r->m) dispatch_env(r, d, di, vals, exec, imp, &env);
    for (size_t k = 0; k < r->nmsel; k++) {
      const hc_metric_info *inf = hc_metrics_get(r->m, r->msel[k]);
      int lacks = d->mux_incomplete && inf->ncounters > 0; /* a multiplexed key that missed passes */
      for (size_t c = 0; c < inf->ncounters; c++)
        lacks |= is_nan(vals[inf->counters[c]]);
      eval_metric(r, k, &env, lacks ? HA_CELL_INCOMPLETE : 0, &mo[k]);
    }
    if (fill_measures(r, res, row, fl, 10, cval, cimp, mo, rc)) st = HP_ERR_NOMEM;
  }
  free(mo);
  free(order);
  free(tot);
  free(cval);
  free(vals);
  free(cimp);
  free(imp);
  free(exec);
  return st;
}

/* Per group and selected metric: the sums over the group's dispatches that have every counter the metric
 * needs (a ratio is a ratio of the same dispatches), so a group's metric is computed from those alone. */
typedef struct macc {
  double dur, grid, wg;   /* sums of the variables */
  uint64_t n, ndur, nwg;  /* dispatches summed; with a time; with a work-group size */
  uint8_t imputed, mixed; /* an input was imputed; values of different passes on one dispatch */
} macc;

/* Per group (a kernel, a region): the sums its counters and metrics need, added dispatch by dispatch. Per
 * group: counter sums of per-dispatch values, dispatches with a value, imputed; per group and metric: sums
 * of its counters (offsets moff[k] into a block of msz doubles), a macc, the metrics' SUM()/AVG(). */
typedef struct gmeas {
  size_t nc, nm, na, msz;
  size_t *moff;
  double *gsum, *msum;
  uint64_t *gn;
  uint8_t *gimp;
  macc *ma;
  hc_metric_acc *gacc;
  double *vals; /* scratch of one dispatch or group: per metric-set counter */
  uint32_t *exec;
  uint8_t *imp;
} gmeas;

static void gmeas_free(gmeas *m) {
  free(m->moff);
  free(m->gsum);
  free(m->msum);
  free(m->gn);
  free(m->gimp);
  free(m->ma);
  free(m->gacc);
  free(m->vals);
  free(m->exec);
  free(m->imp);
}

/* Room for ng groups (0: the scratch only); -1 when out of memory (free it anyway). */
static int gmeas_init(const run *r, gmeas *m, size_t ng) {
  memset(m, 0, sizeof *m);
  size_t nc = m->nc = r->t.ncounters, nm = m->nm = r->nmsel, nmc = r->nmc;
  m->na = r->m ? hc_metrics_naggs(r->m) : 0;
  if (!(m->moff = calloc(nm + 1, sizeof *m->moff))) return -1;
  for (size_t k = 0; k < nm; k++) {
    m->moff[k] = m->msz;
    m->msz += hc_metrics_get(r->m, r->msel[k])->ncounters;
  }
  m->vals = malloc((nmc + 1) * sizeof *m->vals);
  m->exec = malloc((nmc + 1) * sizeof *m->exec);
  m->imp = malloc(nmc + 1);
  m->gsum = calloc(ng * nc + 1, sizeof *m->gsum);
  m->gn = calloc(ng * nc + 1, sizeof *m->gn);
  m->gimp = calloc(ng * nc + 1, 1);
  m->msum = calloc(ng * m->msz + 1, sizeof *m->msum);
  m->ma = calloc(ng * nm + 1, sizeof *m->ma);
  m->gacc = calloc(ng * m->na + 1, sizeof *m->gacc);
  return m->vals && m->exec && m->imp && m->gsum && m->gn && m->gimp && m->msum && m->ma && m->gacc ? 0 : -1;
}

/* Add kept dispatch di to group g. */
static void gmeas_add(const run *r, gmeas *m, size_t di, size_t g) {
  size_t nc = m->nc, nm = m->nm, na = m->na, msz = m->msz;
  const drec *d = &r->d[di];
  const cslot *sl = r->slots ? &r->slots[di * nc] : NULL;
  for (size_t j = 0; sl && j < nc; j++)
    if (sl[j].n && r->used[j]) {
      m->gsum[g * nc + j] += sl[j].sum / sl[j].n;
      m->gn[g * nc + j]++;
      m->gimp[g * nc + j] |= sl[j].imputed;
    }
  if (!nm || d->mux_incomplete) return; /* a multiplexed key that missed passes gives no metric */
  hc_metric_env env;
  double *vals = m->vals;
  dispatch_env(r, d, di, vals, m->exec, m->imp, &env);
  for (size_t k = 0; k < nm; k++) {
    const hc_metric_info *inf = hc_metrics_get(r->m, r->msel[k]);
    int full = 1, imputed = 0;
    for (size_t c = 0; c < inf->ncounters && full; c++) {
      full = !is_nan(vals[inf->counters[c]]);
      imputed |= m->imp[inf->counters[c]];
    }
    if (!full) continue;
    macc *a = &m->ma[g * nm + k];
    double *cs = &m->msum[g * msz + m->moff[k]];
    for (size_t c = 0; c < inf->ncounters; c++)
      cs[c] += vals[inf->counters[c]];
    a->n++;
    a->imputed |= imputed;
    if (!is_nan(env.vars[HC_VAR_DURATION])) {
      a->dur += env.vars[HC_VAR_DURATION];
      a->ndur++;
    }
    a->grid += env.vars[HC_VAR_GRID_SIZE];
    if (!is_nan(env.vars[HC_VAR_WORKGROUP_SIZE])) {
      a->wg += env.vars[HC_VAR_WORKGROUP_SIZE];
      a->nwg++;
    }
    if (inf->ncounters > 1 || (inf->ncounters && (inf->vars & 1u << HC_VAR_DURATION))) {
      hc_metric_value v;
      hc_metric_eval(r->m, r->msel[k], &env, &v);
      a->mixed |= (v.flags & HC_MV_MIXED) != 0;
    }
  }
  for (size_t k = 0; k < r->naggs; k++)
    hc_metrics_agg_add(r->m, r->aggs[k], &env, &m->gacc[g * na + r->aggs[k]]);
}

static hp_status build_group_rows(run *r, ha_result *res, rowctx *rc) {
  int grid = r->group == HA_BY_KERNEL_GRID;
  uint64_t ncold = 0, ncalls = 0; /* cold dispatches: a column and a note only when there are any */
  for (size_t i = 0; i < r->ng; i++) {
    ncold += r->g[i].cold;
    ncalls += r->g[i].calls;
  }
  if (ncold && add_note(res,
                        "%" PRIu64 " of the %" PRIu64
                        " calls are cold: the first dispatch of their kernel under iteration multiplexing, "
                        "their raw readings hold first-use (JIT) cost: left out of the imputed medians and "
                        "replaced by them where warm dispatches measured the counter (raw values in metadata "
                        "multiplex_cold_raw; cold_calls in CSV and JSON)",
                        ncold, ncalls))
    return HP_ERR_NOMEM;
  if (add_col(res, "device", HA_TEXT, HA_ROLE_KEY, "") || add_col(res, "kernel", HA_TEXT, HA_ROLE_KEY, "") ||
      (grid && (add_col(res, "grid", HA_TEXT, HA_ROLE_KEY, "") ||
                add_col(res, "workgroup", HA_TEXT, HA_ROLE_KEY, ""))) ||
      add_col(res, "calls", HA_INT, HA_ROLE_STAT, "") ||
      add_col(res, "timed_calls", HA_INT, HA_ROLE_STAT, "") ||
      add_col(res, "total_ns", HA_INT, HA_ROLE_STAT, "ns") ||
      add_col(res, "avg_ns", HA_REAL, HA_ROLE_STAT, "ns") ||
      add_col(res, "min_ns", HA_INT, HA_ROLE_STAT, "ns") ||
      add_col(res, "max_ns", HA_INT, HA_ROLE_STAT, "ns") ||
      add_col(res, "percent", HA_REAL, HA_ROLE_STAT, "%") ||
      (ncold && add_col(res, "cold_calls", HA_INT, HA_ROLE_STAT, "")) || add_measure_cols(r, res))
    return HP_ERR_NOMEM;
  size_t nc = r->t.ncounters, ng = r->ng, nmc = r->nmc, nm = r->nmsel;
  int measures = r->nsel || r->nmsel;
  gmeas gm;
  double *cval = malloc((nc + 1) * sizeof *cval);
  uint8_t *cimp = malloc(nc + 1);
  size_t *order = malloc((ng + 1) * sizeof *order);
  int64_t *tot = device_totals(r);
  mout *mo = calloc(nm + 1, sizeof *mo);
  hp_status st =
      !gmeas_init(r, &gm, measures ? ng : 0) && cval && cimp && order && tot && mo ? HP_OK : HP_ERR_NOMEM;
  size_t na = gm.na, msz = gm.msz;
  double *vals = gm.vals, *msum = gm.msum, *gsum = gm.gsum;
  uint8_t *imp = gm.imp, *gimp = gm.gimp;
  uint64_t *gn = gm.gn;
  size_t *moff = gm.moff;
  macc *ma = gm.ma;
  hc_metric_acc *gacc = gm.gacc;
  for (size_t di = 0; st == HP_OK && measures && di < r->nd; di++)
    gmeas_add(r, &gm, di, r->d[di].group);
  size_t n = 0;
  if (st == HP_OK) {
    for (size_t i = 0; i < ng; i++)
      order[i] = i;
    sort_run = r;
    qsort(order, ng, sizeof *order, cmp_groups);
    n = apply_limit(r, order, ng, 0);
  }
  for (size_t oi = 0; oi < n && st == HP_OK; oi++) {
    size_t gi = order[oi];
    const grec *g = &r->g[gi];
    uint8_t *fl;
    cell *row = add_row(res, &fl);
    if (!row) {
      st = HP_ERR_NOMEM;
      break;
    }
    size_t c = 0;
    row[c++].text = intern(res, r->t.agents[g->agent].name);
    row[c++].text = intern(res, r->t.kernels[g->kernel].name);
    if (grid) {
      char a[64], b[64];
      fmt_size(a, sizeof a, g->grid);
      fmt_size(b, sizeof b, g->wg);
      row[c++].text = intern(res, a);
      row[c++].text = intern(res, b);
    }
    for (size_t k = 0; k < c; k++)
      if (!row[k].text) st = HP_ERR_NOMEM;
    row[c++].i = (int64_t)g->calls;
    row[c++].i = (int64_t)g->timed;
    row[c++].i = g->total;
    row[c].num = g->timed ? (double)g->total / (double)g->timed : NAN;
    row[c + 1].i = g->min;
    row[c + 2].i = g->max;
    if (!g->timed) fl[c] = fl[c + 1] = fl[c + 2] = HA_CELL_MISSING;
    c += 3;
    int64_t dt = tot[g->agent];
    row[c].num = dt ? 100.0 * (double)g->total / (double)dt : (g->timed ? 0 : NAN);
    if (is_nan(row[c].num)) fl[c] = HA_CELL_MISSING;
    c++;
    if (ncold) row[c++].i = (int64_t)g->cold;
    if (!measures || st != HP_OK) continue;
    int incomplete = 0, imputed = 0;
    for (size_t j = 0; j < nc; j++) {
      uint64_t have = gn[gi * nc + j];
      cval[j] = have ? gsum[gi * nc + j] / (double)have : NAN;
      cimp[j] = have && (have < g->calls || gimp[gi * nc + j]);
      if (r->used[j]) {
        incomplete |= !have;
        imputed |= cimp[j];
      }
    }
    const agent_rec *ag = &r->t.agents[g->agent];
    for (size_t k = 0; k < nm; k++) {
      const hc_metric_info *inf = hc_metrics_get(r->m, r->msel[k]);
      const macc *a = &ma[gi * nm + k];
      const double *cs = &msum[gi * msz + moff[k]];
      if (!a->n) { /* no dispatch of the group has every counter it needs */
        eval_metric(r, k, NULL, HA_CELL_INCOMPLETE, &mo[k]);
        incomplete |= inf->ncounters > 0;
        continue;
      }
      hc_metric_env env;
      memset(&env, 0, sizeof env);
      for (size_t i = 0; i < nmc; i++) {
        vals[i] = NAN;
        imp[i] = 0;
      }
      for (size_t i = 0; i < inf->ncounters; i++) {
        vals[inf->counters[i]] = cs[i] / (double)a->n;
        imp[inf->counters[i]] = a->imputed || a->n < g->calls;
      }
      env.counters = vals;
      env.imputed = imp;
      env.vars[HC_VAR_DURATION] = a->ndur ? a->dur / (double)a->ndur : NAN;
      env.vars[HC_VAR_GRID_SIZE] = a->grid / (double)a->n;
      env.vars[HC_VAR_WORKGROUP_SIZE] = a->nwg ? a->wg / (double)a->nwg : NAN;
      for (int x = 0; x < NCONST; x++)
        env.vars[HC_VAR_COMPUTE_UNITS + x] = ag->c[x];
      env.acc = &gacc[gi * na];
      env.ndispatches = (double)g->calls;
      unsigned extra = (a->mixed ? HA_CELL_MIXED : 0) | (a->imputed || a->n < g->calls ? HA_CELL_IMPUTED : 0);
      eval_metric(r, k, &env, extra, &mo[k]);
    }
    rc->incomplete_groups += incomplete;
    rc->imputed_groups += imputed;
    if (fill_measures(r, res, row, fl, c, cval, cimp, mo, rc)) st = HP_ERR_NOMEM;
  }
  gmeas_free(&gm);
  free(cval);
  free(cimp);
  free(order);
  free(tot);
  free(mo);
  return st;
}

/* "1 kernel lacks" / "2 kernels lack": the noun for n groups, and the verb's ending */
static const char *unit_name(int group, uint64_t n) {
  int region = group == HA_BY_REGION || group == HA_BY_REGION_TREE;
  const char *one = group == HA_BY_DISPATCH ? "dispatch"
                    : group == HA_BY_KERNEL ? "kernel"
                    : region                ? "region"
                                            : "kernel launch";
  static _Thread_local char buf[64];
  snprintf(buf, sizeof buf, "%s%s", one, n == 1 ? "" : group == HA_BY_KERNEL || region ? "s" : "es");
  return buf;
}

static int write_notes(run *r, ha_result *res, const rowctx *rc) {
  int e = 0;
  if (r->note_metrics[0]) e |= add_note(res, "%s", r->note_metrics);
  if (r->mux_unreadable)
    e |= add_note(res,
                  "the store's metadata multiplex_incomplete cannot be read: incomplete multiplexing keys "
                  "are found by their counters alone");
  for (size_t j = 0; j < r->t.ncounters; j++) {
    if (!r->used[j]) continue;
    if (r->multi && r->multi[j])
      e |= add_note(res,
                    "counter '%s' was measured in several passes of %" PRIu64
                    " dispatch%s: those passes' values are averaged per dispatch, never summed",
                    r->t.counters[j].name, r->multi[j], r->multi[j] == 1 ? "" : "es");
    if (r->dups && r->dups[j])
      e |= add_note(
          res, "counter '%s' has duplicate rows (same dispatch and pass) on %" PRIu64 " dispatch%s: averaged",
          r->t.counters[j].name, r->dups[j], r->dups[j] == 1 ? "" : "es");
  }
  for (size_t k = 0; k < r->nmsel; k++) {
    const hc_metric_info *inf = hc_metrics_get(r->m, r->msel[k]);
    if (rc->mixed[k])
      e |= add_note(
          res,
          "metric '%s' combines values of different replay passes of the same dispatch in %" PRIu64
          " row%s (marked !): its counters were not measured in one pass (plan them with --metrics %s)",
          inf->name, rc->mixed[k], rc->mixed[k] == 1 ? "" : "s", inf->name);
    if (rc->over_peak[k])
      e |= add_note(
          res,
          "metric '%s' is above its peak (%s) in %" PRIu64 " row%s, up to %.0f%% (marked ^, "
          "named in over_peak): %s",
          inf->name, inf->peak, rc->over_peak[k], rc->over_peak[k] == 1 ? "" : "s", rc->worst_pct[k],
          inf->exceeds[0] ? inf->exceeds
                          : "no dispatch can exceed a physical peak: the counters' window holds more "
                            "than the dispatch, or a device constant is wrong");
    if (rc->div0[k])
      e |= add_note(res, "metric '%s' divides by zero in %" PRIu64 " row%s: no value (NaN)", inf->name,
                    rc->div0[k], rc->div0[k] == 1 ? "" : "s");
    if (rc->missing[k]) {
      char vars[256] = "";
      for (int v = 0; v < HC_VAR_COUNT; v++)
        if (rc->missing_vars[k] & (1u << v)) list_add(vars, sizeof vars, hc_var_name(v));
      e |= add_note(res, "metric '%s' has no value in %" PRIu64 " row%s: %s%s", inf->name, rc->missing[k],
                    rc->missing[k] == 1 ? "" : "s", vars[0] ? "unknown " : "an input has no value", vars);
    }
  }
  if (r->nincomplete)
    e |= add_note(res,
                  "%" PRIu64 " dispatch%s incomplete: still running when %s process died (no end time; %s "
                  "device time is unknown and not counted, %s samples are kept)",
                  r->nincomplete, r->nincomplete == 1 ? " is" : "es are",
                  r->nincomplete == 1 ? "its" : "their", r->nincomplete == 1 ? "its" : "their",
                  r->nincomplete == 1 ? "its" : "their");
  uint64_t ni = rc->incomplete_groups, nimp = rc->imputed_groups;
  if (ni && r->group == HA_BY_DISPATCH)
    e |= add_note(res,
                  "%" PRIu64
                  " dispatch%s %s counters not measured on %s, or %s to a multiplexed key that missed "
                  "passes: the metrics needing them are left out, never taken as zero",
                  ni, ni == 1 ? "" : "es", ni == 1 ? "lacks" : "lack", ni == 1 ? "it" : "them",
                  ni == 1 ? "belongs" : "belong");
  else if (ni)
    e |= add_note(
        res,
        "%" PRIu64 " %s %s a counter that none of %s dispatches measured, or a multiplexed key that "
        "missed passes (incomplete coverage): the metrics needing it are left out, never taken as zero",
        ni, unit_name(r->group, ni), ni == 1 ? "lacks" : "lack", ni == 1 ? "its" : "their");
  if (nimp && r->group == HA_BY_DISPATCH)
    e |= add_note(
        res, "%" PRIu64 " dispatch%s %s values imputed at profile time (iteration multiplexing; marked *)",
        nimp, nimp == 1 ? "" : "es", nimp == 1 ? "has" : "have");
  else if (nimp)
    e |= add_note(res,
                  "%" PRIu64
                  " %s %s values imputed (marked *): counters measured on only part of %s dispatches "
                  "(the mean of those that measured them) or imputed at profile time",
                  nimp, unit_name(r->group, nimp), nimp == 1 ? "has" : "have", nimp == 1 ? "its" : "their");
  return e;
}

/* The part of a query before its rows: small tables and filters, the kept dispatches, their counter values,
 * the counters and metrics chosen, and rc's tallies. */
static hp_status run_scan(hp_store *s, run *r, int full, const char *counters, const char *metrics,
                          rowctx *rc) {
  const ha_query *q = r->q;
  hp_status st = load_tables(s, &r->t);
  if (st == HP_OK && full) { /* filters on devices and kernels */
    for (size_t i = 0; i < r->t.nagents; i++)
      r->t.agents[i].keep = !q->ndevices || glob_any(q->devices, q->ndevices, r->t.agents[i].name,
                                                     r->t.agents[i].raw, r->t.agents[i].product);
    for (size_t i = 0; i < r->t.nkernels; i++)
      r->t.kernels[i].keep = !q->nkernels || glob_any(q->kernels, q->nkernels, r->t.kernels[i].name,
                                                      r->t.kernels[i].mangled, NULL);
  }
  r->want_counters = !(counters && !*counters && metrics && !*metrics);
  r->keep_records = r->regions || r->group == HA_BY_DISPATCH || (r->want_counters && r->t.ncounters > 0);
  if (st == HP_OK && r->want_counters) { /* keys iteration multiplexing left incomplete: no metric */
    const char *mux = hp_store_metadata(s, "multiplex_incomplete");
    if (mux && parse_mux(mux, &r->mux, &r->nmux)) r->mux_unreadable = 1;
    for (size_t i = 0; i < r->t.nkernels; i++)
      for (size_t k = 0; k < r->nmux && !r->t.kernels[i].mux; k++)
        r->t.kernels[i].mux = strcmp(r->t.kernels[i].mangled, r->mux[k].kernel) == 0;
  }
  if (st == HP_OK) st = scan_dispatches(s, r);
  if (st == HP_OK && r->want_counters) st = scan_values(s, r);
  if (st == HP_OK) st = select_counters(r, counters);
  if (st == HP_OK && !(metrics && !*metrics)) st = select_metrics(r, metrics);
  size_t nm = r->nmsel + 1;
  if (st == HP_OK &&
      (!(rc->mixed = calloc(nm, sizeof *rc->mixed)) || !(rc->div0 = calloc(nm, sizeof *rc->div0)) ||
       !(rc->missing = calloc(nm, sizeof *rc->missing)) ||
       !(rc->over_peak = calloc(nm, sizeof *rc->over_peak)) ||
       !(rc->worst_pct = calloc(nm, sizeof *rc->worst_pct)) ||
       !(rc->incomplete_rows = calloc(nm, sizeof *rc->incomplete_rows)) ||
       !(rc->missing_vars = calloc(nm, sizeof *rc->missing_vars))))
    st = HP_ERR_NOMEM;
  return st;
}

static void rowctx_free(rowctx *rc) {
  free(rc->mixed);
  free(rc->div0);
  free(rc->over_peak);
  free(rc->worst_pct);
  free(rc->missing);
  free(rc->incomplete_rows);
  free(rc->missing_vars);
}

/* ---- regions (HA_BY_REGION): per region name, from the region and dispatch tables ---- */

typedef struct rreg {
  uint64_t id, proc, thread;
  int64_t start, end;
  const char *cat, *name; /* interned in the result: compared by address */
  int64_t child_ns;       /* inclusive time of the regions directly inside it */
  const char *key;        /* what rows group by: the name, or (tree) the path of names, joined by \x01 */
  int depth;              /* regions of the thread around it */
  long parent;            /* index of the innermost region of the thread around it, -1 none */
  size_t agg;             /* its row (ragg) */
} rreg;
typedef struct ragg {
  const char *cat, *name, *key;
  int depth;
  int64_t calls, total, excl, disp, kernel_ns;
  size_t ix;    /* its index before sorting (gmeas's group) */
  size_t first; /* its first dispatch (kept index), when disp > 0 */
} ragg;

static int cmp_rreg(const void *x, const void *y) {
  const rreg *a = x, *b = y;
  if (a->proc != b->proc) return a->proc < b->proc ? -1 : 1;
  if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  if (a->end != b->end) return a->end > b->end ? -1 : 1; /* the enclosing one first */
  return 0;
}
static int cmp_ragg(const void *x, const void *y) {
  const ragg *a = x, *b = y;
  if (a->total != b->total) return a->total > b->total ? -1 : 1;
  int c = strcmp(a->name, b->name);
  return c ? c : strcmp(a->cat, b->cat);
}
/* Tree order: by path, so each row follows its parent (\x01 sorts before any character), then category. */
static int cmp_ragg_tree(const void *x, const void *y) {
  const ragg *a = x, *b = y;
  int c = strcmp(a->key, b->key);
  return c ? c : strcmp(a->cat, b->cat);
}

/* The innermost region of (proc, thread) whose interval holds t, -1 none: for dispatches that name no
 * region (stores written before dispatch.region_id, NVTX start/end ranges). rg sorted by cmp_rreg. */
static long rreg_at(const rreg *rg, size_t n, uint64_t proc, uint64_t thread, int64_t t) {
  size_t lo = 0, hi = n; /* first region after (proc, thread, t) */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const rreg *m = &rg[mid];
    int before = m->proc != proc ? m->proc < proc : m->thread != thread ? m->thread < thread : m->start <= t;
    if (before)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (!lo || rg[lo - 1].proc != proc || rg[lo - 1].thread != thread) return -1;
  long j = (long)lo - 1;
  while (j >= 0 && rg[j].end < t)
    j = rg[j].parent;
  return j;
}

/* Give the result to the caller, or, on failure, a result holding only why (its partial rows dropped):
 * the reason recorded first, else the store's error, else the status. */
static hp_status hand_out(hp_store *s, hp_status st, ha_result *res, ha_result **out) {
  if (st == HP_OK) {
    *out = res;
    return HP_OK;
  }
  if (st != HP_ERR_NOMEM && s && hp_store_error(s)[0]) res_err(res, st, "%s", hp_store_error(s));
  char why[sizeof res->error];
  snprintf(why, sizeof why, "%s",
           res && res->error[0] ? res->error
           : st == HP_ERR_NOMEM ? "out of memory"
                                : hp_status_str(st));
  ha_result_free(res);
  return error_out(out, st, "%s", why);
}

/* Counters and metrics of region row g (its totals over every call: the sums of the dispatches inside,
 * a dispatch's value the mean of its passes; counters some dispatches lack are estimated from those that
 * have them and flagged imputed), plus host[g * nc + j], the host parts of its calls (NULL: none stored).
 * Metrics come from the kernel part alone. A row without dispatches has its host part (else 0) and no
 * metric. */
static int region_measures(run *r, ha_result *res, gmeas *gm, const ragg *a, const double *host, cell *row,
                           uint8_t *fl, size_t c0, double *cval, uint8_t *cimp, mout *mo, rowctx *rc) {
  size_t g = a->ix, nc = gm->nc, nm = gm->nm, nmc = r->nmc;
  double ndisp = (double)a->disp;
  int incomplete = 0, imputed = 0;
  for (size_t j = 0; j < nc; j++) {
    uint64_t have = gm->gn[g * nc + j];
    cval[j] = !a->disp ? 0 : have ? gm->gsum[g * nc + j] / (double)have * ndisp : NAN;
    if (host) cval[j] += host[g * nc + j]; /* the host part of the calling thread (0 when none) */
    cimp[j] = have && ((double)have < ndisp || gm->gimp[g * nc + j]);
    if (r->used[j]) {
      incomplete |= a->disp && !have;
      imputed |= cimp[j];
    }
  }
  for (size_t k = 0; k < nm; k++) {
    const hc_metric_info *inf = hc_metrics_get(r->m, r->msel[k]);
    const macc *ac = &gm->ma[g * nm + k];
    const double *cs = &gm->msum[g * gm->msz + gm->moff[k]];
    if (!a->disp) { /* no kernel work: nothing to derive a metric from (said once, in a note) */
      mo[k] = (mout){.v = {.value = NAN, .peak = NAN, .pct_peak = NAN, .flags = 0}};
      continue;
    }
    if (!ac->n) { /* no dispatch inside has every counter it needs */
      eval_metric(r, k, NULL, HA_CELL_INCOMPLETE, &mo[k]);
      incomplete |= inf->ncounters > 0;
      continue;
    }
    double scale = ndisp / (double)ac->n;
    hc_metric_env env;
    memset(&env, 0, sizeof env);
    for (size_t i = 0; i < nmc; i++) {
      gm->vals[i] = NAN;
      gm->imp[i] = 0;
    }
    for (size_t i = 0; i < inf->ncounters; i++) {
      gm->vals[inf->counters[i]] = cs[i] * scale;
      gm->imp[inf->counters[i]] = ac->imputed || scale != 1;
    }
    env.counters = gm->vals;
    env.imputed = gm->imp;
    env.vars[HC_VAR_DURATION] = ac->ndur ? ac->dur / (double)ac->ndur * ndisp : NAN; /* device time */
    env.vars[HC_VAR_GRID_SIZE] = ac->grid * scale;                                   /* work-items */
    env.vars[HC_VAR_WORKGROUP_SIZE] = ac->nwg ? ac->wg / (double)ac->nwg : NAN;      /* mean */
    env.acc = &gm->gacc[g * gm->na];
    env.ndispatches = ndisp;
    /* the device constants: those of a dispatch inside (a region's kernels may run on several devices:
     * the first one's) */
    unsigned extra = (ac->mixed ? HA_CELL_MIXED : 0) | (ac->imputed || scale != 1 ? HA_CELL_IMPUTED : 0);
    const agent_rec *ag = &r->t.agents[r->d[a->first].agent];
    for (int x = 0; x < NCONST; x++)
      env.vars[HC_VAR_COMPUTE_UNITS + x] = ag->c[x];
    eval_metric(r, k, &env, extra, &mo[k]);
  }
  rc->incomplete_groups += incomplete;
  rc->imputed_groups += imputed;
  if (fill_measures(r, res, row, fl, c0, cval, cimp, mo, rc)) return -1;
  if (!a->disp) /* a row without kernel work: its metrics have no value, not counted as missing inputs */
    for (size_t k = 0, col = c0 + r->nsel; k < nm; k++) {
      fl[col++] = HA_CELL_MISSING;
      if (hc_metrics_get(r->m, r->msel[k])->peak[0]) fl[col++] = HA_CELL_MISSING;
    }
  return 0;
}

/* The regions read, in store order (hai_each's context: res interns the names). */
typedef struct rreg_list {
  ha_result *res;
  rreg *v;
  size_t n, cap;
} rreg_list;

static hp_status rreg_add(const void *row, void *ctx) {
  const hp_region *g = row;
  rreg_list *l = ctx;
  if (l->n == l->cap && hu_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) return HP_ERR_NOMEM;
  rreg *x = &l->v[l->n++];
  *x = (rreg){.id = g->id,
              .proc = g->process_id,
              .thread = g->thread_id,
              .start = g->start_ns,
              .end = g->end_ns < g->start_ns ? g->start_ns : g->end_ns,
              .cat = intern(l->res, g->category),
              .name = intern(l->res, g->name),
              .parent = -1};
  x->key = x->name;
  return x->cat && x->name ? HP_OK : HP_ERR_NOMEM;
}

static hp_status run_regions(hp_store *s, const ha_query *q, int tree, ha_result **out) {
  int full = q->size >= HA_QUERY_V1;
  run r;
  memset(&r, 0, sizeof r);
  r.q = q;
  r.prog = q->size >= offsetof(ha_query, progress_ctx) + sizeof(void *) ? q->progress : NULL;
  r.group = tree ? HA_BY_REGION_TREE : HA_BY_REGION;
  r.regions = 1;
  const char *counters = full ? q->counters : "", *metrics = full ? q->metrics : "";
  ha_result *res = calloc(1, sizeof *res);
  r.res = res;
  rreg *rg = NULL;
  ragg *ag = NULL;
  size_t *stack = NULL, *slot = NULL;
  size_t nr = 0, na = 0, nslot = 0;
  hu_idmap rid = {0};
  gmeas gm;
  memset(&gm, 0, sizeof gm);
  double *cval = NULL, *host = NULL;
  uint8_t *cimp = NULL;
  mout *mo = NULL;
  rowctx rc = {0};
  hp_status st = res ? HP_OK : HP_ERR_NOMEM;
  rreg_list regs = {.res = res};
  hp_region reg = {.size = sizeof reg};
  if (st == HP_OK) st = hai_each(s, HP_TABLE_REGION, &reg, rreg_add, &regs);
  rg = regs.v;
  nr = regs.n;
  if (st == HP_OK) st = run_scan(s, &r, full, counters, metrics, &rc);
  int measures = r.nsel || r.nmsel;
  if (st == HP_OK && !(stack = calloc(nr + 1, sizeof *stack))) st = HP_ERR_NOMEM;
  if (st == HP_OK) {
    qsort(rg, nr, sizeof *rg, cmp_rreg);
    /* parents: per thread, the innermost earlier region that contains it */
    size_t top = 0;
    for (size_t i = 0; i < nr; i++) {
      if (i && (rg[i].proc != rg[i - 1].proc || rg[i].thread != rg[i - 1].thread)) top = 0;
      while (top && rg[stack[top - 1]].end < rg[i].end)
        top--;
      if (top) {
        rg[stack[top - 1]].child_ns += rg[i].end - rg[i].start;
        rg[i].parent = (long)stack[top - 1];
      }
      rg[i].depth = (int)top;
      if (tree && top) { /* the path: the parent's, then this name */
        const char *pk = rg[stack[top - 1]].key;
        size_t a = strlen(pk), b = strlen(rg[i].name);
        char *k = malloc(a + b + 2);
        if (!k) {
          st = HP_ERR_NOMEM;
          break;
        }
        memcpy(k, pk, a);
        k[a] = '\x01';
        memcpy(k + a + 1, rg[i].name, b + 1);
        rg[i].key = intern(res, k);
        free(k);
        if (!rg[i].key) {
          st = HP_ERR_NOMEM;
          break;
        }
      }
      if (rg[i].id && hu_idmap_put(&rid, rg[i].id, i)) {
        st = HP_ERR_NOMEM;
        break;
      }
      stack[top++] = i;
    }
    nslot = 64;
    while (nslot < 2 * nr)
      nslot *= 2;
    if (st == HP_OK && (!(slot = calloc(nslot, sizeof *slot)) || !(ag = calloc(nr + 1, sizeof *ag))))
      st = HP_ERR_NOMEM;
  }
  for (size_t i = 0; st == HP_OK && i < nr; i++) { /* slot holds 1 + the aggregate's index */
    rreg *x = &rg[i];
    size_t h = (size_t)(((uintptr_t)x->key * 0x9E3779B97F4A7C15ull) ^ (uintptr_t)x->cat) & (nslot - 1);
    while (slot[h] && (ag[slot[h] - 1].key != x->key || ag[slot[h] - 1].cat != x->cat))
      h = (h + 1) & (nslot - 1);
    if (!slot[h]) {
      ag[na] = (ragg){.cat = x->cat, .name = x->name, .key = x->key, .depth = tree ? x->depth : 0, .ix = na};
      slot[h] = ++na;
    }
    x->agg = slot[h] - 1;
    ragg *a = &ag[x->agg];
    int64_t incl = x->end - x->start;
    a->calls++;
    a->total += incl;
    a->excl += incl - x->child_ns;
  }
  /* each dispatch: in the region it names (else the innermost of its thread holding its enqueue time)
   * and every region around that one */
  if (st == HP_OK && gmeas_init(&r, &gm, measures ? na : 0)) st = HP_ERR_NOMEM;
  for (size_t di = 0; st == HP_OK && di < r.nd; di++) {
    const rloc *l = &r.rl[di];
    const drec *d = &r.d[di];
    long j = l->region ? ix_get(&rid, l->region) : -1;
    if (j < 0) j = rreg_at(rg, nr, l->proc, l->thread, l->enq);
    int64_t dur = d->start && d->end >= d->start ? dur_ns(d->start, d->end) : 0;
    for (; j >= 0; j = rg[j].parent) {
      size_t g = rg[j].agg;
      ragg *a = &ag[g];
      if (!a->disp) a->first = di;
      a->disp++;
      a->kernel_ns = sat_add(a->kernel_ns, dur);
      if (measures) gmeas_add(&r, &gm, di, g);
    }
  }
  /* each region call's host part (stored with it: counter_value rows naming the region), summed per row */
  if (st == HP_OK && measures && r.nhv && !(host = calloc(na * r.t.ncounters + 1, sizeof *host)))
    st = HP_ERR_NOMEM;
  for (size_t i = 0; st == HP_OK && host && i < r.nhv; i++) {
    long j = ix_get(&rid, r.hv[i].region);
    if (j >= 0) host[rg[j].agg * r.t.ncounters + r.hv[i].counter] += r.hv[i].value;
  }
  if (st == HP_OK) qsort(ag, na, sizeof *ag, tree ? cmp_ragg_tree : cmp_ragg);
  if (st == HP_OK) {
    if (add_col(res, "category", HA_TEXT, HA_ROLE_KEY, "") ||
        add_col(res, "region", HA_TEXT, HA_ROLE_KEY, "") ||
        (tree && (add_col(res, "depth", HA_INT, HA_ROLE_KEY, "") ||
                  add_col(res, "path", HA_TEXT, HA_ROLE_KEY, ""))) ||
        add_col(res, "calls", HA_INT, HA_ROLE_STAT, "") ||
        add_col(res, "total_ns", HA_INT, HA_ROLE_STAT, "ns") ||
        add_col(res, "avg_ns", HA_REAL, HA_ROLE_STAT, "ns") ||
        add_col(res, "exclusive_ns", HA_INT, HA_ROLE_STAT, "ns") ||
        add_col(res, "dispatches", HA_INT, HA_ROLE_STAT, "") ||
        add_col(res, "kernel_ns", HA_INT, HA_ROLE_STAT, "ns") || add_measure_cols(&r, res))
      st = HP_ERR_NOMEM;
  }
  if (st == HP_OK && measures &&
      (!(cval = malloc((r.t.ncounters + 1) * sizeof *cval)) || !(cimp = malloc(r.t.ncounters + 1)) ||
       !(mo = calloc(r.nmsel + 1, sizeof *mo))))
    st = HP_ERR_NOMEM;
  size_t lim = q->size >= offsetof(ha_query, limit) + sizeof q->limit && q->limit > 0 ? (size_t)q->limit : na;
  uint64_t nodisp = 0;
  for (size_t i = 0; st == HP_OK && i < na && i < lim; i++) {
    uint8_t *fl;
    cell *row = add_row(res, &fl);
    if (!row) {
      st = HP_ERR_NOMEM;
      break;
    }
    size_t c = 0;
    row[c++].text = ag[i].cat;
    if (tree) { /* region: the name indented by depth; path: the names from the outermost, " > " */
      size_t n = 2 * (size_t)ag[i].depth + strlen(ag[i].name), m = 0;
      for (const char *k = ag[i].key; *k; k++)
        m += *k == '\x01' ? 3 : 1;
      char *ind = malloc(n + 1), *path = malloc(m + 1);
      if (ind && path) {
        memset(ind, ' ', 2 * (size_t)ag[i].depth);
        strcpy(ind + 2 * (size_t)ag[i].depth, ag[i].name);
        char *o = path;
        for (const char *k = ag[i].key; *k; k++)
          if (*k == '\x01')
            memcpy(o, " > ", 3), o += 3;
          else
            *o++ = *k;
        *o = 0;
        row[c].text = intern(res, ind);
        row[c + 2].text = intern(res, path);
      }
      free(ind);
      free(path);
      if (!row[c].text || !row[c + 2].text) {
        st = HP_ERR_NOMEM;
        break;
      }
      row[c + 1].i = ag[i].depth;
      c += 3;
    } else {
      row[c++].text = ag[i].name;
    }
    row[c++].i = ag[i].calls;
    row[c++].i = ag[i].total;
    row[c++].num = (double)ag[i].total / (double)ag[i].calls;
    row[c++].i = ag[i].excl;
    row[c++].i = ag[i].disp;
    row[c++].i = ag[i].kernel_ns;
    if (!measures) continue;
    nodisp += !ag[i].disp;
    if (region_measures(&r, res, &gm, &ag[i], host, row, fl, c, cval, cimp, mo, &rc)) st = HP_ERR_NOMEM;
  }
  if (st == HP_OK &&
      (write_notes(&r, res, &rc) ||
       (nodisp && r.nmsel &&
        add_note(res,
                 "%" PRIu64 " region%s enqueued no dispatch: %s counters are %s and %s "
                 "metrics have no value",
                 nodisp, nodisp == 1 ? "" : "s", nodisp == 1 ? "its" : "their",
                 host ? "the host part alone" : "0 (no kernel work)", nodisp == 1 ? "its" : "their"))))
    st = HP_ERR_NOMEM;
  if (st == HP_OK) res->lost = r.t.lost;
  free(rg);
  free(ag);
  free(stack);
  free(slot);
  free(cval);
  free(host);
  free(cimp);
  free(mo);
  hu_idmap_free(&rid);
  gmeas_free(&gm);
  rowctx_free(&rc);
  run_free(&r);
  return hand_out(s, st, res, out);
}

static hp_status run_ranks(hp_store *s, const ha_query *q, int imbalance, ha_result **out);
/* ---- host API calls and memory copies (HA_BY_API, HA_BY_COPY; hubprof trace --api) ---- */

typedef struct apiagg {
  const char *name; /* interned: compared by address */
  int64_t calls, total, min, max;
} apiagg;

static int cmp_apiagg(const void *x, const void *y) {
  const apiagg *a = x, *b = y;
  if (a->total != b->total) return a->total > b->total ? -1 : 1;
  return strcmp(a->name, b->name);
}

/* The API calls summed per function (hai_each's context: res interns the names). */
typedef struct api_sum {
  ha_result *res;
  apiagg *ag;
  size_t na, cap;
  int64_t all;
} api_sum;

static hp_status api_add(const void *row, void *ctx) {
  const hp_region *g = row;
  api_sum *a = ctx;
  if (strcmp(g->category, "api") != 0) return HP_OK;
  const char *name = intern(a->res, g->name);
  if (!name) return HP_ERR_NOMEM;
  int64_t d = g->end_ns > g->start_ns ? g->end_ns - g->start_ns : 0;
  size_t i = 0;
  while (i < a->na && a->ag[i].name != name) /* a few dozen functions: a scan is enough */
    i++;
  if (i == a->na) {
    if (a->na == a->cap && hu_grow((void **)&a->ag, &a->cap, a->na + 1, sizeof *a->ag)) return HP_ERR_NOMEM;
    a->ag[a->na++] = (apiagg){.name = name, .min = d, .max = d};
  }
  apiagg *x = &a->ag[i];
  x->calls++;
  x->total = sat_add(x->total, d);
  if (d < x->min) x->min = d;
  if (d > x->max) x->max = d;
  a->all = sat_add(a->all, d);
  return HP_OK;
}

/* Per OpenCL function: the regions of category "api". */
static hp_status run_api(hp_store *s, const ha_query *q, ha_result **out) {
  ha_result *res = calloc(1, sizeof *res);
  hp_status st = res ? HP_OK : HP_ERR_NOMEM;
  api_sum sum = {.res = res};
  hp_region reg = {.size = sizeof reg};
  if (st == HP_OK) st = hai_each(s, HP_TABLE_REGION, &reg, api_add, &sum);
  apiagg *ag = sum.ag;
  size_t na = sum.na;
  int64_t all = sum.all;
  if (st == HP_OK) {
    qsort(ag, na, sizeof *ag, cmp_apiagg);
    if (add_col(res, "function", HA_TEXT, HA_ROLE_KEY, "") ||
        add_col(res, "calls", HA_INT, HA_ROLE_STAT, "") ||
        add_col(res, "total_ns", HA_INT, HA_ROLE_STAT, "ns") ||
        add_col(res, "avg_ns", HA_REAL, HA_ROLE_STAT, "ns") ||
        add_col(res, "min_ns", HA_INT, HA_ROLE_STAT, "ns") ||
        add_col(res, "max_ns", HA_INT, HA_ROLE_STAT, "ns") ||
        add_col(res, "percent", HA_REAL, HA_ROLE_STAT, "%"))
      st = HP_ERR_NOMEM;
  }
  size_t lim = q->size >= offsetof(ha_query, limit) + sizeof q->limit && q->limit > 0 ? (size_t)q->limit : na;
  for (size_t i = 0; st == HP_OK && i < na && i < lim; i++) {
    uint8_t *fl;
    cell *row = add_row(res, &fl);
    if (!row) {
      st = HP_ERR_NOMEM;
      break;
    }
    row[0].text = ag[i].name;
    row[1].i = ag[i].calls;
    row[2].i = ag[i].total;
    row[3].num = (double)ag[i].total / (double)ag[i].calls;
    row[4].i = ag[i].min;
    row[5].i = ag[i].max;
    row[6].num = all ? 100.0 * (double)ag[i].total / (double)all : NAN;
  }
  if (st == HP_OK && !na &&
      add_note(
          res,
          "no API calls in this store: record them with 'hubprof trace --api' (or profile/sample --api)"))
    st = HP_ERR_NOMEM;
  free(ag);
  return hand_out(s, st, res, out);
}

/* The memory copies summed per direction (H2D, D2H, D2D, FILL, then the unknown ones). */
enum { NCOPYDIR = 5 };
typedef struct copy_sum {
  int64_t n[NCOPYDIR], timed[NCOPYDIR], ns[NCOPYDIR];
  uint64_t bytes[NCOPYDIR], tbytes[NCOPYDIR];
} copy_sum;

static hp_status copy_add(const void *row, void *ctx) {
  const hp_memory_copy *m = row;
  copy_sum *a = ctx;
  size_t k = m->direction >= HP_COPY_H2D && m->direction <= HP_COPY_FILL ? m->direction - 1 : NCOPYDIR - 1;
  a->n[k]++;
  a->bytes[k] += m->bytes;
  if (m->start_ns && m->end_ns >= m->start_ns) {
    a->timed[k]++;
    a->tbytes[k] += m->bytes;
    a->ns[k] = sat_add(a->ns[k], m->end_ns - m->start_ns);
  }
  return HP_OK;
}

/* Per direction: the memory_copy rows (device time of the timed ones; bandwidth over those). */
static hp_status run_copies(hp_store *s, const ha_query *q, ha_result **out) {
  static const char *const dirs[NCOPYDIR] = {"H2D", "D2H", "D2D", "FILL", "UNKNOWN"};
  enum { ND = NCOPYDIR };
  copy_sum a;
  memset(&a, 0, sizeof a);
  const int64_t *n = a.n, *timed = a.timed, *ns = a.ns;
  const uint64_t *bytes = a.bytes, *tbytes = a.tbytes;
  ha_result *res = calloc(1, sizeof *res);
  hp_status st = res ? HP_OK : HP_ERR_NOMEM;
  hp_memory_copy cp = {.size = sizeof cp};
  if (st == HP_OK) st = hai_each(s, HP_TABLE_MEMORY_COPY, &cp, copy_add, &a);
  if (st == HP_OK && (add_col(res, "direction", HA_TEXT, HA_ROLE_KEY, "") ||
                      add_col(res, "copies", HA_INT, HA_ROLE_STAT, "") ||
                      add_col(res, "bytes", HA_INT, HA_ROLE_STAT, "bytes") ||
                      add_col(res, "timed_copies", HA_INT, HA_ROLE_STAT, "") ||
                      add_col(res, "total_ns", HA_INT, HA_ROLE_STAT, "ns") ||
                      add_col(res, "avg_ns", HA_REAL, HA_ROLE_STAT, "ns") ||
                      add_col(res, "bandwidth_gbs", HA_REAL, HA_ROLE_STAT, "GB/s")))
    st = HP_ERR_NOMEM;
  size_t rows = 0,
         lim = q->size >= offsetof(ha_query, limit) + sizeof q->limit && q->limit > 0 ? (size_t)q->limit : ND;
  for (size_t k = 0; st == HP_OK && k < ND && rows < lim; k++) {
    if (!n[k]) continue;
    uint8_t *fl;
    cell *row = add_row(res, &fl);
    if (!row) {
      st = HP_ERR_NOMEM;
      break;
    }
    rows++;
    row[0].text = intern(res, dirs[k]);
    row[1].i = n[k];
    row[2].i = (int64_t)bytes[k];
    row[3].i = timed[k];
    row[4].i = ns[k];
    row[5].num = timed[k] ? (double)ns[k] / (double)timed[k] : NAN;
    row[6].num = ns[k] ? (double)tbytes[k] / (double)ns[k] : NAN; /* bytes per ns = GB/s */
    if (!row[0].text) st = HP_ERR_NOMEM;
  }
  if (st == HP_OK && !rows &&
      add_note(
          res,
          "no memory copies in this store: record them with 'hubprof trace --api' (or profile/sample --api)"))
    st = HP_ERR_NOMEM;
  return hand_out(s, st, res, out);
}

static hp_status run_query(hp_store *s, const ha_query *q, ha_result **out) {
  if (out) *out = NULL;
  if (!s || !q || !out || q->size < sizeof(uint32_t) + sizeof(int32_t))
    return error_out(out, HP_ERR_INVALID, "bad arguments");
  run r;
  memset(&r, 0, sizeof r);
  r.q = q;
  r.prog = q->size >= offsetof(ha_query, progress_ctx) + sizeof(void *) ? q->progress : NULL;
  r.group = q->group;
  r.limit = q->size >= offsetof(ha_query, limit) + sizeof q->limit ? q->limit : 0;
  int full = q->size >= HA_QUERY_V1;
  if (r.group == HA_BY_REGION || r.group == HA_BY_REGION_TREE)
    return run_regions(s, q, r.group == HA_BY_REGION_TREE, out);
  if (r.group >= HA_BY_INSTRUCTION && r.group <= HA_BY_SOURCE) return hai_attribution(s, q, out);
  if (r.group == HA_TIMELINE) return hai_timeline(s, q, out);
  if (r.group == HA_BY_RANK || r.group == HA_BY_RANK_IMBALANCE)
    return run_ranks(s, q, r.group == HA_BY_RANK_IMBALANCE, out);
  if (r.group == HA_BY_API) return run_api(s, q, out);
  if (r.group == HA_BY_COPY) return run_copies(s, q, out);
  if (r.group != HA_BY_KERNEL && r.group != HA_BY_DISPATCH && r.group != HA_BY_KERNEL_GRID) {
    return error_out(out, HP_ERR_INVALID, "unknown grouping %d", (int)r.group);
  }
  r.sort = full ? q->sort : HA_SORT_DEFAULT;
  if (r.sort < HA_SORT_DEFAULT || r.sort > HA_SORT_NAME) {
    return error_out(out, HP_ERR_INVALID, "unknown sort order %d", (int)r.sort);
  }
  if (r.sort == HA_SORT_DEFAULT) r.sort = r.group == HA_BY_DISPATCH ? HA_SORT_ORDER : HA_SORT_TIME;
  if (full && q->dispatch_first && q->dispatch_last && q->dispatch_first > q->dispatch_last) {
    return error_out(out, HP_ERR_INVALID, "empty dispatch range %" PRIu64 "-%" PRIu64, q->dispatch_first,
                     q->dispatch_last);
  }
  const char *counters = full ? q->counters : "", *metrics = full ? q->metrics : "";
  ha_result *res = calloc(1, sizeof *res);
  r.res = res;
  hp_status st = res ? HP_OK : HP_ERR_NOMEM;
  rowctx rc = {0};
  if (st == HP_OK) st = run_scan(s, &r, full, counters, metrics, &rc);
  if (st == HP_OK) {
    res->lost = r.t.lost;
    st = r.group == HA_BY_DISPATCH ? build_dispatch_rows(&r, res, &rc) : build_group_rows(&r, res, &rc);
  }
  if (st == HP_OK && write_notes(&r, res, &rc)) st = HP_ERR_NOMEM;
  rowctx_free(&rc);
  run_free(&r);
  return hand_out(s, st, res, out);
}

hp_status ha_run(hp_store *s, const ha_query *q, ha_result **out) { return run_query(s, q, out); }

/* ---- ranks (HA_BY_RANK, HA_BY_RANK_IMBALANCE): cluster runs, one process per MPI rank ---- */

/* A rank: the processes with that MPI rank (a rank's forked children inherit it), or one process without. */
typedef struct rk_unit {
  int64_t rank, pid; /* rank -1: a process without one */
  const char *host;  /* interned in the result */
  const char *job;   /* the launcher's job id, interned */
  int64_t total;     /* device time of its kept dispatches */
} rk_unit;

typedef struct rk_group { /* one (unit, agent, kernel) */
  uint32_t unit, agent, kernel;
  grec g;
} rk_group;

typedef struct rk_run {
  tables t;
  rk_unit *u;
  size_t nu, capu;
  hu_idmap unit_of;  /* process row id -> unit index */
  hu_idmap rank_ix;  /* rank + 1 -> unit index */
  hu_idmap group_ix; /* (unit, agent, kernel) key -> group index */
  rk_group *g;
  size_t ng, capg;
} rk_run;

static void rk_free(rk_run *k) {
  tables_free(&k->t);
  free(k->u);
  free(k->g);
  hu_idmap_free(&k->unit_of);
  hu_idmap_free(&k->rank_ix);
  hu_idmap_free(&k->group_ix);
}

/* hai_each's context in the rank views: the run, the result (it interns text), the query and its filters
 * (rk_scan), and the host names read (rk_units). */
typedef struct rk_ctx {
  rk_run *k;
  ha_result *res;
  const ha_query *q;
  int filters;
  uint64_t rows;
  hu_idmap host_of; /* node id -> interned host name (as an address) */
} rk_ctx;

static hp_status rk_node(const void *row, void *ctx) {
  const hp_node *nd = row;
  rk_ctx *x = ctx;
  const char *h = intern(x->res, nd->hostname);
  return h && !hu_idmap_put(&x->host_of, nd->id, (uint64_t)(uintptr_t)h) ? HP_OK : HP_ERR_NOMEM;
}

/* A process row: a unit of its own, or the unit of its rank when that rank of that job was seen already. */
static hp_status rk_process(const void *row, void *ctx) {
  const hp_process *p = row;
  rk_ctx *x = ctx;
  rk_run *k = x->k;
  uint64_t have, hv = 0;
  if (hu_idmap_get(&k->unit_of, p->id, &have)) return HP_OK; /* written twice (start, then end) */
  int ranked = p->rank >= 0;
  if (ranked && hu_idmap_get(&k->rank_ix, (uint64_t)p->rank + 1, &have)) {
    /* the same rank of the same job (stores of several jobs merged keep their ranks apart) */
    size_t j = (size_t)have;
    if (strcmp(k->u[j].job, p->job_id))
      for (j = 0; j < k->nu && (k->u[j].rank != p->rank || strcmp(k->u[j].job, p->job_id)); j++)
        ;
    if (j < k->nu) return hu_idmap_put(&k->unit_of, p->id, j) ? HP_ERR_NOMEM : HP_OK;
  }
  if (hu_grow((void **)&k->u, &k->capu, k->nu + 1, sizeof *k->u)) return HP_ERR_NOMEM;
  hu_idmap_get(&x->host_of, p->node_id, &hv);
  k->u[k->nu] = (rk_unit){.rank = ranked ? p->rank : -1,
                          .pid = p->pid,
                          .host = hv ? (const char *)(uintptr_t)hv : "",
                          .job = intern(x->res, p->job_id)};
  if (!k->u[k->nu].job) return HP_ERR_NOMEM;
  if (hu_idmap_put(&k->unit_of, p->id, k->nu) ||
      (ranked && !hu_idmap_get(&k->rank_ix, (uint64_t)p->rank + 1, NULL) &&
       hu_idmap_put(&k->rank_ix, (uint64_t)p->rank + 1, k->nu)))
    return HP_ERR_NOMEM;
  k->nu++;
  return HP_OK;
}

/* Units from the process table (hosts from the node table), ordered by rank, then rankless processes. */
static hp_status rk_units(hp_store *s, rk_run *k, ha_result *res) {
  rk_ctx x = {.k = k, .res = res};
  hp_node nd = {.size = sizeof nd};
  hp_process p = {.size = sizeof p};
  hp_status st = hai_each(s, HP_TABLE_NODE, &nd, rk_node, &x);
  if (st == HP_OK) st = hai_each(s, HP_TABLE_PROCESS, &p, rk_process, &x);
  hu_idmap_free(&x.host_of);
  return st;
}

/* A dispatch row into the group of its (unit, agent, kernel), unless the query's filters leave it out. */
static hp_status rk_dispatch(const void *row, void *ctx) {
  const hp_dispatch *d = row;
  rk_ctx *x = ctx;
  rk_run *k = x->k;
  const ha_query *q = x->q;
  int filters = x->filters;
  if (q->size >= offsetof(ha_query, progress_ctx) + sizeof(void *) && q->progress && !(++x->rows & 0xffff))
    q->progress(q->progress_ctx, x->rows);
  if (filters && ((q->dispatch_first && d->dispatch_id < q->dispatch_first) ||
                  (q->dispatch_last && d->dispatch_id > q->dispatch_last)))
    return HP_OK;
  uint64_t u, a, kk;
  if (!hu_idmap_get(&k->unit_of, d->process_id, &u)) return HP_OK; /* a dispatch of no known process */
  /* an agent or kernel the store does not describe: its own "unknown" entry (0) */
  a = hu_idmap_get(&k->t.agent_ix, d->agent_id, &a) ? a + 1 : 0;
  kk = hu_idmap_get(&k->t.kernel_ix, d->kernel_id, &kk) ? kk + 1 : 0;
  if ((a && !k->t.agents[a - 1].keep) || (kk && !k->t.kernels[kk - 1].keep) ||
      (!kk && filters && q->nkernels) || (!a && filters && q->ndevices))
    return HP_OK;
  uint64_t key = (u + 1) << 40 | a << 24 | kk, gi;
  if (!hu_idmap_get(&k->group_ix, key, &gi)) {
    if (hu_grow((void **)&k->g, &k->capg, k->ng + 1, sizeof *k->g) || hu_idmap_put(&k->group_ix, key, k->ng))
      return HP_ERR_NOMEM;
    k->g[k->ng] = (rk_group){.unit = (uint32_t)u, .agent = (uint32_t)a, .kernel = (uint32_t)kk};
    gi = k->ng++;
  }
  grec_add(&k->g[gi].g, d->start_ns, d->end_ns);
  return HP_OK;
}

static hp_status rk_scan(hp_store *s, const ha_query *q, rk_run *k) {
  int filters = q->size >= HA_QUERY_V1;
  for (size_t i = 0; filters && i < k->t.nagents; i++)
    k->t.agents[i].keep = !q->ndevices || glob_any(q->devices, q->ndevices, k->t.agents[i].name,
                                                   k->t.agents[i].raw, k->t.agents[i].product);
  for (size_t i = 0; filters && i < k->t.nkernels; i++)
    k->t.kernels[i].keep = !q->nkernels || glob_any(q->kernels, q->nkernels, k->t.kernels[i].name,
                                                    k->t.kernels[i].mangled, NULL);
  if (k->nu >= (1u << 24) || k->t.nagents >= (1u << 15) || k->t.nkernels >= (1u << 23))
    return HP_ERR_UNSUPPORTED; /* the group key below: beyond any real run */
  rk_ctx x = {.k = k, .q = q, .filters = filters};
  hp_dispatch d = {.size = sizeof d};
  hp_status st = hai_each(s, HP_TABLE_DISPATCH, &d, rk_dispatch, &x);
  if (st != HP_OK) return st;
  for (size_t i = 0; i < k->ng; i++)
    k->u[k->g[i].unit].total = sat_add(k->u[k->g[i].unit].total, k->g[i].g.total);
  return HP_OK;
}

static const char *rk_agent(const rk_run *k, uint32_t a) { return a ? k->t.agents[a - 1].name : "?"; }
static const char *rk_kernel(const rk_run *k, uint32_t kk) { return kk ? k->t.kernels[kk - 1].name : "?"; }

static int cmp_unit(const rk_unit *a, const rk_unit *b) {
  if ((a->rank < 0) != (b->rank < 0)) return a->rank < 0 ? 1 : -1; /* ranks first */
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  int c = strcmp(a->job, b->job);
  if (c) return c;
  return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static _Thread_local const rk_run *t_rk; /* for qsort's comparator */
static _Thread_local int t_rk_sort;

static int cmp_rk_groups(const void *x, const void *y) {
  const rk_group *a = x, *b = y;
  int c = cmp_unit(&t_rk->u[a->unit], &t_rk->u[b->unit]);
  if (c) return c;
  if (t_rk_sort == HA_SORT_NAME) {
    c = strcmp(rk_kernel(t_rk, a->kernel), rk_kernel(t_rk, b->kernel));
    if (c) return c;
  } else if (a->g.total != b->g.total)
    return a->g.total > b->g.total ? -1 : 1;
  c = strcmp(rk_agent(t_rk, a->agent), rk_agent(t_rk, b->agent));
  return c ? c : strcmp(rk_kernel(t_rk, a->kernel), rk_kernel(t_rk, b->kernel));
}

static hp_status rk_rows(rk_run *k, const ha_query *q, int sort, int64_t limit, ha_result *res) {
  static const struct {
    const char *name;
    ha_col_kind kind;
    ha_col_role role;
    const char *unit;
  } cols[] = {{"rank", HA_INT, HA_ROLE_KEY, ""},         {"host", HA_TEXT, HA_ROLE_KEY, ""},
              {"pid", HA_INT, HA_ROLE_KEY, ""},          {"device", HA_TEXT, HA_ROLE_KEY, ""},
              {"kernel", HA_TEXT, HA_ROLE_KEY, ""},      {"calls", HA_INT, HA_ROLE_STAT, ""},
              {"timed_calls", HA_INT, HA_ROLE_STAT, ""}, {"total_ns", HA_INT, HA_ROLE_STAT, "ns"},
              {"avg_ns", HA_REAL, HA_ROLE_STAT, "ns"},   {"min_ns", HA_INT, HA_ROLE_STAT, "ns"},
              {"max_ns", HA_INT, HA_ROLE_STAT, "ns"},    {"percent", HA_REAL, HA_ROLE_STAT, "%"}};
  for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
    if (add_col(res, cols[i].name, cols[i].kind, cols[i].role, cols[i].unit)) return HP_ERR_NOMEM;
  t_rk = k;
  t_rk_sort = sort;
  if (k->ng) qsort(k->g, k->ng, sizeof *k->g, cmp_rk_groups);
  int64_t shown = 0;
  for (size_t i = 0; i < k->ng; i++) {
    const rk_group *g = &k->g[i];
    const rk_unit *u = &k->u[g->unit];
    shown = i && g->unit == k->g[i - 1].unit ? shown + 1 : 1;
    if (limit > 0 && shown > limit) continue;
    uint8_t *fl;
    cell *row = add_row(res, &fl);
    if (!row) return HP_ERR_NOMEM;
    row[0].i = u->rank;
    row[1].text = u->host;
    row[2].i = u->pid;
    if (!(row[3].text = intern(res, rk_agent(k, g->agent))) ||
        !(row[4].text = intern(res, rk_kernel(k, g->kernel))))
      return HP_ERR_NOMEM;
    row[5].i = (int64_t)g->g.calls;
    row[6].i = (int64_t)g->g.timed;
    row[7].i = g->g.total;
    row[8].num = g->g.timed ? (double)g->g.total / (double)g->g.timed : NAN;
    row[9].i = g->g.min;
    row[10].i = g->g.max;
    row[11].num = u->total > 0 ? 100.0 * (double)g->g.total / (double)u->total : NAN;
  }
  (void)q;
  return HP_OK;
}

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return a < b ? -1 : a > b;
}

typedef struct rk_kagg { /* one kernel name over the ranks */
  const char *kernel;
  size_t first, n; /* its (unit, total) pairs in the pair array */
  uint64_t calls;
  int64_t max;
} rk_kagg;

typedef struct rk_pair {
  const char *kernel;
  uint32_t unit;
  int64_t total;
  uint64_t calls;
} rk_pair;

static int cmp_pair(const void *x, const void *y) {
  const rk_pair *a = x, *b = y;
  int c = strcmp(a->kernel, b->kernel);
  if (c) return c;
  return a->unit < b->unit ? -1 : a->unit > b->unit;
}

static int cmp_kagg(const void *x, const void *y) {
  const rk_kagg *a = x, *b = y;
  if (a->max != b->max) return a->max > b->max ? -1 : 1;
  return strcmp(a->kernel, b->kernel);
}

/* Per kernel name: its device time per rank (over every device of the rank), then min, median, max. */
static hp_status rk_imbalance(rk_run *k, int64_t limit, ha_result *res) {
  static const char *const names[] = {"kernel",       "ranks",        "calls",       "min_ns",
                                      "median_ns",    "mean_ns",      "max_ns",      "imbalance_pct",
                                      "fastest_rank", "slowest_rank", "slowest_host"};
  static const ha_col_kind kinds[] = {HA_TEXT, HA_INT,  HA_INT, HA_INT, HA_REAL, HA_REAL,
                                      HA_INT,  HA_REAL, HA_INT, HA_INT, HA_TEXT};
  static const char *const units[] = {"", "", "", "ns", "ns", "ns", "ns", "%", "", "", ""};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (add_col(res, names[i], kinds[i], i == 0 ? HA_ROLE_KEY : HA_ROLE_STAT, units[i])) return HP_ERR_NOMEM;
  rk_pair *p = malloc((k->ng ? k->ng : 1) * sizeof *p);
  rk_kagg *ka = malloc((k->ng ? k->ng : 1) * sizeof *ka);
  int64_t *v = malloc((k->nu ? k->nu : 1) * sizeof *v);
  hp_status st = p && ka && v ? HP_OK : HP_ERR_NOMEM;
  size_t np = 0, nk = 0;
  for (size_t i = 0; st == HP_OK && i < k->ng; i++)
    p[np++] = (rk_pair){rk_kernel(k, k->g[i].kernel), k->g[i].unit, k->g[i].g.total, k->g[i].g.calls};
  if (np) qsort(p, np, sizeof *p, cmp_pair);
  size_t w = 0; /* one pair per (kernel, unit): a rank's devices summed */
  for (size_t i = 0; i < np; i++) {
    if (w && p[w - 1].unit == p[i].unit && !strcmp(p[w - 1].kernel, p[i].kernel)) {
      p[w - 1].total = sat_add(p[w - 1].total, p[i].total);
      p[w - 1].calls += p[i].calls;
    } else {
      p[w++] = p[i];
    }
  }
  np = w;
  for (size_t i = 0; i < np; i++) {
    if (!nk || strcmp(ka[nk - 1].kernel, p[i].kernel))
      ka[nk++] = (rk_kagg){.kernel = p[i].kernel, .first = i, .max = INT64_MIN};
    rk_kagg *a = &ka[nk - 1];
    a->n++;
    a->calls += p[i].calls;
    if (p[i].total > a->max) a->max = p[i].total;
  }
  if (nk) qsort(ka, nk, sizeof *ka, cmp_kagg);
  for (size_t i = 0; st == HP_OK && i < nk && (limit <= 0 || (int64_t)i < limit); i++) {
    const rk_kagg *a = &ka[i];
    size_t slow = a->first, fast = a->first;
    double sum = 0;
    for (size_t j = 0; j < a->n; j++) {
      const rk_pair *x = &p[a->first + j];
      v[j] = x->total;
      sum += (double)x->total;
      /* ties: the lower rank */
      int c = cmp_unit(&k->u[x->unit], &k->u[p[slow].unit]),
          cf = cmp_unit(&k->u[x->unit], &k->u[p[fast].unit]);
      if (x->total > p[slow].total || (x->total == p[slow].total && c < 0)) slow = a->first + j;
      if (x->total < p[fast].total || (x->total == p[fast].total && cf < 0)) fast = a->first + j;
    }
    qsort(v, a->n, sizeof *v, cmp_i64);
    double med = a->n % 2 ? (double)v[a->n / 2] : ((double)v[a->n / 2 - 1] + (double)v[a->n / 2]) / 2;
    uint8_t *fl;
    cell *row = add_row(res, &fl);
    if (!row || !(row[0].text = intern(res, a->kernel))) {
      st = HP_ERR_NOMEM;
      break;
    }
    const rk_unit *us = &k->u[p[slow].unit], *uf = &k->u[p[fast].unit];
    row[1].i = (int64_t)a->n;
    row[2].i = (int64_t)a->calls;
    row[3].i = v[0];
    row[4].num = med;
    row[5].num = sum / (double)a->n;
    row[6].i = v[a->n - 1];
    row[7].num = med > 0 ? 100.0 * ((double)v[a->n - 1] - med) / med : NAN;
    row[8].i = uf->rank >= 0 ? uf->rank : -1;
    row[9].i = us->rank >= 0 ? us->rank : -1;
    row[10].text = us->host;
    if (med <= 0) fl[7] |= HA_CELL_DIV0;
  }
  free(p);
  free(ka);
  free(v);
  return st;
}

static hp_status run_ranks(hp_store *s, const ha_query *q, int imbalance, ha_result **out) {
  int full = q->size >= HA_QUERY_V1;
  int sort = full ? q->sort : HA_SORT_DEFAULT;
  if (sort < HA_SORT_DEFAULT || sort > HA_SORT_NAME)
    return error_out(out, HP_ERR_INVALID, "unknown sort order %d", (int)sort);
  if (full && q->dispatch_first && q->dispatch_last && q->dispatch_first > q->dispatch_last)
    return error_out(out, HP_ERR_INVALID, "empty dispatch range %" PRIu64 "-%" PRIu64, q->dispatch_first,
                     q->dispatch_last);
  int64_t limit = q->size >= offsetof(ha_query, limit) + sizeof q->limit ? q->limit : 0;
  rk_run k;
  memset(&k, 0, sizeof k);
  ha_result *res = calloc(1, sizeof *res);
  hp_status st = res ? load_tables(s, &k.t) : HP_ERR_NOMEM;
  if (st == HP_OK) st = rk_units(s, &k, res);
  if (st == HP_OK) st = rk_scan(s, q, &k);
  if (st == HP_ERR_UNSUPPORTED) res_err(res, st, "too many processes, devices or kernels for the rank views");
  if (st == HP_OK) {
    res->lost = k.t.lost;
    st = imbalance ? rk_imbalance(&k, limit, res) : rk_rows(&k, q, sort, limit, res);
  }
  if (st == HP_OK && k.nu && k.u[0].rank < 0 &&
      add_note(res, "no process has an MPI rank (rank -1): one row per process, named by its pid"))
    st = HP_ERR_NOMEM;
  rk_free(&k);
  return hand_out(s, st, res, out);
}

/* ---- diff ---- */

/* The key columns diff matches rows by and shows, in this order: device kernel [grid workgroup] (the
 * device only counts for matching when a store has several), or category region / category path. */
static size_t diff_keys(int group, const char **names) {
  size_t n = 0;
  if (group == HA_BY_REGION || group == HA_BY_REGION_TREE) {
    names[n++] = "category";
    names[n++] = group == HA_BY_REGION ? "region" : "path";
    return n;
  }
  names[n++] = "device";
  names[n++] = "kernel";
  if (group == HA_BY_KERNEL_GRID) names[n++] = "grid", names[n++] = "workgroup";
  return n;
}

/* Key of a row: its key columns joined by \x1f (the device left out unless with_device). */
static void row_key(const ha_result *r, size_t row, int group, int with_device, char *buf, size_t len) {
  const char *names[4];
  size_t n = diff_keys(group, names), w = 0;
  buf[0] = 0;
  for (size_t i = 0; i < n && w < len; i++) {
    if (!strcmp(names[i], "device") && !with_device) continue;
    long c = ha_result_col_find(r, names[i]);
    w += (size_t)snprintf(buf + w, len - w, "%s\x1f", c >= 0 ? ha_result_text(r, row, (size_t)c) : "");
  }
}

static size_t count_devices(const ha_result *r) {
  long dc = ha_result_col_find(r, "device");
  size_t n = 0;
  for (size_t i = 0; i < r->nrows; i++) {
    int seen = 0;
    for (size_t j = 0; j < i && !seen; j++)
      seen = ha_result_text(r, j, (size_t)dc) == ha_result_text(r, i, (size_t)dc) ||
             strcmp(ha_result_text(r, j, (size_t)dc), ha_result_text(r, i, (size_t)dc)) == 0;
    n += !seen;
    if (n > 1) break;
  }
  return n;
}

typedef struct pair {
  long a, b; /* rows, -1 when absent */
  double weight;
} pair;

static int cmp_pairs(const void *x, const void *y) {
  const pair *a = x, *b = y;
  if (a->weight != b->weight) return a->weight > b->weight ? -1 : 1;
  if (a->a != b->a) return a->a < b->a ? -1 : 1;
  return a->b < b->b ? -1 : a->b > b->b;
}

static const char *direction(double a, double b, double same_pct, const char *up, const char *down) {
  if (is_nan(a) || is_nan(b)) return "";
  double d = b - a;
  if (d == 0) return "same";
  if (a != 0) {
    double pct = 100 * d / (a < 0 ? -a : a);
    if ((pct < 0 ? -pct : pct) < same_pct) return "same";
  }
  return d > 0 ? up : down;
}

hp_status ha_diff(hp_store *sa, hp_store *sb, const ha_query *q, double same_pct, ha_result **out) {
  if (out) *out = NULL;
  if (!sa || !sb || !q || !out || q->size < HA_QUERY_V1)
    return error_out(out, HP_ERR_INVALID, "bad arguments");
  if (q->group != HA_BY_KERNEL && q->group != HA_BY_KERNEL_GRID && q->group != HA_BY_REGION &&
      q->group != HA_BY_REGION_TREE)
    return error_out(out, HP_ERR_INVALID,
                     "diff compares kernels or regions: group by kernel, kernel-grid, region or region-tree");
  int regions = q->group == HA_BY_REGION || q->group == HA_BY_REGION_TREE;
  if (!(same_pct >= 0)) same_pct = 0;
  ha_query qq; /* only the caller's size is read: older callers pass a shorter struct */
  memset(&qq, 0, sizeof qq);
  memcpy(&qq, q, q->size < sizeof qq ? q->size : sizeof qq);
  qq.limit = 0;
  qq.sort = HA_SORT_TIME;
  if (!qq.counters) qq.counters = "";
  ha_result *ra = NULL, *rb = NULL, *res = NULL;
  hp_status st = run_query(sa, &qq, &ra);
  if (st == HP_OK) st = run_query(sb, &qq, &rb);
  if (st != HP_OK) { /* the failed side's result holds why */
    hp_store *bad = ra && !ra->error[0] ? sb : sa;
    st = error_out(out, st, "%s: %s", hp_store_path(bad), ha_result_error(bad == sa ? ra : rb));
    ha_result_free(ra);
    ha_result_free(rb);
    return st;
  }
  /* the measures both sides have (metrics default to those both can give) */
  size_t cap = ra->ncols + 1, nmeas = 0;
  long *ma = malloc(cap * sizeof *ma), *mb = malloc(cap * sizeof *mb);
  pair *pairs = NULL;
  size_t npairs = 0;
  res = calloc(1, sizeof *res);
  if (!ma || !mb || !res) st = HP_ERR_NOMEM;
  for (size_t c = 0; st == HP_OK && c < ra->ncols; c++) {
    ha_col_role role = ra->cols[c].role;
    if (role != HA_ROLE_COUNTER && role != HA_ROLE_METRIC) continue;
    long cb = ha_result_col_find(rb, ra->cols[c].name);
    if (cb < 0) continue;
    ma[nmeas] = (long)c;
    mb[nmeas++] = cb;
  }
  const char *keys[4];
  size_t nkeys = diff_keys(q->group, keys);
  int with_device = st == HP_OK && !regions && (count_devices(ra) > 1 || count_devices(rb) > 1);
  /* match rows by key: hash of B's keys */
  char key[2048];
  size_t hcap = 64;
  while (hcap < 2 * (rb->nrows + 1))
    hcap *= 2;
  long *htab = st == HP_OK ? malloc(hcap * sizeof *htab) : NULL;
  char **bkeys = st == HP_OK ? calloc(rb->nrows + 1, sizeof *bkeys) : NULL;
  int *bused = st == HP_OK ? calloc(rb->nrows + 1, sizeof *bused) : NULL;
  if (st == HP_OK && (!htab || !bkeys || !bused)) st = HP_ERR_NOMEM;
  if (st == HP_OK) {
    for (size_t i = 0; i < hcap; i++)
      htab[i] = -1;
    for (size_t i = 0; i < rb->nrows && st == HP_OK; i++) {
      row_key(rb, i, q->group, with_device, key, sizeof key);
      if (!(bkeys[i] = strdup(key))) {
        st = HP_ERR_NOMEM;
        break;
      }
      size_t j = hu_hash_str(key) & (hcap - 1);
      while (htab[j] >= 0)
        j = (j + 1) & (hcap - 1);
      htab[j] = (long)i;
    }
  }
  if (st == HP_OK && !(pairs = calloc(ra->nrows + rb->nrows + 1, sizeof *pairs))) st = HP_ERR_NOMEM;
  long tca = ha_result_col_find(ra, "total_ns"), tcb = ha_result_col_find(rb, "total_ns");
  for (size_t i = 0; st == HP_OK && i < ra->nrows; i++) {
    row_key(ra, i, q->group, with_device, key, sizeof key);
    size_t j = hu_hash_str(key) & (hcap - 1);
    long found = -1;
    while (htab[j] >= 0) {
      if (!bused[htab[j]] && strcmp(bkeys[htab[j]], key) == 0) {
        found = htab[j];
        break;
      }
      j = (j + 1) & (hcap - 1);
    }
    if (found >= 0) bused[found] = 1;
    double wa = (double)ha_result_int(ra, i, (size_t)tca),
           wb = found >= 0 ? (double)ha_result_int(rb, (size_t)found, (size_t)tcb) : 0;
    pairs[npairs++] = (pair){.a = (long)i, .b = found, .weight = wa > wb ? wa : wb};
  }
  for (size_t i = 0; st == HP_OK && i < rb->nrows; i++)
    if (!bused[i])
      pairs[npairs++] = (pair){.a = -1, .b = (long)i, .weight = (double)ha_result_int(rb, i, (size_t)tcb)};
  if (st == HP_OK) qsort(pairs, npairs, sizeof *pairs, cmp_pairs);
  if (st == HP_OK && q->limit > 0 && (size_t)q->limit < npairs) npairs = (size_t)q->limit;
  /* columns */
  if (st == HP_OK) {
    int e = 0;
    for (size_t k = 0; k < nkeys; k++)
      e = e || add_col(res, keys[k], HA_TEXT, HA_ROLE_KEY, "");
    e = e || add_col(res, "status", HA_TEXT, HA_ROLE_KEY, "") ||
        add_col(res, "calls_a", HA_INT, HA_ROLE_STAT, "") ||
        add_col(res, "calls_b", HA_INT, HA_ROLE_STAT, "") ||
        add_col(res, "total_ns_a", HA_INT, HA_ROLE_STAT, "ns") ||
        add_col(res, "total_ns_b", HA_INT, HA_ROLE_STAT, "ns") ||
        add_col(res, "total_ns_delta", HA_INT, HA_ROLE_DIFF, "ns") ||
        add_col(res, "total_ns_delta_pct", HA_REAL, HA_ROLE_DIFF, "%") ||
        add_col(res, "avg_ns_a", HA_REAL, HA_ROLE_STAT, "ns") ||
        add_col(res, "avg_ns_b", HA_REAL, HA_ROLE_STAT, "ns") ||
        add_col(res, "avg_ns_delta", HA_REAL, HA_ROLE_DIFF, "ns") ||
        add_col(res, "avg_ns_delta_pct", HA_REAL, HA_ROLE_DIFF, "%") ||
        add_col(res, "time", HA_TEXT, HA_ROLE_DIFF, "");
    for (size_t k = 0; !e && k < nmeas; k++) {
      const rcol *c = &ra->cols[ma[k]];
      char nm[300];
      static const char *const suf[] = {"_a", "_b", "_delta", "_delta_pct", "_dir"};
      for (int x = 0; x < 5 && !e; x++) {
        snprintf(nm, sizeof nm, "%s%s", c->name, suf[x]);
        e = add_col(res, nm, x == 4 ? HA_TEXT : HA_REAL, x < 2 ? c->role : HA_ROLE_DIFF,
                    x == 3   ? "%"
                    : x == 4 ? ""
                             : c->unit);
      }
    }
    if (e) st = HP_ERR_NOMEM;
  }
  long ca[3], cb[3];
  ca[0] = ha_result_col_find(ra, "calls");
  ca[1] = tca;
  ca[2] = ha_result_col_find(ra, "avg_ns");
  cb[0] = ha_result_col_find(rb, "calls");
  cb[1] = tcb;
  cb[2] = ha_result_col_find(rb, "avg_ns");
  for (size_t p = 0; st == HP_OK && p < npairs; p++) {
    const pair *pr = &pairs[p];
    const ha_result *src = pr->a >= 0 ? ra : rb;
    size_t srow = (size_t)(pr->a >= 0 ? pr->a : pr->b);
    uint8_t *fl;
    cell *row = add_row(res, &fl);
    if (!row) {
      st = HP_ERR_NOMEM;
      break;
    }
    size_t c = 0;
    for (size_t k = 0; k < nkeys; k++) {
      long kc = ha_result_col_find(src, keys[k]);
      row[c++].text = intern(res, kc >= 0 ? ha_result_text(src, srow, (size_t)kc) : "");
    }
    row[c++].text = intern(res, pr->a >= 0 && pr->b >= 0 ? "both" : pr->a >= 0 ? "missing" : "new");
    for (size_t k = 0; k < c; k++)
      if (!row[k].text) st = HP_ERR_NOMEM;
    int64_t calls_a = pr->a >= 0 ? ha_result_int(ra, (size_t)pr->a, (size_t)ca[0]) : 0;
    int64_t calls_b = pr->b >= 0 ? ha_result_int(rb, (size_t)pr->b, (size_t)cb[0]) : 0;
    int64_t tot_a = pr->a >= 0 ? ha_result_int(ra, (size_t)pr->a, (size_t)ca[1]) : 0;
    int64_t tot_b = pr->b >= 0 ? ha_result_int(rb, (size_t)pr->b, (size_t)cb[1]) : 0;
    double avg_a = pr->a >= 0 ? ha_result_num(ra, (size_t)pr->a, (size_t)ca[2]) : NAN;
    double avg_b = pr->b >= 0 ? ha_result_num(rb, (size_t)pr->b, (size_t)cb[2]) : NAN;
    int both = pr->a >= 0 && pr->b >= 0;
    row[c++].i = calls_a;
    row[c++].i = calls_b;
    row[c++].i = tot_a;
    row[c++].i = tot_b;
    row[c++].i = tot_b - tot_a;
    row[c].num = both && tot_a ? 100.0 * ((double)tot_b - (double)tot_a) / (double)tot_a : NAN;
    if (is_nan(row[c].num)) fl[c] = HA_CELL_MISSING;
    c++;
    row[c].num = avg_a;
    if (is_nan(avg_a)) fl[c] = HA_CELL_MISSING;
    c++;
    row[c].num = avg_b;
    if (is_nan(avg_b)) fl[c] = HA_CELL_MISSING;
    c++;
    row[c].num = avg_b - avg_a;
    if (is_nan(row[c].num)) fl[c] = HA_CELL_MISSING;
    c++;
    row[c].num = avg_a != 0 ? 100.0 * (avg_b - avg_a) / avg_a : NAN;
    if (is_nan(row[c].num)) fl[c] = HA_CELL_MISSING;
    c++;
    if (!(row[c++].text = intern(res, direction(avg_a, avg_b, same_pct, "slower", "faster"))))
      st = HP_ERR_NOMEM;
    for (size_t k = 0; k < nmeas && st == HP_OK; k++) {
      double va = pr->a >= 0 ? ha_result_num(ra, (size_t)pr->a, (size_t)ma[k]) : NAN;
      double vb = pr->b >= 0 ? ha_result_num(rb, (size_t)pr->b, (size_t)mb[k]) : NAN;
      unsigned fa = pr->a >= 0 ? ha_result_flags(ra, (size_t)pr->a, (size_t)ma[k]) : HA_CELL_MISSING;
      unsigned fb = pr->b >= 0 ? ha_result_flags(rb, (size_t)pr->b, (size_t)mb[k]) : HA_CELL_MISSING;
      row[c].num = va;
      fl[c++] = (uint8_t)(fa | (is_nan(va) ? HA_CELL_MISSING : 0));
      row[c].num = vb;
      fl[c++] = (uint8_t)(fb | (is_nan(vb) ? HA_CELL_MISSING : 0));
      unsigned fd = ((fa | fb) & (HA_CELL_IMPUTED | HA_CELL_MIXED)) | (is_nan(vb - va) ? HA_CELL_MISSING : 0);
      row[c].num = vb - va;
      fl[c++] = (uint8_t)fd;
      row[c].num = va != 0 ? 100.0 * (vb - va) / (va < 0 ? -va : va) : NAN;
      fl[c] = (uint8_t)(fd | (is_nan(row[c].num) ? HA_CELL_MISSING : 0));
      c++;
      if (!(row[c++].text = intern(res, direction(va, vb, same_pct, "higher", "lower")))) st = HP_ERR_NOMEM;
    }
  }
  if (st == HP_OK) {
    res->lost = ra->lost + rb->lost;
    for (size_t i = 0; i < ra->nnotes && st == HP_OK; i++)
      if (add_note(res, "A: %s", ra->notes[i])) st = HP_ERR_NOMEM;
    for (size_t i = 0; i < rb->nnotes && st == HP_OK; i++)
      if (add_note(res, "B: %s", rb->notes[i])) st = HP_ERR_NOMEM;
  }
  if (bkeys)
    for (size_t i = 0; i < rb->nrows; i++)
      free(bkeys[i]);
  free(bkeys);
  free(bused);
  free(htab);
  free(pairs);
  free(ma);
  free(mb);
  ha_result_free(ra);
  ha_result_free(rb);
  return hand_out(NULL, st, res, out);
}
