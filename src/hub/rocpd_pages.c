/* rocpd format, page writer: the big tables (kernel_dispatch, event, its event_id index, pmc_event) written
 * as SQLite b-tree pages directly, on a writer thread, then spliced into the database at commit. Used only
 * while rows arrive in id order and HUBPROF_ROCPD_PAGES is not 0; the plain-SQLite path is the fallback. */
/* SPDX-License-Identifier: MIT */
#include "rocpd_internal.h"

#include "../common/hu_io.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The big tables (kernel_dispatch, event, the event_id index, pmc_event) get many rows, written in id order.
 * Instead of inserting them one at a time through SQLite, the writer encodes each row as an SQLite record and
 * builds the b-tree pages itself, bottom up, the way SQLite's own CREATE INDEX and the transfer optimisation
 * of INSERT … SELECT fill a tree; the pages go to an unnamed temporary file. At commit they are appended to
 * the database and each tree's root replaces the empty root page SQLite made for the table
 * (https://sqlite.org/fileformat2.html: records, b-tree pages, the database header). Rows out of id order
 * end this: the trees so far are spliced in and later rows go through SQLite. */

static void put_be32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

static uint32_t get_be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline int varint_len(uint64_t v) {
  if (v < 0x80) return 1; /* the usual sizes first: a record's length, a row id */
  if (v < 0x4000) return 2;
  if (v >> 56) return 9;
  return (70 - __builtin_clzll(v)) / 7; /* 7 bits a byte: no loop (a page row has a few per cell) */
}

/* SQLite's varint: big-endian 7-bit groups, high bit = more; the 9th byte holds 8 bits. */
static inline int put_varint(unsigned char *p, uint64_t v) {
  if (v <= 0x7f) {
    p[0] = (unsigned char)v;
    return 1;
  }
  if (v < 0x4000) {
    p[0] = (unsigned char)(v >> 7 | 0x80);
    p[1] = (unsigned char)(v & 0x7f);
    return 2;
  }
  if (v >> 56) {
    p[8] = (unsigned char)v;
    v >>= 8;
    for (int i = 7; i >= 0; i--) {
      p[i] = (unsigned char)((v & 0x7f) | 0x80);
      v >>= 7;
    }
    return 9;
  }
  int n = varint_len(v);
  p[n - 1] = (unsigned char)(v & 0x7f);
  for (int i = n - 2; i >= 0; i--) {
    v >>= 7;
    p[i] = (unsigned char)((v & 0x7f) | 0x80);
  }
  return n;
}

static int get_varint(const unsigned char *p, uint64_t *v) {
  uint64_t x = 0;
  for (int i = 0; i < 8; i++) {
    x = (x << 7) | (p[i] & 0x7f);
    if (!(p[i] & 0x80)) {
      *v = x;
      return i + 1;
    }
  }
  *v = (x << 8) | p[8];
  return 9;
}

static const unsigned char int_size[10] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0};

/* Serial type by the number of significant bits of an integer's magnitude (0..64). */
static const unsigned char type_by_bits[65] = {
    1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 5,
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6};

/* int_size[type_by_bits[64 - z]]: the bytes of an integer whose magnitude has z leading zero bits */
static const unsigned char size_by_clz[64] = {
    8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,
    6, 4, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1};

/* One integer of a record: its serial type at *ph (advanced), its bytes at pb; returns the end of them.
 * pb must have 8 bytes of room (the store is a whole word). */
static inline unsigned char *put_int(unsigned char **ph, unsigned char *pb, int64_t i) {
  if ((uint64_t)i <= 1) {
    *(*ph)++ = (unsigned char)(8 + i);
    return pb;
  }
  uint64_t u = (uint64_t)(i ^ (i >> 63)); /* ~i for a negative i */
  int z = __builtin_clzll(u | 1);
  unsigned t = type_by_bits[64 - z];
  int size = size_by_clz[z];
  *(*ph)++ = (unsigned char)t;
  uint64_t be = __builtin_bswap64((uint64_t)i << (64 - 8 * size));
  memcpy(pb, &be, 8);
  return pb + size;
}

/* Encode values as an SQLite record into out (big enough: rec_max); returns its length. The header is
 * the serial types (one byte each but for texts of 58 bytes or more), then the values. */
static size_t rec_encode(unsigned char *out, const rv *v, int n) {
  size_t hdr = (size_t)n;
  for (int k = 0; k < n; k++)
    if (v[k].kind == RV_TEXT && v[k].n > 57) hdr += (size_t)varint_len((uint64_t)v[k].n * 2 + 13) - 1;
  size_t h = hdr + 1;
  while ((size_t)varint_len(h) + hdr != h)
    h = hdr + (size_t)varint_len(h);
  unsigned char *ph = out + put_varint(out, h), *pb = out + h;
  for (int k = 0; k < n; k++) {
    switch (v[k].kind) {
    case RV_INT: pb = put_int(&ph, pb, v[k].i); break;
    case RV_REAL: { /* the IEEE bits, big-endian */
      uint64_t be = __builtin_bswap64((uint64_t)v[k].i);
      *ph++ = 7;
      memcpy(pb, &be, 8);
      pb += 8;
      break;
    }
    case RV_TEXT:
      ph += put_varint(ph, (uint64_t)v[k].n * 2 + 13);
      memcpy(pb, v[k].s, v[k].n);
      pb += v[k].n;
      break;
    default: *ph++ = 0; break;
    }
  }
  return (size_t)(pb - out);
}

