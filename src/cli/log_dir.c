/* The folder of one run's per-process logs (trace, profile, sample): made beside the output, listed for the
 * assembly and the live progress line, and removed once the store is written. */
/* SPDX-License-Identifier: MIT */
#include "run_app.h"

#include "../common/hu_dir.h"

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
