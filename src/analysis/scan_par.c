/* The dispatch scan shared out to threads (hai_scan_parallel, hai_scan_sums): for groupings whose groups need
 * only sums (by kernel, no counters; the rank views), each thread reads one part of the dispatch table
 * (hp_cursor_open_part), only the columns the sums need, and sums per (agent id, kernel id), or per (process
 * id, agent id, kernel id); the parts' sums are then merged in store order, so the groups, their order and
 * their figures are the one-thread scan's. */
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

typedef struct pacc { /* the sums of one (process id, agent id, kernel id) in one part */
  uint64_t process_id, agent_id, kernel_id; /* process_id 0 unless summed by process */
  uint64_t first; /* the part's row where it first came (kept by the dispatch range) */
  grec g;         /* calls, timed, total, min, max, cold (its agent, kernel and first unused) */
  uint64_t incomplete;
} pacc;

typedef struct worker {
  void (*filter)(const void *, hp_cursor *); /* row groups to pass over (NULL: none) */
  const void *fctx;
  int by_process; /* sums per process too */
  hp_store *s;    /* the store this part is read from (a rocpd store opened for this thread alone) */
  int own_store;  /* s was opened here */
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

static uint64_t key_hash(uint64_t p, uint64_t a, uint64_t k) {
  return ((a * 0x9E3779B97F4A7C15ULL ^ (k + 0x632BE59BD9B4E019ULL)) + p * 0xD6E8FEB86659FD93ULL) *
         0xBF58476D1CE4E5B9ULL;
}

/* The sums of (p, a, k) in w, made on first use (first: the row it came at); NULL when out of memory. */
static pacc *acc_of(worker *w, uint64_t p, uint64_t a, uint64_t k, uint64_t first) {
  if (2 * (w->nacc + 1) > w->capslot) {
    size_t nc = w->capslot ? 2 * w->capslot : 64;
    uint32_t *n = calloc(nc, sizeof *n);
    if (!n) return NULL;
    for (size_t i = 0; i < w->nacc; i++) {
      size_t j = key_hash(w->acc[i].process_id, w->acc[i].agent_id, w->acc[i].kernel_id) & (nc - 1);
      while (n[j])
        j = (j + 1) & (nc - 1);
      n[j] = (uint32_t)(i + 1);
    }
    free(w->slot);
    w->slot = n;
    w->capslot = nc;
  }
  size_t j = key_hash(p, a, k) & (w->capslot - 1);
  while (w->slot[j]) {
    pacc *x = &w->acc[w->slot[j] - 1];
    if (x->agent_id == a && x->kernel_id == k && x->process_id == p) return x;
    j = (j + 1) & (w->capslot - 1);
  }
  if (w->nacc >= UINT32_MAX - 1 || hu_grow((void **)&w->acc, &w->capacc, w->nacc + 1, sizeof *w->acc))
    return NULL;
  pacc *x = &w->acc[w->nacc];
  *x = (pacc){.process_id = p, .agent_id = a, .kernel_id = k, .first = first};
  w->slot[j] = (uint32_t)++w->nacc;
  return x;
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
  int idd = col_index(d, "dispatch_id"), ipr = col_index(d, "process_id");
  int range = w->first || w->last;
  if (ia < 0 || ik < 0 || is < 0 || ie < 0 || ip < 0 || ic < 0 || idd < 0 || ipr < 0 || d->ncolumns > 64) {
    w->st = HP_ERR_INVALID;
    return NULL;
  }
  uint64_t *agent = malloc(PAR_BATCH * 8), *kernel = malloc(PAR_BATCH * 8), *did = malloc(PAR_BATCH * 8);
  uint64_t *proc = calloc(PAR_BATCH, 8); /* stays 0 unless summed by process */
  int64_t *start = malloc(PAR_BATCH * 8), *end = malloc(PAR_BATCH * 8);
  uint32_t *passes = malloc(PAR_BATCH * 4), *cold = malloc(PAR_BATCH * 4);
  void *cols[64] = {0};
  cols[ia] = agent, cols[ik] = kernel, cols[is] = start, cols[ie] = end, cols[ip] = passes, cols[ic] = cold;
  if (range) cols[idd] = did;
  if (w->by_process) cols[ipr] = proc;
  hp_cursor *c = NULL;
  hp_status st = agent && kernel && did && proc && start && end && passes && cold ? HP_OK : HP_ERR_NOMEM;
  if (st == HP_OK && w->own_store) st = hp_store_open(w->path, w->format, HP_READ, &w->s);
  if (st == HP_OK) st = hp_cursor_open_part(w->s, HP_TABLE_DISPATCH, w->part, w->nparts, &c);
  if (st == HP_OK && w->filter) w->filter(w->fctx, c);
  pacc *last = NULL;
  while (st == HP_OK) {
    size_t n = 0;
    st = hp_cursor_next_batch(c, cols, PAR_BATCH, &n);
    if (st != HP_OK) break;
    for (size_t i = 0; i < n; i++) {
      uint64_t row = w->rows + i;
      if (range && ((w->first && did[i] < w->first) || (w->last && did[i] > w->last))) continue;
      pacc *p = last;
      if (!p || p->agent_id != agent[i] || p->kernel_id != kernel[i] || p->process_id != proc[i]) {
        if (!(p = acc_of(w, proc[i], agent[i], kernel[i], row))) {
          st = HP_ERR_NOMEM;
          break;
        }
        last = p;
      }
      int64_t s = start[i], e = end[i];
      grec_add(&p->g, s, e);
      p->g.cold += cold[i] != 0;
      p->incomplete += !s && !e && !passes[i];
    }
    w->rows += n;
  }
  hp_cursor_close(c);
  w->st = st == HP_END ? HP_OK : st;
  free(agent), free(kernel), free(did), free(proc), free(start), free(end), free(passes), free(cold);
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
      r->devtot[a] = sat_add(r->devtot[a], p->g.total); /* sums of durations: saturation is associative */
      r->nincomplete += p->incomplete;
      r->nseen += p->g.calls;
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
      grec_merge(&r->g[g], &p->g);
    }
  free(gdirect);
  return st;
}