/* Most bytes rec_encode writes for n values whose texts total `text` bytes. */
static size_t rec_max(int n, size_t text) { return 9 + (size_t)n * 9 + (size_t)n * 8 + text; }

static int bt_hdr(int level) { return level ? 12 : 8; }
static int bt_type(const btb *t, int level) { return t->index ? (level ? 2 : 10) : (level ? 5 : 13); }

/* All n bytes at `at`: 0 or an errno. A file system that opens with O_DIRECT but refuses the writes
 * (EINVAL) gets them again without O_DIRECT. */
static int bk_pwrite_all(int fd, const unsigned char *p, size_t n, off_t at) {
  for (;;) {
    if (hu_pwrite_all(fd, p, n, (uint64_t)at) == 0) return 0;
    int e = errno, fl = fcntl(fd, F_GETFL);
    if (e != EINVAL || fl == -1 || !(fl & O_DIRECT) || fcntl(fd, F_SETFL, fl & ~O_DIRECT) != 0) return e;
  }
}

static void *bk_writer(void *arg) {
  bulk *b = arg;
  pthread_mutex_lock(&b->mu);
  for (;;) {
    while (!b->len[b->head] && !b->quit)
      pthread_cond_wait(&b->cv, &b->mu);
    if (!b->len[b->head]) break;
    int i = b->head;
    pthread_mutex_unlock(&b->mu);
    int e = b->werr ? 0 : bk_pwrite_all(b->fd, b->buf[i], b->len[i], b->off[i]);
    pthread_mutex_lock(&b->mu);
    if (e && !b->werr) b->werr = e;
    b->len[i] = 0;
    b->head = (i + 1) % BT_NBUF;
    pthread_cond_broadcast(&b->cv);
  }
  pthread_mutex_unlock(&b->mu);
  return NULL;
}

/* Hand the buffer being filled to the writer (or write it here without one) and take the next one. */
static int bk_submit(bulk *b) {
  if (!b->wn || b->err) return b->err;
  off_t at = ((off_t)b->npages - (off_t)(b->wn / b->psz)) * b->psz;
  if (!b->thr_on) {
    b->err = bk_pwrite_all(b->fd, b->buf[0], b->wn, at);
    b->wn = 0;
    return b->err;
  }
  pthread_mutex_lock(&b->mu);
  b->len[b->cur] = b->wn;
  b->off[b->cur] = at;
  b->cur = (b->cur + 1) % BT_NBUF;
  pthread_cond_broadcast(&b->cv);
  while (b->len[b->cur])
    pthread_cond_wait(&b->cv, &b->mu);
  if (b->werr) b->err = b->werr;
  pthread_mutex_unlock(&b->mu);
  b->wn = 0;
  return b->err;
}

/* Write what is buffered and wait until every write is done; ends the writer thread. */
static int bk_flush(bulk *b) {
  if (!b->err) bk_submit(b);
  if (b->thr_on) {
    pthread_mutex_lock(&b->mu);
    b->quit = 1;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
    pthread_join(b->thr, NULL);
    b->thr_on = 0;
    if (b->werr && !b->err) b->err = b->werr;
  }
  return b->err;
}

/* Finish the header of page pg at `level` of t (right child for interior pages) and zero its free gap. */
static void bt_seal(const bulk *b, const btb *t, bpage *pg, int level, uint32_t right) {
  unsigned char *p = pg->p;
  int hdr = bt_hdr(level);
  p[0] = (unsigned char)bt_type(t, level);
  p[1] = p[2] = 0;
  p[3] = (unsigned char)(pg->n >> 8);
  p[4] = (unsigned char)pg->n;
  p[5] = (unsigned char)(pg->top >> 8); /* 65536 is written as 0 */
  p[6] = (unsigned char)pg->top;
  p[7] = 0;
  if (level) put_be32(p + 8, right);
  memset(p + hdr + 2 * pg->n, 0, (size_t)(pg->top - hdr - 2 * pg->n));
}

/* Append a sealed page to the file; *no gets its number there (0-based). */
static int bk_emit(bulk *b, const unsigned char *page, int interior, uint32_t *no) {
  if (b->err) return -1;
  if (b->npages >= 0x7ffffff0u) {
    b->err = EFBIG;
    return -1;
  }
  if (interior) {
    if (b->ninterior == b->capinterior) {
      size_t cap = b->capinterior ? 2 * b->capinterior : 64;
      uint32_t *v = realloc(b->interior, cap * sizeof *v);
      if (!v) {
        b->err = ENOMEM;
        return -1;
      }
      b->interior = v;
      b->capinterior = cap;
    }
    b->interior[b->ninterior++] = b->npages;
  }
  if (b->wn + b->psz > BT_WBUF && bk_submit(b)) return -1;
  memcpy(b->buf[b->cur] + b->wn, page, b->psz);
  b->wn += b->psz;
  *no = b->npages++;
  return 0;
}

