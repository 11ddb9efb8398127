/* Whole-buffer file I/O (hu_io.h). */
#include "hu_io.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int hu_write_all(int fd, const void *p, size_t n) {
  const unsigned char *q = p;
  while (n) {
    ssize_t r = write(fd, q, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = EIO;
      return -1;
    }
    q += r;
    n -= (size_t)r;
  }
  return 0;
}

int hu_pwrite_all(int fd, const void *p, size_t n, uint64_t off) {
  const unsigned char *q = p;
  while (n) {
    ssize_t r = pwrite(fd, q, n, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = EIO;
      return -1;
    }
    q += r;
    n -= (size_t)r;
    off += (uint64_t)r;
  }
  return 0;
}

int hu_pread_all(int fd, void *p, size_t n, uint64_t off) {
  unsigned char *q = p;
  while (n) {
    ssize_t r = pread(fd, q, n, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = EIO;
      return -1;
    }
    q += r;
    n -= (size_t)r;
    off += (uint64_t)r;
  }
  return 0;
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
