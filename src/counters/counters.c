/* hubprof counters, generic part: status texts and the provider object (lookup, "did you mean" suggestions
 * by edit distance), which every kind builds. The kinds live in perf.c (which also opens providers by name),
 * devices.c and cupti_host.c; this file calls none of them. */
/* SPDX-License-Identifier: MIT */
#include "counters_internal.h"

#include "../common/hu_text.h"

#include <ctype.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *hc_status_str(hc_status s) {
  switch (s) {
  case HC_OK: return "ok";
  case HC_ERR_INVALID: return "invalid argument";
  case HC_ERR_NOMEM: return "out of memory";
  case HC_ERR_UNKNOWN: return "unknown name";
  case HC_ERR_UNAVAILABLE: return "not available on this machine";
  case HC_ERR_IMPOSSIBLE: return "no plan satisfies the limits";
  case HC_ERR_IO: return "system call failed";
  case HC_ERR_PARSE: return "malformed input";
  }
  return "unknown status";
}

hc_provider *hc_provider_alloc(int kind, const char *name) {
  hc_provider *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->kind = kind;
  snprintf(p->name, sizeof p->name, "%s", name);
  return p;
}

const char *hc_provider_own(hc_provider *p, const char *s) {
  if (p->nowned == p->capowned) {
    size_t nc = p->capowned ? 2 * p->capowned : 64;
    char **no = realloc(p->owned, nc * sizeof *no);
    if (!no) return NULL;
    p->owned = no;
    p->capowned = nc;
  }
  char *c = strdup(s);
  if (c) p->owned[p->nowned++] = c;
  return c;
}

void hc_provider_close(hc_provider *p) {
  if (!p) return;
  for (size_t i = 0; i < p->nowned; i++)
    free(p->owned[i]);
  free(p->owned);
  free(p->counters);
  free(p->perf);
  free(p->rules);
  if (p->release) p->release(p);
  free(p);
}

const char *hc_provider_name(const hc_provider *p) { return p->name; }
size_t hc_provider_count(const hc_provider *p) { return p->n; }
const hc_counter *hc_provider_counter(const hc_provider *p, size_t i) {
  return i < p->n ? &p->counters[i] : NULL;
}
const hc_limits *hc_provider_limits(const hc_provider *p) { return p->has_limits ? &p->limits : NULL; }
const char *hc_provider_description(const hc_provider *p) { return p->description; }
int hc_provider_measurable(const hc_provider *p) { return p->kind == HC_KIND_PERF; }
const char *hc_provider_error(const hc_provider *p) { return p ? p->error : "out of memory"; }

long hc_provider_find(const hc_provider *p, const char *name) {
  if (!p || !name) return -1;
  for (size_t i = 0; i < p->n; i++)
    if (strcmp(p->counters[i].name, name) == 0) return (long)i;
  return -1;
}

static int contains_nocase(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++)
    if (strncasecmp(hay, needle, n) == 0) return 1;
  return 0;
}

size_t hc_provider_suggest(const hc_provider *p, const char *name, const char **out, size_t n) {
  if (!p || !name || !out || !n || !*name) return 0;
  size_t len = strlen(name), limit = len / 3;
  if (limit < 1) limit = 1;
  if (limit > 3) limit = 3;
  /* keep the n best (score, name) pairs, score = distance, substring matches after close spellings */
  size_t found = 0;
  size_t *score = calloc(n, sizeof *score);
  if (!score) return 0;
  for (size_t i = 0; i < p->n; i++) {
    const char *c = p->counters[i].name;
    size_t s = hu_edit_distance(name, c);
    if (s > limit) {
      if (len >= 3 && contains_nocase(c, name))
        s = 4 + strlen(c) - len;
      else
        continue;
    }
    size_t at = found;
    while (at > 0 && (score[at - 1] > s || (score[at - 1] == s && strcmp(out[at - 1], c) > 0)))
      at--;
    if (at >= n) continue;
    size_t last = found < n ? found : n - 1;
    for (size_t k = last; k > at; k--) {
      out[k] = out[k - 1];
      score[k] = score[k - 1];
    }
    out[at] = c;
    score[at] = s;
    if (found < n) found++;
  }
  free(score);
  return found;
}