static void bt_reset(const bulk *b, bpage *pg) {
  pg->n = 0;
  pg->top = (int)b->psz;
}

/* Room for a cell of len bytes (and its pointer) at `level`; returns where to write it. */
static unsigned char *bt_add(bpage *pg, int level, int len) {
  pg->top -= len;
  int at = bt_hdr(level) + 2 * pg->n++;
  pg->p[at] = (unsigned char)(pg->top >> 8);
  pg->p[at + 1] = (unsigned char)pg->top;
  return pg->p + pg->top;
}

static int bt_fits(const bpage *pg, int level, int len) {
  return pg->top - bt_hdr(level) - 2 * pg->n >= len + 2;
}

/* Length of the cell at the lowest address (the one added last). */
static int bt_last_len(const btb *t, const bpage *pg, int level) {
  const unsigned char *c = pg->p + pg->top;
  uint64_t v;
  if (level == 0) { /* index leaf: payload size, payload */
    int k = get_varint(c, &v);
    return k + (int)v;
  }
  int k = get_varint(c + 4, &v);
  return 4 + k + (t->index ? (int)v : 0);
}

/* Take the cell added last off a full page (it keeps at least one) into `last`: its length, or -1. */
static int bt_take_last(bulk *b, const btb *t, bpage *pg, int level, unsigned char last[BT_MAXCELL]) {
  int ll = bt_last_len(t, pg, level);
  if (pg->n < 2 || ll > BT_MAXCELL) {
    b->err = -1;
    return -1;
  }
  memcpy(last, pg->p + pg->top, (size_t)ll);
  pg->top += ll;
  pg->n--;
  return ll;
}

/* Make `level` of t in use (0), or -1 with b->err set (too deep, out of memory). */
static int bt_level(bulk *b, btb *t, int level) {
  if (level < t->depth) return 0;
  bpage *pg = &t->lv[level];
  if (level >= BT_MAXDEPTH || (!pg->p && !(pg->p = malloc(b->psz)))) {
    if (!b->err) b->err = level >= BT_MAXDEPTH ? -1 : ENOMEM;
    return -1;
  }
  bt_reset(b, pg);
  t->depth = level + 1;
  return 0;
}

/* Add (child, key) to the interior page being filled at `level`: key = the rowid varint (table) or the
 * payload size and payload (index) that separates child from what follows. A full page keeps its last
 * cell's child as its right child and passes that cell's key up, so every page gets at least one cell. */
static int bt_push(bulk *b, btb *t, int level, uint32_t child, const unsigned char *key, int klen) {
  if (bt_level(b, t, level)) return -1;
  bpage *pg = &t->lv[level];
  if (!bt_fits(pg, level, 4 + klen)) {
    unsigned char last[BT_MAXCELL];
    int ll = bt_take_last(b, t, pg, level, last);
    if (ll < 0) return -1;
    bt_seal(b, t, pg, level, get_be32(last));
    uint32_t no;
    if (bk_emit(b, pg->p, 1, &no)) return -1;
    bt_reset(b, pg);
    if (bt_push(b, t, level + 1, no, last + 4, ll - 4)) return -1;
  }
  unsigned char *c = bt_add(pg, level, 4 + klen);
  put_be32(c, child);
  memcpy(c + 4, key, (size_t)klen);
  return 0;
}

/* Append a row (rowid above every earlier one) to a table b-tree. */
static int bt_row(bulk *b, btb *t, int64_t rowid, const unsigned char *rec, size_t plen) {
  int len = varint_len(plen) + varint_len((uint64_t)rowid) + (int)plen;
  if (plen > b->psz - 35) { /* would need overflow pages: never for the tables built here */
    b->err = -1;
    return -1;
  }
  if (bt_level(b, t, 0)) return -1;
  bpage *pg = &t->lv[0];
  if (!bt_fits(pg, 0, len)) {
    bt_seal(b, t, pg, 0, 0);
    uint32_t no;
    if (bk_emit(b, pg->p, 0, &no)) return -1;
    bt_reset(b, pg);
    unsigned char key[9];
    if (bt_push(b, t, 1, no, key, put_varint(key, (uint64_t)t->last))) return -1;
  }
  unsigned char *c = bt_add(pg, 0, len);
  c += put_varint(c, plen);
  c += put_varint(c, (uint64_t)rowid);
  memcpy(c, rec, plen);
  t->last = rowid;
  t->rows++;
  return 0;
}

/* Append a key (above every earlier one) to an index b-tree. A full leaf gives its last key to the
 * parent as the divider, so no leaf is ever left empty. */
static int bt_key(bulk *b, btb *t, const unsigned char *rec, size_t plen) {
  int len = varint_len(plen) + (int)plen;
  if (len > BT_MAXCELL - 4 || plen > ((b->psz - 12) * 64 / 255) - 23) {
    b->err = -1;
    return -1;
  }
  if (bt_level(b, t, 0)) return -1;
  bpage *pg = &t->lv[0];
  if (!bt_fits(pg, 0, len)) {
    unsigned char last[BT_MAXCELL];
    int ll = bt_take_last(b, t, pg, 0, last);
    if (ll < 0) return -1;
    bt_seal(b, t, pg, 0, 0);
    uint32_t no;
    if (bk_emit(b, pg->p, 0, &no)) return -1;
    bt_reset(b, pg);
    if (bt_push(b, t, 1, no, last, ll)) return -1;
  }
  unsigned char *c = bt_add(pg, 0, len);
  c += put_varint(c, plen);
  memcpy(c, rec, plen);
  t->rows++;
  return 0;
}

