/* The launch file's reader (docs/formats/log.md, "The launch file"): the dispatches a dead writer had
 * launched and not yet put in its log, read with pread from the rings of `<log>.launch`, every field checked.
 */
/* SPDX-License-Identifier: MIT */
#include "fmt_log_internal.h"

#include "../common/hu_io.h"
#include "../common/hu_map.h"
#include "../common/hu_varint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define LR_ENTRY_MAX 4096u /* an entry size above this is not a launch file's */
#define LR_BATCH 256u      /* entries read by one pread */

/* Append to why (a "; "-separated list; the first reason kept when it is full). */
static void lr_why(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void lr_why(char *why, size_t whylen, const char *fmt, ...) {
  if (!why || !whylen) return;
  size_t n = strlen(why);
  if (n && n + 2 < whylen) {
    memcpy(why + n, "; ", 3);
    n += 2;
  }
  if (n + 1 >= whylen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why + n, whylen - n, fmt, ap);
  va_end(ap);
}

/* 1 when another process holds a write lock on the file's first byte (its writer lives). An open file
 * description's query (Linux 3.15) also sees a lock this very process holds; where it is refused, the
 * process's own query. A failed query is no lock. */
static int lr_locked(int fd) {
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_RDLCK; /* conflicts with a write lock only */
  fl.l_whence = SEEK_SET;
  fl.l_start = 0;
  fl.l_len = 1;
#ifdef F_OFD_GETLK
  if (fcntl(fd, F_OFD_GETLK, &fl) == 0) return fl.l_type == F_WRLCK;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_RDLCK;
  fl.l_whence = SEEK_SET;
  fl.l_len = 1;
#endif
  if (fcntl(fd, F_GETLK, &fl) != 0) return 0;
  return fl.l_type == F_WRLCK;
}

/* 1 when this very process holds a write lock on file sb (/proc/locks): its writer is this process. Asked
 * before the file is opened, for a reason: closing any descriptor of a file drops the process's POSIX locks
 * on it, so a reader inside the writer's process that opened and closed it would take the writer's lock. */
static int lr_own_lock(const struct stat *sb) {
  FILE *f = fopen("/proc/locks", "re");
  if (!f) return 0;
  char line[256], kind[16], rw[16];
  long pid;
  unsigned maj, min;
  unsigned long long ino;
  int own = 0;
  while (!own && fgets(line, sizeof line, f)) {
    const char *p = strchr(line, ':');
    if (p && sscanf(p + 1, " %15s %*s %15s %ld %x:%x:%llu", kind, rw, &pid, &maj, &min, &ino) == 6)
      own = !strcmp(rw, "WRITE") && pid == (long)getpid() && maj == major(sb->st_dev) &&
            min == minor(sb->st_dev) && ino == (unsigned long long)sb->st_ino;
  }
  fclose(f);
  return own;
}

typedef struct lr_out {
  hp_dispatch *rows;
  size_t n, cap;
  hu_idmap seen;   /* dispatch ids taken */
  uint64_t budget; /* entries left to read: the file's size over the entry size (rings never share entries) */
} lr_out;

/* A ring's header, decoded. */
typedef struct lr_ring {
  uint64_t head, tail, entries, cap, thread_id, cal_seq, prev;
  int64_t cal_stamp, cal_ns;
  double cal_rate;
} lr_ring;

/* Decode and check the ring header at off (page-aligned, inside the file): 1 usable, 0 skipped (why says
 * so), -1 the walk ends (unreadable: nothing after it can be trusted either). */
static int lr_ring_read(int fd, uint64_t size, uint64_t off, uint32_t esize, lr_ring *r, char *why,
                        size_t whylen) {
  unsigned char h[HP_LAUNCH_R_MAGIC + 8];
  if (hu_pread_all(fd, h, sizeof h, off) != 0) {
    lr_why(why, whylen, "ring at byte %llu unreadable", (unsigned long long)off);
    return -1;
  }
  if (memcmp(h + HP_LAUNCH_R_MAGIC, HP_LAUNCH_RING_MAGIC, 8) != 0) {
    lr_why(why, whylen, "no ring at byte %llu (bad magic)", (unsigned long long)off);
    return -1;
  }
  r->head = hu_get_le64(h + HP_LAUNCH_R_HEAD);
  r->tail = hu_get_le64(h + HP_LAUNCH_R_TAIL);
  uint64_t geom = hu_get_le64(h + HP_LAUNCH_R_GEOM);
  r->thread_id = hu_get_le64(h + HP_LAUNCH_R_THREAD);
  r->cal_seq = hu_get_le64(h + HP_LAUNCH_R_CAL_SEQ);
  r->cal_stamp = (int64_t)hu_get_le64(h + HP_LAUNCH_R_CAL_STAMP);
  r->cal_ns = (int64_t)hu_get_le64(h + HP_LAUNCH_R_CAL_NS);
  uint64_t rate = hu_get_le64(h + HP_LAUNCH_R_CAL_RATE);
  memcpy(&r->cal_rate, &rate, sizeof rate);
  r->prev = hu_get_le64(h + HP_LAUNCH_R_PREV);
  unsigned k = (unsigned)(geom & 63);
  r->entries = geom & ~(uint64_t)63;
  if (k < 4 || k > 24 || r->entries % HP_LAUNCH_PAGE || r->entries < HP_LAUNCH_PAGE || r->entries > size ||
      (size - r->entries) / esize < ((uint64_t)1 << k)) {
    lr_why(why, whylen, "ring at byte %llu skipped (bad geometry %#llx)", (unsigned long long)off,
           (unsigned long long)geom);
    return 0;
  }
  r->cap = (uint64_t)1 << k;
  if (r->head < r->tail || r->head - r->tail > r->cap) {
    lr_why(why, whylen, "ring at byte %llu skipped (head %llu, tail %llu, capacity %llu)",
           (unsigned long long)off, (unsigned long long)r->head, (unsigned long long)r->tail,
           (unsigned long long)r->cap);
    return 0;
  }
  return 1;
}

/* The row of one entry e of ring r (or 0: no row, its id 0 or taken already; -1 out of memory). */
static int lr_entry(lr_out *o, const lr_ring *r, const unsigned char *e) {
  uint64_t id = hu_get_le64(e + HP_LAUNCH_E_DISPATCH);
  if (!id || hu_idmap_get(&o->seen, id, NULL)) return 0;
  if (hu_idmap_put(&o->seen, id, 1) != 0) return -1;
  if (o->n == o->cap) {
    size_t cap = o->cap ? o->cap * 2 : 64;
    hp_dispatch *rows = realloc(o->rows, cap * sizeof *rows);
    if (!rows) return -1;
    o->rows = rows;
    o->cap = cap;
  }
  hp_dispatch *d = &o->rows[o->n++];
  hp_row_init(HP_TABLE_DISPATCH, d);
  d->size = sizeof *d;
  d->id = d->dispatch_id = id;
  d->process_id = 1;
  d->thread_id = r->thread_id;
  d->kernel_id = hu_get_le32(e + HP_LAUNCH_E_KERNEL);
  d->queue_id = hu_get_le32(e + HP_LAUNCH_E_QUEUE);
  d->agent_id = hu_get_le32(e + HP_LAUNCH_E_AGENT);
  d->cold = hu_get_le32(e + HP_LAUNCH_E_FLAGS) >> 1 & 1;
  for (int i = 0; i < 3; i++) {
    d->grid[i] = hu_get_le32(e + HP_LAUNCH_E_GRID + 4 * i);
    d->workgroup[i] = hu_get_le32(e + HP_LAUNCH_E_WG + 4 * i);
  }
  d->start_ns = d->end_ns = 0; /* launched, end unknown: the "incomplete dispatch" of the assembly */
  d->passes = 0;
  d->region_id = hu_get_le64(e + HP_LAUNCH_E_REGION);
  int64_t stamp = (int64_t)hu_get_le64(e + HP_LAUNCH_E_ENQUEUE);
  d->enqueue_ns = 0;
  if (!(r->cal_seq & 1) && r->cal_rate > 0) { /* odd: a calibration being rewritten, none taken */
    double dt = ((double)stamp - (double)r->cal_stamp) / r->cal_rate; /* small: exact enough as a double */
    if (dt > -4e18 && dt < 4e18 && r->cal_ns > -4000000000000000000 && r->cal_ns < 4000000000000000000) {
      int64_t ns = r->cal_ns + (int64_t)dt;
      d->enqueue_ns = ns > 0 ? ns : 0;
    }
  }
  return 1;
}

/* Entries [tail, head) of ring r, LR_BATCH at a time: 0, 1 the walk ends (more entries than the file holds:
 * rings sharing entries, a crafted file's), or -1 out of memory (an unreadable stretch ends the ring, said
 * in why). */
static int lr_entries(int fd, const lr_ring *r, uint32_t esize, lr_out *o, char *why, size_t whylen) {
  unsigned char *buf = malloc((size_t)LR_BATCH * esize);
  if (!buf) return -1;
  int rc = 0;
  if (r->head - r->tail > o->budget) {
    lr_why(why, whylen, "rings hold more entries than the file: the walk ends");
    free(buf);
    return 1;
  }
  o->budget -= r->head - r->tail;
  for (uint64_t i = r->tail; i < r->head && rc == 0;) {
    uint64_t slot = i & (r->cap - 1), k = r->head - i;
    if (k > r->cap - slot) k = r->cap - slot; /* up to the ring's end: the rest wraps to slot 0 */
    if (k > LR_BATCH) k = LR_BATCH;
    if (hu_pread_all(fd, buf, (size_t)k * esize, r->entries + slot * esize) != 0) {
      lr_why(why, whylen, "entries at byte %llu unreadable", (unsigned long long)(r->entries + slot * esize));
      break;
    }
    for (uint64_t j = 0; j < k && rc == 0; j++)
      if (lr_entry(o, r, buf + j * esize) < 0) rc = -1;
    i += k;
  }
  free(buf);
  return rc;
}

/* The rings, from the one made last through `prev`: each at a page-aligned offset inside the file, met once
 * (a cycle ends the walk), at most one per page of the file. */
static int lr_walk(int fd, uint64_t size, uint64_t last, uint32_t esize, lr_out *o, char *why,
                   size_t whylen) {
  hu_idmap met = {0};
  int rc = 0;
  uint64_t off = last, steps = size / HP_LAUNCH_PAGE;
  while (off && rc == 0) {
    if (off % HP_LAUNCH_PAGE || off > size || size - off < HP_LAUNCH_PAGE || !steps--) {
      lr_why(why, whylen, "ring offset %llu out of the file", (unsigned long long)off);
      break;
    }
    if (hu_idmap_get(&met, off, NULL)) {
      lr_why(why, whylen, "rings in a cycle at byte %llu", (unsigned long long)off);
      break;
    }
    if (hu_idmap_put(&met, off, 1) != 0) {
      rc = -1;
      break;
    }
    lr_ring r;
    int ok = lr_ring_read(fd, size, off, esize, &r, why, whylen);
    if (ok < 0) break;
    if (ok > 0) rc = lr_entries(fd, &r, esize, o, why, whylen);
    off = r.prev;
  }
  hu_idmap_free(&met);
  return rc < 0 ? -1 : 0;
}

/* Open and check the launch file beside log_path: its descriptor with its size and header fields, or -1
 * (none to read: absent, its writer alive, or not a launch file, why says which but for the first two). */
static int lr_open(const char *log_path, uint64_t *size, uint32_t *esize, uint64_t *last, char *why,
                   size_t whylen) {
  size_t n = strlen(log_path);
  char *p = malloc(n + sizeof HP_LAUNCH_SUFFIX);
  if (!p) return -2;
  memcpy(p, log_path, n);
  memcpy(p + n, HP_LAUNCH_SUFFIX, sizeof HP_LAUNCH_SUFFIX);
  struct stat sb;
  int fd = stat(p, &sb) != 0 || (S_ISREG(sb.st_mode) && lr_own_lock(&sb))
               ? -1
               : open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  free(p);
  if (fd < 0) return -1;
  unsigned char h[HP_LAUNCH_H_PID + 8];
  const char *bad = NULL;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
    bad = "not a regular file";
  else if (lr_locked(fd)) {
    close(fd);
    return -1;
  } else if ((uint64_t)sb.st_size < sizeof h || hu_pread_all(fd, h, sizeof h, 0) != 0)
    bad = "no header";
  else if (memcmp(h, HP_LAUNCH_MAGIC, 8) != 0)
    bad = "bad magic";
  else if (hu_get_le32(h + HP_LAUNCH_H_VERSION) != HP_LAUNCH_VERSION)
    bad = "unknown version";
  else if (hu_get_le32(h + HP_LAUNCH_H_ENTRY) < HP_LAUNCH_ENTRY ||
           hu_get_le32(h + HP_LAUNCH_H_ENTRY) > LR_ENTRY_MAX)
    bad = "bad entry size";
  if (bad) {
    lr_why(why, whylen, "launch file not read (%s)", bad);
    close(fd);
    return -1;
  }
  *size = (uint64_t)sb.st_size;
  *esize = hu_get_le32(h + HP_LAUNCH_H_ENTRY);
  *last = hu_get_le64(h + HP_LAUNCH_H_LAST);
  return fd;
}

hp_status hp_log_launch_read(const char *log_path, hp_dispatch **rows, size_t *n, char *why, size_t whylen) {
  *rows = NULL;
  *n = 0;
  if (why && whylen) *why = 0;
  uint64_t size = 0, last = 0;
  uint32_t esize = 0;
  int fd = lr_open(log_path, &size, &esize, &last, why, whylen);
  if (fd == -2) return HP_ERR_NOMEM;
  if (fd < 0) return HP_OK;
  lr_out o = {.budget = size / esize};
  int rc = lr_walk(fd, size, last, esize, &o, why, whylen);
  close(fd);
  hu_idmap_free(&o.seen);
  if (rc != 0) {
    free(o.rows);
    return HP_ERR_NOMEM;
  }
  if (!o.n) {
    free(o.rows);
    o.rows = NULL;
  }
  *rows = o.rows;
  *n = o.n;
  return HP_OK;
}
