/* The scan of a kernel, dispatch or region query (run, ha_run.h): the small tables and filters, the kept
 * dispatches (batched columns, groups summed on the way), their counter values, the multiplexing keys left
 * incomplete; then the counters and metrics chosen (select.c). The analysis hot loops live here. */
/* SPDX-License-Identifier: MIT */
#include "ha_run.h"

#include "../common/hu_buf.h"
#include "../common/hu_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void mux_free(struct muxkey *k, size_t n);

void hai_run_free(run *r) {
  free(r->devtot);
  mux_free(r->mux, r->nmux);
  hai_tables_free(&r->t);
  free(r->d);
  free(r->g);
  free(r->gslot);
  free(r->slots);
  free(r->with_values);
  free(r->multi);
  free(r->dups);
  free(r->sel);
  free(r->msel);
  free(r->mc_to_c);
  free(r->aggs);
  free(r->used);
  free(r->rl);
  free(r->hv);
  free(r->host_has);
  hc_metrics_free(r->m);
}

/* ---- keys iteration multiplexing left incomplete (metadata multiplex_incomplete, docs/replay.md) ---- */

typedef struct muxkey {
  int64_t pid, start;
  char *kernel; /* the kernel symbol's name */
  char *prog;   /* its program's identity, NULL when not given (a store of before identities) */
  int launch;   /* grid and workgroup given (policy launch) */
  uint32_t grid[3], wg[3];
} muxkey;

static void mux_free(muxkey *k, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(k[i].kernel), free(k[i].prog);
  free(k);
}

/* Does key k name kernel kr (its name and, when the key gives one, its program)? */
static int mux_names(const muxkey *k, const kernel_rec *kr) {
  return !strcmp(k->kernel, kr->mangled) && (!k->prog || !strcmp(k->prog, kr->prog ? kr->prog : ""));
}

/* [a, b, c] of non-negative integers below 2^32 into v: 0, or -1. */
static int mux_triple(const hu_json *a, uint32_t *v) {
  if (!a || a->type != HU_JSON_ARR || a->n != 3) return -1;
  for (int i = 0; i < 3; i++) {
    if (a->kid[i].type != HU_JSON_INT || a->kid[i].u > UINT32_MAX) return -1;
    v[i] = (uint32_t)a->kid[i].u;
  }
  return 0;
}

/* Parse the metadata's array of incomplete keys. 0, or -1 when it is not what docs/replay.md says. */
static int parse_mux(const char *text, muxkey **out, size_t *n) {
  hu_json *j;
  size_t cap = 0;
  *out = NULL;
  *n = 0;
  if (hu_json_parse(text, strlen(text), &j) != HU_OK) {
    hu_json_free(j);
    return -1;
  }
  int bad = j->type != HU_JSON_ARR;
  for (size_t i = 0; !bad && i < j->n; i++) {
    const hu_json *o = &j->kid[i], *kernel = hu_json_get(o, "kernel");
    const hu_json *grid = hu_json_get(o, "grid"), *wg = hu_json_get(o, "workgroup");
    const hu_json *prog = hu_json_get(o, "program");
    muxkey k = {0};
    bad = o->type != HU_JSON_OBJ || hu_json_int64(hu_json_get(o, "pid"), &k.pid) ||
          hu_json_int64(hu_json_get(o, "process_start_ns"), &k.start) || !kernel ||
          kernel->type != HU_JSON_STR || (grid && mux_triple(grid, k.grid)) || (wg && mux_triple(wg, k.wg));
    k.launch = grid || wg;
    bad = bad || (prog && prog->type != HU_JSON_STR);
    if (!bad && (hu_grow((void **)out, &cap, *n + 1, sizeof **out) || !(k.kernel = strdup(kernel->s)) ||
                 (prog && !(k.prog = strdup(prog->s))))) {
      free(k.kernel);
      bad = 1;
    }
    if (!bad) (*out)[(*n)++] = k;
  }
  hu_json_free(j);
  if (!bad) return 0;
  mux_free(*out, *n);
  *out = NULL;
  *n = 0;
  return -1;
}