/* Write out every page being filled but the root, which stays in lv[depth - 1] for the splice. */
static int bt_finish(bulk *b, btb *t) {
  uint32_t child = 0;
  for (int level = 0; level < t->depth; level++) {
    bpage *pg = &t->lv[level];
    bt_seal(b, t, pg, level, child);
    if (level + 1 == t->depth) return 0;
    if (bk_emit(b, pg->p, level > 0, &child)) return -1;
  }
  return 0;
}

/* Child pointers of an interior page, numbers in the page file, to page numbers in the database: + base,
 * and page `from` (the lock-byte page's place, when the pages cover it) is at `to` instead. */
static void bt_rebase(unsigned char *p, uint32_t base, uint32_t from, uint32_t to) {
  if (p[0] != 2 && p[0] != 5) return;
  int n = p[3] << 8 | p[4];
  uint32_t c = get_be32(p + 8);
  put_be32(p + 8, (c == from ? to : c) + base);
  for (int i = 0; i < n; i++) {
    int off = p[12 + 2 * i] << 8 | p[13 + 2 * i];
    c = get_be32(p + off);
    put_be32(p + off, (c == from ? to : c) + base);
  }
}

void rp_bulk_free(bulk *b) {
  if (b->thr_on) { /* abandoned while writing: let the writer finish, ignore its result */
    b->wn = 0;
    bk_flush(b);
  }
  if (b->sync_on) {
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    b->sync_on = 0;
  }
  if (b->buf[0] && b->fd >= 0) close(b->fd); /* a bulk that never started has no file (fd may read 0) */
  b->fd = -1;
  for (int i = 0; i < BT_NBUF; i++) {
    free(b->buf[i]);
    b->buf[i] = NULL;
  }
  free(b->interior);
  b->interior = NULL;
  for (int i = 0; i < BT_COUNT; i++)
    for (int k = 0; k < BT_MAXDEPTH; k++) {
      free(b->t[i].lv[k].p);
      b->t[i].lv[k].p = NULL;
    }
}

