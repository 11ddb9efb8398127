/* The groupings by kernel, kernel launch (grid and work-group) and dispatch (hai_kernels): the scan's
 * groups or dispatches sorted, limited per device, and made rows with device-time statistics and measures. */
/* SPDX-License-Identifier: MIT */
#include "ha_run.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fmt_size(char *buf, size_t len, const uint32_t *v) {
  snprintf(buf, len, "%" PRIu32 "x%" PRIu32 "x%" PRIu32, v[0], v[1], v[2]);
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
  } else if (r->sort == HA_SORT_START) {
    int ua = !a->start || a->end < a->start, ub = !b->start || b->end < b->start; /* untimed last */
    if (ua != ub) return ua ? 1 : -1;
    if (!ua && a->start != b->start) return a->start < b->start ? -1 : 1;
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
  static const hai_coldef cols[] = {
      {"device", HA_TEXT, HA_ROLE_KEY, ""},         {"pid", HA_INT, HA_ROLE_KEY, ""},
      {"dispatch", HA_INT, HA_ROLE_KEY, ""},        {"row", HA_INT, HA_ROLE_KEY, ""},
      {"kernel", HA_TEXT, HA_ROLE_KEY, ""},         {"grid", HA_TEXT, HA_ROLE_KEY, ""},
      {"workgroup", HA_TEXT, HA_ROLE_KEY, ""},      {"start_ns", HA_INT, HA_ROLE_STAT, "ns"},
      {"duration_ns", HA_REAL, HA_ROLE_STAT, "ns"}, {"percent", HA_REAL, HA_ROLE_STAT, "%"}};
  if (hai_cols(res, cols, sizeof cols / sizeof cols[0]) || hai_add_measure_cols(r, res)) return HP_ERR_NOMEM;
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
    cell *row = hai_next_row(res, &fl, &st);
    if (!row) break;
    char grid[64], wg[64];
    fmt_size(grid, sizeof grid, d->grid);
    fmt_size(wg, sizeof wg, d->wg);
    row[0].text = hai_intern(res, r->t.agents[d->agent].name);
    row[1].i = d->pid;
    row[2].i = (int64_t)d->dispatch_id;
    row[3].i = (int64_t)d->id;
    row[4].text = hai_intern(res, r->t.kernels[d->kernel].name);
    row[5].text = hai_intern(res, grid);
    row[6].text = hai_intern(res, wg);
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
    if (r->m) hai_dispatch_env(r, d, di, vals, exec, imp, &env);
    for (size_t k = 0; k < r->nmsel; k++) {
      const hc_metric_info *inf = hc_metrics_get(r->m, r->msel[k]);
      int lacks = d->mux_incomplete && inf->ncounters > 0; /* a multiplexed key that missed passes */
      for (size_t c = 0; c < inf->ncounters; c++)
        lacks |= is_nan(vals[inf->counters[c]]);
      hai_eval_metric(r, k, &env, lacks ? HA_CELL_INCOMPLETE : 0, &mo[k]);
    }
    if (hai_fill_measures(r, res, row, fl, 10, cval, cimp, mo, rc)) st = HP_ERR_NOMEM;
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

static hp_status build_group_rows(run *r, ha_result *res, rowctx *rc) {
  int grid = r->group == HA_BY_KERNEL_GRID;
  uint64_t ncold = 0, ncalls = 0; /* cold dispatches: a column and a note only when there are any */
  for (size_t i = 0; i < r->ng; i++) {
    ncold += r->g[i].cold;
    ncalls += r->g[i].calls;
  }
  if (ncold &&
      hai_note(res,
               "%" PRIu64 " of the %" PRIu64
               " call%s %s cold: the first dispatch of their kernel in their process, whose time and "
               "counters hold first-use cost (compilation, first touch); under iteration multiplexing "
               "their raw readings are left out of the imputed medians and replaced by them where warm "
               "dispatches measured the counter (raw values in metadata multiplex_cold_raw); "
               "cold_calls in CSV and JSON",
               ncold, ncalls, ncalls == 1 ? "" : "s", ncold == 1 ? "is" : "are"))
    return HP_ERR_NOMEM;
  static const hai_coldef keys[] = {{"device", HA_TEXT, HA_ROLE_KEY, ""},
                                    {"kernel", HA_TEXT, HA_ROLE_KEY, ""}};
  static const hai_coldef launch[] = {{"grid", HA_TEXT, HA_ROLE_KEY, ""},
                                      {"workgroup", HA_TEXT, HA_ROLE_KEY, ""}};
  static const hai_coldef cold = {"cold_calls", HA_INT, HA_ROLE_STAT, ""};
  if (hai_cols(res, keys, 2) || (grid && hai_cols(res, launch, 2)) || hai_cols(res, hai_grec_cols, 7) ||
      (ncold && hai_cols(res, &cold, 1)) || hai_add_measure_cols(r, res))
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
      !hai_gmeas_init(r, &gm, measures ? ng : 0) && cval && cimp && order && tot && mo ? HP_OK : HP_ERR_NOMEM;
  size_t na = gm.na, msz = gm.msz;
  double *vals = gm.vals, *msum = gm.msum, *gsum = gm.gsum;
  uint8_t *imp = gm.imp, *gimp = gm.gimp;
  uint64_t *gn = gm.gn;
  size_t *moff = gm.moff;
  macc *ma = gm.ma;
  hc_metric_acc *gacc = gm.gacc;
  for (size_t di = 0; st == HP_OK && measures && di < r->nd; di++)
    hai_gmeas_add(r, &gm, di, r->d[di].group);
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
    cell *row = hai_next_row(res, &fl, &st);
    if (!row) break;
    size_t c = 0;
    row[c++].text = hai_intern(res, r->t.agents[g->agent].name);
    row[c++].text = hai_intern(res, r->t.kernels[g->kernel].name);
    if (grid) {
      char a[64], b[64];
      fmt_size(a, sizeof a, g->grid);
      fmt_size(b, sizeof b, g->wg);
      row[c++].text = hai_intern(res, a);
      row[c++].text = hai_intern(res, b);
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
        hai_eval_metric(r, k, NULL, HA_CELL_INCOMPLETE, &mo[k]);
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
      hai_eval_metric(r, k, &env, extra, &mo[k]);
    }
    rc->incomplete_groups += incomplete;
    rc->imputed_groups += imputed;
    if (hai_fill_measures(r, res, row, fl, c, cval, cimp, mo, rc)) st = HP_ERR_NOMEM;
  }
  hai_gmeas_free(&gm);
  free(cval);
  free(cimp);
  free(order);
  free(tot);
  free(mo);
  return st;
}

