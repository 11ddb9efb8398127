/* The "log" format's reader (docs/formats/log.md): header, scan of every chunk with damage reported and never
 * fatal, small tables materialised, big tables decoded block by block by the cursors, and the guard that
 * turns a cut of the file while it is read into an error. */
/* SPDX-License-Identifier: MIT */
#include "fmt_log_internal.h"

#include "../common/hu_hash.h"
#include "../common/hu_io.h"
#include "../common/hu_map.h"
#include "../common/hu_varint.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- a log that shrinks while it is read ----
 * The reader maps the file; when another process truncates it, touching the pages that went away raises
 * SIGBUS. A handler installed once (at the first read) turns that into an error of the read in progress on
 * the faulting thread, which guards its accesses to the mapping with a sigsetjmp point; any other SIGBUS
 * goes to the handler that was there before, or ends the process as it would have without us. */
static __thread sigjmp_buf *t_guard;
static __thread const unsigned char *t_lo, *t_hi;
static struct sigaction g_old_bus;
static pthread_once_t g_bus_once = PTHREAD_ONCE_INIT;

static void on_sigbus(int sig, siginfo_t *si, void *uc) {
  const unsigned char *a = si ? (const unsigned char *)si->si_addr : NULL;
  if (t_guard && a >= t_lo && a < t_hi) siglongjmp(*t_guard, 1);
  if ((g_old_bus.sa_flags & SA_SIGINFO) && g_old_bus.sa_sigaction) {
    g_old_bus.sa_sigaction(sig, si, uc);
  } else if (!(g_old_bus.sa_flags & SA_SIGINFO) && g_old_bus.sa_handler != SIG_DFL &&
             g_old_bus.sa_handler != SIG_IGN) {
    g_old_bus.sa_handler(sig);
  } else { /* the default: a fault runs again and ends the process; a sent SIGBUS is sent again */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGBUS, &dfl, NULL);
    if (!si || si->si_code <= 0) raise(sig);
  }
}

static void bus_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK; /* NODEFER: not left blocked after the long jump */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, &g_old_bus);
}

/* Guarded access to [lo, hi): guard_save, then `if (sigsetjmp(g.jb, 0))` (a SIGBUS hit: guard_end and
 * fail), guard_set, the accesses, guard_end. */
typedef struct guard {
  sigjmp_buf jb;
  sigjmp_buf *prev;
  const unsigned char *lo, *hi;
} guard;
static void guard_save(guard *g) {
  g->prev = t_guard;
  g->lo = t_lo;
  g->hi = t_hi;
}
/* The signal fences keep the stores where they are: the accesses between are plain reads (a memcpy) that the
 * compiler knows cannot look at these variables, so without them it could drop the stores as dead. */
static void guard_set(guard *g, const unsigned char *lo, const unsigned char *hi) {
  t_lo = lo;
  t_hi = hi;
  t_guard = &g->jb;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
static void guard_end(guard *g) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  t_guard = g->prev;
  t_lo = g->lo;
  t_hi = g->hi;
}

/* ---- reader ---- */
typedef struct rblk {
  uint64_t off;  /* file offset of the payload */
  uint32_t len;  /* bytes of whole records in it */
  uint32_t mask; /* big tables with rows in it */
} rblk;

typedef struct rsmall {
  size_t n, cap;
  unsigned char *rows; /* n full row structs */
  uint64_t *seq;
  uint32_t *slot; /* hash: row index + 1, 0 = empty */
  size_t hcap;
} rsmall;

typedef struct arena {
  struct arena *next;
  size_t used, cap;
  char data[];
} arena;

/* What the scan of one chunk found, and its trailer (the chunk's last block) when it has one: chunk_end
 * compares them. Rows are counted as written: every record of a small table, every row of a big one. */
typedef struct cstate {
  uint64_t blocks, recs, rows[HP_TABLE_COUNT];
  uint32_t crc;   /* CRC-32C of the blocks' CRCs, as the writer computes it */
  int trailer;    /* a trailer was read */
  int in_trailer; /* the block just read held it */
  uint64_t t_seq, t_index, t_blocks, t_recs, t_crc, t_rows[HP_TABLE_COUNT];
} cstate;

/* A chunk the completeness check names: its blocks differ from its trailer (damaged), or it holds data and no
 * trailer (open: normal in a log that was not closed, damage in one that was). */
typedef struct cprob {
  uint64_t k, seq, lost; /* chunk index, sequence number, dispatches lost (known from its trailer) */
  int open;
} cprob;

typedef struct log_r {
  int fd;
  const unsigned char *map;
  size_t size;
  uint32_t header_size;
  uint64_t chunk_size;
  rblk *blk;
  size_t nblk, blkcap;
  uint64_t nvalid; /* complete blocks */
  rsmall small[HP_TABLE_COUNT];
  uint64_t nbig[HP_TABLE_COUNT];
  arena *arena;
  struct lostrec {
    uint64_t pid, n;
  } * lost;
  size_t nlost, lostcap;
  hp_status dmg; /* first damage found, kept until the block count is known */
  uint64_t dmg_off;
  uint64_t ndmg;      /* places with damage */
  uint64_t skipped;   /* bytes skipped over by resynchronisation */
  uint64_t data_end;  /* end of the data region skip_hole found last */
  uint64_t hole_from; /* only holes from here to the end of the file */
  int shrunk;         /* a SIGBUS ended a read: the file is no longer what was scanned */
  int grew;           /* the file grew since it was mapped (a writer still appends) */
  uint64_t ndmg_scan; /* damaged places the block scan found (the rest: completeness) */
  char dmg_msg[200];
  uint32_t version; /* the writer's */
  struct {
    int state; /* 1: read, 0: none (not closed, or a version-2 writer), -1: damaged */
    uint64_t chunks, blocks, recs, lost, rows[HP_TABLE_COUNT];
  } close;
  cstate cur;
  uint64_t found[HP_TABLE_COUNT]; /* rows read, counted as written (cstate) */
  uint64_t *seqs;                 /* the trailers' sequence numbers */
  size_t nseq, seqcap;
  cprob *probs;
  size_t nprob, probcap;
  char complete_msg[320]; /* what the completeness check found missing, for the damage message */
  char note[400];         /* what it could not prove (no closing record) */
  hp_dispatch *xrows; /* dispatches only the launch file holds (a log without closing record), after the */
  size_t nx;          /* blocks' rows (launch_rows) */
  struct stat id; /* the file as scanned (device, inode, size, times): hp_log_resume takes it again unread */
} log_r;

int hp_log_probe(const char *path, const unsigned char *head, size_t n) {
  (void)path;
  return n >= 8 && memcmp(head, LOG_MAGIC, 8) == 0;
}

static char *arena_alloc(log_r *R, size_t n) {
  if (!R->arena || R->arena->cap - R->arena->used < n) {
    size_t cap = n > 65536 ? n : 65536;
    arena *a = malloc(sizeof *a + cap);
    if (!a) return NULL;
    a->used = 0;
    a->cap = cap;
    a->next = R->arena;
    R->arena = a;
  }
  char *p = R->arena->data + R->arena->used;
  R->arena->used += n;
  return p;
}