/* Does dispatch x (of process row `process_id`) belong to an incomplete key? */
static int in_incomplete_key(const run *r, const drec *x, uint64_t process_id) {
  long pi = ix_get(&r->t.pid_of, process_id);
  if (pi < 0) return 0;
  const kernel_rec *kr = &r->t.kernels[x->kernel];
  for (size_t i = 0; i < r->nmux; i++) {
    const muxkey *k = &r->mux[i];
    if (k->pid != r->t.pids[pi] || k->start != r->t.starts[pi] || !mux_names(k, kr)) continue;
    if (k->launch && (memcmp(k->grid, x->grid, sizeof k->grid) || memcmp(k->wg, x->wg, sizeof k->wg)))
      continue;
    return 1;
  }
  return 0;
}

/* Dispatch rows are read in columnar batches of only the columns this query needs: a columnar format
 * (Parquet) then decodes nothing else. */
#define SCAN_BATCH 4096
#define SCAN_DIRECT_IDS 256

typedef struct scan_cols {
  void *cols[64]; /* per column of the dispatch table: an array of SCAN_BATCH values, or NULL */
  const hp_table_desc *d;
  size_t n;         /* columns read */
  uint16_t idx[64]; /* their index, offset in hp_dispatch and width */
  uint16_t off[64];
  uint8_t width[64];
  /* the columns every query reads, looked at directly by the scan (the others reach it through scan_row) */
  const uint64_t *agent, *kernel;
  const int64_t *start, *end;
  const uint32_t *passes, *cold;
} scan_cols;

static int want_col(const run *r, const char *name, int filters) {
  const ha_query *q = r->q;
  if (r->regions && (!strcmp(name, "thread_id") || !strcmp(name, "enqueue_ns") || !strcmp(name, "region_id")))
    return 1;
  if (!strcmp(name, "agent_id") || !strcmp(name, "kernel_id") || !strcmp(name, "start_ns") ||
      !strcmp(name, "end_ns"))
    return 1;
  if (!strcmp(name, "dispatch_id"))
    return r->keep_records || (filters && (q->dispatch_first || q->dispatch_last));
  if (!strcmp(name, "process_id")) return r->keep_records || r->nmux;
  if (!strncmp(name, "grid_", 5) || !strncmp(name, "workgroup_", 10))
    return r->keep_records || r->group != HA_BY_KERNEL || r->nmux;
  if (!strcmp(name, "id")) return r->keep_records;
  if (!strcmp(name, "passes")) return 1; /* passes 0 without device times: incomplete (its process died) */
  if (!strcmp(name, "cold")) return 1;
  return 0;
}

static int scan_cols_init(scan_cols *sc, const run *r, int filters) {
  memset(sc, 0, sizeof *sc);
  sc->d = hp_table_describe(HP_TABLE_DISPATCH);
  for (size_t i = 0; i < sc->d->ncolumns && i < 64; i++) {
    const hp_column *c = &sc->d->columns[i];
    if (!want_col(r, c->name, filters)) continue;
    if (!(sc->cols[i] = calloc(SCAN_BATCH, 8))) return -1;
    sc->idx[sc->n] = (uint16_t)i;
    sc->off[sc->n] = (uint16_t)c->offset;
    sc->width[sc->n++] = c->type == HP_COL_U32 || c->type == HP_COL_I32 ? 4 : 8;
    if (!strcmp(c->name, "agent_id")) sc->agent = sc->cols[i];
    if (!strcmp(c->name, "kernel_id")) sc->kernel = sc->cols[i];
    if (!strcmp(c->name, "start_ns")) sc->start = sc->cols[i];
    if (!strcmp(c->name, "end_ns")) sc->end = sc->cols[i];
    if (!strcmp(c->name, "passes")) sc->passes = sc->cols[i];
    if (!strcmp(c->name, "cold")) sc->cold = sc->cols[i];
  }
  return sc->agent && sc->kernel && sc->start && sc->end && sc->passes && sc->cold ? 0 : -1;
}

static void scan_cols_free(scan_cols *sc) {
  for (size_t i = 0; i < 64; i++)
    free(sc->cols[i]);
}

/* Row i of the batch into d: only the columns read (the others stay 0 from the start). */
static inline void scan_row(const scan_cols *sc, size_t i, hp_dispatch *d) {
  for (size_t k = 0; k < sc->n; k++) {
    const char *src = (const char *)sc->cols[sc->idx[k]];
    if (sc->width[k] == 8)
      memcpy((char *)d + sc->off[k], src + 8 * i, 8);
    else
      memcpy((char *)d + sc->off[k], src + 4 * i, 4);
  }
}

