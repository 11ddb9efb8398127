/* Rows of a large rocpd input read ahead on several threads for a merge (merge.c): the dispatch table cut
 * into ranges of ids (hp_cursor_open_part), range j read by thread j mod K on its own read-only connection
 * into one of its two buffers, the merge taking the ranges back in order; so SQLite's stepping, the merge's
 * bottleneck on rocpd inputs, runs on every core while the rows still come in store order and memory stays
 * bounded. */
/* SPDX-License-Identifier: MIT */
#include "merge_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MR_RANGE_ROWS 16384        /* ids per range */
#define MR_MIN_BYTES (16ull << 20) /* smaller inputs are read by the merge's own cursor */
#define MR_MAX_THREADS 8

typedef struct mrbuf {
  hp_dispatch *rows;
  size_t n;
  long range; /* the range it holds, -1 none */
  int ready;  /* filled: the merge may take it */
} mrbuf;

typedef struct mrworker {
  struct mread *r;
  unsigned k;   /* its ranges: k, k + K, k + 2K ... */
  mrbuf buf[2]; /* range j goes to buf[(j / K) & 1] */
  pthread_t thr;
  int started;
} mrworker;

struct mread {
  const char *path;
  const char *format; /* the input's format name: each worker opens the file again with it */
  unsigned nthreads;
  unsigned long nranges;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int quit;
  hp_status err; /* the first failure of a thread; its message in msg */
  char msg[HP_ERRMSG_MAX];
  mrworker *w;
  unsigned long next; /* the range the merge takes next */
  size_t at;          /* its next row */
};

/* HUBPROF_THREADS (*asked 1), else the online CPUs */
static unsigned mr_threads(int *asked) {
  const char *e = getenv("HUBPROF_THREADS");
  long n = e && *e ? strtol(e, NULL, 10) : 0;
  *asked = n >= 1;
  if (n < 1) n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1u : n > MR_MAX_THREADS ? MR_MAX_THREADS : (unsigned)n;
}

static void *mr_work(void *arg) {
  mrworker *w = arg;
  struct mread *r = w->r;
  hp_store *s = NULL;
  hp_status st = hp_store_open(r->path, r->format, HP_READ, &s);
  for (unsigned long j = w->k; st == HP_OK && j < r->nranges; j += r->nthreads) {
    mrbuf *b = &w->buf[(j / r->nthreads) & 1];
    pthread_mutex_lock(&r->mu);
    while (b->ready && !r->quit) /* the merge has not taken its last range yet */
      pthread_cond_wait(&r->cv, &r->mu);
    int quit = r->quit;
    pthread_mutex_unlock(&r->mu);
    if (quit) break;
    hp_cursor *c = NULL;
    b->n = 0;
    st = hp_cursor_open_part(s, HP_TABLE_DISPATCH, (unsigned)j, (unsigned)r->nranges, &c);
    while (st == HP_OK) {
      if (b->n == MR_RANGE_ROWS + 1) { /* more rows than ids: not ranges of unique ids */
        st = hp_set_error(s, HP_ERR_CORRUPT, "dispatch rows: more rows than ids in a range");
        break;
      }
      hp_dispatch *d = &b->rows[b->n];
      d->size = sizeof *d;
      st = hp_cursor_next(c, d);
      if (st == HP_OK) b->n++;
    }
    hp_cursor_close(c);
    if (st == HP_END) st = HP_OK;
    pthread_mutex_lock(&r->mu);
    if (st == HP_OK) {
      b->range = (long)j;
      b->ready = 1;
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
  }
  if (st != HP_OK) {
    pthread_mutex_lock(&r->mu);
    if (r->err == HP_OK) {
      r->err = st;
      snprintf(r->msg, sizeof r->msg, "%s", s ? hp_store_error(s) : "out of memory");
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
  }
  hp_store_close(s);
  return NULL;
}

void mread_close(mread *r) {
  if (!r) return;
  pthread_mutex_lock(&r->mu);
  r->quit = 1;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  for (unsigned i = 0; i < r->nthreads; i++) {
    if (r->w[i].started) pthread_join(r->w[i].thr, NULL);
    free(r->w[i].buf[0].rows);
    free(r->w[i].buf[1].rows);
  }
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv);
  free(r->w);
  free(r);
}

hp_status mread_open(hp_store *in, hp_table t, mread **out) {
  *out = NULL;
  struct stat sb;
  int asked;
  unsigned n = mr_threads(&asked);
  int64_t lo, hi;
  if (t != HP_TABLE_DISPATCH || n < 2 || stat(hp_store_path(in), &sb) != 0 ||
      (!asked && (uint64_t)sb.st_size < MR_MIN_BYTES) || hp_store_row_span(in, t, &lo, &hi) != HP_OK ||
      hi - lo < 4 * MR_RANGE_ROWS)
    return HP_ERR_UNSUPPORTED;
  mread *r = calloc(1, sizeof *r);
  if (!r) return HP_ERR_NOMEM;
  r->path = hp_store_path(in);
  r->format = hp_store_format(in);
  r->nthreads = n;
  /* ranges of at most MR_RANGE_ROWS ids (hp_cursor_open_part cuts [lo, hi] in equal ranges) */
  r->nranges = (unsigned long)(((uint64_t)(hi - lo) + MR_RANGE_ROWS) / MR_RANGE_ROWS);
  if (r->nranges > UINT32_MAX) r->nranges = UINT32_MAX;
  r->w = calloc(n, sizeof *r->w);
  if (!r->w || pthread_mutex_init(&r->mu, NULL) || pthread_cond_init(&r->cv, NULL)) {
    free(r->w);
    free(r);
    return HP_ERR_NOMEM;
  }
  for (unsigned i = 0; i < n; i++) {
    mrworker *w = &r->w[i];
    w->r = r;
    w->k = i;
    for (int b = 0; b < 2; b++) {
      w->buf[b].range = -1;
      if (!(w->buf[b].rows = malloc((MR_RANGE_ROWS + 1) * sizeof *w->buf[b].rows))) {
        r->nthreads = i + 1;
        mread_close(r);
        return HP_ERR_NOMEM;
      }
    }
  }
  for (unsigned i = 0; i < n; i++)
    r->w[i].started = pthread_create(&r->w[i].thr, NULL, mr_work, &r->w[i]) == 0;
  for (unsigned i = 0; i < n; i++)
    if (!r->w[i].started) {
      mread_close(r);
      return HP_ERR_NOMEM;
    }
  *out = r;
  return HP_OK;
}

hp_status mread_next(mread *r, hp_store *in, void *row) {
  for (;;) {
    if (r->next >= r->nranges) return HP_END;
    mrworker *w = &r->w[r->next % r->nthreads];
    mrbuf *b = &w->buf[(r->next / r->nthreads) & 1];
    if (r->at == 0) { /* wait for the range */
      pthread_mutex_lock(&r->mu);
      while (!(b->ready && b->range == (long)r->next) && r->err == HP_OK)
        pthread_cond_wait(&r->cv, &r->mu);
      hp_status e = b->ready && b->range == (long)r->next ? HP_OK : r->err;
      pthread_mutex_unlock(&r->mu);
      if (e != HP_OK) { /* the thread's message, as the input's own */
        hp_store_fail(in, e, r->msg);
        return e;
      }
    }
    if (r->at < b->n) {
      memcpy(row, &b->rows[r->at++], sizeof b->rows[0]);
      return HP_OK;
    }
    pthread_mutex_lock(&r->mu); /* the range is taken: its buffer is free again */
    b->ready = 0;
    b->range = -1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    r->next++;
    r->at = 0;
  }
}