static void damage(log_r *R, hp_status st, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void damage(log_r *R, hp_status st, uint64_t off, const char *fmt, ...) {
  if (R->ndmg++ > 0) return;
  R->dmg = st;
  R->dmg_off = off;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(R->dmg_msg, sizeof R->dmg_msg, fmt, ap);
  va_end(ap);
}

/* Decode the columns of one record into an initialised full row; strings are copied, NUL-terminated,
 * into sbuf (room for the payload length plus one byte per column). Lenient: a column that does not
 * decode ends the row, so count and cursor always agree. Missing trailing columns keep 0 / "". */
static void decode_cols(const hp_table_desc *d, const unsigned char *p, const unsigned char *end, void *row,
                        char *sbuf) {
  char *r = row;
  for (size_t i = 0; i < d->ncolumns && p < end; i++) {
    const hp_column *c = &d->columns[i];
    uint64_t v;
    if (c->type == HP_COL_F64) {
      if (end - p < 8) return;
      v = hu_get_le64(p);
      p += 8;
      memcpy(r + c->offset, &v, 8);
      continue;
    }
    if (!hu_varint_get(&p, end, &v)) return;
    switch (c->type) {
    case HP_COL_U32: {
      uint32_t x = (uint32_t)v;
      memcpy(r + c->offset, &x, 4);
      break;
    }
    case HP_COL_I32: {
      int32_t x = (int32_t)hu_unzigzag(v);
      memcpy(r + c->offset, &x, 4);
      break;
    }
    case HP_COL_I64: {
      int64_t x = hu_unzigzag(v);
      memcpy(r + c->offset, &x, 8);
      break;
    }
    case HP_COL_STR: {
      if (v > (uint64_t)(end - p)) return;
      memcpy(sbuf, p, (size_t)v);
      sbuf[v] = 0;
      const char *str = sbuf;
      memcpy(r + c->offset, &str, sizeof str);
      sbuf += v + 1;
      p += v;
      break;
    }
    default: memcpy(r + c->offset, &v, 8); break;
    }
  }
}

static uint64_t row_hash(const tinfo *ti, const void *row) {
  const hp_column *c = &ti->d->columns[0];
  if (c->type == HP_COL_STR) {
    const char *k;
    memcpy(&k, (const char *)row + c->offset, sizeof k);
    return hu_hash_str(k);
  }
  uint64_t id;
  memcpy(&id, (const char *)row + c->offset, 8);
  return hu_mix64(id);
}

static int row_key_eq(const tinfo *ti, const void *a, const void *b) {
  const hp_column *c = &ti->d->columns[0];
  if (c->type == HP_COL_STR) {
    const char *x, *y;
    memcpy(&x, (const char *)a + c->offset, sizeof x);
    memcpy(&y, (const char *)b + c->offset, sizeof y);
    return strcmp(x, y) == 0;
  }
  return memcmp((const char *)a + c->offset, (const char *)b + c->offset, 8) == 0;
}

/* Index of the row with the same key as `row` in t's table, or -1; *slot gets where to insert. */
static long small_find(const tinfo *ti, rsmall *S, const void *row, size_t *slot) {
  size_t mask = S->hcap - 1, i = (size_t)row_hash(ti, row) & mask;
  size_t rs = ti->d->row_size;
  for (; S->slot[i]; i = (i + 1) & mask)
    if (row_key_eq(ti, S->rows + (S->slot[i] - 1) * rs, row)) return (long)(S->slot[i] - 1);
  *slot = i;
  return -1;
}

static int small_grow(const tinfo *ti, rsmall *S) {
  size_t rs = ti->d->row_size;
  if (S->n == S->cap) {
    size_t cap = S->cap ? S->cap * 2 : 16;
    unsigned char *rows = realloc(S->rows, cap * rs);
    if (!rows) return 0;
    S->rows = rows;
    uint64_t *seq = realloc(S->seq, cap * sizeof *seq);
    if (!seq) return 0;
    S->seq = seq;
    S->cap = cap;
  }
  if ((S->n + 1) * 2 > S->hcap) {
    size_t hcap = S->hcap ? S->hcap * 2 : 32;
    uint32_t *slot = calloc(hcap, sizeof *slot);
    if (!slot) return 0;
    free(S->slot);
    S->slot = slot;
    S->hcap = hcap;
    for (size_t i = 0; i < S->n; i++) {
      size_t j = (size_t)row_hash(ti, S->rows + i * rs) & (hcap - 1);
      while (slot[j])
        j = (j + 1) & (hcap - 1);
      slot[j] = (uint32_t)(i + 1);
    }
  }
  return 1;
}

/* Materialise one small-table record: the row with the highest sequence per key wins; it keeps the
 * place of the key's first row. */
static hp_status small_add(log_r *R, hp_table t, const unsigned char *p, const unsigned char *end) {
  const tinfo *ti = &hp_log_ti[t];
  rsmall *S = &R->small[t];
  if (!small_grow(ti, S)) return HP_ERR_NOMEM;
  uint64_t seq = 0;
  if (!hu_varint_get(&p, end, &seq)) p = end;
  char *sbuf = arena_alloc(R, (size_t)(end - p) + ti->d->ncolumns + 1);
  if (!sbuf) return HP_ERR_NOMEM;
  unsigned char *row = S->rows + S->n * ti->d->row_size; /* decode into the spare slot at the end */
  hp_row_init(t, row);
  decode_cols(ti->d, p, end, row, sbuf);
  size_t slot = 0;
  long i = small_find(ti, S, row, &slot);
  if (i < 0) {
    S->slot[slot] = (uint32_t)(S->n + 1);
    S->seq[S->n++] = seq;
  } else if (seq >= S->seq[i]) {
    memcpy(S->rows + (size_t)i * ti->d->row_size, row, ti->d->row_size);
    S->seq[i] = seq;
  }
  return HP_OK;
}

static hp_status add_lost(log_r *R, const unsigned char *p, const unsigned char *end) {
  uint64_t pid = 0, n = 0;
  if (!hu_varint_get(&p, end, &pid)) return HP_OK;
  hu_varint_get(&p, end, &n);
  if (R->nlost == R->lostcap) {
    size_t cap = R->lostcap ? R->lostcap * 2 : 8;
    struct lostrec *l = realloc(R->lost, cap * sizeof *l);
    if (!l) return HP_ERR_NOMEM;
    R->lost = l;
    R->lostcap = cap;
  }
  R->lost[R->nlost++] = (struct lostrec){pid, n};
  return HP_OK;
}

/* Add LOST counts into their processes (process 1, or the first process, when the id is unknown). */
static hp_status apply_lost(log_r *R) {
  const tinfo *ti = &hp_log_ti[HP_TABLE_PROCESS];
  rsmall *S = &R->small[HP_TABLE_PROCESS];
  for (size_t k = 0; k < R->nlost; k++) {
    if (!R->lost[k].n) continue;
    hp_process key;
    hp_row_init(HP_TABLE_PROCESS, &key);
    long i = -1;
    size_t slot;
    if (S->n && R->lost[k].pid) {
      key.id = R->lost[k].pid;
      i = small_find(ti, S, &key, &slot);
    }
    if (i < 0 && S->n) {
      key.id = 1;
      i = small_find(ti, S, &key, &slot);
      if (i < 0) i = 0;
    }
    if (i < 0) { /* no process row at all: make one, so the loss is seen */
      if (!small_grow(ti, S)) return HP_ERR_NOMEM;
      key.id = 1;
      small_find(ti, S, &key, &slot);
      memcpy(S->rows, &key, sizeof key);
      S->slot[slot] = 1;
      S->seq[0] = 0;
      S->n = 1;
      i = 0;
    }
    hp_process *p = (hp_process *)(void *)(S->rows + (size_t)i * sizeof(hp_process));
    p->lost_records = p->lost_records + R->lost[k].n < p->lost_records ? UINT64_MAX /* never wraps to 0 */
                                                                       : p->lost_records + R->lost[k].n;
  }
  return HP_OK;
}

/* The rows of a dispatch batch record [p, end): 1 with *n and *rows (where the first row starts) set, or 0
 * when the count does not decode or exceeds the bytes left (every row takes at least one byte, so a crafted
 * count cannot make a reader's work exceed the file's data). */
static int dbatch_open(const unsigned char *p, const unsigned char *end, uint64_t *n,
                       const unsigned char **rows) {
  uint64_t k;
  if (!hu_varint_get(&p, end, &k) || k > (uint64_t)(end - p)) return 0;
  *n = k;
  *rows = p;
  return 1;
}

/* Decode the next row of a dispatch batch at *pp (before end) into row (initialised): prev holds the
 * previous row's columns as 64-bit integers (zeros before the first) and gets this row's. Mask bit c (bit c%7
 * of mask byte c/7; a byte with bit 7 set is followed by another) says column c changed: a zigzag varint
 * follows, added mod 2^64. Columns this reader does not know are read and dropped. Lenient like decode_cols:
 * bytes that do not decode end the row (its remaining columns keep their previous values). */
static void dbatch_row(const tinfo *ti, const unsigned char **pp, const unsigned char *end, uint64_t *prev,
                       void *row) {
  const unsigned char *m = *pp, *p = m;
  while (p < end && (*p & 0x80))
    p++;
  if (p < end) {
    const size_t nmask = (size_t)(++p - m);
    for (size_t c = 0; c < 7 * nmask; c++) {
      uint64_t v;
      if (!(m[c / 7] >> (c % 7) & 1)) continue;
      if (!hu_varint_get(&p, end, &v)) {
        p = end;
        break;
      }
      if (c < ti->ncols) prev[c] += (uint64_t)hu_unzigzag(v);
    }
  }
  *pp = p;
  char *r = row;
  for (unsigned c = 0; c < ti->ncols; c++) {
    const col_op o = ti->ops[c];
    if (o.kind == K_U32 || o.kind == K_I32) {
      uint32_t x = (uint32_t)prev[c];
      memcpy(r + o.off, &x, 4);
    } else if (o.kind != K_STR) {
      memcpy(r + o.off, &prev[c], 8);
    }
  }
}

/* A chunk trailer record [p, end) into c (ignored when it does not decode: the chunk then has none). */
static void read_trailer(cstate *c, const unsigned char *p, const unsigned char *end) {
  uint64_t f[6];
  for (int i = 0; i < 6; i++)
    if (!hu_varint_get(&p, end, &f[i])) return;
  uint64_t rows[HP_TABLE_COUNT] = {0};
  for (uint64_t t = 0; t < f[5]; t++) { /* tables of a newer writer beyond ours: read and dropped */
    uint64_t v;
    if (!hu_varint_get(&p, end, &v)) return;
    if (t < HP_TABLE_COUNT) rows[t] = v;
  }
  c->t_seq = f[0];
  c->t_index = f[1];
  c->t_blocks = f[2];
  c->t_recs = f[3];
  c->t_crc = f[4];
  memcpy(c->t_rows, rows, sizeof rows);
  c->trailer = c->in_trailer = 1;
}

/* Walk the records of a complete block: materialise small tables, count big ones, index the block. */
static hp_status scan_records(log_r *R, uint64_t poff, uint32_t len, uint32_t count) {
  const unsigned char *p = R->map + poff, *start = p, *end = p + len;
  uint32_t mask = 0, nrec = 0;
  int framed = 1;
  while (p < end) {
    const unsigned char *rec = p;
    uint64_t type, plen;
    if (!hu_varint_get(&p, end, &type) || !hu_varint_get(&p, end, &plen) || plen > (uint64_t)(end - p)) {
      damage(R, HP_ERR_CORRUPT, (uint64_t)(rec - R->map), "malformed record at byte %llu",
             (unsigned long long)(rec - R->map));
      R->skipped += (uint64_t)(end - rec);
      end = rec;
      framed = 0;
      break;
    }
    const unsigned char *q = p;
    p += plen;
    nrec++;
    if (type >= 1 && type <= HP_TABLE_COUNT) {
      hp_table t = (hp_table)(type - 1);
      R->cur.rows[t]++;
      if (hp_log_ti[t].small) {
        hp_status st = small_add(R, t, q, p);
        if (st != HP_OK) return st;
      } else {
        R->nbig[t]++;
        mask |= 1u << t;
      }
    } else if (type == REC_LOST) {
      hp_status st = add_lost(R, q, p);
      if (st != HP_OK) return st;
    } else if (type == REC_DBATCH) {
      uint64_t n;
      const unsigned char *rows;
      if (dbatch_open(q, p, &n, &rows)) {
        R->nbig[HP_TABLE_DISPATCH] += n;
        R->cur.rows[HP_TABLE_DISPATCH] += n;
        mask |= 1u << HP_TABLE_DISPATCH;
      } else {
        damage(R, HP_ERR_CORRUPT, (uint64_t)(rec - R->map), "malformed dispatch batch at byte %llu",
               (unsigned long long)(rec - R->map));
      }
    } else if (type == REC_CHUNK && count == 1) {
      read_trailer(&R->cur, q, p);
    } /* other types: a newer writer's records, skipped */
  }
  if (framed && nrec != count)
    damage(R, HP_ERR_CORRUPT, poff - BLK_HDR, "block at byte %llu says %u records, holds %u",
           (unsigned long long)(poff - BLK_HDR), count, nrec);
  R->nvalid++;
  if (!mask) return HP_OK;
  if (R->nblk == R->blkcap) {
    size_t cap = R->blkcap ? R->blkcap * 2 : 64;
    rblk *b = realloc(R->blk, cap * sizeof *b);
    if (!b) return HP_ERR_NOMEM;
    R->blk = b;
    R->blkcap = cap;
  }
  R->blk[R->nblk++] = (rblk){poff, (uint32_t)(end - start), mask};
  return HP_OK;
}

static uint32_t load_magic(const unsigned char *p) {
  uint32_t v = __atomic_load_n((const uint32_t *)(const void *)p, __ATOMIC_ACQUIRE);
  unsigned char b[4];
  memcpy(b, &v, 4);
  return hu_get_le32(b);
}

/* A complete, valid block at pos (within chunk end cend and the file)? *budget: bytes of checksum work
 * left for this chunk's resynchronisation (NULL: no limit), so crafted files cannot make it quadratic. */
static int block_ok(const log_r *R, uint64_t pos, uint64_t cend, uint64_t *budget) {
  const unsigned char *h = R->map + pos;
  uint32_t len = hu_get_le32(h + 4);
  if (len > cend - pos - BLK_HDR || pos + BLK_HDR + len > R->size) return 0;
  if (budget) {
    if (*budget < len) return 0;
    *budget -= len;
  }
  uint32_t crc = hp_crc32c(0, h + 4, 8);
  return hp_crc32c(crc, h + BLK_HDR, len) == hu_get_le32(h + 12);
}

/* The first offset at or after the 8-aligned `q` that may hold data: holes of a sparse file (SEEK_DATA,
 * SEEK_HOLE) are skipped unread, so a reader's time follows the file's data, not its size. R->data_end
 * caches the end of the data region last found. */
static uint64_t skip_hole(log_r *R, uint64_t q) {
  if (q < R->data_end || q >= R->size) return q;
  if (q >= R->hole_from) return R->size;
  off_t d = lseek(R->fd, (off_t)q, SEEK_DATA);
  if (d < 0) { /* ENXIO: only holes follow, or q is past the end of a file cut since it was mapped (an
                  error of the read, never a shorter answer); anything else: no hole support, read all */
    struct stat sb;
    if (errno == ENXIO && fstat(R->fd, &sb) == 0 && (uint64_t)sb.st_size < R->size) R->shrunk = 1;
    if (errno != ENXIO)
      R->data_end = R->size;
    else
      R->hole_from = q;
    return errno == ENXIO ? R->size : q;
  }
  off_t e = lseek(R->fd, d, SEEK_HOLE);
  R->data_end = e < 0 || (uint64_t)e > R->size ? R->size : (uint64_t)e;
  uint64_t a = (uint64_t)d & ~(uint64_t)7;
  return a > q ? a : q;
}

/* The next valid block (magic, length and CRC right) at 8-byte steps from `q` inside the chunk ending at
 * cend, or 0 when there is none. *budget bounds the checksum work. */
static uint64_t next_block(log_r *R, uint64_t q, uint64_t cend, uint64_t *budget) {
  uint64_t lim = cend < R->size ? cend : R->size;
  for (; (q = skip_hole(R, q)) + BLK_HDR <= lim; q += 8)
    if (load_magic(R->map + q) == BLK_MAGIC && block_ok(R, q, cend, budget)) return q;
  return 0;
}

static int push_seq(log_r *R, uint64_t seq) {
  if (R->nseq == R->seqcap) {
    size_t cap = R->seqcap ? R->seqcap * 2 : 64;
    uint64_t *n = realloc(R->seqs, cap * sizeof *n);
    if (!n) return 0;
    R->seqs = n;
    R->seqcap = cap;
  }
  R->seqs[R->nseq++] = seq;
  return 1;
}

static int push_prob(log_r *R, cprob p) {
  if (R->nprob == R->probcap) {
    size_t cap = R->probcap ? R->probcap * 2 : 16;
    cprob *n = realloc(R->probs, cap * sizeof *n);
    if (!n) return 0;
    R->probs = n;
    R->probcap = cap;
  }
  R->probs[R->nprob++] = p;
  return 1;
}

/* The end of chunk k's scan: its rows added to what was read, and what it holds compared with its trailer
 * (damage: a block lost, zeroed or changed, named with the dispatches it held). dmg: damage was found in it.
 */
static hp_status chunk_end(log_r *R, uint64_t k, int dmg) {
  const cstate *c = &R->cur;
  for (int t = 0; t < HP_TABLE_COUNT; t++)
    R->found[t] += c->rows[t];
  if (R->version < 3) return HP_OK;
  if (!c->trailer) {
    if ((c->blocks || dmg) && !push_prob(R, (cprob){k, 0, 0, 1})) return HP_ERR_NOMEM;
    return HP_OK;
  }
  if (!push_seq(R, c->t_seq)) return HP_ERR_NOMEM;
  int same = c->t_index == k && c->t_blocks == c->blocks && c->t_recs == c->recs && c->t_crc == c->crc;
  for (int t = 0; t < HP_TABLE_COUNT; t++)
    same &= c->t_rows[t] == c->rows[t];
  if (same) return HP_OK;
  const uint64_t d = HP_TABLE_DISPATCH, lost = c->t_rows[d] > c->rows[d] ? c->t_rows[d] - c->rows[d] : 0;
  damage(R, HP_ERR_CORRUPT, R->header_size + k * R->chunk_size,
         "chunk %llu (sequence %llu) holds %llu of its %llu blocks, %llu of its %llu dispatches",
         (unsigned long long)k, (unsigned long long)c->t_seq, (unsigned long long)c->blocks,
         (unsigned long long)c->t_blocks, (unsigned long long)c->rows[d], (unsigned long long)c->t_rows[d]);
  return push_prob(R, (cprob){k, c->t_seq, lost, 0}) ? HP_OK : HP_ERR_NOMEM;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Append to buf (size n, NUL-terminated) what fmt gives, whole or not at all: a piece that does not fit
 * leaves " ..." instead (once), never half a number. */
static void append(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t n, const char *fmt, ...) {
  size_t l = strlen(buf);
  if (l + 1 >= n) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(buf + l, n - l, fmt, ap);
  va_end(ap);
  if (w >= 0 && l + (size_t)w < n) return;
  buf[l] = 0;
  if (l >= 4 && strcmp(buf + l - 4, " ...") == 0) return;
  if (l + 4 >= n) l = n - 5;
  memcpy(buf + l, " ...", 5);
}

/* Sequence numbers below `upto` that no trailer holds (the trailers' sorted): the chunks missing; each listed
 * (up to 6) into buf. Returns how many; *dup gets sequence numbers seen twice. */
static uint64_t missing_seqs(log_r *R, uint64_t upto, char *buf, size_t n, uint64_t *dup) {
  uint64_t miss = 0, expect = 0;
  *dup = 0;
  for (size_t i = 0; i <= R->nseq; i++) {
    uint64_t s = i < R->nseq ? R->seqs[i] : upto;
    if (s > upto) s = upto;
    if (i && i < R->nseq && s == R->seqs[i - 1]) {
      ++*dup;
      continue;
    }
    for (; expect < s; expect++, miss++)
      if (miss < 6) append(buf, n, "%s%llu", miss ? ", " : "", (unsigned long long)expect);
    expect = s + 1;
  }
  if (miss > 6) append(buf, n, ", ... (%llu in all)", (unsigned long long)miss);
  return miss;
}

/* The log's completeness (version 3): every chunk the closing record counts has its trailer, every chunk
 * holds what its trailer says, and the rows read are the rows written. What is missing becomes damage
 * (R->complete_msg, named chunk by chunk, with the dispatches lost); a log without a closing record gets a
 * note, and damage only for what its trailers prove missing. */
static hp_status completeness(log_r *R) {
  R->ndmg_scan = R->ndmg;
  if (R->version < 3) return HP_OK;
  if (R->nseq) qsort(R->seqs, R->nseq, sizeof *R->seqs, cmp_u64);
  char *m = R->complete_msg, seqs[120] = "";
  const size_t mn = sizeof R->complete_msg;
  const int closed = R->close.state == 1;
  if (R->close.state < 0) {
    damage(R, HP_ERR_CORRUPT, CLOSE_OFF, "closing record damaged");
    append(m, mn, "the closing record is damaged (its counts are not used)");
  }
  if (closed) { /* the rows first, dispatches first: what a cut message must keep */
    char rows[150] = "";
    int any = 0;
    for (int i = 0; i < HP_TABLE_COUNT; i++) {
      int t = i == 0 ? (int)HP_TABLE_DISPATCH : i <= (int)HP_TABLE_DISPATCH ? i - 1 : i;
      uint64_t w = R->close.rows[t], f = R->found[t];
      if (w == f) continue;
      if (!any++) damage(R, HP_ERR_CORRUPT, R->size, "rows missing");
      const char *name = hp_table_describe((hp_table)t)->name,
                 *what = hp_log_ti[t].small ? "records" : "rows";
      if (f < w)
        append(rows, sizeof rows, "%s%llu of %llu %s %s", *rows ? ", " : "", (unsigned long long)(w - f),
               (unsigned long long)w, name, what);
      else
        append(rows, sizeof rows, "%s%llu %s %s more than written", *rows ? ", " : "",
               (unsigned long long)(f - w), name, what);
    }
    if (any) append(m, mn, "%slost %s (from the closing record)", *m ? "; " : "", rows);
  }
  uint64_t top = closed ? R->close.chunks : (R->nseq ? R->seqs[R->nseq - 1] + 1 : 0), dup;
  uint64_t miss = missing_seqs(R, top, seqs, sizeof seqs, &dup);
  uint64_t known = 0, nopen = 0;
  for (size_t i = 0; i < R->nprob; i++) {
    nopen += R->probs[i].open;
    known += R->probs[i].lost;
  }
  const uint64_t D = HP_TABLE_DISPATCH, bound = R->chunk_size / 4; /* a dispatch row takes 4 bytes at least */
  if (miss) {
    damage(R, HP_ERR_CORRUPT, R->size, "chunks missing");
    append(m, mn, "%s%llu chunk%s missing (sequence %s: zeroed, cut or absent", *m ? "; " : "",
           (unsigned long long)miss, miss == 1 ? "" : "s", seqs);
    if (!closed)
      append(m, mn, "; at most %llu dispatches each)", (unsigned long long)bound);
    else if (R->close.rows[D] >= R->found[D] + known && !nopen)
      append(m, mn, "; %llu dispatches%s)", (unsigned long long)(R->close.rows[D] - R->found[D] - known),
             miss == 1 ? "" : " together");
    else
      append(m, mn, ")");
  }
  if (dup) {
    damage(R, HP_ERR_CORRUPT, R->size, "a chunk sequence number twice");
    append(m, mn, "%s%llu chunk sequence number%s twice", *m ? "; " : "", (unsigned long long)dup,
           dup == 1 ? "" : "s");
  }
  size_t listed = 0;
  for (size_t i = 0; i < R->nprob; i++) {
    const cprob *p = &R->probs[i];
    if (p->open && !closed) continue; /* open when the writer stopped: normal without a closing record */
    if (p->open) damage(R, HP_ERR_CORRUPT, R->header_size + p->k * R->chunk_size, "chunk without trailer");
    if (listed++ >= 6) continue;
    if (p->open)
      append(m, mn, "%schunk %llu has no trailer (cut or damaged)", *m ? "; " : "", (unsigned long long)p->k);
    else
      append(m, mn, "%schunk %llu (sequence %llu) damaged: %llu dispatches lost", *m ? "; " : "",
             (unsigned long long)p->k, (unsigned long long)p->seq, (unsigned long long)p->lost);
  }
  if (listed > 6) append(m, mn, "; ... (%zu chunks in all)", listed);
  if (R->close.state == 0) {
    snprintf(R->note, sizeof R->note,
             "no closing record (the writer did not close it: killed, or still writing): its %llu complete "
             "blocks are read, its completeness cannot be proven",
             (unsigned long long)R->nvalid);
  }
  return HP_OK;
}

/* Bounded residency of a mapped input (issue 31): a reader going through the mapping in file order drops the
 * pages it has passed from this process, one window at a time (MADV_DONTNEED on a file mapping: the page
 * cache keeps them, a later read faults them in again), so that RSS stays flat however large the log. *from
 * is the offset released up to so far; upto, where the reader is now. */
#define MAP_WINDOW ((uint64_t)8 << 20)
static void map_release(const unsigned char *map, uint64_t *from, uint64_t upto) {
  if (!map || upto < *from + MAP_WINDOW) return;
  upto &= ~(uint64_t)4095; /* the mapping starts on a page; pages are 4 KiB or a multiple of it */
  long pg = sysconf(_SC_PAGESIZE);
  if (pg > 4096) upto &= ~(uint64_t)(pg - 1);
  if (upto > *from && madvise((void *)(uintptr_t)(map + *from), upto - *from, MADV_DONTNEED) == 0)
    *from = upto;
}

/* Scan every chunk once, block by block. Damage is recorded, never fatal; after a bad block the scan
 * looks for the next valid block of the chunk at 8-byte steps. */
static hp_status scan(log_r *R) {
  const uint64_t size = R->size, cs = R->chunk_size;
  uint64_t released = 0;
  for (uint64_t k = 0;; k++) {
    uint64_t cstart = R->header_size + k * cs;
    if (cstart >= size) break;
    map_release(R->map, &released, cstart);
    uint64_t d = skip_hole(R, cstart);
    if (d >= cstart + cs) { /* the whole chunk is a hole: go to the chunk of the next data */
      k = (d - R->header_size) / cs - 1;
      continue;
    }
    uint64_t cend = cstart + cs, pos = cstart, nblocks = 0, budget = 4 * cs, ndmg0 = R->ndmg;
    memset(&R->cur, 0, sizeof R->cur);
    for (;;) {
      if (pos + BLK_HDR > cend) break; /* no room for another block */
      if (pos + BLK_HDR > size) {      /* the file ends inside this chunk */
        int partial = 0;
        for (uint64_t i = pos; i < size; i++)
          partial |= R->map[i] != 0;
        if (partial)
          damage(R, HP_ERR_TRUNCATED, pos, "truncated at byte %llu (block at %llu incomplete)",
                 (unsigned long long)size, (unsigned long long)pos);
        else if (nblocks)
          damage(R, HP_ERR_TRUNCATED, size, "truncated at byte %llu (chunk %llu incomplete)",
                 (unsigned long long)size, (unsigned long long)k);
        break;
      }
      const unsigned char *h = R->map + pos;
      uint32_t magic = load_magic(h);
      if (magic == 0) {
        /* Nothing more committed in this chunk, unless valid blocks follow: then this header was lost
         * (a write-back that never reached the disk) and what lies between is damage. */
        uint64_t q = next_block(R, pos + 8, cend, &budget);
        if (q) {
          damage(R, HP_ERR_CORRUPT, pos, "zeroed block header at byte %llu (valid blocks follow it)",
                 (unsigned long long)pos);
          R->skipped += q - pos;
          pos = q;
          continue;
        }
        if (cend > size && nblocks)
          damage(R, HP_ERR_TRUNCATED, size, "truncated at byte %llu (chunk %llu incomplete)",
                 (unsigned long long)size, (unsigned long long)k);
        break;
      }
      uint32_t len = hu_get_le32(h + 4);
      const char *why = NULL;
      if (magic != BLK_MAGIC)
        why = "bad block magic";
      else if (len > cend - pos - BLK_HDR)
        why = "bad block length";
      else if (pos + BLK_HDR + len > size) {
        damage(R, HP_ERR_TRUNCATED, pos, "truncated at byte %llu (block at %llu incomplete)",
               (unsigned long long)size, (unsigned long long)pos);
        break;
      } else if (!block_ok(R, pos, cend, NULL))
        why = "bad block checksum";
      if (why) {
        damage(R, HP_ERR_CORRUPT, pos, "%s at byte %llu", why, (unsigned long long)pos);
        uint64_t q = next_block(R, pos + 8, cend, &budget);
        R->skipped += (q ? q : (cend < size ? cend : size)) - pos;
        if (!q) break;
        pos = q;
        continue;
      }
      hp_status st = scan_records(R, pos + BLK_HDR, len, hu_get_le32(h + 8));
      if (st != HP_OK) return st;
      if (R->cur.in_trailer) {
        R->cur.in_trailer = 0;
      } else {
        R->cur.blocks++;
        R->cur.recs += hu_get_le32(h + 8);
        R->cur.crc = hp_crc32c(R->cur.crc, h + 12, 4);
      }
      nblocks++;
      pos = align8(pos + BLK_HDR + len);
    }
    if (chunk_end(R, k, R->ndmg > ndmg0) != HP_OK) return HP_ERR_NOMEM;
  }
  hp_status st = apply_lost(R);
  return st == HP_OK ? completeness(R) : st;
}

static void free_log_r(log_r *R) {
  if (!R) return;
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    free(R->small[t].rows);
    free(R->small[t].seq);
    free(R->small[t].slot);
  }
  while (R->arena) {
    arena *n = R->arena->next;
    free(R->arena);
    R->arena = n;
  }
  free(R->blk);
  free(R->lost);
  free(R->seqs);
  free(R->probs);
  free(R->xrows);
  if (R->map) munmap((void *)R->map, R->size);
  if (R->fd >= 0) close(R->fd);
  free(R);
}

void hp_log_close_read(hp_store *s) {
  free_log_r(s->impl);
  s->impl = NULL;
}

/* The closing record (version 3, in the header page): R->close.state 1 with its counts, 0 when there is none
 * (all zeros: the writer did not close the log), -1 when it is there but does not check. */
static void read_closing(log_r *R) {
  if (R->version < 3 || R->header_size < CLOSE_OFF + CLOSE_SIZE(0)) return;
  const unsigned char *c = R->map + CLOSE_OFF;
  if (memcmp(c, CLOSE_MAGIC, 8) != 0) {
    for (uint32_t i = 0; i < CLOSE_SIZE(HP_TABLE_COUNT) && CLOSE_OFF + i < R->header_size; i++)
      if (c[i]) R->close.state = -1;
    return;
  }
  uint32_t size = hu_get_le32(c + 8), nt = hu_get_le32(c + CLOSE_NTABLES);
  R->close.state = -1;
  if (nt > 1024 || size != CLOSE_SIZE(nt) || CLOSE_OFF + size > R->header_size ||
      hp_crc32c(0, c, size - 4) != hu_get_le32(c + size - 4))
    return;
  R->close.chunks = hu_get_le64(c + CLOSE_CHUNKS);
  R->close.blocks = hu_get_le64(c + CLOSE_BLOCKS);
  R->close.recs = hu_get_le64(c + CLOSE_RECORDS);
  R->close.lost = hu_get_le64(c + CLOSE_LOST);
  for (uint32_t t = 0; t < nt && t < HP_TABLE_COUNT; t++) /* a newer writer's tables: not ours to count */
    R->close.rows[t] = hu_get_le64(c + CLOSE_ROWS + 8u * t);
  R->close.state = 1;
}

/* The file's size is no longer the one it was mapped with: it shrank (another process cut it) or grew (a
 * writer still appends to it). Either way the answer would be of a file that is not there: an error, never a
 * shorter answer. Sets R->shrunk or R->grew. */
static int size_changed(log_r *R) {
  struct stat sb;
  if (R->shrunk || R->grew) return 1;
  if (R->fd < 0 || fstat(R->fd, &sb) != 0 || (uint64_t)sb.st_size == R->size) return 0;
  if ((uint64_t)sb.st_size < R->size)
    R->shrunk = 1;
  else
    R->grew = 1;
  return 1;
}

static const char *size_changed_why(const log_r *R) {
  return R->grew && !R->shrunk
             ? "the file grew while being read (a writer still appends to it: read it when it is done)"
             : "the file shrank while being read (cut by another process)";
}

/* Check the header; sets the store's error when the file cannot be read as a log. */
static hp_status check_header(hp_store *s, log_r *R) {
  const unsigned char *h = R->map;
  size_t n = R->size;
  if (memcmp(h, LOG_MAGIC, n < 8 ? n : 8) != 0)
    return hp_set_error(s, HP_ERR_FORMAT, "not a hubprof log (no HUBPLOG magic)");
  if (n < 24) return hp_set_error(s, HP_ERR_TRUNCATED, "truncated log header (%zu bytes)", n);
  uint32_t ver = hu_get_le32(h + 8), minver = hu_get_le32(h + 12), hs = hu_get_le32(h + 16);
  if (minver > LOG_VERSION)
    return hp_set_error(s, HP_ERR_VERSION, "log version %u needs a reader of version %u; this build reads %u",
                        ver, minver, LOG_VERSION);
  if (hs < HDR_FIXED || hs % 8 || hs > (1u << 20))
    return hp_set_error(s, HP_ERR_CORRUPT, "bad log header size %u", hs);
  if (n < hs) return hp_set_error(s, HP_ERR_TRUNCATED, "truncated log header (%zu of %u bytes)", n, hs);
  if (hp_crc32c(0, h, HDR_CRC_OFF) != hu_get_le32(h + HDR_CRC_OFF))
    return hp_set_error(s, HP_ERR_CORRUPT, "bad log header checksum");
  uint64_t cs = hu_get_le64(h + 24);
  if (cs < MIN_CHUNK || cs > MAX_CHUNK || (cs & (cs - 1)))
    return hp_set_error(s, HP_ERR_CORRUPT, "bad chunk size %llu in log header", (unsigned long long)cs);
  R->header_size = hs;
  R->chunk_size = cs;
  R->version = ver;
  read_closing(R);
  return HP_OK;
}

static hp_status launch_rows(hp_store *s, log_r *R);

hp_status hp_log_open_read(hp_store *s) {
  hp_log_ti_init();
  log_r *R = calloc(1, sizeof *R);
  if (!R) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  R->hole_from = UINT64_MAX;
  R->fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
                            O_NOCTTY); /* a FIFO or device is refused below, not waited on */
  hp_status st;
  struct stat sb;
  if (R->fd < 0) {
    int e = errno;
    st = hp_set_error(s, e == ENOENT ? HP_ERR_NOT_FOUND : HP_ERR_IO, "cannot open: %s", strerror(e));
  } else if (fstat(R->fd, &sb) != 0) {
    st = hp_set_error(s, HP_ERR_IO, "cannot stat: %s", strerror(errno));
  } else if (!S_ISREG(sb.st_mode)) {
    st = hp_set_error(s, HP_ERR_FORMAT, "not a hubprof log (not a regular file)");
  } else if (sb.st_size == 0) {
    st = hp_set_error(s, HP_ERR_FORMAT, "not a hubprof log (empty file)");
  } else {
    R->size = (size_t)sb.st_size;
    R->id = sb;
    void *m = mmap(NULL, R->size, PROT_READ, MAP_SHARED, R->fd, 0);
    if (m == MAP_FAILED) {
      R->size = 0;
      st = hp_set_error(s, HP_ERR_IO, "cannot map: %s", strerror(errno));
    } else {
      R->map = m;
      pthread_once(&g_bus_once, bus_install);
      guard g;
      guard_save(&g);
      if (sigsetjmp(g.jb, 0)) {
        guard_end(&g);
        st = hp_set_error(s, HP_ERR_IO, "the file shrank while being read (cut by another process)");
      } else {
        guard_set(&g, R->map, R->map + R->size);
        st = check_header(s, R);
        if (st == HP_OK) st = scan(R);
        guard_end(&g);
        if (st == HP_OK && (R->shrunk || size_changed(R)))
          st = hp_set_error(s, HP_ERR_IO, "%s", size_changed_why(R));
      }
      if (st == HP_ERR_NOMEM) hp_set_error(s, st, "out of memory");
    }
  }
  char *schema = st == HP_OK ? strdup("1") : NULL;
  if (st == HP_OK && !schema) st = hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  if (st != HP_OK) {
    free_log_r(R);
    return st;
  }
  s->schema_version = schema;
  s->impl = R;
  if (R->version >= 3 && R->close.state == 0 && (st = launch_rows(s, R)) != HP_OK) {
    s->impl = NULL;
    free(s->schema_version);
    s->schema_version = NULL;
    free_log_r(R);
    return st;
  }
  if (R->dmg != HP_OK)
    hp_set_damage(s, R->dmg, R->dmg_off,
                  "%s%s%s%s; %llu complete blocks recovered, %llu damaged place%s, %llu bytes skipped",
                  R->ndmg_scan ? R->dmg_msg : "", R->ndmg_scan && *R->complete_msg ? "; " : "",
                  *R->complete_msg ? "incomplete: " : "", *R->complete_msg ? R->complete_msg : "",
                  (unsigned long long)R->nvalid, (unsigned long long)R->ndmg, R->ndmg == 1 ? "" : "s",
                  (unsigned long long)R->skipped);
  if (*R->note) hp_set_note(s, "%s", R->note);
  return HP_OK;
}

