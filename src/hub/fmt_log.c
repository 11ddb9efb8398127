/* The "log" format: the crash-safe, append-only file an instrumented process writes while it runs
 * (layout in docs/formats/log.md). Its append path must never block, never allocate in steady state,
 * never change errno and never crash the host: a full disk or a failed mmap becomes counted losses.
 * Sections: layout · encoding · table info · registry (thread caches, fork, thread exit) · writer ·
 * create/commit/abort · reader (header, scan, small tables) · cursors · extras · ops table. */
/* SPDX-License-Identifier: MIT */
#include "fmt_log.h"

#include "../common/hu_hash.h"
#include "../common/hu_io.h"
#include "../common/hu_varint.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- layout ---- */
#define LOG_MAGIC "HUBPLOG\0"
#define LOG_VERSION 2u /* 2: dispatch batch records, which a version-1 reader would skip (lose) */
#define LOG_HEADER_SIZE 4096u
#define HDR_CRC_OFF 128u      /* header CRC-32C of bytes [0, 128) */
#define HDR_FIXED 132u        /* bytes of the header this version defines */
#define BLK_MAGIC 0x4B4C4248u /* "HBLK" as little-endian bytes */
#define BLK_HDR 16u           /* u32 magic, u32 payload length, u32 records, u32 crc32c */
#define REC_LOST 64u          /* record type of a LOST record; tables are 1 + hp_table */
#define LOST_REC_MAX 22u      /* type, length, two varints */
#define REC_DBATCH 65u   /* record type of a dispatch batch: rows delta-encoded against the previous one */
#define DBATCH_MAX 64u   /* rows in one dispatch batch record at most (a record stays under 16 KiB) */
#define LOST_RESERVE 64u /* chunk tail kept free for one LOST block */
#define MIN_CHUNK (64u << 10)
#define MAX_CHUNK (1u << 30)
#define MAX_COLS 32
#define SPARE_MAX 16 /* chunks made ready ahead of need (hp_log_prepare) */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

static uint64_t g_chunk_size = 1u << 20;
static uint32_t g_block_target = 16u << 10;

/* ---- encoding: little-endian words, LEB128 varints, zigzag (src/common/hu_varint.h) ---- */
static inline uint64_t align8(uint64_t x) { return (x + 7) & ~(uint64_t)7; }
static inline unsigned char *align8p(unsigned char *p) { return (unsigned char *)align8((uintptr_t)p); }

/* ---- table info: derived once from the generic descriptions ---- */
/* Column kinds of the encoder: bit 0 = signed (zigzag), bit 1 = 64 bits; then doubles and strings. */
enum { K_U32 = 0, K_I32 = 1, K_U64 = 2, K_I64 = 3, K_F64 = 4, K_STR = 5 };

typedef struct col_op {
  uint16_t off; /* offset in the row struct */
  uint8_t kind; /* K_* */
} col_op;

typedef struct tinfo {
  const hp_table_desc *d;
  size_t bound;   /* largest payload without string bytes (seq, varints, doubles, string lengths) */
  int small;      /* rows replace earlier rows with the same key; the payload starts with a sequence */
  unsigned nstr;  /* string columns */
  unsigned ncols; /* columns encoded */
  size_t stroff[MAX_COLS]; /* offsets of the string columns in the row */
  col_op ops[MAX_COLS];    /* the columns, compact, in description order */
} tinfo;

static tinfo g_ti[HP_TABLE_COUNT];
static pthread_once_t g_ti_once = PTHREAD_ONCE_INIT;

/* The columns of a dispatch row as encode_cols meets them, checked once against the table description
 * (ti_init): the unrolled encoder below writes exactly the bytes of the generic one, or is not used. */
static const col_op g_dispatch_ops[] = {
    {offsetof(hp_dispatch, id), K_U64},
    {offsetof(hp_dispatch, dispatch_id), K_U64},
    {offsetof(hp_dispatch, process_id), K_U64},
    {offsetof(hp_dispatch, thread_id), K_U64},
    {offsetof(hp_dispatch, agent_id), K_U64},
    {offsetof(hp_dispatch, queue_id), K_U64},
    {offsetof(hp_dispatch, kernel_id), K_U64},
    {offsetof(hp_dispatch, grid) + 0, K_U32},
    {offsetof(hp_dispatch, grid) + 4, K_U32},
    {offsetof(hp_dispatch, grid) + 8, K_U32},
    {offsetof(hp_dispatch, workgroup) + 0, K_U32},
    {offsetof(hp_dispatch, workgroup) + 4, K_U32},
    {offsetof(hp_dispatch, workgroup) + 8, K_U32},
    {offsetof(hp_dispatch, private_size), K_I64},
    {offsetof(hp_dispatch, group_size), K_I64},
    {offsetof(hp_dispatch, start_ns), K_I64},
    {offsetof(hp_dispatch, end_ns), K_I64},
    {offsetof(hp_dispatch, enqueue_ns), K_I64},
    {offsetof(hp_dispatch, passes), K_U32},
    {offsetof(hp_dispatch, bytes_accessible), K_U64},
    {offsetof(hp_dispatch, bytes_restored), K_U64},
    {offsetof(hp_dispatch, cold), K_U32},
    {offsetof(hp_dispatch, region_id), K_U64},
};
#define DISPATCH_NCOLS (sizeof g_dispatch_ops / sizeof g_dispatch_ops[0])
static int g_dispatch_unrolled; /* set by ti_init when the description is the one above */

static void dispatch_check(void) {
  const tinfo *ti = &g_ti[HP_TABLE_DISPATCH];
  if (ti->small || ti->nstr || ti->ncols != DISPATCH_NCOLS || ti->d->row_size != sizeof(hp_dispatch)) return;
  for (unsigned i = 0; i < DISPATCH_NCOLS; i++)
    if (ti->ops[i].off != g_dispatch_ops[i].off || ti->ops[i].kind != g_dispatch_ops[i].kind) return;
  g_dispatch_unrolled = 1;
}

/* The same for a region row (hp_log_write_region). */
static const col_op g_region_ops[] = {
    {offsetof(hp_region, id), K_U64},        {offsetof(hp_region, process_id), K_U64},
    {offsetof(hp_region, thread_id), K_U64}, {offsetof(hp_region, name), K_STR},
    {offsetof(hp_region, category), K_STR},  {offsetof(hp_region, start_ns), K_I64},
    {offsetof(hp_region, end_ns), K_I64},
};
#define REGION_NCOLS (sizeof g_region_ops / sizeof g_region_ops[0])
static int g_region_unrolled;

