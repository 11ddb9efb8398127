/* The dispatch scan shared out to threads (hai_scan_parallel): for groupings whose groups need only sums (by
 * kernel, no counters), each thread reads one part of the dispatch table (hp_cursor_open_part) and sums per
 * (agent id, kernel id); the parts' sums are then merged in store order, so the groups, their order and their
 * figures are the one-thread scan's. */
/* SPDX-License-Identifier: MIT */
#include "ha_run.h"

#include "../common/hu_buf.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAR_BATCH 4096
#define PAR_MAX_THREADS 64
/* automatic thread count: stores smaller than this read on one thread (a thread costs more than it gives) */
#define PAR_MIN_ROWS 65536
#define PAR_MIN_ROCPD_BYTES (8u << 20)

typedef struct pacc { /* the sums of one (agent id, kernel id) in one part */
  uint64_t agent_id, kernel_id;
  uint64_t first; /* the part's row where it first came (kept by the dispatch range) */
  uint64_t calls, timed, cold, incomplete;
  int64_t total, min, max;
} pacc;

typedef struct worker {
  const run *r;
  hp_store *s;   /* the store this part is read from (a rocpd store opened for this thread alone) */
  int own_store; /* s was opened here */
  const char *path, *format;
  unsigned part, nparts;
  uint64_t first, last; /* the query's dispatch id range; 0 = open */
  pacc *acc;            /* in order of first coming */
  size_t nacc, capacc;
  uint32_t *slot; /* hash of acc: index + 1, 0 empty */
  size_t capslot;
  uint64_t rows; /* rows read */
  hp_status st;
} worker;

static uint64_t pair_hash(uint64_t a, uint64_t k) {
  return (a * 0x9E3779B97F4A7C15ULL ^ (k + 0x632BE59BD9B4E019ULL)) * 0xBF58476D1CE4E5B9ULL;
}

/* The sums of (a, k) in w, made on first use (first: the row it came at); NULL when out of memory. */
static pacc *acc_of(worker *w, uint64_t a, uint64_t k, uint64_t first) {
  if (2 * (w->nacc + 1) > w->capslot) {
    size_t nc = w->capslot ? 2 * w->capslot : 64;
    uint32_t *n = calloc(nc, sizeof *n);
    if (!n) return NULL;
    for (size_t i = 0; i < w->nacc; i++) {
      size_t j = pair_hash(w->acc[i].agent_id, w->acc[i].kernel_id) & (nc - 1);
      while (n[j])
        j = (j + 1) & (nc - 1);
      n[j] = (uint32_t)(i + 1);
    }
    free(w->slot);
    w->slot = n;
    w->capslot = nc;
  }
  size_t j = pair_hash(a, k) & (w->capslot - 1);
  while (w->slot[j]) {
    pacc *p = &w->acc[w->slot[j] - 1];
    if (p->agent_id == a && p->kernel_id == k) return p;
    j = (j + 1) & (w->capslot - 1);
  }
  if (w->nacc >= UINT32_MAX - 1 || hu_grow((void **)&w->acc, &w->capacc, w->nacc + 1, sizeof *w->acc))
    return NULL;
  pacc *p = &w->acc[w->nacc];
  *p = (pacc){.agent_id = a, .kernel_id = k, .first = first};
  w->slot[j] = (uint32_t)++w->nacc;
  return p;
}

static int col_index(const hp_table_desc *d, const char *name) {
  for (size_t i = 0; i < d->ncolumns; i++)
    if (!strcmp(d->columns[i].name, name)) return (int)i;
  return -1;
}