/* Copy n bytes from fd `in` at offset `from` to `out` at offset `at` (in the kernel when it can). */
static int copy_range(int in, off_t from, int out, off_t at, uint64_t n) {
  off_t src = from, dst = at;
  while (n) {
    ssize_t k = copy_file_range(in, &src, out, &dst, n > (1u << 30) ? (1u << 30) : (size_t)n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    n -= (uint64_t)k;
  }
  if (!n) return 0;
  unsigned char *buf = malloc(1u << 20);
  if (!buf) return ENOMEM;
  int e = 0;
  while (n && !e) {
    size_t want = n > (1u << 20) ? (1u << 20) : (size_t)n;
    if (hu_pread_all(in, buf, want, (uint64_t)src) || hu_pwrite_all(out, buf, want, (uint64_t)dst)) e = errno;
    src += (off_t)want;
    dst += (off_t)want;
    n -= want;
  }
  free(buf);
  return e;
}

static hp_status bulk_fail(hp_store *s) {
  rp_state *r = s->impl;
  int e = r->bk.err;
  if (e == ENOMEM) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  if (e > 0) return hp_set_error(s, HP_ERR_IO, "cannot write the pages of %s: %s", r->tmp, strerror(e));
  return hp_set_error(s, HP_ERR_CONSTRAINT, "cannot build the pages of %s: a row does not fit the layout",
                      r->tmp);
}

/* Start building the big tables as pages: needs the page size, a temporary file beside the output and the
 * string ids of rocpd_event rows. Without them rows simply go through SQLite. */
void rp_bulk_start(hp_store *s) {
  rp_state *r = s->impl;
  bulk *b = &r->bk;
  sqlite3_stmt *st = NULL;
  const char *env = getenv("HUBPROF_ROCPD_PAGES"); /* "0": every row through SQLite (docs/formats/rocpd.md) */
  if (env && strcmp(env, "0") == 0) return;
  if (sqlite3_prepare_v2(r->db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    b->psz = (uint32_t)sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  if (b->psz < 4096 || b->psz > 65536 || (b->psz & (b->psz - 1))) return;
  char *dir = strdup(r->tmp);
  int ok = dir != NULL && (r->rec = malloc(4096)) != NULL;
  for (int i = 0; ok && i < BT_NBUF; i++)
    ok = posix_memalign((void **)&b->buf[i], 4096, BT_WBUF) == 0;
  int fd = -1;
  if (ok) {
    char *slash = strrchr(dir, '/');
    if (slash)
      slash[slash == dir] = 0;
    else
      strcpy(dir, ".");
    fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC | O_DIRECT, 0600);
    if (fd < 0) fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) { /* no O_TMPFILE here: a named file, unlinked at once */
      char *tmpl = malloc(strlen(r->tmp) + 8);
      if (tmpl) {
        sprintf(tmpl, "%s.XXXXXX", r->tmp);
        fd = mkostemp(tmpl, O_CLOEXEC);
        if (fd >= 0) unlink(tmpl);
        free(tmpl);
      }
    }
  }
  free(dir);
  if (fd < 0) {
    rp_bulk_free(b);
    return;
  }
  b->fd = fd;
  if (pthread_mutex_init(&b->mu, NULL) == 0) {
    if (pthread_cond_init(&b->cv, NULL) == 0) {
      b->sync_on = 1;
      b->thr_on = pthread_create(&b->thr, NULL, bk_writer, b) == 0;
    } else {
      pthread_mutex_destroy(&b->mu);
    }
  }
  b->t[BT_EVENT_INDEX].index = 1;
  /* every dispatch's event: guid, category KERNEL_DISPATCH, no stacks, '{}' JSON columns */
  rv ev[9] = {RV_NIL,
              {RV_TEXT, 36, 0, r->guid},
              RV_I(r->str_dispatch_cat),
              RV_NIL,
              RV_NIL,
              RV_NIL,
              {RV_TEXT, 2, 0, "{}"},
              {RV_TEXT, 2, 0, "{}"},
              {RV_TEXT, 2, 0, "{}"}};
  r->evlen = rec_encode(r->evrec, ev, 9);
  r->bulk_on = 1;
}

/* A dispatch as a kernel_dispatch record (the columns of the table, in order: id as NULL since it is the
 * rowid, guid, 22 integers, extdata), its rocpd_event row and its event_id index key. */
hp_status rp_bulk_dispatch(hp_store *s, const hp_dispatch *d, const char *ext, size_t extlen) {
  rp_state *r = s->impl;
  bulk *b = &r->bk;
  int64_t id = (int64_t)d->id;
  /* the row id encoded once: it is dispatch_id, event_id and both values of the index key */
  unsigned char idt, *idh = &idt, idb[8] = {0};
  size_t idn = (size_t)(put_int(&idh, idb, id) - idb);
  uint64_t et = (uint64_t)extlen * 2 + 13;
  size_t hl = 3 + 22 + (size_t)varint_len(et); /* < 128: one byte */
  unsigned char *rec = r->rec, *ph = rec, *pb = rec + hl;
  *ph++ = (unsigned char)hl;
  *ph++ = 0;           /* id: NULL, the rowid */
  *ph++ = 36 * 2 + 13; /* guid: text of 36 bytes */
  memcpy(pb, r->guid, 36);
  pb += 36;
#define PUT(x) (pb = put_int(&ph, pb, (int64_t)(x)))
#define PUT_ID() (*ph++ = idt, memcpy(pb, idb, 8), pb += idn)
  /* the 22 integer columns, in order */
  PUT(rp_proc_node(r, d->process_id));
  PUT(d->process_id);
  PUT(d->thread_id);
  PUT(d->agent_id);
  PUT(d->kernel_id);
  PUT_ID(); /* dispatch_id: the row id, unique in the file */
  PUT(d->queue_id);
  *ph++ = 8; /* stream_id: 0 */
  PUT(d->start_ns);
  PUT(d->end_ns);
  PUT(d->private_size);
  PUT(d->group_size);
  PUT(d->workgroup[0]);
  PUT(d->workgroup[1]);
  PUT(d->workgroup[2]);
  PUT(d->grid[0]);
  PUT(d->grid[1]);
  PUT(d->grid[2]);
  *ph++ = 8; /* graph_exec_id: 0 */
  *ph++ = 8; /* graph_node_id: 0 */
  PUT(r->str_empty);
  PUT_ID(); /* event_id */
#undef PUT
#undef PUT_ID
  put_varint(ph, et);
  memcpy(pb, ext, extlen);
  pb += extlen;
  unsigned char key[24] = {3, idt, idt};
  memcpy(key + 3, idb, 8);
  memcpy(key + 3 + idn, idb, 8);
  if (bt_row(b, &b->t[BT_DISPATCH], id, rec, (size_t)(pb - rec)) ||
      bt_row(b, &b->t[BT_EVENT], id, r->evrec, r->evlen) ||
      bt_key(b, &b->t[BT_EVENT_INDEX], key, 3 + 2 * idn))
    return bulk_fail(s);
  return HP_OK;
}

hp_status rp_bulk_counter_value(hp_store *s, const hp_counter_value *cv, const char *ext) {
  rp_state *r = s->impl;
  size_t extlen = strlen(ext);
  if (rec_max(10, 36 + extlen) > 4096)
    return hp_set_error(s, HP_ERR_INVALID, "counter value extdata too long");
  rv val = RV_NIL;
  if (!isnan(cv->value)) {
    double x = cv->value == 0 ? 0.0 : cv->value;
    val.kind = RV_REAL;
    memcpy(&val.i, &x, sizeof x);
  }
  rv v[10] = {RV_NIL,
              {RV_TEXT, 36, 0, r->guid},
              RV_I(cv->dispatch_id),
              RV_NIL,
              RV_I(cv->counter_id),
              val,
              RV_NIL,
              RV_NIL,
              RV_NIL,
              {RV_TEXT, (uint32_t)extlen, 0, ext}};
  size_t n = rec_encode(r->rec, v, 10);
  if (bt_row(&r->bk, &r->bk.t[BT_PMC], ++r->next_pmc, r->rec, n)) return bulk_fail(s);
  return HP_OK;
}

/* Put the finished trees into the closed database file: their pages after its last page, each root in place
 * of the empty root page SQLite made, and the header's page count and change counter updated. Where the
 * file system can insert a range at the start of a file (ext4, XFS), the database's pages go in front of the
 * page file, which then replaces the database: the big part is never copied. Otherwise the pages are
 * copied after the database's. Before anything is changed, the file is checked to be what the pages were
 * built for: when it is not (another SQLite version, an unusual page size), *unusable is set and the file is
 * left as it is (the rows then go in through SQLite: bulk_replay). */
static hp_status bulk_splice(hp_store *s, const uint32_t root[BT_COUNT], int *unusable) {
  rp_state *r = s->impl;
  bulk *b = &r->bk;
  int fl = fcntl(b->fd, F_GETFL); /* small, unaligned reads and writes follow */
  if (fl != -1 && (fl & O_DIRECT)) fcntl(b->fd, F_SETFL, fl & ~O_DIRECT);
  int fd = open(r->tmp, O_RDWR | O_CLOEXEC);
  unsigned char h[100], *pg = malloc(b->psz);
  struct stat sb;
  if (fd < 0 || !pg || hu_pread_all(fd, h, sizeof h, 0) || fstat(fd, &sb) != 0) {
    int e = pg ? errno : ENOMEM;
    if (fd >= 0) close(fd);
    free(pg);
    return hp_set_error(s, HP_ERR_IO, "cannot reopen %s: %s", r->tmp, strerror(e));
  }
  uint32_t psz = (uint32_t)h[16] << 8 | h[17], n = get_be32(h + 28);
  if (psz == 1) psz = 65536;
  hp_status st = HP_OK;
  /* what the pages were built for: this page size, no reserved bytes, file format 4 (serial types 8 and 9),
   * UTF-8, no auto-vacuum, a page count in the header that is valid, and an empty root page SQLite made for
   * each tree (HUBPROF_ROCPD_TEST_NO_SPLICE=1 fails this check, for the tests of the other way) */
  const char *hook = getenv("HUBPROF_ROCPD_TEST_NO_SPLICE");
  int ok = !(hook && strcmp(hook, "1") == 0) && psz == b->psz && h[20] == 0 && get_be32(h + 44) == 4 &&
           get_be32(h + 56) == 1 && get_be32(h + 52) == 0 && get_be32(h + 24) == get_be32(h + 92) &&
           (uint64_t)sb.st_size == (uint64_t)n * psz && (uint64_t)n + b->npages < 0x7ffffff0u;
  for (int t = 0; ok && t < BT_COUNT; t++) {
    if (!b->t[t].rows) continue;
    ok = root[t] >= 2 && root[t] <= n && hu_pread_all(fd, pg, psz, ((uint64_t)root[t] - 1) * psz) == 0 &&
         pg[0] == bt_type(&b->t[t], 0) && !pg[3] && !pg[4];
  }
  if (!ok) {
    *unusable = 1;
    close(fd);
    free(pg);
    return HP_OK;
  }
  int e = 0, db = fd, moved = 0;
  if (st == HP_OK && b->npages) {
    if (fallocate(b->fd, FALLOC_FL_INSERT_RANGE, 0, (off_t)n * psz) == 0) {
      e = copy_range(fd, 0, b->fd, 0, (uint64_t)n * psz);
      if (!e && fchmod(b->fd, sb.st_mode & 07777) != 0) e = errno;
      db = b->fd;
      moved = 1;
    } else {
      e = copy_range(b->fd, 0, fd, (off_t)n * psz, (uint64_t)b->npages * psz);
    }
  }
  /* SQLite never uses the page holding the lock bytes at 1 GiB: when the pages cover it, the page there
   * moves to the end and the place is zeroed */
  uint32_t lock = (uint32_t)(0x40000000u / psz) + 1, from = UINT32_MAX, to = 0, total = b->npages;
  if (st == HP_OK && !e && lock > n && lock - n - 1 < b->npages) {
    from = lock - n - 1;
    to = total++;
    if (hu_pread_all(db, pg, psz, ((uint64_t)n + from) * psz) ||
        hu_pwrite_all(db, pg, psz, ((uint64_t)n + to) * psz))
      e = errno ? errno : EIO;
    memset(pg, 0, psz);
    if (!e && hu_pwrite_all(db, pg, psz, ((uint64_t)n + from) * psz)) e = errno ? errno : EIO;
  }
  for (size_t i = 0; st == HP_OK && !e && i < b->ninterior; i++) {
    off_t at = ((off_t)n + (b->interior[i] == from ? to : b->interior[i])) * psz;
    if (hu_pread_all(db, pg, psz, (uint64_t)at)) {
      e = errno ? errno : EIO;
      break;
    }
    bt_rebase(pg, n + 1, from, to);
    if (hu_pwrite_all(db, pg, psz, (uint64_t)at)) e = errno ? errno : EIO;
  }
  for (int t = 0; st == HP_OK && !e && t < BT_COUNT; t++) {
    btb *tr = &b->t[t];
    if (!tr->rows) continue;
    unsigned char *rp = tr->lv[tr->depth - 1].p;
    bt_rebase(rp, n + 1, from, to);
    if (hu_pwrite_all(db, rp, psz, ((uint64_t)root[t] - 1) * psz)) e = errno ? errno : EIO;
  }
  if (st == HP_OK && !e) {
    uint32_t change = get_be32(h + 24) + 1;
    put_be32(h + 24, change);
    put_be32(h + 92, change);
    put_be32(h + 28, n + total);
    if (hu_pwrite_all(db, h, sizeof h, 0)) e = errno ? errno : EIO;
  }
  if (st == HP_OK && !e && moved) {
    /* the page file is the database now: give it the temporary name (a link to an unnamed file through
     * /proc), or else copy it over the old one */
    char proc[64], *tmp2 = malloc(strlen(r->tmp) + 8);
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", b->fd);
    if (!tmp2) {
      e = ENOMEM;
    } else {
      sprintf(tmp2, "%s.pages", r->tmp);
      unlink(tmp2);
      if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp2, AT_SYMLINK_FOLLOW) == 0) {
        if (rename(tmp2, r->tmp) != 0) {
          e = errno;
          unlink(tmp2);
        }
      } else {
        e = copy_range(b->fd, 0, fd, 0, ((uint64_t)n + total) * psz);
      }
      free(tmp2);
    }
  }
  if (close(fd) != 0 && !e) e = errno;
  free(pg);
  if (st == HP_OK && e) st = hp_set_error(s, HP_ERR_IO, "cannot add pages to %s: %s", r->tmp, strerror(e));
  return st;
}

