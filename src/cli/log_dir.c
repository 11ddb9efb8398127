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

/* Each line "<pid>\t<message>" of dir's status file to fn (the line cut at the tab); stops at fn's non-zero.
 */
static void status_lines(const char *dir, int (*fn)(void *, long, char *), void *ctx) {
  char p[PATH_MAX], buf[8192];
  if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, HU_COLLECTOR_STATUS) >= sizeof p) return;
  int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return;
  size_t n = 0;
  ssize_t r;
  int stop = 0;
  while (!stop && ((r = read(fd, buf + n, sizeof buf - 1 - n)) > 0 || (r < 0 && errno == EINTR))) {
    if (r < 0) continue;
    n += (size_t)r;
    buf[n] = 0;
    char *nl;
    while (!stop && (nl = memchr(buf, '\n', n))) {
      *nl = 0;
      char *tab = strchr(buf, '\t');
      stop = fn(ctx, strtol(buf, NULL, 10), tab ? tab + 1 : buf);
      n -= (size_t)(nl + 1 - buf);
      memmove(buf, nl + 1, n);
    }
    if (n == sizeof buf - 1) n = 0; /* a line longer than the buffer: not one of the collector's */
  }
  close(fd);
}

typedef struct failures {
  long *pid;
  char *why;
  size_t len, lines;
} failures;

static int one_failure(void *ctx, long pid, char *msg) {
  failures *f = ctx;
  if (!strncmp(msg, HU_COLLECTOR_STOPPED, strlen(HU_COLLECTOR_STOPPED))) return 0; /* it kept a log */
  if (!f->lines++) {
    *f->pid = pid;
    snprintf(f->why, f->len, "%s", msg);
  }
  return 0;
}

size_t run_collector_failures(const char *dir, long *pid, char *why, size_t len) {
  *pid = 0;
  if (len) why[0] = 0;
  failures f = {pid, why, len, 0};
  status_lines(dir, one_failure, &f);
  return f.lines;
}

typedef struct stopped {
  hp_store *out;
  hp_status st;
} stopped;

static int one_stopped(void *ctx, long pid, char *msg) {
  stopped *s = ctx;
  size_t k = strlen(HU_COLLECTOR_STOPPED);
  if (strncmp(msg, HU_COLLECTOR_STOPPED, k)) return 0; /* a process without a log: said otherwise */
  char key[64];
  snprintf(key, sizeof key, "collector_stopped.%ld", pid);
  return (s->st = hp_write_metadata(s->out, key, msg + k)) != HP_OK;
}

hp_status run_collector_stopped(const char *dir, hp_store *out) {
  stopped s = {out, HP_OK};
  status_lines(dir, one_stopped, &s);
  return s.st;
}
