/* The "log" format's writer (docs/formats/log.md): its append path runs inside the instrumented program, so
 * it must never block, never allocate in steady state, never change errno and never crash the host: a full
 * disk or a failed mmap becomes counted losses. Sections: registry (thread caches, fork, thread exit) ·
 * writer · create/commit/abort · extras (fmt_log.h). */
/* SPDX-License-Identifier: MIT */
#include "fmt_log_internal.h"

#include "../common/hu_io.h"
#include "../common/hu_varint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t g_chunk_size = 1u << 20;
static uint32_t g_block_target = 16u << 10;

/* The columns of a dispatch row as encode_cols meets them, checked once against the table description
 * (global_init): the unrolled encoder below writes exactly the bytes of the generic one, or is not used. */
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
    {offsetof(hp_dispatch, correlation_id), K_U64},
    {offsetof(hp_dispatch, graph_id), K_U64},
};
#define DISPATCH_NCOLS (sizeof g_dispatch_ops / sizeof g_dispatch_ops[0])
static int g_dispatch_unrolled; /* set by global_init when the description is the one above */

static void dispatch_check(void) {
  const tinfo *ti = &hp_log_ti[HP_TABLE_DISPATCH];
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
  const tinfo *ti = &hp_log_ti[HP_TABLE_REGION];
  if (ti->small || ti->nstr != 2 || ti->ncols != REGION_NCOLS || ti->d->row_size != sizeof(hp_region)) return;
  for (unsigned i = 0; i < REGION_NCOLS; i++)
    if (ti->ops[i].off != g_region_ops[i].off || ti->ops[i].kind != g_region_ops[i].kind) return;
  g_region_unrolled = 1;
}

/* ---- registry: live stores, thread caches, fork and thread exit ---- */
typedef struct lw lw;
typedef struct log_w log_w;

/* One thread's writer. Only its owner thread touches it, except under the store lock when the owner
 * is gone (thread exit, close). */