static void region_check(void) {
  const tinfo *ti = &g_ti[HP_TABLE_REGION];
  if (ti->small || ti->nstr != 2 || ti->ncols != REGION_NCOLS || ti->d->row_size != sizeof(hp_region)) return;
  for (unsigned i = 0; i < REGION_NCOLS; i++)
    if (ti->ops[i].off != g_region_ops[i].off || ti->ops[i].kind != g_region_ops[i].kind) return;
  g_region_unrolled = 1;
}

static int table_is_small(hp_table t) { return !hp_table_streamed(t); }

static void ti_init(void) {
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    tinfo *ti = &g_ti[t];
    ti->d = hp_table_describe((hp_table)t);
    ti->small = table_is_small((hp_table)t);
    ti->bound = ti->small ? 10 : 0;
    for (size_t i = 0; i < ti->d->ncolumns && i < MAX_COLS; i++) {
      const hp_column *c = &ti->d->columns[i];
      uint8_t kind = K_U64;
      switch (c->type) {
      case HP_COL_U32: kind = K_U32; break;
      case HP_COL_I32: kind = K_I32; break; /* zigzagged as 64 bits */
      case HP_COL_U64: kind = K_U64; break;
      case HP_COL_I64: kind = K_I64; break;
      case HP_COL_F64: kind = K_F64; break;
      case HP_COL_STR:
        kind = K_STR;
        ti->stroff[ti->nstr++] = c->offset;
        break;
      }
      ti->bound += kind == K_F64 ? 8 : 10;
      ti->ops[ti->ncols++] = (col_op){(uint16_t)c->offset, kind};
    }
  }
  dispatch_check();
  region_check();
}

/* ---- registry: live stores, thread caches, fork and thread exit ---- */
typedef struct lw lw;
typedef struct log_w log_w;

/* One thread's writer. Only its owner thread touches it, except under the store lock when the owner
 * is gone (thread exit, close). */
struct lw {
  unsigned char *pos;   /* where the next record goes */
  unsigned char *soft;  /* end of room for records in the open block (== pos when none is open) */
  unsigned char *blk;   /* header of the open block, NULL when none */
  uint32_t nrec;        /* records in the open block */
  unsigned char *chunk; /* mapping of the current chunk, NULL when none */
  unsigned char *limit; /* chunk end minus LOST_RESERVE: ordinary blocks end before it */
  uint64_t chunk_off;   /* file offset of the chunk */
  uint64_t lost;        /* records lost and not yet written as a LOST record */
  uint64_t retry_at;    /* after a failure, try for a new chunk again when lost reaches this */
  uint32_t backoff;
  int64_t pending; /* chunk index claimed whose allocation failed (retried first), -1 none */
  pthread_t owner;
  int in_use; /* owned by a live thread (else free for the next new thread) */
  lw *next;
};

/* A log being written. */
struct log_w {
  uint64_t gen;   /* unique per store in this process: thread caches compare it */
  unsigned epoch; /* fork epoch at creation: a forked child must not write */
  int fd;
  uint32_t header_size;
  uint32_t target; /* target block payload */
  uint64_t chunk_size;
  pid_t pid;
  char *tmp;            /* temporary path (HP_CREATE until commit) */
  pthread_mutex_t lock; /* the writer list and slow paths */
  lw *writers;
  log_w *gnext;                             /* registry of live stores */
  _Alignas(64) _Atomic uint64_t next_chunk; /* chunk counter */
  _Alignas(64) _Atomic uint64_t seq;        /* order of small-table rows */
  _Atomic uint64_t process_id;              /* last process row written: owner of LOST records */
  _Atomic uint64_t lost_total;              /* records lost so far */
  _Atomic int write_errno;                  /* why the last chunk could not be had (ENOSPC ...), 0: never */
  _Atomic uint64_t orphan_lost;             /* lost without a writer (no memory) */
  /* Chunks made ready ahead of need by hp_log_prepare (allocated, mapped, pages faulted in), taken by
   * new_chunk; under `lock`. spare_taken: chunks needed since the last hp_log_prepare (sizes the next
   * refill). */
  unsigned nspare, spare_taken, spare_failed;
  struct {
    unsigned char *m;
    uint64_t off;
  } spare[SPARE_MAX];
  /* Full chunks a writer left when it took a spare: unmapped (their unused tail given back) by the next
   * hp_log_prepare or at close, not on the append path; under `lock`. */
  unsigned nretire;
  struct {
    unsigned char *m;
    uint64_t off, used;
  } retire[SPARE_MAX];
};

typedef struct tls_ent {
  log_w *L;
  uint64_t gen;
  lw *w;
} tls_ent;

#define TLS_N 4
static __thread tls_ent t_cache[TLS_N];
static __thread unsigned t_next;
static __thread int t_keyed;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* g_live; taken before a store's lock */
static log_w *g_live;
static _Atomic uint64_t g_gen;
static _Atomic unsigned g_epoch;
static pthread_key_t g_key;
static int g_key_ok;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static unsigned char g_nowhere[8]; /* pos and soft of a writer without a block: no room */

static void flush_writer(log_w *L, lw *w);

/* Thread exit: commit this thread's open blocks and hand its writers to the next new thread. */
static void thread_exit(void *unused) {
  (void)unused;
  int saved = errno;
  pthread_mutex_lock(&g_lock);
  unsigned ep = atomic_load(&g_epoch);
  for (int i = 0; i < TLS_N; i++) {
    tls_ent *e = &t_cache[i];
    if (!e->L) continue;
    for (log_w *L = g_live; L; L = L->gnext) {
      if (L == e->L && L->gen == e->gen && L->epoch == ep) {
        pthread_mutex_lock(&L->lock);
        flush_writer(L, e->w);
        e->w->in_use = 0;
        pthread_mutex_unlock(&L->lock);
        break;
      }
    }
    memset(e, 0, sizeof *e);
  }
  t_keyed = 0;
  pthread_mutex_unlock(&g_lock);
  errno = saved;
}

/* In a forked child every log of the parent is foreign: its mappings are shared with the parent. */
static void fork_child(void) {
  g_live = NULL;
  pthread_mutex_init(&g_lock, NULL);
  atomic_fetch_add(&g_epoch, 1);
}

static void global_init(void) {
  g_key_ok = pthread_key_create(&g_key, thread_exit) == 0;
  pthread_atfork(NULL, NULL, fork_child);
  pthread_once(&g_ti_once, ti_init);
}

static void registry_add(log_w *L) {
  pthread_mutex_lock(&g_lock);
  L->gnext = g_live;
  g_live = L;
  pthread_mutex_unlock(&g_lock);
}

static void registry_remove(log_w *L) {
  pthread_mutex_lock(&g_lock);
  for (log_w **pp = &g_live; *pp; pp = &(*pp)->gnext) {
    if (*pp == L) {
      *pp = L->gnext;
      break;
    }
  }
  pthread_mutex_unlock(&g_lock);
}

static int forked(const log_w *L) { return L->epoch != atomic_load_explicit(&g_epoch, memory_order_relaxed); }

