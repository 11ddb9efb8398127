/* The counters and metrics of a row of a kernel, dispatch or region query: their columns and cells with
 * flags, a dispatch's metric environment, the per-group sums (gmeas), the tallies (rowctx) and the notes. */
/* SPDX-License-Identifier: MIT */
#include "ha_run.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hai_dispatch_env(const run *r, const drec *d, size_t di, double *vals, uint32_t *exec, uint8_t *imp,
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

void hai_eval_metric(const run *r, size_t k, const hc_metric_env *env, unsigned extra, mout *o) {
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

int hai_fill_measures(run *r, ha_result *res, cell *row, uint8_t *fl, size_t c0, const double *cval,
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
    if (!(row[col].text = hai_intern(res, imputed)) || !(row[col + 1].text = hai_intern(res, incomplete)) ||
        !(row[col + 2].text = hai_intern(res, over)))
      return -1;
    fl[col] = fl[col + 1] = fl[col + 2] = 0;
  }
  return 0;
}

int hai_add_measure_cols(run *r, ha_result *res) {
  for (size_t k = 0; k < r->nsel; k++) {
    const counter_rec *c = &r->t.counters[r->sel[k]];
    if (hai_col(res, c->name, HA_REAL, HA_ROLE_COUNTER, c->unit)) return -1;
  }
  for (size_t k = 0; k < r->nmsel; k++) {
    const hc_metric_info *inf = hc_metrics_get(r->m, r->msel[k]);
    if (hai_col(res, inf->name, HA_REAL, HA_ROLE_METRIC, inf->unit)) return -1;
    if (inf->peak[0]) {
      char name[300];
      snprintf(name, sizeof name, "%s_pct_peak", inf->name);
      if (hai_col(res, name, HA_REAL, HA_ROLE_PEAK, "%")) return -1;
    }
  }
  if ((r->nsel || r->nmsel) && (hai_col(res, "imputed", HA_TEXT, HA_ROLE_FLAGS, "") ||
                                hai_col(res, "incomplete", HA_TEXT, HA_ROLE_FLAGS, "") ||
                                hai_col(res, "over_peak", HA_TEXT, HA_ROLE_FLAGS, "")))
    return -1;
  return 0;
}

