/* The scan's groups: dispatches grouped by agent and kernel (and grid and work-group for --by kernel-grid) in
 * an open-addressing table (hai_group_of), and the row groups a store may pass over by their statistics
 * (hai_scan_filter), and the placeholder agents and kernels of ids a store does not describe; one home for
 * the serial scan (scan.c) and the parallel one (scan_par.c). */
/* SPDX-License-Identifier: MIT */
#include "ha_run.h"

#include "../common/hu_buf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- row groups passed over by their statistics (hp_cursor_filter) ---- */
static int ids_known(const hu_idmap *m, const hp_col_range *c) {
  if (!c->known || c->min < 1 || c->max - c->min >= 4096) return 0; /* id 0 is "(none)", never in the map */
  for (int64_t i = c->min; i <= c->max; i++)
    if (ix_get(m, (uint64_t)i) < 0) return 0;
  return 1;
}

/* 0 when no row of a group whose columns lie in `cols` can be kept: its agent and kernel ids are all stored
 * ones (reading it would make no "?" entry), and none of those kept, or its dispatch ids out of the range. */
static int group_matters(void *ctx, const hp_col_range *cols) {
  const run *r = ctx;
  const hp_col_range *a = &cols[r->col_agent], *k = &cols[r->col_kernel], *d = &cols[r->col_dispatch];
  if (!ids_known(&r->t.agent_ix, a) || !ids_known(&r->t.kernel_ix, k)) return 1;
  const ha_query *q = r->q;
  if (d->known && ((q->dispatch_first && (uint64_t)d->max < q->dispatch_first) ||
                   (q->dispatch_last && (uint64_t)d->min > q->dispatch_last)))
    return 0;
  int any = 0;
  for (int64_t i = a->min; i <= a->max && !any; i++)
    any = r->t.agents[ix_get(&r->t.agent_ix, (uint64_t)i)].keep;
  if (!any) return 0;
  any = 0;
  for (int64_t i = k->min; i <= k->max && !any; i++)
    any = r->t.kernels[ix_get(&r->t.kernel_ix, (uint64_t)i)].keep;
  return any;
}

void hai_scan_filter(const run *r, hp_cursor *c) {
  const ha_query *q = r->q;
  if (q->size < HA_QUERY_V1 || (!q->nkernels && !q->ndevices && !q->dispatch_first && !q->dispatch_last))
    return; /* every group matters */
  if (r->col_agent < 0 || r->col_kernel < 0 || r->col_dispatch < 0) return;
  hp_cursor_filter(c, group_matters, (void *)r); /* a format without groups: every row is read */
}

/* The group of dispatch d (created when new), or -1 when out of memory. */
long hai_group_of(run *r, const drec *d, size_t di) {
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

/* An entry for an agent / kernel id the store lacks, made on first use; -1 when out of memory. */
long hai_placeholder_agent(run *r, uint64_t id) {
  tables *t = &r->t;
  if (!id && t->none_agent >= 0) return t->none_agent;
  if (hu_grow((void **)&t->agents, &t->capagents, t->nagents + 1, sizeof *t->agents)) return -1;
  agent_rec *ar = &t->agents[t->nagents];
  *ar = (agent_rec){.name = strdup(id ? "?" : "(none)"), .raw = strdup(""), .product = strdup("")};
  for (int i = 0; i < NCONST; i++)
    ar->c[i] = NAN;
  t->nagents++;
  const ha_query *q = r->q;
  ar->keep =
      q->size < HA_QUERY_V1 || !q->ndevices || hai_glob_any(q->devices, q->ndevices, ar->name, NULL, NULL);
  long a = (long)t->nagents - 1;
  if (!ar->name || !ar->raw || !ar->product || (id && hu_idmap_put(&t->agent_ix, id, (uint32_t)a))) return -1;
  if (!id) t->none_agent = a;
  return a;
}

long hai_placeholder_kernel(run *r, uint64_t id) {
  tables *t = &r->t;
  if (!id && t->none_kernel >= 0) return t->none_kernel;
  if (hu_grow((void **)&t->kernels, &t->capkernels, t->nkernels + 1, sizeof *t->kernels)) return -1;
  kernel_rec *kr = &t->kernels[t->nkernels];
  *kr = (kernel_rec){.name = strdup(id ? "?" : "(none)"), .mangled = strdup("")};
  t->nkernels++;
  const ha_query *q = r->q;
  kr->keep =
      q->size < HA_QUERY_V1 || !q->nkernels || hai_glob_any(q->kernels, q->nkernels, kr->name, NULL, NULL);
  long k = (long)t->nkernels - 1;
  if (!kr->name || !kr->mangled || (id && hu_idmap_put(&t->kernel_ix, id, (uint32_t)k))) return -1;
  if (!id) t->none_kernel = k;
  return k;
}

/* Room in the per-device totals (run.devtot, zeroed) for agent index a: 0, or -1 when out of memory. */
int hai_devtot_fit(run *r, size_t a) {
  if (a < r->ndevtot) return 0;
  size_t old = r->ndevtot, cap = r->ndevtot;
  if (hu_grow((void **)&r->devtot, &cap, a + 1, sizeof *r->devtot)) return -1;
  memset(r->devtot + old, 0, (cap - old) * sizeof *r->devtot);
  r->ndevtot = cap;
  return 0;
}
