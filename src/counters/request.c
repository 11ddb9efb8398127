/* From the CLI's text to a plan: split "--counters a,b" and "--group NAME=c,d", check every name
 * against the provider (unknown names with "did you mean" suggestions, counters not measurable here)
 * and plan under the device's limits. Shared by `hubprof plan` and `hubprof profile`, so both word
 * their errors alike. */
/* SPDX-License-Identifier: MIT */
#include "counters.h"
#include "counters_internal.h"

#include "../common/hu_buf.h"
#include "../common/hu_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hc_status hc_provider_check(hc_provider *p, const char *name, int need_available) {
  if (!p || !name) return HC_ERR_INVALID;
  char *err = p->error;
  const size_t emax = sizeof p->error;
  err[0] = 0;
  const hc_limits *lim = hc_provider_limits(p);
  const char *dev = lim ? lim->device : hc_provider_name(p);
  long i = hc_provider_find(p, name);
  if (i < 0 && strchr(name, '[')) { /* a channel counter: TCC_HIT[3], TCC_HIT[0..15], TCC_HIT[*] */
    hc_counter_need nd;
    hc_status st = hc_provider_need(p, name, &nd);
    if (st == HC_OK)
      i = hc_provider_find(p, nd.base);
    else if (st != HC_ERR_UNKNOWN)
      return st;
  }
  if (i < 0) {
    const char *sug[3];
    size_t n = hc_provider_suggest(p, name, sug, 3);
    int w = snprintf(err, emax, "unknown counter '%s'", name);
    for (size_t k = 0; k < n && w > 0 && (size_t)w < emax; k++)
      w += snprintf(err + w, emax - (size_t)w, "%s'%s'",
                    k == 0       ? " (did you mean "
                    : k + 1 == n ? " or "
                                 : ", ",
                    sug[k]);
    if (w > 0 && (size_t)w < emax) {
      if (n)
        snprintf(err + w, emax - (size_t)w, "?)");
      else
        snprintf(err + w, emax - (size_t)w, " on %s (see 'hubprof list counters --device %s')", dev, dev);
    }
    return HC_ERR_UNKNOWN;
  }
  const hc_counter *c = hc_provider_counter(p, (size_t)i);
  if (need_available && hc_provider_measurable(p) && !c->available) {
    snprintf(err, emax, "counter '%s' is not available on %s: %s", name, dev, c->reason);
    return HC_ERR_UNAVAILABLE;
  }
  return HC_OK;
}

hc_status hc_plan_text(hc_provider *p, const hc_plan_args *a, hc_plan **out) {
  if (!out) return HC_ERR_INVALID;
  *out = NULL;
  if (!p || !a || (a->ncounters && !a->counters) || (a->ngroups && !a->groups)) {
    *out = hc_plan_failed("invalid plan request");
    return HC_ERR_INVALID;
  }
  if (!a->ncounters && !a->ngroups) {
    *out = hc_plan_failed("no counters requested");
    return HC_ERR_INVALID;
  }
  char err[HC_ERROR_MAX] = ""; /* the failure's message, given to the plan that explains it */
  const size_t emax = sizeof err;
  size_t nreq = a->ncounters + a->ngroups, total = 0, maxnames = 0;
  for (size_t i = 0; i < a->ncounters; i++) {
    total += strlen(a->counters[i]) + 1;
    maxnames += strlen(a->counters[i]) / 2 + 1;
  }
  for (size_t i = 0; i < a->ngroups; i++) {
    total += strlen(a->groups[i]) + 1;
    maxnames += strlen(a->groups[i]) / 2 + 1;
  }
  char *text = malloc(total ? total : 1);
  char **names = malloc(maxnames * sizeof *names);
  hc_request *req = calloc(nreq, sizeof *req);
  hc_status st = HC_OK;
  hu_buf unknown = {0};
  size_t nunknown = 0;
  if (!text || !names || !req) {
    snprintf(err, emax, "out of memory");
    st = HC_ERR_NOMEM;
    goto out;
  }
  char *at = text;
  size_t used = 0;
  for (size_t i = 0; i < nreq && st == HC_OK; i++) {
    int grp = i >= a->ncounters;
    const char *src = grp ? a->groups[i - a->ncounters] : a->counters[i];
    size_t l = strlen(src);
    memcpy(at, src, l + 1);
    char *list = at;
    at += l + 1;
    if (grp) {
      char *eq = strchr(list, '=');
      if (!eq || eq == list || !eq[1]) {
        snprintf(err, emax, "group '%s' must be NAME=COUNTER,COUNTER,...", src);
        st = HC_ERR_INVALID;
        break;
      }
      *eq = 0;
      req[i].group = list;
      list = eq + 1;
      for (size_t k = a->ncounters; k < i; k++)
        if (strcmp(req[k].group, req[i].group) == 0) {
          snprintf(err, emax, "group '%s' given twice", req[i].group);
          st = HC_ERR_INVALID;
        }
      if (st != HC_OK) break;
    }
    long n = hu_split_inplace(list, names + used, maxnames - used);
    if (n < 0) {
      snprintf(err, emax, "empty counter name in '%s'", src);
      st = HC_ERR_INVALID;
      break;
    }
    req[i].counters = (const char *const *)(names + used);
    req[i].ncounters = (size_t)n;
    for (long k = 0; k < n && st == HC_OK; k++) { /* every unknown name, not only the first */
      hc_status c = hc_provider_check(p, names[used + (size_t)k], a->need_available);
      const char *one = hc_provider_error(p);
      if (c == HC_ERR_UNKNOWN) {
        int dup = 0; /* a name given twice is reported once */
        for (size_t u = 0; u < used + (size_t)k && !dup; u++)
          dup = strcmp(names[u], names[used + (size_t)k]) == 0;
        if (!dup) {
          if (nunknown++) hu_buf_str(&unknown, "; ");
          hu_buf_str(&unknown, one);
        }
      } else if (c != HC_OK) {
        snprintf(err, emax, "%s", one);
        st = c;
      }
    }
    used += (size_t)n;
  }
  if (st == HC_OK && nunknown) {
    char *u = hu_buf_cstr(&unknown);
    if (nunknown == 1)
      snprintf(err, emax, "%s", u ? u : "unknown counter");
    else
      snprintf(err, emax, "%zu unknown counters: %s", nunknown, u ? u : "");
    st = HC_ERR_UNKNOWN;
  }
  if (st == HC_OK) {
    const hc_limits *dl = hc_provider_limits(p);
    hc_limits lim;
    memset(&lim, 0, sizeof lim);
    if (dl) lim = *dl;
    if (!dl) snprintf(lim.device, sizeof lim.device, "%s", hc_provider_name(p));
    if (a->max_per_pass && (!lim.max_per_pass || a->max_per_pass < lim.max_per_pass))
      lim.max_per_pass = a->max_per_pass;
    st = hc_plan_make(req, nreq, &lim, hc_provider_block_of, p, out);
  }
out:
  if (st != HC_OK && !*out) *out = hc_plan_failed(err);
  hu_buf_free(&unknown);
  free(text);
  free(names);
  free(req);
  return st;
}