static hp_status scan_dispatches(hp_store *s, run *r) {
  const ha_query *q = r->q;
  int filters = q->size >= HA_QUERY_V1;
  hp_cursor *c;
  hp_status st = hp_cursor_open(s, HP_TABLE_DISPATCH, &c);
  if (st != HP_OK) return st;
  hai_scan_filter(r, c);
  scan_cols sc;
  if (scan_cols_init(&sc, r, filters)) {
    scan_cols_free(&sc);
    hp_cursor_close(c);
    return HP_ERR_NOMEM;
  }
  hp_dispatch d = {.size = sizeof d};
  size_t nb = 0, bi = 0;
  /* by kernel: groups found through a direct (agent, kernel) table instead of hashing every row */
  size_t dna = r->t.nagents + 1, dnk = r->t.nkernels + 1;
  long *gdirect = NULL;
  if (r->group == HA_BY_KERNEL && dna * dnk <= (1u << 20) && (gdirect = malloc(dna * dnk * sizeof *gdirect)))
    for (size_t i = 0; i < dna * dnk; i++)
      gdirect[i] = -1;
  int fast = gdirect && !r->keep_records && !r->nmux; /* sums per group only */
  uint64_t last_agent_id = UINT64_MAX, last_kernel_id = UINT64_MAX;
  long last_a = -1, last_k = -1;
  /* kernel rows of ids below SCAN_DIRECT_IDS by an array (the merged stores number kernels from 1): -1 not
   * looked up yet */
  long kdirect[SCAN_DIRECT_IDS];
  for (size_t i = 0; i < SCAN_DIRECT_IDS; i++)
    kdirect[i] = -1;
  for (;;) {
    if (bi == nb) {
      st = hp_cursor_next_batch(c, sc.cols, SCAN_BATCH, &nb);
      bi = 0;
      if (st != HP_OK) break;
      if (!nb) {
        st = HP_END;
        break;
      }
      if (r->prog) r->prog(q->progress_ctx, r->rows_read += nb);
    }
    /* the columns every query reads first, straight from the batch; the row as a whole (scan_row) only when
     * more than its group's sums is needed */
    size_t i = bi++;
    const uint64_t agent_id = sc.agent[i], kernel_id = sc.kernel[i];
    const int64_t start_ns = sc.start[i], end_ns = sc.end[i];
    long a = agent_id == last_agent_id ? last_a : ix_get(&r->t.agent_ix, agent_id);
    long k = kernel_id == last_kernel_id                              ? last_k
             : kernel_id < SCAN_DIRECT_IDS && kdirect[kernel_id] >= 0 ? kdirect[kernel_id]
                                                                      : ix_get(&r->t.kernel_ix, kernel_id);
    if (a >= 0) last_agent_id = agent_id, last_a = a;
    if (k >= 0) last_kernel_id = kernel_id, last_k = k;
    /* rows naming an agent or kernel the store lacks still count, under "?" ("(none)" for id 0) */
    if (a < 0 && (a = hai_placeholder_agent(r, agent_id)) < 0) {
      st = HP_ERR_NOMEM;
      break;
    }
    if (k < 0 && (k = hai_placeholder_kernel(r, kernel_id)) < 0) {
      st = HP_ERR_NOMEM;
      break;
    }
    if (kernel_id < SCAN_DIRECT_IDS)
      kdirect[kernel_id] = k; /* what the map (or placeholder) gives it again */
    if (!r->t.agents[a].keep || !r->t.kernels[k].keep) continue;
    if (filters && (q->dispatch_first || q->dispatch_last)) {
      scan_row(&sc, i, &d);
      if ((q->dispatch_first && d.dispatch_id < q->dispatch_first) ||
          (q->dispatch_last && d.dispatch_id > q->dispatch_last))
        continue;
    }
    r->nincomplete += !start_ns && !end_ns && !sc.passes[i];
    /* the dispatch is kept as a record only when rows or counters need it; groups are summed here */
    drec one, *x = &one;
    if (r->keep_records) {
      if (hu_grow((void **)&r->d, &r->capd, r->nd + 1, sizeof *r->d)) {
        st = HP_ERR_NOMEM;
        break;
      }
      x = &r->d[r->nd];
    }
    if (hai_devtot_fit(r, (size_t)a)) {
      st = HP_ERR_NOMEM;
      break;
    }
    if (start_ns && end_ns >= start_ns) r->devtot[a] = sat_add(r->devtot[a], dur_ns(start_ns, end_ns));
    if (fast && (size_t)a < dna && (size_t)k < dnk && gdirect[(size_t)a * dnk + (size_t)k] >= 0) {
      /* by kernel, nothing kept per dispatch, group known: only its sums change */
      grec *g = &r->g[gdirect[(size_t)a * dnk + (size_t)k]];
      grec_add(g, start_ns, end_ns);
      g->cold += sc.cold[i] != 0;
      r->nseen++;
      continue;
    }
    scan_row(&sc, i, &d);
    long pi = ix_get(&r->t.pid_of, d.process_id);
    *x = (drec){.id = d.id,
                .dispatch_id = d.dispatch_id,
                .start = d.start_ns,
                .end = d.end_ns,
                .agent = (uint32_t)a,
                .kernel = (uint32_t)k,
                .passes = d.passes,
                .pid = pi >= 0 ? r->t.pids[pi] : 0};
    memcpy(x->grid, d.grid, sizeof x->grid);
    memcpy(x->wg, d.workgroup, sizeof x->wg);
    if (r->nmux && r->t.kernels[k].mux) x->mux_incomplete = (uint8_t)in_incomplete_key(r, x, d.process_id);
    if (r->regions) {
      if (hu_grow((void **)&r->rl, &r->caprl, r->nd + 1, sizeof *r->rl)) {
        st = HP_ERR_NOMEM;
        break;
      }
      r->rl[r->nd] = (rloc){d.process_id, d.thread_id, d.region_id, d.enqueue_ns};
    } else if (r->group != HA_BY_DISPATCH) {
      long *slot =
          gdirect && (size_t)a < dna && (size_t)k < dnk ? &gdirect[(size_t)a * dnk + (size_t)k] : NULL;
      long g = slot && *slot >= 0 ? *slot : hai_group_of(r, x, r->nseen);
      if (slot && g >= 0) *slot = g;
      if (g < 0) {
        st = HP_ERR_NOMEM;
        break;
      }
      x->group = (uint32_t)g;
      grec_add(&r->g[g], x->start, x->end);
      r->g[g].cold += d.cold != 0;
    }
    r->nseen++;
    if (r->keep_records) r->nd++;
  }
  free(gdirect);
  scan_cols_free(&sc);
  hp_cursor_close(c);
  return st == HP_END ? HP_OK : st;
}