/* How many parts to read the dispatch table of s in: 0 or 1 when not worth it (or not possible). */
static unsigned parts_of(hp_store *s, const ha_query *q) {
  int asked;
  unsigned n = hai_threads(q, &asked);
  return n > 1 ? useful_threads(s, n, asked) : n;
}

/* The dispatch table of s read in n parts, part i by w[i] (part 0 on this thread, the others on threads of
 * their own), over the query's dispatch range; filter (NULL: none) tells each part's cursor which row groups
 * to pass over. 1 when every part was read; 0 when one failed (the one-thread scan then reads the store
 * again, so that its error is the store's own). *rows: the rows read. Free w with free_parts, whatever the
 * outcome. */
static int read_parts(hp_store *s, const ha_query *q, worker *w, unsigned n, int by_process,
                      void (*filter)(const void *, hp_cursor *), const void *fctx, uint64_t *rows) {
  pthread_t *th = calloc(n, sizeof *th);
  uint8_t *started = calloc(n, 1);
  if (!th || !started) {
    free(th), free(started);
    return 0;
  }
  int rocpd = !strcmp(hp_store_format(s), "rocpd");
  int filters = q->size >= HA_QUERY_V1;
  for (unsigned i = 0; i < n; i++) {
    w[i] = (worker){.filter = filter,
                    .fctx = fctx,
                    .by_process = by_process,
                    .own_store = rocpd && i > 0, /* a connection per thread (part 0: the store's own) */
                    .s = rocpd && i > 0 ? NULL : s,
                    .path = hp_store_path(s),
                    .format = hp_store_format(s),
                    .part = i,
                    .nparts = n,
                    .first = filters ? q->dispatch_first : 0,
                    .last = filters ? q->dispatch_last : 0};
  }
  for (unsigned i = 1; i < n; i++)
    started[i] = pthread_create(&th[i], NULL, work, &w[i]) == 0;
  work(&w[0]);
  for (unsigned i = 1; i < n; i++) {
    if (started[i])
      pthread_join(th[i], NULL);
    else
      w[i].st = HP_ERR_NOMEM;
  }
  int done = 1;
  *rows = 0;
  for (unsigned i = 0; i < n; i++) {
    done = done && w[i].st == HP_OK;
    *rows += w[i].rows;
  }
  free(th), free(started);
  return done;
}

static void free_parts(worker *w, unsigned n) {
  for (unsigned i = 0; w && i < n; i++) {
    if (w[i].own_store) hp_store_close(w[i].s);
    free(w[i].acc);
    free(w[i].slot);
  }
  free(w);
}

static void run_filter(const void *r, hp_cursor *c) { hai_scan_filter(r, c); }

int hai_scan_parallel(hp_store *s, run *r, hp_status *out) {
  const ha_query *q = r->q;
  if (r->group != HA_BY_KERNEL || r->keep_records || r->nmux || r->regions) return 0;
  unsigned n = parts_of(s, q);
  worker *w = n > 1 ? calloc(n, sizeof *w) : NULL;
  uint64_t rows = 0;
  int done = w && read_parts(s, q, w, n, 0, run_filter, r, &rows);
  if (done) {
    *out = merge_parts(r, w, n);
    if (r->prog) r->prog(q->progress_ctx, r->rows_read += rows);
  }
  free_parts(w, n);
  return done;
}

int hai_scan_sums(hp_store *s, const ha_query *q, hai_sum_fn add, void *ctx, uint64_t *rows, hp_status *out) {
  unsigned n = parts_of(s, q);
  if (n < 1) n = 1; /* one part, on this thread: still only the columns the sums need */
  worker *w = calloc(n, sizeof *w);
  int done = w && read_parts(s, q, w, n, 1, NULL, NULL, rows);
  if (done) {
    hp_status st = HP_OK;
    for (unsigned i = 0; i < n && st == HP_OK; i++)
      for (size_t j = 0; j < w[i].nacc && st == HP_OK; j++)
        st = add(ctx, w[i].acc[j].process_id, w[i].acc[j].agent_id, w[i].acc[j].kernel_id, &w[i].acc[j].g);
    *out = st;
  }
  free_parts(w, n);
  return done;
}
