/* The launch file's writer side (fmt_log.h): rings of launched dispatches in file-backed shared memory beside
 * a log being written, so that they outlive a killed writer; in memory only when there is no such file. */
/* SPDX-License-Identifier: MIT */
#include "fmt_log_internal.h"

#include "../common/hu_io.h"
#include "../common/hu_varint.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* One log's launch file. */
typedef struct launch_w {
  const hp_store *s; /* the log being written (the key) */
  pid_t pid;         /* the process that made it: a forked child's copy is not its */
  int fd;
  uint64_t end;  /* the file's size: where the next area goes */
  uint64_t last; /* offset of the ring header made last */
  char *path;
  struct launch_w *next;
} launch_w;

/* Every launch file of the process, and the lock of all of them: areas are made rarely (a thread's first
 * dispatch, a ring that doubles). */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static launch_w *g_files;

static size_t round_page(size_t n) { return (n + HP_LAUNCH_PAGE - 1) & ~(size_t)(HP_LAUNCH_PAGE - 1); }

/* The launch file of the log at `log_path`: made with its header, its first byte write-locked while this
 * process lives (a reader's sign that the writer is gone). NULL when it cannot be made (one of another
 * process's is never taken over or cut: its owner may have it mapped). */
static launch_w *launch_open(const hp_store *s, const char *log_path) {
  launch_w *w = calloc(1, sizeof *w);
  size_t n = strlen(log_path) + sizeof HP_LAUNCH_SUFFIX;
  if (!w || !(w->path = malloc(n))) {
    free(w);
    return NULL;
  }
  snprintf(w->path, n, "%s%s", log_path, HP_LAUNCH_SUFFIX);
  w->fd = open(w->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  unsigned char h[HP_LAUNCH_PAGE];
  memset(h, 0, sizeof h);
  memcpy(h, HP_LAUNCH_MAGIC, 8);
  hu_put_le32(h + HP_LAUNCH_H_VERSION, HP_LAUNCH_VERSION);
  hu_put_le32(h + HP_LAUNCH_H_ENTRY, HP_LAUNCH_ENTRY);
  hu_put_le64(h + HP_LAUNCH_H_PID, (uint64_t)(int64_t)getpid());
  struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
  if (w->fd < 0 || hu_pwrite_all(w->fd, h, sizeof h, 0) != 0) {
    if (w->fd >= 0) {
      close(w->fd);
      unlink(w->path);
    }
    free(w->path);
    free(w);
    return NULL;
  }
  (void)fcntl(w->fd, F_SETLK, &lk); /* refused (no locks on this file system): readers then read it anyway */
  w->end = HP_LAUNCH_PAGE;
  w->s = s;
  w->pid = getpid();
  w->next = g_files;
  g_files = w;
  return w;
}

/* A new area of `bytes` (page multiple) at the file's end, its blocks allocated (a store into a hole of a
 * shared mapping on a full disk would be a SIGBUS in the application), mapped; NULL when not possible. */
static void *area(launch_w *w, size_t bytes, uint64_t *off) {
  if (posix_fallocate(w->fd, (off_t)w->end, (off_t)bytes) != 0) return NULL;
  void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, (off_t)w->end);
  if (m == MAP_FAILED) return NULL;
  *off = w->end;
  w->end += bytes;
  return m;
}

/* The launch file of store s made by this process (under g_lock); NULL when none. */
static launch_w *file_of(const hp_store *s) {
  for (launch_w *w = g_files; w; w = w->next)
    if (w->s == s && w->pid == getpid()) return w;
  return NULL;
}

/* s is a log being written (not read) */
static int writing(const hp_store *s) { return s && s->ops == &hp_fmt_log && s->mode != HP_READ && s->impl; }

