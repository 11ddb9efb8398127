/* The rank views of cluster runs (HA_BY_RANK, HA_BY_RANK_IMBALANCE): one unit per MPI rank (or per process
 * without one), kernels per rank, or per kernel its device time over the ranks (min, median, max). */
/* SPDX-License-Identifier: MIT */
#include "ha_result.h"
#include "ha_tables.h"

#include "../common/hu_buf.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  hai_tables_free(&k->t);
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
  const char *h = hai_intern(x->res, nd->hostname);
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
                          .job = hai_intern(x->res, p->job_id)};
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

/* The group of the dispatches of (process, agent, kernel) ids into *g: made on first use; NULL when the
 * query's filters leave them out. HP_OK, or HP_ERR_NOMEM. */
static hp_status rk_group_of(rk_ctx *x, uint64_t process_id, uint64_t agent_id, uint64_t kernel_id,
                             grec **g) {
  rk_run *k = x->k;
  const ha_query *q = x->q;
  int filters = x->filters;
  uint64_t u, a, kk;
  *g = NULL;
  if (!hu_idmap_get(&k->unit_of, process_id, &u)) return HP_OK; /* a dispatch of no known process */
  /* an agent or kernel the store does not describe: its own "unknown" entry (0) */
  a = hu_idmap_get(&k->t.agent_ix, agent_id, &a) ? a + 1 : 0;
  kk = hu_idmap_get(&k->t.kernel_ix, kernel_id, &kk) ? kk + 1 : 0;
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
  *g = &k->g[gi].g;
  return HP_OK;
}

/* A dispatch row into the group of its (unit, agent, kernel), unless the query's filters leave it out. */
static hp_status rk_dispatch(const void *row, void *ctx) {
  const hp_dispatch *d = row;
  rk_ctx *x = ctx;
  const ha_query *q = x->q;
  if (q->size >= offsetof(ha_query, progress_ctx) + sizeof(void *) && q->progress && !(++x->rows & 0xffff))
    q->progress(q->progress_ctx, x->rows);
  if (x->filters && ((q->dispatch_first && d->dispatch_id < q->dispatch_first) ||
                     (q->dispatch_last && d->dispatch_id > q->dispatch_last)))
    return HP_OK;
  grec *g;
  hp_status st = rk_group_of(x, d->process_id, d->agent_id, d->kernel_id, &g);
  if (g) grec_add(g, d->start_ns, d->end_ns);
  return st;
}

/* The sums of a part of the dispatch table read on another thread (hai_scan_sums) into their group. */
static hp_status rk_sum(void *ctx, uint64_t process_id, uint64_t agent_id, uint64_t kernel_id,
                        const grec *sum) {
  grec *g;
  hp_status st = rk_group_of(ctx, process_id, agent_id, kernel_id, &g);
  if (g) grec_merge(g, sum);
  return st;
}

static hp_status rk_scan(hp_store *s, const ha_query *q, rk_run *k) {
  int filters = q->size >= HA_QUERY_V1;
  if (filters) hai_keep_filtered(&k->t, q);
  if (k->nu >= (1u << 24) || k->t.nagents >= (1u << 15) || k->t.nkernels >= (1u << 23))
    return HP_ERR_UNSUPPORTED; /* the group key below: beyond any real run */
  rk_ctx x = {.k = k, .q = q, .filters = filters};
  hp_dispatch d = {.size = sizeof d};
  uint64_t rows = 0;
  hp_status st;
  if (hai_scan_sums(s, q, rk_sum, &x, &rows, &st)) { /* on the query's threads, the columns needed only */
    if (st == HP_OK && q->size >= offsetof(ha_query, progress_ctx) + sizeof(void *) && q->progress)
      q->progress(q->progress_ctx, rows);
  } else {
    st = hai_each(s, HP_TABLE_DISPATCH, &d, rk_dispatch, &x);
  }
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
  static const hai_coldef keys[] = {{"rank", HA_INT, HA_ROLE_KEY, ""},
                                    {"host", HA_TEXT, HA_ROLE_KEY, ""},
                                    {"pid", HA_INT, HA_ROLE_KEY, ""},
                                    {"device", HA_TEXT, HA_ROLE_KEY, ""},
                                    {"kernel", HA_TEXT, HA_ROLE_KEY, ""}};
  if (hai_cols(res, keys, 5) || hai_cols(res, hai_grec_cols, 7)) return HP_ERR_NOMEM;
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
    cell *row = hai_add_row(res, &fl);
    if (!row) return HP_ERR_NOMEM;
    row[0].i = u->rank;
    row[1].text = u->host;
    row[2].i = u->pid;
    if (!(row[3].text = hai_intern(res, rk_agent(k, g->agent))) ||
        !(row[4].text = hai_intern(res, rk_kernel(k, g->kernel))))
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
    if (hai_col(res, names[i], kinds[i], i == 0 ? HA_ROLE_KEY : HA_ROLE_STAT, units[i])) return HP_ERR_NOMEM;
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
    cell *row = hai_add_row(res, &fl);
    if (!row || !(row[0].text = hai_intern(res, a->kernel))) {
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

hp_status hai_ranks(hp_store *s, const ha_query *q, int imbalance, ha_result **out) {
  int full = q->size >= HA_QUERY_V1;
  int sort = full ? q->sort : HA_SORT_DEFAULT;
  if (sort < HA_SORT_DEFAULT || sort > HA_SORT_NAME)
    return hai_error_out(out, HP_ERR_INVALID, "unknown sort order %d", (int)sort);
  if (full && q->dispatch_first && q->dispatch_last && q->dispatch_first > q->dispatch_last)
    return hai_error_out(out, HP_ERR_INVALID, "empty dispatch range %" PRIu64 "-%" PRIu64, q->dispatch_first,
                         q->dispatch_last);
  int64_t limit = q->size >= offsetof(ha_query, limit) + sizeof q->limit ? q->limit : 0;
  rk_run k;
  memset(&k, 0, sizeof k);
  ha_result *res = calloc(1, sizeof *res);
  hp_status st = res ? hai_load_tables(s, &k.t) : HP_ERR_NOMEM;
  if (st == HP_OK) st = rk_units(s, &k, res);
  if (st == HP_OK) st = rk_scan(s, q, &k);
  if (st == HP_ERR_UNSUPPORTED)
    hai_fail(res, st, "too many processes, devices or kernels for the rank views");
  if (st == HP_OK) {
    res->lost = k.t.lost;
    st = imbalance ? rk_imbalance(&k, limit, res) : rk_rows(&k, q, sort, limit, res);
  }
  if (st == HP_OK && k.nu && k.u[0].rank < 0 &&
      hai_note(res, "no process has an MPI rank (rank -1): one row per process, named by its pid"))
    st = HP_ERR_NOMEM;
  rk_free(&k);
  return hai_hand_out(s, st, res, out);
}