/* Park (hp_store_park): the file closed and unmapped, what the scan found kept. */
int hp_log_park(hp_store *s) {
  log_r *R = s->impl;
  if (!R || R->shrunk) return 0;
  munmap((void *)R->map, R->size);
  close(R->fd);
  R->map = NULL;
  R->fd = -1;
  return 1;
}

/* Resume a parked store: the same file, unchanged since its scan (device, inode, size, modification and
 * change times: any write moves the times), is mapped again and read by the index the scan made, its
 * blocks' checksums checked then; anything else (changed, replaced, gone) is opened and scanned anew. */
hp_status hp_log_resume(hp_store *s) {
  log_r *R = s->impl;
  int fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  struct stat sb;
  if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_dev == R->id.st_dev &&
      sb.st_ino == R->id.st_ino && sb.st_size == R->id.st_size && sb.st_mtim.tv_sec == R->id.st_mtim.tv_sec &&
      sb.st_mtim.tv_nsec == R->id.st_mtim.tv_nsec && sb.st_ctim.tv_sec == R->id.st_ctim.tv_sec &&
      sb.st_ctim.tv_nsec == R->id.st_ctim.tv_nsec) {
    void *m = mmap(NULL, R->size, PROT_READ, MAP_SHARED, fd, 0);
    if (m != MAP_FAILED) {
      R->fd = fd;
      R->map = m;
      return HP_OK;
    }
  }
  if (fd >= 0) close(fd);
  free_log_r(R); /* not the file that was scanned: read as new */
  s->impl = NULL;
  free(s->schema_version);
  s->schema_version = NULL;
  s->damage = HP_OK;
  s->damage_offset = 0;
  s->error[0] = 0;
  return hp_log_open_read(s);
}