hp_status hp_log_launch_ring(hp_store *s, unsigned log2cap, hp_launch_ring **ring, void **entries) {
  *ring = NULL;
  *entries = NULL;
  if (log2cap < 1 || log2cap > 30) return HP_ERR_INVALID;
  size_t eb = round_page((size_t)HP_LAUNCH_ENTRY << log2cap), bytes = HP_LAUNCH_PAGE + eb;
  unsigned char *m = NULL;
  uint64_t off = 0;
  int saved = errno;
  pthread_mutex_lock(&g_lock);
  launch_w *w = writing(s) ? file_of(s) : NULL;
  if (!w && writing(s)) w = launch_open(s, hp_store_path(s));
  if (w) m = area(w, bytes, &off);
  if (!m) {
    m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      pthread_mutex_unlock(&g_lock);
      errno = saved;
      return HP_ERR_NOMEM;
    }
    w = NULL;
  }
  hp_launch_ring *r = (hp_launch_ring *)m;
  memset(m, 0, HP_LAUNCH_PAGE); /* (an allocated area reads as zeros already) */
  atomic_store(&r->geom, (off + HP_LAUNCH_PAGE) | log2cap);
  memcpy(r->magic, HP_LAUNCH_RING_MAGIC, sizeof HP_LAUNCH_RING_MAGIC);
  r->own = w ? 1 : 0;
  if (w) { /* linked in last: a reader finds the ring only once its header is whole */
    r->prev = w->last;
    unsigned char b[8];
    hu_put_le64(b, off);
    if (hu_pwrite_all(w->fd, b, sizeof b, HP_LAUNCH_H_LAST) == 0) w->last = off;
  }
  pthread_mutex_unlock(&g_lock);
  *ring = r;
  *entries = m + HP_LAUNCH_PAGE;
  errno = saved;
  return HP_OK;
}

int hp_log_launch_grow(hp_store *s, hp_launch_ring *r, void **entries) {
  uint64_t g = atomic_load(&r->geom);
  unsigned k = (unsigned)(g & 63);
  if (k >= 30) return -1;
  size_t cap = (size_t)1 << k, cap2 = cap << 1, eb2 = round_page(cap2 * HP_LAUNCH_ENTRY);
  unsigned char *m = NULL;
  uint64_t off = 0;
  int saved = errno;
  if (r->own) {
    pthread_mutex_lock(&g_lock);
    launch_w *w = file_of(s);
    if (w) m = area(w, eb2, &off);
    pthread_mutex_unlock(&g_lock);
    if (!m) { /* its header stays in the file: the ring cannot move to memory */
      errno = saved;
      return -1;
    }
  } else {
    m = mmap(NULL, eb2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      errno = saved;
      return -1;
    }
  }
  const unsigned char *old = *entries;
  uint64_t head = atomic_load(&r->head), tail = atomic_load(&r->tail);
  for (uint64_t i = tail; i != head; i++)
    memcpy(m + (i & (cap2 - 1)) * HP_LAUNCH_ENTRY, old + (i & (cap - 1)) * HP_LAUNCH_ENTRY, HP_LAUNCH_ENTRY);
  atomic_store(&r->geom, off | (k + 1)); /* one store: a reader sees the old ring or the new one, whole */
  munmap(*entries, round_page(cap * HP_LAUNCH_ENTRY));
  *entries = m;
  if (r->own) { /* the old area's blocks given back (the file keeps its size: later offsets stay) */
    pthread_mutex_lock(&g_lock);
    launch_w *w = file_of(s);
    if (w)
      (void)fallocate(w->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(g & ~(uint64_t)63),
                      (off_t)round_page(cap * HP_LAUNCH_ENTRY));
    pthread_mutex_unlock(&g_lock);
  }
  errno = saved;
  return 0;
}

void hp_log_launch_calibrate(hp_launch_ring *r, int64_t stamp, int64_t ns, double rate) {
  uint64_t q = atomic_load_explicit(&r->cal_seq, memory_order_relaxed);
  atomic_store_explicit(&r->cal_seq, q + 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  r->cal_stamp = stamp;
  r->cal_ns = ns;
  r->cal_rate = rate;
  atomic_store_explicit(&r->cal_seq, q + 2, memory_order_release);
}

void hp_log_launch_unmap(hp_launch_ring *r, void *entries) {
  if (!r) return;
  size_t cap = (size_t)1 << (atomic_load(&r->geom) & 63);
  munmap(entries, round_page(cap * HP_LAUNCH_ENTRY));
  munmap(r, HP_LAUNCH_PAGE);
}

void hp_log_launch_close(const hp_store *s, int remove) {
  pthread_mutex_lock(&g_lock);
  for (launch_w **p = &g_files, *w; (w = *p) != NULL;) {
    if (w->s != s) {
      p = &w->next;
      continue;
    }
    *p = w->next; /* a forked child's copy: its descriptor closed, the file and the lock left to the parent */
    if (remove && w->pid == getpid()) unlink(w->path);
    close(w->fd);
    free(w->path);
    free(w);
  }
  pthread_mutex_unlock(&g_lock);
}
