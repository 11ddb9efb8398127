/* Iteration multiplexing's imputation for the assembly (assemble_internal.h): per process and key (a kernel,
 * or a kernel and its launch shape), the median of the warm measured values of each counter, imputed only
 * where every pass was measured; cold first dispatches marked and their readings replaced by the warm
 * estimate. */
/* SPDX-License-Identifier: MIT */
#include "assemble_internal.h"

#include "../common/hu_buf.h"
#include "../common/hu_devplan.h"
#include "../counters/counters.h"
#include "../common/hu_json.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- multiplexing ------------------------------------------------------------------------------------ */
typedef struct mdisp {
  uint64_t row;            /* the dispatch's row id in its input */
  uint64_t dispatch_id;    /* the collector's id: enqueue order in the process */
  uint64_t kernel_id;      /* kernel_symbol id in its input */
  uint32_t grid[3], wg[3]; /* global and work-group sizes */
  uint64_t agent;          /* agent row id (per-device plans: keys are per device) */
  uint32_t pf, np; /* the passes its device measures, [pf, pf + np) 0-based (all without per-device plans) */
  size_t key;      /* index of its key */
} mdisp;

/* One measured value of a key's counter (kc = key * C + counter). */
typedef struct mval {
  size_t kc;
  uint64_t row;
  double value;
} mval;

typedef struct mkey {
  const char *name;        /* kernel name (owned by the mproc) */
  const char *prog;        /* its program's identity, "" unknown (owned by the mproc) */
  uint32_t grid[3], wg[3]; /* policy launch only (else 0) */
  uint32_t pf, np;         /* its device's passes (mdisp) */
  uint64_t ndisp;          /* its dispatches */
  uint64_t cold_row;  /* row of its first dispatch by dispatch id (the cold one: first use in the process) */
  uint64_t cold_id;   /* that dispatch's dispatch id */
  size_t covered;     /* passes measured by at least min_per_pass of its dispatches */
  uint64_t *per_pass; /* per pass: how many of its dispatches measured it (fewest over its counters) */
} mkey;

struct mproc {
  hc_plan *plan;      /* the pass plan (the counters' one grammar, hc_plan_parse) */
  int launch;         /* policy launch */
  const char *devmap; /* per-device plans: metadata device_plans (hu_devplan.h), else NULL */
  int64_t pid, start_ns;
  char **knames; /* kernel_symbol id -> name */
  size_t nknames;
  mdisp *d; /* sorted by row */
  size_t nd;
  mkey *keys;
  size_t nkeys;
  uint64_t *info_of; /* plan index -> counter_info id in the input, 0 = none */
  double *sum;       /* [key * C + c]: sum of the measured values of counter c */
  uint64_t *cnt;     /* [key * C + c]: how many */
  double *est;       /* [key * C + c]: the estimate imputed (median of the warm measured values) */
  struct mval *vals; /* every measured value, for the medians */
  size_t nvals, capvals;
  unsigned char *cold_only; /* [key * C + c]: the estimate is a cold dispatch's value (its only one) */
  uint64_t ncold;           /* such estimates of complete keys (imputed from) */
  unsigned char *measured;  /* [dispatch * C + c]: 1 measured, 2 imputed already (never imputed again) */
  uint64_t nmeasured;
  uint64_t nwarmed; /* cold dispatches' measured values replaced by their warm siblings' estimate */
};

void asm_mproc_free(mproc *p) {
  if (!p) return;
  hc_plan_free(p->plan);
  for (size_t i = 0; i < 2 * p->nknames; i++) /* names and identities */
    free(p->knames[i]);
  free(p->knames);
  free(p->d);
  for (size_t k = 0; k < p->nkeys; k++)
    free(p->keys[k].per_pass);
  free(p->keys);
  free(p->info_of);
  free(p->sum);
  free(p->cnt);
  free(p->est);
  free(p->cold_only);
  free(p->vals);
  free(p->measured);
  free(p);
}

