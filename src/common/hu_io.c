/* Whole-buffer file I/O (hu_io.h). */
/* SPDX-License-Identifier: MIT */
#include "hu_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

/* All n bytes: written (wr) or read, at offset off, or at the file position when off is -1. */
static int xfer_all(int fd, unsigned char *p, size_t n, int64_t off, int wr) {
  while (n) {
    ssize_t r = off < 0 ? (wr ? write(fd, p, n) : read(fd, p, n))
                        : (wr ? pwrite(fd, p, n, (off_t)off) : pread(fd, p, n, (off_t)off));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = EIO; /* no progress: a full device, or the end of the file */
      return -1;
    }
    p += r;
    n -= (size_t)r;
    if (off >= 0) off += r;
  }
  return 0;
}

int hu_write_all(int fd, const void *p, size_t n) { return xfer_all(fd, (unsigned char *)p, n, -1, 1); }

int hu_pwrite_all(int fd, const void *p, size_t n, uint64_t off) {
  if (off > INT64_MAX) return errno = EINVAL, -1;
  return xfer_all(fd, (unsigned char *)p, n, (int64_t)off, 1);
}

int hu_pread_all(int fd, void *p, size_t n, uint64_t off) {
  if (off > INT64_MAX) return errno = EINVAL, -1;
  return xfer_all(fd, p, n, (int64_t)off, 0);
}

long long hu_read_full(int fd, void *p, size_t n) {
  unsigned char *q = p;
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, q + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += (size_t)r;
  }
  return (long long)got;
}

int hu_fsync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  int e = errno;
  close(fd);
  errno = e;
  return rc;
}
