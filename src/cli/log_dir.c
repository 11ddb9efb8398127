/* The folder of one run's per-process logs (trace, profile, sample): made beside the output, listed for the
 * assembly and the live progress line, and removed once the store is written. */
/* SPDX-License-Identifier: MIT */
#include "run_app.h"

#include "../common/hu_collector_status.h"
#include "../common/hu_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The folder's status file, empty, with room reserved where the file system can (hu_collector_status.h). */
static void make_status_file(const char *dir) {
  char p[PATH_MAX];
  if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, HU_COLLECTOR_STATUS) >= sizeof p) return;
  int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return;
  /* where the file system cannot reserve, the lines still fit while the disk has room */
  (void)fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, HU_COLLECTOR_STATUS_ROOM);
  close(fd);
}

static char *made(char *tmpl) {
  char *dir = realpath(tmpl, NULL);
  if (dir) make_status_file(dir);
  return dir;
}

/* Directory for the per-process logs: beside the output (same file system, so the merge reads locally),
 * falling back to $TMPDIR when the output's directory is not writable (the merge then reports it). */
char *run_make_log_dir(const char *output) {
  const char *slash = strrchr(output, '/');
  char tmpl[PATH_MAX];
  if (slash)
    snprintf(tmpl, sizeof tmpl, "%.*s/.hubprof-logs.XXXXXX", (int)(slash - output), output);
  else
    snprintf(tmpl, sizeof tmpl, ".hubprof-logs.XXXXXX");
  if (slash == output) snprintf(tmpl, sizeof tmpl, "/.hubprof-logs.XXXXXX");
  if (mkdtemp(tmpl)) return made(tmpl);
  const char *tmp = getenv("TMPDIR");
  snprintf(tmpl, sizeof tmpl, "%s/hubprof-logs.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (mkdtemp(tmpl)) return made(tmpl);
  return NULL;
}

void run_remove_dir(const char *dir) { hu_dir_remove(dir, 0); }

/* Paths of the logs in dir (hubprof-*.log), sorted. */
char **run_list_logs(const char *dir, size_t *n) {
  char **v = NULL;
  *n = 0;
  return hu_dir_names(dir, "hubprof-", ".log", 1, &v, n) == HU_OK ? v : NULL;
}

void run_free_list(char **v, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

size_t run_collector_failures(const char *dir, long *pid, char *why, size_t len) {
  char p[PATH_MAX], buf[8192];
  *pid = 0;
  if (len) why[0] = 0;
  if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, HU_COLLECTOR_STATUS) >= sizeof p) return 0;
  int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return 0;
  size_t n = 0, lines = 0;
  ssize_t r;
  int first = 1;
  while ((r = read(fd, buf + n, sizeof buf - 1 - n)) > 0 || (r < 0 && errno == EINTR)) {
    if (r < 0) continue;
    n += (size_t)r;
    buf[n] = 0;
    char *nl;
    while ((nl = memchr(buf, '\n', n))) {
      *nl = 0;
      if (first) { /* "<pid>\t<message>" */
        char *tab = strchr(buf, '\t');
        *pid = strtol(buf, NULL, 10);
        snprintf(why, len, "%s", tab ? tab + 1 : buf);
        first = 0;
      }
      lines++;
      n -= (size_t)(nl + 1 - buf);
      memmove(buf, nl + 1, n);
    }
    if (n == sizeof buf - 1) n = 0; /* a line longer than the buffer: not one of the collector's */
  }
  close(fd);
  return lines;
}