static int cmp_mrow(const void *a, const void *b) {
  const mdisp *x = a, *y = b;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* Two kernel ids of one store as keys: by name, then by program. */
static int kcmp(char *const *names, size_t n, uint64_t x, uint64_t y) {
  if (x == y) return 0;
  int c = strcmp(asm_kname(names, n, x), asm_kname(names, n, y));
  return c ? c : strcmp(asm_kprog(names, n, x), asm_kprog(names, n, y));
}

static int mux_key_cmp(const mproc *p, const mdisp *x, const mdisp *y) {
  if (p->devmap && x->agent != y->agent) return x->agent < y->agent ? -1 : 1; /* a key per device */
  int c = kcmp(p->knames, p->nknames, x->kernel_id, y->kernel_id);
  if (c || !p->launch) return c;
  c = memcmp(x->grid, y->grid, sizeof x->grid);
  return c ? c : memcmp(x->wg, y->wg, sizeof x->wg);
}
static int mux_cmp_key(const void *a, const void *b, void *ctx) {
  const mproc *p = ctx;
  const mdisp *x = &p->d[*(const size_t *)a], *y = &p->d[*(const size_t *)b];
  int c = mux_key_cmp(p, x, y);
  return c ? c : x->row < y->row ? -1 : x->row > y->row;
}

static int cmp_mval(const void *a, const void *b) {
  const mval *x = a, *y = b;
  if (x->kc != y->kc) return x->kc < y->kc ? -1 : 1;
  return x->value < y->value ? -1 : x->value > y->value;
}

/* The estimate of each key's counters: the median of its measured values, the key's cold dispatch (its
 * first: compilation and first-use work of the runtime may fall into its window) left out unless it is
 * the only measurement. Robust to outliers (a preempted dispatch, a first-touch page storm), where the mean
 * follows them. */
static int mux_estimates(mproc *p) {
  size_t C = p->plan->ncounters, n = (p->nkeys ? p->nkeys : 1) * (C ? C : 1);
  if (!(p->est = calloc(n, sizeof *p->est)) || !(p->cold_only = calloc(n, 1))) return -1;
  if (p->nvals) qsort(p->vals, p->nvals, sizeof *p->vals, cmp_mval);
  for (size_t i = 0; i < p->nvals;) {
    size_t j = i, kc = p->vals[i].kc;
    while (j < p->nvals && p->vals[j].kc == kc)
      j++;
    uint64_t cold = p->keys[kc / C].cold_row;
    size_t warm = 0;
    for (size_t t = i; t < j; t++)
      warm += p->vals[t].row != cold;
    if (!warm) { /* the cold dispatch measured it and no other did */
      p->est[kc] = p->vals[i].value;
      p->cold_only[kc] = 1;
    } else { /* the median of the warm values: the middle one, or the mean of the middle two */
      size_t want[2] = {(warm - 1) / 2, warm / 2}, seen = 0;
      double m[2] = {0, 0};
      for (size_t t = i; t < j; t++) {
        if (p->vals[t].row == cold) continue;
        for (int h = 0; h < 2; h++)
          if (seen == want[h]) m[h] = p->vals[t].value;
        seen++;
      }
      p->est[kc] = want[0] == want[1] ? m[0] : (m[0] + m[1]) / 2;
    }
    i = j;
  }
  return 0;
}

/* Read process p of store s: its dispatches grouped into keys, which counters each dispatch measured, per
 * key the sum and count of each counter's measured values, and each key's coverage of the passes. */
static int mproc_load(mproc *p, hp_store *s, uint32_t min_per_pass) {
  hp_cursor *c = NULL;
  hp_process pr = {.size = sizeof pr};
  if (hp_cursor_open(s, HP_TABLE_PROCESS, &c) == HP_OK) {
    while (hp_cursor_next(c, &pr) == HP_OK) { /* the last row of a process is its latest */
      p->pid = pr.pid;
      p->start_ns = pr.start_ns;
    }
    hp_cursor_close(c);
  }
  if (asm_knames_load(s, &p->knames, &p->nknames)) return -1;
  size_t C = p->plan->ncounters, P = p->plan->npasses;
  if (!(p->info_of = calloc(C ? C : 1, sizeof *p->info_of))) return -1;
  hp_counter_info ci = {.size = sizeof ci};
  if (hp_cursor_open(s, HP_TABLE_COUNTER_INFO, &c) == HP_OK) {
    while (hp_cursor_next(c, &ci) == HP_OK)
      for (size_t i = 0; i < C; i++)
        if (strcmp(p->plan->names[i], ci.name) == 0) p->info_of[i] = ci.id;
    hp_cursor_close(c);
  }
  hu_idmap range = {0}; /* per-device plans: agent row id -> 1 + (first pass << 32 | passes) */
  if (p->devmap && hp_cursor_open(s, HP_TABLE_AGENT, &c) == HP_OK) {
    hp_agent ag = {.size = sizeof ag};
    int bad = 0;
    while (!bad && hp_cursor_next(c, &ag) == HP_OK) {
      size_t f = 0, n = 0;
      if (hu_devplan_find(p->devmap, ag.name ? ag.name : "", ag.product_name ? ag.product_name : "",
                          ag.device_index, &f, &n) < 0)
        f = n = 0;
      bad = hu_idmap_put(&range, ag.id, ((uint64_t)f << 32 | n) + 1) != 0;
    }
    hp_cursor_close(c);
    if (bad) {
      hu_idmap_free(&range);
      return -1;
    }
  }
  hp_dispatch d = {.size = sizeof d};
  size_t cap = 0;
  if (hp_cursor_open(s, HP_TABLE_DISPATCH, &c) != HP_OK) {
    hu_idmap_free(&range);
    return -1;
  }
  while (hp_cursor_next(c, &d) == HP_OK) {
    if (p->nd == cap) {
      cap = cap ? 2 * cap : 1024;
      mdisp *v = realloc(p->d, cap * sizeof *v);
      if (!v) {
        hp_cursor_close(c);
        hu_idmap_free(&range);
        return -1;
      }
      p->d = v;
    }
    mdisp *x = &p->d[p->nd++];
    memset(x, 0, sizeof *x);
    x->row = d.id;
    x->dispatch_id = d.dispatch_id;
    x->kernel_id = d.kernel_id;
    x->agent = d.agent_id;
    memcpy(x->grid, d.grid, sizeof x->grid);
    memcpy(x->wg, d.workgroup, sizeof x->wg);
    uint64_t r = 0;
    x->np = (uint32_t)P; /* without per-device plans (or an agent not in the store): every pass */
    if (p->devmap && hu_idmap_get(&range, d.agent_id, &r)) {
      x->pf = (uint32_t)((r - 1) >> 32);
      x->np = (uint32_t)(r - 1);
    }
  }
  hp_cursor_close(c);
  hu_idmap_free(&range);
  qsort(p->d, p->nd, sizeof *p->d, cmp_mrow);
  /* keys, ordered by name and sizes */
  size_t *ord = malloc((p->nd ? p->nd : 1) * sizeof *ord);
  if (!ord) return -1;
  for (size_t i = 0; i < p->nd; i++)
    ord[i] = i;
  qsort_r(ord, p->nd, sizeof *ord, mux_cmp_key, p);
  for (size_t i = 0; i < p->nd; i++)
    p->nkeys += !i || mux_key_cmp(p, &p->d[ord[i - 1]], &p->d[ord[i]]) != 0;
  if (!(p->keys = calloc(p->nkeys ? p->nkeys : 1, sizeof *p->keys))) {
    free(ord);
    return -1;
  }
  size_t k = 0;
  for (size_t i = 0; i < p->nd; i++) {
    mdisp *x = &p->d[ord[i]];
    if (i && mux_key_cmp(p, &p->d[ord[i - 1]], x) != 0) k++;
    mkey *y = &p->keys[k];
    if (!y->ndisp) {
      y->pf = x->pf;
      y->np = x->np;
      y->name = asm_kname(p->knames, p->nknames, x->kernel_id);
      y->prog = asm_kprog(p->knames, p->nknames, x->kernel_id);
      if (p->launch) {
        memcpy(y->grid, x->grid, sizeof y->grid);
        memcpy(y->wg, x->wg, sizeof y->wg);
      }
    }
    if (!y->ndisp || x->dispatch_id < y->cold_id) { /* rows of several threads need not be in enqueue order */
      y->cold_row = x->row;
      y->cold_id = x->dispatch_id;
    }
    y->ndisp++;
    x->key = k;
  }
  free(ord);
  size_t nk = p->nkeys ? p->nkeys : 1, Cn = C ? C : 1;
  p->sum = calloc(nk * Cn, sizeof *p->sum);
  p->cnt = calloc(nk * Cn, sizeof *p->cnt);
  p->measured = calloc((p->nd ? p->nd : 1) * Cn, 1);
  if (!p->sum || !p->cnt || !p->measured) return -1;
  uint64_t maxid = 0; /* counter_info id -> plan index */
  for (size_t i = 0; i < C; i++)
    if (p->info_of[i] > maxid) maxid = p->info_of[i];
  long *plan_of = malloc((maxid + 1) * sizeof *plan_of);
  if (!plan_of) return -1;
  for (uint64_t i = 0; i <= maxid; i++)
    plan_of[i] = -1;
  for (size_t i = 0; i < C; i++)
    if (p->info_of[i]) plan_of[p->info_of[i]] = (long)i;
  hp_counter_value v = {.size = sizeof v};
  if (hp_cursor_open(s, HP_TABLE_COUNTER_VALUE, &c) == HP_OK) {
    while (hp_cursor_next(c, &v) == HP_OK) {
      if (v.counter_id > maxid || plan_of[v.counter_id] < 0) continue;
      mdisp want = {.row = v.dispatch_id};
      mdisp *x = bsearch(&want, p->d, p->nd, sizeof *p->d, cmp_mrow);
      if (!x) continue;
      size_t ci2 = (size_t)plan_of[v.counter_id];
      unsigned char *m = &p->measured[(size_t)(x - p->d) * C + ci2];
      if (*m) continue; /* a counter twice on one dispatch: the first value counts */
      *m = v.imputed ? 2 : 1;
      if (v.imputed) continue;
      p->sum[x->key * C + ci2] += v.value;
      p->cnt[x->key * C + ci2]++;
      p->nmeasured++;
      if (p->nvals == p->capvals) {
        size_t nc = p->capvals ? 2 * p->capvals : 1024;
        mval *nv = realloc(p->vals, nc * sizeof *nv);
        if (!nv) {
          hp_cursor_close(c);
          free(plan_of);
          return -1;
        }
        p->vals = nv;
        p->capvals = nc;
      }
      p->vals[p->nvals++] = (mval){x->key * C + ci2, x->row, v.value};
    }
    hp_cursor_close(c);
  }
  free(plan_of);
  if (mux_estimates(p)) return -1;
  for (size_t y = 0; y < p->nkeys; y++) { /* coverage of pass q: the fewest measurements of its counters */
    mkey *key = &p->keys[y];
    if (!(key->per_pass = calloc(P ? P : 1, sizeof *key->per_pass))) return -1;
    for (size_t q = key->pf; q < (size_t)key->pf + key->np && q < P; q++) { /* its device's passes */
      uint64_t least = UINT64_MAX;
      for (size_t i = 0; i < C; i++)
        if (p->plan->pass[i] == q + 1 && p->cnt[y * C + i] < least) least = p->cnt[y * C + i];
      key->per_pass[q] = least == UINT64_MAX ? 0 : least;
      key->covered += key->per_pass[q] >= min_per_pass;
    }
    for (size_t i = 0; i < C && key->covered == key->np; i++)
      p->ncold += p->cold_only[y * C + i];
  }
  return 0;
}

/* A dispatch of a multiplexed input is cold when it is its key's first (by dispatch id): stored on the row
 * (hp_dispatch.cold), so every format and reader can tell which values hold first-use cost. */
void asm_mux_mark_cold(const mproc *p, hp_dispatch *d) {
  mdisp want = {.row = d->id};
  const mdisp *x = bsearch(&want, p->d, p->nd, sizeof *p->d, cmp_mrow);
  d->cold = x && p->keys[x->key].cold_row == d->id;
}

static int key_complete(const mkey *k) { return k->covered == k->np; }

/* The estimate that replaces a measured value of a cold dispatch (its key's first), or NULL to keep the
 * value: only for a complete key whose counter was measured by at least one warm dispatch too. The cold
 * reading holds first-use cost (JIT, first touch) that no warm-up could take out under multiplexing, so the
 * dispatch gets the same robust estimate as the values it did not measure; the raw reading is kept in
 * metadata multiplex_cold_raw (docs/counters.md). */
static const double *mux_cold_estimate(const mproc *p, const mdisp *x, uint64_t counter_id) {
  const mkey *key = &p->keys[x->key];
  if (key->cold_row != x->row || !key_complete(key)) return NULL;
  size_t C = p->plan->ncounters;
  for (size_t ci = 0; ci < C; ci++) {
    size_t kc = x->key * C + ci;
    if (p->info_of[ci] == counter_id) return p->cnt[kc] && !p->cold_only[kc] ? &p->est[kc] : NULL;
  }
  return NULL;
}

/* A measured counter value of a cold dispatch: its warm siblings' estimate instead, marked imputed. */
void asm_mux_warm_cold(const mproc *p, hp_counter_value *v) {
  if (v->imputed) return;
  mdisp want = {.row = v->dispatch_id};
  const mdisp *x = bsearch(&want, p->d, p->nd, sizeof *p->d, cmp_mrow);
  const double *e = x ? mux_cold_estimate(p, x, v->counter_id) : NULL;
  if (!e) return;
  v->value = *e;
  v->imputed = 1;
}

/* A number as JSON: null where JSON has none (NaN, infinities). */
static void json_num(hu_buf *b, double v) {
  if (v - v == 0) /* finite */
    hu_buf_printf(b, "%.17g", v);
  else
    hu_buf_str(b, "null");
}

#define MAX_WARNED 20 /* incomplete keys named in warnings; the metadata holds them all */

/* Metadata multiplex_cold_raw: per cold dispatch and counter whose reading is replaced by its warm siblings'
 * estimate (mux_warm_cold), the raw reading and the estimate, so the first-use cost stays visible; an input
 * assembled before keeps its own list (its values are imputed already: nothing is replaced again). Counts
 * the replaced values as imputed, not measured. */
static int mux_cold_json(hp_assembly *a, hp_assemble_stats *stats) {
  hu_buf b = {0};
  hu_buf_printf(&b, "[");
  for (size_t i = 0; i < a->nmerged; i++) {
    mproc *p = a->mux[i];
    if (!p) continue;
    const char *had = hp_store_metadata(a->merged[i], "multiplex_cold_raw"); /* an assembled input's own */
    size_t hn = had ? strlen(had) : 0;
    if (hn > 2 && had[0] == '[' && had[hn - 1] == ']')
      hu_buf_printf(&b, "%s%.*s", b.n > 1 ? "," : "", (int)(hn - 2), had + 1);
    size_t C = p->plan->ncounters;
    for (size_t t = 0; t < p->nvals; t++) {
      const mval *v = &p->vals[t];
      mdisp want = {.row = v->row};
      const mdisp *x = bsearch(&want, p->d, p->nd, sizeof *p->d, cmp_mrow);
      size_t ci = v->kc % C;
      const double *e = x ? mux_cold_estimate(p, x, p->info_of[ci]) : NULL;
      if (!e) continue;
      p->nwarmed++;
      hu_buf_printf(&b,
                    "%s{\"pid\":%" PRId64 ",\"process_start_ns\":%" PRId64 ",\"kernel\":", b.n > 1 ? "," : "",
                    p->pid, p->start_ns);
      hu_json_put_str(&b, p->keys[x->key].name);
      if (*p->keys[x->key].prog) {
        hu_buf_printf(&b, ",\"program\":");
        hu_json_put_str(&b, p->keys[x->key].prog);
      }
      hu_buf_printf(&b, ",\"dispatch_id\":%" PRIu64 ",\"counter\":", x->dispatch_id);
      hu_json_put_str(&b, p->plan->names[ci]);
      hu_buf_printf(&b, ",\"raw\":");
      json_num(&b, v->value);
      hu_buf_printf(&b, ",\"estimate\":");
      json_num(&b, *e);
      hu_buf_printf(&b, "}");
    }
    if (stats) {
      stats->measured_values -= p->nwarmed;
      stats->imputed_values += p->nwarmed;
    }
  }
  hu_buf_printf(&b, "]");
  if (b.oom || !hu_buf_cstr(&b)) {
    hu_buf_free(&b);
    return -1;
  }
  a->mux_cold = (char *)b.p;
  return 0;
}

/* Build the imputation of every merged input that asks for it; warnings for incomplete keys. */
hp_status asm_mux_prepare(hp_assembly *a, hp_assemble_stats *stats) {
  if (!(a->mux = calloc(a->nmerged ? a->nmerged : 1, sizeof *a->mux)))
    return asm_fail(a, HP_ERR_NOMEM, "out of memory");
  hu_buf js = {0};
  hu_buf_printf(&js, "[");
  uint64_t nincomplete = 0;
  size_t nmux = 0;
  for (size_t i = 0; i < a->nmerged; i++) {
    hp_store *s = a->merged[i];
    int launch;
    if (a->o.impute == HP_IMPUTE_AUTO) {
      const char *rp = hp_store_metadata(s, "replay"), *pol = hp_store_metadata(s, "multiplex_policy");
      if (!rp || strcmp(rp, "multiplex") || !pol) continue;
      launch = strcmp(pol, "launch") == 0;
    } else {
      launch = a->o.impute == HP_IMPUTE_LAUNCH;
    }
    const char *plan = a->o.plan ? a->o.plan : hp_store_metadata(s, "pass_plan");
    if (!plan || !*plan) {
      hu_buf_free(&js);
      return asm_fail(a, HP_ERR_INVALID, "%s: no pass plan to impute with (metadata pass_plan missing)",
                      hp_store_path(s));
    }
    mproc *p = calloc(1, sizeof *p);
    if (!p) break;
    a->mux[i] = p;
    p->launch = launch;
    if (hc_plan_parse(plan, &p->plan) != HC_OK) {
      hu_buf_free(&js);
      return asm_fail(a, HP_ERR_INVALID, "%s: cannot read the pass plan '%s'", hp_store_path(s), plan);
    }
    const char *dm = hp_store_metadata(s, "device_plans"), *bad; /* per-device plans: keys per device */
    if (dm && hu_devplan_check(dm, p->plan->npasses, (size_t)-1, &bad)) {
      hu_buf_free(&js);
      return asm_fail(a, HP_ERR_INVALID, "%s: metadata device_plans: %s", hp_store_path(s), bad);
    }
    p->devmap = dm;
    if (mproc_load(p, s, a->o.min_per_pass)) {
      hu_buf_free(&js);
      return asm_fail(a, HP_ERR_NOMEM, "%s: cannot read its dispatches and counters (out of memory?)",
                      hp_store_path(s));
    }
    if (!a->mux_policy && !(a->mux_policy = strdup(launch ? "launch" : "kernel"))) break;
    nmux++;
  }
  size_t nm = 0;
  for (size_t i = 0; i < a->nmerged; i++)
    nm += a->mux[i] != NULL;
  for (size_t i = 0; i < a->nmerged; i++) {
    const mproc *p = a->mux[i];
    if (!p) continue;
    if (stats) stats->measured_values += p->nmeasured;
    for (size_t k = 0; k < p->nkeys; k++) {
      const mkey *key = &p->keys[k];
      a->mux_keys++;
      if (key_complete(key)) continue;
      hu_buf_printf(&js, "%s{\"pid\":%" PRId64 ",\"process_start_ns\":%" PRId64 ",\"kernel\":",
                    js.n > 1 ? "," : "", p->pid, p->start_ns);
      hu_json_put_str(&js, key->name);
      if (*key->prog) {
        hu_buf_printf(&js, ",\"program\":");
        hu_json_put_str(&js, key->prog);
      }
      if (p->launch)
        hu_buf_printf(&js, ",\"grid\":[%u,%u,%u],\"workgroup\":[%u,%u,%u]", key->grid[0], key->grid[1],
                      key->grid[2], key->wg[0], key->wg[1], key->wg[2]);
      hu_buf_printf(
          &js, ",\"dispatches\":%" PRIu64 ",\"passes\":%u,\"passes_covered\":%zu,\"measured_per_pass\":[",
          key->ndisp, key->np, key->covered);
      for (size_t q = key->pf; q < (size_t)key->pf + key->np && q < p->plan->npasses; q++)
        hu_buf_printf(&js, "%s%" PRIu64, q > key->pf ? "," : "", key->per_pass[q]);
      hu_buf_printf(&js, "]}");
      if (nincomplete++ >= MAX_WARNED) continue;
      char what[512], where[64] = "";
      if (p->launch)
        snprintf(what, sizeof what, "kernel %s grid %u,%u,%u wg %u,%u,%u", key->name, key->grid[0],
                 key->grid[1], key->grid[2], key->wg[0], key->wg[1], key->wg[2]);
      else
        snprintf(what, sizeof what, "kernel %s", key->name);
      if (nm > 1) snprintf(where, sizeof where, " (pid %" PRId64 ")", p->pid);
      asm_warnf(a, "%s%s: %" PRIu64 " dispatch%s cover%s %zu of %u passes: left out of metrics", what, where,
                key->ndisp, key->ndisp == 1 ? "" : "es", key->ndisp == 1 ? "s" : "", key->covered, key->np);
    }
  }
  hu_buf_printf(&js, "]");
  if (mux_cold_json(a, stats)) {
    hu_buf_free(&js);
    return asm_fail(a, HP_ERR_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < a->nmerged; i++)
    if (a->mux[i] && a->mux[i]->ncold)
      asm_warnf(a,
                "pid %" PRId64 ": %" PRIu64
                " imputed counter%s come%s from a kernel's cold first dispatch only (its "
                "first use may be in them): more dispatches per kernel give warm ones",
                a->mux[i]->pid, a->mux[i]->ncold, a->mux[i]->ncold == 1 ? "" : "s",
                a->mux[i]->ncold == 1 ? "s" : "");
  if (nincomplete > MAX_WARNED)
    asm_warnf(a, "... and %" PRIu64 " more incomplete (metadata multiplex_incomplete lists them all)",
              nincomplete - MAX_WARNED);
  if (stats) {
    stats->keys = a->mux_keys;
    stats->incomplete_keys = nincomplete;
  }
  if (!(a->mux_json = hu_buf_cstr(&js))) hu_buf_free(&js);
  if (!a->mux_json || (nmux && !a->mux_policy)) return asm_fail(a, HP_ERR_NOMEM, "out of memory");
  return HP_OK;
}

int asm_mux_extra(hp_assembly *a, size_t ix, hp_counter_value *v, hp_assemble_stats *stats) {
  mproc *p = a->mux[ix];
  size_t C = p->plan->ncounters;
  for (; a->it_a < p->nd; a->it_a++, a->it_b = 0) {
    const mdisp *x = &p->d[a->it_a];
    if (!key_complete(&p->keys[x->key])) continue; /* incomplete: no imputed value at all */
    while (a->it_b < C) {
      size_t ci = a->it_b++;
      if (p->measured[a->it_a * C + ci] || !p->info_of[ci] || p->plan->pass[ci] <= x->pf ||
          p->plan->pass[ci] > x->pf + x->np) /* measured, unknown, or of another device's passes */
        continue;
      v->dispatch_id = x->row;
      v->counter_id = p->info_of[ci];
      v->pass = p->plan->pass[ci];
      v->imputed = 1;
      v->value = p->est[x->key * C + ci];
      if (stats) stats->imputed_values++;
      return 1;
    }
  }
  return 0;
}
