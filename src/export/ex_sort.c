/* The export's counter samples in dispatch order (issue 28): a sampler writes them in time order, not after
 * their dispatch, so they are read once, sorted by dispatch id (stably) in runs, and handed back merged. */
/* SPDX-License-Identifier: MIT */
#include "ex_internal.h"

#include "../common/hu_io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_ROWS 32768 /* rows sorted in memory at a time: a longer table goes to a temporary file */
#define READ_ROWS 32   /* rows read back at a time from each run in the file */
#define KEY 16         /* a record: the dispatch id, the row's place in the store, then the row */

typedef struct srun {
  uint64_t off, left; /* next record in the file (bytes), records still there */
  unsigned char *buf; /* records read back */
  size_t n, i;
} srun;

struct ex_sorted {
  size_t row_size, id_off, rec; /* rec: bytes of a record (KEY + the row, rounded up to 8) */
  hp_status end;                /* how the store's read ended: HP_END, or its failure (damage) */
  unsigned char *mem;           /* the run being filled; without a file, the only one */
  size_t n, i, memcap;
  int fd; /* the runs written out (unlinked), -1 while none */
  uint64_t fsize;
  srun *runs;
  size_t nruns, cap;
  size_t *heap; /* runs with records left, by their next record */
  size_t nheap;
  int err;         /* errno of a failed read back, 0 */
  const char *dir; /* the temporary file's folder: $TMPDIR, or /tmp */
};

static int rec_cmp(const void *a, const void *b) {
  uint64_t x[2], y[2];
  memcpy(x, a, sizeof x);
  memcpy(y, b, sizeof y);
  return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The run being filled, sorted, to the end of the temporary file (made at the first run). */
static int spill(ex_sorted *x) {
  qsort(x->mem, x->n, x->rec, rec_cmp);
  if (x->fd < 0) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/hubprof-export-XXXXXX", x->dir) >= (int)sizeof path) {
      errno = ENAMETOOLONG;
      return -1;
    }
    if ((x->fd = mkstemp(path)) < 0) return -1;
    unlink(path); /* gone with the descriptor, whatever ends the export */
  }
  if (hu_grow((void **)&x->runs, &x->cap, x->nruns + 1, sizeof *x->runs)) return errno = ENOMEM, -1;
  if (hu_pwrite_all(x->fd, x->mem, x->n * x->rec, x->fsize)) return -1;
  x->runs[x->nruns++] = (srun){x->fsize, x->n, NULL, 0, 0};
  x->fsize += x->n * x->rec;
  x->n = 0;
  return 0;
}

/* The next records of run u into its buffer: 0, or -1 (x->err set). */
static int refill(ex_sorted *x, srun *u) {
  size_t n = u->left < READ_ROWS ? (size_t)u->left : READ_ROWS;
  if (n && hu_pread_all(x->fd, u->buf, n * x->rec, u->off)) {
    x->err = errno ? errno : EIO;
    return -1;
  }
  u->off += n * x->rec, u->left -= n;
  u->n = n, u->i = 0;
  return 0;
}

static const unsigned char *run_head(const ex_sorted *x, size_t r) {
  const srun *u = &x->runs[r];
  return u->buf + u->i * x->rec;
}

/* heap[at] moved down to its place (the runs' next records, smallest first). */
static void sift_down(ex_sorted *x, size_t at) {
  for (;;) {
    size_t l = 2 * at + 1, m = at;
    if (l < x->nheap && rec_cmp(run_head(x, x->heap[l]), run_head(x, x->heap[m])) < 0) m = l;
    if (l + 1 < x->nheap && rec_cmp(run_head(x, x->heap[l + 1]), run_head(x, x->heap[m])) < 0) m = l + 1;
    if (m == at) return;
    size_t t = x->heap[at];
    x->heap[at] = x->heap[m], x->heap[m] = t;
    at = m;
  }
}