hp_status hp_log_count(hp_store *s, hp_table t, uint64_t *n) {
  log_r *R = s->impl;
  *n = hp_log_ti[t].small ? R->small[t].n : R->nbig[t] + (t == HP_TABLE_DISPATCH ? R->nx : 0);
  return HP_OK;
}

/* ---- cursors: small tables from memory, big tables decoded block by block ---- */
typedef struct lcur {
  size_t i;                     /* next row (small) or next block (big) */
  size_t x;                     /* next of the launch file's rows (R->xrows), after the blocks' */
  const unsigned char *p, *end; /* records left in the current block */
  char *buf;                    /* strings of the current row */
  size_t cap;
  const unsigned char *bp, *bend; /* rows left in the current dispatch batch record */
  uint64_t bleft;                 /* how many */
  uint64_t prev[MAX_COLS];        /* the batch's previous row, column by column */
  unsigned char *blk;             /* the current block's records, copied out of the mapping (load_block) */
  size_t blkcap;
  uint64_t released; /* the mapping below this offset dropped from memory (map_release) */
} lcur;

hp_status hp_log_cursor_open(hp_cursor *c) {
  lcur *k = calloc(1, sizeof *k);
  if (!k) return HP_ERR_NOMEM;
  c->impl = k;
  return HP_OK;
}