struct lw {
  unsigned char *pos;             /* where the next record goes */
  unsigned char *soft;            /* end of room for records in the open block (== pos when none is open) */
  unsigned char *blk;             /* header of the open block, NULL when none */
  uint32_t nrec;                  /* records in the open block */
  uint32_t cblocks;               /* blocks committed in the current chunk (its trailer's counts) */
  uint32_t ccrc;                  /* CRC-32C of their CRCs */
  uint64_t crecs;                 /* records in them */
  uint64_t crows[HP_TABLE_COUNT]; /* rows per table written in the current chunk */
  unsigned char *chunk;           /* mapping of the current chunk, NULL when none */
  unsigned char *limit;           /* chunk end minus the reserves: ordinary blocks end before it */
  uint64_t chunk_off;             /* file offset of the chunk */
  uint64_t lost;                  /* records lost and not yet written as a LOST record */
  uint64_t retry_at;              /* after a failure, try for a new chunk again when lost reaches this */
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
  _Atomic uint64_t chunk_seq;            /* chunks closed with a trailer (the next one's sequence number) */
  _Atomic uint64_t tot_blocks, tot_recs; /* the sums of the trailers: the closing record */
  _Atomic uint64_t tot_rows[HP_TABLE_COUNT];
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
  hp_log_ti_init();
  dispatch_check();
  region_check();
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
/* Write the header of the block at b (payload up to end, nrec records), the magic last; returns its CRC. */
static uint32_t seal_block(unsigned char *b, unsigned char *end, uint32_t nrec) {
  uint32_t len = (uint32_t)(end - b - BLK_HDR);
  hu_put_le32(b + 4, len);
  hu_put_le32(b + 8, nrec);
  uint32_t crc = hp_crc32c(0, b + 4, 8);
  crc = hp_crc32c(crc, b + BLK_HDR, len);
  hu_put_le32(b + 12, crc);
  unsigned char m[4];
  uint32_t mv;
  hu_put_le32(m, BLK_MAGIC);
  memcpy(&mv, m, 4);
  __atomic_store_n((uint32_t *)(void *)b, mv, __ATOMIC_RELEASE); /* the block is valid from here on */
  return crc;
}

static void commit_block(lw *w) {
  unsigned char *b = w->blk;
  if (!b) return;
  w->blk = NULL;
  if (w->nrec == 0) { /* nothing in it: give the space back */
    w->pos = w->soft = b;
    return;
  }
  unsigned char c[4];
  hu_put_le32(c, seal_block(b, w->pos, w->nrec));
  w->ccrc = hp_crc32c(w->ccrc, c, 4); /* the chunk's checksum: per block, never per record */
  w->cblocks++;
  w->crecs += w->nrec;
  w->nrec = 0;
  w->soft = w->pos;
}

/* Close w's chunk: its trailer (sequence number, index, what its blocks hold) as the chunk's last block, the
 * counts added to the closing record's. A chunk without blocks gets none (it reads as zeros: nothing). */
static void close_chunk(log_w *L, lw *w) {
  if (!w->chunk) return;
  commit_block(w);
  if (w->cblocks) {
    unsigned char *b = align8p(w->pos), *p = b + BLK_HDR, *lenp;
    *p++ = REC_CHUNK;
    lenp = p;
    p += 2; /* the length, 2 bytes: a trailer is below 16 KiB */
    unsigned char *start = p;
    p = hu_varint_put(p, atomic_fetch_add(&L->chunk_seq, 1));
    p = hu_varint_put(p, (w->chunk_off - L->header_size) / L->chunk_size);
    p = hu_varint_put(p, w->cblocks);
    p = hu_varint_put(p, w->crecs);
    p = hu_varint_put(p, w->ccrc);
    p = hu_varint_put(p, HP_TABLE_COUNT);
    for (int t = 0; t < HP_TABLE_COUNT; t++) {
      p = hu_varint_put(p, w->crows[t]);
      atomic_fetch_add_explicit(&L->tot_rows[t], w->crows[t], memory_order_relaxed);
    }
    hu_varint_put_n(lenp, (uint64_t)(p - start), 2);
    seal_block(b, p, 1);
    atomic_fetch_add_explicit(&L->tot_blocks, w->cblocks, memory_order_relaxed);
    atomic_fetch_add_explicit(&L->tot_recs, w->crecs, memory_order_relaxed);
    w->pos = w->soft = p;
  }
  w->cblocks = w->ccrc = 0;
  w->crecs = 0;
  memset(w->crows, 0, sizeof w->crows);
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
  unsigned char *b = align8p(w->pos), *end = w->chunk + L->chunk_size - TRAILER_RESERVE;
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

/* Leave w's chunk: close it, drop_chunk, now. */
static void leave_chunk(log_w *L, lw *w) {
  if (!w->chunk) return;
  close_chunk(L, w);
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
  w->limit = w->chunk + L->chunk_size - LOST_RESERVE - TRAILER_RESERVE;
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
        close_chunk(L, w);
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
  } else if (BLK_HDR + need + LOST_REC_MAX > L->chunk_size - LOST_RESERVE - TRAILER_RESERVE) {
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

hp_status hp_log_write(hp_store *s, hp_table t, const void *row) {
  log_w *L = s->impl;
  if (__builtin_expect(forked(L), 0)) return HP_ERR_UNSUPPORTED;
  lw *w = writer_or_lose(L, 1);
  if (!w) return HP_ERR_NOMEM;
  const tinfo *ti = &hp_log_ti[t];
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
  if (__builtin_expect(w->lost != 0, 0) && ti->small)
    w->retry_at =
        0; /* a process, thread or kernel row: worth a new try for room now, not after the backoff */
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
  w->crows[t]++;
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

hp_status hp_log_create(hp_store *s) {
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
  hu_put_le32(h + 12, LOG_MIN_READER); /* min_reader_version */
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

/* The closing record (every chunk closed): what a reader needs to prove the log complete. */
static int write_closing(log_w *L) {
  unsigned char c[CLOSE_SIZE(HP_TABLE_COUNT)];
  memset(c, 0, sizeof c);
  memcpy(c, CLOSE_MAGIC, 8);
  hu_put_le32(c + 8, (uint32_t)sizeof c);
  hu_put_le32(c + CLOSE_NTABLES, HP_TABLE_COUNT);
  hu_put_le64(c + CLOSE_CHUNKS, atomic_load(&L->chunk_seq));
  hu_put_le64(c + CLOSE_BLOCKS, atomic_load(&L->tot_blocks));
  hu_put_le64(c + CLOSE_RECORDS, atomic_load(&L->tot_recs));
  hu_put_le64(c + CLOSE_LOST, atomic_load(&L->lost_total));
  hu_put_le64(c + CLOSE_TIME, (uint64_t)clock_ns(CLOCK_REALTIME));
  for (int t = 0; t < HP_TABLE_COUNT; t++)
    hu_put_le64(c + CLOSE_ROWS + 8u * (unsigned)t, atomic_load(&L->tot_rows[t]));
  hu_put_le32(c + sizeof c - 4, hp_crc32c(0, c, sizeof c - 4));
  return hu_pwrite_all(L->fd, c, sizeof c, CLOSE_OFF);
}

hp_status hp_log_commit(hp_store *s) {
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
  if (write_closing(L) != 0) {
    hp_status st = hp_set_error(
        s, HP_ERR_IO, "cannot write the closing record: %s (the log reads as not closed)", strerror(errno));
    if (L->tmp) unlink(L->tmp);
    hp_log_launch_close(s, 0); /* kept: the log reads as not closed, its rings are what a reader has */
    free_log_w(L);
    s->impl = NULL;
    return st;
  }
  if (L->tmp && rename(L->tmp, s->path) != 0)
    return hp_set_error(s, HP_ERR_IO, "cannot rename %s into place: %s", L->tmp, strerror(errno));
  hp_log_launch_close(s, 1); /* closed: the log holds every dispatch its rings had */
  free_log_w(L);
  s->impl = NULL;
  return HP_OK;
}

void hp_log_abort(hp_store *s) {
  log_w *L = s->impl;
  if (!L) return;
  if (forked(L)) { /* the parent's file and mappings: release our copies only */
    for (lw *w = L->writers, *next; w; w = next) {
      next = w->next;
      if (w->chunk) munmap(w->chunk, L->chunk_size);
      free(w);
    }
    free_spares(L, 0);
    hp_log_launch_close(s, 0); /* the parent's: its file and lock are the parent's, kept */
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
  hp_log_launch_close(s, 1);
  free_log_w(L);
  s->impl = NULL;
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
  /* In a harvest only the ids, the kernel and the three times change from row to row: when the 19 other
   * columns are equal (compared 16 bytes at a time where they lie together), those six are the row. */
  drow_v x = (drow_at(d, DROW_A) ^ drow_at(o, DROW_A)) | (drow_at(d, DROW_A + 16) ^ drow_at(o, DROW_A + 16)) |
             (drow_at(d, DROW_G) ^ drow_at(o, DROW_G)) | (drow_at(d, DROW_G + 16) ^ drow_at(o, DROW_G + 16)) |
             (drow_at(d, DROW_B) ^ drow_at(o, DROW_B));
  if (!(x[0] | x[1] | (uint64_t)(d->group_size ^ o->group_size) | (d->passes ^ o->passes) |
        (d->cold ^ o->cold) | (d->region_id ^ o->region_id) | (d->correlation_id ^ o->correlation_id) |
        (d->graph_id ^ o->graph_id))) {
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
  DCOL(correlation_id);
  DCOL(graph_id);
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
    w->crows[HP_TABLE_DISPATCH] += k;
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
  const size_t pb =
      hp_log_ti[HP_TABLE_REGION].bound + name_len + cat_len; /* as hp_log_write: same length field */
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
  w->crows[HP_TABLE_REGION]++;
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