/* After the last run is written: a buffer per run, the first records read back, the heap built. */
static int merge_start(ex_sorted *x) {
  free(x->mem);
  x->mem = NULL;
  if (!(x->heap = malloc(x->nruns * sizeof *x->heap))) return errno = ENOMEM, -1;
  for (size_t r = 0; r < x->nruns; r++) {
    srun *u = &x->runs[r];
    if (!(u->buf = malloc(READ_ROWS * x->rec))) return errno = ENOMEM, -1;
    if (refill(x, u)) return errno = x->err, -1;
    x->heap[x->nheap++] = r;
  }
  for (size_t i = x->nheap / 2; i-- > 0;)
    sift_down(x, i);
  return 0;
}

/* What failed into err (n bytes): -1. */
static int failed(char *err, size_t n, const ex_sorted *x, int e) {
  if (x && e != ENOMEM)
    snprintf(err, n, "cannot sort the counter samples in a temporary file in %s: %s", x->dir, strerror(e));
  else
    snprintf(err, n, "out of memory");
  return -1;
}

int ex_sorted_open(hp_store *s, hp_table t, size_t row_size, size_t id_off, ex_sorted **out, char *err,
                   size_t errlen) {
  *out = NULL;
  ex_sorted *x = calloc(1, sizeof *x);
  if (!x) return failed(err, errlen, NULL, ENOMEM);
  x->row_size = row_size, x->id_off = id_off, x->fd = -1;
  x->rec = (KEY + row_size + 7) & ~(size_t)7;
  x->dir = getenv("TMPDIR");
  if (!x->dir || !*x->dir) x->dir = "/tmp";
  *out = x;
  hp_cursor *c = NULL;
  hp_status st = hp_cursor_open(s, t, &c);
  for (uint64_t seq = 0; st == HP_OK; seq++) {
    if (hu_grow((void **)&x->mem, &x->memcap, x->n + 1, x->rec)) { /* up to RUN_ROWS, a power of 2 */
      hp_cursor_close(c);
      return failed(err, errlen, x, ENOMEM);
    }
    unsigned char *r = x->mem + x->n * x->rec;
    memset(r, 0, x->rec);
    memcpy(r + KEY, &(uint32_t){(uint32_t)row_size}, sizeof(uint32_t)); /* every row starts with its size */
    if ((st = hp_cursor_next(c, r + KEY)) != HP_OK) break;
    memcpy(r, r + KEY + id_off, sizeof(uint64_t));
    memcpy(r + sizeof(uint64_t), &seq, sizeof seq);
    if (++x->n == RUN_ROWS && spill(x)) {
      int e = errno;
      hp_cursor_close(c);
      return failed(err, errlen, x, e);
    }
  }
  hp_cursor_close(c);
  x->end = st; /* HP_END, or the failure the walk reports as damage once the rows before it are out */
  if (x->fd < 0) {
    qsort(x->mem, x->n, x->rec, rec_cmp);
    return 0;
  }
  if ((x->n && spill(x)) || merge_start(x)) return failed(err, errlen, x, errno);
  return 0;
}

hp_status ex_sorted_next(ex_sorted *x, void *row) {
  if (x->fd < 0) {
    if (x->i == x->n) return x->end;
    memcpy(row, x->mem + x->i++ * x->rec + KEY, x->row_size);
    return HP_OK;
  }
  if (x->err || !x->nheap) return x->err ? HP_ERR_IO : x->end;
  size_t r = x->heap[0];
  srun *u = &x->runs[r];
  memcpy(row, run_head(x, r) + KEY, x->row_size);
  if (++u->i == u->n) {
    if (refill(x, u)) return HP_OK; /* this row is good; the next call says what failed */
    if (!u->n) x->heap[0] = x->heap[--x->nheap];
  }
  sift_down(x, 0);
  return HP_OK;
}

int ex_sorted_error(const ex_sorted *x) { return x ? x->err : 0; }

void ex_sorted_close(ex_sorted *x) {
  if (!x) return;
  for (size_t r = 0; r < x->nruns; r++)
    free(x->runs[r].buf);
  free(x->runs);
  free(x->heap);
  free(x->mem);
  if (x->fd >= 0) close(x->fd);
  free(x);
}