/* Block i's records copied into the cursor's buffer: the one access of a cursor to the mapping, guarded
 * once per block (a guard per row, sigsetjmp and its thread-local state, cost more than the copy); the rows
 * are decoded from the copy, which no truncation can take away. */
static hp_status load_block(hp_cursor *c, lcur *k, const rblk *b) {
  log_r *R = c->store->impl;
  if (b->len > k->blkcap) {
    size_t cap = b->len < 65536 ? 65536 : b->len;
    unsigned char *n = malloc(cap);
    if (!n) return HP_ERR_NOMEM;
    free(k->blk);
    k->blk = n;
    k->blkcap = cap;
  }
  guard g;
  guard_save(&g);
  if (sigsetjmp(g.jb, 0)) {
    guard_end(&g);
    R->shrunk = 1;
    return hp_set_error(c->store, HP_ERR_IO, "the file shrank while being read (cut by another process)");
  }
  guard_set(&g, R->map, R->map + R->size);
  memcpy(k->blk, R->map + b->off, b->len);
  guard_end(&g);
  map_release(R->map, &k->released, b->off);
  k->p = k->blk;
  k->end = k->blk + b->len;
  return HP_OK;
}

static hp_status cursor_next(hp_cursor *c, void *row);
hp_status hp_log_cursor_next(hp_cursor *c, void *row) {
  log_r *R = c->store->impl;
  if (R->shrunk) return HP_ERR_IO;
  hp_status st = cursor_next(c, row);
  if ((R->shrunk && (st == HP_OK || st == HP_END)) || /* found by skip_hole during this call */
      (st == HP_END && size_changed(R))) /* the last row read: the file is still the one scanned */
    return hp_set_error(c->store, HP_ERR_IO, "%s", size_changed_why(R));
  return st;
}