static void *work(void *arg) {
  worker *w = arg;
  const hp_table_desc *d = hp_table_describe(HP_TABLE_DISPATCH);
  int ia = col_index(d, "agent_id"), ik = col_index(d, "kernel_id"), is = col_index(d, "start_ns");
  int ie = col_index(d, "end_ns"), ip = col_index(d, "passes"), ic = col_index(d, "cold");
  int idd = col_index(d, "dispatch_id");
  int range = w->first || w->last;
  if (ia < 0 || ik < 0 || is < 0 || ie < 0 || ip < 0 || ic < 0 || idd < 0 || d->ncolumns > 64) {
    w->st = HP_ERR_INVALID;
    return NULL;
  }
  uint64_t *agent = malloc(PAR_BATCH * 8), *kernel = malloc(PAR_BATCH * 8), *did = malloc(PAR_BATCH * 8);
  int64_t *start = malloc(PAR_BATCH * 8), *end = malloc(PAR_BATCH * 8);
  uint32_t *passes = malloc(PAR_BATCH * 4), *cold = malloc(PAR_BATCH * 4);
  void *cols[64] = {0};
  cols[ia] = agent, cols[ik] = kernel, cols[is] = start, cols[ie] = end, cols[ip] = passes, cols[ic] = cold;
  if (range) cols[idd] = did;
  hp_cursor *c = NULL;
  hp_status st = agent && kernel && did && start && end && passes && cold ? HP_OK : HP_ERR_NOMEM;
  if (st == HP_OK && w->own_store) st = hp_store_open(w->path, w->format, HP_READ, &w->s);
  if (st == HP_OK) st = hp_cursor_open_part(w->s, HP_TABLE_DISPATCH, w->part, w->nparts, &c);
  if (st == HP_OK) hai_scan_filter(w->r, c);
  pacc *last = NULL;
  while (st == HP_OK) {
    size_t n = 0;
    st = hp_cursor_next_batch(c, cols, PAR_BATCH, &n);
    if (st != HP_OK) break;
    for (size_t i = 0; i < n; i++) {
      uint64_t row = w->rows + i;
      if (range && ((w->first && did[i] < w->first) || (w->last && did[i] > w->last))) continue;
      pacc *p = last;
      if (!p || p->agent_id != agent[i] || p->kernel_id != kernel[i]) {
        if (!(p = acc_of(w, agent[i], kernel[i], row))) {
          st = HP_ERR_NOMEM;
          break;
        }
        last = p;
      }
      int64_t s = start[i], e = end[i];
      p->calls++;
      p->cold += cold[i] != 0;
      p->incomplete += !s && !e && !passes[i];
      if (s && e >= s) { /* as grec_add */
        int64_t t = dur_ns(s, e);
        if (!p->timed || t < p->min) p->min = t;
        if (!p->timed || t > p->max) p->max = t;
        p->total = sat_add(p->total, t);
        p->timed++;
      }
    }
    w->rows += n;
  }
  hp_cursor_close(c);
  w->st = st == HP_END ? HP_OK : st;
  free(agent), free(kernel), free(did), free(start), free(end), free(passes), free(cold);
  return NULL;
}

unsigned hai_threads(const ha_query *q, int *asked) {
  long n = 0;
  *asked = 1;
  if (q->size >= offsetof(ha_query, threads) + sizeof q->threads && q->threads) n = q->threads;
  const char *e = getenv("HUBPROF_THREADS");
  if (!n && e && *e) {
    char *rest;
    n = strtol(e, &rest, 10);
    if (*rest || n < 1) n = 0; /* not a count: as unset */
  }
  if (!n) {
    *asked = 0;
    n = sysconf(_SC_NPROCESSORS_ONLN);
  }
  return n < 1 ? 1u : n > PAR_MAX_THREADS ? PAR_MAX_THREADS : (unsigned)n;
}

/* Is store s worth reading on n threads? rocpd: its size; Parquet: its rows; other formats cannot split. */
static unsigned useful_threads(hp_store *s, unsigned n, int asked) {
  const char *f = hp_store_format(s);
  int rocpd = !strcmp(f, "rocpd");
  if (!rocpd && strcmp(f, "parquet")) return 1;
  if (asked) return n;
  if (rocpd) {
    struct stat sb;
    return stat(hp_store_path(s), &sb) == 0 && sb.st_size >= PAR_MIN_ROCPD_BYTES ? n : 1;
  }
  uint64_t rows = 0;
  return hp_store_count(s, HP_TABLE_DISPATCH, &rows) == HP_OK && rows >= PAR_MIN_ROWS ? n : 1;
}

