/* What trace, profile and sample settle before the application starts: the output's name (given, or the
 * default from the application's), its check, and the collector library to load. */
/* SPDX-License-Identifier: MIT */
#include "run_app.h"
#include "cli.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *find_collector(void) {
  const char *env = getenv("HUBPROF_COLLECTOR");
  if (env && *env) return access(env, R_OK) == 0 ? realpath(env, NULL) : NULL;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return NULL;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return NULL;
  *slash = '\0';
  static const char *const rel[] = {"/libhubprof_collector.so", "/../lib/hubprof/libhubprof_collector.so",
                                    "/../lib/libhubprof_collector.so"};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s%s", exe, rel[i]);
    if (access(p, R_OK) == 0) return realpath(p, NULL);
  }
  return NULL;
}

int run_prepare(const run_opts *o, const char *app, char **output, char **collector) {
  *output = *collector = NULL;
  if (!cli_format_known(o->format)) {
    cli_error("%s: unknown format '%s' (see 'hubprof %s --help')", o->mode, o->format, o->mode);
    return CLI_USAGE;
  }
  char *out = o->output ? strdup(o->output) : cli_default_output(app, o->format, o->force);
  if (!out) {
    cli_error("out of memory");
    return CLI_FAIL;
  }
  run_signals_name_output(out); /* named by the signal handler */
  int rc = cli_check_output(out, o->format, o->force);
  if (rc) {
    free(out);
    return rc;
  }
  char *coll = find_collector();
  if (!coll) {
    cli_error("cannot find libhubprof_collector.so beside the hubprof executable (set HUBPROF_COLLECTOR)");
    free(out);
    return CLI_FAIL;
  }
  *output = out;
  *collector = coll;
  return 0;
}