static hp_status cursor_next(hp_cursor *c, void *row) {
  log_r *R = c->store->impl;
  lcur *k = c->impl;
  const tinfo *ti = &hp_log_ti[c->table];
  if (ti->small) {
    rsmall *S = &R->small[c->table];
    if (k->i >= S->n) return HP_END;
    memcpy(row, S->rows + k->i++ * ti->d->row_size, ti->d->row_size);
    return HP_OK;
  }
  uint32_t bit = 1u << c->table;
  for (;;) {
    if (k->bleft) { /* inside a dispatch batch */
      k->bleft--;
      hp_row_init(c->table, row);
      dbatch_row(ti, &k->bp, k->bend, k->prev, row);
      return HP_OK;
    }
    if (k->p >= k->end) {
      while (k->i < R->nblk && !(R->blk[k->i].mask & bit))
        k->i++;
      if (k->i >= R->nblk) {
        if (c->table != HP_TABLE_DISPATCH || k->x >= R->nx) return HP_END;
        memcpy(row, &R->xrows[k->x++], sizeof(hp_dispatch));
        return HP_OK;
      }
      hp_status st = load_block(c, k, &R->blk[k->i]);
      if (st != HP_OK) return st;
      k->i++;
    }
    uint64_t type, plen;
    if (!hu_varint_get(&k->p, k->end, &type) || !hu_varint_get(&k->p, k->end, &plen) ||
        plen > (uint64_t)(k->end - k->p)) {
      k->p = k->end;
      continue;
    }
    const unsigned char *q = k->p;
    k->p += plen;
    if (type == REC_DBATCH && c->table == HP_TABLE_DISPATCH) {
      if (dbatch_open(q, k->p, &k->bleft, &k->bp)) {
        k->bend = k->p;
        memset(k->prev, 0, sizeof k->prev);
      }
      continue;
    }
    if (type != (uint64_t)c->table + 1) continue;
    size_t need = (size_t)plen + ti->d->ncolumns + 1;
    if (need > k->cap) {
      size_t cap = need < 256 ? 256 : need * 2;
      char *b = realloc(k->buf, cap);
      if (!b) return HP_ERR_NOMEM;
      k->buf = b;
      k->cap = cap;
    }
    hp_row_init(c->table, row);
    decode_cols(ti->d, q, q + plen, row, k->buf);
    return HP_OK;
  }
}

