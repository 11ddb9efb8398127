/* The small tables of a store for the analysis (agents named "product#index", kernels by display name,
 * processes, distinct counter names), the device and kernel filters on them, and the walk over a table. */
/* SPDX-License-Identifier: MIT */
#include "ha_tables.h"

#include "../common/hu_buf.h"
#include "../common/hu_kname.h"
#include "../common/hu_pattern.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hai_tables_free(tables *t) {
  for (size_t i = 0; i < t->nagents; i++) {
    free(t->agents[i].name);
    free(t->agents[i].raw);
    free(t->agents[i].product);
  }
  for (size_t i = 0; i < t->nkernels; i++) {
    free(t->kernels[i].name);
    free(t->kernels[i].mangled);
    free(t->kernels[i].prog);
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
  if (k->program_hash && *k->program_hash && !(r->prog = strdup(k->program_hash))) return HP_ERR_NOMEM;
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

hp_status hai_load_tables(hp_store *s, tables *t) {
  t->none_agent = t->none_kernel = -1;
  hp_agent a = {.size = sizeof a};
  hp_kernel_symbol k = {.size = sizeof k};
  hp_process p = {.size = sizeof p};
  hp_counter_info ci = {.size = sizeof ci};
  hp_status st = hai_each(s, HP_TABLE_AGENT, &a, load_agent, t);
  if (st == HP_OK) st = hai_each(s, HP_TABLE_KERNEL_SYMBOL, &k, load_kernel, t);
  if (st == HP_OK && hu_kname_disambiguate(t->kernels, t->nkernels, sizeof *t->kernels,
                                           offsetof(kernel_rec, name), offsetof(kernel_rec, prog)))
    st = HP_ERR_NOMEM; /* names that kernels of several programs share, with the program's digits */
  if (st == HP_OK) st = hai_each(s, HP_TABLE_PROCESS, &p, load_process, t);
  if (st == HP_OK) st = hai_each(s, HP_TABLE_COUNTER_INFO, &ci, load_counter, t);
  return st;
}

int hai_glob_any(const char *const *pats, size_t n, const char *a, const char *b, const char *c) {
  for (size_t i = 0; i < n; i++) {
    if (!pats[i]) continue;
    if (hu_pattern_match(pats[i], HU_PAT_GLOB, a) || (b && hu_pattern_match(pats[i], HU_PAT_GLOB, b)) ||
        (c && hu_pattern_match(pats[i], HU_PAT_GLOB, c)))
      return 1; /* a glob, or "re:" a regular expression */
  }
  return 0;
}

const hai_coldef hai_grec_cols[7] = {
    {"calls", HA_INT, HA_ROLE_STAT, ""},      {"timed_calls", HA_INT, HA_ROLE_STAT, ""},
    {"total_ns", HA_INT, HA_ROLE_STAT, "ns"}, {"avg_ns", HA_REAL, HA_ROLE_STAT, "ns"},
    {"min_ns", HA_INT, HA_ROLE_STAT, "ns"},   {"max_ns", HA_INT, HA_ROLE_STAT, "ns"},
    {"percent", HA_REAL, HA_ROLE_STAT, "%"}};

void hai_keep_filtered(tables *t, const ha_query *q) {
  for (size_t i = 0; i < t->nagents; i++)
    t->agents[i].keep = !q->ndevices || hai_glob_any(q->devices, q->ndevices, t->agents[i].name,
                                                     t->agents[i].raw, t->agents[i].product);
  for (size_t i = 0; i < t->nkernels; i++)
    t->kernels[i].keep = !q->nkernels || hai_glob_any(q->kernels, q->nkernels, t->kernels[i].name,
                                                      t->kernels[i].mangled, NULL);
}
