/* Analysis over any store through the hub's cursors: top kernels per device (calls, device time
 * statistics, share of the device's time), as a result table shared by the CLI and Python.
 * Sections: result table · id → name maps · aggregation · the query. Knows no format. */
#include "hubprof/analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- result table ---- */
typedef struct cell {
  char *text; /* text columns */
  double num; /* numeric columns */
  int64_t i;  /* integer columns (exact) */
} cell;

struct ha_result {
  size_t ncols, nrows, cap;
  const char *const *names;
  const ha_col_kind *kinds;
  cell *cells;
  uint64_t lost;
};

static const char *const kernel_cols[] = {"device", "kernel", "calls",  "timed_calls", "total_ns",
                                          "avg_ns", "min_ns", "max_ns", "percent"};
static const ha_col_kind kernel_kinds[] = {HA_TEXT, HA_TEXT, HA_INT, HA_INT, HA_INT,
                                           HA_REAL, HA_INT,  HA_INT, HA_REAL};

static cell *add_row(ha_result *r) {
  if (r->nrows == r->cap) {
    size_t nc = r->cap ? 2 * r->cap : 64;
    cell *n = realloc(r->cells, nc * r->ncols * sizeof *n);
    if (!n) return NULL;
    r->cells = n;
    r->cap = nc;
  }
  cell *row = &r->cells[r->nrows++ * r->ncols];
  memset(row, 0, r->ncols * sizeof *row);
  return row;
}

void ha_result_free(ha_result *r) {
  if (!r) return;
  for (size_t i = 0; i < r->nrows * r->ncols; i++)
    free(r->cells[i].text);
  free(r->cells);
  free(r);
}

size_t ha_result_ncols(const ha_result *r) { return r ? r->ncols : 0; }
size_t ha_result_nrows(const ha_result *r) { return r ? r->nrows : 0; }
const char *ha_result_col_name(const ha_result *r, size_t c) { return r && c < r->ncols ? r->names[c] : ""; }
ha_col_kind ha_result_col_kind(const ha_result *r, size_t c) {
  return r && c < r->ncols ? r->kinds[c] : HA_TEXT;
}
uint64_t ha_result_lost_records(const ha_result *r) { return r ? r->lost : 0; }

static const cell *at(const ha_result *r, size_t row, size_t col) {
  return r && row < r->nrows && col < r->ncols ? &r->cells[row * r->ncols + col] : NULL;
}
const char *ha_result_text(const ha_result *r, size_t row, size_t col) {
  const cell *c = at(r, row, col);
  return c && c->text ? c->text : "";
}
double ha_result_num(const ha_result *r, size_t row, size_t col) {
  const cell *c = at(r, row, col);
  if (!c || r->kinds[col] == HA_TEXT) return NAN;
  return r->kinds[col] == HA_INT ? (double)c->i : c->num;
}
int64_t ha_result_int(const ha_result *r, size_t row, size_t col) {
  const cell *c = at(r, row, col);
  if (!c || r->kinds[col] == HA_TEXT) return 0;
  return r->kinds[col] == HA_INT ? c->i : (int64_t)c->num;
}

/* ---- id → name maps of the small tables ---- */
typedef struct names {
  uint64_t *ids;
  char **names;
  size_t n, cap;
} names;

static void names_free(names *m) {
  for (size_t i = 0; i < m->n; i++)
    free(m->names[i]);
  free(m->ids);
  free(m->names);
}

static const char *names_get(const names *m, uint64_t id) {
  for (size_t i = 0; i < m->n; i++)
    if (m->ids[i] == id) return m->names[i];
  return id ? "?" : "(none)";
}

static int names_add(names *m, uint64_t id, const char *nm) {
  if (m->n == m->cap) {
    size_t nc = m->cap ? 2 * m->cap : 32;
    uint64_t *ni = realloc(m->ids, nc * sizeof *ni);
    if (!ni) return -1;
    m->ids = ni;
    char **nn = realloc(m->names, nc * sizeof *nn);
    if (!nn) return -1;
    m->names = nn;
    m->cap = nc;
  }
  if (!(m->names[m->n] = strdup(nm))) return -1;
  m->ids[m->n++] = id;
  return 0;
}

/* Device names ("product#index"), kernel names (display name, else name). */
static hp_status load_names(hp_store *s, hp_table t, names *m) {
  hp_cursor *c;
  hp_status st = hp_cursor_open(s, t, &c);
  if (st != HP_OK) return st;
  hp_agent a = {.size = sizeof a};
  hp_kernel_symbol k = {.size = sizeof k};
  for (;;) {
    char buf[512];
    uint64_t id;
    if (t == HP_TABLE_AGENT) {
      if ((st = hp_cursor_next(c, &a)) != HP_OK) break;
      const char *base = a.product_name[0] ? a.product_name : a.name;
      if (a.device_index)
        snprintf(buf, sizeof buf, "%s#%d", base, a.device_index);
      else
        snprintf(buf, sizeof buf, "%s", base);
      id = a.id;
    } else {
      if ((st = hp_cursor_next(c, &k)) != HP_OK) break;
      snprintf(buf, sizeof buf, "%s", k.display_name[0] ? k.display_name : k.name);
      id = k.id;
    }
    if (names_add(m, id, buf)) {
      st = HP_ERR_NOMEM;
      break;
    }
  }
  hp_cursor_close(c);
  return st == HP_END ? HP_OK : st;
}

/* ---- aggregation per (agent, kernel) ---- */
typedef struct kstat {
  int used; /* slot taken */
  uint64_t agent, kernel, calls, timed;
  int64_t total, min, max;
} kstat;

typedef struct agg {
  kstat *v;
  size_t cap, n;
} agg;

