/* The folder of one run's per-process logs (trace, profile, sample): made beside the output, listed for the
 * assembly and the live progress line, and removed once the store is written. */
/* SPDX-License-Identifier: MIT */
#include "run_app.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  if (mkdtemp(tmpl)) return realpath(tmpl, NULL);
  const char *tmp = getenv("TMPDIR");
  snprintf(tmpl, sizeof tmpl, "%s/hubprof-logs.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (mkdtemp(tmpl)) return realpath(tmpl, NULL);
  return NULL;
}

void run_remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char p[PATH_MAX];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Paths of the logs in dir (hubprof-*.log), sorted. */
char **run_list_logs(const char *dir, size_t *n) {
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return NULL;
  char **v = NULL;
  size_t cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (strncmp(e->d_name, "hubprof-", 8) != 0 || l < 5 || strcmp(e->d_name + l - 4, ".log") != 0) continue;
    if (*n == cap) {
      char **nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof *v);
      if (!nv) break;
      v = nv;
    }
    size_t pl = strlen(dir) + l + 2;
    if (!(v[*n] = malloc(pl))) break;
    snprintf(v[(*n)++], pl, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (*n) qsort(v, *n, sizeof *v, cmp_str);
  return v;
}

void run_free_list(char **v, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
}