static void cache_put(log_w *L, lw *w) {
  int slot = -1;
  for (int i = 0; i < TLS_N && slot < 0; i++)
    if (t_cache[i].L == L) slot = i; /* a stale entry of a closed store at the same address */
  for (int i = 0; i < TLS_N && slot < 0; i++)
    if (!t_cache[i].L) slot = i;
  if (slot < 0) slot = (int)(t_next++ % TLS_N); /* the evicted writer stays owned: found again by owner */
  t_cache[slot] = (tls_ent){L, L->gen, w};
  if (!t_keyed && g_key_ok) {
    pthread_setspecific(g_key, (void *)1);
    t_keyed = 1;
  }
}

static inline lw *cache_get(const log_w *L) {
  const tls_ent *c = t_cache; /* one look-up of the thread's block (global-dynamic TLS: a call) */
  for (int i = 0; i < TLS_N; i++)
    if (c[i].L == L && c[i].gen == L->gen) return c[i].w;
  return NULL;
}

/* The calling thread's writer of L when it has none in its cache (slow path, under the store lock):
 * the one it owns (its cache entry was evicted), else with `create` a spare or a new one. */
static lw *writer_get(log_w *L, int create) {
  int saved = errno;
  pthread_t self = pthread_self();
  pthread_mutex_lock(&L->lock);
  lw *w = NULL, *spare = NULL;
  for (lw *x = L->writers; x; x = x->next) {
    if (x->in_use && pthread_equal(x->owner, self)) {
      w = x;
      break;
    }
    if (!x->in_use && !spare) spare = x;
  }
  if (!w && create) w = spare;
  if (!w && create && (w = calloc(1, sizeof *w)) != NULL) {
    w->pos = w->soft = g_nowhere;
    w->pending = -1;
    w->next = L->writers;
    L->writers = w;
  }
  if (w) {
    w->in_use = 1;
    w->owner = self;
  }
  pthread_mutex_unlock(&L->lock);
  if (w) cache_put(L, w);
  errno = saved;
  return w;
}

/* ---- writer: chunks, blocks, records ---- */
static void commit_block(lw *w) {
  unsigned char *b = w->blk;
  if (!b) return;
  w->blk = NULL;
  if (w->nrec == 0) { /* nothing in it: give the space back */
    w->pos = w->soft = b;
    return;
  }
  uint32_t len = (uint32_t)(w->pos - b - BLK_HDR);
  hu_put_le32(b + 4, len);
  hu_put_le32(b + 8, w->nrec);
  uint32_t crc = hp_crc32c(0, b + 4, 8);
  crc = hp_crc32c(crc, b + BLK_HDR, len);
  hu_put_le32(b + 12, crc);
  unsigned char m[4];
  uint32_t mv;
  hu_put_le32(m, BLK_MAGIC);
  memcpy(&mv, m, 4);
  __atomic_store_n((uint32_t *)(void *)b, mv, __ATOMIC_RELEASE); /* the block is valid from here on */
  w->nrec = 0;
  w->soft = w->pos;
}

static void open_block(log_w *L, lw *w, unsigned char *b, size_t need, unsigned char *end) {
  w->blk = b;
  w->nrec = 0;
  w->pos = b + BLK_HDR;
  size_t room = L->target > need ? L->target : need;
  size_t avail = (size_t)(end - w->pos);
  w->soft = w->pos + (room < avail ? room : avail);
}

static unsigned char *put_lost(unsigned char *p, uint64_t process_id, uint64_t count) {
  *p++ = REC_LOST;
  unsigned char *lp = p++;
  p = hu_varint_put(hu_varint_put(p, process_id), count);
  *lp = (unsigned char)(p - lp - 1);
  return p;
}

/* Write `count` lost records as a LOST block in what is left of w's chunk (the reserve included). */
static int place_lost(log_w *L, lw *w, uint64_t count) {
  if (!w->chunk || count == 0) return w->chunk != NULL;
  commit_block(w);
  unsigned char *b = align8p(w->pos), *end = w->chunk + L->chunk_size;
  if (b >= end || (size_t)(end - b) < BLK_HDR + LOST_REC_MAX) return 0;
  w->blk = b;
  w->pos = put_lost(b + BLK_HDR, atomic_load_explicit(&L->process_id, memory_order_relaxed), count);
  w->nrec = 1;
  commit_block(w);
  return 1;
}

/* Give the unused tail of a chunk back to the file system (it reads as zeros) and unmap it. */
static void drop_chunk(log_w *L, unsigned char *m, uint64_t off, uint64_t used) {
  uint64_t keep = (align8(used) + 4095) & ~(uint64_t)4095;
  if (keep < L->chunk_size)
    fallocate(L->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(off + keep),
              (off_t)(L->chunk_size - keep));
  munmap(m, L->chunk_size);
}

/* Leave w's chunk: drop_chunk, now. */
static void leave_chunk(log_w *L, lw *w) {
  if (!w->chunk) return;
  drop_chunk(L, w->chunk, w->chunk_off, (uint64_t)(w->pos - w->chunk));
  w->chunk = w->limit = NULL;
  w->pos = w->soft = g_nowhere;
  w->blk = NULL;
}

/* Make m (chunk at file offset off) w's chunk, leaving the one it had. */
static void use_chunk(log_w *L, lw *w, unsigned char *m, uint64_t off) {
  leave_chunk(L, w);
  w->chunk = m;
  w->chunk_off = off;
  w->limit = w->chunk + L->chunk_size - LOST_RESERVE;
  w->pos = w->soft = w->chunk;
}

/* Allocate the chunk at file offset off and map it: 0 with *m set, else the errno. */
static int map_chunk(log_w *L, uint64_t off, void **m) {
  int r;
  for (int tries = 0; (r = posix_fallocate(L->fd, (off_t)off, (off_t)L->chunk_size)) == EINTR && tries < 8;
       tries++) {
  }
  if (r != 0) return r;
  *m = mmap(NULL, L->chunk_size, PROT_READ | PROT_WRITE, MAP_SHARED, L->fd, (off_t)off);
  return *m == MAP_FAILED ? errno : 0;
}

/* Claim, allocate and map a new chunk for w. Allocation (not a sparse file) means a full disk fails
 * here, as a counted loss, instead of as SIGBUS when a page is first written. */