/* The parts' sums into r, as the one-thread scan would have summed them row by row. */
static hp_status merge_parts(run *r, worker *w, unsigned n) {
  size_t dna = r->t.nagents + 1, dnk = r->t.nkernels + 1;
  long *gdirect = NULL; /* (agent, kernel) -> group, when small */
  if (dna * dnk <= (1u << 20) && (gdirect = malloc(dna * dnk * sizeof *gdirect)))
    for (size_t i = 0; i < dna * dnk; i++)
      gdirect[i] = -1;
  uint64_t base = 0;    /* rows of the parts before this one */
  hp_status st = HP_OK; /* parts in order, each one's pairs in the order they came: store order */
  for (unsigned i = 0; i < n && st == HP_OK; base += w[i].rows, i++)
    for (size_t j = 0; j < w[i].nacc && st == HP_OK; j++) {
      const pacc *p = &w[i].acc[j];
      long a = ix_get(&r->t.agent_ix, p->agent_id), k = ix_get(&r->t.kernel_ix, p->kernel_id);
      if ((a < 0 && (a = hai_placeholder_agent(r, p->agent_id)) < 0) ||
          (k < 0 && (k = hai_placeholder_kernel(r, p->kernel_id)) < 0)) {
        st = HP_ERR_NOMEM;
        break;
      }
      if (!r->t.agents[a].keep || !r->t.kernels[k].keep) continue;
      if (hai_devtot_fit(r, (size_t)a)) {
        st = HP_ERR_NOMEM;
        break;
      }
      r->devtot[a] = sat_add(r->devtot[a], p->total); /* sums of durations: saturation is associative */
      r->nincomplete += p->incomplete;
      r->nseen += p->calls;
      drec x = {.agent = (uint32_t)a, .kernel = (uint32_t)k};
      long *slot =
          gdirect && (size_t)a < dna && (size_t)k < dnk ? &gdirect[(size_t)a * dnk + (size_t)k] : NULL;
      /* first: a row number in store order, so that groups sort as by their first kept dispatch */
      long g = slot && *slot >= 0 ? *slot : hai_group_of(r, &x, base + p->first);
      if (g < 0) {
        st = HP_ERR_NOMEM;
        break;
      }
      if (slot) *slot = g;
      grec *gr = &r->g[g];
      gr->calls += p->calls;
      gr->cold += p->cold;
      if (p->timed) {
        if (!gr->timed || p->min < gr->min) gr->min = p->min;
        if (!gr->timed || p->max > gr->max) gr->max = p->max;
        gr->total = sat_add(gr->total, p->total);
        gr->timed += p->timed;
      }
    }
  free(gdirect);
  return st;
}

int hai_scan_parallel(hp_store *s, run *r, hp_status *out) {
  const ha_query *q = r->q;
  if (r->group != HA_BY_KERNEL || r->keep_records || r->nmux || r->regions) return 0;
  int asked;
  unsigned n = hai_threads(q, &asked);
  if (n > 1) n = useful_threads(s, n, asked);
  if (n <= 1) return 0;
  worker *w = calloc(n, sizeof *w);
  pthread_t *th = calloc(n, sizeof *th);
  uint8_t *started = calloc(n, 1);
  if (!w || !th || !started) {
    free(w), free(th), free(started);
    return 0; /* the one-thread scan then */
  }
  int rocpd = !strcmp(hp_store_format(s), "rocpd");
  int filters = q->size >= HA_QUERY_V1;
  for (unsigned i = 0; i < n; i++) {
    w[i] = (worker){.r = r,
                    .own_store = rocpd && i > 0, /* a connection per thread (part 0: the store's own) */
                    .s = rocpd && i > 0 ? NULL : s,
                    .path = hp_store_path(s),
                    .format = hp_store_format(s),
                    .part = i,
                    .nparts = n,
                    .first = filters ? q->dispatch_first : 0,
                    .last = filters ? q->dispatch_last : 0};
  }
  hp_status st = HP_OK;
  for (unsigned i = 1; i < n; i++)
    started[i] = pthread_create(&th[i], NULL, work, &w[i]) == 0;
  work(&w[0]);
  for (unsigned i = 1; i < n; i++) {
    if (started[i])
      pthread_join(th[i], NULL);
    else
      w[i].st = HP_ERR_NOMEM;
  }
  for (unsigned i = 0; i < n && st == HP_OK; i++)
    st = w[i].st;
  uint64_t rows = 0;
  for (unsigned i = 0; i < n; i++)
    rows += w[i].rows;
  /* a part that failed: the one-thread scan reads it again, so that its error is the store's own */
  int done = st == HP_OK;
  if (done) st = merge_parts(r, w, n);
  if (done && r->prog) r->prog(q->progress_ctx, r->rows_read += rows);
  for (unsigned i = 0; i < n; i++) {
    if (w[i].own_store) hp_store_close(w[i].s);
    free(w[i].acc);
    free(w[i].slot);
  }
  free(w), free(th), free(started);
  if (done) *out = st;
  return done;
}
