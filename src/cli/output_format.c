/* The one place that decides the format of an output store (trace, profile, merge, convert): from
 * -F/--output-format and the output's name, with a contradiction between them one usage error. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include "hubprof/hub.h"

#include <string.h>
#include <sys/stat.h>

/* The format an output name asks for, and the part of the name that says so; NULL when it says none. */
static const char *format_of_name(const char *path, const char **why) {
  static const struct {
    const char *suffix, *format;
  } by_suffix[] = {
      {".parquet", "parquet"}, {".db", "rocpd"},    {".sqlite", "rocpd"},
      {".sqlite3", "rocpd"},   {".rocpd", "rocpd"}, {".hplog", "log"},
  };
  size_t n = strlen(path);
  if (n && path[n - 1] == '/') {
    *why = "a name ending in '/' (a folder)";
    return "parquet";
  }
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path, *dot = strrchr(base, '.');
  if (dot && dot != base)
    for (size_t i = 0; i < sizeof by_suffix / sizeof by_suffix[0]; i++)
      if (strcmp(dot, by_suffix[i].suffix) == 0) {
        *why = by_suffix[i].suffix;
        return by_suffix[i].format;
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

int cli_format_known(const char *f) {
  for (const char *const *p = hp_formats(); *p; p++)
    if (strcmp(*p, f) == 0) return 1;
  return 0;
}