hp_status hai_kernels(hp_store *s, const ha_query *q, ha_result **out) {
  run r;
  memset(&r, 0, sizeof r);
  r.q = q;
  r.prog = q->size >= offsetof(ha_query, progress_ctx) + sizeof(void *) ? q->progress : NULL;
  r.group = q->group;
  r.limit = q->size >= offsetof(ha_query, limit) + sizeof q->limit ? q->limit : 0;
  int full = q->size >= HA_QUERY_V1;
  r.sort = full ? q->sort : HA_SORT_DEFAULT;
  if (r.sort < HA_SORT_DEFAULT || r.sort > HA_SORT_START) {
    return hai_error_out(out, HP_ERR_INVALID, "unknown sort order %d", (int)r.sort);
  }
  if (r.sort == HA_SORT_DEFAULT) r.sort = r.group == HA_BY_DISPATCH ? HA_SORT_START : HA_SORT_TIME;
  if (full && q->dispatch_first && q->dispatch_last && q->dispatch_first > q->dispatch_last) {
    return hai_error_out(out, HP_ERR_INVALID, "empty dispatch range %" PRIu64 "-%" PRIu64, q->dispatch_first,
                         q->dispatch_last);
  }
  const char *counters = full ? q->counters : "", *metrics = full ? q->metrics : "";
  ha_result *res = calloc(1, sizeof *res);
  r.res = res;
  hp_status st = res ? HP_OK : HP_ERR_NOMEM;
  rowctx rc = {0};
  if (st == HP_OK) st = hai_run_scan(s, &r, full, counters, metrics, &rc);
  if (st == HP_OK) {
    res->lost = r.t.lost;
    st = r.group == HA_BY_DISPATCH ? build_dispatch_rows(&r, res, &rc) : build_group_rows(&r, res, &rc);
  }
  if (st == HP_OK && hai_write_notes(&r, res, &rc)) st = HP_ERR_NOMEM;
  hai_rowctx_free(&rc);
  hai_run_free(&r);
  return hai_hand_out(s, st, res, out);
}