void hp_log_cursor_close(hp_cursor *c) {
  lcur *k = c->impl;
  free(k->blk);
  free(k->buf);
  free(k);
  c->impl = NULL;
}

/* A log without closing record: the dispatches its writer launched and had not put in it when it stopped,
 * from its launch file (hp_log_launch_read), less those the log holds (by row id or dispatch id: one pass
 * over its dispatch rows), kept in R->xrows for the count and the cursor, and told in the note. */
static hp_status launch_rows(hp_store *s, log_r *R) {
  char why[160] = "";
  hp_dispatch *x = NULL;
  size_t nx = 0;
  hp_status st = hp_log_launch_read(s->path, &x, &nx, why, sizeof why);
  if (st != HP_OK) return hp_set_error(s, st, "out of memory");
  hu_idmap cand = {0};
  for (size_t i = 0; i < nx && st == HP_OK; i++)
    if (hu_idmap_put(&cand, x[i].id, i + 1) != 0) st = HP_ERR_NOMEM;
  if (nx && st == HP_OK &&
      R->nbig[HP_TABLE_DISPATCH]) { /* the log's own rows: a candidate there is dropped */
    hp_cursor c = {.store = s, .table = HP_TABLE_DISPATCH};
    st = hp_log_cursor_open(&c);
    hp_dispatch d = {.size = sizeof d};
    uint64_t v;
    while (st == HP_OK && (st = cursor_next(&c, &d)) == HP_OK)
      for (int k = 0; k < 2; k++)
        if (hu_idmap_get(&cand, k ? d.dispatch_id : d.id, &v) && v) {
          x[v - 1].id = 0;                                  /* dropped */
          hu_idmap_put(&cand, k ? d.dispatch_id : d.id, 0); /* a replacement: never fails */
        }
    if (c.impl) hp_log_cursor_close(&c);
    if (st == HP_END) st = R->shrunk ? hp_set_error(s, HP_ERR_IO, "%s", size_changed_why(R)) : HP_OK;
  }
  hu_idmap_free(&cand);
  size_t n = 0;
  for (size_t i = 0; i < nx; i++)
    if (x[i].id) x[n++] = x[i];
  if (st != HP_OK || !n) free(x);
  if (st != HP_OK) return st == HP_ERR_NOMEM ? hp_set_error(s, st, "out of memory") : st;
  if (n) {
    R->xrows = x;
    R->nx = n;
    append(R->note, sizeof R->note,
           "; %zu dispatch%s launched and not yet harvested when it stopped %s read from its launch file, %s "
           "end unknown",
           n, n == 1 ? "" : "es", n == 1 ? "is" : "are", n == 1 ? "its" : "their");
  }
  if (*why) append(R->note, sizeof R->note, "; its launch file: %s", why);
  return HP_OK;
}