/* Counter values into per-dispatch slots: passes of one dispatch are never summed; several passes (or
 * duplicate rows) of one counter on one dispatch are averaged and counted for a note. */
static hp_status scan_values(hp_store *s, run *r) {
  size_t nc = r->t.ncounters;
  if (!nc || (!r->nd && !r->regions)) return HP_OK; /* regions: host parts without any dispatch too */
  if (!(r->slots = calloc(r->nd * nc + 1, sizeof *r->slots))) return HP_ERR_NOMEM;
  if (r->regions && !(r->host_has = calloc(nc, 1))) return HP_ERR_NOMEM;
  /* dispatch row id -> index: a direct table when ids are dense, else a hash */
  uint64_t maxid = 0;
  for (size_t i = 0; i < r->nd; i++)
    if (r->d[i].id > maxid) maxid = r->d[i].id;
  uint32_t *direct = NULL;
  hu_idmap ix = {0};
  if (maxid <= 4 * (uint64_t)r->nd + 1024) {
    if (!(direct = malloc((maxid + 1) * sizeof *direct))) return HP_ERR_NOMEM;
    memset(direct, 0xff, (maxid + 1) * sizeof *direct);
    for (size_t i = 0; i < r->nd; i++)
      direct[r->d[i].id] = (uint32_t)i;
  } else {
    for (size_t i = 0; i < r->nd; i++)
      if (hu_idmap_put(&ix, r->d[i].id, (uint32_t)i)) {
        hu_idmap_free(&ix);
        return HP_ERR_NOMEM;
      }
  }
  hp_cursor *c;
  hp_status st = hp_cursor_open(s, HP_TABLE_COUNTER_VALUE, &c);
  if (st == HP_OK) {
    hp_counter_value v = {.size = sizeof v};
    long lastc = -1;
    uint64_t last_cid = 0;
    while ((st = hp_cursor_next(c, &v)) == HP_OK) {
      if (r->prog && (++r->rows_read & 4095) == 0) r->prog(r->q->progress_ctx, r->rows_read);
      long ci = v.counter_id == last_cid ? lastc : ix_get(&r->t.counter_ix, v.counter_id);
      last_cid = v.counter_id;
      lastc = ci;
      if (ci < 0) continue;
      if (hp_counter_value_is_host_part(&v)) { /* kept for hai_regions */
        if (!r->regions) continue;
        if (r->nhv == r->caphv && hu_grow((void **)&r->hv, &r->caphv, r->nhv + 1, sizeof *r->hv)) {
          st = HP_ERR_NOMEM;
          break;
        }
        r->hv[r->nhv++] = (hostv){v.region_id, (size_t)ci, v.value};
        r->host_has[ci] = 1;
        continue;
      }
      long di;
      if (direct)
        di = v.dispatch_id <= maxid && direct[v.dispatch_id] != UINT32_MAX ? (long)direct[v.dispatch_id] : -1;
      else
        di = ix_get(&ix, v.dispatch_id);
      if (di < 0) continue; /* filtered out, or a value of no dispatch */
      cslot *sl = &r->slots[(size_t)di * nc + (size_t)ci];
      if (sl->n == 0) {
        sl->sum = v.value;
        sl->pass = v.pass;
        sl->n = 1;
      } else {
        if (sl->n < UINT16_MAX) {
          sl->sum += v.value;
          sl->n++;
        }
        sl->multi |= v.pass != sl->pass ? 1 : 2;
      }
      if (v.imputed) sl->imputed = 1;
    }
    hp_cursor_close(c);
    if (st == HP_END) st = HP_OK;
  }
  free(direct);
  hu_idmap_free(&ix);
  if (st != HP_OK) return st;
  if (!(r->with_values = calloc(nc, sizeof *r->with_values)) || !(r->multi = calloc(nc, sizeof *r->multi)) ||
      !(r->dups = calloc(nc, sizeof *r->dups)))
    return HP_ERR_NOMEM;
  for (size_t i = 0; i < r->nd; i++)
    for (size_t j = 0; j < nc; j++) {
      const cslot *sl = &r->slots[i * nc + j];
      r->with_values[j] += sl->n > 0;
      r->multi[j] += (sl->multi & 1) != 0;
      r->dups[j] += sl->multi == 2;
    }
  return HP_OK;
}

