/* The groupings by region (HA_BY_REGION, HA_BY_REGION_TREE): per region name or path, from the region and
 * dispatch tables: calls, inclusive and exclusive times, the dispatches inside and their measures. */
/* SPDX-License-Identifier: MIT */
#include "ha_run.h"

#include "../common/hu_buf.h"
#include "../common/hu_search.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  size_t lo; /* first region after (proc, thread, t) */
  HU_PARTITION(lo, n, mid,
               rg[mid].proc != proc       ? rg[mid].proc < proc
               : rg[mid].thread != thread ? rg[mid].thread < thread
                                          : rg[mid].start <= t);
  if (!lo || rg[lo - 1].proc != proc || rg[lo - 1].thread != thread) return -1;
  long j = (long)lo - 1;
  while (j >= 0 && rg[j].end < t)
    j = rg[j].parent;
  return j;
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
      hai_eval_metric(r, k, NULL, HA_CELL_INCOMPLETE, &mo[k]);
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
    hai_eval_metric(r, k, &env, extra, &mo[k]);
  }
  rc->incomplete_groups += incomplete;
  rc->imputed_groups += imputed;
  if (hai_fill_measures(r, res, row, fl, c0, cval, cimp, mo, rc)) return -1;
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
              .cat = hai_intern(l->res, g->category),
              .name = hai_intern(l->res, g->name),
              .parent = -1};
  x->key = x->name;
  return x->cat && x->name ? HP_OK : HP_ERR_NOMEM;
}

/* Sort the regions (cmp_rreg) and nest them: per thread, each one's parent (the innermost earlier region that
 * contains it), depth, the inclusive time of its children and (tree) its path of names; rid: region row id ->
 * index. */
static hp_status rreg_nest(rreg *rg, size_t nr, int tree, ha_result *res, hu_idmap *rid) {
  size_t *stack = calloc(nr + 1, sizeof *stack);
  if (!stack) return HP_ERR_NOMEM;
  hp_status st = HP_OK;
  qsort(rg, nr, sizeof *rg, cmp_rreg);
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
      rg[i].key = hai_intern(res, k);
      free(k);
      if (!rg[i].key) {
        st = HP_ERR_NOMEM;
        break;
      }
    }
    if (rg[i].id && hu_idmap_put(rid, rg[i].id, i)) {
      st = HP_ERR_NOMEM;
      break;
    }
    stack[top++] = i;
  }
  free(stack);
  return st;
}

hp_status hai_regions(hp_store *s, const ha_query *q, int tree, ha_result **out) {
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
  size_t *slot = NULL;
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
  if (st == HP_OK) st = hai_run_scan(s, &r, full, counters, metrics, &rc);
  int measures = r.nsel || r.nmsel;
  if (st == HP_OK) st = rreg_nest(rg, nr, tree, res, &rid);
  if (st == HP_OK) {
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
  if (st == HP_OK && hai_gmeas_init(&r, &gm, measures ? na : 0)) st = HP_ERR_NOMEM;
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
      if (measures) hai_gmeas_add(&r, &gm, di, g);
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
    static const hai_coldef keys[] = {{"category", HA_TEXT, HA_ROLE_KEY, ""},
                                      {"region", HA_TEXT, HA_ROLE_KEY, ""}};
    static const hai_coldef nesting[] = {{"depth", HA_INT, HA_ROLE_KEY, ""},
                                         {"path", HA_TEXT, HA_ROLE_KEY, ""}};
    static const hai_coldef stats[] = {
        {"calls", HA_INT, HA_ROLE_STAT, ""},      {"total_ns", HA_INT, HA_ROLE_STAT, "ns"},
        {"avg_ns", HA_REAL, HA_ROLE_STAT, "ns"},  {"exclusive_ns", HA_INT, HA_ROLE_STAT, "ns"},
        {"dispatches", HA_INT, HA_ROLE_STAT, ""}, {"kernel_ns", HA_INT, HA_ROLE_STAT, "ns"}};
    if (hai_cols(res, keys, 2) || (tree && hai_cols(res, nesting, 2)) || hai_cols(res, stats, 6) ||
        hai_add_measure_cols(&r, res))
      st = HP_ERR_NOMEM;
  }
  if (st == HP_OK && measures &&
      (!(cval = malloc((r.t.ncounters + 1) * sizeof *cval)) || !(cimp = malloc(r.t.ncounters + 1)) ||
       !(mo = calloc(r.nmsel + 1, sizeof *mo))))
    st = HP_ERR_NOMEM;
  size_t lim = hai_limit(q, na);
  uint64_t nodisp = 0;
  for (size_t i = 0; st == HP_OK && i < na && i < lim; i++) {
    uint8_t *fl;
    cell *row = hai_next_row(res, &fl, &st);
    if (!row) break;
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
        row[c].text = hai_intern(res, ind);
        row[c + 2].text = hai_intern(res, path);
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
      (hai_write_notes(&r, res, &rc) ||
       (nodisp && r.nmsel &&
        hai_note(res,
                 "%" PRIu64 " region%s enqueued no dispatch: %s counters are %s and %s "
                 "metrics have no value",
                 nodisp, nodisp == 1 ? "" : "s", nodisp == 1 ? "its" : "their",
                 host ? "the host part alone" : "0 (no kernel work)", nodisp == 1 ? "its" : "their"))))
    st = HP_ERR_NOMEM;
  if (st == HP_OK) res->lost = r.t.lost;
  free(rg);
  free(ag);
  free(slot);
  free(cval);
  free(host);
  free(cimp);
  free(mo);
  hu_idmap_free(&rid);
  hai_gmeas_free(&gm);
  hai_rowctx_free(&rc);
  hai_run_free(&r);
  return hai_hand_out(s, st, res, out);
}