static int new_chunk(log_w *L, lw *w) {
  if (w->pending < 0) commit_block(w); /* before the lock: held only to swap chunks */
  if (w->pending < 0 && pthread_mutex_trylock(&L->lock) == 0) { /* never waits: makes its own instead */
    unsigned char *m = NULL;
    uint64_t off = 0;
    L->spare_taken++; /* the demand, met by a spare or not: sizes the next refill */
    if (L->nspare) {
      L->nspare--;
      m = L->spare[L->nspare].m;
      off = L->spare[L->nspare].off;
      if (w->chunk && L->nretire < SPARE_MAX) { /* the full one: unmapped off the append path */
        L->retire[L->nretire].m = w->chunk;
        L->retire[L->nretire].off = w->chunk_off;
        L->retire[L->nretire++].used = (uint64_t)(w->pos - w->chunk);
        w->chunk = NULL;
      }
    }
    pthread_mutex_unlock(&L->lock);
    if (m) {
      use_chunk(L, w, m, off);
      return 1;
    }
  }
  uint64_t idx = w->pending >= 0 ? (uint64_t)w->pending : atomic_fetch_add(&L->next_chunk, 1);
  if (idx >= ((uint64_t)INT64_MAX - L->header_size) / L->chunk_size - 1) return 0;
  uint64_t off = L->header_size + idx * L->chunk_size;
  void *m = NULL;
  int r = map_chunk(L, off, &m);
  if (r != 0) {
    atomic_store_explicit(&L->write_errno, r, memory_order_relaxed);
    w->pending = (int64_t)idx;
    return 0;
  }
  w->pending = -1;
  commit_block(w);
  use_chunk(L, w, m, off);
  return 1;
}

static void lose(log_w *L, lw *w) {
  w->lost++;
  atomic_fetch_add_explicit(&L->lost_total, 1, memory_order_relaxed);
}

/* Slow path of an append: commit the open block and open one with room for `need` bytes, in this
 * chunk or a new one. On failure the record is counted as lost. errno is preserved. */
static hp_status make_room(log_w *L, lw *w, size_t need) {
  int saved = errno;
  hp_status st = HP_OK;
  commit_block(w);
  unsigned char *b = w->chunk ? align8p(w->pos) : NULL;
  if (b && b < w->limit && (size_t)(w->limit - b) >= BLK_HDR + need) {
    open_block(L, w, b, need, w->limit);
  } else if (BLK_HDR + need + LOST_REC_MAX > L->chunk_size - LOST_RESERVE) {
    lose(L, w); /* larger than a chunk: can never be stored */
    st = HP_ERR_INVALID;
  } else if (w->lost && w->lost < w->retry_at) {
    lose(L, w); /* backing off after a failed allocation */
    st = HP_ERR_IO;
  } else if (!new_chunk(L, w)) {
    lose(L, w);
    w->backoff = w->backoff ? (w->backoff < 65536 ? w->backoff * 2 : w->backoff) : 16;
    w->retry_at = w->lost + w->backoff;
    st = HP_ERR_IO;
  } else {
    open_block(L, w, w->chunk, need + (w->lost ? LOST_REC_MAX : 0), w->limit);
    if (w->lost) { /* space again: say first what was lost */
      w->pos = put_lost(w->pos, atomic_load_explicit(&L->process_id, memory_order_relaxed), w->lost);
      w->nrec++;
      w->lost = 0;
    }
    w->backoff = 0;
  }
  errno = saved;
  return st;
}

/* Encode the columns of `row`; returns the end of the payload with trailing zero columns left out
 * (they encode as zero bytes, which the fresh chunk already holds). */
static inline unsigned char *encode_cols(unsigned char *p, const tinfo *ti, const char *row,
                                         const size_t *slen) {
  unsigned char *keep = p;
  unsigned si = 0;
  for (unsigned i = 0; i < ti->ncols; i++) {
    const col_op o = ti->ops[i];
    const char *f = row + o.off;
    uint64_t v;
    if (__builtin_expect(o.kind >= K_F64, 0)) {
      if (o.kind == K_F64) {
        memcpy(&v, f, 8);
        hu_put_le64(p, v);
        p += 8;
        if (v) keep = p;
      } else {
        const char *str;
        memcpy(&str, f, sizeof str);
        size_t n = slen[si++];
        p = hu_varint_put(p, n);
        memcpy(p, str, n);
        p += n;
        if (n) keep = p;
      }
      continue;
    }
    if (o.kind & 2) {
      memcpy(&v, f, 8);
    } else {
      uint32_t x;
      memcpy(&x, f, 4);
      v = (o.kind & 1) ? (uint64_t)(int64_t)(int32_t)x : x;
    }
    if (o.kind & 1) v = hu_zigzag((int64_t)v);
    p = hu_varint_put(p, v);
    if (v) keep = p;
  }
  return keep;
}

/* The calling thread's writer, made at need; NULL (n records counted lost) when there is no memory. */
static inline lw *writer_or_lose(log_w *L, uint64_t n) {
  lw *w = cache_get(L);
  if (__builtin_expect(!w, 0) && !(w = writer_get(L, 1))) {
    atomic_fetch_add(&L->orphan_lost, n);
    atomic_fetch_add(&L->lost_total, n);
  }
  return w;
}

/* Start a record of table t with a payload of at most pb bytes in w's block: the type byte, then lb bytes
 * kept for the payload's length (at *lenp, hu_varint_put_n once it is known). Returns where the payload
 * goes, or NULL with *st set when there is no room. */
static inline unsigned char *record_begin(log_w *L, lw *w, hp_table t, size_t pb, unsigned *lb,
                                          unsigned char **lenp, hp_status *st) {
  *lb = hu_varint_len(pb);
  size_t need = 1 + *lb + pb;
  if (__builtin_expect(need > (size_t)(w->soft - w->pos), 0) && (*st = make_room(L, w, need)) != HP_OK)
    return NULL;
  unsigned char *p = w->pos;
  *p++ = (unsigned char)(t + 1);
  *lenp = p;
  return p + *lb;
}

static hp_status log_write(hp_store *s, hp_table t, const void *row) {
  log_w *L = s->impl;
  if (__builtin_expect(forked(L), 0)) return HP_ERR_UNSUPPORTED;
  lw *w = writer_or_lose(L, 1);
  if (!w) return HP_ERR_NOMEM;
  const tinfo *ti = &g_ti[t];
  size_t slen[MAX_COLS];
  size_t pb = ti->bound;
  for (unsigned i = 0; i < ti->nstr; i++) {
    const char *str;
    memcpy(&str, (const char *)row + ti->stroff[i], sizeof str);
    slen[i] = strlen(str);
    pb += slen[i];
  }
  unsigned lb;
  unsigned char *lenp;
  hp_status st = HP_OK;
  unsigned char *p = record_begin(L, w, t, pb, &lb, &lenp, &st), *start = p;
  if (!p) return st;
  if (ti->small) {
    p = hu_varint_put(p, atomic_fetch_add_explicit(&L->seq, 1, memory_order_relaxed) + 1);
    if (t == HP_TABLE_PROCESS)
      atomic_store_explicit(&L->process_id, ((const hp_process *)row)->id, memory_order_relaxed);
  }
  unsigned char *end = encode_cols(p, ti, row, slen);
  hu_varint_put_n(lenp, (uint64_t)(end - start), lb);
  w->pos = end;
  w->nrec++;
  return HP_OK;
}