/* ---- the other way: the rows of the built trees inserted through SQLite ---- */

/* Bind the values of record rec[0..n) to st from parameter 2 on (its first value, the rowid alias, is
 * NULL: parameter 1 is the rowid). Returns the values bound, or -1 when the record is not well formed. */
static int rec_bind(sqlite3_stmt *st, const unsigned char *rec, size_t n) {
  uint64_t hl, ty;
  size_t ph = (size_t)get_varint(rec, &hl), pb = (size_t)hl;
  int k = 0;
  if (hl > n) return -1;
  while (ph < hl) {
    ph += (size_t)get_varint(rec + ph, &ty);
    size_t len = ty >= 12 ? (size_t)(ty - 12) / 2 : ty < 10 ? int_size[ty] : 0;
    if (ty == 7) len = 8;
    if (ph > hl || len > n - pb) return -1;
    const unsigned char *v = rec + pb;
    int p = k + 1; /* value k is parameter k + 1 */
    if (k == 0) {
      if (ty != 0) return -1;
    } else if (ty == 0) {
      sqlite3_bind_null(st, p);
    } else if (ty == 8 || ty == 9) {
      sqlite3_bind_int64(st, p, (sqlite3_int64)(ty - 8));
    } else if (ty <= 7) {
      uint64_t u = (v[0] & 0x80) && ty != 7 ? ~(uint64_t)0 : 0;
      for (size_t i = 0; i < len; i++)
        u = u << 8 | v[i];
      if (ty == 7) {
        double d;
        memcpy(&d, &u, sizeof d);
        sqlite3_bind_double(st, p, d);
      } else {
        sqlite3_bind_int64(st, p, (sqlite3_int64)u);
      }
    } else if (ty & 1) {
      sqlite3_bind_text(st, p, (const char *)v, (int)len, SQLITE_STATIC);
    } else {
      sqlite3_bind_blob(st, p, v, (int)len, SQLITE_STATIC);
    }
    pb += len;
    k++;
  }
  return k;
}

