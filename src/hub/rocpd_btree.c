/* rocpd format, page reader: a table b-tree of an SQLite file walked in rowid order straight from its pages
 * (pread, no SQLite), its records decoded to values; the reader's fast path for hubprof's own dispatch rows
 * (rocpd_read.c decides when it applies and falls back to SQLite on anything this does not take). */
/* SPDX-License-Identifier: MIT */
#include "rocpd_internal.h"

#include "../common/hu_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file format (https://sqlite.org/fileformat2.html): pages of psz bytes, numbered from 1; a table
 * b-tree's interior pages (type 5) hold (left child, rowid key) cells and a right-most child, every rowid
 * under a left child <= its key; its leaves (type 13) hold (payload size, rowid, payload) cells in rowid
 * order, a payload too big for the page continuing on a chain of overflow pages. A payload is a record: a
 * header of serial types, then the values. Everything read is checked against the page and file bounds, and
 * the walk against the file's page count (a damaged tree that loops ends the walk): any surprise returns -1,
 * and the caller reads the rest through SQLite, which explains the damage in its own words. */

#define BTR_WIN 16 /* pages per read: a tree's leaves lie mostly in page order */
#define BTR_DEPTH 20

typedef struct btlevel {
  unsigned char *p; /* the page (interior levels: a copy; the leaf: in the window) */
  uint32_t pgno;
  int ncell, at; /* cells, and the next cell (interior: the next child; ncell is the right-most) */
} btlevel;

struct rp_btree {
  int fd;
  uint32_t psz, usable, npages, root;
  unsigned char *win; /* BTR_WIN pages from page win_lo (win_n of them) */
  uint32_t win_lo, win_n;
  btlevel lv[BTR_DEPTH];
  unsigned char *copy[BTR_DEPTH]; /* psz bytes each: interior pages kept while the window moves on */
  int depth;          /* levels on the path to the current leaf; 0 before the seek, -1 at the end */
  unsigned char *ovf; /* a payload assembled from its overflow pages */
  size_t ovfcap;
  uint64_t visits; /* pages entered: more than the file holds means a loop */
};

