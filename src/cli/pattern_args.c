/* The checks of patterns given on the command line (globs, regexes, "re:"/"glob:" prefixes, bounded by
 * hu_pattern.h) and of values that travel one per line in the environment, for the option tables of every
 * subcommand (options.c) and the selection (select_args.c). */
/* SPDX-License-Identifier: MIT */
#include "options.h"
#include "cli.h"

#include "../common/hu_pattern.h"

#include <regex.h>
#include <stdio.h>
#include <string.h>

/* A value travels one per line in the environment: it cannot hold a newline (nor be empty: the parser
 * refuses empty values before this check). */
int cli_check_line(const char *v, const char *what, char *err, size_t len) {
  if (!*v) {
    snprintf(err, len, "'': an empty %s", what);
    return CLI_USAGE;
  }
  if (strchr(v, '\n')) {
    snprintf(err, len, "'%.*s...': a %s cannot hold a newline", (int)strcspn(v, "\n"), v, what);
    return CLI_USAGE;
  }
  return CLI_OK;
}

int cli_pattern_regex(const char *v, char *out, size_t len) {
  int kind;
  const char *body = hu_pattern_kind(v, HU_PAT_REGEX, &kind);
  if (kind == HU_PAT_GLOB) return hu_glob_to_regex(body, out, len);
  return snprintf(out, len, "%s", body) < (int)len ? 0 : -1;
}

int cli_check_regex(const char *v, char *err, size_t len) {
  int rc = cli_check_line(v, "pattern", err, len), kind;
  if (rc != CLI_OK) return rc;
  const char *body = hu_pattern_kind(v, HU_PAT_REGEX, &kind);
  if (kind == HU_PAT_GLOB) {
    char re[4 * HU_PATTERN_MAX + 8];
    if ((rc = cli_check_glob(body, err, len)) != CLI_OK) return rc;
    if (cli_pattern_regex(v, re, sizeof re)) {
      snprintf(err, len, "'%.64s': too long", v);
      return CLI_USAGE;
    }
    return CLI_OK;
  }
  v = body;
  if ((rc = cli_check_pattern(v, 1, err, len)) != CLI_OK) return rc;
  regex_t re;
  int e = regcomp(&re, v, REG_EXTENDED | REG_NOSUB);
  if (e) {
    char msg[160];
    regerror(e, &re, msg, sizeof msg);
    snprintf(err, len, "'%s': not a valid POSIX extended regular expression: %s", v, msg);
    return CLI_USAGE;
  }
  regfree(&re);
  return CLI_OK;
}

int cli_check_pattern(const char *v, int regex, char *err, size_t len) {
  const char *why;
  if (!(regex ? hu_regex_bounded(v, (size_t)-1, &why) : hu_glob_bounded(v, &why))) return CLI_OK;
  if (strlen(v) > HU_PATTERN_MAX) /* not echoed: one short line */
    snprintf(err, len, "'%.32s...' (%zu bytes): %s", v, strlen(v), why);
  else
    snprintf(err, len, "'%s': %s", v, why);
  return CLI_USAGE;
}

int cli_check_glob(const char *v, char *err, size_t len) {
  int kind;
  const char *body = hu_pattern_kind(v, HU_PAT_GLOB, &kind); /* "re:" a regex, "glob:" a glob */
  if (kind == HU_PAT_REGEX) return cli_check_regex(v, err, len);
  v = body;
  int rc = cli_check_pattern(v, 0, err, len);
  if (rc != CLI_OK) return rc;
  for (const char *p = v; *p; p++) {
    if (*p == '\\') {
      if (!p[1]) {
        snprintf(err, len, "'%s' ends with a lone '\\'", v);
        return CLI_USAGE;
      }
      p++;
    } else if (*p == '[') {
      const char *q = p + 1;
      if (*q == '!' || *q == '^') q++;
      if (*q == ']') q++; /* a ']' first is a member */
      while (*q && *q != ']')
        q++;
      if (!*q) {
        snprintf(err, len, "'%s' has a '[' without its ']' (write '[[]' for a literal '[')", v);
        return CLI_USAGE;
      }
      p = q;
    }
  }
  return CLI_OK;
}