/* Insert the rows of the table b-tree whose page is pg (a page of the page file, or the root held in
 * memory), children first, in key order. Returns 0, an errno, or -1 with the SQLite error on the handle. */
static int replay_page(rp_state *r, sqlite3_stmt **ins, const char *table, const unsigned char *pg,
                       int level) {
  bulk *b = &r->bk;
  int n = pg[3] << 8 | pg[4];
  if (pg[0] == 5) {
    if (level >= BT_MAXDEPTH) return EIO;
    unsigned char *kid = malloc(b->psz);
    if (!kid) return ENOMEM;
    int e = 0;
    for (int i = 0; i <= n && !e; i++) {
      uint32_t c = i < n ? get_be32(pg + (pg[12 + 2 * i] << 8 | pg[13 + 2 * i])) : get_be32(pg + 8);
      if (c >= b->npages || hu_pread_all(b->fd, kid, b->psz, (uint64_t)c * b->psz))
        e = errno ? errno : EIO;
      else
        e = replay_page(r, ins, table, kid, level + 1);
    }
    free(kid);
    return e;
  }
  if (pg[0] != 13) return EIO;
  for (int i = 0; i < n; i++) {
    const unsigned char *c = pg + (pg[8 + 2 * i] << 8 | pg[9 + 2 * i]);
    uint64_t plen, rowid;
    c += get_varint(c, &plen);
    c += get_varint(c, &rowid);
    if (plen > b->psz) return EIO;
    if (!*ins) { /* the statement has as many parameters as the first record has values */
      uint64_t hl, ty;
      size_t ph = (size_t)get_varint(c, &hl);
      int nv = 0;
      for (; ph < hl && ph < plen; nv++)
        ph += (size_t)get_varint(c + ph, &ty);
      char sql[256 + 8 * RP_MAX_COLS];
      int at = snprintf(sql, sizeof sql, "INSERT INTO \"%s%s\" VALUES (?1", table, r->suffix);
      for (int k = 2; k <= nv && at < (int)sizeof sql - 16; k++)
        at += snprintf(sql + at, sizeof sql - (size_t)at, ", ?%d", k);
      snprintf(sql + at, sizeof sql - (size_t)at, ")");
      if (sqlite3_prepare_v2(r->db, sql, -1, ins, NULL) != SQLITE_OK) return -1;
    }
    sqlite3_bind_int64(*ins, 1, (sqlite3_int64)rowid);
    if (rec_bind(*ins, c, (size_t)plen) < 0) return EIO;
    int rc = sqlite3_step(*ins);
    sqlite3_reset(*ins);
    if (rc != SQLITE_DONE) return -1;
  }
  return 0;
}

