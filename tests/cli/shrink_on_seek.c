/* Test preload for test_shrink.sh: the first lseek(SEEK_DATA) on the file named by $SHRINK_PATH cuts that
 * file to $SHRINK_TO bytes first, as another process would while hubprof scans it (issue 30 point 2). */
/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int g_done;

static void maybe_cut(int fd, int whence) {
  const char *want = getenv("SHRINK_PATH"), *to = getenv("SHRINK_TO");
  if (g_done || whence != SEEK_DATA || !want || !to) return;
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return;
  path[n] = 0;
  if (strcmp(path, want) != 0) return;
  g_done = 1;
  if (truncate(want, strtoll(to, NULL, 10)) != 0) perror("shrink_on_seek: truncate");
}

off_t lseek(int fd, off_t off, int whence) {
  static off_t (*real)(int, off_t, int);
  if (!real) real = (off_t(*)(int, off_t, int))dlsym(RTLD_NEXT, "lseek");
  maybe_cut(fd, whence);
  return real(fd, off, whence);
}

off_t lseek64(int fd, off_t off, int whence) { return lseek(fd, off, whence); }
