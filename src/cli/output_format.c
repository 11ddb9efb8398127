/* The one owner of output names and formats (trace, profile, sample, merge, convert, the MPI rank stores):
 * one table of suffixes, the format an output's name says, and the name an output gets by default. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include "hubprof/hub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The rule (docs/cli/output-names.md): each format's first suffix here is the one a command names its output
 * with when -o is not given, and every suffix here says its format when -o gives it; the others are kept
 * for the names in use (.hplog: the log format's suffix before .log said it). */
static const struct {
  const char *suffix, *format;
} suffixes[] = {
    {".db", "rocpd"}, {".sqlite", "rocpd"}, {".sqlite3", "rocpd"},   {".rocpd", "rocpd"},
    {".log", "log"},  {".hplog", "log"},    {".parquet", "parquet"},
};
#define NSUFFIXES (sizeof suffixes / sizeof suffixes[0])

const char *cli_format_suffix(const char *format) {
  for (size_t i = 0; i < NSUFFIXES; i++)
    if (strcmp(suffixes[i].format, format) == 0) return suffixes[i].suffix;
  return ".store"; /* a format compiled in without a suffix here */
}

/* The format an output name asks for, and the part of the name that says so; NULL when it says none. */
static const char *format_of_name(const char *path, const char **why) {
  size_t n = strlen(path);
  if (n && path[n - 1] == '/') {
    *why = "a name ending in '/' (a folder)";
    return "parquet";
  }
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path, *dot = strrchr(base, '.');
  if (dot && dot != base)
    for (size_t i = 0; i < NSUFFIXES; i++)
      if (strcmp(dot, suffixes[i].suffix) == 0) {
        *why = suffixes[i].suffix;
        return suffixes[i].format;
      }
  struct stat sb;
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    *why = "an existing folder";
    return "parquet";
  }
  return NULL;
}

int cli_output_format(const char *cmd, const char *path, const char *given, const char **format) {
  const char *why = NULL, *named = path ? format_of_name(path, &why) : NULL;
  if (given && named && strcmp(given, named) != 0) {
    cli_error("%s: -o %s names a %s store (%s), but -F %s was given: change the name or drop -F", cmd, path,
              named, why, given);
    return CLI_USAGE;
  }
  *format = given ? given : named ? named : "rocpd";
  return 0;
}

char *cli_default_output(const char *app, const char *format, int force) {
  const char *base = strrchr(app, '/'), *suffix = cli_format_suffix(format);
  base = base ? base + 1 : app;
  size_t n = strlen(base) + 32;
  char *p = malloc(n);
  if (!p) return NULL;
  snprintf(p, n, "%s.hubprof%s", base, suffix);
  struct stat sb;
  for (unsigned i = 2; !force && i < 100000 && lstat(p, &sb) == 0; i++)
    snprintf(p, n, "%s.hubprof-%u%s", base, i, suffix);
  return p;
}

int cli_format_known(const char *f) {
  for (const char *const *p = hp_formats(); *p; p++)
    if (strcmp(*p, f) == 0) return 1;
  return 0;
}
