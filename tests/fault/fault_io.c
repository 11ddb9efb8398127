/* I/O fault injector for the tests (LD_PRELOAD): the Nth call, counted across every process that shares the
 * counter file, of write/pwrite/fsync/fdatasync/rename/ftruncate/posix_fallocate/msync fails.
 * FAULT_STATE=FILE (required: an 8-byte counter shared by the processes, created at need), FAULT_N=N (0: only
 * count; the count is the counter's final value), FAULT_ERRNO=ENOSPC|EIO (default ENOSPC), FAULT_PATH=PREFIX
 * (optional: only calls on regular files under it, e.g. the test's folder, not the OpenCL runtime's kernel
 * cache; msync is always counted). Writes to anything but a regular file (terminals, pipes: the messages) are
 * never counted nor failed. FAULT_DIRSYNC=K (optional): the Kth fsync of a folder under FAULT_PATH fails
 * (counted apart, in the counter file's second 8 bytes; a folder's sync is never counted with the others). */
/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static _Atomic uint64_t
    *g_counter; /* shared through FAULT_STATE's mapping: [0] the calls, [1] folder syncs */
static uint64_t g_n, g_dirsync;
static int g_errno = ENOSPC;
static int g_ready;          /* 1: armed, -1: off (no FAULT_STATE or it cannot be mapped) */
static const char *g_prefix; /* FAULT_PATH */

static void setup(void) {
  if (g_ready) return;
  const char *path = getenv("FAULT_STATE");
  g_ready = -1;
  if (!path || !*path) return;
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  struct stat sb;
  if (fstat(fd, &sb) != 0 || (sb.st_size < 16 && ftruncate(fd, 16) != 0)) { /* ours: the real one */
    close(fd);
    return;
  }
  void *m = mmap(NULL, 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return;
  g_counter = m;
  const char *n = getenv("FAULT_N"), *e = getenv("FAULT_ERRNO");
  g_n = n ? strtoull(n, NULL, 10) : 0;
  const char *k = getenv("FAULT_DIRSYNC");
  g_dirsync = k ? strtoull(k, NULL, 10) : 0;
  if (e && strcmp(e, "EIO") == 0) g_errno = EIO;
  g_prefix = getenv("FAULT_PATH");
  g_ready = 1;
}

/* Count this call; 1 when it is the one to fail (errno set). */
static int hit(void) {
  int saved = errno;
  setup();
  errno = saved;
  if (g_ready != 1) return 0;
  uint64_t k = atomic_fetch_add(g_counter, 1) + 1;
  if (g_n && k == g_n) {
    errno = g_errno;
    return 1;
  }
  return 0;
}

/* A path under FAULT_PATH (or no FAULT_PATH)? */
static int under(const char *path) {
  return !g_prefix || !*g_prefix || (path && strncmp(path, g_prefix, strlen(g_prefix)) == 0);
}

/* A regular file under FAULT_PATH: the calls on it count. */
static int regular(int fd) {
  int saved = errno;
  setup();
  struct stat sb;
  int r = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
  if (r && g_prefix && *g_prefix) {
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    path[n > 0 ? n : 0] = 0;
    r = n > 0 && under(path);
  }
  errno = saved;
  return r;
}

/* A path (relative ones: to the working directory) under FAULT_PATH? */
static int path_under(const char *p) {
  int saved = errno;
  setup();
  char abs[PATH_MAX];
  int r = under(p && p[0] != '/' && getcwd(abs, sizeof abs) ? abs : p);
  errno = saved;
  return r;
}

#define REAL(name)                                                                                           \
  static __typeof__(&name) real_##name;                                                                      \
  if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void *buf, size_t n) {
  REAL(write);
  if (regular(fd) && hit()) return -1;
  return real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
  REAL(pwrite);
  if (regular(fd) && hit()) return -1;
  return real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) {
  REAL(pwrite64);
  if (regular(fd) && hit()) return -1;
  return real_pwrite64(fd, buf, n, off);
}

/* A folder under FAULT_PATH whose sync is the FAULT_DIRSYNC-th: 1 (errno set). */
static int dir_hit(int fd) {
  int saved = errno;
  setup();
  struct stat sb;
  int r = 0;
  if (g_ready == 1 && fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) { /* counted even without FAULT_DIRSYNC */
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    path[n > 0 ? n : 0] = 0;
    r = n > 0 && under(path) && atomic_fetch_add(&g_counter[1], 1) + 1 == g_dirsync;
  }
  errno = r ? g_errno : saved;
  return r;
}

int fsync(int fd) {
  REAL(fsync);
  if ((regular(fd) && hit()) || dir_hit(fd)) return -1;
  return real_fsync(fd);
}

int fdatasync(int fd) {
  REAL(fdatasync);
  if (regular(fd) && hit()) return -1;
  return real_fdatasync(fd);
}

int rename(const char *a, const char *b) {
  REAL(rename);
  if (path_under(a) && hit()) return -1;
  return real_rename(a, b);
}

int renameat(int da, const char *a, int db, const char *b) {
  REAL(renameat);
  if (path_under(a) && hit()) return -1;
  return real_renameat(da, a, db, b);
}

int renameat2(int da, const char *a, int db, const char *b, unsigned flags) {
  REAL(renameat2);
  if (path_under(a) && hit()) return -1;
  return real_renameat2(da, a, db, b, flags);
}

int ftruncate(int fd, off_t len) {
  REAL(ftruncate);
  if (regular(fd) && hit()) return -1; /* setup sets g_ready before it calls this: never recursive */
  return real_ftruncate(fd, len);
}

int ftruncate64(int fd, off_t len) {
  REAL(ftruncate64);
  if (regular(fd) && hit()) return -1;
  return real_ftruncate64(fd, len);
}

/* posix_fallocate returns the error instead of setting errno */
int posix_fallocate(int fd, off_t off, off_t len) {
  REAL(posix_fallocate);
  int saved = errno;
  if (regular(fd) && hit()) {
    int e = errno;
    errno = saved;
    return e;
  }
  return real_posix_fallocate(fd, off, len);
}

int posix_fallocate64(int fd, off_t off, off_t len) {
  REAL(posix_fallocate64);
  int saved = errno;
  if (regular(fd) && hit()) {
    int e = errno;
    errno = saved;
    return e;
  }
  return real_posix_fallocate64(fd, off, len);
}

int msync(void *addr, size_t len, int flags) {
  REAL(msync);
  if (hit()) return -1;
  return real_msync(addr, len, flags);
}
