/* The counters and metrics a kernel, dispatch or region query reports: a list checked against the store and
 * the metric definitions, or by default every counter with values and every metric they can give. */
/* SPDX-License-Identifier: MIT */
#include "ha_run.h"

#include "../common/hu_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long store_counter(const run *r, const char *name) {
  for (size_t i = 0; i < r->t.ncounters; i++)
    if (strcmp(r->t.counters[i].name, name) == 0) return (long)i;
  return -1;
}

/* The counters to report: a list, or every counter with a value among the kept dispatches. */
hp_status hai_select_counters(run *r, const char *list) {
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
      hai_fail(r->res, HP_ERR_INVALID, "empty counter name in '%s'", list);
      return HP_ERR_INVALID;
    }
    for (size_t i = 0; i < n; i++) {
      long j = store_counter(r, names[i]);
      if (j < 0) {
        char have[600] = "";
        size_t w = 0;
        for (size_t k = 0; k < nc && w < sizeof have; k++)
          w += (size_t)snprintf(have + w, sizeof have - w, "%s%s", k ? ", " : "", r->t.counters[k].name);
        hai_fail(r->res, HP_ERR_INVALID, "counter '%s' is not in the store (%s%s)", names[i],
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
hp_status hai_select_metrics(run *r, const char *list) {
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
      hai_fail(r->res, HP_ERR_INVALID, "%s", err);
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
      hai_fail(r->res, HP_ERR_INVALID, "empty metric name in '%s'", list);
      return HP_ERR_INVALID;
    }
    for (size_t i = 0; i < n; i++) {
      long mi = hc_metrics_find(r->m, names[i]);
      if (mi < 0) {
        const char *sug[1];
        if (hc_metrics_suggest(r->m, names[i], sug, 1))
          hai_fail(r->res, HP_ERR_INVALID, "unknown metric '%s' (did you mean '%s'?)", names[i], sug[0]);
        else
          hai_fail(r->res, HP_ERR_INVALID, "unknown metric '%s' ('hubprof list metrics' lists them)",
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
        hai_fail(r->res, HP_ERR_INVALID, "metric '%s' needs counters the store does not have: %s", names[i],
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