hp_status hai_run_scan(hp_store *s, run *r, int full, const char *counters, const char *metrics, rowctx *rc) {
  const ha_query *q = r->q;
  hp_status st = hai_load_tables(s, &r->t);
  const hp_table_desc *dd = hp_table_describe(HP_TABLE_DISPATCH);
  r->col_agent = r->col_kernel = r->col_dispatch = -1;
  for (size_t i = 0; i < dd->ncolumns; i++) {
    if (!strcmp(dd->columns[i].name, "agent_id")) r->col_agent = (int)i;
    if (!strcmp(dd->columns[i].name, "kernel_id")) r->col_kernel = (int)i;
    if (!strcmp(dd->columns[i].name, "dispatch_id")) r->col_dispatch = (int)i;
  }
  if (st == HP_OK && full) hai_keep_filtered(&r->t, q); /* filters on devices and kernels */
  r->want_counters = !(counters && !*counters && metrics && !*metrics);
  r->keep_records = r->regions || r->group == HA_BY_DISPATCH || (r->want_counters && r->t.ncounters > 0);
  if (st == HP_OK && r->want_counters) { /* keys iteration multiplexing left incomplete: no metric */
    const char *mux = hp_store_metadata(s, "multiplex_incomplete");
    if (mux && parse_mux(mux, &r->mux, &r->nmux)) r->mux_unreadable = 1;
    for (size_t i = 0; i < r->t.nkernels; i++)
      for (size_t k = 0; k < r->nmux && !r->t.kernels[i].mux; k++)
        r->t.kernels[i].mux = mux_names(&r->mux[k], &r->t.kernels[i]);
  }
  if (st == HP_OK && !hai_scan_parallel(s, r, &st)) st = scan_dispatches(s, r);
  if (st == HP_OK && r->want_counters) st = scan_values(s, r);
  if (st == HP_OK) st = hai_select_counters(r, counters);
  if (st == HP_OK && !(metrics && !*metrics)) st = hai_select_metrics(r, metrics);
  if (st == HP_OK && hai_rowctx_init(rc, r->nmsel)) st = HP_ERR_NOMEM;
  return st;
}