static uint32_t be16(const unsigned char *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A varint at p, not reading at or past end: its length, or 0 when it runs past end. */
static int varint_in(const unsigned char *p, const unsigned char *end, uint64_t *v) {
  uint64_t x = 0;
  for (int i = 0; i < 9; i++) {
    if (p + i >= end) return 0;
    if (i == 8) {
      *v = (x << 8) | p[8];
      return 9;
    }
    x = (x << 7) | (p[i] & 0x7f);
    if (!(p[i] & 0x80)) {
      *v = x;
      return i + 1;
    }
  }
  return 0;
}

void rp_bt_close(rp_btree *b) {
  if (!b) return;
  if (b->fd >= 0) close(b->fd);
  free(b->win);
  for (int i = 0; i < BTR_DEPTH; i++)
    free(b->copy[i]);
  free(b->ovf);
  free(b);
}

rp_btree *rp_bt_open(const char *path, uint32_t root) {
  rp_btree *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->fd = open(path, O_RDONLY | O_CLOEXEC);
  unsigned char h[100];
  struct stat sb;
  if (b->fd < 0 || fstat(b->fd, &sb) != 0 || hu_pread_all(b->fd, h, sizeof h, 0) != 0) goto fail;
  uint32_t psz = be16(h + 16) == 1 ? 65536 : be16(h + 16);
  /* a rollback-journal file in UTF-8 (a WAL file's pages may be newer than the database's) */
  if (psz < 512 || (psz & (psz - 1)) || h[18] != 1 || h[19] != 1 || be32(h + 56) != 1 || h[20] >= 128)
    goto fail;
  uint64_t n = (uint64_t)sb.st_size / psz;
  if (be32(h + 24) == be32(h + 92) && be32(h + 28) && be32(h + 28) < n) n = be32(h + 28);
  if (root < 2 || root > n || n > UINT32_MAX) goto fail;
  b->psz = psz;
  b->usable = psz - h[20];
  b->npages = (uint32_t)n;
  b->root = root;
  if (!(b->win = malloc((size_t)BTR_WIN * psz))) goto fail;
  posix_fadvise(b->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return b;
fail:
  rp_bt_close(b);
  return NULL;
}

/* Page pgno, read through the window: a pointer valid until the next read; NULL when it is not a page of the
 * file or cannot be read. */
static unsigned char *page_at(rp_btree *b, uint32_t pgno) {
  if (pgno < 2 || pgno > b->npages || ++b->visits > 2ull * b->npages + 16) return NULL;
  if (pgno < b->win_lo || pgno >= b->win_lo + b->win_n) {
    uint32_t n = b->npages - pgno + 1 < BTR_WIN ? b->npages - pgno + 1 : BTR_WIN;
    b->win_n = 0;
    if (hu_pread_all(b->fd, b->win, (size_t)n * b->psz, (uint64_t)(pgno - 1) * b->psz) != 0) return NULL;
    b->win_lo = pgno;
    b->win_n = n;
  }
  return b->win + (size_t)(pgno - b->win_lo) * b->psz;
}

/* Enter page pgno as level d of the path (kept in a copy when it is interior): 0, or -1 when it is not a
 * table b-tree page that fits. */
static int enter(rp_btree *b, int d, uint32_t pgno) {
  if (d >= BTR_DEPTH) return -1;
  unsigned char *p = page_at(b, pgno);
  if (!p) return -1;
  int leaf = p[0] == 13;
  if (!leaf && p[0] != 5) return -1;
  uint32_t hdr = leaf ? 8 : 12, ncell = be16(p + 3);
  if (hdr + 2 * ncell > b->usable || (!leaf && ncell == 0 && !be32(p + 8))) return -1;
  if (!leaf) {
    if (!b->copy[d] && !(b->copy[d] = malloc(b->psz))) return -1;
    memcpy(b->copy[d], p, b->psz);
    p = b->copy[d];
  }
  b->lv[d] = (btlevel){p, pgno, (int)ncell, 0};
  b->depth = d + 1;
  return 0;
}

/* Cell i of level l: its start, or NULL when the pointer is out of the page. */
static const unsigned char *cell(const rp_btree *b, const btlevel *l, int i) {
  int leaf = l->p[0] == 13;
  uint32_t off = be16(l->p + (leaf ? 8 : 12) + 2 * i);
  return off >= (leaf ? 8u : 12u) + 2u * (uint32_t)l->ncell && off < b->usable ? l->p + off : NULL;
}

/* Interior cell i's key (rowid) and child: 0, or -1. */
static int interior_cell(const rp_btree *b, const btlevel *l, int i, int64_t *key, uint32_t *child) {
  const unsigned char *c = cell(b, l, i);
  uint64_t k;
  if (!c || c + 4 >= l->p + b->usable || !varint_in(c + 4, l->p + b->usable, &k)) return -1;
  *child = be32(c);
  *key = (int64_t)k;
  return 0;
}

/* Leaf cell i's rowid: 0, or -1. */
static int leaf_rowid(const rp_btree *b, const btlevel *l, int i, int64_t *rowid) {
  const unsigned char *c = cell(b, l, i), *end = l->p + b->usable;
  uint64_t psize, r;
  int k = c ? varint_in(c, end, &psize) : 0;
  if (!k || !varint_in(c + k, end, &r)) return -1;
  *rowid = (int64_t)r;
  return 0;
}

/* Down from level d (interior, its next child in `at`) to the leftmost leaf under that child whose rows may
 * reach `lo` (INT64_MIN: the first), each level's `at` set past the child taken. 0, or -1. */
static int descend(rp_btree *b, int d, int64_t lo) {
  for (;;) {
    btlevel *l = &b->lv[d];
    if (l->p[0] == 13) { /* the leaf: its first row at or above lo */
      while (lo != INT64_MIN && l->at < l->ncell) {
        int64_t r;
        if (leaf_rowid(b, l, l->at, &r)) return -1;
        if (r >= lo) break;
        l->at++;
      }
      return 0;
    }
    uint32_t child;
    if (lo != INT64_MIN) { /* the first cell whose key reaches lo (every row under it is <= its key) */
      int lo_i = l->at, hi_i = l->ncell;
      while (lo_i < hi_i) {
        int mid = lo_i + (hi_i - lo_i) / 2;
        int64_t key;
        if (interior_cell(b, l, mid, &key, &child)) return -1;
        if (key < lo)
          lo_i = mid + 1;
        else
          hi_i = mid;
      }
      l->at = lo_i;
    }
    if (l->at < l->ncell) {
      int64_t key;
      if (interior_cell(b, l, l->at, &key, &child)) return -1;
    } else {
      child = be32(l->p + 8);
    }
    l->at++;
    if (enter(b, d + 1, child)) return -1;
    d++;
  }
}

int rp_bt_seek(rp_btree *b, int64_t lo) {
  if (enter(b, 0, b->root) || descend(b, 0, lo)) {
    b->depth = -1;
    return -1;
  }
  return 0;
}

/* The payload of leaf cell c (its size psize, starting at p after the size and rowid), whole: in the page,
 * or assembled with its overflow pages into b->ovf. NULL when it does not fit the page or the chain is bad.
 */
static const unsigned char *payload(rp_btree *b, const btlevel *l, const unsigned char *p, uint64_t psize) {
  const unsigned char *end = l->p + b->usable;
  uint64_t u = b->usable, x = u - 35;
  if (psize <= x) return psize <= (uint64_t)(end - p) ? p : NULL;
  uint64_t m = ((u - 12) * 32 / 255) - 23, k = m + ((psize - m) % (u - 4)), local = k <= x ? k : m;
  if (local + 4 > (uint64_t)(end - p) || psize > (64u << 20)) return NULL;
  if (b->ovfcap < psize) {
    unsigned char *n = realloc(b->ovf, psize);
    if (!n) return NULL;
    b->ovf = n;
    b->ovfcap = psize;
  }
  memcpy(b->ovf, p, local);
  /* the leaf stays readable: its window is left alone while the chain is read page by page */
  uint64_t have = local;
  uint32_t next = be32(p + local);
  unsigned char *pg = malloc(b->psz);
  while (pg && have < psize && next >= 2 && next <= b->npages && ++b->visits <= 2ull * b->npages + 16) {
    if (hu_pread_all(b->fd, pg, b->psz, (uint64_t)(next - 1) * b->psz) != 0) break;
    uint64_t take = psize - have < u - 4 ? psize - have : u - 4;
    memcpy(b->ovf + have, pg + 4, take);
    have += take;
    next = be32(pg);
  }
  free(pg);
  return have == psize ? b->ovf : NULL;
}

/* The bytes of a value of one-byte serial type t (below 0x80); 0xff for the reserved types 10 and 11. */
static const unsigned char type_len[128] = {
    0,  1,  2,  3,  4,  6,  8,  8,  0,  0,  0xff, 0xff, 0,  0,  1,  1,  2,  2,  3,  3,  4,  4,
    5,  5,  6,  6,  7,  7,  8,  8,  9,  9,  10,   10,   11, 11, 12, 12, 13, 13, 14, 14, 15, 15,
    16, 16, 17, 17, 18, 18, 19, 19, 20, 20, 21,   21,   22, 22, 23, 23, 24, 24, 25, 25, 26, 26,
    27, 27, 28, 28, 29, 29, 30, 30, 31, 31, 32,   32,   33, 33, 34, 34, 35, 35, 36, 36, 37, 37,
    38, 38, 39, 39, 40, 40, 41, 41, 42, 42, 43,   43,   44, 44, 45, 45, 46, 46, 47, 47, 48, 48,
    49, 49, 50, 50, 51, 51, 52, 52, 53, 53, 54,   54,   55, 55, 56, 56, 57, 57};

static const unsigned char type_code[14] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, RP_F_BLOB, RP_F_TEXT};

/* Where the values of record rec (n bytes) lie, the first nmax in f; *nv the values it holds. 0, or -1 when
 * it is not a record. */
static int record(const unsigned char *rec, uint64_t n, rp_field *f, int nmax, int *nv) {
  const unsigned char *end = rec + n;
  uint64_t hlen;
  int k = varint_in(rec, end, &hlen);
  if (!k || hlen > n || hlen < (uint64_t)k) return -1;
  const unsigned char *h = rec + k, *hend = rec + hlen;
  uint64_t at = hlen;
  unsigned bad = 0; /* a reserved type seen (its length 0xff) */
  int i = 0;
  while (h < hend) {
    uint64_t t = *h, len;
    if (t < 0x80) { /* the usual one-byte serial type: its length from the table, checked after the loop */
      h++;
      len = type_len[t];
      bad |= (unsigned)len;
    } else {
      int m = varint_in(h, hend, &t);
      if (!m || t < 12) return -1; /* a small type in a longer varint: not SQLite's */
      h += m;
      len = (t - 12) / 2;
      if (len > n) return -1;
    }
    if (i < nmax) f[i] = (rp_field){(uint32_t)at, (uint32_t)len, type_code[t < 12 ? t : 12 + (t & 1)]};
    at += len;
    i++;
  }
  if ((bad & 0x80) || at > n) return -1; /* a reserved type, or values past the record */
  *nv = i;
  return 0;
}

int rp_bt_next(rp_btree *b, int64_t *rowid, const unsigned char **out, rp_field *f, int nmax, int *nv) {
  for (;;) {
    if (b->depth <= 0) return b->depth < 0 ? -1 : 0;
    btlevel *l = &b->lv[b->depth - 1];
    if (l->p[0] == 13 && l->at < l->ncell) {
      const unsigned char *c = cell(b, l, l->at++), *end = l->p + b->usable;
      uint64_t psize, r;
      int k1 = c ? varint_in(c, end, &psize) : 0, k2 = k1 ? varint_in(c + k1, end, &r) : 0;
      const unsigned char *rec = k2 ? payload(b, l, c + k1 + k2, psize) : NULL;
      if (!rec || record(rec, psize, f, nmax, nv)) break;
      *rowid = (int64_t)r;
      *out = rec;
      return 1;
    }
    /* this page is done: up to the first level with a child left, then down its leftmost path */
    int d = b->depth - 2;
    while (d >= 0 && b->lv[d].at > b->lv[d].ncell)
      d--;
    if (d < 0) {
      b->depth = 0;
      return 0;
    }
    if (descend(b, d, INT64_MIN)) break;
  }
  b->depth = -1;
  return -1;
}