/* Commit w's open block and write its pending losses. */
static void flush_writer(log_w *L, lw *w) {
  commit_block(w);
  if (w->lost && place_lost(L, w, w->lost)) w->lost = 0;
}

/* Commit every writer's block and write every pending loss somewhere (store lock held). */
static void flush_all_locked(log_w *L) {
  uint64_t unplaced = atomic_exchange(&L->orphan_lost, 0);
  for (lw *w = L->writers; w; w = w->next) {
    commit_block(w);
    if (!w->lost) continue;
    if (!place_lost(L, w, w->lost) && !(new_chunk(L, w) && place_lost(L, w, w->lost))) unplaced += w->lost;
    w->lost = 0;
  }
  if (!unplaced) return;
  for (lw *w = L->writers; w; w = w->next)
    if (place_lost(L, w, unplaced)) return;
  lw tmp = {.pos = g_nowhere, .soft = g_nowhere, .pending = -1};
  if (new_chunk(L, &tmp) && place_lost(L, &tmp, unplaced))
    leave_chunk(L, &tmp);
  else if (tmp.chunk)
    leave_chunk(L, &tmp);
}

/* ---- create / commit / abort ---- */
static void free_writers(log_w *L, int keep_files) {
  lw *w = L->writers;
  while (w) {
    lw *next = w->next;
    if (keep_files)
      leave_chunk(L, w);
    else if (w->chunk)
      munmap(w->chunk, L->chunk_size);
    free(w);
    w = next;
  }
  L->writers = NULL;
}

/* Unmap the chunks made ready and never used; with keep_files, give their space back (they read as zeros,
 * which a reader takes for a chunk with nothing committed). */
static void free_spares(log_w *L, int keep_files) {
  for (unsigned i = 0; i < L->nretire; i++) {
    if (keep_files)
      drop_chunk(L, L->retire[i].m, L->retire[i].off, L->retire[i].used);
    else
      munmap(L->retire[i].m, L->chunk_size);
  }
  L->nretire = 0;
  for (unsigned i = 0; i < L->nspare; i++) {
    if (keep_files)
      fallocate(L->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)L->spare[i].off,
                (off_t)L->chunk_size);
    munmap(L->spare[i].m, L->chunk_size);
  }
  L->nspare = 0;
}

static void free_log_w(log_w *L) {
  if (L->fd >= 0) close(L->fd);
  pthread_mutex_destroy(&L->lock);
  free(L->tmp);
  free(L);
}

static int64_t clock_ns(clockid_t id) {
  struct timespec ts;
  if (clock_gettime(id, &ts) != 0) return 0;
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A live log appears under its name at once, and never in place of another file (two collectors in
 * different PID namespaces, or on two hosts, sharing one folder can have the same pid): rename without
 * replacing, or where the file system cannot (EINVAL), a hard link, which fails on an existing name too.
 * EEXIST: the name is taken (the caller picks another). */
static int publish_new(const char *tmp, const char *path) {
  if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  if (link(tmp, path) != 0) return -1;
  unlink(tmp);
  return 0;
}

static hp_status log_create(hp_store *s) {
  pthread_once(&g_once, global_init);
  void *mem = NULL;
  if (posix_memalign(&mem, 64, sizeof(log_w)) != 0) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  log_w *L = mem;
  memset(L, 0, sizeof *L);
  L->fd = -1;
  pthread_mutex_init(&L->lock, NULL);
  L->gen = atomic_fetch_add(&g_gen, 1) + 1;
  L->epoch = atomic_load(&g_epoch);
  L->pid = getpid();
  L->header_size = LOG_HEADER_SIZE;
  L->chunk_size = g_chunk_size;
  L->target = g_block_target;
  L->tmp = hp_temp_path(s->path);
  char *schema = strdup("1");
  if (!L->tmp || !schema) {
    free(schema);
    free_log_w(L);
    return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  }
  L->fd = open(L->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (L->fd < 0) {
    int e = errno;
    free(schema);
    free_log_w(L);
    return hp_set_error(s, e == ENOENT ? HP_ERR_NOT_FOUND : HP_ERR_IO, "cannot create: %s", strerror(e));
  }
  unsigned char h[LOG_HEADER_SIZE];
  memset(h, 0, sizeof h);
  memcpy(h, LOG_MAGIC, 8);
  hu_put_le32(h + 8, LOG_VERSION);
  hu_put_le32(h + 12, LOG_VERSION); /* min_reader_version */
  hu_put_le32(h + 16, L->header_size);
  hu_put_le32(h + 20, 0); /* features */
  hu_put_le64(h + 24, L->chunk_size);
  hu_put_le32(h + 32, L->target);
  hu_put_le32(h + 36, BLK_HDR);
  hu_put_le64(h + 40, (uint64_t)clock_ns(CLOCK_REALTIME));
  hu_put_le64(h + 48, (uint64_t)clock_ns(CLOCK_MONOTONIC_RAW));
  hu_put_le64(h + 56, (uint64_t)(int64_t)L->pid);
  gethostname((char *)h + 64, 63);
  h[127] = 0;
  hu_put_le32(h + HDR_CRC_OFF, hp_crc32c(0, h, HDR_CRC_OFF));
  hp_status st = hu_pwrite_all(L->fd, h, sizeof h, 0) ? HP_ERR_IO : HP_OK;
  if (st == HP_OK && s->mode == HP_CREATE_LIVE && publish_new(L->tmp, s->path) != 0) st = HP_ERR_IO;
  if (st != HP_OK) {
    int e = errno;
    unlink(L->tmp);
    free(schema);
    free_log_w(L);
    return hp_set_error(s, st, "cannot create: %s", strerror(e));
  }
  if (s->mode == HP_CREATE_LIVE) {
    free(L->tmp);
    L->tmp = NULL;
  }
  s->schema_version = schema;
  s->impl = L;
  registry_add(L);
  return HP_OK;
}

static hp_status log_commit(hp_store *s) {
  log_w *L = s->impl;
  if (forked(L))
    return hp_set_error(s, HP_ERR_UNSUPPORTED, "created by process %ld: a forked child cannot commit it",
                        (long)L->pid);
  registry_remove(L);
  pthread_mutex_lock(&L->lock);
  flush_all_locked(L);
  free_writers(L, 1);
  free_spares(L, 1);
  pthread_mutex_unlock(&L->lock);
  if (L->tmp && rename(L->tmp, s->path) != 0)
    return hp_set_error(s, HP_ERR_IO, "cannot rename %s into place: %s", L->tmp, strerror(errno));
  free_log_w(L);
  s->impl = NULL;
  return HP_OK;
}

static void log_abort(hp_store *s) {
  log_w *L = s->impl;
  if (!L) return;
  if (forked(L)) { /* the parent's file and mappings: release our copies only */
    for (lw *w = L->writers, *next; w; w = next) {
      next = w->next;
      if (w->chunk) munmap(w->chunk, L->chunk_size);
      free(w);
    }
    free_spares(L, 0);
    if (L->fd >= 0) close(L->fd);
    free(L->tmp);
    free(L);
    s->impl = NULL;
    return;
  }
  registry_remove(L);
  pthread_mutex_lock(&L->lock);
  free_writers(L, 0);
  free_spares(L, 0);
  pthread_mutex_unlock(&L->lock);
  unlink(L->tmp ? L->tmp : s->path);
  free_log_w(L);
  s->impl = NULL;
}

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
  char dmg_msg[200];
  struct stat id; /* the file as scanned (device, inode, size, times): log_resume takes it again unread */
} log_r;

static int log_probe(const char *path, const unsigned char *head, size_t n) {
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
  const tinfo *ti = &g_ti[t];
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
  const tinfo *ti = &g_ti[HP_TABLE_PROCESS];
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
      if (g_ti[t].small) {
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
        mask |= 1u << HP_TABLE_DISPATCH;
      } else {
        damage(R, HP_ERR_CORRUPT, (uint64_t)(rec - R->map), "malformed dispatch batch at byte %llu",
               (unsigned long long)(rec - R->map));
      }
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
    uint64_t cend = cstart + cs, pos = cstart, nblocks = 0, budget = 4 * cs;
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
      nblocks++;
      pos = align8(pos + BLK_HDR + len);
    }
  }
  return apply_lost(R);
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
  if (R->map) munmap((void *)R->map, R->size);
  if (R->fd >= 0) close(R->fd);
  free(R);
}