/* The pages could not be spliced: insert their rows (kernel_dispatch, event, pmc_event; SQLite fills the
 * index) into the reopened database, so the file holds the same rows either way. */
static hp_status bulk_replay(hp_store *s) {
  rp_state *r = s->impl;
  static const int tree[3] = {BT_DISPATCH, BT_EVENT, BT_PMC};
  static const char *const table[3] = {"rocpd_kernel_dispatch", "rocpd_event", "rocpd_pmc_event"};
  for (int i = 0; i < 3; i++) {
    btb *t = &r->bk.t[tree[i]];
    if (!t->rows) continue;
    sqlite3_stmt *ins = NULL;
    int e = replay_page(r, &ins, table[i], t->lv[t->depth - 1].p, 0);
    sqlite3_finalize(ins);
    if (e == -1) return rp_sql_fail(s, sqlite3_errcode(r->db), "cannot write the rows built as pages");
    if (e) return hp_set_error(s, HP_ERR_IO, "cannot read back the rows built as pages: %s", strerror(e));
  }
  return HP_OK;
}

/* End building pages: finish the trees, close SQLite, splice them in, reopen. Later rows go through SQLite.
 */
hp_status rp_bulk_flush(hp_store *s) {
  rp_state *r = s->impl;
  bulk *b = &r->bk;
  if (!r->bulk_on) return HP_OK;
  r->bulk_on = 0;
  int any = 0;
  for (int t = 0; t < BT_COUNT; t++)
    if (b->t[t].rows) {
      any = 1;
      if (bt_finish(b, &b->t[t])) return bulk_fail(s);
    }
  if (!any) {
    rp_bulk_free(b);
    return HP_OK;
  }
  if (bk_flush(b)) return bulk_fail(s);
  /* the root pages SQLite gave the (still empty) tables and the index */
  static const char *const names[BT_COUNT] = {"rocpd_kernel_dispatch%s", "rocpd_event%s",
                                              "rocpd_kernel_dispatch%s_event_id", "rocpd_pmc_event%s"};
  uint32_t root[BT_COUNT] = {0};
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(r->db, "SELECT rootpage FROM sqlite_master WHERE name = ?1", -1, &q, NULL);
  for (int t = 0; rc == SQLITE_OK && t < BT_COUNT; t++) {
    char name[128];
    snprintf(name, sizeof name, names[t], r->suffix);
    sqlite3_bind_text(q, 1, name, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(q) == SQLITE_ROW) root[t] = (uint32_t)sqlite3_column_int64(q, 0);
    rc = sqlite3_reset(q);
  }
  sqlite3_finalize(q);
  if (rc != SQLITE_OK) return rp_sql_fail(s, rc, "cannot find the root pages");
  hp_status st = rp_exec_sql(s, "COMMIT", "cannot write the database");
  if (st != HP_OK) return st;
  rp_finalize_inserts(r);
  rc = sqlite3_close(r->db);
  r->db = NULL;
  if (rc != SQLITE_OK) return hp_set_error(s, HP_ERR_IO, "cannot close %s: %s", r->tmp, sqlite3_errstr(rc));
  int unusable = 0;
  st = bulk_splice(s, root, &unusable);
  if (st != HP_OK) {
    rp_bulk_free(b);
    return st;
  }
  rc = sqlite3_open_v2(r->tmp, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK)
    st = hp_set_error(s, HP_ERR_IO, "cannot reopen %s: %s", r->tmp,
                      r->db ? sqlite3_errmsg(r->db) : sqlite3_errstr(rc));
  if (st == HP_OK) st = rp_exec_sql(s, RP_WRITE_PRAGMAS " BEGIN;", "cannot configure the database");
  if (st == HP_OK && unusable) st = bulk_replay(s);
  rp_bulk_free(b);
  return st == HP_OK ? rp_prepare_inserts(s) : st;
}
