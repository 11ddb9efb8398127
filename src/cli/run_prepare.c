/* What trace, profile and sample settle before the application starts: the output's name (given, or the
 * default from the application's), its check, and the collector library to load. */
/* SPDX-License-Identifier: MIT */
#include "run_app.h"
#include "cli.h"

#include "../common/hu_part.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The collector: $HUBPROF_COLLECTOR, else libhubprof_collector.so where it is built or installed beside the
 * hubprof executable (hu_part_path, the one search of hubprof's parts); its real path, or NULL. */
char *find_collector(void) {
  char p[PATH_MAX + 64];
  if (hu_part_path(p, sizeof p, "HUBPROF_COLLECTOR", "libhubprof_collector.so") || access(p, R_OK) != 0)
    return NULL;
  return realpath(p, NULL);
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