static void log_close_read(hp_store *s) {
  free_log_r(s->impl);
  s->impl = NULL;
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
  return HP_OK;
}

static hp_status log_open_read(hp_store *s) {
  pthread_once(&g_once, global_init);
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
        if (st == HP_OK && R->shrunk)
          st = hp_set_error(s, HP_ERR_IO, "the file shrank while being read (cut by another process)");
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
  if (R->dmg != HP_OK)
    hp_set_damage(s, R->dmg, R->dmg_off,
                  "%s; %llu complete blocks recovered, %llu damaged place%s, %llu bytes skipped", R->dmg_msg,
                  (unsigned long long)R->nvalid, (unsigned long long)R->ndmg, R->ndmg == 1 ? "" : "s",
                  (unsigned long long)R->skipped);
  return HP_OK;
}

/* Park (hp_store_park): the file closed and unmapped, what the scan found kept. */
static int log_park(hp_store *s) {
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
static hp_status log_resume(hp_store *s) {
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
  return log_open_read(s);
}

static hp_status log_count(hp_store *s, hp_table t, uint64_t *n) {
  log_r *R = s->impl;
  *n = g_ti[t].small ? R->small[t].n : R->nbig[t];
  return HP_OK;
}

/* ---- cursors: small tables from memory, big tables decoded block by block ---- */
typedef struct lcur {
  size_t i;                     /* next row (small) or next block (big) */
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

static hp_status log_cursor_open(hp_cursor *c) {
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
static hp_status log_cursor_next(hp_cursor *c, void *row) {
  log_r *R = c->store->impl;
  if (R->shrunk) return HP_ERR_IO;
  hp_status st = cursor_next(c, row);
  if (R->shrunk && (st == HP_OK || st == HP_END)) /* found by skip_hole during this call */
    return hp_set_error(c->store, HP_ERR_IO, "the file shrank while being read (cut by another process)");
  return st;
}

static hp_status cursor_next(hp_cursor *c, void *row) {
  log_r *R = c->store->impl;
  lcur *k = c->impl;
  const tinfo *ti = &g_ti[c->table];
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
      if (k->i >= R->nblk) return HP_END;
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

static void log_cursor_close(hp_cursor *c) {
  lcur *k = c->impl;
  free(k->blk);
  free(k->buf);
  free(k);
  c->impl = NULL;
}

/* ---- extras (fmt_log.h) ---- */
static log_w *writable(hp_store *s) {
  if (!s || s->ops != &hp_fmt_log || s->mode == HP_READ || !s->impl) return NULL;
  log_w *L = s->impl;
  return forked(L) ? NULL : L;
}

hp_status hp_log_write_lost(hp_store *s, uint64_t process_id, uint64_t count) {
  log_w *L = writable(s);
  if (!L) return HP_ERR_UNSUPPORTED;
  if (!count) return HP_OK;
  lw *w = cache_get(L);
  if (!w && !(w = writer_get(L, 1))) {
    atomic_fetch_add(&L->orphan_lost, count);
    return HP_ERR_NOMEM;
  }
  if (!process_id) process_id = atomic_load_explicit(&L->process_id, memory_order_relaxed);
  if (LOST_REC_MAX > (size_t)(w->soft - w->pos)) {
    hp_status st = make_room(L, w, LOST_REC_MAX);
    if (st != HP_OK) {
      w->lost += count - 1; /* make_room counted one */
      atomic_fetch_add(&L->lost_total, count - 1);
      return st;
    }
  }
  w->pos = put_lost(w->pos, process_id, count);
  w->nrec++;
  return HP_OK;
}

/* One row of a dispatch batch (docs/formats/log.md, "Dispatch batch records"): a mask of the columns whose
 * value differs from the previous row's (4 bytes, padded LEB128 groups of 7 columns), then one zigzag varint
 * per such column: the difference as 64-bit integers (U32 zero-extended, I64 as bits), mod 2^64. */
#define DBATCH_MASK ((DISPATCH_NCOLS + 6) / 7)
#define DBATCH_ROW (DBATCH_MASK + 10 * DISPATCH_NCOLS) /* largest row */
_Static_assert(DBATCH_MASK == 4, "encode_dispatch_delta writes a 4-byte mask");
_Static_assert(1 + DBATCH_MAX * DBATCH_ROW < 16384 && DBATCH_MAX < 128,
               "a batch's length takes 2 bytes, its count 1");
/* hu_varint_put with short paths for the 2- and 3-byte values most deltas are (microseconds to a millisecond
 * apart): a few stores instead of the general bit shuffle. */
static inline unsigned char *put_delta(unsigned char *p, uint64_t v) {
  if (v >= 0x80 && v < (1u << 21)) {
    p[0] = (unsigned char)(v | 0x80);
    if (v < (1u << 14)) {
      p[1] = (unsigned char)(v >> 7);
      return p + 2;
    }
    p[1] = (unsigned char)(v >> 7 | 0x80);
    p[2] = (unsigned char)(v >> 14);
    return p + 3;
  }
  return hu_varint_put(p, v);
}

/* 16 bytes of a row as one vector (SSE2 on x86-64, NEON on arm64: GCC's generic vectors). */
typedef uint64_t drow_v __attribute__((vector_size(16)));
static inline drow_v drow_at(const hp_dispatch *r, size_t off) {
  drow_v v;
  memcpy(&v, (const char *)r + off, sizeof v);
  return v;
}
#define DROW_A offsetof(hp_dispatch, process_id)       /* process_id .. queue_id: 32 bytes */
#define DROW_G offsetof(hp_dispatch, grid)             /* grid, workgroup, private_size: 32 bytes */
#define DROW_B offsetof(hp_dispatch, bytes_accessible) /* bytes_accessible, bytes_restored */
_Static_assert(DROW_A == 24 && offsetof(hp_dispatch, kernel_id) == DROW_A + 32 && DROW_G == DROW_A + 40 &&
                   offsetof(hp_dispatch, private_size) == DROW_G + 24 &&
                   offsetof(hp_dispatch, bytes_restored) == DROW_B + 8,
               "hp_dispatch's layout changed: update the columns encode_dispatch_delta compares at once");

static inline unsigned char *encode_dispatch_delta(unsigned char *p, const hp_dispatch *d,
                                                   const hp_dispatch *o) {
  unsigned char *mp = p;
  uint64_t m = 0;
  unsigned bit = 0;
  p += DBATCH_MASK;
#define DCOL(x)                                                                                              \
  do {                                                                                                       \
    uint64_t v_ = (uint64_t)(d->x) - (uint64_t)(o->x);                                                       \
    if (v_) {                                                                                                \
      m |= 1ull << bit;                                                                                      \
      p = put_delta(p, hu_zigzag((int64_t)v_));                                                              \
    }                                                                                                        \
    bit++;                                                                                                   \
  } while (0)
  /* In a harvest only the ids, the kernel and the three times change from row to row: when the 17 other
   * columns are equal (compared 16 bytes at a time where they lie together), those six are the row. */
  drow_v x = (drow_at(d, DROW_A) ^ drow_at(o, DROW_A)) | (drow_at(d, DROW_A + 16) ^ drow_at(o, DROW_A + 16)) |
             (drow_at(d, DROW_G) ^ drow_at(o, DROW_G)) | (drow_at(d, DROW_G + 16) ^ drow_at(o, DROW_G + 16)) |
             (drow_at(d, DROW_B) ^ drow_at(o, DROW_B));
  if (!(x[0] | x[1] | (uint64_t)(d->group_size ^ o->group_size) | (d->passes ^ o->passes) |
        (d->cold ^ o->cold) | (d->region_id ^ o->region_id))) {
    DCOL(id);          /* column 0 (g_dispatch_ops' order, as below) */
    DCOL(dispatch_id); /* 1 */
    bit = 6;
    DCOL(kernel_id); /* 6 */
    bit = 15;        /* start_ns, end_ns, enqueue_ns: 15-17 */
    DCOL(start_ns);
    DCOL(end_ns);
    DCOL(enqueue_ns);
    goto mask;
  }
  DCOL(id);
  DCOL(dispatch_id);
  DCOL(process_id);
  DCOL(thread_id);
  DCOL(agent_id);
  DCOL(queue_id);
  DCOL(kernel_id);
  DCOL(grid[0]);
  DCOL(grid[1]);
  DCOL(grid[2]);
  DCOL(workgroup[0]);
  DCOL(workgroup[1]);
  DCOL(workgroup[2]);
  DCOL(private_size);
  DCOL(group_size);
  DCOL(start_ns);
  DCOL(end_ns);
  DCOL(enqueue_ns);
  DCOL(passes);
  DCOL(bytes_accessible);
  DCOL(bytes_restored);
  DCOL(cold);
  DCOL(region_id);
#undef DCOL
mask:
  /* the mask as 4 LEB128 bytes (hu_varint_put_n(mp, m, 4)) in one go */
  hu_put_le32(mp, (uint32_t)((m & 0x7f) | (m << 1 & 0x7f00) | (m << 2 & 0x7f0000) | (m << 3 & 0x7f000000)) |
                      0x808080u);
  return p;
}

/* Count k rows that cannot be stored (make_room counted one). */
static void lose_more(log_w *L, lw *w, size_t k) {
  w->lost += k - 1;
  atomic_fetch_add_explicit(&L->lost_total, k - 1, memory_order_relaxed);
}

hp_status hp_log_write_dispatches(hp_store *s, const hp_dispatch *rows, size_t n, size_t *written) {
  size_t ok = 0;
  hp_status first = HP_OK;
  log_w *L = writable(s);
  if (!L || s->first_error != HP_OK || !g_dispatch_unrolled) { /* the generic path decides */
    for (size_t i = 0; i < n; i++) {
      hp_status st = hp_write_dispatch(s, &rows[i]);
      if (st == HP_OK)
        ok++;
      else if (first == HP_OK)
        first = st;
    }
    if (written) *written = ok;
    return first;
  }
  lw *w = writer_or_lose(L, n);
  if (!w) {
    if (written) *written = 0;
    return n ? HP_ERR_NOMEM : HP_OK;
  }
  static const hp_dispatch zero; /* the "previous row" of a record's first row */
  const size_t head = 1 + 2 + 1; /* type, length (2 bytes: a record is below 16 KiB), row count */
  for (size_t i = 0; i < n;) {
    if (__builtin_expect(rows[i].size != sizeof rows[i], 0)) { /* an older row layout: imported by hp_write */
      hp_status st = hp_write_dispatch(s, &rows[i++]);
      if (st == HP_OK)
        ok++;
      else if (first == HP_OK)
        first = st;
      continue;
    }
    size_t k = 1; /* the rows of this record: up to DBATCH_MAX of the current layout */
    while (k < DBATCH_MAX && i + k < n && rows[i + k].size == sizeof rows[i + k])
      k++;
    size_t room = (size_t)(w->soft - w->pos), fit = room > head ? (room - head) / DBATCH_ROW : 0;
    if (fit >= k || fit >= 8)
      k = fit < k ? fit : k; /* what fits in the open block; the rest goes in the next record */
    else {
      hp_status st = make_room(L, w, head + k * DBATCH_ROW);
      if (st != HP_OK) {
        lose_more(L, w, k);
        if (first == HP_OK) first = st;
        i += k;
        continue;
      }
    }
    unsigned char *p = w->pos, *lenp;
    *p++ = REC_DBATCH;
    lenp = p;
    p += 2;
    unsigned char *start = p;
    *p++ = (unsigned char)k;
    const hp_dispatch *o = &zero;
    for (size_t j = i; j < i + k; o = &rows[j++])
      p = encode_dispatch_delta(p, &rows[j], o);
    hu_varint_put_n(lenp, (uint64_t)(p - start), 2);
    w->pos = p;
    w->nrec++;
    ok += k;
    i += k;
  }
  if (written) *written = ok;
  return first;
}

hp_status hp_log_write_region(hp_store *s, const hp_region *r, size_t name_len, size_t cat_len) {
  log_w *L = writable(s);
  if (!L || s->first_error != HP_OK || !g_region_unrolled || r->size != sizeof *r)
    return hp_write_region(s, r); /* the generic path decides */
  lw *w = writer_or_lose(L, 1);
  if (!w) return HP_ERR_NOMEM;
  const size_t pb = g_ti[HP_TABLE_REGION].bound + name_len + cat_len; /* as log_write: same length field */
  unsigned lb;
  unsigned char *lenp;
  hp_status st = HP_OK;
  unsigned char *p = record_begin(L, w, HP_TABLE_REGION, pb, &lb, &lenp, &st);
  if (!p) return st;
  unsigned char *start = p, *keep = p; /* encode_cols's bytes: trailing zero columns left out */
  p = hu_varint_put(p, r->id);
  keep = r->id ? p : keep;
  p = hu_varint_put(p, r->process_id);
  keep = r->process_id ? p : keep;
  p = hu_varint_put(p, r->thread_id);
  keep = r->thread_id ? p : keep;
  p = hu_varint_put(p, name_len);
  hu_copy_short(p, r->name, name_len);
  p += name_len;
  keep = name_len ? p : keep;
  p = hu_varint_put(p, cat_len);
  hu_copy_short(p, r->category, cat_len);
  p += cat_len;
  keep = cat_len ? p : keep;
  uint64_t v = hu_zigzag(r->start_ns);
  p = hu_varint_put(p, v);
  keep = v ? p : keep;
  v = hu_zigzag(r->end_ns);
  p = hu_varint_put(p, v);
  keep = v ? p : keep;
  hu_varint_put_n(lenp, (uint64_t)(keep - start), lb);
  w->pos = keep;
  w->nrec++;
  return HP_OK;
}

hp_status hp_log_prepare(hp_store *s) {
  log_w *L = writable(s);
  if (!L) return HP_ERR_UNSUPPORTED;
  int saved = errno;
  hp_status st = HP_OK;
  pthread_mutex_lock(&L->lock);
  /* twice what the writers needed since the last call, plus one, at most SPARE_MAX: a rate that grows is met
   * ahead of need; what is left unused at close was faulted in for nothing */
  unsigned want = 2 * L->spare_taken + 1;
  if (want > SPARE_MAX) want = SPARE_MAX;
  L->spare_taken = 0;
  unsigned have = L->nspare, failed = L->spare_failed, nretire = L->nretire;
  struct {
    unsigned char *m;
    uint64_t off, used;
  } retire[SPARE_MAX];
  memcpy(retire, L->retire, nretire * sizeof retire[0]);
  L->nretire = 0;
  pthread_mutex_unlock(&L->lock);
  for (unsigned i = 0; i < nretire; i++)
    drop_chunk(L, retire[i].m, retire[i].off, retire[i].used);
  for (; !failed && have < want; have++) {
    /* as new_chunk, off the append path: claim, allocate (a full disk fails here, not as SIGBUS), map */
    uint64_t idx = atomic_fetch_add(&L->next_chunk, 1);
    if (idx >= ((uint64_t)INT64_MAX - L->header_size) / L->chunk_size - 1) break;
    uint64_t off = L->header_size + idx * L->chunk_size;
    void *m = NULL;
    if (map_chunk(L, off, &m) !=
        0) { /* the claimed chunk stays a hole (zeros); the writers make their own from now */
      failed = 1;
      st = HP_ERR_IO;
      break;
    }
    /* the pages in now, so that the first write of each costs the writer no fault */
    if (madvise(m, L->chunk_size, MADV_POPULATE_WRITE) != 0)
      for (uint64_t i = 0; i < L->chunk_size; i += 4096)
        ((volatile unsigned char *)m)[i] = 0;
    pthread_mutex_lock(&L->lock);
    L->spare[L->nspare].m = m;
    L->spare[L->nspare++].off = off;
    pthread_mutex_unlock(&L->lock);
  }
  if (failed) {
    pthread_mutex_lock(&L->lock);
    L->spare_failed = 1;
    pthread_mutex_unlock(&L->lock);
  }
  errno = saved;
  return st;
}

hp_status hp_log_flush(hp_store *s) {
  log_w *L = writable(s);
  if (!L) return HP_ERR_UNSUPPORTED;
  lw *w = cache_get(L);
  if (!w && !(w = writer_get(L, 0))) return HP_OK; /* this thread wrote nothing */
  int saved = errno;
  flush_writer(L, w);
  errno = saved;
  return HP_OK;
}

hp_status hp_log_flush_all(hp_store *s) {
  log_w *L = writable(s);
  if (!L) return HP_ERR_UNSUPPORTED;
  int saved = errno;
  pthread_mutex_lock(&L->lock);
  flush_all_locked(L);
  pthread_mutex_unlock(&L->lock);
  errno = saved;
  return HP_OK;
}

int hp_log_write_errno(hp_store *s) {
  log_w *L = writable(s);
  return L ? atomic_load_explicit(&L->write_errno, memory_order_relaxed) : 0;
}

hp_status hp_log_lost(hp_store *s, uint64_t *n) {
  log_w *L = writable(s);
  if (!L || !n) return HP_ERR_UNSUPPORTED;
  *n = atomic_load(&L->lost_total);
  return HP_OK;
}

hp_status hp_log_set_defaults(uint64_t chunk_size, uint32_t block_target) {
  uint64_t cs = chunk_size ? chunk_size : g_chunk_size;
  uint32_t bt = block_target ? block_target : g_block_target;
  if (cs < MIN_CHUNK || cs > MAX_CHUNK || (cs & (cs - 1)) || bt < 64 || bt > cs / 4) return HP_ERR_INVALID;
  g_chunk_size = cs;
  g_block_target = bt;
  return HP_OK;
}

/* ---- ops table ---- */
const hp_format_ops hp_fmt_log = {
    .size = sizeof(hp_format_ops),
    .name = "log",
    .flags = HP_FMT_THREADSAFE_WRITE | HP_FMT_LIVE,
    .probe = log_probe,
    .open_read = log_open_read,
    .create = log_create,
    .write = log_write,
    .commit = log_commit,
    .abort = log_abort,
    .close_read = log_close_read,
    .count = log_count,
    .cursor_open = log_cursor_open,
    .cursor_next = log_cursor_next,
    .cursor_close = log_cursor_close,
    .park = log_park,
    .resume = log_resume,
};