static size_t slot_of(uint64_t agent, uint64_t kernel, size_t cap) {
  return (size_t)(((agent * 31 + kernel) * 0x9E3779B97F4A7C15ULL) >> 7) & (cap - 1);
}

static kstat *agg_get(agg *a, uint64_t agent, uint64_t kernel) {
  if (2 * (a->n + 1) > a->cap) {
    size_t nc = a->cap ? 2 * a->cap : 256;
    kstat *nv = calloc(nc, sizeof *nv);
    if (!nv) return NULL;
    for (size_t i = 0; i < a->cap; i++) {
      if (!a->v[i].used) continue;
      size_t j = slot_of(a->v[i].agent, a->v[i].kernel, nc);
      while (nv[j].used)
        j = (j + 1) & (nc - 1);
      nv[j] = a->v[i];
    }
    free(a->v);
    a->v = nv;
    a->cap = nc;
  }
  size_t j = slot_of(agent, kernel, a->cap);
  while (a->v[j].used && !(a->v[j].agent == agent && a->v[j].kernel == kernel))
    j = (j + 1) & (a->cap - 1);
  if (!a->v[j].used) {
    a->v[j] = (kstat){.used = 1, .agent = agent, .kernel = kernel};
    a->n++;
  }
  return &a->v[j];
}

static int by_agent_then_total(const void *x, const void *y) {
  const kstat *a = x, *b = y;
  if (a->agent != b->agent) return a->agent < b->agent ? -1 : 1;
  if (a->total != b->total) return a->total > b->total ? -1 : 1;
  if (a->calls != b->calls) return a->calls > b->calls ? -1 : 1;
  return a->kernel < b->kernel ? -1 : a->kernel > b->kernel;
}

static hp_status scan_dispatches(hp_store *s, agg *a) {
  hp_cursor *c;
  hp_status st = hp_cursor_open(s, HP_TABLE_DISPATCH, &c);
  if (st != HP_OK) return st;
  hp_dispatch d = {.size = sizeof d};
  while ((st = hp_cursor_next(c, &d)) == HP_OK) {
    kstat *k = agg_get(a, d.agent_id, d.kernel_id);
    if (!k) {
      st = HP_ERR_NOMEM;
      break;
    }
    k->calls++;
    if (d.start_ns && d.end_ns >= d.start_ns) {
      int64_t t = d.end_ns - d.start_ns;
      if (!k->timed || t < k->min) k->min = t;
      if (!k->timed || t > k->max) k->max = t;
      k->total += t;
      k->timed++;
    }
  }
  hp_cursor_close(c);
  return st == HP_END ? HP_OK : st;
}

static uint64_t lost_records(hp_store *s) {
  uint64_t lost = 0;
  hp_cursor *c;
  if (hp_cursor_open(s, HP_TABLE_PROCESS, &c) == HP_OK) {
    hp_process p = {.size = sizeof p};
    while (hp_cursor_next(c, &p) == HP_OK)
      lost += p.lost_records;
    hp_cursor_close(c);
  }
  return lost;
}

/* ---- the query ---- */
hp_status ha_run(hp_store *s, const ha_query *q, ha_result **out) {
  if (out) *out = NULL;
  if (!s || !q || !out || q->size < sizeof(uint32_t) + 2 * sizeof(int32_t) || q->group != HA_BY_KERNEL)
    return HP_ERR_INVALID;
  int64_t limit = q->size >= sizeof(ha_query) ? q->limit : 0;
  names agents = {0}, kernels = {0};
  agg a = {0};
  ha_result *r = calloc(1, sizeof *r);
  hp_status st = r ? HP_OK : HP_ERR_NOMEM;
  if (st == HP_OK) st = load_names(s, HP_TABLE_AGENT, &agents);
  if (st == HP_OK) st = load_names(s, HP_TABLE_KERNEL_SYMBOL, &kernels);
  if (st == HP_OK) st = scan_dispatches(s, &a);
  if (st == HP_OK) {
    r->ncols = sizeof kernel_cols / sizeof kernel_cols[0];
    r->names = kernel_cols;
    r->kinds = kernel_kinds;
    r->lost = lost_records(s);
    size_t n = 0;
    for (size_t i = 0; i < a.cap; i++)
      if (a.v[i].used) a.v[n++] = a.v[i];
    if (n) qsort(a.v, n, sizeof *a.v, by_agent_then_total);
    for (size_t i = 0; i < n && st == HP_OK;) {
      size_t j = i;
      int64_t dev_total = 0;
      while (j < n && a.v[j].agent == a.v[i].agent)
        dev_total += a.v[j++].total;
      for (size_t k = i; k < j && (limit <= 0 || (int64_t)(k - i) < limit); k++) {
        const kstat *e = &a.v[k];
        cell *row = add_row(r);
        if (!row || !(row[0].text = strdup(names_get(&agents, e->agent))) ||
            !(row[1].text = strdup(names_get(&kernels, e->kernel)))) {
          st = HP_ERR_NOMEM;
          break;
        }
        row[2].i = (int64_t)e->calls;
        row[3].i = (int64_t)e->timed;
        row[4].i = e->total;
        row[5].num = e->timed ? (double)e->total / (double)e->timed : NAN;
        row[6].i = e->min;
        row[7].i = e->max;
        row[8].num = dev_total ? 100.0 * (double)e->total / (double)dev_total : (e->timed ? 0 : NAN);
      }
      i = j;
    }
  }
  names_free(&agents);
  names_free(&kernels);
  free(a.v);
  if (st != HP_OK) {
    ha_result_free(r);
    return st;
  }
  *out = r;
  return HP_OK;
}