void hai_gmeas_free(gmeas *m) {
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

int hai_gmeas_init(const run *r, gmeas *m, size_t ng) {
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

void hai_gmeas_add(const run *r, gmeas *m, size_t di, size_t g) {
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
  hai_dispatch_env(r, d, di, vals, m->exec, m->imp, &env);
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

int hai_write_notes(run *r, ha_result *res, const rowctx *rc) {
  int e = 0;
  if (r->note_metrics[0]) e |= hai_note(res, "%s", r->note_metrics);
  if (r->mux_unreadable)
    e |= hai_note(res,
                  "the store's metadata multiplex_incomplete cannot be read: incomplete multiplexing keys "
                  "are found by their counters alone");
  for (size_t j = 0; j < r->t.ncounters; j++) {
    if (!r->used[j]) continue;
    if (r->multi && r->multi[j])
      e |= hai_note(res,
                    "counter '%s' was measured in several passes of %" PRIu64
                    " dispatch%s: those passes' values are averaged per dispatch, never summed",
                    r->t.counters[j].name, r->multi[j], r->multi[j] == 1 ? "" : "es");
    if (r->dups && r->dups[j])
      e |= hai_note(
          res, "counter '%s' has duplicate rows (same dispatch and pass) on %" PRIu64 " dispatch%s: averaged",
          r->t.counters[j].name, r->dups[j], r->dups[j] == 1 ? "" : "es");
  }
  for (size_t k = 0; k < r->nmsel; k++) {
    const hc_metric_info *inf = hc_metrics_get(r->m, r->msel[k]);
    if (rc->mixed[k])
      e |= hai_note(
          res,
          "metric '%s' combines values of different replay passes of the same dispatch in %" PRIu64
          " row%s (marked !): its counters were not measured in one pass (plan them with --metrics %s)",
          inf->name, rc->mixed[k], rc->mixed[k] == 1 ? "" : "s", inf->name);
    if (rc->over_peak[k])
      e |= hai_note(
          res,
          "metric '%s' is above its peak (%s) in %" PRIu64 " row%s, up to %.0f%% (marked ^, "
          "named in over_peak): %s",
          inf->name, inf->peak, rc->over_peak[k], rc->over_peak[k] == 1 ? "" : "s", rc->worst_pct[k],
          inf->exceeds[0] ? inf->exceeds
                          : "no dispatch can exceed a physical peak: the counters' window holds more "
                            "than the dispatch, or a device constant is wrong");
    if (rc->div0[k])
      e |= hai_note(res, "metric '%s' divides by zero in %" PRIu64 " row%s: no value (NaN)", inf->name,
                    rc->div0[k], rc->div0[k] == 1 ? "" : "s");
    if (rc->missing[k]) {
      char vars[256] = "";
      for (int v = 0; v < HC_VAR_COUNT; v++)
        if (rc->missing_vars[k] & (1u << v)) list_add(vars, sizeof vars, hc_var_name(v));
      e |= hai_note(res, "metric '%s' has no value in %" PRIu64 " row%s: %s%s", inf->name, rc->missing[k],
                    rc->missing[k] == 1 ? "" : "s", vars[0] ? "unknown " : "an input has no value", vars);
    }
  }
  if (r->nincomplete)
    e |= hai_note(res,
                  "%" PRIu64 " dispatch%s incomplete: launched and not seen to end before %s process died "
                  "(still running, or not harvested yet: no end time; %s device time is unknown and not "
                  "counted, %s samples are kept)",
                  r->nincomplete, r->nincomplete == 1 ? " is" : "es are",
                  r->nincomplete == 1 ? "its" : "their", r->nincomplete == 1 ? "its" : "their",
                  r->nincomplete == 1 ? "its" : "their");
  uint64_t ni = rc->incomplete_groups, nimp = rc->imputed_groups;
  if (ni && r->group == HA_BY_DISPATCH)
    e |= hai_note(res,
                  "%" PRIu64
                  " dispatch%s %s counters not measured on %s, or %s to a multiplexed key that missed "
                  "passes: the metrics needing them are left out, never taken as zero",
                  ni, ni == 1 ? "" : "es", ni == 1 ? "lacks" : "lack", ni == 1 ? "it" : "them",
                  ni == 1 ? "belongs" : "belong");
  else if (ni)
    e |= hai_note(
        res,
        "%" PRIu64 " %s %s a counter that none of %s dispatches measured, or a multiplexed key that "
        "missed passes (incomplete coverage): the metrics needing it are left out, never taken as zero",
        ni, unit_name(r->group, ni), ni == 1 ? "lacks" : "lack", ni == 1 ? "its" : "their");
  if (nimp && r->group == HA_BY_DISPATCH)
    e |= hai_note(
        res, "%" PRIu64 " dispatch%s %s values imputed at profile time (iteration multiplexing; marked *)",
        nimp, nimp == 1 ? "" : "es", nimp == 1 ? "has" : "have");
  else if (nimp)
    e |= hai_note(res,
                  "%" PRIu64
                  " %s %s values imputed (marked *): counters measured on only part of %s dispatches "
                  "(the mean of those that measured them) or imputed at profile time",
                  nimp, unit_name(r->group, nimp), nimp == 1 ? "has" : "have", nimp == 1 ? "its" : "their");
  return e;
}

void hai_rowctx_free(rowctx *rc) {
  free(rc->mixed);
  free(rc->div0);
  free(rc->over_peak);
  free(rc->worst_pct);
  free(rc->missing);
  free(rc->incomplete_rows);
  free(rc->missing_vars);
}

int hai_rowctx_init(rowctx *rc, size_t nm) {
  nm++;
  if (!(rc->mixed = calloc(nm, sizeof *rc->mixed)) || !(rc->div0 = calloc(nm, sizeof *rc->div0)) ||
      !(rc->missing = calloc(nm, sizeof *rc->missing)) ||
      !(rc->over_peak = calloc(nm, sizeof *rc->over_peak)) ||
      !(rc->worst_pct = calloc(nm, sizeof *rc->worst_pct)) ||
      !(rc->incomplete_rows = calloc(nm, sizeof *rc->incomplete_rows)) ||
      !(rc->missing_vars = calloc(nm, sizeof *rc->missing_vars)))
    return -1;
  return 0;
}
